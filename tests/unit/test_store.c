/*
 * store.c and a backend (store_sqlite.c, or store_pg.c with ATTEST_TEST_PG: tests/lib/
 * teststore.h): enrollment decisions, rounds, violation dedup, policies, spent challenges;
 * store URIs; the boot state encoding (boot_state.c); schema versions a build refuses.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


#include "tests/lib/sqlfile.h"
#include "tests/lib/teststore.h"
#include "tests/lib/storeagent.h"
#include "tests/unit/check.h"
#include "verifier/store/boot_state.h"
#include "verifier/store/store.h"
#include "verifier/store/store_backend.h" /* STORE_NONCES_KEEP */
#include "verifier/store/store_schema.h"

static void make_agent(struct store_agent *a, const char *id, uint8_t ek, uint8_t ak, uint8_t cred)
{
	static uint8_t ekb[4][8], akb[4][8];

	memset(a, 0, sizeof(*a));
	snprintf(a->id, sizeof(a->id), "%s", id);
	memset(ekb[ek & 3], ek, 8);
	memset(akb[ak & 3], ak, 8);
	a->ek_pub = ekb[ek & 3];
	a->ek_pub_len = 8;
	a->ek_cert = (uint8_t *)"cert";
	a->ek_cert_len = 4;
	a->ak_pub = akb[ak & 3];
	a->ak_pub_len = 8;
	a->ak_name_len = 34;
	memset(a->ak_name, ak, 34);
	memset(a->cred_digest, cred, sizeof(a->cred_digest));
}

static int count_cb(void *arg, const struct store_agent *a)
{
	(void)a;
	(*(int *)arg)++;
	return 0;
}

struct viol_seen {
	int n;
	uint64_t count;
	int64_t id;
};

static int viol_cb(void *arg, const struct store_violation *v)
{
	struct viol_seen *s = arg;

	s->n++;
	s->count = v->count;
	s->id = v->id;
	return 0;
}

static int verdict_cb(void *arg, const struct store_verdict *v)
{
	int *n = arg;

	if (v->trusted && !strcmp(v->reasons_json, "[]"))
		(*n)++;
	return 0;
}

/* The versions of the newest verdict (the listing is newest first). */
static int newest_judged_cb(void *arg, const struct store_verdict *v)
{
	*(struct judged_versions *)arg = v->judged;
	return 1;
}

/* The temporary directory and the store every case works in, made in main(). */
static char tmp_dir[] = "/tmp/test_store.XXXXXX";
static struct store *shared_store;

static void test_agents(void)
{
	struct store *st = shared_store;
	struct store_agent a, got;
	enum store_enroll_result r;
	uint8_t digest[32];
	int64_t ver = 0;
	int n = 0;

	make_agent(&a, "web-01", 1, 1, 0xaa);
	CHECK(store_agent_enroll(st, &a, 100, &r) == 0 && r == STORE_ENROLL_NEW, "new enroll");
	CHECK(store_agent_get(st, "web-01", &got) == 0, "get");
	CHECK(got.state == AGENT_PENDING && got.ek_pub_len == 8 && got.ek_pub[0] == 1 &&
		      got.created_at == 100 && got.last_trusted == -1,
	      "stored fields");
	store_agent_release(&got);
	store_agent_release(&got); /* idempotent */
	CHECK(store_agent_get(st, "nope", &got) == -ENOENT, "unknown agent");

	/* Pending, same EK, new AK and credential: refreshed; the old credential is dead. */
	make_agent(&a, "web-01", 1, 2, 0xbb);
	CHECK(store_agent_enroll(st, &a, 101, &r) == 0 && r == STORE_ENROLL_REFRESHED, "refresh");
	memset(digest, 0xaa, sizeof(digest));
	CHECK(store_agent_activate(st, "web-01", digest, 102) == -ESTALE, "old credential");
	/* Pending, another EK: refused. */
	make_agent(&a, "web-01", 3, 2, 0xcc);
	CHECK(store_agent_enroll(st, &a, 101, &r) == 0 && r == STORE_ENROLL_CONFLICT,
	      "other EK while pending");
	memset(digest, 0xbb, sizeof(digest));
	CHECK(store_agent_activate(st, "web-01", digest, 103) == 0, "activate");
	CHECK(store_agent_activate(st, "web-01", digest, 104) == -ESTALE, "activate twice");
	CHECK(store_agent_activate(st, "ghost", digest, 104) == -ESTALE, "activate unknown");
	CHECK(store_agent_get(st, "web-01", &got) == 0 && got.state == AGENT_ACTIVE &&
		      got.activated_at == 103,
	      "active");
	store_agent_release(&got);

	make_agent(&a, "web-01", 1, 2, 0xdd);
	CHECK(store_agent_enroll(st, &a, 105, &r) == 0 && r == STORE_ENROLL_ALREADY, "already");
	make_agent(&a, "web-01", 1, 3, 0xdd);
	CHECK(store_agent_enroll(st, &a, 105, &r) == 0 && r == STORE_ENROLL_CONFLICT,
	      "other AK when active");
	make_agent(&a, "web-01", 3, 2, 0xdd);
	CHECK(store_agent_enroll(st, &a, 105, &r) == 0 && r == STORE_ENROLL_CONFLICT,
	      "other EK when active");
	CHECK(store_agent_get(st, "web-01", &got) == 0 && got.state == AGENT_ACTIVE &&
		      got.cred_digest[0] == 0xbb && got.ak_pub[0] == 2,
	      "conflicts changed nothing");
	store_agent_release(&got);

	make_agent(&a, "db-01", 2, 2, 0x11);
	CHECK(store_agent_enroll(st, &a, 106, &r) == 0 && r == STORE_ENROLL_NEW, "second agent");
	CHECK(store_agents_list(st, count_cb, &n) == 0 && n == 2, "list two agents");
	CHECK(store_agent_set_policy(st, "db-01", "strict") == -ENODATA &&
		      store_agent_get(st, "db-01", &got) == 0 && !got.policy[0],
	      "a policy that does not exist is not assigned");
	store_agent_release(&got);
	CHECK(store_policy_put(st, "strict", "{\"t\":1}", "test", 4, &ver) == 0 &&
		      store_agent_set_policy(st, "db-01", "strict") == 0,
	      "set policy");
	CHECK(store_agent_set_policy(st, "ghost", "strict") == -ENOENT, "policy unknown agent");
	CHECK(store_agent_set_policy(st, "db-01", "") == 0 &&
		      store_agent_set_policy(st, "db-01", "strict") == 0,
	      "the default needs no stored policy");
}

/* The fleet list's last reasons of each agent (store_agents_list() fills them). */
struct last_reasons {
	char web[128], db[128];
};

static int last_reasons_cb(void *arg, const struct store_agent *a)
{
	struct last_reasons *l = arg;
	char *out = !strcmp(a->id, "web-01") ? l->web : !strcmp(a->id, "db-01") ? l->db : NULL;

	if (out)
		snprintf(out, sizeof(l->web), "%s", a->last_reasons_json ? a->last_reasons_json : "NULL");
	return 0;
}

