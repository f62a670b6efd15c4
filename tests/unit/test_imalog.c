/*
 * IMA binary list cursor: every template on hand-built entries whose template hashes are computed
 * here with OpenSSL one-shot EVP calls (not with the code under test), then truncation at every
 * length, bit flips at every bit, oversize fields, trailing bytes, and resume at boundaries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/imalog.h"
#include "proto/limits.h"
#include "tests/unit/check.h"

#define CAP (1u << 16)

struct list {
	uint8_t b[CAP];
	size_t len;
	size_t ends[64]; /* entry boundaries */
	unsigned n;
	size_t name_off[64], name_len[64];
	bool violation[64];
};

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

static void sha1(const void *p, size_t n, uint8_t *out)
{
	unsigned int len;

	EVP_Digest(p, n, out, &len, EVP_sha1(), NULL);
}

/* Appends `u32 len | bytes` to a template data buffer. */
static size_t field(uint8_t *d, size_t off, const void *p, size_t n)
{
	put32(d + off, (uint32_t)n);
	memcpy(d + off + 4, p, n);
	return off + 4 + n;
}

static size_t dng(uint8_t *out, const char *alg, uint8_t fill, size_t dlen)
{
	size_t a = strlen(alg);

	memcpy(out, alg, a);
	out[a] = ':';
	out[a + 1] = 0;
	memset(out + a + 2, fill, dlen);
	return a + 2 + dlen;
}

/* Appends an entry with template data; hash NULL = correct SHA-1, else the given 20 bytes. */
static void add(struct list *l, const char *tname, const uint8_t *data, size_t dlen,
		const uint8_t *hash)
{
	uint8_t *p = l->b + l->len;
	size_t t = strlen(tname);

	put32(p, 10);
	if (hash)
		memcpy(p + 4, hash, 20);
	else
		sha1(data, dlen, p + 4);
	put32(p + 24, (uint32_t)t);
	memcpy(p + 28, tname, t);
	put32(p + 28 + t, (uint32_t)dlen);
	memcpy(p + 32 + t, data, dlen);
	l->name_off[l->n] = l->len + 28;
	l->name_len[l->n] = t;
	l->violation[l->n] = hash && !memcmp(hash, (const uint8_t[20]){0}, 20);
	l->len += 32 + t + dlen;
	l->ends[l->n++] = l->len;
}

/* Template `ima`: d[20] | u32 n_len | n; hash = SHA1(d || n padded to 256). */
static void add_legacy(struct list *l, const uint8_t d[20], const char *name, size_t nlen,
		       bool violation)
{
	uint8_t *p = l->b + l->len, pad[276] = {0};

	put32(p, 10);
	memcpy(pad, d, 20);
	memcpy(pad + 20, name, nlen);
	if (violation)
		memset(p + 4, 0, 20);
	else
		sha1(pad, sizeof(pad), p + 4);
	put32(p + 24, 3);
	memcpy(p + 28, "ima", 3);
	memcpy(p + 31, d, 20);
	put32(p + 51, (uint32_t)nlen);
	memcpy(p + 55, name, nlen);
	l->name_off[l->n] = l->len + 28;
	l->name_len[l->n] = 3;
	l->violation[l->n] = violation;
	l->len += 55 + nlen;
	l->ends[l->n++] = l->len;
}

/* Counts entries; returns the final imalog_next() result. */
static int parse_all(struct imalog *log, const uint8_t *b, size_t len, unsigned *count,
		     struct ima_error *err)
{
	struct ima_entry e;
	int rc;

	imalog_reset(log, b, len, 0);
	*count = 0;
	while ((rc = imalog_next(log, &e, err)) == 1)
		(*count)++;
	return rc;
}

