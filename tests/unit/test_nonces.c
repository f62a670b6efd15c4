/*
 * nonces: the in-memory challenge table. Same answers as the store gave when challenges were
 * rows (unknown, reused, expired, rate limit), plus what is new: the per-agent memory cap,
 * the sweep, exactly one winner when threads race for one nonce, and the challenges verdicts
 * carry (one outstanding per agent).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "proto/pcrs.h"
#include "verifier/facts/nonces.h"
#include "tests/unit/check.h"

#define RACERS 8

static void make_challenge(struct challenge *c, uint8_t tag, int64_t expires_at)
{
	struct pcr_bank *b;

	memset(c, 0, sizeof(*c));
	memset(c->nonce, 0x42, 32);
	c->nonce[0] = tag;
	c->nonce_len = 32;
	c->expires_at = expires_at;
	c->log_offset = 7;
	b = pcr_set_add_bank(&c->selection, 0x0004);
	b->mask = 0x7ff;
	b = pcr_set_add_bank(&c->selection, 0x000b);
	b->mask = 0x7ff;
}

static void test_basics(void)
{
	struct nonces *ns = nonces_new();
	struct challenge c, got;
	int ret = 0;

	CHECK(ns != NULL, "new");
	if (!ns)
		return;
	make_challenge(&c, 1, 1000);
	CHECK(nonces_add(ns, "web-01", &c, 900) == 0, "add");
	CHECK(nonces_consume(ns, "db-01", c.nonce, 32, 950, &got) == -ENOENT,
	      "other agent's nonce is unknown");
	CHECK(nonces_consume(ns, "web-01", c.nonce, 31, 950, &got) == -ENOENT, "prefix unknown");
	CHECK(nonces_consume(ns, "web-01", c.nonce, 0, 950, &got) == -ENOENT, "empty unknown");
	CHECK(nonces_consume(ns, "web-01", c.nonce, 65, 950, &got) == -ENOENT, "too long unknown");
	CHECK(nonces_consume(ns, "web-01", c.nonce, 32, 950, &got) == 0, "consume");
	CHECK(got.log_offset == 7 && got.expires_at == 1000 && got.nonce_len == 32 &&
		      !memcmp(got.nonce, c.nonce, 32) &&
		      pcr_set_same_selection(&got.selection, &c.selection),
	      "challenge fields");
	CHECK(nonces_consume(ns, "web-01", c.nonce, 32, 951, &got) == -EALREADY && got.nonce_len == 0,
	      "reuse");

	make_challenge(&c, 2, 1000);
	CHECK(nonces_add(ns, "web-01", &c, 900) == 0, "challenge 2");
	CHECK(nonces_consume(ns, "web-01", c.nonce, 32, 1001, &got) == -ETIMEDOUT, "expired");
	CHECK(nonces_consume(ns, "web-01", c.nonce, 32, 1000, &got) == 0, "expired left unused");

	for (int i = 0; i < 12 && ret == 0; i++) {
		make_challenge(&c, (uint8_t)(10 + i), 1000);
		ret = nonces_add(ns, "db-01", &c, 900);
		if (ret == 0)
			CHECK(i < 10, "more than 10 outstanding accepted");
	}
	CHECK(ret == -EBUSY, "rate limited at 10 (%d)", ret);
	/* Once they expire, new ones are accepted again; the expired ones still answer expired. */
	make_challenge(&c, 99, 3000);
	CHECK(nonces_add(ns, "db-01", &c, 1001) == 0, "after expiry");
	make_challenge(&c, 10, 1000);
	CHECK(nonces_consume(ns, "db-01", c.nonce, 32, 1002, &got) == -ETIMEDOUT,
	      "expired one remembered");
	/* Long past expiry everything is forgotten by the sweep: unknown, and memory returned. */
	make_challenge(&c, 100, 9000);
	CHECK(nonces_add(ns, "db-01", &c, 1000 + NONCES_KEEP_SECONDS + 100) == 0, "late add");
	make_challenge(&c, 1, 1000);
	CHECK(nonces_consume(ns, "web-01", c.nonce, 32, 1000 + NONCES_KEEP_SECONDS + 100, &got) ==
		      -ENOENT,
	      "forgotten after the keep time");
	CHECK(nonces_count(ns) == 2, "sweeps left db-01's two newest (%zu)", nonces_count(ns));
	make_challenge(&c, 0, 1000);
	c.nonce_len = 0;
	CHECK(nonces_add(ns, "web-01", &c, 900) == -EINVAL, "empty nonce refused");
	nonces_free(ns);
	nonces_free(NULL);
}

/* Many rounds of one agent: memory stays capped, newest spent nonces still say reused. */
static void test_cap(void)
{
	struct nonces *ns = nonces_new();
	struct challenge c, got;
	bool ok = true;

	if (!ns)
		return;
	for (int i = 0; i < 200; i++) {
		make_challenge(&c, (uint8_t)i, 5000);
		ok &= nonces_add(ns, "busy", &c, 1000) == 0;
		ok &= nonces_consume(ns, "busy", c.nonce, 32, 1000, &got) == 0;
	}
	CHECK(ok, "200 rounds");
	CHECK(nonces_count(ns) == NONCES_MAX_OUTSTANDING + NONCES_KEEP_SPENT,
	      "capped at %u (%zu)", NONCES_MAX_OUTSTANDING + NONCES_KEEP_SPENT, nonces_count(ns));
	make_challenge(&c, 199, 5000);
	CHECK(nonces_consume(ns, "busy", c.nonce, 32, 1000, &got) == -EALREADY, "newest: reused");
	make_challenge(&c, 0, 5000);
	CHECK(nonces_consume(ns, "busy", c.nonce, 32, 1000, &got) == -ENOENT,
	      "oldest forgotten early: unknown, still refused");
	/* Outstanding ones are never the ones evicted. */
	for (int i = 0; i < 10; i++) {
		make_challenge(&c, (uint8_t)(200 + i), 5000);
		ok &= nonces_add(ns, "busy", &c, 1000) == 0;
	}
	for (int i = 0; i < 10; i++) {
		make_challenge(&c, (uint8_t)(200 + i), 5000);
		ok &= nonces_consume(ns, "busy", c.nonce, 32, 1000, &got) == 0;
	}
	CHECK(ok, "ten outstanding survive a full record");
	nonces_free(ns);
}

