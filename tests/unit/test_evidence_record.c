/*
 * The evidence of a round kept with its verdict (verifier/decision/evidence_record.h, store.h
 * "Evidence") on a real store (SQLite, or PostgreSQL with ATTEST_TEST_PG): an untrusted round
 * keeps it (a trusted one only with --evidence-keep all; none with none); the exported record
 * reaches the same verdict again through attest_evaluate(), for a first round and for an
 * incremental one (replayed from the state carried over); a changed entry, quote, signature,
 * policy or recorded verdict is found; retention deletes evidence only with its verdict; a
 * purge deletes it all.
 *
 * The agent is software (tests/lib/softtpm), as in test_round.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/encoding.h"
#include "proto/imalog.h"
#include "proto/replay.h"
#include "tests/lib/softtpm.h"
#include "tests/lib/teststore.h"
#include "tests/unit/check.h"
#include "tests/unit/testdata.h"
#include "verifier/decision/evidence_record.h"
#include "verifier/facts/agentcache.h"
#include "verifier/service/round.h"
#include "verifier/service/verdict_evidence.h"

#define AGENT "web-01"
#define MAX_ENTRIES 12

struct machine {
	EVP_PKEY *ak;
	uint8_t list[4096];
	size_t len;
	size_t end[MAX_ENTRIES];
	unsigned n;
	struct pcr_set pcrs;
	struct softtpm_clock clk;
};

static void file_digest(const char *path, uint8_t d[32])
{
	SHA256((const uint8_t *)path, strlen(path), d); /* the "content" is the path */
}

/* Appends an entry and sets PCR 10 to the replay of the whole list, as IMA would have. */
static int machine_run(struct machine *m, const char *alg, const uint8_t *d, size_t dlen,
		       const char *path)
{
	struct replay_ctx *rc = replay_ctx_new(REPLAY_SHA1 | REPLAY_SHA256);
	struct imalog *log = imalog_new();
	struct replay_state pcr10;
	struct ima_entry e;
	ssize_t n;
	int ret = -1;

	if (!rc || !log || m->n >= MAX_ENTRIES)
		goto out;
	n = softtpm_ima_ng_entry(m->list + m->len, sizeof(m->list) - m->len, alg, d, dlen, path,
				 strlen(path), false);
	if (n < 0)
		goto out;
	m->len += (size_t)n;
	m->end[m->n++] = m->len;
	replay_state_init(&pcr10, REPLAY_SHA1 | REPLAY_SHA256);
	imalog_reset(log, m->list, m->len, 0);
	while (imalog_next(log, &e, NULL) == 1)
		if (replay_extend(rc, &pcr10, &e))
			goto out;
	memcpy(pcr_set_bank(&m->pcrs, TPM2_ALG_SHA1)->value[10], pcr10.sha1, 20);
	memcpy(pcr_set_bank(&m->pcrs, TPM2_ALG_SHA256)->value[10], pcr10.sha256, 32);
	m->clk.clock += 10;
	ret = 0;
out:
	replay_ctx_free(rc);
	imalog_free(log);
	return ret;
}

static int machine_file(struct machine *m, const char *path)
{
	uint8_t d[32];

	file_digest(path, d);
	return machine_run(m, "sha256", d, 32, path);
}

static int machine_boot(struct machine *m)
{
	uint8_t zeros[8 * 20] = { 0 }, agg[20];

	memset(&m->pcrs, 0, sizeof(m->pcrs));
	pcr_set_add_bank(&m->pcrs, TPM2_ALG_SHA1)->mask = 0x7ff;
	pcr_set_add_bank(&m->pcrs, TPM2_ALG_SHA256)->mask = 0x7ff;
	m->clk = (struct softtpm_clock){ .clock = 1000, .reset_count = 1, .safe = 1 };
	SHA1(zeros, sizeof(zeros), agg);
	return machine_run(m, "sha1", agg, 20, "boot_aggregate");
}

struct answer {
	struct evidence ev;
	uint8_t attest[LIMIT_ATTEST], sig[LIMIT_SIGNATURE];
};

