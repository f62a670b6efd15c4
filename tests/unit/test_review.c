/*
 * verifier/service/review.c against a real SQLite store: approving a learnable violation writes a new
 * version of the agent's amendment (by default) or of its policy (scope policy) that allows the
 * file's raw bytes, and closes it; approving what no policy entry fixes is refused with what to
 * do instead; a decision stands; dismissing touches no policy; unknown ids, a policy that does
 * not exist and violations without a usable digest are refused with nothing changed. Boot
 * findings follow the same scopes into a `boot` section, or are refused when nothing in a boot
 * policy fixes them. A PUT or a rollback landing between an approval's read and its write
 * (app->before_policy_write) stands, with the approved file on top; under writes that never
 * stop the approval gives up and nothing is decided.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/encoding.h"
#include "tests/lib/teststore.h"
#include "tests/unit/check.h"
#include "verifier/policy/boot_policy.h"
#include "verifier/policy/policy.h"
#include "verifier/service/policy_history.h"
#include "verifier/service/review.h"

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

/* An active agent "web-01" on the default policy, one round with five violations. */
static int seed(struct store *st)
{
	static uint8_t key[8] = { 1 }, digest[32];
	static char hex[7 + 64 + 1];
	static const char raw[] = "/usr/bin/t\xffol"; /* not UTF-8 */
	struct store_round_violation v[5];
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
	memset(v, 0, sizeof(v));
	v[0] = (struct store_round_violation){ .entry = 1, .reason = "not_in_allowlist",
					       .path = "/usr/bin/new", .digest = hex };
	v[1] = (struct store_round_violation){ .entry = 2, .reason = "violation_entry",
					       .path = "/var/log/x", .digest = hex };
	v[2] = (struct store_round_violation){ .entry = 3, .reason = "not_in_allowlist",
					       .path = "/usr/bin/other", .digest = hex };
	v[3] = (struct store_round_violation){ .entry = 4, .reason = "not_in_allowlist",
					       .path = "/usr/bin/nodigest", .digest = "sha256:abcd" };
	v[4] = (struct store_round_violation){ .entry = 5, .reason = "not_in_allowlist",
					       .path = raw, .path_len = sizeof(raw) - 1,
					       .digest = hex };
	for (int i = 0; i < 5; i++)
		v[i].template_name = "ima-ng";
	memset(&bs, 0, sizeof(bs));
	bs.started = true;
	bs.boot_number = 1;
	bs.next_entry = 6;
	memset(&r, 0, sizeof(r));
	r.agent = "web-01";
	r.next = &bs;
	r.reasons_json = "[]";
	r.next_offset = 6;
	r.violations = v;
	r.nviolations = 5;
	r.now = 102;
	return store_round_commit(st, &r, &vid);
}

/* Policy `name` (newest version) allows path (path_len raw bytes) with digest 0xab... */
static bool allows(struct store *st, const char *name, const char *path, size_t path_len,
		   int64_t *version)
{
	uint8_t digest[32];
	char *json = NULL, err[128];
	struct policy *p;
	bool ok;

	memset(digest, 0xab, sizeof(digest));
	*version = 0;
	if (store_policy_get(st, name, &json, version))
		return false;
	p = policy_load(json, strlen(json), err, sizeof(err));
	free(json);
	ok = p && policy_check(p, path, path_len, TPM2_ALG_SHA256, digest, 32) == POLICY_ALLOWED;
	policy_free(p);
	return ok;
}

static bool still_open(struct store *st, int64_t id)
{
	struct found f = { 0 };

	store_violations_list(st, VIOLATION_OPEN, "web-01", 10, collect, &f);
	for (int i = 0; i < f.n; i++)
		if (f.id[i] == id)
			return true;
	return false;
}

#define BOOT_KERNEL "sha256:834c9fac477eecef074f8d88cd0a659fa58c978e308290c549731d854127d4bd"
#define BOOT_CMDLINE "console=ttyS0 root=/dev/vda ima_policy=tcb"

