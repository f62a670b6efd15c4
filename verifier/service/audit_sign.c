/* The audit trail's head, signed; see audit_sign.h. */
#include "verifier/service/audit_sign.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "common/file.h"
#include "common/log.h"
#include "verifier/store/statedir.h"
#include "verifier/store/store.h"

#define KEY_FILE_MAX 4096u

struct audit_signer {
	struct store *st;
	EVP_PKEY *key;
	uint8_t *pub_der;
	size_t pub_der_len;
	char *pub_pem;
	int64_t signed_seq; /* the newest seq signed by this process (0: none yet) */
	unsigned interval;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop, started;
};

static int key_load_or_make(int dfd, const char *name, EVP_PKEY **out)
{
	struct dynbuf b;
	BIO *bio = NULL;
	char *pem;
	long n;
	int ret;

	*out = NULL;
	dynbuf_init(&b, KEY_FILE_MAX);
	ret = file_read_at(dfd, name, &b);
	if (!ret) {
		bio = BIO_new_mem_buf(b.buf, (int)b.len);
		*out = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
		BIO_free(bio);
		OPENSSL_cleanse(b.buf, b.len);
		dynbuf_release(&b);
		if (!*out || EVP_PKEY_get_base_id(*out) != EVP_PKEY_EC) {
			log_error("audit: \"%s\" is not an EC private key in PEM", name);
			EVP_PKEY_free(*out);
			*out = NULL;
			return -EINVAL;
		}
		return 0;
	}
	if (ret != -ENOENT) {
		log_error("audit: cannot read the key \"%s\": %s", name, strerror(-ret));
		return ret;
	}
	*out = EVP_EC_gen("P-256");
	bio = BIO_new(BIO_s_mem());
	ret = -ENOMEM;
	if (*out && bio && PEM_write_bio_PrivateKey(bio, *out, NULL, NULL, 0, NULL, NULL) == 1 &&
	    (n = BIO_get_mem_data(bio, &pem)) > 0)
		ret = file_write_atomic_at(dfd, name, pem, (size_t)n, 0600);
	BIO_free(bio);
	if (ret) {
		log_error("audit: cannot make the key \"%s\": %s", name, strerror(-ret));
		EVP_PKEY_free(*out);
		*out = NULL;
		return ret;
	}
	log_info("audit: made the signing key of the audit trail's head \"%s\"", name);
	return 0;
}

static int public_forms(struct audit_signer *s)
{
	unsigned char *der = NULL;
	BIO *bio = BIO_new(BIO_s_mem());
	char *p;
	long n;
	int len = i2d_PUBKEY(s->key, &der);

	if (len <= 0 || !bio || PEM_write_bio_PUBKEY(bio, s->key) != 1 ||
	    (n = BIO_get_mem_data(bio, &p)) <= 0 || !(s->pub_pem = strndup(p, (size_t)n))) {
		OPENSSL_free(der);
		BIO_free(bio);
		return -ENOMEM;
	}
	BIO_free(bio);
	s->pub_der = malloc((size_t)len);
	if (s->pub_der)
		memcpy(s->pub_der, der, (size_t)len);
	s->pub_der_len = (size_t)len;
	OPENSSL_free(der);
	return s->pub_der ? 0 : -ENOMEM;
}

int audit_signer_sign(struct audit_signer *s)
{
	uint8_t hash[AUDIT_HASH_LEN], msg[AUDIT_HEAD_MSG_LEN], sig[256];
	size_t sig_len = sizeof(sig);
	EVP_MD_CTX *md = NULL;
	int64_t seq, now = (int64_t)time(NULL);
	int ret = store_audit_last(s->st, &seq, hash);

	if (ret || seq == 0 || seq == s->signed_seq)
		return ret;
	audit_head_message(seq, hash, now, msg);
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, s->key) != 1 ||
	    EVP_DigestSign(md, sig, &sig_len, msg, sizeof(msg)) != 1) {
		log_error("audit: signing the head failed (OpenSSL)");
		EVP_MD_CTX_free(md);
		return -EIO;
	}
	EVP_MD_CTX_free(md);
	{
		struct store_audit_signed head = {
			.seq = seq, .time = now, .signature = sig, .signature_len = sig_len,
			.public_key = s->pub_der, .public_key_len = s->pub_der_len,
		};

		memcpy(head.hash, hash, AUDIT_HASH_LEN);
		if (!(ret = store_audit_signed_put(s->st, &head)))
			s->signed_seq = seq;
	}
	return ret;
}

const char *audit_signer_public_pem(const struct audit_signer *s)
{
	return s ? s->pub_pem : NULL;
}

static void *run(void *arg)
{
	struct audit_signer *s = arg;
	struct timespec until;

	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		pthread_mutex_unlock(&s->mu);
		if (audit_signer_sign(s))
			log_warn("audit: the head was not signed; the next try is in %u s", s->interval);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += s->interval;
		pthread_mutex_lock(&s->mu);
		while (!s->stop && pthread_cond_timedwait(&s->cv, &s->mu, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

int audit_signer_start(struct store *st, const struct statedir *sd, const char *key_file,
		       unsigned interval, struct audit_signer **out)
{
	struct audit_signer *s = calloc(1, sizeof(*s));
	int ret;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->st = st;
	s->interval = interval ? interval : AUDIT_SIGN_INTERVAL_DEFAULT;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	if ((ret = key_load_or_make(key_file ? AT_FDCWD : sd->dfd,
				    key_file ? key_file : AUDIT_KEY_FILE, &s->key)) ||
	    (ret = public_forms(s)) || (ret = -pthread_create(&s->thread, NULL, run, s)))
		goto fail;
	s->started = true;
	*out = s;
	return 0;
fail:
	audit_signer_stop(s);
	return ret;
}

void audit_signer_stop(struct audit_signer *s)
{
	if (!s)
		return;
	if (s->started) {
		pthread_mutex_lock(&s->mu);
		s->stop = true;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->thread, NULL);
		if (audit_signer_sign(s))
			log_warn("audit: the last head was not signed at stop");
	}
	EVP_PKEY_free(s->key);
	free(s->pub_der);
	free(s->pub_pem);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
