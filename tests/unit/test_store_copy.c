/*
 * store_copy() (attestctl store copy): a store moved to another store holds everything the
 * first did, read back through the store API; a target that holds anything is refused and left
 * as it was; the copy goes on where the first left off (new ids after the copied ones, spent
 * challenges stay spent). On SQLite: SQLite to SQLite. With ATTEST_TEST_PG
 * (tests/lib/teststore.h): SQLite to PostgreSQL and back to SQLite, each compared with the
 * first.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/sqlfile.h"
#include "tests/lib/storeagent.h"
#include "tests/lib/teststore.h"
#include "tests/unit/check.h"
#include "verifier/store/boot_state.h"
#include "verifier/store/store.h"
#include "verifier/store/store_sql.h"

#define HOOK "http://127.0.0.1:1/hook"

/* What a store says through its API, as text: two stores that say the same are equal. */
struct dump {
	char *text;
	size_t len;
};

static void say(struct dump *d, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	d->text = realloc(d->text, d->len + (size_t)n + 2);
	if (!d->text)
		abort();
	memcpy(d->text + d->len, line, (size_t)n);
	d->len += (size_t)n;
	d->text[d->len++] = '\n';
	d->text[d->len] = '\0';
}

static int dump_agent(void *arg, const struct store_agent *a)
{
	say(arg, "agent %s state %d policy '%s' boot %llu next %llu verdict_at %lld trusted %d"
		 " open %llu retired %lld reset %lld interval %u judged %d %s %lld %lld"
		 " versions %lld %lld reasons %s",
	    a->id, (int)a->state, a->policy, (unsigned long long)a->boot_number,
	    (unsigned long long)a->next_entry, (long long)a->last_verdict_at, a->last_trusted,
	    (unsigned long long)a->open_violations, (long long)a->retired_at,
	    (long long)a->reset_at, a->interval, a->judged.known, a->judged.policy,
	    (long long)a->judged.policy_version, (long long)a->judged.amendment_version,
	    (long long)a->amendment_version, (long long)a->policy_version,
	    a->last_reasons_json ? a->last_reasons_json : "");
	return 0;
}

static int dump_verdict(void *arg, const struct store_verdict *v)
{
	say(arg, "  verdict %lld boot %llu time %lld trusted %d next %llu reasons %s judged %d %s"
		 " %lld %lld",
	    (long long)v->id, (unsigned long long)v->boot_number, (long long)v->time, v->trusted,
	    (unsigned long long)v->next_offset, v->reasons_json, v->judged.known, v->judged.policy,
	    (long long)v->judged.policy_version, (long long)v->judged.amendment_version);
	return 0;
}

static int dump_violation(void *arg, const struct store_violation *v)
{
	char hex[2 * 64 + 1] = "";

	for (size_t i = 0; i < v->path_len && i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)v->path[i]);
	say(arg, "violation %lld %s boot %llu entry %llu path %s (%zu) %s %s %s seen %lld-%lld"
		 " count %llu state %d recurs %lld decided %lld '%s'",
	    (long long)v->id, v->agent, (unsigned long long)v->boot_number,
	    (unsigned long long)v->entry, hex, v->path_len, v->digest, v->template_name,
	    v->reason, (long long)v->first_seen, (long long)v->last_seen,
	    (unsigned long long)v->count, (int)v->state, (long long)v->recurs,
	    (long long)v->decided_at, v->decision);
	return 0;
}

static int dump_event(void *arg, const struct store_agent_event *e)
{
	say(arg, "  history %lld %lld %s %s %s", (long long)e->id, (long long)e->time, e->event,
	    e->actor, e->detail);
	return 0;
}

/* A policy's versions; their text is read after the list (no store call from a callback). */
struct policy_dump {
	struct dump *d;
	int64_t versions[16];
	size_t n;
};