/* Commits a next round of web-01 (after its stored boot state) with these violations. */
static int commit_round(struct store *st, const struct store_round_violation *v, size_t n,
			int64_t now)
{
	struct store_round r;
	struct boot_state bs;
	uint64_t ver = 0;
	int64_t vid;

	if (store_boot_get(st, "web-01", &bs, &ver))
		return -1;
	memset(&r, 0, sizeof(r));
	r.agent = "web-01";
	r.prev_version = ver;
	r.next = &bs;
	r.reasons_json = "[]";
	r.next_offset = bs.next_entry;
	r.violations = v;
	r.nviolations = n;
	r.now = now;
	return store_round_commit(st, &r, &vid);
}

/*
 * A second round of web-01 with four boot findings, stored as attest.c stores them (the
 * subject as the path, the BOOT_CAT_* as the template name): a kernel and a command line the
 * boot policy does not allow, Secure Boot in the wrong state, an event that cannot be judged.
 */
static int seed_boot(struct store *st)
{
	struct store_round_violation v[4];

	memset(v, 0, sizeof(v));
	v[0] = (struct store_round_violation){ .entry = 10, .reason = "boot_not_in_policy",
					       .path = "PCR 4: EFI application \"kernel\" (1954816 bytes)",
					       .digest = BOOT_KERNEL, .template_name = BOOT_CAT_KERNEL };
	v[1] = (struct store_round_violation){ .entry = 21, .reason = "boot_not_in_policy",
					       .path = BOOT_CMDLINE, .digest = BOOT_KERNEL,
					       .template_name = BOOT_CAT_CMDLINE };
	v[2] = (struct store_round_violation){ .entry = 4, .reason = "secure_boot_mismatch",
					       .path = "PCR 7: Secure Boot off", .digest = BOOT_KERNEL,
					       .template_name = BOOT_CAT_SECURE_BOOT };
	v[3] = (struct store_round_violation){ .entry = 0, .reason = "boot_unverifiable",
					       .path = "", .digest = "", .template_name = BOOT_CAT_EVENT };
	return commit_round(st, v, 4, 104);
}

/* The boot section of policy document `name` (newest version); NULL if it has none. */
static struct policy *load_named(struct store *st, const char *name)
{
	char *json = NULL, err[128];
	struct policy *p;
	int64_t version;

	if (store_policy_get(st, name, &json, &version))
		return NULL;
	p = policy_load(json, strlen(json), err, sizeof(err));
	free(json);
	return p;
}

/* A round of web-01 with one command-line finding: `line` broke the boot policy. */
static int seed_cmdline(struct store *st, const char *line)
{
	struct store_round_violation v = { .entry = 21, .reason = "boot_not_in_policy", .path = line,
					   .digest = BOOT_KERNEL, .template_name = BOOT_CAT_CMDLINE };

	return commit_round(st, &v, 1, 106);
}

/* Policy `name`'s newest text with its "boot" section replaced by `boot` (JSON). */
static int put_boot_section(struct store *st, const char *name, const char *boot)
{
	char *json = NULL, *out = NULL;
	int64_t version;
	json_t *doc, *b = json_loads(boot, 0, NULL);
	int ret = -1;

	if (store_policy_get(st, name, &json, &version))
		goto out;
	doc = json_loads(json, 0, NULL);
	if (doc && b && json_object_set(doc, "boot", b) == 0)
		out = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (out)
		ret = store_policy_put(st, name, out, "test", 105, &version);
out:
	json_decref(b);
	free(json);
	free(out);
	return ret;
}

static bool boot_lists_kernel(const struct policy *p)
{
	const struct boot_policy *bp = policy_boot(p);
	uint8_t d[32];

	hex_decode(BOOT_KERNEL + 7, 64, d, sizeof(d));
	return bp && bp->kernels.set && bp->kernels.n == 1 && !memcmp(bp->kernels.v[0].d, d, 32);
}

static bool boot_lists_cmdline(const struct policy *p)
{
	const struct boot_policy *bp = policy_boot(p);

	return bp && bp->cmdline.nexact == 1 && !strcmp(bp->cmdline.exact[0], BOOT_CMDLINE);
}

#define RACES 4