static int machine_answer(struct machine *m, const struct challenge *c, struct answer *a)
{
	size_t start = c->log_offset ? m->end[c->log_offset - 1] : 0;

	memset(a, 0, sizeof(*a));
	if (c->log_offset > m->n)
		return -1;
	memcpy(a->ev.nonce, c->nonce, c->nonce_len);
	a->ev.nonce_len = c->nonce_len;
	a->ev.pcrs = m->pcrs;
	a->ev.log = m->list + start;
	a->ev.log_len = m->len - start;
	a->ev.log_offset = c->log_offset;
	a->ev.attest = a->attest;
	a->ev.signature = a->sig;
	return softtpm_quote(m->ak, c->nonce, c->nonce_len, &m->pcrs, &m->clk, a->attest,
			     sizeof(a->attest), &a->ev.attest_len, a->sig, sizeof(a->sig),
			     &a->ev.signature_len);
}

static int enroll(struct app *app, struct machine *m)
{
	static uint8_t ek[16] = { 0xe1 };
	uint8_t ak_pub[LIMIT_TPM2B_PUBLIC];
	struct store_agent a;
	enum store_enroll_result r;

	memset(&a, 0, sizeof(a));
	snprintf(a.id, sizeof(a.id), AGENT);
	if (softtpm_ak_public(m->ak, 0, ak_pub, sizeof(ak_pub), &a.ak_pub_len))
		return -1;
	a.ak_pub = ak_pub;
	a.ek_pub = a.ek_cert = ek;
	a.ek_pub_len = a.ek_cert_len = sizeof(ek);
	a.ak_name_len = 34;
	if (store_agent_enroll(app->store, &a, time(NULL), &r) || r != STORE_ENROLL_NEW)
		return -1;
	return store_agent_activate(app->store, AGENT, a.cred_digest, time(NULL));
}

/* The default policy: /bin/a and /bin/b. */
static int put_policy(struct app *app)
{
	char json[512], ha[65], hb[65];
	uint8_t d[32];
	int64_t ver = 0;

	file_digest("/bin/a", d);
	hex_encode(d, 32, ha);
	file_digest("/bin/b", d);
	hex_encode(d, 32, hb);
	snprintf(json, sizeof(json),
		 "{\"version\": 1, \"digests\": {\"/bin/a\": [\"sha256:%s\"],"
		 " \"/bin/b\": [\"sha256:%s\"]}, \"violations\": \"fail\"}", ha, hb);
	return store_policy_put(app->store, "default", json, "test", 1, &ver);
}

/* One round: a challenge asked for, answered with the list from its offset. */
static enum round_status one_round(struct app *app, struct machine *m, struct verdict_response *v)
{
	static struct answer ans;
	struct challenge c;

	if (round_challenge(app, AGENT, &c) != ROUND_OK || machine_answer(m, &c, &ans))
		return ROUND_INTERNAL;
	return round_evidence(app, AGENT, &ans.ev, v);
}

static bool kept(struct app *app, int64_t verdict_id)
{
	struct store_evidence e;
	int ret = store_evidence_get(app->store, verdict_id, &e);

	store_evidence_release(&e);
	return ret == 0;
}

/* The exported record of verdict_id checked again: 0 reproduced, 1 not, -1 no record. */
static int recheck(const char *json, struct evidence_check *c)
{
	struct evidence_record r;
	const char *why = NULL;
	int ret;

	memset(c, 0, sizeof(*c));
	if (!json || evidence_record_parse(json, strlen(json), &r, &why)) {
		snprintf(c->why, sizeof(c->why), "does not parse: %s", why ? why : "?");
		return 1;
	}
	ret = evidence_record_check(&r, c);
	evidence_record_release(&r);
	if (ret == -EINVAL)
		return 1;
	return ret ? -1 : c->reproduced ? 0 : 1;
}

/* A copy of `json` with one byte of base64 field obj.key (obj NULL: the root) flipped at `at`
 * (negative: from the end), or with verdict reason 0's detail replaced (key NULL). */
