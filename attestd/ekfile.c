/* The EK certificate from a file; see ekfile.h. */
#include "attestd/ekfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "common/file.h"
#include "common/log.h"
#include "proto/limits.h"

/* PEM is base64 (4/3) with headers and line ends: well inside twice the DER caps. */
#define EKFILE_MAX (2u * (LIMIT_EK_CERT + LIMIT_EK_CHAIN))

/* Appends x as DER to the certificate (first) or the chain. 0 or -EINVAL. */
static int add_cert(struct ekfile *f, X509 *x, const char *path)
{
	unsigned char *der = NULL;
	int n = i2d_X509(x, &der);
	int ret = -EINVAL;

	if (n <= 0)
		goto out;
	if (!f->cert) {
		if ((size_t)n > LIMIT_EK_CERT) {
			log_error("ek certificate '%s' is larger than %u bytes", path, LIMIT_EK_CERT);
			goto out;
		}
		f->cert = malloc((size_t)n);
		if (!f->cert) {
			ret = -ENOMEM;
			goto out;
		}
		memcpy(f->cert, der, (size_t)n);
		f->cert_len = (size_t)n;
		f->key = X509_get_pubkey(x);
		ret = f->key ? 0 : -EINVAL;
		goto out;
	}
	if (f->nchain >= LIMIT_EK_CHAIN_CERTS || dynbuf_add(&f->chain, der, (size_t)n) < 0) {
		log_error("'%s' has more intermediates than %u certificates or %u bytes", path,
			  LIMIT_EK_CHAIN_CERTS, LIMIT_EK_CHAIN);
		goto out;
	}
	f->nchain++;
	ret = 0;
out:
	OPENSSL_free(der);
	return ret;
}

int ekfile_read(const char *path, struct ekfile *f)
{
	struct dynbuf b;
	BIO *bio = NULL;
	X509 *x = NULL;
	int ret;

	memset(f, 0, sizeof(*f));
	dynbuf_init(&f->chain, LIMIT_EK_CHAIN);
	dynbuf_init(&b, EKFILE_MAX);
	ret = file_read(path, &b);
	if (ret < 0) {
		log_error("cannot read ek certificate '%s': %s", path, strerror(-ret));
		goto out;
	}
	ret = -EINVAL;
	if (b.len > 10 && memcmp(b.buf, "-----BEGIN", 10) == 0) {
		bio = BIO_new_mem_buf(b.buf, (int)b.len);
		while (bio && (x = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
			ret = add_cert(f, x, path);
			X509_free(x);
			if (ret < 0)
				goto out;
		}
		/* The loop ends at the end of the file, or at a block that is no certificate. */
		if (ERR_GET_REASON(ERR_peek_last_error()) != PEM_R_NO_START_LINE) {
			log_error("ek certificate '%s' has a pem block that is no certificate", path);
			ret = -EINVAL;
			goto out;
		}
		ERR_clear_error();
	} else {
		const unsigned char *p = (const unsigned char *)b.buf;

		x = d2i_X509(NULL, &p, (long)b.len);
		if (x && p == (const unsigned char *)b.buf + b.len)
			ret = add_cert(f, x, path);
		X509_free(x);
	}
	if (!f->cert) {
		log_error("ek certificate '%s' is not one der certificate nor pem certificates",
			  path);
		ret = -EINVAL;
	}
out:
	BIO_free(bio);
	dynbuf_release(&b);
	return ret;
}

void ekfile_release(struct ekfile *f)
{
	if (!f)
		return;
	free(f->cert);
	dynbuf_release(&f->chain);
	EVP_PKEY_free(f->key);
	memset(f, 0, sizeof(*f));
	dynbuf_init(&f->chain, LIMIT_EK_CHAIN);
}
