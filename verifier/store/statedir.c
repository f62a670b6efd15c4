/* The state directory made private and locked; the contract is in statedir.h. */
#include "verifier/store/statedir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"

#define LOCK_NAME "verifier.lock"
#define PID_TEXT_MAX 24

/* Files directly in the directory that others may read or write become 0600. */
static int private_files(const char *path, int dfd)
{
	DIR *d;
	struct dirent *e;
	int fd, ret = 0;

	fd = dup(dfd);
	if (fd < 0 || !(d = fdopendir(fd))) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		log_error("state: cannot list \"%s\": %s", path, strerror(-ret));
		return ret;
	}
	while ((errno = 0, e = readdir(d))) {
		struct stat st;

		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
		    !(st.st_mode & 077))
			continue;
		if (fchmodat(dfd, e->d_name, 0600, 0) < 0) {
			ret = -errno;
			log_error("state: \"%s/%s\" is mode %04o and cannot be made 0600: %s", path,
				  e->d_name, (unsigned)(st.st_mode & 07777), strerror(-ret));
			break;
		}
		log_warn("state: \"%s/%s\" was mode %04o, others could read it; made it 0600", path,
			 e->d_name, (unsigned)(st.st_mode & 07777));
	}
	closedir(d);
	return ret;
}

/* The directory belongs to the verifier's user. */
static int check_owner(const char *path, int dfd)
{
	struct stat st;

	if (fstat(dfd, &st) < 0) {
		log_error("state: cannot stat \"%s\": %s", path, strerror(errno));
		return -errno;
	}
	if (st.st_uid != geteuid()) {
		log_error("state: \"%s\" belongs to uid %u, not to the verifier's user (uid %u);"
			  " chown it or give another --state-dir", path, (unsigned)st.st_uid,
			  (unsigned)geteuid());
		return -EPERM;
	}
	return 0;
}

/* Only we get in: the directory 0700, its files 0600. */
static int make_private(const char *path, int dfd)
{
	struct stat st;

	if (fstat(dfd, &st) < 0) {
		log_error("state: cannot stat \"%s\": %s", path, strerror(errno));
		return -errno;
	}
	if (st.st_mode & 077) {
		if (fchmod(dfd, 0700) < 0) {
			log_error("state: \"%s\" is mode %04o and cannot be made 0700: %s", path,
				  (unsigned)(st.st_mode & 07777), strerror(errno));
			return -errno;
		}
		log_warn("state: \"%s\" was mode %04o, others could enter it; made it 0700", path,
			 (unsigned)(st.st_mode & 07777));
	}
	return private_files(path, dfd);
}

/* Only root and the verifier's user can rename what is in a directory so made. */
static bool only_ours(const struct stat *st)
{
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return false;
	/* Sticky (/tmp): others may add names, but not rename or remove ours. */
	return !(st->st_mode & (S_IWGRP | S_IWOTH)) || (st->st_mode & S_ISVTX);
}

/*
 * Nobody but root and the verifier's user can change a directory above the state directory:
 * whoever could would put another directory at its path once it was checked (a link to theirs,
 * with their operator token, TLS key or store in it), for whatever is still opened by path
 * (SQLite's journals, backups). The walk goes down from / by descriptors along the parent's
 * path resolved; the parent it ends at is returned open (-errno, logged).
 */