static int dump_policy_version(void *arg, const struct store_policy_version *v)
{
	struct policy_dump *p = arg;

	say(p->d, "policy v%lld %s %lld %llu", (long long)v->version, v->actor, (long long)v->time,
	    (unsigned long long)v->bytes);
	if (p->n < 16)
		p->versions[p->n++] = v->version;
	return 0;
}

static void dump_policy(struct store *st, struct dump *d, const char *name)
{
	struct policy_dump p = { .d = d };

	say(d, "policy %s:", name);
	store_policy_versions(st, name, dump_policy_version, &p);
	for (size_t i = 0; i < p.n; i++) {
		char *json = NULL;

		store_policy_get_version(st, name, p.versions[i], &json);
		say(d, "  v%lld %s", (long long)p.versions[i], json ? json : "(none)");
		free(json);
	}
}

static int dump_outbox(void *arg, const struct store_outbox_row *r)
{
	say(arg, "outbox %lld %s %s %s %s %lld %u %s", (long long)r->id, r->event_id, r->target,
	    r->type, r->agent, (long long)r->created_at, r->attempts, r->body);
	return 0;
}

static const char *const agents[] = { "web-01", "db-01", "old-01" };
static const char *const policies[] = { "default", "servers" };

/* Everything readable of the fleet built by fill(). Claims the outbox (a lease of 0 s). */
static struct dump dump_store(struct store *st)
{
	struct dump d = { 0 };
	struct store_counts c;
	struct store_boot_log bl;
	char amendment[STORE_AMENDMENT_NAME_MAX + 1];
	uint64_t pending = 0;

	store_agents_list(st, dump_agent, &d);
	for (size_t i = 0; i < sizeof(agents) / sizeof(agents[0]); i++) {
		struct boot_state bs;
		uint64_t ver = 0;

		say(&d, "agent %s:", agents[i]);
		store_verdicts_list(st, agents[i], 100, dump_verdict, &d);
		store_agent_history(st, agents[i], 100, dump_event, &d);
		if (store_boot_get(st, agents[i], &bs, &ver) == 0)
			say(&d, "  boot state v%llu boot %llu next %llu", (unsigned long long)ver,
			    (unsigned long long)bs.boot_number, (unsigned long long)bs.next_entry);
		if (store_boot_log_get(st, agents[i], &bl) == 0) {
			say(&d, "  boot log %zu bytes '%s' '%s' judged %llu at %lld", bl.log_len,
			    bl.cmdline ? bl.cmdline : "(null)", bl.summary ? bl.summary : "(null)",
			    (unsigned long long)bl.judged_boot, (long long)bl.received_at);
			store_boot_log_release(&bl);
		}
		store_amendment_name(agents[i], amendment);
		dump_policy(st, &d, amendment);
	}
	store_violations_list(st, -1, NULL, 100, dump_violation, &d);
	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
		dump_policy(st, &d, policies[i]);
	store_outbox_pending(st, NULL, &pending);
	say(&d, "outbox pending %llu", (unsigned long long)pending);
	store_outbox_claim(st, HOOK, 1 << 30, 0, 100, dump_outbox, &d);
	if (store_counts(st, &c) == 0)
		say(&d, "counts %llu %llu %llu %llu %llu %llu", (unsigned long long)c.agents_pending,
		    (unsigned long long)c.agents_active, (unsigned long long)c.violations_open,
		    (unsigned long long)c.verdicts_trusted, (unsigned long long)c.verdicts_untrusted,
		    (unsigned long long)c.agents_retired);
	return d;
}

static const uint8_t nonce[16] = "copy-test-nonce";

