/*
 * store.h, the part every backend shares: the URI that picks a backend, the group commit of
 * rounds, the names of states and the enrollment rule. Everything that speaks to a database
 * is in the backend (store_sqlite.c, store_pg.c), behind struct store_ops (store_backend.h).
 */
#include "verifier/store/store.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/rand.h>

#include "common/log.h"
#include "proto/encoding.h"
#include "proto/text.h"
#include "verifier/api/api_codec.h"
#include "verifier/store/store_backend.h"
#include "verifier/store/store_sql.h"
#include "verifier/store/store_sqlite.h" /* store_sqlite_backup_check() */

#define STORE_SCHEME_MAX 16u

void store_schema_opened(const char *where, bool created, long from, long to)
{
	if (created)
		log_info("store: %s created at schema version %ld", where, to);
	else if (from < to)
		log_info("store: %s upgraded from schema version %ld to %ld", where, from, to);
}

static const struct store_ops *const backends[] = {
	&store_sqlite_ops,
	&store_pg_ops,
};

struct store {
	struct store_backend *be;
	struct store_webhook_targets targets;
	/*
	 * Commit queue (store_round_commit): qlock guards the queue, `committing` and the
	 * announcements. announced: rounds being judged (store_round_announce()); settled: how
	 * many announcements ever ended; a leader gathering waits on gcond until settled reaches
	 * gather_until (gathering: it is waiting).
	 */
	pthread_mutex_t qlock;
	pthread_cond_t qcond;
	pthread_cond_t gcond; /* CLOCK_MONOTONIC */
	struct store_pending_round *qhead, **qtail;
	bool committing;
	bool gathering;
	uint64_t announced, settled, gather_until;
	unsigned gather_max_us;
	struct store_enroll_limits enroll; /* set before the store is shared */
};

const char *agent_state_str(enum agent_state s)
{
	return s == AGENT_ACTIVE ? "active" : s == AGENT_RETIRED ? "retired" : "pending";
}

void store_judged_versions_parse(const char *text, struct judged_versions *out)
{
	/* Policy names are [A-Za-z0-9._-]: the first space ends one. */
	const char *sp = text ? strchr(text, ' ') : NULL;
	char *end = NULL;
	long long pv, av;
	size_t name_len;

	memset(out, 0, sizeof(*out));
	if (!sp || sp == text || (size_t)(sp - text) > LIMIT_POLICY_NAME)
		return;
	name_len = (size_t)(sp - text);
	pv = strtoll(sp + 1, &end, 10);
	if (end == sp + 1 || *end != ' ')
		return;
	sp = end;
	av = strtoll(sp + 1, &end, 10);
	if (end == sp + 1 || *end != '\0')
		return;
	memcpy(out->policy, text, name_len);
	out->policy_version = pv;
	out->amendment_version = av;
	out->known = true;
}

enum agent_state agent_state_of(const char *s)
{
	return !strcmp(s, "active") ? AGENT_ACTIVE : !strcmp(s, "retired") ? AGENT_RETIRED
									    : AGENT_PENDING;
}

const char *violation_state_str(enum violation_state s)
{
	switch (s) {
	case VIOLATION_OPEN: return "open";
	case VIOLATION_APPROVED: return "approved";
	case VIOLATION_DISMISSED: return "dismissed";
	}
	return "open";
}

int violation_state_from_str(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "open"))
		return VIOLATION_OPEN;
	if (!strcmp(s, "approved"))
		return VIOLATION_APPROVED;
	if (!strcmp(s, "dismissed"))
		return VIOLATION_DISMISSED;
	return -1;
}

void store_agent_release(struct store_agent *a)
{
	if (!a)
		return;
	free(a->ek_pub);
	free(a->ek_cert);
	free(a->ak_pub);
	a->ek_pub = a->ek_cert = a->ak_pub = NULL;
	a->ek_pub_len = a->ek_cert_len = a->ak_pub_len = 0;
}

static bool same_blob(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

enum store_enroll_result store_enroll_decide(const struct store_agent *cur,
					     const struct store_agent *a,
					     const struct store_enroll_facts *f,
					     const struct store_enroll_limits *lim)
{
	bool same_ek, same_ak, replace = false;

	if (cur) {
		same_ek = same_blob(cur->ek_pub, cur->ek_pub_len, a->ek_pub, a->ek_pub_len);
		same_ak = same_blob(cur->ak_pub, cur->ak_pub_len, a->ak_pub, a->ak_pub_len);
		if (cur->reset_at) {
			/* An operator allowed new keys: the same ones change nothing. */
			if (cur->state == AGENT_ACTIVE && same_ek && same_ak)
				return STORE_ENROLL_ALREADY;
			replace = cur->state != AGENT_PENDING || !same_ek;
		} else {
			if (cur->state == AGENT_RETIRED)
				return STORE_ENROLL_RETIRED;
			/* The EK identifies the TPM: no other TPM may take over an id, pending or not. */
			if (!same_ek || (cur->state == AGENT_ACTIVE && !same_ak))
				return STORE_ENROLL_CONFLICT;
			if (cur->state == AGENT_ACTIVE)
				return STORE_ENROLL_ALREADY;
		}
	}
	/* One TPM is one agent: a second id for an active EK could never be activated. */
	if (f->ek_active_elsewhere)
		return STORE_ENROLL_EK_IN_USE;
	/* Replacing a pending enrollment adds none; only a new one counts against the caps. */
	if (cur && !replace)
		return STORE_ENROLL_REFRESHED;
	if (cur && cur->state == AGENT_PENDING)
		return STORE_ENROLL_REPLACED;
	if (f->ek_pending_elsewhere >= lim->max_pending_per_ek)
		return STORE_ENROLL_EK_PENDING_FULL;
	if (f->pending >= lim->max_pending)
		return STORE_ENROLL_PENDING_FULL;
	return cur ? STORE_ENROLL_REPLACED : STORE_ENROLL_NEW;
}

/* The backend of "SCHEME:REST", REST in *location; NULL (logged) if none has the scheme. */
static const struct store_ops *backend_of(const char *uri, const char **location)
{
	const char *colon = uri ? strchr(uri, ':') : NULL;
	size_t n = colon ? (size_t)(colon - uri) : 0;

	if (!colon || n == 0 || n > STORE_SCHEME_MAX ||
	    strspn(uri, "abcdefghijklmnopqrstuvwxyz0123456789+.-") < n) {
		log_error("store: \"%s\" is not a store URI: give SCHEME:LOCATION,"
			  " e.g. sqlite:/var/lib/attest-verifier/verifier.db", uri ? uri : "");
		return NULL;
	}
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		if (strlen(backends[i]->scheme) == n && !memcmp(backends[i]->scheme, uri, n)) {
			*location = colon + 1;
			return backends[i];
		}
	}
	log_error("store: unknown store scheme \"%.*s\" in \"%s\": this verifier has sqlite and"
		  " postgresql", (int)n, uri, uri);
	return NULL;
}

int store_open(const char *uri, struct store **out)
{
	const struct store_ops *ops;
	const char *location = NULL;
	pthread_condattr_t ca;
	struct store *st;
	int ret;

	*out = NULL;
	ops = backend_of(uri, &location);
	if (!ops)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	pthread_mutex_init(&st->qlock, NULL);
	pthread_cond_init(&st->qcond, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->gcond, &ca);
	pthread_condattr_destroy(&ca);
	st->qtail = &st->qhead;
	st->gather_max_us = STORE_GATHER_MAX_US;
	st->enroll.pending_ttl = STORE_PENDING_TTL_DEFAULT;
	st->enroll.max_pending_per_ek = LIMIT_PENDING_PER_EK;
	st->enroll.max_pending = LIMIT_PENDING_ENROLLMENTS;
	ret = ops->open(location, &st->be);
	if (ret) {
		store_close(st);
		return ret;
	}
	st->be->targets = &st->targets;
	*out = st;
	return 0;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	if (st->be)
		st->be->ops->close(st->be);
	pthread_mutex_destroy(&st->qlock);
	pthread_cond_destroy(&st->qcond);
	pthread_cond_destroy(&st->gcond);
	for (size_t i = 0; i < st->targets.n; i++)
		free(st->targets.urls[i]);
	free(st->targets.urls);
	free(st);
}

