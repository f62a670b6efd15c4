/* attestd/watch.c: the count file beside the kernel's list, a list file's size and time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attestd/watch.h"
#include "tests/unit/check.h"

static char dir[] = "/tmp/test_watch.XXXXXX";

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_count_path(void)
{
	char *p = list_watch_count_path("/sys/kernel/security/ima/binary_runtime_measurements");

	CHECK(p && !strcmp(p, "/sys/kernel/security/ima/runtime_measurements_count"),
	      "the kernel's list has its count beside it: %s", p ? p : "(null)");
	free(p);
	p = list_watch_count_path("/sys/kernel/security/ima/binary_runtime_measurements_sha256");
	CHECK(p && !strcmp(p, "/sys/kernel/security/ima/runtime_measurements_count"),
	      "so does a bank's list");
	free(p);
	p = list_watch_count_path("binary_runtime_measurements");
	CHECK(p && !strcmp(p, "runtime_measurements_count"), "a relative name too");
	free(p);
	CHECK(list_watch_count_path("/tmp/ima") == NULL, "a list file has none");
}

static void test_count_file(void)
{
	char list[256];
	struct list_watch *w;
	struct list_mark m0, m1;

	snprintf(list, sizeof(list), "%s/binary_runtime_measurements", dir);
	put("binary_runtime_measurements", "");
	put("runtime_measurements_count", "42\n");
	w = list_watch_new(list);
	CHECK(w != NULL, "watch made");
	CHECK(list_watch_mark(w, &m0) == 0 && m0.count == 42, "the count is read: %llu",
	      (unsigned long long)m0.count);
	CHECK(list_watch_mark(w, &m1) == 0 && !list_mark_changed(&m0, &m1), "nothing new: same mark");
	put("runtime_measurements_count", "43\n");
	CHECK(list_watch_mark(w, &m1) == 0 && list_mark_changed(&m0, &m1), "one more entry: changed");
	/* A count that is not a number: the list file's size and time stand in for it. */
	put("runtime_measurements_count", "4x\n");
	CHECK(list_watch_mark(w, &m1) == 0 && m1.count == 0, "a bad count is not believed");
	list_watch_free(w);
}

static void test_list_file(void)
{
	char list[256];
	struct list_watch *w;
	struct list_mark m0, m1;
	struct timespec times[2] = { { .tv_sec = 1000 }, { .tv_sec = 1000 } };

	snprintf(list, sizeof(list), "%s/ima", dir);
	put("ima", "abcd");
	utimensat(AT_FDCWD, list, times, 0);
	w = list_watch_new(list);
	CHECK(list_watch_mark(w, &m0) == 0 && m0.size == 4, "a list file: its size");
	CHECK(list_watch_mark(w, &m1) == 0 && !list_mark_changed(&m0, &m1), "unchanged");
	put("ima", "abcdef");
	utimensat(AT_FDCWD, list, times, 0);
	CHECK(list_watch_mark(w, &m1) == 0 && list_mark_changed(&m0, &m1), "grown: changed");
	put("ima", "abcd");
	times[1].tv_sec = 2000;
	utimensat(AT_FDCWD, list, times, 0);
	CHECK(list_watch_mark(w, &m1) == 0 && list_mark_changed(&m0, &m1),
	      "replaced with one of the same size: its time changed");
	unlink(list);
	CHECK(list_watch_mark(w, &m1) < 0, "a missing list is an error, not a mark");
	list_watch_free(w);
	list_watch_free(NULL);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	CASE(test_count_path);
	CASE(test_count_file);
	CASE(test_list_file);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return check_finish();
}