/* A round of id over its stored state, with a violation of path (raw bytes) if any. */
static int round_of(struct store *st, const char *id, bool trusted, const char *path,
		    size_t path_len, bool with_nonce, bool with_log, int64_t now, int64_t *vid)
{
	struct store_round_violation v = { .entry = 3, .reason = "not_in_allowlist",
					   .path = path, .path_len = path_len,
					   .digest = "sha256:ab", .template_name = "ima-ng" };
	struct store_boot_log bl = { .log = (uint8_t *)"\x01\x00log", .log_len = 5,
				     .cmdline = "root=/dev/vda", .summary = "{\"ok\":true}",
				     .judged_boot = 1, .received_at = now };
	struct judged_versions judged = { .known = true, .policy = "default",
					  .policy_version = 2, .amendment_version = 1 };
	struct boot_state bs;
	struct store_round r;
	uint64_t ver = 0;

	if (store_boot_get(st, id, &bs, &ver))
		return -EIO;
	bs.started = true;
	bs.boot_number = bs.boot_number ? bs.boot_number : 1;
	bs.next_entry += 4;
	memset(bl.sha256, 0x5a, sizeof(bl.sha256));
	memset(&r, 0, sizeof(r));
	r.agent = id;
	r.prev_version = ver;
	r.next = &bs;
	r.trusted = trusted;
	r.reasons_json = trusted ? "[]" : "[{\"code\":\"not_in_allowlist\"}]";
	r.next_offset = bs.next_entry;
	r.judged = &judged;
	r.violations = path ? &v : NULL;
	r.nviolations = path ? 1 : 0;
	r.interval = 30;
	r.boot_log = with_log ? &bl : NULL;
	r.now = now;
	if (with_nonce) {
		r.nonce = nonce;
		r.nonce_len = sizeof(nonce);
		r.nonce_expires = 1 << 30;
	}
	return store_round_commit(st, &r, vid);
}

static int first_violation(void *arg, const struct store_violation *v)
{
	if (!*(int64_t *)arg)
		*(int64_t *)arg = v->id;
	return 0;
}

/* A fleet with something in every table. */
static void fill(struct store *st)
{
	static const char raw_path[] = "/usr/bin/\xff\x01odd";
	const char *hooks[] = { HOOK };
	int64_t vid = 0, version = 0, first = 0;
	char amendment[STORE_AMENDMENT_NAME_MAX + 1];

	CHECK(store_set_webhooks(st, hooks, 1) == 0, "webhooks on");
	for (size_t i = 0; i < sizeof(agents) / sizeof(agents[0]); i++)
		CHECK(storeagent_active(st, agents[i], 1000 + (int64_t)i) == 0, "%s enrolled",
		      agents[i]);
	CHECK(store_policy_put(st, "default", "{\"v\":1}", "alice", 1100, &version) == 0 &&
		      store_policy_put(st, "default", "{\"v\":2}", "bob", 1101, &version) == 0 &&
		      store_policy_put(st, "servers", "{\"s\":1}", "alice", 1102, &version) == 0,
	      "policies with versions");
	CHECK(store_agent_set_policy(st, "db-01", "servers") == 0, "a policy assigned");
	store_amendment_name("web-01", amendment);
	CHECK(store_policy_put(st, amendment, "{\"files\":[]}", "carol", 1103, &version) == 0,
	      "an amendment");
	CHECK(round_of(st, "web-01", true, NULL, 0, true, true, 1200, &vid) == 0, "a trusted round");
	CHECK(round_of(st, "web-01", false, raw_path, sizeof(raw_path) - 1, false, false, 1300,
		       &vid) == 0,
	      "an untrusted round with a raw path");
	CHECK(round_of(st, "db-01", false, "/etc/x", 6, false, false, 1301, &vid) == 0,
	      "another agent's violation");
	store_violations_list(st, -1, "db-01", 10, first_violation, &first);
	CHECK(first && store_violation_decide(st, first, VIOLATION_APPROVED, 1400, "known") == 0,
	      "a violation approved");
	CHECK(round_of(st, "db-01", false, "/etc/x", 6, false, false, 1500, &vid) == 0,
	      "it recurs after the decision");
	CHECK(store_agent_retire(st, "old-01", 1600, "alice", false) == 0, "an agent retired");
}

