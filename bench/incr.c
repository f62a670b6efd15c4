/*
 * incr: the verifier's cost of one round of 10 new IMA entries when the agent's list already
 * holds SHORT entries versus LONG entries, in process with attest_evaluate().
 *
 *   incr [--short N] [--long N] [--rounds R] [--per-round K]
 *
 * For each length L: a machine (ECDSA P-256 AK, sha1+sha256 PCR 0-10) measures boot_aggregate
 * and L-1 ima-ng entries; PCR 10 follows them (proto/replay). The verifier's stored state after
 * those L entries is a `struct boot_state` (started, resetCount, next_entry = L, the running
 * replay), exactly what store_round_commit() keeps between rounds; it is built by replaying the
 * same entries. Then R timed rounds: K new entries, a softtpm quote over a fresh nonce, and
 * attest_evaluate() with the previous round's next state (signature, nonce, selection, pcrDigest,
 * clock, replay of the K entries on the stored state, policy check of each). Every round must be
 * trusted. Reports the median and p99 per round.
 *
 * Output lines `key value`: short_entries long_entries short_med_us long_med_us short_p99_us
 * long_p99_us ratio (long median / short median).
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <tss2/tss2_tpm2_types.h>

#include "bench/bench.h"
#include "proto/dynbuf.h"
#include "proto/imalog.h"
#include "proto/limits.h"
#include "proto/replay.h"
#include "tests/lib/softtpm.h"
#include "verifier/decision/attest.h"
#include "verifier/policy/policy.h"

#define INCR_FILES 1000u
#define INCR_CHUNK 10000u

struct machine {
	EVP_PKEY *ak;
	struct pcr_set pcrs;
	struct replay_state pcr10;
	struct replay_ctx *rc;
	struct imalog *log;
	struct softtpm_clock clk;
	struct dynbuf buf; /* entries not yet sent: one evidence body's worth at most */
	uint64_t measured;
};

static void file_path(uint64_t i, char *out, size_t cap)
{
	snprintf(out, cap, "/usr/lib/bench/file-%04u.so", (unsigned)(i % INCR_FILES));
}

static int append(struct machine *m, const char *alg, const uint8_t *digest, size_t dlen,
		  const char *path)
{
	size_t need = softtpm_ima_ng_size(alg, dlen, strlen(path));
	uint8_t *rec = dynbuf_grow(&m->buf, need);
	ssize_t n;

	if (!rec)
		return dynbuf_error(&m->buf);
	n = softtpm_ima_ng_entry(rec, need, alg, digest, dlen, path, strlen(path), false);
	return n < 0 ? (int)n : 0;
}

