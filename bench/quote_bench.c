/*
 * quote_bench: quote checks per second, in process, against one OpenSSL signature verify.
 *
 *   quote_bench [--seconds S] [--files DIR]
 *
 * For RSA-2048 (RSASSA-SHA256) and ECDSA P-256 (SHA-256) AKs: makes one quote with softtpm over
 * sha1 + sha256 PCR 0-10 (a 32-byte nonce), then for about S seconds each
 *   ours:  quote_verify() with the AK as the verifier holds it (TPM2B_PUBLIC -> EVP_PKEY once),
 *          the expected selection and the reported PCR values (signature, nonce, selection and
 *          pcrDigest all checked);
 *   floor: EVP_DigestVerifyInit + EVP_DigestVerify(SHA-256) of the same attest bytes with the
 *          same key and the same signature (DER for ECDSA): the signature check alone.
 * With --files, writes what tpm2_checkquote takes, per algorithm ALG (rsa, ecc): DIR/ALG.pem
 * (AK public key), DIR/ALG.msg (TPMS_ATTEST), DIR/ALG.sig (marshalled TPMT_SIGNATURE),
 * DIR/ALG.pcrs (tpm2-tools serialized PCR file) and DIR/nonce (hex).
 *
 * Output lines `key value`: ALG_ours_per_s, ALG_floor_per_s, ALG_ours_cpu_us, ALG_floor_cpu_us.
 */
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <tss2/tss2_tpm2_types.h>

#include "bench/bench.h"
#include "proto/encoding.h"
#include "proto/quote.h"
#include "tests/lib/softtpm.h"
#include "proto/tpmkey.h"

struct sample {
	uint8_t attest[LIMIT_ATTEST];
	size_t attest_len;
	uint8_t sig[LIMIT_SIGNATURE];
	size_t sig_len;
	uint8_t raw[1024]; /* signature as EVP_DigestVerify takes it */
	size_t raw_len;
};

static int write_file(const char *dir, const char *name, const void *buf, size_t len)
{
	char path[4096];
	FILE *f;
	int ret = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "wb");
	if (!f)
		return -errno;
	if (fwrite(buf, 1, len, f) != len)
		ret = -EIO;
	if (fclose(f) != 0)
		ret = -EIO;
	return ret;
}

/* tpm2-tools lib/pcr.c pcr_fwrite_serialized: TPML_PCR_SELECTION, u32 n, n x TPML_DIGEST (host order). */
static int write_pcrs(const char *dir, const char *name, const struct pcr_set *pcrs)
{
	TPML_PCR_SELECTION sel;
	TPML_DIGEST dig[8];
	uint32_t n = 0;
	uint8_t out[sizeof(sel) + 4 + sizeof(dig)];
	size_t off = 0;

	memset(&sel, 0, sizeof(sel));
	memset(dig, 0, sizeof(dig));
	sel.count = pcrs->nbanks;
	for (unsigned b = 0; b < pcrs->nbanks; b++) {
		const struct pcr_bank *bank = &pcrs->bank[b];
		size_t dsz = pcr_alg_digest_size(bank->alg);

		sel.pcrSelections[b].hash = bank->alg;
		sel.pcrSelections[b].sizeofSelect = 3;
		for (unsigned i = 0; i < PCR_COUNT; i++) {
			TPML_DIGEST *d;

			if (!(bank->mask & (1u << i)))
				continue;
			sel.pcrSelections[b].pcrSelect[i / 8] |= (uint8_t)(1u << (i % 8));
			if (n == 0 || dig[n - 1].count == 8) {
				if (n == 8)
					return -E2BIG;
				n++;
			}
			d = &dig[n - 1];
			d->digests[d->count].size = (uint16_t)dsz;
			memcpy(d->digests[d->count].buffer, bank->value[i], dsz);
			d->count++;
		}
	}
	memcpy(out, &sel, sizeof(sel));
	off = sizeof(sel);
	memcpy(out + off, &n, 4);
	off += 4;
	memcpy(out + off, dig, n * sizeof(TPML_DIGEST));
	off += n * sizeof(TPML_DIGEST);
	{
		struct pcr_set check;

		if (quote_parse_tpm2tools_pcrs(out, off, &check) != 0 ||
		    !pcr_set_same_selection(&check, pcrs))
			return -EINVAL;
	}
	return write_file(dir, name, out, off);
}

