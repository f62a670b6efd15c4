/*
 * libFuzzer target: quote_verify() with fixed software AKs (RSA-2048 and EC P-256) over
 * arbitrary attest, signature, nonce and reported PCR bytes. It must never crash, and it must
 * never answer QUOTE_OK unless the attest is one this harness signed with that key, the nonce
 * is the one in it, and the reported PCRs are exactly the ones quoted (same banks, order, masks
 * and values): no forgery, no replay under another nonce, no second PCR set for one digest.
 *
 * Input: u8 flags (bit 0: EC key, bit 1: pass the reported selection as the expected one,
 * bit 2: pass no PCR values), u8 nonce length, nonce, u16 attest length, attest, u16 signature
 * length, signature (all lengths big-endian), then reported PCRs up to the end: per bank u16
 * alg, 3 mask bytes (PCR 0 first), then the value of each selected PCR in ascending order.
 *
 * The signed quotes are rebuilt at start-up with tests/lib/softtpm.c (attests are deterministic,
 * only ECDSA signatures vary). With FUZZ_QUOTE_SEEDS=DIR set, the start-up also writes one
 * input per signed quote into DIR: that is how tests/fuzz/corpus/fuzz_quote_verify/ was made.
 *
 * The keys below are test keys made for this harness; they protect nothing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <tss2/tss2_mu.h>

#include "proto/quote.h"
#include "tests/lib/softtpm.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char rsa_pem[] =
	"-----BEGIN PRIVATE KEY-----\n"
	"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCH/q0wbo1QWgJA\n"
	"i+y7a3MoQNkx7vISgKtfTqUzkwDqPwsQfosUdwoe56x4SI+LCGGqlv3gdHjg8YoH\n"
	"1szbFoj7OXnEnKjxPaUBYzbRKMyUpBs/XKcA62AgJLd+ztUYNBLkXuTE82pXSQc8\n"
	"zQRLWkrx+f8S/l+wyDjIhvUAc3gfcadOkw4vrNpqHrBbEFJl37eQ5vzrkDBYH5uE\n"
	"GXhbjqfQjsOqGXlPHeKwid4iDfuy8jDiZEYuPlraoSJtB4kN9dmvL/o4nkfjh6FY\n"
	"Ei7U+UxaBKs9rnZlvkLQLrLNwS6uiOgw+cMMVTWMuEohdGcc8W5dgkLP38t9qkA9\n"
	"qCMNlDABAgMBAAECggEAFCK1sueTfdOt5K+zD/bzWIDth7Ko3et2NEjZNf8skgJe\n"
	"mYUbA58yfOvxgefAdSX7C/6KPXsRUMECnnGD6GZ4RrY2XNGTRBDMBx4RBjwDunhn\n"
	"3mRSB9VR6MB2+MwYChrftzeDqNOfqafS7gIvAhcu5JAO39mRAoRKwAoXaYcvQHxk\n"
	"t9JxhRgNxLzue7f0YB/5m6nr0z8eRpoORkJsVrlfwjIX5H62+5b9ZOjsQvXZiyXH\n"
	"454tlzR3yy9Ne6fjXfOkjlv+uBzX3LlRRxqRL3BKUt+wTINcK5g01XdmzmIfjvKA\n"
	"KqMH4E2FfNGqb9AvASpm5B7EDTw6ecJ3ibpYkq2efwKBgQC7DkjyU6GmrwgaqbF1\n"
	"ixSgjkYBYOP2NAKBOjfcfAn/FwBZML1lIWHKdmcgKtGikRiaEoxwsYPS9FbJlDzg\n"
	"jimXfeqpIRz9iaUaRg6OY2WOKSsRqC9vUR0ort1V65vUlha9br/KJZ62S0zs9rm6\n"
	"WgvO3wY7GKFvNP8ZsscLQSvkdwKBgQC6HoQWhCLe3Vp8nNIIKLQ5OW/pc8ZECrLn\n"
	"fpZ4PXJPibCNXLtsv7wYVdQlFXQiIBZEbD+W+kRWpzHcI51znsiXWrCE1nU/YzTM\n"
	"8h9Ehx5tatMa+GYk9axKPy0iAQB1Ok5WQmY6ZkYPwVfBU95+WINZA2uhCT7RDUv+\n"
	"xCG8FHqFRwKBgFgjQvvrrB9+GbN2gceA4RdF8nZz0PYRS5zYcbnSOGOZ0vAzpwof\n"
	"0JQ1diISCvUuqQjv9HylKBgeSUZyMr0cPzzCd+95Ss+sK79Vg0ZUT2XMwB5xwOgS\n"
	"sEqbGm+BtMtWbSCVLolxcHc0w+pj1t+XzjiLncP6txZPQmQ5eNA0xRnBAoGBAKmT\n"
	"pEXfnuXwSMHBIJzOeWaqLo1GLx9PoDHL5M0pLz3I9lPWae5rw7VofiJLqcRt99vf\n"
	"xRCKdjl9nLA2wv7VbW558tsViz515WXWNSb69X48Fpw8NtT2AkSjyztwLjqhJT7y\n"
	"wLH0/WDdiFddUxtLCmHP/AB9q/5NXzCBAzuabQeBAoGAIruNBTOjXJgqUACoSQuw\n"
	"2Y18/eaOMcuO6QCOkncL9UWGl2h9/QizChrNuTxDAzjP7WEctkBgJCHK7Je41A/O\n"
	"Xg97I4sB+c1etH/MWYLaXeEZyePLdGSAkyzptU2jkcVGcS/EqlBEymIE9Yufzk1s\n"
	"qafGelDwdE7jYkH9Dc2+PXo=\n"
	"-----END PRIVATE KEY-----\n";

static const char ec_pem[] =
	"-----BEGIN PRIVATE KEY-----\n"
	"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQggI0MBbcXlL8/w6Uw\n"
	"/+xuK4z+IfqSyXY1gBhykUFsY/+hRANCAASPwlkfKSSGRG30QsBl1R2epy5oA8aN\n"
	"K6GbnYQo8bIVjuknP0fr1ajTc07N5tei+E2i8109N77Bo+WoIlc4sYyj\n"
	"-----END PRIVATE KEY-----\n";

#define NKEYS 2
#define MAX_SIGNED 32

struct signed_quote {
	unsigned key;
	uint8_t nonce[LIMIT_NONCE_BYTES];
	size_t nonce_len;
	struct pcr_set pcrs;
	uint8_t attest[LIMIT_ATTEST];
	size_t attest_len;
};

static EVP_PKEY *keys[NKEYS];
static struct signed_quote signed_quotes[MAX_SIGNED];
static unsigned nsigned;

static EVP_PKEY *load_key(const char *pem)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *k = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;

	BIO_free(bio);
	if (!k)
		abort();
	return k;
}

/* The same attest signed with RSASSA-PSS (salt = hash length, as TPMs do): softtpm has no PSS. */
static int sign_pss(EVP_PKEY *k, const uint8_t *msg, size_t len, uint8_t *sig, size_t cap,
		    size_t *sig_len)
{
	TPMT_SIGNATURE s;
	uint8_t digest[32];
	size_t slen = sizeof(s.signature.rsapss.sig.buffer), off = 0;
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(k, NULL);
	int ok;

	memset(&s, 0, sizeof(s));
	ok = ctx && EVP_Digest(msg, len, digest, NULL, EVP_sha256(), NULL) &&
	     EVP_PKEY_sign_init(ctx) > 0 && EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()) > 0 &&
	     EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PSS_PADDING) > 0 &&
	     EVP_PKEY_CTX_set_rsa_pss_saltlen(ctx, 32) > 0 &&
	     EVP_PKEY_sign(ctx, s.signature.rsapss.sig.buffer, &slen, digest, sizeof(digest)) > 0;
	EVP_PKEY_CTX_free(ctx);
	if (!ok)
		return -EINVAL;
	s.sigAlg = TPM2_ALG_RSAPSS;
	s.signature.rsapss.hash = TPM2_ALG_SHA256;
	s.signature.rsapss.sig.size = (UINT16)slen;
	if (Tss2_MU_TPMT_SIGNATURE_Marshal(&s, sig, cap, &off) != TSS2_RC_SUCCESS)
		return -ENOSPC;
	*sig_len = off;
	return 0;
}