static int open_parent(const char *path)
{
	char *copy = strdup(path), *real = NULL, *p, *slash, end;
	size_t shown = 1; /* real's first `shown` bytes name the directory open as fd */
	struct stat st;
	int fd = -1, next, ret = 0;

	if (!copy || !(real = realpath(dirname(copy), NULL)) ||
	    (fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		ret = -errno;
		log_error("state: cannot resolve the directory above \"%s\": %s", path,
			  strerror(-ret));
		goto out;
	}
	for (p = real + 1;;) {
		if (fstat(fd, &st) < 0) {
			ret = -errno;
			log_error("state: cannot stat \"%.*s\": %s", (int)shown, real, strerror(-ret));
			goto out;
		}
		if (!only_ours(&st)) {
			log_error("state: \"%.*s\" (uid %u, mode %04o) can be changed by others than root"
				  " and the verifier's user: they could put another directory in place"
				  " of \"%s\"; give a --state-dir whose parents only root and the"
				  " verifier's user can write (as under /var/lib)", (int)shown, real,
				  (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), path);
			ret = -EPERM;
			goto out;
		}
		if (!*p)
			break; /* fd is the parent */
		slash = strchrnul(p, '/');
		end = *slash;
		*slash = '\0';
		next = openat(fd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		*slash = end;
		if (next < 0) {
			ret = -errno;
			log_error("state: cannot open \"%.*s\" (changed while it was checked?): %s",
				  (int)(slash - real), real, strerror(-ret));
			goto out;
		}
		close(fd);
		fd = next;
		shown = (size_t)(slash - real);
		p = end ? slash + 1 : slash;
	}
out:
	if (ret && fd >= 0)
		close(fd);
	free(real);
	free(copy);
	return ret ? ret : fd;
}

/* dfd's ".." is the directory open as parent: nothing was put in between since the walk. */
static int same_parent(const char *path, int dfd, int parent)
{
	struct stat up, want;

	if (fstatat(dfd, "..", &up, 0) < 0 || fstat(parent, &want) < 0) {
		log_error("state: cannot stat the directory above \"%s\": %s", path,
			  strerror(errno));
		return -errno;
	}
	if (up.st_dev != want.st_dev || up.st_ino != want.st_ino) {
		log_error("state: \"%s\" was moved or replaced while it was checked; start again",
			  path);
		return -EAGAIN;
	}
	return 0;
}

/* Who holds the lock, from the file's text; 0 if unreadable. */
static long lock_holder(int fd)
{
	char buf[PID_TEXT_MAX];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	char *end;
	long pid;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	errno = 0;
	pid = strtol(buf, &end, 10);
	return errno || end == buf || pid <= 0 ? 0 : pid;
}

static int take_lock(const char *path, int dfd, int *lock_fd)
{
	char text[PID_TEXT_MAX];
	int fd, len;

	fd = openat(dfd, LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		log_error("state: cannot open \"%s/" LOCK_NAME "\": %s", path, strerror(errno));
		return -errno;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;
		long pid = lock_holder(fd);

		close(fd);
		if (err == EWOULDBLOCK) {
			log_error("state: another verifier (pid %ld) uses \"%s\"; stop it or give this"
				  " one another --state-dir", pid, path);
			return -EBUSY;
		}
		log_error("state: cannot lock \"%s/" LOCK_NAME "\": %s", path, strerror(err));
		return -err;
	}
	/* For the next one's message only: the lock, not the text, is what excludes. */
	len = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)len, 0) != len)
		log_warn("state: cannot write the pid into \"%s/" LOCK_NAME "\": %s", path,
			 strerror(errno));
	*lock_fd = fd;
	return 0;
}

int statedir_open(const char *path, struct statedir *sd)
{
	int dfd, parent, ret;

	sd->dfd = sd->lock_fd = -1;
	/* The parents first: under one that others can change, nothing is created. */
	parent = open_parent(path);
	if (parent < 0)
		return parent;
	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		ret = -errno;
		log_error("state: cannot create \"%s\": %s", path, strerror(-ret));
		close(parent);
		return ret;
	}
	/* O_NOFOLLOW: a link planted at the path would hand our keys to whoever made it. */
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		ret = -errno;
		log_error("state: \"%s\" is not a directory (or is a symbolic link): %s", path,
			  strerror(-ret));
		close(parent);
		return ret == -ELOOP ? -ENOTDIR : ret;
	}
	ret = same_parent(path, dfd, parent);
	close(parent);
	/* The lock before any change: a running verifier's directory is left as it is. */
	if (!ret)
		ret = check_owner(path, dfd);
	if (!ret)
		ret = take_lock(path, dfd, &sd->lock_fd);
	sd->dfd = dfd;
	if (ret || (ret = make_private(path, dfd)))
		statedir_close(sd);
	return ret;
}

int statedir_path(const struct statedir *sd, const char *name, char *out, size_t cap)
{
	int n = snprintf(out, cap, "/proc/self/fd/%d/%s", sd->dfd, name);

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

void statedir_close(struct statedir *sd)
{
	if (sd->lock_fd >= 0)
		close(sd->lock_fd);
	if (sd->dfd >= 0)
		close(sd->dfd);
	sd->dfd = sd->lock_fd = -1;
}
