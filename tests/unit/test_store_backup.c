/*
 * store_backup() and store_backup_check() (store_sqlite_backup.c): copies taken while a
 * writer commits rounds are consistent (the boot state and the verdicts agree), hold every
 * round acknowledged before the copy began, open as a store; damaged copies are refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "verifier/store.h"

static char tmpdir[] = "/tmp/test_store_backup.XXXXXX";

struct writer {
	struct store *st;
	atomic_int acked; /* rounds whose commit returned 0 */
	atomic_bool stop;
	int fails;
};

/* One trusted round after another for agent "w"; round i leaves next_entry i + 1. */
static void *writer_thread(void *p)
{
	struct writer *w = p;
	struct boot_state bs;
	struct store_round r;
	int64_t id;

	memset(&bs, 0, sizeof(bs));
	bs.started = true;
	bs.boot_number = 1;
	for (int i = 0; !atomic_load(&w->stop) && i < 100000; i++) {
		bs.next_entry = (uint64_t)i + 1;
		memset(&r, 0, sizeof(r));
		r.agent = "w";
		r.next = &bs;
		r.trusted = true;
		r.reasons_json = "[]";
		r.next_offset = bs.next_entry;
		r.now = 1000 + i;
		if (store_round_commit(w->st, &r, &id))
			w->fails++;
		else
			atomic_store(&w->acked, i + 1);
	}
	return NULL;
}

static int count_verdicts(void *arg, const struct store_verdict *v)
{
	(void)v;
	(*(int *)arg)++;
	return 0;
}

/* Copies fd to path (the copy store_backup() handed over); 0 or -1. */
static int save(int fd, const char *path)
{
	char buf[65536];
	ssize_t n;
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (out < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			n = -1;
	close(out);
	return n == 0 ? 0 : -1;
}

static void test_backup_under_load(void)
{
	struct writer w = { 0 };
	struct store *st = NULL, *copy = NULL;
	struct boot_state bs;
	char db[300], path[300], uri[320];
	pthread_t t;
	int64_t version = 0;
	int ok_copies = 0, consistent = 0, complete = 0, last_n = 0;

	snprintf(db, sizeof(db), "sqlite:%s/verifier.db", tmpdir);
	if (store_open(db, &st)) {
		CHECK(0, "open %s", db);
		return;
	}
	w.st = st;
	CHECK(pthread_create(&t, NULL, writer_thread, &w) == 0, "writer started");
	while (atomic_load(&w.acked) < 20)
		usleep(1000);
	for (int i = 0; i < 5; i++) {
		int before = atomic_load(&w.acked), n = 0, fd = -1;
		uint64_t size = 0;

		snprintf(path, sizeof(path), "%s/copy%d.db", tmpdir, i);
		snprintf(uri, sizeof(uri), "sqlite:%s", path);
		if (store_backup(st, &fd, &size) || fd < 0 || size == 0 || save(fd, path)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		close(fd);
		ok_copies++;
		if (store_backup_check(uri, &version) || version < 1 || store_open(uri, &copy))
			continue;
		/* One commit's state: the boot state and the verdicts are of the same round. */
		if (store_boot_get(copy, "w", &bs) == 0 &&
		    store_verdicts_list(copy, "w", 1000000, count_verdicts, &n) == 0 &&
		    bs.next_entry == (uint64_t)n)
			consistent++;
		if (n >= before && n >= last_n)
			complete++;
		last_n = n;
		store_close(copy);
		copy = NULL;
		usleep(20000);
	}
	atomic_store(&w.stop, true);
	pthread_join(t, NULL);
	CHECK(w.fails == 0 && atomic_load(&w.acked) > 20, "the writer committed %d rounds meanwhile",
	      atomic_load(&w.acked));
	CHECK(ok_copies == 5, "5 copies taken while rounds commit (%d)", ok_copies);
	CHECK(consistent == 5, "each copy is one commit's state (%d of 5)", consistent);
	CHECK(complete == 5, "each holds every round acknowledged before it began (%d of 5)",
	      complete);
	store_close(st);
}

static void test_check_refuses(void)
{
	char path[300], uri[320], garbage[300];
	int64_t version = 1;
	int fd;

	snprintf(garbage, sizeof(garbage), "%s/garbage.db", tmpdir);
	fd = open(garbage, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && write(fd, "not a database at all, not at all", 33) == 33, "garbage written");
	if (fd >= 0)
		close(fd);
	snprintf(uri, sizeof(uri), "sqlite:%s", garbage);
	CHECK(store_backup_check(uri, &version) == -EINVAL && version == 0, "garbage refused");

	/* A copy cut in half: the integrity check fails. */
	snprintf(path, sizeof(path), "%s/copy4.db", tmpdir);
	CHECK(truncate(path, 8192) == 0, "copy truncated");
	snprintf(uri, sizeof(uri), "sqlite:%s", path);
	CHECK(store_backup_check(uri, &version) == -EINVAL, "truncated copy refused");

	snprintf(uri, sizeof(uri), "sqlite:%s/missing.db", tmpdir);
	CHECK(store_backup_check(uri, &version) == -EINVAL, "missing file refused");
	CHECK(store_backup_check("postgres://x", &version) == -EINVAL, "unknown scheme refused");
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(tmpdir))
		return 2;
	CASE(test_backup_under_load);
	CASE(test_check_refuses);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return check_finish();
}
