/* Unit tests for the allowlist engine: both formats, every decision, rejections, round trip. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_tpm2_types.h>

#include "proto/encoding.h"
#include "proto/limits.h"
#include "tests/unit/check.h"
#include "verifier/policy/policy.h"
#include "verifier/policy/policy_json.h"

/* sha256("a\n"), sha1("a\n"), sha256("b\n") */
#define A256 "87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7"
#define A1 "3f786850e387550fdab836ed7e6dc881de23001b"
#define B256 "0263829989b6fd954f72baaf2fc64bc2e2f01d692d4de72986ea808f6e99813f"
#define C512                                                                                  \
	"0000000000000000000000000000000000000000000000000000000000000000"                       \
	"0000000000000000000000000000000000000000000000000000000000000001"

static size_t unhex(const char *h, uint8_t *out)
{
	return (size_t)hex_decode(h, strlen(h), out, 64);
}

static enum policy_decision chk(const struct policy *p, const char *path, uint16_t alg,
				const char *hex)
{
	uint8_t d[64];
	size_t n = unhex(hex, d);

	return policy_check(p, path, strlen(path), alg, d, n);
}

static struct policy *load(const char *s, char *err, size_t errlen)
{
	return policy_load(s, strlen(s), err, errlen);
}

static const char *ours =
	"{ \"version\": 1, \"description\": \"test\",\n"
	"  \"digests\": {\n"
	"    \"/usr/bin/a\": [\"sha256:" A256 "\", \"sha1:" A1 "\"],\n"
	"    \"/usr/bin/b\": [\"sha256:" B256 "\"],\n"
	"    \"/opt/my_app\": [\"sha512:" C512 "\"],\n"
	"    \"/usr/bin/none\": []\n"
	"  },\n"
	"  \"excludes\": [\"/tmp/.*\", \"/var/log/[a-z]+\\\\.log\"],\n"
	"  \"digest_only\": [\"sha256:" B256 "\"],\n"
	"  \"violations\": \"ignore\",\n"
	"  \"boot_aggregate\": [\"sha256:" A256 "\"]\n"
	"}\n";

static void test_ours(void)
{
	char err[256];
	struct policy *p = load(ours, err, sizeof(err));
	uint8_t d[64];

	CHECK(p != NULL, "our format loads: %s", err);
	if (!p)
		return;
	CHECK(!policy_is_keylime(p), "not keylime");
	CHECK(policy_entry_count(p) == 4, "4 paths, got %zu", policy_entry_count(p));
	CHECK(chk(p, "/usr/bin/a", TPM2_ALG_SHA256, A256) == POLICY_ALLOWED, "sha256 allowed");
	CHECK(chk(p, "/usr/bin/a", TPM2_ALG_SHA1, A1) == POLICY_ALLOWED, "sha1 allowed");
	CHECK(chk(p, "/usr/bin/a", TPM2_ALG_SHA256, B256) == POLICY_DIGEST_MISMATCH,
	      "other digest at known path mismatches, even though it is in digest_only");
	CHECK(chk(p, "/usr/bin/b", TPM2_ALG_SHA256, B256) == POLICY_ALLOWED, "b allowed");
	CHECK(chk(p, "/usr/bin/none", TPM2_ALG_SHA256, B256) == POLICY_DIGEST_MISMATCH,
	      "empty list pins the path to nothing");
	CHECK(chk(p, "/opt/my_app", TPM2_ALG_SHA512, C512) == POLICY_ALLOWED, "sha512 allowed");

	/* Algorithm pinning: the same bytes under another alg id never match. */
	unhex(A256, d);
	CHECK(policy_check(p, "/usr/bin/a", 10, TPM2_ALG_SHA384, d, 32) == POLICY_DIGEST_MISMATCH,
	      "sha256 bytes labelled sha384");
	unhex(A256, d);
	CHECK(policy_check(p, "/usr/bin/a", 10, TPM2_ALG_SHA1, d, 20) == POLICY_DIGEST_MISMATCH,
	      "sha256 prefix labelled sha1");
	unhex(C512, d);
	CHECK(policy_check(p, "/opt/my_app", 11, TPM2_ALG_SHA256, d, 32) ==
		      POLICY_DIGEST_MISMATCH,
	      "sha512 entry rejects sha256");
	CHECK(policy_check(p, "/usr/bin/a", 10, 0x0012, d, 32) == POLICY_DIGEST_MISMATCH,
	      "unknown alg id");
	unhex(A256, d);
	CHECK(policy_check(p, "/usr/bin/a", 10, TPM2_ALG_SHA256, d, 31) == POLICY_DIGEST_MISMATCH,
	      "short digest");
	CHECK(policy_check(p, "/usr/bin/a", 10, TPM2_ALG_SHA256, NULL, 32) ==
		      POLICY_DIGEST_MISMATCH,
	      "NULL digest");

	/* Counted paths: the bytes after path_len are not part of the path. */
	unhex(A256, d);
	CHECK(policy_check(p, "/usr/bin/aXYZ", 10, TPM2_ALG_SHA256, d, 32) == POLICY_ALLOWED,
	      "counted path");
	CHECK(policy_check(p, "/usr/bin/a", 9, TPM2_ALG_SHA256, d, 32) == POLICY_NOT_IN_ALLOWLIST,
	      "prefix of a path is another path");

	/* Unknown paths: digest_only, then excludes (anchored at both ends). */
	CHECK(chk(p, "/home/x/b-copy", TPM2_ALG_SHA256, B256) == POLICY_ALLOWED,
	      "digest_only at unknown path");
	CHECK(chk(p, "/home/x/b-copy", TPM2_ALG_SHA1, A1) == POLICY_NOT_IN_ALLOWLIST,
	      "unknown path, unknown digest");
	unhex(B256, d);
	CHECK(policy_check(p, "/x", 2, TPM2_ALG_SHA1, d, 20) == POLICY_NOT_IN_ALLOWLIST,
	      "digest_only is pinned to its alg");
	CHECK(chk(p, "/tmp/evil", TPM2_ALG_SHA1, A1) == POLICY_EXCLUDED, "exclude");
	CHECK(chk(p, "/tmp/", TPM2_ALG_SHA1, A1) == POLICY_EXCLUDED, "exclude matches empty tail");
	CHECK(chk(p, "/var/tmp/evil", TPM2_ALG_SHA1, A1) == POLICY_NOT_IN_ALLOWLIST,
	      "exclude anchored at start");
	CHECK(chk(p, "/tmp", TPM2_ALG_SHA1, A1) == POLICY_NOT_IN_ALLOWLIST, "/tmp itself");
	CHECK(chk(p, "/var/log/syslog.log", TPM2_ALG_SHA1, A1) == POLICY_EXCLUDED, "log exclude");
	CHECK(chk(p, "/var/log/syslog.log.1", TPM2_ALG_SHA1, A1) == POLICY_NOT_IN_ALLOWLIST,
	      "exclude anchored at end");
	CHECK(chk(p, "/var/log/syslogxlog", TPM2_ALG_SHA1, A1) == POLICY_NOT_IN_ALLOWLIST,
	      "escaped dot is literal");
	CHECK(policy_check(p, "/tmp/a\0b", 8, TPM2_ALG_SHA1, d, 20) == POLICY_NOT_IN_ALLOWLIST,
	      "a path with NUL is never excluded");
	CHECK(policy_check(p, "/tmp/abc", 6, TPM2_ALG_SHA1, d, 20) == POLICY_EXCLUDED,
	      "exclude on a counted path");

	CHECK(policy_violations_allowed(p), "violations ignore");
	CHECK(policy_boot_aggregate_mode(p) == POLICY_BOOT_AGGREGATE_LIST, "ba list mode");
	unhex(A256, d);
	CHECK(policy_boot_aggregate_accepts(p, TPM2_ALG_SHA256, d, 32), "ba accepted");
	CHECK(!policy_boot_aggregate_accepts(p, TPM2_ALG_SHA1, d, 20), "ba alg pinned");
	unhex(B256, d);
	CHECK(!policy_boot_aggregate_accepts(p, TPM2_ALG_SHA256, d, 32), "other ba refused");
	enum reason r = REASON_COUNT;
	CHECK(policy_decision_reason(POLICY_DIGEST_MISMATCH, &r) && r == REASON_DIGEST_MISMATCH &&
		      policy_decision_reason(POLICY_NOT_IN_ALLOWLIST, &r) &&
		      r == REASON_NOT_IN_ALLOWLIST && !policy_decision_reason(POLICY_ALLOWED, &r) &&
		      !policy_decision_reason(POLICY_EXCLUDED, &r),
	      "a refusing decision's reason; none for a passing one");
	policy_free(p);
}

