/*
 * file: whole-file reads with a cap, and atomic replacement of a file.
 *
 * Neither function logs: each returns 0 or -errno and the caller logs with its own context
 * (which file, what it was for, what the operator should do).
 *
 * file_read() reads the regular file at `path` into `b`, which must be empty (just initialised
 * or reset); the cap given to dynbuf_init() bounds the file. A regular file is read into one
 * allocation sized from fstat(2) (no realloc copies of a key left in freed memory); files that
 * report size 0 (procfs) are read in chunks up to the cap. Errors: -errno from open(2) (-ENOENT
 * when missing), -EINVAL when not a regular file, -EFBIG when larger than the cap, -EIO on a
 * read error or when the file changed size while read (refused, never cut), -ENOMEM. On error b
 * is wiped and released. On success b holds the bytes (NUL-terminated, see dynbuf.h); callers
 * of secrets wipe them with OPENSSL_cleanse() before dynbuf_release().
 *
 * file_write_atomic() replaces `path` so that a crash leaves the old content or the new one,
 * never a mix: it writes "PATH.tmp" in the same directory (created afresh with `mode`, minus the
 * umask; a stale one is removed first), fsyncs it, renames it over path and fsyncs the directory.
 * On failure the temporary file is removed and -errno returned; path is unchanged unless the
 * failure was the directory fsync (then path holds the new content, not yet durable).
 *
 * file_read_at() and file_write_atomic_at() do the same with a relative path resolved from the
 * directory open as dfd (openat(2)), not from the path that named it: a caller that checked a
 * directory through its descriptor reaches the files of that directory even if another was put
 * at its path since. AT_FDCWD is the working directory (what the other two use).
 *
 * file_sync_parent() fsyncs the directory that holds `path`, so that a file created or renamed
 * there is durable (a file system that cannot sync a directory, EINVAL, counts as done). 0 or
 * -errno.
 *
 * file_map() maps a regular file read-only, for inputs too large to copy (IMA lists, policies
 * given to attestctl): an empty file gives *buf NULL and *len 0. 0 or -errno (-EINVAL when not a
 * regular file). Release with file_unmap(), which accepts what an empty file gave.
 */
#ifndef COMMON_FILE_H
#define COMMON_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/dynbuf.h"

int file_read(const char *path, struct dynbuf *b);
int file_write_atomic(const char *path, const void *data, size_t len, mode_t mode);
int file_read_at(int dfd, const char *path, struct dynbuf *b);
int file_write_atomic_at(int dfd, const char *path, const void *data, size_t len, mode_t mode);
int file_sync_parent(const char *path);
int file_map(const char *path, const uint8_t **buf, size_t *len);
void file_unmap(const uint8_t *buf, size_t len);

#endif
