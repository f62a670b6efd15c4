/*
 * Quote verification on quotes captured from swtpm with tpm2-tools 5.4 (tests/data/tpm/):
 * AKs created under the EK with RSASSA, RSAPSS and ECDSA, PCR 10 extended once with
 * sha1=aa..aa, sha256=bb..bb, quoted over sha1:10+sha256:10 (and sha256:0-10) with nonce
 * 0123456789abcdef0123456789abcdef. Every alteration must be rejected with its reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <tss2/tss2_mu.h>

#include "proto/quote.h"
#include "proto/tpmkey.h"
#include "verifier/facts/reasons.h"
#include "tests/unit/check.h"
#include "tests/unit/testdata.h"

static const uint8_t nonce[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
				  0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};


static EVP_PKEY *load_ak(const char *name)
{
	struct blob b = load(name);
	TPMT_PUBLIC pub;
	EVP_PKEY *k = NULL;

	if (tpmkey_parse_public(b.p, b.n, &pub) == 0)
		k = tpmkey_to_evp(&pub);
	free(b.p);
	return k;
}

/* The expected PCR 10 after one extend from zero, computed here, not read from the quote. */
static void expected_pcrs(struct pcr_set *s, bool sha1)
{
	uint8_t buf[64];
	unsigned int n;

	memset(s, 0, sizeof(*s));
	if (sha1) {
		struct pcr_bank *b = pcr_set_add_bank(s, TPM2_ALG_SHA1);
		memset(buf, 0, 20);
		memset(buf + 20, 0xaa, 20);
		b->mask = 1u << 10;
		EVP_Digest(buf, 40, b->value[10], &n, EVP_sha1(), NULL);
	}
	struct pcr_bank *b = pcr_set_add_bank(s, TPM2_ALG_SHA256);
	memset(buf, 0, 32);
	memset(buf + 32, 0xbb, 32);
	b->mask = 1u << 10;
	EVP_Digest(buf, 64, b->value[10], &n, EVP_sha256(), NULL);
}

/* A result in messages: "ok", or the verdict reason the verifier gives for it. */
static const char *qname(enum quote_result r)
{
	return r == QUOTE_OK ? "ok" : reason_name(reason_of_quote(r));
}

static void test_pcr_file(void)
{
	struct blob f = load("q_rsassa.pcrs");
	struct pcr_set got, want;
	int bad = 0;

	expected_pcrs(&want, true);
	CHECK(quote_parse_tpm2tools_pcrs(f.p, f.n, &got) == 0, "parse tpm2-tools pcr file");
	CHECK(pcr_set_same_selection(&got, &want), "selection sha1:10+sha256:10");
	CHECK(!memcmp(got.bank[0].value[10], want.bank[0].value[10], 20), "sha1 PCR10 value");
	CHECK(!memcmp(got.bank[1].value[10], want.bank[1].value[10], 32), "sha256 PCR10 value");
	for (size_t l = 0; l < f.n; l++)
		if (quote_parse_tpm2tools_pcrs(f.p, l, &got) != -EINVAL)
			bad++;
	CHECK(bad == 0, "pcr file truncated at every length rejected (%d accepted)", bad);
	f.p[0] = 5; /* more banks than we hold */
	CHECK(quote_parse_tpm2tools_pcrs(f.p, f.n, &got) == -EINVAL, "bank count 5");
	f.p[0] = 2;
	f.p[0x88] = 3; /* TPML_DIGEST count 3 > selected 2 */
	CHECK(quote_parse_tpm2tools_pcrs(f.p, f.n, &got) == -EINVAL, "stray digest");
	f.p[0x88] = 9;
	CHECK(quote_parse_tpm2tools_pcrs(f.p, f.n, &got) == -EINVAL, "digest count 9");
	f.p[0x88] = 2;
	f.p[0x8c] = 32; /* sha1 digest claims 32 bytes */
	CHECK(quote_parse_tpm2tools_pcrs(f.p, f.n, &got) == -EINVAL, "digest size");
	f.p[0x8c] = 20;
	CHECK(quote_parse_tpm2tools_pcrs(f.p, f.n, &got) == 0, "restored");
	free(f.p);

	f = load("q_all.pcrs");
	CHECK(quote_parse_tpm2tools_pcrs(f.p, f.n, &got) == 0, "parse 11-PCR file (two TPML_DIGEST)");
	CHECK(got.nbanks == 1 && got.bank[0].alg == TPM2_ALG_SHA256 && got.bank[0].mask == 0x7ff,
	      "sha256:0-10");
	CHECK(!memcmp(got.bank[0].value[10], want.bank[1].value[10], 32), "PCR10 in second list");
	free(f.p);
}

