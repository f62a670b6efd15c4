/*
 * Unit tests for proto/imasig: the signature header, key ids, keys in every accepted form, and
 * verification against public vectors.
 *
 * The vectors and their provenance are in imasig_vectors.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/encoding.h"
#include "proto/imasig.h"
#include "proto/limits.h"
#include "tests/lib/softtpm.h"
#include "tests/unit/check.h"
#include "tests/unit/imasig_vectors.h"

static int add_text(struct imasig_keyset *ks, const char *pem, uint32_t *id)
{
	const char *why = NULL;

	return imasig_keyset_add(ks, (const uint8_t *)pem, strlen(pem), NULL, id, &why);
}

static enum imasig_status check_vec(const struct imasig_keyset *ks, const char *sighex,
				    uint16_t alg, const char *digesthex)
{
	struct bytes s = hex(sighex), d = hex(digesthex);
	struct imasig sig;
	const char *why = NULL;

	return imasig_check(ks, s.b, s.n, IMA_DIGEST_IMA, alg, d.b, d.n, &sig, &why);
}

static void test_header(void)
{
	struct bytes s = hex(KL_DD_SIG);
	struct imasig sig;
	const char *why = NULL;

	CHECK(s.n == 9 + 256, "vector decodes (%zu)", s.n);
	CHECK(imasig_parse(s.b, s.n, &sig, &why) == IMASIG_VALID, "Keylime RSA field parses");
	CHECK(sig.type == 3 && sig.version == 2 && sig.hash_algo == 4, "type 3, v2, HASH_ALGO_SHA256");
	CHECK(sig.alg == TPM2_ALG_SHA256, "sha256 as a TPM id");
	CHECK(sig.keyid == KL_RSA_KEYID, "key id %08x is big-endian f3452d23", sig.keyid);
	CHECK(sig.sig_len == 256 && sig.sig == s.b + 9, "256 signature bytes after the header");
	s = hex(KL_ZMORE_SIG);
	CHECK(imasig_parse(s.b, s.n, &sig, &why) == IMASIG_VALID && sig.keyid == KL_EC_KEYID &&
		      sig.sig_len == 0x48,
	      "Keylime EC field parses");
}

static void test_malformed(void)
{
	struct bytes s = hex(KL_ZMORE_SIG), t;
	struct imasig sig;
	const char *why = NULL;
	enum imasig_status st;

	t = hex(KL_ZMORE_BAD_SIG);
	CHECK(imasig_parse(t.b, t.n, &sig, &why) == IMASIG_MALFORMED && why,
	      "Keylime BAD_SIGNATURES: size field that lies");
	for (size_t n = 0; n < s.n; n++) {
		st = imasig_parse(s.b, n, &sig, &why);
		CHECK(st == IMASIG_MALFORMED, "truncated to %zu bytes: %s", n, imasig_status_name(st));
	}
	t = s;
	t.b[t.n++] = 0;
	CHECK(imasig_parse(t.b, t.n, &sig, &why) == IMASIG_MALFORMED, "one byte past the signature");
	CHECK(imasig_parse(NULL, 0, &sig, &why) == IMASIG_MALFORMED, "NULL");
	{
		const uint8_t empty[9] = {3, 2, 4, 1, 2, 3, 4, 0, 0};

		CHECK(imasig_parse(empty, sizeof(empty), &sig, &why) == IMASIG_MALFORMED,
		      "empty signature");
	}
	t = s;
	t.b[0] = 4; /* IMA_XATTR_DIGEST_NG: a hash, not a signature */
	CHECK(imasig_parse(t.b, t.n, &sig, &why) == IMASIG_MALFORMED, "type 4");
	t.b[0] = 0;
	CHECK(imasig_parse(t.b, t.n, &sig, &why) == IMASIG_MALFORMED, "type 0");
	t = s;
	t.b[1] = 1;
	CHECK(imasig_parse(t.b, t.n, &sig, &why) == IMASIG_MALFORMED, "version 1");
	t.b[1] = 3;
	CHECK(imasig_parse(t.b, t.n, &sig, &why) == IMASIG_UNSUPPORTED,
	      "type 3 version 3: the kernel takes v3 for fs-verity only");
	t = s;
	t.b[0] = 5;
	CHECK(imasig_parse(t.b, t.n, &sig, &why) == IMASIG_UNSUPPORTED, "EVM portable signature");
	t.b[0] = 6;
	CHECK(imasig_parse(t.b, t.n, &sig, &why) == IMASIG_MALFORMED, "fs-verity type, version 2");
	t.b[1] = 3;
	CHECK(imasig_parse(t.b, t.n, &sig, &why) == IMASIG_VALID, "fs-verity signature, version 3");
	t = s;
	t.b[2] = 1;
	CHECK(imasig_parse(t.b, t.n, &sig, &why) == IMASIG_UNSUPPORTED, "md5");
	t.b[2] = 7;
	CHECK(imasig_parse(t.b, t.n, &sig, &why) == IMASIG_UNSUPPORTED, "sha224");
	t.b[2] = 200;
	CHECK(imasig_parse(t.b, t.n, &sig, &why) == IMASIG_UNSUPPORTED, "hash 200");
	t = hex(KL_DD_SHA1_SIG);
	CHECK(imasig_parse(t.b, t.n, &sig, &why) == IMASIG_UNSUPPORTED,
	      "sha1 signatures are refused, like sha1 quotes");
}

