/*
 * IMA file signatures: parse the security.ima signature header, keep a set of trusted keys
 * filed by key id, verify with OpenSSL. The format and the key id are in imasig.h.
 */
#include "proto/imasig.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "proto/alg.h"
#include "proto/dynbuf.h"
#include "proto/limits.h"

struct key {
	EVP_PKEY *pkey;
	uint32_t keyid;
	uint8_t *der; /* the certificate or SubjectPublicKeyInfo, re-encoded */
	size_t der_len;
};

struct imasig_keyset {
	struct dynbuf keys; /* struct key[n], at most LIMIT_POLICY_KEYS */
	size_t n;
};

static const struct key *key_at(const struct imasig_keyset *ks, size_t i)
{
	return (const struct key *)ks->keys.buf + i;
}

const char *imasig_status_name(enum imasig_status s)
{
	switch (s) {
	case IMASIG_VALID:
		return "valid";
	case IMASIG_UNKNOWN_KEY:
		return "unknown_key";
	case IMASIG_INVALID:
		return "invalid";
	case IMASIG_MALFORMED:
		return "malformed";
	case IMASIG_UNSUPPORTED:
		return "unsupported";
	}
	return "unknown";
}

static void set_why(const char **why, const char *msg)
{
	if (why)
		*why = msg;
}

enum imasig_status imasig_parse(const uint8_t *buf, size_t len, struct imasig *out,
				const char **why)
{
	const struct alg *a;

	memset(out, 0, sizeof(*out));
	if (!buf || len < IMASIG_HEADER_LEN) {
		set_why(why, "shorter than the 9-byte signature header");
		return IMASIG_MALFORMED;
	}
	out->type = buf[0];
	out->version = buf[1];
	out->hash_algo = buf[2];
	out->keyid = (uint32_t)buf[3] << 24 | (uint32_t)buf[4] << 16 | (uint32_t)buf[5] << 8 | buf[6];
	out->sig_len = (uint16_t)(buf[7] << 8 | buf[8]);
	out->sig = buf + IMASIG_HEADER_LEN;
	if ((size_t)out->sig_len != len - IMASIG_HEADER_LEN) {
		set_why(why, "signature size in the header is not the rest of the field");
		return IMASIG_MALFORMED;
	}
	if (out->sig_len == 0) {
		set_why(why, "empty signature");
		return IMASIG_MALFORMED;
	}
	switch (out->type) {
	case IMASIG_TYPE_DIGSIG:
		if (out->version == 3) {
			set_why(why, "signature version 3 is taken only for fs-verity (type 6), "
				     "as the kernel does");
			return IMASIG_UNSUPPORTED;
		}
		if (out->version != 2) {
			set_why(why, "unknown signature version");
			return IMASIG_MALFORMED;
		}
		break;
	case IMASIG_TYPE_EVM_PORTABLE:
		set_why(why, "an EVM portable signature signs metadata, not the file digest");
		return IMASIG_UNSUPPORTED;
	case IMASIG_TYPE_VERITY:
		if (out->version != 3) {
			set_why(why, "an fs-verity signature (type 6) that is not version 3");
			return IMASIG_MALFORMED;
		}
		break;
	default:
		set_why(why, "not a signature (xattr type other than 3, 5 or 6)");
		return IMASIG_MALFORMED;
	}
	a = alg_by_kernel_hash(out->hash_algo);
	if (!alg_allows(a, ALG_USE_FILE_SIG)) {
		set_why(why, "signature hash not accepted (sha256, sha384 or sha512)");
		return IMASIG_UNSUPPORTED;
	}
	out->alg = a->id;
	return IMASIG_VALID;
}

/* --- keys ---------------------------------------------------------------------------- */

/* The id of a key from its public key bits (evmctl calc_keyid_v2). */
static int keyid_of_pubkey(const X509_PUBKEY *xpk, uint32_t *keyid)
{
	const unsigned char *bits = NULL;
	uint8_t md[SHA_DIGEST_LENGTH];
	int bits_len = 0;

	if (X509_PUBKEY_get0_param(NULL, &bits, &bits_len, NULL, xpk) != 1 || !bits ||
	    bits_len <= 0 || !SHA1(bits, (size_t)bits_len, md))
		return -EINVAL;
	*keyid = (uint32_t)md[16] << 24 | (uint32_t)md[17] << 16 | (uint32_t)md[18] << 8 | md[19];
	return 0;
}