static void test_rounds(void)
{
	struct store *st = shared_store;
	struct last_reasons lr;
	struct boot_state bs, got;
	struct store_round_violation v[2];
	struct store_round r;
	struct viol_seen seen = { 0 };
	struct store_counts counts;
	int64_t id1 = 0, id2 = 0;
	int n = 0;

	uint64_t ver = 99;

	CHECK(store_boot_get(st, "web-01", &got, &ver) == 0 && !got.started && ver == 0,
	      "no boot state, version 0");
	memset(&bs, 0, sizeof(bs));
	bs.started = true;
	bs.boot_number = 1;
	bs.reset_count = 5;
	bs.next_entry = 42;
	bs.replay.entries = 42;
	memset(bs.replay.sha256, 0x5a, sizeof(bs.replay.sha256));
	memset(v, 0, sizeof(v));
	v[0].path = "/usr/bin/evil";
	v[0].digest = "sha256:abcd";
	v[0].reason = "not_in_allowlist";
	v[0].template_name = "ima-ng";
	v[1] = v[0];
	v[1].entry = 9;
	memset(&r, 0, sizeof(r));
	r.agent = "web-01";
	r.next = &bs;
	r.trusted = false;
	r.reasons_json = "[{\"code\":\"not_in_allowlist\"}]";
	r.next_offset = 42;
	r.violations = v;
	r.nviolations = 2;
	r.now = 2000;
	CHECK(store_round_commit(st, &r, &id1) == 0 && id1 > 0, "round 1");
	CHECK(store_boot_get(st, "web-01", &got, &ver) == 0 && memcmp(&got, &bs, sizeof(bs)) == 0,
	      "boot state round trip");
	memset(&lr, 0, sizeof(lr));
	CHECK(store_agents_list(st, last_reasons_cb, &lr) == 0 &&
		      !strcmp(lr.web, "[{\"code\":\"not_in_allowlist\"}]") && !strcmp(lr.db, "[]"),
	      "the fleet list carries each agent's last reasons (web-01 %s, db-01 %s)", lr.web, lr.db);
	CHECK(ver == 1, "the first state is version 1 (%llu)", (unsigned long long)ver);
	r.prev_version = ver;
	r.trusted = true;
	r.reasons_json = "[]";
	r.nviolations = 1;
	r.now = 2001;
	{
		struct judged_versions j = {.known = true, .policy_version = 7, .amendment_version = 3};

		snprintf(j.policy, sizeof(j.policy), "measured");
		r.judged = &j;
		CHECK(store_round_commit(st, &r, &id2) == 0 && id2 > id1, "round 2");
		r.judged = NULL;
	}
	{
		struct judged_versions got_j = { 0 };
		struct store_agent a;

		CHECK(store_verdicts_list(st, "web-01", 10, newest_judged_cb, &got_j) == 1 &&
			      got_j.known && !strcmp(got_j.policy, "measured") &&
			      got_j.policy_version == 7 && got_j.amendment_version == 3,
		      "a verdict names the policy and versions that judged it");
		CHECK(store_agent_get(st, "web-01", &a) == 0 && a.judged.known &&
			      !strcmp(a.judged.policy, "measured") && a.judged.policy_version == 7 &&
			      a.judged.amendment_version == 3,
		      "and the agent's summary names its last verdict's");
		store_agent_release(&a);
	}
	/* v[0] again (round 2, above): entry 0 of the same boot, sent again, is no new occurrence. */
	CHECK(store_boot_get(st, "web-01", &got, &ver) == 0 && ver == 2, "then version 2");
	memset(&lr, 0, sizeof(lr));
	CHECK(store_agents_list(st, last_reasons_cb, &lr) == 0 && !strcmp(lr.web, "[]"),
	      "and the newest verdict's reasons after the next round (%s)", lr.web);
	CHECK(store_violations_list(st, VIOLATION_OPEN, "web-01", 100, viol_cb, &seen) == 0 &&
		      seen.n == 1 && seen.count == 2,
	      "violation deduplicated (n=%d count=%llu)", seen.n, (unsigned long long)seen.count);
	CHECK(store_verdicts_list(st, "web-01", 10, verdict_cb, &n) == 0 && n == 1,
	      "verdict list");
	CHECK(store_counts(st, &counts) == 0 && counts.violations_open == 1 &&
		      counts.verdicts_trusted == 1 && counts.verdicts_untrusted == 1 &&
		      counts.agents_active == 1 && counts.agents_pending == 1,
	      "counts");
	CHECK(store_violation_decide(st, seen.id, VIOLATION_APPROVED, 2002, "test") == 0, "approve");
	CHECK(store_violation_decide(st, 12345, VIOLATION_APPROVED, 2002, "test") == -ENOENT,
	      "approve unknown");
	seen.n = 0;
	CHECK(store_violations_list(st, VIOLATION_OPEN, NULL, 100, viol_cb, &seen) == 0 &&
		      seen.n == 0,
	      "no open violations left");
}

struct viol_rows {
	int n;
	struct {
		int64_t id, recurs, decided_at;
		uint64_t count, entry, boot;
		enum violation_state state;
		size_t path_len;
		uint8_t path[16];
		char decision[64];
	} row[8];
};

static int rows_cb(void *arg, const struct store_violation *v)
{
	struct viol_rows *s = arg;

	if (s->n < 8) {
		s->row[s->n].id = v->id;
		s->row[s->n].recurs = v->recurs;
		s->row[s->n].decided_at = v->decided_at;
		s->row[s->n].count = v->count;
		s->row[s->n].entry = v->entry;
		s->row[s->n].boot = v->boot_number;
		s->row[s->n].state = v->state;
		s->row[s->n].path_len = v->path_len;
		memcpy(s->row[s->n].path, v->path, v->path_len < 16 ? v->path_len : 16);
		snprintf(s->row[s->n].decision, sizeof(s->row[0].decision), "%s", v->decision);
	}
	s->n++;
	return 0;
}

/* One round of `agent` in boot `boot` (a fresh boot state) with the one violation v, at `now`. */
static int round_with(struct store *st, const char *agent, uint64_t boot,
		      const struct store_round_violation *v, int64_t now)
{
	struct boot_state bs;
	struct store_round r;
	uint64_t ver = 0;
	int64_t id;

	if (store_boot_get(st, agent, &bs, &ver))
		return -EIO;
	memset(&bs, 0, sizeof(bs));
	bs.started = true;
	bs.boot_number = boot;
	memset(&r, 0, sizeof(r));
	r.agent = agent;
	r.prev_version = ver;
	r.next = &bs;
	r.reasons_json = "[]";
	r.violations = v;
	r.nviolations = 1;
	r.now = now;
	return store_round_commit(st, &r, &id);
}

/* One round of agent "lc-01" in boot `boot` with one violation of PATH at entries first..last. */
static int lc_round(struct store *st, uint64_t boot, uint64_t first, uint64_t last, uint64_t count)
{
	static const char path[] = "/opt/t\xffol"; /* not UTF-8 */
	struct store_round_violation v = { .entry = first, .last_entry = last, .count = count,
					   .reason = "not_in_allowlist", .path = path,
					   .path_len = sizeof(path) - 1, .digest = "sha256:ab",
					   .template_name = "ima-ng" };

	return round_with(st, "lc-01", boot, &v, (int64_t)(3000 + 100 * boot + last));
}

/* The violations of `agent`, newest first: row[0] is the newest. */
static struct viol_rows rows_of(struct store *st, const char *agent)
{
	struct viol_rows rows;

	memset(&rows, 0, sizeof(rows));
	store_violations_list(st, -1, agent, 100, rows_cb, &rows);
	return rows;
}

static struct viol_rows lc_rows(struct store *st)
{
	return rows_of(st, "lc-01");
}

/*
 * A violation's life: raw path bytes kept; one open row counting new occurrences and not entries
 * sent again; a decision is final; a recurrence after it (later in the boot, or after a reboot)
 * opens a new row naming the decided one; open counts per boot and in all.
 */
static void test_violation_lifecycle(void)
{
	struct store *st = shared_store;
	struct viol_rows rows;
	uint64_t total = 0, in_boot = 0;
	int64_t first;

	CHECK(storeagent_active(st, "lc-01", 100) == 0, "an active agent");
	CHECK(lc_round(st, 1, 5, 5, 1) == 0, "a violation at entry 5");
	rows = lc_rows(st);
	first = rows.row[0].id;
	CHECK(rows.n == 1 && rows.row[0].path_len == 9 && !memcmp(rows.row[0].path, "/opt/t\xffol", 9),
	      "stored with its raw bytes (0xff kept)");
	CHECK(lc_round(st, 1, 5, 5, 1) == 0 && lc_rows(st).row[0].count == 1,
	      "the same entry sent again: no new occurrence");
	CHECK(lc_round(st, 1, 5, 9, 2) == 0 && (rows = lc_rows(st)).n == 1 &&
		      rows.row[0].count == 3 && rows.row[0].entry == 9,
	      "entries 5..9 with one new past 5: counted (count %llu)",
	      (unsigned long long)rows.row[0].count);
	CHECK(store_violations_open_count(st, "lc-01", 1, &total, &in_boot) == 0 && total == 1 &&
		      in_boot == 1,
	      "one open, of boot 1");
	CHECK(store_violation_decide(st, first, VIOLATION_DISMISSED, 4000, "dismissed") == 0,
	      "dismissed");
	CHECK(store_violation_decide(st, first, VIOLATION_APPROVED, 4001, "x") == -EALREADY,
	      "a decision is not replaced");
	CHECK(lc_round(st, 1, 7, 9, 2) == 0 && lc_rows(st).n == 1,
	      "entries up to the decided one's last, sent again: nothing reopens");
	CHECK(lc_round(st, 1, 12, 12, 1) == 0 && (rows = lc_rows(st)).n == 2 &&
		      rows.row[0].state == VIOLATION_OPEN && rows.row[0].recurs == first &&
		      rows.row[1].state == VIOLATION_DISMISSED && rows.row[1].decided_at == 4000 &&
		      !strcmp(rows.row[1].decision, "dismissed"),
	      "it runs again later in the boot: a new open row that recurs after the dismissed one");
	CHECK(store_violation_decide(st, rows.row[0].id, VIOLATION_APPROVED, 4002, "approved") == 0,
	      "the recurrence approved");
	CHECK(store_violations_open_count(st, "lc-01", 1, &total, &in_boot) == 0 && total == 0,
	      "nothing open");
	CHECK(lc_round(st, 2, 3, 3, 1) == 0 && (rows = lc_rows(st)).n == 3 &&
		      rows.row[0].state == VIOLATION_OPEN && rows.row[0].recurs == rows.row[1].id &&
		      rows.row[0].boot == 2,
	      "after a reboot, it runs again: open again");
	CHECK(store_violations_open_count(st, "lc-01", 3, &total, &in_boot) == 0 && total == 1 &&
		      in_boot == 0,
	      "open in all boots: 1; of boot 3: 0");
}

