/*
 * softtpm, the software TPM that tests and the load generator use, must produce what the
 * verifier's real checks accept: EK and AK publics pass tpmkey's template checks, a
 * credential made by proto/credential activates only for the right AK name, EK certificates
 * chain to the test CA, and quotes verify with quote_verify.
 */
#include "tests/lib/softtpm.h"
#include "tests/unit/check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/credential.h"
#include "proto/imalog.h"
#include "proto/quote.h"
#include "proto/tpmkey.h"

/* pub is tmpl with a key in its unique: what a TPM returns for a key made from tmpl. */
static bool from_template(const TPMT_PUBLIC *pub, const TPM2B_PUBLIC *tmpl)
{
	TPMT_PUBLIC bare = *pub;
	uint8_t a[sizeof(TPM2B_PUBLIC)], b[sizeof(TPM2B_PUBLIC)];
	size_t al = 0, bl = 0;

	bare.unique = tmpl->publicArea.unique;
	return tpmkey_marshal_public(&bare, a, sizeof(a), &al) == 0 &&
	       tpmkey_marshal_public(&tmpl->publicArea, b, sizeof(b), &bl) == 0 && al == bl &&
	       memcmp(a, b, al) == 0;
}

/*
 * The keys every case uses, made once in main(), and what the first cases derive from them: the
 * EK's public area, the AK's name and the secret a credential carries. The cases run in order.
 */
static EVP_PKEY *ek_rsa, *ak_rsa, *ak_p256;
static TPMT_PUBLIC ek_public;
static uint8_t ak_name[LIMIT_TPM_NAME], secret_bytes[32];
static size_t ak_name_len;

static void test_ek_and_ak_publics(void)
{
	uint8_t buf[LIMIT_TPM2B_PUBLIC];
	size_t len = 0;
	TPMT_PUBLIC ak_pub;

	CHECK(ek_rsa && ak_rsa && ak_p256, "keys");
	CHECK(softtpm_ek_public(ek_rsa, buf, sizeof(buf), &len) == 0 &&
	      tpmkey_parse_public(buf, len, &ek_public) == 0, "EK public marshals and parses");
	CHECK(tpmkey_check_ek(&ek_public) == TPMKEY_OK, "EK public is a default-template EK");
	CHECK(softtpm_ak_public(ak_rsa, 0, buf, sizeof(buf), &len) == 0 &&
	      tpmkey_parse_public(buf, len, &ak_pub) == 0, "AK public marshals and parses");
	CHECK(tpmkey_check_ak(&ak_pub) == TPMKEY_OK, "AK public has the AK attributes");
	CHECK(tpmkey_name(&ak_pub, ak_name, &ak_name_len) == 0, "AK name");
	{
		TPM2B_PUBLIC tmpl;
		TPMT_PUBLIC ec_pub;

		tpmkey_ek_template(&tmpl, TPMKEY_RSA2048);
		CHECK(from_template(&ek_public, &tmpl), "EK public is the EK template with a key");
		tpmkey_ak_template(&tmpl, TPMKEY_RSA2048);
		CHECK(from_template(&ak_pub, &tmpl), "RSA AK public is the AK template with a key");
		CHECK(softtpm_ak_public(ak_p256, 0, buf, sizeof(buf), &len) == 0 &&
			      tpmkey_parse_public(buf, len, &ec_pub) == 0 &&
			      tpmkey_check_ak(&ec_pub) == TPMKEY_OK,
		      "P-256 AK public marshals, parses and passes the AK check");
		tpmkey_ak_template(&tmpl, TPMKEY_ECC_P256);
		CHECK(from_template(&ec_pub, &tmpl), "P-256 AK public is the AK template with a key");
	}
	CHECK(softtpm_ak_public(ak_rsa, TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_USERWITHAUTH, buf,
				sizeof(buf), &len) == 0 &&
	      tpmkey_parse_public(buf, len, &ak_pub) == 0 && tpmkey_check_ak(&ak_pub) != TPMKEY_OK,
	      "an AK without restricted|fixedTPM is refused");
}

