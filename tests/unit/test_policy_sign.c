/*
 * verifier/service/policy_sign.c and the rollback of signed versions (policy_history.c) against
 * a real store (SQLite, or PostgreSQL in the PG mode): without signers a plain policy is taken
 * and an envelope's payload is taken with its signature kept unchecked; with signers a plain
 * policy, another key's envelope, a tampered payload and a signature claiming a signer's keyid
 * are refused, and the signer named is the keyid of the key that verified. A rollback keeps the
 * version's signature and checks it again: a version stored unsigned and one whose signer's key
 * was removed are refused with nothing written; an amendment's version 0 is not.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/pem.h>

#include "proto/dsse.h"
#include "proto/encoding.h"
#include "tests/lib/teststore.h"
#include "tests/unit/check.h"
#include "verifier/policy/policy.h"
#include "verifier/service/policy_history.h"
#include "verifier/service/policy_sign.h"

static const char policy_a[] = "{\"version\": 1, \"digests\": {\"/usr/bin/a\": [\"sha256:"
			       "1111111111111111111111111111111111111111111111111111111111111111\"]}}";
static const char policy_b[] = "{\"version\": 1, \"digests\": {\"/usr/bin/b\": [\"sha256:"
			       "2222222222222222222222222222222222222222222222222222222222222222\"]}}";

/* The public halves of keys[0..n) as one PEM file at path; then loaded as app's signers. */
static int set_signers(struct app *app, const char *path, EVP_PKEY *const *keys, size_t n)
{
	struct policy_signers *s = NULL;
	FILE *f = fopen(path, "w");
	int ok = f != NULL;

	for (size_t i = 0; ok && i < n; i++)
		ok = PEM_write_PUBKEY(f, keys[i]) == 1;
	if (f && fclose(f))
		ok = 0;
	if (!ok || policy_signers_load(path, &s))
		return -1;
	policy_signers_free(app->signers);
	app->signers = s;
	return 0;
}