/*
 * One announcement ended (qlock held); true when a gathering leader now has every round it
 * waits for: the caller wakes it once qlock is released.
 */
static bool settle(struct store *st)
{
	st->announced--;
	st->settled++;
	return st->gathering && (st->settled >= st->gather_until || !st->announced);
}

void store_round_announce(struct store *st)
{
	pthread_mutex_lock(&st->qlock);
	st->announced++;
	pthread_mutex_unlock(&st->qlock);
}

void store_set_gather_max(struct store *st, unsigned us)
{
	pthread_mutex_lock(&st->qlock);
	st->gather_max_us = us;
	pthread_mutex_unlock(&st->qlock);
}

void store_round_withdraw(struct store *st)
{
	bool wake;

	pthread_mutex_lock(&st->qlock);
	wake = settle(st);
	pthread_mutex_unlock(&st->qlock);
	if (wake)
		pthread_cond_signal(&st->gcond);
}

/*
 * The leader, before it takes the queue (qlock held): waits for the rounds being judged now to
 * be queued, at most gather_max_us. Only those announced already: rounds announced
 * meanwhile would make a busy verifier wait the whole bound every time.
 */
static void gather(struct store *st)
{
	struct timespec until;

	if (!st->announced)
		return;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += st->gather_max_us / 1000000u;
	until.tv_nsec += (long)(st->gather_max_us % 1000000u) * 1000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	st->gather_until = st->settled + st->announced;
	st->gathering = true;
	while (st->settled < st->gather_until && st->announced)
		if (pthread_cond_timedwait(&st->gcond, &st->qlock, &until) == ETIMEDOUT)
			break;
	st->gathering = false;
}

/*
 * Group commit. Every caller queues its round; whoever finds no commit running becomes the
 * leader: it gathers the rounds being judged (gather()), takes everything queued (its own
 * round too), has the backend write it in one transaction (one fsync for all), marks each
 * round done with its own result and wakes the others. Those whose round was not in that
 * batch elect the next leader among themselves. No caller returns before the transaction
 * holding its round has committed or failed.
 */
int store_round_commit(struct store *st, const struct store_round *r, int64_t *verdict_id)
{
	struct store_pending_round me = { .r = r };
	struct store_pending_round *batch, *w, *next;

	pthread_mutex_lock(&st->qlock);
	*st->qtail = &me;
	st->qtail = &me.next;
	if (r->announced && settle(st)) {
		/* Woken outside the lock, as below. */
		pthread_mutex_unlock(&st->qlock);
		pthread_cond_signal(&st->gcond);
		pthread_mutex_lock(&st->qlock);
	}
	while (!me.done && st->committing)
		pthread_cond_wait(&st->qcond, &st->qlock);
	if (me.done) {
		pthread_mutex_unlock(&st->qlock);
		goto out;
	}
	st->committing = true;
	gather(st);
	batch = st->qhead;
	st->qhead = NULL;
	st->qtail = &st->qhead;
	pthread_mutex_unlock(&st->qlock);
	st->be->ops->commit_rounds(st->be, batch);
	pthread_mutex_lock(&st->qlock);
	/* After done is set a waiter may return and its `me` vanish: read next first. */
	for (w = batch; w; w = next) {
		next = w->next;
		w->done = true;
	}
	st->committing = false;
	pthread_mutex_unlock(&st->qlock);
	/*
	 * Woken once the lock is free: a waiter woken while the leader holds it (on one core it
	 * runs at once) only blocks on the lock and hands the core back, two context switches
	 * per waiter for nothing. The condition variable is the store's: waking it after a
	 * waiter returned is harmless.
	 */
	pthread_cond_broadcast(&st->qcond);
out:
	if (!me.ret)
		*verdict_id = me.verdict_id;
	if (r->raised)
		*r->raised = !me.ret && me.raised;
	return me.ret;
}