/* A third round of web-01: RACES files outside the policy, /usr/bin/race0 ... race3. */
static int seed_race(struct store *st)
{
	static char hex[7 + 64 + 1], paths[RACES][32];
	struct store_round_violation v[RACES];
	uint8_t digest[32];

	memset(digest, 0xab, sizeof(digest));
	snprintf(hex, sizeof(hex), "sha256:");
	hex_encode(digest, 32, hex + 7);
	memset(v, 0, sizeof(v));
	for (int i = 0; i < RACES; i++) {
		snprintf(paths[i], sizeof(paths[i]), "/usr/bin/race%d", i);
		v[i] = (struct store_round_violation){ .entry = 100 + (uint64_t)i,
						       .reason = "not_in_allowlist", .path = paths[i],
						       .digest = hex, .template_name = "ima-ng" };
	}
	return commit_round(st, v, RACES, 105);
}

struct find_path {
	const char *path;
	int64_t id;
};

static int find_path_cb(void *arg, const struct store_violation *v)
{
	struct find_path *f = arg;

	if (v->path_len == strlen(f->path) && !memcmp(v->path, f->path, v->path_len))
		f->id = v->id;
	return 0;
}

/* The id of web-01's open violation of `path`; 0 if none. */
static int64_t open_id(struct store *st, const char *path)
{
	struct find_path f = { path, 0 };

	store_violations_list(st, VIOLATION_OPEN, "web-01", 100, find_path_cb, &f);
	return f.id;
}

/* Policy `name` (newest version) lists path with digest 0xcd... (what race_put() writes). */
static bool allows_cd(struct store *st, const char *name, const char *path)
{
	uint8_t digest[32];
	char *json = NULL, err[128];
	struct policy *p;
	int64_t version;
	bool ok;

	memset(digest, 0xcd, sizeof(digest));
	if (store_policy_get(st, name, &json, &version))
		return false;
	p = policy_load(json, strlen(json), err, sizeof(err));
	free(json);
	ok = p && policy_check(p, path, strlen(path), TPM2_ALG_SHA256, digest, 32) ==
			  POLICY_ALLOWED;
	policy_free(p);
	return ok;
}

/* What the hooks below do between an approval's read and its write, and how often. */
static struct {
	int runs, left;           /* calls so far; calls that still write (-1: every one) */
	int64_t rollback_to;      /* race_rollback(): the version */
	enum history_status hs;   /* race_rollback(): its outcome */
	int64_t wrote;            /* the version the last write made */
} race;

/* An operator's PUT of a whole new text (listing /usr/bin/put-N with digest 0xcd...). */
static void race_put(struct app *app, const char *name)
{
	char text[256];

	race.runs++;
	if (!race.left)
		return;
	if (race.left > 0)
		race.left--;
	snprintf(text, sizeof(text), "{\"version\": 1, \"digests\": {\"/usr/bin/put-%d\": [\"sha256:%s\"]}}",
		 race.runs, "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd");
	if (store_policy_put(app->store, name, text, "test (a PUT)", 106, &race.wrote))
		race.wrote = -1;
}

/* An operator's rollback of `name` to race.rollback_to. */
static void race_rollback(struct app *app, const char *name)
{
	struct history_rollback hr;

	race.runs++;
	if (!race.left)
		return;
	if (race.left > 0)
		race.left--;
	race.hs = policy_history_rollback(app, name, strchr(name, '/') != NULL, race.rollback_to,
					  "operator", &hr);
	race.wrote = race.hs == HISTORY_OK ? hr.version : -1;
}

/*
 * The verifier's app on a store seeded with 5 violations of web-01 (seed()), their ids, and
 * web-01's amendment's name: set up once in main(). The cases run in order: each decides
 * violations on the store the ones before it left.
 */
static struct app rapp;
static char amendment[STORE_AMENDMENT_NAME_MAX + 1];
static int64_t id_learn, id_viol, id_other, id_nodigest, id_rawpath;

