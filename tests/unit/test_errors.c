/* proto/errors: the table of error answers is consistent, and agents read it as intended. */
#include <stdbool.h>
#include <string.h>

#include "proto/errors.h"
#include "tests/unit/check.h"

static void test_rows_are_distinct_and_errors(void)
{
	for (unsigned i = 0; i < PROTO_ERR_COUNT; i++) {
		const struct proto_error_info *a = proto_error_info((enum proto_error)i);
		enum proto_error back;

		CHECK(a->status >= 400 && a->status <= 599, "%s: status %u is an error", a->code,
		      a->status);
		CHECK(a->refusal == (a->status < 500), "%s %u: a refusal is a 4xx, a failure a 5xx",
		      a->code, a->status);
		CHECK(a->code[0] && strspn(a->code, "abcdefghijklmnopqrstuvwxyz_") == strlen(a->code),
		      "%s: a code is lowercase words", a->code);
		for (unsigned j = 0; j < i; j++) {
			const struct proto_error_info *b = proto_error_info((enum proto_error)j);

			CHECK(a->status != b->status || strcmp(a->code, b->code),
			      "%u %s names one row", a->status, a->code);
		}
		CHECK(proto_error_from_wire(a->status, a->code, &back) && back == i,
		      "%u %s is found back", a->status, a->code);
	}
	CHECK(proto_error_info(PROTO_ERR_COUNT) == proto_error_info(PROTO_ERR_INTERNAL),
	      "an out-of-range value reads as internal");
}

static void test_one_answer_for_the_store(void)
{
	const struct proto_error_info *s = proto_error_info(PROTO_ERR_STORE_UNAVAILABLE);
	enum proto_error e;

	CHECK(s->status == 503 && !strcmp(s->code, "storage_unavailable") &&
		      s->action == PROTO_ACTION_RETRY,
	      "the store's failure is 503 storage_unavailable, retried");
	CHECK(!proto_error_from_wire(503, "store_unavailable", &e),
	      "no second spelling of the store's failure");
}

static void test_agent_actions(void)
{
	CHECK(proto_error_action(400, "nonce_unknown") == PROTO_ACTION_NEW_CHALLENGE &&
		      proto_error_action(409, "nonce_expired") == PROTO_ACTION_NEW_CHALLENGE &&
		      proto_error_action(409, "no_challenge") == PROTO_ACTION_NEW_CHALLENGE,
	      "a carried challenge refused: ask for one");
	CHECK(proto_error_action(409, "nonce_reused") == PROTO_ACTION_RETRY &&
		      proto_error_action(409, "round_conflict") == PROTO_ACTION_RETRY,
	      "a replay or a lost race: the next round, not a new challenge now");
	CHECK(proto_error_action(404, "unknown_agent") == PROTO_ACTION_ENROLL &&
		      proto_error_action(403, "not_activated") == PROTO_ACTION_ENROLL &&
		      proto_error_action(403, "agent_reset") == PROTO_ACTION_ENROLL,
	      "not known as active: enroll again");
	CHECK(proto_error_action(409, "already_enrolled") == PROTO_ACTION_DONE,
	      "already enrolled with this AK: done");
	CHECK(proto_error_action(403, "agent_retired") == PROTO_ACTION_GIVE_UP &&
		      proto_error_action(409, "agent_exists") == PROTO_ACTION_GIVE_UP,
	      "refused for good: give up");
	CHECK(proto_error_action(400, "nonce_mismatch") == PROTO_ACTION_GIVE_UP,
	      "a quote's reason as the code of a refusal: give up (no row, a 400)");
	CHECK(proto_error_action(502, "http_502") == PROTO_ACTION_RETRY &&
		      proto_error_action(429, "slow_down") == PROTO_ACTION_RETRY &&
		      proto_error_action(404, "nonce_unknown") == PROTO_ACTION_GIVE_UP,
	      "an answer no row names: by its status");
	CHECK(proto_error_action(503, "storage_unavailable") == PROTO_ACTION_RETRY &&
		      proto_error_action(429, "rate_limited") == PROTO_ACTION_RETRY,
	      "the verifier's failures and its rate limit: retry");
}

int main(void)
{
	CASE(test_rows_are_distinct_and_errors);
	CASE(test_one_answer_for_the_store);
	CASE(test_agent_actions);
	return check_finish();
}