/* Everything else goes straight to the backend. ---------------------------------------- */

void store_set_enroll_limits(struct store *st, const struct store_enroll_limits *lim)
{
	st->enroll = *lim;
}

int store_agent_enroll(struct store *st, const struct store_agent *a, int64_t now,
		       enum store_enroll_result *result)
{
	return st->be->ops->agent_enroll(st->be, a, NULL, now, &st->enroll, result);
}

int store_agent_enroll_admitted(struct store *st, const struct store_agent *a,
				const struct store_admission *adm, int64_t now,
				enum store_enroll_result *result)
{
	return st->be->ops->agent_enroll(st->be, a, adm, now, &st->enroll, result);
}

const char *store_ek_kind_str(enum store_ek_kind k)
{
	return k == STORE_EK_CERT ? "cert" : "public";
}

int store_registrations_add(struct store *st, const struct store_registration *regs, size_t n,
			    const char *actor, int64_t now, size_t *failed)
{
	*failed = 0;
	if (n == 0 || !regs)
		return -EINVAL;
	return st->be->ops->registrations_add(st->be, regs, n, actor, now, failed);
}

int store_registration_get(struct store *st, const char *agent, store_registration_cb cb,
			   void *arg)
{
	return st->be->ops->registration_get(st->be, agent, cb, arg);
}

int store_registrations_list(struct store *st, store_registration_cb cb, void *arg)
{
	return st->be->ops->registrations_list(st->be, cb, arg);
}

int store_registration_delete(struct store *st, const char *agent, const char *actor,
			      int64_t now)
{
	return st->be->ops->registration_delete(st->be, agent, actor, now);
}

int store_agent_labels(struct store *st, const char *agent, store_label_cb cb, void *arg)
{
	return st->be->ops->agent_labels(st->be, agent, cb, arg);
}

int store_labels_all(struct store *st, store_fleet_label_cb cb, void *arg)
{
	return st->be->ops->labels_all(st->be, cb, arg);
}

int store_agent_labels_change(struct store *st, const char *id, const struct store_label *set,
			      size_t nset, const char *const *remove, size_t nremove,
			      const char *actor, int64_t now)
{
	if (nset > LIMIT_LABELS || nremove > LIMIT_LABELS)
		return -E2BIG;
	return st->be->ops->agent_labels_change(st->be, id, set, nset, remove, nremove, actor,
						now);
}

int store_policy_assign_label(struct store *st, const char *policy, const struct store_label *l,
			      bool apply, const char *actor, int64_t now, store_id_cb cb,
			      void *arg, uint64_t *matching)
{
	*matching = 0;
	return st->be->ops->policy_assign_label(st->be, policy, l, apply, actor, now, cb, arg,
						matching);
}

int store_agent_get(struct store *st, const char *id, struct store_agent *out)
{
	return st->be->ops->agent_get(st->be, id, out);
}

int store_agent_activate(struct store *st, const char *id,
			 const uint8_t digest[STORE_CRED_DIGEST_LEN], int64_t now)
{
	return st->be->ops->agent_activate(st->be, id, digest, now, &st->enroll);
}

int store_agent_set_policy(struct store *st, const char *id, const char *policy)
{
	return st->be->ops->agent_set_policy(st->be, id, policy);
}

int store_agents_list(struct store *st, store_agent_cb cb, void *arg)
{
	return st->be->ops->agents_list(st->be, cb, arg);
}

int store_agents_liveness(struct store *st, store_agent_cb cb, void *arg)
{
	return st->be->ops->agents_liveness(st->be, cb, arg);
}

int store_boot_get(struct store *st, const char *agent, struct boot_state *out,
		   uint64_t *version)
{
	uint64_t ignored;

	return st->be->ops->boot_get(st->be, agent, out, version ? version : &ignored);
}

int store_boot_log_get(struct store *st, const char *agent, struct store_boot_log *out)
{
	return st->be->ops->boot_log_get(st->be, agent, out);
}

