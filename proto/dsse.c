/* DSSE envelopes of signed policies; the contract is in dsse.h. */
#include "proto/dsse.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/sha.h>

#include "proto/encoding.h"

static const char *const known_types[] = {DSSE_TYPE_POLICY, DSSE_TYPE_KEYLIME};

void dsse_envelope_release(struct dsse_envelope *e)
{
	if (!e)
		return;
	free(e->payload_type);
	free(e->payload);
	for (size_t i = 0; i < e->nsigs; i++) {
		free(e->sigs[i].keyid);
		free(e->sigs[i].sig);
	}
	memset(e, 0, sizeof(*e));
}

/* The text of a JSON string with no NUL inside and at most max bytes; NULL if it is not one. */
static const char *plain_string(json_t *v, size_t max)
{
	const char *s = json_string_value(v);

	if (!s || json_string_length(v) != strlen(s) || strlen(s) > max)
		return NULL;
	return s;
}

/*
 * Decodes base64 text of 1 to max bytes; NULL with *why when it is not one. The text's length
 * is bounded before anything is decoded (a large text is never allocated for).
 */
static uint8_t *decode_bounded(json_t *v, size_t max, size_t *len, const char **why,
			       const char *too_long, const char *bad)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	uint8_t *out;

	if (!s) {
		*why = bad;
		return NULL;
	}
	if (n == 0 || n / 4 > (max + 2) / 3) {
		*why = n ? too_long : bad;
		return NULL;
	}
	out = base64_decode_alloc(s, n, len);
	if (!out || *len == 0) {
		free(out);
		*why = bad;
		return NULL;
	}
	if (*len > max) {
		free(out);
		*why = too_long;
		return NULL;
	}
	return out;
}

static enum dsse_status parse_signature(json_t *o, struct dsse_signature *s, const char **why)
{
	json_t *keyid = json_object_get(o, "keyid"), *sig = json_object_get(o, "sig");
	const char *k = "";

	if (!json_is_object(o) || !sig || json_object_size(o) != (keyid ? 2u : 1u)) {
		*why = "a signature must be an object of \"sig\" and an optional \"keyid\", nothing else";
		return DSSE_MALFORMED;
	}
	if (keyid && !(k = plain_string(keyid, LIMIT_DSSE_KEYID))) {
		*why = "a keyid must be a string of at most " LIMIT_STR(LIMIT_DSSE_KEYID) " bytes";
		return DSSE_MALFORMED;
	}
	s->sig = decode_bounded(sig, LIMIT_DSSE_SIG, &s->sig_len, why,
				"a signature is longer than " LIMIT_STR(LIMIT_DSSE_SIG) " bytes",
				"a sig must be non-empty standard base64 (padded, no whitespace)");
	if (!s->sig)
		return DSSE_MALFORMED;
	s->keyid = strdup(k);
	return s->keyid ? DSSE_OK : DSSE_NOMEM;
}

enum dsse_status dsse_parse(const char *text, size_t len, size_t max_payload,
			    struct dsse_envelope *out, const char **why)
{
	const char *dummy, *type;
	json_t *root, *jtype, *jpayload, *jsigs, *v;
	enum dsse_status st = DSSE_MALFORMED;
	size_t i, members;

	if (!why)
		why = &dummy;
	memset(out, 0, sizeof(*out));
	*why = "not JSON (or a member named twice)";
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(root))
		goto out;
	jtype = json_object_get(root, "payloadType");
	jpayload = json_object_get(root, "payload");
	jsigs = json_object_get(root, "signatures");
	members = (jtype != NULL) + (jpayload != NULL) + (jsigs != NULL);
	if (members == 0) {
		st = DSSE_NOT_ENVELOPE;
		*why = "not an envelope";
		goto out;
	}
	if (members != 3 || json_object_size(root) != 3) {
		*why = "an envelope has exactly payloadType, payload and signatures";
		goto out;
	}
	if (!(type = plain_string(jtype, 128))) {
		*why = "payloadType must be a string";
		goto out;
	}
	for (i = 0; i < sizeof(known_types) / sizeof(known_types[0]); i++)
		if (!strcmp(type, known_types[i]))
			break;
	if (i == sizeof(known_types) / sizeof(known_types[0])) {
		st = DSSE_BAD_TYPE;
		*why = "payloadType is not a policy's (" DSSE_TYPE_POLICY " or " DSSE_TYPE_KEYLIME ")";
		goto out;
	}
	out->payload = decode_bounded(jpayload, max_payload, &out->payload_len, why,
				      "the payload is longer than a policy may be",
				      "payload must be non-empty standard base64 (padded, no whitespace)");
	if (!out->payload)
		goto out;
	if (memchr(out->payload, 0, out->payload_len)) {
		*why = "the payload holds a NUL byte: it is not a policy's text";
		goto out;
	}
	{ /* a NUL past the bytes, so that the policy text is a C string too */
		uint8_t *p = realloc(out->payload, out->payload_len + 1);

		if (!p) {
			st = DSSE_NOMEM;
			goto out;
		}
		p[out->payload_len] = 0;
		out->payload = p;
	}
	if (!json_is_array(jsigs) || json_array_size(jsigs) == 0 ||
	    json_array_size(jsigs) > LIMIT_DSSE_SIGNATURES) {
		*why = "signatures must be a list of 1 to " LIMIT_STR(LIMIT_DSSE_SIGNATURES) " signatures";
		goto out;
	}
	json_array_foreach(jsigs, i, v) {
		st = parse_signature(v, &out->sigs[i], why);
		out->nsigs = i + 1;
		if (st != DSSE_OK)
			goto out;
	}
	st = DSSE_NOMEM;
	if (!(out->payload_type = strdup(type)))
		goto out;
	st = DSSE_OK;
