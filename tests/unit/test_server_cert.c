/*
 * verifier/http/server_cert.h: a pair is swapped in only whole (a key that is not the certificate's,
 * a file that is no certificate, nothing at all: refused, the current pair unchanged); each
 * handshake gets its own copy for GnuTLS to free; a chain is sent whole, the server's certificate
 * first; after server_cert_clear() a handshake gets nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "verifier/http/server_cert.h"
#include "tests/unit/check.h"

struct pem_pair {
	char *cert, *key;
	X509 *x;
	EVP_PKEY *k;
};

static char *bio_string(BIO *b)
{
	char *data, *s;
	long n = BIO_get_mem_data(b, &data);

	s = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (s) {
		memcpy(s, data, (size_t)n);
		s[n] = '\0';
	}
	return s;
}

/* A P-256 certificate for cn, signed by issuer (self-signed when NULL). */
static int make(struct pem_pair *out, const char *cn, const struct pem_pair *issuer)
{
	BIO *bc = BIO_new(BIO_s_mem()), *bk = BIO_new(BIO_s_mem());
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok = 0;

	memset(out, 0, sizeof(*out));
	out->k = EVP_EC_gen("P-256");
	out->x = X509_new();
	if (!bc || !bk || !out->k || !out->x)
		goto done;
	X509_set_version(out->x, 2); /* v3: GnuTLS refuses extensions in a v1 certificate */
	ASN1_INTEGER_set(X509_get_serialNumber(out->x), issuer ? 2 : 1);
	X509_gmtime_adj(X509_getm_notBefore(out->x), -60);
	X509_gmtime_adj(X509_getm_notAfter(out->x), 3600);
	X509_set_pubkey(out->x, out->k);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(out->x), "CN", MBSTRING_ASC,
				   (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(out->x, X509_get_subject_name(issuer ? issuer->x : out->x));
	X509V3_set_ctx(&ctx, issuer ? issuer->x : out->x, out->x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_basic_constraints,
				  issuer ? "critical,CA:FALSE" : "critical,CA:TRUE");
	if (!ext || !X509_add_ext(out->x, ext, -1)) {
		X509_EXTENSION_free(ext);
		goto done;
	}
	X509_EXTENSION_free(ext);
	if (!X509_sign(out->x, issuer ? issuer->k : out->k, EVP_sha256()) ||
	    !PEM_write_bio_X509(bc, out->x) ||
	    !PEM_write_bio_PrivateKey(bk, out->k, NULL, NULL, 0, NULL, NULL))
		goto done;
	out->cert = bio_string(bc);
	out->key = bio_string(bk);
	ok = out->cert && out->key;
done:
	BIO_free(bc);
	BIO_free(bk);
	return ok ? 0 : -1;
}

static void pair_release(struct pem_pair *p)
{
	free(p->cert);
	free(p->key);
	X509_free(p->x);
	EVP_PKEY_free(p->k);
}

/* "AB:CD:..." of x, as openssl x509 -fingerprint -sha256 prints it. */
static void fingerprint(X509 *x, char out[96])
{
	unsigned char md[32];
	unsigned n = sizeof(md);

	out[0] = '\0';
	if (!X509_digest(x, EVP_sha256(), md, &n) || n != 32)
		return;
	for (unsigned i = 0; i < n; i++)
		snprintf(out + 3 * i, 96 - 3 * i, i + 1 < n ? "%02X:" : "%02X", md[i]);
}

/* What a handshake would get: the number of certificates (-1: refused), the first's DER. */
static int handshake(unsigned char **der0, size_t *len0)
{
	gnutls_pcert_st *certs = NULL;
	gnutls_ocsp_data_st *ocsp = NULL;
	gnutls_privkey_t key = NULL;
	unsigned n = 0, nocsp = 0, flags = 0;
	int ret = server_cert_retrieve(NULL, NULL, &certs, &n, &ocsp, &nocsp, &key, &flags);

	if (ret < 0)
		return -1;
	CHECK(flags == GNUTLS_CERT_RETR_DEINIT_ALL && key && !ocsp && !nocsp,
	      "the handshake's copy is GnuTLS's to free");
	if (der0 && n) {
		*der0 = malloc(certs[0].cert.size);
		if (*der0)
			memcpy(*der0, certs[0].cert.data, certs[0].cert.size);
		*len0 = certs[0].cert.size;
	}
	/* What GnuTLS does with a DEINIT_ALL answer when the session ends. */
	for (unsigned i = 0; i < n; i++)
		gnutls_pcert_deinit(&certs[i]);
	gnutls_free(certs);
	gnutls_privkey_deinit(key);
	return (int)n;
}

/* True if the first certificate a handshake gets is x. */
static bool serves(X509 *x)
{
	unsigned char *der = NULL, *want = NULL;
	size_t len = 0;
	int wlen = i2d_X509(x, &want);
	bool same = handshake(&der, &len) > 0 && der && wlen > 0 && (size_t)wlen == len &&
		    !memcmp(der, want, len);

	free(der);
	OPENSSL_free(want);
	return same;
}

/*
 * The certificates every case uses, made once in main(). server_cert.c keeps one pair for the
 * process, so the cases run in order: each starts from what the one before it loaded.
 */
static struct pem_pair ca_pair, one_pair, two_pair;

static void test_nothing_loaded_a_handshake_gets_nothing(void)
{
	char fp[96];

	CHECK(handshake(NULL, NULL) < 0, "refused");
	server_cert_fingerprint(fp);
	CHECK(fp[0] == '\0', "no fingerprint");
}

static void test_a_pair_served_with_its_fingerprint(void)
{
	char why[256], fp[96], want[96];

	CHECK(server_cert_set(one_pair.cert, one_pair.key, why, sizeof(why)) == 0, "loaded: %s", why);
	CHECK(serves(one_pair.x), "each handshake gets certificate one");
	CHECK(serves(one_pair.x), "and the next one too (its own copy)");
	fingerprint(one_pair.x, want);
	server_cert_fingerprint(fp);
	CHECK(!strcmp(fp, want), "fingerprint %s, want %s", fp, want);
}

static void test_refused_pairs_leave_the_current_one_serving(void)
{
	char why[256], fp[96], want[96];

	CHECK(server_cert_set(two_pair.cert, one_pair.key, why, sizeof(why)) == -EINVAL &&
	      strstr(why, "not the certificate's"), "another certificate's key: %s", why);
	CHECK(server_cert_set("not a certificate\n", one_pair.key, why, sizeof(why)) == -EINVAL &&
	      strstr(why, "not a PEM certificate"), "no certificate: %s", why);
	CHECK(server_cert_set(two_pair.cert, "not a key\n", why, sizeof(why)) == -EINVAL &&
	      strstr(why, "not an unencrypted PEM private key"), "no key: %s", why);
	CHECK(server_cert_set(NULL, NULL, why, sizeof(why)) == -EINVAL, "nothing");
	CHECK(serves(one_pair.x), "certificate one still served");
	fingerprint(one_pair.x, want);
	server_cert_fingerprint(fp);
	CHECK(!strcmp(fp, want), "and still its fingerprint");
}

static void test_a_new_pair_replaces_it(void)
{
	char why[256];

	CHECK(server_cert_set(two_pair.cert, two_pair.key, why, sizeof(why)) == 0, "loaded: %s", why);
	CHECK(serves(two_pair.x), "certificate two served");
}

static void test_a_chain_the_server_s_certificate_first_then_its_ca(void)
{
	char why[256];
	char *chain = NULL;

	if (asprintf(&chain, "%s%s", one_pair.cert, ca_pair.cert) > 0) {
		CHECK(server_cert_set(chain, one_pair.key, why, sizeof(why)) == 0, "loaded: %s", why);
		CHECK(handshake(NULL, NULL) == 2, "both certificates sent");
		CHECK(serves(one_pair.x), "the server's own first");
		free(chain);
	} else {
		CHECK(0, "asprintf");
	}
	/* The first certificate is the server's (GnuTLS sorts only the issuers after it): a file
	 * that starts with the CA pairs the key with the CA, and is refused. */
	if (asprintf(&chain, "%s%s", ca_pair.cert, one_pair.cert) > 0) {
		CHECK(server_cert_set(chain, one_pair.key, why, sizeof(why)) == -EINVAL,
		      "the CA first: refused (%s)", why);
		CHECK(serves(one_pair.x), "the chain loaded before still served");
		free(chain);
	} else {
		CHECK(0, "asprintf");
	}
}

static void test_cleared_a_handshake_gets_nothing(void)
{
	server_cert_clear();
	CHECK(handshake(NULL, NULL) < 0, "refused");
}

int main(void)
{
	if (make(&ca_pair, "test CA", NULL) || make(&one_pair, "one", &ca_pair) ||
	    make(&two_pair, "two", &ca_pair)) {
		CHECK(0, "test certificates");
		return check_finish();
	}

	CASE(test_nothing_loaded_a_handshake_gets_nothing);
	CASE(test_a_pair_served_with_its_fingerprint);
	CASE(test_refused_pairs_leave_the_current_one_serving);
	CASE(test_a_new_pair_replaces_it);
	CASE(test_a_chain_the_server_s_certificate_first_then_its_ca);
	CASE(test_cleared_a_handshake_gets_nothing);
	pair_release(&ca_pair);
	pair_release(&one_pair);
	pair_release(&two_pair);
	return check_finish();
}
