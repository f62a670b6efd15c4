/*
 * store_pg.c as several verifiers use it: what any build checks without a server (URIs, a
 * server that is not there), and with one (ATTEST_TEST_PG, tests/lib/teststore.h): verifiers
 * starting together migrate a new database once (one of them logs that it created it, none
 * that it upgraded it); rounds of the same agents committed through
 * two store handles at once (two verifiers) serialize on the boot state's version, with no
 * deadlock and no version lost or repeated; a challenge is spent once across both.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/stderrcap.h"
#include "tests/lib/storeagent.h"
#include "tests/lib/teststore.h"
#include "tests/unit/check.h"
#include "verifier/store/store.h"
#include "verifier/store/store_backend.h"
#include "verifier/store/store_pg.h"
#include "verifier/store/store_schema.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The temporary directory the cases work in, made in main(). */
static char tmp_dir[] = "/tmp/test_store_pg.XXXXXX";

static void test_uris_and_absent_server(void)
{
	struct store *st = (struct store *)&st;
	double t0;

	CHECK(store_open("postgresql:attest", &st) == -EINVAL && !st, "a bare name is refused");
	st = (struct store *)&st;
	CHECK(store_open("postgresql:", &st) == -EINVAL && !st, "postgresql: with nothing after");
	t0 = now_s();
	st = (struct store *)&st;
	/* Port 1 on loopback: refused at once. */
	CHECK(store_open("postgresql://127.0.0.1:1/attest", &st) == -EIO && !st,
	      "no server: -EIO, the verifier does not start");
	CHECK(now_s() - t0 < 5, "and says so at once (%.1f s)", now_s() - t0);
}

#define OPENERS 4

struct opener {
	const char *uri;
	struct store *st;
	int ret;
};

static void *open_thread(void *p)
{
	struct opener *o = p;

	o->ret = store_open(o->uri, &o->st);
	return NULL;
}

static void test_concurrent_migrations(void)
{
	const char *dir = tmp_dir;
	struct opener o[OPENERS];
	pthread_t t[OPENERS];
	char uri[300], log[16384];
	int ok = 0, v = -1, capturing;

	if (teststore_uri(dir, "migrate", uri, sizeof(uri))) {
		CHECK(0, "a database");
		return;
	}
	capturing = stderrcap_begin();
	for (int i = 0; i < OPENERS; i++) {
		o[i] = (struct opener){ .uri = uri };
		if (pthread_create(&t[i], NULL, open_thread, &o[i]))
			o[i].ret = -EAGAIN;
	}
	for (int i = 0; i < OPENERS; i++) {
		if (o[i].ret != -EAGAIN)
			pthread_join(t[i], NULL);
		ok += o[i].ret == 0;
		store_close(o[i].st);
	}
	stderrcap_end(log, sizeof(log));
	fputs(log, stderr);
	CHECK(capturing == 0 && stderrcap_count(log, "created at schema version") == 1 &&
		      stderrcap_count(log, "upgraded from schema version") == 0,
	      "one verifier says it created the database, none that it upgraded it");
	CHECK(ok == OPENERS, "%d verifiers opened a new database at once (%d did)", OPENERS, ok);
	CHECK(teststore_pg_int("migrate", "SELECT version FROM schema_version", &v) == 0 &&
		      v == STORE_SCHEMA_VERSION,
	      "it is at schema version %d (%d)", STORE_SCHEMA_VERSION, v);
	CHECK(teststore_pg_int("migrate", "SELECT count(*) FROM schema_version", &v) == 0 && v == 1,
	      "with one version row (%d)", v);
}

#define VERIFIERS 2
#define THREADS_PER 4
#define AGENTS 3
#define ROUNDS 60

struct racer {
	struct store *st;
	int n;
	int ok, stale, spent, other;
};

static atomic_int spent_ok;