static void test_defaults(void)
{
	char err[256];
	struct policy *p = load("{\"version\":1}", err, sizeof(err));
	uint8_t d[32] = { 0 };

	CHECK(p != NULL, "minimal policy: %s", err);
	CHECK(!policy_violations_allowed(p), "violations fail by default");
	CHECK(policy_boot_aggregate_mode(p) == POLICY_BOOT_AGGREGATE_MATCHING_PCRS,
	      "ba by PCRs by default");
	CHECK(!policy_boot_aggregate_accepts(p, TPM2_ALG_SHA256, d, 32),
	      "PCR mode accepts no static value");
	CHECK(policy_check(p, "/x", 2, TPM2_ALG_SHA256, d, 32) == POLICY_NOT_IN_ALLOWLIST,
	      "empty policy allows nothing");
	policy_free(p);

	p = load("{\"version\":1,\"violations\":\"fail\",\"boot_aggregate\":\"any-matching-pcrs\"}",
		 err, sizeof(err));
	CHECK(p && !policy_violations_allowed(p) &&
		      policy_boot_aggregate_mode(p) == POLICY_BOOT_AGGREGATE_MATCHING_PCRS,
	      "explicit defaults: %s", err);
	policy_free(p);
	policy_free(NULL);
	policy_unref(NULL);
	CHECK(policy_check(NULL, "/x", 2, TPM2_ALG_SHA256, d, 32) == POLICY_NOT_IN_ALLOWLIST,
	      "NULL policy allows nothing");
}

static const char *keylime =
	"{\"meta\": {\"version\": 1, \"generator\": 1, \"timestamp\": \"now\"},\n"
	" \"release\": 0,\n"
	" \"digests\": {\n"
	"   \"/usr/bin/a\": [\"" A1 "\", \"" A256 "\"],\n"
	"   \"/usr/bin/with space\": [\"" B256 "\"],\n"
	"   \"/usr/bin/up\": [\"" "3F786850E387550FDAB836ED7E6DC881DE23001B" "\"],\n"
	"   \"boot_aggregate\": [\"" A1 "\"]\n"
	" },\n"
	" \"excludes\": [\"/tmp/.*\", \"/var/log/\\\\d+\\\\.log\", \"(?:/run|/dev)/\",\n"
	"                \"/home/[^/]+/\\\\.cache/.*?\", \"/srv/[\\\\w.-]+\\\\.conf\", \"/opt\\\\/x\"],\n"
	" \"keyrings\": {\"kr\": [\"" A256 "\"]},\n"
	" \"ima\": {\"ignored_keyrings\": [], \"log_hash_alg\": \"sha1\", \"dm_policy\": null},\n"
	" \"ima-buf\": {}, \"verification-keys\": \"\"\n"
	"}\n";

