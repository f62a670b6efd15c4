/*
 * filesig: what judging one IMA entry costs when a signature decides it, next to the digest
 * lookup that decides an unsigned one, measured side by side in one process.
 *
 *   filesig [--paths N] [--seconds S]
 *
 * One policy: N listed paths (one sha256 each) and two trusted keys, RSA-2048 and ECDSA P-256.
 * Three kinds of ima-sig entries go through judge_measurement(), the verifier's per-entry
 * decision: signed by the RSA key, signed by the EC key (both with paths the digest list does
 * not have, so the signature alone admits them), and unsigned entries of listed paths (the
 * digest lookup admits them). Each kind runs for S seconds over 256 distinct entries; every
 * entry must be allowed.
 *
 * Output lines `key value`: paths rsa_us ec_us digest_us (CPU µs per entry, one thread)
 * rsa_per_s ec_per_s digest_per_s.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <sys/resource.h>
#include <tss2/tss2_tpm2_types.h>

#include "bench/bench.h"
#include "proto/dynbuf.h"
#include "proto/encoding.h"
#include "tests/lib/softtpm.h"
#include "verifier/decision/judge.h"
#include "verifier/policy/policy.h"

#define KINDS 256u

struct ent {
	char path[64];
	uint8_t digest[32];
	uint8_t sig[9 + 512];
	size_t sig_len;
	struct ima_entry e;
};

static void path_of(unsigned long i, char *out, size_t cap)
{
	snprintf(out, cap, "/usr/lib/bench/d%04lu/file%07lu", i % 1000, i);
}

static char *b64_pubkey(EVP_PKEY *k)
{
	unsigned char *der = NULL;
	int n = i2d_PUBKEY(k, &der);
	char *b64 = n > 0 ? base64_encode_alloc(der, (size_t)n) : NULL;

	OPENSSL_free(der);
	return b64;
}

static char *make_policy(unsigned long n, EVP_PKEY *rsa, EVP_PKEY *ec)
{
	char *r = b64_pubkey(rsa), *e = b64_pubkey(ec), p[64], hex[65];
	struct dynbuf b;
	uint8_t d[32];

	dynbuf_init(&b, (size_t)1 << 30);
	dynbuf_addf(&b, "{\"version\": 1, \"keys\": [{\"der\": \"%s\"}, {\"der\": \"%s\"}], \"digests\": {\n",
		    r ? r : "", e ? e : "");
	for (unsigned long i = 0; i < n; i++) {
		path_of(i, p, sizeof(p));
		SHA256((const uint8_t *)p, strlen(p), d);
		hex_encode(d, 32, hex);
		dynbuf_addf(&b, "%s\"%s\": [\"sha256:%s\"]\n", i ? "," : "", p, hex);
	}
	dynbuf_adds(&b, "}}\n");
	free(r);
	free(e);
	return dynbuf_take(&b, NULL);
}

static void fill(struct ent *x, const char *path, const uint8_t *digest, bool sig)
{
	snprintf(x->path, sizeof(x->path), "%s", path);
	memcpy(x->digest, digest, 32);
	memset(&x->e, 0, sizeof(x->e));
	x->e.index = 1;
	x->e.path = x->path;
	x->e.path_len = (uint32_t)strlen(x->path);
	x->e.digest_alg = TPM2_ALG_SHA256;
	x->e.digest_alg_name = "sha256";
	x->e.digest_alg_name_len = 6;
	x->e.digest = x->digest;
	x->e.digest_len = 32;
	x->e.sig = x->sig; /* ima-sig: the field is there, empty when unsigned */
	x->e.sig_len = sig ? (uint32_t)x->sig_len : 0;
}

/* CPU µs per judge_measurement() over ents for about `seconds`; -1 if one was refused. */
static double run(const struct policy *pol, const struct ent *ents, double seconds, double *per_s)
{
	double t0 = bench_now(), c0 = bench_cpu(RUSAGE_THREAD), c1;
	unsigned long n = 0;
	struct judgement j;

	do {
		for (unsigned i = 0; i < KINDS; i++, n++)
			if (!judge_measurement(pol, &ents[i].e, &j))
				return -1;
	} while (bench_now() - t0 < seconds);
	c1 = bench_cpu(RUSAGE_THREAD);
	*per_s = (double)n / (bench_now() - t0);
	return (c1 - c0) * 1e6 / (double)n;
}

int main(int argc, char **argv)
{
	unsigned long paths = 100000;
	double seconds = 3, rsa_ps = 0, ec_ps = 0, dig_ps = 0, rsa_us, ec_us, dig_us;
	EVP_PKEY *rsa = EVP_RSA_gen(2048), *ec = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	static struct ent rs[KINDS], es[KINDS], ds[KINDS];
	struct policy *pol;
	char err[256], *json, p[64];

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--paths"))
			paths = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = strtod(argv[i + 1], NULL);
		else
			goto usage;
	}
	if (argc % 2 == 0 || paths < KINDS || seconds <= 0)
		goto usage;
	snprintf(err, sizeof(err), "out of memory");
	json = rsa && ec ? make_policy(paths, rsa, ec) : NULL;
	pol = json ? policy_load(json, strlen(json), err, sizeof(err)) : NULL;
	free(json);
	if (!pol) {
		fprintf(stderr, "filesig: policy: %s\n", err);
		return 2;
	}
	for (unsigned i = 0; i < KINDS; i++) {
		uint8_t d[32];

		snprintf(p, sizeof(p), "/opt/signed/file%04u", i);
		SHA256((const uint8_t *)p, strlen(p), d);
		if (softtpm_ima_sign(rsa, "sha256", d, 32, rs[i].sig, sizeof(rs[i].sig), &rs[i].sig_len) ||
		    softtpm_ima_sign(ec, "sha256", d, 32, es[i].sig, sizeof(es[i].sig), &es[i].sig_len)) {
			fprintf(stderr, "filesig: signing failed\n");
			return 2;
		}
		fill(&rs[i], p, d, true);
		fill(&es[i], p, d, true);
		path_of((unsigned long)i * (paths / KINDS), p, sizeof(p));
		SHA256((const uint8_t *)p, strlen(p), d);
		fill(&ds[i], p, d, false);
	}
	/* Interleaved, twice each, the better kept: the machine is shared. */
	rsa_us = ec_us = dig_us = 1e9;
	for (int rep = 0; rep < 2; rep++) {
		double v, ps;

		if ((v = run(pol, ds, seconds / 2, &ps)) < 0)
			goto refused;
		if (v < dig_us)
			dig_us = v, dig_ps = ps;
		if ((v = run(pol, rs, seconds / 2, &ps)) < 0)
			goto refused;
		if (v < rsa_us)
			rsa_us = v, rsa_ps = ps;
		if ((v = run(pol, es, seconds / 2, &ps)) < 0)
			goto refused;
		if (v < ec_us)
			ec_us = v, ec_ps = ps;
	}
	printf("paths %lu\nrsa_us %.2f\nec_us %.2f\ndigest_us %.3f\n", paths, rsa_us, ec_us, dig_us);
	printf("rsa_per_s %.0f\nec_per_s %.0f\ndigest_per_s %.0f\n", rsa_ps, ec_ps, dig_ps);
	policy_free(pol);
	EVP_PKEY_free(rsa);
	EVP_PKEY_free(ec);
	return 0;
refused:
	fprintf(stderr, "filesig: an entry that must be allowed was refused\n");
	return 1;
usage:
	fprintf(stderr, "usage: filesig [--paths N] [--seconds S]\n");
	return 2;
}
