/*
 * Retention (store.h, "Retention"; verifier/service/retention.c) on a backend (SQLite, or
 * PostgreSQL with ATTEST_TEST_PG: tests/lib/teststore.h): a pass keeps every verdict that
 * changed its agent's trust or reasons and each agent's newest N, deletes the rest in batches,
 * counts every round in its agent's hour whatever was pruned, ages the hourly counters out,
 * never touches violations, history or policy versions, and a purge takes the counters too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/sqlfile.h"
#include "tests/lib/storeagent.h"
#include "tests/lib/teststore.h"
#include "tests/unit/check.h"
#include "verifier/service/retention.h"
#include "verifier/store/store.h"
#include "verifier/store/store_schema.h"

#define H0 1700002800 /* an hour's first second */

struct agent_rounds {
	const char *id;
	struct boot_state bs;
	uint64_t version;
	int64_t changed[16]; /* ids of the verdicts that changed something */
	unsigned nchanged;
	int64_t last[512];   /* every verdict id, in order */
	unsigned n;
	uint64_t trusted, untrusted;
};

static int commit(struct store *st, struct agent_rounds *a, bool trusted, const char *reasons,
		  int64_t now, bool changes)
{
	struct store_round_violation v = {
		.reason = "not_in_allowlist", .path = "/usr/bin/evil", .digest = "sha256:abcd",
		.template_name = "ima-ng", .entry = 7,
	};
	struct store_round r = {
		.agent = a->id, .prev_version = a->version, .next = &a->bs, .trusted = trusted,
		.reasons_json = reasons, .now = now, .violations = &v, .nviolations = trusted ? 0 : 1,
	};
	int64_t id = 0;
	int ret;

	a->bs.started = true;
	a->bs.boot_number = 1;
	if ((ret = store_round_commit(st, &r, &id)))
		return ret;
	a->version++;
	if (changes)
		a->changed[a->nchanged++] = id;
	a->last[a->n++] = id;
	if (trusted)
		a->trusted++;
	else
		a->untrusted++;
	return 0;
}

struct ids {
	int64_t id[512];
	unsigned n;
};

static int ids_cb(void *arg, const struct store_verdict *v)
{
	struct ids *s = arg;

	if (s->n < 512)
		s->id[s->n++] = v->id;
	return 0;
}

static bool has(const struct ids *s, int64_t id)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->id[i] == id)
			return true;
	return false;
}

struct hours {
	struct store_counters h[64];
	unsigned n;
	uint64_t rounds, trusted, untrusted;
};

static int hours_cb(void *arg, const struct store_counters *c)
{
	struct hours *s = arg;

	if (s->n < 64)
		s->h[s->n++] = *c;
	s->rounds += c->rounds;
	s->trusted += c->trusted;
	s->untrusted += c->untrusted;
	return 0;
}

static int count_viol(void *arg, const struct store_violation *v)
{
	(void)v;
	(*(int *)arg)++;
	return 0;
}

static int count_hist(void *arg, const struct store_agent_event *e)
{
	(void)e;
	(*(int *)arg)++;
	return 0;
}

static unsigned list(struct store *st, const char *agent, struct ids *s)
{
	memset(s, 0, sizeof(*s));
	if (store_verdicts_list(st, agent, 100000, ids_cb, s))
		return 0;
	return s->n;
}

/* The temporary directory and the store every case works in, made in main(). */
static char tmp_dir[] = "/tmp/test_store_retention.XXXXXX";
static struct store *shared_store;

