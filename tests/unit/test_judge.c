/*
 * Unit tests for verifier/judge: every step of the order in judge.h, with Keylime's signed
 * entries (imasig_vectors.h). The Keylime outcomes each case mirrors are named after the
 * comments of Keylime's test_mixed_verfication (test/test_ima_verification.py).
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/encoding.h"
#include "tests/unit/check.h"
#include "tests/unit/imasig_vectors.h"
#include "verifier/decision/judge.h"
#include "verifier/policy/policy.h"

#define OTHER256 "bad05d13792292e202dbf69a6f1b07bc8a02f01424db8489ba7bb7d43c0290ef"
#define KEYRING_CERT_SHA256 "a7d52aaa18c23d2d9bb2abb4308c0eeee67387a42259f4a6b1a42257065f3d5a"

/* The PEM's base64 body: the DER SubjectPublicKeyInfo, as a policy's "der". */
static char *pem_body(const char *pem)
{
	const char *a = strchr(pem, '\n') + 1, *b = strstr(pem, "-----END");
	char *out = malloc((size_t)(b - a) + 1);
	size_t o = 0;

	for (const char *c = a; c < b; c++)
		if (*c != '\n')
			out[o++] = *c;
	out[o] = '\0';
	return out;
}

/* A policy from a jansson object (which it takes). */
static struct policy *mk(json_t *root)
{
	char err[256] = "", *s = json_dumps(root, 0);
	struct policy *p = s ? policy_load(s, strlen(s), err, sizeof(err)) : NULL;

	if (!p)
		fprintf(stderr, "policy does not load: %s\n", err);
	free(s);
	json_decref(root);
	return p;
}

/* An ima-sig style entry: path, sha256 digest, optional signature field. */
static struct ima_entry ent(const char *path, const struct bytes *digest, const struct bytes *sig)
{
	struct ima_entry e;

	memset(&e, 0, sizeof(e));
	e.index = 5;
	e.path = path;
	e.path_len = (uint32_t)strlen(path);
	e.digest_alg = TPM2_ALG_SHA256;
	e.digest_alg_name = "sha256";
	e.digest_alg_name_len = 6;
	e.digest = digest->b;
	e.digest_len = (uint32_t)digest->n;
	e.sig = sig ? sig->b : (const uint8_t *)"";
	e.sig_len = sig ? (uint32_t)sig->n : 0;
	return e;
}

static const char *judge(const struct policy *p, const struct ima_entry *e)
{
	struct judgement j;

	return judge_measurement(p, e, &j) ? "allowed" : reason_name(j.reason);
}

#define EXPECT(p, e, want, ...)                                                           \
	do {                                                                               \
		const char *got_ = judge((p), (e));                                        \
		CHECK(strcmp(got_, (want)) == 0, __VA_ARGS__);                             \
		if (strcmp(got_, (want)))                                                  \
			fprintf(stderr, "  got %s, want %s\n", got_, (want));             \
	} while (0)

static json_t *keys_both(void)
{
	char *rsa = pem_body(kl_rsa_pem);
	json_t *k = json_pack("[{s:s}, {s:s}]", "der", rsa, "der", kl_ec_b64);

	free(rsa);
	return k;
}

static void test_no_policy(void)
{
	struct bytes d = hex(KL_DD_SHA256), s = hex(KL_ZMORE_BAD_SIG);
	struct ima_entry e = ent("/usr/bin/dd", &d, &s);

	EXPECT(NULL, &e, "allowed", "no policy: even a malformed signature passes");
	e.violation = true;
	EXPECT(NULL, &e, "violation_entry", "no policy: a violation still counts");
}

