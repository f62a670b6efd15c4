/* attestd/imalist.c on synthetic lists: offsets, resume, truncation, caps. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attestd/imalist.h"
#include "proto/dynbuf.h"
#include "proto/imalog.h"
#include "proto/limits.h"
#include "tests/unit/check.h"

#define NENTRIES 300u

struct list {
	struct dynbuf d;          /* the list, at most what one evidence body carries */
	uint8_t *buf;             /* d's bytes and length, as put() leaves them */
	size_t len;
	size_t off[NENTRIES + 1]; /* off[i]: start of entry i; off[n]: end */
	unsigned n;
};

static struct list list_new(void)
{
	struct list l = { .buf = NULL };

	dynbuf_init(&l.d, LIMIT_REQUEST_BODY);
	return l;
}

static void list_release(struct list *l)
{
	dynbuf_release(&l->d);
	l->buf = NULL;
	l->len = 0;
}

static void put(struct list *l, const void *p, size_t n)
{
	if (dynbuf_add(&l->d, p, n))
		exit(2);
	l->buf = (uint8_t *)l->d.buf;
	l->len = l->d.len;
}

static void put_u32(struct list *l, uint32_t v)
{
	put(l, &v, 4);
}

/* An ima-ng record with a path of varying length, or a legacy "ima" record. */
static void add_entry(struct list *l, unsigned i, bool legacy)
{
	uint8_t hash[20];
	char path[64];
	uint32_t plen;

	memset(hash, (int)(i & 0xff) | 1, sizeof(hash));
	plen = (uint32_t)snprintf(path, sizeof(path), "/usr/bin/file-%u%.*s", i, (int)(i % 17),
				  "xxxxxxxxxxxxxxxxx");
	l->off[l->n++] = l->len;
	put_u32(l, 10);
	put(l, hash, 20);
	if (legacy) {
		put_u32(l, 3);
		put(l, "ima", 3);
		put(l, hash, 20);
		put_u32(l, plen);
		put(l, path, plen);
	} else {
		uint8_t dng[8 + 32] = "sha256:";

		put_u32(l, 6);
		put(l, "ima-ng", 6);
		put_u32(l, 4 + (uint32_t)sizeof(dng) + 4 + plen + 1);
		put_u32(l, (uint32_t)sizeof(dng));
		put(l, dng, sizeof(dng));
		put_u32(l, plen + 1);
		put(l, path, plen + 1);
	}
	l->off[l->n] = l->len;
}

static char tmpdir[] = "/tmp/test_attestd_imalist.XXXXXX";

static char *write_file(const char *name, const uint8_t *p, size_t n)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "we");
	if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f))
		exit(2);
	return path;
}

static bool chunk_is(const struct imalist_chunk *c, const struct list *l, unsigned from,
		     unsigned count)
{
	size_t a = l->off[from], b = l->off[from + count];

	return c->first == from && c->count == count && c->len == b - a &&
	       (count == 0 || memcmp(c->data, l->buf + a, b - a) == 0);
}

static void test_record_len(void)
{
	struct list l = list_new();
	size_t len;
	uint8_t bad[64];

	add_entry(&l, 1, false);
	add_entry(&l, 2, true);
	CHECK(imalist_record_len(l.buf, l.len, &len) == 1 && len == l.off[1], "ima-ng length");
	CHECK(imalist_record_len(l.buf + l.off[1], l.len - l.off[1], &len) == 1 &&
		      len == l.off[2] - l.off[1],
	      "legacy ima length");
	for (size_t cut = 0; cut < l.off[1]; cut++)
		if (imalist_record_len(l.buf, cut, &len) != 0) {
			CHECK(false, "truncated record at %zu not 'need more'", cut);
			break;
		}
	CHECK(imalist_record_len(l.buf, 10, &len) == 0 && len == 28, "header need");

	memset(bad, 0, sizeof(bad));
	{
		uint32_t big = LIMIT_IMA_TEMPLATE_NAME + 1;

		memcpy(bad + 24, &big, 4);
		CHECK(imalist_record_len(bad, sizeof(bad), &len) == -E2BIG, "name too long");
	}
	{
		uint32_t six = 6, huge = LIMIT_IMA_TEMPLATE_DATA + 1;

		memcpy(bad + 24, &six, 4);
		memcpy(bad + 28, "ima-ng", 6);
		memcpy(bad + 34, &huge, 4);
		CHECK(imalist_record_len(bad, sizeof(bad), &len) == -E2BIG, "data too long");
		huge = 0xffffffffu;
		memcpy(bad + 34, &huge, 4);
		CHECK(imalist_record_len(bad, sizeof(bad), &len) == -E2BIG, "data len 2^32-1");
	}
	{
		uint32_t three = 3, nl = 256;

		memcpy(bad + 24, &three, 4);
		memcpy(bad + 28, "ima", 3);
		memcpy(bad + 51, &nl, 4);
		CHECK(imalist_record_len(bad, sizeof(bad), &len) == -E2BIG, "legacy name too long");
	}
	list_release(&l);
}

