/*
 * The HTTPS client attestctl's online subcommands share (implemented in cmd_online.c, on
 * common/http_client.h).
 *
 * online_parse_opts(): common options --verifier URL --ca FILE --token-file FILE --json
 *   (--open --state --agent --limit for listings); defaults from $ATTEST_VERIFIER, $ATTEST_CA,
 *   $ATTEST_TOKEN_FILE. *pos gets the one positional argument allowed (or NULL). 0 or 2.
 * online_request(): METHOD PATH with an optional JSON body; *status and *body (caller frees).
 *   0, or 2 with a message printed (transport or TLS failure).
 * online_download(): GET PATH, the body of a 200 answer written to fd (at most max bytes,
 *   within timeout seconds); *written counts the bytes. 0, 1 the verifier refused (its error
 *   printed), 2 transport, TLS or write failure (printed).
 * online_fetch(): online_request() plus the common handling: an API error is printed and
 *   gives 1; with --json the answer is printed and *out stays NULL; otherwise *out is the
 *   parsed answer (caller json_decref()s).
 */
#ifndef VERIFIER_ATTESTCTL_ONLINE_H
#define VERIFIER_ATTESTCTL_ONLINE_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "common/http_client.h"

struct online_opts {
	const char *url;
	const char *ca;
	const char *token_file;
	const char *state;
	const char *agent;
	const char *limit;
	bool json;
};

void online_usage(const char *cmd);
int online_parse_opts(int argc, char **argv, struct online_opts *o, const char **pos);
int online_request(const struct online_opts *o, enum http_method method, const char *path,
		   const char *send, long *status, char **body);
int online_download(const struct online_opts *o, const char *path, int fd, uint64_t max,
		    long timeout, uint64_t *written);
int online_fetch(const struct online_opts *o, enum http_method method, const char *path,
		 const char *send, json_t **out);

#endif
