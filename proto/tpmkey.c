/* TPM 2.0 public keys: parsing, names, conversion to OpenSSL, AK and EK checks. */
#include "proto/tpmkey.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/objects.h>
#include <openssl/param_build.h>
#include <tss2/tss2_mu.h>

#include "proto/alg.h"

/* PolicySecret(TPM_RH_ENDORSEMENT) with sha256 (TCG EK Credential Profile, templates L-1/L-2). */
#define EK_POLICY_SHA256                                                                     \
	{                                                                                    \
		.size = 32,                                                                  \
		.buffer = { 0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xb3, 0xf8, 0x1a, 0x90, 0xcc,  \
			    0x8d, 0x46, 0xa5, 0xd7, 0x24, 0xfd, 0x52, 0xd7, 0x6e, 0x06, 0x52,  \
			    0x0b, 0x64, 0xf2, 0xa1, 0xda, 0x1b, 0x33, 0x14, 0x69, 0xaa },      \
	}

#define AK_REQUIRED_ATTRS                                                                    \
	(TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_FIXEDTPM |          \
	 TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH)
#define EK_ATTRS                                                                             \
	(TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |  \
	 TPMA_OBJECT_ADMINWITHPOLICY | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT)

/* A key's nameAlg, and the hash of an AK's signing scheme (the hash of its quotes). */
static const EVP_MD *md_for(TPMI_ALG_HASH alg, enum alg_use use)
{
	return alg_evp_md(alg_for_use(alg, use));
}

int tpmkey_parse_public(const uint8_t *buf, size_t len, TPMT_PUBLIC *out)
{
	TPM2B_PUBLIC pub;
	uint8_t again[sizeof(TPM2B_PUBLIC)];
	size_t off = 0, off2 = 0;

	if (!buf || len < 2 || len > sizeof(again))
		return -EINVAL;
	memset(&pub, 0, sizeof(pub));
	if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(buf, len, &off, &pub) != TSS2_RC_SUCCESS || off != len)
		return -EINVAL;
	/*
	 * The name is computed over the re-marshalled structure; demand that it reproduces the
	 * received bytes so the name and the bytes can never disagree.
	 */
	if (Tss2_MU_TPM2B_PUBLIC_Marshal(&pub, again, sizeof(again), &off2) != TSS2_RC_SUCCESS ||
	    off2 != len || memcmp(again, buf, len) != 0)
		return -EINVAL;
	*out = pub.publicArea;
	return 0;
}

int tpmkey_marshal_public(const TPMT_PUBLIC *pub, uint8_t *buf, size_t cap, size_t *outlen)
{
	TPM2B_PUBLIC p = {.size = 0, .publicArea = *pub};
	size_t off = 0;
	TSS2_RC rc = Tss2_MU_TPM2B_PUBLIC_Marshal(&p, buf, cap, &off);

	if (rc == TSS2_MU_RC_INSUFFICIENT_BUFFER)
		return -ENOSPC;
	if (rc != TSS2_RC_SUCCESS)
		return -EINVAL;
	*outlen = off;
	return 0;
}

int tpmkey_name(const TPMT_PUBLIC *pub, uint8_t name[LIMIT_TPM_NAME], size_t *name_len)
{
	uint8_t buf[sizeof(TPMT_PUBLIC)];
	size_t off = 0;
	unsigned int dlen = 0;
	const EVP_MD *md = md_for(pub->nameAlg, ALG_USE_KEY_NAME);

	if (!md || Tss2_MU_TPMT_PUBLIC_Marshal(pub, buf, sizeof(buf), &off) != TSS2_RC_SUCCESS)
		return -EINVAL;
	name[0] = (uint8_t)(pub->nameAlg >> 8);
	name[1] = (uint8_t)pub->nameAlg;
	if (!EVP_Digest(buf, off, name + 2, &dlen, md, NULL))
		return -EINVAL;
	*name_len = 2 + dlen;
	return 0;
}

