/*
 * bench.h: small helpers shared by the benchmark programs (every bench C file is its own program,
 * so these are static inline). Clocks, CPU time, percentiles, file mapping.
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* User + system CPU seconds of this process (who = RUSAGE_SELF) or thread (RUSAGE_THREAD). */
static inline double bench_cpu(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Peak resident set of this process in KiB. */
static inline long bench_maxrss_kib(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

/* Current VmRSS of a process (pid 0: self) in KiB, -1 on error. */
static inline long bench_rss_kib(int pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6)) {
			kib = strtol(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return kib;
}

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts v and returns the p-quantile (0..1) by nearest rank; 0 for n == 0. */
static inline double bench_percentile(double *v, size_t n, double p, int sorted)
{
	size_t k;

	if (n == 0)
		return 0;
	if (!sorted)
		qsort(v, n, sizeof(*v), bench_cmp_double);
	k = (size_t)(p * (double)n + 0.999999);
	if (k == 0)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

/* Maps a whole regular file read-only. 0 or -errno; unmap with munmap(*buf, *len). */
static inline int bench_map_file(const char *path, const uint8_t **buf, size_t *len)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_size == 0) {
		ret = -EINVAL;
		goto cleanup;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto cleanup;
	}
	*buf = p;
	*len = (size_t)st.st_size;
cleanup:
	close(fd);
	return ret;
}

/* Bounded unsigned parse; 0 or -EINVAL. */
static inline int bench_parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max || s[0] == '-')
		return -EINVAL;
	*out = v;
	return 0;
}

#endif