static int raw_signature(const uint8_t *sig, size_t len, struct sample *s)
{
	TPMT_SIGNATURE t;
	ECDSA_SIG *es = NULL;
	BIGNUM *r = NULL, *ss = NULL;
	uint8_t *p = s->raw;
	int n, ret = -EINVAL;

	if (quote_parse_signature(sig, len, &t) != QUOTE_OK)
		return -EINVAL;
	if (t.sigAlg == TPM2_ALG_RSASSA) {
		memcpy(s->raw, t.signature.rsassa.sig.buffer, t.signature.rsassa.sig.size);
		s->raw_len = t.signature.rsassa.sig.size;
		return 0;
	}
	if (t.sigAlg != TPM2_ALG_ECDSA)
		return -EINVAL;
	es = ECDSA_SIG_new();
	r = BN_bin2bn(t.signature.ecdsa.signatureR.buffer, t.signature.ecdsa.signatureR.size, NULL);
	ss = BN_bin2bn(t.signature.ecdsa.signatureS.buffer, t.signature.ecdsa.signatureS.size, NULL);
	if (!es || !r || !ss || !ECDSA_SIG_set0(es, r, ss))
		goto cleanup;
	r = ss = NULL;
	n = i2d_ECDSA_SIG(es, NULL);
	if (n <= 0 || (size_t)n > sizeof(s->raw) || i2d_ECDSA_SIG(es, &p) != n)
		goto cleanup;
	s->raw_len = (size_t)n;
	ret = 0;
cleanup:
	BN_free(r);
	BN_free(ss);
	ECDSA_SIG_free(es);
	return ret;
}

static int run_alg(const char *name, EVP_PKEY *key, const struct pcr_set *pcrs,
		   const uint8_t *nonce, size_t nonce_len, double seconds, const char *dir)
{
	struct sample s;
	struct softtpm_clock clk = {.clock = 1000, .reset_count = 1, .safe = 1};
	uint8_t pub[LIMIT_TPM2B_PUBLIC];
	size_t pub_len;
	TPMT_PUBLIC tp;
	EVP_PKEY *ak = NULL;
	EVP_MD_CTX *mctx = EVP_MD_CTX_new();
	struct quote_info info;
	double t0, c0, w, c;
	unsigned long n;
	int ret = -EIO;

	if (!mctx)
		goto cleanup;
	if (softtpm_ak_public(key, 0, pub, sizeof(pub), &pub_len) != 0 ||
	    tpmkey_parse_public(pub, pub_len, &tp) != 0 || !(ak = tpmkey_to_evp(&tp)) ||
	    softtpm_quote(key, nonce, nonce_len, pcrs, &clk, s.attest, sizeof(s.attest),
			  &s.attest_len, s.sig, sizeof(s.sig), &s.sig_len) != 0 ||
	    raw_signature(s.sig, s.sig_len, &s) != 0) {
		fprintf(stderr, "quote_bench: %s: cannot make the quote\n", name);
		goto cleanup;
	}
	if (quote_verify(ak, s.attest, s.attest_len, s.sig, s.sig_len, nonce, nonce_len, pcrs,
			 pcrs, &info) != QUOTE_OK) {
		fprintf(stderr, "quote_bench: %s: our check refuses a good quote\n", name);
		goto cleanup;
	}
	if (dir) {
		char fname[64];
		BIO *bio;

		snprintf(fname, sizeof(fname), "%s/%s.pem", dir, name);
		bio = BIO_new_file(fname, "w");
		if (!bio || !PEM_write_bio_PUBKEY(bio, ak)) {
			BIO_free(bio);
			goto cleanup;
		}
		BIO_free(bio);
		snprintf(fname, sizeof(fname), "%s.msg", name);
		if (write_file(dir, fname, s.attest, s.attest_len) != 0)
			goto cleanup;
		snprintf(fname, sizeof(fname), "%s.sig", name);
		if (write_file(dir, fname, s.sig, s.sig_len) != 0)
			goto cleanup;
		snprintf(fname, sizeof(fname), "%s.pcrs", name);
		if (write_pcrs(dir, fname, pcrs) != 0)
			goto cleanup;
	}

	/* ours */
	t0 = bench_now();
	c0 = bench_cpu(RUSAGE_SELF);
	for (n = 0; n < 10000000ul; n++) {
		if (quote_verify(ak, s.attest, s.attest_len, s.sig, s.sig_len, nonce, nonce_len, pcrs,
				 pcrs, &info) != QUOTE_OK)
			goto cleanup;
		if ((n & 15) == 15 && bench_now() - t0 > seconds)
			break;
	}
	n++;
	w = bench_now() - t0;
	c = bench_cpu(RUSAGE_SELF) - c0;
	printf("%s_ours_per_s %.1f\n%s_ours_cpu_us %.2f\n", name, (double)n / w, name, c / (double)n * 1e6);

	/* floor */
	t0 = bench_now();
	c0 = bench_cpu(RUSAGE_SELF);
	for (n = 0; n < 10000000ul; n++) {
		if (EVP_DigestVerifyInit(mctx, NULL, EVP_sha256(), NULL, ak) != 1 ||
		    EVP_DigestVerify(mctx, s.raw, s.raw_len, s.attest, s.attest_len) != 1)
			goto cleanup;
		if ((n & 15) == 15 && bench_now() - t0 > seconds)
			break;
	}
	n++;
	w = bench_now() - t0;
	c = bench_cpu(RUSAGE_SELF) - c0;
	printf("%s_floor_per_s %.1f\n%s_floor_cpu_us %.2f\n", name, (double)n / w, name, c / (double)n * 1e6);
	ret = 0;
cleanup:
	EVP_MD_CTX_free(mctx);
	EVP_PKEY_free(ak);
	return ret;
}

