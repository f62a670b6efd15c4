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

int main(void)
{
	char dir[] = "/tmp/test_policy_sign.XXXXXX", uri[300], pem[300];
	char kid1[DSSE_KEYID_LEN + 1], kid2[DSSE_KEYID_LEN + 1], *signer = NULL, *sigtext = NULL;
	char *json = NULL, *env1, *env2, *tampered, *forged, *b64;
	EVP_PKEY *k1 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	EVP_PKEY *k2 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	struct signed_policy sp;
	struct history_rollback hr;
	struct app app;
	int64_t v = 0;

	memset(&app, 0, sizeof(app));
	pthread_rwlock_init(&app.reload_lock, NULL);
	policy_cache_init(&app.policies);
	policy_cache_init(&app.amendments);
	if (!mkdtemp(dir) || !k1 || !k2 || dsse_keyid(k1, kid1) || dsse_keyid(k2, kid2))
		return 1;
	snprintf(pem, sizeof(pem), "%s/signers.pem", dir);
	printf("# backend: %s\n", teststore_backend());
	CHECK(teststore_uri(dir, "state", uri, sizeof(uri)) == 0 && store_open(uri, &app.store) == 0,
	      "a store");
	env1 = dsse_sign(DSSE_TYPE_POLICY, (const uint8_t *)policy_b, strlen(policy_b), k1);
	env2 = dsse_sign(DSSE_TYPE_POLICY, (const uint8_t *)policy_b, strlen(policy_b), k2);
	b64 = base64_encode_alloc((const uint8_t *)policy_a, strlen(policy_a));
	tampered = edit(env1, false, "payload", json_string(b64));
	forged = edit(env2, true, "keyid", json_string(kid1));
	CHECK(env1 && env2 && tampered && forged, "envelopes made");

	CASE_BEGIN("without signers: as before, an envelope kept unchecked");
	CHECK(!policy_sign_required(&app), "no signature required");
	CHECK(open_text(&app, policy_a, &sp) == SIGN_OK && !sp.is_signed && !strcmp(sp.json, policy_a) &&
		      !sp.signature && !sp.signer[0],
	      "a plain policy: itself, unsigned");
	signed_policy_release(&sp);
	CHECK(open_text(&app, env2, &sp) == SIGN_OK && sp.is_signed && !strcmp(sp.json, policy_b) &&
		      sp.len == strlen(policy_b) && !sp.signer[0] && sp.signature &&
		      !strstr(sp.signature, "payload\"") && strstr(sp.signature, "signatures"),
	      "an envelope: its payload, signed, no signer, the envelope kept without its payload");
	signed_policy_release(&sp);
	CHECK(open_text(&app, "not json {", &sp) == SIGN_OK && !sp.is_signed &&
		      !strcmp(sp.json, "not json {"),
	      "a body that is not JSON: left to the policy loader, whose message says why");
	signed_policy_release(&sp);
	CHECK(open_text(&app, "{\"payloadType\": \"x\", \"payload\": \"e30=\", \"signatures\": []}",
			&sp) == SIGN_MALFORMED && strstr(sp.why, "DSSE"),
	      "a malformed envelope is refused (%s)", sp.why);
	signed_policy_release(&sp);
	CHECK(put(&app, "p", policy_a) == 1 && put(&app, "p", env2) == 2,
	      "v1 unsigned, v2 signed by k2 (unchecked)");

	CASE_BEGIN("with signers: only what a signer's key verifies");
	CHECK(set_signers(&app, pem, &k1, 1) == 0 && app.signers->n == 1 &&
		      !strcmp(app.signers->keyids[0], kid1),
	      "signers: k1, its keyid computed");
	CHECK(policy_sign_required(&app), "a signature required");
	CHECK(open_text(&app, policy_a, &sp) == SIGN_UNSIGNED && !sp.json &&
		      strstr(sp.why, "attestctl policy sign"),
	      "a plain policy: refused, with how to sign it");
	signed_policy_release(&sp);
	CHECK(open_text(&app, "not json {", &sp) == SIGN_UNSIGNED, "a body that is not JSON: unsigned");
	signed_policy_release(&sp);
	CHECK(open_text(&app, env2, &sp) == SIGN_BAD_SIGNATURE && !sp.json, "another key's: refused");
	signed_policy_release(&sp);
	CHECK(open_text(&app, tampered, &sp) == SIGN_BAD_SIGNATURE, "a tampered payload: refused");
	signed_policy_release(&sp);
	CHECK(open_text(&app, forged, &sp) == SIGN_BAD_SIGNATURE,
	      "another key's signature claiming k1's keyid: refused");
	signed_policy_release(&sp);
	CHECK(open_text(&app, env1, &sp) == SIGN_OK && sp.is_signed && !strcmp(sp.signer, kid1) &&
		      !strcmp(sp.json, policy_b),
	      "k1's: taken, signer k1");
	signed_policy_release(&sp);
	CHECK(put(&app, "p", env1) == 3, "v3 signed by k1");
	CHECK(store_policy_get_signed_version(app.store, "p", 3, &json, &signer, &sigtext) == 0 &&
		      !strcmp(signer, kid1) && !strcmp(json, policy_b) && sigtext[0],
	      "stored with its signer and envelope");
	free(json);
	free(signer);
	free(sigtext);

	CASE_BEGIN("rollbacks keep and check signatures");
	CHECK(policy_history_rollback(&app, "p", false, 1, "operator", &hr) == HISTORY_UNSIGNED &&
		      strstr(hr.why, "unsigned") && store_policy_version(app.store, "p", &v) == 0 &&
		      v == 3,
	      "to a version stored unsigned: refused, nothing written (%s)", hr.why);
	CHECK(policy_history_rollback(&app, "p", false, 2, "operator", &hr) == HISTORY_BAD_SIGNATURE &&
		      store_policy_version(app.store, "p", &v) == 0 && v == 3,
	      "to one no signer verifies: refused, nothing written (%s)", hr.why);
	CHECK(set_signers(&app, pem, (EVP_PKEY *[]){ k1, k2 }, 2) == 0, "signers: k1 and k2");
	CHECK(policy_history_rollback(&app, "p", false, 2, "operator", &hr) == HISTORY_OK &&
		      hr.version == 4 && !strcmp(hr.signer, kid2),
	      "with k2 a signer again: version 2 back as version 4, signed by k2");
	CHECK(store_policy_get_signed_version(app.store, "p", 4, &json, &signer, &sigtext) == 0 &&
		      !strcmp(signer, kid2) && !strcmp(json, policy_b) && strstr(sigtext, kid2),
	      "version 4 keeps version 2's envelope");
	free(json);
	free(signer);
	free(sigtext);
	CHECK(set_signers(&app, pem, &k1, 1) == 0 &&
		      policy_history_rollback(&app, "p", false, 4, "operator", &hr) ==
			      HISTORY_BAD_SIGNATURE,
	      "k2 removed: what it signed is refused on rollback");
	CHECK(policy_history_rollback(&app, "agent/x", true, 0, "operator", &hr) == HISTORY_OK,
	      "an amendment's version 0 (no approval): allowed");

	CASE_BEGIN("a stored signature that is not an envelope's rest");
	CHECK(policy_sign_recheck(&app, policy_a, "[]", &sp) == SIGN_MALFORMED && !sp.json,
	      "a JSON list: refused (%s)", sp.why);
	signed_policy_release(&sp);
	CHECK(policy_sign_recheck(&app, policy_a, "{\"payloadType\": 1}", &sp) == SIGN_MALFORMED &&
		      !sp.json,
	      "an object that does not make an envelope: refused (%s)", sp.why);
	signed_policy_release(&sp);

	free(env1);
	free(env2);
	free(tampered);
	free(forged);
	free(b64);
	policy_signers_free(app.signers);
	EVP_PKEY_free(k1);
	EVP_PKEY_free(k2);
	store_close(app.store);
	policy_cache_release(&app.policies);
	policy_cache_release(&app.amendments);
	unlink(pem);
	for (const char *const *sfx = (const char *const[]){ "", "-wal", "-shm", NULL }; *sfx; sfx++) {
		snprintf(pem, sizeof(pem), "%s/state.db%s", dir, *sfx);
		unlink(pem);
	}
	rmdir(dir);
	return check_finish();
}