/* The id the kernel gives a certificate's key: its subject key identifier, else the bits. */
static int keyid_of_cert(const X509 *cert, uint32_t *keyid)
{
	const ASN1_OCTET_STRING *skid = X509_get0_subject_key_id((X509 *)cert);

	if (skid && ASN1_STRING_length(skid) >= 4) {
		const uint8_t *p = ASN1_STRING_get0_data(skid) + ASN1_STRING_length(skid) - 4;

		*keyid = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
		return 0;
	}
	return keyid_of_pubkey(X509_get_X509_PUBKEY(cert), keyid);
}

static bool is_pem(const uint8_t *data, size_t len)
{
	static const char tag[] = "-----BEGIN ";
	size_t i = 0;

	while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n'))
		i++;
	return len - i >= sizeof(tag) - 1 && memcmp(data + i, tag, sizeof(tag) - 1) == 0;
}

/* A loaded key: its EVP_PKEY, canonical DER and id. */
struct loaded {
	EVP_PKEY *pkey;
	uint8_t *der;
	size_t der_len;
	uint32_t keyid;
};

static void loaded_release(struct loaded *l)
{
	EVP_PKEY_free(l->pkey);
	OPENSSL_free(l->der);
	memset(l, 0, sizeof(*l));
}

/* Takes ownership of cert or xpk (exactly one is set) into l. */
static int loaded_from(X509 *cert, X509_PUBKEY *xpk, struct loaded *l, const char **why)
{
	unsigned char *der = NULL;
	int n, rc = -EINVAL, type;

	memset(l, 0, sizeof(*l));
	l->pkey = cert ? X509_get_pubkey(cert) : X509_PUBKEY_get(xpk);
	if (!l->pkey) {
		set_why(why, "the public key does not load");
		goto out;
	}
	type = EVP_PKEY_get_base_id(l->pkey);
	if (type == EVP_PKEY_RSA) {
		int bits = EVP_PKEY_get_bits(l->pkey);

		if (bits < 2048 || bits > LIMIT_IMASIG_RSA_BITS) {
			set_why(why, "an RSA key must have 2048 to " LIMIT_STR(LIMIT_IMASIG_RSA_BITS) " bits");
			goto out;
		}
	} else if (type != EVP_PKEY_EC) {
		set_why(why, "not an RSA or EC key");
		goto out;
	}
	if ((cert ? keyid_of_cert(cert, &l->keyid) : keyid_of_pubkey(xpk, &l->keyid)) < 0) {
		set_why(why, "no key id");
		goto out;
	}
	n = cert ? i2d_X509(cert, &der) : i2d_X509_PUBKEY(xpk, &der);
	if (n <= 0) {
		set_why(why, "cannot encode the key");
		rc = -ENOMEM;
		goto out;
	}
	l->der = der;
	l->der_len = (size_t)n;
	rc = 0;
out:
	X509_free(cert);
	X509_PUBKEY_free(xpk);
	if (rc)
		loaded_release(l);
	return rc;
}

/* DER: exactly one certificate or SubjectPublicKeyInfo, nothing after it. */
static int load_der(const uint8_t *data, size_t len, struct loaded *l, const char **why)
{
	const unsigned char *p = data;
	X509 *cert;
	X509_PUBKEY *xpk;

	if (len > (size_t)LONG_MAX)
		return -EINVAL;
	cert = d2i_X509(NULL, &p, (long)len);
	if (cert && p == data + len)
		return loaded_from(cert, NULL, l, why);
	X509_free(cert);
	p = data;
	xpk = d2i_X509_PUBKEY(NULL, &p, (long)len);
	if (xpk && p == data + len)
		return loaded_from(NULL, xpk, l, why);
	X509_PUBKEY_free(xpk);
	set_why(why, "neither an X.509 certificate nor a SubjectPublicKeyInfo (DER)");
	return -EINVAL;
}