static void test_refusals_change_nothing(void)
{
	struct review_result r;
	int64_t version = 0;

	CHECK(review_decide(&rapp, 999999, VIOLATION_APPROVED, REVIEW_SCOPE_AGENT, "operator", &r) ==
		      REVIEW_UNKNOWN_VIOLATION,
	      "unknown violation refused");
	CHECK(review_decide(&rapp, 0, VIOLATION_DISMISSED, REVIEW_SCOPE_AGENT, "operator", &r) ==
		      REVIEW_UNKNOWN_VIOLATION,
	      "id 0 refused");
	CHECK(review_decide(&rapp, id_learn, VIOLATION_APPROVED, REVIEW_SCOPE_POLICY, "operator", &r) ==
		      REVIEW_UNKNOWN_POLICY && strstr(r.why, "does not exist") && still_open(rapp.store, id_learn),
	      "widening a policy that does not exist is refused (%s)", r.why);
	CHECK(review_decide(&rapp, id_viol, VIOLATION_APPROVED, REVIEW_SCOPE_AGENT, "operator", &r) ==
		      REVIEW_NOT_APPROVABLE && strstr(r.why, "\"violations\": \"ignore\"") &&
		      strstr(r.why, "dismiss") && still_open(rapp.store, id_viol),
	      "approving a violation entry is refused with what to do instead (%s)", r.why);
	CHECK(review_decide(&rapp, id_nodigest, VIOLATION_APPROVED, REVIEW_SCOPE_AGENT, "operator", &r) ==
		      REVIEW_NOT_APPROVABLE && strstr(r.why, "digest length does not match the algorithm") &&
		      still_open(rapp.store, id_nodigest),
	      "a violation without a usable digest (hex too short for sha256) is not approvable,"
	      " and the why says so (%s)", r.why);
	CHECK(store_policy_version(rapp.store, POLICY_DEFAULT_NAME, &version) == -ENOENT &&
		      store_policy_version(rapp.store, amendment, &version) == -ENOENT,
	      "no policy and no amendment written");
}

static void test_approve_for_this_agent_only(void)
{
	char *json = NULL;
	struct review_result r;
	int64_t version = 0;

	CHECK(review_decide(&rapp, id_learn, VIOLATION_APPROVED, REVIEW_SCOPE_AGENT, "operator", &r) == REVIEW_OK &&
		      r.into_amendment && !r.into_policy && r.amendment_version == 1 &&
		      !strcmp(r.policy, POLICY_DEFAULT_NAME) && !strcmp(r.agent, "web-01"),
	      "the file goes into web-01's amendment, version 1");
	CHECK(allows(rapp.store, amendment, "/usr/bin/new", 12, &version) && version == 1,
	      "the amendment allows the approved file");
	CHECK(store_policy_version(rapp.store, POLICY_DEFAULT_NAME, &version) == -ENOENT,
	      "the shared policy is untouched");
	CHECK(review_decide(&rapp, id_learn, VIOLATION_DISMISSED, REVIEW_SCOPE_AGENT, "operator", &r) ==
		      REVIEW_ALREADY_DECIDED && strstr(r.why, "approved"),
	      "a decided violation stays decided (%s)", r.why);
	CHECK(review_decide(&rapp, id_rawpath, VIOLATION_APPROVED, REVIEW_SCOPE_AGENT, "operator", &r) == REVIEW_OK &&
		      r.amendment_version == 2 && r.path_escaped &&
		      !strcmp(r.path, "/usr/bin/t\\xffol"),
	      "a path that is not UTF-8: approved (shown as %s)", r.path);
	CHECK(allows(rapp.store, amendment, "/usr/bin/t\xffol", 13, &version) && version == 2,
	      "the amendment allows the raw bytes");
	CHECK(!allows(rapp.store, amendment, "/usr/bin/t\\xffol", 16, &version),
	      "and not a file named with a backslash");
	CHECK(store_policy_get(rapp.store, amendment, &json, &version) == 0 &&
		      strstr(json, "\"digests_hex\"") && strstr(json, "\"2f7573722f62696e2f74ff6f6c\"") &&
		      !strstr(json, "xffol"),
	      "its policy text carries the raw path as hex under digests_hex");
	free(json);
}

