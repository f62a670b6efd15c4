/*
 * attestd/imatrim.c and imalist.c's absolute indexes on a fake securityfs directory: the test
 * plays the kernel (binary_runtime_measurements from entry D on, runtime_measurements_count,
 * runtime_measurements_deleted) and is the deleter imatrim calls (imatrim_set_deleter()), so it
 * sees what the export holds at the moment of each kernel write.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attestd/imalist.h"
#include "attestd/imatrim.h"
#include "proto/dynbuf.h"
#include "proto/limits.h"
#include "tests/unit/check.h"

#define MAXENT 400u

static char tmpdir[] = "/tmp/test_attestd_imatrim.XXXXXX";
static char list_path[256], count_path[256], deleted_path[256], export_path[256];

/* The kernel: every entry measured since boot (n) and how many were deleted (d). */
struct kernel {
	struct dynbuf all;
	size_t off[MAXENT + 1]; /* off[i]: start of entry i; off[n]: end */
	unsigned n, d;
	bool has_deleted_file;
	/* what the deleter saw */
	unsigned writes;
	bool export_ok_at_write; /* the export held exactly entries [0, h) at every write */
	int fail_next;           /* the next write fails with this (a crash before it) */
};

static void put(struct kernel *k, const void *p, size_t n)
{
	if (dynbuf_add(&k->all, p, n))
		exit(2);
}

static void put_u32(struct kernel *k, uint32_t v)
{
	put(k, &v, 4);
}

/* An ima-ng record with a path of varying length. */
static void measure(struct kernel *k)
{
	unsigned i = k->n;
	uint8_t hash[20], dng[8 + 32] = "sha256:";
	char path[64];
	uint32_t plen;

	memset(hash, (int)(i & 0xff) | 1, sizeof(hash));
	memset(dng + 8, (int)(i & 0xff), 32);
	plen = (uint32_t)snprintf(path, sizeof(path), "/usr/bin/f-%u%.*s", i, (int)(i % 13),
				  "xxxxxxxxxxxxx");
	k->off[k->n++] = k->all.len;
	put_u32(k, 10);
	put(k, hash, 20);
	put_u32(k, 6);
	put(k, "ima-ng", 6);
	put_u32(k, 4 + (uint32_t)sizeof(dng) + 4 + plen + 1);
	put_u32(k, (uint32_t)sizeof(dng));
	put(k, dng, sizeof(dng));
	put_u32(k, plen + 1);
	put(k, path, plen + 1);
	k->off[k->n] = k->all.len;
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "we");

	if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f))
		exit(2);
}

static void write_number(const char *path, unsigned v)
{
	char t[32];

	write_file(path, t, (size_t)snprintf(t, sizeof(t), "%u\n", v));
}

/* What securityfs shows: the list from entry d on, the count, the deleted count. */
static void publish(struct kernel *k)
{
	write_file(list_path, (const uint8_t *)k->all.buf + k->off[k->d], k->off[k->n] - k->off[k->d]);
	write_number(count_path, k->n);
	if (k->has_deleted_file)
		write_number(deleted_path, k->d);
	else
		unlink(deleted_path);
}

static struct kernel *kernel_boot(unsigned n)
{
	struct kernel *k = calloc(1, sizeof(*k));

	if (!k)
		exit(2);
	dynbuf_init(&k->all, 1u << 24);
	k->has_deleted_file = true;
	k->export_ok_at_write = true;
	while (k->n < n)
		measure(k);
	publish(k);
	return k;
}

static void kernel_free(struct kernel *k)
{
	dynbuf_release(&k->all);
	free(k);
}

static void kernel_measure(struct kernel *k, unsigned more)
{
	while (more--)
		measure(k);
	publish(k);
}

/* Whether the file at path holds exactly entries [0, upto) of the kernel. */
static bool holds(const struct kernel *k, const char *path, unsigned upto)
{
	size_t want = k->off[upto];
	uint8_t *buf = malloc(want + 1);
	FILE *f = fopen(path, "re");
	size_t got = f && buf ? fread(buf, 1, want + 1, f) : (size_t)-1;
	bool same = got == want && memcmp(buf, k->all.buf, want) == 0;

	if (f)
		fclose(f);
	free(buf);
	return same;
}