/* PEM: one "CERTIFICATE" or "PUBLIC KEY" block; a second block is refused, not ignored. */
static int load_pem(const uint8_t *data, size_t len, struct loaded *l, const char **why)
{
	char *name = NULL, *header = NULL;
	unsigned char *der = NULL;
	long der_len = 0;
	int rc = -EINVAL;
	BIO *bio;

	if (len > INT_MAX)
		return -EINVAL;
	bio = BIO_new_mem_buf(data, (int)len);
	if (!bio)
		return -ENOMEM;
	if (PEM_read_bio(bio, &name, &header, &der, &der_len) != 1) {
		set_why(why, "PEM that does not decode");
		goto out;
	}
	if (strcmp(name, "CERTIFICATE") != 0 && strcmp(name, "PUBLIC KEY") != 0) {
		set_why(why, "a PEM block other than CERTIFICATE or PUBLIC KEY");
		goto out;
	}
	{
		char *n2 = NULL, *h2 = NULL;
		unsigned char *d2 = NULL;
		long l2 = 0;

		if (PEM_read_bio(bio, &n2, &h2, &d2, &l2) == 1) {
			OPENSSL_free(n2);
			OPENSSL_free(h2);
			OPENSSL_free(d2);
			set_why(why, "more than one PEM block (one key per entry)");
			goto out;
		}
	}
	rc = load_der(der, (size_t)der_len, l, why);
out:
	ERR_clear_error();
	OPENSSL_free(name);
	OPENSSL_free(header);
	OPENSSL_free(der);
	BIO_free(bio);
	return rc;
}

static int load_key(const uint8_t *data, size_t len, struct loaded *l, const char **why)
{
	int rc;

	memset(l, 0, sizeof(*l));
	if (!data || len == 0) {
		set_why(why, "empty key");
		return -EINVAL;
	}
	if (len > LIMIT_POLICY_KEY_BYTES) {
		set_why(why, "key longer than " LIMIT_STR(LIMIT_POLICY_KEY_BYTES) " bytes");
		return -E2BIG;
	}
	rc = is_pem(data, len) ? load_pem(data, len, l, why) : load_der(data, len, l, why);
	ERR_clear_error();
	return rc;
}

int imasig_keyid_of(const uint8_t *data, size_t len, uint32_t *keyid)
{
	struct loaded l;
	const char *why;

	if (load_key(data, len, &l, &why) < 0)
		return -EINVAL;
	*keyid = l.keyid;
	loaded_release(&l);
	return 0;
}

bool imasig_is_key(const uint8_t *buf, size_t len)
{
	struct loaded l;
	const char *why;

	if (!buf || len == 0 || len > LIMIT_POLICY_KEY_BYTES || is_pem(buf, len) ||
	    load_der(buf, len, &l, &why) < 0) {
		ERR_clear_error();
		return false;
	}
	loaded_release(&l);
	return true;
}

struct imasig_keyset *imasig_keyset_new(void)
{
	struct imasig_keyset *ks = calloc(1, sizeof(*ks));

	if (ks)
		dynbuf_init(&ks->keys, (size_t)LIMIT_POLICY_KEYS * sizeof(struct key));
	return ks;
}

void imasig_keyset_free(struct imasig_keyset *ks)
{
	if (!ks)
		return;
	for (size_t i = 0; i < ks->n; i++) {
		struct key *k = (struct key *)key_at(ks, i);

		EVP_PKEY_free(k->pkey);
		OPENSSL_free(k->der);
	}
	dynbuf_release(&ks->keys);
	free(ks);
}

int imasig_keyset_add(struct imasig_keyset *ks, const uint8_t *data, size_t len,
		      const uint32_t *keyid, uint32_t *keyid_out, const char **why)
{
	struct loaded l;
	struct key *k;
	int rc;

	if (!ks)
		return -EINVAL;
	rc = load_key(data, len, &l, why);
	if (rc)
		return rc;
	if (keyid)
		l.keyid = *keyid;
	if (keyid_out)
		*keyid_out = l.keyid;
	for (size_t i = 0; i < ks->n; i++) {
		const struct key *o = key_at(ks, i);

		if (o->keyid == l.keyid && o->der_len == l.der_len &&
		    memcmp(o->der, l.der, l.der_len) == 0) {
			loaded_release(&l);
			return 0;
		}
	}
	k = dynbuf_grow(&ks->keys, sizeof(*k));
	if (!k) {
		loaded_release(&l);
		set_why(why, "more than " LIMIT_STR(LIMIT_POLICY_KEYS) " keys");
		return dynbuf_error(&ks->keys) == -E2BIG ? -E2BIG : -ENOMEM;
	}
	k->pkey = l.pkey;
	k->keyid = l.keyid;
	k->der = l.der;
	k->der_len = l.der_len;
	ks->n++;
	return 0;
}

size_t imasig_keyset_count(const struct imasig_keyset *ks)
{
	return ks ? ks->n : 0;
}

bool imasig_keyset_get(const struct imasig_keyset *ks, size_t i, const uint8_t **der,
		       size_t *der_len, uint32_t *keyid)
{
	if (!ks || i >= ks->n)
		return false;
	*der = key_at(ks, i)->der;
	*der_len = key_at(ks, i)->der_len;
	*keyid = key_at(ks, i)->keyid;
	return true;
}