static void test_read(void)
{
	struct list l = list_new();
	struct imalist_chunk c;
	struct imalist *il;
	char *path;
	uint64_t full_cost, resume_cost;
	int ret;

	for (unsigned i = 0; i < NENTRIES; i++)
		add_entry(&l, i, i % 7 == 3);
	path = write_file("list", l.buf, l.len);
	il = imalist_new(path);
	CHECK(il != NULL, "imalist_new");
	if (!il)
		return;

	ret = imalist_read(il, 0, 0, &c);
	CHECK(ret == 0 && chunk_is(&c, &l, 0, NENTRIES) && !c.more, "read all from 0");
	free(c.data);

	ret = imalist_read(il, 250, 0, &c);
	CHECK(ret == 0 && chunk_is(&c, &l, 250, 50), "read from 250 (walked from 0)");
	full_cost = imalist_last_bytes_read(il);
	free(c.data);

	/* Second round: the map says where 250 starts; cost must not cover entries 0..249. */
	ret = imalist_read(il, 260, 0, &c);
	CHECK(ret == 0 && chunk_is(&c, &l, 260, 40), "read from 260 (resumed)");
	resume_cost = imalist_last_bytes_read(il);
	CHECK(resume_cost < l.len - l.off[250] + 1, "resume read %llu bytes, list tail is %zu",
	      (unsigned long long)resume_cost, l.len - l.off[250]);
	CHECK(resume_cost < full_cost || full_cost < l.off[250], "resume cheaper than walk");
	free(c.data);

	/* At the end: nothing new. */
	ret = imalist_read(il, NENTRIES, 0, &c);
	CHECK(ret == 0 && c.count == 0 && c.len == 0 && c.data == NULL && !c.short_list,
	      "read at the end is empty");
	ret = imalist_read(il, NENTRIES + 5, 0, &c);
	CHECK(ret == 0 && c.count == 0 && c.short_list, "read past the end flags short_list");

	/* The verifier lost state: an earlier index still reads the right bytes. */
	ret = imalist_read(il, 3, 0, &c);
	CHECK(ret == 0 && chunk_is(&c, &l, 3, NENTRIES - 3), "read from 3 after 260");
	free(c.data);

	/* Cap: whole entries only, more set, next round continues exactly. */
	ret = imalist_read(il, 10, l.off[20] - l.off[10] + 5, &c);
	CHECK(ret == 0 && chunk_is(&c, &l, 10, 10) && c.more, "capped read stops at a boundary");
	free(c.data);
	ret = imalist_read(il, 20, 1, &c);
	CHECK(ret == 0 && chunk_is(&c, &l, 20, 1) && c.more, "tiny cap still returns one entry");
	free(c.data);

	/* A partial record at the end (writer mid-append) is left for later. */
	path = write_file("list", l.buf, l.off[100] + 13);
	imalist_free(il);
	il = imalist_new(path);
	ret = imalist_read(il, 90, 0, &c);
	CHECK(ret == 0 && chunk_is(&c, &l, 90, 10) && !c.more, "partial tail not returned");
	free(c.data);

	/* The list grows: the next round picks up from the remembered end. */
	write_file("list.new", l.buf, l.len);
	{
		char from[300], to[300];

		snprintf(from, sizeof(from), "%s/list.new", tmpdir);
		snprintf(to, sizeof(to), "%s/list", tmpdir);
		if (rename(from, to) < 0)
			exit(2);
	}
	ret = imalist_read(il, 100, 0, &c);
	CHECK(ret == 0 && chunk_is(&c, &l, 100, NENTRIES - 100), "grown list read from 100");
	free(c.data);

	/* Corrupt record 150: reading past it fails, reading before it works. */
	{
		struct list bad = list_new();
		uint32_t junk = 0x7fffffff;

		put(&bad, l.buf, l.len);
		memcpy(bad.buf + l.off[150] + 24, &junk, 4);
		path = write_file("bad", bad.buf, bad.len);
		imalist_free(il);
		il = imalist_new(path);
		ret = imalist_read(il, 160, 0, &c);
		CHECK(ret == -E2BIG && c.data == NULL && c.count == 0, "corrupt record: %d", ret);
		ret = imalist_read(il, 140, 0, &c);
		CHECK(ret == -E2BIG, "corrupt record inside the payload: %d", ret);
		list_release(&bad);
	}

	/* Missing file. */
	imalist_free(il);
	il = imalist_new("/nonexistent/ima/list");
	ret = imalist_read(il, 0, 0, &c);
	CHECK(ret == -ENOENT, "missing list -> -ENOENT (%d)", ret);
	imalist_free(il);
	imalist_free(NULL);
	list_release(&l);
}

