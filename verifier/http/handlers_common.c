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

unsigned query_limit(const struct http_request *req)
{
	const char *s = http_query(req, "limit");
	char *end;
	unsigned long n;

	if (!s)
		return LIST_LIMIT_DEFAULT;
	n = strtoul(s, &end, 10);
	if (end == s || *end || n == 0)
		return LIST_LIMIT_DEFAULT;
	return n > LIMIT_LIST_ROWS ? LIMIT_LIST_ROWS : (unsigned)n;
}

bool policy_name_valid(const char *s)
{
	/* Same alphabet as agent ids, shorter. */
	return s && strlen(s) <= LIMIT_POLICY_NAME && agent_id_valid(s);
}