static void test_approve_into_the_policy(void)
{
	struct review_result r;
	int64_t version = 0;
	int64_t v2 = 0;

	CHECK(store_policy_put(rapp.store, POLICY_DEFAULT_NAME,
			       "{\"version\": 1, \"digests\": {}}", "test", 103, &v2) == 0 && v2 == 1,
	      "a default policy exists now");
	CHECK(review_decide(&rapp, id_other, VIOLATION_APPROVED, REVIEW_SCOPE_POLICY, "operator", &r) == REVIEW_OK &&
		      r.into_policy && !r.into_amendment && r.policy_version == 2 &&
		      r.policy_agents == 1,
	      "scope policy: default version 2, used by 1 agent (%llu)",
	      (unsigned long long)r.policy_agents);
	CHECK(allows(rapp.store, POLICY_DEFAULT_NAME, "/usr/bin/other", 14, &version) && version == 2,
	      "the shared policy allows it");
}

static void test_dismiss(void)
{
	struct found f = { 0 };
	struct review_result r;
	int64_t version = 0;

	CHECK(review_decide(&rapp, id_viol, VIOLATION_DISMISSED, REVIEW_SCOPE_AGENT, "operator", &r) == REVIEW_OK &&
		      !r.into_policy && !r.into_amendment,
	      "dismissing closes without teaching");
	CHECK(store_policy_version(rapp.store, POLICY_DEFAULT_NAME, &version) == 0 && version == 2 &&
		      store_policy_version(rapp.store, amendment, &version) == 0 && version == 2,
	      "no new version for a dismissal");
	memset(&f, 0, sizeof(f));
	CHECK(store_violations_list(rapp.store, VIOLATION_OPEN, "web-01", 10, collect, &f) == 0 &&
		      f.n == 1 && f.id[0] == id_nodigest,
	      "only the refused one is still open");
}

static void test_boot_findings_scoped_like_files(void)
{
	struct found f = { 0 };
	struct review_result r;
	int64_t version = 0;

	CHECK(seed_boot(rapp.store) == 0, "a round with four boot findings");
	memset(&f, 0, sizeof(f));
	CHECK(store_violations_list(rapp.store, VIOLATION_OPEN, "web-01", 10, collect, &f) == 0 &&
		      f.n == 5,
	      "five open: the refused file and four boot findings (%d)", f.n);
	{
		/* the second round's, after the first round's five */
		int64_t kernel = id_rawpath + 1, cmd = id_rawpath + 2, sb = id_rawpath + 3,
			unverifiable = id_rawpath + 4;
		struct policy *p;
		int64_t before = 0, after = 0;

		CHECK(review_decide(&rapp, sb, VIOLATION_APPROVED, REVIEW_SCOPE_AGENT, "operator", &r) ==
			      REVIEW_NOT_APPROVABLE && strstr(r.why, "Secure Boot") &&
			      strstr(r.why, "dismiss") && still_open(rapp.store, sb),
		      "Secure Boot in the wrong state is refused with what to do instead (%s)", r.why);
		CHECK(review_decide(&rapp, unverifiable, VIOLATION_APPROVED, REVIEW_SCOPE_POLICY, "operator", &r) ==
			      REVIEW_NOT_APPROVABLE && strstr(r.why, "cannot be judged") &&
			      still_open(rapp.store, unverifiable),
		      "an event that cannot be judged is refused too (%s)", r.why);
		store_policy_version(rapp.store, POLICY_DEFAULT_NAME, &before);
		CHECK(review_decide(&rapp, kernel, VIOLATION_APPROVED, REVIEW_SCOPE_AGENT, "operator", &r) ==
			      REVIEW_OK && r.into_amendment && !r.into_policy,
		      "the kernel, for this agent only: into its amendment (%s)", r.why);
		p = load_named(rapp.store, amendment);
		CHECK(p && boot_lists_kernel(p) && !boot_lists_cmdline(p),
		      "the amendment's boot section lists the kernel, and only it");
		CHECK(p && allows(rapp.store, amendment, "/usr/bin/new", 12, &version),
		      "its earlier file approvals are kept");
		policy_free(p);
		p = load_named(rapp.store, POLICY_DEFAULT_NAME);
		CHECK(p && !policy_boot(p) && store_policy_version(rapp.store, POLICY_DEFAULT_NAME,
								   &after) == 0 && after == before,
		      "the shared policy is untouched: no boot section, no new version");
		policy_free(p);
		CHECK(review_decide(&rapp, cmd, VIOLATION_APPROVED, REVIEW_SCOPE_POLICY, "operator", &r) ==
			      REVIEW_OK && r.into_policy && r.policy_version == before + 1,
		      "the command line for the policy: a new version of it (%s)", r.why);
		p = load_named(rapp.store, POLICY_DEFAULT_NAME);
		CHECK(p && boot_lists_cmdline(p) && !boot_lists_kernel(p) &&
			      allows(rapp.store, POLICY_DEFAULT_NAME, "/usr/bin/other", 14, &version),
		      "the policy's boot section allows that exact command line; its files are kept");
		policy_free(p);
		p = load_named(rapp.store, amendment);
		CHECK(p && !boot_lists_cmdline(p), "and the amendment does not");
		policy_free(p);
		CHECK(review_decide(&rapp, sb, VIOLATION_DISMISSED, REVIEW_SCOPE_AGENT, "operator", &r) == REVIEW_OK &&
			      review_decide(&rapp, unverifiable, VIOLATION_DISMISSED, REVIEW_SCOPE_AGENT, "operator",
					    &r) == REVIEW_OK,
		      "the refused boot findings can be dismissed");
	}
}

