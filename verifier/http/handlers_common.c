/*
 * What the handlers share: a JSON answer, the ?limit= of a list, the alphabet of policy names.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "proto/limits.h"
#include "verifier/http/handlers.h"

#define LIST_LIMIT_DEFAULT 100u

void reply_json_value(struct http_response *resp, unsigned status, json_t *v)
{
	char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;

	json_decref(v);
	http_reply_json(resp, status, s);
}

bool query_limit(const struct http_request *req, struct http_response *resp, unsigned *limit)
{
	const char *s = http_query(req, "limit");
	char *end;
	unsigned long n;

	*limit = LIST_LIMIT_DEFAULT;
	if (!s)
		return true;
	/* Digits only: strtoul alone would take " 5", "+5", "-5" (as a huge number) and "". */
	errno = 0;
	n = strtoul(s, &end, 10);
	if (!*s || strspn(s, "0123456789") != strlen(s) || *end || n == 0) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST,
				 "limit: a whole number of rows from 1 (at most %u are sent)",
				 (unsigned)LIMIT_LIST_ROWS);
		return false;
	}
	/* Past the cap (or past unsigned long): the cap, as documented. */
	*limit = errno == ERANGE || n > LIMIT_LIST_ROWS ? LIMIT_LIST_ROWS : (unsigned)n;
	return true;
}

bool policy_name_valid(const char *s)
{
	/* Same alphabet as agent ids, shorter. */
	return s && strlen(s) <= LIMIT_POLICY_NAME && agent_id_valid(s);
}
