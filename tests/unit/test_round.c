/*
 * verifier/service/round.c with two rounds of one agent in flight (issue 15): both nonces issued,
 * both rounds judged from the same stored boot state, the newer one (more entries) commits
 * while the older one is between its judgement and its commit (app->before_commit runs it
 * there, deterministically). The older one must be refused (ROUND_CONFLICT) and store nothing:
 * it used to overwrite the newer boot state, sending the expected next entry back. The agent
 * then recovers with a fresh challenge.
 *
 * Then two verifiers on one store with one cluster key (issue 18): a challenge of one answered
 * to the other, once only (a replay to either is nonce_reused); an agent reassigned to another
 * policy through one is judged by that policy on the other, whose agent cache knew the old one.
 *
 * A verdict carries the challenge of the agent's next round (one exchange per round).
 *
 * The agent is software (tests/lib/softtpm): an EC AK enrolled and activated in a real store
 * (SQLite, or PostgreSQL with ATTEST_TEST_PG), PCR 0-9 zero, PCR 10 the replay of its ima-ng
 * list.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/encoding.h"
#include "proto/imalog.h"
#include "proto/replay.h"
#include "tests/lib/softtpm.h"
#include "tests/lib/teststore.h"
#include "tests/unit/check.h"
#include "verifier/facts/agentcache.h"
#include "verifier/store/cluster.h"
#include "verifier/service/round.h"

#define AGENT "web-01"
#define MAX_ENTRIES 12

/* The software machine: its list, PCR 10 over the whole list, its AK and TPM clock. */
struct machine {
	EVP_PKEY *ak;
	uint8_t list[4096];
	size_t len;
	size_t end[MAX_ENTRIES]; /* end offset of each entry */
	unsigned n;
	struct pcr_set pcrs;
	struct softtpm_clock clk;
};

static void file_digest(const char *path, uint8_t d[32])
{
	SHA256((const uint8_t *)path, strlen(path), d); /* the "content" is the path */
}

/* Appends an entry and extends PCR 10 over the whole list again, as IMA would have. */
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

/* Boots: PCR 0-10 zero, then boot_aggregate (sha1 over PCR 0-7) as IMA's first entry. */
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

/* Evidence answering challenge c with the whole list from c's offset, quoted now. */
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

static int count_verdicts(void *arg, const struct store_verdict *v)
{
	(void)v;
	(*(int *)arg)++;
	return 0;
}

/* The newer round, run by the hook while the older one waits to commit. */
static struct {
	struct answer *answer;
	enum round_status st;
	struct verdict_response v;
	bool ran;
} newer;

static void run_newer_round(struct app *app, const char *agent)
{
	app->before_commit = NULL; /* the newer round commits without waiting */
	newer.st = round_evidence(app, agent, &newer.answer->ev, &newer.v);
	newer.ran = true;
}

/* Two verifiers on one store and the machine every case attests, set up in main(). */
static char tmp_dir[] = "/tmp/test_round.XXXXXX";
static char store_uri[300];
static struct app shared_app, second_app;
static struct machine shared_machine;

static void test_two_nonces_in_flight(void)
{
	struct app *app = &shared_app;
	struct machine *m = &shared_machine;
	static struct answer older, again;
	struct challenge c1, c2, c3;
	struct verdict_response v;
	struct boot_state bs;
	uint64_t ver = 0;
	uint8_t d[32];
	int n = 0;

	CHECK(round_challenge(app, AGENT, &c1) == ROUND_OK && c1.log_offset == 0, "nonce 1");
	CHECK(round_challenge(app, AGENT, &c2) == ROUND_OK && c2.log_offset == 0,
	      "nonce 2, while nonce 1 is outstanding");
	/* The older round quotes the list as it is; then a program runs; the newer one quotes. */
	CHECK(machine_answer(m, &c1, &older) == 0, "round 1 quotes 1 entry");
	file_digest("/bin/a", d);
	CHECK(machine_run(m, "sha256", d, 32, "/bin/a") == 0, "/bin/a runs");
	newer.answer = &again;
	CHECK(machine_answer(m, &c2, newer.answer) == 0, "round 2 quotes 2 entries");

	app->before_commit = run_newer_round;
	CHECK(round_evidence(app, AGENT, &older.ev, &v) == ROUND_CONFLICT,
	      "round 1, judged before round 2 committed and committing after it: refused");
	app->before_commit = NULL;
	CHECK(newer.ran && newer.st == ROUND_OK && newer.v.trusted && newer.v.next_offset == 2,
	      "round 2 committed in between: trusted, next entry 2 (status %d)", newer.st);
	CHECK(store_boot_get(app->store, AGENT, &bs, &ver) == 0 && bs.next_entry == 2 && ver == 1,
	      "the stored state is round 2's: next entry 2, not 1 (%llu, version %llu)",
	      (unsigned long long)bs.next_entry, (unsigned long long)ver);
	CHECK(store_verdicts_list(app->store, AGENT, 10, count_verdicts, &n) == 0 && n == 1,
	      "one verdict stored, round 2's (%d)", n);

	/* The agent recovers: a new challenge starts where round 2 left off. */
	CHECK(round_challenge(app, AGENT, &c3) == ROUND_OK && c3.log_offset == 2,
	      "a new challenge asks from entry 2 (%llu)", (unsigned long long)c3.log_offset);
	file_digest("/bin/b", d);
	CHECK(machine_run(m, "sha256", d, 32, "/bin/b") == 0 && machine_answer(m, &c3, &again) == 0,
	      "round 3 quotes 3 entries");
	CHECK(round_evidence(app, AGENT, &again.ev, &v) == ROUND_OK && v.trusted &&
		      v.next_offset == 3,
	      "round 3: trusted, next entry 3");
	CHECK(store_boot_get(app->store, AGENT, &bs, &ver) == 0 && bs.next_entry == 3 && ver == 2,
	      "state version 2");
}