static void test_keylime(void)
{
	char err[256];
	struct policy *p = load(keylime, err, sizeof(err));
	uint8_t d[64];

	CHECK(p != NULL, "keylime policy loads: %s", err);
	if (!p)
		return;
	CHECK(policy_is_keylime(p), "detected as keylime");
	CHECK(policy_entry_count(p) == 3, "3 paths (boot_aggregate moved), got %zu",
	      policy_entry_count(p));
	CHECK(chk(p, "/usr/bin/a", TPM2_ALG_SHA1, A1) == POLICY_ALLOWED, "40 hex = sha1");
	CHECK(chk(p, "/usr/bin/a", TPM2_ALG_SHA256, A256) == POLICY_ALLOWED, "64 hex = sha256");
	CHECK(chk(p, "/usr/bin/with_space", TPM2_ALG_SHA256, B256) == POLICY_ALLOWED,
	      "space mapped to '_'");
	CHECK(chk(p, "/usr/bin/up", TPM2_ALG_SHA1, A1) == POLICY_ALLOWED, "uppercase hex accepted");
	CHECK(policy_boot_aggregate_mode(p) == POLICY_BOOT_AGGREGATE_LIST, "ba from digests");
	unhex(A1, d);
	CHECK(policy_boot_aggregate_accepts(p, TPM2_ALG_SHA1, d, 20), "ba value");
	CHECK(!policy_violations_allowed(p), "keylime import is strict on violations");

	/* re.match semantics: anchored at the start only. */
	CHECK(chk(p, "/tmp/x", TPM2_ALG_SHA1, A1) == POLICY_EXCLUDED, "/tmp/.*");
	CHECK(chk(p, "/x/tmp/x", TPM2_ALG_SHA1, A1) == POLICY_NOT_IN_ALLOWLIST, "start anchored");
	CHECK(chk(p, "/var/log/123.log", TPM2_ALG_SHA1, A1) == POLICY_EXCLUDED, "\\d mapped");
	CHECK(chk(p, "/var/log/123.log.gz", TPM2_ALG_SHA1, A1) == POLICY_EXCLUDED,
	      "prefix match like re.match");
	CHECK(chk(p, "/var/log/abc.log", TPM2_ALG_SHA1, A1) == POLICY_NOT_IN_ALLOWLIST,
	      "\\d is digits only");
	CHECK(chk(p, "/run/x", TPM2_ALG_SHA1, A1) == POLICY_EXCLUDED, "(?:) mapped");
	CHECK(chk(p, "/dev/x", TPM2_ALG_SHA1, A1) == POLICY_EXCLUDED, "(?:) alternation");
	CHECK(chk(p, "/home/u/.cache/z", TPM2_ALG_SHA1, A1) == POLICY_EXCLUDED, "lazy mapped");
	CHECK(chk(p, "/home/u/xcache/z", TPM2_ALG_SHA1, A1) == POLICY_NOT_IN_ALLOWLIST,
	      "\\. literal");
	CHECK(chk(p, "/srv/my-app.v2.conf", TPM2_ALG_SHA1, A1) == POLICY_EXCLUDED,
	      "[\\w.-] mapped");
	CHECK(chk(p, "/srv/my app.conf", TPM2_ALG_SHA1, A1) == POLICY_NOT_IN_ALLOWLIST,
	      "[\\w.-] excludes space");
	CHECK(chk(p, "/opt/x", TPM2_ALG_SHA1, A1) == POLICY_EXCLUDED, "\\/ is /");

	/* Serialised, it is our format with the same meaning. */
	char *js = policy_to_json(p);
	struct policy *q = js ? load(js, err, sizeof(err)) : NULL;

	CHECK(q != NULL, "keylime policy re-serialised loads as ours: %s", err);
	CHECK(q && !policy_is_keylime(q), "as ours");
	CHECK(q && chk(q, "/var/log/123.log.gz", TPM2_ALG_SHA1, A1) == POLICY_EXCLUDED,
	      "exclude meaning kept");
	CHECK(q && chk(q, "/x/tmp/x", TPM2_ALG_SHA1, A1) == POLICY_NOT_IN_ALLOWLIST,
	      "anchoring kept");
	CHECK(q && chk(q, "/usr/bin/a", TPM2_ALG_SHA256, A256) == POLICY_ALLOWED, "digests kept");
	policy_free(q);
	free(js);
	policy_free(p);
}

struct bad_case {
	const char *json;
	const char *needle; /* must appear in the error text */
};