static void test_credential(void)
{
	uint8_t got[64];
	size_t got_len = 0;

	/* MakeCredential (verifier side) -> ActivateCredential (software TPM side). */
	struct credential cred;
	for (size_t i = 0; i < sizeof(secret_bytes); i++)
		secret_bytes[i] = (uint8_t)(i * 9 + 1);
	CHECK(credential_make(&ek_public, ak_name, ak_name_len, secret_bytes, sizeof(secret_bytes), &cred) == 0, "credential made");
	CHECK(softtpm_activate_credential(ek_rsa, ak_name, ak_name_len, cred.blob, cred.blob_len,
					  cred.encrypted_secret, cred.encrypted_secret_len, got,
					  &got_len) == 0 &&
	      got_len == sizeof(secret_bytes) && memcmp(got, secret_bytes, sizeof(secret_bytes)) == 0,
	      "activation recovers the secret");
	ak_name[5] ^= 1;
	CHECK(softtpm_activate_credential(ek_rsa, ak_name, ak_name_len, cred.blob, cred.blob_len,
					  cred.encrypted_secret, cred.encrypted_secret_len, got,
					  &got_len) == -EBADMSG, "another AK name cannot activate");
	ak_name[5] ^= 1;
	EVP_PKEY *other_ek = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	CHECK(softtpm_activate_credential(other_ek, ak_name, ak_name_len, cred.blob, cred.blob_len,
					  cred.encrypted_secret, cred.encrypted_secret_len, got,
					  &got_len) == -EBADMSG, "another EK cannot activate");
	CHECK(softtpm_activate_credential(ek_rsa, ak_name, ak_name_len, cred.blob, cred.blob_len - 1,
					  cred.encrypted_secret, cred.encrypted_secret_len, got,
					  &got_len) == -EINVAL, "truncated blob refused");
	EVP_PKEY_free(other_ek);
}

static void test_p_256_ek_credential(void)
{
	uint8_t buf[LIMIT_TPM2B_PUBLIC], got[64];
	size_t len = 0, got_len = 0;

	{
		EVP_PKEY *ek_ec = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		EVP_PKEY *other_ec = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		TPM2B_PUBLIC tmpl;
		TPMT_PUBLIC ec_ek;
		struct credential c2;

		CHECK(ek_ec && other_ec && softtpm_ek_public(ek_ec, buf, sizeof(buf), &len) == 0 &&
			      tpmkey_parse_public(buf, len, &ec_ek) == 0 &&
			      tpmkey_check_ek(&ec_ek) == TPMKEY_OK,
		      "a P-256 EK public marshals, parses and passes the EK check");
		tpmkey_ek_template(&tmpl, TPMKEY_ECC_P256);
		CHECK(from_template(&ec_ek, &tmpl), "it is the L-2 EK template with a key");
		CHECK(credential_make(&ec_ek, ak_name, ak_name_len, secret_bytes, sizeof(secret_bytes), &c2) == 0,
		      "credential made for it (ECDH + KDFe)");
		CHECK(softtpm_activate_credential(ek_ec, ak_name, ak_name_len, c2.blob, c2.blob_len,
						  c2.encrypted_secret, c2.encrypted_secret_len, got,
						  &got_len) == 0 &&
			      got_len == sizeof(secret_bytes) && memcmp(got, secret_bytes, sizeof(secret_bytes)) == 0,
		      "activation with the P-256 EK recovers the secret");
		CHECK(softtpm_activate_credential(other_ec, ak_name, ak_name_len, c2.blob, c2.blob_len,
						  c2.encrypted_secret, c2.encrypted_secret_len, got,
						  &got_len) == -EBADMSG,
		      "another P-256 EK cannot activate");
		CHECK(softtpm_activate_credential(ek_ec, ak_name, ak_name_len, c2.blob, c2.blob_len,
						  c2.encrypted_secret, c2.encrypted_secret_len - 1,
						  got, &got_len) == -EINVAL,
		      "a truncated point refused");
		EVP_PKEY_free(ek_ec);
		EVP_PKEY_free(other_ec);
	}
}