static void test_retention(void)
{
	struct store *st = shared_store;
	static struct agent_rounds a1 = { .id = "ret-a1" }, a2 = { .id = "ret-a2" };
	const char *x = "[{\"code\":\"not_in_allowlist\"}]";
	const char *y = "[{\"code\":\"not_in_allowlist\"},{\"code\":\"pcr_mismatch\"}]";
	struct retention_config keep_all = { .verdicts_keep = 0, .counters_days = 0 };
	struct retention_config keep5 = { .verdicts_keep = 5, .counters_days = 0 };
	struct retention_stats rs;
	struct hours hs;
	struct ids s;
	int ok = 0, nviol = 0, nviol_after = 0, nhist = 0, nhist_after = 0;
	int64_t t = H0, pv = 0;
	unsigned i;
	uint64_t n;

	CHECK(storeagent_active(st, a1.id, H0 - 10) == 0 && storeagent_active(st, a2.id, H0 - 10) == 0,
	      "two active agents");
	CHECK(store_policy_put(st, "ret-policy", "{}", "test", H0, &pv) == 0, "a policy version");
	/* a1 across three hours: trusted, turns untrusted, its reasons change, trusted again. */
	ok += commit(st, &a1, true, "[]", t, true) == 0;
	for (i = 0; i < 20; i++, t += 10)
		ok += commit(st, &a1, true, "[]", t, false) == 0;
	ok += commit(st, &a1, false, x, t, true) == 0;
	for (i = 0; i < 10; i++, t += 10)
		ok += commit(st, &a1, false, x, t, false) == 0;
	t = H0 + STORE_HOUR + 5;
	ok += commit(st, &a1, false, y, t, true) == 0;
	ok += commit(st, &a1, true, "[]", t, true) == 0;
	t = H0 + 2 * STORE_HOUR + 5;
	for (i = 0; i < 30; i++, t += 10)
		ok += commit(st, &a1, true, "[]", t, false) == 0;
	CHECK(ok == 64, "a1's 64 rounds committed (%d)", ok);
	/* a2: 300 trusted rounds, more than one batch to prune. */
	ok = 0;
	for (i = 0, t = H0; i < 300; i++, t += 10)
		ok += commit(st, &a2, true, "[]", t, i == 0) == 0;
	CHECK(ok == 300, "a2's 300 rounds committed (%d)", ok);
	CHECK(list(st, a1.id, &s) == 64 && list(st, a2.id, &s) == 300, "everything stored so far");

	CHECK(store_violations_list(st, -1, a1.id, 1000, count_viol, &nviol) == 0 && nviol > 0,
	      "a1 has violations (%d)", nviol);
	CHECK(store_agent_history(st, a1.id, 1000, count_hist, &nhist) == 0 && nhist > 0,
	      "and history (%d)", nhist);

	CHECK(retention_pass(st, &keep_all, t, NULL, &rs) == 0 && rs.verdicts == 0 &&
		      rs.counters == 0,
	      "verdicts-keep 0 and counters-days 0 keep everything");
	CHECK(list(st, a1.id, &s) == 64 && list(st, a2.id, &s) == 300, "nothing was deleted");
	CHECK(store_verdicts_prune(st, a1.id, 0, 10, &n) == -EINVAL, "keep 0 is refused below");

	CHECK(retention_pass(st, &keep5, t, NULL, &rs) == 0, "a pass keeping 5");
	CHECK(rs.verdicts == (64 - 4 - 5) + (300 - 1 - 5), "deleted what changed nothing"
	      " beyond the newest 5 (%llu)", (unsigned long long)rs.verdicts);
	CHECK(list(st, a1.id, &s) == 4 + 5, "a1 keeps its 4 changes and its newest 5 (%u)", s.n);
	for (i = 0, ok = 0; i < a1.nchanged; i++)
		ok += has(&s, a1.changed[i]);
	CHECK(ok == 4, "every verdict that changed a1's trust or reasons survives (%d of 4)", ok);
	for (i = 0, ok = 0; i < 5; i++)
		ok += has(&s, a1.last[a1.n - 1 - i]);
	CHECK(ok == 5, "and its newest 5 (%d)", ok);
	CHECK(list(st, a2.id, &s) == 1 + 5 && has(&s, a2.changed[0]) &&
		      has(&s, a2.last[a2.n - 1]),
	      "a2 keeps its first verdict and its newest 5 (%u)", s.n);
	CHECK(retention_pass(st, &keep5, t, NULL, &rs) == 0 && rs.verdicts == 0,
	      "a second pass finds nothing more");

	memset(&hs, 0, sizeof(hs));
	CHECK(store_counters_list(st, a1.id, 0, 1000, hours_cb, &hs) == 0 && hs.n == 3 &&
		      hs.rounds == 64 && hs.trusted == a1.trusted && hs.untrusted == a1.untrusted,
	      "a1's hourly counters count every round, pruned or not (%u hours, %llu rounds)",
	      hs.n, (unsigned long long)hs.rounds);
	CHECK(hs.n == 3 && hs.h[0].hour == H0 + 2 * STORE_HOUR && hs.h[2].hour == H0 &&
		      hs.h[2].rounds == 32 && hs.h[2].trusted == 21 && hs.h[2].untrusted == 11,
	      "by hour, newest first");
	memset(&hs, 0, sizeof(hs));
	CHECK(store_counters_list(st, a2.id, H0 + STORE_HOUR, 1000, hours_cb, &hs) == 0 &&
		      hs.n == 0,
	      "a2's rounds all fell in its first hour");
	CHECK(store_counters_list(st, a2.id, 0, 1000, hours_cb, &hs) == 0 && hs.n == 1 &&
		      hs.rounds == 300 && hs.trusted == 300,
	      "300 trusted rounds in it");

	CHECK(store_violations_list(st, -1, a1.id, 1000, count_viol, &nviol_after) == 0 &&
		      nviol_after == nviol, "violations are never pruned");
	CHECK(store_agent_history(st, a1.id, 1000, count_hist, &nhist_after) == 0 &&
		      nhist_after == nhist, "nor an agent's history");
	CHECK(store_policy_version(st, "ret-policy", &pv) == 0 && pv == 1, "nor policy versions");

	/* Counters a day old and more go; the hour that is not quite a day old stays. */
	{
		struct retention_config days = { .verdicts_keep = 5, .counters_days = 1 };

		CHECK(retention_pass(st, &days, H0 + 2 * STORE_HOUR + 86400, NULL, &rs) == 0 &&
			      rs.counters == 3,
		      "counters-days 1 deletes the hours before (%llu)",
		      (unsigned long long)rs.counters);
		memset(&hs, 0, sizeof(hs));
		CHECK(store_counters_list(st, a1.id, 0, 1000, hours_cb, &hs) == 0 && hs.n == 1 &&
			      hs.h[0].hour == H0 + 2 * STORE_HOUR,
		      "a1 keeps its newest hour (%u)", hs.n);
	}
	CHECK(store_agent_retire(st, a1.id, t, "test", true) == 0, "a1 purged");
	memset(&hs, 0, sizeof(hs));
	CHECK(store_counters_list(st, a1.id, 0, 1000, hours_cb, &hs) == 0 && hs.n == 0 &&
		      list(st, a1.id, &s) == 0,
	      "with its verdicts and counters");
}