static void test_rejects(void)
{
	static const struct bad_case cases[] = {
		{ "", "invalid JSON" },
		{ "{\"version\":1", "invalid JSON" },
		{ "[1]", "must be a JSON object" },
		{ "{}", "unknown policy format" },
		{ "{\"version\":2}", "version" },
		{ "{\"version\":\"1\"}", "version" },
		{ "{\"version\":1,\"digest\":{}}", "unknown key \"digest\"" },
		{ "{\"version\":1,\"version\":1}", "invalid JSON" },
		{ "{\"version\":1,\"digests\":[]}", "\"digests\" must be an object" },
		{ "{\"version\":1,\"digests\":{\"/a\":\"sha1:" A1 "\"}}", "digests[\"/a\"]: must be a list" },
		{ "{\"version\":1,\"digests\":{\"/a\":[1]}}", "digests[\"/a\"][0]: not a string" },
		{ "{\"version\":1,\"digests\":{\"/a\":[\"" A1 "\"]}}", "not \"alg:hex\"" },
		{ "{\"version\":1,\"digests\":{\"/a\":[\"md5:00112233445566778899aabbccddeeff\"]}}", "unknown algorithm" },
		{ "{\"version\":1,\"digests\":{\"/a\":[\"sha1:3F786850E387550FDAB836ED7E6DC881DE23001B\"]}}", "lowercase hex" },
		{ "{\"version\":1,\"digests\":{\"/a\":[\"sha1:zz786850e387550fdab836ed7e6dc881de23001b\"]}}", "lowercase hex" },
		{ "{\"version\":1,\"digests\":{\"/a\":[\"sha256:" A1 "\"]}}", "digests[\"/a\"][0]: digest length" },
		{ "{\"version\":1,\"digests\":{\"/a\":[\"sha1:" A1 "0\"]}}", "digest length" },
		{ "{\"version\":1,\"digests\":{\"/a b\":[]}}", "digests[\"/a b\"]: space in path" },
		{ "{\"version\":1,\"digests\":{\"\":[]}}", "empty path" },
		{ "{\"version\":1,\"digests\":{\"/a\":[],\"/a\":[]}}", "invalid JSON" },
		{ "{\"version\":1,\"excludes\":\"/tmp\"}", "\"excludes\" must be a list" },
		{ "{\"version\":1,\"excludes\":[\"/tmp/(\"]}", "excludes[0]: regcomp refused \"/tmp/(\"" },
		{ "{\"version\":1,\"excludes\":[\"/a\",\"[z\"]}", "excludes[1]: regcomp refused \"[z\"" },
		{ "{\"version\":1,\"excludes\":[\"\"]}", "excludes[0]" },
		{ "{\"version\":1,\"excludes\":[3]}", "excludes[0]" },
		{ "{\"version\":1,\"violations\":\"maybe\"}", "\"violations\" must be" },
		{ "{\"version\":1,\"violations\":false}", "\"violations\" must be" },
		{ "{\"version\":1,\"boot_aggregate\":\"any\"}", "\"boot_aggregate\" must be" },
		{ "{\"version\":1,\"boot_aggregate\":[]}", "\"boot_aggregate\" must be" },
		{ "{\"version\":1,\"boot_aggregate\":[\"sha1:00\"]}", "boot_aggregate[0]: digest length" },
		{ "{\"version\":1,\"digest_only\":{}}", "\"digest_only\" must be" },
		{ "{\"version\":1,\"digest_only\":[\"sha9:00\"]}", "digest_only[0]: unknown algorithm" },
		{ "{\"version\":1,\"digests_hex\":[]}", "\"digests_hex\" must be an object" },
		{ "{\"version\":1,\"digests_hex\":{\"2f61ff\":\"x\"}}", "digests_hex[\"2f61ff\"]: must be a list" },
		{ "{\"version\":1,\"digests_hex\":{\"2F61FF\":[]}}", "digests_hex[\"2F61FF\"]: not lowercase hex" },
		{ "{\"version\":1,\"digests_hex\":{\"2f61f\":[]}}", "not lowercase hex" },
		{ "{\"version\":1,\"digests_hex\":{\"/a\":[]}}", "not lowercase hex" },
		{ "{\"version\":1,\"digests_hex\":{\"2f61\":[]}}", "digests_hex[\"2f61\"]: the path is UTF-8: write it under \"digests\"" },
		{ "{\"version\":1,\"digests_hex\":{\"2f00ff\":[]}}", "NUL in path" },
		{ "{\"version\":1,\"digests_hex\":{\"2f20ff\":[]}}", "space in path" },
		{ "{\"version\":1,\"digests_hex\":{\"\":[]}}", "empty path" },
		{ "{\"version\":1,\"reboot_clears_open_violations\":\"yes\"}", "\"reboot_clears_open_violations\" must be true or false" },
		{ "{\"meta\":[]}", "\"meta\" must be an object" },
		{ "{\"meta\":{\"version\":\"x\"}}", "meta.version" },
		{ "{\"meta\":{},\"digests\":{\"/a\":[\"abc\"]}}", "digests[\"/a\"][0]: hex length" },
		{ "{\"meta\":{},\"digests\":{\"/a\":[\"" "zz786850e387550fdab836ed7e6dc881de23001b" "\"]}}", "not hex" },
		{ "{\"meta\":{},\"excludes\":[\"(?=/x)\"]}", "Python pattern \"(?=/x)\"" },
		{ "{\"meta\":{},\"excludes\":[\"(a)\\\\1\"]}", "Python pattern \"(a)\\1\"" },
		{ "{\"meta\":{},\"excludes\":[\"(?i)/x\"]}", "(?...)" },
		{ "{\"meta\":{},\"excludes\":[\"/x*+\"]}", "possessive" },
		{ "{\"meta\":{},\"excludes\":[\"/x**\"]}", "multiple repeat" },
		{ "{\"meta\":{},\"excludes\":[\"/x*?+\"]}", "multiple repeat" },
		{ "{\"meta\":{},\"excludes\":[\"/[x\"]}", "unterminated [" },
		{ "{\"meta\":{},\"excludes\":[\"/x{\"]}", "Python pattern \"/x{\"" },
		{ "{\"meta\":{},\"excludes\":[\"a)(b\"]}", "Python pattern \"a)(b\"" },
		{ "{\"meta\":{},\"excludes\":[\"/tmp/[[:alpha:]]\"]}", "POSIX classes" },
		/* stacked and nested repeats that take glibc's regcomp seconds (fuzz_policy) */
		{ "{\"version\":1,\"excludes\":[\"a****************************************b\"]}", "more than 16 repeats" },
		{ "{\"version\":1,\"excludes\":[\"(a*)*(a*)*(a*)*(a*)*(a*)*(a*)*(a*)*(a*)*(a*)*\"]}", "more than 16 repeats" },
	};
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct policy *p;

		err[0] = '\0';
		p = load(cases[i].json, err, sizeof(err));
		CHECK(p == NULL, "case %zu accepted: %s", i, cases[i].json);
		CHECK(strstr(err, cases[i].needle) != NULL, "case %zu: error \"%s\" lacks \"%s\"", i,
		      err, cases[i].needle);
		policy_free(p);
	}

	/* Too many digests for one path. */
	size_t n = LIMIT_POLICY_DIGESTS_PER_PATH + 1, cap = n * 50 + 64, o = 0;
	char *big = malloc(cap);

	o += (size_t)snprintf(big + o, cap - o, "{\"version\":1,\"digests\":{\"/a\":[");
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(big + o, cap - o, "%s\"sha1:%040zx\"", i ? "," : "", i);
	snprintf(big + o, cap - o, "]}}");
	CHECK(policy_load(big, strlen(big), err, sizeof(err)) == NULL && strstr(err, "more than"),
	      "too many digests per path: %s", err);
	free(big);

	/* Nesting past LIMIT_JSON_DEPTH, even under keys that are otherwise ignored. */
	char deep[256];

	o = (size_t)snprintf(deep, sizeof(deep), "{\"meta\":{},\"ima\":");
	for (int i = 0; i < 20; i++)
		deep[o++] = '[';
	for (int i = 0; i < 20; i++)
		deep[o++] = ']';
	snprintf(deep + o, sizeof(deep) - o, "}");
	CHECK(load(deep, err, sizeof(err)) == NULL && strstr(err, "nested deeper"), "deep: %s", err);

	/* Oversize is refused before a byte is read. */
	CHECK(policy_load("{}", (size_t)LIMIT_POLICY_BYTES + 1, err, sizeof(err)) == NULL &&
		      strstr(err, "LIMIT_POLICY_BYTES"),
	      "oversize: %s", err);
	CHECK(policy_load(NULL, 0, err, sizeof(err)) == NULL, "NULL input");
	CHECK(policy_load("{}", 2, NULL, 0) == NULL, "no error buffer is fine");
}