/* The kernel's side of a write to runtime_measurements_deleted. */
static int kernel_delete(void *ctx, const char *path, uint64_t h)
{
	struct kernel *k = ctx;
	int fail = k->fail_next;

	k->writes++;
	if (strcmp(path, deleted_path) != 0 || !holds(k, export_path, (unsigned)h))
		k->export_ok_at_write = false;
	k->fail_next = 0;
	if (fail)
		return fail;
	if (h > k->n)
		return -EINVAL;
	if (h > k->d) {
		k->d = (unsigned)h;
		publish(k);
	}
	return 0;
}

static struct imatrim *trim_new(struct kernel *k, uint64_t keep)
{
	struct imatrim *t = imatrim_new(list_path, export_path, keep);

	if (!t)
		exit(2);
	imatrim_set_deleter(t, kernel_delete, k);
	imatrim_reconcile(t);
	return t;
}

static bool chunk_is(const struct imalist_chunk *c, const struct kernel *k, unsigned from,
		     unsigned count)
{
	size_t a = k->off[from], b = k->off[from + count];

	return c->first == from && c->count == count && c->len == b - a &&
	       (count == 0 || memcmp(c->data, (const uint8_t *)k->all.buf + a, b - a) == 0);
}

static void fresh(void)
{
	unlink(export_path);
	unlink(deleted_path);
}

/* The reader's indexes are absolute: position k of the list is entry D + k. */
static void test_absolute_indexes(void)
{
	struct kernel *k = kernel_boot(100);
	struct imalist *l = imalist_new(list_path);
	struct imalist_chunk c;

	CHECK(imalist_read(l, 60, 0, &c) == 0 && chunk_is(&c, k, 60, 40) && c.deleted == 0 &&
		      !c.gone,
	      "nothing deleted: entries 60-99");
	free(c.data);
	k->d = 50;
	publish(k);
	CHECK(imalist_read(l, 60, 0, &c) == 0 && chunk_is(&c, k, 60, 40) && c.deleted == 50,
	      "entries 0-49 deleted: entry 60 is still entry 60 (file position 10)");
	CHECK(imalist_last_bytes_read(l) <= (k->off[100] - k->off[60]) + 64 * 1024,
	      "resumed from the remembered entry 60, shifted by the deletion");
	free(c.data);
	CHECK(imalist_read(l, 50, 0, &c) == 0 && chunk_is(&c, k, 50, 50), "from the first entry");
	free(c.data);
	CHECK(imalist_read(l, 49, 0, &c) == 0 && c.gone && c.deleted == 50 && c.count == 0 &&
		      !c.data,
	      "entry 49 was deleted: gone, nothing read");
	k->d = 73; /* to an entry the map does not hold */
	publish(k);
	CHECK(imalist_read(l, 80, 0, &c) == 0 && chunk_is(&c, k, 80, 20) && c.deleted == 73,
	      "deleted up to an entry not remembered: the map starts over at 73");
	free(c.data);
	CHECK(imalist_read(l, 101, 0, &c) == 0 && c.short_list, "past the end: short list");
	free(c.data);
	CHECK(imalist_read_until(l, 75, 78, 0, &c) == 0 && chunk_is(&c, k, 75, 3) && !c.more,
	      "read until entry 78");
	free(c.data);
	imalist_free(l);
	kernel_free(k);
	fresh();
}

