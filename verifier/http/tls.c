#include "verifier/http/tls.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "common/file.h"
#include "common/log.h"
#include "proto/dynbuf.h"
#include "verifier/http/server.h"

#define TLS_PEM_MAX (64u * 1024u)         /* a certificate chain or key file */
#define CA_DAYS 3650
#define SERVER_DAYS 825
#define RENEW_BEFORE_SECONDS (30 * 86400)

void tls_material_release(struct tls_material *m)
{
	if (!m)
		return;
	if (m->key_pem) {
		OPENSSL_cleanse(m->key_pem, strlen(m->key_pem));
		free(m->key_pem);
	}
	free(m->cert_pem);
	free(m->ca_path);
	free(m->cert_path);
	free(m->key_path);
	memset(m, 0, sizeof(*m));
}

static char *path_join(const char *dir, const char *name)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return NULL;
	return p;
}

/*
 * Reads a whole (small) file as a NUL-terminated string: `name` from the directory open as dfd
 * (AT_FDCWD: a path), `shown` in messages.
 */
static int read_text(int dfd, const char *name, const char *shown, char **out)
{
	struct dynbuf b;
	int ret;

	*out = NULL;
	dynbuf_init(&b, TLS_PEM_MAX);
	ret = file_read_at(dfd, name, &b);
	if (ret == -EFBIG)
		log_error("tls: \"%s\" is larger than %u bytes", shown, TLS_PEM_MAX);
	if (ret)
		return ret;
	*out = dynbuf_take(&b, NULL);
	return *out ? 0 : -ENOMEM;
}

/* Writes `name` in the directory open as dfd atomically (common/file.h) with the given mode. */
static int write_file(int dfd, const char *name, const char *shown, const char *data, size_t len,
		      mode_t mode)
{
	int ret = file_write_atomic_at(dfd, name, data, len, mode);

	if (ret)
		log_error("tls: cannot write \"%s\": %s", shown, strerror(-ret));
	return ret;
}

static char *bio_to_string(BIO *b)
{
	char *data;
	long n = BIO_get_mem_data(b, &data);
	char *s;

	if (n < 0)
		return NULL;
	s = malloc((size_t)n + 1);
	if (!s)
		return NULL;
	memcpy(s, data, (size_t)n);
	s[n] = '\0';
	return s;
}

static char *cert_to_pem(X509 *x)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *s = NULL;

	if (b && PEM_write_bio_X509(b, x))
		s = bio_to_string(b);
	BIO_free(b);
	return s;
}

static char *key_to_pem(EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_secmem());
	char *s = NULL;

	if (!b)
		b = BIO_new(BIO_s_mem());
	if (b && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL))
		s = bio_to_string(b);
	BIO_free(b);
	return s;
}

static X509 *cert_from_pem(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;

	BIO_free(b);
	return x;
}

static EVP_PKEY *key_from_pem(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;

	BIO_free(b);
	return k;
}

static bool is_ip(const char *s)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ext)
		return -EINVAL;
	ok = X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : -ENOMEM;
}

/* A certificate for key `key`, signed by issuer_key (self-signed when issuer is NULL). */
static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key,
		       int days, const char *san)
{
	X509 *x = X509_new();
	X509_NAME *name;
	uint8_t serial[16];
	BIGNUM *bn = NULL;
	bool ok = false;

	if (!x)
		return NULL;
	if (RAND_bytes(serial, sizeof(serial)) != 1)
		goto out;
	serial[0] &= 0x7f; /* positive */
	bn = BN_bin2bn(serial, sizeof(serial), NULL);
	if (!bn || !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)))
		goto out;
	if (!X509_set_version(x, 2) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), (long)days * 86400) ||
	    !X509_set_pubkey(x, key))
		goto out;
	name = X509_get_subject_name(x);
	if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
					(const unsigned char *)"attest verifier", -1, -1, 0) ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1,
					-1, 0))
		goto out;
	if (!X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name))
		goto out;
	if (!issuer) {
		if (add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
		    add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") ||
		    add_ext(x, x, NID_subject_key_identifier, "hash"))
			goto out;
	} else {
		if (add_ext(x, issuer, NID_basic_constraints, "critical,CA:FALSE") ||
		    add_ext(x, issuer, NID_key_usage, "critical,digitalSignature") ||
		    add_ext(x, issuer, NID_ext_key_usage, "serverAuth") ||
		    add_ext(x, issuer, NID_subject_key_identifier, "hash") ||
		    add_ext(x, issuer, NID_authority_key_identifier, "keyid") ||
		    add_ext(x, issuer, NID_subject_alt_name, san))
			goto out;
	}
	if (!X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256()))
		goto out;
	ok = true;