/* The thread: started, it prunes at once; stopped, it is gone. */
static void test_thread(void)
{
	struct store *st = shared_store;
	static struct agent_rounds a3 = { .id = "ret-a3" };
	struct retention_config cfg = { .verdicts_keep = 2, .counters_days = 0, .interval = 1 };
	struct retention *r = NULL;
	struct ids s;
	int ok = 0;

	CHECK(storeagent_active(st, a3.id, H0) == 0, "an agent");
	for (int i = 0; i < 20; i++)
		ok += commit(st, &a3, true, "[]", H0 + i, i == 0) == 0;
	CHECK(ok == 20, "20 rounds");
	CHECK(retention_start(st, &(struct retention_config){ 0 }, &r) == 0 && !r,
	      "nothing to prune: no thread");
	CHECK(retention_start(st, &cfg, &r) == 0 && r, "the thread starts");
	for (int i = 0; i < 200 && list(st, a3.id, &s) != 3; i++)
		usleep(50 * 1000);
	CHECK(list(st, a3.id, &s) == 3, "it pruned to the first and the newest 2 (%u)", s.n);
	retention_stop(r);
	retention_stop(NULL);
}

/* SQL on the store at uri, outside it: SQLite's file or PostgreSQL's database `name`. */
static int raw_exec(const char *uri, const char *name, const char *sql)
{
	return teststore_pg() ? teststore_pg_exec(name, sql) : sql_exec(uri + 7, sql);
}

static int raw_int(const char *uri, const char *name, const char *sql)
{
	int v = -1;

	if (teststore_pg() ? teststore_pg_int(name, sql, &v) : sql_int(uri + 7, sql, &v))
		return -1;
	return v;
}