/* `env` with member `key` of the root (or of signature 0 when sig) replaced by v. */
static char *edit(const char *env, bool sig, const char *key, json_t *v)
{
	json_t *o = json_loads(env, 0, NULL);
	json_t *at = sig ? json_array_get(json_object_get(o, "signatures"), 0) : o;
	char *s;

	json_object_set_new(at, key, v);
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

static enum sign_status open_text(struct app *app, const char *text, struct signed_policy *sp)
{
	return policy_sign_open(app, text, strlen(text), sp);
}

/* Puts what policy_sign_open() made of text as the next version of name; its version or -1. */
static int64_t put(struct app *app, const char *name, const char *text)
{
	struct signed_policy sp;
	struct store_policy_sig sig;
	int64_t v = -1;

	if (open_text(app, text, &sp) == SIGN_OK) {
		sig.signer = sp.signer;
		sig.signature = sp.signature;
		if (store_policy_put_signed(app->store, name, STORE_POLICY_ANY, sp.json,
					    sp.is_signed ? &sig : NULL, "test", 100, &v))
			v = -1;
	}
	signed_policy_release(&sp);
	return v;
}

/*
 * What every case uses, made once in main(): a verifier's app on a store, two signer keys with
 * their keyids, the signers file, and envelopes of policy_b (by k1, by k2, k1's with another
 * payload, k2's claiming k1's keyid). The cases run in order on one policy "p": each adds to its
 * versions and signers where the one before left them.
 */
static struct app verifier_app;
static EVP_PKEY *key1, *key2;
static char keyid1[DSSE_KEYID_LEN + 1], keyid2[DSSE_KEYID_LEN + 1], signers_pem[300];
static char *env_k1, *env_k2, *env_tampered, *env_forged;

static void test_without_signers_as_before_an_envelope_kept_unchecked(void)
{
	struct signed_policy sp;

	CHECK(!policy_sign_required(&verifier_app), "no signature required");
	CHECK(open_text(&verifier_app, policy_a, &sp) == SIGN_OK && !sp.is_signed && !strcmp(sp.json, policy_a) &&
		      !sp.signature && !sp.signer[0],
	      "a plain policy: itself, unsigned");
	signed_policy_release(&sp);
	CHECK(open_text(&verifier_app, env_k2, &sp) == SIGN_OK && sp.is_signed && !strcmp(sp.json, policy_b) &&
		      sp.len == strlen(policy_b) && !sp.signer[0] && sp.signature &&
		      !strstr(sp.signature, "payload\"") && strstr(sp.signature, "signatures"),
	      "an envelope: its payload, signed, no signer, the envelope kept without its payload");
	signed_policy_release(&sp);
	CHECK(open_text(&verifier_app, "not json {", &sp) == SIGN_OK && !sp.is_signed &&
		      !strcmp(sp.json, "not json {"),
	      "a body that is not JSON: left to the policy loader, whose message says why");
	signed_policy_release(&sp);
	CHECK(open_text(&verifier_app, "{\"payloadType\": \"x\", \"payload\": \"e30=\", \"signatures\": []}",
			&sp) == SIGN_MALFORMED && strstr(sp.why, "DSSE"),
	      "a malformed envelope is refused (%s)", sp.why);
	signed_policy_release(&sp);
	CHECK(put(&verifier_app, "p", policy_a) == 1 && put(&verifier_app, "p", env_k2) == 2,
	      "v1 unsigned, v2 signed by k2 (unchecked)");
}

static void test_with_signers_only_what_a_signer_s_key_verifies(void)
{
	char *json = NULL, *signer = NULL, *sigtext = NULL;
	struct signed_policy sp;

	CHECK(set_signers(&verifier_app, signers_pem, &key1, 1) == 0 && verifier_app.signers->n == 1 &&
		      !strcmp(verifier_app.signers->keyids[0], keyid1),
	      "signers: k1, its keyid computed");
	CHECK(policy_sign_required(&verifier_app), "a signature required");
	CHECK(open_text(&verifier_app, policy_a, &sp) == SIGN_UNSIGNED && !sp.json &&
		      strstr(sp.why, "attestctl policy sign"),
	      "a plain policy: refused, with how to sign it");
	signed_policy_release(&sp);
	CHECK(open_text(&verifier_app, "not json {", &sp) == SIGN_UNSIGNED, "a body that is not JSON: unsigned");
	signed_policy_release(&sp);
	CHECK(open_text(&verifier_app, env_k2, &sp) == SIGN_BAD_SIGNATURE && !sp.json, "another key's: refused");
	signed_policy_release(&sp);
	CHECK(open_text(&verifier_app, env_tampered, &sp) == SIGN_BAD_SIGNATURE, "a tampered payload: refused");
	signed_policy_release(&sp);
	CHECK(open_text(&verifier_app, env_forged, &sp) == SIGN_BAD_SIGNATURE,
	      "another key's signature claiming k1's keyid: refused");
	signed_policy_release(&sp);
	CHECK(open_text(&verifier_app, env_k1, &sp) == SIGN_OK && sp.is_signed && !strcmp(sp.signer, keyid1) &&
		      !strcmp(sp.json, policy_b),
	      "k1's: taken, signer k1");
	signed_policy_release(&sp);
	CHECK(put(&verifier_app, "p", env_k1) == 3, "v3 signed by k1");
	CHECK(store_policy_get_signed_version(verifier_app.store, "p", 3, &json, &signer, &sigtext) == 0 &&
		      !strcmp(signer, keyid1) && !strcmp(json, policy_b) && sigtext[0],
	      "stored with its signer and envelope");
	free(json);
	free(signer);
	free(sigtext);
}

static void test_rollbacks_keep_and_check_signatures(void)
{
	char *json = NULL, *signer = NULL, *sigtext = NULL;
	struct history_rollback hr;
	int64_t v = 0;

	CHECK(policy_history_rollback(&verifier_app, "p", false, 1, "operator", &hr) == HISTORY_UNSIGNED &&
		      strstr(hr.why, "unsigned") && store_policy_version(verifier_app.store, "p", &v) == 0 &&
		      v == 3,
	      "to a version stored unsigned: refused, nothing written (%s)", hr.why);
	CHECK(policy_history_rollback(&verifier_app, "p", false, 2, "operator", &hr) == HISTORY_BAD_SIGNATURE &&
		      store_policy_version(verifier_app.store, "p", &v) == 0 && v == 3,
	      "to one no signer verifies: refused, nothing written (%s)", hr.why);
	CHECK(set_signers(&verifier_app, signers_pem, (EVP_PKEY *[]){ key1, key2 }, 2) == 0, "signers: k1 and k2");
	CHECK(policy_history_rollback(&verifier_app, "p", false, 2, "operator", &hr) == HISTORY_OK &&
		      hr.version == 4 && !strcmp(hr.signer, keyid2),
	      "with k2 a signer again: version 2 back as version 4, signed by k2");
	CHECK(store_policy_get_signed_version(verifier_app.store, "p", 4, &json, &signer, &sigtext) == 0 &&
		      !strcmp(signer, keyid2) && !strcmp(json, policy_b) && strstr(sigtext, keyid2),
	      "version 4 keeps version 2's envelope");
	free(json);
	free(signer);
	free(sigtext);
	CHECK(set_signers(&verifier_app, signers_pem, &key1, 1) == 0 &&
		      policy_history_rollback(&verifier_app, "p", false, 4, "operator", &hr) ==
			      HISTORY_BAD_SIGNATURE,
	      "k2 removed: what it signed is refused on rollback");
	CHECK(policy_history_rollback(&verifier_app, "agent/x", true, 0, "operator", &hr) == HISTORY_OK,
	      "an amendment's version 0 (no approval): allowed");
}

static void test_a_stored_signature_that_is_not_an_envelope_s_rest(void)
{
	struct signed_policy sp;

	CHECK(policy_sign_recheck(&verifier_app, policy_a, "[]", &sp) == SIGN_MALFORMED && !sp.json,
	      "a JSON list: refused (%s)", sp.why);
	signed_policy_release(&sp);
	CHECK(policy_sign_recheck(&verifier_app, policy_a, "{\"payloadType\": 1}", &sp) == SIGN_MALFORMED &&
		      !sp.json,
	      "an object that does not make an envelope: refused (%s)", sp.why);
	signed_policy_release(&sp);
}

int main(void)
{
	char dir[] = "/tmp/test_policy_sign.XXXXXX", uri[300];
	char *b64;

	key1 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	key2 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	pthread_rwlock_init(&verifier_app.reload_lock, NULL);
	policy_cache_init(&verifier_app.policies);
	policy_cache_init(&verifier_app.amendments);
	if (!mkdtemp(dir) || !key1 || !key2 || dsse_keyid(key1, keyid1) || dsse_keyid(key2, keyid2))
		return 1;
	snprintf(signers_pem, sizeof(signers_pem), "%s/signers.pem", dir);
	printf("# backend: %s\n", teststore_backend());
	CHECK(teststore_uri(dir, "state", uri, sizeof(uri)) == 0 && store_open(uri, &verifier_app.store) == 0,
	      "a store");
	env_k1 = dsse_sign(DSSE_TYPE_POLICY, (const uint8_t *)policy_b, strlen(policy_b), key1);
	env_k2 = dsse_sign(DSSE_TYPE_POLICY, (const uint8_t *)policy_b, strlen(policy_b), key2);
	b64 = base64_encode_alloc((const uint8_t *)policy_a, strlen(policy_a));
	env_tampered = edit(env_k1, false, "payload", json_string(b64));
	env_forged = edit(env_k2, true, "keyid", json_string(keyid1));
	CHECK(env_k1 && env_k2 && env_tampered && env_forged, "envelopes made");

	CASE(test_without_signers_as_before_an_envelope_kept_unchecked);
	CASE(test_with_signers_only_what_a_signer_s_key_verifies);
	CASE(test_rollbacks_keep_and_check_signatures);
	CASE(test_a_stored_signature_that_is_not_an_envelope_s_rest);
	free(env_k1);
	free(env_k2);
	free(env_tampered);
	free(env_forged);
	free(b64);
	policy_signers_free(verifier_app.signers);
	EVP_PKEY_free(key1);
	EVP_PKEY_free(key2);
	store_close(verifier_app.store);
	policy_cache_release(&verifier_app.policies);
	policy_cache_release(&verifier_app.amendments);
	unlink(signers_pem);
	for (const char *const *sfx = (const char *const[]){ "", "-wal", "-shm", NULL }; *sfx; sfx++) {
		snprintf(signers_pem, sizeof(signers_pem), "%s/state.db%s", dir, *sfx);
		unlink(signers_pem);
	}
	rmdir(dir);
	return check_finish();
}
