/*
 * Test vectors under tests/data/tpm (or $TPM_TEST_DATA): load a whole file. A missing or
 * unreadable vector ends the test program with exit 2 (it is the test's setup, not a result).
 * The caller frees blob.p.
 */
#ifndef TESTS_UNIT_TESTDATA_H
#define TESTS_UNIT_TESTDATA_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct blob {
	uint8_t *p;
	size_t n;
};

static inline struct blob load(const char *name)
{
	char path[512];
	const char *dir = getenv("TPM_TEST_DATA");
	struct blob b = {NULL, 0};
	FILE *f;
	long sz;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data/tpm", name);
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(2);
	}
	if (fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0) {
		fprintf(stderr, "cannot size %s\n", path);
		exit(2);
	}
	rewind(f);
	b.p = malloc((size_t)sz + 1);
	if (!b.p || fread(b.p, 1, (size_t)sz, f) != (size_t)sz) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(2);
	}
	b.n = (size_t)sz;
	fclose(f);
	return b;
}

#endif
