/* TPM2_Quote verification on tpm2-tss MU structures and OpenSSL EVP. */
#include "proto/quote.h"

#include <errno.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ecdsa.h>
#include <openssl/rsa.h>
#include <tss2/tss2_mu.h>

#include "proto/alg.h"

/* ALG_USE_QUOTE refuses sha1: a quote is only as strong as its hash, and no current TPM needs it. */
static const EVP_MD *sig_md(uint16_t alg)
{
	return alg_evp_md(alg_for_use(alg, ALG_USE_QUOTE));
}

enum quote_result quote_parse_signature(const uint8_t *buf, size_t len, TPMT_SIGNATURE *out)
{
	size_t off = 0;

	if (!buf || len < 4 || len > sizeof(TPMT_SIGNATURE))
		return QUOTE_MALFORMED_SIGNATURE;
	memset(out, 0, sizeof(*out));
	if (Tss2_MU_TPMT_SIGNATURE_Unmarshal(buf, len, &off, out) != TSS2_RC_SUCCESS || off != len)
		return QUOTE_MALFORMED_SIGNATURE;
	switch (out->sigAlg) {
	case TPM2_ALG_RSASSA:
	case TPM2_ALG_RSAPSS:
		if (!sig_md(out->signature.rsassa.hash))
			return QUOTE_UNSUPPORTED_ALGORITHM;
		if (out->signature.rsassa.sig.size == 0)
			return QUOTE_MALFORMED_SIGNATURE;
		return QUOTE_OK;
	case TPM2_ALG_ECDSA:
		if (!sig_md(out->signature.ecdsa.hash))
			return QUOTE_UNSUPPORTED_ALGORITHM;
		if (out->signature.ecdsa.signatureR.size == 0 || out->signature.ecdsa.signatureS.size == 0)
			return QUOTE_MALFORMED_SIGNATURE;
		return QUOTE_OK;
	default:
		return QUOTE_UNSUPPORTED_ALGORITHM;
	}
}

enum quote_result quote_parse_attest(const uint8_t *buf, size_t len, TPMS_ATTEST *out)
{
	size_t off = 0;
	uint32_t magic;
	uint16_t type;

	if (!buf || len < 6 || len > sizeof(TPMS_ATTEST))
		return QUOTE_MALFORMED_ATTEST;
	/* Read the header by hand so a foreign structure gets its own reason, not "malformed". */
	magic = (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | buf[3];
	type = (uint16_t)(buf[4] << 8 | buf[5]);
	if (magic != TPM2_GENERATED_VALUE)
		return QUOTE_BAD_MAGIC;
	if (type != TPM2_ST_ATTEST_QUOTE)
		return QUOTE_BAD_TYPE;
	memset(out, 0, sizeof(*out));
	if (Tss2_MU_TPMS_ATTEST_Unmarshal(buf, len, &off, out) != TSS2_RC_SUCCESS || off != len)
		return QUOTE_MALFORMED_ATTEST;
	return QUOTE_OK;
}

bool quote_selection_to_pcr_set(const TPML_PCR_SELECTION *sel, struct pcr_set *out)
{
	memset(out, 0, sizeof(*out));
	if (sel->count > LIMIT_PCR_BANKS || sel->count > TPM2_NUM_PCR_BANKS)
		return false;
	for (uint32_t i = 0; i < sel->count; i++) {
		const TPMS_PCR_SELECTION *s = &sel->pcrSelections[i];
		struct pcr_bank *b;
		uint32_t mask = 0;

		if (s->sizeofSelect > TPM2_PCR_SELECT_MAX)
			return false;
		for (unsigned j = 0; j < s->sizeofSelect; j++)
			mask |= (uint32_t)s->pcrSelect[j] << (8 * j);
		if (PCR_COUNT < 32 && (mask >> PCR_COUNT))
			return false;
		b = pcr_set_add_bank(out, s->hash);
		if (!b)
			return false;
		b->mask = mask;
	}
	return true;
}

int quote_pcr_digest(uint16_t hash_alg, const struct pcr_set *pcrs, uint8_t *out, size_t *outlen)
{
	const EVP_MD *md = sig_md(hash_alg);
	EVP_MD_CTX *ctx = NULL;
	unsigned int dlen = 0;
	int ret = -EINVAL;

	if (!md || pcrs->nbanks > LIMIT_PCR_BANKS)
		return -EINVAL;
	ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, md, NULL))
		goto cleanup;
	for (unsigned i = 0; i < pcrs->nbanks; i++) {
		const struct pcr_bank *b = &pcrs->bank[i];
		size_t size = pcr_alg_digest_size(b->alg);

		if (!size)
			goto cleanup;
		for (unsigned n = 0; n < PCR_COUNT; n++)
			if ((b->mask >> n & 1) && !EVP_DigestUpdate(ctx, b->value[n], size))
				goto cleanup;
	}
	if (!EVP_DigestFinal_ex(ctx, out, &dlen))
		goto cleanup;
	*outlen = dlen;
	ret = 0;
