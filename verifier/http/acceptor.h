/*
 * acceptor: the verifier's listening socket and the thread that accepts on it, handing every
 * connection to libmicrohttpd with MHD_add_connection(), which gives it to the pool thread of
 * its descriptor (descriptor modulo the pool's size, else the next one with room): connections
 * opened together go to different threads. libmicrohttpd's own accepting lets whichever pool
 * thread wakes first take every connection waiting, up to ten in a row: the few keep-alive
 * connections of a load balancer or of bench/loadgen then shared one thread, their requests
 * were served one after another and each round committed alone (one fsync per round instead
 * of one per group of concurrent rounds, store.h).
 *
 * Owns the socket and the thread. acceptor_open() binds and listens (SO_REUSEADDR; an IPv6
 * address is IPv6 only, as libmicrohttpd's own socket was); acceptor_start() starts handing
 * connections to `daemon`, which must run its own threads with MHD_USE_NO_LISTEN_SOCKET and
 * MHD_USE_ITC; acceptor_stop() stops accepting and closes the socket, and must come before
 * MHD_stop_daemon(). Connections the daemon refuses (its limits) are closed by it.
 */
#ifndef VERIFIER_ACCEPTOR_H
#define VERIFIER_ACCEPTOR_H

#include <stdint.h>
#include <sys/socket.h>

struct MHD_Daemon;
struct acceptor;

/* -errno (logged by the caller) if the address cannot be bound; *port_out: the bound port. */
int acceptor_open(const struct sockaddr *addr, socklen_t addrlen, struct acceptor **out,
		  uint16_t *port_out);
int acceptor_start(struct acceptor *a, struct MHD_Daemon *daemon);
/* NULL-safe; also for an acceptor never started. */
void acceptor_stop(struct acceptor *a);

#endif