/* Stale map: the file changes in place under the same inode; the reader must recover. */
static void test_stale_offsets(void)
{
	struct list a = list_new(), b = list_new();
	struct imalist_chunk c;
	struct imalist *il;
	char *path;
	int fd, ret;

	for (unsigned i = 0; i < 50; i++)
		add_entry(&a, i, false);
	for (unsigned i = 0; i < 50; i++)
		add_entry(&b, i + 1000, i % 2 == 0);
	path = write_file("inplace", a.buf, a.len);
	il = imalist_new(path);
	ret = imalist_read(il, 40, 0, &c);
	CHECK(ret == 0 && chunk_is(&c, &a, 40, 10), "first list from 40");
	free(c.data);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || write(fd, b.buf, b.len) != (ssize_t)b.len || close(fd) < 0)
		exit(2);
	ret = imalist_read(il, 45, 0, &c);
	CHECK(ret == 0 && chunk_is(&c, &b, 45, 5), "rewritten list from 45 (ret %d)", ret);
	free(c.data);
	imalist_free(il);
	list_release(&a);
	list_release(&b);
}

/*
 * The framing is imalog's: what the verifier's cursor refuses, attestd refuses too (a zero
 * template-name length was accepted here before; the cursor never did).
 */
static void test_framing_as_imalog(void)
{
	struct list l = list_new();
	struct imalist_chunk c;
	struct imalist *il;
	struct imalog *log = imalog_new();
	struct ima_entry e;
	uint8_t rec[64];
	uint32_t v;
	size_t len;
	char *path;
	int ret;

	memset(rec, 0, sizeof(rec));
	v = 10;
	memcpy(rec, &v, 4);
	memset(rec + 4, 0x5a, 20);
	/* name_len 0, then a data length of 0: a whole record by length fields alone */
	CHECK(imalist_record_len(rec, 32, &len) == -EBADMSG, "zero name length -> -EBADMSG");
	imalog_reset(log, rec, 32, 0);
	CHECK(imalog_next(log, &e, NULL) == -EBADMSG, "imalog refuses it too");

	for (unsigned i = 0; i < 20; i++)
		add_entry(&l, i, false);
	put(&l, rec, 32);
	path = write_file("zeroname", l.buf, l.len);
	il = imalist_new(path);
	ret = imalist_read(il, 0, 0, &c);
	CHECK(ret == -EBADMSG && c.data == NULL && c.count == 0, "list with a zero name: %d", ret);
	ret = imalist_read(il, 20, 0, &c);
	CHECK(ret == -EBADMSG, "zero name at the requested entry: %d", ret);
	imalist_free(il);

	/* PCR index past the TPM's 24 */
	v = 24;
	memcpy(rec, &v, 4);
	v = 6;
	memcpy(rec + 24, &v, 4);
	memcpy(rec + 28, "ima-ng", 6);
	CHECK(imalist_record_len(rec, 38, &len) == -EBADMSG, "PCR 24 -> -EBADMSG");
	imalog_reset(log, rec, 38, 0);
	CHECK(imalog_next(log, &e, NULL) == -EBADMSG, "imalog refuses PCR 24 too");
	v = 23;
	memcpy(rec, &v, 4);
	CHECK(imalist_record_len(rec, 38, &len) == 1 && len == 38, "PCR 23 frames");

	/* Legacy "ima" cut inside its name: only what is there is read, and more is asked for. */
	v = 3;
	memcpy(rec + 24, &v, 4);
	CHECK(imalist_record_len(rec, 28, &len) == 0 && len == 31, "legacy name cut: need %zu", len);
	memcpy(rec + 28, "ima", 3);
	CHECK(imalist_record_len(rec, 31, &len) == 0 && len == 55, "legacy d cut: need %zu", len);
	imalog_free(log);
	list_release(&l);
}

/* imalist_check(): what attestd refuses before it enrolls (issue 16). */
static void test_check(void)
{
	static const char ascii[] = "10 91f34b5c671d73504b274a919661cf80dab1e127 ima-ng sha1:1a "
				    "boot_aggregate\n";
	/* PCR 10, a SHA-1 digest, then a template name 4 GiB long. */
	static const uint8_t junk[32] = { 0x0a, [24] = 0xff, 0xff, 0xff, 0xff };
	char why[512] = "";
	struct list l = list_new();

	add_entry(&l, 0, false);
	CHECK(imalist_check(write_file("check.bin", l.buf, l.len), why, sizeof(why)) == 0,
	      "a binary list passes: %s", why);
	CHECK(imalist_check(write_file("check.empty", (const uint8_t *)"", 0), why, sizeof(why)) ==
	      0, "an empty one too");
	CHECK(imalist_check(write_file("check.txt", (const uint8_t *)ascii, sizeof(ascii) - 1), why,
			    sizeof(why)) == -EPROTO && strstr(why, "binary_runtime_measurements"),
	      "the ASCII list: %s", why);
	CHECK(imalist_check(tmpdir, why, sizeof(why)) == -EISDIR && strstr(why, "is a directory"),
	      "a directory: %s", why);
	CHECK(imalist_check("/nonexistent/list", why, sizeof(why)) == -ENOENT &&
	      strstr(why, "cannot open"), "missing: %s", why);
	CHECK(imalist_check(write_file("check.junk", junk, sizeof(junk)), why, sizeof(why)) ==
	      -EBADMSG, "not a list: %s", why);
	list_release(&l);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(tmpdir))
		return 2;
	CASE(test_record_len);
	CASE(test_read);
	CASE(test_stale_offsets);
	CASE(test_framing_as_imalog);
	CASE(test_check);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return check_finish();
}
