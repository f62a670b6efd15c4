/*
 * store_backup() and store_backup_check() (store_sql.c, store_sqlite_backup.c): copies taken
 * while a writer commits rounds are consistent (the boot state and the verdicts agree), hold
 * every round acknowledged before the copy began, open as a store; damaged copies are refused;
 * a copy carries what later schema steps added (boot state versions, raw paths, boot logs).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/teststore.h"
#include "tests/lib/storeagent.h"
#include "tests/unit/check.h"
#include "verifier/store/store.h"

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
	struct boot_state bs, cur;
	struct store_round r;
	uint64_t ver;
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
		/* Over the version it read (the round's compare-and-swap), as round.c does. */
		if (store_boot_get(w->st, "w", &cur, &ver) == 0)
			r.prev_version = ver;
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
static void test_backup_under_load(void)
{
	struct writer w = { 0 };
	struct store *st = NULL, *copy = NULL;
	struct boot_state bs;
	char db[300], path[300], uri[320];
	pthread_t t;
	int64_t version = 0;
	int ok_copies = 0, consistent = 0, complete = 0, last_n = 0;

	if (teststore_uri(tmpdir, "verifier", db, sizeof(db)) || store_open(db, &st)) {
		CHECK(0, "open %s", db);
		return;
	}
	w.st = st;
	CHECK(storeagent_active(st, "w", 100) == 0, "agent w active");
	CHECK(pthread_create(&t, NULL, writer_thread, &w) == 0, "writer started");
	while (atomic_load(&w.acked) < 20)
		usleep(1000);
	for (int i = 0; i < 5; i++) {
		int before = atomic_load(&w.acked), n = 0, fd = -1;
		uint64_t size = 0;

		snprintf(path, sizeof(path), "%s/copy%d.db", tmpdir, i);
		snprintf(uri, sizeof(uri), "sqlite:%s", path);
		if (store_backup(st, &fd, &size) || fd < 0 || size == 0 ||
		    teststore_save(fd, path)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		close(fd);
		ok_copies++;
		if (store_backup_check(uri, &version) || version < 1 || store_open(uri, &copy))
			continue;
		/* One commit's state: the boot state and the verdicts are of the same round. */
		if (store_boot_get(copy, "w", &bs, NULL) == 0 &&
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

/* Finds the one violation of agent "b" (the copy's strings die with the cursor: copy them). */
struct raw_violation {
	int n;
	size_t path_len;
	char path[32];
	char template_name[32];
};

static int raw_cb(void *arg, const struct store_violation *v)
{
	struct raw_violation *r = arg;

	if (!r->n++ && v->path_len < sizeof(r->path)) {
		memcpy(r->path, v->path, v->path_len);
		r->path_len = v->path_len;
		snprintf(r->template_name, sizeof(r->template_name), "%s", v->template_name);
	}
	return 0;
}

/*
 * A copy holds what every schema step added: the boot state's version (the round's
 * compare-and-swap), a violation's raw path bytes, the firmware event log with its summary.
 */
static void test_copy_of_every_table(void)
{
	static const char raw[] = "/usr/bin/t\xffol";
	static uint8_t log[] = {3, 0, 0, 0, 1, 0, 'x'};
	char path[300], uri[320];
	struct store *st = NULL, *copy = NULL;
	struct store_round_violation v = { .entry = 1, .reason = "not_in_allowlist", .path = raw,
					   .path_len = sizeof(raw) - 1, .digest = "sha256:ab",
					   .template_name = "ima-ng" };
	struct store_boot_log bl, got;
	struct raw_violation rv = { 0 };
	struct boot_state bs;
	struct store_round r;
	uint64_t ver = 0;
	int64_t id, version = 0;
	uint64_t size = 0;
	int fd = -1;

	CHECK(teststore_uri(tmpdir, "every", uri, sizeof(uri)) == 0 && store_open(uri, &st) == 0,
	      "a store");
	if (!st)
		return;
	CHECK(storeagent_active(st, "b", 100) == 0, "agent b active");
	memset(&bs, 0, sizeof(bs));
	bs.started = true;
	bs.boot_number = 1;
	bs.next_entry = 2;
	memset(&bl, 0, sizeof(bl));
	bl.log = log;
	bl.log_len = sizeof(log);
	memset(bl.sha256, 0x5a, sizeof(bl.sha256));
	bl.cmdline = (char *)"console=ttyS0 ima_policy=tcb";
	bl.summary = (char *)"{\"status\":\"replays\"}";
	bl.received_at = 77;
	memset(&r, 0, sizeof(r));
	r.agent = "b";
	r.next = &bs;
	r.boot_log = &bl;
	r.reasons_json = "[]";
	r.violations = &v;
	r.nviolations = 1;
	r.now = 100;
	CHECK(store_round_commit(st, &r, &id) == 0, "a round with a raw path and a boot log");
	r.prev_version = 1;
	r.boot_log = NULL;
	r.nviolations = 0;
	CHECK(store_round_commit(st, &r, &id) == 0, "a second round over version 1");
	snprintf(path, sizeof(path), "%s/every-copy.db", tmpdir);
	CHECK(store_backup(st, &fd, &size) == 0 && fd >= 0 && teststore_save(fd, path) == 0,
	      "backed up");
	if (fd >= 0)
		close(fd);
	store_close(st);
	snprintf(uri, sizeof(uri), "sqlite:%s", path);
	CHECK(store_backup_check(uri, &version) == 0 && version > 0, "the copy checks (schema %lld)",
	      (long long)version);
	CHECK(store_open(uri, &copy) == 0, "the copy opens as a store");
	if (!copy)
		return;
	CHECK(store_boot_get(copy, "b", &bs, &ver) == 0 && ver == 2 && bs.next_entry == 2,
	      "the boot state and its version (%llu)", (unsigned long long)ver);
	CHECK(store_violations_list(copy, -1, "b", 10, raw_cb, &rv) == 0 && rv.n == 1 &&
		      rv.path_len == sizeof(raw) - 1 && !memcmp(rv.path, raw, rv.path_len),
	      "the violation's raw path bytes");
	CHECK(store_boot_log_get(copy, "b", &got) == 0 && got.log_len == sizeof(log) &&
		      !memcmp(got.log, log, sizeof(log)) && !strcmp(got.cmdline, bl.cmdline) &&
		      !strcmp(got.summary, bl.summary) && got.received_at == 77,
	      "the firmware event log, its command line and summary");
	store_boot_log_release(&got);
	store_close(copy);
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
	printf("# backend: %s\n", teststore_backend());
	CASE(test_backup_under_load);
	CASE(test_check_refuses);
	CASE(test_copy_of_every_table);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return check_finish();
}
