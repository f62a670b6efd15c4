/* attestd/pace.c: the token bucket for rounds that new measurements bring forward. */
#include "attestd/pace.h"
#include "tests/unit/check.h"

static void test_burst_then_one_per_gap(void)
{
	struct pace p;

	pace_init(&p, 3, 5, 100.0);
	for (int i = 0; i < 3; i++) {
		CHECK(pace_wait(&p, 100.0) == 0.0, "round %d of the burst may go at once", i);
		CHECK(pace_spend(&p, 100.0) == 0, "round %d of the burst spends a token", i);
	}
	double w = pace_wait(&p, 100.0);
	CHECK(w > 4.999 && w <= 5.0, "the fourth waits one gap (%.3f s)", w);
	CHECK(pace_spend(&p, 100.0) == -1, "and cannot spend before it");
	CHECK(pace_wait(&p, 102.5) > 2.499 && pace_wait(&p, 102.5) <= 2.5, "half a gap later, half left");
	CHECK(pace_spend(&p, 105.0) == 0, "one gap later it goes");
	CHECK(pace_spend(&p, 105.0) == -1, "and only one");
}

static void test_refill_capped_at_burst(void)
{
	struct pace p;
	int spent = 0;

	pace_init(&p, 2, 3, 0.0);
	(void)pace_spend(&p, 0.0);
	(void)pace_spend(&p, 0.0);
	/* An hour of quiet earns back the burst, not 1,200 rounds. */
	while (pace_spend(&p, 3600.0) == 0 && spent < 100)
		spent++;
	CHECK(spent == 2, "an hour of quiet earns the burst back and no more (%d)", spent);
}

static void test_growing_list_bound(void)
{
	struct pace p;
	int rounds = 0;

	/* A list that grows on every look (each 0.25 s) for 60 s: at most burst + 60 / gap. */
	pace_init(&p, 3, 5, 0.0);
	for (double t = 0.0; t <= 60.0; t += 0.25)
		if (pace_wait(&p, t) == 0.0 && pace_spend(&p, t) == 0)
			rounds++;
	CHECK(rounds >= 3 + 12 - 1 && rounds <= 3 + 12, "rounds in 60 s: %d (burst 3, gap 5)", rounds);
}

static void test_clock_going_back_earns_nothing(void)
{
	struct pace p;

	pace_init(&p, 1, 10, 50.0);
	CHECK(pace_spend(&p, 50.0) == 0, "the one token");
	CHECK(pace_spend(&p, 20.0) == -1, "a clock that goes back earns nothing");
	CHECK(pace_wait(&p, 55.0) > 4.999, "half a gap after the spend, half left (%.3f)",
	      pace_wait(&p, 55.0));
}

int main(void)
{
	CASE(test_burst_then_one_per_gap);
	CASE(test_refill_capped_at_burst);
	CASE(test_growing_list_bound);
	CASE(test_clock_going_back_earns_nothing);
	return check_finish();
}
