/*
 * Software MakeCredential. Known answers for KDFa, KDFe and the wrapped blob were computed
 * independently (Python hmac/hashlib and the `cryptography` package's AES-CFB). The seed
 * protection is checked by undoing it with the private half of test EKs made here: RSA-OAEP
 * decryption, and ECDH with the EK private key, must give back a seed that re-wraps to the
 * same blob. The TPM itself accepts our output in tests/cross/tpm2tools_credential.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <tss2/tss2_mu.h>

#include "proto/credential.h"
#include "proto/encoding.h"
#include "proto/tpmkey.h"
#include "tests/unit/check.h"
#include "tests/unit/testdata.h"

static bool eq_hex(const uint8_t *got, size_t n, const char *hex)
{
	uint8_t want[256];
	ssize_t w = hex_decode(hex, strlen(hex), want, sizeof(want));
	return w == (ssize_t)n && memcmp(got, want, n) == 0;
}

static uint8_t key[32], name[34], seed[32];
static const char secret[] = "attestation-secret-0123456789ab"; /* 31 bytes */

static void test_kdf(void)
{
	uint8_t out[128];

	CHECK(credential_kdfa(TPM2_ALG_SHA256, key, 32, "STORAGE", name, 34, NULL, 0, 128, out,
			      sizeof(out)) == 0 && eq_hex(out, 16, "4b6977df7782a6d0312cc5f537456667"),
	      "KDFa sha256 128 bits");
	CHECK(credential_kdfa(TPM2_ALG_SHA256, key, 32, "INTEGRITY", NULL, 0, NULL, 0, 600, out,
			      sizeof(out)) == 0 &&
		      eq_hex(out, 75, "032628ed42d5beb924ce0a0ead08902cf278ed87f9431793378f98ba89612a64"
				      "c2bb3d7236033e0265a103d65e505043bebce3266597530550e8066309b34f"
				      "bdd67ce30aaceccca4ec56c4"),
	      "KDFa sha256 600 bits (3 blocks)");
	CHECK(credential_kdfa(TPM2_ALG_SHA384, key, 32, "STORAGE", name, 34, (const uint8_t *)"ctx",
			      3, 384, out, sizeof(out)) == 0 &&
		      eq_hex(out, 48, "d4746f575861561e2c26872d7670265753af281bd19b640cc6f0f7223fe84537"
				      "5f29bf0c3a5d777f4bd69b8f7cb5d202"),
	      "KDFa sha384 with contextV");
	{
		uint8_t z[32], u[32], v[32];
		memset(z, 0x22, 32);
		memset(u, 0x33, 32);
		memset(v, 0x44, 32);
		CHECK(credential_kdfe(TPM2_ALG_SHA256, z, 32, "IDENTITY", u, 32, v, 32, 256, out,
				      sizeof(out)) == 0 &&
			      eq_hex(out, 32, "f59da144d928b82a7aceb16c1dbc3c5b0588ef575d1baefaade7131ba5f2c6a5"),
		      "KDFe sha256");
	}
	CHECK(credential_kdfa(TPM2_ALG_SHA256, key, 32, "X", NULL, 0, NULL, 0, 12, out, 16) == -EINVAL,
	      "KDFa bits not a byte multiple");
	CHECK(credential_kdfa(TPM2_ALG_SHA256, key, 32, "X", NULL, 0, NULL, 0, 256, out, 16) == -EINVAL,
	      "KDFa output larger than buffer");
	CHECK(credential_kdfa(TPM2_ALG_SHA1, key, 32, "X", NULL, 0, NULL, 0, 128, out, 16) == -EINVAL,
	      "KDFa sha1 refused");
}

static void test_wrap(void)
{
	struct credential c;

	CHECK(credential_wrap(TPM2_ALG_SHA256, 128, seed, 32, name, 34, (const uint8_t *)secret, 31,
			      &c) == 0,
	      "wrap");
	CHECK(eq_hex(c.blob, c.blob_len,
		     "00430020a8cbf39c541a2c8196d31a768b271bb2ee2196c99351845b240d1ef5e9116dcf1cf2174326"
		     "84e78036e7e3e3a307c56013939c595f0dbb0be6cf2d288560a767fe"),
	      "blob known answer (len %zu)", c.blob_len);
	CHECK(credential_wrap(TPM2_ALG_SHA256, 128, seed, 32, name, 34, (const uint8_t *)secret, 0,
			      &c) == -EINVAL, "empty secret");
	CHECK(credential_wrap(TPM2_ALG_SHA256, 128, seed, 32, name, 34, (const uint8_t *)"0123456789"
			      "0123456789012345678901", 33, &c) == -EINVAL, "secret > digest size");
	CHECK(credential_wrap(TPM2_ALG_SHA256, 128, seed, 32, name, 1, (const uint8_t *)secret, 31,
			      &c) == -EINVAL, "name too short");
	CHECK(credential_wrap(TPM2_ALG_SHA256, 192, seed, 32, name, 34, (const uint8_t *)secret, 31,
			      &c) == -EINVAL, "AES-192");
}

/* An EK-shaped TPMT_PUBLIC around a software key pair. */
static EVP_PKEY *make_ek(TPMI_ALG_PUBLIC type, TPMT_PUBLIC *pub)
{
	EVP_PKEY *k;
	BIGNUM *a = NULL, *b = NULL;

	memset(pub, 0, sizeof(*pub));
	pub->type = type;
	pub->nameAlg = TPM2_ALG_SHA256;
	pub->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
				TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_ADMINWITHPOLICY |
				TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
	if (type == TPM2_ALG_RSA) {
		k = EVP_RSA_gen(2048);
		pub->parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_AES;
		pub->parameters.rsaDetail.symmetric.keyBits.aes = 128;
		pub->parameters.rsaDetail.symmetric.mode.aes = TPM2_ALG_CFB;
		pub->parameters.rsaDetail.scheme.scheme = TPM2_ALG_NULL;
		pub->parameters.rsaDetail.keyBits = 2048;
		if (k && EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_N, &a))
			pub->unique.rsa.size = (uint16_t)BN_bn2binpad(a, pub->unique.rsa.buffer, 256);
	} else {
		k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		pub->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
		pub->parameters.eccDetail.symmetric.keyBits.aes = 128;
		pub->parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
		pub->parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
		pub->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
		pub->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
		if (k && EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_X, &a) &&
		    EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_Y, &b)) {
			pub->unique.ecc.x.size = (uint16_t)BN_bn2binpad(a, pub->unique.ecc.x.buffer, 32);
			pub->unique.ecc.y.size = (uint16_t)BN_bn2binpad(b, pub->unique.ecc.y.buffer, 32);
		}
	}
	BN_free(a);
	BN_free(b);
	return k;
}

/* What the TPM does to get the seed back, done here with the software EK's private key. */
static bool recover_seed(EVP_PKEY *k, TPMI_ALG_PUBLIC type, const TPMT_PUBLIC *pub,
			 const struct credential *c, uint8_t out[32])
{
	TPM2B_ENCRYPTED_SECRET es;
	size_t off = 0, n = 32;
	bool ok = false;
	EVP_PKEY_CTX *ctx = NULL;

	if (Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(c->encrypted_secret, c->encrypted_secret_len,
						     &off, &es) != TSS2_RC_SUCCESS ||
	    off != c->encrypted_secret_len)
		return false;
	if (type == TPM2_ALG_RSA) {
		void *l = OPENSSL_memdup("IDENTITY", 9);
		ctx = EVP_PKEY_CTX_new(k, NULL);
		ok = ctx && EVP_PKEY_decrypt_init(ctx) > 0 &&
		     EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) > 0 &&
		     EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()) > 0 &&
		     EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, l, 9) > 0;
		uint8_t buf[256];
		n = sizeof(buf);
		ok = ok && EVP_PKEY_decrypt(ctx, buf, &n, es.secret, es.size) > 0 && n == 32;
		if (ok)
			memcpy(out, buf, 32);
	} else {
		TPMS_ECC_POINT pt;
		TPMT_PUBLIC eph = *pub;
		EVP_PKEY *pk;
		uint8_t z[32];
		size_t zl = 32;
		off = 0;
		if (Tss2_MU_TPMS_ECC_POINT_Unmarshal(es.secret, es.size, &off, &pt) != TSS2_RC_SUCCESS)
			return false;
		eph.unique.ecc = pt;
		pk = tpmkey_to_evp(&eph);
		ctx = EVP_PKEY_CTX_new(k, NULL);
		ok = pk && ctx && EVP_PKEY_derive_init(ctx) > 0 && EVP_PKEY_derive_set_peer(ctx, pk) > 0 &&
		     EVP_PKEY_derive(ctx, z, &zl) > 0 &&
		     credential_kdfe(TPM2_ALG_SHA256, z, zl, "IDENTITY", pt.x.buffer, pt.x.size,
				     pub->unique.ecc.x.buffer, 32, 256, out, 32) == 0;
		EVP_PKEY_free(pk);
	}
	EVP_PKEY_CTX_free(ctx);
	return ok;
}

static void test_make(TPMI_ALG_PUBLIC type, const char *what)
{
	TPMT_PUBLIC pub;
	EVP_PKEY *k = make_ek(type, &pub);
	struct credential c, again;
	uint8_t s[32];

	CHECK(k && tpmkey_check_ek(&pub) == TPMKEY_BAD_POLICY, "%s test EK built", what);
	CHECK(credential_make(&pub, name, 34, (const uint8_t *)secret, 31, &c) == 0, "%s make", what);
	CHECK(c.blob_len == 2 + 2 + 32 + 2 + 31, "%s blob length %zu", what, c.blob_len);
	CHECK(c.encrypted_secret_len == (type == TPM2_ALG_RSA ? 2u + 256u : 2u + 2u + 32u + 2u + 32u),
	      "%s secret length %zu", what, c.encrypted_secret_len);
	CHECK(recover_seed(k, type, &pub, &c, s), "%s seed recovered with the EK private key", what);
	CHECK(credential_wrap(TPM2_ALG_SHA256, 128, s, 32, name, 34, (const uint8_t *)secret, 31,
			      &again) == 0 && again.blob_len == c.blob_len &&
		      !memcmp(again.blob, c.blob, c.blob_len), "%s blob re-wraps from the recovered seed", what);
	{
		struct credential c2;
		CHECK(credential_make(&pub, name, 34, (const uint8_t *)secret, 31, &c2) == 0 &&
			      memcmp(c2.blob, c.blob, c.blob_len) != 0, "%s fresh seed each time", what);
	}
	CHECK(credential_make(&pub, name, 34, (const uint8_t *)secret, 33, &c) == -EINVAL,
	      "%s secret too long", what);
	pub.nameAlg = TPM2_ALG_SHA1;
	CHECK(credential_make(&pub, name, 34, (const uint8_t *)secret, 16, &c) == -EINVAL,
	      "%s sha1 nameAlg", what);
	pub.nameAlg = TPM2_ALG_SHA256;
	pub.type = TPM2_ALG_KEYEDHASH;
	CHECK(credential_make(&pub, name, 34, (const uint8_t *)secret, 16, &c) == -EINVAL,
	      "%s keyedhash EK", what);
	EVP_PKEY_free(k);
}