int store_round_context(struct store *st, const char *agent, const char *default_policy,
			struct store_round_ctx *out)
{
	char amendment[STORE_AMENDMENT_NAME_MAX + 1];

	store_amendment_name(agent, amendment);
	return st->be->ops->round_context(st->be, agent, default_policy, amendment, out);
}

void store_boot_log_release(struct store_boot_log *b)
{
	if (!b)
		return;
	free(b->log);
	free(b->cmdline);
	free(b->summary);
	memset(b, 0, sizeof(*b));
}

int store_verdicts_list(struct store *st, const char *agent, unsigned limit,
			store_verdict_cb cb, void *arg)
{
	return st->be->ops->verdicts_list(st->be, agent, limit, cb, arg);
}

int store_verdicts_prune(struct store *st, const char *agent, unsigned keep, unsigned limit,
			 uint64_t *deleted)
{
	return st->be->ops->verdicts_prune(st->be, agent, keep, limit, deleted);
}

int store_counters_prune(struct store *st, int64_t before, unsigned limit, uint64_t *deleted)
{
	return st->be->ops->counters_prune(st->be, before, limit, deleted);
}

int store_evidence_logs_prune(struct store *st, int64_t before, unsigned limit,
			      uint64_t *deleted)
{
	return st->be->ops->evidence_logs_prune(st->be, before, limit, deleted);
}

int store_evidence_get(struct store *st, int64_t verdict_id, struct store_evidence *out)
{
	return st->be->ops->evidence_get(st->be, verdict_id, out);
}

int store_evidence_policy(struct store *st, const char *name, int64_t version, char **json)
{
	return st->be->ops->evidence_policy(st->be, name, version, json);
}

void store_evidence_release(struct store_evidence *e)
{
	if (!e)
		return;
	free(e->record);
	free(e->ak_pub);
	free(e->boot_log);
	memset(e, 0, sizeof(*e));
}

int store_counters_list(struct store *st, const char *agent, int64_t since, unsigned limit,
			store_counters_cb cb, void *arg)
{
	return st->be->ops->counters_list(st->be, agent, since, limit, cb, arg);
}

int store_agent_ids(struct store *st, const char *after, unsigned limit, store_agent_id_cb cb,
		    void *arg)
{
	return st->be->ops->agent_ids(st->be, after, limit, cb, arg);
}

int store_audit_list(struct store *st, int64_t after, unsigned limit, store_audit_cb cb,
		     void *arg)
{
	return st->be->ops->audit_list(st->be, after, limit, cb, arg);
}

int store_audit_last(struct store *st, int64_t *seq, uint8_t hash[AUDIT_HASH_LEN])
{
	return st->be->ops->audit_last(st->be, seq, hash);
}

int store_audit_signed_put(struct store *st, const struct store_audit_signed *s)
{
	return st->be->ops->audit_signed_put(st->be, s);
}

int store_audit_signed_list(struct store *st, unsigned limit, store_audit_signed_cb cb,
			    void *arg)
{
	return st->be->ops->audit_signed_list(st->be, limit, cb, arg);
}

int store_violations_list(struct store *st, int state, const char *agent, unsigned limit,
			  store_violation_cb cb, void *arg)
{
	return st->be->ops->violations_list(st->be, state, agent, limit, cb, arg);
}

int store_violation_get(struct store *st, int64_t id, store_violation_cb cb, void *arg)
{
	return st->be->ops->violation_get(st->be, id, cb, arg);
}

int store_violations_open_count(struct store *st, const char *agent, uint64_t boot_number,
				uint64_t *total, uint64_t *in_boot)
{
	return st->be->ops->violations_open_count(st->be, agent, boot_number, total, in_boot);
}

int store_violation_decide(struct store *st, int64_t id, enum violation_state state, int64_t now,
			   const char *decision)
{
	return st->be->ops->violation_decide(st->be, id, state, now, decision ? decision : "");
}