static void put16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void write_seed(const char *dir, unsigned idx, const char *kind, uint8_t flags,
		       const struct signed_quote *q, const uint8_t *sig, size_t sig_len)
{
	static uint8_t buf[8192];
	char path[4096];
	size_t n = 0;
	FILE *f;

	buf[n++] = flags;
	buf[n++] = (uint8_t)q->nonce_len;
	memcpy(buf + n, q->nonce, q->nonce_len);
	n += q->nonce_len;
	put16(buf + n, q->attest_len);
	memcpy(buf + n + 2, q->attest, q->attest_len);
	n += 2 + q->attest_len;
	put16(buf + n, sig_len);
	memcpy(buf + n + 2, sig, sig_len);
	n += 2 + sig_len;
	for (unsigned i = 0; i < q->pcrs.nbanks; i++) {
		const struct pcr_bank *b = &q->pcrs.bank[i];
		size_t d = pcr_alg_digest_size(b->alg);

		put16(buf + n, b->alg);
		buf[n + 2] = (uint8_t)b->mask;
		buf[n + 3] = (uint8_t)(b->mask >> 8);
		buf[n + 4] = (uint8_t)(b->mask >> 16);
		n += 5;
		for (unsigned p = 0; p < PCR_COUNT; p++)
			if (b->mask >> p & 1) {
				memcpy(buf + n, b->value[p], d);
				n += d;
			}
	}
	snprintf(path, sizeof(path), "%s/seed-%02u-%s", dir, idx, kind);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, n, f) != n || fclose(f) != 0)
		abort();
}