static void test_ek_certificate(void)
{
	EVP_PKEY *ca_key = NULL;
	X509 *ca = NULL;

	/* EK certificate chains to the CA and carries the EK. */
	uint8_t *der = NULL;
	size_t der_len = 0;
	CHECK(softtpm_ca_new("test EK CA", &ca_key, &ca) == 0, "CA made");
	CHECK(softtpm_ek_cert(ek_rsa, ca_key, ca, 42, &der, &der_len) == 0, "EK cert issued");
	const unsigned char *p = der;
	X509 *cert = d2i_X509(NULL, &p, (long)der_len);
	CHECK(cert && X509_verify(cert, ca_key) == 1, "EK cert signed by the CA");
	CHECK(cert && tpmkey_matches_evp(&ek_public, X509_get0_pubkey(cert)), "EK cert holds the EK");
	X509_free(cert);
	OPENSSL_free(der);
	EVP_PKEY_free(ca_key);
	X509_free(ca);
}

static void test_quotes(void)
{
	/* Quotes by RSA and EC AKs verify with the real check. */
	struct pcr_set pcrs = {0};
	struct pcr_bank *b = pcr_set_add_bank(&pcrs, TPM2_ALG_SHA256);
	b->mask = 1u << 10;
	memset(b->value[10], 0x5a, 32);
	struct softtpm_clock clk = {.clock = 1000, .reset_count = 3, .safe = 1};
	uint8_t nonce[32] = {7}, attest[LIMIT_ATTEST], sig[LIMIT_SIGNATURE];
	size_t alen = 0, slen = 0;
	struct quote_info qi;
	EVP_PKEY *aks[] = {ak_rsa, ak_p256};
	for (int i = 0; i < 2; i++) {
		CHECK(softtpm_quote(aks[i], nonce, sizeof(nonce), &pcrs, &clk, attest, sizeof(attest),
				    &alen, sig, sizeof(sig), &slen) == 0, "quote %d made", i);
		CHECK(quote_verify(aks[i], attest, alen, sig, slen, nonce, sizeof(nonce), &pcrs, &pcrs,
				   &qi) == QUOTE_OK && qi.reset_count == 3 && qi.clock == 1000,
		      "quote %d verifies, clock info carried", i);
	}
}

static void test_ima_ng_record(void)
{
	/* An ima-ng record: layout and template hash computed here, parsed by imalog. */
	uint8_t rec[512], d32[32], th[20], data[128];
	memset(d32, 0xab, sizeof(d32));
	ssize_t n = softtpm_ima_ng_entry(rec, sizeof(rec), "sha256", d32, 32, "/bin/x", 6, false);
	size_t dl = 0;
	uint32_t v = 8 + 32;
	memcpy(data + dl, &v, 4);
	dl += 4;
	memcpy(data + dl, "sha256:", 8); /* the NUL of the literal is d-ng's NUL */
	dl += 8;
	memcpy(data + dl, d32, 32);
	dl += 32;
	v = 7;
	memcpy(data + dl, &v, 4);
	dl += 4;
	memcpy(data + dl, "/bin/x", 7);
	dl += 7;
	SHA1(data, dl, th);
	CHECK(n == (ssize_t)softtpm_ima_ng_size("sha256", 32, 6) && n == (ssize_t)(38 + dl),
	      "record length %zd", n);
	CHECK(n > 0 && memcmp(rec + 4, th, 20) == 0 && memcmp(rec + 28, "ima-ng", 6) == 0 &&
	      memcmp(rec + 38, data, dl) == 0, "record bytes and template hash");
	struct imalog *log = imalog_new();
	struct ima_entry e;
	imalog_reset(log, rec, (size_t)n, 0);
	CHECK(imalog_next(log, &e, NULL) == 1 && e.path_len == 6 && !e.violation &&
	      e.digest_len == 32, "record parses");
	imalog_free(log);
	CHECK(softtpm_ima_ng_entry(rec, 20, "sha256", d32, 32, "/bin/x", 6, false) == -ENOSPC,
	      "no room: -ENOSPC");
	CHECK(softtpm_ima_ng_entry(rec, sizeof(rec), "sha256", d32, 32, "/b\0x", 4, false) == -EINVAL,
	      "NUL in path: -EINVAL");
}

int main(void)
{
	ek_rsa = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	ak_rsa = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	ak_p256 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	CASE(test_ek_and_ak_publics);
	CASE(test_credential);
	CASE(test_p_256_ek_credential);
	CASE(test_ek_certificate);
	CASE(test_quotes);
	CASE(test_ima_ng_record);
	EVP_PKEY_free(ek_rsa);
	EVP_PKEY_free(ak_rsa);
	EVP_PKEY_free(ak_p256);
	return check_finish();
}