/* A path that is not UTF-8 under digests_hex; the review option; both survive a round trip. */
static void test_raw_paths(void)
{
	static const char doc[] =
		"{\"version\":1,\"digests\":{\"/usr/bin/t\\\\xffol\":[\"sha1:" A1 "\"]},"
		"\"digests_hex\":{\"2f7573722f62696e2f74ff6f6c\":[\"sha1:" A1 "\"]},"
		"\"reboot_clears_open_violations\":true}";
	char err[256], *js = NULL;
	struct policy *p = load(doc, err, sizeof(err)), *q = NULL;

	CHECK(p != NULL, "loads: %s", err);
	if (!p)
		return;
	CHECK(chk(p, "/usr/bin/t\xffol", TPM2_ALG_SHA1, A1) == POLICY_ALLOWED,
	      "the raw path from digests_hex");
	CHECK(chk(p, "/usr/bin/t\\xffol", TPM2_ALG_SHA1, A1) == POLICY_ALLOWED &&
		      policy_entry_count(p) == 2,
	      "a real backslash path from digests is another path");
	CHECK(policy_reboot_clears_open_violations(p), "reboot_clears_open_violations read");
	js = policy_to_json(p);
	q = js ? load(js, err, sizeof(err)) : NULL;
	CHECK(q && policy_entry_count(q) == 2 && policy_reboot_clears_open_violations(q) &&
		      chk(q, "/usr/bin/t\xffol", TPM2_ALG_SHA1, A1) == POLICY_ALLOWED &&
		      chk(q, "/usr/bin/t\\xffol", TPM2_ALG_SHA1, A1) == POLICY_ALLOWED,
	      "both kept through a round trip (%s)", q ? "" : err);
	CHECK(js && strstr(js, "\"/usr/bin/t\\\\xffol\"") &&
		      strstr(js, "\"2f7573722f62696e2f74ff6f6c\""),
	      "one under digests, one under digests_hex");
	CHECK(!policy_reboot_clears_open_violations(NULL), "off by default");
	policy_free(q);
	policy_free(p);
	free(js);
}