/* --- verification -------------------------------------------------------------------- */

static bool verify_with(EVP_PKEY *pkey, const EVP_MD *md, const struct imasig *sig,
			const uint8_t *digest, size_t digest_len)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(pkey, NULL);
	bool ok = false;

	if (!ctx || EVP_PKEY_verify_init(ctx) <= 0 ||
	    (EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA &&
	     EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0) ||
	    EVP_PKEY_CTX_set_signature_md(ctx, md) <= 0)
		goto out;
	ok = EVP_PKEY_verify(ctx, sig->sig, sig->sig_len, digest, digest_len) == 1;
out:
	EVP_PKEY_CTX_free(ctx);
	ERR_clear_error();
	return ok;
}

const char *imasig_kind_mismatch(void)
{
	return "the signature signs another kind of digest than the entry's (fs-verity "
	       "signatures, version 3, sign a verity: digest; version 2 ones IMA's file hash)";
}

/*
 * What a version 3 signature signs: H(struct ima_file_id) = H(u8 type || u8 hash_algo ||
 * digest), in the signature's hash (the kernel's calc_file_id_hash hashes the struct without
 * the unused tail of its digest array). 0 and *out_len, or -EINVAL.
 */
static int file_id_hash(const struct imasig *sig, const struct alg *a, const uint8_t *digest,
			size_t digest_len, uint8_t out[EVP_MAX_MD_SIZE], unsigned *out_len)
{
	const uint8_t head[2] = { sig->type, sig->hash_algo };
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	bool ok;

	ok = c && EVP_DigestInit_ex(c, alg_evp_md(a), NULL) &&
	     EVP_DigestUpdate(c, head, sizeof(head)) && EVP_DigestUpdate(c, digest, digest_len) &&
	     EVP_DigestFinal_ex(c, out, out_len);
	EVP_MD_CTX_free(c);
	return ok ? 0 : -EINVAL;
}

enum imasig_status imasig_verify(const struct imasig_keyset *ks, const struct imasig *sig,
				 enum ima_digest_type digest_type, uint16_t digest_alg,
				 const uint8_t *digest, size_t digest_len)
{
	const struct alg *a = alg_for_use(sig->alg, ALG_USE_FILE_SIG);
	bool verity = sig->type == IMASIG_TYPE_VERITY;
	uint8_t signed_hash[EVP_MAX_MD_SIZE];
	unsigned signed_len = 0;
	bool known = false;

	if (!a)
		return IMASIG_UNSUPPORTED;
	/* A v3 signature signs an fs-verity digest, a v2 one IMA's file hash: nothing else. */
	if ((digest_type == IMA_DIGEST_VERITY) != verity || digest_type == IMA_DIGEST_OTHER)
		return IMASIG_UNSUPPORTED;
	for (size_t i = 0; ks && i < ks->n; i++) {
		const struct key *k = key_at(ks, i);

		if (k->keyid != sig->keyid)
			continue;
		known = true;
		/* A digest of another algorithm than the signature's was not what the key signed. */
		if (digest_alg != a->id || !digest || digest_len != a->size)
			return IMASIG_INVALID;
		if (verity && !signed_len &&
		    file_id_hash(sig, a, digest, digest_len, signed_hash, &signed_len) < 0)
			return IMASIG_INVALID;
		if (verity ? verify_with(k->pkey, alg_evp_md(a), sig, signed_hash, signed_len)
			   : verify_with(k->pkey, alg_evp_md(a), sig, digest, digest_len))
			return IMASIG_VALID;
	}
	return known ? IMASIG_INVALID : IMASIG_UNKNOWN_KEY;
}

enum imasig_status imasig_check(const struct imasig_keyset *ks, const uint8_t *field,
				size_t field_len, enum ima_digest_type digest_type,
				uint16_t digest_alg, const uint8_t *digest, size_t digest_len,
				struct imasig *out, const char **why)
{
	enum imasig_status s = imasig_parse(field, field_len, out, why);

	if (s != IMASIG_VALID)
		return s;
	s = imasig_verify(ks, out, digest_type, digest_alg, digest, digest_len);
	if (s == IMASIG_UNSUPPORTED)
		set_why(why, imasig_kind_mismatch());
	else if (s == IMASIG_INVALID)
		set_why(why, "does not verify with the key of its id over this digest");
	else if (s == IMASIG_UNKNOWN_KEY)
		set_why(why, "no trusted key has its key id");
	return s;
}