/* A list with one entry of every kind; used by the truncation and bit-flip sweeps. */
static void build_sample(struct list *l)
{
	uint8_t d[512], dg[80], zero20[20] = {0}, digest20[20];
	size_t n;

	memset(l, 0, sizeof(*l));
	n = field(d, 0, dg, dng(dg, "sha256", 0xab, 32));
	n = field(d, n, "boot_aggregate", 15);
	add(l, "ima-ng", d, n, NULL);
	n = field(d, 0, dg, dng(dg, "sha1", 0x11, 20));
	n = field(d, n, "/usr/bin/my_file_(deleted)", 27);
	n = field(d, n, "\x03\x02\x04sig", 6);
	add(l, "ima-sig", d, n, NULL);
	n = field(d, 0, dg, dng(dg, "sha256", 0x22, 32));
	n = field(d, n, "kexec-cmdline", 14);
	n = field(d, n, "root=/dev/vda", 13);
	add(l, "ima-buf", d, n, NULL);
	memset(digest20, 0x33, 20);
	add_legacy(l, digest20, "/etc/passwd", 11, false);
	n = field(d, 0, dg, dng(dg, "sha256", 0, 32));
	n = field(d, n, "/tmp/tomtou", 12);
	add(l, "ima-ng", d, n, zero20);
	add_legacy(l, zero20, "/var/log/x", 10, true);
}

/* The parser every case reads lists with, made once in main(). */
static struct imalog *shared_log;

static void test_templates(void)
{
	struct imalog *log = shared_log;
	struct list l;
	struct ima_entry e;
	struct ima_error err;
	uint8_t d[512], dg[80];
	size_t n;

	build_sample(&l);
	imalog_reset(log, l.b, l.len, 0);

	CHECK(imalog_next(log, &e, &err) == 1, "ima-ng parses: %s", err.msg);
	CHECK(e.index == 0 && e.offset == 0 && e.end == l.ends[0], "ima-ng position");
	CHECK(e.pcr == 10 && !e.violation && e.kind == IMA_TEMPLATE_FIELDS, "ima-ng header");
	CHECK(e.path_len == 14 && memcmp(e.path, "boot_aggregate", 14) == 0, "ima-ng path");
	CHECK(e.digest_alg == TPM2_ALG_SHA256 && e.digest_len == 32 && e.digest[0] == 0xab,
	      "ima-ng digest");
	CHECK(e.digest_alg_name_len == 6 && memcmp(e.digest_alg_name, "sha256", 6) == 0,
	      "ima-ng alg name");
	CHECK(e.sig == NULL && e.buf == NULL, "ima-ng has no sig/buf");

	CHECK(imalog_next(log, &e, &err) == 1, "ima-sig parses");
	CHECK(e.index == 1 && e.offset == l.ends[0], "ima-sig position");
	CHECK(e.digest_alg == TPM2_ALG_SHA1 && e.digest_len == 20, "ima-sig sha1 digest");
	CHECK(e.path_len == 26 && memcmp(e.path, "/usr/bin/my_file_(deleted)", 26) == 0,
	      "underscored name kept as recorded");
	CHECK(e.sig_len == 6 && e.sig[0] == 3, "ima-sig sig");

	CHECK(imalog_next(log, &e, &err) == 1, "ima-buf parses");
	CHECK(e.buf_len == 13 && memcmp(e.buf, "root=/dev/vda", 13) == 0, "ima-buf buf");

	CHECK(imalog_next(log, &e, &err) == 1, "ima parses: %s", err.msg);
	CHECK(e.kind == IMA_TEMPLATE_IMA && e.path_len == 11 && !memcmp(e.path, "/etc/passwd", 11),
	      "ima path");
	CHECK(e.digest_alg == TPM2_ALG_SHA1 && e.digest[0] == 0x33, "ima digest");

	CHECK(imalog_next(log, &e, &err) == 1 && e.violation, "ng violation accepted unhashed");
	CHECK(imalog_next(log, &e, &err) == 1 && e.violation && e.kind == IMA_TEMPLATE_IMA,
	      "ima violation");
	CHECK(imalog_next(log, &e, &err) == 0, "clean end");
	CHECK(imalog_offset(log) == l.len && imalog_index(log) == 6, "offset and index at end");

	/* ima-modsig, a custom field list, an unknown name, old-style violation digest. */
	memset(&l, 0, sizeof(l));
	n = field(d, 0, dg, dng(dg, "sha512", 1, 64));
	n = field(d, n, "/lib/modules/x.ko", 18);
	n = field(d, n, "", 0);
	n = field(d, n, dg, 20);
	n = field(d, n, "MODSIG", 6);
	add(&l, "ima-modsig", d, n, NULL);
	n = field(d, 0, dg, dng(dg, "sha384", 2, 48));
	n = field(d, n, "/a", 3);
	n = field(d, n, "", 0);
	add(&l, "d-ng|n-ng|sig", d, n, NULL);
	n = field(d, 0, "xyz", 3);
	add(&l, "my-tmpl", d, n, NULL);
	n = field(d, 0, dg, 0);
	memset(dg, 0, 20);
	n = field(d, 0, dg, 20);
	n = field(d, n, "/x", 3);
	add(&l, "ima-ng", d, n, (const uint8_t[20]){0});
	n = field(d, 0, dg, dng(dg, "sm3", 7, 32));
	n = field(d, n, "/sm3", 5);
	add(&l, "ima-ng", d, n, NULL);
	imalog_reset(log, l.b, l.len, 100);
	CHECK(imalog_next(log, &e, &err) == 1 && e.index == 100, "ima-modsig parses, index base");
	CHECK(e.digest_alg == TPM2_ALG_SHA512 && e.sig && e.sig_len == 0, "ima-modsig fields");
	CHECK(imalog_next(log, &e, &err) == 1 && e.digest_alg == TPM2_ALG_SHA384 && e.path_len == 2,
	      "custom field list");
	CHECK(imalog_next(log, &e, &err) == 1 && e.kind == IMA_TEMPLATE_UNKNOWN && !e.path,
	      "unknown template with a field list");
	CHECK(imalog_next(log, &e, &err) == 1 && e.violation && e.digest == NULL,
	      "old-style violation digest tolerated");
	CHECK(imalog_next(log, &e, &err) == 1 && e.digest_alg == 0 && e.digest_len == 32 &&
		      e.digest_alg_name_len == 3,
	      "unknown-to-TPM digest alg kept by name");
	CHECK(imalog_next(log, &e, &err) == 0, "end");
}