/* Rounds of AGENTS agents, each over the version it read, as round.c does. */
static void *race_thread(void *p)
{
	struct racer *r = p;
	struct boot_state bs, cur;
	struct store_round rd;
	char agent[16];
	uint8_t nonce[32];
	int64_t id;

	for (int i = 0; i < ROUNDS; i++) {
		uint64_t ver = 0;
		int ret;

		/* Round 0: every thread of every verifier, each for an agent of its own (no
		 * compare-and-swap to lose), answers the same challenge: exactly one wins. */
		if (i == 0)
			snprintf(agent, sizeof(agent), "solo-%d", r->n);
		else
			snprintf(agent, sizeof(agent), "race-%d", i % AGENTS);
		if (store_boot_get(r->st, agent, &cur, &ver)) {
			r->other++;
			continue;
		}
		memset(&bs, 0, sizeof(bs));
		bs.started = true;
		bs.boot_number = 1;
		bs.next_entry = ver + 1; /* the state says which version it followed */
		memset(&rd, 0, sizeof(rd));
		rd.agent = agent;
		rd.prev_version = ver;
		rd.next = &bs;
		rd.trusted = true;
		rd.reasons_json = "[]";
		rd.now = 1000 + i;
		memset(nonce, 0, sizeof(nonce));
		if (i > 0) {
			nonce[0] = (uint8_t)r->n;
			nonce[1] = (uint8_t)i;
		}
		rd.nonce = nonce;
		rd.nonce_len = sizeof(nonce);
		rd.nonce_expires = 5000;
		ret = store_round_commit(r->st, &rd, &id);
		if (i == 0) {
			if (ret == 0)
				atomic_fetch_add(&spent_ok, 1);
			else if (ret == -EALREADY)
				r->spent++;
			else
				r->other++;
		} else if (ret == 0) {
			r->ok++;
		} else if (ret == -ESTALE) {
			r->stale++;
		} else {
			r->other++;
		}
	}
	return NULL;
}

static int count_cb(void *arg, const struct store_verdict *v)
{
	(void)v;
	(*(int *)arg)++;
	return 0;
}

static void test_two_verifiers(void)
{
	const char *dir = tmp_dir;
	struct store *st[VERIFIERS] = { NULL };
	struct racer r[VERIFIERS * THREADS_PER];
	pthread_t t[VERIFIERS * THREADS_PER];
	int ok = 0, stale = 0, other = 0, spent = 0, verdicts = 0, versions = 0, chain = 0;
	char uri[300];

	if (teststore_uri(dir, "race", uri, sizeof(uri))) {
		CHECK(0, "a database");
		return;
	}
	for (int i = 0; i < VERIFIERS; i++)
		CHECK(store_open(uri, &st[i]) == 0, "verifier %d opens the store", i);
	if (!st[0] || !st[1])
		goto out;
	/* Rounds are stored for active agents only. */
	for (int i = 0; i < VERIFIERS * THREADS_PER + AGENTS; i++) {
		char id[16];

		if (i < VERIFIERS * THREADS_PER)
			snprintf(id, sizeof(id), "solo-%d", i + 1);
		else
			snprintf(id, sizeof(id), "race-%d", i - VERIFIERS * THREADS_PER);
		if (storeagent_active(st[0], id, 100)) {
			CHECK(0, "agent %s active", id);
			goto out;
		}
	}
	for (int i = 0; i < VERIFIERS * THREADS_PER; i++) {
		r[i] = (struct racer){ .st = st[i % VERIFIERS], .n = i + 1 };
		CHECK(pthread_create(&t[i], NULL, race_thread, &r[i]) == 0, "thread %d", i);
	}
	for (int i = 0; i < VERIFIERS * THREADS_PER; i++) {
		pthread_join(t[i], NULL);
		ok += r[i].ok;
		stale += r[i].stale;
		other += r[i].other;
		spent += r[i].spent;
	}
	CHECK(other == 0, "no round failed otherwise (a deadlock, a lost connection): %d", other);
	CHECK(ok > 0 && stale > 0, "rounds committed (%d) and refused as stale (%d): they raced", ok,
	      stale);
	CHECK(atomic_load(&spent_ok) == 1 && spent == VERIFIERS * THREADS_PER - 1,
	      "one challenge answered by every thread of both: accepted once (%d), refused as spent"
	      " %d times", atomic_load(&spent_ok), spent);
	for (int a = 0; a < AGENTS; a++) {
		char agent[16];
		struct boot_state bs;
		uint64_t ver = 0;
		int n = 0;

		snprintf(agent, sizeof(agent), "race-%d", a);
		if (store_boot_get(st[1], agent, &bs, &ver) == 0 &&
		    store_verdicts_list(st[0], agent, 100000, count_cb, &n) == 0) {
			versions += (int)ver;
			verdicts += n;
			/* Each round wrote next_entry = the version it followed + 1. */
			chain += bs.next_entry == ver;
		}
	}
	CHECK(verdicts == ok && versions == ok,
	      "one verdict and one version per committed round (%d rounds, %d verdicts, %d"
	      " versions)", ok, verdicts, versions);
	CHECK(chain == AGENTS, "each agent's state is the one written over the version before it");
out:
	for (int i = 0; i < VERIFIERS; i++)
		store_close(st[i]);
}

