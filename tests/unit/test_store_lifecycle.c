/*
 * The store's operator calls (issue 16), through the store API alone so that every backend is
 * held to them: retiring, purging and resetting agents with their history; the interval a
 * round reports and when an agent is stale, raised once per silence; the webhook outbox (which
 * calls raise which events, written with the change, claimed, retried, delivered). On
 * SQLite, or on PostgreSQL with ATTEST_TEST_PG (tests/lib/teststore.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tests/lib/storeagent.h"
#include "tests/lib/teststore.h"
#include "tests/unit/check.h"
#include "verifier/store/boot_state.h"
#include "verifier/store/store.h"

#define HOOK_A "http://127.0.0.1:1/a"
#define HOOK_B "http://127.0.0.1:1/b"

/* An enrollment of id with EK and AK filled with the bytes ek and ak. */
static void make_agent(struct store_agent *a, const char *id, uint8_t ek, uint8_t ak)
{
	static uint8_t ekb[256][8], akb[256][8];

	memset(a, 0, sizeof(*a));
	snprintf(a->id, sizeof(a->id), "%s", id);
	memset(ekb[ek], ek, 8);
	memset(akb[ak], ak, 8);
	a->ek_pub = ekb[ek];
	a->ek_pub_len = 8;
	a->ek_cert = (uint8_t *)"cert";
	a->ek_cert_len = 4;
	a->ak_pub = akb[ak];
	a->ak_pub_len = 8;
	a->ak_name_len = 34;
	memset(a->ak_name, ak, 34);
	memset(a->cred_digest, ak, sizeof(a->cred_digest));
}

static int enroll(struct store *st, const char *id, uint8_t ek, uint8_t ak, int64_t now,
		  enum store_enroll_result *r)
{
	struct store_agent a;

	make_agent(&a, id, ek, ak);
	return store_agent_enroll(st, &a, now, r);
}

static int activate(struct store *st, const char *id, uint8_t ak, int64_t now)
{
	uint8_t d[STORE_CRED_DIGEST_LEN];

	memset(d, ak, sizeof(d));
	return store_agent_activate(st, id, d, now);
}

/* Whether the last round_of() wrote an event into the outbox (store_round.raised). */
static bool last_raised;

/* One round of `id` over its stored state: trusted or not, with one violation of `path`. */
static int round_of(struct store *st, const char *id, bool trusted, const char *path,
		    uint32_t interval, int64_t now)
{
	struct store_round_violation v = { .entry = 1, .reason = "not_in_allowlist",
					   .digest = "sha256:ab", .template_name = "ima-ng" };
	struct boot_state bs;
	struct store_round r;
	uint64_t ver = 0;
	int64_t vid = 0;

	if (store_boot_get(st, id, &bs, &ver))
		return -EIO;
	bs.started = true;
	bs.boot_number = bs.boot_number ? bs.boot_number : 1;
	bs.next_entry++;
	memset(&r, 0, sizeof(r));
	r.agent = id;
	r.prev_version = ver;
	r.next = &bs;
	r.trusted = trusted;
	r.reasons_json = trusted ? "[]" : "[{\"code\":\"not_in_allowlist\",\"detail\":\"x\",\"entry\":1}]";
	r.interval = interval;
	r.now = now;
	v.path = path;
	r.violations = path ? &v : NULL;
	r.nviolations = path ? 1 : 0;
	last_raised = true; /* the store must say */
	r.raised = &last_raised;
	return store_round_commit(st, &r, &vid);
}

static struct store_agent get(struct store *st, const char *id)
{
	struct store_agent a;

	memset(&a, 0, sizeof(a));
	if (store_agent_get(st, id, &a))
		a.id[0] = '\0';
	store_agent_release(&a);
	return a;
}

struct history {
	int n;
	char event[8][16];
	char actor[8][16];
};

static int history_cb(void *arg, const struct store_agent_event *e)
{
	struct history *h = arg;

	if (h->n < 8) {
		snprintf(h->event[h->n], sizeof(h->event[0]), "%s", e->event);
		snprintf(h->actor[h->n], sizeof(h->actor[0]), "%s", e->actor);
	}
	h->n++;
	return 0;
}

static struct history history(struct store *st, const char *id)
{
	struct history h;

	memset(&h, 0, sizeof(h));
	if (store_agent_history(st, id, 100, history_cb, &h))
		h.n = -1;
	return h;
}

