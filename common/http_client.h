/*
 * http_client: the one libcurl client, shared by attestd (agent API) and attestctl (operator API).
 *
 * A client is one CURL handle, reused across requests so a TLS connection stays up between
 * them, set up by curl_setup.h (the rules every libcurl handle of the tree follows): TLS 1.2 or
 * newer, peer and host verification always on (not configurable on purpose), no redirects
 * followed. Trust anchors: opts.ca_file, or the system store when NULL; with opts.ca_only the
 * system store is not consulted even beside ca_file (attestd pins the verifier's CA this way).
 * Response bodies are collected into a dynbuf whose cap the caller sets
 * (LIMIT_*_RESPONSE in proto/limits.h).
 *
 * http_client_request() returns 0 once an HTTP answer arrived, whatever its status (*status
 * holds it, `resp` the body); it fails with -EFBIG when the body passes resp's cap, -ENOMEM, or
 * for transport and TLS failures -ECONNREFUSED, -ETIMEDOUT, -EHOSTUNREACH or -EIO (the kind a
 * caller may retry later). After a failure http_client_error() is libcurl's text for it
 * ("Couldn't connect to server") and http_client_error_detail() its detail (may be ""); both
 * live until the next request. Nothing is logged here: callers say what failed in their words.
 *
 * Not thread-safe: one client per thread. The first http_client_new() runs curl_global_init()
 * (curl_setup_global()), so create the first client before starting threads.
 */
#ifndef COMMON_HTTP_CLIENT_H
#define COMMON_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/dynbuf.h"

enum http_method {
	HTTP_GET,
	HTTP_POST,
	HTTP_PUT,
	HTTP_DELETE,
};

struct http_client_opts {
	const char *ca_file;     /* PEM trust anchors; NULL: the system store */
	bool ca_only;            /* do not also trust the system CA directory */
	bool allow_http;         /* plain http:// URLs too (attestctl against a test verifier) */
	long connect_timeout;    /* seconds; 0: libcurl's default */
	long total_timeout;      /* seconds for the whole request; 0: none */
	const char *user_agent;  /* NULL: no User-Agent header */
};

struct http_client;

/* NULL on allocation failure or when libcurl lacks an option asked for (logged by no one). */
struct http_client *http_client_new(const struct http_client_opts *opts);
void http_client_free(struct http_client *c);

/*
 * METHOD url with `body` (body_len bytes, may be NULL for none; POST and PUT send it as
 * application/json) and "Accept: application/json". `header` is one extra header line such as
 * "Authorization: Bearer ..." (NULL for none; copied by libcurl and freed after the request).
 */
int http_client_request(struct http_client *c, enum http_method method, const char *url,
			const char *header, const char *body, size_t body_len, long *status,
			struct dynbuf *resp);

/* http_client_request() with several extra header lines (NULL entries are skipped). */
int http_client_request_headers(struct http_client *c, enum http_method method, const char *url,
				const char *const *headers, size_t nheaders, const char *body,
				size_t body_len, long *status, struct dynbuf *resp);

/*
 * GET url, writing the body of a 200 answer to fd (at most max bytes) as it arrives; the body of
 * any other answer goes to err_body (capped by its dynbuf) and nothing to fd. *written counts
 * the bytes written to fd, also after a failure. Same returns as http_client_request(), and
 * -EFBIG past max, or write(2)'s -errno (-ENOSPC, ...).
 */
int http_client_download(struct http_client *c, const char *url, const char *header, int fd,
			 uint64_t max, long *status, uint64_t *written, struct dynbuf *err_body);

const char *http_client_error(const struct http_client *c);
const char *http_client_error_detail(const struct http_client *c);

/* "GET", "POST", "PUT", "DELETE". */
const char *http_method_name(enum http_method m);

#endif