static EVP_PKEY *rsa_to_evp(const TPMT_PUBLIC *pub)
{
	const TPMS_RSA_PARMS *p = &pub->parameters.rsaDetail;
	EVP_PKEY *pkey = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	BIGNUM *n = NULL, *e = NULL;

	if (p->keyBits < 2048 || p->keyBits > 4096 || p->keyBits % 8 ||
	    pub->unique.rsa.size != p->keyBits / 8 || !(pub->unique.rsa.buffer[0] & 0x80))
		return NULL;
	n = BN_bin2bn(pub->unique.rsa.buffer, pub->unique.rsa.size, NULL);
	e = BN_new();
	if (!n || !e || !BN_set_word(e, p->exponent ? p->exponent : 65537))
		goto cleanup;
	bld = OSSL_PARAM_BLD_new();
	if (!bld || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e))
		goto cleanup;
	params = OSSL_PARAM_BLD_to_param(bld);
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
	if (!params || !ctx || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		pkey = NULL;
cleanup:
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	EVP_PKEY_CTX_free(ctx);
	BN_free(n);
	BN_free(e);
	return pkey;
}

static const char *curve_name(TPMI_ECC_CURVE curve, size_t *coord_len)
{
	switch (curve) {
	case TPM2_ECC_NIST_P256: *coord_len = 32; return "P-256";
	case TPM2_ECC_NIST_P384: *coord_len = 48; return "P-384";
	case TPM2_ECC_NIST_P521: *coord_len = 66; return "P-521";
	default: return NULL;
	}
}

static EVP_PKEY *ecc_to_evp(const TPMT_PUBLIC *pub)
{
	const TPMS_ECC_POINT *pt = &pub->unique.ecc;
	size_t clen = 0;
	const char *group = curve_name(pub->parameters.eccDetail.curveID, &clen);
	uint8_t point[1 + 2 * 66];
	EVP_PKEY *pkey = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	OSSL_PARAM params[3];

	/* The TPM pads coordinates to the field size; a shorter one is not canonical. */
	if (!group || pt->x.size != clen || pt->y.size != clen)
		return NULL;
	point[0] = 0x04; /* uncompressed */
	memcpy(point + 1, pt->x.buffer, clen);
	memcpy(point + 1 + clen, pt->y.buffer, clen);
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)group, 0);
	params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, point, 1 + 2 * clen);
	params[2] = OSSL_PARAM_construct_end();
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	/* fromdata checks that the point is on the curve. */
	if (!ctx || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		pkey = NULL;
	EVP_PKEY_CTX_free(ctx);
	return pkey;
}

EVP_PKEY *tpmkey_to_evp(const TPMT_PUBLIC *pub)
{
	if (!pub)
		return NULL;
	switch (pub->type) {
	case TPM2_ALG_RSA: return rsa_to_evp(pub);
	case TPM2_ALG_ECC: return ecc_to_evp(pub);
	default: return NULL;
	}
}

bool tpmkey_matches_evp(const TPMT_PUBLIC *pub, const EVP_PKEY *pkey)
{
	EVP_PKEY *mine = tpmkey_to_evp(pub);
	bool same = mine && pkey && EVP_PKEY_eq(mine, pkey) == 1;

	EVP_PKEY_free(mine);
	return same;
}

const char *tpmkey_check_str(enum tpmkey_check c)
{
	switch (c) {
	case TPMKEY_OK: return "ok";
	case TPMKEY_BAD_TYPE: return "bad_type";
	case TPMKEY_BAD_NAME_ALG: return "bad_name_alg";
	case TPMKEY_BAD_ATTRIBUTES: return "bad_attributes";
	case TPMKEY_BAD_SCHEME: return "bad_scheme";
	case TPMKEY_BAD_SYMMETRIC: return "bad_symmetric";
	case TPMKEY_BAD_POLICY: return "bad_policy";
	}
	return "unknown";
}

enum tpmkey_check tpmkey_check_ak(const TPMT_PUBLIC *pub)
{
	EVP_PKEY *pkey;
	TPMI_ALG_SIG_SCHEME scheme;
	TPMI_ALG_HASH hash;