/* The outbox rows of one target, as claim gives them (all of them: lease 0). */
struct rows {
	int n;
	int64_t id[32];
	char type[32][24];
	char event_id[32][STORE_EVENT_ID_MAX + 1];
	char agent[32][LIMIT_AGENT_ID + 1];
	json_t *body[32];
	uint32_t attempts[32];
};

static int rows_cb(void *arg, const struct store_outbox_row *r)
{
	struct rows *x = arg;

	if (x->n < 32) {
		x->id[x->n] = r->id;
		snprintf(x->type[x->n], sizeof(x->type[0]), "%s", r->type);
		snprintf(x->event_id[x->n], sizeof(x->event_id[0]), "%s", r->event_id);
		snprintf(x->agent[x->n], sizeof(x->agent[0]), "%s", r->agent);
		x->body[x->n] = json_loads(r->body, 0, NULL);
		x->attempts[x->n] = r->attempts;
	}
	x->n++;
	return 0;
}

static void rows_release(struct rows *x)
{
	for (int i = 0; i < x->n && i < 32; i++)
		json_decref(x->body[i]);
	memset(x, 0, sizeof(*x));
}

/* Every due row of target, claimed for `lease` seconds at `now`. */
static struct rows claim(struct store *st, const char *target, int64_t now, int64_t lease)
{
	struct rows x;

	memset(&x, 0, sizeof(x));
	if (store_outbox_claim(st, target, now, lease, 32, rows_cb, &x))
		x.n = -1;
	return x;
}

/* Settles one row: store_outbox_settle()'s answer. */
static int settle1(struct store *st, int64_t row, enum store_outbox_outcome outcome,
		   int64_t next_at, const char *error)
{
	const struct store_outbox_settle v = { row, outcome, next_at, error };

	return store_outbox_settle(st, &v, 1);
}

/* Delivers (deletes) every row claimed, in one settlement; the outbox of target is empty after. */
static void drain(struct store *st, const char *target, int64_t now)
{
	struct rows x = claim(st, target, now, 0);
	struct store_outbox_settle v[32];

	for (int i = 0; i < x.n && i < 32; i++)
		v[i] = (struct store_outbox_settle){ .row = x.id[i],
						     .outcome = STORE_OUTBOX_DELIVERED };
	if (x.n > 0)
		store_outbox_settle(st, v, (size_t)(x.n < 32 ? x.n : 32));
	rows_release(&x);
}

static uint64_t pending(struct store *st, const char *target)
{
	uint64_t n = 99;

	return store_outbox_pending(st, target, &n) ? 99 : n;
}

static const char *data_str(json_t *body, const char *key)
{
	const char *s = json_string_value(json_object_get(json_object_get(body, "data"), key));

	return s ? s : "";
}

static json_int_t data_int(json_t *body, const char *key)
{
	return json_integer_value(json_object_get(json_object_get(body, "data"), key));
}

/* The temporary directory and the store every case works in, made in main(). */
static char tmp_dir[] = "/tmp/test_store_lifecycle.XXXXXX";
static struct store *shared_store;

static void test_retire(void)
{
	struct store *st = shared_store;
	enum store_enroll_result r;
	struct store_agent a;
	struct history h;

	CHECK(enroll(st, "ret-1", 10, 10, 100, &r) == 0 && r == STORE_ENROLL_NEW &&
		      activate(st, "ret-1", 10, 101) == 0,
	      "an active agent");
	CHECK(round_of(st, "ret-1", true, NULL, 0, 102) == 0, "a round of it");
	CHECK(store_agent_retire(st, "ret-1", 200, "alice", false) == 0, "retired");
	a = get(st, "ret-1");
	CHECK(a.state == AGENT_RETIRED && a.retired_at == 200 && !strcmp(agent_state_str(a.state), "retired"),
	      "state retired, when (%d, %lld)", (int)a.state, (long long)a.retired_at);
	CHECK(store_agent_retire(st, "ret-1", 201, "alice", false) == -EALREADY,
	      "retired twice: -EALREADY");
	CHECK(store_agent_retire(st, "nobody", 201, "alice", false) == -ENOENT, "unknown: -ENOENT");
	CHECK(round_of(st, "ret-1", true, NULL, 0, 203) == -EKEYREVOKED,
	      "a round of a retired agent is not stored");
	CHECK(enroll(st, "ret-1", 10, 10, 204, &r) == 0 && r == STORE_ENROLL_RETIRED,
	      "its id refuses enrollment");
	CHECK(enroll(st, "ret-2", 10, 11, 205, &r) == 0 && r == STORE_ENROLL_NEW &&
		      activate(st, "ret-2", 11, 206) == 0,
	      "its EK is free: it enrolls and activates under another id");
	h = history(st, "ret-1");
	CHECK(h.n == 3 && !strcmp(h.event[0], "retired") && !strcmp(h.actor[0], "alice") &&
		      !strcmp(h.event[1], "activated") && !strcmp(h.event[2], "enrolled") &&
		      !strcmp(h.actor[2], "agent"),
	      "history, newest first: retired by alice, activated, enrolled (%d rows)", h.n);
	h.n = 0;
	CHECK(store_agent_history(st, "ret-1", 1, history_cb, &h) == 0 && h.n == 1,
	      "history honours its limit");
	CHECK(history(st, "nobody").n == 0, "no history for an unknown agent");
}