/* A few selections a verifier asks for: the usual sha1+sha256 0-10, one bank, all four. */
static void make_pcrs(unsigned variant, struct pcr_set *s)
{
	static const uint16_t algs[] = { TPM2_ALG_SHA1, TPM2_ALG_SHA256, TPM2_ALG_SHA384,
					 TPM2_ALG_SHA512 };
	static const struct { unsigned nbanks; unsigned first; uint32_t mask; } v[] = {
		{ 2, 0, 0x7ff }, { 1, 1, 0x400 }, { 4, 0, 0x401 }, { 1, 3, 0xffffff },
	};

	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < v[variant].nbanks; i++) {
		struct pcr_bank *b = pcr_set_add_bank(s, algs[(v[variant].first + i) % 4]);

		if (!b)
			abort();
		b->mask = v[variant].mask;
		for (unsigned p = 0; p < PCR_COUNT; p++)
			if (b->mask >> p & 1)
				memset(b->value[p], (int)(p * 16 + i + variant), sizeof(b->value[p]));
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("FUZZ_QUOTE_SEEDS");
	struct softtpm_clock clk = { 123456789, 3, 1, 1, 0x2023011100000000ull };
	uint8_t sig[LIMIT_SIGNATURE];
	size_t sig_len;

	/* tpm2-tss logs every failed unmarshal to stderr: silence it, a fuzzer makes millions. */
	setenv("TSS2_LOG", "all+none", 0);
	keys[0] = load_key(rsa_pem);
	keys[1] = load_key(ec_pem);
	for (unsigned k = 0; k < NKEYS; k++)
		for (unsigned v = 0; v < 4; v++) {
			struct signed_quote *q = &signed_quotes[nsigned];

			q->key = k;
			q->nonce_len = v == 3 ? LIMIT_NONCE_BYTES : v == 2 ? 20 : 32;
			for (size_t i = 0; i < q->nonce_len; i++)
				q->nonce[i] = (uint8_t)(0xa0 + v + i);
			make_pcrs(v, &q->pcrs);
			if (softtpm_quote(keys[k], q->nonce, q->nonce_len, &q->pcrs, &clk, q->attest,
					  sizeof(q->attest), &q->attest_len, sig, sizeof(sig), &sig_len))
				abort();
			if (dir)
				write_seed(dir, nsigned, k ? "ecdsa" : "rsassa", (uint8_t)(k | (v & 1) << 1),
					   q, sig, sig_len);
			if (dir && k == 0) {
				if (sign_pss(keys[0], q->attest, q->attest_len, sig, sizeof(sig), &sig_len))
					abort();
				write_seed(dir, nsigned, "rsapss", (uint8_t)((v & 1) << 1), q, sig, sig_len);
			}
			nsigned++;
		}
	return 0;
}

