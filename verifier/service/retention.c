/* The store's history kept bounded; see retention.h. */
#include "verifier/service/retention.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "proto/limits.h"
#include "verifier/store/store.h"

struct retention {
	struct store *st;
	struct retention_config cfg;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop; /* under mu; read without it between batches (a late look costs one batch) */
};

struct id_page {
	char ids[RETENTION_AGENT_PAGE][LIMIT_AGENT_ID + 1];
	unsigned n;
};

static int page_add(void *arg, const char *id)
{
	struct id_page *p = arg;

	if (p->n >= RETENTION_AGENT_PAGE || strlen(id) > LIMIT_AGENT_ID)
		return -EINVAL;
	memcpy(p->ids[p->n++], id, strlen(id) + 1);
	return 0;
}

static bool stopping(const bool *stop)
{
	return stop && __atomic_load_n(stop, __ATOMIC_RELAXED);
}

/* Deletes batch after batch until one comes back short. */
static int prune_agent(struct store *st, const char *agent, unsigned keep, const bool *stop,
		       uint64_t *deleted)
{
	uint64_t n;
	int ret;

	do {
		if ((ret = store_verdicts_prune(st, agent, keep, RETENTION_BATCH, &n)))
			return ret;
		*deleted += n;
		if (n)
			usleep(RETENTION_PAUSE_US);
	} while (n == RETENTION_BATCH && !stopping(stop));
	return 0;
}

static int prune_verdicts(struct store *st, unsigned keep, const bool *stop,
			  struct retention_stats *out)
{
	struct id_page *page = calloc(1, sizeof(*page));
	char after[LIMIT_AGENT_ID + 1] = "";
	int ret = page ? 0 : -ENOMEM;

	while (!ret && !stopping(stop)) {
		page->n = 0;
		if ((ret = store_agent_ids(st, after, RETENTION_AGENT_PAGE, page_add, page)))
			break;
		for (unsigned i = 0; !ret && i < page->n && !stopping(stop); i++, out->agents++)
			ret = prune_agent(st, page->ids[i], keep, stop, &out->verdicts);
		if (page->n < RETENTION_AGENT_PAGE)
			break;
		memcpy(after, page->ids[page->n - 1], sizeof(after));
	}
	free(page);
	return ret;
}

int retention_pass(struct store *st, const struct retention_config *cfg, int64_t now,
		   const bool *stop, struct retention_stats *out)
{
	uint64_t n;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (cfg->verdicts_keep && (ret = prune_verdicts(st, cfg->verdicts_keep, stop, out)))
		return ret;
	/* Event log copies no evidence names any more (pruned or purged with its verdicts). */
	do {
		ret = store_evidence_logs_prune(st, now - RETENTION_EVIDENCE_LOG_GRACE,
						RETENTION_BATCH, &n);
		if (ret)
			return ret;
		out->evidence_logs += n;
		if (n)
			usleep(RETENTION_PAUSE_US);
	} while (n == RETENTION_BATCH && !stopping(stop));
	if (!cfg->counters_days)
		return 0;
	do {
		ret = store_counters_prune(st, now - (int64_t)cfg->counters_days * 86400,
					   RETENTION_BATCH, &n);
		if (ret)
			return ret;
		out->counters += n;
		if (n)
			usleep(RETENTION_PAUSE_US);
	} while (n == RETENTION_BATCH && !stopping(stop));
	return 0;
}

static void *run(void *arg)
{
	struct retention *r = arg;
	struct retention_stats s;
	struct timespec t0, t1, until;
	int ret;

	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ret = retention_pass(r->st, &r->cfg, (int64_t)time(NULL), &r->stop, &s);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (ret)
			log_warn("retention: a pass stopped: error %d; the next one tries again in %u s",
				 ret, r->cfg.interval);
		else if (s.verdicts || s.counters || s.evidence_logs)
			log_info("retention: pruned %llu verdicts of %llu agents, %llu hourly"
				 " counters and %llu event log copies in %ld ms",
				 (unsigned long long)s.verdicts, (unsigned long long)s.agents,
				 (unsigned long long)s.counters, (unsigned long long)s.evidence_logs,
				 (long)((t1.tv_sec - t0.tv_sec) * 1000 +
					(t1.tv_nsec - t0.tv_nsec) / 1000000));
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += r->cfg.interval;
		pthread_mutex_lock(&r->mu);
		while (!r->stop && pthread_cond_timedwait(&r->cv, &r->mu, &until) != ETIMEDOUT)
			;
		if (r->stop) {
			pthread_mutex_unlock(&r->mu);
			return NULL;
		}
		pthread_mutex_unlock(&r->mu);
	}
}

int retention_start(struct store *st, const struct retention_config *cfg,
		    struct retention **out)
{
	struct retention *r;
	int ret;

	*out = NULL;
	if (!cfg->verdicts_keep && !cfg->counters_days)
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->st = st;
	r->cfg = *cfg;
	if (!r->cfg.interval)
		r->cfg.interval = RETENTION_INTERVAL_DEFAULT;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	if ((ret = -pthread_create(&r->thread, NULL, run, r))) {
		pthread_cond_destroy(&r->cv);
		pthread_mutex_destroy(&r->mu);
		free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void retention_stop(struct retention *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->mu);
	__atomic_store_n(&r->stop, true, __ATOMIC_RELAXED);
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->thread, NULL);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(r);
}