static void test_an_approval_never_undoes_a_put_that_lands_while_it_is_written(void)
{
	struct review_result r;
	int64_t version = 0;

	CHECK(seed_race(rapp.store) == 0, "a round with %d more files outside the policy", RACES);
	{
		int64_t before = 0;

		memset(&race, 0, sizeof(race));
		race.left = 1;
		rapp.before_policy_write = race_put;
		store_policy_version(rapp.store, POLICY_DEFAULT_NAME, &before);
		CHECK(review_decide(&rapp, open_id(rapp.store, "/usr/bin/race0"), VIOLATION_APPROVED,
				    REVIEW_SCOPE_POLICY,"operator", &r) == REVIEW_OK && r.into_policy,
		      "approved into the policy (%s)", r.why);
		CHECK(race.runs >= 1 && race.wrote == before + 1,
		      "the PUT landed between the approval's read and its write (version %lld)",
		      (long long)race.wrote);
		CHECK(allows_cd(rapp.store, POLICY_DEFAULT_NAME, "/usr/bin/put-1"),
		      "the policy keeps what the PUT wrote");
		CHECK(allows(rapp.store, POLICY_DEFAULT_NAME, "/usr/bin/race0", 14, &version) &&
			      version == r.policy_version && r.policy_version == race.wrote + 1,
		      "and allows the approved file, in the version after the PUT's (%lld)",
		      (long long)r.policy_version);
		CHECK(!allows(rapp.store, POLICY_DEFAULT_NAME, "/usr/bin/other", 14, &version),
		      "what the PUT removed stays removed");
	}
}

static void test_an_approval_never_undoes_a_rollback_that_lands_while_it_is_written(void)
{
	struct review_result r;
	int64_t version = 0;

	{
		memset(&race, 0, sizeof(race));
		race.left = 1;
		race.rollback_to = 2; /* "/usr/bin/other" approved, before the boot approval */
		rapp.before_policy_write = race_rollback;
		CHECK(review_decide(&rapp, open_id(rapp.store, "/usr/bin/race1"), VIOLATION_APPROVED,
				    REVIEW_SCOPE_POLICY,"operator", &r) == REVIEW_OK && r.into_policy,
		      "approved into the policy (%s)", r.why);
		CHECK(race.hs == HISTORY_OK && race.wrote > 0,
		      "the rollback to version 2 landed in between (version %lld)",
		      (long long)race.wrote);
		CHECK(allows(rapp.store, POLICY_DEFAULT_NAME, "/usr/bin/race1", 14, &version) &&
			      r.policy_version == race.wrote + 1 &&
			      allows(rapp.store, POLICY_DEFAULT_NAME, "/usr/bin/other", 14, &version),
		      "the approved file goes on top of version 2's text");
		CHECK(!allows_cd(rapp.store, POLICY_DEFAULT_NAME, "/usr/bin/put-1") &&
			      !allows(rapp.store, POLICY_DEFAULT_NAME, "/usr/bin/race0", 14, &version),
		      "what the rollback withdrew stays withdrawn");

		memset(&race, 0, sizeof(race));
		race.left = 1;
		race.rollback_to = 0; /* the empty amendment: every approval for web-01 withdrawn */
		CHECK(review_decide(&rapp, open_id(rapp.store, "/usr/bin/race2"), VIOLATION_APPROVED,
				    REVIEW_SCOPE_AGENT, "operator", &r) == REVIEW_OK && r.into_amendment,
		      "approved for web-01 only (%s)", r.why);
		CHECK(race.hs == HISTORY_OK && r.amendment_version == race.wrote + 1,
		      "the amendment's rollback to nothing landed in between");
		CHECK(allows(rapp.store, amendment, "/usr/bin/race2", 14, &version) &&
			      !allows(rapp.store, amendment, "/usr/bin/new", 12, &version),
		      "the amendment holds the approved file and nothing the rollback withdrew");
	}
}