/* Consumes a big-endian u16 length and that many bytes; 0 if the input is too short. */
static int take(const uint8_t **p, size_t *left, const uint8_t **out, size_t *out_len)
{
	size_t n;

	if (*left < 2)
		return 0;
	n = (size_t)(*p)[0] << 8 | (*p)[1];
	if (*left - 2 < n)
		return 0;
	*out = *p + 2;
	*out_len = n;
	*p += 2 + n;
	*left -= 2 + n;
	return 1;
}

/* Banks until the input ends, an unknown or repeated bank, a mask past PCR 23 or no room. */
static void read_pcrs(const uint8_t *p, size_t left, struct pcr_set *s)
{
	memset(s, 0, sizeof(*s));
	while (left >= 5) {
		struct pcr_bank *b = pcr_set_add_bank(s, (uint16_t)(p[0] << 8 | p[1]));
		uint32_t mask = (uint32_t)p[2] | (uint32_t)p[3] << 8 | (uint32_t)p[4] << 16;
		size_t d;

		if (!b)
			return;
		b->mask = mask;
		d = pcr_alg_digest_size(b->alg);
		p += 5;
		left -= 5;
		for (unsigned n = 0; n < PCR_COUNT; n++) {
			if (!(mask >> n & 1))
				continue;
			if (left < d)
				return; /* the rest stays zero */
			memcpy(b->value[n], p, d);
			p += d;
			left -= d;
		}
	}
}

static int same_values(const struct pcr_set *a, const struct pcr_set *b)
{
	if (!pcr_set_same_selection(a, b))
		return 0;
	for (unsigned i = 0; i < a->nbanks; i++) {
		size_t d = pcr_alg_digest_size(a->bank[i].alg);

		for (unsigned n = 0; n < PCR_COUNT; n++)
			if ((a->bank[i].mask >> n & 1) &&
			    memcmp(a->bank[i].value[n], b->bank[i].value[n], d) != 0)
				return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pcr_set pcrs;
	const uint8_t *p = data, *nonce, *attest, *sig;
	size_t left = size, nonce_len, attest_len, sig_len;
	struct quote_info info;
	const struct signed_quote *q = NULL;
	enum quote_result r;
	unsigned key, want_sel, no_pcrs;

	if (left < 2)
		return 0;
	key = p[0] & 1;
	want_sel = p[0] >> 1 & 1;
	no_pcrs = p[0] >> 2 & 1;
	nonce_len = p[1];
	p += 2;
	left -= 2;
	if (nonce_len > left)
		return 0;
	nonce = p;
	p += nonce_len;
	left -= nonce_len;
	if (!take(&p, &left, &attest, &attest_len) || !take(&p, &left, &sig, &sig_len))
		return 0;
	read_pcrs(p, left, &pcrs);

	r = quote_verify(keys[key], attest, attest_len, sig, sig_len, nonce, nonce_len,
			 want_sel ? &pcrs : NULL, no_pcrs ? NULL : &pcrs, &info);
	if ((unsigned)r > QUOTE_UNSUPPORTED_ALGORITHM)
		abort(); /* a result outside the enum */
	if (r != QUOTE_OK)
		return 0;
	for (unsigned i = 0; i < nsigned && !q; i++)
		if (signed_quotes[i].key == key && signed_quotes[i].attest_len == attest_len &&
		    memcmp(signed_quotes[i].attest, attest, attest_len) == 0)
			q = &signed_quotes[i];
	if (!q)
		abort(); /* accepted an attest this key never signed */
	if (q->nonce_len != nonce_len || memcmp(q->nonce, nonce, nonce_len) != 0)
		abort(); /* accepted under a nonce the quote was not made for */
	if (!pcr_set_same_selection(&info.selection, &q->pcrs))
		abort();
	if (want_sel && !pcr_set_same_selection(&pcrs, &q->pcrs))
		abort();
	if (!no_pcrs && !same_values(&pcrs, &q->pcrs))
		abort(); /* two PCR sets for one quoted digest */
	return 0;
}
