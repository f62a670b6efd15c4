/*
 * store.h, the part every backend shares: the URI that picks a backend, the group commit of
 * rounds, the names of states and the enrollment rule. Everything that speaks to a database
 * is in the backend (store_sqlite.c), behind struct store_ops (store_backend.h).
 */
#include "verifier/store.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "verifier/store_backend.h"

#define STORE_SCHEME_MAX 16u

static const struct store_ops *const backends[] = {
	&store_sqlite_ops,
};

struct store {
	struct store_backend *be;
	/* Commit queue (store_round_commit): qlock guards the queue and `committing`. */
	pthread_mutex_t qlock;
	pthread_cond_t qcond;
	struct store_pending_round *qhead, **qtail;
	bool committing;
};

const char *agent_state_str(enum agent_state s)
{
	return s == AGENT_ACTIVE ? "active" : "pending";
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
					     const struct store_agent *a)
{
	bool same_ek, same_ak;

	if (!cur)
		return STORE_ENROLL_NEW;
	same_ek = same_blob(cur->ek_pub, cur->ek_pub_len, a->ek_pub, a->ek_pub_len);
	same_ak = same_blob(cur->ak_pub, cur->ak_pub_len, a->ak_pub, a->ak_pub_len);
	/* The EK identifies the TPM: no other TPM may take over an id, pending or not. */
	if (!same_ek || (cur->state == AGENT_ACTIVE && !same_ak))
		return STORE_ENROLL_CONFLICT;
	if (cur->state == AGENT_ACTIVE)
		return STORE_ENROLL_ALREADY;
	return STORE_ENROLL_REFRESHED;
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
	log_error("store: unknown store scheme \"%.*s\" in \"%s\": this verifier has sqlite",
		  (int)n, uri, uri);
	return NULL;
}

int store_open(const char *uri, struct store **out)
{
	const struct store_ops *ops;
	const char *location = NULL;
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
	st->qtail = &st->qhead;
	ret = ops->open(location, &st->be);
	if (ret) {
		store_close(st);
		return ret;
	}
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
	free(st);
}

/*
 * Group commit. Every caller queues its round; whoever finds no commit running becomes the
 * leader: it takes everything queued, has the backend write it in one transaction (one fsync
 * for all), marks each round done with its own result and wakes the others. Those whose round
 * was not in that batch elect the next leader among themselves. No caller returns before the
 * transaction holding its round has committed or failed.
 */
int store_round_commit(struct store *st, const struct store_round *r, int64_t *verdict_id)
{
	struct store_pending_round me = { .r = r };

	pthread_mutex_lock(&st->qlock);
	*st->qtail = &me;
	st->qtail = &me.next;
	while (!me.done) {
		struct store_pending_round *batch, *w, *next;

		if (st->committing) {
			pthread_cond_wait(&st->qcond, &st->qlock);
			continue;
		}
		st->committing = true;
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
		pthread_cond_broadcast(&st->qcond);
	}
	pthread_mutex_unlock(&st->qlock);
	if (!me.ret)
		*verdict_id = me.verdict_id;
	return me.ret;
}

/* Everything else goes straight to the backend. ---------------------------------------- */

int store_agent_enroll(struct store *st, const struct store_agent *a, int64_t now,
		       enum store_enroll_result *result)
{
	return st->be->ops->agent_enroll(st->be, a, now, result);
}

int store_agent_get(struct store *st, const char *id, struct store_agent *out)
{
	return st->be->ops->agent_get(st->be, id, out);
}

int store_agent_activate(struct store *st, const char *id,
			 const uint8_t digest[STORE_CRED_DIGEST_LEN], int64_t now)
{
	return st->be->ops->agent_activate(st->be, id, digest, now);
}

int store_agent_set_policy(struct store *st, const char *id, const char *policy)
{
	return st->be->ops->agent_set_policy(st->be, id, policy);
}

int store_agents_list(struct store *st, store_agent_cb cb, void *arg)
{
	return st->be->ops->agents_list(st->be, cb, arg);
}

int store_boot_get(struct store *st, const char *agent, struct boot_state *out)
{
	return st->be->ops->boot_get(st->be, agent, out);
}

int store_verdicts_list(struct store *st, const char *agent, unsigned limit,
			store_verdict_cb cb, void *arg)
{
	return st->be->ops->verdicts_list(st->be, agent, limit, cb, arg);
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
				uint64_t *count)
{
	return st->be->ops->violations_open_count(st->be, agent, boot_number, count);
}

int store_violation_set_state(struct store *st, int64_t id, enum violation_state state)
{
	return st->be->ops->violation_set_state(st->be, id, state);
}

int store_policy_put(struct store *st, const char *name, const char *json, const char *actor,
		     int64_t now, int64_t *version)
{
	return st->be->ops->policy_put(st->be, name, json, actor, now, version);
}

int store_policy_version(struct store *st, const char *name, int64_t *version)
{
	return st->be->ops->policy_version(st->be, name, version);
}

int store_policy_get(struct store *st, const char *name, char **json, int64_t *version)
{
	return st->be->ops->policy_get(st->be, name, json, version);
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
	const char *location = NULL;
	const struct store_ops *ops = backend_of(uri, &location);

	*version = 0;
	return ops ? ops->backup_check(location, version) : -EINVAL;
}