/* One round of agent "bf-01" in boot 1 whose boot judgement found `v` (as attest.c stores them). */
static int boot_finding_round(struct store *st, const struct store_round_violation *v, int64_t now)
{
	return round_with(st, "bf-01", 1, v, now);
}

static struct viol_rows bf_rows(struct store *st)
{
	return rows_of(st, "bf-01");
}

/*
 * A boot finding comes back, with the same event index in the same boot, when the boot is
 * judged again (the policy or the agent's amendment changed: boot_check.h). Approved, it was
 * approved into a section that no longer allows it (an amendment rolled back): a new open row,
 * or the agent would be trusted after one untrusted round. Dismissed, the decision stands for
 * this boot, as it does for an IMA entry sent again; open, it is not counted twice.
 */
static void test_boot_finding_judged_again(void)
{
	struct store *st = shared_store;
	struct store_agent a;
	enum store_enroll_result er;
	struct store_round_violation kernel = {
		.entry = 10, .last_entry = 10, .count = 1, .reason = "boot_not_in_policy",
		.path = "PCR 4: EFI application \"kernel\"", .digest = "sha256:834c",
		.template_name = "boot:kernel"};
	struct store_round_violation secure = {
		.entry = 4, .last_entry = 4, .count = 1, .reason = "secure_boot_mismatch",
		.path = "PCR 7: Secure Boot off", .digest = "sha256:115a",
		.template_name = "boot:secure_boot"};
	struct viol_rows rows = {0};
	uint8_t cred[32];

	make_agent(&a, "bf-01", 3, 3, 9);
	memset(cred, 9, sizeof(cred));
	CHECK(store_agent_enroll(st, &a, 100, &er) == 0 && store_agent_activate(st, "bf-01", cred, 101) == 0,
	      "agent bf-01");
	CHECK(boot_finding_round(st, &kernel, 200) == 0 && (rows = bf_rows(st)).n == 1 &&
		      rows.row[0].state == VIOLATION_OPEN,
	      "a boot finding: one open row");
	CHECK(boot_finding_round(st, &kernel, 201) == 0 && (rows = bf_rows(st)).n == 1 &&
		      rows.row[0].count == 1,
	      "judged again while open: the same row, not counted twice");
	CHECK(store_violation_decide(st, rows.row[0].id, VIOLATION_APPROVED, 202, "approved for bf-01") == 0,
	      "approved (into the agent's amendment)");
	CHECK(boot_finding_round(st, &kernel, 300) == 0 && (rows = bf_rows(st)).n == 2 &&
		      rows.row[0].state == VIOLATION_OPEN && rows.row[0].recurs == rows.row[1].id &&
		      rows.row[1].state == VIOLATION_APPROVED,
	      "the amendment rolled back, the boot judged again: a new open row naming the approved one (%d rows)",
	      rows.n);
	CHECK(boot_finding_round(st, &kernel, 301) == 0 && bf_rows(st).n == 2,
	      "and that one is not opened twice");

	CHECK(boot_finding_round(st, &secure, 400) == 0 && (rows = bf_rows(st)).n == 3, "Secure Boot off");
	CHECK(store_violation_decide(st, rows.row[0].id, VIOLATION_DISMISSED, 401, "dismissed") == 0,
	      "dismissed");
	CHECK(boot_finding_round(st, &secure, 402) == 0 && (rows = bf_rows(st)).n == 3 &&
		      rows.row[0].state == VIOLATION_DISMISSED,
	      "the boot judged again (another finding approved): the dismissal stands for this boot");
}

static int hist_cb(void *arg, const struct store_policy_version *v)
{
	struct { int n; int64_t v[4]; char actor[4][16]; } *h = arg;

	if (h->n < 4) {
		h->v[h->n] = v->version;
		snprintf(h->actor[h->n], sizeof(h->actor[0]), "%s", v->actor);
	}
	h->n++;
	return 0;
}

/* The firmware event log an agent sent: written with a round, kept until the next one. */
static void test_boot_logs(void)
{
	struct store *st = shared_store;
	static uint8_t log1[] = {1, 2, 3, 0, 5}, log2[] = {9, 9};
	struct store_boot_log put, got;
	struct boot_state bs, cur;
	struct store_round r;
	int64_t id = 0;

	CHECK(store_boot_log_get(st, "web-01", &got) == -ENOENT && !got.log, "no boot log yet");
	memset(&bs, 0, sizeof(bs));
	bs.started = true;
	bs.boot_number = 2;
	memset(&put, 0, sizeof(put));
	put.log = log1;
	put.log_len = sizeof(log1);
	memset(put.sha256, 0x11, 32);
	put.cmdline = (char *)"console=ttyS0 ima_policy=tcb";
	put.judged_boot = 2;
	memset(put.judged_key, 0x22, 32);
	put.summary = (char *)"{\"status\":\"replays\"}";
	put.received_at = 1234;
	memset(&r, 0, sizeof(r));
	r.agent = "web-01";
	r.next = &bs;
	r.reasons_json = "[]";
	r.trusted = true;
	r.boot_log = &put;
	r.now = 3000;
	/* Each round commits over the boot state version it read (the compare-and-swap). */
	CHECK(store_boot_get(st, "web-01", &cur, &r.prev_version) == 0 &&
		      store_round_commit(st, &r, &id) == 0,
	      "a round with a boot log");
	CHECK(store_boot_log_get(st, "web-01", &got) == 0, "read it back");
	CHECK(got.log_len == sizeof(log1) && !memcmp(got.log, log1, sizeof(log1)) &&
	      !memcmp(got.sha256, put.sha256, 32) && !strcmp(got.cmdline, put.cmdline) &&
	      got.judged_boot == 2 && !memcmp(got.judged_key, put.judged_key, 32) &&
	      !strcmp(got.summary, put.summary) && got.received_at == 1234,
	      "every field round-trips (the log with its NUL byte)");
	store_boot_log_release(&got);
	store_boot_log_release(&got);
	r.boot_log = NULL;
	CHECK(store_boot_get(st, "web-01", &cur, &r.prev_version) == 0 &&
		      store_round_commit(st, &r, &id) == 0 && store_boot_log_get(st, "web-01", &got) == 0 &&
	      got.log_len == sizeof(log1), "a round without one leaves it");
	store_boot_log_release(&got);
	put.log = log2;
	put.log_len = sizeof(log2);
	put.cmdline = NULL;
	put.summary = NULL;
	r.boot_log = &put;
	CHECK(store_boot_get(st, "web-01", &cur, &r.prev_version) == 0 &&
		      store_round_commit(st, &r, &id) == 0 && store_boot_log_get(st, "web-01", &got) == 0 &&
	      got.log_len == 2 && got.log[0] == 9 && !got.cmdline && !got.summary,
	      "a new log replaces it; no command line, no summary");
	store_boot_log_release(&got);
	CHECK(store_boot_log_get(st, "db-01", &got) == -ENOENT, "another agent has none");
}

struct sig_hist {
	int n;
	int64_t v[8];
	bool signed_[8];
	char signer[8][72];
};

static int sig_hist_cb(void *arg, const struct store_policy_version *v)
{
	struct sig_hist *h = arg;

	if (h->n < 8) {
		h->v[h->n] = v->version;
		h->signed_[h->n] = v->signed_;
		snprintf(h->signer[h->n], sizeof(h->signer[0]), "%s", v->signer);
	}
	h->n++;
	return 0;
}

/*
 * Signed versions: the signer and the envelope without its payload are kept and read back; the
 * same text signed is a new version (it records the signature), the same signed text again is
 * not; an unsigned version reads back "" for both.
 */
