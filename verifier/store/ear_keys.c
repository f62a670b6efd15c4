/* The EAR signing key and its published predecessors (ear_keys.h). */
#include "verifier/store/ear_keys.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/pem.h>

#include "common/file.h"
#include "common/log.h"

#define KEY_FILE "ear-key.pem"
#define RETIRED_FILE "ear-keys.json"
#define KEY_FILE_MAX (16u * 1024u)
#define RETIRED_FILE_MAX (1u << 20)

struct ear_keys {
	pthread_mutex_t lock;
	int dfd;
	int64_t keep;
	EVP_PKEY *current;
	json_t *retired; /* the array of ear-keys.json */
};

static int write_key(int dfd, EVP_PKEY *key)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *pem;
	long n;
	int ret = -ENOMEM;

	if (bio && PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL) == 1 &&
	    (n = BIO_get_mem_data(bio, &pem)) > 0)
		ret = file_write_atomic_at(dfd, KEY_FILE, pem, (size_t)n, 0600);
	if (ret)
		log_error("ear: cannot write STATE_DIR/" KEY_FILE ": %s", strerror(-ret));
	BIO_free(bio); /* BIO_s_mem frees (and does not wipe) its buffer: the key is on disk anyway */
	return ret;
}

static EVP_PKEY *read_key(int dfd, int *err)
{
	struct dynbuf b;
	EVP_PKEY *key = NULL;
	BIO *bio;
	int ret;

	dynbuf_init(&b, KEY_FILE_MAX);
	ret = file_read_at(dfd, KEY_FILE, &b);
	if (ret) {
		*err = ret;
		return NULL;
	}
	bio = BIO_new_mem_buf(b.buf, (int)b.len);
	if (bio)
		key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	BIO_free(bio);
	OPENSSL_cleanse(b.buf, b.len);
	dynbuf_release(&b);
	if (!key || EVP_PKEY_get_base_id(key) != EVP_PKEY_EC) {
		log_error("ear: STATE_DIR/" KEY_FILE " is not a P-256 private key: move it away to"
			  " make a new one (results signed with it will no longer verify)");
		EVP_PKEY_free(key);
		*err = -EINVAL;
		return NULL;
	}
	return key;
}

static int write_retired(int dfd, const json_t *retired)
{
	json_t *doc = json_pack("{s:O}", "retired", retired);
	char *text = doc ? json_dumps(doc, JSON_INDENT(1)) : NULL;
	int ret = text ? file_write_atomic_at(dfd, RETIRED_FILE, text, strlen(text), 0600) : -ENOMEM;

	if (ret)
		log_error("ear: cannot write STATE_DIR/" RETIRED_FILE ": %s", strerror(-ret));
	free(text);
	json_decref(doc);
	return ret;
}

static json_t *read_retired(int dfd, int *err)
{
	struct dynbuf b;
	json_t *doc, *arr;
	int ret;

	dynbuf_init(&b, RETIRED_FILE_MAX);
	ret = file_read_at(dfd, RETIRED_FILE, &b);
	if (ret == -ENOENT)
		return json_array();
	if (ret) {
		log_error("ear: cannot read STATE_DIR/" RETIRED_FILE ": %s", strerror(-ret));
		*err = ret;
		return NULL;
	}
	doc = json_loadb(b.buf, b.len, 0, NULL);
	dynbuf_release(&b);
	arr = json_object_get(doc, "retired");
	if (!json_is_array(arr)) {
		log_error("ear: STATE_DIR/" RETIRED_FILE " is not {\"retired\": [...]}: fix or remove it");
		json_decref(doc);
		*err = -EINVAL;
		return NULL;
	}
	json_incref(arr);
	json_decref(doc);
	return arr;
}

