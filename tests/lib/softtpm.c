/* softtpm: AK publics and quotes made in software (see softtpm.h). */
#include "tests/lib/softtpm.h"

#include <errno.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>
#include <tss2/tss2_mu.h>

#include "proto/alg.h"
#include "proto/credential.h"
#include "proto/imasig.h"
#include "proto/quote.h"
#include "proto/tpmkey.h"

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
	TPM2B_PUBLIC pub;
	TPMT_PUBLIC *t = &pub.publicArea;
	size_t off = 0;

	/* What a TPM returns for the AK template: the template with the key in unique. */
	if (EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA) {
		if (EVP_PKEY_get_bits(key) != 2048)
			return -EINVAL;
		tpmkey_ak_template(&pub, TPMKEY_RSA2048);
		t->unique.rsa.size = 256;
		if (bn_param(key, OSSL_PKEY_PARAM_RSA_N, t->unique.rsa.buffer, 256))
			return -EINVAL;
	} else if (EVP_PKEY_get_base_id(key) == EVP_PKEY_EC) {
		tpmkey_ak_template(&pub, TPMKEY_ECC_P256);
		t->unique.ecc.x.size = 32;
		t->unique.ecc.y.size = 32;
		if (bn_param(key, OSSL_PKEY_PARAM_EC_PUB_X, t->unique.ecc.x.buffer, 32) ||
		    bn_param(key, OSSL_PKEY_PARAM_EC_PUB_Y, t->unique.ecc.y.buffer, 32))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (attributes)
		t->objectAttributes = attributes;
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

/* --- IMA list records ------------------------------------------------------------------ */

/* Little-endian, as x86 kernels write the list (formats.md 1.1). */
static uint8_t *put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
	return p + 4;
}

size_t softtpm_ima_ng_size(const char *alg, size_t digest_len, size_t path_len)
{
	/* pcr | hash[20] | u32 name_len "ima-ng" | u32 data_len | u32 "alg:\0"+d | u32 path\0 */
	return 4 + 20 + 4 + 6 + 4 + (4 + strlen(alg) + 2 + digest_len) + (4 + path_len + 1);
}

/* A record of template tname: ima-ng, or ima-sig(v2) with sig not NULL (the field may be empty). */
static ssize_t ima_record(uint8_t *out, size_t cap, const char *tname, const char *alg,
			  const uint8_t *digest, size_t digest_len, const char *path,
			  size_t path_len, const uint8_t *sig, size_t sig_len, bool violation)
{
	size_t tlen = strlen(tname), alen = strlen(alg);
	size_t need = softtpm_ima_ng_size(alg, digest_len, path_len) + (tlen - 6) +
		      (sig ? 4 + sig_len : 0);

	if (alen > 32 || memchr(path, '\0', path_len))
		return -EINVAL;
	if (need > cap || need > UINT32_MAX)
		return -ENOSPC;
	uint8_t *data = out + 32 + tlen, *p = data;
	p = put_le32(p, (uint32_t)(alen + 2 + digest_len));
	memcpy(p, alg, alen);
	p += alen;
	*p++ = ':';
	*p++ = '\0';
	memcpy(p, digest, digest_len);
	p += digest_len;
	p = put_le32(p, (uint32_t)(path_len + 1));
	memcpy(p, path, path_len);
	p += path_len;
	*p++ = '\0';
	if (sig) {
		p = put_le32(p, (uint32_t)sig_len);
		memcpy(p, sig, sig_len);
		p += sig_len;
	}
	size_t data_len = (size_t)(p - data);

	put_le32(out, 10);
	if (violation)
		memset(out + 4, 0, 20);
	else
		SHA1(data, data_len, out + 4);
	put_le32(out + 24, (uint32_t)tlen);
	memcpy(out + 28, tname, tlen);
	put_le32(out + 28 + tlen, (uint32_t)data_len);
	return (ssize_t)need;
}

ssize_t softtpm_ima_ng_entry(uint8_t *out, size_t cap, const char *alg, const uint8_t *digest,
			     size_t digest_len, const char *path, size_t path_len, bool violation)
{
	return ima_record(out, cap, "ima-ng", alg, digest, digest_len, path, path_len, NULL, 0,
			  violation);
}

ssize_t softtpm_ima_sig_entry(uint8_t *out, size_t cap, const char *alg, const uint8_t *digest,
			      size_t digest_len, const char *path, size_t path_len,
			      const uint8_t *sig, size_t sig_len)
{
	return ima_record(out, cap, "ima-sig", alg, digest, digest_len, path, path_len,
			  sig ? sig : out, sig ? sig_len : 0, false);
}