static void test_policy_signatures(void)
{
	struct store *st = shared_store;
	const struct store_policy_sig alice = {"aa11", "{\"payloadType\":\"t\",\"signatures\":[1]}"};
	const struct store_policy_sig bob = {"bb22", "{\"payloadType\":\"t\",\"signatures\":[2]}"};
	char *json = NULL, *signer = NULL, *signature = NULL;
	struct sig_hist h = {0};
	int64_t ver = 0;

	CHECK(store_policy_put(st, "signed", "{\"s\":1}", "test", 1, &ver) == 0 && ver == 1,
	      "v1 unsigned");
	CHECK(store_policy_put_signed(st, "signed", STORE_POLICY_ANY, "{\"s\":1}", &alice, "test",
				      2, &ver) == 0 && ver == 2, "the same text signed: v2");
	CHECK(store_policy_put_signed(st, "signed", STORE_POLICY_ANY, "{\"s\":1}", &alice, "test",
				      3, &ver) == 0 && ver == 2, "the same envelope again: still v2");
	CHECK(store_policy_put_signed(st, "signed", 1, "{\"s\":2}", &bob, "test", 4, &ver) == -ESTALE &&
		      ver == 2, "expected version 1, newest 2: stale, nothing written");
	CHECK(store_policy_put_signed(st, "signed", 2, "{\"s\":2}", &bob, "test", 4, &ver) == 0 &&
		      ver == 3, "v3 by bob");
	CHECK(store_policy_get_signed_version(st, "signed", 2, &json, &signer, &signature) == 0 &&
		      !strcmp(json, "{\"s\":1}") && !strcmp(signer, "aa11") &&
		      !strcmp(signature, alice.signature), "v2 reads back its text, signer, signature");
	free(json);
	free(signer);
	free(signature);
	CHECK(store_policy_get_signed_version(st, "signed", 1, &json, &signer, &signature) == 0 &&
		      !strcmp(signer, "") && !strcmp(signature, ""), "v1: unsigned");
	free(json);
	free(signer);
	free(signature);
	CHECK(store_policy_get_signed_version(st, "signed", 9, &json, &signer, &signature) == -ENOENT &&
		      !json && !signer && !signature, "no v9");
	CHECK(store_policy_versions(st, "signed", sig_hist_cb, &h) == 0 && h.n == 3 &&
		      h.v[0] == 3 && h.signed_[0] && !strcmp(h.signer[0], "bb22") &&
		      h.signed_[1] && !strcmp(h.signer[1], "aa11") && !h.signed_[2] && !h.signer[2][0],
	      "history names each version's signer");
	CHECK(store_policy_delete(st, "signed", "test", 5) == 0, "deleted (the cases after list policies)");
}

static void test_policies(void)
{
	struct store *st = shared_store;
	int64_t ver = 0;
	char *json = NULL;

	CHECK(store_policy_get(st, "default", &json, &ver) == -ENOENT, "no policy");
	CHECK(store_policy_put(st, "default", "{\"a\":1}", "test", 1, &ver) == 0 && ver == 1, "v1");
	CHECK(store_policy_put(st, "default", "{\"a\":1}", "test", 2, &ver) == 0 && ver == 1,
	      "same text keeps v1");
	CHECK(store_policy_put(st, "default", "{\"a\":2}", "test", 3, &ver) == 0 && ver == 2, "v2");
	CHECK(store_policy_get(st, "default", &json, &ver) == 0 && ver == 2 &&
		      !strcmp(json, "{\"a\":2}"),
	      "get newest");
	free(json);
	json = NULL;
	CHECK(store_policy_get_version(st, "default", 1, &json) == 0 && !strcmp(json, "{\"a\":1}"),
	      "get version 1");
	free(json);
	json = NULL;
	CHECK(store_policy_get_version(st, "default", 3, &json) == -ENOENT && !json,
	      "no version 3");
	{
		struct { int n; int64_t v[4]; char actor[4][16]; } h = { 0 };
		uint64_t agents = 99;

		CHECK(store_policy_versions(st, "default", hist_cb, &h) == 0 && h.n == 2 &&
			      h.v[0] == 2 && h.v[1] == 1 && !strcmp(h.actor[0], "test"),
		      "history: versions 2, 1 with their actor");
		h.n = 0;
		CHECK(store_policy_versions(st, "nothing", hist_cb, &h) == 0 && h.n == 0,
		      "history of an unknown policy: empty");
		CHECK(store_policy_agents(st, "strict", &agents) == 0 && agents == 1,
		      "one agent uses policy strict");
		CHECK(store_policy_agents(st, "", &agents) == 0 && agents == 2,
		      "two agents use the default, web-01 and lc-01 (%llu)",
		      (unsigned long long)agents);
	}
}

/* A round that fails inside its batch (a NOT NULL column) changes nothing and says so. */
static void test_failed_round(void)
{
	struct store *st = shared_store;
	struct store_round_violation v = { .entry = 1, .reason = "not_in_allowlist",
					   .path = NULL, .digest = "sha256:00",
					   .template_name = "ima-ng" };
	struct boot_state before, bs, got;
	struct store_round r;
	struct store_counts c0, c1;
	uint64_t ver = 0;
	int64_t id = 0;

	CHECK(store_boot_get(st, "web-01", &before, &ver) == 0 && before.started,
	      "boot state before");
	CHECK(store_counts(st, &c0) == 0, "counts before");
	bs = before;
	bs.next_entry = before.next_entry + 7;
	memset(&r, 0, sizeof(r));
	r.agent = "web-01";
	r.prev_version = ver;
	r.next = &bs;
	r.reasons_json = "[]";
	r.violations = &v;
	r.nviolations = 1;
	r.now = 3000;
	CHECK(store_round_commit(st, &r, &id) == -EIO && id == 0, "round with a NULL path fails");
	CHECK(store_boot_get(st, "web-01", &got, NULL) == 0 &&
		      got.next_entry == before.next_entry,
	      "its boot state was rolled back");
	CHECK(store_counts(st, &c1) == 0 &&
		      c1.verdicts_trusted + c1.verdicts_untrusted ==
			      c0.verdicts_trusted + c0.verdicts_untrusted,
	      "and no verdict was stored");
}

/*
 * Two rounds of one agent in flight, both judged from the same boot state: the one that
 * commits second is refused and stores nothing (issue 15: it used to overwrite the newer
 * state, sending the expected next entry back).
 */
static void test_round_cas(void)
{
	struct store *st = shared_store;
	struct boot_state start, fast, slow, got;
	struct store_round r;
	struct store_counts c0, c1;
	uint64_t ver = 0, ver2 = 0;
	int64_t id = 0;

	CHECK(store_boot_get(st, "web-01", &start, &ver) == 0 && start.started && ver > 0,
	      "the state both rounds start from (version %llu)", (unsigned long long)ver);
	fast = start;
	fast.next_entry = start.next_entry + 10;
	slow = start;
	slow.next_entry = start.next_entry + 4;
	memset(&r, 0, sizeof(r));
	r.agent = "web-01";
	r.prev_version = ver;
	r.next = &fast;
	r.trusted = true;
	r.reasons_json = "[]";
	r.now = 5000;
	CHECK(store_round_commit(st, &r, &id) == 0, "the faster round commits");
	CHECK(store_counts(st, &c0) == 0, "counts");
	r.next = &slow;
	id = 0;
	CHECK(store_round_commit(st, &r, &id) == -ESTALE && id == 0,
	      "the slower round, over the same version, is refused");
	CHECK(store_boot_get(st, "web-01", &got, &ver2) == 0 &&
		      got.next_entry == fast.next_entry && ver2 == ver + 1,
	      "the newer state stays (next entry %llu, version %llu)",
	      (unsigned long long)got.next_entry, (unsigned long long)ver2);
	CHECK(store_counts(st, &c1) == 0 &&
		      c1.verdicts_trusted + c1.verdicts_untrusted ==
			      c0.verdicts_trusted + c0.verdicts_untrusted,
	      "and no verdict of the refused round is stored");
	r.prev_version = 0;
	CHECK(store_round_commit(st, &r, &id) == -ESTALE, "version 0 over an existing state");
	r.agent = "web-new";
	CHECK(storeagent_active(st, "web-new", 100) == 0, "another active agent");
	r.prev_version = 7;
	CHECK(store_round_commit(st, &r, &id) == -ESTALE, "a version for a state that is not there");
	CHECK(store_boot_get(st, "web-new", &got, &ver2) == 0 && !got.started && ver2 == 0,
	      "nothing written for it");
	r.prev_version = ver2;
	CHECK(store_round_commit(st, &r, &id) == 0, "its first round over version 0");
}

/* store_round_context(): the facts of the calls it stands for, in one. */
/* "NAME:VERSION:AGENTS " per policy, appended to arg (256 bytes). */
static int policies_cb(void *arg, const struct store_policy_summary *p)
{
	char *out = arg;
	size_t n = strlen(out);

	snprintf(out + n, 256 - n, "%s:%lld:%llu ", p->name, (long long)p->version,
		 (unsigned long long)p->agents);
	return 0;
}

/*
 * The list of named policies, and deleting one no agent uses (after the other tests: it adds
 * policies they do not expect). A policy written again after its deletion goes on from the
 * version it had, so that no (name, version) ever names two texts.
 */