static char *tampered(const char *json, const char *obj, const char *key, long at)
{
	json_t *root = json_loads(json, 0, NULL), *o = obj ? json_object_get(root, obj) : root;
	uint8_t *bytes = NULL;
	size_t len = 0;
	char *b64 = NULL, *out = NULL;

	if (!key) {
		json_t *r0 = json_array_get(json_object_get(json_object_get(root, "verdict"),
							    "reasons"), 0);

		json_object_set_new(r0, "detail", json_string("/bin/a nothing to see"));
		goto dump;
	}
	const char *s = json_string_value(json_object_get(o, key));
	if (!s || !(bytes = base64_decode_alloc(s, strlen(s), &len)) || len == 0)
		goto out;
	bytes[at < 0 ? len - (size_t)(-at) : (size_t)at] ^= 0x01;
	if (!(b64 = base64_encode_alloc(bytes, len)))
		goto out;
	json_object_set_new(o, key, json_string(b64));
dump:
	out = json_dumps(root, JSON_COMPACT);
out:
	free(bytes);
	free(b64);
	json_decref(root);
	return out;
}

/* The record with the policy text replaced by one that also lists /bin/evil. */
static char *policy_widened(const char *json)
{
	json_t *root = json_loads(json, 0, NULL);
	json_t *pol = json_object_get(root, "policy");
	json_t *text = json_loads(json_string_value(json_object_get(pol, "text")), 0, NULL);
	char hex[65], digest[80], *s, *out = NULL;
	uint8_t d[32];

	file_digest("/bin/evil", d);
	hex_encode(d, 32, hex);
	snprintf(digest, sizeof(digest), "sha256:%s", hex);
	if (text && json_object_set_new(json_object_get(text, "digests"), "/bin/evil",
					json_pack("[s]", digest)) == 0 &&
	    (s = json_dumps(text, JSON_COMPACT))) {
		json_object_set_new(pol, "text", json_string(s));
		free(s);
		out = json_dumps(root, JSON_COMPACT);
	}
	json_decref(text);
	json_decref(root);
	return out;
}

/*
 * The record with its list replaced by one a forger would write: /bin/a and /bin/b (listed),
 * well-formed, with template hashes of their own, in place of /bin/a and /bin/evil.
 */
static char *list_forged(const char *json)
{
	json_t *root = json_loads(json, 0, NULL);
	uint8_t list[1024], d[32];
	size_t len = 0;
	char *b64 = NULL, *out = NULL;
	const char *files[] = { "/bin/a", "/bin/b" };

	for (size_t i = 0; i < 2; i++) {
		ssize_t n;

		file_digest(files[i], d);
		n = softtpm_ima_ng_entry(list + len, sizeof(list) - len, "sha256", d, 32, files[i],
					 strlen(files[i]), false);
		if (n < 0)
			goto out;
		len += (size_t)n;
	}
	if (!(b64 = base64_encode_alloc(list, len)))
		goto out;
	json_object_set_new(json_object_get(root, "evidence"), "log", json_string(b64));
	out = json_dumps(root, JSON_COMPACT);
out:
	free(b64);
	json_decref(root);
	return out;
}

static void check_tampering(const char *json)
{
	struct evidence_check c;
	char *t;

	t = tampered(json, "evidence", "log", -3); /* the last entry's path */
	CHECK(recheck(t, &c) == 1 && c.authenticated && strstr(c.why, "reason"),
	      "an entry's path changed: not reproduced (%s)", c.why);
	free(t);
	/* Its digest ("/bin/evil\0" and its u32 length follow the digest's last byte). */
	t = tampered(json, "evidence", "log", -15);
	CHECK(recheck(t, &c) == 1 && c.authenticated && strstr(c.why, "reason"),
	      "an entry's digest changed: not reproduced (%s)", c.why);
	free(t);
	t = list_forged(json);
	CHECK(recheck(t, &c) == 1 && c.authenticated && strstr(c.why, "pcr_mismatch"),
	      "a forged list of allowed files: the quote's PCR 10 does not match (%s)", c.why);
	free(t);
	t = tampered(json, "evidence", "attest", -5); /* inside the PCR digest */
	CHECK(recheck(t, &c) == 1 && !c.authenticated && strstr(c.why, "signature"),
	      "the quote changed: not reproduced, the signature fails (%s)", c.why);
	free(t);
	t = tampered(json, "evidence", "signature", -2);
	CHECK(recheck(t, &c) == 1 && !c.authenticated,
	      "the signature changed: not reproduced (%s)", c.why);
	free(t);
	t = tampered(json, NULL, "ak_pub", -2);
	CHECK(recheck(t, &c) == 1, "the AK changed: not reproduced (%s)", c.why);
	free(t);
	t = tampered(json, NULL, NULL, 0);
	CHECK(recheck(t, &c) == 1 && strstr(c.why, "reason 1"),
	      "the recorded reason changed: not reproduced (%s)", c.why);
	free(t);
	t = policy_widened(json);
	CHECK(recheck(t, &c) == 1 && c.verdict.trusted,
	      "a policy that allows the file: the verdict differs (%s)", c.why);
	free(t);
}