static void test_signed_files(void)
{
	struct bytes d_dd = hex(KL_DD_SHA256), d_zm = hex(KL_ZMORE_SHA256), other = hex(OTHER256);
	struct bytes s_dd = hex(KL_DD_SIG), s_zm = hex(KL_ZMORE_SIG);
	struct policy *keys = mk(json_pack("{s:i, s:o}", "version", 1, "keys", keys_both()));
	struct policy *wrong = mk(json_pack("{s:i, s:o, s:{s:[s], s:[s]}}", "version", 1, "keys",
					    keys_both(), "digests", "/usr/bin/dd", "sha256:" OTHER256,
					    "/usr/bin/zmore", "sha256:" OTHER256));
	struct policy *nokeys = mk(json_pack("{s:i, s:{s:[s], s:[s]}}", "version", 1, "digests",
					     "/usr/bin/dd", "sha256:" KL_DD_SHA256, "/usr/bin/zmore",
					     "sha256:" KL_ZMORE_SHA256));
	struct ima_entry dd = ent("/usr/bin/dd", &d_dd, &s_dd), zm = ent("/usr/bin/zmore", &d_zm, &s_zm);
	struct ima_entry plain = ent("/usr/bin/dd", &d_dd, NULL);

	CHECK(keys && wrong && nokeys, "policies load");
	EXPECT(keys, &dd, "allowed", "valid RSA signature, file not in the digest list");
	EXPECT(keys, &zm, "allowed", "valid secp256k1 signature, file not in the digest list");
	EXPECT(wrong, &dd, "allowed", "valid signature, the list pins another digest (Keylime: pass)");
	EXPECT(nokeys, &dd, "allowed", "key not trusted, digest listed (Keylime: pass)");
	EXPECT(nokeys, &plain, "allowed", "no signature, digest listed");
	EXPECT(keys, &plain, "not_in_allowlist", "no signature, not listed");
	{
		/* The file changed after it was signed: its digest is another, its old signature stays. */
		struct ima_entry mod = ent("/usr/bin/dd", &other, &s_dd);
		struct policy *listed = mk(json_pack("{s:i, s:o, s:{s:[s]}}", "version", 1, "keys",
						     keys_both(), "digests", "/usr/bin/dd",
						     "sha256:" OTHER256));

		EXPECT(keys, &mod, "bad_file_signature", "modified after signing");
		EXPECT(listed, &mod, "bad_file_signature",
		       "modified after signing, even with the new digest listed");
		EXPECT(nokeys, &mod, "digest_mismatch", "signature by an untrusted key: by digest");
		policy_free(listed);
	}
	{
		/* The signature's algorithm must be the digest's. */
		struct ima_entry sha1 = dd;

		sha1.digest_alg = TPM2_ALG_SHA1;
		sha1.digest_len = 20;
		EXPECT(keys, &sha1, "bad_file_signature", "sha256 signature on a sha1 digest");
	}
	policy_free(keys);
	policy_free(wrong);
	policy_free(nokeys);
}

static void test_malformed_and_excludes(void)
{
	struct bytes d = hex(KL_ZMORE_SHA256), bad = hex(KL_ZMORE_BAD_SIG), other = hex(OTHER256);
	struct bytes s_zm = hex(KL_ZMORE_SIG);
	struct policy *ex = mk(json_pack("{s:i, s:o, s:[s]}", "version", 1, "keys", keys_both(),
					 "excludes", "/usr/bin/.*"));
	struct policy *listed = mk(json_pack("{s:i, s:{s:[s]}}", "version", 1, "digests",
					     "/usr/bin/zmore", "sha256:" KL_ZMORE_SHA256));
	struct ima_entry e = ent("/usr/bin/zmore", &d, &bad), inv = ent("/usr/bin/zmore", &other, &s_zm);

	CHECK(ex && listed, "policies load");
	EXPECT(ex, &e, "bad_file_signature", "malformed signature on an excluded path (Keylime: fail)");
	EXPECT(listed, &e, "bad_file_signature", "malformed signature, digest listed (Keylime: fail)");
	EXPECT(ex, &inv, "allowed", "an excluded path is not checked further (Keylime's order)");
	policy_free(ex);
	policy_free(listed);
}

static void test_required(void)
{
	struct bytes d_dd = hex(KL_DD_SHA256), d_zm = hex(KL_ZMORE_SHA256), s_dd = hex(KL_DD_SIG);
	struct bytes s_zm = hex(KL_ZMORE_SIG), d1 = hex(KL_DD_SHA1), s1 = hex(KL_DD_SHA1_SIG);
	char *rsa = pem_body(kl_rsa_pem);
	struct policy *p = mk(json_pack("{s:i, s:[{s:s}], s:[s], s:{s:[s, s], s:[s]}}", "version", 1,
					"keys", "der", rsa, "require_signatures", "/usr/",
					"digests", "/usr/bin/zmore", "sha256:" KL_ZMORE_SHA256,
					"sha1:" KL_DD_SHA1, "/bin/sh", "sha256:" KL_DD_SHA256));
	struct ima_entry dd = ent("/usr/bin/dd", &d_dd, &s_dd), zm = ent("/usr/bin/zmore", &d_zm, &s_zm);
	struct ima_entry plain = ent("/usr/bin/zmore", &d_zm, NULL), sh = ent("/bin/sh", &d_dd, NULL);
	struct ima_entry old = ent("/usr/bin/zmore", &d1, &s1);

	free(rsa);
	old.digest_alg = TPM2_ALG_SHA1;
	CHECK(p != NULL, "policy loads");
	EXPECT(p, &dd, "allowed", "required path, trusted signature");
	EXPECT(p, &zm, "unknown_signing_key", "required path, untrusted key, digest listed");
	EXPECT(p, &plain, "missing_file_signature", "required path, unsigned, digest listed");
	EXPECT(p, &old, "bad_file_signature", "required path, a sha1 signature we do not check");
	EXPECT(p, &sh, "allowed", "a path outside the prefixes: by digest");
	policy_free(p);
}

