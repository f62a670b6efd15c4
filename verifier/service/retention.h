/*
 * retention: keeps the store's history bounded (store.h, "Retention"). A thread of its own
 * walks the fleet a page of agent ids at a time and deletes, for each agent, the verdicts that
 * changed nothing beyond its newest verdicts_keep (and their evidence with them), then the
 * copies of event logs that no evidence names any more, then the hourly counters older than
 * counters_days; every deletion is a transaction of at most RETENTION_BATCH rows, with a pause
 * between two, so that rounds (whose group commit takes the same database) never wait long.
 * Verifiers sharing a PostgreSQL store may all prune: a row deleted twice is deleted once.
 */
#ifndef VERIFIER_RETENTION_H
#define VERIFIER_RETENTION_H

#include <stdbool.h>
#include <stdint.h>

struct store;
struct retention;

#define RETENTION_BATCH 256u        /* rows per transaction */
#define RETENTION_PAUSE_US 5000u    /* between two transactions */
#define RETENTION_AGENT_PAGE 256u   /* agent ids read at once */
#define RETENTION_INTERVAL_DEFAULT 60
/* An event log copy a round used this recently is kept, named or not (store.h, "Evidence"). */
#define RETENTION_EVIDENCE_LOG_GRACE 86400

struct retention_config {
	unsigned verdicts_keep; /* per agent besides the changes; 0: keep every verdict */
	unsigned counters_days; /* 0: keep every hour */
	unsigned interval;      /* seconds between passes */
};

struct retention_stats {
	uint64_t agents;
	uint64_t verdicts;  /* deleted */
	uint64_t counters;  /* deleted */
	uint64_t evidence_logs; /* event log copies deleted */
};

/*
 * One pass over the whole store at time `now`, in the caller's thread; it ends early (0) once
 * *stop is true (NULL: never). 0 or the store's error (what was pruned before stays pruned).
 */
int retention_pass(struct store *st, const struct retention_config *cfg, int64_t now,
		   const bool *stop, struct retention_stats *out);

/*
 * Starts the thread: a pass at once, then one every cfg->interval seconds. Nothing to prune
 * (both 0): no thread, *out NULL, 0. -errno if the thread cannot start.
 */
int retention_start(struct store *st, const struct retention_config *cfg,
		    struct retention **out);
/* Stops the thread (a transaction in flight ends first); NULL-safe. */
void retention_stop(struct retention *r);

#endif