/* Only what a verdict acknowledged, and never more than leaves `keep` in memory. */
static void test_deletes_only_acknowledged(void)
{
	struct kernel *k = kernel_boot(100);
	struct imatrim *t = trim_new(k, 10);
	struct imalist *l = imalist_new(list_path);
	uint64_t to;

	CHECK(imatrim_after_verdict(t, l, 0, &to) == 0 && to == 0 && k->writes == 0 && k->d == 0,
	      "nothing acknowledged: nothing deleted");
	CHECK(imatrim_after_verdict(t, l, 30, &to) == 0 && to == 30 && k->d == 30,
	      "next_offset 30: entries 0-29 deleted");
	CHECK(k->export_ok_at_write && holds(k, export_path, 30) && imatrim_exported(t) == 30,
	      "the export held entries 0-29 before the kernel write, and holds them after");
	CHECK(imatrim_after_verdict(t, l, 30, &to) == 0 && to == 0 && k->writes == 1,
	      "the same verdict again: nothing more");
	CHECK(imatrim_after_verdict(t, l, 100, &to) == 0 && to == 90 && k->d == 90 &&
		      holds(k, export_path, 90) && k->export_ok_at_write,
	      "everything acknowledged: 10 kept in memory (--ima-keep-records 10)");
	kernel_measure(k, 5);
	CHECK(imatrim_after_verdict(t, l, 100, &to) == 0 && to == 95 && k->d == 95,
	      "5 more measured: kept at 10");
	CHECK(imatrim_after_verdict(t, l, 103, &to) == 0 && to == 0 && k->d == 95,
	      "10 in memory: not more than keep, nothing deleted");
	imatrim_free(t);
	fresh();
	kernel_free(k);

	k = kernel_boot(100);
	t = trim_new(k, 0);
	CHECK(imatrim_after_verdict(t, l, 100, &to) == 0 && to == 0 && k->writes == 0 &&
		      access(export_path, F_OK) != 0,
	      "--ima-keep-records 0: never deletes, no export");
	imatrim_free(t);
	k->has_deleted_file = false;
	publish(k);
	t = trim_new(k, 10);
	CHECK(imatrim_after_verdict(t, l, 100, &to) == 0 && to == 0 && k->writes == 0 &&
		      access(export_path, F_OK) != 0,
	      "a kernel without runtime_measurements_deleted: nothing deleted, nothing exported");
	imatrim_free(t);
	imalist_free(l);
	kernel_free(k);
	fresh();
}

/* A crash between the export and the kernel write; a crash in the middle of an append. */
static void test_restart_reconciles(void)
{
	struct kernel *k = kernel_boot(100);
	struct imatrim *t = trim_new(k, 10);
	struct imalist *l = imalist_new(list_path);
	struct stat st;
	uint64_t to;
	int fd;

	CHECK(imatrim_after_verdict(t, l, 40, &to) == 0 && to == 40, "entries 0-39 deleted");
	k->fail_next = -EIO;
	CHECK(imatrim_after_verdict(t, l, 60, &to) < 0 && k->d == 40 && holds(k, export_path, 60),
	      "the kernel write fails after the export: 0-59 exported, 0-39 deleted");
	imatrim_free(t); /* attestd restarts */
	t = trim_new(k, 10);
	CHECK(holds(k, export_path, 40) && imatrim_exported(t) == 40 && !imatrim_lacking(t),
	      "restart: the export cut back to the kernel's deleted count (40)");
	CHECK(imatrim_after_verdict(t, l, 60, &to) == 0 && to == 60 && holds(k, export_path, 60) &&
		      k->export_ok_at_write,
	      "and the next verdict exports and deletes 40-59 again");
	/* A crash in the middle of an append: a partial record at the end. */
	fd = open(export_path, O_WRONLY | O_APPEND);
	CHECK(fd >= 0 && write(fd, (const uint8_t *)k->all.buf + k->off[60], 17) == 17,
	      "a partial record appended");
	close(fd);
	imatrim_free(t);
	t = trim_new(k, 10);
	CHECK(stat(export_path, &st) == 0 && (size_t)st.st_size == k->off[60] &&
		      imatrim_exported(t) == 60,
	      "restart: the partial record cut off");
	imatrim_free(t);
	/* A new boot: the kernel's list starts over, nothing deleted; the export is the old boot's. */
	kernel_free(k);
	k = kernel_boot(20);
	t = trim_new(k, 10);
	CHECK(stat(export_path, &st) == 0 && st.st_size == 0 && imatrim_exported(t) == 0 &&
		      !imatrim_lacking(t),
	      "a new boot: the old boot's export emptied");
	CHECK(imatrim_after_verdict(t, l, 20, &to) == 0 && to == 10 && holds(k, export_path, 10),
	      "and the new boot's records exported from entry 0");
	imatrim_free(t);
	imalist_free(l);
	kernel_free(k);
	fresh();
}

