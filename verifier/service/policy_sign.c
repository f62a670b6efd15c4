/* Signed policies as the verifier checks them; the contract is in policy_sign.h. */
#include "verifier/service/policy_sign.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/file.h"
#include "common/log.h"
#include "proto/dynbuf.h"
#include "proto/encoding.h"
#include "proto/limits.h"
#include "verifier/service/app.h"

int policy_signers_load(const char *path, struct policy_signers **out)
{
	struct policy_signers *s = NULL;
	struct dynbuf b;
	const char *why = "";
	int ret;

	*out = NULL;
	dynbuf_init(&b, LIMIT_POLICY_SIGNERS_BYTES);
	ret = file_read(path, &b);
	if (ret) {
		log_error("policy signers \"%s\": %s", path,
			  ret == -E2BIG ? "longer than 1 MiB" : strerror(-ret));
		goto out;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		ret = -ENOMEM;
		goto out;
	}
	ret = dsse_keys_parse(dynbuf_str(&b), b.len, &s->keys, &s->n, &why);
	if (ret) {
		log_error("policy signers \"%s\": %s", path, why);
		goto out;
	}
	s->keyids = calloc(s->n, sizeof(*s->keyids));
	if (!s->keyids) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->n; i++) {
		if ((ret = dsse_keyid(s->keys[i], s->keyids[i]))) {
			log_error("policy signers \"%s\": key %zu has no keyid", path, i + 1);
			goto out;
		}
	}
	for (size_t i = 0; i < s->n; i++)
		log_info("policy signers: key %s from \"%s\"", s->keyids[i], path);
	*out = s;
	s = NULL;
out:
	policy_signers_free(s);
	free(dynbuf_take(&b, NULL));
	return ret;
}

void policy_signers_free(struct policy_signers *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		EVP_PKEY_free(s->keys[i]);
	free(s->keys);
	free(s->keyids);
	free(s);
}

void signed_policy_release(struct signed_policy *sp)
{
	free(sp->json);
	free(sp->signature);
	sp->json = sp->signature = NULL;
	sp->len = 0;
}

bool policy_sign_required(struct app *app)
{
	bool on;

	pthread_rwlock_rdlock(&app->reload_lock);
	on = app->signers != NULL;
	pthread_rwlock_unlock(&app->reload_lock);
	return on;
}

/* What the store keeps of an envelope that parsed: its text without "payload". NULL: no memory. */
static char *without_payload(const char *text, size_t len)
{
	json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	char *s = NULL;

	if (json_is_object(o) && json_object_del(o, "payload") == 0)
		s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return s;
}

/*
 * Checks a parsed envelope against the signers (read lock held by the caller) and fills out's
 * signer; out's other fields are the caller's.
 */
static enum sign_status verify(struct app *app, const struct dsse_envelope *e,
			       struct signed_policy *out)
{
	const struct policy_signers *s = app->signers;
	size_t who = 0;
	enum dsse_status ds;

	out->signer[0] = '\0';
	if (!s)
		return SIGN_OK; /* kept, unchecked */
	ds = dsse_verify(e, s->keys, s->n, &who);
	if (ds == DSSE_NOMEM)
		return SIGN_NOMEM;
	if (ds != DSSE_OK) {
		snprintf(out->why, sizeof(out->why),
			 "no signature of the envelope verifies with a key of --policy-signers"
			 " (another key, or a payload changed after it was signed)");
		return SIGN_BAD_SIGNATURE;
	}
	memcpy(out->signer, s->keyids[who], sizeof(out->signer));
	return SIGN_OK;
}

/*
 * Whether text can be an envelope at all: it names one of its members. A policy (up to 64 MiB
 * in a PUT) is then not parsed twice, and a body that is not JSON is left to the policy loader,
 * whose message says what is wrong with it. An envelope that spells its members with escapes
 * is taken for a plain policy, which the loader refuses: never for a signed one.
 */
static bool may_be_envelope(const char *text, size_t len)
{
	return memmem(text, len, "\"payload", 8) || memmem(text, len, "\"signatures\"", 12);
}

/* An envelope's text into out (the lock held by the caller). */
static enum sign_status open_envelope(struct app *app, const char *text, size_t len,
				      struct signed_policy *out, bool *plain)
{
	struct dsse_envelope e;
	const char *why = "";
	enum dsse_status ds;
	enum sign_status st;