/*
 * One exchange per round: a verdict carries the next round's challenge, issued from the state
 * it committed; answering it is a round like any other, and it is single-use. The verifier
 * offers none when the agent's next round would come after half the nonce's lifetime.
 */
static void test_next_challenge(void)
{
	struct app *app = &shared_app;
	struct machine *m = &shared_machine;
	static struct answer ans;
	struct verdict_response v, v2;
	struct challenge c;
	uint8_t d[32];

	CHECK(round_challenge(app, AGENT, &c) == ROUND_OK && machine_answer(m, &c, &ans) == 0 &&
		      round_evidence(app, AGENT, &ans.ev, &v) == ROUND_OK && v.trusted,
	      "a round from a challenge asked for");
	CHECK(v.has_next_challenge && v.next_challenge.log_offset == v.next_offset &&
		      v.next_challenge.nonce_len == 32 && v.next_challenge.selection.nbanks == 2 &&
		      v.next_challenge.expires_at > (int64_t)time(NULL),
	      "its verdict carries the next challenge, from entry %llu",
	      (unsigned long long)v.next_challenge.log_offset);
	file_digest("/bin/a", d); /* a listed program, once more (after an update, say) */
	CHECK(machine_run(m, "sha256", d, 32, "/bin/a") == 0 &&
		      machine_answer(m, &v.next_challenge, &ans) == 0,
	      "a program runs; the agent answers the challenge it was given");
	CHECK(round_evidence(app, AGENT, &ans.ev, &v2) == ROUND_OK && v2.trusted &&
		      v2.next_offset == v.next_offset + 1 && v2.has_next_challenge &&
		      v2.next_challenge.log_offset == v2.next_offset &&
		      memcmp(v2.next_challenge.nonce, v.next_challenge.nonce, 32) != 0,
	      "trusted in one exchange, with a new challenge for the round after");
	CHECK(round_evidence(app, AGENT, &ans.ev, &v) == ROUND_NONCE_REUSED,
	      "the same answer again: nonce_reused");

	/* An agent that says it comes back in 40 s, with nonces that live 60 s: none offered. */
	CHECK(machine_answer(m, &v2.next_challenge, &ans) == 0, "the next answer");
	ans.ev.interval = 40;
	CHECK(round_evidence(app, AGENT, &ans.ev, &v) == ROUND_OK && v.trusted &&
		      !v.has_next_challenge,
	      "interval 40 s against a 60 s nonce lifetime: no next challenge");
	ans.ev.interval = 0;
	app->liveness.default_interval = 31;
	CHECK(round_challenge(app, AGENT, &c) == ROUND_OK && machine_answer(m, &c, &ans) == 0 &&
		      round_evidence(app, AGENT, &ans.ev, &v) == ROUND_OK && !v.has_next_challenge,
	      "no interval sent, a default of 31 s: none either");
	app->liveness.default_interval = 0;
}

