/* Software TPM2_MakeCredential: seed protection under the EK, KDFa/KDFe, outer wrap. */
#include "proto/credential.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <tss2/tss2_mu.h>

#include "proto/alg.h"
#include "proto/tpmkey.h"

static const EVP_MD *md_for(TPMI_ALG_HASH alg)
{
	return alg_evp_md(alg_for_use(alg, ALG_USE_CREDENTIAL));
}

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

int credential_kdfa(TPMI_ALG_HASH alg, const uint8_t *key, size_t key_len, const char *label,
		    const uint8_t *ctx_u, size_t u_len, const uint8_t *ctx_v, size_t v_len,
		    uint32_t bits, uint8_t *out, size_t out_cap)
{
	const EVP_MD *md = md_for(alg);
	EVP_MAC *mac = NULL;
	EVP_MAC_CTX *ctx = NULL;
	OSSL_PARAM params[2];
	uint8_t block[EVP_MAX_MD_SIZE], counter[4], lbits[4];
	size_t need = bits / 8, done = 0, blen;
	int ret = -EIO;

	if (!md || !label || bits == 0 || bits % 8 || need > out_cap)
		return -EINVAL;
	mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	if (!ctx)
		goto cleanup;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
						     (char *)EVP_MD_get0_name(md), 0);
	params[1] = OSSL_PARAM_construct_end();
	be32(lbits, bits);
	/* The label is hashed with its terminating NUL ("STORAGE\0"), as the TPM does. */
	for (uint32_t i = 1; done < need; i++) {
		be32(counter, i);
		if (!EVP_MAC_init(ctx, key, key_len, params) || !EVP_MAC_update(ctx, counter, 4) ||
		    !EVP_MAC_update(ctx, (const uint8_t *)label, strlen(label) + 1) ||
		    (u_len && !EVP_MAC_update(ctx, ctx_u, u_len)) ||
		    (v_len && !EVP_MAC_update(ctx, ctx_v, v_len)) ||
		    !EVP_MAC_update(ctx, lbits, 4) ||
		    !EVP_MAC_final(ctx, block, &blen, sizeof(block)))
			goto cleanup;
		size_t take = need - done < blen ? need - done : blen;
		memcpy(out + done, block, take);
		done += take;
	}
	ret = 0;
cleanup:
	OPENSSL_cleanse(block, sizeof(block));
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	return ret;
}

int credential_kdfe(TPMI_ALG_HASH alg, const uint8_t *z, size_t z_len, const char *label,
		    const uint8_t *party_u, size_t u_len, const uint8_t *party_v, size_t v_len,
		    uint32_t bits, uint8_t *out, size_t out_cap)
{
	const EVP_MD *md = md_for(alg);
	EVP_MD_CTX *ctx = NULL;
	uint8_t block[EVP_MAX_MD_SIZE], counter[4];
	size_t need = bits / 8, done = 0;
	unsigned int blen = 0;
	int ret = -EIO;

	if (!md || !label || bits == 0 || bits % 8 || need > out_cap)
		return -EINVAL;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		goto cleanup;
	for (uint32_t i = 1; done < need; i++) {
		be32(counter, i);
		if (!EVP_DigestInit_ex(ctx, md, NULL) || !EVP_DigestUpdate(ctx, counter, 4) ||
		    !EVP_DigestUpdate(ctx, z, z_len) ||
		    !EVP_DigestUpdate(ctx, label, strlen(label) + 1) ||
		    (u_len && !EVP_DigestUpdate(ctx, party_u, u_len)) ||
		    (v_len && !EVP_DigestUpdate(ctx, party_v, v_len)) ||
		    !EVP_DigestFinal_ex(ctx, block, &blen))
			goto cleanup;
		size_t take = need - done < blen ? need - done : blen;
		memcpy(out + done, block, take);
		done += take;
	}
	ret = 0;
cleanup:
	OPENSSL_cleanse(block, sizeof(block));
	EVP_MD_CTX_free(ctx);
	return ret;
}