static void test_a_policy_written_under_every_approval_attempt_refused_nothing_decided(void)
{
	struct review_result r;
	int64_t version = 0;

	{
		int64_t id = open_id(rapp.store, "/usr/bin/race3");

		memset(&race, 0, sizeof(race));
		race.left = -1;
		rapp.before_policy_write = race_put;
		CHECK(review_decide(&rapp, id, VIOLATION_APPROVED, REVIEW_SCOPE_POLICY,"operator", &r) ==
			      REVIEW_CONFLICT && strstr(r.why, "retry") && still_open(rapp.store, id),
		      "the approval gives up after %d attempts, the violation stays open (%s)",
		      race.runs, r.why);
		CHECK(store_policy_version(rapp.store, POLICY_DEFAULT_NAME, &version) == 0 &&
			      version == race.wrote &&
			      !allows(rapp.store, POLICY_DEFAULT_NAME, "/usr/bin/race3", 14, &version),
		      "the last PUT stands, without the file");
		rapp.before_policy_write = NULL;
		CHECK(review_decide(&rapp, id, VIOLATION_APPROVED, REVIEW_SCOPE_POLICY,"operator", &r) ==
			      REVIEW_OK && allows(rapp.store, POLICY_DEFAULT_NAME, "/usr/bin/race3", 14,
						  &version),
		      "approved once the writes stop");
	}
}

static void test_a_command_line_the_policy_s_words_refuse_is_approved_for_the_policy_only(void)
{
	struct review_result r;

	{
		/* An exact command line in an amendment keeps the policy's required and forbidden
		 * words (boot_check.h): approved for one agent, it would close the finding and allow
		 * nothing, and the next judgement of the boot would find it again. */
		static const char line[] = "console=ttyS0 root=/dev/vda";
		struct found open = { 0 };
		int64_t id, before = 0, after = 0;

		CHECK(put_boot_section(rapp.store, POLICY_DEFAULT_NAME,
				       "{\"cmdline\": {\"required\": [\"ima_policy=tcb\"]}}") == 0 &&
			      seed_cmdline(rapp.store, line) == 0,
		      "the policy requires ima_policy=tcb; a round with a command line without it");
		store_violations_list(rapp.store, VIOLATION_OPEN, "web-01", 10, collect, &open);
		id = open.n ? open.id[0] : 0;
		for (int i = 1; i < open.n; i++)
			if (open.id[i] > id)
				id = open.id[i];
		store_policy_version(rapp.store, amendment, &before);
		CHECK(review_decide(&rapp, id, VIOLATION_APPROVED, REVIEW_SCOPE_AGENT, "operator", &r) ==
			      REVIEW_NOT_APPROVABLE && strstr(r.why, "lacks the required \"ima_policy=tcb\"") &&
			      strstr(r.why, "scope policy") && still_open(rapp.store, id),
		      "for this agent alone: refused, with what to do instead (%s)", r.why);
		CHECK(store_policy_version(rapp.store, amendment, &after) == 0 && after == before,
		      "and its amendment has no new version");
		CHECK(review_decide(&rapp, id, VIOLATION_APPROVED, REVIEW_SCOPE_POLICY,"operator", &r) == REVIEW_OK &&
			      r.into_policy && !still_open(rapp.store, id),
		      "for the policy: listed as one of its exact command lines (%s)", r.why);
	}
}

