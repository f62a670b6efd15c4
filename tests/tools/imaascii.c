/*
 * imaascii: an IMA ascii_runtime_measurements text (one entry per line, as the kernel prints
 * it and as Keylime's tests quote it) back to the binary list attestctl reads.
 *
 *   imaascii [--rehash] < ASCII > LIST
 *
 * Lines: `PCR TEMPLATE_HASH TEMPLATE FIELD...` with single spaces (an empty last field, such
 * as the sig of an unsigned ima-sig entry, leaves a trailing space). Templates: ima-ng
 * (d-ng n-ng), ima-sig (d-ng n-ng sig), ima-buf (d-ng n-ng buf), and the d-ngv2 ones (kernel
 * 5.19+) ima-ngv2 (d-ngv2 n-ng) and ima-sigv2 (d-ngv2 n-ng sig). d-ng is `alg:hex` and
 * becomes "alg:\0" + digest, d-ngv2 `type:alg:hex` (type ima or verity) "type:alg:\0" +
 * digest; n-ng the name and a NUL; sig and buf hex (formats.md 1.2, 1.6).
 *
 * The rebuilt template data must hash (SHA-1) to the line's template hash: that is the check
 * that the binary entry is the one the kernel wrote. --rehash writes the computed hash instead
 * (for made-up lines). Exit 0, 1 a line that does not rebuild to its hash, 2 bad input.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "proto/encoding.h"

#define LINE_MAX_BYTES (1u << 20)

static uint8_t data[LINE_MAX_BYTES];

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Appends one `u32 len | bytes` field; false when it does not fit. */
static bool field(size_t *off, const void *bytes, size_t n)
{
	if (n > sizeof(data) - 4 || *off > sizeof(data) - 4 - n)
		return false;
	put_le32(data + *off, (uint32_t)n);
	memcpy(data + *off + 4, bytes, n);
	*off += 4 + n;
	return true;
}

static bool hex_field(size_t *off, const char *hex, size_t len)
{
	static uint8_t tmp[LINE_MAX_BYTES / 2];
	ssize_t n = len ? hex_decode(hex, len, tmp, sizeof(tmp)) : 0;

	return n >= 0 && field(off, tmp, (size_t)n);
}

/* d-ng: "alg:hex" -> "alg:\0" digest; d-ngv2: "type:alg:hex" -> "type:alg:\0" digest. */
static bool dng_field(size_t *off, const char *s, size_t len)
{
	static uint8_t tmp[64 + 80];
	const char *colon = memrchr(s, ':', len);
	size_t alen = colon ? (size_t)(colon - s) : 0;
	ssize_t n;

	if (!colon || alen > 32)
		return false;
	memcpy(tmp, s, alen);
	tmp[alen] = ':';
	tmp[alen + 1] = '\0';
	n = hex_decode(colon + 1, len - alen - 1, tmp + alen + 2, sizeof(tmp) - alen - 2);
	return n >= 0 && field(off, tmp, alen + 2 + (size_t)n);
}

/* One line (without its newline) to one binary record on stdout. 0, 1 hash mismatch, 2 bad. */
static int convert(char *line, size_t len, bool rehash, unsigned long lineno)
{
	const char *w[8];
	size_t wl[8], nw = 0, off = 0;
	uint8_t want[20], got[20], hdr[4 + 20 + 4];
	char *end;
	unsigned long pcr;

	for (size_t i = 0, start = 0; i <= len; i++) {
		if (i == len || line[i] == ' ') {
			if (nw == 8)
				return 2;
			w[nw] = line + start;
			wl[nw++] = i - start;
			start = i + 1;
		}
	}
	if (nw < 5)
		return 2;
	errno = 0;
	pcr = strtoul(w[0], &end, 10);
	if (errno || end != w[0] + wl[0] || pcr > 23 || wl[1] != 40 ||
	    hex_decode(w[1], 40, want, sizeof(want)) != 20)
		return 2;
	if (!dng_field(&off, w[3], wl[3]))
		return 2;
	{
		static char name[LINE_MAX_BYTES];

		memcpy(name, w[4], wl[4]);
		name[wl[4]] = '\0';
		if (!field(&off, name, wl[4] + 1))
			return 2;
	}
	if ((wl[2] == 6 && !memcmp(w[2], "ima-ng", 6)) ||
	    (wl[2] == 8 && !memcmp(w[2], "ima-ngv2", 8))) {
		if (nw != 5)
			return 2;
	} else if ((wl[2] == 7 && !memcmp(w[2], "ima-sig", 7)) ||
		   (wl[2] == 7 && !memcmp(w[2], "ima-buf", 7)) ||
		   (wl[2] == 9 && !memcmp(w[2], "ima-sigv2", 9))) {
		if (nw != 6 || !hex_field(&off, w[5], wl[5]))
			return 2;
	} else {
		return 2;
	}
	SHA1(data, off, got);
	if (!rehash && memcmp(got, want, 20) != 0) {
		fprintf(stderr, "imaascii: line %lu: the rebuilt data does not hash to its template hash\n",
			lineno);
		return 1;
	}
	put_le32(hdr, (uint32_t)pcr);
	memcpy(hdr + 4, rehash ? got : want, 20);
	put_le32(hdr + 24, (uint32_t)wl[2]);
	if (fwrite(hdr, 1, 28, stdout) != 28 || fwrite(w[2], 1, wl[2], stdout) != wl[2])
		return 2;
	put_le32(hdr, (uint32_t)off);
	if (fwrite(hdr, 1, 4, stdout) != 4 || fwrite(data, 1, off, stdout) != off)
		return 2;
	return 0;
}

int main(int argc, char **argv)
{
	static char line[LINE_MAX_BYTES * 2 + 1024];
	bool rehash = argc == 2 && !strcmp(argv[1], "--rehash");
	unsigned long lineno = 0;
	int worst = 0;

	if (argc > 2 || (argc == 2 && !rehash)) {
		fprintf(stderr, "usage: imaascii [--rehash] < ASCII > LIST\n");
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		size_t len = strlen(line);
		int r;

		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (!len)
			continue;
		r = convert(line, len, rehash, lineno);
		if (r == 2)
			fprintf(stderr, "imaascii: line %lu: not an ima-ng, ima-sig, ima-buf, ima-ngv2 or ima-sigv2 entry\n", lineno);
		if (r > worst)
			worst = r;
	}
	if (fflush(stdout) != 0)
		return 2;
	return worst;
}