static void test_keyids(void)
{
	struct bytes ec = b64(kl_ec_b64), cert = hex(KL_KEYRING_CERT);
	uint32_t id = 0;

	CHECK(imasig_keyid_of((const uint8_t *)kl_rsa_pem, strlen(kl_rsa_pem), &id) == 0 &&
		      id == KL_RSA_KEYID,
	      "Keylime RSA key: %08x", id);
	CHECK(imasig_keyid_of(ec.b, ec.n, &id) == 0 && id == KL_EC_KEYID,
	      "Keylime secp256k1 key (DER): %08x", id);
	CHECK(imasig_keyid_of((const uint8_t *)ev_p384_pem, strlen(ev_p384_pem), &id) == 0 &&
		      id == 0x8657a061,
	      "evmctl's id for the P-384 key: %08x", id);
	CHECK(imasig_keyid_of((const uint8_t *)ev_rsa3072_pem, strlen(ev_rsa3072_pem), &id) == 0 &&
		      id == 0x4cd59b31,
	      "evmctl's id for the RSA-3072 key: %08x", id);
	CHECK(imasig_keyid_of((const uint8_t *)skid_cert_pem, strlen(skid_cert_pem), &id) == 0 &&
		      id == 0x0a0b0c0d,
	      "a certificate's subject key identifier wins: %08x", id);
	CHECK(imasig_keyid_of(cert.b, cert.n, &id) == 0 && id == 0x2cb6058c,
	      "Keylime's keyring certificate (DER): %08x", id);
}