/* Expects one entry that fails with code and msg (substring) at index 0. */
static void expect_bad(struct imalog *log, const struct list *l, int code, const char *msg,
		       const char *what)
{
	struct ima_error err = {0};
	unsigned count;
	int rc = parse_all(log, l->b, l->len, &count, &err);

	CHECK(rc == code && err.err == code && err.msg && strstr(err.msg, msg),
	      "%s: rc %d msg \"%s\"", what, rc, err.msg ? err.msg : "");
}

static void test_bad_entries(void)
{
	struct imalog *log = shared_log;
	static struct list l;
	static uint8_t d[LIMIT_IMA_PATH + 64];
	uint8_t dg[80], bad[20];
	size_t n;
	char name[LIMIT_IMA_PATH + 2];

	memset(name, 'a', sizeof(name));
	name[0] = '/';
	/* n-ng of exactly LIMIT_IMA_PATH is fine, one more is oversize. */
	for (int extra = 0; extra < 2; extra++) {
		memset(&l, 0, sizeof(l));
		n = field(d, 0, dg, dng(dg, "sha256", 1, 32));
		name[LIMIT_IMA_PATH + extra] = 0;
		n = field(d, n, name, LIMIT_IMA_PATH + extra + 1);
		name[LIMIT_IMA_PATH + extra] = 'a';
		add(&l, "ima-ng", d, n, NULL);
		if (extra == 0) {
			unsigned c;
			struct ima_error err;

			CHECK(parse_all(log, l.b, l.len, &c, &err) == 0 && c == 1, "long name accepted");
		} else {
			expect_bad(log, &l, -E2BIG, "longer than the limit", "long name rejected");
		}
	}
	memset(&l, 0, sizeof(l));
	add_legacy(&l, dg, name, 255, false);
	{
		unsigned c;
		struct ima_error err;

		CHECK(parse_all(log, l.b, l.len, &c, &err) == 0 && c == 1, "ima name of 255 accepted");
	}
	memset(&l, 0, sizeof(l));
	add_legacy(&l, dg, name, 256, false);
	expect_bad(log, &l, -E2BIG, "255", "ima name of 256 rejected");
	memset(&l, 0, sizeof(l));
	add_legacy(&l, dg, "/a\0b", 4, false);
	expect_bad(log, &l, -EBADMSG, "NUL", "ima name with NUL");

	memset(&l, 0, sizeof(l));
	n = field(d, 0, dg, dng(dg, "sha256", 1, 32));
	n = field(d, n, "/a\0b", 5);
	add(&l, "ima-ng", d, n, NULL);
	expect_bad(log, &l, -EBADMSG, "NUL byte", "n-ng with embedded NUL");

	memset(&l, 0, sizeof(l));
	n = field(d, 0, dg, dng(dg, "sha256", 1, 32));
	n = field(d, n, "/a", 2);
	add(&l, "ima-ng", d, n, NULL);
	expect_bad(log, &l, -EBADMSG, "NUL-terminated", "n-ng without NUL");

	memset(&l, 0, sizeof(l));
	n = field(d, 0, dg, dng(dg, "sha256", 1, 31));
	n = field(d, n, "/a", 3);
	add(&l, "ima-ng", d, n, NULL);
	expect_bad(log, &l, -EBADMSG, "does not match its algorithm", "sha256 digest of 31 bytes");

	memset(&l, 0, sizeof(l));
	n = field(d, 0, "sha256", 6);
	n = field(d, n, "/a", 3);
	add(&l, "ima-ng", d, n, NULL);
	expect_bad(log, &l, -EBADMSG, "prefix", "d-ng without prefix");

	memset(&l, 0, sizeof(l));
	n = field(d, 0, dg, dng(dg, "sha256", 1, 32));
	add(&l, "ima-ng", d, n, NULL);
	expect_bad(log, &l, -EBADMSG, "fewer template fields", "ima-ng missing n-ng");

	memset(&l, 0, sizeof(l));
	n = field(d, 0, dg, dng(dg, "sha256", 1, 32));
	n = field(d, n, "/a", 3);
	n = field(d, n, "", 0);
	add(&l, "ima-ng", d, n, NULL);
	expect_bad(log, &l, -EBADMSG, "more template fields", "ima-ng extra field");

	memset(&l, 0, sizeof(l));
	memcpy(d, "\x05\0\0\0ab", 6);
	add(&l, "weird", d, 6, NULL);
	expect_bad(log, &l, -EBADMSG, "unknown template", "unknown template, not a field list");

	memset(&l, 0, sizeof(l));
	n = 0;
	for (unsigned i = 0; i <= LIMIT_IMA_FIELDS; i++)
		n = field(d, n, "", 0);
	add(&l, "weird", d, n, NULL);
	expect_bad(log, &l, -E2BIG, "fields than the limit", "too many fields");

	memset(&l, 0, sizeof(l));
	n = field(d, 0, dg, dng(dg, "sha256", 1, 32));
	n = field(d, n, "/a", 3);
	add(&l, "ima-ng", d, n, NULL);
	memcpy(bad, l.b + 4, 20);
	bad[19] ^= 1;
	memset(&l, 0, sizeof(l));
	add(&l, "ima-ng", d, n, NULL);
	add(&l, "ima-ng", d, n, bad);
	{
		struct ima_error err = {0};
		unsigned c;
		int rc = parse_all(log, l.b, l.len, &c, &err);
		struct ima_entry e;

		CHECK(rc == -EPROTO && c == 1 && err.index == 1 && err.offset == l.ends[0],
		      "template hash mismatch names entry 1 at its offset (rc %d idx %llu)", rc,
		      (unsigned long long)err.index);
		CHECK(imalog_next(log, &e, &err) == -EPROTO, "error is sticky");
	}

	/* Header-level caps. */
	memset(&l, 0, sizeof(l));
	add(&l, "ima-ng", d, n, NULL);
	put32(l.b, 24);
	expect_bad(log, &l, -EBADMSG, "PCR index", "pcr 24");
	memset(&l, 0, sizeof(l));
	add(&l, "ima-ng", d, n, NULL);
	put32(l.b + 24, LIMIT_IMA_TEMPLATE_NAME + 1);
	expect_bad(log, &l, -E2BIG, "template name", "template name too long");
	memset(&l, 0, sizeof(l));
	add(&l, "ima-ng", d, n, NULL);
	put32(l.b + 34, LIMIT_IMA_TEMPLATE_DATA + 1);
	expect_bad(log, &l, -E2BIG, "template data longer", "template data too long");
	memset(&l, 0, sizeof(l));
	add(&l, "ima-ng", d, n, NULL);
	put32(l.b + 34, 0xffffffffu);
	expect_bad(log, &l, -E2BIG, "template data longer", "template data length 2^32-1");
	memset(&l, 0, sizeof(l));
	add(&l, "ima-ng", d, n, NULL);
	put32(l.b + 24, 0);
	expect_bad(log, &l, -EBADMSG, "empty template name", "empty template name");
	memset(&l, 0, sizeof(l));
	add(&l, "ima-ng", d, n, NULL);
	l.len += 3;
	{
		struct ima_error err = {0};
		unsigned c;

		CHECK(parse_all(log, l.b, l.len, &c, &err) == -EBADMSG && c == 1 && err.index == 1 &&
			      err.offset == l.ends[0] && strstr(err.msg, "truncated"),
		      "trailing bytes reported at entry 1");
	}
}

static void test_truncation_and_flips(void)
{
	struct imalog *log = shared_log;
	static struct list l;
	struct ima_error err;
	unsigned count, ok_flips = 0, bad_ok = 0, bad_trunc = 0;

	build_sample(&l);
	/* Every prefix: a boundary parses cleanly, anything else fails at the next entry. */
	for (size_t len = 0; len <= l.len; len++) {
		unsigned full = 0;
		int rc;
		bool boundary = len == 0;

		while (full < l.n && l.ends[full] <= len)
			full++;
		for (unsigned i = 0; i < l.n; i++)
			boundary |= l.ends[i] == len;
		memset(&err, 0, sizeof(err));
		/* A copy of exactly len bytes so ASan sees any read past the end. */
		uint8_t *copy = malloc(len ? len : 1);

		memcpy(copy, l.b, len);
		rc = parse_all(log, copy, len, &count, &err);
		free(copy);
		if (boundary ? (rc != 0 || count != full)
			     : (rc != -EBADMSG || count != full || err.index != full ||
				err.offset != (full ? l.ends[full - 1] : 0)))
			bad_trunc++;
	}
	CHECK(bad_trunc == 0, "every prefix gives the exact result (%u wrong)", bad_trunc);

	/* Every single-bit flip: either an error, or the flip is in a field no hash covers. */
	for (size_t i = 0; i < l.len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			bool uncovered = false;
			size_t start = 0;
			int rc;

			for (unsigned k = 0; k < l.n; k++) {
				if (i >= start && i < start + 4)
					uncovered = true; /* pcr */
				if (i >= l.name_off[k] && i < l.name_off[k] + l.name_len[k])
					uncovered = true; /* template name */
				if (l.violation[k] && i >= start + 24 && i < l.ends[k])
					uncovered = true; /* violation data is never hashed */
				start = l.ends[k];
			}
			l.b[i] ^= (uint8_t)(1u << bit);
			rc = parse_all(log, l.b, l.len, &count, &err);
			l.b[i] ^= (uint8_t)(1u << bit);
			if (rc == 0)
				ok_flips++;
			if (rc == 0 && !uncovered) {
				bad_ok++;
				fprintf(stderr, "flip at byte %zu bit %d parsed\n", i, bit);
			}
			if (rc < 0 && (!err.msg || err.index > l.n))
				bad_ok++;
		}
	}
	CHECK(bad_ok == 0, "bit flips in hashed bytes are always caught (%u missed)", bad_ok);
	CHECK(ok_flips > 0 && ok_flips < 8 * l.len, "some flips (pcr/name) parse: %u", ok_flips);
}

static void test_resume(void)
{
	struct imalog *log = shared_log;
	static struct list l;
	struct ima_entry e;
	struct ima_error err;

	build_sample(&l);
	for (unsigned k = 0; k < l.n; k++) {
		size_t off = k ? l.ends[k - 1] : 0;
		unsigned got = 0;
		bool idx_ok = true;

		imalog_reset(log, l.b + off, l.len - off, k);
		while (imalog_next(log, &e, &err) == 1) {
			idx_ok &= e.index == k + got && e.end + off == l.ends[k + got];
			got++;
		}
		CHECK(got == l.n - k && idx_ok, "resume at entry %u", k);
	}
	imalog_reset(log, NULL, 0, 0);
	CHECK(imalog_next(log, &e, &err) == 0, "empty buffer is an empty list");
}

/*
 * imalog_record(), the framing step that attestd shares: every prefix of every entry asks for
 * more (and never for fewer bytes than it was given), every whole entry frames to its length.
 */
static void test_record_framing(void)
{
	static struct list l;
	struct ima_record rec;
	const char *msg;
	unsigned short_ok = 0, whole_ok = 0, shorts = 0;

	build_sample(&l);
	for (unsigned i = 0; i < l.n; i++) {
		size_t start = i ? l.ends[i - 1] : 0, size = l.ends[i] - start;

		for (size_t cut = 0; cut < size; cut++) {
			msg = NULL;
			shorts++;
			if (imalog_record(l.b + start, cut, &rec, &msg) == 0 && rec.len > cut &&
			    rec.len <= size && msg && strncmp(msg, "truncated", 9) == 0)
				short_ok++;
		}
		if (imalog_record(l.b + start, size, &rec, &msg) == 1 && rec.len == size &&
		    rec.pcr == 10 && rec.legacy == (rec.template_name_len == 3) &&
		    rec.data + rec.data_len == l.b + l.ends[i])
			whole_ok++;
	}
	CHECK(short_ok == shorts, "every cut asks for more: %u of %u", short_ok, shorts);
	CHECK(whole_ok == l.n, "every entry frames to its size: %u of %u", whole_ok, l.n);
	CHECK(imalog_record(NULL, 0, &rec, &msg) == 0 && rec.len == 28, "empty input needs a header");
}

