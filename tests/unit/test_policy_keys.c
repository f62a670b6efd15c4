/*
 * Unit tests for the signature section of a policy (verifier/policy/policy_keys.c through policy.c):
 * our format's keys, required prefixes and keyrings, every refusal, the round trip, and the
 * Keylime import with its warnings (keys from Keylime's test_ima_verification.py,
 * imasig_vectors.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/encoding.h"
#include "proto/limits.h"
#include "tests/unit/check.h"
#include "tests/unit/imasig_vectors.h"
#include "verifier/policy/policy.h"
#include "verifier/policy/policy_keys.h"

#define D256 "a7d52aaa18c23d2d9bb2abb4308c0eeee67387a42259f4a6b1a42257065f3d5a"

/* Keylime's verification-keys string: both keys with their key ids. */
static const char kl_verification_keys[] =
	"{\"pubkeys\": [\"MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA1cD7bW5tX5qIVgWskS5tzY+XpqWzc"
	"W6HFq5npj8dHFIWsAJJCUdoSU631hkyY8HP/RfXDPq/J4IeKvx35EVXj49t1Z1FTJBgUlEbkKvqm0rY6jo7PnJ6B"
	"sDRrauXtiEXVKNXcWXDk8ES+9v9Cz26BJYAr+5Xgm2aEyAbj8GhicxUZfsjDm8eJ7ZnQKuhF7jejG5dYAYxnBVu9"
	"9bQJHI5Fsu3dAjGbys9v7ToNbonS+1bJXdHyEE0swhxBOPvvV6vx5CzRNw1Sou3rT19T4j8wpsFOyYXVcbbRVBAm"
	"BE2Qy2UHvojFqaJN/A9lztllyER1S5heGG6CxK3GoR6pkOXAQIDAQAB\", \"MFYwEAYHKoZIzj0CAQYFK4EEAAo"
	"DQgAEnNH3Y/xOTwRRd8D6hpodRLnVx71qDTLvJHouno7nU7JSzcXWN1PxK+HQEh1V7sMdwBER4KFKE635JTv6C+B"
	"RBg==\"], \"keyids\": [4081397027, 1394556965]}";

static struct policy *load_json(json_t *root, char *err, size_t errlen)
{
	char *s = json_dumps(root, 0);
	struct policy *p = s ? policy_load(s, strlen(s), err, errlen) : NULL;

	free(s);
	json_decref(root);
	return p;
}

/* Loads root; expects a refusal whose message contains want. */
static void refused(json_t *root, const char *want, const char *what)
{
	char err[512] = "";
	struct policy *p = load_json(root, err, sizeof(err));

	CHECK(!p && strstr(err, want), "%s: refused with \"%s\" (got \"%s\")", what, want, err);
	policy_free(p);
}

static bool has_key(const struct policy *p, uint32_t keyid)
{
	const struct imasig_keyset *ks = policy_keys_keyset(policy_keys(p));
	const uint8_t *der;
	size_t len;
	uint32_t id;

	for (size_t i = 0; imasig_keyset_get(ks, i, &der, &len, &id); i++)
		if (id == keyid)
			return true;
	return false;
}

static void test_ours(void)
{
	char err[256] = "", *json, *again;
	struct policy *p = load_json(json_pack("{s:i, s:[{s:s}, {s:s, s:s}], s:[s, s], s:{s:[s]}, s:[s]}",
					       "version", 1, "keys", "pem", kl_rsa_pem, "der",
					       kl_ec_b64, "keyid", "0a0b0c0d", "require_signatures",
					       "/usr/", "/bin/", "keyrings", ".ima", "sha256:" D256,
					       "ignored_keyrings", ".builtin_trusted_keys"),
				     err, sizeof(err));
	const struct policy_keys *k = policy_keys(p);
	uint8_t d[32];

	CHECK(p != NULL, "loads: %s", err);
	if (!p)
		return;
	CHECK(policy_keys_key_count(k) == 2, "two keys");
	CHECK(has_key(p, KL_RSA_KEYID), "the PEM key under its computed id");
	CHECK(has_key(p, 0x0a0b0c0d) && !has_key(p, KL_EC_KEYID), "the DER key under the id given");
	CHECK(policy_keys_required_count(k) == 2 && policy_keys_required(k, "/usr/bin/x", 10) &&
		      policy_keys_required(k, "/bin/sh", 7) && !policy_keys_required(k, "/usr", 4) &&
		      !policy_keys_required(k, "/sbin/x", 7),
	      "required prefixes match by prefix");
	hex_decode(D256, 64, d, sizeof(d));
	CHECK(policy_keys_keyring(k, ".ima", 4, TPM2_ALG_SHA256, d, 32) == POLICY_KEYRING_ALLOWED,
	      "keyring digest");
	CHECK(policy_keys_keyring(k, ".builtin_trusted_keys", 21, TPM2_ALG_SHA256, d, 32) ==
		      POLICY_KEYRING_IGNORED,
	      "ignored keyring");
	CHECK(policy_keys_keyring(k, ".evm", 4, TPM2_ALG_SHA256, d, 32) == POLICY_KEYRING_UNKNOWN,
	      "unnamed keyring");
	d[0] ^= 1;
	CHECK(policy_keys_keyring(k, ".ima", 4, TPM2_ALG_SHA256, d, 32) == POLICY_KEYRING_MISMATCH,
	      "other digest");
	CHECK(policy_keys_keyring(k, ".ima", 4, TPM2_ALG_SHA1, d, 20) == POLICY_KEYRING_MISMATCH,
	      "other algorithm");
	CHECK(strcmp(policy_warnings(p), "") == 0, "our format has no import warnings");

	json = policy_to_json(p);
	CHECK(json && strstr(json, "\"keys\"") && strstr(json, "\"keyid\": \"f3452d23\"") &&
		      strstr(json, "\"keyid\": \"0a0b0c0d\"") && strstr(json, "\"require_signatures\"") &&
		      strstr(json, "\"ignored_keyrings\"") && strstr(json, "sha256:" D256),
	      "serialised with every part");
	policy_free(p);
	p = json ? policy_load(json, strlen(json), err, sizeof(err)) : NULL;
	again = p ? policy_to_json(p) : NULL;
	CHECK(again && strcmp(again, json) == 0, "round trip is stable");
	CHECK(p && has_key(p, 0x0a0b0c0d), "a given key id survives the round trip");
	free(json);
	free(again);
	policy_free(p);
}

static void test_refusals(void)
{
	refused(json_pack("{s:i, s:s}", "version", 1, "keys", "x"), "\"keys\" must be a list", "keys not a list");
	refused(json_pack("{s:i, s:[s]}", "version", 1, "keys", "x"), "keys[0]: must be an object", "key not an object");
	refused(json_pack("{s:i, s:[{s:s}]}", "version", 1, "keys", "file", "k.pem"), "attestctl",
		"a file reference reaching the verifier");
	refused(json_pack("{s:i, s:[{s:s, s:s}]}", "version", 1, "keys", "pem", kl_rsa_pem, "der",
			  kl_ec_b64),
		"exactly one", "pem and der");
	refused(json_pack("{s:i, s:[{}]}", "version", 1, "keys"), "exactly one", "neither");
	refused(json_pack("{s:i, s:[{s:s, s:s}]}", "version", 1, "keys", "pem", kl_rsa_pem, "owner", "x"),
		"unknown key \"owner\"", "unknown field");
	refused(json_pack("{s:i, s:[{s:s, s:s}]}", "version", 1, "keys", "pem", kl_rsa_pem, "keyid", "xyz"),
		"8 hex digits", "bad keyid");
	refused(json_pack("{s:i, s:[{s:s}]}", "version", 1, "keys", "der", "!!"), "base64", "bad base64");
	refused(json_pack("{s:i, s:[{s:s}]}", "version", 1, "keys", "der", "aGVsbG8="), "keys[0]:",
		"not a key");
	refused(json_pack("{s:i, s:[{s:s}]}", "version", 1, "keys", "pem", "-----BEGIN X-----\n"),
		"keys[0]:", "broken PEM");
	refused(json_pack("{s:i, s:[s]}", "version", 1, "require_signatures", "usr/"), "starting with '/'",
		"relative prefix");
	refused(json_pack("{s:i, s:[s]}", "version", 1, "require_signatures", "/my dir/"), "'_'",
		"prefix with a space");
	refused(json_pack("{s:i, s:[s]}", "version", 1, "require_signatures", ""), "require_signatures[0]",
		"empty prefix");
	refused(json_pack("{s:i, s:s}", "version", 1, "require_signatures", "/usr/"), "must be a list",
		"prefixes not a list");
	refused(json_pack("{s:i, s:[s]}", "version", 1, "keyrings", ".ima"), "\"keyrings\" must be an object",
		"keyrings not an object");
	refused(json_pack("{s:i, s:{s:[s]}}", "version", 1, "keyrings", ".ima", D256), "keyrings[\".ima\"][0]",
		"keyring digest without alg");
	refused(json_pack("{s:i, s:{s:s}}", "version", 1, "keyrings", ".ima", "sha256:" D256),
		"a list of at most", "keyring digests not a list");
	refused(json_pack("{s:i, s:{s:[]}}", "version", 1, "keyrings", ""), "keyring name", "empty keyring name");
	refused(json_pack("{s:i, s:[i]}", "version", 1, "ignored_keyrings", 3), "ignored_keyrings[0]",
		"ignored keyring not a string");
	refused(json_pack("{s:i, s:s}", "version", 1, "keyring", "x"), "unknown key \"keyring\"",
		"a typo is still an unknown key");
}