static bool same_dump(const struct dump *a, const struct dump *b, const char *what)
{
	if (a->len == b->len && a->text && !memcmp(a->text, b->text, a->len))
		return true;
	fprintf(stderr, "%s: the dumps differ\n--- first\n%s--- second\n%s", what,
		a->text ? a->text : "", b->text ? b->text : "");
	return false;
}

static struct dump dump_uri(const char *uri)
{
	struct store *st = NULL;
	struct dump d = { 0 };

	if (store_open(uri, &st) == 0) {
		d = dump_store(st);
		store_close(st);
	}
	return d;
}

/* A copy goes on where the first left off: fresh ids, spent challenges still spent. */
static void check_goes_on(const char *uri, int64_t copied_max_verdict)
{
	struct store *st = NULL;
	int64_t vid = 0;

	CHECK(store_open(uri, &st) == 0, "the copy opens");
	if (!st)
		return;
	CHECK(round_of(st, "web-01", true, NULL, 0, true, false, 1700, &vid) == -EALREADY,
	      "a challenge spent before the copy is spent in it");
	CHECK(round_of(st, "web-01", true, NULL, 0, false, false, 1700, &vid) == 0 &&
		      vid > copied_max_verdict,
	      "a new verdict's id follows the copied ones (%lld > %lld)", (long long)vid,
	      (long long)copied_max_verdict);
	store_close(st);
}

static int max_id(void *arg, const struct store_verdict *v)
{
	if (v->id > *(int64_t *)arg)
		*(int64_t *)arg = v->id;
	return 0;
}

/* Every table and column of a SQLite store is one the copy knows: a new one needs a line there. */
/* The first store's SQLite file, written by main() before the case reads it; the work dir. */
static char src_db_path[320], work_dir[64];

static int count_row(void *arg)
{
	(*(unsigned *)arg)++;
	return 0;
}

static int count_label(void *arg, const char *key, const char *value)
{
	(void)key;
	(void)value;
	return count_row(arg);
}

static int count_version(void *arg, const struct store_policy_version *v)
{
	(void)v;
	return count_row(arg);
}

static int count_verdict(void *arg, const struct store_verdict *v)
{
	(void)v;
	return count_row(arg);
}

#define PAGES_AGENTS 36
#define PAGES_LABELS 30 /* per agent: 1,080 rows keyed by (agent, key), a page ending in one */
#define PAGES_VERSIONS 20 /* a large table's rows keyed by (name, version) */

/* What a store holds of test_pages()'s: labels, policy versions, boot logs, verdicts. */
static void pages_count(const char *uri, unsigned n[4])
{
	struct store_boot_log bl;
	struct store *st = NULL;
	char id[16];

	memset(n, 0, 4 * sizeof(n[0]));
	if (store_open(uri, &st))
		return;
	for (int a = 0; a < PAGES_AGENTS; a++) {
		snprintf(id, sizeof(id), "pg-%02d", a);
		store_agent_labels(st, id, count_label, &n[0]);
		if (store_boot_log_get(st, id, &bl) == 0) {
			n[2]++;
			store_boot_log_release(&bl);
		}
		store_verdicts_list(st, id, 1000, count_verdict, &n[3]);
	}
	store_policy_versions(st, "many", count_version, &n[1]);
	store_close(st);
}

/*
 * Tables longer than a page of the copy (1,024 rows; 8 of a table whose rows may be large),
 * keyed by one column and by two, the pages crossing from one agent to the next: every row
 * arrives, once.
 */