out:
	if (st != DSSE_OK)
		dsse_envelope_release(out);
	json_decref(root);
	return st;
}

int dsse_pae(const char *type, const uint8_t *payload, size_t len, uint8_t **pae,
	     size_t *pae_len)
{
	char head[128];
	size_t tlen = strlen(type);
	int h = snprintf(head, sizeof(head), "DSSEv1 %zu ", tlen);
	char mid[32];
	int m = snprintf(mid, sizeof(mid), " %zu ", len);
	size_t total;
	uint8_t *p;

	if (h < 0 || m < 0 || (size_t)h >= sizeof(head) || (size_t)m >= sizeof(mid) ||
	    tlen > SIZE_MAX / 2 || len > SIZE_MAX - tlen - 256)
		return -ENOMEM;
	total = (size_t)h + tlen + (size_t)m + len;
	p = malloc(total ? total : 1);
	if (!p)
		return -ENOMEM;
	memcpy(p, head, (size_t)h);
	memcpy(p + h, type, tlen);
	memcpy(p + h + tlen, mid, (size_t)m);
	if (len)
		memcpy(p + h + tlen + m, payload, len);
	*pae = p;
	*pae_len = total;
	return 0;
}

bool dsse_key_ok(EVP_PKEY *key)
{
	char group[64];
	size_t glen = 0;

	return key && EVP_PKEY_is_a(key, "EC") &&
	       EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group,
					      sizeof(group), &glen) == 1 &&
	       !strcmp(group, "prime256v1");
}

int dsse_keyid(EVP_PKEY *key, char out[DSSE_KEYID_LEN + 1])
{
	uint8_t digest[SHA256_DIGEST_LENGTH];
	BIO *bio = BIO_new(BIO_s_mem());
	char *pem = NULL;
	long n;
	int ret = -ENOMEM;

	if (!bio)
		return -ENOMEM;
	if (!key || PEM_write_bio_PUBKEY(bio, key) != 1) {
		ret = key ? -ENOMEM : -EINVAL;
		goto out;
	}
	n = BIO_get_mem_data(bio, &pem);
	if (n <= 0 || !pem)
		goto out;
	SHA256((const unsigned char *)pem, (size_t)n, digest);
	hex_encode(digest, sizeof(digest), out);
	ret = 0;
out:
	BIO_free(bio);
	ERR_clear_error();
	return ret;
}

static bool verifies(EVP_PKEY *key, const uint8_t *sig, size_t sig_len, const uint8_t *msg,
		     size_t msg_len)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	bool ok = md && EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
		  EVP_DigestVerify(md, sig, sig_len, msg, msg_len) == 1;

	EVP_MD_CTX_free(md);
	ERR_clear_error();
	return ok;
}

enum dsse_status dsse_verify(const struct dsse_envelope *e, EVP_PKEY *const *keys, size_t nkeys,
			     size_t *signer)
{
	uint8_t *pae = NULL;
	size_t pae_len = 0;
	enum dsse_status st = DSSE_UNSIGNED;

	if (!e->payload_type || !e->payload)
		return DSSE_UNSIGNED;
	if (dsse_pae(e->payload_type, e->payload, e->payload_len, &pae, &pae_len))
		return DSSE_NOMEM;
	for (size_t k = 0; k < nkeys && st != DSSE_OK; k++) {
		if (!dsse_key_ok(keys[k]))
			continue;
		for (size_t s = 0; s < e->nsigs; s++)
			if (verifies(keys[k], e->sigs[s].sig, e->sigs[s].sig_len, pae, pae_len)) {
				*signer = k;
				st = DSSE_OK;
				break;
			}
	}
	free(pae);
	return st;
}