ssize_t softtpm_ima_sigv2_entry(uint8_t *out, size_t cap, const char *type_alg,
				const uint8_t *digest, size_t digest_len, const char *path,
				size_t path_len, const uint8_t *sig, size_t sig_len)
{
	return ima_record(out, cap, "ima-sigv2", type_alg, digest, digest_len, path, path_len,
			  sig ? sig : out, sig ? sig_len : 0, false);
}

int softtpm_ima_sign(EVP_PKEY *key, const char *alg, const uint8_t *digest, size_t digest_len,
		     uint8_t *field, size_t cap, size_t *field_len)
{
	const struct alg *a = alg_by_name(alg);
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);
	unsigned char *der = NULL;
	size_t slen = cap > 9 ? cap - 9 : 0;
	uint32_t keyid = 0;
	int n, rc = -EINVAL;

	n = i2d_PUBKEY(key, &der);
	if (!a || !ctx || n <= 0 || cap < 9 || imasig_keyid_of(der, (size_t)n, &keyid) ||
	    EVP_PKEY_sign_init(ctx) <= 0 ||
	    (EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA &&
	     EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0) ||
	    EVP_PKEY_CTX_set_signature_md(ctx, alg_evp_md(a)) <= 0 ||
	    EVP_PKEY_sign(ctx, field + 9, &slen, digest, digest_len) <= 0 || slen > 0xffff)
		goto out;
	field[0] = 3;
	field[1] = 2;
	field[2] = a->kernel_hash;
	field[3] = (uint8_t)(keyid >> 24);
	field[4] = (uint8_t)(keyid >> 16);
	field[5] = (uint8_t)(keyid >> 8);
	field[6] = (uint8_t)keyid;
	field[7] = (uint8_t)(slen >> 8);
	field[8] = (uint8_t)slen;
	*field_len = 9 + slen;
	rc = 0;
out:
	OPENSSL_free(der);
	EVP_PKEY_CTX_free(ctx);
	return rc;
}

/* --- software EK ----------------------------------------------------------------------- */

/* An EC key on P-256 (the only ECC EK curve the verifier takes). */
static bool is_p256(EVP_PKEY *key)
{
	char group[32] = "";
	size_t glen = 0;

	return EVP_PKEY_get_base_id(key) == EVP_PKEY_EC &&
	       EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group,
					      sizeof(group), &glen) &&
	       (!strcmp(group, "prime256v1") || !strcmp(group, "P-256"));
}

int softtpm_ek_public(EVP_PKEY *ek, uint8_t *out, size_t cap, size_t *outlen)
{
	TPM2B_PUBLIC pub;
	TPMT_PUBLIC *t = &pub.publicArea;
	size_t off = 0;

	/* The template's unique is zero-filled; CreatePrimary puts the public key there. */
	if (EVP_PKEY_get_base_id(ek) == EVP_PKEY_RSA && EVP_PKEY_get_bits(ek) == 2048) {
		tpmkey_ek_template(&pub, TPMKEY_RSA2048);
		if (bn_param(ek, OSSL_PKEY_PARAM_RSA_N, t->unique.rsa.buffer, 256))
			return -EINVAL;
	} else if (is_p256(ek)) {
		tpmkey_ek_template(&pub, TPMKEY_ECC_P256);
		if (bn_param(ek, OSSL_PKEY_PARAM_EC_PUB_X, t->unique.ecc.x.buffer, 32) ||
		    bn_param(ek, OSSL_PKEY_PARAM_EC_PUB_Y, t->unique.ecc.y.buffer, 32))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (Tss2_MU_TPM2B_PUBLIC_Marshal(&pub, out, cap, &off) != TSS2_RC_SUCCESS)
		return -ENOSPC;
	*outlen = off;
	return 0;
}

static int rsa_oaep_decrypt(EVP_PKEY *ek, const uint8_t *in, size_t in_len, uint8_t *out,
			    size_t *out_len)
{
	static const char label[] = "IDENTITY"; /* the NUL is part of the label */
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(ek, NULL);
	unsigned char *l = OPENSSL_memdup(label, sizeof(label));
	int rc = -EBADMSG;

	if (!ctx || !l || EVP_PKEY_decrypt_init(ctx) != 1 ||
	    EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) != 1 ||
	    EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()) != 1 ||
	    EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) != 1 ||
	    EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, l, (int)sizeof(label)) != 1)
		goto out;
	l = NULL; /* owned by ctx now */
	if (EVP_PKEY_decrypt(ctx, out, out_len, in, in_len) == 1)
		rc = 0;