int main(int argc, char **argv)
{
	double seconds = 2;
	const char *dir = NULL;
	EVP_PKEY *rsa = NULL, *ecc = NULL;
	struct pcr_set pcrs;
	uint8_t nonce[32];
	char hex[65];
	int ret = 1;

	for (int i = 1; i < argc; i++) {
		unsigned long v;

		if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			if (bench_parse_ulong(argv[++i], 600, &v) < 0 || v == 0)
				goto usage;
			seconds = (double)v;
		} else if (!strcmp(argv[i], "--files") && i + 1 < argc) {
			dir = argv[++i];
		} else {
			goto usage;
		}
	}
	memset(&pcrs, 0, sizeof(pcrs));
	for (unsigned b = 0; b < 2; b++) {
		struct pcr_bank *bank = pcr_set_add_bank(&pcrs, b ? TPM2_ALG_SHA256 : TPM2_ALG_SHA1);

		if (!bank)
			goto cleanup;
		bank->mask = 0x7ff; /* PCR 0-10, what the verifier asks for */
		if (RAND_bytes((uint8_t *)bank->value, sizeof(bank->value)) != 1)
			goto cleanup;
	}
	if (RAND_bytes(nonce, sizeof(nonce)) != 1)
		goto cleanup;
	if (dir) {
		hex_encode(nonce, sizeof(nonce), hex);
		if (write_file(dir, "nonce", hex, 64) != 0)
			goto cleanup;
	}
	rsa = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	ecc = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (!rsa || !ecc)
		goto cleanup;
	if (run_alg("rsa", rsa, &pcrs, nonce, sizeof(nonce), seconds, dir) != 0 ||
	    run_alg("ecc", ecc, &pcrs, nonce, sizeof(nonce), seconds, dir) != 0)
		goto cleanup;
	ret = 0;
cleanup:
	if (ret)
		fprintf(stderr, "quote_bench: failed\n");
	EVP_PKEY_free(rsa);
	EVP_PKEY_free(ecc);
	return ret;
usage:
	fprintf(stderr, "usage: quote_bench [--seconds S] [--files DIR]\n");
	return 2;
}