/*
 * Challenges that go with verdicts (nonces_add_given): one outstanding per agent, the newest.
 * An agent that ignores them and asks for its own is never rate-limited by them.
 */
static void test_given(void)
{
	struct nonces *ns = nonces_new();
	struct challenge c, g1, g2, got;
	bool ok = true;

	if (!ns)
		return;
	make_challenge(&g1, 1, 5000);
	make_challenge(&g2, 2, 5000);
	CHECK(nonces_add_given(ns, "web-01", &g1, 1000) == 0 &&
		      nonces_add_given(ns, "web-01", &g2, 1000) == 0,
	      "two verdicts' challenges in a row");
	CHECK(nonces_outstanding(ns, "web-01", 1000) == 1, "one outstanding (%u)",
	      nonces_outstanding(ns, "web-01", 1000));
	CHECK(nonces_consume(ns, "web-01", g1.nonce, 32, 1000, &got) == -ENOENT,
	      "the first, replaced unused: unknown");
	CHECK(nonces_consume(ns, "web-01", g2.nonce, 32, 1000, &got) == 0, "the second: answered");
	make_challenge(&c, 3, 5000);
	CHECK(nonces_add_given(ns, "web-01", &c, 1000) == 0 &&
		      nonces_consume(ns, "web-01", g2.nonce, 32, 1000, &got) == -EALREADY,
	      "an answered one is not replaced: a replay of it is still reused");
	/* An agent asking for every challenge, a verdict giving one each round: 3x the limit. */
	for (int i = 0; i < 3 * (int)NONCES_MAX_OUTSTANDING; i++) {
		make_challenge(&c, (uint8_t)(100 + i), 5000);
		ok &= nonces_add(ns, "db-01", &c, 1000) == 0;
		ok &= nonces_consume(ns, "db-01", c.nonce, 32, 1000, &got) == 0;
		make_challenge(&c, (uint8_t)(200 + i), 5000);
		ok &= nonces_add_given(ns, "db-01", &c, 1000) == 0;
	}
	CHECK(ok && nonces_outstanding(ns, "db-01", 1000) == 1,
	      "%d rounds that ignore the given challenge: never rate-limited, one outstanding",
	      3 * (int)NONCES_MAX_OUTSTANDING);
	nonces_free(ns);
}

struct racer {
	struct nonces *ns;
	const struct challenge *c;
	int ret;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	struct challenge got;

	r->ret = nonces_consume(r->ns, "web-01", r->c->nonce, r->c->nonce_len, 1000, &got);
	return NULL;
}

static void test_race(void)
{
	struct nonces *ns = nonces_new();
	struct racer r[RACERS];
	pthread_t t[RACERS];
	struct challenge c;
	int wins = 0, reused = 0;

	if (!ns)
		return;
	for (int round = 0; round < 50; round++) {
		make_challenge(&c, (uint8_t)round, 2000);
		nonces_add(ns, "web-01", &c, 1000);
		for (int i = 0; i < RACERS; i++) {
			r[i] = (struct racer){ ns, &c, 0 };
			pthread_create(&t[i], NULL, race, &r[i]);
		}
		for (int i = 0; i < RACERS; i++) {
			pthread_join(t[i], NULL);
			wins += r[i].ret == 0;
			reused += r[i].ret == -EALREADY;
		}
	}
	CHECK(wins == 50 && reused == 50 * (RACERS - 1), "one winner per nonce (%d, %d)", wins,
	      reused);
	nonces_free(ns);
}

/* Many agents: the shards' tables grow and every agent's nonce is found. */
static void test_many(void)
{
	struct nonces *ns = nonces_new();
	struct challenge c, got;
	char id[32];
	int found = 0;

	if (!ns)
		return;
	for (int i = 0; i < 5000; i++) {
		snprintf(id, sizeof(id), "agent-%05d", i);
		make_challenge(&c, (uint8_t)i, 2000);
		c.nonce[1] = (uint8_t)(i >> 8);
		nonces_add(ns, id, &c, 1000);
	}
	for (int i = 0; i < 5000; i++) {
		snprintf(id, sizeof(id), "agent-%05d", i);
		make_challenge(&c, (uint8_t)i, 2000);
		c.nonce[1] = (uint8_t)(i >> 8);
		found += nonces_consume(ns, id, c.nonce, 32, 1000, &got) == 0;
	}
	CHECK(found == 5000, "5000 agents found (%d)", found);
	nonces_free(ns);
}

int main(void)
{
	CASE(test_basics);
	CASE(test_cap);
	CASE(test_given);
	CASE(test_race);
	CASE(test_many);
	return check_finish();
}