	if (pub->type == TPM2_ALG_RSA) {
		if (pub->parameters.rsaDetail.symmetric.algorithm != TPM2_ALG_NULL)
			return TPMKEY_BAD_SYMMETRIC;
		scheme = pub->parameters.rsaDetail.scheme.scheme;
		hash = pub->parameters.rsaDetail.scheme.details.anySig.hashAlg;
		if (scheme != TPM2_ALG_RSASSA && scheme != TPM2_ALG_RSAPSS)
			return TPMKEY_BAD_SCHEME;
	} else if (pub->type == TPM2_ALG_ECC) {
		if (pub->parameters.eccDetail.symmetric.algorithm != TPM2_ALG_NULL)
			return TPMKEY_BAD_SYMMETRIC;
		scheme = pub->parameters.eccDetail.scheme.scheme;
		hash = pub->parameters.eccDetail.scheme.details.anySig.hashAlg;
		if (scheme != TPM2_ALG_ECDSA || pub->parameters.eccDetail.kdf.scheme != TPM2_ALG_NULL)
			return TPMKEY_BAD_SCHEME;
	} else {
		return TPMKEY_BAD_TYPE;
	}
	if (!md_for(hash, ALG_USE_QUOTE))
		return TPMKEY_BAD_SCHEME;
	if (!md_for(pub->nameAlg, ALG_USE_KEY_NAME))
		return TPMKEY_BAD_NAME_ALG;
	if ((pub->objectAttributes & AK_REQUIRED_ATTRS) != AK_REQUIRED_ATTRS ||
	    (pub->objectAttributes & TPMA_OBJECT_DECRYPT))
		return TPMKEY_BAD_ATTRIBUTES;
	pkey = tpmkey_to_evp(pub);
	if (!pkey)
		return TPMKEY_BAD_TYPE;
	EVP_PKEY_free(pkey);
	return TPMKEY_OK;
}

/* --- templates --------------------------------------------------------------------------- */

/* EK Credential Profile L-1. The unique is 256 zero bytes: only its size is set. */
#define EK_L1_RSA2048 {\
	.type = TPM2_ALG_RSA,\
	.nameAlg = TPM2_ALG_SHA256,\
	.objectAttributes = EK_ATTRS,\
	.authPolicy = EK_POLICY_SHA256,\
	.parameters.rsaDetail = {\
		.symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB },\
		.scheme = { .scheme = TPM2_ALG_NULL },\
		.keyBits = 2048,\
		.exponent = 0,\
	},\
	.unique.rsa = { .size = 256 },\
}
static const TPMT_PUBLIC ek_rsa2048 = EK_L1_RSA2048;

/* EK Credential Profile L-2: x and y are 32 zero bytes each. */
#define EK_L2_P256 {\
	.type = TPM2_ALG_ECC,\
	.nameAlg = TPM2_ALG_SHA256,\
	.objectAttributes = EK_ATTRS,\
	.authPolicy = EK_POLICY_SHA256,\
	.parameters.eccDetail = {\
		.symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB },\
		.scheme = { .scheme = TPM2_ALG_NULL },\
		.curveID = TPM2_ECC_NIST_P256,\
		.kdf = { .scheme = TPM2_ALG_NULL },\
	},\
	.unique.ecc = { .x = { .size = 32 }, .y = { .size = 32 } },\
}
static const TPMT_PUBLIC ek_p256 = EK_L2_P256;

static const TPMT_PUBLIC ak_rsa2048 = {
	.type = TPM2_ALG_RSA,
	.nameAlg = TPM2_ALG_SHA256,
	.objectAttributes = AK_REQUIRED_ATTRS,
	.parameters.rsaDetail = {
		.symmetric = { .algorithm = TPM2_ALG_NULL },
		.scheme = { .scheme = TPM2_ALG_RSASSA, .details.rsassa.hashAlg = TPM2_ALG_SHA256 },
		.keyBits = 2048,
		.exponent = 0,
	},
};

static const TPMT_PUBLIC ak_p256 = {
	.type = TPM2_ALG_ECC,
	.nameAlg = TPM2_ALG_SHA256,
	.objectAttributes = AK_REQUIRED_ATTRS,
	.parameters.eccDetail = {
		.symmetric = { .algorithm = TPM2_ALG_NULL },
		.scheme = { .scheme = TPM2_ALG_ECDSA, .details.ecdsa.hashAlg = TPM2_ALG_SHA256 },
		.curveID = TPM2_ECC_NIST_P256,
		.kdf = { .scheme = TPM2_ALG_NULL },
	},
};

void tpmkey_ek_template(TPM2B_PUBLIC *out, enum tpmkey_kind kind)
{
	memset(out, 0, sizeof(*out));
	out->publicArea = kind == TPMKEY_ECC_P256 ? ek_p256 : ek_rsa2048;
}