static void test_pages(void)
{
	char src[300], dst[300], value[16], id[16];
	struct store_label l[PAGES_LABELS];
	char keys[PAGES_LABELS][16];
	struct store *st = NULL;
	unsigned want[4] = { PAGES_AGENTS * PAGES_LABELS, PAGES_VERSIONS, PAGES_AGENTS,
			     PAGES_AGENTS },
		 got[4];
	int64_t version = 0, vid = 0;
	int fails = 0;

	snprintf(src, sizeof(src), "sqlite:%s/pages.db", work_dir);
	CHECK(store_open(src, &st) == 0, "a store for pages");
	if (!st)
		return;
	for (int i = 0; i < PAGES_LABELS; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%02d", i);
		l[i] = (struct store_label){ .key = keys[i], .value = "v" };
	}
	for (int a = 0; a < PAGES_AGENTS; a++) {
		snprintf(id, sizeof(id), "pg-%02d", a);
		fails += storeagent_active(st, id, 1000) != 0;
		fails += store_agent_labels_change(st, id, l, PAGES_LABELS, NULL, 0, "op",
						   1001) != 0;
		fails += round_of(st, id, true, NULL, 0, false, true, 1002, &vid) != 0;
	}
	for (int i = 0; i < PAGES_VERSIONS; i++) {
		snprintf(value, sizeof(value), "{\"v\":%d}", i);
		fails += store_policy_put(st, "many", value, "op", 1003, &version) != 0;
	}
	store_close(st);
	CHECK(fails == 0, "labels, policy versions, boot logs written (%d failed)", fails);
	CHECK(teststore_uri(work_dir, "pages-copy", dst, sizeof(dst)) == 0 &&
		      store_copy(src, dst) == 0,
	      "copied to the %s store", teststore_backend());
	pages_count(dst, got);
	CHECK(!memcmp(got, want, sizeof(want)),
	      "every row arrived: labels %u of %u, versions %u of %u, boot logs %u of %u,"
	      " verdicts %u of %u", got[0], want[0], got[1], want[1], got[2], want[2], got[3],
	      want[3]);
}

static void test_tables(void)
{
	const char *path = src_db_path;
	char sql[512];
	size_t n = 0, known = 0;
	unsigned ncols;
	int v = -1;

	while (store_sql_copy_table(n, &ncols))
		n++;
	for (size_t i = 0; i < n; i++) {
		const char *name = store_sql_copy_table(i, &ncols);

		snprintf(sql, sizeof(sql), "SELECT count(*) FROM pragma_table_info('%s')", name);
		if (sql_int(path, sql, &v) == 0 && v > 0 && (unsigned)v == ncols)
			known++;
		else
			fprintf(stderr, "table %s: %d columns, the copy names %u\n", name, v, ncols);
	}
	CHECK(known == n, "every table the copy names exists with the columns it names (%zu of %zu)",
	      known, n);
	CHECK(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
			    " AND name NOT LIKE 'sqlite_%'", &v) == 0 && (size_t)v == n,
	      "the copy names every table of the schema (%d tables, %zu named)", v, n);
}

/* A new round of agent "a" in the store at uri: its verdict's id in *vid. */
static int next_verdict(const char *uri, int64_t *vid)
{
	struct store *st = NULL;
	int ret = store_open(uri, &st);

	*vid = 0;
	if (!ret)
		ret = round_of(st, "a", true, NULL, 0, false, false, 5000, vid);
	store_close(st);
	return ret;
}

/*
 * No id is given twice: the verdict of a purged agent was the newest, so the largest id the
 * table gave is past its rows; a copy (to the tested backend) and a backup of that copy (a
 * SQLite file) go on after it, not after the rows. The copy and a PostgreSQL backup gave the
 * purged verdict's id again before the copy carried the tables' identities.
 */