int credential_wrap(TPMI_ALG_HASH name_alg, uint16_t sym_bits, const uint8_t *seed,
		    size_t seed_len, const uint8_t *ak_name, size_t ak_name_len,
		    const uint8_t *secret, size_t secret_len, struct credential *out)
{
	const EVP_MD *md = md_for(name_alg);
	size_t dsize = md ? (size_t)EVP_MD_get_size(md) : 0;
	uint8_t sym_key[32], hmac_key[EVP_MAX_MD_SIZE], plain[2 + EVP_MAX_MD_SIZE];
	uint8_t iv[16] = {0};
	TPM2B_ID_OBJECT id;
	uint8_t *enc, *hmac;
	size_t enc_len = 2 + secret_len, hlen = 0, off = 0;
	EVP_CIPHER_CTX *cctx = NULL;
	int n = 0, ret = -EIO;
	const EVP_CIPHER *cipher = sym_bits == 128 ? EVP_aes_128_cfb128() :
				   sym_bits == 256 ? EVP_aes_256_cfb128() : NULL;

	if (!md || !cipher || !seed || seed_len == 0 || !ak_name || ak_name_len < 2 ||
	    ak_name_len > LIMIT_TPM_NAME || !secret || secret_len == 0 || secret_len > dsize)
		return -EINVAL;
	memset(out->blob, 0, sizeof(out->blob));
	/* TPMS_ID_OBJECT = TPM2B_DIGEST integrityHMAC || encIdentity (no size of its own). */
	hmac = id.credential + 2;
	enc = hmac + dsize;
	if (2 + dsize + enc_len > sizeof(id.credential))
		return -EINVAL;

	if (credential_kdfa(name_alg, seed, seed_len, "STORAGE", ak_name, ak_name_len, NULL, 0,
			    sym_bits, sym_key, sizeof(sym_key)) != 0 ||
	    credential_kdfa(name_alg, seed, seed_len, "INTEGRITY", NULL, 0, NULL, 0,
			    (uint32_t)(8 * dsize), hmac_key, sizeof(hmac_key)) != 0)
		goto cleanup;
	/* encIdentity = CFB(symKey, IV=0, TPM2B_DIGEST credential) */
	plain[0] = (uint8_t)(secret_len >> 8);
	plain[1] = (uint8_t)secret_len;
	memcpy(plain + 2, secret, secret_len);
	cctx = EVP_CIPHER_CTX_new();
	if (!cctx || !EVP_EncryptInit_ex(cctx, cipher, NULL, sym_key, iv) ||
	    !EVP_EncryptUpdate(cctx, enc, &n, plain, (int)enc_len) || (size_t)n != enc_len ||
	    !EVP_EncryptFinal_ex(cctx, enc + n, &n) || n != 0)
		goto cleanup;
	/* outerHMAC = HMAC(hmacKey, encIdentity || name): binds the blob to the AK's name. */
	{
		EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
		EVP_MAC_CTX *mctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
		OSSL_PARAM p[2] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
								    (char *)EVP_MD_get0_name(md), 0),
				   OSSL_PARAM_construct_end()};
		bool ok = mctx && EVP_MAC_init(mctx, hmac_key, dsize, p) &&
			  EVP_MAC_update(mctx, enc, enc_len) &&
			  EVP_MAC_update(mctx, ak_name, ak_name_len) &&
			  EVP_MAC_final(mctx, hmac, &hlen, dsize) && hlen == dsize;
		EVP_MAC_CTX_free(mctx);
		EVP_MAC_free(mac);
		if (!ok)
			goto cleanup;
	}
	id.credential[0] = (uint8_t)(dsize >> 8);
	id.credential[1] = (uint8_t)dsize;
	id.size = (uint16_t)(2 + dsize + enc_len);
	if (Tss2_MU_TPM2B_ID_OBJECT_Marshal(&id, out->blob, sizeof(out->blob), &off) !=
	    TSS2_RC_SUCCESS)
		goto cleanup;
	out->blob_len = off;
	ret = 0;
cleanup:
	EVP_CIPHER_CTX_free(cctx);
	OPENSSL_cleanse(sym_key, sizeof(sym_key));
	OPENSSL_cleanse(hmac_key, sizeof(hmac_key));
	OPENSSL_cleanse(plain, sizeof(plain));
	return ret;
}

/* seed -> RSA-OAEP(EK, label "IDENTITY\0"); the label's NUL is part of it (TPM Part 1 B.10.4). */
static int rsa_seed(EVP_PKEY *ek, const EVP_MD *md, const uint8_t *seed, size_t seed_len,
		    TPM2B_ENCRYPTED_SECRET *es)
{
	static const char label[] = "IDENTITY";
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(ek, NULL);
	void *l = OPENSSL_memdup(label, sizeof(label));
	size_t outlen = sizeof(es->secret);
	int ret = -EIO;

	if (!ctx || !l || EVP_PKEY_encrypt_init(ctx) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_oaep_md(ctx, md) <= 0 || EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, md) <= 0 ||
	    EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, l, sizeof(label)) <= 0)
		goto cleanup;
	l = NULL; /* owned by ctx */
	if (EVP_PKEY_encrypt(ctx, es->secret, &outlen, seed, seed_len) <= 0)
		goto cleanup;
	es->size = (uint16_t)outlen;
	ret = 0;
cleanup:
	OPENSSL_free(l);
	EVP_PKEY_CTX_free(ctx);
	return ret;
}

/*
 * ECC: an ephemeral key pair on the EK's curve; Z = x(ECDH); seed = KDFe(Z, "IDENTITY",
 * ephemeral.x, EK.x); the encrypted secret is the ephemeral public point (TPM Part 1 C.6.4).
 */
