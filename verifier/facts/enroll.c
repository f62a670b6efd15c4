#include "verifier/facts/enroll.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "common/log.h"
#include "proto/ekcert.h"

struct enroll_trust {
	X509_STORE *store;
};

struct enroll_trust *enroll_trust_new(const char *const *ca_files, size_t nfiles)
{
	struct enroll_trust *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->store = X509_STORE_new();
	if (!t->store)
		goto fail;
	/*
	 * Every certificate of the files is an anchor, a root or not: a TPM maker's CA is often
	 * issued by a root the operator has no reason to trust (STMicro's by GlobalSign's TPM
	 * root), and listing the CA alone must trust exactly it. Without this flag OpenSSL would
	 * take such a CA for an intermediate and demand its root.
	 */
	if (X509_STORE_set_flags(t->store, X509_V_FLAG_PARTIAL_CHAIN) != 1)
		goto fail;
	for (size_t i = 0; i < nfiles; i++) {
		/* Loads every certificate in the file; a bundle may hold roots and CAs under them. */
		if (X509_STORE_load_file(t->store, ca_files[i]) != 1) {
			log_openssl("enroll: --ek-ca");
			log_error("enroll: cannot load EK CA file \"%s\" (want PEM certificates)",
				  ca_files[i]);
			goto fail;
		}
	}
	return t;
fail:
	enroll_trust_free(t);
	return NULL;
}

void enroll_trust_free(struct enroll_trust *t)
{
	if (!t)
		return;
	X509_STORE_free(t->store);
	free(t);
}

static enum enroll_status refuse(struct enroll_result *out, enum enroll_status st,
				 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static enum enroll_status refuse(struct enroll_result *out, enum enroll_status st,
				 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->why, sizeof(out->why), fmt, ap);
	va_end(ap);
	return st;
}

/*
 * The intermediate certificates the agent sent (ek_chain: DER certificates one after the other,
 * as the TPM keeps them in NV 0x01C00100 and up). They are only candidates for the path: the
 * chain must still end at an --ek-ca anchor. NULL and a refusal in out->why if malformed.
 */
static STACK_OF(X509) *parse_intermediates(const struct enroll_request *req,
					   struct enroll_result *out, bool *bad)
{
	STACK_OF(X509) *sk = sk_X509_new_null();
	size_t off = 0, n = 0;
	int r;

	*bad = false;
	if (!sk)
		return NULL;
	while (req->ek_chain_len &&
	       (r = ekcert_next(req->ek_chain, req->ek_chain_len, &off, &n)) == 0) {
		const unsigned char *p = req->ek_chain + off - n;
		X509 *c = d2i_X509(NULL, &p, (long)n);

		if (!c || p != req->ek_chain + off || sk_X509_num(sk) >= (int)LIMIT_EK_CHAIN_CERTS ||
		    !sk_X509_push(sk, c)) {
			X509_free(c);
			ERR_clear_error();
			refuse(out, ENROLL_EK_UNTRUSTED, "ek_chain holds more than %u certificates or"
			       " one that is not DER", LIMIT_EK_CHAIN_CERTS);
			goto fail;
		}
	}
	if (req->ek_chain_len && r < 0) {
		refuse(out, ENROLL_EK_UNTRUSTED, "%s", "ek_chain is not DER certificates");
		goto fail;
	}
	return sk;
fail:
	*bad = true;
	sk_X509_pop_free(sk, X509_free);
	return NULL;
}

