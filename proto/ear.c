/* EAR: the AR4SI vector, ES256 JWTs and JWKs (ear.h). */
#include "proto/ear.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/param_build.h>
#include <openssl/sha.h>

#include "proto/encoding.h"

#define P256_COORD 32
#define ES256_SIG 64

static const char *const claim_names[EAR_CLAIM_COUNT] = {
#define EAR_CLAIM_NAME(id, name) [EAR_##id] = name,
	EAR_CLAIMS(EAR_CLAIM_NAME)
#undef EAR_CLAIM_NAME
};

static const char *const tier_names[] = {
	[EAR_TIER_NONE] = "none",
	[EAR_TIER_AFFIRMING] = "affirming",
	[EAR_TIER_WARNING] = "warning",
	[EAR_TIER_CONTRAINDICATED] = "contraindicated",
};

const char *ear_claim_name(enum ear_claim c)
{
	return (unsigned)c < EAR_CLAIM_COUNT ? claim_names[c] : "?";
}

enum ear_tier ear_tier_of(int v)
{
	if (v >= -1 && v <= 1)
		return EAR_TIER_NONE;
	if ((v >= 2 && v <= 31) || (v <= -2 && v >= -32))
		return EAR_TIER_AFFIRMING;
	if ((v >= 32 && v <= 95) || (v <= -33 && v >= -96))
		return EAR_TIER_WARNING;
	return EAR_TIER_CONTRAINDICATED;
}

const char *ear_tier_name(enum ear_tier t)
{
	return (unsigned)t <= EAR_TIER_CONTRAINDICATED ? tier_names[t] : "?";
}

int ear_tier_from_name(const char *s)
{
	for (unsigned t = 0; s && t <= EAR_TIER_CONTRAINDICATED; t++)
		if (!strcmp(s, tier_names[t]))
			return (int)t;
	return -1;
}

/* Order of badness: affirming < none < warning < contraindicated. */
static int badness(int v)
{
	switch (ear_tier_of(v)) {
	case EAR_TIER_AFFIRMING:
		return 0;
	case EAR_TIER_NONE:
		return 1;
	case EAR_TIER_WARNING:
		return 2;
	case EAR_TIER_CONTRAINDICATED:
		return 3;
	}
	return 3;
}

void ear_vector_worsen(struct ear_vector *vec, enum ear_claim c, int value)
{
	int cur;

	if ((unsigned)c >= EAR_CLAIM_COUNT || value < -128 || value > 127)
		return;
	cur = vec->v[c];
	/* An absent claim (0) takes any value; a present one only a worse one. */
	if (cur == 0 || badness(value) > badness(cur))
		vec->v[c] = (int8_t)value;
}

enum ear_tier ear_vector_tier(const struct ear_vector *vec)
{
	static const enum ear_tier of_badness[] = { EAR_TIER_AFFIRMING, EAR_TIER_NONE,
						    EAR_TIER_WARNING, EAR_TIER_CONTRAINDICATED };
	int worst = -1;

	for (unsigned c = 0; c < EAR_CLAIM_COUNT; c++)
		if (vec->v[c] && badness(vec->v[c]) > worst)
			worst = badness(vec->v[c]);
	return worst < 0 ? EAR_TIER_NONE : of_badness[worst];
}

json_t *ear_vector_json(const struct ear_vector *vec)
{
	json_t *o = json_object();

	for (unsigned c = 0; o && c < EAR_CLAIM_COUNT; c++)
		if (vec->v[c] && json_object_set_new(o, claim_names[c], json_integer(vec->v[c]))) {
			json_decref(o);
			return NULL;
		}
	return o;
}

int ear_vector_from_json(const json_t *o, struct ear_vector *vec, const char **why)
{
	const char *key;
	json_t *val;

	memset(vec, 0, sizeof(*vec));
	if (!json_is_object(o)) {
		*why = "the trustworthiness vector is not an object";
		return -EINVAL;
	}
	json_object_foreach((json_t *)o, key, val) {
		unsigned c;
		json_int_t v;

		for (c = 0; c < EAR_CLAIM_COUNT; c++)
			if (!strcmp(key, claim_names[c]))
				break;
		if (c == EAR_CLAIM_COUNT) {
			*why = "the trustworthiness vector has a member that is no AR4SI claim";
			return -EINVAL;
		}
		if (!json_is_integer(val) || (v = json_integer_value(val)) < -128 || v > 127) {
			*why = "a trustworthiness claim is not an integer in -128..127";
			return -EINVAL;
		}
		vec->v[c] = (int8_t)v;
	}
	return 0;
}

