/*
 * statedir: the verifier's state directory made private and taken for this process alone.
 *
 * The directory holds the TLS keys, the operator token and the store: nobody but the
 * verifier's user may read or change it, and two verifiers must never share it (each would
 * issue nonces the other does not know, and both would write the same files).
 *
 * statedir_open() creates the directory (0700) if missing. An existing one must be a real
 * directory (not a symbolic link) owned by the verifier's user; if its mode lets anyone else
 * in, it is made 0700, and every file directly in it that others could read or write is made
 * 0600, each change logged (the files were created by an older verifier, or by hand).
 * Then it takes an exclusive lock (flock) on DIR/verifier.lock, written with this process's
 * id; a second verifier on the directory is refused, naming the process that holds it.
 *
 * The caller sets umask(077) first, so every file created afterwards (SQLite's database and
 * journals among them) is 0600 too.
 *
 * Returns 0 with *lock_fd open (keep it open while running; statedir_close() releases it), or
 * -errno, logged with what the operator should do: -EBUSY another verifier holds the lock,
 * -EPERM owned by another user, -ENOTDIR not a directory.
 */
#ifndef VERIFIER_STATEDIR_H
#define VERIFIER_STATEDIR_H

int statedir_open(const char *path, int *lock_fd);
/* Releases the lock. -1 is ignored. */
void statedir_close(int lock_fd);

#endif