/* Chain check of an EK certificate against the anchors, through the agent's intermediates. */
static enum enroll_status verify_chain(const struct enroll_trust *t, X509 *cert,
				       STACK_OF(X509) *intermediates, struct enroll_result *out)
{
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	enum enroll_status st = ENROLL_EK_UNTRUSTED;
	int err;

	if (!ctx)
		return ENROLL_INTERNAL;
	if (!t || !t->store || X509_STORE_CTX_init(ctx, t->store, cert, intermediates) != 1) {
		X509_STORE_CTX_free(ctx);
		return refuse(out, ENROLL_EK_UNTRUSTED, "%s", "no EK CA configured (--ek-ca)");
	}
	/*
	 * EK certificates have an empty subject, a critical SAN of TPM attributes (a directoryName
	 * OpenSSL handles) and the EK EKU 2.23.133.8.1; they are not TLS certificates, so no
	 * purpose is set: only the chain, signatures, validity and CA constraints are checked.
	 */
	if (X509_verify_cert(ctx) == 1) {
		st = ENROLL_OK;
	} else {
		err = X509_STORE_CTX_get_error(ctx);
		snprintf(out->why, sizeof(out->why), "EK certificate not trusted: %s",
			 X509_verify_cert_error_string(err));
		log_info("enroll: EK certificate refused: openssl verify error %d \"%s\"", err,
			 X509_verify_cert_error_string(err));
	}
	ERR_clear_error();
	X509_STORE_CTX_free(ctx);
	return st;
}

/* SHA-256 of the DER SubjectPublicKeyInfo of key; -EINVAL (logged) if it has none. */
static int spki_sha256(EVP_PKEY *key, uint8_t out[ENROLL_DIGEST_LEN])
{
	unsigned char *der = NULL;
	unsigned int dlen = 0;
	int n = key ? i2d_PUBKEY(key, &der) : -1;
	int ret = 0;

	if (n <= 0 || EVP_Digest(der, (size_t)n, out, &dlen, EVP_sha256(), NULL) != 1 ||
	    dlen != ENROLL_DIGEST_LEN) {
		log_openssl("enroll: EK public key digest");
		ret = -EINVAL;
	}
	OPENSSL_free(der);
	return ret;
}

int enroll_ek_cert_digest(const uint8_t *der, size_t len, uint8_t out[ENROLL_DIGEST_LEN],
			  size_t *cert_len)
{
	const unsigned char *p = der;
	X509 *cert = NULL;
	int ret = -EINVAL;

	*cert_len = 0;
	if (len == 0 || len > LIMIT_EK_CERT || ekcert_trim(der, len, cert_len) ||
	    !(cert = d2i_X509(NULL, &p, (long)*cert_len)) || p != der + *cert_len)
		goto out;
	ret = spki_sha256(X509_get0_pubkey(cert), out);
out:
	ERR_clear_error();
	X509_free(cert);
	return ret;
}

enum enroll_status enroll_check(const struct enroll_trust *t, const struct enroll_request *req,
				struct enroll_result *out)
{
	TPMT_PUBLIC ek, ak;
	enum tpmkey_check kc;
	enum enroll_status st;
	const unsigned char *p;
	uint8_t secret[ENROLL_SECRET_LEN];
	unsigned int dlen = 0;
	STACK_OF(X509) *chain = NULL;
	X509 *cert = NULL;
	size_t cert_len = 0;
	bool bad_chain = false;
	int ret;

	memset(out, 0, sizeof(*out));
	if (tpmkey_parse_public(req->ek_pub, req->ek_pub_len, &ek))
		return refuse(out, ENROLL_BAD_EK, "%s", "ek_pub is not a canonical TPM2B_PUBLIC");
	if ((kc = tpmkey_check_ek(&ek)) != TPMKEY_OK)
		return refuse(out, ENROLL_BAD_EK, "ek_pub is not an EK: %s", tpmkey_check_str(kc));
	if (tpmkey_parse_public(req->ak_pub, req->ak_pub_len, &ak))
		return refuse(out, ENROLL_BAD_AK, "%s", "ak_pub is not a canonical TPM2B_PUBLIC");
	if ((kc = tpmkey_check_ak(&ak)) != TPMKEY_OK)
		return refuse(out, ENROLL_BAD_AK, "ak_pub is not an attestation key: %s",
			      tpmkey_check_str(kc));