out:
	BN_free(bn);
	if (!ok) {
		log_openssl("tls: certificate creation");
		X509_free(x);
		return NULL;
	}
	return x;
}

/* "IP:127.0.0.1,DNS:localhost,..." for the server certificate. */
static char *san_string(const char *const *sans, size_t nsans)
{
	size_t cap = 64;
	char *s, *p;

	for (size_t i = 0; i < nsans; i++)
		cap += strlen(sans[i]) + 8;
	s = malloc(cap);
	if (!s)
		return NULL;
	p = s + snprintf(s, cap, "IP:127.0.0.1,DNS:localhost");
	for (size_t i = 0; i < nsans; i++) {
		/* The config syntax would split a name at ',': refuse instead of mis-issuing. */
		if (strchr(sans[i], ',') || !sans[i][0]) {
			log_error("tls: bad --tls-san \"%s\"", sans[i]);
			free(s);
			return NULL;
		}
		p += snprintf(p, cap - (size_t)(p - s), ",%s:%s", is_ip(sans[i]) ? "IP" : "DNS", sans[i]);
	}
	return s;
}

/* True if x is valid for a while yet and names every requested SAN. */
static bool cert_covers(X509 *x, const char *const *sans, size_t nsans)
{
	time_t soon = time(NULL) + RENEW_BEFORE_SECONDS;

	if (X509_cmp_time(X509_get0_notAfter(x), &soon) <= 0)
		return false;
	if (X509_check_ip_asc(x, "127.0.0.1", 0) != 1 || X509_check_host(x, "localhost", 0, 0, NULL) != 1)
		return false;
	for (size_t i = 0; i < nsans; i++) {
		int r = is_ip(sans[i]) ? X509_check_ip_asc(x, sans[i], 0)
				       : X509_check_host(x, sans[i], 0, 0, NULL);
		if (r != 1)
			return false;
	}
	return true;
}

static int load_given(const char *cert_file, const char *key_file, struct tls_material *out)
{
	EVP_PKEY *k = NULL;
	X509 *x = NULL;
	int ret;

	if ((ret = read_text(AT_FDCWD, cert_file, cert_file, &out->cert_pem))) {
		log_error("tls: cannot read certificate \"%s\": %s", cert_file, strerror(-ret));
		return ret;
	}
	if ((ret = read_text(AT_FDCWD, key_file, key_file, &out->key_pem))) {
		log_error("tls: cannot read key \"%s\": %s", key_file, strerror(-ret));
		return ret;
	}
	/* Check here so that a wrong file fails at start with a clear message. */
	x = cert_from_pem(out->cert_pem);
	k = key_from_pem(out->key_pem);
	if (!x || !k || X509_check_private_key(x, k) != 1) {
		log_openssl("tls: certificate check");
		log_error("tls: \"%s\" and \"%s\" are not a PEM certificate and its key", cert_file,
			  key_file);
		ret = -EINVAL;
	}
	X509_free(x);
	EVP_PKEY_free(k);
	out->cert_path = strdup(cert_file);
	out->key_path = strdup(key_file);
	if (!ret && (!out->cert_path || !out->key_path))
		ret = -ENOMEM;
	return ret;
}

/* In the state directory open as dfd (state_dir names it in messages and out's paths). */
static int generate(int dfd, const char *state_dir, const char *const *sans, size_t nsans,
		    struct tls_material *out)
{
	char *ca_key_path = path_join(state_dir, "ca-key.pem");
	char *ca_pem = NULL, *ca_key_pem = NULL, *san = NULL;
	EVP_PKEY *ca_key = NULL, *key = NULL;
	X509 *ca = NULL, *srv = NULL;
	int ret = 0;

	out->ca_path = path_join(state_dir, "ca.pem");
	out->cert_path = path_join(state_dir, "server.pem");
	out->key_path = path_join(state_dir, "server-key.pem");
	if (!ca_key_path || !out->ca_path || !out->cert_path || !out->key_path) {
		ret = -ENOMEM;
		goto out;
	}

	/* Reuse everything if it is there and still fits. */
	if (read_text(dfd, "server.pem", out->cert_path, &out->cert_pem) == 0 &&
	    read_text(dfd, "server-key.pem", out->key_path, &out->key_pem) == 0 &&
	    faccessat(dfd, "ca.pem", R_OK, 0) == 0) {
		srv = cert_from_pem(out->cert_pem);
		key = key_from_pem(out->key_pem);
		if (srv && key && X509_check_private_key(srv, key) == 1 &&
		    cert_covers(srv, sans, nsans))
			goto out;
		log_info("tls: reissuing \"%s\" (names or validity changed)", out->cert_path);
	}
	X509_free(srv);
	EVP_PKEY_free(key);
	srv = NULL;
	key = NULL;
	free(out->cert_pem);
	out->cert_pem = NULL;
	if (out->key_pem) {
		OPENSSL_cleanse(out->key_pem, strlen(out->key_pem));
		free(out->key_pem);
		out->key_pem = NULL;
	}