int ear_keys_open(const struct statedir *sd, int64_t keep, struct ear_keys **out)
{
	struct ear_keys *k = calloc(1, sizeof(*k));
	char kid[EAR_KID_LEN + 1];
	int ret = 0;

	if (!k)
		return -ENOMEM;
	pthread_mutex_init(&k->lock, NULL);
	k->dfd = sd->dfd;
	k->keep = keep;
	k->retired = read_retired(k->dfd, &ret);
	if (!k->retired)
		goto fail;
	k->current = read_key(k->dfd, &ret);
	if (!k->current && ret == -ENOENT) {
		k->current = EVP_EC_gen(SN_X9_62_prime256v1);
		if (!k->current) {
			log_openssl("ear: making the signing key");
			ret = -ENOMEM;
			goto fail;
		}
		ret = write_key(k->dfd, k->current);
		if (ret)
			goto fail;
		if (!ear_key_kid(k->current, kid))
			log_info("ear: made the signing key of attestation results, kid \"%s\"", kid);
	}
	if (!k->current || ear_key_kid(k->current, kid)) {
		ret = ret ? ret : -EINVAL;
		goto fail;
	}
	*out = k;
	return 0;
fail:
	ear_keys_free(k);
	return ret;
}

void ear_keys_free(struct ear_keys *k)
{
	if (!k)
		return;
	EVP_PKEY_free(k->current);
	json_decref(k->retired);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

EVP_PKEY *ear_keys_current(struct ear_keys *k)
{
	EVP_PKEY *key;

	pthread_mutex_lock(&k->lock);
	key = k->current;
	if (key && EVP_PKEY_up_ref(key) != 1)
		key = NULL;
	pthread_mutex_unlock(&k->lock);
	return key;
}

/* Whether a retired entry is still published at now. */
static bool kept(const json_t *entry, int64_t now, int64_t keep)
{
	const json_t *at = json_object_get(entry, "retired_at");

	return json_is_integer(at) && now - json_integer_value(at) < keep;
}

json_t *ear_keys_jwks(struct ear_keys *k, int64_t now)
{
	json_t *keys = json_array(), *entry, *cur;
	char kid[EAR_KID_LEN + 1];
	size_t i;

	if (!keys)
		return NULL;
	pthread_mutex_lock(&k->lock);
	cur = ear_jwk_from_key(k->current);
	if (!cur || ear_key_kid(k->current, kid) || json_array_append_new(keys, cur))
		goto fail;
	json_array_foreach(k->retired, i, entry) {
		json_t *jwk = json_object_get(entry, "jwk");
		const char *id = json_string_value(json_object_get(jwk, "kid"));

		/* A crash between the two writes of a rotation lists the current key as retired. */
		if (!json_is_object(jwk) || !id || !strcmp(id, kid) || !kept(entry, now, k->keep))
			continue;
		if (json_array_append(keys, jwk))
			goto fail;
	}
	pthread_mutex_unlock(&k->lock);
	return json_pack("{s:o}", "keys", keys);
fail:
	pthread_mutex_unlock(&k->lock);
	json_decref(keys);
	return NULL;
}

int ear_keys_rotate(struct ear_keys *k, int64_t now, char kid[EAR_KID_LEN + 1],
		    char old_kid[EAR_KID_LEN + 1])
{
	EVP_PKEY *fresh = EVP_EC_gen(SN_X9_62_prime256v1);
	json_t *retired = NULL, *old = NULL, *entry;
	size_t i;
	int ret = -ENOMEM;

	if (!fresh || ear_key_kid(fresh, kid)) {
		log_openssl("ear: making a new signing key");
		EVP_PKEY_free(fresh);
		return -ENOMEM;
	}
	pthread_mutex_lock(&k->lock);
	if (ear_key_kid(k->current, old_kid) || !(old = ear_jwk_from_key(k->current)))
		goto out;
	/* The list without the keys past their time, then the one retired now. */
	retired = json_array();
	if (!retired)
		goto out;
	json_array_foreach(k->retired, i, entry)
		if (kept(entry, now, k->keep) && json_array_append(retired, entry))
			goto out;
	if (json_array_append_new(retired, json_pack("{s:O, s:I}", "jwk", old, "retired_at",
						     (json_int_t)now)))
		goto out;
	ret = write_retired(k->dfd, retired);
	if (ret)
		goto out;
	ret = write_key(k->dfd, fresh);
	if (ret)
		goto out;
	json_decref(k->retired);
	k->retired = retired;
	retired = NULL;
	EVP_PKEY_free(k->current);
	k->current = fresh;
	fresh = NULL;
	log_info("ear: signing key rotated: \"%s\" now, \"%s\" published for %lld s more", kid,
		 old_kid, (long long)k->keep);
out:
	pthread_mutex_unlock(&k->lock);
	json_decref(retired);
	json_decref(old);
	EVP_PKEY_free(fresh);
	return ret;
}