static void test_policies_list(void)
{
	struct store *st = shared_store;
	char seen[256] = "";
	char amendment[STORE_AMENDMENT_NAME_MAX + 1];
	char *json = NULL;
	int64_t v = 0;

	store_amendment_name("web-01", amendment);
	CHECK(store_policy_put(st, "spare", "{\"s\":1}", "test", 4, &v) == 0 &&
		      store_policy_put(st, "spare", "{\"s\":2}", "test", 4, &v) == 0 && v == 2 &&
		      store_policy_put(st, amendment, "{\"m\":1}", "test", 4, &v) == 0,
	      "policy spare at version 2, and an amendment");
	CHECK(store_policies_list(st, "default", policies_cb, seen) == 0 &&
		      !strcmp(seen, "default:2:2 spare:2:0 strict:1:1 "),
	      "the list: named policies only, newest versions, agents (%s)", seen);
	CHECK(store_policy_delete(st, "strict", "test", 5) == -EBUSY, "a policy in use is not deleted");
	CHECK(store_policy_delete(st, "nothing", "test", 5) == -ENOENT, "nor one that does not exist");
	CHECK(store_policy_delete(st, amendment, "test", 5) == -ENOENT, "nor an amendment");
	CHECK(store_policy_delete(st, "spare", "test", 5) == 0 &&
		      store_policy_version(st, "spare", &v) == -ENOENT &&
		      store_policy_get_version(st, "spare", 1, &json) == -ENOENT,
	      "an unused one is, with its versions");
	CHECK(store_policy_delete(st, "spare", "test", 5) == -ENOENT, "deleted once");
	CHECK(store_agent_set_policy(st, "db-01", "spare") == -ENODATA,
	      "a deleted policy is not assigned");
	seen[0] = '\0';
	CHECK(store_policies_list(st, "default", policies_cb, seen) == 0 &&
		      !strcmp(seen, "default:2:2 strict:1:1 ") &&
		      store_policy_version(st, amendment, &v) == 0,
	      "the rest stays (%s)", seen);
	CHECK(store_policy_put(st, "spare", "{\"s\":1}", "test", 6, &v) == 0 && v == 3 &&
		      store_policy_get_version(st, "spare", 3, &json) == 0 &&
		      !strcmp(json, "{\"s\":1}"),
	      "written again, spare goes on at version 3 (%lld)", (long long)v);
	free(json);
	CHECK(store_policy_get_version(st, "spare", 1, &json) == -ENOENT && !json,
	      "its old versions stay gone");
}

/* One side of the race below: an assignment or a deletion, started together. */
struct policy_race {
	struct store *st;
	pthread_barrier_t *go;
	bool assign;
	int ret;
};

static void *policy_race_thread(void *arg)
{
	struct policy_race *r = arg;

	pthread_barrier_wait(r->go);
	r->ret = r->assign ? store_agent_set_policy(r->st, "db-01", "race")
			   : store_policy_delete(r->st, "race", "test", 7);
	return NULL;
}

/*
 * An assignment to a policy and its deletion at the same moment: exactly one wins, and an
 * agent never ends up assigned a policy that is gone (on a server database the two run on
 * two connections; each is serialized with the other by the policy lock).
 */
#define POLICY_RACES 60
static void test_policy_delete_race(void)
{
	struct store *st = shared_store;
	pthread_barrier_t go;
	struct policy_race r[2];
	pthread_t t[2];
	struct store_agent a;
	int64_t v = 0;
	int both = 0, neither = 0, dangling = 0, errors = 0;

	pthread_barrier_init(&go, NULL, 2);
	for (int i = 0; i < POLICY_RACES; i++) {
		if (store_policy_put(st, "race", i % 2 ? "{\"r\":1}" : "{\"r\":2}", "test", 7, &v) ||
		    store_agent_set_policy(st, "db-01", "strict")) {
			errors++;
			break;
		}
		for (int k = 0; k < 2; k++) {
			r[k] = (struct policy_race){ .st = st, .go = &go, .assign = k == 0 };
			pthread_create(&t[k], NULL, policy_race_thread, &r[k]);
		}
		for (int k = 0; k < 2; k++)
			pthread_join(t[k], NULL);
		if ((r[0].ret != 0 && r[0].ret != -ENODATA) || (r[1].ret != 0 && r[1].ret != -EBUSY))
			errors++;
		both += r[0].ret == 0 && r[1].ret == 0;
		neither += r[0].ret != 0 && r[1].ret != 0;
		if (store_agent_get(st, "db-01", &a) == 0) {
			dangling += !strcmp(a.policy, "race") &&
				    store_policy_version(st, "race", &v) == -ENOENT;
			store_agent_release(&a);
		}
	}
	pthread_barrier_destroy(&go);
	CHECK(!errors && !both && !neither && !dangling,
	      "%d races: one side wins each (both won %d, neither %d, an agent assigned a deleted"
	      " policy %d, other answers %d)", POLICY_RACES, both, neither, dangling, errors);
	CHECK(store_agent_set_policy(st, "db-01", "strict") == 0 &&
		      (store_policy_delete(st, "race", "test", 8) == 0 ||
		       store_policy_version(st, "race", &v) == -ENOENT),
	      "db-01 back on strict, race gone");
}

static void test_round_context(void)
{
	struct store *st = shared_store;
	struct store_round_ctx c;
	struct store_boot_log bl;
	struct boot_state bs;
	uint64_t ver = 0, total = 0, in_boot = 0;
	int64_t pv = 0;

	CHECK(store_round_context(st, "nope", "default", &c) == -ENOENT, "unknown agent");
	CHECK(store_round_context(st, "web-01", "default", &c) == 0, "web-01");
	CHECK(store_boot_get(st, "web-01", &bs, &ver) == 0 && c.version == ver && ver > 0 &&
		      !memcmp(&c.boot, &bs, sizeof(bs)),
	      "its boot state and version (%llu)", (unsigned long long)c.version);
	CHECK(c.state == AGENT_ACTIVE && c.ak_name_len == 34 && c.ak_name[0] == 2 && !c.policy[0],
	      "its state, AK name and (default) policy");
	CHECK(store_violations_open_count(st, "web-01", bs.boot_number, &total, &in_boot) == 0 &&
		      c.open_violations == total && c.open_violations_in_boot == in_boot,
	      "its open violations (%llu, %llu in boot)", (unsigned long long)total,
	      (unsigned long long)in_boot);
	CHECK(store_boot_log_get(st, "web-01", &bl) == 0 && c.has_boot_log &&
		      !memcmp(c.boot_log_sha256, bl.sha256, 32),
	      "its boot log's digest");
	store_boot_log_release(&bl);
	CHECK(store_policy_version(st, "default", &pv) == 0 && c.policy_version == pv && pv == 2,
	      "the default policy's newest version (%lld)", (long long)c.policy_version);
	CHECK(c.amendment_version == 0, "no amendment");
	CHECK(store_policy_put(st, "agent/web-01", "{}", "test", 5, &pv) == 0 &&
		      store_round_context(st, "web-01", "default", &c) == 0 &&
		      c.amendment_version == 1,
	      "then an amendment, version 1");
	CHECK(store_round_context(st, "db-01", "default", &c) == 0 && c.state == AGENT_PENDING &&
		      !strcmp(c.policy, "strict") && c.policy_version == 1 && c.version == 0 &&
		      !c.boot.started && !c.has_boot_log,
	      "db-01: pending, policy strict (version 1), no boot state, no log");
	CHECK(store_round_context(st, "web-01", "other", &c) == 0 && c.policy_version == 0,
	      "the default policy's name is the caller's");
}

/*
 * A round's challenge is spent with it (store.h, struct store_round): once in the whole store,
 * whichever verifier committed it; a round refused for any reason spends nothing.
 */
static void test_spent_nonces(void)
{
	struct store *st = shared_store;
	static const uint8_t n1[32] = { 1, 2, 3 }, n2[32] = { 4, 5, 6 };
	struct boot_state bs, got;
	struct store_round r;
	int64_t id = 0;
	uint64_t ver = 0;
	int verdicts = 0;

	memset(&bs, 0, sizeof(bs));
	bs.started = true;
	bs.boot_number = 1;
	memset(&r, 0, sizeof(r));
	r.agent = "nonce-agent";
	r.next = &bs;
	r.trusted = true;
	r.reasons_json = "[]";
	r.now = 100000; /* after the other cases: the prune runs at most once a minute */
	r.nonce = n1;
	r.nonce_len = sizeof(n1);
	r.nonce_expires = 100060;
	bs.next_entry = 1;
	CHECK(storeagent_active(st, r.agent, 100) == 0, "an active agent");
	CHECK(store_round_commit(st, &r, &id) == 0 && id > 0, "a round spends its challenge");
	CHECK(store_boot_get(st, r.agent, &got, &ver) == 0 && ver == 1, "and is written");
	r.prev_version = ver;
	bs.next_entry = 2;
	CHECK(store_round_commit(st, &r, &id) == -EALREADY, "the same challenge again: refused");
	CHECK(store_boot_get(st, r.agent, &got, &ver) == 0 && ver == 1 && got.next_entry == 1,
	      "and nothing of that round written (version %llu)", (unsigned long long)ver);
	/* A round refused by the compare-and-swap does not spend its challenge. */
	r.nonce = n2;
	r.prev_version = 7;
	CHECK(store_round_commit(st, &r, &id) == -ESTALE, "a stale round with a new challenge");
	r.prev_version = ver;
	CHECK(store_round_commit(st, &r, &id) == 0, "the challenge is still good after it");
	CHECK(store_verdicts_list(st, r.agent, 10, verdict_cb, &verdicts) == 0 && verdicts == 2,
	      "two verdicts stored (%d)", verdicts);
	/* Without a challenge (one verifier keeps its own, nonces.h) nothing is spent. */
	r.nonce = NULL;
	r.nonce_len = 0;
	CHECK(store_boot_get(st, r.agent, &got, &r.prev_version) == 0 &&
		      store_round_commit(st, &r, &id) == 0 &&
		      store_boot_get(st, r.agent, &got, &r.prev_version) == 0 &&
		      store_round_commit(st, &r, &id) == 0,
	      "rounds without a challenge");
	/* Long expired ones are pruned by a later batch; a fresh one stays spent. */
	r.now = 100000 + STORE_NONCES_KEEP + 200;
	r.nonce = n1;
	r.nonce_len = sizeof(n1);
	r.nonce_expires = r.now + 60;
	CHECK(store_boot_get(st, r.agent, &got, &r.prev_version) == 0 &&
		      store_round_commit(st, &r, &id) == -EALREADY,
	      "pruning happens after the batch's rounds: n1 still refused in it");
	r.nonce = n2;
	CHECK(store_boot_get(st, r.agent, &got, &r.prev_version) == 0 &&
		      store_round_commit(st, &r, &id) == 0,
	      "n1 and n2 had expired long ago: n2 is accepted again after the prune");
}

