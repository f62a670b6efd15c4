/*
 * EAR (proto/ear): the AR4SI tiers and vector, ES256 JWTs signed and verified, every way a
 * token is refused (altered claims, header or signature, another key, "alg":"none", a DER
 * signature where JWS wants r || s), and the claims' checks (profile, freshness, nonce).
 */
#include "proto/ear.h"
#include "proto/encoding.h"
#include "tests/unit/check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/ec.h>

static EVP_PKEY *key_a, *key_b;

static void test_tiers(void)
{
	CHECK(ear_tier_of(0) == EAR_TIER_NONE && ear_tier_of(1) == EAR_TIER_NONE &&
		      ear_tier_of(-1) == EAR_TIER_NONE, "0, 1, -1 are none");
	CHECK(ear_tier_of(2) == EAR_TIER_AFFIRMING && ear_tier_of(31) == EAR_TIER_AFFIRMING &&
		      ear_tier_of(-2) == EAR_TIER_AFFIRMING && ear_tier_of(-32) == EAR_TIER_AFFIRMING,
	      "2..31 and -2..-32 affirm");
	CHECK(ear_tier_of(32) == EAR_TIER_WARNING && ear_tier_of(95) == EAR_TIER_WARNING &&
		      ear_tier_of(-33) == EAR_TIER_WARNING && ear_tier_of(-96) == EAR_TIER_WARNING,
	      "32..95 and -33..-96 warn");
	CHECK(ear_tier_of(96) == EAR_TIER_CONTRAINDICATED && ear_tier_of(127) == EAR_TIER_CONTRAINDICATED &&
		      ear_tier_of(-97) == EAR_TIER_CONTRAINDICATED &&
		      ear_tier_of(-128) == EAR_TIER_CONTRAINDICATED,
	      "96..127 and -97..-128 contraindicate");
	CHECK(ear_tier_from_name("warning") == EAR_TIER_WARNING && ear_tier_from_name("bad") < 0,
	      "tier names");
	CHECK(!strcmp(ear_claim_name(EAR_SOURCED_DATA), "sourced-data"), "claim names");
}

static void test_vector(void)
{
	struct ear_vector v = { { 0 } }, back;
	const char *why = NULL;
	json_t *o, *bad;

	CHECK(ear_vector_tier(&v) == EAR_TIER_NONE, "an empty vector is none");
	ear_vector_worsen(&v, EAR_EXECUTABLES, 2);
	ear_vector_worsen(&v, EAR_HARDWARE, 2);
	CHECK(ear_vector_tier(&v) == EAR_TIER_AFFIRMING, "all affirming");
	ear_vector_worsen(&v, EAR_EXECUTABLES, 1);
	CHECK(v.v[EAR_EXECUTABLES] == 1 && ear_vector_tier(&v) == EAR_TIER_NONE,
	      "none is worse than affirming");
	ear_vector_worsen(&v, EAR_EXECUTABLES, 33);
	CHECK(v.v[EAR_EXECUTABLES] == 33 && ear_vector_tier(&v) == EAR_TIER_WARNING, "warning wins");
	ear_vector_worsen(&v, EAR_EXECUTABLES, 2);
	ear_vector_worsen(&v, EAR_EXECUTABLES, 1);
	CHECK(v.v[EAR_EXECUTABLES] == 33, "a better value never replaces a worse one");
	ear_vector_worsen(&v, EAR_EXECUTABLES, 96);
	CHECK(v.v[EAR_EXECUTABLES] == 96 && ear_vector_tier(&v) == EAR_TIER_CONTRAINDICATED,
	      "contraindicated wins");
	o = ear_vector_json(&v);
	CHECK(o && json_object_size(o) == 2 && json_integer_value(json_object_get(o, "hardware")) == 2,
	      "absent claims are left out of the JSON");
	CHECK(o && ear_vector_from_json(o, &back, &why) == 0 && !memcmp(&back, &v, sizeof(v)),
	      "the JSON reads back");
	bad = json_pack("{s:i}", "firmware", 2);
	CHECK(ear_vector_from_json(bad, &back, &why) == -EINVAL, "an unknown claim is refused");
	json_decref(bad);
	bad = json_pack("{s:i}", "hardware", 200);
	CHECK(ear_vector_from_json(bad, &back, &why) == -EINVAL, "a value past 127 is refused");
	json_decref(bad);
	json_decref(o);
}

static json_t *sample_claims(int64_t iat, int64_t exp, const char *nonce)
{
	json_t *c = json_pack("{s:s, s:I, s:{s:s, s:s}, s:{s:{s:s, s:{s:i, s:i}}}}", "eat_profile",
			      EAR_PROFILE, "iat", (json_int_t)iat, "ear.verifier-id", "build",
			      "attest 0.1.0", "developer", "attest", "submods", "tpm-ima",
			      "ear.status", "affirming", "ear.trustworthiness-vector", "hardware", 2,
			      "executables", 2);

	if (c && exp)
		json_object_set_new(c, "exp", json_integer(exp));
	if (c && nonce)
		json_object_set_new(c, "eat_nonce", json_string(nonce));
	return c;
}

