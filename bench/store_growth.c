/*
 * store_growth: bytes the store keeps per agent and day, with and without retention, and its
 * size day by day over a simulated run (verifier(8), RETENTION).
 *
 *   store_growth [--agents N] [--days D] [--interval S] [--keep K] [--dir DIR]
 *
 * For each of two stores (SQLite files in DIR, default /dev/shm: the fsync of each commit is not
 * what is measured): N active agents commit a round every S simulated seconds for D simulated
 * days through store_round_commit() (trusted, except one untrusted round per agent and day, so
 * that trust changes twice a day), with the times of the simulation. The first store keeps every
 * verdict (--verdicts-keep 0); the second prunes with retention_pass() once a simulated hour,
 * keeping K verdicts per agent (default STORE_VERDICTS_KEEP_DEFAULT) and the default counters'
 * age. The store's size is its used pages (page_count - freelist_count) times page_size, read
 * at the end of each simulated day.
 *
 * Output lines `key value`: agents days interval keep rounds_per_agent_day,
 * off_day_N_bytes / on_day_N_bytes (per agent, after day N), off_bytes_per_agent_day (growth
 * per agent and day over the run), on_bytes_per_agent_day (growth over the last day: flat when
 * pruning holds it), seconds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "tests/lib/storeagent.h"
#include "verifier/service/retention.h"
#include "verifier/store/store.h"

#define GROWTH_MAX_AGENTS 10000u
#define GROWTH_MAX_DAYS 365u
#define GROWTH_T0 1800000000 /* a simulated start (an hour's first second) */

static int used_bytes(const char *path, long long *out)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	long long v[3] = { 0 };
	const char *q[3] = { "PRAGMA page_count", "PRAGMA freelist_count", "PRAGMA page_size" };
	int ret = 0;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		ret = -EIO;
	for (int i = 0; !ret && i < 3; i++) {
		if (sqlite3_prepare_v2(db, q[i], -1, &s, NULL) != SQLITE_OK ||
		    sqlite3_step(s) != SQLITE_ROW)
			ret = -EIO;
		else
			v[i] = sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
		s = NULL;
	}
	sqlite3_close(db);
	*out = (v[0] - v[1]) * v[2];
	return ret;
}

static unsigned arg_uint(const char *s, unsigned max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end || v == 0 || v > max) {
		fprintf(stderr, "store_growth: \"%s\" is not a number from 1 to %u\n", s, max);
		exit(2);
	}
	return (unsigned)v;
}

/* One run; day_bytes[d] the store's bytes after day d + 1. */
static int run(const char *dir, const char *name, unsigned agents, unsigned days,
	       unsigned interval, unsigned keep, long long *day_bytes)
{
	struct retention_config rc = { .verdicts_keep = keep,
				       .counters_days = keep ? STORE_COUNTERS_DAYS_DEFAULT : 0 };
	struct retention_stats rs;
	struct boot_state *bs = calloc(agents, sizeof(*bs));
	uint64_t *ver = calloc(agents, sizeof(*ver));
	char path[512], uri[600], id[32];
	struct store *st = NULL;
	unsigned per_day = 86400u / interval;
	int ret = -ENOMEM;

	snprintf(path, sizeof(path), "%s/%s.db", dir, name);
	unlink(path);
	snprintf(uri, sizeof(uri), "sqlite:%s", path);
	if (!bs || !ver || (ret = store_open(uri, &st)))
		goto out;
	for (unsigned a = 0; a < agents; a++) {
		snprintf(id, sizeof(id), "grow-%05u", a);
		if ((ret = storeagent_active(st, id, GROWTH_T0 - 60)))
			goto out;
		bs[a].started = true;
		bs[a].boot_number = 1;
	}
	for (unsigned d = 0; d < days; d++) {
		for (unsigned r = 0; r < per_day; r++) {
			int64_t now = GROWTH_T0 + (int64_t)d * 86400 + (int64_t)r * interval;

			for (unsigned a = 0; a < agents; a++) {
				snprintf(id, sizeof(id), "grow-%05u", a);
				bool trusted = r != per_day / 2; /* one untrusted round a day */
				struct store_round round = {
					.agent = id, .prev_version = ver[a], .next = &bs[a],
					.trusted = trusted, .now = now, .next_offset = r,
					.reasons_json = trusted ? "[]"
							       : "[{\"code\":\"not_in_allowlist\"}]",
				};
				int64_t vid;

				bs[a].next_entry = r;
				if ((ret = store_round_commit(st, &round, &vid)))
					goto out;
				ver[a]++;
			}
			if (keep && (now - GROWTH_T0) % 3600 < interval &&
			    (ret = retention_pass(st, &rc, now, NULL, &rs)))
				goto out;
		}
		if ((ret = used_bytes(path, &day_bytes[d])))
			goto out;
	}
out:
	if (ret)
		fprintf(stderr, "store_growth: %s: error %d\n", name, ret);
	store_close(st);
	unlink(path);
	free(bs);
	free(ver);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned agents = 10, days = 3, interval = 10, keep = STORE_VERDICTS_KEEP_DEFAULT;
	const char *dir = "/dev/shm";
	long long off[GROWTH_MAX_DAYS], on[GROWTH_MAX_DAYS];
	struct timespec t0, t1;

	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc) {
			fprintf(stderr, "usage: store_growth [--agents N] [--days D] [--interval S]"
					" [--keep K] [--dir DIR]\n");
			return 2;
		}
		if (!strcmp(argv[i], "--agents"))
			agents = arg_uint(argv[++i], GROWTH_MAX_AGENTS);
		else if (!strcmp(argv[i], "--days"))
			days = arg_uint(argv[++i], GROWTH_MAX_DAYS);
		else if (!strcmp(argv[i], "--interval"))
			interval = arg_uint(argv[++i], 86400);
		else if (!strcmp(argv[i], "--keep"))
			keep = arg_uint(argv[++i], 10000000);
		else if (!strcmp(argv[i], "--dir"))
			dir = argv[++i];
		else {
			fprintf(stderr, "store_growth: unknown option \"%s\"\n", argv[i]);
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (run(dir, "growth-off", agents, days, interval, 0, off) ||
	    run(dir, "growth-on", agents, days, interval, keep, on))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("agents %u\ndays %u\ninterval %u\nkeep %u\nrounds_per_agent_day %u\n", agents, days,
	       interval, keep, 86400u / interval);
	for (unsigned d = 0; d < days; d++)
		printf("off_day_%u_bytes %lld\non_day_%u_bytes %lld\n", d + 1, off[d] / agents, d + 1,
		       on[d] / agents);
	printf("off_bytes_per_agent_day %lld\n", off[days - 1] / agents / days);
	printf("on_bytes_per_agent_day %lld\n",
	       days > 1 ? (on[days - 1] - on[days - 2]) / agents : on[0] / agents);
	printf("seconds %.1f\n", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