/* Pending enrollments expire and are capped per EK and in all; one EK, one active agent. */
static void test_enroll_limits(void)
{
	const char *dir = tmp_dir;
	struct store_enroll_limits lim = { .pending_ttl = 100, .max_pending_per_ek = 2,
					   .max_pending = 5 };
	struct store_agent a, got;
	enum store_enroll_result r;
	struct store_counts c;
	struct store *st = NULL;
	uint8_t digest[32];
	char uri[300], id[24];
	int n = 0;

	CHECK(teststore_uri(dir, "limits", uri, sizeof(uri)) == 0 && store_open(uri, &st) == 0,
	      "open");
	if (!st)
		return;
	store_set_enroll_limits(st, &lim);

	/* One EK under several ids: two pending ones, the third refused. */
	make_agent(&a, "ek1-a", 1, 1, 0x01);
	CHECK(store_agent_enroll(st, &a, 1000, &r) == 0 && r == STORE_ENROLL_NEW, "ek1 as a");
	make_agent(&a, "ek1-b", 1, 1, 0x02);
	CHECK(store_agent_enroll(st, &a, 1001, &r) == 0 && r == STORE_ENROLL_NEW, "ek1 as b");
	make_agent(&a, "ek1-c", 1, 1, 0x03);
	CHECK(store_agent_enroll(st, &a, 1002, &r) == 0 && r == STORE_ENROLL_EK_PENDING_FULL,
	      "ek1 as c: past the cap per EK");
	CHECK(store_agent_get(st, "ek1-c", &got) == -ENOENT, "c not stored");
	make_agent(&a, "ek1-a", 1, 2, 0x04);
	CHECK(store_agent_enroll(st, &a, 1003, &r) == 0 && r == STORE_ENROLL_REFRESHED,
	      "a re-enrolls: a replacement adds nothing, never refused by the cap");

	/* The EK becomes active as a: b can neither activate nor enroll again, nor may others. */
	memset(digest, 0x04, sizeof(digest));
	CHECK(store_agent_activate(st, "ek1-a", digest, 1004) == 0, "a activates");
	memset(digest, 0x02, sizeof(digest));
	CHECK(store_agent_activate(st, "ek1-b", digest, 1005) == -EEXIST,
	      "b, pending with the same EK, cannot activate: one TPM, one agent");
	CHECK(store_agent_get(st, "ek1-b", &got) == 0 && got.state == AGENT_PENDING,
	      "b stays pending");
	store_agent_release(&got);
	make_agent(&a, "ek1-b", 1, 1, 0x05);
	CHECK(store_agent_enroll(st, &a, 1006, &r) == 0 && r == STORE_ENROLL_EK_IN_USE,
	      "b re-enrolling: the EK is in use");
	make_agent(&a, "ek1-d", 1, 1, 0x06);
	CHECK(store_agent_enroll(st, &a, 1006, &r) == 0 && r == STORE_ENROLL_EK_IN_USE,
	      "a new id for the EK: in use");
	make_agent(&a, "ek1-a", 1, 2, 0x07);
	CHECK(store_agent_enroll(st, &a, 1006, &r) == 0 && r == STORE_ENROLL_ALREADY,
	      "a itself again: already enrolled");

	/* The overall cap: b and three more pending, the sixth refused. */
	for (int i = 0; i < 3; i++) {
		snprintf(id, sizeof(id), "other-%d", i);
		make_agent(&a, id, (uint8_t)(2 + (i & 1)), 1, 0x10);
		a.ek_pub[0] = (uint8_t)(0x40 + i); /* an EK of its own */
		CHECK(store_agent_enroll(st, &a, 1010, &r) == 0 && r == STORE_ENROLL_NEW,
		      "%s enrolls", id);
	}
	CHECK(store_counts(st, &c) == 0 && c.agents_pending == 4 && c.agents_active == 1,
	      "four pending, one active (%llu, %llu)", (unsigned long long)c.agents_pending,
	      (unsigned long long)c.agents_active);
	make_agent(&a, "other-3", 2, 1, 0x10);
	a.ek_pub[0] = 0x50;
	CHECK(store_agent_enroll(st, &a, 1010, &r) == 0 && r == STORE_ENROLL_NEW, "the fifth");
	make_agent(&a, "other-4", 2, 1, 0x10);
	a.ek_pub[0] = 0x51;
	CHECK(store_agent_enroll(st, &a, 1011, &r) == 0 && r == STORE_ENROLL_PENDING_FULL,
	      "the sixth: past the overall cap");

	/* Time to live: an expired enrollment cannot activate, and the next enrollment deletes it. */
	memset(digest, 0x10, sizeof(digest));
	CHECK(store_agent_activate(st, "other-0", digest, 1110) == -ETIMEDOUT,
	      "other-0 after 100 s: expired");
	CHECK(store_agent_activate(st, "other-0", digest, 1109) == 0, "at 99 s it still could");
	CHECK(store_agent_enroll(st, &a, 1111, &r) == 0 && r == STORE_ENROLL_NEW,
	      "at 1111 the ones of 1010 and before expired: other-4 fits");
	CHECK(store_agents_list(st, count_cb, &n) == 0 && n == 3,
	      "left: ek1-a and other-0 (active), other-4 (new); %d agents", n);
	CHECK(store_agent_get(st, "ek1-b", &got) == -ENOENT, "b (pending since 1001) expired");
	CHECK(store_agent_get(st, "other-0", &got) == 0 && got.state == AGENT_ACTIVE,
	      "an active agent never expires");
	store_agent_release(&got);
	store_close(st);
}

#define GC_THREADS 8
#define GC_ROUNDS 40

struct gc_arg {
	struct store *st;
	int n;
	int64_t ids[GC_ROUNDS];
	int fails;
};

/* Thread 0 sends rounds that fail (a NULL path): they must not fail the others' batches. */
static void *gc_thread(void *p)
{
	struct gc_arg *g = p;
	struct store_round_violation bad = { .reason = "not_in_allowlist", .digest = "sha256:00",
					     .template_name = "ima-ng" };
	char agent[16];
	struct boot_state bs;
	struct store_round r;

	snprintf(agent, sizeof(agent), "gc-%d", g->n);
	memset(&bs, 0, sizeof(bs));
	bs.started = true;
	bs.boot_number = 1;
	for (int i = 0; i < GC_ROUNDS; i++) {
		bs.next_entry = (uint64_t)i + 1;
		memset(&r, 0, sizeof(r));
		r.agent = agent;
		/* Each round over the last one's state; thread 0's never commit. */
		r.prev_version = g->n == 0 ? 0 : (uint64_t)i;
		r.next = &bs;
		r.trusted = true;
		r.reasons_json = "[]";
		r.now = 200000 + i;
		if (g->n == 0) {
			r.violations = &bad;
			r.nviolations = 1;
		}
		if (store_round_commit(g->st, &r, &g->ids[i]))
			g->fails++;
	}
	return NULL;
}

