/*
 * DSSE envelopes of signed policies (proto/dsse.h): the PAE of the spec's example, signing and
 * verifying, and every way an envelope can be wrong: a tampered payload, another key, another
 * payload type, bad base64, missing or extra members, and every length at and past its cap.
 */
#include "proto/dsse.h"
#include "tests/unit/check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/pem.h>

#include "proto/encoding.h"

static const char policy_text[] = "{\"digests\": {\"/usr/bin/true\": [\"sha256:00\"]}}";

static EVP_PKEY *p256(void)
{
	return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

/* An envelope's text with member `key` of the root replaced by `v` (NULL: removed). */
static char *with_member(const char *env, const char *key, json_t *v)
{
	json_t *o = json_loads(env, 0, NULL);
	char *s;

	if (v)
		json_object_set_new(o, key, v);
	else
		json_object_del(o, key);
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

/* The same with signature 0's member `key` replaced by `v` (NULL: removed). */
static char *with_sig_member(const char *env, const char *key, json_t *v)
{
	json_t *o = json_loads(env, 0, NULL);
	json_t *sig = json_array_get(json_object_get(o, "signatures"), 0);
	char *s;

	if (v)
		json_object_set_new(sig, key, v);
	else
		json_object_del(sig, key);
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

static json_t *b64(const void *p, size_t n)
{
	char *s = base64_encode_alloc(p, n);
	json_t *j = json_string(s);

	free(s);
	return j;
}

static enum dsse_status parse(const char *text, size_t max, const char **why)
{
	struct dsse_envelope e;
	enum dsse_status st = dsse_parse(text, strlen(text), max, &e, why);

	dsse_envelope_release(&e);
	return st;
}

/* parse + verify against one key. */
static enum dsse_status check(const char *text, EVP_PKEY *key)
{
	struct dsse_envelope e;
	size_t signer = 99;
	enum dsse_status st = dsse_parse(text, strlen(text), LIMIT_POLICY_BYTES, &e, NULL);

	if (st == DSSE_OK)
		st = dsse_verify(&e, &key, 1, &signer);
	dsse_envelope_release(&e);
	return st;
}

static void test_pae(void)
{
	/* DSSE protocol.md's test vector. */
	static const char want[] = "DSSEv1 29 http://example.com/HelloWorld 11 hello world";
	uint8_t *pae = NULL;
	size_t n = 0;

	CHECK(dsse_pae("http://example.com/HelloWorld", (const uint8_t *)"hello world", 11, &pae,
		       &n) == 0 && n == strlen(want) && !memcmp(pae, want, n), "the spec's PAE");
	free(pae);
	CHECK(dsse_pae("t", (const uint8_t *)"", 0, &pae, &n) == 0 && n == 13 &&
		      !memcmp(pae, "DSSEv1 1 t 0 ", 13), "an empty body");
	free(pae);
}

/* The keys every case signs and checks with, made once in main(). */
static EVP_PKEY *signer_key, *other_key;

static void test_roundtrip(void)
{
	EVP_PKEY *key = signer_key;
	EVP_PKEY *other = other_key;
	char *env = dsse_sign(DSSE_TYPE_POLICY, (const uint8_t *)policy_text, strlen(policy_text), key);
	char keyid[DSSE_KEYID_LEN + 1];
	struct dsse_envelope e;
	EVP_PKEY *both[2] = {other, key};
	size_t signer = 99;

	CHECK(env != NULL, "signed");
	if (!env)
		return;
	CHECK(dsse_parse(env, strlen(env), LIMIT_POLICY_BYTES, &e, NULL) == DSSE_OK, "parses");
	CHECK(e.payload_len == strlen(policy_text) && !memcmp(e.payload, policy_text, e.payload_len) &&
		      e.payload[e.payload_len] == 0, "the exact payload bytes, NUL after");
	CHECK(!strcmp(e.payload_type, DSSE_TYPE_POLICY) && e.nsigs == 1, "type and one signature");
	CHECK(dsse_keyid(key, keyid) == 0 && !strcmp(e.sigs[0].keyid, keyid) && strlen(keyid) == 64,
	      "keyid is the key's");
	CHECK(dsse_verify(&e, both, 2, &signer) == DSSE_OK && signer == 1, "the second key signed");
	CHECK(dsse_verify(&e, both, 1, &signer) == DSSE_UNSIGNED, "another key alone: unsigned");
	CHECK(dsse_verify(&e, both, 0, &signer) == DSSE_UNSIGNED, "no keys: unsigned");
	dsse_envelope_release(&e);
	dsse_envelope_release(&e); /* idempotent */
	free(env);

	/* Keylime's payload type is a policy's too. */
	env = dsse_sign(DSSE_TYPE_KEYLIME, (const uint8_t *)policy_text, strlen(policy_text), key);
	CHECK(env && check(env, key) == DSSE_OK, "Keylime's payload type verifies");
	free(env);
}

/* A keyid is not authenticated: a lying keyid does not stop a good signature, nor help a bad one. */
static void test_keyid_unauthenticated(void)
{
	EVP_PKEY *key = signer_key;
	EVP_PKEY *other = other_key;
	char *env = dsse_sign(DSSE_TYPE_POLICY, (const uint8_t *)policy_text, strlen(policy_text), key);
	char *lie = with_sig_member(env, "keyid", json_string("not-the-key"));
	char *none = with_sig_member(env, "keyid", NULL);

	CHECK(check(lie, key) == DSSE_OK, "a wrong keyid: still the key's signature");
	CHECK(check(none, key) == DSSE_OK, "no keyid: verifies");
	CHECK(check(lie, other) == DSSE_UNSIGNED, "other key: unsigned whatever the keyid");
	free(env);
	free(lie);
	free(none);
}

static void test_tampered(void)
{
	EVP_PKEY *key = signer_key;
	EVP_PKEY *other = other_key;
	char *env = dsse_sign(DSSE_TYPE_POLICY, (const uint8_t *)policy_text, strlen(policy_text), key);
	char changed[sizeof(policy_text)];
	char *t1, *t2, *t3, *t4;
	json_t *o = json_loads(env, 0, NULL);
	const char *sig = json_string_value(
		json_object_get(json_array_get(json_object_get(o, "signatures"), 0), "sig"));
	size_t n = 0;
	uint8_t *raw = base64_decode_alloc(sig, strlen(sig), &n);

	memcpy(changed, policy_text, sizeof(changed));
	changed[strlen(changed) - 4] = '1'; /* sha256:01 */
	t1 = with_member(env, "payload", b64(changed, strlen(changed)));
	t2 = with_member(env, "payload", b64(policy_text, strlen(policy_text) - 1));
	t3 = with_member(env, "payloadType", json_string(DSSE_TYPE_KEYLIME));
	raw[n - 1] ^= 1;
	t4 = with_sig_member(env, "sig", b64(raw, n));
	CHECK(check(env, key) == DSSE_OK, "the untouched envelope verifies");
	CHECK(check(t1, key) == DSSE_UNSIGNED, "one byte of the payload changed: unsigned");
	CHECK(check(t2, key) == DSSE_MALFORMED || check(t2, key) == DSSE_UNSIGNED,
	      "payload cut short: refused");
	CHECK(check(t3, key) == DSSE_UNSIGNED, "the other known type: the type is signed too");
	CHECK(check(t4, key) == DSSE_UNSIGNED, "a bit of the signature flipped: unsigned");
	CHECK(check(env, other) == DSSE_UNSIGNED, "a key that did not sign: unsigned");
	free(raw);
	json_decref(o);
	free(env);
	free(t1);
	free(t2);
	free(t3);
	free(t4);
}

static void test_types(void)
{
	EVP_PKEY *key = signer_key;
	char *env = dsse_sign(DSSE_TYPE_POLICY, (const uint8_t *)policy_text, strlen(policy_text), key);
	char *t1 = with_member(env, "payloadType", json_string("application/vnd.in-toto+json"));
	char *t2 = with_member(env, "payloadType", json_integer(1));
	char *t3 = with_member(env, "payloadType", json_string(""));
	char *t4 = dsse_sign("text/plain", (const uint8_t *)"x", 1, key);
	const char *why = NULL;

	CHECK(parse(t1, LIMIT_POLICY_BYTES, &why) == DSSE_BAD_TYPE && why, "in-toto's type refused");
	CHECK(parse(t2, LIMIT_POLICY_BYTES, &why) == DSSE_MALFORMED, "a number as type refused");
	CHECK(parse(t3, LIMIT_POLICY_BYTES, &why) == DSSE_BAD_TYPE, "an empty type refused");
	CHECK(t4 && parse(t4, LIMIT_POLICY_BYTES, &why) == DSSE_BAD_TYPE,
	      "signed as another type: refused before any key is tried");
	free(env);
	free(t1);
	free(t2);
	free(t3);
	free(t4);
}

static void test_base64(void)
{
	EVP_PKEY *key = signer_key;
	static const char *bad[] = {"e30", "e30=\n", " e30=", "e3-=", "e3_=", "!!!!", "", "e30=e30="};
	char *env = dsse_sign(DSSE_TYPE_POLICY, (const uint8_t *)policy_text, strlen(policy_text), key);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *p = with_member(env, "payload", json_string(bad[i]));
		char *s = with_sig_member(env, "sig", json_string(bad[i]));

		CHECK(parse(p, LIMIT_POLICY_BYTES, NULL) == DSSE_MALFORMED, "payload \"%s\" refused",
		      bad[i]);
		CHECK(parse(s, LIMIT_POLICY_BYTES, NULL) == DSSE_MALFORMED, "sig \"%s\" refused", bad[i]);
		free(p);
		free(s);
	}
	{ /* a payload with a NUL byte is not a policy text */
		char *p = with_member(env, "payload", b64("{}\0{}", 5));

		CHECK(parse(p, LIMIT_POLICY_BYTES, NULL) == DSSE_MALFORMED, "NUL in payload refused");
		free(p);
	}
	free(env);
}

static void test_members(void)
{
	EVP_PKEY *key = signer_key;
	char *env = dsse_sign(DSSE_TYPE_POLICY, (const uint8_t *)policy_text, strlen(policy_text), key);
	const char *roots[] = {"payloadType", "payload", "signatures"};
	const char *why = NULL;
	char *t;

	for (size_t i = 0; i < 3; i++) {
		t = with_member(env, roots[i], NULL);
		CHECK(parse(t, LIMIT_POLICY_BYTES, &why) == DSSE_MALFORMED, "without %s: malformed",
		      roots[i]);
		free(t);
		t = with_member(env, roots[i], json_null());
		CHECK(parse(t, LIMIT_POLICY_BYTES, &why) == DSSE_MALFORMED, "%s null: malformed",
		      roots[i]);
		free(t);
	}
	t = with_member(env, "extra", json_true());
	CHECK(parse(t, LIMIT_POLICY_BYTES, &why) == DSSE_MALFORMED, "an extra member refused");
	free(t);
	t = with_member(env, "signatures", json_array());
	CHECK(parse(t, LIMIT_POLICY_BYTES, &why) == DSSE_MALFORMED, "no signatures refused");
	free(t);
	t = with_member(env, "signatures", json_object());
	CHECK(parse(t, LIMIT_POLICY_BYTES, &why) == DSSE_MALFORMED, "signatures not a list refused");
	free(t);
	t = with_member(env, "signatures", json_pack("[s]", "sig"));
	CHECK(parse(t, LIMIT_POLICY_BYTES, &why) == DSSE_MALFORMED, "a signature not an object");
	free(t);
	t = with_sig_member(env, "sig", NULL);
	CHECK(parse(t, LIMIT_POLICY_BYTES, &why) == DSSE_MALFORMED, "a signature without sig");
	free(t);
	t = with_sig_member(env, "cert", json_string("x"));
	CHECK(parse(t, LIMIT_POLICY_BYTES, &why) == DSSE_MALFORMED, "an extra member in a signature");
	free(t);
	t = with_sig_member(env, "keyid", json_integer(7));
	CHECK(parse(t, LIMIT_POLICY_BYTES, &why) == DSSE_MALFORMED, "a keyid not a string");
	free(t);
	t = with_sig_member(env, "keyid", json_stringn("a\0b", 3));
	CHECK(parse(t, LIMIT_POLICY_BYTES, &why) == DSSE_MALFORMED, "a keyid with a NUL");
	free(t);
	{ /* the same member twice */
		json_t *o = json_loads(env, 0, NULL);
		char *dup = malloc(strlen(env) + 64);

		snprintf(dup, strlen(env) + 64, "{\"payload\":\"e30=\",%s", env + 1);
		CHECK(parse(dup, LIMIT_POLICY_BYTES, &why) == DSSE_MALFORMED, "a member twice");
		free(dup);
		json_decref(o);
	}
	CHECK(parse("{}", LIMIT_POLICY_BYTES, &why) == DSSE_NOT_ENVELOPE, "{} is no envelope");
	CHECK(parse(policy_text, LIMIT_POLICY_BYTES, &why) == DSSE_NOT_ENVELOPE,
	      "a policy is no envelope");
	CHECK(parse("[]", LIMIT_POLICY_BYTES, &why) == DSSE_MALFORMED, "a list refused");
	CHECK(parse("{\"payload\":", LIMIT_POLICY_BYTES, &why) == DSSE_MALFORMED, "cut JSON refused");
	CHECK(parse("", LIMIT_POLICY_BYTES, &why) == DSSE_MALFORMED, "nothing refused");
	free(env);
}

/* Every cap, at its value (accepted) and one past (refused). */
static void test_lengths(void)
{
	EVP_PKEY *key = signer_key;
	char *env = dsse_sign(DSSE_TYPE_POLICY, (const uint8_t *)policy_text, strlen(policy_text), key);
	size_t plen = strlen(policy_text);
	char keyid[LIMIT_DSSE_KEYID + 2];
	uint8_t sig[LIMIT_DSSE_SIG + 1];
	json_t *o, *sigs;
	char *t;

	CHECK(parse(env, plen, NULL) == DSSE_OK, "payload of exactly max bytes accepted");
	CHECK(parse(env, plen - 1, NULL) == DSSE_MALFORMED, "payload of max + 1 bytes refused");
	CHECK(parse(env, 1, NULL) == DSSE_MALFORMED, "a long payload against a small cap refused");

	memset(keyid, 'k', sizeof(keyid));
	keyid[LIMIT_DSSE_KEYID] = 0;
	t = with_sig_member(env, "keyid", json_string(keyid));
	CHECK(check(t, key) == DSSE_OK, "keyid of " LIMIT_STR(LIMIT_DSSE_KEYID) " bytes accepted");
	free(t);
	keyid[LIMIT_DSSE_KEYID] = 'k';
	keyid[LIMIT_DSSE_KEYID + 1] = 0;
	t = with_sig_member(env, "keyid", json_string(keyid));
	CHECK(parse(t, LIMIT_POLICY_BYTES, NULL) == DSSE_MALFORMED, "keyid one byte longer refused");
	free(t);

	memset(sig, 0x30, sizeof(sig));
	t = with_sig_member(env, "sig", b64(sig, LIMIT_DSSE_SIG));
	CHECK(check(t, key) == DSSE_UNSIGNED, "sig of " LIMIT_STR(LIMIT_DSSE_SIG) " bytes parses");
	free(t);
	t = with_sig_member(env, "sig", b64(sig, LIMIT_DSSE_SIG + 1));
	CHECK(parse(t, LIMIT_POLICY_BYTES, NULL) == DSSE_MALFORMED, "sig one byte longer refused");
	free(t);

	/* LIMIT_DSSE_SIGNATURES signatures, the good one last: found; one more: refused. */
	o = json_loads(env, 0, NULL);
	sigs = json_object_get(o, "signatures");
	json_t *good = json_incref(json_array_get(sigs, 0));
	json_array_clear(sigs);
	for (int i = 0; i < LIMIT_DSSE_SIGNATURES - 1; i++)
		json_array_append_new(sigs, json_pack("{s:o}", "sig", b64(sig, 70)));
	json_array_append_new(sigs, good);
	t = json_dumps(o, JSON_COMPACT);
	CHECK(check(t, key) == DSSE_OK, LIMIT_STR(LIMIT_DSSE_SIGNATURES) " signatures, the last good");
	free(t);
	json_array_insert_new(sigs, 0, json_pack("{s:o}", "sig", b64(sig, 70)));
	t = json_dumps(o, JSON_COMPACT);
	CHECK(parse(t, LIMIT_POLICY_BYTES, NULL) == DSSE_MALFORMED, "one signature more refused");
	free(t);
	json_decref(o);

	t = with_member(env, "payloadType", json_string("application/vnd.attest.policy+json-and-more"
							"-and-more-and-more-and-more-and-more-and-more"
							"-and-more-and-more-and-more-and-more-and-more"));
	CHECK(parse(t, LIMIT_POLICY_BYTES, NULL) != DSSE_OK, "a long type refused");
	free(t);
	free(env);
}

static char *pem_of(EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p = NULL, *s;
	long n;

	PEM_write_bio_PUBKEY(b, k);
	n = BIO_get_mem_data(b, &p);
	s = strndup(p, (size_t)n);
	BIO_free(b);
	return s;
}

static void test_keys_parse(void)
{
	EVP_PKEY *key = signer_key;
	EVP_PKEY *other = other_key;
	char *a = pem_of(key), *b = pem_of(other), both[4096], big[LIMIT_POLICY_SIGNERS_BYTES / 8];
	EVP_PKEY *rsa = EVP_RSA_gen(2048), *p384 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-384");
	char *r = pem_of(rsa), *e384 = pem_of(p384);
	EVP_PKEY **keys = NULL;
	const char *why = NULL;
	size_t n = 0, signer = 9, len;
	struct dsse_envelope e;
	char *env;

	snprintf(both, sizeof(both), "# release key\n%sand the backup key\n%s", a, b);
	CHECK(dsse_keys_parse(both, strlen(both), &keys, &n, &why) == 0 && n == 2, "two keys");
	env = dsse_sign(DSSE_TYPE_POLICY, (const uint8_t *)"{}", 2, other);
	CHECK(env && dsse_parse(env, strlen(env), 16, &e, NULL) == DSSE_OK &&
		      dsse_verify(&e, keys, n, &signer) == DSSE_OK && signer == 1, "the second signed");
	dsse_envelope_release(&e);
	free(env);
	for (size_t i = 0; i < n; i++)
		EVP_PKEY_free(keys[i]);
	free(keys);

	snprintf(both, sizeof(both), "%s%s", a, r);
	CHECK(dsse_keys_parse(both, strlen(both), &keys, &n, &why) == -EINVAL && !keys,
	      "an RSA key refused");
	CHECK(dsse_keys_parse(e384, strlen(e384), &keys, &n, &why) == -EINVAL, "a P-384 key refused");
	CHECK(dsse_keys_parse("", 0, &keys, &n, &why) == -EINVAL, "empty refused");
	CHECK(dsse_keys_parse("no pem\n", 7, &keys, &n, &why) == -EINVAL, "no block refused");
	snprintf(both, sizeof(both), "%s-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
		 a);
	CHECK(dsse_keys_parse(both, strlen(both), &keys, &n, &why) == -EINVAL,
	      "a block that does not decode refused");
	/* LIMIT_POLICY_SIGNERS keys accepted, one more refused */
	len = 0;
	for (int i = 0; i <= LIMIT_POLICY_SIGNERS; i++) {
		if (i == LIMIT_POLICY_SIGNERS) {
			CHECK(dsse_keys_parse(big, len, &keys, &n, &why) == 0 &&
				      n == LIMIT_POLICY_SIGNERS, LIMIT_STR(LIMIT_POLICY_SIGNERS) " keys");
			for (size_t k = 0; k < n; k++)
				EVP_PKEY_free(keys[k]);
			free(keys);
		}
		memcpy(big + len, a, strlen(a));
		len += strlen(a);
	}
	CHECK(dsse_keys_parse(big, len, &keys, &n, &why) == -EINVAL, "one key more refused");
	CHECK(dsse_keys_parse(big, LIMIT_POLICY_SIGNERS_BYTES + 1, &keys, &n, &why) == -EINVAL,
	      "a file past its cap refused before it is read");
	free(a);
	free(b);
	free(r);
	free(e384);
	EVP_PKEY_free(rsa);
	EVP_PKEY_free(p384);
}

int main(void)
{
	signer_key = p256();
	other_key = p256();

	CASE(test_pae);
	CASE(test_roundtrip);
	CASE(test_keyid_unauthenticated);
	CASE(test_tampered);
	CASE(test_types);
	CASE(test_base64);
	CASE(test_members);
	CASE(test_lengths);
	CASE(test_keys_parse);
	EVP_PKEY_free(signer_key);
	EVP_PKEY_free(other_key);
	return check_finish();
}
