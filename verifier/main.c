/*
 * verifier: the host attestation service. Options: options.h (documented in verifier(8)).
 *
 * --policy FILE seeds the default policy when the store has none; a stored default that
 * differs is kept (and the log says so) unless --policy-replace is given (policy_seed.h).
 * --store names the database (store.h): sqlite:PATH, by default sqlite:STATE_DIR/verifier.db,
 * or postgresql://... shared by several verifiers, each with the same --cluster-key.
 *
 * Prints `listening on https://ADDR:PORT` on stdout when ready (and READY=1 to systemd).
 * SIGHUP reloads the operator tokens, the EK CAs, the policy signers and the TLS certificate;
 * SIGTERM/SIGINT stop it cleanly.
 *
 * This file owns the process (signals, the open-files limit, the umask, stdout and systemd's
 * notifications) and the order of the steps; each step lives with its concept: the
 * configuration in options.c, the service's state and background threads in service/app.c, the
 * default policy in service/policy_seed.c, the tokens in http/tokens.c, TLS in http/tls.c, the
 * server over the routes in http/routes.c.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "common/log.h"
#include "common/sdnotify.h"
#include "proto/limits.h"
#include "verifier/http/handlers.h"
#include "verifier/http/tls.h"
#include "verifier/http/tokens.h"
#include "verifier/options.h"
#include "verifier/service/app.h"
#include "verifier/service/policy_seed.h"
#include "verifier/store/statedir.h"

/* Room for every connection allowed, with the store's and TLS's files: raise the soft limit. */
static void raise_nofile(void)
{
	const rlim_t want = LIMIT_CONNECTIONS + 64;
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur >= want)
		return;
	r.rlim_cur = r.rlim_max < want ? r.rlim_max : want;
	if (setrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur < want)
		log_warn("open files limited to %llu: fewer than the %u connections allowed can be"
			 " served (raise ulimit -n)", (unsigned long long)r.rlim_cur,
			 LIMIT_CONNECTIONS);
}

/*
 * The process: the stop and reload signals blocked before any thread exists (the server's
 * threads inherit the mask and only main() receives them, in sigwait()), SIGPIPE ignored, the
 * open-files limit raised, and every file the verifier creates (keys, token, the store and its
 * journals) 0600.
 */
static void process_setup(sigset_t *sigs)
{
	sigemptyset(sigs);
	sigaddset(sigs, SIGTERM);
	sigaddset(sigs, SIGINT);
	sigaddset(sigs, SIGHUP); /* reload */
	pthread_sigmask(SIG_BLOCK, sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	umask(077);
}

static struct tls_source tls_source_of(const struct verifier_options *o, const struct statedir *sd)
{
	return (struct tls_source){
		.state_dfd = sd->dfd,
		.state_dir = o->state_dir,
		.cert_file = o->tls_cert,
		.key_file = o->tls_key,
		.sans = (const char *const *)o->tls_san.v,
		.nsans = o->tls_san.n,
	};
}

/* The service's state from the options, in order (app.h); 0 or -1 (logged). */
static int build_app(struct app *app, const struct verifier_options *o, const struct statedir *sd)
{
	const struct app_threads_config threads = {
		.webhooks = {
			.urls = (const char *const *)o->webhook.v,
			.n = o->webhook.n,
			.secret_file = o->webhook_secret_file,
			.ca_file = o->webhook_ca,
			.max_backoff = o->webhook_max_backoff,
		},
		.retention = {
			.verdicts_keep = o->verdicts_keep,
			.counters_days = o->counters_days,
			.interval = o->prune_interval,
		},
		.audit_key = o->audit_key,
		.audit_sign_interval = o->audit_sign_interval,
	};

	if (app_store_open(app, o->store, sd, o->state_dir) ||
	    tokens_open(o->token_file, sd, o->state_dir, &app->tokens) ||
	    app_results_open(app, sd, (int64_t)o->ear_key_keep) ||
	    app_cluster_open(app, o->cluster_key, o->store) ||
	    app_threads_start(app, sd, &threads) ||
	    app_tables_new(app) ||
	    app_trust_load(app, (const char *const *)o->ek_ca.v, o->ek_ca.n) ||
	    app_signers_load(app, o->policy_signers))
		return -1;
	if (o->policy_replace && !o->policy) {
		log_error("--policy-replace needs --policy FILE");
		return -1;
	}
	return o->policy && policy_seed_default(app, o->policy, o->policy_replace) ? -1 : 0;
}

/* "listening on https://ADDR:PORT" on stdout and READY=1 to systemd: the address as given,
 * with the port actually bound. */
static void announce(const char *listen, uint16_t port)
{
	const char *colon = strrchr(listen, ':');
	int hl = colon ? (int)(colon - listen) : (int)strlen(listen);
	char ready[128];

	printf("listening on https://%.*s:%u\n", hl, listen, port);
	fflush(stdout);
	snprintf(ready, sizeof(ready), "READY=1\nSTATUS=listening on https://%.*s:%u", hl, listen,
		 port);
	(void)sdnotify(ready);
}

/* Serves until SIGTERM or SIGINT, reloading on each SIGHUP; the signal that stopped it. */
static int serve_until_stopped(struct app *app, struct http_server *srv,
			       const struct verifier_options *o, const struct statedir *sd,
			       const sigset_t *sigs)
{
	const struct tls_source tls = tls_source_of(o, sd);
	int sig = 0;

	while (sigwait(sigs, &sig) == 0 && sig == SIGHUP) {
		(void)sdnotify("RELOADING=1");
		log_info("SIGHUP: reloading the operator tokens, the EK CAs, the policy signers and the TLS certificate");
		app_tokens_reload(app, o->token_file, sd, o->state_dir);
		app_trust_reload(app, (const char *const *)o->ek_ca.v, o->ek_ca.n);
		app_signers_reload(app, o->policy_signers);
		tls_reload(srv, &tls);
		(void)sdnotify("READY=1");
	}
	return sig;
}

int main(int argc, char **argv)
{
	struct verifier_options o;
	struct app app;
	struct tls_material tls = { 0 };
	struct tls_source tls_src;
	struct http_server *srv = NULL;
	struct statedir sd = { .dfd = -1, .lock_fd = -1 };
	sigset_t sigs;
	uint16_t port = 0;
	int status;

	log_init("verifier", LOG_LVL_INFO);
	app_init(&app);
	status = verifier_configure(&o, argc, argv);
	if (status >= 0)
		return status;
	verifier_options_apply(&o, &app);
	process_setup(&sigs);

	status = 1;
	if (statedir_open(o.state_dir, &sd) || build_app(&app, &o, &sd))
		goto out;
	tls_src = tls_source_of(&o, &sd);
	if (tls_start(&tls_src, &tls))
		goto out;
	srv = app_server_start(&app, o.listen, o.threads, o.client_connections, tls.cert_pem,
			       tls.key_pem, &port);
	if (!srv)
		goto out;
	announce(o.listen, port);
	log_info("signal %d: stopping", serve_until_stopped(&app, srv, &o, &sd, &sigs));
	(void)sdnotify("STOPPING=1");
	status = 0;
out:
	http_server_stop(srv);
	app_threads_stop(&app);
	app_release(&app);
	tls_material_release(&tls);
	tokens_free(app.tokens);
	statedir_close(&sd);
	verifier_options_release(&o);
	return status;
}