/*
 * A high-range ECC EK, H-3 (P-384, sha384, AES-256-CFB): the seed is 48 bytes from KDFe with
 * sha384 over a 48-byte Z on P-384, and the blob re-wraps from it with AES-256. The EK's
 * fields are swtpm's ECC EK's (tests/data/tpm/ekecc.pub) with a key made here.
 */
static void test_make_p384(void)
{
	struct blob e = load("ekecc.pub");
	TPMT_PUBLIC pub, eph;
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-384"), *pk = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	BIGNUM *x = NULL, *y = NULL;
	TPM2B_ENCRYPTED_SECRET es;
	struct credential c, again;
	uint8_t z[48], s48[48], nm[2 + 48];
	size_t zl = sizeof(z), off = 0;

	memset(nm, 0x22, sizeof(nm));
	nm[0] = 0x00;
	nm[1] = 0x0c;
	CHECK(tpmkey_parse_public(e.p, e.n, &pub) == 0 && k &&
		      EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_X, &x) &&
		      EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_Y, &y) &&
		      BN_bn2binpad(x, pub.unique.ecc.x.buffer, 48) == 48 &&
		      BN_bn2binpad(y, pub.unique.ecc.y.buffer, 48) == 48,
	      "H-3 test EK built");
	CHECK(tpmkey_check_ek(&pub) == TPMKEY_OK, "it is an H-3 EK");
	CHECK(credential_make(&pub, nm, sizeof(nm), (const uint8_t *)secret, 32, &c) == 0,
	      "credential for a P-384 EK");
	CHECK(c.encrypted_secret_len == 2u + 2u + 48u + 2u + 48u, "the secret is a P-384 point (%zu)",
	      c.encrypted_secret_len);
	CHECK(c.blob_len == 2 + 2 + 48 + 2 + 32, "the blob has a sha384 HMAC (%zu)", c.blob_len);
	if (Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(c.encrypted_secret, c.encrypted_secret_len,
						     &off, &es) == TSS2_RC_SUCCESS) {
		eph = pub;
		off = 0;
		if (Tss2_MU_TPMS_ECC_POINT_Unmarshal(es.secret, es.size, &off, &eph.unique.ecc) ==
		    TSS2_RC_SUCCESS)
			pk = tpmkey_to_evp(&eph);
	}
	ctx = k ? EVP_PKEY_CTX_new(k, NULL) : NULL;
	CHECK(pk && ctx && EVP_PKEY_derive_init(ctx) > 0 && EVP_PKEY_derive_set_peer(ctx, pk) > 0 &&
		      EVP_PKEY_derive(ctx, z, &zl) > 0 && zl == 48 &&
		      credential_kdfe(TPM2_ALG_SHA384, z, zl, "IDENTITY", eph.unique.ecc.x.buffer, 48,
				      pub.unique.ecc.x.buffer, 48, 384, s48, 48) == 0 &&
		      credential_wrap(TPM2_ALG_SHA384, 256, s48, 48, nm, sizeof(nm),
				      (const uint8_t *)secret, 32, &again) == 0 &&
		      again.blob_len == c.blob_len && !memcmp(again.blob, c.blob, c.blob_len),
	      "the EK's private key recovers the seed and the blob re-wraps with AES-256");
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(pk);
	EVP_PKEY_free(k);
	BN_free(x);
	BN_free(y);
	free(e.p);
}

static void test_make_rsa(void)
{
	test_make(TPM2_ALG_RSA, "rsa");
}

static void test_make_ecc(void)
{
	test_make(TPM2_ALG_ECC, "ecc");
}

int main(void)
{
	for (int i = 0; i < 32; i++) {
		key[i] = (uint8_t)i;
		seed[i] = (uint8_t)(100 + i);
	}
	name[0] = 0x00;
	name[1] = 0x0b;
	memset(name + 2, 0x11, 32);
	CASE(test_kdf);
	CASE(test_wrap);
	CASE(test_make_rsa);
	CASE(test_make_ecc);
	CASE(test_make_p384);
	return check_finish();
}