void tpmkey_ak_template(TPM2B_PUBLIC *out, enum tpmkey_kind kind)
{
	memset(out, 0, sizeof(*out));
	out->publicArea = kind == TPMKEY_ECC_P256 ? ak_p256 : ak_rsa2048;
}

/* --- the EK check: the template, field for field --------------------------------------- */

/* PolicyB of the EK Credential Profile (B.4): PolicyOR(PolicyA, PolicyC), per nameAlg. */
#define EK_POLICY_B_SHA256                                                                   \
	{ .size = 32,                                                                        \
	  .buffer = { 0xca, 0x3d, 0x0a, 0x99, 0xa2, 0xb9, 0x39, 0x06, 0xf7, 0xa3, 0x34,      \
		      0x24, 0x14, 0xef, 0xcf, 0xb3, 0xa3, 0x85, 0xd4, 0x4c, 0xd1, 0xfd,      \
		      0x45, 0x90, 0x89, 0xd1, 0x9b, 0x50, 0x71, 0xc0, 0xb7, 0xa0 } }
#define EK_POLICY_B_SHA384                                                                   \
	{ .size = 48,                                                                        \
	  .buffer = { 0xb2, 0x6e, 0x7d, 0x28, 0xd1, 0x1a, 0x50, 0xbc, 0x53, 0xd8, 0x82, 0xbc,\
		      0xf5, 0xfd, 0x3a, 0x1a, 0x07, 0x41, 0x48, 0xbb, 0x35, 0xd3, 0xb4, 0xe4,\
		      0xcb, 0x1c, 0x0a, 0xd9, 0xbd, 0xe4, 0x19, 0xca, 0xcb, 0x47, 0xba, 0x09,\
		      0x69, 0x96, 0x46, 0x15, 0x0f, 0x9f, 0xc0, 0x00, 0xf3, 0xf8, 0x0e, 0x12 } }
#define EK_POLICY_B_SHA512                                                                   \
	{ .size = 64,                                                                        \
	  .buffer = { 0xb8, 0x22, 0x1c, 0xa6, 0x9e, 0x85, 0x50, 0xa4, 0x91, 0x4d, 0xe3, 0xfa,\
		      0xa6, 0xa1, 0x8c, 0x07, 0x2c, 0xc0, 0x12, 0x08, 0x07, 0x3a, 0x92, 0x8d,\
		      0x5d, 0x66, 0xd5, 0x9e, 0xf7, 0x9e, 0x49, 0xa4, 0x29, 0xc4, 0x1a, 0x6b,\
		      0x26, 0x95, 0x71, 0xd5, 0x7e, 0xdb, 0x25, 0xfb, 0xdb, 0x18, 0x38, 0x42,\
		      0x56, 0x08, 0xb4, 0x13, 0xcd, 0x61, 0x6a, 0x5f, 0x6d, 0xb5, 0xb6, 0x07,\
		      0x1a, 0xf9, 0x9b, 0xea } }

/* The high range adds userWithAuth: the EK serves a password session (the policy is PolicyB). */
#define EK_HIGH_ATTRS (EK_ATTRS | TPMA_OBJECT_USERWITHAUTH)
#define AES_CFB(bits) { .algorithm = TPM2_ALG_AES, .keyBits.aes = (bits), .mode.aes = TPM2_ALG_CFB }

#define EK_HIGH_RSA(bits, name_alg, policy, aes)                                             \
	{ .type = TPM2_ALG_RSA, .nameAlg = (name_alg), .objectAttributes = EK_HIGH_ATTRS,     \
	  .authPolicy = policy,                                                              \
	  .parameters.rsaDetail = { .symmetric = AES_CFB(aes), .scheme = { .scheme = TPM2_ALG_NULL }, \
				    .keyBits = (bits), .exponent = 0 } }
#define EK_HIGH_ECC(curve, name_alg, policy, aes)                                            \
	{ .type = TPM2_ALG_ECC, .nameAlg = (name_alg), .objectAttributes = EK_HIGH_ATTRS,     \
	  .authPolicy = policy,                                                              \
	  .parameters.eccDetail = { .symmetric = AES_CFB(aes), .scheme = { .scheme = TPM2_ALG_NULL }, \
				    .curveID = (curve), .kdf = { .scheme = TPM2_ALG_NULL } } }