static int int64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Rounds from many threads at once: each committed once, with its own verdict id. */
static void test_group_commit(void)
{
	struct store *st = shared_store;
	static struct gc_arg g[GC_THREADS];
	static int64_t all[GC_THREADS * GC_ROUNDS];
	pthread_t t[GC_THREADS];
	bool created[GC_THREADS];
	struct boot_state got;
	int fails = 0, dups = 0, started = 0, good = 0;

	for (int i = 0; i < GC_THREADS; i++) {
		char id[16];

		snprintf(id, sizeof(id), "gc-%d", i);
		CHECK(storeagent_active(st, id, 100) == 0, "agent %s active", id);
		g[i] = (struct gc_arg){ .st = st, .n = i };
		created[i] = pthread_create(&t[i], NULL, gc_thread, &g[i]) == 0;
		if (created[i])
			started++;
		else
			g[i].fails = GC_ROUNDS;
	}
	for (int i = 0; i < GC_THREADS; i++) {
		if (created[i])
			pthread_join(t[i], NULL);
		if (i == 0)
			continue;
		fails += g[i].fails;
		memcpy(&all[good], g[i].ids, sizeof(g[i].ids));
		good += GC_ROUNDS;
	}
	CHECK(started == GC_THREADS && fails == 0, "%d threads x %d rounds committed (%d failed)",
	      GC_THREADS - 1, GC_ROUNDS, fails);
	CHECK(g[0].fails == GC_ROUNDS, "every failing round failed alone (%d of %d)", g[0].fails,
	      GC_ROUNDS);
	CHECK(store_boot_get(st, "gc-0", &got, NULL) == 0 && !got.started,
	      "and stored nothing");
	qsort(all, (size_t)good, sizeof(all[0]), int64_cmp);
	for (int i = 1; i < good; i++)
		dups += all[i] == all[i - 1] || all[i] <= 0;
	CHECK(dups == 0, "every round has its own verdict id (%d shared)", dups);
	CHECK(store_boot_get(st, "gc-3", &got, NULL) == 0 && got.next_entry == GC_ROUNDS,
	      "each agent's last round is its boot state");
}

/* A round of `agent` over its stored state, announced (store_round_announce()) or not. */
struct gather_arg {
	struct store *st;
	const char *agent;
	bool announced;
	int ret;
	struct timespec done; /* CLOCK_MONOTONIC when store_round_commit() returned */
};