struct count_ctx {
	int n;
};

static int count_viol(void *arg, const struct store_violation *v)
{
	(void)v;
	((struct count_ctx *)arg)->n++;
	return 0;
}

static int count_verdicts(void *arg, const struct store_verdict *v)
{
	(void)v;
	((struct count_ctx *)arg)->n++;
	return 0;
}

static void test_purge(void)
{
	struct store *st = shared_store;
	struct count_ctx c = { 0 };
	enum store_enroll_result r;
	struct boot_state bs;
	int64_t ver = 0;
	uint64_t bver = 9;
	char *json = NULL;

	CHECK(enroll(st, "pur-1", 20, 20, 100, &r) == 0 && activate(st, "pur-1", 20, 101) == 0,
	      "an active agent");
	CHECK(round_of(st, "pur-1", false, "/usr/bin/x", 0, 102) == 0, "an untrusted round");
	CHECK(store_policy_put(st, "agent/pur-1", "{\"version\":1}", "alice", 103, &ver) == 0,
	      "its amendment");
	CHECK(store_agent_retire(st, "pur-1", 200, "alice", true) == 0, "purged while active");
	CHECK(store_agent_get(st, "pur-1", &(struct store_agent){ 0 }) == -ENOENT, "the agent is gone");
	CHECK(store_verdicts_list(st, "pur-1", 100, count_verdicts, &c) == 0 && c.n == 0,
	      "its verdicts are gone");
	CHECK(store_violations_list(st, -1, "pur-1", 100, count_viol, &c) == 0 && c.n == 0,
	      "its violations are gone");
	CHECK(store_policy_get(st, "agent/pur-1", &json, &ver) == -ENOENT, "its amendment is gone");
	free(json);
	CHECK(store_boot_get(st, "pur-1", &bs, &bver) == 0 && !bs.started && bver == 0,
	      "its boot state is gone");
	CHECK(history(st, "pur-1").n == 0, "its history is gone");
	CHECK(enroll(st, "pur-1", 21, 21, 300, &r) == 0 && r == STORE_ENROLL_NEW,
	      "the id is free: another TPM enrolls as new");
	CHECK(store_agent_retire(st, "pur-1", 301, "bob", true) == 0,
	      "a pending agent can be purged too");
	CHECK(store_agent_retire(st, "pur-1", 302, "bob", true) == -ENOENT, "then it is unknown");
}

static void test_reset(void)
{
	struct store *st = shared_store;
	enum store_enroll_result r;
	struct store_agent a;
	struct boot_state bs;
	struct history h;
	struct store_boot_log bl;
	struct store_round rd;
	uint8_t log[4] = { 1, 2, 3, 4 };
	uint64_t ver = 0;
	int64_t vid;

	CHECK(enroll(st, "res-1", 30, 30, 100, &r) == 0 && activate(st, "res-1", 30, 101) == 0,
	      "an active agent");
	CHECK(round_of(st, "res-1", true, NULL, 0, 102) == 0, "a round");
	/* A boot log stored with a second round. */
	store_boot_get(st, "res-1", &bs, &ver);
	memset(&bl, 0, sizeof(bl));
	bl.log = log;
	bl.log_len = sizeof(log);
	memset(&rd, 0, sizeof(rd));
	rd.agent = "res-1";
	rd.prev_version = ver;
	rd.next = &bs;
	rd.boot_log = &bl;
	rd.trusted = true;
	rd.reasons_json = "[]";
	rd.now = 103;
	CHECK(store_round_commit(st, &rd, &vid) == 0, "a round with its firmware event log");
	CHECK(enroll(st, "res-1", 31, 31, 104, &r) == 0 && r == STORE_ENROLL_CONFLICT,
	      "another TPM under its id: refused before a reset");
	CHECK(store_agent_reset(st, "res-1", 110, "alice") == 0, "reset");
	CHECK(store_agent_reset(st, "res-1", 111, "alice") == -EALREADY, "reset twice: -EALREADY");
	CHECK(store_agent_reset(st, "nobody", 111, "alice") == -ENOENT, "unknown: -ENOENT");
	a = get(st, "res-1");
	CHECK(a.state == AGENT_ACTIVE && a.reset_at == 110, "still active until it enrolls again");
	CHECK(round_of(st, "res-1", true, NULL, 0, 112) == 0, "and its rounds go on meanwhile");
	CHECK(enroll(st, "res-1", 30, 30, 113, &r) == 0 && r == STORE_ENROLL_ALREADY,
	      "the same keys change nothing");
	CHECK(enroll(st, "res-1", 31, 31, 120, &r) == 0 && r == STORE_ENROLL_REPLACED,
	      "a new EK and AK replace the keys");
	a = get(st, "res-1");
	CHECK(a.state == AGENT_PENDING && a.reset_at == 0 && a.ak_name[0] == 31,
	      "pending with the new AK, the reset used up");
	CHECK(store_boot_get(st, "res-1", &bs, &ver) == 0 && !bs.started && bs.boot_number == 1 &&
		      bs.next_entry == 0,
	      "its boot session starts over, its boot number kept (%llu)",
	      (unsigned long long)bs.boot_number);
	CHECK(store_boot_log_get(st, "res-1", &bl) == -ENOENT, "the old machine's event log is gone");
	CHECK(round_of(st, "res-1", true, NULL, 0, 121) == -EKEYREVOKED,
	      "no round while pending with the new keys");
	CHECK(activate(st, "res-1", 30, 122) == -ESTALE, "the old credential does not activate");
	CHECK(activate(st, "res-1", 31, 123) == 0, "the new one does");
	h = history(st, "res-1");
	CHECK(h.n == 5 && !strcmp(h.event[0], "activated") && !strcmp(h.event[1], "re-enrolled") &&
		      !strcmp(h.event[2], "reset") && !strcmp(h.actor[2], "alice"),
	      "history: activated, re-enrolled, reset by alice, activated, enrolled (%d)", h.n);

	/* A retired agent comes back by a reset. */
	CHECK(store_agent_retire(st, "res-1", 130, "bob", false) == 0, "retired");
	CHECK(store_agent_reset(st, "res-1", 131, "bob") == 0, "then reset");
	a = get(st, "res-1");
	CHECK(a.state == AGENT_RETIRED && a.reset_at == 131, "still retired until it enrolls");
	CHECK(enroll(st, "res-1", 31, 31, 132, &r) == 0 && r == STORE_ENROLL_REPLACED &&
		      activate(st, "res-1", 31, 133) == 0,
	      "it enrolls again (the same TPM) and activates");
	a = get(st, "res-1");
	CHECK(a.state == AGENT_ACTIVE && a.retired_at == 0, "active again");
}

/* store_agents_liveness()'s row of agent `id`, if it lists it. */
struct liveness_find {
	const char *id;
	struct store_agent a;
	int seen;
};

static int liveness_cb(void *arg, const struct store_agent *a)
{
	struct liveness_find *f = arg;

	if (!strcmp(a->id, f->id)) {
		f->a = *a;
		f->seen++;
	}
	return 0;
}

static struct liveness_find liveness_of(struct store *st, const char *id)
{
	struct liveness_find f = { .id = id };

	if (store_agents_liveness(st, liveness_cb, &f))
		f.seen = -1;
	return f;
}

static void test_liveness(void)
{
	struct store *st = shared_store;
	const struct store_liveness lv = { .default_interval = 10, .intervals = 3 };
	enum store_enroll_result r;
	struct store_agent a;

	CHECK(enroll(st, "live-1", 40, 40, 1000, &r) == 0 && activate(st, "live-1", 40, 1001) == 0,
	      "an active agent");
	a = get(st, "live-1");
	CHECK(a.interval == 0 && store_agent_last_seen(&a) == 1001 &&
		      store_agent_stale_after(&a, &lv) == 1031,
	      "no interval reported: the default's 3 intervals after its activation (%lld)",
	      (long long)store_agent_stale_after(&a, &lv));
	CHECK(!store_agent_stale(&a, &lv, 1031) && store_agent_stale(&a, &lv, 1032),
	      "stale once they passed");
	CHECK(round_of(st, "live-1", false, NULL, 2, 1040) == 0, "an untrusted round reports 2 s");
	a = get(st, "live-1");
	CHECK(a.interval == 2 && store_agent_last_seen(&a) == 1040 &&
		      store_agent_stale_after(&a, &lv) == 1046,
	      "its own interval counts from its last verdict (%u, %lld)", a.interval,
	      (long long)store_agent_stale_after(&a, &lv));
	CHECK(round_of(st, "live-1", true, NULL, 0, 1041) == 0 && get(st, "live-1").interval == 2,
	      "a round without one keeps it");
	{
		struct liveness_find f = liveness_of(st, "live-1");

		a = get(st, "live-1");
		CHECK(f.seen == 1 && f.a.state == AGENT_ACTIVE && f.a.interval == 2 &&
			      store_agent_last_seen(&f.a) == 1041 &&
			      store_agent_stale_after(&f.a, &lv) == store_agent_stale_after(&a, &lv) &&
			      f.a.stale_event_for == a.stale_event_for,
		      "the stale scan's listing gives what the agent's summary gives (%d)", f.seen);
	}
	CHECK(store_agent_mark_stale(st, "live-1", 1040, 2, 1046, 1050) == -EALREADY,
	      "not marked stale for a last-seen time that is not its own");
	CHECK(store_agent_mark_stale(st, "live-1", 1041, 2, 1047, 1050) == 0, "marked stale");
	CHECK(get(st, "live-1").stale_event_for == 1041, "for that time");
	CHECK(store_agent_mark_stale(st, "live-1", 1041, 2, 1047, 1051) == -EALREADY,
	      "once per silence");
	CHECK(store_agent_mark_stale(st, "nobody", 1041, 2, 1047, 1051) == -ENOENT, "unknown agent");
	CHECK(round_of(st, "live-1", true, NULL, 0, 1060) == 0 &&
		      store_agent_mark_stale(st, "live-1", 1060, 2, 1066, 1070) == 0,
	      "a new silence after new evidence is marked again");
	CHECK(liveness_of(st, "live-1").a.stale_event_for == 1060,
	      "and the listing shows the silence marked");
	CHECK(store_agent_retire(st, "live-1", 1080, "alice", false) == 0, "retired");
	CHECK(liveness_of(st, "live-1").seen == 0, "a retired agent is not listed for the scan");
	a = get(st, "live-1");
	CHECK(store_agent_stale_after(&a, &lv) == 0 && !store_agent_stale(&a, &lv, 99999),
	      "a retired agent is never stale");
	CHECK(store_agent_mark_stale(st, "live-1", 1060, 2, 1066, 1090) == -EALREADY,
	      "nor marked so");
}

/* The events: which call raises which, what the body says, one row per target. */
static void test_events(void)
{
	struct store *st = shared_store;
	const char *const hooks[] = { HOOK_A, HOOK_B };
	enum store_enroll_result r;
	struct rows a, b;

	drain(st, HOOK_A, 0);
	CHECK(pending(st, NULL) == 0, "no webhook, no event written");
	CHECK(store_set_webhooks(st, hooks, 2) == 0, "two webhooks");
	CHECK(enroll(st, "ev-1", 50, 50, 2000, &r) == 0 && pending(st, NULL) == 0,
	      "an enrollment raises nothing before activation");
	CHECK(activate(st, "ev-1", 50, 2001) == 0 && pending(st, HOOK_A) == 1 &&
		      pending(st, HOOK_B) == 1 && pending(st, NULL) == 2,
	      "activation: agent.enrolled, one row per webhook");
	CHECK(round_of(st, "ev-1", true, NULL, 0, 2002) == 0 && pending(st, HOOK_A) == 1 &&
		      !last_raised,
	      "a trusted round raises nothing");
	CHECK(round_of(st, "ev-1", false, "/usr/bin/evil", 0, 2003) == 0 && pending(st, HOOK_A) == 3 &&
		      last_raised,
	      "turning untrusted with a new violation: two events");
	CHECK(round_of(st, "ev-1", false, "/usr/bin/evil", 0, 2004) == 0 && pending(st, HOOK_A) == 3 &&
		      !last_raised,
	      "still untrusted, the same violation again: nothing new, none said raised");
	CHECK(round_of(st, "ev-1", false, NULL, 0, 2004) == 0 && pending(st, HOOK_A) == 3 &&
		      !last_raised,
	      "still untrusted, no violation in the round: nothing raised");
	CHECK(round_of(st, "ev-1", false, "/usr/bin/worse", 0, 2005) == 0 && pending(st, HOOK_A) == 4 &&
		      last_raised,
	      "another violation: violation.opened alone, said raised");
	CHECK(store_agent_mark_stale(st, "ev-1", 2005, 10, 2035, 2040) == 0 && pending(st, HOOK_A) == 5,
	      "agent.stale");
	{
		/* A head signed now: the events after it carry it (audit_head.signed). */
		static const uint8_t sig[8] = { 0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01 };
		static const uint8_t key[4] = { 0x30, 0x02, 0x05, 0x00 };
		struct store_audit_signed h = { .time = 2049, .signature = sig,
						.signature_len = sizeof(sig), .public_key = key,
						.public_key_len = sizeof(key) };

		CHECK(store_audit_last(st, &h.seq, h.hash) == 0 && h.seq > 0 &&
			      store_audit_signed_put(st, &h) == 0,
		      "the audit head signed (seq %lld)", (long long)h.seq);
	}
	CHECK(store_agent_reset(st, "ev-1", 2050, "alice") == 0 && pending(st, HOOK_A) == 6,
	      "agent.reset");
	CHECK(store_agent_retire(st, "ev-1", 2060, "bob", false) == 0 && pending(st, HOOK_A) == 7,
	      "agent.retired");
	CHECK(store_agent_retire(st, "ev-1", 2061, "bob", true) == 0 && pending(st, HOOK_A) == 8,
	      "agent.retired, purged (the events stay)");

	a = claim(st, HOOK_A, 3000, 60);
	b = claim(st, HOOK_B, 3000, 60);
	CHECK(a.n == 8 && b.n == 8, "every row due (%d, %d)", a.n, b.n);
	if (a.n == 8 && b.n == 8) {
		static const char *const types[8] = {
			"agent.enrolled", "agent.untrusted", "violation.opened", "violation.opened",
			"agent.stale", "agent.reset", "agent.retired", "agent.retired",
		};
		bool order = true, same = true, bodies = true;

		for (int i = 0; i < 8; i++) {
			const char *id = json_string_value(json_object_get(a.body[i], "id"));

			order = order && !strcmp(a.type[i], types[i]) && !strcmp(a.agent[i], "ev-1");
			same = same && !strcmp(a.event_id[i], b.event_id[i]) &&
			       !strcmp(a.type[i], b.type[i]);
			bodies = bodies && id && !strcmp(id, a.event_id[i]) &&
				 !strncmp(id, "evt-", 4) && strlen(id) == 36 &&
				 !strcmp(json_string_value(json_object_get(a.body[i], "type")),
					 types[i]) &&
				 !strcmp(json_string_value(json_object_get(a.body[i], "agent_id")),
					 "ev-1") &&
				 json_is_integer(json_object_get(a.body[i], "time"));
			for (int j = 0; j < i; j++)
				same = same && strcmp(a.event_id[i], a.event_id[j]);
		}
		CHECK(order, "oldest first, in the order they happened");
		CHECK(same, "one id per event, the same in both targets' rows, no two alike");
		CHECK(bodies, "each body: its id, type, agent and time");
		CHECK(json_integer_value(json_object_get(a.body[1], "time")) == 2003 &&
			      data_int(a.body[1], "verdict_id") > 0 &&
			      !strcmp(json_string_value(json_object_get(json_array_get(
					      json_object_get(json_object_get(a.body[1], "data"),
							      "reasons"), 0), "code")),
				      "not_in_allowlist"),
		      "agent.untrusted: when, the verdict and its reasons");
		CHECK(!strcmp(data_str(a.body[2], "path"), "/usr/bin/evil") &&
			      !strcmp(data_str(a.body[2], "path_hex"), "2f7573722f62696e2f6576696c") &&
			      !strcmp(data_str(a.body[2], "reason"), "not_in_allowlist") &&
			      !strcmp(data_str(a.body[2], "digest"), "sha256:ab") &&
			      data_int(a.body[2], "violation_id") > 0,
		      "violation.opened: the violation, its path (text and bytes) and digest");
		CHECK(data_int(a.body[4], "last_seen") == 2005 && data_int(a.body[4], "interval") == 10 &&
			      data_int(a.body[4], "stale_after") == 2035,
		      "agent.stale: last seen, interval, when it turned stale");
		CHECK(!strcmp(data_str(a.body[5], "actor"), "alice") &&
			      !strcmp(data_str(a.body[6], "actor"), "bob") &&
			      json_is_false(json_object_get(json_object_get(a.body[6], "data"), "purged")) &&
			      json_is_true(json_object_get(json_object_get(a.body[7], "data"), "purged")),
		      "agent.reset and agent.retired: who, and whether purged");
		CHECK(strlen(data_str(a.body[0], "ak_name")) == 68, "agent.enrolled: its AK name");
		{
			/* Each event carries the audit head its transaction saw when it wrote
			 * the event: the trail grows between them (trust changes, the reset). */
			bool heads = true;
			int64_t last = -1;

			for (int i = 0; i < 8; i++) {
				json_t *h = json_object_get(a.body[i], "audit_head");
				const char *hash = json_string_value(json_object_get(h, "hash"));
				int64_t seq = json_integer_value(json_object_get(h, "seq"));

				heads = heads && json_is_integer(json_object_get(h, "seq")) && hash &&
					strlen(hash) == 64 && seq >= last;
				last = seq;
			}
			json_t *h5 = json_object_get(a.body[5], "audit_head");
			json_t *h6 = json_object_get(a.body[6], "audit_head");
			json_t *s5 = json_object_get(h5, "signed");

			CHECK(heads, "every event carries the audit head (seq, hash), never going back");
			CHECK(json_integer_value(json_object_get(h6, "seq")) >
				      json_integer_value(json_object_get(h5, "seq")) &&
				      json_integer_value(json_object_get(h5, "seq")) >= 1,
			      "the retirement's head is past the reset's");
			CHECK(!json_object_get(json_object_get(a.body[4], "audit_head"), "signed") &&
				      json_integer_value(json_object_get(s5, "seq")) ==
					      json_integer_value(json_object_get(
						      json_object_get(a.body[4], "audit_head"), "seq")) &&
				      json_integer_value(json_object_get(s5, "time")) == 2049 &&
				      !strcmp(json_string_value(json_object_get(s5, "signature")),
					      "MAYCAQECAQE=") &&
				      !strcmp(json_string_value(json_object_get(s5, "public_key")),
					      "MAIFAA=="),
			      "and, once the head is signed, the signed head with its signature and key");
		}
	}
	rows_release(&b);
	b = claim(st, HOOK_A, 3001, 60);
	CHECK(b.n == 0, "claimed rows are not due again within their lease");
	rows_release(&b);
	b = claim(st, HOOK_A, 3061, 60);
	CHECK(b.n == 8, "after it they are (a verifier that died)");
	rows_release(&b);
	CHECK(a.n >= 2 && settle1(st, a.id[0], STORE_OUTBOX_FAILED, 4000, "connection refused") == 1,
	      "a failed delivery");
	b = claim(st, HOOK_A, 3120, 0);
	CHECK(b.n == 0, "waits for its next attempt (and the others for their lease)");
	rows_release(&b);
	b = claim(st, HOOK_A, 3121, 0);
	CHECK(b.n == 7 && b.id[0] == a.id[1], "the others' lease ends first (%d)", b.n);
	rows_release(&b);
	b = claim(st, HOOK_A, 4000, 0);
	CHECK(b.n == 8 && b.id[0] == a.id[0] && b.attempts[0] == 1 && b.attempts[1] == 0,
	      "due at its next attempt, one attempt counted, still first");
	rows_release(&b);
	b = claim(st, HOOK_A, 99999, 0);
	CHECK(b.n == 8, "all due later");
	rows_release(&b);
	b = (struct rows){ 0 };
	CHECK(store_outbox_claim(st, HOOK_A, 99999, 0, 3, rows_cb, &b) == 0 && b.n == 3 &&
		      b.id[0] == a.id[0],
	      "a claim takes at most its limit, oldest first");
	rows_release(&b);
	CHECK(a.n >= 3 && settle1(st, a.id[1], STORE_OUTBOX_UNTRIED, 200000, NULL) == 1,
	      "a row left untried");
	b = claim(st, HOOK_A, 199999, 0);
	CHECK(b.n == 7 && b.id[0] == a.id[0] && b.id[1] == a.id[2],
	      "is not due before the time it was given (%d)", b.n);
	rows_release(&b);
	b = claim(st, HOOK_A, 200000, 0);
	CHECK(b.n == 8 && b.id[1] == a.id[1] && b.attempts[1] == 0,
	      "then it is, in its place, no attempt counted");
	rows_release(&b);
	{
		struct store_outbox_settle v[32];
		size_t n = 0;

		for (int i = 0; i < a.n && i < 32; i++)
			v[n++] = (struct store_outbox_settle){ .row = a.id[i],
				.outcome = STORE_OUTBOX_DELIVERED };
		v[n++] = (struct store_outbox_settle){ .row = a.id[0],
			.outcome = STORE_OUTBOX_DELIVERED };
		CHECK(store_outbox_settle(st, v, n) == a.n,
		      "a batch settled in one call; a row named twice counts once");
	}
	CHECK(pending(st, HOOK_A) == 0 && pending(st, HOOK_B) == 8 && pending(st, NULL) == 8,
	      "delivered rows are gone; the other webhook's wait");
	CHECK(settle1(st, a.id[0], STORE_OUTBOX_DELIVERED, 0, NULL) == 0 &&
		      settle1(st, a.id[0], STORE_OUTBOX_FAILED, 1, "x") == 0 &&
		      settle1(st, a.id[0], STORE_OUTBOX_UNTRIED, 1, NULL) == 0,
	      "a row delivered already is skipped (0 settled)");
	CHECK(settle1(st, a.id[0], (enum store_outbox_outcome)7, 1, NULL) == -EINVAL,
	      "an unknown outcome: -EINVAL");
	rows_release(&a);
	drain(st, HOOK_B, 99999);
	CHECK(pending(st, NULL) == 0, "all delivered");
	CHECK(store_set_webhooks(st, NULL, 0) == 0 && enroll(st, "ev-2", 51, 51, 5000, &r) == 0 &&
		      activate(st, "ev-2", 51, 5001) == 0 && pending(st, NULL) == 0,
	      "no webhook again: nothing written");
}

/* Events are written with their change or not at all. */
static void test_events_atomic(void)
{
	struct store *st = shared_store;
	const char *const hooks[] = { HOOK_A };
	enum store_enroll_result r;
	struct store_round_violation bad = { .reason = "not_in_allowlist", .digest = "sha256:00",
					     .template_name = "ima-ng" }; /* path NULL: refused */
	struct boot_state bs;
	struct store_round rd;
	uint64_t ver = 0;
	int64_t vid;

	CHECK(store_set_webhooks(st, hooks, 1) == 0 && enroll(st, "at-1", 60, 60, 6000, &r) == 0 &&
		      activate(st, "at-1", 60, 6001) == 0,
	      "an agent, one webhook");
	drain(st, HOOK_A, 99999);
	store_boot_get(st, "at-1", &bs, &ver);
	bs.started = true;
	bs.boot_number = 1;
	memset(&rd, 0, sizeof(rd));
	rd.agent = "at-1";
	rd.prev_version = ver;
	rd.next = &bs;
	rd.trusted = false;
	rd.reasons_json = "[]";
	rd.violations = &bad;
	rd.nviolations = 1;
	rd.now = 6002;
	CHECK(store_round_commit(st, &rd, &vid) != 0, "a round that fails inside its transaction");
	CHECK(pending(st, NULL) == 0, "leaves no event behind");
	CHECK(store_agent_retire(st, "at-1", 6003, "alice", false) == 0 &&
		      store_agent_retire(st, "at-1", 6004, "alice", false) == -EALREADY &&
		      pending(st, NULL) == 1,
	      "a refused retirement raises nothing");
	CHECK(store_set_webhooks(st, NULL, 0) == 0, "webhooks off");
}

int main(void)
{
	char uri[300], cmd[300];

	if (!mkdtemp(tmp_dir))
		return 1;
	printf("# backend: %s\n", teststore_backend());
	CHECK(teststore_uri(tmp_dir, "lifecycle", uri, sizeof(uri)) == 0 &&
		      store_open(uri, &shared_store) == 0,
	      "open");
	if (shared_store) {
		CASE(test_retire);
		CASE(test_purge);
		CASE(test_reset);
		CASE(test_liveness);
		CASE(test_events);
		CASE(test_events_atomic);
		store_close(shared_store);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", tmp_dir);
	return check_finish();
}