/*
 * Every EK template of the TCG EK Credential Profile (2.5, annex B) this verifier can make a
 * credential for, and the NV index of the certificate a maker provisions for it. H-5 (SM2
 * P-256, SM3, SM4) is not here: no SM2 credential is made.
 */
static const struct tpmkey_ek_profile ek_profiles[] = {
	{ "L-1 RSA-2048", 0x01c00002u, EK_L1_RSA2048 },
	{ "L-2 ECC P-256", 0x01c0000au, EK_L2_P256 },
	{ "H-1 RSA-2048", 0x01c00012u, EK_HIGH_RSA(2048, TPM2_ALG_SHA256, EK_POLICY_B_SHA256, 128) },
	{ "H-2 ECC P-256", 0x01c00014u,
	  EK_HIGH_ECC(TPM2_ECC_NIST_P256, TPM2_ALG_SHA256, EK_POLICY_B_SHA256, 128) },
	{ "H-3 ECC P-384", 0x01c00016u,
	  EK_HIGH_ECC(TPM2_ECC_NIST_P384, TPM2_ALG_SHA384, EK_POLICY_B_SHA384, 256) },
	{ "H-4 ECC P-521", 0x01c00018u,
	  EK_HIGH_ECC(TPM2_ECC_NIST_P521, TPM2_ALG_SHA512, EK_POLICY_B_SHA512, 256) },
	{ "H-6 RSA-3072", 0x01c0001cu, EK_HIGH_RSA(3072, TPM2_ALG_SHA384, EK_POLICY_B_SHA384, 256) },
	{ "H-7 RSA-4096", 0x01c0001eu, EK_HIGH_RSA(4096, TPM2_ALG_SHA384, EK_POLICY_B_SHA384, 256) },
};

const struct tpmkey_ek_profile *tpmkey_ek_profiles(size_t *n)
{
	*n = sizeof(ek_profiles) / sizeof(ek_profiles[0]);
	return ek_profiles;
}

const struct tpmkey_ek_profile *tpmkey_ek_profile_by_id(const char *id)
{
	size_t n = strlen(id);

	for (size_t i = 0; i < sizeof(ek_profiles) / sizeof(ek_profiles[0]); i++) {
		const char *name = ek_profiles[i].name;

		if (n && strncasecmp(name, id, n) == 0 && name[n] == ' ')
			return &ek_profiles[i];
	}
	return NULL;
}

const struct tpmkey_ek_profile *tpmkey_ek_profile_for_key(const EVP_PKEY *pkey)
{
	char group[32];
	size_t glen = 0;
	bool rsa;

	if (!pkey)
		return NULL;
	rsa = EVP_PKEY_is_a(pkey, "RSA");
	if (!rsa && (!EVP_PKEY_is_a(pkey, "EC") ||
		     !EVP_PKEY_get_group_name(pkey, group, sizeof(group), &glen)))
		return NULL;
	for (size_t i = 0; i < sizeof(ek_profiles) / sizeof(ek_profiles[0]); i++) {
		const TPMT_PUBLIC *t = &ek_profiles[i].tmpl;
		size_t clen;
		const char *curve;
		int nid;

		if (rsa) {
			if (t->type == TPM2_ALG_RSA &&
			    EVP_PKEY_get_bits(pkey) == (int)t->parameters.rsaDetail.keyBits)
				return &ek_profiles[i];
			continue;
		}
		if (t->type != TPM2_ALG_ECC)
			continue;
		curve = curve_name(t->parameters.eccDetail.curveID, &clen);
		nid = curve ? EC_curve_nist2nid(curve) : NID_undef;
		if (nid != NID_undef && OBJ_txt2nid(group) == nid)
			return &ek_profiles[i];
	}
	return NULL;
}