static void test_keylime(void)
{
	char err[256] = "", *json;
	struct policy *p = load_json(json_pack("{s:{s:i, s:i}, s:i, s:{s:[s]}, s:[], s:{}, s:{s:[], s:s, s:n}, s:{}, s:s}",
					       "meta", "version", 1, "generator", 3, "release", 0,
					       "digests", "boot_aggregate", "0000000000000000000000000000000000000000000000000000000000000000",
					       "excludes", "keyrings", "ima", "ignored_keyrings",
					       "log_hash_alg", "sha1", "dm_policy", "ima-buf",
					       "verification-keys", kl_verification_keys),
				     err, sizeof(err));

	/* Keylime's RUNTIME_POLICY_WITH_VERIFICATION_KEYS, nothing it holds is lost. */
	CHECK(p != NULL, "Keylime policy with verification keys loads: %s", err);
	if (!p)
		return;
	CHECK(policy_keys_key_count(policy_keys(p)) == 2 && has_key(p, KL_RSA_KEYID) &&
		      has_key(p, KL_EC_KEYID),
	      "both verification keys, under Keylime's key ids");
	CHECK(strcmp(policy_warnings(p), "") == 0, "nothing to warn about (%s)", policy_warnings(p));
	json = policy_to_json(p);
	CHECK(json && strstr(json, "\"keys\"") && strstr(json, "\"version\": 1"),
	      "re-serialised in our format with its keys");
	free(json);
	policy_free(p);
}

