/* attestd/agent.c backoff: doubling from 1 s to a 60 s cap with +-20% jitter. */
#include "attestd/agent.h"
#include "tests/unit/check.h"

static void test_doubling_up_to_the_cap(void)
{
	unsigned base = 0, prev_base = 0;

	for (int i = 0; i < 12; i++) {
		unsigned d = agent_backoff_next(&base);

		CHECK(base >= AGENT_BACKOFF_MIN_MS && base <= AGENT_BACKOFF_MAX_MS,
		      "base %u in range", base);
		CHECK(i == 0 ? base == AGENT_BACKOFF_MIN_MS
			     : base == (prev_base * 2 > AGENT_BACKOFF_MAX_MS ? AGENT_BACKOFF_MAX_MS
									     : prev_base * 2),
		      "step %d: base %u after %u", i, base, prev_base);
		CHECK(d >= base - base / 5 && d <= base + base / 5, "delay %u within 20%% of %u", d,
		      base);
		prev_base = base;
	}
	CHECK(base == AGENT_BACKOFF_MAX_MS, "capped at %u", base);
}

/* At the cap, 1000 draws: the jitter really varies (they cannot all be equal). */
static void test_jitter_varies(void)
{
	unsigned base = AGENT_BACKOFF_MAX_MS, lo = ~0u, hi = 0;

	for (int i = 0; i < 1000; i++) {
		unsigned d = agent_backoff_next(&base);

		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	CHECK(hi > lo && lo >= 48000 && hi <= AGENT_BACKOFF_MAX_MS,
	      "jitter spread %u..%u, never over 60 s (attestd(8))", lo, hi);
	CHECK(hi > 58000, "the jitter still reaches near the cap (%u)", hi);
}

static void test_reset_after_a_success(void)
{
	unsigned base = 0; /* after a success */

	CHECK(agent_backoff_next(&base) <= 1200 && base == AGENT_BACKOFF_MIN_MS, "reset to 1 s");
}

int main(void)
{
	CASE(test_doubling_up_to_the_cap);
	CASE(test_jitter_varies);
	CASE(test_reset_after_a_success);
	return check_finish();
}
