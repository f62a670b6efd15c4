/*
 * statedir: the verifier's state directory made private and taken for this process alone.
 *
 * The directory holds the TLS keys, the operator token and the store: nobody but the
 * verifier's user may read or change it, and two verifiers must never share it (each would
 * issue nonces the other does not know, and both would write the same files).
 *
 * statedir_open() creates the directory (0700) if missing. An existing one must be a real
 * directory (not a symbolic link) owned by the verifier's user, and it and every directory
 * above it must be ones only root and that user can change (owned by one of them, writable by
 * no one else unless sticky, as /tmp): whoever else could rename one of them could put another
 * directory at the path once it was checked. If the directory's mode lets anyone else in, it is
 * made 0700, and every file directly in it that others could read or write is made 0600, each
 * change logged (the files were created by an older verifier, or by hand). Then it takes an
 * exclusive lock (flock) on DIR/verifier.lock, written with this process's id; a second
 * verifier on the directory is refused, naming the process that holds it.
 *
 * Every check is made on the directory open as sd->dfd, and it stays open: the verifier's files
 * are opened from it (openat(2), statedir_path()), never by the path again, so what is at the
 * path later does not matter.
 *
 * The caller sets umask(077) first, so every file created afterwards (SQLite's database and
 * journals among them) is 0600 too.
 *
 * Returns 0 with sd open (keep it open while running; statedir_close() releases it), or
 * -errno, logged with what the operator should do: -EBUSY another verifier holds the lock,
 * -EPERM owned by another user, or under a directory others can change, -ENOTDIR not a
 * directory.
 */
#ifndef VERIFIER_STATEDIR_H
#define VERIFIER_STATEDIR_H

#include <stddef.h>

struct statedir {
	int dfd;     /* the directory checked */
	int lock_fd; /* holds the lock */
};

int statedir_open(const char *path, struct statedir *sd);
/*
 * "/proc/self/fd/N/name" into out: a path that reaches `name` in the directory checked, through
 * its descriptor, for a library that opens files only by path (SQLite). 0, or -ENAMETOOLONG.
 */
int statedir_path(const struct statedir *sd, const char *name, char *out, size_t cap);
/* Releases the lock and the directory. A zeroed-out sd with both -1 is ignored. */
void statedir_close(struct statedir *sd);

#endif