cleanup:
	EVP_MD_CTX_free(ctx);
	return ret;
}

/* The signature in the DER form OpenSSL verifies; caller frees *der with OPENSSL_free. */
static int ecdsa_der(const TPMS_SIGNATURE_ECC *e, uint8_t **der, size_t *der_len)
{
	ECDSA_SIG *s = ECDSA_SIG_new();
	BIGNUM *r = BN_bin2bn(e->signatureR.buffer, e->signatureR.size, NULL);
	BIGNUM *ss = BN_bin2bn(e->signatureS.buffer, e->signatureS.size, NULL);
	int n, ret = -EINVAL;

	*der = NULL;
	if (!s || !r || !ss || !ECDSA_SIG_set0(s, r, ss))
		goto cleanup;
	r = ss = NULL; /* owned by s now */
	n = i2d_ECDSA_SIG(s, der);
	if (n <= 0)
		goto cleanup;
	*der_len = (size_t)n;
	ret = 0;
cleanup:
	BN_free(r);
	BN_free(ss);
	ECDSA_SIG_free(s);
	return ret;
}

static enum quote_result verify_sig(EVP_PKEY *ak, const TPMT_SIGNATURE *sig, const uint8_t *msg,
				    size_t msg_len)
{
	const EVP_MD *md;
	uint8_t digest[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;
	EVP_PKEY_CTX *ctx = NULL;
	uint8_t *der = NULL;
	const uint8_t *s;
	size_t slen;
	enum quote_result res = QUOTE_BAD_SIGNATURE;
	bool rsa = sig->sigAlg == TPM2_ALG_RSASSA || sig->sigAlg == TPM2_ALG_RSAPSS;

	md = sig_md(rsa ? sig->signature.rsassa.hash : sig->signature.ecdsa.hash);
	if (!md)
		return QUOTE_UNSUPPORTED_ALGORITHM;
	/* A signature of the wrong family cannot come from this key. */
	if (EVP_PKEY_get_base_id(ak) != (rsa ? EVP_PKEY_RSA : EVP_PKEY_EC))
		return QUOTE_BAD_SIGNATURE;
	if (!EVP_Digest(msg, msg_len, digest, &dlen, md, NULL))
		return QUOTE_BAD_SIGNATURE;
	if (rsa) {
		s = sig->signature.rsassa.sig.buffer;
		slen = sig->signature.rsassa.sig.size;
	} else {
		if (ecdsa_der(&sig->signature.ecdsa, &der, &slen) != 0)
			goto cleanup;
		s = der;
	}
	ctx = EVP_PKEY_CTX_new(ak, NULL);
	if (!ctx || EVP_PKEY_verify_init(ctx) <= 0 || EVP_PKEY_CTX_set_signature_md(ctx, md) <= 0)
		goto cleanup;
	if (sig->sigAlg == TPM2_ALG_RSASSA &&
	    EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0)
		goto cleanup;
	/*
	 * TPMs use salt = hash length (libtpms CryptRsaPssSaltSize), older ones the maximum;
	 * PSS is sound with either, so let OpenSSL read the salt length from the signature.
	 */
	if (sig->sigAlg == TPM2_ALG_RSAPSS &&
	    (EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PSS_PADDING) <= 0 ||
	     EVP_PKEY_CTX_set_rsa_pss_saltlen(ctx, RSA_PSS_SALTLEN_AUTO) <= 0))
		goto cleanup;
	if (EVP_PKEY_verify(ctx, s, slen, digest, dlen) == 1)
		res = QUOTE_OK;
cleanup:
	EVP_PKEY_CTX_free(ctx);
	OPENSSL_free(der);
	return res;
}