/* Verifier `a` (app) and `b`, a second one on the same store with the same cluster key. */
static void test_two_verifiers(struct app *a, struct app *b, struct machine *m)
{
	static struct answer ans;
	char json[512], hx[3][65];
	struct challenge c;
	struct verdict_response v;
	uint8_t d[32];
	int64_t ver = 0;
	const char *paths[3] = { "/bin/a", "/bin/b", "/bin/c" };

	CHECK(round_challenge(a, AGENT, &c) == ROUND_OK && machine_answer(m, &c, &ans) == 0,
	      "verifier a issues a challenge; the agent answers it");
	CHECK(round_evidence(b, AGENT, &ans.ev, &v) == ROUND_OK && v.trusted,
	      "to verifier b, which never saw that challenge: trusted");
	CHECK(round_evidence(b, AGENT, &ans.ev, &v) == ROUND_NONCE_REUSED,
	      "the same answer again to b: nonce_reused");
	CHECK(round_evidence(a, AGENT, &ans.ev, &v) == ROUND_NONCE_REUSED,
	      "and to a, which issued it and has it as unused: nonce_reused (the store knows)");
	CHECK(round_challenge(b, AGENT, &c) == ROUND_OK && machine_answer(m, &c, &ans) == 0,
	      "a challenge of b");
	ans.ev.nonce[20] ^= 1;
	CHECK(round_evidence(a, AGENT, &ans.ev, &v) == ROUND_NONCE_UNKNOWN,
	      "altered on its way to a: nonce_unknown");
	ans.ev.nonce[20] ^= 1;
	CHECK(round_evidence(a, AGENT, &ans.ev, &v) == ROUND_OK && v.trusted,
	      "as issued: trusted on a");

	/* Behind a load balancer: every challenge from a, every answer to b. */
	{
		int ok = 0;

		for (int i = 0; i < 2 * (int)NONCES_MAX_OUTSTANDING; i++)
			ok += round_challenge(a, AGENT, &c) == ROUND_OK &&
			      round_admit(b, AGENT) == ROUND_OK && machine_answer(m, &c, &ans) == 0 &&
			      round_evidence(b, AGENT, &ans.ev, &v) == ROUND_OK && v.trusted;
		CHECK(ok == 2 * (int)NONCES_MAX_OUTSTANDING,
		      "%d rounds challenged by a and answered to b: all trusted (%d); a's answered"
		      " challenges stay outstanding there and do not rate-limit the agent, and b admits"
		      " evidence with no challenge of its own outstanding",
		      2 * (int)NONCES_MAX_OUTSTANDING, ok);
	}

	/* Policy "wide" also allows /bin/c; b assigns it, as its handler would. */
	for (int i = 0; i < 3; i++) {
		file_digest(paths[i], d);
		hex_encode(d, 32, hx[i]);
	}
	snprintf(json, sizeof(json),
		 "{\"version\": 1, \"digests\": {\"/bin/a\": [\"sha256:%s\"],"
		 " \"/bin/b\": [\"sha256:%s\"], \"/bin/c\": [\"sha256:%s\"]},"
		 " \"violations\": \"fail\"}", hx[0], hx[1], hx[2]);
	CHECK(store_policy_put(b->store, "wide", json, "test", 2, &ver) == 0 &&
		      store_agent_set_policy(b->store, AGENT, "wide") == 0,
	      "through b: policy wide, assigned to the agent");
	agentcache_invalidate(b->agents, AGENT);
	file_digest("/bin/c", d);
	CHECK(machine_run(m, "sha256", d, 32, "/bin/c") == 0, "/bin/c runs");
	CHECK(round_challenge(a, AGENT, &c) == ROUND_OK && machine_answer(m, &c, &ans) == 0 &&
		      round_evidence(a, AGENT, &ans.ev, &v) == ROUND_OK,
	      "a round on a");
	CHECK(v.trusted, "judged by policy wide on a too: trusted (%s)",
	      v.nreasons ? v.reason[0].code : "");
}

/* The default policy: /bin/a and /bin/b (boot_aggregate needs no entry). */
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

/* The service's state as main() builds it (app.h), with the store the test opens. */
static void fixture_app_init(struct app *app)
{
	app_init(app);
	app->nonce_ttl = 60;
	(void)app_tables_new(app);
}

/* A second verifier on the same store: a cluster key both load, then test_two_verifiers(). */
static void test_two_verifiers_one_cluster_key(void)
{
	char key[320];
	FILE *f;

	snprintf(key, sizeof(key), "%s/cluster.key", tmp_dir);
	f = fopen(key, "w");
	CHECK(f && fputs("0123456789abcdef0123456789abcdef0123456789abcdef\n", f) >= 0 &&
		      fclose(f) == 0,
	      "a cluster key");
	CHECK(cluster_load(key, &shared_app.cluster) == 0 &&
		      cluster_load(key, &second_app.cluster) == 0 &&
		      store_open(store_uri, &second_app.store) == 0,
	      "a second verifier on the same store, both with the key");
	if (shared_app.cluster && second_app.store)
		test_two_verifiers(&shared_app, &second_app, &shared_machine);
}

int main(void)
{
	char cmd[300];

	fixture_app_init(&shared_app);
	fixture_app_init(&second_app);
	if (!mkdtemp(tmp_dir))
		return 2;
	shared_machine.ak = EVP_EC_gen("P-256");
	printf("# backend: %s\n", teststore_backend());
	CHECK(shared_app.nonces && shared_app.agents && shared_machine.ak &&
		      teststore_uri(tmp_dir, "verifier", store_uri, sizeof(store_uri)) == 0 &&
		      store_open(store_uri, &shared_app.store) == 0,
	      "store, challenge table, agent cache, AK");
	if (shared_app.store) {
		CHECK(put_policy(&shared_app) == 0, "default policy");
		CHECK(enroll(&shared_app, &shared_machine) == 0, "agent enrolled and active");
		CHECK(machine_boot(&shared_machine) == 0, "machine booted");
		CASE(test_two_nonces_in_flight);
		CASE(test_next_challenge);
		CASE(test_two_verifiers_one_cluster_key);
	}
	app_release(&shared_app);
	app_release(&second_app);
	EVP_PKEY_free(shared_machine.ak);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", tmp_dir);
	return check_finish();
}