	/* The CA: reuse it when present, so agents that trust ca.pem keep working. */
	if (read_text(dfd, "ca.pem", out->ca_path, &ca_pem) == 0 &&
	    read_text(dfd, "ca-key.pem", ca_key_path, &ca_key_pem) == 0) {
		ca = cert_from_pem(ca_pem);
		ca_key = key_from_pem(ca_key_pem);
		if (!ca || !ca_key || X509_check_private_key(ca, ca_key) != 1) {
			log_error("tls: \"%s\" and \"%s\" do not match; move them away to start over",
				  out->ca_path, ca_key_path);
			ret = -EINVAL;
			goto out;
		}
	} else {
		ca_key = EVP_EC_gen("P-256");
		if (!ca_key || !(ca = make_cert(ca_key, "attest verifier CA", NULL, NULL, CA_DAYS, NULL))) {
			log_openssl("tls: CA creation");
			ret = -EIO;
			goto out;
		}
		free(ca_pem);
		if (ca_key_pem) {
			OPENSSL_cleanse(ca_key_pem, strlen(ca_key_pem));
			free(ca_key_pem);
		}
		ca_pem = cert_to_pem(ca);
		ca_key_pem = key_to_pem(ca_key);
		if (!ca_pem || !ca_key_pem) {
			ret = -ENOMEM;
			goto out;
		}
		/* Key first: a ca.pem without its key would be unusable for reissuing. */
		if ((ret = write_file(dfd, "ca-key.pem", ca_key_path, ca_key_pem,
				      strlen(ca_key_pem), 0600)) ||
		    (ret = write_file(dfd, "ca.pem", out->ca_path, ca_pem, strlen(ca_pem), 0600)))
			goto out;
	}

	san = san_string(sans, nsans);
	if (!san) {
		ret = -EINVAL;
		goto out;
	}
	key = EVP_EC_gen("P-256");
	if (!key || !(srv = make_cert(key, "attest verifier", ca, ca_key, SERVER_DAYS, san))) {
		log_openssl("tls: server certificate creation");
		ret = -EIO;
		goto out;
	}
	out->cert_pem = cert_to_pem(srv);
	out->key_pem = key_to_pem(key);
	if (!out->cert_pem || !out->key_pem) {
		ret = -ENOMEM;
		goto out;
	}
	if ((ret = write_file(dfd, "server-key.pem", out->key_path, out->key_pem,
			      strlen(out->key_pem), 0600)) ||
	    (ret = write_file(dfd, "server.pem", out->cert_path, out->cert_pem,
			      strlen(out->cert_pem), 0600)))
		goto out;
	out->generated = 1;
out:
	X509_free(ca);
	X509_free(srv);
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(key);
	if (ca_key_pem) {
		OPENSSL_cleanse(ca_key_pem, strlen(ca_key_pem));
		free(ca_key_pem);
	}
	free(ca_pem);
	free(san);
	free(ca_key_path);
	return ret;
}

int tls_setup(int state_dfd, const char *state_dir, const char *cert_file, const char *key_file,
	      const char *const *sans, size_t nsans, struct tls_material *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	if (!!cert_file != !!key_file) {
		log_error("tls: --tls-cert and --tls-key go together");
		return -EINVAL;
	}
	ret = cert_file ? load_given(cert_file, key_file, out)
			: generate(state_dfd, state_dir, sans, nsans, out);
	if (ret)
		tls_material_release(out);
	return ret;
}

int tls_start(const struct tls_source *src, struct tls_material *out)
{
	int ret = tls_setup(src->state_dfd, src->state_dir, src->cert_file, src->key_file,
			    src->sans, src->nsans, out);

	if (ret)
		return ret;
	if (out->ca_path)
		log_info("tls: agents trust \"%s\"; server certificate \"%s\", key \"%s\"",
			 out->ca_path, out->cert_path, out->key_path);
	return 0;
}

void tls_reload(struct http_server *srv, const struct tls_source *src)
{
	struct tls_material m;

	if (tls_setup(src->state_dfd, src->state_dir, src->cert_file, src->key_file, src->sans,
		      src->nsans, &m) ||
	    http_server_set_cert(srv, m.cert_pem, m.key_pem))
		log_error("reload: keeping the TLS certificate loaded before");
	else
		log_info("reload: TLS certificate \"%s\", key \"%s\"", m.cert_path, m.key_path);
	tls_material_release(&m);
}