static void test_trusted_all(struct app *app, struct machine *m)
{
	struct verdict_response v;
	struct evidence_check c;
	char *json = NULL;

	app->evidence_keep = EVIDENCE_KEEP_ALL;
	CHECK(one_round(app, m, &v) == ROUND_OK && v.trusted && kept(app, v.verdict_id) &&
		      verdict_evidence_export(app, v.verdict_id, &json) == VERDICT_EVIDENCE_OK,
	      "--evidence-keep all: a trusted first round keeps its evidence");
	CHECK(recheck(json, &c) == 0 && c.verdict.trusted && c.authenticated,
	      "a first round (the list from entry 0) reached again: trusted (%s)", c.why);
	free(json);
	app->evidence_keep = EVIDENCE_KEEP_UNTRUSTED;
}

/* The verifier, its store and the machine every case attests, set up once in main(). */
static struct app shared_app;
static struct machine shared_machine;
static struct blob boot_log;

static void test_untrusted(void)
{
	struct app *app = &shared_app;
	struct machine *m = &shared_machine;
	struct verdict_response v, v2;
	struct evidence_check c;
	char *json = NULL;

	test_trusted_all(app, m);
	CHECK(one_round(app, m, &v) == ROUND_OK && v.trusted && !kept(app, v.verdict_id),
	      "a trusted round keeps no evidence by default");
	CHECK(machine_file(m, "/bin/a") == 0 && machine_file(m, "/bin/evil") == 0,
	      "an unknown program runs");
	CHECK(one_round(app, m, &v) == ROUND_OK && !v.trusted && kept(app, v.verdict_id),
	      "its round is untrusted and keeps its evidence");
	CHECK(verdict_evidence_export(app, v.verdict_id, &json) == VERDICT_EVIDENCE_OK && json,
	      "exported");
	CHECK(recheck(json, &c) == 0 && !c.verdict.trusted && c.authenticated &&
		      c.verdict.nreasons == v.nreasons &&
		      !strcmp(c.verdict.reason[0].code, v.reason[0].code),
	      "an incremental round reached again offline: untrusted, %s (%s)",
	      c.verdict.nreasons ? c.verdict.reason[0].code : "-", c.why);
	check_tampering(json);
	free(json);
	json = NULL;

	CHECK(machine_file(m, "/bin/b") == 0 && one_round(app, m, &v2) == ROUND_OK && !v2.trusted &&
		      verdict_evidence_export(app, v2.verdict_id, &json) == VERDICT_EVIDENCE_OK,
	      "a listed program next: still untrusted (open violation), evidence kept");
	CHECK(recheck(json, &c) == 0 && !strcmp(c.verdict.reason[0].code, "open_violations"),
	      "reached again with the open violations counted (%s)", c.why);
	free(json);
	CHECK(verdict_evidence_export(app, 999999, &json) == VERDICT_EVIDENCE_UNKNOWN,
	      "an unknown verdict: no evidence");
}

/*
 * A firmware event log that does not replay to the machine's PCR 0-9 (they are zero): the round
 * is untrusted (boot_log_mismatch), its evidence names the log, which the export carries; the
 * next round judges the stored log again and names the same copy.
 */
