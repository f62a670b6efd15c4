/*
 * curl_setup: the one set-up of a libcurl handle in this tree. http_client.c builds its client
 * on it; the programs that drive libcurl themselves for speed or for raw answers (the test
 * tools' software agent, the load generator) set their handles up with it too, so that every
 * client speaks to the verifier under the same rules:
 *
 *   TLS 1.2 or newer, peer and host verification always on (not configurable on purpose);
 *   trust anchors: opts->ca_file, or the system store when NULL; with opts->ca_only the system
 *   store is not consulted even beside ca_file (the verifier's CA pinned, as attestd does);
 *   https only (opts->allow_http: http too), no redirects followed;
 *   opts->connect_timeout and opts->total_timeout (seconds, 0: libcurl's default / none);
 *   no signals (handles used from threads), TCP keepalive on a connection kept between requests;
 *   opts->user_agent when given.
 *
 * What a request sends and where its answer goes (method, headers, body, write callback, error
 * buffer) stays with the caller.
 */
#ifndef COMMON_CURL_SETUP_H
#define COMMON_CURL_SETUP_H

#include <curl/curl.h>

#include "common/http_client.h" /* struct http_client_opts */

/* curl_global_init() once per process: call before starting threads. 0, or -EIO. */
int curl_setup_global(void);
/* Applies the rules above to h. 0, or -EINVAL when libcurl refuses an option. */
int curl_setup_handle(CURL *h, const struct http_client_opts *opts);

#endif