static int ecc_seed(EVP_PKEY *ek, const TPMT_PUBLIC *pub, uint8_t *seed, size_t seed_len,
		    TPM2B_ENCRYPTED_SECRET *es)
{
	/* The ephemeral key is on the EK's curve; coordinates are padded to its field size. */
	size_t clen = pub->unique.ecc.x.size;
	const char *curve = pub->parameters.eccDetail.curveID == TPM2_ECC_NIST_P256   ? "P-256"
			    : pub->parameters.eccDetail.curveID == TPM2_ECC_NIST_P384 ? "P-384"
			    : pub->parameters.eccDetail.curveID == TPM2_ECC_NIST_P521 ? "P-521"
										      : NULL;
	EVP_PKEY *eph = curve ? EVP_PKEY_Q_keygen(NULL, NULL, "EC", curve) : NULL;
	EVP_PKEY_CTX *ctx = NULL;
	BIGNUM *x = NULL, *y = NULL;
	TPMS_ECC_POINT pt;
	uint8_t z[66];
	size_t zlen = sizeof(z), off = 0;
	int ret = -EIO;

	if (!eph || clen == 0 || clen > sizeof(z) ||
	    !EVP_PKEY_get_bn_param(eph, OSSL_PKEY_PARAM_EC_PUB_X, &x) ||
	    !EVP_PKEY_get_bn_param(eph, OSSL_PKEY_PARAM_EC_PUB_Y, &y) ||
	    BN_bn2binpad(x, pt.x.buffer, (int)clen) != (int)clen ||
	    BN_bn2binpad(y, pt.y.buffer, (int)clen) != (int)clen)
		goto cleanup;
	pt.x.size = pt.y.size = (uint16_t)clen;
	ctx = EVP_PKEY_CTX_new(eph, NULL);
	if (!ctx || EVP_PKEY_derive_init(ctx) <= 0 || EVP_PKEY_derive_set_peer(ctx, ek) <= 0 ||
	    EVP_PKEY_derive(ctx, z, &zlen) <= 0 || zlen != clen)
		goto cleanup;
	if (credential_kdfe(pub->nameAlg, z, zlen, "IDENTITY", pt.x.buffer, clen,
			    pub->unique.ecc.x.buffer, pub->unique.ecc.x.size,
			    (uint32_t)(8 * seed_len), seed, seed_len) != 0)
		goto cleanup;
	if (Tss2_MU_TPMS_ECC_POINT_Marshal(&pt, es->secret, sizeof(es->secret), &off) !=
	    TSS2_RC_SUCCESS)
		goto cleanup;
	es->size = (uint16_t)off;
	ret = 0;
cleanup:
	OPENSSL_cleanse(z, sizeof(z));
	BN_free(x);
	BN_free(y);
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(eph);
	return ret;
}

int credential_make(const TPMT_PUBLIC *ek, const uint8_t *ak_name, size_t ak_name_len,
		    const uint8_t *secret, size_t secret_len, struct credential *out)
{
	const EVP_MD *md;
	EVP_PKEY *pkey = NULL;
	TPM2B_ENCRYPTED_SECRET es;
	uint8_t seed[EVP_MAX_MD_SIZE];
	size_t seed_len, off = 0;
	uint16_t sym_bits;
	int ret = -EINVAL;

	if (!ek || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	md = md_for(ek->nameAlg);
	if (!md)
		return -EINVAL;
	seed_len = (size_t)EVP_MD_get_size(md);
	if (ek->type == TPM2_ALG_RSA) {
		if (ek->parameters.rsaDetail.symmetric.algorithm != TPM2_ALG_AES)
			return -EINVAL;
		sym_bits = ek->parameters.rsaDetail.symmetric.keyBits.aes;
	} else if (ek->type == TPM2_ALG_ECC) {
		if (ek->parameters.eccDetail.symmetric.algorithm != TPM2_ALG_AES)
			return -EINVAL;
		sym_bits = ek->parameters.eccDetail.symmetric.keyBits.aes;
	} else {
		return -EINVAL;
	}
	pkey = tpmkey_to_evp(ek);
	if (!pkey)
		return -EINVAL;
	memset(&es, 0, sizeof(es));
	if (ek->type == TPM2_ALG_RSA) {
		ret = RAND_bytes(seed, (int)seed_len) == 1 ? rsa_seed(pkey, md, seed, seed_len, &es)
							   : -EIO;
	} else {
		ret = ecc_seed(pkey, ek, seed, seed_len, &es);
	}
	if (ret != 0)
		goto cleanup;
	ret = credential_wrap(ek->nameAlg, sym_bits, seed, seed_len, ak_name, ak_name_len, secret,
			      secret_len, out);
	if (ret != 0)
		goto cleanup;
	if (Tss2_MU_TPM2B_ENCRYPTED_SECRET_Marshal(&es, out->encrypted_secret,
						   sizeof(out->encrypted_secret), &off) !=
	    TSS2_RC_SUCCESS) {
		ret = -EIO;
		goto cleanup;
	}
	out->encrypted_secret_len = off;
cleanup:
	if (ret != 0)
		OPENSSL_cleanse(out, sizeof(*out));
	OPENSSL_cleanse(seed, sizeof(seed));
	EVP_PKEY_free(pkey);
	return ret;
}