static void test_event_log(void)
{
	struct app *app = &shared_app;
	struct machine *m = &shared_machine;
	const struct blob *log = &boot_log;
	static struct answer ans;
	struct verdict_response v, v2;
	struct evidence_check c;
	struct challenge ch;
	char *json = NULL, *t;
	json_t *root;
	bool has_log;
	uint64_t n = 0;

	CHECK(round_challenge(app, AGENT, &ch) == ROUND_OK && machine_answer(m, &ch, &ans) == 0,
	      "an answer");
	ans.ev.boot_log = log->p;
	ans.ev.boot_log_len = log->n;
	ans.ev.boot_cmdline = (char *)"console=ttyS0";
	CHECK(round_evidence(app, AGENT, &ans.ev, &v) == ROUND_OK && !v.trusted &&
		      verdict_evidence_export(app, v.verdict_id, &json) == VERDICT_EVIDENCE_OK,
	      "a round with an event log that does not match: untrusted, evidence kept");
	root = json ? json_loads(json, 0, NULL) : NULL;
	has_log = json_string_value(json_object_get(json_object_get(root, "boot"), "log")) != NULL;
	json_decref(root);
	CHECK(has_log, "the export carries the event log");
	CHECK(recheck(json, &c) == 0 && strstr(json, "boot_log_mismatch"),
	      "reached again with the event log (%s)", c.why);
	t = tampered(json, "boot", "log", 100);
	CHECK(recheck(t, &c) == 1 && strstr(c.why, "event log"),
	      "a changed event log: not reproduced (%s)", c.why);
	free(t);
	free(json);
	json = NULL;
	CHECK(one_round(app, m, &v2) == ROUND_OK && !v2.trusted &&
		      verdict_evidence_export(app, v2.verdict_id, &json) == VERDICT_EVIDENCE_OK &&
		      recheck(json, &c) == 0 && strstr(json, "\"log\""),
	      "the next round judges the stored log: its evidence names it too (%s)", c.why);
	free(json);
	CHECK(store_evidence_logs_prune(app->store, time(NULL) + 10, 256, &n) == 0 && n == 0,
	      "a copy records name is not swept");
}

/*
 * The agent's amendment (its own approvals) allows /bin/evil: the boot is judged again from
 * entry 0 under the new versions, still untrusted while the violations are open; the record
 * carries the amendment's text, and one without /bin/evil in it reaches another verdict.
 */
static void test_amendment(void)
{
	struct app *app = &shared_app;
	struct machine *m = &shared_machine;
	struct verdict_response v;
	struct evidence_check c;
	char json_am[256], hex[65], *json = NULL, *t = NULL;
	uint8_t d[32];
	int64_t ver = 0;
	const char *text;
	json_t *root, *am;

	file_digest("/bin/evil", d);
	hex_encode(d, 32, hex);
	snprintf(json_am, sizeof(json_am),
		 "{\"version\": 1, \"digests\": {\"/bin/evil\": [\"sha256:%s\"]}}", hex);
	CHECK(store_policy_put(app->store, "agent/" AGENT, json_am, "test", 2, &ver) == 0,
	      "an amendment for the agent allows /bin/evil");
	CHECK(one_round(app, m, &v) == ROUND_OK && !v.trusted &&
		      verdict_evidence_export(app, v.verdict_id, &json) == VERDICT_EVIDENCE_OK,
	      "its boot judged again: untrusted (%s), evidence kept",
	      v.nreasons ? v.reason[0].code : "-");
	root = json ? json_loads(json, 0, NULL) : NULL;
	am = json_object_get(root, "amendment");
	text = json_string_value(json_object_get(am, "text"));
	CHECK(json_integer_value(json_object_get(am, "version")) == ver && text &&
		      strstr(text, "/bin/evil") &&
		      json_integer_value(json_object_get(json_object_get(root, "evidence"),
							 "log_offset")) == 0,
	      "the record carries the amendment's text, and the list from entry 0");
	CHECK(recheck(json, &c) == 0, "reached again with the amendment (%s)", c.why);
	json_object_set_new(am, "text", json_string("{\"version\": 1}"));
	t = json_dumps(root, JSON_COMPACT);
	CHECK(recheck(t, &c) == 1 && strstr(c.why, "not_in_allowlist"),
	      "an amendment without the approval: another verdict (%s)", c.why);
	free(t);
	json_decref(root);
	free(json);
}

static int count_rows(void *arg, const struct store_verdict *v)
{
	int64_t *ids = arg;

	if (ids[0] < 16)
		ids[1 + ids[0]++] = v->id;
	return 0;
}