/* The key's public point as 32-byte x and y; 0 or -EINVAL (not an uncompressed P-256 point). */
static int key_point(EVP_PKEY *key, uint8_t x[P256_COORD], uint8_t y[P256_COORD])
{
	uint8_t pt[1 + 2 * P256_COORD];
	char group[32];
	size_t n = 0;

	if (!key || EVP_PKEY_get_base_id(key) != EVP_PKEY_EC ||
	    !EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group),
					    NULL) ||
	    strcmp(group, SN_X9_62_prime256v1) ||
	    !EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, pt, sizeof(pt),
					     &n) ||
	    n != sizeof(pt) || pt[0] != 0x04)
		return -EINVAL;
	memcpy(x, pt + 1, P256_COORD);
	memcpy(y, pt + 1 + P256_COORD, P256_COORD);
	return 0;
}

int ear_key_kid(EVP_PKEY *key, char kid[EAR_KID_LEN + 1])
{
	uint8_t x[P256_COORD], y[P256_COORD], digest[SHA256_DIGEST_LENGTH];
	char *bx = NULL, *by = NULL, *b = NULL, *canon = NULL;
	int ret = -EINVAL;

	if (key_point(key, x, y))
		return -EINVAL;
	bx = base64url_encode_alloc(x, sizeof(x));
	by = base64url_encode_alloc(y, sizeof(y));
	/* RFC 7638: the required members in lexicographic order, no whitespace. */
	if (!bx || !by ||
	    asprintf(&canon, "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"%s\",\"y\":\"%s\"}", bx, by) < 0) {
		canon = NULL;
		goto out;
	}
	SHA256((const unsigned char *)canon, strlen(canon), digest);
	b = base64url_encode_alloc(digest, sizeof(digest));
	if (!b || strlen(b) != EAR_KID_LEN)
		goto out;
	memcpy(kid, b, EAR_KID_LEN + 1);
	ret = 0;
out:
	free(bx);
	free(by);
	free(b);
	free(canon);
	return ret;
}

json_t *ear_jwk_from_key(EVP_PKEY *key)
{
	uint8_t x[P256_COORD], y[P256_COORD];
	char kid[EAR_KID_LEN + 1];
	char *bx, *by;
	json_t *o = NULL;

	if (key_point(key, x, y) || ear_key_kid(key, kid))
		return NULL;
	bx = base64url_encode_alloc(x, sizeof(x));
	by = base64url_encode_alloc(y, sizeof(y));
	if (bx && by)
		o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "kty", "EC", "crv", "P-256", "x",
			      bx, "y", by, "kid", kid, "alg", "ES256", "use", "sig");
	free(bx);
	free(by);
	return o;
}

/* A base64url member of exactly `want` bytes into out; false if missing or another length. */
static bool jwk_coord(const json_t *jwk, const char *name, uint8_t *out, size_t want)
{
	const char *s = json_string_value(json_object_get(jwk, name));
	uint8_t *raw;
	size_t n = 0;
	bool ok;

	if (!s)
		return false;
	raw = base64url_decode_alloc(s, strlen(s), &n);
	ok = raw && n == want;
	if (ok)
		memcpy(out, raw, want);
	free(raw);
	return ok;
}

