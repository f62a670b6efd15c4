/*
 * The HTTPS client attestctl's online subcommands share (implemented in online.c, on
 * common/http_client.h).
 *
 * online_parse_opts(): common options --verifier URL --ca FILE --token-file FILE --json
 *   (--open --state --agent --limit --label for listings, --scope for approve, --version for
 *   policy get, --label --yes for policy assign by label); defaults from $ATTEST_VERIFIER, $ATTEST_CA,
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
	const char *token_name; /* which token of a file of several (NAME ROLE TOKEN lines) */
	const char *state;
	const char *agent;
	const char *limit;
	const char *scope;   /* approve: "agent" or "policy" */
	const char *version; /* policy get: a version number */
	const char *policy;  /* agents, approve/dismiss --path: only agents judged by this policy */
	const char *path;    /* approve/dismiss: every open violation of this path ... */
	const char *digest;  /* ... and digest */
	const char *label;   /* agents, policy assign: only agents with this label, KEY=VALUE */
	bool yes;            /* approve/dismiss --path: apply, not only count */
	bool json;
	bool purge;          /* agent retire: delete it and its history */
};

void online_usage(const char *cmd);
int online_parse_opts(int argc, char **argv, struct online_opts *o, const char **pos);
/* online_parse_opts() for commands of several words (policy, amendment): options anywhere,
 * up to `max` words into args, *n their count (max + 1 when there were more). 0 or 2. */
int online_parse_words(int argc, char **argv, struct online_opts *o, const char **args, int max,
		       int *n);
int online_request(const struct online_opts *o, enum http_method method, const char *path,
		   const char *send, long *status, char **body);
int online_download(const struct online_opts *o, const char *path, int fd, uint64_t max,
		    long timeout, uint64_t *written);
int online_fetch(const struct online_opts *o, enum http_method method, const char *path,
		 const char *send, json_t **out);
/* cmd_policy.c, shared with cmd_amendment.c: a version history (GET path) as a table, and a
 * rollback (POST {"version": N} to path) with what it did; `what` names the policy. 0, 1, 2. */
int policy_print_history(const struct online_opts *o, const char *path, const char *what);
int policy_rollback_to(const struct online_opts *o, const char *path, const char *what,
		       const char *version);
/* cmd_labels.c, for cmd_policy.c: policy assign --label KEY=VALUE NAME [--yes]. 0, 1 (counted
 * only, or refused), 2. */
int policy_assign_label(const struct online_opts *o, const char *policy);
/* "2026-12-03 07:31:57Z" (UTC), or "-" for 0. */
void online_fmt_time(json_int_t t, char *out, size_t cap);

#endif