static void test_keyrings(void)
{
	struct bytes cert = hex(KL_KEYRING_CERT), d = hex(KEYRING_CERT_SHA256), other = hex(OTHER256);
	struct bytes cmdline = {.b = "console=ttyS0", .n = 13};
	struct policy *ring = mk(json_pack("{s:i, s:{s:[s]}}", "version", 1, "keyrings", ".ima",
					   "sha256:" KEYRING_CERT_SHA256));
	struct policy *none = mk(json_pack("{s:i, s:{s:[s]}}", "version", 1, "digests", ".ima",
					   "sha256:" KEYRING_CERT_SHA256));
	struct policy *all = mk(json_pack("{s:i, s:[s]}", "version", 1, "ignored_keyrings", "*"));
	struct policy *named = mk(json_pack("{s:i, s:[s]}", "version", 1, "ignored_keyrings", ".ima"));
	struct policy *ex = mk(json_pack("{s:i, s:[s]}", "version", 1, "excludes", "\\.ima"));
	struct ima_entry key = ent(".ima", &d, NULL), wrongkey = ent(".ima", &other, NULL);
	struct ima_entry evm = ent(".evm", &d, NULL), buf = ent("kexec-cmdline", &other, NULL);

	CHECK(ring && none && all && named && ex, "policies load");
	key.buf = wrongkey.buf = evm.buf = cert.b;
	key.buf_len = wrongkey.buf_len = evm.buf_len = (uint32_t)cert.n;
	key.sig = wrongkey.sig = evm.sig = buf.sig = NULL;
	buf.buf = cmdline.b;
	buf.buf_len = (uint32_t)cmdline.n;
	EXPECT(ring, &key, "allowed", "the keyring lists the key (Keylime KEYRINGS)");
	EXPECT(ring, &wrongkey, "keyring_key_not_allowed", "another digest for a listed keyring");
	EXPECT(ring, &evm, "keyring_key_not_allowed", "a keyring the policy does not name");
	EXPECT(none, &key, "keyring_key_not_allowed",
	       "a key entry is not a file: digests[\".ima\"] does not accept it");
	EXPECT(all, &evm, "allowed", "ignored_keyrings \"*\"");
	EXPECT(named, &key, "allowed", "ignored_keyrings by name");
	EXPECT(named, &evm, "keyring_key_not_allowed", "another keyring is not ignored");
	EXPECT(ex, &key, "allowed", "an exclude matching the keyring's name");
	EXPECT(ring, &buf, "not_in_allowlist", "an ima-buf entry that is no key: judged by name");
	policy_free(ring);
	policy_free(none);
	policy_free(all);
	policy_free(named);
	policy_free(ex);
}

static void test_unjudgeable_and_violations(void)
{
	struct bytes d = hex(KL_DD_SHA256);
	struct policy *p = mk(json_pack("{s:i, s:s}", "version", 1, "violations", "ignore"));
	struct policy *strict = mk(json_pack("{s:i}", "version", 1));
	struct ima_entry e = ent("/x", &d, NULL);

	CHECK(p && strict, "policies load");
	e.violation = true;
	EXPECT(p, &e, "allowed", "violations ignored");
	EXPECT(strict, &e, "violation_entry", "violations fail");
	e.violation = false;
	e.digest_alg = 0;
	EXPECT(strict, &e, "unjudgeable_entry", "a digest of an unknown algorithm");
	e.digest_alg = TPM2_ALG_SHA256;
	e.path = NULL;
	EXPECT(strict, &e, "unjudgeable_entry", "no path");
	policy_free(p);
	policy_free(strict);
}

int main(void)
{
	CASE(test_no_policy);
	CASE(test_signed_files);
	CASE(test_malformed_and_excludes);
	CASE(test_required);
	CASE(test_keyrings);
	CASE(test_unjudgeable_and_violations);
	return check_finish();
}
