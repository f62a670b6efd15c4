/*
 * Unit tests for package-aware policies (policies/README.md, "Packages"): loading the packages
 * list, decisions by the union of versions, the conffiles setting, explanations that name the
 * package, rejections, and the round trip through policy_to_json() with an operator's approval.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_tpm2_types.h>

#include "proto/encoding.h"
#include "tests/unit/check.h"
#include "verifier/policy/policy.h"

#define A "87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7"
#define B "0263829989b6fd954f72baaf2fc64bc2e2f01d692d4de72986ea808f6e99813f"
#define C "1111111111111111111111111111111111111111111111111111111111111111"
#define E "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"

static const char two_versions[] =
	"{\"version\": 1, \"digests\": {\"/usr/bin/other\": [\"sha256:" C "\"]},"
	" \"packages\": ["
	"  {\"package\": \"foo\", \"version\": \"1.0-1\", \"architecture\": \"amd64\","
	"   \"files\": {\"/usr/bin/foo\": [\"sha256:" A "\"], \"/etc/foo.conf\": [\"sha256:" C "\"]},"
	"   \"files_hex\": {\"2f7573722f6c69622f666f6f2f636166e9\": [\"sha256:" C "\"]},"
	"   \"conffiles\": [\"/etc/foo.conf\"]},"
	"  {\"package\": \"foo\", \"version\": \"1.1-1\", \"architecture\": \"amd64\","
	"   \"files\": {\"/usr/bin/foo\": [\"sha256:" B "\"], \"/etc/foo.conf\": [\"sha256:" C "\"]},"
	"   \"conffiles\": [\"/etc/foo.conf\"], \"missing_since\": 1700000000},"
	"  {\"package\": \"bar\", \"version\": \"2:3.4~rc1+dfsg-2\", \"architecture\": \"all\","
	"   \"files\": {\"/usr/bin/bar\": [\"sha256:" A "\"]}}"
	"]}";

static enum policy_decision chk(const struct policy *p, const char *path, const char *hex)
{
	uint8_t d[32];

	hex_decode(hex, 64, d, sizeof(d));
	return policy_check(p, path, strlen(path), TPM2_ALG_SHA256, d, 32);
}

static struct policy *load(const char *s, char *err)
{
	return policy_load(s, strlen(s), err, 256);
}

static void test_decisions(void)
{
	char err[256], why[POLICY_EXPLANATION_MAX];
	struct policy *p = load(two_versions, err);

	CHECK(p, "loads: %s", err);
	if (!p)
		return;
	CHECK(policy_package_count(p) == 3, "3 versions");
	CHECK(policy_entry_count(p) == 5, "5 paths: %zu", policy_entry_count(p));
	CHECK(chk(p, "/usr/bin/foo", A) == POLICY_ALLOWED, "1.0-1's content");
	CHECK(chk(p, "/usr/bin/foo", B) == POLICY_ALLOWED, "1.1-1's content");
	CHECK(chk(p, "/usr/bin/foo", E) == POLICY_DIGEST_MISMATCH, "other content");
	CHECK(chk(p, "/usr/lib/foo/caf\xe9", C) == POLICY_ALLOWED, "a path that is not UTF-8");
	CHECK(chk(p, "/etc/foo.conf", E) == POLICY_DIGEST_MISMATCH, "an edited conffile (packaged)");
	CHECK(chk(p, "/usr/bin/other", C) == POLICY_ALLOWED, "digests beside packages");
	CHECK(policy_explain(p, "/usr/bin/foo", 12, POLICY_DIGEST_MISMATCH, why, sizeof(why)) &&
		      !strcmp(why, "/usr/bin/foo: not the content of any known version of foo 1.0-1, 1.1-1; the file was changed after installation or comes from elsewhere"),
	      "explains the mismatch: %s", why);
	CHECK(policy_explain(p, "/usr/bin/bar", 12, POLICY_DIGEST_MISMATCH, why, sizeof(why)) &&
		      strstr(why, "of bar 2:3.4~rc1+dfsg-2;"), "bar's one version: %s", why);
	CHECK(policy_explain(p, "/etc/foo.conf", 13, POLICY_DIGEST_MISMATCH, why, sizeof(why)) &&
		      strstr(why, "a conffile"), "says a conffile: %s", why);
	CHECK(policy_explain(p, "/usr/bin/evil", 13, POLICY_NOT_IN_ALLOWLIST, why, sizeof(why)) &&
		      !strcmp(why, "/usr/bin/evil: no package owns this path"), "no owner: %s", why);
	CHECK(!policy_explain(p, "/usr/bin/other", 14, POLICY_DIGEST_MISMATCH, why, sizeof(why)) &&
		      !why[0], "a path only digests lists: nothing to add");
	CHECK(policy_explain(p, "/usr/lib/foo/caf\xe9", 17, POLICY_DIGEST_MISMATCH, why, sizeof(why)) &&
		      !strncmp(why, "/usr/lib/foo/caf\\xe9: ", 22), "a path that is not UTF-8 shown escaped: %s", why);
	policy_free(p);

	p = load("{\"version\": 1, \"digests\": {\"/a\": [\"sha256:" A "\"]}}", err);
	CHECK(p && !policy_explain(p, "/b", 2, POLICY_NOT_IN_ALLOWLIST, why, sizeof(why)),
	      "a policy without packages explains nothing");
	policy_free(p);
}

static void test_conffiles_any(void)
{
	char err[256], *text = malloc(sizeof(two_versions) + 64);
	struct policy *p;

	snprintf(text, sizeof(two_versions) + 64, "{\"conffiles\": \"any\", %s", two_versions + 1);
	p = load(text, err);
	CHECK(p, "loads: %s", err);
	CHECK(p && chk(p, "/etc/foo.conf", E) == POLICY_EXCLUDED, "an edited conffile passes");
	CHECK(p && chk(p, "/usr/bin/foo", E) == POLICY_DIGEST_MISMATCH, "a binary does not");
	policy_free(p);
	free(text);
}

static void test_rejects(void)
{
	static const char *const bad[] = {
		"{\"version\": 1, \"packages\": {}}",
		"{\"version\": 1, \"packages\": [{\"package\": \"Foo\", \"version\": \"1\", \"architecture\": \"amd64\"}]}",
		"{\"version\": 1, \"packages\": [{\"package\": \"foo\", \"version\": \"1 2\", \"architecture\": \"amd64\"}]}",
		"{\"version\": 1, \"packages\": [{\"package\": \"foo\", \"version\": \"1\"}]}",
		"{\"version\": 1, \"packages\": [{\"package\": \"foo\", \"version\": \"1\", \"architecture\": \"amd64\", \"size\": 3}]}",
		"{\"version\": 1, \"packages\": [{\"package\": \"foo\", \"version\": \"1\", \"architecture\": \"amd64\"},"
		" {\"package\": \"foo\", \"version\": \"1\", \"architecture\": \"amd64\"}]}",
		"{\"version\": 1, \"packages\": [{\"package\": \"foo\", \"version\": \"1\", \"architecture\": \"amd64\","
		" \"files\": {\"/a\": []}}]}",
		"{\"version\": 1, \"packages\": [{\"package\": \"foo\", \"version\": \"1\", \"architecture\": \"amd64\","
		" \"files\": {\"/a b\": [\"sha256:" A "\"]}}]}",
		"{\"version\": 1, \"packages\": [{\"package\": \"foo\", \"version\": \"1\", \"architecture\": \"amd64\","
		" \"files\": {\"/a\": [\"sha256:" A "\"]}, \"conffiles\": [\"/b\"]}]}",
		"{\"version\": 1, \"packages\": [{\"package\": \"foo\", \"version\": \"1\", \"architecture\": \"amd64\","
		" \"missing_since\": \"yesterday\"}]}",
		"{\"version\": 1, \"conffiles\": \"some\"}",
	};
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct policy *p = load(bad[i], err);

		CHECK(!p && err[0], "refused: %s", bad[i]);
		policy_free(p);
	}
}

static void test_roundtrip(void)
{
	char err[256];
	struct policy *p = load(two_versions, err), *q = NULL;
	char *j1 = NULL, *j2 = NULL;
	uint8_t e[32];

	CHECK(p, "loads: %s", err);
	if (!p)
		return;
	/* An operator approves another content of a path a package owns. */
	hex_decode(E, 64, e, sizeof(e));
	CHECK(policy_add_digest(p, "/usr/bin/foo", TPM2_ALG_SHA256, e, 32) == 0, "approval");
	j1 = policy_to_json(p);
	CHECK(j1 && strstr(j1, "\"missing_since\": 1700000000"), "missing_since kept");
	CHECK(j1 && strstr(j1, "\"/usr/bin/foo\": [\n   \"sha256:" E "\"\n  ]"),
	      "digests holds only the approved digest of the owned path:\n%s", j1 ? j1 : "");
	q = j1 ? load(j1, err) : NULL;
	CHECK(q, "the serialised policy loads: %s", err);
	j2 = q ? policy_to_json(q) : NULL;
	CHECK(j1 && j2 && !strcmp(j1, j2), "and serialises the same");
	CHECK(q && chk(q, "/usr/bin/foo", E) == POLICY_ALLOWED && chk(q, "/usr/bin/foo", B) == POLICY_ALLOWED,
	      "both the approval and the packages' digests pass");
	CHECK(q && policy_package_count(q) == 3, "3 versions after the round trip");
	free(j1);
	free(j2);
	policy_free(p);
	policy_free(q);
}

int main(void)
{
	CASE(test_decisions);
	CASE(test_conffiles_any);
	CASE(test_rejects);
	CASE(test_roundtrip);
	return check_finish();
}
