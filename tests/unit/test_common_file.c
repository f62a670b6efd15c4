/*
 * common/file: atomic write (content, no temporary left, replacement, a planted link at the
 * temporary name not followed), whole-file read with its cap, and read-only mapping.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file.h"
#include "proto/dynbuf.h"
#include "tests/unit/check.h"

static char tmpdir[] = "/tmp/test_common_file.XXXXXX";

/* PATH inside the test directory; only the last two results stay valid. */
static const char *at(const char *name)
{
	static char path[2][256];
	static int i;

	i ^= 1;
	snprintf(path[i], sizeof(path[i]), "%s/%s", tmpdir, name);
	return path[i];
}

/* The file's bytes as a string ("" if unreadable); the static buffer is reused. */
static const char *contents(const char *path)
{
	static char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	buf[0] = '\0';
	if (fd < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_write_atomic(void)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s", at("state"));

	CHECK(file_write_atomic(p, "first\n", 6, 0600) == 0, "write a new file");
	CHECK(strcmp(contents(p), "first\n") == 0, "new file has the content: '%s'", contents(p));
	CHECK(access(at("state.tmp"), F_OK) != 0, "no temporary file left after a write");
	CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0600, "mode 0600 (got %o)",
	      (unsigned)(st.st_mode & 0777));

	CHECK(file_write_atomic(p, "2", 1, 0600) == 0, "replace an existing file");
	CHECK(strcmp(contents(p), "2") == 0, "replacement is whole, not a prefix overwrite: '%s'",
	      contents(p));
	CHECK(access(at("state.tmp"), F_OK) != 0, "no temporary file left after a replacement");

	CHECK(file_write_atomic(p, "", 0, 0644) == 0 && stat(p, &st) == 0 && st.st_size == 0,
	      "an empty write leaves an empty file");
	CHECK((st.st_mode & 0777) == 0644, "the mode asked for replaces the old one (got %o)",
	      (unsigned)(st.st_mode & 0777));

	/* A stale temporary file (a crash mid-write) is replaced, not appended to. */
	put(at("state.tmp"), "stale stale stale");
	CHECK(file_write_atomic(p, "fresh", 5, 0600) == 0 && strcmp(contents(p), "fresh") == 0,
	      "a stale temporary file does not leak into the result: '%s'", contents(p));

	/* A link planted at the temporary name must not be written through. */
	put(at("victim"), "keep");
	CHECK(symlink(at("victim"), at("state.tmp")) == 0, "plant a symlink");
	CHECK(file_write_atomic(p, "new", 3, 0600) == 0, "write with a planted link");
	CHECK(strcmp(contents(at("victim")), "keep") == 0, "the link target is untouched: '%s'",
	      contents(at("victim")));
	CHECK(strcmp(contents(p), "new") == 0, "the file got the content");

	CHECK(file_write_atomic(at("no-such-dir/x"), "x", 1, 0600) == -ENOENT,
	      "missing directory: -ENOENT");
	CHECK(access(at("no-such-dir/x.tmp"), F_OK) != 0, "nothing created on failure");
}

static void test_read(void)
{
	struct dynbuf b;
	char *s;
	size_t n;

	put(at("ten"), "0123456789");
	dynbuf_init(&b, 10);
	CHECK(file_read(at("ten"), &b) == 0 && b.len == 10 && strcmp(dynbuf_str(&b), "0123456789") == 0,
	      "a file of exactly the cap is read whole");
	s = dynbuf_take(&b, &n);
	CHECK(s && n == 10 && s[10] == '\0', "bytes handed over NUL-terminated");
	free(s);

	dynbuf_init(&b, 9);
	CHECK(file_read(at("ten"), &b) == -EFBIG, "one byte past the cap: -EFBIG");
	CHECK(b.buf == NULL && b.len == 0, "the buffer is released on failure");

	put(at("empty"), "");
	dynbuf_init(&b, 10);
	CHECK(file_read(at("empty"), &b) == 0 && b.len == 0 && strcmp(dynbuf_str(&b), "") == 0,
	      "an empty file reads as \"\"");
	dynbuf_release(&b);

	dynbuf_init(&b, 10);
	CHECK(file_read(at("missing"), &b) == -ENOENT, "missing file: -ENOENT");
	CHECK(file_read(tmpdir, &b) == -EINVAL, "a directory: -EINVAL");
	CHECK(mkfifo(at("fifo"), 0600) == 0, "make a fifo");
	CHECK(file_read(at("fifo"), &b) == -EINVAL, "a fifo: -EINVAL (and no wait for a writer)");
	dynbuf_release(&b);
}

/* procfs reports size 0: the chunked path, with the same cap. */
static void test_read_procfs(void)
{
	struct dynbuf b;

	dynbuf_init(&b, 64);
	CHECK(file_read("/proc/sys/kernel/random/boot_id", &b) == 0 && b.len == 37 &&
		      b.buf[36] == '\n',
	      "boot_id read whole (%zu bytes)", b.len);
	dynbuf_release(&b);
	dynbuf_init(&b, 36);
	CHECK(file_read("/proc/sys/kernel/random/boot_id", &b) == -EFBIG,
	      "size-0 file past the cap: -EFBIG");
	CHECK(b.buf == NULL, "released on failure");
}

static void test_map(void)
{
	const uint8_t *buf;
	size_t len;

	put(at("m"), "mapped");
	CHECK(file_map(at("m"), &buf, &len) == 0 && len == 6 && memcmp(buf, "mapped", 6) == 0,
	      "map a file");
	file_unmap(buf, len);
	CHECK(file_map(at("empty"), &buf, &len) == 0 && buf == NULL && len == 0,
	      "an empty file maps to NULL, 0");
	file_unmap(buf, len);
	CHECK(file_map(tmpdir, &buf, &len) == -EINVAL, "a directory: -EINVAL");
	CHECK(file_map(at("missing"), &buf, &len) == -ENOENT, "missing file: -ENOENT");
}

static void test_sync_parent(void)
{
	put(at("synced"), "x");
	CHECK(file_sync_parent(at("synced")) == 0, "the directory of a file syncs");
	CHECK(file_sync_parent(at("not-yet")) == 0, "a name not made yet: its directory syncs");
	CHECK(file_sync_parent(at("no-such-dir/f")) == -ENOENT, "a missing directory: -ENOENT");
	CHECK(file_sync_parent("relative-name") == 0, "a bare name: the working directory");
}

int main(void)
{
	char cmd[300];

	umask(022);
	if (!mkdtemp(tmpdir))
		return 2;
	CASE(test_write_atomic);
	CASE(test_read);
	CASE(test_read_procfs);
	CASE(test_map);
	CASE(test_sync_parent);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return check_finish();
}