	if (req->ek_cert_len == 0 || req->ek_cert_len > LIMIT_EK_CERT)
		return refuse(out, ENROLL_EK_UNTRUSTED, "%s", "ek_cert missing or too large");
	/*
	 * Exactly one certificate, then at most the fill of the NV index it came from (0xFF or
	 * 0x00): any other trailing byte would be data nobody checked.
	 */
	p = req->ek_cert;
	if (ekcert_trim(req->ek_cert, req->ek_cert_len, &cert_len) ||
	    !(cert = d2i_X509(NULL, &p, (long)cert_len)) || p != req->ek_cert + cert_len) {
		ERR_clear_error();
		st = refuse(out, ENROLL_EK_UNTRUSTED, "%s",
			    "ek_cert is not one DER certificate (followed only by 0xFF or 0x00 fill)");
		goto out;
	}
	out->ek_cert_len = cert_len;
	chain = parse_intermediates(req, out, &bad_chain);
	if (bad_chain) {
		st = ENROLL_EK_UNTRUSTED;
		goto out;
	}
	if (!chain) {
		st = ENROLL_INTERNAL;
		goto out;
	}
	if ((st = verify_chain(t, cert, chain, out)) != ENROLL_OK)
		goto out;
	if (!tpmkey_matches_evp(&ek, X509_get0_pubkey(cert))) {
		st = refuse(out, ENROLL_EK_MISMATCH, "%s",
			    "the EK certificate is for another key than ek_pub");
		goto out;
	}
	if (spki_sha256(X509_get0_pubkey(cert), out->ek_spki_sha256) ||
	    EVP_Digest(req->ek_pub, req->ek_pub_len, out->ek_pub_sha256, &dlen, EVP_sha256(),
		       NULL) != 1 || dlen != ENROLL_DIGEST_LEN) {
		log_openssl("enroll: EK digests");
		st = ENROLL_INTERNAL;
		goto out;
	}

	if (tpmkey_name(&ak, out->ak_name, &out->ak_name_len)) {
		st = refuse(out, ENROLL_BAD_AK, "%s", "AK name algorithm not supported");
		goto out;
	}
	if (RAND_bytes(secret, sizeof(secret)) != 1) {
		log_openssl("enroll: random secret");
		st = ENROLL_INTERNAL;
		goto out;
	}
	ret = credential_make(&ek, out->ak_name, out->ak_name_len, secret, sizeof(secret),
			      &out->cred);
	if (ret) {
		log_error("enroll: MakeCredential failed: %s", strerror(-ret));
		st = ret == -EINVAL ? refuse(out, ENROLL_BAD_EK, "%s", "EK not usable for MakeCredential")
				    : ENROLL_INTERNAL;
		goto out;
	}
	if (EVP_Digest(secret, sizeof(secret), out->secret_digest, &dlen, EVP_sha256(), NULL) != 1 ||
	    dlen != ENROLL_DIGEST_LEN) {
		log_openssl("enroll: secret digest");
		st = ENROLL_INTERNAL;
		goto out;
	}
	st = ENROLL_OK;
out:
	OPENSSL_cleanse(secret, sizeof(secret));
	sk_X509_pop_free(chain, X509_free);
	X509_free(cert);
	if (st != ENROLL_OK)
		OPENSSL_cleanse(&out->cred, sizeof(out->cred));
	return st;
}

bool enroll_secret_matches(const uint8_t digest[ENROLL_DIGEST_LEN], const uint8_t *secret,
			   size_t secret_len)
{
	uint8_t d[ENROLL_DIGEST_LEN];
	unsigned int dlen = 0;
	bool ok;

	if (EVP_Digest(secret, secret_len, d, &dlen, EVP_sha256(), NULL) != 1 ||
	    dlen != ENROLL_DIGEST_LEN) {
		log_openssl("enroll: secret digest");
		return false;
	}
	/* Hashing first makes the comparison independent of the secret's length as well. */
	ok = CRYPTO_memcmp(d, digest, ENROLL_DIGEST_LEN) == 0;
	OPENSSL_cleanse(d, sizeof(d));
	return ok;
}
