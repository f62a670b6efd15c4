/*
 * http_guard: what bounds the time and memory a client may hold on the verifier, for
 * server.c (which calls it from libmicrohttpd's callbacks; nothing else does).
 *
 * Deadlines. libmicrohttpd's own timeout is idle-only: a client that sends one header line
 * every few seconds (slowloris) or trickles a body keeps its connection as long as it likes.
 * The guard gives every connection an absolute deadline for the phase it is in:
 *
 *   waiting for a request's headers   LIMIT_HEADER_SECONDS from the accept (the TLS handshake
 *                                     included) or from the end of the previous request
 *   reading a body                    LIMIT_TRANSFER_SECONDS + length / LIMIT_TRANSFER_RATE
 *                                     from the end of the headers
 *   running the handler               none (the verifier's own work)
 *   sending the answer                LIMIT_TRANSFER_SECONDS + length / LIMIT_TRANSFER_RATE
 *
 * A sweep thread looks every LIMIT_SWEEP_MS and shuts down (shutdown(2)) the socket of each
 * connection past its deadline; libmicrohttpd then reads EOF and closes the connection the
 * usual way, calling its completion and close notifications. The guard only ever touches a
 * socket between http_guard_conn_open() and http_guard_conn_close(), under its lock, so a
 * descriptor closed and reused by another connection is never shut down by mistake (MHD
 * notifies the close before it closes the descriptor).
 *
 * Bodies in flight. Bodies over LIMIT_SMALL_BODY are admitted only while the bytes reserved
 * by all connections stay within LIMIT_BODY_BUDGET (http_guard_reserve(), server.c reserves
 * LIMIT_BODY_COST times the announced Content-Length before a byte is read; released when the
 * request completes, after its handler). Smaller bodies are not counted: LIMIT_CONNECTIONS of
 * them bound themselves.
 *
 * Threads: every function may be called from any thread.
 */
#ifndef VERIFIER_HTTP_GUARD_H
#define VERIFIER_HTTP_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct http_guard;
struct http_guard_conn;

/* Starts the sweep thread; NULL if out of memory or no thread. */
struct http_guard *http_guard_new(void);
/* Stops the sweep; the connections must all be closed (after MHD_stop_daemon). NULL-safe. */
void http_guard_free(struct http_guard *g);

/* A connection was accepted on socket fd: it must send its headers in time. NULL if no memory
 * (the connection is then not guarded: MHD's idle timeout still applies). */
struct http_guard_conn *http_guard_conn_open(struct http_guard *g, int fd);
/* The connection is closing; its socket is still open. NULL-safe. */
void http_guard_conn_close(struct http_guard *g, struct http_guard_conn *c);

enum http_guard_phase {
	HTTP_GUARD_HEADERS,  /* waiting for the next request */
	HTTP_GUARD_TRANSFER, /* a body of `bytes` coming in, or an answer of `bytes` going out */
	HTTP_GUARD_HANDLER,  /* the verifier works: no deadline */
};
/* The connection enters `phase` now. NULL-safe. */
void http_guard_phase(struct http_guard *g, struct http_guard_conn *c,
		      enum http_guard_phase phase, uint64_t bytes);

/* Reserves `bytes` of the body budget: false (nothing reserved) if they do not fit now. */
bool http_guard_reserve(struct http_guard *g, uint64_t bytes);
void http_guard_release(struct http_guard *g, uint64_t bytes);

#endif