/* A verifier that asks for entry 0 again (a policy change): export, then the kernel's list. */
static void test_serves_from_export(void)
{
	struct kernel *k = kernel_boot(100);
	struct imatrim *t = trim_new(k, 10);
	struct imalist *l = imalist_new(list_path);
	struct imalist_chunk c;
	size_t cap;
	uint64_t to;

	CHECK(imatrim_after_verdict(t, l, 70, &to) == 0 && to == 70, "entries 0-69 deleted");
	CHECK(imatrim_read(t, l, 0, 0, &c) == 0 && chunk_is(&c, k, 0, 100) && c.deleted == 70 &&
		      !c.more,
	      "from entry 0: 0-69 from the export, 70-99 from the kernel, one chunk");
	free(c.data);
	CHECK(imatrim_read(t, l, 65, 0, &c) == 0 && chunk_is(&c, k, 65, 35), "from entry 65");
	free(c.data);
	CHECK(imatrim_read(t, l, 80, 0, &c) == 0 && chunk_is(&c, k, 80, 20) && c.deleted == 70,
	      "from entry 80: the kernel's only");
	free(c.data);
	cap = k->off[30] - k->off[0];
	CHECK(imatrim_read(t, l, 0, cap, &c) == 0 && chunk_is(&c, k, 0, 30) && c.more,
	      "a cap inside the export: entries 0-29, more next round");
	free(c.data);
	cap = k->off[75] - k->off[60];
	CHECK(imatrim_read(t, l, 60, cap, &c) == 0 && chunk_is(&c, k, 60, 15) && c.more,
	      "a cap across the kernel's start: 60-69 exported and 70-74 from the kernel");
	free(c.data);
	cap = k->off[70] - k->off[60];
	CHECK(imatrim_read(t, l, 60, cap, &c) == 0 && chunk_is(&c, k, 60, 10) && c.more,
	      "the export's part fills the cap exactly: the kernel's entries follow, more is said");
	free(c.data);
	cap = k->off[70] - k->off[60] + 5;
	CHECK(imatrim_read(t, l, 60, cap, &c) == 0 && chunk_is(&c, k, 60, 10) && c.more,
	      "no room for the kernel's first record: it goes next round, the cap holds");
	free(c.data);
	imatrim_free(t);
	imalist_free(l);
	kernel_free(k);
	fresh();
}

/* The export lost, cut or edited while attestd runs; restored later. */
static void test_export_missing(void)
{
	struct kernel *k = kernel_boot(100);
	struct imatrim *t = trim_new(k, 10);
	struct imalist *l = imalist_new(list_path);
	struct imalist_chunk c;
	char saved[300];
	uint64_t to;
	unsigned writes;

	CHECK(imatrim_after_verdict(t, l, 50, &to) == 0 && to == 50, "entries 0-49 deleted");
	snprintf(saved, sizeof(saved), "%s.saved", export_path);
	CHECK(rename(export_path, saved) == 0, "the export goes away");
	CHECK(imatrim_read(t, l, 0, 0, &c) == 0 && chunk_is(&c, k, 50, 50) && c.deleted == 50 &&
		      imatrim_lacking(t),
	      "asked for entry 0: sent from entry 50, the kernel's first, log_deleted 50");
	free(c.data);
	writes = k->writes;
	CHECK(imatrim_after_verdict(t, l, 100, &to) == 0 && to == 0 && k->writes == writes &&
		      k->d == 50,
	      "an export that lacks deleted records: nothing more is deleted");
	CHECK(imatrim_read(t, l, 60, 0, &c) == 0 && chunk_is(&c, k, 60, 40),
	      "entries the kernel holds are served as ever");
	free(c.data);
	CHECK(rename(saved, export_path) == 0, "the export restored");
	CHECK(imatrim_read(t, l, 0, 0, &c) == 0 && chunk_is(&c, k, 0, 100) && !imatrim_lacking(t),
	      "noticed at the next read: served from entry 0 again");
	free(c.data);
	CHECK(imatrim_after_verdict(t, l, 100, &to) == 0 && to == 90 && k->export_ok_at_write,
	      "and deletion goes on");
	imatrim_free(t);
	/* Records deleted by another program, never exported. */
	k->d = 95;
	publish(k);
	t = trim_new(k, 10);
	CHECK(imatrim_lacking(t) && imatrim_exported(t) == 90,
	      "another program deleted 90-94: the export lacks them");
	CHECK(imatrim_read(t, l, 0, 0, &c) == 0 && chunk_is(&c, k, 95, 5) && c.deleted == 95,
	      "asked for entry 0: sent from entry 95");
	free(c.data);
	imatrim_free(t);
	imalist_free(l);
	kernel_free(k);
	fresh();
}

