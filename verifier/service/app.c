/*
 * app: the service's state built step by step at start and torn down at stop (app.h). main()
 * calls the steps in order; each logs why it failed, and app_release() frees what the steps
 * made whichever of them ran.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "proto/limits.h"
#include "verifier/facts/agentcache.h"
#include "verifier/service/app.h"
#include "verifier/service/audit_sign.h"
#include "verifier/service/ear.h"
#include "verifier/service/policy_sign.h"
#include "verifier/service/retention.h"
#include "verifier/service/webhooks.h"
#include "verifier/store/cluster.h"
#include "verifier/store/ear_keys.h"

void app_init(struct app *app)
{
	memset(app, 0, sizeof(*app));
	policy_cache_init(&app->policies);
	policy_cache_init(&app->amendments);
	pthread_rwlock_init(&app->reload_lock, NULL);
}

int app_store_open(struct app *app, const char *uri, const struct statedir *sd,
		   const char *state_dir)
{
	struct store_enroll_limits lim = {
		.pending_ttl = app->pending_ttl,
		.max_pending_per_ek = LIMIT_PENDING_PER_EK,
		.max_pending = LIMIT_PENDING_ENROLLMENTS,
	};
	char path[PATH_MAX];

	/* SQLite opens by path: one through the directory checked (statedir.h). */
	memcpy(path, "sqlite:", 7);
	if (!uri && statedir_path(sd, "verifier.db", path + 7, sizeof(path) - 7)) {
		log_error("state: \"%s\": path too long", state_dir);
		return -1;
	}
	if (store_open(uri ? uri : path, &app->store)) {
		if (uri)
			log_error("cannot open the store \"%s\"", uri);
		else
			log_error("cannot open the store \"%s/verifier.db\"", state_dir);
		return -1;
	}
	store_set_enroll_limits(app->store, &lim);
	return 0;
}

int app_results_open(struct app *app, const struct statedir *sd, int64_t ear_key_keep)
{
	return ear_keys_open(sd, ear_key_keep, &app->ear_keys) ||
	       ear_results_new(&app->ear_results) ? -1 : 0;
}

int app_cluster_open(struct app *app, const char *key_file, const char *store_uri)
{
	if (!key_file)
		return 0;
	if (cluster_load(key_file, &app->cluster))
		return -1;
	if (!store_uri || !strncmp(store_uri, "sqlite:", 7))
		log_warn("--cluster-key with a SQLite store: only one verifier can use it; the key"
			 " is for verifiers sharing a PostgreSQL store");
	return 0;
}

int app_threads_start(struct app *app, const struct statedir *sd,
		      const struct app_threads_config *c)
{
	int ret;

	/* Before the store is shared: events are written for these URLs from now on. */
	if (webhooks_start(app, &c->webhooks, &app->webhooks))
		return -1;
	if ((ret = retention_start(app->store, &c->retention, &app->retention))) {
		log_error("retention: cannot start its thread: error %d", ret);
		return -1;
	}
	return audit_signer_start(app->store, sd, c->audit_key, c->audit_sign_interval,
				  &app->audit) ? -1 : 0;
}

void app_threads_stop(struct app *app)
{
	retention_stop(app->retention);
	app->retention = NULL;
	audit_signer_stop(app->audit);
	app->audit = NULL;
	webhooks_stop(app->webhooks);
	app->webhooks = NULL;
}

int app_tables_new(struct app *app)
{
	app->nonces = nonces_new();
	app->agents = agentcache_new();
	if (!app->nonces || !app->agents) {
		log_error("cannot create the challenge table or agent cache: out of memory or no randomness");
		return -1;
	}
	return 0;
}

int app_trust_load(struct app *app, const char *const *ek_ca, size_t n)
{
	if (n == 0)
		log_warn("no --ek-ca given: every enrollment will be refused (ek_untrusted)");
	app->trust = enroll_trust_new(ek_ca, n);
	return app->trust ? 0 : -1;
}

int app_signers_load(struct app *app, const char *path)
{
	return path && policy_signers_load(path, &app->signers) ? -1 : 0;
}

void app_trust_reload(struct app *app, const char *const *ek_ca, size_t n)
{
	struct enroll_trust *tr = enroll_trust_new(ek_ca, n), *old;

	if (!tr) {
		log_error("reload: keeping the EK CAs loaded before");
		return;
	}
	pthread_rwlock_wrlock(&app->reload_lock);
	old = app->trust;
	app->trust = tr;
	pthread_rwlock_unlock(&app->reload_lock);
	enroll_trust_free(old);
	log_info("reload: %zu EK CA files", n);
}

void app_signers_reload(struct app *app, const char *path)
{
	struct policy_signers *s = NULL, *old;

	if (!path)
		return;
	if (policy_signers_load(path, &s)) {
		log_error("reload: keeping the policy signers loaded before");
		return;
	}
	pthread_rwlock_wrlock(&app->reload_lock);
	old = app->signers;
	app->signers = s;
	pthread_rwlock_unlock(&app->reload_lock);
	policy_signers_free(old);
	log_info("reload: %zu policy signers", s->n);
}

void app_release(struct app *app)
{
	policy_cache_release(&app->policies);
	policy_cache_release(&app->amendments);
	enroll_trust_free(app->trust);
	policy_signers_free(app->signers);
	store_close(app->store);
	nonces_free(app->nonces);
	agentcache_free(app->agents);
	cluster_free(app->cluster);
	ear_results_free(app->ear_results);
	ear_keys_free(app->ear_keys);
}