EVP_PKEY *ear_key_from_jwk(const json_t *jwk, const char **why)
{
	uint8_t pt[1 + 2 * P256_COORD];
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	EVP_PKEY *key = NULL;
	const char *alg;

	if (!json_is_object(jwk) || !json_is_string(json_object_get(jwk, "kty")) ||
	    strcmp(json_string_value(json_object_get(jwk, "kty")), "EC") ||
	    !json_is_string(json_object_get(jwk, "crv")) ||
	    strcmp(json_string_value(json_object_get(jwk, "crv")), "P-256")) {
		*why = "the key is not an EC P-256 JWK";
		return NULL;
	}
	alg = json_string_value(json_object_get(jwk, "alg"));
	if (json_object_get(jwk, "alg") && (!alg || strcmp(alg, "ES256"))) {
		*why = "the key is for another algorithm than ES256";
		return NULL;
	}
	pt[0] = 0x04;
	if (!jwk_coord(jwk, "x", pt + 1, P256_COORD) ||
	    !jwk_coord(jwk, "y", pt + 1 + P256_COORD, P256_COORD)) {
		*why = "the key's x or y is not 32 bytes of base64url";
		return NULL;
	}
	bld = OSSL_PARAM_BLD_new();
	if (!bld ||
	    !OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, SN_X9_62_prime256v1, 0) ||
	    !OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pt, sizeof(pt)) ||
	    !(params = OSSL_PARAM_BLD_to_param(bld)) ||
	    !(ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL)) || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
		*why = "the key's point is not on P-256";
		EVP_PKEY_free(key);
		key = NULL;
	}
	/* fromdata does not always check the point: do, so a bad JWK is refused here. */
	if (key) {
		EVP_PKEY_CTX *chk = EVP_PKEY_CTX_new(key, NULL);

		if (!chk || EVP_PKEY_public_check(chk) != 1) {
			*why = "the key's point is not on P-256";
			EVP_PKEY_free(key);
			key = NULL;
		}
		EVP_PKEY_CTX_free(chk);
	}
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	EVP_PKEY_CTX_free(ctx);
	return key;
}

/* Compact JSON text of v, base64url; the caller frees. */
static char *json_b64url(const json_t *v)
{
	char *text = json_dumps(v, JSON_COMPACT);
	char *b;

	if (!text)
		return NULL;
	b = base64url_encode_alloc((const uint8_t *)text, strlen(text));
	free(text);
	return b;
}

char *ear_jwt_sign(EVP_PKEY *key, const json_t *claims)
{
	uint8_t der[128], raw[ES256_SIG];
	const unsigned char *p = der;
	char kid[EAR_KID_LEN + 1];
	char *h = NULL, *c = NULL, *s = NULL, *input = NULL, *token = NULL;
	EVP_MD_CTX *md = NULL;
	ECDSA_SIG *sig = NULL;
	json_t *header = NULL;
	size_t derlen = sizeof(der);

	if (!json_is_object(claims) || ear_key_kid(key, kid))
		return NULL;
	header = json_pack("{s:s, s:s, s:s}", "alg", "ES256", "typ", "JWT", "kid", kid);
	h = header ? json_b64url(header) : NULL;
	c = json_b64url(claims);
	if (!h || !c || asprintf(&input, "%s.%s", h, c) < 0) {
		input = NULL;
		goto out;
	}
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
	    EVP_DigestSign(md, der, &derlen, (const unsigned char *)input, strlen(input)) != 1)
		goto out;
	/* JWS wants r || s, each left-padded to 32 bytes, where OpenSSL writes DER. */
	sig = d2i_ECDSA_SIG(NULL, &p, (long)derlen);
	if (!sig || BN_bn2binpad(ECDSA_SIG_get0_r(sig), raw, P256_COORD) != P256_COORD ||
	    BN_bn2binpad(ECDSA_SIG_get0_s(sig), raw + P256_COORD, P256_COORD) != P256_COORD)
		goto out;
	s = base64url_encode_alloc(raw, sizeof(raw));
	if (!s || asprintf(&token, "%s.%s", input, s) < 0)
		token = NULL;
out:
	ECDSA_SIG_free(sig);
	EVP_MD_CTX_free(md);
	json_decref(header);
	free(h);
	free(c);
	free(s);
	free(input);
	return token;
}

static int fail(char *why, size_t cap, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *why, size_t cap, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
	return err;
}

