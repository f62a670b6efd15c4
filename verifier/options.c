/* The verifier's option table; see options.h. */
#include "verifier/options.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buildinfo.h" /* ATTEST_SYSCONFDIR */
#include "common/log.h"
#include "proto/limits.h"
#include "verifier/service/app.h" /* enum evidence_keep */
#include "verifier/service/audit_sign.h" /* AUDIT_SIGN_INTERVAL_DEFAULT */
#include "verifier/service/retention.h" /* RETENTION_INTERVAL_DEFAULT */
#include "verifier/store/store.h" /* STORE_PENDING_TTL_DEFAULT, retention defaults */

#define OFF(f) offsetof(struct verifier_options, f)
#define STR_(x) #x
#define STR(x) STR_(x)

_Static_assert(LIMIT_CONNECTIONS_PER_CLIENT == 64, "--client-connections' default is spelt 64");

/* In the order of METRICS_AGENTS_TOKEN, METRICS_AGENTS_PUBLIC (options.h). */
static const char *const metrics_agents_choices[] = { "token", "public", NULL };

/* In the order of enum evidence_keep (service/app.h). */
static const char *const evidence_keep_choices[] = { "untrusted", "all", "none", NULL };

/* In the order of enum admission (service/app.h). */
static const char *const admission_choices[] = { "open", "registered", NULL };

static const struct opt_def defs[] = {
	{ "listen", OPT_STRING, OFF(listen), "ADDR:PORT", "127.0.0.1:8443", 0, 0, NULL },
	{ "state-dir", OPT_STRING, OFF(state_dir), "DIR", NULL, 0, 0, NULL },
	{ "store", OPT_STRING, OFF(store), "URI", NULL, 0, 0, NULL },
	{ "cluster-key", OPT_STRING, OFF(cluster_key), "FILE", NULL, 0, 0, NULL },
	{ "tls-cert", OPT_STRING, OFF(tls_cert), "FILE", NULL, 0, 0, NULL },
	{ "tls-key", OPT_STRING, OFF(tls_key), "FILE", NULL, 0, 0, NULL },
	{ "tls-san", OPT_LIST, OFF(tls_san), "NAME", NULL, 0, 16, NULL },
	{ "ek-ca", OPT_LIST, OFF(ek_ca), "FILE", NULL, 0, 16, NULL },
	{ "policy", OPT_STRING, OFF(policy), "FILE", NULL, 0, 0, NULL },
	{ "policy-replace", OPT_BOOL, OFF(policy_replace), NULL, NULL, 0, 0, NULL },
	/* Signed policies (service/policy_sign.h): reloaded on SIGHUP. */
	{ "policy-signers", OPT_STRING, OFF(policy_signers), "FILE", NULL, 0, 0, NULL },
	{ "operator-token-file", OPT_STRING, OFF(token_file), "FILE", NULL, 0, 0, NULL },
	/* A handler waits for its round's group commit and holds its pool thread (and that
	 * thread's other connections) meanwhile: the batch is as large as the threads waiting.
	 * An idle pool thread costs about 20 KiB of RSS. */
	{ "threads", OPT_UINT, OFF(threads), "N", "32", 1, 256, NULL },
	{ "nonce-ttl", OPT_UINT, OFF(nonce_ttl), "SECONDS", "60", 1, 86400, NULL },
	/* Who may enroll: any id (first come, first bound) or registered ids alone. */
	{ "admission", OPT_CHOICE, OFF(admission), "open|registered", "open", 0, 0,
	  admission_choices },
	{ "pending-ttl", OPT_UINT, OFF(pending_ttl), "SECONDS", STR(STORE_PENDING_TTL_DEFAULT), 1,
	  7 * 86400, NULL },
	/* How long a rotated-out EAR signing key stays in GET /v1/jwks (ear_keys.h). */
	{ "ear-key-keep", OPT_UINT, OFF(ear_key_keep), "SECONDS", "86400", 1, 365 * 86400, NULL },
	/* Agents behind one NAT address share these. */
	{ "client-connections", OPT_UINT, OFF(client_connections), "N", "64", 1, LIMIT_CONNECTIONS,
	  NULL },
	/* Liveness: an agent that reported no interval is expected this often. */
	{ "default-interval", OPT_UINT, OFF(default_interval), "SECONDS", "10", 1,
	  LIMIT_AGENT_INTERVAL, NULL },
	{ "stale-intervals", OPT_UINT, OFF(stale_intervals), "N", "3", 1, 1000, NULL },
	/* Retention (store.h, service/retention.h): 0 keeps everything. */
	{ "verdicts-keep", OPT_UINT, OFF(verdicts_keep), "N", STR(STORE_VERDICTS_KEEP_DEFAULT), 0,
	  10000000, NULL },
	{ "counters-days", OPT_UINT, OFF(counters_days), "DAYS", STR(STORE_COUNTERS_DAYS_DEFAULT),
	  0, 36500, NULL },
	{ "prune-interval", OPT_UINT, OFF(prune_interval), "SECONDS",
	  STR(RETENTION_INTERVAL_DEFAULT), 1, 86400, NULL },
	/* Which verdicts keep the evidence they were reached from (store.h, "Evidence"). */
	{ "evidence-keep", OPT_CHOICE, OFF(evidence_keep), "untrusted|all|none", "untrusted", 0,
	  0, evidence_keep_choices },
	/* The audit trail's signed head (service/audit_sign.h). */
	{ "audit-key", OPT_STRING, OFF(audit_key), "FILE", NULL, 0, 0, NULL },
	{ "audit-sign-interval", OPT_UINT, OFF(audit_sign_interval), "SECONDS",
	  STR(AUDIT_SIGN_INTERVAL_DEFAULT), 1, 86400, NULL },
	/* Per-agent series of /metrics name the fleet: behind a token unless opened on purpose. */
	{ "metrics-agents", OPT_CHOICE, OFF(metrics_agents), "token|public", "token", 0, 0,
	  metrics_agents_choices },
	/* Webhooks (webhooks.h). */
	{ "webhook", OPT_LIST, OFF(webhook), "URL", NULL, 0, 16, NULL },
	{ "webhook-secret-file", OPT_STRING, OFF(webhook_secret_file), "FILE", NULL, 0, 0, NULL },
	{ "webhook-ca", OPT_STRING, OFF(webhook_ca), "FILE", NULL, 0, 0, NULL },
	{ "webhook-max-backoff", OPT_UINT, OFF(webhook_max_backoff), "SECONDS", "300", 1, 86400,
	  NULL },
	{ "verbose", OPT_BOOL, OFF(verbose), NULL, NULL, 0, 0, NULL },
};

const struct opts_spec verifier_opts_spec = {
	.prog = "verifier",
	.defs = defs,
	.ndefs = sizeof(defs) / sizeof(defs[0]),
	.default_config = ATTEST_SYSCONFDIR "/attest/verifier.conf",
	.man_page = "verifier(8)",
	.notes = "state dir: --state-dir, else $STATE_DIRECTORY (systemd), else "
		 VERIFIER_DEFAULT_STATE_DIR "\n",
};

int verifier_options_parse(struct verifier_options *o, int argc, char *const argv[],
			   enum opts_action *action)
{
	const char *env;
	size_t len;
	int ret;

	memset(o, 0, sizeof(*o));
	ret = opts_parse(&verifier_opts_spec, o, argc, argv, action);
	if (ret < 0 || *action != OPTS_RUN || o->state_dir)
		return ret;
	/* systemd's StateDirectory= names the directory it made for us (the first of a list). */
	env = getenv("STATE_DIRECTORY");
	if (env && env[0] && env[0] != ':') {
		char *named, *real;

		len = strcspn(env, ":");
		named = strndup(env, len);
		if (!named)
			return -ENOMEM;
		/*
		 * With DynamicUser= that path is a link systemd made (/var/lib/NAME ->
		 * private/NAME). The state directory refuses links (statedir.c: one planted there
		 * would get our keys), so the one the service manager names is resolved here; a
		 * link given with --state-dir is still refused.
		 */
		real = realpath(named, NULL);
		if (real) {
			free(named);
			named = real;
		}
		o->state_dir = named;
	} else {
		o->state_dir = strdup(VERIFIER_DEFAULT_STATE_DIR);
	}
	return o->state_dir ? 0 : -ENOMEM;
}

void verifier_options_release(struct verifier_options *o)
{
	opts_release(&verifier_opts_spec, o);
}

int verifier_configure(struct verifier_options *o, int argc, char *const argv[])
{
	enum opts_action action;

	if (verifier_options_parse(o, argc, argv, &action)) {
		verifier_options_release(o);
		return 2;
	}
	if (action != OPTS_RUN) {
		if (action == OPTS_HELP)
			opts_usage(&verifier_opts_spec, stdout);
		else
			opts_version("verifier", stdout);
		verifier_options_release(o);
		return 0;
	}
	if (o->verbose)
		log_set_level(LOG_LVL_DEBUG);
	return -1;
}

void verifier_options_apply(const struct verifier_options *o, struct app *app)
{
	app->nonce_ttl = (int64_t)o->nonce_ttl;
	app->pending_ttl = (int64_t)o->pending_ttl;
	app->liveness.default_interval = o->default_interval;
	app->liveness.intervals = o->stale_intervals;
	app->metrics_agents_public = o->metrics_agents == METRICS_AGENTS_PUBLIC;
	app->evidence_keep = (enum evidence_keep)o->evidence_keep;
	app->admission = (enum admission)o->admission;
}
