/*
 * Minimal test harness for the C unit tests: CHECKs grouped into named cases.
 *
 * CHECK(cond, fmt, ...) records one passed or one failed check; a failure prints
 * `FAIL file:line: message` on stderr and does not stop the case.
 *
 * A case is a function of no arguments, run from main() with CASE(test_fn); it is named after
 * the function, without "test_" and with spaces for underscores ("fn"). What several cases use
 * (a store, keys, a temporary directory) is file-scope, set up in main() before the cases and
 * said so where it is declared; a case run with other arguments is a small wrapper.
 * Each case prints one line on stdout when it ends, after its failures:
 *   ok 3 - policy: defaults
 *   FAIL 4 - policy: rejects (2 of 17 checks failed)
 * A failing case never stops the ones after it: every case runs. A case that runs no CHECK at
 * all fails (a test that cannot fail is a defect) and counts as one failed check. A case that
 * crashes ends the program (no fork per case: cases may share state set up in main()).
 *
 * check_finish() prints `# cases: N ok, N failed`, then the line
 * every test program ends with, `N passed, N failed`, where N counts CHECKs (not cases; the
 * checks made outside any case count too), and returns the exit status. tests/run parses that
 * last line. State is per test program (one translation unit includes this header).
 */
#ifndef TESTS_UNIT_CHECK_H
#define TESTS_UNIT_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed;
static int check_failed;
static int check_case_no;          /* cases begun so far */
static int check_cases_failed;
static char check_case_name[128];  /* the open case, or "" */
static char check_case_prog[64];    /* "policy" for tests/unit/test_policy.c */
static int check_case_p0, check_case_f0; /* counters when the open case began */

#define CHECK(cond, ...)                                                          \
	do {                                                                      \
		if (cond) {                                                       \
			check_passed++;                                           \
		} else {                                                          \
			check_failed++;                                           \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);      \
			fprintf(stderr, __VA_ARGS__);                             \
			fputc('\n', stderr);                                      \
		}                                                                 \
	} while (0)

static inline void check_case_end(void)
{
	int p, f;

	if (!check_case_name[0])
		return;
	p = check_passed - check_case_p0;
	f = check_failed - check_case_f0;
	if (p + f == 0) {
		check_failed++;
		f = 1;
		fprintf(stderr, "FAIL %s: %s: the case ran no CHECK\n", check_case_prog,
			check_case_name);
	}
	fflush(stderr);
	if (f) {
		check_cases_failed++;
		printf("FAIL %d - %s: %s (%d of %d checks failed)\n", check_case_no,
		       check_case_prog, check_case_name, f, p + f);
	} else {
		printf("ok %d - %s: %s\n", check_case_no, check_case_prog, check_case_name);
	}
	fflush(stdout);
	check_case_name[0] = '\0';
}

/*
 * file: __FILE__ of the test program, for the prefix of its case lines. name: the case's
 * function, shown without "test_" and with spaces for underscores.
 */
static inline void check_case_begin(const char *file, const char *name)
{
	const char *base = strrchr(file, '/');
	size_t n;

	check_case_end();
	base = base ? base + 1 : file;
	if (strncmp(base, "test_", 5) == 0)
		base += 5;
	n = strcspn(base, ".");
	if (n >= sizeof(check_case_prog))
		n = sizeof(check_case_prog) - 1;
	memcpy(check_case_prog, base, n);
	check_case_prog[n] = '\0';
	check_case_no++;
	if (strncmp(name, "test_", 5) == 0 && name[5])
		name += 5;
	snprintf(check_case_name, sizeof(check_case_name), "%s", name[0] ? name : "?");
	for (char *c = check_case_name; *c; c++)
		if (*c == '_')
			*c = ' ';
	check_case_p0 = check_passed;
	check_case_f0 = check_failed;
	fflush(stdout); /* anything the program printed comes before this case's failures */
}

#define CASE(fn)                                 \
	do {                                     \
		check_case_begin(__FILE__, #fn); \
		fn();                            \
		check_case_end();                \
	} while (0)

static inline int check_finish(void)
{
	check_case_end();
	fflush(stderr);
	if (check_case_no)
		printf("# cases: %d ok, %d failed\n", check_case_no - check_cases_failed,
		       check_cases_failed);
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif
