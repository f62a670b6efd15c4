/* store_sqlite.c: enrollment decisions, nonce consumption, rounds, violation dedup, policies. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "verifier/store.h"

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

static void test_agents(struct store *st)
{
	struct store_agent a, got;
	enum store_enroll_result r;
	uint8_t digest[32];
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
	CHECK(store_agent_set_policy(st, "db-01", "strict") == 0, "set policy");
	CHECK(store_agent_set_policy(st, "ghost", "strict") == -ENOENT, "policy unknown agent");
}

static void test_rounds(struct store *st)
{
	struct boot_state bs, got;
	struct attest_violation v[2];
	struct store_round r;
	struct viol_seen seen = { 0 };
	struct store_counts counts;
	int64_t id1 = 0, id2 = 0;
	int n = 0;

	CHECK(store_boot_get(st, "web-01", &got) == 0 && !got.started, "no boot state");
	memset(&bs, 0, sizeof(bs));
	bs.started = true;
	bs.boot_number = 1;
	bs.reset_count = 5;
	bs.next_entry = 42;
	bs.replay.entries = 42;
	memset(bs.replay.sha256, 0x5a, sizeof(bs.replay.sha256));
	memset(v, 0, sizeof(v));
	snprintf(v[0].path, sizeof(v[0].path), "/usr/bin/evil");
	snprintf(v[0].digest, sizeof(v[0].digest), "sha256:abcd");
	v[0].reason = REASON_NOT_IN_ALLOWLIST;
	snprintf(v[0].template_name, sizeof(v[0].template_name), "ima-ng");
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
	CHECK(store_boot_get(st, "web-01", &got) == 0 && memcmp(&got, &bs, sizeof(bs)) == 0,
	      "boot state round trip");
	r.trusted = true;
	r.reasons_json = "[]";
	r.nviolations = 1;
	r.now = 2001;
	CHECK(store_round_commit(st, &r, &id2) == 0 && id2 > id1, "round 2");
	CHECK(store_violations_list(st, VIOLATION_OPEN, "web-01", 100, viol_cb, &seen) == 0 &&
		      seen.n == 1 && seen.count == 3,
	      "violation deduplicated (n=%d count=%llu)", seen.n, (unsigned long long)seen.count);
	CHECK(store_verdicts_list(st, "web-01", 10, verdict_cb, &n) == 0 && n == 1,
	      "verdict list");
	CHECK(store_counts(st, &counts) == 0 && counts.violations_open == 1 &&
		      counts.verdicts_trusted == 1 && counts.verdicts_untrusted == 1 &&
		      counts.agents_active == 1 && counts.agents_pending == 1,
	      "counts");
	CHECK(store_violation_set_state(st, seen.id, VIOLATION_APPROVED) == 0, "approve");
	CHECK(store_violation_set_state(st, 12345, VIOLATION_APPROVED) == -ENOENT,
	      "approve unknown");
	seen.n = 0;
	CHECK(store_violations_list(st, VIOLATION_OPEN, NULL, 100, viol_cb, &seen) == 0 &&
		      seen.n == 0,
	      "no open violations left");
}

static void test_policies(struct store *st)
{
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
}

int main(void)
{
	char dir[] = "/tmp/test_store.XXXXXX", path[256];
	struct store *st = NULL;
	struct store_agent a;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/state.db", dir);
	CHECK(store_open(path, &st) == 0, "open");
	if (st) {
		CHECK_CASE("agents", test_agents(st));
		CHECK_CASE("rounds", test_rounds(st));
		CHECK_CASE("policies", test_policies(st));
		store_close(st);
	}
	/* Reopen: everything committed is there. */
	st = NULL;
	CHECK(store_open(path, &st) == 0, "reopen");
	if (st) {
		CHECK(store_agent_get(st, "web-01", &a) == 0 && a.state == AGENT_ACTIVE,
		      "durable after reopen");
		store_agent_release(&a);
	}
	store_close(st);
	store_close(NULL);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path) != 0)
		fprintf(stderr, "cleanup of %s failed\n", dir);
	return check_finish();
}