#define DL_ITER 150

struct dl_arg {
	struct store_backend *be;
	pthread_barrier_t *go;
	bool reversed;
	int failed, committed;
};

/*
 * Batches of two verifiers over the same two agents, in opposite orders, at the same moment:
 * written as given they would lock a then b, and b then a.
 */
static void *dl_thread(void *p)
{
	struct dl_arg *d = p;
	struct store_pending_round w[2];
	struct store_round r[2];
	struct boot_state bs;
	char agent[2][24];

	memset(&bs, 0, sizeof(bs));
	bs.started = true;
	for (int i = 0; i < DL_ITER; i++) {
		for (int k = 0; k < 2; k++) {
			snprintf(agent[k], sizeof(agent[k]), "dl-%d-%c", i, k ? 'b' : 'a');
			memset(&r[k], 0, sizeof(r[k]));
			r[k].agent = agent[k];
			r[k].next = &bs;
			r[k].reasons_json = "[]";
			r[k].now = 1000;
			memset(&w[k], 0, sizeof(w[k]));
			w[k].r = &r[k];
		}
		/* The list as the queue would hand it over: a, b or b, a. */
		if (d->reversed) {
			w[1].next = &w[0];
		} else {
			w[0].next = &w[1];
		}
		pthread_barrier_wait(d->go);
		d->be->ops->commit_rounds(d->be, d->reversed ? &w[1] : &w[0]);
		for (int k = 0; k < 2; k++) {
			d->failed += w[k].ret != 0 && w[k].ret != -ESTALE;
			d->committed += w[k].ret == 0;
		}
	}
	return NULL;
}

static void test_opposite_batches(void)
{
	const char *dir = tmp_dir;
	struct store_backend *be[2] = { NULL, NULL };
	struct dl_arg d[2];
	pthread_barrier_t go;
	pthread_t t[2];
	char uri[300];

	if (teststore_uri(dir, "deadlock", uri, sizeof(uri))) {
		CHECK(0, "a database");
		return;
	}
	{
		/* Rounds are stored for active agents only. */
		struct store *st = NULL;
		int bad = 0;
		char id[24];

		CHECK(store_open(uri, &st) == 0, "the store");
		for (int i = 0; st && i < 2 * DL_ITER; i++) {
			snprintf(id, sizeof(id), "dl-%d-%c", i / 2, i % 2 ? 'b' : 'a');
			bad += storeagent_active(st, id, 100) != 0;
		}
		CHECK(st && bad == 0, "%d agents active (%d failed)", 2 * DL_ITER, bad);
		store_close(st);
	}
	for (int i = 0; i < 2; i++)
		CHECK(store_pg_ops.open(uri + strlen("postgresql:"), &be[i]) == 0,
		      "backend %d opens", i);
	if (!be[0] || !be[1])
		goto out;
	pthread_barrier_init(&go, NULL, 2);
	for (int i = 0; i < 2; i++) {
		d[i] = (struct dl_arg){ .be = be[i], .go = &go, .reversed = i == 1 };
		pthread_create(&t[i], NULL, dl_thread, &d[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&go);
	CHECK(d[0].failed + d[1].failed == 0,
	      "no round failed (a deadlock aborts one): %d of %d", d[0].failed + d[1].failed,
	      4 * DL_ITER);
	CHECK(d[0].committed + d[1].committed == 2 * DL_ITER,
	      "each agent's first round committed once (%d of %d)",
	      d[0].committed + d[1].committed, 2 * DL_ITER);
out:
	for (int i = 0; i < 2; i++)
		if (be[i])
			be[i]->ops->close(be[i]);
}

int main(void)
{
	if (!mkdtemp(tmp_dir))
		return 2;
	printf("# backend: %s\n", teststore_backend());
	CASE(test_uris_and_absent_server);
	if (teststore_pg()) {
		CASE(test_concurrent_migrations);
		CASE(test_two_verifiers);
		CASE(test_opposite_batches);
	}
	rmdir(tmp_dir);
	return check_finish();
}
