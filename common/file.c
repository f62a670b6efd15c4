/* Whole-file read and atomic write; the contract is in file.h. */
#include "common/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#define FILE_CHUNK 4096u

/* read(2) that retries on EINTR. */
static ssize_t read_some(int fd, void *buf, size_t n)
{
	ssize_t r;

	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

/* Reads exactly n bytes at the current offset: -EIO if the file ends first. */
static int read_exact(int fd, char *buf, size_t n)
{
	while (n > 0) {
		ssize_t r = read_some(fd, buf, n);

		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		buf += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Appends everything up to EOF in chunks (files whose size fstat(2) does not know). */
static int read_chunks(int fd, struct dynbuf *b)
{
	char chunk[FILE_CHUNK];
	ssize_t r;
	int ret = 0;

	while ((r = read_some(fd, chunk, sizeof(chunk))) > 0) {
		if (dynbuf_add(b, chunk, (size_t)r) < 0)
			break;
	}
	if (r < 0)
		ret = -errno;
	else if (dynbuf_error(b) == -E2BIG)
		ret = -EFBIG;
	else if (dynbuf_error(b))
		ret = dynbuf_error(b);
	OPENSSL_cleanse(chunk, sizeof(chunk));
	return ret;
}

int file_read(const char *path, struct dynbuf *b)
{
	return file_read_at(AT_FDCWD, path, b);
}

int file_read_at(int dfd, const char *path, struct dynbuf *b)
{
	struct stat st;
	char *at, extra;
	int fd, ret;

	/* O_NONBLOCK: a fifo is refused at once instead of waiting for a writer. */
	fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < 0) {
		ret = -EINVAL;
		goto out;
	}
	if ((uint64_t)st.st_size > b->max) {
		ret = -EFBIG;
		goto out;
	}
	if (st.st_size == 0) {
		ret = read_chunks(fd, b);
		goto out;
	}
	at = dynbuf_grow(b, (size_t)st.st_size);
	if (!at) {
		ret = dynbuf_error(b) == -E2BIG ? -EFBIG : -ENOMEM;
		goto out;
	}
	ret = read_exact(fd, at, (size_t)st.st_size);
	/* One byte more than the size: a file that grew since fstat is refused, not cut. */
	if (ret == 0) {
		ssize_t r = read_some(fd, &extra, 1);

		if (r < 0)
			ret = -errno;
		else if (r > 0)
			ret = -EIO;
	}
out:
	close(fd);
	if (ret < 0) {
		if (b->buf)
			OPENSSL_cleanse(b->buf, b->len);
		dynbuf_release(b);
	}
	return ret;
}

/* fsyncs the directory that holds path (relative to dfd), so that a rename in it is durable. */
static int sync_parent_at(int dfd, const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, ret = 0;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	fd = openat(dfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Some file systems cannot sync a directory (EINVAL): the rename is all they offer. */
	if (fsync(fd) < 0 && errno != EINVAL)
		ret = -errno;
	close(fd);
	return ret;
}

int file_sync_parent(const char *path)
{
	return sync_parent_at(AT_FDCWD, path);
}

int file_write_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	return file_write_atomic_at(AT_FDCWD, path, data, len, mode);
}

int file_write_atomic_at(int dfd, const char *path, const void *data, size_t len, mode_t mode)
{
	const char *p = data;
	char tmp[PATH_MAX];
	int fd, ret = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	/* O_EXCL after unlink: never write through a link planted at the temporary name. */
	if (unlinkat(dfd, tmp, 0) < 0 && errno != ENOENT)
		return -errno;
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			ret = -errno;
			break;
		}
		p += w;
		len -= (size_t)w;
	}
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && renameat(dfd, tmp, dfd, path) < 0)
		ret = -errno;
	if (ret) {
		unlinkat(dfd, tmp, 0);
		return ret;
	}
	return sync_parent_at(dfd, path);
}

int file_map(const char *path, const uint8_t **buf, size_t *len)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int rc = 0;

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < 0) {
		rc = -EINVAL;
		goto cleanup;
	}
	if (st.st_size == 0)
		goto cleanup;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		rc = -errno;
		goto cleanup;
	}
	(void)madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
	*buf = p;
	*len = (size_t)st.st_size;
cleanup:
	close(fd);
	return rc;
}

void file_unmap(const uint8_t *buf, size_t len)
{
	if (buf && len)
		munmap((void *)buf, len);
}