/* PolicyC of the EK Credential Profile (PolicyAuthorizeNV of its fixed NV index), per hash. */
static const TPM2B_DIGEST ek_policy_c_sha256 = {
	.size = 32,
	.buffer = { 0x37, 0x67, 0xe2, 0xed, 0xd4, 0x3f, 0xf4, 0x5a, 0x3a, 0x7e, 0x1e, 0xae,
		    0xfc, 0xef, 0x78, 0x64, 0x3d, 0xca, 0x96, 0x46, 0x32, 0xe7, 0xaa, 0xd8,
		    0x2c, 0x67, 0x3a, 0x30, 0xd8, 0x63, 0x3f, 0xde },
};
static const TPM2B_DIGEST ek_policy_c_sha384 = {
	.size = 48,
	.buffer = { 0xd6, 0x03, 0x2c, 0xe6, 0x1f, 0x2f, 0xb3, 0xc2, 0x40, 0xeb, 0x3c, 0xf6,
		    0xa3, 0x32, 0x37, 0xef, 0x2b, 0x6a, 0x16, 0xf4, 0x29, 0x3c, 0x22, 0xb4,
		    0x55, 0xe2, 0x61, 0xcf, 0xfd, 0x21, 0x7a, 0xd5, 0xb4, 0x94, 0x7c, 0x2d,
		    0x73, 0xe6, 0x30, 0x05, 0xee, 0xd2, 0xdc, 0x2b, 0x35, 0x93, 0xd1, 0x65 },
};
static const TPM2B_DIGEST ek_policy_c_sha512 = {
	.size = 64,
	.buffer = { 0x58, 0x9e, 0xe1, 0xe1, 0x46, 0x54, 0x47, 0x16, 0xe8, 0xde, 0xaf, 0xe6,
		    0xdb, 0x24, 0x7b, 0x01, 0xb8, 0x1e, 0x9f, 0x9c, 0x7d, 0xd1, 0x6b, 0x81,
		    0x4a, 0xa1, 0x59, 0x13, 0x87, 0x49, 0x10, 0x5f, 0xba, 0x53, 0x88, 0xdd,
		    0x1d, 0xea, 0x70, 0x2f, 0x35, 0x24, 0x0c, 0x18, 0x49, 0x33, 0x12, 0x1e,
		    0x2c, 0x61, 0xb8, 0xf5, 0x0d, 0x3e, 0xf9, 0x13, 0x93, 0xa4, 0x9a, 0x38,
		    0xc3, 0xf7, 0x3f, 0xc8 },
};

/*
 * PolicyA in the hash md: PolicySecret(TPM_RH_ENDORSEMENT) from a zero digest, i.e.
 * H(H(0...0 || TPM_CC_PolicySecret || name(TPM_RH_ENDORSEMENT)) || policyRef), the policyRef
 * empty. Computed rather than listed: the sha256 value is EK_POLICY_SHA256 (a unit test
 * checks that, and that PolicyOR(PolicyA, PolicyC) is each PolicyB of the table).
 */
static int ek_policy_a(const EVP_MD *md, TPM2B_DIGEST *out)
{
	static const uint8_t cc_and_name[8] = { 0x00, 0x00, 0x01, 0x51, 0x40, 0x00, 0x00, 0x0b };
	uint8_t zero[EVP_MAX_MD_SIZE] = { 0 }, mid[EVP_MAX_MD_SIZE];
	unsigned n = (unsigned)EVP_MD_get_size(md), len = 0;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	bool ok;

	ok = c && EVP_DigestInit_ex(c, md, NULL) && EVP_DigestUpdate(c, zero, n) &&
	     EVP_DigestUpdate(c, cc_and_name, sizeof(cc_and_name)) &&
	     EVP_DigestFinal_ex(c, mid, &len) && EVP_Digest(mid, len, out->buffer, &len, md, NULL);
	EVP_MD_CTX_free(c);
	if (!ok || len > sizeof(out->buffer))
		return -EINVAL;
	out->size = (uint16_t)len;
	return 0;
}

int tpmkey_ek_policy_branches(const struct tpmkey_ek_profile *p, TPM2B_DIGEST branches[2])
{
	const TPM2B_DIGEST *c;
	const EVP_MD *md;

	if (!(p->tmpl.objectAttributes & TPMA_OBJECT_USERWITHAUTH))
		return 0; /* the low range: PolicyA alone */
	switch (p->tmpl.nameAlg) {
	case TPM2_ALG_SHA256: c = &ek_policy_c_sha256; break;
	case TPM2_ALG_SHA384: c = &ek_policy_c_sha384; break;
	case TPM2_ALG_SHA512: c = &ek_policy_c_sha512; break;
	default: return -EINVAL;
	}
	md = md_for(p->tmpl.nameAlg, ALG_USE_KEY_NAME);
	if (!md || ek_policy_a(md, &branches[0]) < 0)
		return -EINVAL;
	branches[1] = *c;
	return 2;
}