static void test_keylime_warnings(void)
{
	char err[256] = "";
	const char *w;
	struct policy *p = load_json(
		json_pack("{s:{s:i}, s:{s:[s]}, s:{s:[s], s:s, s:{s:[]}, s:i}, s:{s:[s]}, s:s, s:{}}",
			  "meta", "version", 1, "keyrings", ".ima", D256, "ima",
			  "ignored_keyrings", ".evm", "log_hash_alg", "sha256", "dm_policy", "targets",
			  "mystery", 1, "ima-buf", "kexec-cmdline", D256, "verification-keys",
			  "{\"pubkeys\": [\"aGVsbG8=\", \"MFYwEAYHKoZIzj0CAQYFK4EEAAoDQgAEnNH3Y/xOTwRRd8D6hpodRLnVx71qDTLvJHouno7nU7JSzcXWN1PxK+HQEh1V7sMdwBER4KFKE635JTv6C+BRBg==\"]}",
			  "hashes"),
		err, sizeof(err));
	uint8_t d[32];

	CHECK(p != NULL, "loads: %s", err);
	if (!p)
		return;
	w = policy_warnings(p);
	CHECK(strstr(w, "verification-keys: key 0 not used") != NULL, "the unloadable key is named");
	CHECK(policy_keys_key_count(policy_keys(p)) == 1 && has_key(p, KL_EC_KEYID),
	      "the loadable one is kept, its id computed");
	CHECK(strstr(w, "keyrings: ") != NULL, "keyring keys do not become signing keys: said");
	CHECK(strstr(w, "ima.log_hash_alg") != NULL, "log_hash_alg other than sha1: said");
	CHECK(strstr(w, "ima.dm_policy") != NULL, "dm_policy: said");
	CHECK(strstr(w, "ima.mystery: unknown key") != NULL, "unknown ima key: said");
	CHECK(strstr(w, "hashes: unknown key") != NULL, "unknown top-level key: said");
	hex_decode(D256, 64, d, sizeof(d));
	CHECK(policy_check(p, "kexec-cmdline", 13, TPM2_ALG_SHA256, d, 32) == POLICY_ALLOWED,
	      "ima-buf digests join the digest table");
	CHECK(policy_keys_keyring(policy_keys(p), ".evm", 4, TPM2_ALG_SHA256, d, 32) ==
		      POLICY_KEYRING_IGNORED,
	      "ima.ignored_keyrings imported");
	CHECK(policy_keys_keyring(policy_keys(p), ".ima", 4, TPM2_ALG_SHA256, d, 32) ==
		      POLICY_KEYRING_ALLOWED,
	      "keyrings imported (hex length names sha256)");
	policy_free(p);

	/* Double-encoded (as Keylime's database stores it) is the same keyring. */
	{
		json_t *inner = json_string(kl_verification_keys);
		char *twice = json_dumps(inner, JSON_ENCODE_ANY);

		p = load_json(json_pack("{s:{}, s:s}", "meta", "verification-keys", twice), err, sizeof(err));
		CHECK(p && policy_keys_key_count(policy_keys(p)) == 2, "double-encoded verification-keys");
		policy_free(p);
		free(twice);
		json_decref(inner);
	}
	refused(json_pack("{s:{}, s:s}", "meta", "verification-keys", "{\"pubkeys\": 3}"),
		"verification-keys", "verification-keys of the wrong shape");
	refused(json_pack("{s:{}, s:i}", "meta", "verification-keys", 3), "must be a string",
		"verification-keys not a string");
	refused(json_pack("{s:{}, s:s}", "meta", "verification-keys", "{\"pubkeys\": [], \"keyids\": [-1]}"),
		"verification-keys", "keyids of the wrong shape");
	refused(json_pack("{s:{}, s:i}", "meta", "ima", 1), "\"ima\" must be an object", "ima not an object");
	p = load_json(json_pack("{s:{}, s:s}", "meta", "verification-keys", ""), err, sizeof(err));
	CHECK(p && policy_keys_key_count(policy_keys(p)) == 0 && !*policy_warnings(p),
	      "empty verification-keys (Keylime's default)");
	policy_free(p);
}

/* Past LIMIT_POLICY_WARNINGS warnings the last one says more were not listed. */
static void test_warning_cap(void)
{
	json_t *ring = json_pack("{s:[]}", "pubkeys");
	char err[256] = "", *vk;
	struct policy *p;
	const char *w;
	size_t n = 0, len;

	for (int i = 0; i < LIMIT_POLICY_WARNINGS + 10; i++)
		json_array_append_new(json_object_get(ring, "pubkeys"), json_string("aGVsbG8="));
	vk = json_dumps(ring, JSON_COMPACT);
	p = load_json(json_pack("{s:{}, s:s}", "meta", "verification-keys", vk), err, sizeof(err));
	CHECK(p != NULL, "loads: %s", err);
	for (size_t i = 0; p && (w = policy_warning(p, i, &len)); i++, n++)
		if (i == 0)
			CHECK(strncmp(w, "verification-keys: key 0 not used", 33) == 0, "first warning");
	CHECK(n == LIMIT_POLICY_WARNINGS, "%zu warnings listed", n);
	w = p ? policy_warning(p, LIMIT_POLICY_WARNINGS - 1, &len) : NULL;
	CHECK(w && strncmp(w, "more than", 9) == 0, "the last says more were not listed");
	policy_free(p);
	free(vk);
	json_decref(ring);
}

int main(void)
{
	CASE(test_ours);
	CASE(test_refusals);
	CASE(test_keylime);
	CASE(test_keylime_warnings);
	CASE(test_warning_cap);
	return check_finish();
}