static void test_add_roundtrip(void)
{
	char err[256];
	struct policy *p = load(ours, err, sizeof(err)), *q = NULL, *r = NULL;
	uint8_t d[64], e[64];
	char *js = NULL, *js2 = NULL, *js3 = NULL;

	CHECK(p != NULL, "load: %s", err);
	if (!p)
		return;
	unhex(B256, d);
	unhex(A1, e);
	CHECK(policy_add_digest(p, "/usr/bin/a", TPM2_ALG_SHA256, d, 32) == 0,
	      "add to an earlier path (records move)");
	CHECK(policy_add_digest(p, "/usr/bin/a", TPM2_ALG_SHA256, d, 32) == 0, "idempotent");
	CHECK(policy_add_digest(p, "/new/file_x", TPM2_ALG_SHA1, e, 20) == 0, "new path");
	CHECK(policy_add_digest(p, "/new/file_x", TPM2_ALG_SHA256, d, 32) == 0, "second digest");
	CHECK(policy_add_digest(p, "/new/f y", TPM2_ALG_SHA1, e, 20) == -EINVAL, "space refused");
	CHECK(policy_add_digest(p, "", TPM2_ALG_SHA1, e, 20) == -EINVAL, "empty refused");
	CHECK(policy_add_digest(p, "/new/\xff", TPM2_ALG_SHA1, e, 20) == 0,
	      "a path that is not UTF-8 is kept as its bytes");
	CHECK(policy_add_digest_bytes(p, "/n\0x", 4, TPM2_ALG_SHA1, e, 20) == -EINVAL,
	      "NUL refused");
	CHECK(policy_add_digest(p, "/n", TPM2_ALG_SHA1, e, 32) == -EINVAL, "wrong length refused");
	CHECK(policy_add_digest(p, "/n", 0x0099, e, 20) == -EINVAL, "unknown alg refused");
	CHECK(policy_add_exclude(p, "/var/cache/.*") == 0, "add exclude");
	CHECK(policy_add_exclude(p, "/(") == -EINVAL, "bad exclude refused");
	CHECK(policy_entry_count(p) == 6, "6 paths now");
	CHECK(chk(p, "/new/\xff", TPM2_ALG_SHA1, A1) == POLICY_ALLOWED &&
		      chk(p, "/new/\\xff", TPM2_ALG_SHA1, A1) == POLICY_NOT_IN_ALLOWLIST,
	      "the raw bytes are allowed, not their escaped look-alike");
	CHECK(chk(p, "/usr/bin/a", TPM2_ALG_SHA256, B256) == POLICY_ALLOWED, "added digest");
	CHECK(chk(p, "/usr/bin/a", TPM2_ALG_SHA256, A256) == POLICY_ALLOWED, "old digest kept");
	CHECK(chk(p, "/usr/bin/a", TPM2_ALG_SHA1, A1) == POLICY_ALLOWED, "old sha1 kept");
	CHECK(chk(p, "/usr/bin/b", TPM2_ALG_SHA256, B256) == POLICY_ALLOWED, "neighbour intact");

	js = policy_to_json(p);
	CHECK(js != NULL, "to_json");
	q = js ? load(js, err, sizeof(err)) : NULL;
	CHECK(q != NULL, "reload: %s", err);
	if (q) {
		CHECK(policy_entry_count(q) == 6, "count kept");
		CHECK(chk(q, "/new/\xff", TPM2_ALG_SHA1, A1) == POLICY_ALLOWED &&
			      strstr(js, "\"digests_hex\": {\n  \"2f6e65772fff\": [") != NULL,
		      "the raw path kept through digests_hex");
		CHECK(chk(q, "/usr/bin/a", TPM2_ALG_SHA256, B256) == POLICY_ALLOWED, "added kept");
		CHECK(chk(q, "/new/file_x", TPM2_ALG_SHA1, A1) == POLICY_ALLOWED, "new kept");
		CHECK(chk(q, "/new/file_x", TPM2_ALG_SHA256, B256) == POLICY_ALLOWED, "new 2 kept");
		CHECK(chk(q, "/opt/my_app", TPM2_ALG_SHA512, C512) == POLICY_ALLOWED, "sha512 kept");
		CHECK(chk(q, "/usr/bin/none", TPM2_ALG_SHA256, B256) == POLICY_DIGEST_MISMATCH,
		      "empty list kept");
		CHECK(chk(q, "/var/cache/z", TPM2_ALG_SHA1, A1) == POLICY_EXCLUDED, "exclude kept");
		CHECK(chk(q, "/zz", TPM2_ALG_SHA256, B256) == POLICY_ALLOWED, "digest_only kept");
		CHECK(policy_violations_allowed(q), "violations kept");
		unhex(A256, d);
		CHECK(policy_boot_aggregate_accepts(q, TPM2_ALG_SHA256, d, 32), "ba kept");
		js2 = policy_to_json(q);
		CHECK(js2 && strcmp(js, js2) == 0, "serialisation is stable");
		/* Shared policies are read-only. */
		r = policy_ref(q);
		CHECK(r == q, "ref returns the policy");
		CHECK(policy_add_digest(q, "/z", TPM2_ALG_SHA1, e, 20) == -EBUSY, "shared: -EBUSY");
		CHECK(policy_add_exclude(q, "/z") == -EBUSY, "shared exclude: -EBUSY");
		policy_unref(r);
		CHECK(policy_add_digest(q, "/z", TPM2_ALG_SHA1, e, 20) == 0, "private again");
	}
	policy_free(q);

	/* policy_new + adds serialise to a loadable policy. */
	q = policy_new();
	CHECK(q && policy_add_digest(q, "/bin/sh", TPM2_ALG_SHA256, d, 32) == 0, "new + add");
	js3 = q ? policy_to_json(q) : NULL;
	r = js3 ? load(js3, err, sizeof(err)) : NULL;
	CHECK(r && chk(r, "/bin/sh", TPM2_ALG_SHA256, A256) == POLICY_ALLOWED &&
		      policy_boot_aggregate_mode(r) == POLICY_BOOT_AGGREGATE_MATCHING_PCRS,
	      "new policy round trip: %s", err);
	policy_free(r);
	policy_free(q);
	free(js);
	free(js2);
	free(js3);
	policy_free(p);
}