int store_policy_put(struct store *st, const char *name, const char *json, const char *actor,
		     int64_t now, int64_t *version)
{
	return st->be->ops->policy_put(st->be, name, STORE_POLICY_ANY, json, NULL, actor, now,
				       version);
}

int store_policy_put_signed(struct store *st, const char *name, int64_t expected,
			    const char *json, const struct store_policy_sig *sig, const char *actor,
			    int64_t now, int64_t *version)
{
	if (expected < STORE_POLICY_ANY)
		return -EINVAL;
	return st->be->ops->policy_put(st->be, name, expected, json, sig, actor, now, version);
}

int store_policy_put_if(struct store *st, const char *name, int64_t expected, const char *json,
			const char *actor, int64_t now, int64_t *version)
{
	if (expected < 0)
		return -EINVAL;
	return st->be->ops->policy_put(st->be, name, expected, json, NULL, actor, now, version);
}

int store_policy_version(struct store *st, const char *name, int64_t *version)
{
	return st->be->ops->policy_version(st->be, name, version);
}

int store_policy_get(struct store *st, const char *name, char **json, int64_t *version)
{
	return st->be->ops->policy_get(st->be, name, json, version);
}

int store_policy_get_version(struct store *st, const char *name, int64_t version, char **json)
{
	return st->be->ops->policy_get_version(st->be, name, version, json, NULL, NULL);
}

int store_policy_get_signed_version(struct store *st, const char *name, int64_t version,
				    char **json, char **signer, char **signature)
{
	int ret;

	*signer = *signature = NULL;
	ret = st->be->ops->policy_get_version(st->be, name, version, json, signer, signature);
	if (ret) {
		free(*signer);
		free(*signature);
		*signer = *signature = NULL;
	}
	return ret;
}

int store_policy_versions(struct store *st, const char *name, store_policy_version_cb cb,
			  void *arg)
{
	return st->be->ops->policy_versions(st->be, name, cb, arg);
}

int store_policy_agents(struct store *st, const char *name, uint64_t *count)
{
	return st->be->ops->policy_agents(st->be, name, count);
}

int store_policies_list(struct store *st, const char *default_policy,
			store_policy_summary_cb cb, void *arg)
{
	return st->be->ops->policies_list(st->be, default_policy, cb, arg);
}

int store_policy_delete(struct store *st, const char *name, const char *actor, int64_t now)
{
	/* An amendment ("agent/ID", store_amendment_name()) goes only with its agent. */
	if (strchr(name, '/'))
		return -ENOENT;
	return st->be->ops->policy_delete(st->be, name, actor, now);
}

void store_amendment_name(const char *agent, char out[STORE_AMENDMENT_NAME_MAX + 1])
{
	snprintf(out, STORE_AMENDMENT_NAME_MAX + 1, "agent/%s", agent);
}

int store_counts(struct store *st, struct store_counts *out)
{
	return st->be->ops->counts(st->be, out);
}

int store_backup(struct store *st, int *fd, uint64_t *size)
{
	return st->be->ops->backup(st->be, fd, size);
}

int store_backup_check(const char *uri, int64_t *version)
{
	*version = 0;
	if (!uri || strncmp(uri, "sqlite:", 7) != 0) {
		log_error("store: \"%s\" names no backup: a backup is a SQLite store, sqlite:PATH",
			  uri ? uri : "");
		return -EINVAL;
	}
	return store_sqlite_backup_check(uri + 7, version);
}

int store_copy(const char *from_uri, const char *to_uri)
{
	struct store *from = NULL, *to = NULL;
	int ret;

	if (!(ret = store_open(from_uri, &from)) && !(ret = store_open(to_uri, &to)))
		ret = store_sql_copy(from->be, to->be);
	store_close(to);
	store_close(from);
	return ret;
}

/* Lifecycle, liveness, webhook outbox --------------------------------------------------- */

int store_agent_retire(struct store *st, const char *id, int64_t now, const char *actor,
		       bool purge)
{
	return st->be->ops->agent_retire(st->be, id, now, actor ? actor : "", purge);
}

