#include "verifier/http/server_cert.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

/* Certificates in one chain: the server's and its intermediates (a root is not sent). */
#define CHAIN_MAX 8u

/* One pair, as DER: each handshake imports its own copy from these bytes. */
struct pair {
	gnutls_datum_t der[CHAIN_MAX];
	unsigned n;
	gnutls_datum_t key_der; /* PKCS #8, secret: wiped before it is freed */
	char fingerprint[96];
};

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct pair *current;

static void pair_free(struct pair *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < p->n; i++)
		gnutls_free(p->der[i].data);
	if (p->key_der.data) {
		gnutls_memset(p->key_der.data, 0, p->key_der.size);
		gnutls_free(p->key_der.data);
	}
	free(p);
}

static int fail(char *why, size_t cap, int ret, const char *what, int gerr)
{
	if (gerr)
		snprintf(why, cap, "%s: %s", what, gnutls_strerror(gerr));
	else
		snprintf(why, cap, "%s", what);
	return ret;
}

int server_cert_set(const char *cert_pem, const char *key_pem, char *why, size_t cap)
{
	gnutls_datum_t cpem = { (unsigned char *)(uintptr_t)cert_pem, 0 };
	gnutls_datum_t kpem = { (unsigned char *)(uintptr_t)key_pem, 0 };
	gnutls_x509_crt_t *crts = NULL;
	gnutls_x509_privkey_t key = NULL;
	unsigned char id1[64], id2[64], fp[32];
	size_t l1 = sizeof(id1), l2 = sizeof(id2), fpl = sizeof(fp);
	unsigned ncrts = 0;
	struct pair *p = NULL, *old;
	int ret, g;

	if (!cert_pem || !key_pem)
		return fail(why, cap, -EINVAL, "no certificate or no key", 0);
	cpem.size = (unsigned)strnlen(cert_pem, 1u << 20);
	kpem.size = (unsigned)strnlen(key_pem, 1u << 20);
	p = calloc(1, sizeof(*p));
	if (!p)
		return fail(why, cap, -ENOMEM, "out of memory", 0);
	/* Sorted as gnutls_certificate_set_x509_key_mem() sorts what it is given at start. */
	g = gnutls_x509_crt_list_import2(&crts, &ncrts, &cpem, GNUTLS_X509_FMT_PEM,
					 GNUTLS_X509_CRT_LIST_SORT);
	if (g < 0) {
		ret = fail(why, cap, -EINVAL, "the certificate file is not a PEM certificate chain", g);
		goto out;
	}
	if (ncrts == 0 || ncrts > CHAIN_MAX) {
		ret = fail(why, cap, -EINVAL, "the certificate file holds no certificate, or more than 8",
			   0);
		goto out;
	}
	if ((g = gnutls_x509_privkey_init(&key)) < 0 ||
	    (g = gnutls_x509_privkey_import2(key, &kpem, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
		ret = fail(why, cap, -EINVAL, "the key file is not an unencrypted PEM private key", g);
		goto out;
	}
	/* The key must be the server certificate's: else every handshake would fail later. */
	if ((g = gnutls_x509_crt_get_key_id(crts[0], 0, id1, &l1)) < 0 ||
	    (g = gnutls_x509_privkey_get_key_id(key, 0, id2, &l2)) < 0 || l1 != l2 ||
	    memcmp(id1, id2, l1) != 0) {
		ret = fail(why, cap, -EINVAL, "the key is not the certificate's", g);
		goto out;
	}
	for (unsigned i = 0; i < ncrts; i++) {
		if ((g = gnutls_x509_crt_export2(crts[i], GNUTLS_X509_FMT_DER, &p->der[i])) < 0) {
			ret = fail(why, cap, -ENOMEM, "certificate export", g);
			goto out;
		}
		p->n = i + 1;
	}
	/* PKCS #8 names the key's algorithm: a bare SEC1 or PKCS #1 DER key would be guessed at. */
	if ((g = gnutls_x509_privkey_export2_pkcs8(key, GNUTLS_X509_FMT_DER, NULL, GNUTLS_PKCS_PLAIN,
						    &p->key_der)) < 0 ||
	    (g = gnutls_x509_crt_get_fingerprint(crts[0], GNUTLS_DIG_SHA256, fp, &fpl)) < 0 ||
	    fpl != sizeof(fp)) {
		ret = fail(why, cap, -ENOMEM, "key export", g);
		goto out;
	}
	for (size_t i = 0; i < fpl; i++)
		snprintf(p->fingerprint + 3 * i, sizeof(p->fingerprint) - 3 * i,
			 i + 1 < fpl ? "%02X:" : "%02X", fp[i]);
	pthread_rwlock_wrlock(&lock);
	old = current;
	current = p;
	pthread_rwlock_unlock(&lock);
	p = old; /* freed below: no handshake holds it, each took its own copy */
	ret = 0;
out:
	pair_free(p);
	for (unsigned i = 0; i < ncrts; i++)
		gnutls_x509_crt_deinit(crts[i]);
	gnutls_free(crts);
	gnutls_x509_privkey_deinit(key);
	return ret;
}

void server_cert_fingerprint(char out[96])
{
	pthread_rwlock_rdlock(&lock);
	snprintf(out, 96, "%s", current ? current->fingerprint : "");
	pthread_rwlock_unlock(&lock);
}

void server_cert_clear(void)
{
	struct pair *old;

	pthread_rwlock_wrlock(&lock);
	old = current;
	current = NULL;
	pthread_rwlock_unlock(&lock);
	pair_free(old);
}

/*
 * GnuTLS asks for the server's certificate in each handshake: a fresh import of the current
 * pair, which GnuTLS owns and frees with the session (GNUTLS_CERT_RETR_DEINIT_ALL). A negative
 * return fails that handshake only.
 */
int server_cert_retrieve(gnutls_session_t session, const struct gnutls_cert_retr_st *info,
			 gnutls_pcert_st **certs, unsigned int *certs_length,
			 gnutls_ocsp_data_st **ocsp, unsigned int *ocsp_length,
			 gnutls_privkey_t *privkey, unsigned int *flags)
{
	gnutls_pcert_st *pc = NULL;
	gnutls_privkey_t pk = NULL;
	unsigned n = 0;
	bool ok = false;

	(void)session;
	(void)info;
	*certs = NULL;
	*certs_length = 0;
	*ocsp = NULL;
	*ocsp_length = 0;
	*privkey = NULL;
	*flags = 0;
	pthread_rwlock_rdlock(&lock);
	if (!current)
		goto out;
	pc = gnutls_calloc(current->n, sizeof(*pc));
	if (!pc)
		goto out;
	for (; n < current->n; n++)
		if (gnutls_pcert_import_x509_raw(&pc[n], &current->der[n], GNUTLS_X509_FMT_DER, 0) < 0)
			goto out;
	if (gnutls_privkey_init(&pk) < 0) {
		pk = NULL;
		goto out;
	}
	if (gnutls_privkey_import_x509_raw(pk, &current->key_der, GNUTLS_X509_FMT_DER, NULL, 0) < 0)
		goto out;
	ok = true;
out:
	pthread_rwlock_unlock(&lock);
	if (!ok) {
		for (unsigned i = 0; i < n; i++)
			gnutls_pcert_deinit(&pc[i]);
		gnutls_free(pc);
		if (pk)
			gnutls_privkey_deinit(pk);
		return -1;
	}
	*certs = pc;
	*certs_length = n;
	*privkey = pk;
	*flags = GNUTLS_CERT_RETR_DEINIT_ALL;
	return 0;
}