char *dsse_sign(const char *type, const uint8_t *payload, size_t len, EVP_PKEY *key)
{
	char keyid[DSSE_KEYID_LEN + 1], *b64sig = NULL, *b64payload = NULL, *text = NULL;
	uint8_t *pae = NULL, *sig = NULL;
	size_t pae_len = 0, sig_len = 0;
	EVP_MD_CTX *md = NULL;
	json_t *env = NULL;

	if (!dsse_key_ok(key) || dsse_keyid(key, keyid) ||
	    dsse_pae(type, payload, len, &pae, &pae_len))
		goto out;
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
	    EVP_DigestSign(md, NULL, &sig_len, pae, pae_len) != 1 || !(sig = malloc(sig_len)) ||
	    EVP_DigestSign(md, sig, &sig_len, pae, pae_len) != 1)
		goto out;
	b64sig = base64_encode_alloc(sig, sig_len);
	b64payload = base64_encode_alloc(payload, len);
	if (!b64sig || !b64payload)
		goto out;
	env = json_pack("{s:s, s:s, s:[{s:s, s:s}]}", "payloadType", type, "payload", b64payload,
			"signatures", "keyid", keyid, "sig", b64sig);
	text = env ? json_dumps(env, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
out:
	ERR_clear_error();
	EVP_MD_CTX_free(md);
	json_decref(env);
	free(pae);
	free(sig);
	free(b64sig);
	free(b64payload);
	return text;
}

int dsse_keys_parse(const char *pem, size_t len, EVP_PKEY ***keys, size_t *n, const char **why)
{
	EVP_PKEY **arr = NULL;
	size_t count = 0;
	BIO *bio = NULL;
	int ret = -EINVAL;

	*keys = NULL;
	*n = 0;
	if (len == 0 || len > LIMIT_POLICY_SIGNERS_BYTES || len > INT_MAX) {
		*why = len ? "longer than 1 MiB" : "empty: no PUBLIC KEY block";
		return -EINVAL;
	}
	if (!(bio = BIO_new_mem_buf(pem, (int)len)) ||
	    !(arr = calloc(LIMIT_POLICY_SIGNERS, sizeof(*arr)))) {
		*why = "out of memory";
		ret = -ENOMEM;
		goto out;
	}
	for (;;) {
		char *name = NULL, *header = NULL;
		unsigned char *der = NULL;
		const unsigned char *q;
		long der_len = 0;
		EVP_PKEY *k;
		bool good = false;

		/* Blocks one by one (PEM_read_bio() ends at the text's end with NO_START_LINE):
		 * a block of another kind is refused, not skipped, so that no key goes unnoticed. */
		if (PEM_read_bio(bio, &name, &header, &der, &der_len) != 1) {
			unsigned long e = ERR_peek_last_error();

			if (ERR_GET_LIB(e) != ERR_LIB_PEM || ERR_GET_REASON(e) != PEM_R_NO_START_LINE) {
				*why = "a PEM block that does not decode";
				goto out;
			}
			break;
		}
		q = der;
		k = NULL;
		if (strcmp(name, "PUBLIC KEY"))
			*why = "a PEM block that is not a PUBLIC KEY";
		else if (count == LIMIT_POLICY_SIGNERS)
			*why = "more than " LIMIT_STR(LIMIT_POLICY_SIGNERS) " keys";
		else if (!(k = d2i_PUBKEY(NULL, &q, der_len)) || q != der + der_len)
			*why = "a PUBLIC KEY block that does not decode";
		else if (!dsse_key_ok(k))
			*why = "a key that is not ECDSA on P-256 (prime256v1)";
		else
			good = true;
		OPENSSL_free(name);
		OPENSSL_free(header);
		OPENSSL_free(der);
		if (!good) {
			EVP_PKEY_free(k);
			goto out;
		}
		arr[count++] = k;
	}
	if (!count) {
		*why = "no PUBLIC KEY block";
		goto out;
	}
	*keys = arr;
	*n = count;
	arr = NULL;
	ret = 0;
out:
	ERR_clear_error();
	if (arr) {
		for (size_t i = 0; i < count; i++)
			EVP_PKEY_free(arr[i]);
		free(arr);
	}
	BIO_free(bio);
	return ret;
}
