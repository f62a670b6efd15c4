/* softtpm: AK publics and quotes made in software (see softtpm.h). */
#include "proto/softtpm.h"

#include <errno.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <tss2/tss2_mu.h>

#include "proto/quote.h"

#define AK_ATTRS                                                                            \
	(TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_FIXEDTPM |          \
	 TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH)

static int bn_param(EVP_PKEY *key, const char *name, uint8_t *out, size_t len)
{
	BIGNUM *bn = NULL;
	int rc = -EINVAL;

	if (EVP_PKEY_get_bn_param(key, name, &bn) && BN_bn2binpad(bn, out, (int)len) == (int)len)
		rc = 0;
	BN_free(bn);
	return rc;
}

int softtpm_ak_public(EVP_PKEY *key, uint32_t attributes, uint8_t *out, size_t cap, size_t *outlen)
{
	TPM2B_PUBLIC pub = {0};
	TPMT_PUBLIC *t = &pub.publicArea;
	size_t off = 0;

	t->nameAlg = TPM2_ALG_SHA256;
	t->objectAttributes = attributes ? attributes : AK_ATTRS;
	if (EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA) {
		if (EVP_PKEY_get_bits(key) != 2048)
			return -EINVAL;
		t->type = TPM2_ALG_RSA;
		t->parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_NULL;
		t->parameters.rsaDetail.scheme.scheme = TPM2_ALG_RSASSA;
		t->parameters.rsaDetail.scheme.details.rsassa.hashAlg = TPM2_ALG_SHA256;
		t->parameters.rsaDetail.keyBits = 2048;
		t->parameters.rsaDetail.exponent = 0;
		t->unique.rsa.size = 256;
		if (bn_param(key, OSSL_PKEY_PARAM_RSA_N, t->unique.rsa.buffer, 256))
			return -EINVAL;
	} else if (EVP_PKEY_get_base_id(key) == EVP_PKEY_EC) {
		t->type = TPM2_ALG_ECC;
		t->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
		t->parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
		t->parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
		t->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
		t->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
		t->unique.ecc.x.size = 32;
		t->unique.ecc.y.size = 32;
		if (bn_param(key, OSSL_PKEY_PARAM_EC_PUB_X, t->unique.ecc.x.buffer, 32) ||
		    bn_param(key, OSSL_PKEY_PARAM_EC_PUB_Y, t->unique.ecc.y.buffer, 32))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (Tss2_MU_TPM2B_PUBLIC_Marshal(&pub, out, cap, &off) != TSS2_RC_SUCCESS)
		return -ENOSPC;
	*outlen = off;
	return 0;
}

static int sign_sha256(EVP_PKEY *key, const uint8_t *msg, size_t len, uint8_t *der, size_t *der_len)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	int rc = -EINVAL;

	if (md && EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
	    EVP_DigestSign(md, der, der_len, msg, len) == 1)
		rc = 0;
	EVP_MD_CTX_free(md);
	return rc;
}

static int make_signature(EVP_PKEY *key, const uint8_t *msg, size_t len, TPMT_SIGNATURE *sig)
{
	uint8_t der[512];
	size_t der_len = sizeof(der);

	if (sign_sha256(key, msg, len, der, &der_len))
		return -EINVAL;
	memset(sig, 0, sizeof(*sig));
	if (EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA) {
		if (der_len > sizeof(sig->signature.rsassa.sig.buffer))
			return -EINVAL;
		sig->sigAlg = TPM2_ALG_RSASSA;
		sig->signature.rsassa.hash = TPM2_ALG_SHA256;
		sig->signature.rsassa.sig.size = (UINT16)der_len;
		memcpy(sig->signature.rsassa.sig.buffer, der, der_len);
		return 0;
	}
	const unsigned char *p = der;
	ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)der_len);
	int rc = -EINVAL;
	if (!es)
		return -EINVAL;
	sig->sigAlg = TPM2_ALG_ECDSA;
	sig->signature.ecdsa.hash = TPM2_ALG_SHA256;
	sig->signature.ecdsa.signatureR.size = 32;
	sig->signature.ecdsa.signatureS.size = 32;
	if (BN_bn2binpad(ECDSA_SIG_get0_r(es), sig->signature.ecdsa.signatureR.buffer, 32) == 32 &&
	    BN_bn2binpad(ECDSA_SIG_get0_s(es), sig->signature.ecdsa.signatureS.buffer, 32) == 32)
		rc = 0;
	ECDSA_SIG_free(es);
	return rc;
}

int softtpm_quote(EVP_PKEY *key, const uint8_t *nonce, size_t nonce_len,
		  const struct pcr_set *pcrs, const struct softtpm_clock *clk, uint8_t *attest,
		  size_t attest_cap, size_t *attest_len, uint8_t *sig, size_t sig_cap,
		  size_t *sig_len)
{
	TPMS_ATTEST a = {0};
	TPMT_SIGNATURE s;
	size_t off = 0, dlen = 0;

	if (nonce_len > sizeof(a.extraData.buffer) || pcrs->nbanks > TPM2_NUM_PCR_BANKS)
		return -EINVAL;
	a.magic = TPM2_GENERATED_VALUE;
	a.type = TPM2_ST_ATTEST_QUOTE;
	a.extraData.size = (UINT16)nonce_len;
	memcpy(a.extraData.buffer, nonce, nonce_len);
	a.clockInfo.clock = clk->clock;
	a.clockInfo.resetCount = clk->reset_count;
	a.clockInfo.restartCount = clk->restart_count;
	a.clockInfo.safe = clk->safe;
	a.firmwareVersion = clk->firmware_version;
	TPML_PCR_SELECTION *sel = &a.attested.quote.pcrSelect;
	sel->count = pcrs->nbanks;
	for (unsigned i = 0; i < pcrs->nbanks; i++) {
		sel->pcrSelections[i].hash = pcrs->bank[i].alg;
		sel->pcrSelections[i].sizeofSelect = 3;
		for (unsigned b = 0; b < 3; b++)
			sel->pcrSelections[i].pcrSelect[b] = (uint8_t)(pcrs->bank[i].mask >> (8 * b));
	}
	if (quote_pcr_digest(TPM2_ALG_SHA256, pcrs, a.attested.quote.pcrDigest.buffer, &dlen))
		return -EINVAL;
	a.attested.quote.pcrDigest.size = (UINT16)dlen;
	if (Tss2_MU_TPMS_ATTEST_Marshal(&a, attest, attest_cap, &off) != TSS2_RC_SUCCESS)
		return -ENOSPC;
	*attest_len = off;
	if (make_signature(key, attest, off, &s))
		return -EINVAL;
	off = 0;
	if (Tss2_MU_TPMT_SIGNATURE_Marshal(&s, sig, sig_cap, &off) != TSS2_RC_SUCCESS)
		return -ENOSPC;
	*sig_len = off;
	return 0;
}