int store_agent_reset(struct store *st, const char *id, int64_t now, const char *actor)
{
	return st->be->ops->agent_reset(st->be, id, now, actor ? actor : "");
}

int store_agent_history(struct store *st, const char *id, unsigned limit,
			store_agent_event_cb cb, void *arg)
{
	return st->be->ops->agent_history(st->be, id, limit, cb, arg);
}

int64_t store_agent_last_seen(const struct store_agent *a)
{
	return a->last_verdict_at > a->activated_at ? a->last_verdict_at : a->activated_at;
}

int64_t store_agent_stale_after(const struct store_agent *a, const struct store_liveness *lv)
{
	uint32_t interval = a->interval ? a->interval : lv->default_interval;

	if (a->state != AGENT_ACTIVE)
		return 0;
	return store_agent_last_seen(a) + (int64_t)interval * (int64_t)lv->intervals;
}

bool store_agent_stale(const struct store_agent *a, const struct store_liveness *lv, int64_t now)
{
	return a->state == AGENT_ACTIVE && now > store_agent_stale_after(a, lv);
}

int store_agent_mark_stale(struct store *st, const char *id, int64_t last_seen,
			   uint32_t interval, int64_t stale_after, int64_t now)
{
	return st->be->ops->agent_mark_stale(st->be, id, last_seen, interval, stale_after, now);
}

int store_set_webhooks(struct store *st, const char *const *urls, size_t n)
{
	char **copy = n ? calloc(n, sizeof(*copy)) : NULL;

	if (n && !copy)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!(copy[i] = strdup(urls[i]))) {
			while (i-- > 0)
				free(copy[i]);
			free(copy);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < st->targets.n; i++)
		free(st->targets.urls[i]);
	free(st->targets.urls);
	st->targets.urls = copy;
	st->targets.n = n;
	return 0;
}

int store_outbox_claim(struct store *st, const char *target, int64_t now, int64_t lease,
		       unsigned limit, store_outbox_cb cb, void *arg)
{
	return st->be->ops->outbox_claim(st->be, target, now, lease, limit, cb, arg);
}

int store_outbox_settle(struct store *st, const struct store_outbox_settle *v, size_t n)
{
	return st->be->ops->outbox_settle(st->be, v, n);
}

int store_outbox_pending(struct store *st, const char *target, uint64_t *count)
{
	return st->be->ops->outbox_pending(st->be, target, count);
}

const char *store_event_type_str(enum store_event_type t)
{
	switch (t) {
	case STORE_EVENT_UNTRUSTED: return API_EVENT_UNTRUSTED;
	case STORE_EVENT_VIOLATION: return API_EVENT_VIOLATION;
	case STORE_EVENT_STALE: return API_EVENT_STALE;
	case STORE_EVENT_ENROLLED: return API_EVENT_ENROLLED;
	case STORE_EVENT_RETIRED: return API_EVENT_RETIRED;
	case STORE_EVENT_RESET: return API_EVENT_RESET;
	}
	return "unknown";
}

/* The texts of an event's body the store makes from raw bytes (freed by event_texts_free()). */
struct event_texts {
	char *path, *path_hex, *ak_name, *signature, *public_key;
	char hash[2 * AUDIT_HASH_LEN + 1], signed_hash[2 * AUDIT_HASH_LEN + 1];
};

static void event_texts_free(struct event_texts *t)
{
	free(t->path);
	free(t->path_hex);
	free(t->ak_name);
	free(t->signature);
	free(t->public_key);
}

/*
 * The event as the API shows it (api_codec.h, struct api_event): the path as text (proto/text.h)
 * and its raw bytes hex, the AK's name hex, the audit head with its hashes hex and the DER
 * signature and key base64 (what GET /v1/audit/head answers, the key as DER instead of PEM).
 * -ENOMEM when a text could not be made.
 */
static int event_view(const struct store_event *e, const char *id, struct event_texts *t,
		      struct api_audit_head *head, struct api_event *v)
{
	size_t plen;