/* A base64url part as a JSON object; NULL if it is not one. */
static json_t *part_json(const char *s, size_t len)
{
	size_t n = 0;
	uint8_t *raw = base64url_decode_alloc(s, len, &n);
	json_t *v = raw ? json_loadb((const char *)raw, n, JSON_REJECT_DUPLICATES, NULL) : NULL;

	free(raw);
	if (v && !json_is_object(v)) {
		json_decref(v);
		v = NULL;
	}
	return v;
}

/* The verification key for kid in a JWK set; NULL + why. */
static EVP_PKEY *jwks_key(const json_t *jwks, const char *kid, const char **why)
{
	const json_t *keys = json_object_get(jwks, "keys");
	size_t i;
	json_t *k;

	if (!json_is_array(keys)) {
		*why = "the JWK set has no \"keys\" array";
		return NULL;
	}
	json_array_foreach(keys, i, k) {
		const char *id = json_string_value(json_object_get(k, "kid"));

		if (id && !strcmp(id, kid))
			return ear_key_from_jwk(k, why);
	}
	*why = NULL;
	return NULL;
}

int ear_jwt_verify(const char *token, size_t len, const json_t *jwks, json_t **claims,
		   char *why, size_t cap)
{
	const char *dot1, *dot2, *alg, *kid, *kwhy = NULL;
	uint8_t der[128], *raw = NULL;
	unsigned char *p = der;
	json_t *header = NULL, *body = NULL;
	EVP_PKEY *key = NULL;
	EVP_MD_CTX *md = NULL;
	ECDSA_SIG *sig = NULL;
	BIGNUM *r = NULL, *s = NULL;
	size_t rawlen = 0;
	int derlen, ret;

	*claims = NULL;
	if (len > EAR_TOKEN_MAX || memchr(token, '\0', len))
		return fail(why, cap, -EINVAL, "the token is longer than %u bytes or holds a NUL",
			    EAR_TOKEN_MAX);
	dot1 = memchr(token, '.', len);
	dot2 = dot1 ? memchr(dot1 + 1, '.', len - (size_t)(dot1 + 1 - token)) : NULL;
	if (!dot2 || memchr(dot2 + 1, '.', len - (size_t)(dot2 + 1 - token)))
		return fail(why, cap, -EINVAL, "not a JWS compact token (three parts with two dots)");
	header = part_json(token, (size_t)(dot1 - token));
	if (!header) {
		ret = fail(why, cap, -EINVAL, "the token's header is not base64url of a JSON object");
		goto out;
	}
	alg = json_string_value(json_object_get(header, "alg"));
	/* Only ES256: never "none", never an HMAC keyed with a public key. */
	if (!alg || strcmp(alg, "ES256")) {
		ret = fail(why, cap, -EINVAL, "the token's algorithm is \"%s\", not ES256",
			   alg ? alg : "(none)");
		goto out;
	}
	if (json_object_get(header, "crit")) {
		ret = fail(why, cap, -EINVAL, "the token's header has critical extensions (\"crit\")");
		goto out;
	}
	kid = json_string_value(json_object_get(header, "kid"));
	if (!kid) {
		ret = fail(why, cap, -EINVAL, "the token's header names no key (\"kid\")");
		goto out;
	}
	key = jwks_key(jwks, kid, &kwhy);
	if (!key) {
		ret = kwhy ? fail(why, cap, -EINVAL, "key \"%s\": %s", kid, kwhy)
			   : fail(why, cap, -ENOKEY,
				  "no key \"%s\" in the JWK set (rotated out long ago, or another verifier's)",
				  kid);
		goto out;
	}
	raw = base64url_decode_alloc(dot2 + 1, len - (size_t)(dot2 + 1 - token), &rawlen);
	if (!raw || rawlen != ES256_SIG) {
		ret = fail(why, cap, -EINVAL, "the signature is not 64 bytes of base64url (r || s)");
		goto out;
	}
	sig = ECDSA_SIG_new();
	r = BN_bin2bn(raw, P256_COORD, NULL);
	s = BN_bin2bn(raw + P256_COORD, P256_COORD, NULL);
	if (!sig || !r || !s || !ECDSA_SIG_set0(sig, r, s)) {
		ret = fail(why, cap, -ENOMEM, "out of memory");
		goto out;
	}
	r = s = NULL;
	derlen = i2d_ECDSA_SIG(sig, NULL);
	if (derlen <= 0 || (size_t)derlen > sizeof(der) || i2d_ECDSA_SIG(sig, &p) != derlen) {
		ret = fail(why, cap, -EINVAL, "the signature does not encode");
		goto out;
	}
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
	    EVP_DigestVerify(md, der, (size_t)derlen, (const unsigned char *)token,
			     (size_t)(dot2 - token)) != 1) {
		ret = fail(why, cap, -EBADMSG,
			   "the signature does not verify with key \"%s\": altered or forged", kid);
		goto out;
	}
	body = part_json(dot1 + 1, (size_t)(dot2 - dot1 - 1));
	if (!body) {
		ret = fail(why, cap, -EINVAL, "the token's claims are not base64url of a JSON object");
		goto out;
	}
	*claims = body;
	ret = 0;