/* d-ngv2 names what its digest is: "ima:" a file hash, "verity:" an fs-verity digest. */
static void test_digest_types(void)
{
	struct imalog *log = shared_log;
	static const struct { const char *prefix; enum ima_digest_type t; } cases[] = {
		{"ima:sha256", IMA_DIGEST_IMA},
		{"verity:sha256", IMA_DIGEST_VERITY},
		{"other:sha256", IMA_DIGEST_OTHER},
	};
	struct list l;
	uint8_t d[512], dg[80];
	struct ima_entry e;
	size_t n;

	memset(&l, 0, sizeof(l));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = field(d, 0, dg, dng(dg, cases[i].prefix, 0x5a, 32));
		n = field(d, n, "/usr/bin/v", 11);
		n = field(d, n, "\x06\x03\x04sig", 6);
		add(&l, "ima-sigv2", d, n, NULL);
	}
	n = field(d, 0, dg, dng(dg, "sha256", 0x5a, 32));
	n = field(d, n, "/usr/bin/v", 11);
	add(&l, "ima-ng", d, n, NULL);
	imalog_reset(log, l.b, l.len, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(imalog_next(log, &e, NULL) == 1 && e.digest_type == cases[i].t &&
			      e.digest_alg == TPM2_ALG_SHA256 && e.digest_len == 32,
		      "%s", cases[i].prefix);
	CHECK(imalog_next(log, &e, NULL) == 1 && e.digest_type == IMA_DIGEST_IMA,
	      "d-ng: IMA's file hash");
}

int main(void)
{
	shared_log = imalog_new();

	CHECK(shared_log != NULL, "imalog_new");
	if (!shared_log)
		return check_finish();
	CASE(test_templates);
	CASE(test_bad_entries);
	CASE(test_truncation_and_flips);
	CASE(test_resume);
	CASE(test_digest_types);
	CASE(test_record_framing);
	imalog_free(shared_log);
	imalog_free(NULL);
	return check_finish();
}
