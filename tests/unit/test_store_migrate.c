/*
 * store_schema.c: every step of the one list of migrations has a text in every dialect.
 * store_sqlite_schema.c: databases written by older verifiers open, are upgraded to this
 * build's schema, and keep their agents, verdicts, boot states, violations and policies:
 *   tests/data/store-v0.db  from before schema versions (boot states as raw struct copies)
 *   tests/data/store-v2.db  schema 2, the first release with `make install`
 *   tests/data/store-v5.db  schema 5, the last before issue 16 (retired agents, history,
 *                           intervals, the webhook outbox)
 * all made by tests/data/store-v0.sh with the same software agents, so the same facts hold in
 * each; store-v2.db also holds agent "omega", whose violation paths (stored as display text
 * before schema 4) become their raw bytes again, and store-v5.db holds it with raw paths. A row the upgrade from version 0 cannot read
 * stops it and leaves the boot states as they were.
 *
 * The expected values are what store-v0.sh printed when it made the files: the software
 * agents' clock files and `attestctl replay --bank all` of their lists.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "tests/lib/sqlfile.h"
#include "tests/lib/stderrcap.h"
#include "tests/unit/check.h"
#include "verifier/store/boot_state.h"
#include "verifier/store/store.h"
#include "verifier/store/store_pg.h" /* store_pg_ddl() */
#include "verifier/store/store_schema.h"

#define ALPHA_SHA1 "7ed93b5cd790b68552c4f7b76742834c06d724f9"
#define ALPHA_SHA256 "bca70250e3a690a23364d8b799465d4756cb994153c71395d3f09d829485ea5c"
#define GAMMA_SHA1 "afeec47155b1c62abfd8ba91243c00e8c537dc53"
#define GAMMA_SHA256 "19c26d23b373ebb54bb73a9027d41e874ed8cffb1e6072a4c07e5d020baf1053"