static json_t *jwks_of(EVP_PKEY *a, EVP_PKEY *b)
{
	json_t *keys = json_array();

	json_array_append_new(keys, ear_jwk_from_key(a));
	if (b)
		json_array_append_new(keys, ear_jwk_from_key(b));
	return json_pack("{s:o}", "keys", keys);
}

static int verify(const char *token, const json_t *jwks, char *why, size_t cap)
{
	json_t *claims = NULL;
	int ret = ear_jwt_verify(token, strlen(token), jwks, &claims, why, cap);

	json_decref(claims);
	return ret;
}

/* token with part `part` (0 header, 1 claims, 2 signature) replaced by `with`. */
static char *replace_part(const char *token, int part, const char *with)
{
	const char *d1 = strchr(token, '.'), *d2 = strchr(d1 + 1, '.');
	char *out = NULL;

	if (part == 0)
		(void)!asprintf(&out, "%s%s", with, d1);
	else if (part == 1)
		(void)!asprintf(&out, "%.*s.%s%s", (int)(d1 - token), token, with, d2);
	else
		(void)!asprintf(&out, "%.*s.%s", (int)(d2 - token), token, with);
	return out;
}

static void test_sign_verify(void)
{
	json_t *claims = sample_claims(1000, 0, NULL), *got = NULL;
	json_t *jwks = jwks_of(key_a, NULL), *both = jwks_of(key_b, key_a), *only_b = jwks_of(key_b, NULL);
	char *token = ear_jwt_sign(key_a, claims);
	char why[256] = "";
	int ret;

	CHECK(token != NULL, "signs");
	if (!token)
		goto out;
	ret = ear_jwt_verify(token, strlen(token), jwks, &got, why, sizeof(why));
	CHECK(ret == 0 && json_equal(got, claims), "verifies and gives the claims back (%s)", why);
	json_decref(got);
	CHECK(verify(token, both, why, sizeof(why)) == 0, "found by kid among several keys (%s)", why);
	CHECK(verify(token, only_b, why, sizeof(why)) == -ENOKEY, "another key's set: no such kid");
	{
		/* Signature: the raw 64 bytes; a DER signature is what JWS forbids. */
		const char *sig = strrchr(token, '.') + 1;
		size_t n = 0;
		uint8_t *raw = base64url_decode_alloc(sig, strlen(sig), &n);

		CHECK(raw && n == 64, "the signature is r || s, 64 bytes (got %zu)", n);
		free(raw);
	}
out:
	free(token);
	json_decref(claims);
	json_decref(jwks);
	json_decref(both);
	json_decref(only_b);
}

static void test_refused(void)
{
	json_t *claims = sample_claims(1000, 0, NULL), *jwks = jwks_of(key_a, NULL);
	json_t *other = sample_claims(1000, 0, NULL);
	char *token = ear_jwt_sign(key_a, claims), *t, *b, *forged;
	char why[256];

	CHECK(token != NULL, "signs");
	if (!token)
		goto out;
	/* A claim changed: the status of the one submod. */
	json_object_set_new(json_object_get(json_object_get(other, "submods"), "tpm-ima"),
			    "ear.status", json_string("contraindicated"));
	forged = ear_jwt_sign(key_a, other);
	{
		const char *d1 = strchr(forged, '.'), *d2 = strchr(d1 + 1, '.');
		char part[4096];

		snprintf(part, sizeof(part), "%.*s", (int)(d2 - d1 - 1), d1 + 1);
		t = replace_part(token, 1, part);
		CHECK(verify(t, jwks, why, sizeof(why)) == -EBADMSG, "altered claims are refused");
		free(t);
	}
	free(forged);
	/* One character of the signature flipped. */
	t = strdup(token);
	t[strlen(t) - 5] = t[strlen(t) - 5] == 'A' ? 'B' : 'A';
	CHECK(verify(t, jwks, why, sizeof(why)) == -EBADMSG, "an altered signature is refused");
	free(t);
	/* "alg":"none" with no signature, and with the real one. */
	b = base64url_encode_alloc((const uint8_t *)"{\"alg\":\"none\",\"typ\":\"JWT\"}", 26);
	t = replace_part(token, 0, b);
	CHECK(verify(t, jwks, why, sizeof(why)) == -EINVAL && strstr(why, "ES256"),
	      "alg none is refused (%s)", why);
	free(t);
	free(b);
	b = base64url_encode_alloc((const uint8_t *)"{\"alg\":\"HS256\",\"kid\":\"x\"}", 25);
	t = replace_part(token, 0, b);
	CHECK(verify(t, jwks, why, sizeof(why)) == -EINVAL, "HS256 is refused");
	free(t);
	free(b);
	t = replace_part(token, 2, "");
	CHECK(verify(t, jwks, why, sizeof(why)) == -EINVAL, "an empty signature is refused");
	free(t);
	CHECK(verify("a.b", jwks, why, sizeof(why)) == -EINVAL, "two parts are refused");
	CHECK(verify("a.b.c.d", jwks, why, sizeof(why)) == -EINVAL, "four parts are refused");
	CHECK(verify("!!.!!.!!", jwks, why, sizeof(why)) == -EINVAL, "non-base64url is refused");
out:
	free(token);
	json_decref(claims);
	json_decref(other);
	json_decref(jwks);
}

