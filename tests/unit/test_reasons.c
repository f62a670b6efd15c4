/*
 * verifier/facts/reasons.h is the one list of verdict reasons: its rows are well formed, each of
 * the quote's failures has a row of its own (reason_of_quote()), and SECURITY.md's reason table and
 * the web page's labels name exactly the table's reasons (run from the repository root, as
 * tests/run does).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "proto/dynbuf.h"
#include "proto/quote.h"
#include "verifier/facts/reasons.h"
#include "tests/unit/check.h"

#define NAMES_MAX 128u

struct names {
	char name[NAMES_MAX][40];
	unsigned n;
};

/* The whole file as a string (the caller frees it), or NULL. */
static char *slurp(const char *path)
{
	struct dynbuf b;

	dynbuf_init(&b, 1u << 20);
	if (file_read(path, &b)) {
		dynbuf_release(&b);
		return NULL;
	}
	return dynbuf_take(&b, NULL);
}

static void names_add(struct names *n, const char *s, size_t len)
{
	if (n->n < NAMES_MAX && len < sizeof(n->name[0])) {
		memcpy(n->name[n->n], s, len);
		n->name[n->n++][len] = '\0';
	}
}

static bool names_has(const struct names *n, const char *s)
{
	for (unsigned i = 0; i < n->n; i++)
		if (!strcmp(n->name[i], s))
			return true;
	return false;
}

/* Compares a document's names with the table's, both ways; `what` names the document. */
static void check_same_as_table(const struct names *doc, const char *what)
{
	unsigned missing = 0, extra = 0;

	for (unsigned i = 0; i < REASON_COUNT; i++) {
		if (!names_has(doc, reason_name(i))) {
			fprintf(stderr, "%s lacks reason %s\n", what, reason_name(i));
			missing++;
		}
	}
	for (unsigned i = 0; i < doc->n; i++) {
		enum reason r;

		if (!reason_from_name(doc->name[i], &r)) {
			fprintf(stderr, "%s names %s, which reasons.h does not have\n", what, doc->name[i]);
			extra++;
		}
	}
	CHECK(missing == 0, "%s names every reason of the table (%u missing)", what, missing);
	CHECK(extra == 0, "%s names no reason the table lacks (%u extra)", what, extra);
	CHECK(doc->n == REASON_COUNT, "%s names each reason once (%u rows, %u reasons)", what, doc->n,
	      (unsigned)REASON_COUNT);
}

static void test_table_rows(void)
{
	unsigned bad = 0, dup = 0;

	for (unsigned i = 0; i < REASON_COUNT; i++) {
		const struct reason_info *r = reason_info(i);
		enum reason back;

		if (!r->name || !r->name[0] || !r->hint || !r->hint[0] || strlen(r->name) >= 32)
			bad++;
		for (const char *p = r->name; p && *p; p++)
			if (!islower((unsigned char)*p) && *p != '_')
				bad++;
		if (!reason_from_name(r->name, &back) || back != (enum reason)i)
			dup++;
	}
	CHECK(bad == 0, "every reason has a lowercase wire name under 32 bytes and a hint");
	CHECK(dup == 0, "wire names are unique and map back to their enum");
	enum reason r;
	CHECK(!reason_from_name("no_such_reason", &r) && !reason_from_name(NULL, &r),
	      "unknown names are not reasons");
	CHECK(reason_info(REASON_NOT_IN_ALLOWLIST)->kind == REASON_KIND_LEARNABLE &&
	      reason_info(REASON_DIGEST_MISMATCH)->kind == REASON_KIND_LEARNABLE &&
	      reason_info(REASON_VIOLATION_ENTRY)->kind == REASON_KIND_VIOLATION &&
	      reason_info(REASON_PCR_MISMATCH)->kind == REASON_KIND_VERDICT,
	      "approval teaches the policy only files the policy did not allow");
}

static void test_quote_results_are_reasons(void)
{
	unsigned shared = 0;

	for (int q = QUOTE_OK + 1; q <= QUOTE_UNSUPPORTED_ALGORITHM; q++) {
		for (int p = QUOTE_OK + 1; p < q; p++) {
			if (reason_of_quote((enum quote_result)q) == reason_of_quote((enum quote_result)p)) {
				fprintf(stderr, "quote results %d and %d give one reason, %s\n", p, q,
					reason_name(reason_of_quote((enum quote_result)q)));
				shared++;
			}
		}
	}
	CHECK(shared == 0, "every quote failure is a reason of its own");
	CHECK(reason_of_quote(QUOTE_PCR_DIGEST_MISMATCH) == REASON_PCR_DIGEST_MISMATCH &&
		      reason_of_quote(QUOTE_BAD_SIGNATURE) == REASON_BAD_SIGNATURE &&
		      reason_of_quote(QUOTE_UNSUPPORTED_ALGORITHM) == REASON_UNSUPPORTED_ALGORITHM,
	      "a quote failure's reason is the one of its name");
}

/* Rows "| `name` | ..." of the table under the heading "## Verdict reasons". */
static void test_security_md(void)
{
	char *doc = slurp("SECURITY.md");
	struct names n = {0};
	char *sec, *end;

	CHECK(doc != NULL, "SECURITY.md readable from the working directory");
	if (!doc)
		return;
	sec = strstr(doc, "\n## Verdict reasons\n");
	CHECK(sec != NULL, "SECURITY.md has a \"Verdict reasons\" section");
	if (sec) {
		end = strstr(sec + 1, "\n## ");
		if (end)
			*end = '\0';
		for (char *line = strstr(sec, "\n| `"); line; line = strstr(line + 1, "\n| `")) {
			char *name = line + 4, *close = strchr(name, '`');

			if (close)
				names_add(&n, name, (size_t)(close - name));
		}
		check_same_as_table(&n, "SECURITY.md's reason table");
	}
	free(doc);
}

/* Keys of `const REASON_LABELS = { key: '...', ... };` in the page's script. */
static void test_web_labels(void)
{
	char *js = slurp("verifier/http/ui/app.js");
	struct names n = {0};
	char *obj, *end;

	CHECK(js != NULL, "verifier/http/ui/app.js readable from the working directory");
	if (!js)
		return;
	obj = strstr(js, "const REASON_LABELS = {");
	end = obj ? strstr(obj, "\n\t};") : NULL;
	CHECK(obj && end, "the page defines REASON_LABELS");
	if (obj && end) {
		*end = '\0';
		for (char *line = strchr(obj, '\n'); line; line = strchr(line + 1, '\n')) {
			char *p = line + 1, *colon;

			while (*p == '\t' || *p == ' ')
				p++;
			colon = strchr(p, ':');
			if (colon && colon > p && (islower((unsigned char)*p)))
				names_add(&n, p, (size_t)(colon - p));
		}
		check_same_as_table(&n, "the web page's REASON_LABELS");
	}
	free(js);
}

int main(void)
{
	CASE(test_table_rows);
	CASE(test_quote_results_are_reasons);
	CASE(test_security_md);
	CASE(test_web_labels);
	return check_finish();
}