static void test_retention(void)
{
	struct app *app = &shared_app;
	struct machine *m = &shared_machine;
	struct verdict_response v[4];
	uint64_t deleted = 0;
	int64_t ids[17] = { 0 };
	bool all_kept = true;

	for (int i = 0; i < 4; i++)
		all_kept = all_kept && one_round(app, m, &v[i]) == ROUND_OK && !v[i].trusted &&
			   kept(app, v[i].verdict_id);
	CHECK(all_kept, "four more untrusted rounds with the same reasons, each with evidence");
	CHECK(store_verdicts_prune(app->store, AGENT, 1, 256, &deleted) == 0 && deleted >= 3,
	      "retention prunes the verdicts that changed nothing (%llu)",
	      (unsigned long long)deleted);
	CHECK(!kept(app, v[0].verdict_id) && !kept(app, v[2].verdict_id),
	      "their evidence went with them");
	CHECK(kept(app, v[3].verdict_id), "the newest verdict's evidence is kept");
	store_verdicts_list(app->store, AGENT, 16, count_rows, ids);
	bool every_untrusted_kept = true;
	for (int64_t i = 0; i < ids[0]; i++) {
		/* Every verdict left but the first trusted one keeps its evidence. */
		if (i + 1 < ids[0] && !kept(app, ids[1 + i]))
			every_untrusted_kept = false;
	}
	CHECK(ids[0] >= 3 && every_untrusted_kept,
	      "every untrusted verdict kept still has its evidence (%lld verdicts)",
	      (long long)ids[0]);
}

static void test_keep_modes(void)
{
	struct app *app = &shared_app;
	struct machine *m = &shared_machine;
	struct verdict_response v;

	app->evidence_keep = EVIDENCE_KEEP_NONE;
	CHECK(one_round(app, m, &v) == ROUND_OK && !v.trusted && !kept(app, v.verdict_id),
	      "--evidence-keep none: an untrusted round keeps none");
	app->evidence_keep = EVIDENCE_KEEP_ALL;
	CHECK(one_round(app, m, &v) == ROUND_OK && kept(app, v.verdict_id),
	      "--evidence-keep all: kept");
	app->evidence_keep = EVIDENCE_KEEP_UNTRUSTED;
}

static void test_purge(void)
{
	struct app *app = &shared_app;
	struct store_evidence e;
	int64_t ids[17] = { 0 };

	store_verdicts_list(app->store, AGENT, 16, count_rows, ids);
	CHECK(ids[0] > 0 && store_agent_retire(app->store, AGENT, time(NULL), "test", true) == 0,
	      "the agent retired and purged");
	CHECK(ids[0] > 0 && store_evidence_get(app->store, ids[1], &e) == -ENOENT,
	      "its evidence is gone");
	store_evidence_release(&e);
	uint64_t n = 0;
	CHECK(store_evidence_logs_prune(app->store, time(NULL) - 60, 256, &n) == 0 && n == 0,
	      "an event log copy used lately is not swept");
	CHECK(store_evidence_logs_prune(app->store, time(NULL) + 10, 256, &n) == 0 && n == 1,
	      "once unused, the copy no record names any more is swept (%llu)",
	      (unsigned long long)n);
}

/* The service's state as main() builds it (app.h), with the store the test opens. */
static void fixture_app_init(struct app *app)
{
	app_init(app);
	app->nonce_ttl = 60;
	(void)app_tables_new(app);
}

int main(void)
{
	char dir[] = "/tmp/test_evidence_record.XXXXXX", uri[300], cmd[300];

	setenv("TPM_TEST_DATA", "tests/data/eventlog", 0);
	boot_log = load("guest-seabios.bin");
	fixture_app_init(&shared_app);
	if (!mkdtemp(dir))
		return 2;
	shared_machine.ak = EVP_EC_gen("P-256");
	printf("# backend: %s\n", teststore_backend());
	CHECK(shared_app.nonces && shared_app.agents && shared_machine.ak &&
		      teststore_uri(dir, "verifier", uri, sizeof(uri)) == 0 &&
		      store_open(uri, &shared_app.store) == 0,
	      "store, challenge table, agent cache, AK");
	if (shared_app.store) {
		CHECK(put_policy(&shared_app) == 0 && enroll(&shared_app, &shared_machine) == 0 &&
			      machine_boot(&shared_machine) == 0,
		      "policy, agent enrolled, machine booted");
		CASE(test_untrusted);
		CASE(test_retention);
		CASE(test_keep_modes);
		CASE(test_event_log);
		CASE(test_amendment);
		CASE(test_purge);
	}
	app_release(&shared_app);
	free(boot_log.p);
	EVP_PKEY_free(shared_machine.ak);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", dir);
	return check_finish();
}