	*plain = false;
	if (!may_be_envelope(text, len)) {
		*plain = true;
		return SIGN_OK;
	}
	memset(&e, 0, sizeof(e));
	ds = dsse_parse(text, len, LIMIT_POLICY_BYTES, &e, &why);
	if (ds == DSSE_NOT_ENVELOPE) {
		*plain = true;
		return SIGN_OK;
	}
	if (ds == DSSE_NOMEM)
		return SIGN_NOMEM;
	if (ds != DSSE_OK) {
		snprintf(out->why, sizeof(out->why), "not a DSSE envelope of a policy: %s", why);
		return SIGN_MALFORMED;
	}
	st = verify(app, &e, out);
	if (st == SIGN_OK) {
		out->signature = without_payload(text, len);
		out->json = (char *)e.payload; /* NUL-terminated (dsse.h) */
		out->len = e.payload_len;
		e.payload = NULL;
		out->is_signed = true;
		if (!out->signature) {
			signed_policy_release(out);
			st = SIGN_NOMEM;
		}
	}
	dsse_envelope_release(&e);
	return st;
}

enum sign_status policy_sign_open(struct app *app, const char *body, size_t len,
				  struct signed_policy *out)
{
	enum sign_status st;
	bool plain = false;

	memset(out, 0, sizeof(*out));
	pthread_rwlock_rdlock(&app->reload_lock);
	st = open_envelope(app, body, len, out, &plain);
	if (st == SIGN_OK && plain && app->signers) {
		snprintf(out->why, sizeof(out->why),
			 "this verifier takes only signed policies (--policy-signers): sign it"
			 " (attestctl policy sign --key KEY.pem FILE) and put the envelope");
		st = SIGN_UNSIGNED;
	}
	pthread_rwlock_unlock(&app->reload_lock);
	if (st == SIGN_OK && plain) {
		out->json = malloc(len + 1);
		if (!out->json)
			return SIGN_NOMEM;
		memcpy(out->json, body, len);
		out->json[len] = '\0';
		out->len = len;
	}
	return st;
}

enum sign_status policy_sign_recheck(struct app *app, const char *json, const char *signature,
				     struct signed_policy *out)
{
	json_t *env = NULL;
	char *b64 = NULL, *text = NULL;
	enum sign_status st = SIGN_NOMEM;
	bool plain = false;

	memset(out, 0, sizeof(*out));
	if (!signature[0]) {
		pthread_rwlock_rdlock(&app->reload_lock);
		st = app->signers ? SIGN_UNSIGNED : SIGN_OK;
		pthread_rwlock_unlock(&app->reload_lock);
		if (st == SIGN_UNSIGNED) {
			snprintf(out->why, sizeof(out->why),
				 "that version was stored unsigned, and this verifier takes only"
				 " signed policies (--policy-signers): put it again signed instead");
			return st;
		}
		out->len = strlen(json);
		out->json = strdup(json);
		return out->json ? SIGN_OK : SIGN_NOMEM;
	}
	/* The envelope made whole again: its payload is the version's text, byte for byte. */
	env = json_loads(signature, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(env)) {
		snprintf(out->why, sizeof(out->why), "its stored signature is not an envelope");
		st = SIGN_MALFORMED;
		goto out;
	}
	b64 = base64_encode_alloc((const uint8_t *)json, strlen(json));
	if (!b64 || json_object_set_new(env, "payload", json_string(b64)) ||
	    !(text = json_dumps(env, JSON_COMPACT)))
		goto out;
	pthread_rwlock_rdlock(&app->reload_lock);
	st = open_envelope(app, text, strlen(text), out, &plain);
	pthread_rwlock_unlock(&app->reload_lock);
	if (st == SIGN_OK && plain) {
		/* what the store kept is not an envelope's rest: never taken as signed */
		snprintf(out->why, sizeof(out->why), "its stored signature is not an envelope");
		st = SIGN_MALFORMED;
	}
	if (st == SIGN_BAD_SIGNATURE)
		snprintf(out->why, sizeof(out->why),
			 "no key of --policy-signers verifies that version's signature now (its"
			 " signer's key was removed?)");
out:
	if (st != SIGN_OK)
		signed_policy_release(out);
	json_decref(env);
	free(b64);
	free(text);
	return st;
}