static void test_verify_vectors(void)
{
	struct imasig_keyset *ks = imasig_keyset_new();
	struct bytes ec = b64(kl_ec_b64);
	uint32_t id = 0;
	const char *why = NULL;

	CHECK(ks != NULL, "keyset");
	if (!ks)
		return;
	CHECK(check_vec(ks, KL_DD_SIG, TPM2_ALG_SHA256, KL_DD_SHA256) == IMASIG_UNKNOWN_KEY,
	      "empty set: unknown key");
	CHECK(add_text(ks, kl_rsa_pem, &id) == 0 && id == KL_RSA_KEYID, "RSA key added");
	CHECK(check_vec(ks, KL_DD_SIG, TPM2_ALG_SHA256, KL_DD_SHA256) == IMASIG_VALID,
	      "Keylime RSA signature of /usr/bin/dd verifies");
	CHECK(check_vec(ks, KL_ZMORE_SIG, TPM2_ALG_SHA256, KL_ZMORE_SHA256) == IMASIG_UNKNOWN_KEY,
	      "EC signature, EC key absent: unknown key");
	CHECK(imasig_keyset_add(ks, ec.b, ec.n, NULL, &id, &why) == 0 && id == KL_EC_KEYID,
	      "EC key added (DER)");
	CHECK(check_vec(ks, KL_ZMORE_SIG, TPM2_ALG_SHA256, KL_ZMORE_SHA256) == IMASIG_VALID,
	      "Keylime secp256k1 signature of /usr/bin/zmore verifies");
	CHECK(check_vec(ks, KL_DD_SIG, TPM2_ALG_SHA256, KL_ZMORE_SHA256) == IMASIG_INVALID,
	      "RSA signature over another digest: invalid");
	CHECK(check_vec(ks, KL_ZMORE_SIG, TPM2_ALG_SHA256, KL_DD_SHA256) == IMASIG_INVALID,
	      "EC signature over another digest: invalid");
	CHECK(check_vec(ks, KL_DD_SIG, TPM2_ALG_SHA1, KL_DD_SHA1) == IMASIG_INVALID,
	      "a sha256 signature on a sha1 digest: invalid");
	CHECK(check_vec(ks, KL_ZMORE_BAD_SIG, TPM2_ALG_SHA256, KL_ZMORE_SHA256) == IMASIG_MALFORMED,
	      "malformed stays malformed with the key present");
	CHECK(add_text(ks, ev_p384_pem, NULL) == 0 && add_text(ks, ev_rsa3072_pem, NULL) == 0,
	      "evmctl keys added");
	CHECK(check_vec(ks, EV_P384_SIG, TPM2_ALG_SHA384, EV_SHA384) == IMASIG_VALID,
	      "evmctl P-384 sha384 signature verifies");
	CHECK(check_vec(ks, EV_RSA3072_SIG, TPM2_ALG_SHA512, EV_SHA512) == IMASIG_VALID,
	      "evmctl RSA-3072 sha512 signature verifies");
	CHECK(check_vec(ks, EV_RSA3072_SIG, TPM2_ALG_SHA384, EV_SHA384) == IMASIG_INVALID,
	      "sha512 signature, sha384 digest: invalid");
	/* Every single bit flipped in the signature bytes fails. */
	{
		struct bytes s = hex(KL_DD_SIG), d = hex(KL_DD_SHA256);
		struct imasig sig;
		int bad = 0;

		for (size_t i = 9; i < s.n; i += 7) {
			s.b[i] ^= 0x10;
			if (imasig_check(ks, s.b, s.n, IMA_DIGEST_IMA, TPM2_ALG_SHA256, d.b, d.n,
					 &sig, &why) != IMASIG_INVALID)
				bad++;
			s.b[i] ^= 0x10;
		}
		CHECK(bad == 0, "%d flipped signatures were not invalid", bad);
		s.b[5] ^= 1; /* key id */
		CHECK(imasig_check(ks, s.b, s.n, IMA_DIGEST_IMA, TPM2_ALG_SHA256, d.b, d.n, &sig,
				   &why) == IMASIG_UNKNOWN_KEY,
		      "another key id: unknown key");
	}
	imasig_keyset_free(ks);
}