/* Many entries: table growth while loading and adding, every entry found. */
static void test_many(void)
{
	const size_t n = 50000;
	size_t cap = n * 100 + 64, o = 0, bad = 0;
	char *big = malloc(cap), err[256], path[64];
	struct policy *p;
	uint8_t d[32];

	o += (size_t)snprintf(big + o, cap - o, "{\"version\":1,\"digests\":{");
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(big + o, cap - o, "%s\"/f/%zu\":[\"sha256:%064zx\"]",
				      i ? "," : "", i, i);
	snprintf(big + o, cap - o, "}}");
	p = policy_load(big, strlen(big), err, sizeof(err));
	free(big);
	CHECK(p != NULL, "big policy: %s", err);
	if (!p)
		return;
	CHECK(policy_entry_count(p) == n, "count %zu", policy_entry_count(p));
	for (size_t i = 0; i < n; i++) {
		memset(d, 0, sizeof(d));
		for (size_t j = 0, v = i; j < 8; j++, v >>= 8)
			d[31 - j] = (uint8_t)v;
		snprintf(path, sizeof(path), "/f/%zu", i);
		if (policy_check(p, path, strlen(path), TPM2_ALG_SHA256, d, 32) != POLICY_ALLOWED)
			bad++;
		d[0] ^= 1;
		if (policy_check(p, path, strlen(path), TPM2_ALG_SHA256, d, 32) !=
		    POLICY_DIGEST_MISMATCH)
			bad++;
	}
	CHECK(bad == 0, "%zu lookups wrong", bad);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/g/%zu", i);
		if (policy_add_digest(p, path, TPM2_ALG_SHA256, d, 32))
			bad++;
	}
	CHECK(bad == 0 && policy_entry_count(p) == 2 * n, "added %zu paths", n);
	CHECK(policy_check(p, "/f/7", 4, TPM2_ALG_SHA256, d, 32) == POLICY_DIGEST_MISMATCH &&
		      policy_check(p, "/g/7", 4, TPM2_ALG_SHA256, d, 32) == POLICY_ALLOWED,
	      "after growth");
	policy_free(p);
}

struct worker {
	struct policy *p;
	int wrong;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct policy *p = policy_ref(w->p);
	uint8_t d[64];

	unhex(A256, d);
	for (int i = 0; i < 20000; i++) {
		if (policy_check(p, "/usr/bin/a", 10, TPM2_ALG_SHA256, d, 32) != POLICY_ALLOWED)
			w->wrong++;
		if (policy_check(p, "/tmp/q", 6, TPM2_ALG_SHA256, d, 32) != POLICY_EXCLUDED)
			w->wrong++;
	}
	policy_unref(p);
	return NULL;
}

static void test_threads(void)
{
	char err[256];
	struct policy *p = load(ours, err, sizeof(err));
	struct worker w[4];
	pthread_t t[4];
	int started = 0, wrong = 0;

	CHECK(p != NULL, "load: %s", err);
	if (!p)
		return;
	for (int i = 0; i < 4; i++) {
		w[i].p = p;
		w[i].wrong = 0;
		if (pthread_create(&t[i], NULL, worker_run, &w[i]) == 0)
			started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(t[i], NULL);
		wrong += w[i].wrong;
	}
	CHECK(started == 4 && wrong == 0, "%d threads, %d wrong answers", started, wrong);
	/* Every worker dropped its reference: ours is the last one, so the policy is private. */
	uint8_t d[20] = { 0 };

	CHECK(policy_add_digest(p, "/after", TPM2_ALG_SHA1, d, 20) == 0, "refs balanced");
	policy_free(p);
}

/* What a policy lists for one path, as the violations list shows it beside a digest_mismatch. */
static void test_path_digests(void)
{
	static const char ours_doc[] =
		"{\"version\": 1, \"digests\": {\"/bin/a\": [\"sha1:0000000000000000000000000000000000000001\","
		" \"sha256:00000000000000000000000000000000000000000000000000000000000000aa\"],"
		" \"/bin/none\": []}}";
	static const char keylime_doc[] =
		"{\"meta\": {\"version\": 5}, \"digests\": {\"/usr/bin/my tool\": [\"00000000000000000000000000000000000000000000000000000000000000BB\"],"
		" \"boot_aggregate\": [\"0000000000000000000000000000000000000002\"]}}";
	char err[200] = "";
	struct policy *p = policy_load(ours_doc, sizeof(ours_doc) - 1, err, sizeof(err));
	json_t *d;
	char *s;

	CHECK(p, "our format loads: %s", err);
	d = policy_json_path_digests(p, "/bin/a", 6);
	s = d ? json_dumps(d, JSON_COMPACT) : NULL;
	CHECK(s && !strcmp(s, "[\"sha1:0000000000000000000000000000000000000001\","
			    "\"sha256:00000000000000000000000000000000000000000000000000000000000000aa\"]"),
	      "both digests of /bin/a, alg:hex, in order: %s", s ? s : "NULL");
	free(s);
	json_decref(d);
	d = policy_json_path_digests(p, "/bin/none", 9);
	CHECK(json_is_array(d) && json_array_size(d) == 0, "a path pinned to nothing: []");
	json_decref(d);
	CHECK(!policy_json_path_digests(p, "/bin/b", 6), "a path not listed: NULL");
	CHECK(!policy_json_path_digests(p, "/bin/a", 5), "a prefix is another path: NULL");
	CHECK(!policy_json_path_digests(NULL, "/bin/a", 6), "no policy: NULL");
	policy_unref(p);

	p = policy_load(keylime_doc, sizeof(keylime_doc) - 1, err, sizeof(err));
	CHECK(p, "the Keylime policy loads: %s", err);
	d = policy_json_path_digests(p, "/usr/bin/my_tool", 16);
	s = d ? json_dumps(d, JSON_COMPACT) : NULL;
	CHECK(s && !strcmp(s, "[\"sha256:00000000000000000000000000000000000000000000000000000000000000bb\"]"),
	      "Keylime: the recorded (underscored) path, its hex as alg:hex: %s", s ? s : "NULL");
	free(s);
	json_decref(d);
	CHECK(!policy_json_path_digests(p, "boot_aggregate", 14), "Keylime's boot_aggregate is no path");
	policy_unref(p);
}

/*
 * fs-verity digests are typed: "verity:alg:hex" matches only an entry's verity: digest, and
 * "alg:hex" (or "ima:alg:hex") only IMA's file hash, in the path table and in digest_only;
 * the type survives serialising; boot_aggregate's list takes no type.
 */
