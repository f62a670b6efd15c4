/*
 * rejudge: what judging an agent's whole boot again costs the verifier when the policy or
 * amendment version that judges it changes, at several list lengths, in process with
 * attest_evaluate().
 *
 *   rejudge [--lengths N,N,...] [--rounds R]
 *
 * For each length L: a machine (ECDSA P-256 AK, sha1+sha256 PCR 0-10) measures boot_aggregate
 * and L-1 ima-ng entries of 1,000 files a policy lists; the verifier's stored state has folded
 * all L, judged by policy version 1. Version 2 then judges it: R timed rounds, each the round
 * after the change (a quote over a fresh nonce, the whole list sent from entry 0, the replay
 * from a fresh state and every entry judged again; attest_evaluate()). Every round must be
 * trusted, re-judged, and end at entry L. For comparison, the same state's ordinary round of
 * 10 new entries under version 1.
 *
 * Timed: parsing the evidence body (JSON, base64) and attest_evaluate(), as the verifier runs
 * them (TLS, the store's commit and the agent's side are not included). Output lines
 * `key value` per length: L_list_bytes (the binary list the agent sends), L_body_bytes (the
 * evidence body), L_rejudge_med_ms, L_rejudge_p99_ms, L_round_med_ms (an ordinary round of 10
 * entries).
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <tss2/tss2_tpm2_types.h>

#include "bench/bench.h"
#include "proto/dynbuf.h"
#include "proto/evidence.h"
#include "proto/imalog.h"
#include "proto/limits.h"
#include "proto/replay.h"
#include "tests/lib/softtpm.h"
#include "verifier/decision/attest.h"
#include "verifier/policy/policy.h"

#define REJUDGE_FILES 1000u
#define REJUDGE_MAX_LENGTHS 8u

struct machine {
	EVP_PKEY *ak;
	struct pcr_set pcrs;
	struct replay_state pcr10;
	struct replay_ctx *rc;
	struct imalog *log;
	struct softtpm_clock clk;
	struct dynbuf buf; /* the whole list, from entry 0 */
	uint64_t measured;
};

static void file_path(uint64_t i, char *out, size_t cap)
{
	snprintf(out, cap, "/usr/lib/bench/file-%04u.so", (unsigned)(i % REJUDGE_FILES));
}

/* Measures k more entries (boot_aggregate first) onto m->buf and extends PCR 10 over them. */
static int measure(struct machine *m, uint64_t k)
{
	size_t start = m->buf.len;
	uint64_t first = m->measured;
	struct ima_entry e;
	int r;

	for (uint64_t i = 0; i < k; i++, m->measured++) {
		char path[64];
		uint8_t d[32];
		const char *alg = "sha256";
		size_t dlen = 32, need;
		uint8_t *rec;

		if (m->measured == 0) {
			SHA_CTX c;

			SHA1_Init(&c);
			for (unsigned j = 0; j < 8; j++)
				SHA1_Update(&c, pcr_set_bank(&m->pcrs, TPM2_ALG_SHA1)->value[j], 20);
			SHA1_Final(d, &c);
			alg = "sha1";
			dlen = 20;
			snprintf(path, sizeof(path), "boot_aggregate");
		} else {
			file_path(m->measured, path, sizeof(path));
			SHA256((const uint8_t *)path, strlen(path), d);
		}
		need = softtpm_ima_ng_size(alg, dlen, strlen(path));
		rec = dynbuf_grow(&m->buf, need);
		if (!rec || softtpm_ima_ng_entry(rec, need, alg, d, dlen, path, strlen(path), false) < 0)
			return -ENOMEM;
	}
	imalog_reset(m->log, (const uint8_t *)m->buf.buf + start, m->buf.len - start, first);
	while ((r = imalog_next(m->log, &e, NULL)) == 1)
		if (replay_extend(m->rc, &m->pcr10, &e) != 0)
			return -EIO;
	if (r != 0)
		return -EIO;
	memcpy(pcr_set_bank(&m->pcrs, TPM2_ALG_SHA1)->value[10], m->pcr10.sha1, 20);
	memcpy(pcr_set_bank(&m->pcrs, TPM2_ALG_SHA256)->value[10], m->pcr10.sha256, 32);
	return 0;
}