static void check_valid(const char *ak_file, const char *stem, int sig_alg)
{
	char mn[64], sn[64];
	EVP_PKEY *ak = load_ak(ak_file);
	struct blob m, s;
	struct pcr_set pcrs, sel, other;
	struct quote_info info;
	enum quote_result r;
	int bad;

	snprintf(mn, sizeof(mn), "%s.msg", stem);
	snprintf(sn, sizeof(sn), "%s.sig", stem);
	m = load(mn);
	s = load(sn);
	expected_pcrs(&pcrs, true);
	sel = pcrs;
	CHECK(ak != NULL, "%s loads", ak_file);

	r = quote_verify(ak, m.p, m.n, s.p, s.n, nonce, sizeof(nonce), &sel, &pcrs, &info);
	CHECK(r == QUOTE_OK, "%s valid: %s", stem, qname(r));
	CHECK(info.sig_alg == sig_alg && info.sig_hash == TPM2_ALG_SHA256, "%s sig alg", stem);
	/* Clock info read from the fixed offsets of this attest (qualifiedSigner 34, nonce 16). */
	CHECK(info.reset_count == (uint32_t)(m.p[0x44] << 24 | m.p[0x45] << 16 | m.p[0x46] << 8 | m.p[0x47]),
	      "%s resetCount", stem);
	CHECK(info.safe == (m.p[0x4c] != 0), "%s safe", stem);
	CHECK(info.pcr_digest_len == 32 && !memcmp(info.pcr_digest, m.p + m.n - 32, 32), "%s digest", stem);
	CHECK(pcr_set_same_selection(&info.selection, &sel), "%s selection out", stem);

	r = quote_verify(ak, m.p, m.n, s.p, s.n, nonce, sizeof(nonce), NULL, NULL, &info);
	CHECK(r == QUOTE_OK, "%s valid without pcrs", stem);

	/* another nonce, a shorter nonce */
	uint8_t n2[16];
	memcpy(n2, nonce, 16);
	n2[15] ^= 1;
	r = quote_verify(ak, m.p, m.n, s.p, s.n, n2, 16, &sel, &pcrs, &info);
	CHECK(r == QUOTE_NONCE_MISMATCH, "%s other nonce: %s", stem, qname(r));
	r = quote_verify(ak, m.p, m.n, s.p, s.n, nonce, 15, &sel, &pcrs, &info);
	CHECK(r == QUOTE_NONCE_MISMATCH, "%s short nonce: %s", stem, qname(r));

	/* another PCR value */
	pcrs.bank[0].value[10][3] ^= 0x40;
	r = quote_verify(ak, m.p, m.n, s.p, s.n, nonce, sizeof(nonce), &sel, &pcrs, &info);
	CHECK(r == QUOTE_PCR_DIGEST_MISMATCH, "%s other PCR: %s", stem, qname(r));
	pcrs.bank[0].value[10][3] ^= 0x40;
	/* a value for an unselected PCR does not matter */
	pcrs.bank[1].value[11][0] = 1;
	r = quote_verify(ak, m.p, m.n, s.p, s.n, nonce, sizeof(nonce), &sel, &pcrs, &info);
	CHECK(r == QUOTE_OK, "%s unselected PCR ignored: %s", stem, qname(r));

	/* another expected selection; reported values for another selection */
	other = sel;
	other.bank[1].mask |= 1;
	r = quote_verify(ak, m.p, m.n, s.p, s.n, nonce, sizeof(nonce), &other, &pcrs, &info);
	CHECK(r == QUOTE_PCR_SELECTION_MISMATCH, "%s expected selection: %s", stem, qname(r));
	expected_pcrs(&other, false);
	r = quote_verify(ak, m.p, m.n, s.p, s.n, nonce, sizeof(nonce), &sel, &other, &info);
	CHECK(r == QUOTE_PCR_SELECTION_MISMATCH, "%s reported selection: %s", stem, qname(r));
	/* same banks in another order */
	other.nbanks = 2;
	other.bank[1] = sel.bank[0];
	r = quote_verify(ak, m.p, m.n, s.p, s.n, nonce, sizeof(nonce), &other, &pcrs, &info);
	CHECK(r == QUOTE_PCR_SELECTION_MISMATCH, "%s bank order: %s", stem, qname(r));

	/* every bit of the message flipped: bad signature */
	bad = 0;
	for (size_t i = 0; i < m.n * 8; i++) {
		m.p[i / 8] ^= (uint8_t)(1u << (i % 8));
		if (quote_verify(ak, m.p, m.n, s.p, s.n, nonce, sizeof(nonce), &sel, &pcrs, &info) !=
		    QUOTE_BAD_SIGNATURE)
			bad++;
		m.p[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	CHECK(bad == 0, "%s: %d message bit flips not bad_signature", stem, bad);
	/* truncated and oversized messages */
	bad = 0;
	for (size_t l = 0; l < m.n; l++) {
		r = quote_verify(ak, m.p, l, s.p, s.n, nonce, sizeof(nonce), &sel, &pcrs, &info);
		if (r != QUOTE_BAD_SIGNATURE && r != QUOTE_MALFORMED_ATTEST)
			bad++;
	}
	CHECK(bad == 0, "%s: %d truncated messages accepted", stem, bad);
	r = quote_verify(ak, m.p, m.n + 1, s.p, s.n, nonce, sizeof(nonce), &sel, &pcrs, &info);
	CHECK(r == QUOTE_BAD_SIGNATURE, "%s message + 1 byte: %s", stem, qname(r));
	r = quote_verify(ak, m.p, (size_t)1 << 20, s.p, s.n, nonce, sizeof(nonce), &sel, &pcrs, &info);
	CHECK(r == QUOTE_MALFORMED_ATTEST, "%s oversized message: %s", stem, qname(r));

	/* every bit of the signature flipped: rejected */
	bad = 0;
	for (size_t i = 0; i < s.n * 8; i++) {
		s.p[i / 8] ^= (uint8_t)(1u << (i % 8));
		if (quote_verify(ak, m.p, m.n, s.p, s.n, nonce, sizeof(nonce), &sel, &pcrs, &info) ==
		    QUOTE_OK)
			bad++;
		s.p[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	CHECK(bad == 0, "%s: %d signature bit flips accepted", stem, bad);
	bad = 0;
	for (size_t l = 0; l < s.n; l++)
		if (quote_verify(ak, m.p, m.n, s.p, l, nonce, sizeof(nonce), &sel, &pcrs, &info) !=
		    QUOTE_MALFORMED_SIGNATURE)
			bad++;
	CHECK(bad == 0, "%s: %d truncated signatures not malformed", stem, bad);
	r = quote_verify(ak, m.p, m.n, s.p, s.n + 1, nonce, sizeof(nonce), &sel, &pcrs, &info);
	CHECK(r == QUOTE_MALFORMED_SIGNATURE, "%s signature + 1 byte: %s", stem, qname(r));
	/* sha1 as the signature hash is refused */
	s.p[3] = TPM2_ALG_SHA1;
	r = quote_verify(ak, m.p, m.n, s.p, s.n, nonce, sizeof(nonce), &sel, &pcrs, &info);
	CHECK(r == QUOTE_UNSUPPORTED_ALGORITHM, "%s sha1 sig: %s", stem, qname(r));
	s.p[3] = TPM2_ALG_SHA256;
	s.p[1] = 0x15; /* TPM2_ALG_ECDAA */
	r = quote_verify(ak, m.p, m.n, s.p, s.n, nonce, sizeof(nonce), &sel, &pcrs, &info);
	CHECK(r == QUOTE_UNSUPPORTED_ALGORITHM || r == QUOTE_MALFORMED_SIGNATURE, "%s ecdaa: %s", stem,
	      qname(r));

	EVP_PKEY_free(ak);
	free(m.p);
	free(s.p);
}

static void test_wrong_key(void)
{
	EVP_PKEY *pss = load_ak("ak_rsapss.pub"), *ec = load_ak("ak_ecdsa.pub");
	struct blob m = load("q_rsassa.msg"), s = load("q_rsassa.sig");
	struct blob em = load("q_ecdsa.msg"), es = load("q_ecdsa.sig");
	struct pcr_set pcrs;
	struct quote_info info;
	enum quote_result r;

	expected_pcrs(&pcrs, true);
	r = quote_verify(pss, m.p, m.n, s.p, s.n, nonce, 16, &pcrs, &pcrs, &info);
	CHECK(r == QUOTE_BAD_SIGNATURE, "another RSA AK: %s", qname(r));
	r = quote_verify(ec, m.p, m.n, s.p, s.n, nonce, 16, &pcrs, &pcrs, &info);
	CHECK(r == QUOTE_BAD_SIGNATURE, "EC AK, RSA sig: %s", qname(r));
	r = quote_verify(pss, em.p, em.n, es.p, es.n, nonce, 16, &pcrs, &pcrs, &info);
	CHECK(r == QUOTE_BAD_SIGNATURE, "RSA AK, ECDSA sig: %s", qname(r));
	/* the RSASSA signature relabelled RSAPSS with its own key */
	s.p[1] = 0x16;
	EVP_PKEY *ssa = load_ak("ak_rsassa.pub");
	r = quote_verify(ssa, m.p, m.n, s.p, s.n, nonce, 16, &pcrs, &pcrs, &info);
	CHECK(r == QUOTE_BAD_SIGNATURE, "RSASSA sig relabelled PSS: %s", qname(r));
	EVP_PKEY_free(ssa);
	EVP_PKEY_free(pss);
	EVP_PKEY_free(ec);
	free(m.p);
	free(s.p);
	free(em.p);
	free(es.p);
}

static void test_all_pcrs(void)
{
	EVP_PKEY *ak = load_ak("ak_rsassa.pub");
	struct blob m = load("q_all.msg"), s = load("q_all.sig"), f = load("q_all.pcrs");
	struct pcr_set pcrs;
	struct quote_info info;
	enum quote_result r;

	CHECK(quote_parse_tpm2tools_pcrs(f.p, f.n, &pcrs) == 0, "q_all pcrs");
	r = quote_verify(ak, m.p, m.n, s.p, s.n, nonce, 16, &pcrs, &pcrs, &info);
	CHECK(r == QUOTE_OK, "sha256:0-10 valid: %s", qname(r));
	pcrs.bank[0].value[0][0] ^= 1;
	r = quote_verify(ak, m.p, m.n, s.p, s.n, nonce, 16, &pcrs, &pcrs, &info);
	CHECK(r == QUOTE_PCR_DIGEST_MISMATCH, "PCR0 altered: %s", qname(r));
	EVP_PKEY_free(ak);
	free(m.p);
	free(s.p);
	free(f.p);
}

/* Signs msg as a TPM would (RSASSA-SHA256) and marshals a TPMT_SIGNATURE. */
static size_t sw_sign(EVP_PKEY *k, const uint8_t *msg, size_t len, uint8_t *out, size_t cap)
{
	TPMT_SIGNATURE sig = {.sigAlg = TPM2_ALG_RSASSA};
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t slen = sizeof(sig.signature.rsassa.sig.buffer), off = 0;

	sig.signature.rsassa.hash = TPM2_ALG_SHA256;
	if (!ctx || EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, k) != 1 ||
	    EVP_DigestSign(ctx, sig.signature.rsassa.sig.buffer, &slen, msg, len) != 1)
		slen = 0;
	EVP_MD_CTX_free(ctx);
	sig.signature.rsassa.sig.size = (uint16_t)slen;
	if (Tss2_MU_TPMT_SIGNATURE_Marshal(&sig, out, cap, &off) != TSS2_RC_SUCCESS)
		return 0;
	return off;
}

/* Structures a TPM would never sign, signed in software, reach the checks after the signature. */
static void test_signed_foreign(void)
{
	EVP_PKEY *k = EVP_RSA_gen(2048);
	struct blob m = load("q_rsassa.msg");
	uint8_t sig[600];
	size_t sl;
	struct pcr_set pcrs;
	struct quote_info info;
	enum quote_result r;
	int bad = 0;

	expected_pcrs(&pcrs, true);
	sl = sw_sign(k, m.p, m.n, sig, sizeof(sig));
	r = quote_verify(k, m.p, m.n, sig, sl, nonce, 16, &pcrs, &pcrs, &info);
	CHECK(r == QUOTE_OK, "re-signed quote valid: %s", qname(r));
	m.p[0] = 0xfe;
	sl = sw_sign(k, m.p, m.n, sig, sizeof(sig));
	r = quote_verify(k, m.p, m.n, sig, sl, nonce, 16, &pcrs, &pcrs, &info);
	CHECK(r == QUOTE_BAD_MAGIC, "signed bad magic: %s", qname(r));
	m.p[0] = 0xff;
	m.p[5] = 0x17; /* TPM_ST_ATTEST_CERTIFY */
	sl = sw_sign(k, m.p, m.n, sig, sizeof(sig));
	r = quote_verify(k, m.p, m.n, sig, sl, nonce, 16, &pcrs, &pcrs, &info);
	CHECK(r == QUOTE_BAD_TYPE, "signed certify: %s", qname(r));
	m.p[5] = 0x18;
	/* Signed truncations: every prefix is malformed (or a foreign header). */
	for (size_t l = 0; l < m.n; l++) {
		sl = sw_sign(k, m.p, l, sig, sizeof(sig));
		r = quote_verify(k, m.p, l, sig, sl, nonce, 16, &pcrs, &pcrs, &info);
		if (r != QUOTE_MALFORMED_ATTEST)
			bad++;
	}
	CHECK(bad == 0, "%d signed truncated attests not malformed", bad);
	/* a selection with PCR 24+ set (sizeofSelect 4) */
	{
		TPMS_ATTEST a;
		uint8_t buf[sizeof(TPMS_ATTEST)];
		size_t off = 0;
		CHECK(quote_parse_attest(m.p, m.n, &a) == QUOTE_OK, "parse attest");
		a.attested.quote.pcrSelect.pcrSelections[0].sizeofSelect = 4;
		a.attested.quote.pcrSelect.pcrSelections[0].pcrSelect[3] = 1;
		Tss2_MU_TPMS_ATTEST_Marshal(&a, buf, sizeof(buf), &off);
		sl = sw_sign(k, buf, off, sig, sizeof(sig));
		r = quote_verify(k, buf, off, sig, sl, nonce, 16, NULL, &pcrs, &info);
		CHECK(r == QUOTE_PCR_SELECTION_MISMATCH, "PCR 24 selected: %s", qname(r));
		/* the same bank twice */
		a.attested.quote.pcrSelect.pcrSelections[0] = a.attested.quote.pcrSelect.pcrSelections[1];
		off = 0;
		Tss2_MU_TPMS_ATTEST_Marshal(&a, buf, sizeof(buf), &off);
		sl = sw_sign(k, buf, off, sig, sizeof(sig));
		r = quote_verify(k, buf, off, sig, sl, nonce, 16, NULL, &pcrs, &info);
		CHECK(r == QUOTE_PCR_SELECTION_MISMATCH, "bank twice: %s", qname(r));
	}
	EVP_PKEY_free(k);
	free(m.p);
}

static void test_parse_attest(void)
{
	struct blob m = load("q_ecdsa.msg");
	TPMS_ATTEST a;
	int bad = 0;

	CHECK(quote_parse_attest(m.p, m.n, &a) == QUOTE_OK, "attest parses");
	CHECK(a.extraData.size == 16 && !memcmp(a.extraData.buffer, nonce, 16), "extraData");
	for (size_t l = 0; l < m.n; l++)
		if (quote_parse_attest(m.p, l, &a) != QUOTE_MALFORMED_ATTEST)
			bad++;
	CHECK(bad == 0, "%d truncated attests not malformed", bad);
	CHECK(quote_parse_attest(m.p, m.n + 1, &a) == QUOTE_MALFORMED_ATTEST, "attest + 1 byte");
	m.p[3] ^= 1;
	CHECK(quote_parse_attest(m.p, m.n, &a) == QUOTE_BAD_MAGIC, "magic");
	m.p[3] ^= 1;
	m.p[5] = 0x19;
	CHECK(quote_parse_attest(m.p, m.n, &a) == QUOTE_BAD_TYPE, "type");
	m.p[5] = 0x18;
	/* the nonce size field claims more than the buffer holds */
	m.p[0x2a] = 0xff;
	CHECK(quote_parse_attest(m.p, m.n, &a) == QUOTE_MALFORMED_ATTEST, "oversized extraData");
	free(m.p);
}

static void test_valid_rsassa_quote(void)
{
	check_valid("ak_rsassa.pub", "q_rsassa", TPM2_ALG_RSASSA);
}

static void test_valid_rsapss_quote(void)
{
	check_valid("ak_rsapss.pub", "q_rsapss", TPM2_ALG_RSAPSS);
}

static void test_valid_ecdsa_quote(void)
{
	check_valid("ak_ecdsa.pub", "q_ecdsa", TPM2_ALG_ECDSA);
}

int main(void)
{
	CASE(test_pcr_file);
	CASE(test_valid_rsassa_quote);
	CASE(test_valid_rsapss_quote);
	CASE(test_valid_ecdsa_quote);
	CASE(test_wrong_key);
	CASE(test_all_pcrs);
	CASE(test_signed_foreign);
	CASE(test_parse_attest);
	return check_finish();
}