static void test_an_fs_verity_digest_is_approved_typed(void)
{
	char path[256];
	char *json = NULL;
	struct review_result r;
	int64_t version = 0;

	{
		/* attest.c records an ima-sigv2 entry's verity digest as "verity:sha256:hex";
		 * approving it must teach that, or the next round would find it again. */
		static char hex[7 + 7 + 64 + 1];
		uint8_t d[32];
		struct store_round_violation v = { .entry = 30, .reason = "not_in_allowlist",
						   .path = "/usr/bin/verity", .digest = hex,
						   .template_name = "ima-sigv2" };
		struct found open = { 0 };
		struct policy *p = NULL;
		int64_t id;

		json = NULL;
		memset(d, 0xab, sizeof(d));
		snprintf(hex, sizeof(hex), "verity:sha256:");
		hex_encode(d, 32, hex + 14);
		CHECK(commit_round(rapp.store, &v, 1, 107) == 0, "a round with a verity digest");
		store_violations_list(rapp.store, VIOLATION_OPEN, "web-01", 10, collect, &open);
		id = open.n ? open.id[0] : 0;
		for (int i = 1; i < open.n; i++)
			if (open.id[i] > id)
				id = open.id[i];
		CHECK(review_decide(&rapp, id, VIOLATION_APPROVED, REVIEW_SCOPE_AGENT, "operator", &r) ==
			      REVIEW_OK,
		      "approved for web-01 (%s)", r.why);
		if (store_policy_get(rapp.store, amendment, &json, &version) == 0)
			p = policy_load(json, strlen(json), path, sizeof(path));
		CHECK(json && strstr(json, "\"verity:sha256:abab"), "the amendment lists it typed");
		CHECK(p && policy_check_typed(p, "/usr/bin/verity", 15, IMA_DIGEST_VERITY,
					      TPM2_ALG_SHA256, d, 32) == POLICY_ALLOWED &&
			      policy_check_typed(p, "/usr/bin/verity", 15, IMA_DIGEST_IMA,
						 TPM2_ALG_SHA256, d, 32) != POLICY_ALLOWED,
		      "it allows the verity digest, not the same bytes as a file hash");
		policy_free(p);
		free(json);
		json = NULL;
	}
}

int main(void)
{
	char dir[] = "/tmp/test_review.XXXXXX", uri[300];
	struct found f = { 0 };

	policy_cache_init(&rapp.policies);
	policy_cache_init(&rapp.amendments);
	store_amendment_name("web-01", amendment);
	if (!mkdtemp(dir))
		return 1;
	printf("# backend: %s\n", teststore_backend());
	CHECK(teststore_uri(dir, "state", uri, sizeof(uri)) == 0 && store_open(uri, &rapp.store) == 0 &&
		      seed(rapp.store) == 0, "store with 5 violations");
	CHECK(store_violations_list(rapp.store, -1, "web-01", 10, collect, &f) == 0 && f.n == 5,
	      "5 violations listed (%d)", f.n);
	if (f.n != 5)
		return check_finish();
	/* One round stored them in the order given, with consecutive ids. */
	id_learn = f.id[0];

	for (int i = 1; i < f.n; i++)
		if (f.id[i] < id_learn)
			id_learn = f.id[i];
	id_viol = id_learn + 1;
	id_other = id_learn + 2;
	id_nodigest = id_learn + 3;
	id_rawpath = id_learn + 4;

	CASE(test_refusals_change_nothing);
	CASE(test_approve_for_this_agent_only);
	CASE(test_approve_into_the_policy);
	CASE(test_dismiss);
	CASE(test_boot_findings_scoped_like_files);
	CASE(test_an_approval_never_undoes_a_put_that_lands_while_it_is_written);
	CASE(test_an_approval_never_undoes_a_rollback_that_lands_while_it_is_written);
	CASE(test_a_policy_written_under_every_approval_attempt_refused_nothing_decided);
	CASE(test_a_command_line_the_policy_s_words_refuse_is_approved_for_the_policy_only);
	CASE(test_an_fs_verity_digest_is_approved_typed);
	store_close(rapp.store);
	policy_cache_release(&rapp.policies);
	policy_cache_release(&rapp.amendments);
	rmdir(dir);
	return check_finish();
}