static void test_jwk(void)
{
	json_t *jwk = ear_jwk_from_key(key_a);
	char kid[EAR_KID_LEN + 1];
	const char *why = NULL;
	EVP_PKEY *back;

	CHECK(jwk && ear_key_kid(key_a, kid) == 0 &&
		      !strcmp(json_string_value(json_object_get(jwk, "kid")), kid) &&
		      strlen(kid) == EAR_KID_LEN,
	      "the kid is the key's thumbprint");
	back = ear_key_from_jwk(jwk, &why);
	CHECK(back && EVP_PKEY_eq(back, key_a) == 1, "a JWK gives its key back");
	EVP_PKEY_free(back);
	/* Off the curve: y changed. */
	json_object_set_new(jwk, "y", json_string("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE"));
	back = ear_key_from_jwk(jwk, &why);
	CHECK(!back, "a point off the curve is refused");
	EVP_PKEY_free(back);
	json_object_set_new(jwk, "crv", json_string("P-384"));
	CHECK(!ear_key_from_jwk(jwk, &why), "another curve is refused");
	json_decref(jwk);
}

static void test_claims_check(void)
{
	json_t *c = sample_claims(1000, 1100, "bm9uY2UtMTIzNDU2");
	char why[256];

	CHECK(ear_claims_check(c, 1050, 0, 0, NULL, why, sizeof(why)) == 0, "fresh: accepted (%s)",
	      why);
	CHECK(ear_claims_check(c, 1050, 0, 0, "bm9uY2UtMTIzNDU2", why, sizeof(why)) == 0,
	      "its nonce: accepted");
	CHECK(ear_claims_check(c, 1050, 0, 0, "b3RoZXItbm9uY2U", why, sizeof(why)) == -EPERM,
	      "another nonce: refused");
	CHECK(ear_claims_check(c, 1100, 0, 0, NULL, why, sizeof(why)) == -ESTALE, "at exp: stale");
	CHECK(ear_claims_check(c, 1050, 0, 30, NULL, why, sizeof(why)) == -ESTALE,
	      "older than max_age: stale");
	CHECK(ear_claims_check(c, 900, 60, 0, NULL, why, sizeof(why)) == -ESTALE,
	      "issued in the future beyond the skew: refused");
	json_object_del(c, "eat_nonce");
	CHECK(ear_claims_check(c, 1050, 0, 0, "bm9uY2UtMTIzNDU2", why, sizeof(why)) == -EPERM,
	      "no nonce where one is expected: refused");
	json_object_set_new(c, "eat_profile", json_string("tag:example.org,2024:other"));
	CHECK(ear_claims_check(c, 1050, 0, 0, NULL, why, sizeof(why)) == -EINVAL,
	      "another profile: refused");
	json_object_set_new(c, "eat_profile", json_string(EAR_PROFILE));
	json_object_set_new(json_object_get(json_object_get(c, "submods"), "tpm-ima"), "ear.status",
			    json_string("fine"));
	CHECK(ear_claims_check(c, 1050, 0, 0, NULL, why, sizeof(why)) == -EINVAL,
	      "a status that names no tier: refused");
	json_decref(c);
	CHECK(ear_nonce_valid("bm9uY2UtMTIzNDU2") && !ear_nonce_valid("short") &&
		      !ear_nonce_valid("has space in it") && !ear_nonce_valid("with+plus/slash"),
	      "nonce alphabet and length");
}

int main(void)
{
	key_a = EVP_EC_gen(SN_X9_62_prime256v1);
	key_b = EVP_EC_gen(SN_X9_62_prime256v1);
	CHECK(key_a && key_b, "P-256 keys");
	CASE(test_tiers);
	CASE(test_vector);
	CASE(test_jwk);
	CASE(test_sign_verify);
	CASE(test_refused);
	CASE(test_claims_check);
	EVP_PKEY_free(key_a);
	EVP_PKEY_free(key_b);
	return check_finish();
}