static int machine_init(struct machine *m)
{
	memset(m, 0, sizeof(*m));
	dynbuf_init(&m->buf, LIMIT_REQUEST_BODY);
	m->ak = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	m->rc = replay_ctx_new(REPLAY_SHA1 | REPLAY_SHA256);
	m->log = imalog_new();
	if (!m->ak || !m->rc || !m->log)
		return -ENOMEM;
	for (unsigned b = 0; b < 2; b++) {
		struct pcr_bank *bank = pcr_set_add_bank(&m->pcrs, b ? TPM2_ALG_SHA256 : TPM2_ALG_SHA1);

		if (!bank)
			return -EINVAL;
		bank->mask = 0x7ff;
		for (unsigned i = 0; i < 10; i++)
			memset(bank->value[i], (int)(0x10 * b + i + 1), sizeof(bank->value[i]));
	}
	replay_state_init(&m->pcr10, REPLAY_SHA1 | REPLAY_SHA256);
	m->clk.clock = 1000;
	m->clk.reset_count = 1;
	m->clk.safe = 1;
	return 0;
}

static void machine_release(struct machine *m)
{
	EVP_PKEY_free(m->ak);
	replay_ctx_free(m->rc);
	imalog_free(m->log);
	dynbuf_release(&m->buf);
}

static struct judged_versions version(int64_t v)
{
	struct judged_versions j = {.known = true, .policy_version = v};

	snprintf(j.policy, sizeof(j.policy), "default");
	return j;
}

/*
 * One round from entry `from` of m's list, judged by `by`: the evidence body encoded, then
 * parsed and judged as the verifier does; those two steps' seconds in *secs, the body's
 * length in *body_len.
 */
static int one_round(struct machine *m, const struct policy *pol, const struct boot_state *st,
		     uint64_t from, size_t from_byte, const struct judged_versions *by,
		     struct attest_result *res, double *secs, size_t *body_len)
{
	struct evidence parsed;
	const char *why = NULL;
	char *body;
	struct attest_request req;
	struct evidence ev;
	uint8_t nonce[32], attest[LIMIT_ATTEST], sig[LIMIT_SIGNATURE];
	double t0;
	int rc;

	if (RAND_bytes(nonce, sizeof(nonce)) != 1)
		return -EIO;
	m->clk.clock += 2000;
	memset(&ev, 0, sizeof(ev));
	if (softtpm_quote(m->ak, nonce, sizeof(nonce), &m->pcrs, &m->clk, attest, sizeof(attest),
			  &ev.attest_len, sig, sizeof(sig), &ev.signature_len) != 0)
		return -EIO;
	memcpy(ev.nonce, nonce, sizeof(nonce));
	ev.nonce_len = sizeof(nonce);
	ev.attest = attest;
	ev.signature = sig;
	ev.pcrs = m->pcrs;
	ev.log_offset = from;
	ev.log = (uint8_t *)m->buf.buf + from_byte;
	ev.log_len = m->buf.len - from_byte;
	body = evidence_encode(&ev);
	if (!body)
		return -ENOMEM;
	*body_len = strlen(body);
	memset(&parsed, 0, sizeof(parsed));
	t0 = bench_now();
	if (evidence_parse(body, *body_len, &parsed, &why) != 0) {
		fprintf(stderr, "rejudge: the body does not parse: %s\n", why ? why : "?");
		free(body);
		return -EINVAL;
	}
	free(body);
	memset(&req, 0, sizeof(req));
	req.ak = m->ak;
	req.nonce = nonce;
	req.nonce_len = sizeof(nonce);
	req.requested = &m->pcrs;
	req.policy = pol;
	req.judged_by = by;
	req.prev = st;
	req.ev = &parsed;
	memset(res, 0, sizeof(*res));
	rc = attest_evaluate(&req, res);
	*secs = bench_now() - t0;
	evidence_release(&parsed);
	return rc;
}

