/*
 * verifier/service/webhooks.h: the signature receivers check (HMAC-SHA256 over "TIMESTAMP.BODY") and
 * the retry backoff (doubling from 1 s, capped). The delivery itself, against a real receiver,
 * is tests/integration/webhooks.sh.
 */
#include <stdint.h>
#include <string.h>

#include "verifier/service/webhooks.h"
#include "tests/unit/check.h"

static const uint8_t key[] = "0123456789abcdef-secret";

static void test_signature(void)
{
	char hex[WEBHOOK_SIG_HEX + 1];
	const char *body = "{\"id\":\"evt-1\"}";

	/* Expected value from python3: hmac.new(key, b"1700000000." + body, sha256).hexdigest() */
	CHECK(webhook_sign(key, sizeof(key) - 1, 1700000000, body, strlen(body), hex) == 0,
	      "signs");
	CHECK(!strcmp(hex, "72b1563f7c19af0b6a7c996b589babd877f0eacd3607d50b16bb686b29ba2db3"),
	      "HMAC-SHA256 of \"1700000000.\" and the body: %s", hex);
	/* The timestamp is signed: another one gives another signature (no replay with a new
	 * timestamp), and so does another body. */
	{
		char other[WEBHOOK_SIG_HEX + 1];

		CHECK(webhook_sign(key, sizeof(key) - 1, 1700000001, body, strlen(body), other) == 0 &&
		      strcmp(hex, other), "the timestamp is in the signed material");
		CHECK(webhook_sign(key, sizeof(key) - 1, 1700000000, "{\"id\":\"evt-2\"}",
				   strlen(body), other) == 0 && strcmp(hex, other),
		      "the body is in the signed material");
	}
}

static void test_backoff(void)
{
	CHECK(webhook_backoff(1, 300) == 1, "first retry after 1 s");
	CHECK(webhook_backoff(2, 300) == 2, "then 2 s");
	CHECK(webhook_backoff(5, 300) == 16, "doubling: 16 s before the 6th attempt");
	CHECK(webhook_backoff(9, 300) == 256, "256 s");
	CHECK(webhook_backoff(10, 300) == 300, "capped at the maximum");
	CHECK(webhook_backoff(UINT32_MAX, 300) == 300, "capped however many attempts failed");
	CHECK(webhook_backoff(3, 2) == 2, "a small cap holds from the start");
	CHECK(webhook_backoff(0, 300) == 1, "never below 1 s");
}

int main(void)
{
	CASE(test_signature);
	CASE(test_backoff);
	return check_finish();
}