static void *gather_thread(void *p)
{
	struct gather_arg *g = p;
	struct boot_state bs;
	struct store_round r;
	uint64_t ver = 0;
	int64_t id;

	g->ret = store_boot_get(g->st, g->agent, &bs, &ver);
	if (g->ret && g->ret != -ENOENT)
		return NULL;
	memset(&bs, 0, sizeof(bs));
	bs.started = true;
	bs.boot_number = 1;
	bs.next_entry = ver + 1;
	memset(&r, 0, sizeof(r));
	r.agent = g->agent;
	r.prev_version = ver;
	r.next = &bs;
	r.trusted = true;
	r.reasons_json = "[]";
	r.now = 300000;
	r.announced = g->announced;
	g->ret = store_round_commit(g->st, &r, &id);
	clock_gettime(CLOCK_MONOTONIC, &g->done);
	return NULL;
}

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void sleep_ms(long ms)
{
	struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

/*
 * The group commit waits for rounds being judged (store_round_announce()): a leader does not
 * commit before a round announced when it took the lead is queued, or withdrawn, within the
 * bound (lengthened here to 10 s, so that the machine's load cannot decide the outcome). The
 * old commit did not wait: the first round returned before the second was even queued.
 */
static void test_group_commit_gathers(void)
{
	struct store *st = shared_store;
	struct gather_arg a = { .st = st, .agent = "gg-1", .announced = true };
	struct gather_arg b = { .st = st, .agent = "gg-2", .announced = true };
	struct timespec queued, withdrawn, t0, t1;
	pthread_t ta;

	CHECK(storeagent_active(st, "gg-1", 100) == 0 && storeagent_active(st, "gg-2", 100) == 0,
	      "agents gg-1 and gg-2 active");
	store_set_gather_max(st, 10 * 1000 * 1000);
	/* a and b are being judged; a commits first, b 50 ms later. */
	store_round_announce(st);
	store_round_announce(st);
	if (pthread_create(&ta, NULL, gather_thread, &a)) {
		CHECK(false, "thread");
		return;
	}
	sleep_ms(50);
	clock_gettime(CLOCK_MONOTONIC, &queued);
	gather_thread(&b);
	pthread_join(ta, NULL);
	CHECK(a.ret == 0 && b.ret == 0, "both rounds commit");
	CHECK(!before(&a.done, &queued), "the first waited for the second, announced before it"
	      " took the lead, and committed with it");
	/* A round withdrawn (its evidence refused) ends the wait as its commit would. */
	store_round_announce(st);
	store_round_announce(st);
	a.ret = -1;
	pthread_create(&ta, NULL, gather_thread, &a);
	sleep_ms(50);
	clock_gettime(CLOCK_MONOTONIC, &withdrawn);
	store_round_withdraw(st);
	pthread_join(ta, NULL);
	CHECK(a.ret == 0 && !before(&a.done, &withdrawn),
	      "a leader waits for an announced round until it is withdrawn");
	CHECK(a.done.tv_sec - withdrawn.tv_sec < 5, "and not longer");
	/* Nothing announced: a round commits without waiting for anyone. */
	b.announced = false;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	gather_thread(&b);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(b.ret == 0 && t1.tv_sec - t0.tv_sec < 5, "an unannounced round with none announced"
	      " commits at once");
	store_set_gather_max(st, STORE_GATHER_MAX_US);
}

/* boot_state.c: the layout byte for byte, and everything else refused. */
static void test_boot_state_encoding(void)
{
	static const char expect_hex[] =
		"03" "01" "01020304" "05060708" "1112131415161718" "2122232425262728"
		"3132333435363738" "00000003" "4142434445464748" "5152535455565758"
		"6162636465666768";
	uint8_t enc[BOOT_STATE_ENCODED_LEN], bad[BOOT_STATE_ENCODED_LEN + 1];
	struct boot_state bs, got;
	char hex[2 * sizeof(enc) + 1];
	size_t fixed = (sizeof(expect_hex) - 1) / 2;
	int refused = 0;

	CHECK(BOOT_STATE_ENCODED_LEN == 309 && BOOT_STATE_ENCODED_LEN_V2 == 308 &&
		      BOOT_STATE_ENCODED_LEN_V1 == 226,
	      "encoded size %u (version 2: %u, version 1: %u)", BOOT_STATE_ENCODED_LEN,
	      BOOT_STATE_ENCODED_LEN_V2, BOOT_STATE_ENCODED_LEN_V1);
	memset(&bs, 0, sizeof(bs));
	bs.started = true;
	bs.reset_count = 0x01020304;
	bs.restart_count = 0x05060708;
	bs.clock = 0x1112131415161718;
	bs.boot_number = 0x2122232425262728;
	bs.next_entry = 0x3132333435363738;
	bs.replay.banks = REPLAY_SHA1 | REPLAY_SHA256;
	bs.replay.entries = 0x4142434445464748;
	bs.replay.violations = 0x5152535455565758;
	bs.replay.other_pcr = 0x6162636465666768;
	memset(bs.replay.sha1, 0xa1, sizeof(bs.replay.sha1));
	memset(bs.replay.sha256, 0xa2, sizeof(bs.replay.sha256));
	memset(bs.replay.sha384, 0xa3, sizeof(bs.replay.sha384));
	memset(bs.replay.sha512, 0xa4, sizeof(bs.replay.sha512));
	bs.judged.known = true;
	snprintf(bs.judged.policy, sizeof(bs.judged.policy), "measured");
	bs.judged.policy_version = 0x0102;
	bs.judged.amendment_version = 0x0304;
	bs.unconfirmed = true;
	boot_state_encode(&bs, enc);
	for (size_t i = 0; i < sizeof(enc); i++)
		snprintf(hex + 2 * i, 3, "%02x", enc[i]);
	CHECK(!strncmp(hex, expect_hex, 2 * fixed), "fixed fields big-endian: %.*s",
	      (int)(2 * fixed), hex);
	CHECK(enc[fixed] == 0xa1 && enc[fixed + 19] == 0xa1 && enc[fixed + 20] == 0xa2 &&
		      enc[fixed + 52] == 0xa3 && enc[fixed + 100] == 0xa4 &&
		      enc[BOOT_STATE_ENCODED_LEN_V1 - 1] == 0xa4,
	      "digests follow in bank order");
	CHECK(enc[226] == 1 && enc[227] == 8 && !memcmp(enc + 228, "measured", 8) &&
		      enc[236] == 0 && enc[291] == 0 && enc[298] == 0x01 && enc[299] == 0x02 &&
		      enc[306] == 0x03 && enc[307] == 0x04,
	      "then what judged it: known, the name's length, the name padded, the versions");
	CHECK(enc[308] == 1, "then whether the replay is unconfirmed");
	CHECK(boot_state_decode(enc, sizeof(enc), &got) == 0, "decode");
	CHECK(got.started && got.reset_count == bs.reset_count &&
		      got.restart_count == bs.restart_count && got.clock == bs.clock &&
		      got.boot_number == bs.boot_number && got.next_entry == bs.next_entry &&
		      !memcmp(&got.replay, &bs.replay, sizeof(bs.replay)) &&
		      judged_versions_equal(&got.judged, &bs.judged) && got.unconfirmed,
	      "round trip");
	enc[0] = 2;
	CHECK(boot_state_decode(enc, BOOT_STATE_ENCODED_LEN_V2, &got) == 0 &&
		      got.next_entry == bs.next_entry && judged_versions_equal(&got.judged, &bs.judged) &&
		      !got.unconfirmed,
	      "a version 2 state decodes, confirmed (every state of its verifiers was)");
	enc[0] = 1;
	CHECK(boot_state_decode(enc, BOOT_STATE_ENCODED_LEN_V1, &got) == 0 &&
		      got.next_entry == bs.next_entry && !got.judged.known,
	      "a version 1 state decodes, judged by versions nobody recorded (judged again)");
	enc[0] = 3;

	for (size_t n = 0; n <= sizeof(bad); n++) {
		memset(bad, 0, sizeof(bad));
		memcpy(bad, enc, n < sizeof(enc) ? n : sizeof(enc));
		if (n != sizeof(enc) && n != BOOT_STATE_ENCODED_LEN_V1 &&
		    n != BOOT_STATE_ENCODED_LEN_V2)
			refused += boot_state_decode(bad, n, &got) == -EINVAL && !got.started;
	}
	CHECK(refused == (int)sizeof(bad) - 2, "every other length refused (%d of %zu)", refused,
	      sizeof(bad) - 2);
	memset(bad, 0, sizeof(bad));
	memcpy(bad, enc, BOOT_STATE_ENCODED_LEN_V1);
	CHECK(boot_state_decode(bad, BOOT_STATE_ENCODED_LEN_V1, &got) == -EINVAL,
	      "version 3 at version 1's length refused");
	CHECK(boot_state_decode(bad, BOOT_STATE_ENCODED_LEN_V2, &got) == -EINVAL,
	      "version 3 at version 2's length refused");
	CHECK(boot_state_decode(NULL, sizeof(enc), &got) == -EINVAL, "NULL refused");
	memcpy(bad, enc, sizeof(enc));
	bad[0] = 0;
	CHECK(boot_state_decode(bad, sizeof(enc), &got) == -EINVAL, "version 0 refused");
	bad[0] = 4;
	CHECK(boot_state_decode(bad, sizeof(enc), &got) == -EINVAL && !got.started &&
		      got.clock == 0,
	      "version 4 refused, out zeroed");
	bad[0] = 1;
	CHECK(boot_state_decode(bad, sizeof(enc), &got) == -EINVAL,
	      "version 1 at version 3's length refused");
	bad[0] = 2;
	CHECK(boot_state_decode(bad, sizeof(enc), &got) == -EINVAL,
	      "version 2 at version 3's length refused");
	memcpy(bad, enc, sizeof(enc));
	bad[308] = 2;
	CHECK(boot_state_decode(bad, sizeof(enc), &got) == -EINVAL, "unconfirmed = 2 refused");
	memcpy(bad, enc, sizeof(enc));
	bad[226] = 2;
	CHECK(boot_state_decode(bad, sizeof(enc), &got) == -EINVAL, "known = 2 refused");
	memcpy(bad, enc, sizeof(enc));
	bad[227] = 65;
	CHECK(boot_state_decode(bad, sizeof(enc), &got) == -EINVAL, "a name of 65 bytes refused");
	memcpy(bad, enc, sizeof(enc));
	bad[229] = 0;
	CHECK(boot_state_decode(bad, sizeof(enc), &got) == -EINVAL, "a NUL in the name refused");
	memcpy(bad, enc, sizeof(enc));
	bad[1] = 2;
	CHECK(boot_state_decode(bad, sizeof(enc), &got) == -EINVAL, "started = 2 refused");
	memcpy(bad, enc, sizeof(enc));
	bad[37] |= 0x10; /* replay banks, lowest byte: an unknown bank */
	CHECK(boot_state_decode(bad, sizeof(enc), &got) == -EINVAL, "unknown bank refused");
	bs.started = false;
	boot_state_encode(&bs, enc);
	CHECK(boot_state_decode(enc, sizeof(enc), &got) == 0 && !got.started, "started = 0");
}

/* Runs sql on the store's database (a SQLite file, or the PostgreSQL database of `name`). */
static int db_exec(const char *path, const char *name, const char *sql)
{
	return teststore_pg() ? teststore_pg_exec(name, sql) : sql_exec(path, sql);
}

static int db_version(const char *path, const char *name, int *v)
{
	return teststore_pg() ? teststore_pg_int(name, "SELECT version FROM schema_version", v)
			      : sql_int(path, "PRAGMA user_version", v);
}

static int db_set_version(const char *path, const char *name, int v)
{
	char sql[64];

	snprintf(sql, sizeof(sql), teststore_pg() ? "UPDATE schema_version SET version = %d"
						  : "PRAGMA user_version = %d", v);
	return db_exec(path, name, sql);
}

/* URIs, schema versions, rows that fail their checks. */
static void test_open(void)
{
	const char *dir = tmp_dir;
	char path[256], uri[300];
	struct store *st = (struct store *)&st;
	struct boot_state bs;
	int v = -1;

	CHECK(store_open("nosuch:/tmp/x.db", &st) == -EINVAL && !st, "unknown scheme refused");
	st = (struct store *)&st;
	CHECK(store_open("/tmp/x.db", &st) == -EINVAL && !st, "a bare path is not a URI");
	CHECK(store_open("sqlite:", &st) == -EINVAL && !st, "sqlite: without a path");
	CHECK(store_open(":x", &st) == -EINVAL && !st, "empty scheme");
	CHECK(store_open("SQLite:/tmp/x.db", &st) == -EINVAL && !st, "schemes are lowercase");
	CHECK(store_open("postgresql:/tmp/x.db", &st) == -EINVAL && !st,
	      "postgresql: takes a libpq URI, not a path");

	snprintf(path, sizeof(path), "%s/versions.db", dir);
	CHECK(teststore_uri(dir, "versions", uri, sizeof(uri)) == 0, "a new store's URI");
	CHECK(store_open(uri, &st) == 0, "new database");
	store_close(st);
	CHECK(db_version(path, "versions", &v) == 0 && v == STORE_SCHEMA_VERSION,
	      "a new database is at schema version %d (%d)", STORE_SCHEMA_VERSION, v);
	CHECK(store_open(uri, &st) == 0, "reopen at the current version");
	store_close(st);

	/* A boot state that does not decode: refused when read, not trusted. */
	CHECK(db_exec(path, "versions", teststore_pg()
		      ? "INSERT INTO boot_state VALUES ('x', '\\x01', 0, 0, 1, 0, 0, 1)"
		      : "INSERT INTO boot_state VALUES ('x', x'01', 0, 0, 1, 0, 0, 1)") == 0,
	      "plant a short boot state");
	CHECK(store_open(uri, &st) == 0, "open");
	if (st) {
		CHECK(store_boot_get(st, "x", &bs, NULL) == -EINVAL && !bs.started,
		      "undecodable boot state refused");
		store_close(st);
	}

	CHECK(db_set_version(path, "versions", STORE_SCHEMA_VERSION + 1) == 0,
	      "pretend a newer verifier wrote it");
	st = (struct store *)&st;
	CHECK(store_open(uri, &st) == -EPROTO && !st, "newer database refused");
	CHECK(db_version(path, "versions", &v) == 0 && v == STORE_SCHEMA_VERSION + 1,
	      "and left alone");
	CHECK(db_set_version(path, "versions", -1) == 0, "a negative version");
	CHECK(store_open(uri, &st) == -EPROTO && !st, "negative version refused");
}

int main(void)
{
	char path[256];
	struct store_agent a;

	if (!mkdtemp(tmp_dir))
		return 1;
	CASE(test_boot_state_encoding);
	CASE(test_open);
	CASE(test_enroll_limits);
	printf("# backend: %s\n", teststore_backend());
	CHECK(teststore_uri(tmp_dir, "state", path, sizeof(path)) == 0 &&
		      store_open(path, &shared_store) == 0,
	      "open");
	if (shared_store) {
		CASE(test_agents);
		CASE(test_rounds);
		CASE(test_violation_lifecycle);
		CASE(test_boot_logs);
		CASE(test_policies);
		CASE(test_policy_signatures);
		CASE(test_round_context);
		CASE(test_policies_list);
		CASE(test_policy_delete_race);
		CASE(test_failed_round);
		CASE(test_round_cas);
		CASE(test_spent_nonces);
		CASE(test_group_commit);
		CASE(test_group_commit_gathers);
		/* last: its agent would count among the policies' agents above */
		CASE(test_boot_finding_judged_again);
		store_close(shared_store);
	}
	/* Reopen: everything committed is there. */
	shared_store = NULL;
	CHECK(store_open(path, &shared_store) == 0, "reopen");
	if (shared_store) {
		CHECK(store_agent_get(shared_store, "web-01", &a) == 0 && a.state == AGENT_ACTIVE,
		      "durable after reopen");
		store_agent_release(&a);
	}
	store_close(shared_store);
	store_close(NULL);
	snprintf(path, sizeof(path), "rm -rf %s", tmp_dir);
	if (system(path) != 0)
		fprintf(stderr, "cleanup of %s failed\n", tmp_dir);
	return check_finish();
}