static int run_length(const struct policy *pol, uint64_t length, unsigned rounds)
{
	struct judged_versions v1 = version(1), v2 = version(2);
	double *t = calloc(rounds, sizeof(double)), secs = 0;
	struct attest_result res;
	struct boot_state st;
	struct machine m;
	size_t before, body = 0;
	double med, p99;
	int ret = -EIO;

	if (!t || machine_init(&m) != 0 || measure(&m, length) != 0)
		goto cleanup;
	memset(&st, 0, sizeof(st));
	st.started = true;
	st.reset_count = m.clk.reset_count;
	st.clock = m.clk.clock;
	st.boot_number = 1;
	st.next_entry = m.measured;
	st.replay = m.pcr10;
	st.judged = v1;
	for (unsigned r = 0; r < rounds; r++) {
		if (one_round(&m, pol, &st, 0, 0, &v2, &res, &secs, &body) != 0 || !res.verdict.trusted ||
		    !res.rejudged || res.next.next_entry != length) {
			fprintf(stderr, "rejudge: %llu entries, round %u: %s %s\n",
				(unsigned long long)length, r,
				res.verdict.trusted ? "trusted" : "untrusted",
				res.verdict.nreasons ? res.verdict.reason[0].code : "");
			attest_result_release(&res);
			goto cleanup;
		}
		t[r] = secs * 1e3;
		attest_result_release(&res);
	}
	med = bench_percentile(t, rounds, 0.5, 0);
	p99 = bench_percentile(t, rounds, 0.99, 1);
	printf("%llu_list_bytes %zu\n%llu_body_bytes %zu\n", (unsigned long long)length, m.buf.len,
	       (unsigned long long)length, body);
	printf("%llu_rejudge_med_ms %.2f\n%llu_rejudge_p99_ms %.2f\n", (unsigned long long)length,
	       med, (unsigned long long)length, p99);
	/* An ordinary round for comparison: 10 new entries, the same versions. */
	before = m.buf.len;
	if (measure(&m, 10) != 0 ||
	    one_round(&m, pol, &st, length, before, &v1, &res, &secs, &body) != 0 ||
	    !res.verdict.trusted ||
	    res.rejudged) {
		attest_result_release(&res);
		goto cleanup;
	}
	attest_result_release(&res);
	printf("%llu_round_med_ms %.3f\n", (unsigned long long)length, secs * 1e3);
	ret = 0;
cleanup:
	machine_release(&m);
	free(t);
	return ret;
}

static int usage(void)
{
	fprintf(stderr, "usage: rejudge [--lengths N,N,...] [--rounds R]\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned long lengths[REJUDGE_MAX_LENGTHS] = { 1000, 100000 }, rounds = 5;
	unsigned nlengths = 2;
	struct policy *pol = NULL;
	int ret = 1;

	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			return usage();
		if (!strcmp(argv[i], "--rounds")) {
			if (bench_parse_ulong(argv[i + 1], 10000ul, &rounds) < 0 || !rounds)
				return usage();
		} else if (!strcmp(argv[i], "--lengths")) {
			char *list = argv[i + 1], *tok, *save = NULL;

			nlengths = 0;
			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (nlengths == REJUDGE_MAX_LENGTHS ||
				    bench_parse_ulong(tok, 400000ul, &lengths[nlengths]) < 0 ||
				    lengths[nlengths] < 2)
					return usage();
				nlengths++;
			}
			if (!nlengths)
				return usage();
		} else {
			return usage();
		}
	}
	pol = policy_new();
	if (!pol)
		return 1;
	for (unsigned i = 0; i < REJUDGE_FILES; i++) {
		char path[64];
		uint8_t d[32];

		file_path(i, path, sizeof(path));
		SHA256((const uint8_t *)path, strlen(path), d);
		if (policy_add_digest(pol, path, TPM2_ALG_SHA256, d, 32) != 0)
			goto cleanup;
	}
	printf("rounds %lu\n", rounds);
	for (unsigned i = 0; i < nlengths; i++)
		if (run_length(pol, lengths[i], (unsigned)rounds) != 0)
			goto cleanup;
	ret = 0;
cleanup:
	policy_free(pol);
	return ret;
}