enum quote_result quote_verify(EVP_PKEY *ak, const uint8_t *attest, size_t attest_len,
			       const uint8_t *sig, size_t sig_len, const uint8_t *nonce,
			       size_t nonce_len, const struct pcr_set *expected,
			       const struct pcr_set *pcrs, struct quote_info *out)
{
	TPMT_SIGNATURE s;
	TPMS_ATTEST a;
	enum quote_result r;
	const TPM2B_DIGEST *qd;
	uint8_t digest[LIMIT_DIGEST];
	size_t dlen = 0;

	memset(out, 0, sizeof(*out));
	if (!ak || !nonce)
		return QUOTE_BAD_SIGNATURE;
	r = quote_parse_signature(sig, sig_len, &s);
	if (r != QUOTE_OK)
		return r;
	out->sig_alg = s.sigAlg;
	out->sig_hash = s.signature.any.hashAlg;
	if (!attest || attest_len == 0 || attest_len > sizeof(TPMS_ATTEST))
		return QUOTE_MALFORMED_ATTEST;
	r = verify_sig(ak, &s, attest, attest_len);
	if (r != QUOTE_OK)
		return r;
	r = quote_parse_attest(attest, attest_len, &a);
	if (r != QUOTE_OK)
		return r;
	out->clock = a.clockInfo.clock;
	out->reset_count = a.clockInfo.resetCount;
	out->restart_count = a.clockInfo.restartCount;
	out->safe = a.clockInfo.safe != 0;
	out->firmware_version = a.firmwareVersion;
	qd = &a.attested.quote.pcrDigest;
	if (qd->size > sizeof(out->pcr_digest))
		return QUOTE_MALFORMED_ATTEST;
	memcpy(out->pcr_digest, qd->buffer, qd->size);
	out->pcr_digest_len = qd->size;

	if (a.extraData.size != nonce_len ||
	    CRYPTO_memcmp(a.extraData.buffer, nonce, nonce_len) != 0)
		return QUOTE_NONCE_MISMATCH;
	if (!quote_selection_to_pcr_set(&a.attested.quote.pcrSelect, &out->selection))
		return QUOTE_PCR_SELECTION_MISMATCH;
	if (expected && !pcr_set_same_selection(expected, &out->selection))
		return QUOTE_PCR_SELECTION_MISMATCH;
	if (!pcrs)
		return QUOTE_OK;
	if (!pcr_set_same_selection(pcrs, &out->selection))
		return QUOTE_PCR_SELECTION_MISMATCH;
	if (quote_pcr_digest(out->sig_hash, pcrs, digest, &dlen) != 0)
		return QUOTE_UNSUPPORTED_ALGORITHM;
	if (dlen != qd->size || CRYPTO_memcmp(digest, qd->buffer, dlen) != 0)
		return QUOTE_PCR_DIGEST_MISMATCH;
	return QUOTE_OK;
}

/* tpm2-tools struct dump sizes on every Linux ABI: see quote.h. */
#define T2T_SEL_ENTRY 8u     /* u16 hash, u8 sizeofSelect, u8 pcrSelect[4], pad */
#define T2T_SEL_SIZE (4u + TPM2_NUM_PCR_BANKS * T2T_SEL_ENTRY)
#define T2T_DIGEST 66u       /* u16 size, u8 buffer[64] */
#define T2T_DIGESTS_PER_LIST 8u
#define T2T_LIST_SIZE (4u + T2T_DIGESTS_PER_LIST * T2T_DIGEST)
#define T2T_MAX_LISTS 32u    /* tpm2_pcrs.pcr_values[TPM2_MAX_PCRS] */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

int quote_parse_tpm2tools_pcrs(const uint8_t *buf, size_t len, struct pcr_set *out)
{
	uint32_t nsel, nlists, list = 0, idx = 0, total = 0, selected = 0;
	const uint8_t *lp;

	memset(out, 0, sizeof(*out));
	if (!buf || len < T2T_SEL_SIZE + 4)
		return -EINVAL;
	nsel = le32(buf);
	nlists = le32(buf + T2T_SEL_SIZE);
	if (nsel == 0 || nsel > LIMIT_PCR_BANKS || nlists > T2T_MAX_LISTS ||
	    len != T2T_SEL_SIZE + 4 + (size_t)nlists * T2T_LIST_SIZE)
		return -EINVAL;
	lp = buf + T2T_SEL_SIZE + 4;
	for (uint32_t l = 0; l < nlists; l++) {
		uint32_t c = le32(lp + (size_t)l * T2T_LIST_SIZE);
		if (c > T2T_DIGESTS_PER_LIST)
			return -EINVAL;
		total += c;
	}
	for (uint32_t i = 0; i < nsel; i++) {
		const uint8_t *e = buf + 4 + i * T2T_SEL_ENTRY;
		unsigned sz = e[2];
		uint32_t mask = 0;
		struct pcr_bank *b;
		size_t dsize;

		if (sz > 4)
			return -EINVAL;
		for (unsigned j = 0; j < sz; j++)
			mask |= (uint32_t)e[3 + j] << (8 * j);
		if (mask >> PCR_COUNT)
			return -EINVAL;
		b = pcr_set_add_bank(out, le16(e));
		if (!b)
			return -EINVAL;
		b->mask = mask;
		dsize = pcr_alg_digest_size(b->alg);
		for (unsigned n = 0; n < PCR_COUNT; n++) {
			const uint8_t *d;

			if (!(mask >> n & 1))
				continue;
			/* Digests fill each TPML_DIGEST in turn, as TPM2_PCR_Read returned them. */
			while (list < nlists && idx >= le32(lp + (size_t)list * T2T_LIST_SIZE)) {
				list++;
				idx = 0;
			}
			if (list >= nlists)
				return -EINVAL;
			d = lp + (size_t)list * T2T_LIST_SIZE + 4 + idx * T2T_DIGEST;
			if (le16(d) != dsize)
				return -EINVAL;
			memcpy(b->value[n], d + 2, dsize);
			idx++;
			selected++;
		}
	}
	/* Every digest in the file must belong to a selected PCR: no stray values. */
	return selected == total ? 0 : -EINVAL;
}