	memset(t, 0, sizeof(*t));
	*v = (struct api_event){
		.id = id,
		.type = store_event_type_str(e->type),
		.time = e->time,
		.agent_id = e->agent ? e->agent : "",
		.verdict_id = e->verdict_id,
		.boot_number = (int64_t)e->boot_number,
		.violation_id = e->violation_id,
		.reason = e->reason ? e->reason : "",
		.digest = e->digest ? e->digest : "",
		.entry = (int64_t)e->entry,
		.count = (int64_t)e->count,
		.recurs = e->recurs,
		.last_seen = e->last_seen,
		.interval = e->interval,
		.stale_after = e->stale_after,
		.purged = e->purged,
		.actor = e->actor ? e->actor : "",
	};
	if (e->type == STORE_EVENT_UNTRUSTED && e->reasons_json) {
		v->reasons = json_loads(e->reasons_json, 0, NULL);
		if (!json_is_array(v->reasons)) {
			json_decref(v->reasons);
			v->reasons = NULL; /* [] */
		}
	}
	if (e->type == STORE_EVENT_VIOLATION) {
		plen = e->path_len < LIMIT_IMA_PATH ? e->path_len : LIMIT_IMA_PATH;
		t->path = malloc(TEXT_ESCAPED_MAX(LIMIT_IMA_PATH));
		t->path_hex = malloc(2 * plen + 1);
		if (!t->path || !t->path_hex)
			goto nomem;
		v->path_escaped = text_render(e->path ? e->path : "", plen, t->path,
					      TEXT_ESCAPED_MAX(LIMIT_IMA_PATH));
		hex_encode((const uint8_t *)(e->path ? e->path : ""), plen, t->path_hex);
		v->path = t->path;
		v->path_hex = t->path_hex;
	}
	if (e->type == STORE_EVENT_ENROLLED) {
		if (!(t->ak_name = malloc(2 * e->ak_name_len + 1)))
			goto nomem;
		hex_encode(e->ak_name, e->ak_name_len, t->ak_name);
		v->ak_name = t->ak_name;
	}
	if (e->audit) {
		const struct store_event_audit *a = e->audit;

		hex_encode(a->hash, AUDIT_HASH_LEN, t->hash);
		*head = (struct api_audit_head){ .seq = a->seq, .hash = t->hash,
						 .has_signed = a->has_signed };
		if (a->has_signed) {
			hex_encode(a->signed_hash, AUDIT_HASH_LEN, t->signed_hash);
			t->signature = base64_encode_alloc(a->signature, a->signature_len);
			t->public_key = base64_encode_alloc(a->public_key, a->public_key_len);
			if (!t->signature || !t->public_key)
				goto nomem;
			head->signed_ = (struct api_audit_signed){ a->signed_seq, t->signed_hash,
								   a->signed_time, t->signature,
								   t->public_key };
		}
		v->audit_head = head;
	}
	return 0;
nomem:
	json_decref(v->reasons);
	v->reasons = NULL;
	return -ENOMEM;
}

int store_event_rows(const struct store_backend *b, const struct store_event *e,
		     struct store_event_rows *out)
{
	struct event_texts texts;
	struct api_audit_head head;
	struct api_event v;
	uint8_t raw[16];
	json_t *o;

	memset(out, 0, sizeof(*out));
	if (!b->targets || b->targets->n == 0)
		return 0;
	/* Random, not a row id: unique across verifiers sharing a store, and in every row of it. */
	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return -EIO;
	memcpy(out->id, "evt-", 4);
	hex_encode(raw, sizeof(raw), out->id + 4);
	o = event_view(e, out->id, &texts, &head, &v) ? NULL : api_event_encode(&v);
	event_texts_free(&texts);
	if (!o)
		return -ENOMEM;
	out->body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!out->body)
		return -ENOMEM;
	out->targets = (const char *const *)b->targets->urls;
	out->ntargets = b->targets->n;
	return 0;
}

void store_event_rows_release(struct store_event_rows *r)
{
	if (!r)
		return;
	free(r->body);
	memset(r, 0, sizeof(*r));
}
