/*
 * verifier/http/tokens.h: the token file (a bare token, named lines, comments) and what it refuses
 * with the line named; lookups find the right entry and nothing else.
 */
#include <errno.h>
#include <string.h>

#include "verifier/http/tokens.h"
#include "tests/unit/check.h"

static int parse(const char *text, struct tokens **t, char *err)
{
	return tokens_parse(text, strlen(text), t, err, 200);
}

static void test_formats(void)
{
	struct tokens *t = NULL;
	const struct token_entry *e;
	char err[200] = "";

	CHECK(parse("0123456789abcdef0123\n", &t, err) == 0 && t->n == 1 &&
	      !strcmp(t->v[0].name, "operator") && !t->v[0].read_only,
	      "a bare token is \"operator\", with the operator role");
	tokens_free(t);
	CHECK(parse("# NAME ROLE TOKEN\n\nalice operator aaaaaaaaaaaaaaaaaaaa\r\n"
		    "  grafana\tread-only  bbbbbbbbbbbbbbbbbbbb\n", &t, err) == 0 && t->n == 2,
	      "named lines, comments, blank lines, CRLF, tabs: %s", err);
	e = tokens_find(t, "bbbbbbbbbbbbbbbbbbbb", 20);
	CHECK(e && !strcmp(e->name, "grafana") && e->read_only, "the read-only token is found");
	e = tokens_find(t, "aaaaaaaaaaaaaaaaaaaa", 20);
	CHECK(e && !strcmp(e->name, "alice") && !e->read_only, "alice's is found");
	CHECK(!tokens_find(t, "aaaaaaaaaaaaaaaaaaa", 19) && !tokens_find(t, "", 0) &&
	      !tokens_find(t, "alice", 5), "a prefix, nothing, or a name is no token");
	tokens_free(t);
}

static void test_refusals(void)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "short\n", "line 1: the token is shorter" },
		{ "a operator aaaaaaaaaaaaaaaaaaaa\na read-only bbbbbbbbbbbbbbbbbbbb\n",
		  "line 2: the name \"a\" is taken" },
		{ "a operator aaaaaaaaaaaaaaaaaaaa\nb operator aaaaaaaaaaaaaaaaaaaa\n",
		  "line 2: the same token as \"a\"" },
		{ "a admin aaaaaaaaaaaaaaaaaaaa\n", "line 1: want NAME operator|read-only TOKEN" },
		{ "a/b operator aaaaaaaaaaaaaaaaaaaa\n", "line 1: want NAME" },
		{ "a operator aaaaaaaaaaaaaaaaaaaa extra\n", "line 1: want NAME" },
		{ "# nothing\n\n", "no token in the file" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tokens *t = (struct tokens *)1;
		char err[200] = "";

		CHECK(parse(bad[i].text, &t, err) == -EINVAL && !t &&
		      !strncmp(err, bad[i].why, strlen(bad[i].why)),
		      "refused %zu: want \"%s\", got \"%s\"", i, bad[i].why, err);
	}
}

int main(void)
{
	CASE(test_formats);
	CASE(test_refusals);
	return check_finish();
}