static void test_keyid_override(void)
{
	struct imasig_keyset *ks = imasig_keyset_new();
	uint32_t other = 0x11223344, id = 0;
	struct bytes s = hex(KL_DD_SIG), d = hex(KL_DD_SHA256);
	struct imasig sig;
	const char *why = NULL;

	CHECK(imasig_keyset_add(ks, (const uint8_t *)kl_rsa_pem, strlen(kl_rsa_pem), &other, &id,
				&why) == 0 &&
		      id == other,
	      "key filed under an id given");
	CHECK(imasig_check(ks, s.b, s.n, IMA_DIGEST_IMA, TPM2_ALG_SHA256, d.b, d.n, &sig, &why) ==
		      IMASIG_UNKNOWN_KEY,
	      "its computed id no longer finds it");
	s.b[3] = 0x11, s.b[4] = 0x22, s.b[5] = 0x33, s.b[6] = 0x44;
	CHECK(imasig_check(ks, s.b, s.n, IMA_DIGEST_IMA, TPM2_ALG_SHA256, d.b, d.n, &sig, &why) ==
		      IMASIG_VALID,
	      "the given id does");
	imasig_keyset_free(ks);
}

/* Keys in every accepted form, and what is refused. */
static void test_key_forms(void)
{
	struct imasig_keyset *ks = imasig_keyset_new();
	struct bytes ec = b64(kl_ec_b64), cert = hex(KL_KEYRING_CERT);
	const char *why = NULL;
	uint8_t buf[8192];
	const uint8_t *der;
	size_t der_len;
	uint32_t id;
	int rc;

	CHECK(add_text(ks, skid_cert_pem, &id) == 0 && id == 0x0a0b0c0d, "PEM certificate");
	CHECK(imasig_keyset_add(ks, cert.b, cert.n, NULL, &id, &why) == 0, "DER certificate");
	CHECK(imasig_keyset_add(ks, ec.b, ec.n, NULL, NULL, &why) == 0, "DER public key");
	CHECK(add_text(ks, kl_rsa_pem, NULL) == 0, "PEM public key");
	CHECK(add_text(ks, kl_rsa_pem, NULL) == 0 && imasig_keyset_count(ks) == 4,
	      "the same key twice is kept once (%zu)", imasig_keyset_count(ks));
	CHECK(imasig_keyset_get(ks, 1, &der, &der_len, &id) && der_len == cert.n &&
		      memcmp(der, cert.b, cert.n) == 0 && id == 0x2cb6058c,
	      "a certificate is kept as its DER");
	CHECK(!imasig_keyset_get(ks, 4, &der, &der_len, &id), "past the end");

	memcpy(buf, ec.b, ec.n);
	buf[ec.n] = 0;
	CHECK(imasig_keyset_add(ks, buf, ec.n + 1, NULL, NULL, &why) == -EINVAL, "DER with a trailing byte");
	CHECK(imasig_keyset_add(ks, ec.b, ec.n - 1, NULL, NULL, &why) == -EINVAL, "DER cut short");
	/* Found by fuzz_imasig: a well-formed SubjectPublicKeyInfo whose point is not on the curve. */
	buf[ec.n - 1] ^= 0x04;
	CHECK(imasig_keyset_add(ks, buf, ec.n, NULL, NULL, &why) == -EINVAL, "EC point off the curve");
	CHECK(!imasig_is_key(buf, ec.n), "an EC point off the curve is not a key");
	CHECK(imasig_keyset_add(ks, (const uint8_t *)"hello", 5, NULL, NULL, &why) == -EINVAL && why,
	      "junk: %s", why ? why : "?");
	CHECK(imasig_keyset_add(ks, NULL, 0, NULL, NULL, &why) == -EINVAL, "empty");
	{
		char two[2048];

		snprintf(two, sizeof(two), "%s%s", kl_rsa_pem, ev_p384_pem);
		CHECK(add_text(ks, two, NULL) == -EINVAL, "two PEM blocks in one entry");
	}
	{
		EVP_PKEY *small = EVP_RSA_gen(1024), *ed = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
		unsigned char *p = NULL;
		int n;

		n = small ? i2d_PUBKEY(small, &p) : -1;
		CHECK(n > 0 && imasig_keyset_add(ks, p, (size_t)n, NULL, NULL, &why) == -EINVAL,
		      "RSA-1024 refused");
		OPENSSL_free(p);
		p = NULL;
		n = ed ? i2d_PUBKEY(ed, &p) : -1;
		CHECK(n > 0 && imasig_keyset_add(ks, p, (size_t)n, NULL, NULL, &why) == -EINVAL,
		      "Ed25519 refused (the kernel's IMA takes RSA and EC)");
		OPENSSL_free(p);
		EVP_PKEY_free(small);
		EVP_PKEY_free(ed);
	}
	{
		static const char priv[] = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n"
					   "-----END PRIVATE KEY-----\n";

		CHECK(add_text(ks, priv, NULL) == -EINVAL, "a private key block is refused");
	}
	memset(buf, 'A', sizeof(buf));
	rc = imasig_keyset_add(ks, buf, LIMIT_POLICY_KEY_BYTES + 1, NULL, NULL, &why);
	CHECK(rc == -E2BIG, "past LIMIT_POLICY_KEY_BYTES: %d", rc);
	CHECK(imasig_keyset_count(ks) == 4, "nothing refused was added");

	CHECK(imasig_is_key(cert.b, cert.n), "a DER certificate is a key");
	CHECK(imasig_is_key(ec.b, ec.n), "a DER public key is a key");
	CHECK(!imasig_is_key((const uint8_t *)kl_rsa_pem, strlen(kl_rsa_pem)),
	      "PEM is not what the kernel measures");
	CHECK(!imasig_is_key((const uint8_t *)"kexec-cmdline", 13), "a command line is not a key");
	CHECK(!imasig_is_key(cert.b, cert.n - 1), "a cut certificate is not a key");
	imasig_keyset_free(ks);
	imasig_keyset_free(NULL);
}