static enum policy_decision chk_typed(const struct policy *p, const char *path,
				      enum ima_digest_type t, const char *hex)
{
	uint8_t d[64];
	size_t n = unhex(hex, d);

	return policy_check_typed(p, path, strlen(path), t, TPM2_ALG_SHA256, d, n);
}

static void test_verity_typed(void)
{
	static const char *json =
		"{ \"version\": 1,\n"
		"  \"digests\": {\n"
		"    \"/usr/bin/v\": [\"verity:sha256:" A256 "\"],\n"
		"    \"/usr/bin/i\": [\"ima:sha256:" B256 "\"],\n"
		"    \"/usr/bin/both\": [\"sha256:" A256 "\", \"verity:sha256:" B256 "\"]\n"
		"  },\n"
		"  \"digest_only\": [\"verity:sha256:" A256 "\"]\n"
		"}\n";
	char err[256], *out = NULL, *again = NULL;
	struct policy *p = load(json, err, sizeof(err)), *q = NULL;
	uint8_t d[64];

	CHECK(p != NULL, "typed digests load: %s", p ? "" : err);
	if (!p)
		return;
	CHECK(chk_typed(p, "/usr/bin/v", IMA_DIGEST_VERITY, A256) == POLICY_ALLOWED,
	      "a verity digest listed as verity:");
	CHECK(chk_typed(p, "/usr/bin/v", IMA_DIGEST_IMA, A256) == POLICY_DIGEST_MISMATCH,
	      "the same bytes as IMA's hash: not listed");
	CHECK(chk(p, "/usr/bin/v", TPM2_ALG_SHA256, A256) == POLICY_DIGEST_MISMATCH,
	      "policy_check() judges IMA's hash");
	CHECK(chk_typed(p, "/usr/bin/i", IMA_DIGEST_IMA, B256) == POLICY_ALLOWED,
	      "ima: is IMA's hash");
	CHECK(chk_typed(p, "/usr/bin/i", IMA_DIGEST_VERITY, B256) == POLICY_DIGEST_MISMATCH,
	      "an IMA hash does not allow that verity digest");
	CHECK(chk_typed(p, "/usr/bin/both", IMA_DIGEST_IMA, A256) == POLICY_ALLOWED &&
		      chk_typed(p, "/usr/bin/both", IMA_DIGEST_VERITY, B256) == POLICY_ALLOWED &&
		      chk_typed(p, "/usr/bin/both", IMA_DIGEST_VERITY, A256) ==
			      POLICY_DIGEST_MISMATCH,
	      "one path, one digest of each type");
	CHECK(chk_typed(p, "/usr/bin/v", IMA_DIGEST_OTHER, A256) == POLICY_DIGEST_MISMATCH,
	      "a digest of another type matches nothing");
	CHECK(chk_typed(p, "/unknown", IMA_DIGEST_VERITY, A256) == POLICY_ALLOWED &&
		      chk_typed(p, "/unknown", IMA_DIGEST_IMA, A256) == POLICY_NOT_IN_ALLOWLIST,
	      "digest_only is typed too");
	out = policy_to_json(p);
	CHECK(out && strstr(out, "\"verity:sha256:" A256 "\"") &&
		      strstr(out, "\"sha256:" B256 "\"") && !strstr(out, "ima:"),
	      "serialised with verity: (ima: is the default, not written)");
	q = out ? load(out, err, sizeof(err)) : NULL;
	again = q ? policy_to_json(q) : NULL;
	CHECK(again && !strcmp(out, again), "and it reads back the same");
	CHECK(q && chk_typed(q, "/usr/bin/v", IMA_DIGEST_VERITY, A256) == POLICY_ALLOWED &&
		      chk_typed(q, "/usr/bin/v", IMA_DIGEST_IMA, A256) == POLICY_DIGEST_MISMATCH,
	      "the reloaded policy keeps the types");
	policy_unref(q);
	q = policy_new();
	unhex(A256, d);
	CHECK(q && policy_add_file_digest(q, "/x", 2, IMA_DIGEST_VERITY, TPM2_ALG_SHA256, d, 32) ==
			   0 &&
		      chk_typed(q, "/x", IMA_DIGEST_VERITY, A256) == POLICY_ALLOWED &&
		      chk_typed(q, "/x", IMA_DIGEST_IMA, A256) == POLICY_DIGEST_MISMATCH,
	      "policy_add_file_digest() adds a verity digest");
	CHECK(q && policy_add_file_digest(q, "/x", 2, IMA_DIGEST_OTHER, TPM2_ALG_SHA256, d, 32) ==
			   -EINVAL,
	      "no digest of another type");
	policy_unref(q);
	q = load("{\"version\": 1, \"boot_aggregate\": [\"verity:sha256:" A256 "\"]}", err,
		 sizeof(err));
	CHECK(!q, "boot_aggregate takes no verity digest: %s", err);
	policy_unref(q);
	q = load("{\"version\": 1, \"digests\": {\"/a\": [\"other:sha256:" A256 "\"]}}", err,
		 sizeof(err));
	CHECK(!q, "an unknown type is refused: %s", err);
	policy_unref(q);
	free(out);
	free(again);
	policy_unref(p);
}

int main(void)
{
	CASE(test_ours);
	CASE(test_defaults);
	CASE(test_keylime);
	CASE(test_rejects);
	CASE(test_add_roundtrip);
	CASE(test_raw_paths);
	CASE(test_many);
	CASE(test_threads);
	CASE(test_path_digests);
	CASE(test_verity_typed);
	return check_finish();
}