/* Measures k entries (boot_aggregate first) into m->buf and extends PCR 10 over them. */
static int measure(struct machine *m, uint64_t k)
{
	struct ima_entry e;
	uint64_t first = m->measured;
	int r;

	for (uint64_t i = 0; i < k; i++, m->measured++) {
		char path[64];
		uint8_t d[32];

		if (m->measured == 0) {
			SHA_CTX c;

			SHA1_Init(&c);
			for (unsigned j = 0; j < 8; j++)
				SHA1_Update(&c, pcr_set_bank(&m->pcrs, TPM2_ALG_SHA1)->value[j], 20);
			SHA1_Final(d, &c);
			if (append(m, "sha1", d, 20, "boot_aggregate") != 0)
				return -ENOMEM;
			continue;
		}
		file_path(m->measured, path, sizeof(path));
		SHA256((const uint8_t *)path, strlen(path), d);
		if (append(m, "sha256", d, 32, path) != 0)
			return -ENOMEM;
	}
	imalog_reset(m->log, (const uint8_t *)m->buf.buf, m->buf.len, first);
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

static int run_length(const struct policy *pol, uint64_t length, unsigned rounds, unsigned k,
		      double *med_us, double *p99_us)
{
	struct machine m;
	struct boot_state st;
	double *t = calloc(rounds, sizeof(double));
	int ret = -EIO;

	if (!t || machine_init(&m) != 0)
		goto cleanup;
	/* The long history, in chunks so the buffer stays small; then the stored state. */
	while (m.measured < length) {
		uint64_t n = length - m.measured < INCR_CHUNK ? length - m.measured : INCR_CHUNK;

		dynbuf_reset(&m.buf);
		if (measure(&m, n) != 0)
			goto cleanup;
	}
	memset(&st, 0, sizeof(st));
	st.started = true;
	st.reset_count = m.clk.reset_count;
	st.clock = m.clk.clock;
	st.boot_number = 1;
	st.next_entry = m.measured;
	st.replay = m.pcr10;

	for (unsigned r = 0; r < rounds; r++) {
		struct attest_request req;
		struct attest_result res;
		struct evidence ev;
		uint8_t nonce[32], attest[LIMIT_ATTEST], sig[LIMIT_SIGNATURE];
		double t0;
		int rc;

		dynbuf_reset(&m.buf);
		if (measure(&m, k) != 0 || RAND_bytes(nonce, sizeof(nonce)) != 1)
			goto cleanup;
		m.clk.clock += 2000;
		memset(&ev, 0, sizeof(ev));
		if (softtpm_quote(m.ak, nonce, sizeof(nonce), &m.pcrs, &m.clk, attest, sizeof(attest),
				  &ev.attest_len, sig, sizeof(sig), &ev.signature_len) != 0)
			goto cleanup;
		memcpy(ev.nonce, nonce, sizeof(nonce));
		ev.nonce_len = sizeof(nonce);
		ev.attest = attest;
		ev.signature = sig;
		ev.pcrs = m.pcrs;
		ev.log_offset = st.next_entry;
		ev.log = (uint8_t *)m.buf.buf;
		ev.log_len = m.buf.len;
		memset(&req, 0, sizeof(req));
		req.ak = m.ak;
		req.nonce = nonce;
		req.nonce_len = sizeof(nonce);
		req.requested = &m.pcrs;
		req.policy = pol;
		req.prev = &st;
		req.ev = &ev;
		memset(&res, 0, sizeof(res));
		t0 = bench_now();
		rc = attest_evaluate(&req, &res);
		t[r] = (bench_now() - t0) * 1e6;
		if (rc != 0 || !res.verdict.trusted || res.next.next_entry != m.measured) {
			fprintf(stderr, "incr: round %u at %llu entries: rc %d, %s %s\n", r,
				(unsigned long long)st.next_entry, rc,
				res.verdict.trusted ? "trusted" : "untrusted",
				res.verdict.nreasons ? res.verdict.reason[0].code : "");
			attest_result_release(&res);
			goto cleanup;
		}
		st = res.next;
		attest_result_release(&res);
	}
	*med_us = bench_percentile(t, rounds, 0.5, 0);
	*p99_us = bench_percentile(t, rounds, 0.99, 1);
	ret = 0;
cleanup:
	machine_release(&m);
	free(t);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned long shortn = 1000, longn = 1000000, rounds = 300, k = 10;
	struct policy *pol = policy_new();
	double sm = 0, sp = 0, lm = 0, lp = 0;
	int ret = 1;

	for (int i = 1; i + 1 < argc; i += 2) {
		unsigned long *dst = !strcmp(argv[i], "--short") ? &shortn :
				     !strcmp(argv[i], "--long") ? &longn :
				     !strcmp(argv[i], "--rounds") ? &rounds :
				     !strcmp(argv[i], "--per-round") ? &k : NULL;

		if (!dst || bench_parse_ulong(argv[i + 1], 100000000ul, dst) < 0 || *dst == 0) {
			fprintf(stderr, "usage: incr [--short N] [--long N] [--rounds R] [--per-round K]\n");
			policy_free(pol);
			return 2;
		}
	}
	if (argc % 2 == 0) {
		fprintf(stderr, "usage: incr [--short N] [--long N] [--rounds R] [--per-round K]\n");
		policy_free(pol);
		return 2;
	}
	if (!pol)
		return 1;
	for (unsigned i = 0; i < INCR_FILES; i++) {
		char path[64];
		uint8_t d[32];

		file_path(i, path, sizeof(path));
		SHA256((const uint8_t *)path, strlen(path), d);
		if (policy_add_digest(pol, path, TPM2_ALG_SHA256, d, 32) != 0)
			goto cleanup;
	}
	if (run_length(pol, shortn, (unsigned)rounds, (unsigned)k, &sm, &sp) != 0 ||
	    run_length(pol, longn, (unsigned)rounds, (unsigned)k, &lm, &lp) != 0)
		goto cleanup;
	printf("short_entries %lu\nlong_entries %lu\nper_round %lu\nrounds %lu\n", shortn, longn, k, rounds);
	printf("short_med_us %.1f\nlong_med_us %.1f\nshort_p99_us %.1f\nlong_p99_us %.1f\nratio %.3f\n",
	       sm, lm, sp, lp, lm / sm);
	ret = 0;
cleanup:
	policy_free(pol);
	return ret;
}
