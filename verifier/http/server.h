/*
 * server: HTTPS front end on libmicrohttpd. Owns the listening socket (acceptor.h), the thread
 * pool, TLS (1.2 and 1.3 only), routing and request bodies; knows nothing about attestation.
 *
 * For each request the server refuses a path with a byte no route allows (400 "bad_request"),
 * finds the route (404 "not_found", 405 "method_not_allowed"), asks `authorize` for routes
 * that are not HTTP_PUBLIC (401 "unauthorized", 403 "read_only"), refuses a body larger than
 * the route's cap (413 "body_too_large", decided from Content-Length before reading when it is
 * given), accumulates the body, then calls the handler once with the whole body,
 * NUL-terminated. Handlers run on pool threads, concurrently.
 *
 * What a client may hold is bounded (http_guard.h): connections per address, deadlines for
 * headers, bodies and answers, and the bytes of large bodies in flight. A body over
 * LIMIT_SMALL_BODY must announce its length (411 "length_required"), is offered to `admit`
 * before a byte is read, and needs room in the budget (503 "busy", Retry-After).
 *
 * Ownership: a handler fills *resp; resp->body is malloc'd and the server frees it.
 */
#ifndef VERIFIER_SERVER_H
#define VERIFIER_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/errors.h"
#include "proto/limits.h"

#define HTTP_MAX_ARGS 2u

struct MHD_Connection;

struct http_request {
	struct MHD_Connection *conn;
	const char *method;
	const char *url;
	/* path segments matched by '*' in the route pattern, in order */
	char arg[HTTP_MAX_ARGS][LIMIT_URL_ARG + 1];
	unsigned narg;
	const char *body; /* NUL-terminated; "" when the request had none */
	size_t body_len;
	void *app;
	/* The name of the token that authorized an operator call (`authorize` sets it). */
	char actor[33];
	const struct http_route *route; /* the route matched (set before any handler runs) */
};

struct http_response {
	unsigned status;
	char *body;               /* malloc'd, the server frees it */
	const char *content_type; /* default application/json */
	unsigned retry_after;     /* seconds; sent as Retry-After when not 0 */
	/* With has_file the body is file_size bytes read from file_fd instead, which the server
	 * closes once sent (http_reply_file()). */
	bool has_file;
	int file_fd;
	uint64_t file_size;
};

typedef void (*http_handler)(const struct http_request *req, struct http_response *resp);

/* Who may call a route: anyone; a token (a read-only one for GET alone); an operator token. */
enum http_access {
	HTTP_PUBLIC,
	HTTP_TOKEN,
	HTTP_OPERATOR,
};

struct http_route {
	const char *method;
	const char *pattern;  /* "/v1/agents/ * /activate" without spaces: '*' = one segment */
	size_t body_cap;      /* largest body accepted */
	enum http_access access; /* anything but HTTP_PUBLIC needs `authorize` to accept it */
	const char *name;     /* label for metrics */
	http_handler fn;
	/*
	 * The statuses the handler itself answers, e.g. "200 404 503". The server's own refusals
	 * follow from the columns above (http_route_declares()); docs/openapi.json names their
	 * union for each route, and a test holds the two equal.
	 */
	const char *answers;
	/*
	 * The query parameters the handler reads, e.g. "state policy limit" (NULL: none). The
	 * server refuses a request with any other, or with one of them twice (400), before the
	 * handler runs; http_query() returns only these. docs/openapi.json declares the same
	 * names for the route (tests/unit/test_openapi.c).
	 */
	const char *query;
};

struct http_server_config {
	const char *listen;   /* "127.0.0.1:8443" or "[::1]:8443" */
	unsigned threads;
	unsigned client_connections; /* per client address; 0: LIMIT_CONNECTIONS_PER_CLIENT */
	const char *cert_pem;
	const char *key_pem;
	const struct http_route *routes;
	size_t nroutes;
	void *app;
	/*
	 * Decides operator routes from the request headers (the body has not been read yet): 0,
	 * or the status to refuse with (401 unauthorized, 403 read_only) and why (a message for
	 * the caller, at most cap bytes). It may set req->actor.
	 */
	unsigned (*authorize)(void *app, struct http_request *req, enum http_access need,
			      char *why, size_t cap);
	/*
	 * Whether a body over LIMIT_SMALL_BODY may be read at all, from the route, URL and
	 * headers (req->body is not set yet): false with *resp filled refuses it unread. NULL:
	 * every body within the route's cap is read.
	 */
	bool (*admit)(void *app, const struct http_route *route, const struct http_request *req,
		      struct http_response *resp);
	/* Called once per answered request (route NULL when none matched). */
	void (*observe)(void *app, const struct http_route *route, unsigned status, double seconds);
};

struct http_server;

/* Starts listening; NULL on failure (logged). *port_out gets the bound port. */
struct http_server *http_server_start(const struct http_server_config *cfg, uint16_t *port_out);
/* Stops accepting, waits for running handlers, frees. NULL-safe. */
void http_server_stop(struct http_server *srv);

/*
 * Whether a route may answer a status: one its handler answers (route->answers), or one the
 * server answers before or around the handler (400 a bad path or length, 413 a body over the
 * cap, 500 no answer; 401 without a known token, 403 a read-only token where it may not write;
 * 411 and 503 for a large body without a length or over the budget). The server logs an
 * answer outside this set as an error.
 */
bool http_route_declares(const struct http_route *route, unsigned status);
/*
 * The certificate chain and key (PEM) that new TLS connections get from now on; connections
 * established before keep theirs. A pair that does not load, or whose key is not the
 * certificate's, is refused (-EINVAL, logged) and the current one keeps serving.
 */
int http_server_set_cert(struct http_server *srv, const char *cert_pem, const char *key_pem);

/* Helpers for handlers --------------------------------------------------------------------- */

/* Takes ownership of json (may be NULL: then 500 "internal"). */
void http_reply_json(struct http_response *resp, unsigned status, char *json);
/* {"error":{"code":CODE,"message":...}} with e's status and code (proto/errors.h). */
void http_reply_error(struct http_response *resp, enum proto_error e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Same with another wire code than e's own (NOT_AUTHENTIC: the quote's reason). */
void http_reply_error_named(struct http_response *resp, enum proto_error e, const char *code,
			    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The store failed (disk full, I/O error, database locked, a lost connection): nothing was
 * recorded. 503, not 500: the request was fine and the same request later may succeed. */
void http_reply_store_failure(struct http_response *resp);
/* A body streamed from an open file (size bytes from its offset 0); takes ownership of fd. */
void http_reply_file(struct http_response *resp, unsigned status, const char *content_type,
		     int fd, uint64_t size);
/* Plain text body (copied). */
void http_reply_text(struct http_response *resp, unsigned status, const char *content_type,
		     const char *text);
const char *http_header(const struct http_request *req, const char *name);
/*
 * The value of query parameter `name` (percent-decoded), or NULL when absent. Only a name the
 * route declares (route->query) is answered: reading another is a bug of the handler, logged
 * as an error, and gets NULL.
 */
const char *http_query(const struct http_request *req, const char *name);
/* Whether `name` is one of the route's declared query parameters. */
bool http_route_reads(const struct http_route *route, const char *name, size_t len);

#endif
