/*
 * verifier/review.c against a real SQLite store: approving a learnable violation writes a new
 * policy version that allows the file and closes it; approving another kind only closes it;
 * dismissing touches no policy; unknown ids and violations without a usable digest are refused
 * with nothing changed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tss2/tss2_tpm2_types.h>

#include "proto/encoding.h"
#include "tests/unit/check.h"
#include "verifier/policy.h"
#include "verifier/review.h"

struct found {
	int64_t id[8];
	enum violation_state state[8];
	int n;
};

static int collect(void *arg, const struct store_violation *v)
{
	struct found *f = arg;

	if (f->n < 8) {
		f->id[f->n] = v->id;
		f->state[f->n] = v->state;
		f->n++;
	}
	return 0;
}

/* An active agent "web-01" on the default policy, one round with three violations. */
static int seed(struct store *st)
{
	static uint8_t key[8] = { 1 }, digest[32];
	static char hex[7 + 64 + 1];
	struct store_round_violation v[4];
	struct store_agent a;
	struct store_round r;
	struct boot_state bs;
	enum store_enroll_result er;
	int64_t vid;

	memset(&a, 0, sizeof(a));
	snprintf(a.id, sizeof(a.id), "web-01");
	a.ek_pub = a.ak_pub = key;
	a.ek_pub_len = a.ak_pub_len = sizeof(key);
	a.ek_cert = key;
	a.ek_cert_len = sizeof(key);
	a.ak_name_len = 34;
	if (store_agent_enroll(st, &a, 100, &er) || store_agent_activate(st, "web-01", a.cred_digest, 101))
		return -1;
	memset(digest, 0xab, sizeof(digest));
	snprintf(hex, sizeof(hex), "sha256:");
	hex_encode(digest, 32, hex + 7);
	v[0] = (struct store_round_violation){ 1, "not_in_allowlist", "/usr/bin/new", hex, "ima-ng" };
	v[1] = (struct store_round_violation){ 2, "violation_entry", "/var/log/x", hex, "ima-ng" };
	v[2] = (struct store_round_violation){ 3, "not_in_allowlist", "/usr/bin/other", hex, "ima-ng" };
	v[3] = (struct store_round_violation){ 4, "not_in_allowlist", "/usr/bin/nodigest", "sha256:zz",
					       "ima-ng" };
	memset(&bs, 0, sizeof(bs));
	bs.started = true;
	bs.boot_number = 1;
	bs.next_entry = 5;
	memset(&r, 0, sizeof(r));
	r.agent = "web-01";
	r.next = &bs;
	r.reasons_json = "[]";
	r.next_offset = 5;
	r.violations = v;
	r.nviolations = 4;
	r.now = 102;
	return store_round_commit(st, &r, &vid);
}

/* The policy `name` allows path with digest 0xab..., as the verifier would judge it. */
static bool policy_allows(struct store *st, const char *path, int64_t *version)
{
	uint8_t digest[32];
	char *json = NULL, err[128];
	struct policy *p;
	bool ok;

	memset(digest, 0xab, sizeof(digest));
	if (store_policy_get(st, POLICY_DEFAULT_NAME, &json, version))
		return false;
	p = policy_load(json, strlen(json), err, sizeof(err));
	free(json);
	ok = p && policy_check(p, path, strlen(path), TPM2_ALG_SHA256, digest, 32) == POLICY_ALLOWED;
	policy_free(p);
	return ok;
}

int main(void)
{
	char dir[] = "/tmp/test_review.XXXXXX", path[256], uri[300];
	struct app app;
	struct review_result r;
	struct found f = { 0 };
	int64_t version = 0;

	memset(&app, 0, sizeof(app));
	policy_cache_init(&app.policies);
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/state.db", dir);
	snprintf(uri, sizeof(uri), "sqlite:%s", path);
	CHECK(store_open(uri, &app.store) == 0 && seed(app.store) == 0, "store with 4 violations");
	CHECK(store_violations_list(app.store, -1, "web-01", 10, collect, &f) == 0 && f.n == 4,
	      "4 violations listed (%d)", f.n);
	if (f.n != 4)
		return check_finish();
	CASE_BEGIN("approve and dismiss");
	/* One round stored them in the order given, with consecutive ids. */
	int64_t learn = f.id[0];

	for (int i = 1; i < f.n; i++)
		if (f.id[i] < learn)
			learn = f.id[i];
	int64_t closeonly = learn + 1, other = learn + 2, nodigest = learn + 3;

	CHECK(review_decide(&app, 999999, VIOLATION_APPROVED, &r) == REVIEW_UNKNOWN_VIOLATION,
	      "unknown violation refused");
	CHECK(review_decide(&app, 0, VIOLATION_DISMISSED, &r) == REVIEW_UNKNOWN_VIOLATION,
	      "id 0 refused");
	CHECK(store_policy_version(app.store, POLICY_DEFAULT_NAME, &version) == -ENOENT,
	      "no policy yet");

	CHECK(review_decide(&app, learn, VIOLATION_APPROVED, &r) == REVIEW_OK && r.into_policy &&
	      !strcmp(r.policy, POLICY_DEFAULT_NAME) && r.policy_version >= 1,
	      "approving not_in_allowlist adds the file to the agent's policy (version %lld)",
	      (long long)r.policy_version);
	CHECK(policy_allows(app.store, "/usr/bin/new", &version) && version == r.policy_version,
	      "the new policy version allows the approved file");
	int64_t after_learn = version;

	CHECK(review_decide(&app, closeonly, VIOLATION_APPROVED, &r) == REVIEW_OK && !r.into_policy,
	      "approving violation_entry only closes it");
	CHECK(store_policy_version(app.store, POLICY_DEFAULT_NAME, &version) == 0 &&
	      version == after_learn, "no new policy version for a violation entry");

	CHECK(review_decide(&app, other, VIOLATION_DISMISSED, &r) == REVIEW_OK && !r.into_policy,
	      "dismissing closes without teaching");
	CHECK(!policy_allows(app.store, "/usr/bin/other", &version) && version == after_learn,
	      "a dismissed file stays unknown to the policy");

	CHECK(review_decide(&app, nodigest, VIOLATION_APPROVED, &r) == REVIEW_NOT_APPROVABLE &&
	      r.why[0], "a violation without a usable digest is not approvable (%s)", r.why);

	memset(&f, 0, sizeof(f));
	CHECK(store_violations_list(app.store, VIOLATION_OPEN, "web-01", 10, collect, &f) == 0 &&
	      f.n == 1 && f.id[0] == nodigest, "only the refused one is still open");

	store_close(app.store);
	policy_cache_release(&app.policies);
	unlink(path);
	rmdir(dir);
	return check_finish();
}