out:
	ECDSA_SIG_free(sig);
	BN_free(r);
	BN_free(s);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(key);
	json_decref(header);
	free(raw);
	return ret;
}

bool ear_nonce_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n < EAR_NONCE_MIN || n > EAR_NONCE_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_'))
			return false;
	}
	return true;
}

int ear_claims_check(const json_t *claims, int64_t now, int64_t skew, int64_t max_age,
		     const char *nonce, char *why, size_t cap)
{
	const char *profile = json_string_value(json_object_get(claims, "eat_profile"));
	const json_t *iat = json_object_get(claims, "iat"), *exp = json_object_get(claims, "exp");
	const json_t *vid = json_object_get(claims, "ear.verifier-id");
	const json_t *submods = json_object_get(claims, "submods"), *sub;
	const char *name, *got;
	size_t n = 0;

	if (!profile || strcmp(profile, EAR_PROFILE))
		return fail(why, cap, -EINVAL, "eat_profile is not \"%s\"", EAR_PROFILE);
	if (!json_is_integer(iat))
		return fail(why, cap, -EINVAL, "iat is missing or not an integer");
	if (json_integer_value(iat) > now + skew)
		return fail(why, cap, -ESTALE, "issued in the future (iat %lld, now %lld): check clocks",
			    (long long)json_integer_value(iat), (long long)now);
	if (exp && !json_is_integer(exp))
		return fail(why, cap, -EINVAL, "exp is not an integer");
	if (exp && now >= json_integer_value(exp))
		return fail(why, cap, -ESTALE,
			    "expired %lld s ago: the verifier has had no newer result of the agent",
			    (long long)(now - json_integer_value(exp)));
	if (max_age > 0 && now - json_integer_value(iat) > max_age)
		return fail(why, cap, -ESTALE, "issued %lld s ago, more than the %lld s allowed",
			    (long long)(now - json_integer_value(iat)), (long long)max_age);
	if (!json_is_string(json_object_get(vid, "build")) ||
	    !json_is_string(json_object_get(vid, "developer")))
		return fail(why, cap, -EINVAL, "ear.verifier-id lacks build or developer");
	if (!json_is_object(submods) || !json_object_size(submods))
		return fail(why, cap, -EINVAL, "submods is missing or empty");
	json_object_foreach((json_t *)submods, name, sub) {
		const json_t *tv = json_object_get(sub, "ear.trustworthiness-vector");
		struct ear_vector vec;
		const char *vwhy;

		if (ear_tier_from_name(json_string_value(json_object_get(sub, "ear.status"))) < 0)
			return fail(why, cap, -EINVAL, "submod \"%s\": ear.status names no tier", name);
		if (tv && ear_vector_from_json(tv, &vec, &vwhy))
			return fail(why, cap, -EINVAL, "submod \"%s\": %s", name, vwhy);
		n++;
	}
	if (nonce) {
		got = json_string_value(json_object_get(claims, "eat_nonce"));
		if (!got)
			return fail(why, cap, -EPERM, "the result binds no nonce; expected \"%s\"", nonce);
		if (strcmp(got, nonce))
			return fail(why, cap, -EPERM, "the result binds nonce \"%s\", not \"%s\"", got,
				    nonce);
	}
	return n ? 0 : -EINVAL;
}