static void test_ids_not_given_twice(void)
{
	char src[300], dst[300], path[300], bak[320];
	struct store *st = NULL;
	int64_t vid = 0, purged = 0;
	uint64_t size = 0;
	int fd = -1;

	snprintf(src, sizeof(src), "sqlite:%s/ids.db", work_dir);
	CHECK(store_open(src, &st) == 0, "a store");
	if (!st)
		return;
	CHECK(storeagent_active(st, "a", 4000) == 0 && storeagent_active(st, "b", 4000) == 0 &&
		      round_of(st, "a", true, NULL, 0, false, false, 4001, &vid) == 0 &&
		      round_of(st, "b", true, NULL, 0, false, false, 4002, &purged) == 0 &&
		      purged > vid && store_agent_retire(st, "b", 4003, "op", true) == 0,
	      "the newest verdict (%lld) purged with its agent", (long long)purged);
	store_close(st);
	CHECK(teststore_uri(work_dir, "ids-copy", dst, sizeof(dst)) == 0 &&
		      store_copy(src, dst) == 0,
	      "copied to the %s store", teststore_backend());
	snprintf(path, sizeof(path), "%s/ids-backup.db", work_dir);
	st = NULL;
	CHECK(store_open(dst, &st) == 0 && store_backup(st, &fd, &size) == 0 &&
		      teststore_save(fd, path) == 0,
	      "the copy backed up");
	if (fd >= 0)
		close(fd);
	store_close(st);
	CHECK(next_verdict(dst, &vid) == 0 && vid > purged,
	      "the copy's next verdict id (%lld) follows the purged one", (long long)vid);
	snprintf(bak, sizeof(bak), "sqlite:%s", path);
	CHECK(next_verdict(bak, &vid) == 0 && vid > purged,
	      "the backup's next verdict id (%lld) follows the purged one", (long long)vid);
}

int main(void)
{
	char dir[] = "/tmp/test_store_copy.XXXXXX", src[300], mid[300], back[300];
	char cmd[340];
	struct store *st = NULL;
	struct dump a = { 0 }, b = { 0 }, c = { 0 }, again = { 0 };
	int64_t maxv = 0;

	if (!mkdtemp(dir))
		return 1;
	snprintf(work_dir, sizeof(work_dir), "%s", dir);
	printf("# backend: %s\n", teststore_backend());
	/* The first store is SQLite's, as a verifier moving to PostgreSQL has. */
	snprintf(src, sizeof(src), "sqlite:%s/src.db", dir);
	snprintf(src_db_path, sizeof(src_db_path), "%s/src.db", dir);
	CHECK(store_open(src, &st) == 0, "the first store opens");
	if (st) {
		fill(st);
		store_close(st);
	}
	a = dump_uri(src);
	store_open(src, &st);
	for (size_t i = 0; st && i < sizeof(agents) / sizeof(agents[0]); i++)
		store_verdicts_list(st, agents[i], 100, max_id, &maxv);
	store_close(st);
	CASE(test_tables);
	CASE(test_pages);
	CASE(test_ids_not_given_twice);

	CHECK(teststore_uri(dir, "mid", mid, sizeof(mid)) == 0, "a second store");
	CHECK(store_copy(src, mid) == 0, "copied to the %s store", teststore_backend());
	b = dump_uri(mid);
	CHECK(a.text && strstr(a.text, "violation") && strstr(a.text, "history") &&
		      strstr(a.text, "outbox") && strstr(a.text, "boot log"),
	      "the first store has violations, history, events and a boot log");
	CHECK(same_dump(&a, &b, "first and copy"), "the copy holds what the first did");

	CHECK(store_copy(src, mid) == -ENOTEMPTY, "a target that holds anything is refused");
	again = dump_uri(mid);
	CHECK(same_dump(&b, &again, "copy before and after a refused copy"),
	      "and is left as it was");

	snprintf(back, sizeof(back), "sqlite:%s/back.db", dir);
	CHECK(store_copy(mid, back) == 0, "copied back to SQLite");
	c = dump_uri(back);
	CHECK(same_dump(&a, &c, "first and copy of the copy"), "the way back holds it all too");

	check_goes_on(mid, maxv);
	check_goes_on(back, maxv);

	CHECK(store_copy(src, "nosuch:/x") == -EINVAL, "a bad target URI is refused");
	free(a.text);
	free(b.text);
	free(c.text);
	free(again.text);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", dir);
	return check_finish();
}