out:
	OPENSSL_free(l);
	EVP_PKEY_CTX_free(ctx);
	return rc;
}

/*
 * ECC: the encrypted secret is the verifier's ephemeral point; Z = x(ECDH(EK, point)), seed =
 * KDFe(Z, "IDENTITY", point.x, EK.x) (TPM Part 1 C.6.4, the inverse of credential.c's).
 */
static int ecc_seed(EVP_PKEY *ek, const TPM2B_ENCRYPTED_SECRET *es, uint8_t *seed,
		    size_t seed_len)
{
	TPM2B_PUBLIC tmpl;
	TPMS_ECC_POINT pt;
	EVP_PKEY *peer = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	uint8_t z[32], ek_x[32];
	size_t zlen = sizeof(z), off = 0;
	int rc = -EBADMSG;

	if (Tss2_MU_TPMS_ECC_POINT_Unmarshal(es->secret, es->size, &off, &pt) || off != es->size ||
	    pt.x.size != 32 || pt.y.size != 32 || bn_param(ek, OSSL_PKEY_PARAM_EC_PUB_X, ek_x, 32))
		return -EINVAL;
	/* The point as a public key of the EK template's curve, through the verifier's own code. */
	tpmkey_ek_template(&tmpl, TPMKEY_ECC_P256);
	tmpl.publicArea.unique.ecc = pt;
	peer = tpmkey_to_evp(&tmpl.publicArea);
	ctx = EVP_PKEY_CTX_new(ek, NULL);
	if (!peer || !ctx || EVP_PKEY_derive_init(ctx) <= 0 ||
	    EVP_PKEY_derive_set_peer(ctx, peer) <= 0 || EVP_PKEY_derive(ctx, z, &zlen) <= 0 ||
	    zlen != 32)
		goto out;
	if (credential_kdfe(TPM2_ALG_SHA256, z, zlen, "IDENTITY", pt.x.buffer, 32, ek_x, 32,
			    (uint32_t)(8 * seed_len), seed, seed_len) == 0)
		rc = 0;
out:
	OPENSSL_cleanse(z, sizeof(z));
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(peer);
	return rc;
}

int softtpm_activate_credential(EVP_PKEY *ek, const uint8_t *ak_name, size_t ak_name_len,
				const uint8_t *blob, size_t blob_len, const uint8_t *enc_secret,
				size_t enc_secret_len, uint8_t *out, size_t *outlen)
{
	TPM2B_ID_OBJECT id = {0};
	TPM2B_ENCRYPTED_SECRET es = {0};
	uint8_t seed[512], sym[16], hkey[32], mac[32], plain[sizeof(id.credential)];
	size_t seed_len = sizeof(seed), off = 0;
	unsigned int mac_len = 0;
	int rc = -EINVAL, n = 0, fin = 0;
	EVP_CIPHER_CTX *cc = NULL;

	if (Tss2_MU_TPM2B_ID_OBJECT_Unmarshal(blob, blob_len, &off, &id) || off != blob_len)
		return -EINVAL;
	off = 0;
	if (Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(enc_secret, enc_secret_len, &off, &es) ||
	    off != enc_secret_len)
		return -EINVAL;
	if (is_p256(ek)) {
		seed_len = 32;
		if ((rc = ecc_seed(ek, &es, seed, seed_len)))
			return rc;
		rc = -EINVAL;
	} else if (rsa_oaep_decrypt(ek, es.secret, es.size, seed, &seed_len) || seed_len != 32) {
		return -EBADMSG;
	}
	if (credential_kdfa(TPM2_ALG_SHA256, seed, seed_len, "STORAGE", ak_name, ak_name_len,
			    NULL, 0, 128, sym, sizeof(sym)) ||
	    credential_kdfa(TPM2_ALG_SHA256, seed, seed_len, "INTEGRITY", NULL, 0, NULL, 0, 256,
			    hkey, sizeof(hkey)))
		goto out;
	/* credential = u16 hmac size || hmac || encIdentity */
	if (id.size < 2 + 32 || ((id.credential[0] << 8) | id.credential[1]) != 32)
		goto out;
	const uint8_t *enc = id.credential + 34;
	size_t enc_len = id.size - 34u;
	{
		EVP_MAC *m = EVP_MAC_fetch(NULL, "HMAC", NULL);
		EVP_MAC_CTX *mc = m ? EVP_MAC_CTX_new(m) : NULL;
		OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0),
				       OSSL_PARAM_construct_end()};
		size_t ml = 0;
		int ok = mc && EVP_MAC_init(mc, hkey, sizeof(hkey), params) &&
			 EVP_MAC_update(mc, enc, enc_len) &&
			 EVP_MAC_update(mc, ak_name, ak_name_len) &&
			 EVP_MAC_final(mc, mac, &ml, sizeof(mac));
		EVP_MAC_CTX_free(mc);
		EVP_MAC_free(m);
		mac_len = (unsigned int)ml;
		if (!ok)
			goto out;
	}
	if (mac_len != 32 || CRYPTO_memcmp(mac, id.credential + 2, 32) != 0) {
		rc = -EBADMSG;
		goto out;
	}
	static const uint8_t iv[16];
	cc = EVP_CIPHER_CTX_new();
	if (!cc || EVP_DecryptInit_ex(cc, EVP_aes_128_cfb(), NULL, sym, iv) != 1 ||
	    EVP_DecryptUpdate(cc, plain, &n, enc, (int)enc_len) != 1 ||
	    EVP_DecryptFinal_ex(cc, plain + n, &fin) != 1)
		goto out;
	size_t plen = (size_t)n + (size_t)fin;
	if (plen < 2)
		goto out;
	size_t clen = (size_t)((plain[0] << 8) | plain[1]);
	if (clen != plen - 2 || clen > 64)
		goto out;
	memcpy(out, plain + 2, clen);
	*outlen = clen;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(cc);
	OPENSSL_cleanse(seed, sizeof(seed));
	OPENSSL_cleanse(sym, sizeof(sym));
	OPENSSL_cleanse(hkey, sizeof(hkey));
	OPENSSL_cleanse(plain, sizeof(plain));
	return rc;
}

