/*
 * errors: the table of errors.h, looked up.
 */
#include <string.h>

#include "proto/errors.h"

static const struct proto_error_info errors[PROTO_ERR_COUNT] = {
#define PROTO_ERROR_ROW(e, st, c, ref, act) \
	[PROTO_ERR_##e] = { .status = (st), .code = (c), .refusal = (ref), .action = (act) },
	PROTO_ERRORS(PROTO_ERROR_ROW)
#undef PROTO_ERROR_ROW
};

const struct proto_error_info *proto_error_info(enum proto_error e)
{
	return (unsigned)e < PROTO_ERR_COUNT ? &errors[e] : &errors[PROTO_ERR_INTERNAL];
}

bool proto_error_from_wire(long status, const char *code, enum proto_error *e)
{
	for (unsigned i = 0; code && i < PROTO_ERR_COUNT; i++) {
		if (errors[i].status == status && !strcmp(errors[i].code, code)) {
			*e = (enum proto_error)i;
			return true;
		}
	}
	return false;
}

enum proto_action proto_error_action(long status, const char *code)
{
	enum proto_error e;

	if (proto_error_from_wire(status, code, &e))
		return errors[e].action;
	if (status == 429 || status >= 500)
		return PROTO_ACTION_RETRY;
	if (status >= 400)
		return PROTO_ACTION_GIVE_UP;
	return PROTO_ACTION_RETRY;
}