/* A store of the version before retention, upgraded: its verdicts judged, its hours counted. */
static void test_migration(void)
{
	const char *dir = tmp_dir;
	char uri[256], down[1024];
	struct store *st = NULL;

	CHECK(teststore_uri(dir, "migrate", uri, sizeof(uri)) == 0 && store_open(uri, &st) == 0 &&
		      storeagent_active(st, "m1", 7000) == 0 && storeagent_active(st, "m2", 7000) == 0,
	      "a store with two agents");
	store_close(st);
	st = NULL;
	snprintf(down, sizeof(down),
		 "INSERT INTO verdicts(agent, boot_number, time, trusted, reasons, next_offset)"
		 " VALUES ('m1', 1, 7200, 1, '[]', 0), ('m2', 1, 7201, 1, '[]', 0),"
		 " ('m1', 1, 7210, 1, '[]', 0), ('m1', 1, 7220, 0, '[x]', 0),"
		 " ('m1', 1, 7230, 0, '[x]', 0), ('m2', 1, 7231, 1, '[]', 0),"
		 " ('m1', 1, 10800, 0, '[y]', 0), ('m1', 1, 10810, 1, '[]', 0);"
		 "DROP TABLE policy_deletions; DROP TABLE verdict_hours;"
		 " DROP TABLE audit_log; DROP TABLE audit_head; DROP TABLE audit_signed;"
		 " DROP TABLE verdict_evidence; DROP TABLE evidence_boot_logs;"
		 " DROP TABLE evidence_policies; DROP TABLE registrations; DROP TABLE agent_labels;"
		 " ALTER TABLE verdicts DROP COLUMN changed;"
		 " ALTER TABLE policies DROP COLUMN signer; ALTER TABLE policies DROP COLUMN signature;%s",
		 teststore_pg() ? "UPDATE schema_version SET version = 8;" : "PRAGMA user_version = 8;");
	CHECK(STORE_SCHEMA_VERSION >= 10 && raw_exec(uri, "migrate", down) == 0,
	      "taken back to schema version 8 with verdicts");
	CHECK(store_open(uri, &st) == 0, "and upgraded");
	store_close(st);
	CHECK(raw_int(uri, "migrate", "SELECT COUNT(*) FROM verdicts WHERE changed = 1") == 5 &&
		      raw_int(uri, "migrate", "SELECT COUNT(*) FROM verdicts WHERE changed = 1"
				  " AND time IN (7200, 7201, 7220, 10800, 10810)") == 5,
	      "each agent's first verdict and those that changed trust or reasons are marked");
	CHECK(raw_int(uri, "migrate", "SELECT COUNT(*) FROM verdict_hours") == 3 &&
		      raw_int(uri, "migrate", "SELECT rounds * 100 + trusted * 10 + untrusted"
				  " FROM verdict_hours WHERE agent = 'm1' AND hour = 7200") == 422 &&
		      raw_int(uri, "migrate", "SELECT rounds * 100 + trusted * 10 + untrusted"
				  " FROM verdict_hours WHERE agent = 'm1' AND hour = 10800") == 211 &&
		      raw_int(uri, "migrate", "SELECT rounds * 100 + trusted * 10 + untrusted"
				  " FROM verdict_hours WHERE agent = 'm2' AND hour = 7200") == 220,
	      "the stored verdicts are counted by agent and hour");
}

int main(void)
{
	char uri[256];

	if (!mkdtemp(tmp_dir))
		return 2;
	printf("# backend: %s\n", teststore_backend());
	CHECK(teststore_uri(tmp_dir, "retention", uri, sizeof(uri)) == 0 &&
		      store_open(uri, &shared_store) == 0,
	      "open");
	if (shared_store) {
		CASE(test_retention);
		CASE(test_thread);
		store_close(shared_store);
	}
	CASE(test_migration);
	snprintf(uri, sizeof(uri), "rm -rf %s", tmp_dir);
	if (system(uri) != 0)
		fprintf(stderr, "cleanup of %s failed\n", tmp_dir);
	return check_finish();
}