/* Signatures made here (softtpm_ima_sign) for every hash and both key types verify. */
static void test_roundtrip(void)
{
	static const struct { const char *name; uint16_t alg; size_t len; } hs[] = {
		{"sha256", TPM2_ALG_SHA256, 32},
		{"sha384", TPM2_ALG_SHA384, 48},
		{"sha512", TPM2_ALG_SHA512, 64},
	};
	EVP_PKEY *keys[2] = {EVP_RSA_gen(2048), EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256")};
	struct imasig_keyset *ks = imasig_keyset_new();

	for (int k = 0; k < 2; k++) {
		unsigned char *der = NULL;
		int n = keys[k] ? i2d_PUBKEY(keys[k], &der) : -1;
		const char *why = NULL;

		CHECK(n > 0 && imasig_keyset_add(ks, der, (size_t)n, NULL, NULL, &why) == 0,
		      "key %d added", k);
		OPENSSL_free(der);
		for (size_t h = 0; h < sizeof(hs) / sizeof(hs[0]); h++) {
			uint8_t field[9 + 1024], digest[64];
			size_t flen = 0;
			struct imasig sig;

			for (size_t i = 0; i < hs[h].len; i++)
				digest[i] = (uint8_t)(i * 7 + h + (size_t)k);
			CHECK(softtpm_ima_sign(keys[k], hs[h].name, digest, hs[h].len, field,
					       sizeof(field), &flen) == 0,
			      "signed with key %d %s", k, hs[h].name);
			CHECK(imasig_check(ks, field, flen, IMA_DIGEST_IMA, hs[h].alg, digest,
					   hs[h].len, &sig, &why) == IMASIG_VALID,
			      "key %d %s verifies", k, hs[h].name);
			digest[0] ^= 1;
			CHECK(imasig_check(ks, field, flen, IMA_DIGEST_IMA, hs[h].alg, digest,
					   hs[h].len, &sig, &why) == IMASIG_INVALID,
			      "key %d %s: another digest is invalid", k, hs[h].name);
		}
	}
	EVP_PKEY_free(keys[0]);
	EVP_PKEY_free(keys[1]);
	imasig_keyset_free(ks);
}

/* One key set verified from several threads at once, as the verifier's pool threads do. */
struct shared {
	const struct imasig_keyset *ks;
	int bad;
};

static void *verify_many(void *arg)
{
	struct shared *sh = arg;
	struct bytes s1 = hex(KL_DD_SIG), d1 = hex(KL_DD_SHA256);
	struct bytes s2 = hex(KL_ZMORE_SIG), d2 = hex(KL_ZMORE_SHA256);
	struct imasig sig;
	const char *why;

	for (int i = 0; i < 100; i++) {
		if (imasig_check(sh->ks, s1.b, s1.n, IMA_DIGEST_IMA, TPM2_ALG_SHA256, d1.b, d1.n,
				 &sig, &why) !=
			    IMASIG_VALID ||
		    imasig_check(sh->ks, s2.b, s2.n, IMA_DIGEST_IMA, TPM2_ALG_SHA256, d2.b, d2.n,
				 &sig, &why) !=
			    IMASIG_VALID)
			__atomic_add_fetch(&sh->bad, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_threads(void)
{
	struct imasig_keyset *ks = imasig_keyset_new();
	struct bytes ec = b64(kl_ec_b64);
	struct shared sh = {.ks = ks};
	pthread_t t[4];
	const char *why;

	CHECK(add_text(ks, kl_rsa_pem, NULL) == 0 &&
		      imasig_keyset_add(ks, ec.b, ec.n, NULL, NULL, &why) == 0,
	      "keys added");
	for (int i = 0; i < 4; i++)
		CHECK(pthread_create(&t[i], NULL, verify_many, &sh) == 0, "thread %d", i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK(sh.bad == 0, "%d verifications failed across 4 threads", sh.bad);
	imasig_keyset_free(ks);
}

static void test_names(void)
{
	CHECK(strcmp(imasig_status_name(IMASIG_VALID), "valid") == 0, "valid");
	CHECK(strcmp(imasig_status_name(IMASIG_UNKNOWN_KEY), "unknown_key") == 0, "unknown_key");
	CHECK(strcmp(imasig_status_name(IMASIG_INVALID), "invalid") == 0, "invalid");
	CHECK(strcmp(imasig_status_name(IMASIG_MALFORMED), "malformed") == 0, "malformed");
	CHECK(strcmp(imasig_status_name(IMASIG_UNSUPPORTED), "unsupported") == 0, "unsupported");
}

/*
 * fs-verity (version 3) signatures as evmctl sign_hash --veritysig makes them: the v2 signature
 * of H(u8 6 || u8 hash_algo || verity digest), its header then type 6, version 3. Only a
 * verity: digest is checked with one, and only an IMA digest with a v2 signature.
 */
static void test_verity(void)
{
	static const struct { const char *name; uint16_t alg; size_t len; uint8_t kalg; } hs[] = {
		{"sha256", TPM2_ALG_SHA256, 32, 4},
		{"sha512", TPM2_ALG_SHA512, 64, 6},
	};
	EVP_PKEY *key = EVP_RSA_gen(2048), *other = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	struct imasig_keyset *ks = imasig_keyset_new();
	unsigned char *der = NULL;
	int n = key ? i2d_PUBKEY(key, &der) : -1;
	const char *why = NULL;

	CHECK(n > 0 && imasig_keyset_add(ks, der, (size_t)n, NULL, NULL, &why) == 0, "key added");
	OPENSSL_free(der);
	for (size_t h = 0; h < sizeof(hs) / sizeof(hs[0]); h++) {
		const EVP_MD *md = EVP_get_digestbyname(hs[h].name);
		uint8_t field[9 + 1024], v2[9 + 1024], digest[64], file_id[2 + 64], fid[64];
		size_t flen = 0, v2len = 0;
		unsigned fidlen = 0;
		struct imasig sig;

		for (size_t i = 0; i < hs[h].len; i++)
			digest[i] = (uint8_t)(i * 5 + h);
		file_id[0] = 6;
		file_id[1] = hs[h].kalg;
		memcpy(file_id + 2, digest, hs[h].len);
		CHECK(EVP_Digest(file_id, 2 + hs[h].len, fid, &fidlen, md, NULL) == 1, "file id hash");
		CHECK(softtpm_ima_sign(key, hs[h].name, fid, fidlen, field, sizeof(field), &flen) == 0,
		      "%s: signed", hs[h].name);
		field[0] = 6;
		field[1] = 3;
		CHECK(imasig_check(ks, field, flen, IMA_DIGEST_VERITY, hs[h].alg, digest, hs[h].len,
				   &sig, &why) == IMASIG_VALID,
		      "%s: a v3 signature over the verity digest verifies", hs[h].name);
		CHECK(imasig_check(ks, field, flen, IMA_DIGEST_IMA, hs[h].alg, digest, hs[h].len,
				   &sig, &why) == IMASIG_UNSUPPORTED &&
			      why == imasig_kind_mismatch(),
		      "%s: the same over an IMA digest: not what it signs", hs[h].name);
		CHECK(imasig_check(ks, field, flen, IMA_DIGEST_OTHER, hs[h].alg, digest, hs[h].len,
				   &sig, &why) == IMASIG_UNSUPPORTED,
		      "%s: over a digest of an unknown type", hs[h].name);
		digest[1] ^= 0x40;
		CHECK(imasig_check(ks, field, flen, IMA_DIGEST_VERITY, hs[h].alg, digest, hs[h].len,
				   &sig, &why) == IMASIG_INVALID,
		      "%s: another verity digest is invalid", hs[h].name);
		digest[1] ^= 0x40;
		/* The file id hash itself signed as a v2 digest is not the v3 signature. */
		CHECK(imasig_check(ks, field, flen, IMA_DIGEST_VERITY, hs[h].alg, fid, fidlen, &sig,
				   &why) == IMASIG_INVALID,
		      "%s: the signed hash given as the digest is invalid", hs[h].name);
		/* A v2 signature of the verity digest: a v2 signs a file hash, not a verity digest. */
		CHECK(softtpm_ima_sign(key, hs[h].name, digest, hs[h].len, v2, sizeof(v2), &v2len) ==
			      0,
		      "%s: v2 signed", hs[h].name);
		CHECK(imasig_check(ks, v2, v2len, IMA_DIGEST_VERITY, hs[h].alg, digest, hs[h].len, &sig,
				   &why) == IMASIG_UNSUPPORTED,
		      "%s: a v2 signature over a verity digest is not checked", hs[h].name);
		/* Another key under the same key id: invalid, never valid. */
		{
			struct imasig_keyset *ks2 = imasig_keyset_new();
			uint32_t id = sig.keyid;

			der = NULL;
			n = other ? i2d_PUBKEY(other, &der) : -1;
			CHECK(n > 0 && imasig_keyset_add(ks2, der, (size_t)n, &id, NULL, &why) == 0,
			      "other key filed under the signature's id");
			OPENSSL_free(der);
			CHECK(imasig_check(ks2, field, flen, IMA_DIGEST_VERITY, hs[h].alg, digest,
					   hs[h].len, &sig, &why) == IMASIG_INVALID,
			      "%s: the wrong key is invalid", hs[h].name);
			imasig_keyset_free(ks2);
		}
	}
	EVP_PKEY_free(key);
	EVP_PKEY_free(other);
	imasig_keyset_free(ks);
}

int main(void)
{
	CASE(test_header);
	CASE(test_malformed);
	CASE(test_keyids);
	CASE(test_verify_vectors);
	CASE(test_keyid_override);
	CASE(test_key_forms);
	CASE(test_roundtrip);
	CASE(test_verity);
	CASE(test_threads);
	CASE(test_names);
	return check_finish();
}