/*
 * log_deleted only when the chunk starts after the entry asked for: an agent that answers a
 * challenge naming entry D (the verifier acknowledged up to there) while a policy change waits
 * for entry 0 must not say D, or the verifier judges it log_records_deleted with the old
 * challenge's entry instead of asking for entry 0 (verifier/service/round.c).
 */
static void test_log_deleted_only_when_skipped(void)
{
	struct kernel *k = kernel_boot(100);
	struct imatrim *t = trim_new(k, 10);
	struct imalist *l = imalist_new(list_path);
	struct imalist_chunk c;
	uint64_t to;

	CHECK(imatrim_after_verdict(t, l, 70, &to) == 0 && to == 70 && k->d == 70,
	      "entries 0-69 deleted (the verifier acknowledged 70)");
	CHECK(imatrim_read(t, l, 70, 0, &c) == 0 && chunk_is(&c, k, 70, 30) &&
		      imatrim_log_deleted(&c, 70) == 0,
	      "asked for entry 70 (= D), sent from 70: no log_deleted");
	free(c.data);
	CHECK(imatrim_read(t, l, 0, 0, &c) == 0 && chunk_is(&c, k, 0, 100) &&
		      imatrim_log_deleted(&c, 0) == 0,
	      "asked for entry 0, served from the export: no log_deleted");
	free(c.data);
	unlink(export_path);
	CHECK(imatrim_read(t, l, 0, 0, &c) == 0 && chunk_is(&c, k, 70, 30) &&
		      imatrim_log_deleted(&c, 0) == 70,
	      "the export lost, asked for entry 0: sent from 70, log_deleted 70");
	free(c.data);
	CHECK(imatrim_read(t, l, 70, 0, &c) == 0 && chunk_is(&c, k, 70, 30) &&
		      imatrim_log_deleted(&c, 70) == 0,
	      "the export lost, asked for entry 70: sent as asked, no log_deleted");
	free(c.data);
	imatrim_free(t);
	imalist_free(l);
	kernel_free(k);
	fresh();
}

/*
 * Without the kernel's deleted count (securityfs not mounted yet when attestd starts, a kernel
 * or a list path without it) the export is this boot's only copy of what was deleted: it is
 * left as it is, not cut back to a D of 0.
 */
static void test_no_deleted_count_keeps_export(void)
{
	struct kernel *k = kernel_boot(100);
	struct imatrim *t = trim_new(k, 10);
	struct imalist *l = imalist_new(list_path);
	uint64_t to;

	CHECK(imatrim_after_verdict(t, l, 40, &to) == 0 && to == 40 && holds(k, export_path, 40),
	      "entries 0-39 exported and deleted");
	imatrim_free(t);
	k->has_deleted_file = false; /* attestd restarts before securityfs is back */
	publish(k);
	t = trim_new(k, 10);
	CHECK(holds(k, export_path, 40), "no deleted count: the export kept (0-39)");
	CHECK(imatrim_after_verdict(t, l, 60, &to) == 0 && to == 0 && k->writes == 1,
	      "and nothing deleted");
	imatrim_free(t);
	k->has_deleted_file = true;
	publish(k);
	t = trim_new(k, 10);
	CHECK(imatrim_exported(t) == 40 && !imatrim_lacking(t) && holds(k, export_path, 40),
	      "the deleted count back: the export holds every deleted record");
	imatrim_free(t);
	imalist_free(l);
	kernel_free(k);
	fresh();
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(tmpdir))
		return 2;
	snprintf(list_path, sizeof(list_path), "%s/binary_runtime_measurements", tmpdir);
	snprintf(count_path, sizeof(count_path), "%s/runtime_measurements_count", tmpdir);
	snprintf(deleted_path, sizeof(deleted_path), "%s/runtime_measurements_deleted", tmpdir);
	snprintf(export_path, sizeof(export_path), "%s/ima-exported.bin", tmpdir);
	CASE(test_absolute_indexes);
	CASE(test_deletes_only_acknowledged);
	CASE(test_restart_reconciles);
	CASE(test_serves_from_export);
	CASE(test_export_missing);
	CASE(test_log_deleted_only_when_skipped);
	CASE(test_no_deleted_count_keeps_export);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return check_finish();
}