/* --- test CA and EK certificates -------------------------------------------------------- */

static int sign_cert(X509 *x, EVP_PKEY *key, X509 *issuer, EVP_PKEY *issuer_key,
		     const char *cn, uint64_t serial, const char *usage)
{
	X509_NAME *name = X509_NAME_new();
	X509V3_CTX v3;
	X509_EXTENSION *ext = NULL;
	int ok;

	ok = name && X509_set_version(x, 2) &&
	     ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), serial) &&
	     X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
	     X509_gmtime_adj(X509_getm_notAfter(x), 10L * 365 * 24 * 3600) &&
	     X509_set_pubkey(x, key) &&
	     X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0) &&
	     X509_set_subject_name(x, name) &&
	     X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
	if (ok) {
		X509V3_set_ctx(&v3, issuer ? issuer : x, x, NULL, NULL, 0);
		ext = X509V3_EXT_conf_nid(NULL, &v3, NID_key_usage, usage);
		ok = ext && X509_add_ext(x, ext, -1);
		X509_EXTENSION_free(ext);
	}
	if (ok && !issuer) {
		ext = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints, "critical,CA:TRUE");
		ok = ext && X509_add_ext(x, ext, -1);
		X509_EXTENSION_free(ext);
	}
	ok = ok && X509_sign(x, issuer_key, EVP_sha256()) > 0;
	X509_NAME_free(name);
	return ok ? 0 : -ENOMEM;
}

int softtpm_ca_new(const char *common_name, EVP_PKEY **key, X509 **cert)
{
	*key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	*cert = X509_new();
	if (*key && *cert && !sign_cert(*cert, *key, NULL, *key, common_name, 1,
					"critical,keyCertSign,cRLSign"))
		return 0;
	EVP_PKEY_free(*key);
	X509_free(*cert);
	*key = NULL;
	*cert = NULL;
	return -ENOMEM;
}

int softtpm_ek_cert(EVP_PKEY *ek, EVP_PKEY *ca_key, X509 *ca_cert, uint64_t serial,
		    uint8_t **der, size_t *der_len)
{
	X509 *x = X509_new();
	unsigned char *buf = NULL;
	int n, rc = -ENOMEM;

	if (x && !sign_cert(x, ek, ca_cert, ca_key, "software EK", serial,
			    "critical,keyEncipherment") &&
	    (n = i2d_X509(x, &buf)) > 0) {
		*der = buf;
		*der_len = (size_t)n;
		rc = 0;
	}
	X509_free(x);
	return rc;
}