static bool sym_is(const TPMT_SYM_DEF_OBJECT *s, const TPMT_SYM_DEF_OBJECT *want)
{
	return s->algorithm == want->algorithm && s->keyBits.sym == want->keyBits.sym &&
	       s->mode.sym == want->mode.sym;
}

static bool same_size(const TPMT_PUBLIC *a, const TPMT_PUBLIC *b)
{
	if (a->type != b->type)
		return false;
	if (a->type == TPM2_ALG_RSA)
		return a->parameters.rsaDetail.keyBits == b->parameters.rsaDetail.keyBits;
	return a->parameters.eccDetail.curveID == b->parameters.eccDetail.curveID;
}

static bool policy_is(const TPMT_PUBLIC *pub, const TPMT_PUBLIC *t)
{
	return pub->authPolicy.size == t->authPolicy.size &&
	       CRYPTO_memcmp(pub->authPolicy.buffer, t->authPolicy.buffer, t->authPolicy.size) == 0;
}

/*
 * The profile a key claims: its type and size or curve, and of the two RSA-2048 and P-256
 * templates the one whose policy it carries (the low range's when it carries neither, so the
 * refusal names what differs from it).
 */
static const struct tpmkey_ek_profile *claimed_profile(const TPMT_PUBLIC *pub)
{
	const struct tpmkey_ek_profile *first = NULL;

	for (size_t i = 0; i < sizeof(ek_profiles) / sizeof(ek_profiles[0]); i++) {
		const struct tpmkey_ek_profile *p = &ek_profiles[i];

		if (!same_size(pub, &p->tmpl))
			continue;
		if (policy_is(pub, &p->tmpl))
			return p;
		if (!first)
			first = p;
	}
	return first;
}

const struct tpmkey_ek_profile *tpmkey_ek_profile_of(const TPMT_PUBLIC *pub)
{
	const struct tpmkey_ek_profile *p = claimed_profile(pub);

	return p && tpmkey_check_ek(pub) == TPMKEY_OK ? p : NULL;
}

enum tpmkey_check tpmkey_check_ek(const TPMT_PUBLIC *pub)
{
	const struct tpmkey_ek_profile *prof = claimed_profile(pub);
	const TPMT_PUBLIC *t;

	if (!prof)
		return TPMKEY_BAD_TYPE;
	t = &prof->tmpl;
	if (pub->type == TPM2_ALG_RSA) {
		const TPMS_RSA_PARMS *p = &pub->parameters.rsaDetail;
		const TPMS_RSA_PARMS *w = &t->parameters.rsaDetail;

		/* An exponent of 0 means 65537; a TPM may also write it out. */
		if (p->exponent != w->exponent && p->exponent != 65537)
			return TPMKEY_BAD_TYPE;
		if (!sym_is(&p->symmetric, &w->symmetric))
			return TPMKEY_BAD_SYMMETRIC;
		if (p->scheme.scheme != w->scheme.scheme)
			return TPMKEY_BAD_SCHEME;
	} else {
		const TPMS_ECC_PARMS *p = &pub->parameters.eccDetail;
		const TPMS_ECC_PARMS *w = &t->parameters.eccDetail;

		if (!sym_is(&p->symmetric, &w->symmetric))
			return TPMKEY_BAD_SYMMETRIC;
		if (p->scheme.scheme != w->scheme.scheme || p->kdf.scheme != w->kdf.scheme)
			return TPMKEY_BAD_SCHEME;
	}
	if (pub->nameAlg != t->nameAlg)
		return TPMKEY_BAD_NAME_ALG;
	if (pub->objectAttributes != t->objectAttributes)
		return TPMKEY_BAD_ATTRIBUTES;
	if (!policy_is(pub, t))
		return TPMKEY_BAD_POLICY;
	{
		/* The unique is the key itself: its size is the key's (checked on conversion). */
		EVP_PKEY *pkey = tpmkey_to_evp(pub);
		if (!pkey)
			return TPMKEY_BAD_TYPE;
		EVP_PKEY_free(pkey);
	}
	return TPMKEY_OK;
}