static char *hex(const uint8_t *p, size_t n)
{
	static char buf[2][129];
	static int which;
	char *out = buf[which ^= 1];

	for (size_t i = 0; i < n && i < 64; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
	return out;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[8192];
	size_t n;
	int ret = in && out ? 0 : -1;

	while (!ret && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			ret = -1;
	if (in && ferror(in))
		ret = -1;
	if (out && fclose(out))
		ret = -1;
	if (in)
		fclose(in);
	return ret;
}

struct agents_seen {
	int n;
	struct store_agent a[5];
};

static int agent_cb(void *arg, const struct store_agent *a)
{
	struct agents_seen *s = arg;

	if (s->n < 5)
		s->a[s->n] = *a;
	s->n++;
	return 0;
}

struct verdicts_seen {
	int n, trusted;
	bool named; /* a verdict names not_in_allowlist for /usr/bin/evil */
};

static int verdict_cb(void *arg, const struct store_verdict *v)
{
	struct verdicts_seen *s = arg;

	s->n++;
	s->trusted += v->trusted;
	if (!v->trusted && strstr(v->reasons_json, "\"not_in_allowlist\"") &&
	    strstr(v->reasons_json, "/usr/bin/evil"))
		s->named = true;
	return 0;
}

struct violations_seen {
	int n;
	char path[2][32];
	enum violation_state state[2];
	uint64_t boot[2];
};

static int violation_cb(void *arg, const struct store_violation *v)
{
	struct violations_seen *s = arg;

	if (s->n < 2) {
		snprintf(s->path[s->n], sizeof(s->path[0]), "%s", v->path);
		s->state[s->n] = v->state;
		s->boot[s->n] = v->boot_number;
	}
	s->n++;
	return 0;
}

/* omega: the fixture holds agent omega too (store-v2.db). */
static void check_agents(struct store *st, bool omega)
{
	struct agents_seen s = { 0 };
	struct store_agent a;
	int want = omega ? 4 : 3;

	CHECK(store_agents_list(st, agent_cb, &s) == 0 && s.n == want, "%d agents (%d)", want, s.n);
	if (s.n != want)
		return;
	CHECK(!strcmp(s.a[0].id, "alpha") && s.a[0].state == AGENT_ACTIVE && !s.a[0].policy[0] &&
		      s.a[0].boot_number == 1 && s.a[0].next_entry == 5 &&
		      s.a[0].last_trusted == 0 && s.a[0].open_violations == 1 &&
		      s.a[0].activated_at >= s.a[0].created_at && s.a[0].created_at > 0,
	      "alpha: active, boot 1, next entry 5, last untrusted, one open violation");
	CHECK(!strcmp(s.a[1].id, "beta") && s.a[1].state == AGENT_PENDING &&
		      s.a[1].boot_number == 0 && s.a[1].last_trusted == -1,
	      "beta: pending, no evidence");
	CHECK(!strcmp(s.a[2].id, "gamma") && s.a[2].state == AGENT_ACTIVE &&
		      !strcmp(s.a[2].policy, "strict") && s.a[2].boot_number == 2 &&
		      s.a[2].next_entry == 2 && s.a[2].last_trusted == 1,
	      "gamma: active, policy strict, second boot, trusted");
	if (omega)
		CHECK(!strcmp(s.a[3].id, "omega") && s.a[3].state == AGENT_ACTIVE &&
			      !strcmp(s.a[3].policy, "omega") && s.a[3].boot_number == 1 &&
			      s.a[3].next_entry == 6 && s.a[3].last_trusted == 0 &&
			      s.a[3].open_violations == 2,
		      "omega: active, policy omega, boot 1, next entry 6, two open violations");
	CHECK(store_agent_get(st, "alpha", &a) == 0 && a.ek_pub_len > 0 && a.ek_cert_len > 0 &&
		      a.ak_pub_len > 0 && a.ak_name_len == 34 && !all_zero(a.cred_digest, 32),
	      "alpha keeps its EK, EK certificate, AK and credential digest");
	store_agent_release(&a);
}

struct history_seen {
	int n;
	char event[4][16];
	int64_t time[4];
};

static int history_cb(void *arg, const struct store_agent_event *e)
{
	struct history_seen *h = arg;

	if (h->n < 4) {
		snprintf(h->event[h->n], sizeof(h->event[0]), "%s", e->event);
		h->time[h->n] = e->time;
	}
	h->n++;
	return 0;
}

/* Schema 6 begins each agent's history from what its row says (issue 16). */
static void check_history(struct store *st, bool omega)
{
	struct history_seen h = { 0 };
	struct store_agent a;

	CHECK(store_agent_get(st, "alpha", &a) == 0 &&
		      store_agent_history(st, "alpha", 10, history_cb, &h) == 0 && h.n == 2 &&
		      !strcmp(h.event[0], "activated") && h.time[0] == a.activated_at &&
		      !strcmp(h.event[1], "enrolled") && h.time[1] == a.created_at,
	      "alpha's history: enrolled, activated, at their times (%d rows)", h.n);
	store_agent_release(&a);
	h.n = 0;
	CHECK(store_agent_history(st, "beta", 10, history_cb, &h) == 0 && h.n == 1 &&
		      !strcmp(h.event[0], "enrolled"),
	      "beta's: enrolled only (pending)");
	h.n = 0;
	CHECK(!omega || (store_agent_history(st, "omega", 10, history_cb, &h) == 0 && h.n == 2),
	      "omega's: two rows");
}

/* from: the schema version of the fixture (its boot states count rounds since version 3). */
static void check_boot_states(struct store *st, int from)
{
	struct boot_state bs;

	uint64_t ver = 0;

	CHECK(store_boot_get(st, "alpha", &bs, &ver) == 0, "alpha's boot state reads");
	CHECK(from >= 3 ? ver == 6 : ver == 1,
	      "a state from before versions is version 1, one of version %d counts alpha's 6"
	      " rounds (%llu)", from, (unsigned long long)ver);
	CHECK(bs.started && bs.reset_count == 3 && bs.restart_count == 2 && bs.clock == 7000 &&
		      bs.boot_number == 1 && bs.next_entry == 5,
	      "alpha: reset 3, restart 2, clock 7000, boot 1, next 5 (got %u %u %llu %llu %llu)",
	      bs.reset_count, bs.restart_count, (unsigned long long)bs.clock,
	      (unsigned long long)bs.boot_number, (unsigned long long)bs.next_entry);
	CHECK(bs.replay.banks == (REPLAY_SHA1 | REPLAY_SHA256) && bs.replay.entries == 5 &&
		      bs.replay.violations == 0 && bs.replay.other_pcr == 0,
	      "alpha: replay follows sha1+sha256 over 5 entries");
	CHECK(!strcmp(hex(bs.replay.sha1, 20), ALPHA_SHA1) &&
		      !strcmp(hex(bs.replay.sha256, 32), ALPHA_SHA256),
	      "alpha: replayed PCR 10 kept (sha1 %s, sha256 %s)", hex(bs.replay.sha1, 20),
	      hex(bs.replay.sha256, 32));
	CHECK(all_zero(bs.replay.sha384, 48) && all_zero(bs.replay.sha512, 64),
	      "alpha: banks not followed stay zero");

	CHECK(store_boot_get(st, "gamma", &bs, NULL) == 0 && bs.started && bs.reset_count == 4 &&
		      bs.restart_count == 0 && bs.clock == 2000 && bs.boot_number == 2 &&
		      bs.next_entry == 2 && bs.replay.entries == 2,
	      "gamma: reset 4, clock 2000, boot 2, next 2");
	CHECK(!strcmp(hex(bs.replay.sha1, 20), GAMMA_SHA1) &&
		      !strcmp(hex(bs.replay.sha256, 32), GAMMA_SHA256),
	      "gamma: replayed PCR 10 of its second boot kept");
	CHECK(store_boot_get(st, "beta", &bs, &ver) == 0 && !bs.started && ver == 0,
	      "beta: no boot state");
}

/*
 * From version 4 on (issue 12) an approval went into the agent's amendment, not its policy:
 * the verifier of store-v5.db wrote "agent/alpha" and "agent/omega".
 */
static void check_verdicts_violations_policies(struct store *st, bool omega, int from)
{
	bool amended = from >= 4;
	struct verdicts_seen va = { 0 }, vg = { 0 };
	struct violations_seen open = { 0 }, all = { 0 };
	struct store_counts c;
	uint64_t n = 0, in_boot = 0;
	int64_t ver = 0;
	char *json = NULL;

	CHECK(store_verdicts_list(st, "alpha", 100, verdict_cb, &va) == 0 && va.n == 6 &&
		      va.trusted == 3 && va.named,
	      "alpha: 6 verdicts, 3 trusted, one naming /usr/bin/evil (%d, %d)", va.n,
	      va.trusted);
	CHECK(store_verdicts_list(st, "gamma", 100, verdict_cb, &vg) == 0 && vg.n == 2 &&
		      vg.trusted == 2,
	      "gamma: 2 trusted verdicts");
	CHECK(store_violations_list(st, VIOLATION_OPEN, "alpha", 100, violation_cb, &open) == 0 &&
		      open.n == 1 && !strcmp(open.path[0], "/usr/bin/evil") && open.boot[0] == 1,
	      "alpha's open violation: /usr/bin/evil");
	CHECK(store_violations_list(st, -1, "alpha", 100, violation_cb, &all) == 0 && all.n == 2,
	      "alpha has 2 violations");
	CHECK((!strcmp(all.path[0], "/usr/bin/worse") && all.state[0] == VIOLATION_APPROVED) ||
		      (!strcmp(all.path[1], "/usr/bin/worse") && all.state[1] == VIOLATION_APPROVED),
	      "/usr/bin/worse stays approved");
	CHECK(store_violations_open_count(st, "alpha", 1, &n, &in_boot) == 0 && n == 1 &&
		      in_boot == 1,
	      "open count of alpha's boot 1");
	CHECK(store_policy_version(st, "default", &ver) == 0 && ver == (amended ? 1 : 2),
	      "default at version %d", amended ? 1 : 2);
	CHECK(store_policy_get(st, amended ? "agent/alpha" : "default", &json, &ver) == 0 &&
		      ver == (amended ? 1 : 2) && strstr(json, "/usr/bin/worse") &&
		      (amended || strstr(json, "/usr/bin/app2")),
	      "%s holds the approved file", amended ? "alpha's amendment v1" : "default v2");
	free(json);
	json = NULL;
	CHECK(store_policy_get(st, "strict", &json, &ver) == 0 && ver == 1 &&
		      strstr(json, "/usr/bin/app1") && !strstr(json, "/usr/bin/app2"),
	      "the uploaded policy strict, version 1");
	free(json);
	if (omega) {
		json = NULL;
		CHECK(store_policy_get(st, amended ? "agent/omega" : "omega", &json, &ver) == 0 &&
			      ver == (amended ? 1 : 2) && strstr(json, "/usr/bin/worse") &&
			      !strstr(json, "/usr/bin/gone"),
		      "omega's approval made %s; the dismissed file is not in it",
		      amended ? "its amendment version 1" : "its policy version 2");
		free(json);
	}
	/* omega adds an agent, two open violations, a trusted and an untrusted verdict */
	CHECK(store_counts(st, &c) == 0 && c.agents_pending == 1 &&
		      c.agents_active == 2 + (omega ? 1 : 0) &&
		      c.violations_open == 1 + (omega ? 2 : 0) &&
		      c.verdicts_trusted == 5 + (omega ? 1 : 0) &&
		      c.verdicts_untrusted == 3 + (omega ? 1 : 0),
	      "counts");
}

/* The upgraded database goes on: a new round of alpha continues from the migrated state. */
static void check_next_round(struct store *st)
{
	struct boot_state bs, got;
	struct store_round r;
	uint64_t ver = 0;
	int64_t id = 0;

	CHECK(store_boot_get(st, "alpha", &bs, &ver) == 0, "alpha's state");
	bs.next_entry = 6;
	bs.replay.entries = 6;
	bs.clock = 8000;
	memset(&r, 0, sizeof(r));
	r.agent = "alpha";
	r.prev_version = ver;
	r.next = &bs;
	r.reasons_json = "[]";
	r.next_offset = 6;
	r.now = 1;
	CHECK(store_round_commit(st, &r, &id) == 0 && id > 8, "a round after the upgrade (%lld)",
	      (long long)id);
	CHECK(store_boot_get(st, "alpha", &got, &ver) == 0 && got.clock == 8000 &&
		      ver == r.prev_version + 1 &&
		      got.next_entry == 6 && !memcmp(&got.replay, &bs.replay, sizeof(bs.replay)),
	      "stored and read back in the new encoding");
}

struct v2_rows {
	int n;
	struct {
		int64_t id;
		char path[24];
		size_t path_len;
		enum violation_state state;
		char decision[48];
	} row[6];
};

static int v2_cb(void *arg, const struct store_violation *v)
{
	struct v2_rows *s = arg;

	if (s->n < 6) {
		s->row[s->n].id = v->id;
		s->row[s->n].path_len = v->path_len;
		memcpy(s->row[s->n].path, v->path, v->path_len < 24 ? v->path_len : 24);
		s->row[s->n].state = v->state;
		snprintf(s->row[s->n].decision, sizeof(s->row[0].decision), "%s", v->decision);
	}
	s->n++;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/*
 * Agent omega of tests/data/store-v2.db (schema 2): its violation paths become their raw bytes
 * ("t\xffol" text back to the byte 0xff), ids, states and counts are kept, decided rows say they
 * were decided before, and a recurrence of a decided file now opens a new row with a new id.
 */
static void check_omega(const char *src, const char *dir)
{
	char path[256], uri[300];
	struct store *st = NULL;
	struct v2_rows rows = { 0 };
	uint64_t total = 0, in_boot = 0;
	int64_t first;
	int v = -1;

	snprintf(path, sizeof(path), "%s/omega.db", dir);
	CHECK(copy_file(src, path) == 0 && sql_int(path, "PRAGMA user_version", &v) == 0 && v == 2,
	      "the fixture is at version 2 (%d)", v);
	snprintf(uri, sizeof(uri), "sqlite:%s", path);
	CHECK(store_open(uri, &st) == 0, "it opens and is upgraded");
	if (!st)
		return;
	CHECK(store_violations_list(st, -1, "omega", 10, v2_cb, &rows) == 0 && rows.n == 4,
	      "omega's 4 violations kept (%d)", rows.n);
	if (rows.n != 4) {
		store_close(st);
		return;
	}
	/* One round stored them in the order it listed them, with consecutive ids. */
	qsort(rows.row, 4, sizeof(rows.row[0]), by_id);
	first = rows.row[0].id;
	CHECK(rows.row[1].id == first + 1 && rows.row[2].id == first + 2 &&
		      rows.row[3].id == first + 3,
	      "their ids are kept (%lld..%lld)", (long long)first, (long long)rows.row[3].id);
	CHECK(rows.row[0].path_len == 13 && !memcmp(rows.row[0].path, "/usr/bin/evil", 13) &&
		      rows.row[0].state == VIOLATION_OPEN,
	      "the first: /usr/bin/evil, open");
	CHECK(rows.row[1].path_len == 13 && !memcmp(rows.row[1].path, "/usr/bin/t\xffol", 13),
	      "the second: the display text t\\xffol is the byte 0xff again (%zu bytes)",
	      rows.row[1].path_len);
	CHECK(rows.row[2].state == VIOLATION_APPROVED && rows.row[3].state == VIOLATION_DISMISSED &&
		      strstr(rows.row[2].decision, "before schema version 4") && !rows.row[0].decision[0],
	      "decisions kept, marked as made before");
	CHECK(store_violations_open_count(st, "omega", 1, &total, &in_boot) == 0 && total == 2 &&
		      in_boot == 2,
	      "two open, of boot 1");
	{
		/* /usr/bin/gone (dismissed, entry 5 of boot 1) runs again at entry 9. */
		struct store_round_violation nv = { .entry = 9, .reason = "not_in_allowlist",
						    .path = "/usr/bin/gone",
						    .digest = "sha256:6666666666666666666666666666666666666666666666666666666666666666",
						    .template_name = "ima-ng" };
		struct boot_state bs;
		struct store_round r;
		uint64_t ver = 0;
		int64_t id = 0;

		CHECK(store_boot_get(st, "omega", &bs, &ver) == 0, "omega's boot state");
		memset(&r, 0, sizeof(r));
		r.agent = "omega";
		r.next = &bs;
		r.prev_version = ver;
		r.reasons_json = "[]";
		r.violations = &nv;
		r.nviolations = 1;
		r.now = 4102444800; /* newer than every row: listed first */
		memset(&rows, 0, sizeof(rows));
		CHECK(store_round_commit(st, &r, &id) == 0 &&
			      store_violations_list(st, VIOLATION_OPEN, "omega", 10, v2_cb, &rows) == 0 &&
			      rows.n == 3 && rows.row[0].id == first + 4,
		      "the dismissed file recurs: a new open violation, id %lld (%lld)",
		      (long long)(first + 4), (long long)rows.row[0].id);
	}
	store_close(st);
}

/* A copy whose boot state row is broken as `sql` breaks it: the upgrade stops, nothing changes. */
static void check_refused(const char *src, const char *dir, const char *what, const char *sql)
{
	char path[256], uri[300];
	struct store *st = NULL;
	int v = -1, layout = -1;

	snprintf(path, sizeof(path), "%s/broken.db", dir);
	unlink(path);
	CHECK(copy_file(src, path) == 0 && sql_exec(path, sql) == 0, "%s: prepared", what);
	snprintf(uri, sizeof(uri), "sqlite:%s", path);
	CHECK(store_open(uri, &st) == -EINVAL && !st, "%s: upgrade refused", what);
	store_close(st);
	/* Version 1 is the tables as they were: only the failed step 2 was rolled back. */
	CHECK(sql_int(path, "PRAGMA user_version", &v) == 0 && v == 1 &&
		      sql_int(path, "SELECT count(layout) FROM boot_state", &layout) == 0 &&
		      layout == 2,
	      "%s: the boot states are left as they were (version %d, %d old rows)", what, v,
	      layout);
}

/*
 * One list of migrations (store_schema.h): every step has a name and a text in every dialect,
 * so no backend lacks a step, and none past STORE_SCHEMA_VERSION; PostgreSQL's texts, once
 * translated, keep none of SQLite's type words.
 */
static void test_every_step_in_every_dialect(void)
{
	static const char *const name[STORE_DIALECTS] = { "SQLite", "PostgreSQL" };
	static const char *const sqlite_words[] = { "INTEGER", "BLOB", "AUTOINCREMENT", "ROWID" };
	unsigned unnamed = 0, lacking[STORE_DIALECTS] = { 0 }, untranslated = 0;

	for (unsigned i = 0; i < STORE_SCHEMA_VERSION; i++) {
		const char *pg = store_migration_sql(i, STORE_DIALECT_PG);
		char *ddl = pg ? store_pg_ddl(pg) : NULL;

		if (!store_migrations[i].what || !store_migrations[i].what[0])
			unnamed = unnamed ? unnamed : i + 1;
		for (unsigned d = 0; d < STORE_DIALECTS; d++) {
			const char *sql = store_migration_sql(i, (enum store_dialect)d);

			if ((!sql || !sql[0]) && !lacking[d])
				lacking[d] = i + 1;
		}
		for (size_t w = 0; ddl && w < sizeof(sqlite_words) / sizeof(sqlite_words[0]); w++)
			if (strstr(ddl, sqlite_words[w]) && !untranslated)
				untranslated = i + 1;
		free(ddl);
	}
	CHECK(unnamed == 0, "every step has a name (step %u has none)", unnamed);
	for (unsigned d = 0; d < STORE_DIALECTS; d++)
		CHECK(lacking[d] == 0, "every step has a %s text (step %u has none)", name[d],
		      lacking[d]);
	CHECK(!store_migration_sql(STORE_SCHEMA_VERSION, STORE_DIALECT_SQLITE) &&
		      !store_migration_sql(STORE_SCHEMA_VERSION, STORE_DIALECT_PG),
	      "no step past version %d", STORE_SCHEMA_VERSION);
	CHECK(untranslated == 0, "PostgreSQL's texts keep no SQLite type (step %u does)",
	      untranslated);
}

/* The translation to PostgreSQL's types: whole words, outside quoted literals. */
static void test_postgresql_types(void)
{
	char *ddl = store_pg_ddl("CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT,"
				 " b BLOB, n INTEGER NOT NULL, INTEGERS BLOBS, x_INTEGER TEXT"
				 " DEFAULT 'INTEGER BLOB') WITHOUT ROWID;");

	CHECK(ddl && !strcmp(ddl, "CREATE TABLE t(id BIGINT GENERATED BY DEFAULT AS IDENTITY"
				  " PRIMARY KEY, b BYTEA, n BIGINT NOT NULL, INTEGERS BLOBS,"
				  " x_INTEGER TEXT DEFAULT 'INTEGER BLOB') ;"),
	      "translated: %s", ddl ? ddl : "(none)");
	free(ddl);
}

/* A new store is created at the current version, and says so (not "upgraded from 0"). */
/* The fixtures (STORE_TEST_DATA, or tests/data) and the directory of the copies, set in main(). */
static char fixture_v0[256], fixture_v2[256], fixture_v5[256];
static char tmp_dir[] = "/tmp/test_store_migrate.XXXXXX";

static void test_a_new_store(void)
{
	char uri[300], log[4096], want[96];
	struct store *st = NULL;
	int ret, capturing;

	snprintf(uri, sizeof(uri), "sqlite:%s/new.db", tmp_dir);
	capturing = stderrcap_begin();
	ret = store_open(uri, &st);
	stderrcap_end(log, sizeof(log));
	fputs(log, stderr);
	store_close(st);
	snprintf(want, sizeof(want), "created at schema version %d", STORE_SCHEMA_VERSION);
	CHECK(ret == 0 && capturing == 0 && stderrcap_count(log, want) == 1 &&
		      stderrcap_count(log, "upgraded") == 0,
	      "it opens and the log says it was %s", want);
}

/*
 * Opens a copy of an older database (schema `from`) and checks every fact. The version 2
 * fixture holds agent omega too.
 */
static void check_upgrade(const char *src, const char *dir, int from)
{
	char path[256], uri[300], log[4096], want[96];
	struct store *st = NULL;
	int v = -1, ret, capturing;

	snprintf(path, sizeof(path), "%s/upgraded-v%d.db", dir, from);
	snprintf(uri, sizeof(uri), "sqlite:%s", path);
	CHECK(copy_file(src, path) == 0, "copy of %s", src);
	capturing = stderrcap_begin();
	ret = store_open(uri, &st);
	stderrcap_end(log, sizeof(log));
	fputs(log, stderr);
	CHECK(ret == 0, "the old database opens");
	snprintf(want, sizeof(want), "upgraded from schema version %d to %d", from,
		 STORE_SCHEMA_VERSION);
	CHECK(capturing == 0 && stderrcap_count(log, want) == 1 &&
		      stderrcap_count(log, "created at") == 0,
	      "the log says it was %s", want);
	if (st) {
		check_agents(st, from >= 2);
		check_boot_states(st, from);
		check_verdicts_violations_policies(st, from >= 2, from);
		check_history(st, from >= 2);
		store_close(st);
	}
	CHECK(sql_int(path, "PRAGMA user_version", &v) == 0 && v == STORE_SCHEMA_VERSION,
	      "now at version %d (%d)", STORE_SCHEMA_VERSION, v);
	CHECK(sql_int(path, "SELECT count(*) FROM agents WHERE enrolled_at != created_at", &v) ==
			      0 && v == 0,
	      "every agent's pending time starts at its enrollment (%d differ)", v);
	CHECK(sql_int(path, "SELECT count(*) FROM boot_logs", &v) == 0 && v == 0,
	      "the firmware event log table exists, empty (%d rows)", v);
	CHECK(sql_int(path, "SELECT count(*) FROM webhook_outbox", &v) == 0 && v == 0,
	      "the webhook outbox exists, empty (%d rows)", v);
	CHECK(sql_int(path, "SELECT count(*) FROM agents WHERE retired_at != 0 OR reset_at != 0"
			    " OR round_interval != 0 OR stale_event_for != 0", &v) == 0 && v == 0,
	      "no agent is retired, reset or marked stale by the upgrade (%d)", v);
}

/* Reopens the copy check_upgrade() upgraded: current, it is opened without a word. */
static void check_reopened(const char *dir, int from)
{
	char uri[300], log[4096];
	struct store *st = NULL;
	int ret, capturing;

	snprintf(uri, sizeof(uri), "sqlite:%s/upgraded-v%d.db", dir, from);
	capturing = stderrcap_begin();
	ret = store_open(uri, &st);
	stderrcap_end(log, sizeof(log));
	fputs(log, stderr);
	CHECK(ret == 0, "reopens at version %d", STORE_SCHEMA_VERSION);
	CHECK(capturing == 0 && !stderrcap_count(log, "schema version"),
	      "and says nothing of its schema: it was current");
	if (st) {
		check_boot_states(st, from);
		check_next_round(st);
		store_close(st);
	}
}

static void test_the_fixtures(void)
{
	char path[256];
	int v = -1, layout = -1;

	/* Copies only: even a read leaves -wal and -shm files beside a WAL database. */
	snprintf(path, sizeof(path), "%s/fixture-v0.db", tmp_dir);
	CHECK(copy_file(fixture_v0, path) == 0 && sql_int(path, "PRAGMA user_version", &v) == 0 &&
		      v == 0 &&
		      sql_int(path, "SELECT count(*) FROM boot_state WHERE layout = 1", &layout) == 0 &&
		      layout == 2,
	      "store-v0.db is from before versions (version %d, %d raw boot states)", v, layout);
	snprintf(path, sizeof(path), "%s/fixture-v2.db", tmp_dir);
	CHECK(copy_file(fixture_v2, path) == 0 && sql_int(path, "PRAGMA user_version", &v) == 0 &&
		      v == 2,
	      "store-v2.db is at version 2 (%d)", v);
}

static void test_upgrade_from_version_0(void)
{
	check_upgrade(fixture_v0, tmp_dir, 0);
}

static void test_version_0_reopened(void)
{
	char path[256];
	int layout = -1;

	check_reopened(tmp_dir, 0);
	snprintf(path, sizeof(path), "%s/upgraded-v0.db", tmp_dir);
	CHECK(sql_int(path, "SELECT count(*) FROM pragma_table_info('boot_state')"
			    " WHERE name = 'layout'", &layout) == 0 && layout == 0,
	      "boot_state has no layout column any more");
}

static void test_upgrade_from_version_2(void)
{
	check_upgrade(fixture_v2, tmp_dir, 2);
}

static void test_version_2_reopened(void)
{
	check_reopened(tmp_dir, 2);
}

static void test_the_fixture_of_version_5(void)
{
	char path[256];
	int v = -1;

	snprintf(path, sizeof(path), "%s/fixture-v5.db", tmp_dir);
	CHECK(copy_file(fixture_v5, path) == 0 && sql_int(path, "PRAGMA user_version", &v) == 0 &&
		      v == 5,
	      "store-v5.db is at version 5 (%d)", v);
}

static void test_upgrade_from_version_5(void)
{
	check_upgrade(fixture_v5, tmp_dir, 5);
}

static void test_version_5_reopened(void)
{
	check_reopened(tmp_dir, 5);
}

static void test_version_2_violations_with_raw_paths_reopened_when_they_recur(void)
{
	check_omega(fixture_v2, tmp_dir);
}

static void test_broken_rows_stop_the_upgrade(void)
{
	check_refused(fixture_v0, tmp_dir, "a boot state of another size",
		      "UPDATE boot_state SET state = substr(state, 1, 240) WHERE agent = 'gamma'");
	check_refused(fixture_v0, tmp_dir, "a boot state of another layout",
		      "UPDATE boot_state SET layout = 2 WHERE agent = 'gamma'");
	check_refused(fixture_v0, tmp_dir, "a big-endian header",
		      "UPDATE boot_state SET state = x'00000001000000f0' || substr(state, 9)"
		      " WHERE agent = 'alpha'");
	check_refused(fixture_v0, tmp_dir, "a blob that disagrees with its columns",
		      "UPDATE boot_state SET next_entry = 4 WHERE agent = 'alpha'");
}

int main(void)
{
	const char *data = getenv("STORE_TEST_DATA");
	char cmd[300];

	snprintf(fixture_v0, sizeof(fixture_v0), "%s/store-v0.db", data ? data : "tests/data");
	snprintf(fixture_v2, sizeof(fixture_v2), "%s/store-v2.db", data ? data : "tests/data");
	snprintf(fixture_v5, sizeof(fixture_v5), "%s/store-v5.db", data ? data : "tests/data");
	if (access(fixture_v0, R_OK) || access(fixture_v2, R_OK) || access(fixture_v5, R_OK)) {
		fprintf(stderr, "cannot read %s, %s or %s (run from the top of the tree)\n",
			fixture_v0, fixture_v2, fixture_v5);
		return 2;
	}
	if (!mkdtemp(tmp_dir))
		return 2;
	CASE(test_every_step_in_every_dialect);
	CASE(test_postgresql_types);
	/* In order: each reopens the copy the upgrade before it wrote. */
	CASE(test_the_fixtures);
	CASE(test_upgrade_from_version_0);
	CASE(test_version_0_reopened);
	CASE(test_upgrade_from_version_2);
	CASE(test_version_2_reopened);
	CASE(test_the_fixture_of_version_5);
	CASE(test_upgrade_from_version_5);
	CASE(test_version_5_reopened);
	CASE(test_a_new_store);
	CASE(test_version_2_violations_with_raw_paths_reopened_when_they_recur);
	CASE(test_broken_rows_stop_the_upgrade);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", tmp_dir);
	return check_finish();
}
