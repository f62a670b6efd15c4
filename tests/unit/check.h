/*
 * Minimal test harness for the C unit tests.
 *
 * CHECK(cond, fmt, ...) records one pass or one failure (printing the failure with file:line);
 * check_finish() prints the `N passed, N failed` line every test program ends with and returns
 * the exit status. State is per test program (one translation unit includes this header).
 */
#ifndef TESTS_UNIT_CHECK_H
#define TESTS_UNIT_CHECK_H

#include <stdio.h>

static int check_passed;
static int check_failed;

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

static inline int check_finish(void)
{
	fflush(stderr);
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif
