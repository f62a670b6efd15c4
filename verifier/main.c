/*
 * verifier: the host attestation service. Options: options.h (documented in verifier(8)).
 *
 * --policy FILE seeds the default policy when the store has none; a stored default that
 * differs is kept (and the log says so) unless --policy-replace is given.
 * --store names the database (store.h): sqlite:PATH, by default sqlite:STATE_DIR/verifier.db,
 * or postgresql://... shared by several verifiers, each with the same --cluster-key.
 *
 * Prints `listening on https://ADDR:PORT` on stdout when ready (and READY=1 to systemd).
 * SIGTERM/SIGINT stop it cleanly.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "common/log.h"
#include "common/sdnotify.h"
#include "verifier/facts/agentcache.h"
#include "verifier/store/cluster.h"
#include "verifier/http/handlers.h"
#include "verifier/store/operator_token.h"
#include "verifier/options.h"
#include "verifier/policy/policy.h"
#include "verifier/store/statedir.h"
#include "verifier/store/ear_keys.h"
#include "verifier/service/ear.h"
#include "verifier/policy/policy_file.h"
#include "verifier/http/tls.h"
#include "verifier/http/tokens.h"
#include "verifier/service/webhooks.h"
#include "verifier/service/retention.h"
#include "verifier/service/audit_sign.h"
#include "verifier/service/policy_sign.h"


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

/* Reads the tokens (tokens.h) into *out. 0, or -errno (logged). */
static int load_tokens(const struct verifier_options *o, const struct statedir *sd,
		       struct tokens **out)
{
	char path[PATH_MAX], shown[PATH_MAX], err[256] = "";
	int ret = operator_token_file(o->token_file, sd, o->state_dir, path, shown, sizeof(path));

	if (ret)
		return ret;
	ret = tokens_load(path, out, err, sizeof(err));
	if (ret) {
		log_error("operator tokens \"%s\": %s", shown, err);
		return ret;
	}
	log_info("operator tokens: %zu from \"%s\"", (*out)->n, shown);
	return 0;
}

/*
 * SIGHUP: the TLS certificate and key (tls-cert/tls-key, or the state directory's, reissued if a
 * name or the validity asks for it), as for a start, for the connections made from then on.
 */
static void reload_tls(struct http_server *srv, const struct verifier_options *o,
		       const struct statedir *sd)
{
	struct tls_material m;

	if (tls_setup(sd->dfd, o->state_dir, o->tls_cert, o->tls_key,
		      (const char *const *)o->tls_san.v, o->tls_san.n, &m) ||
	    http_server_set_cert(srv, m.cert_pem, m.key_pem))
		log_error("reload: keeping the TLS certificate loaded before");
	else
		log_info("reload: TLS certificate \"%s\", key \"%s\"", m.cert_path, m.key_path);
	tls_material_release(&m);
}

/*
 * SIGHUP: the token file, the EK CAs, the policy signers and the TLS certificate again, each
 * swapped in only when it loads whole (else the old one stays, and the log says why): a rotated
 * token works and the old one stops working without a restart. The signers' file is read again
 * only when --policy-signers names one: signing is switched on or off by a restart.
 */
static void reload(struct app *app, struct http_server *srv, const struct verifier_options *o,
		   const struct statedir *sd)
{
	struct tokens *t = NULL, *old_t = NULL;
	struct enroll_trust *tr, *old_tr = NULL;

	if (load_tokens(o, sd, &t) == 0) {
		pthread_rwlock_wrlock(&app->reload_lock);
		old_t = app->tokens;
		app->tokens = t;
		pthread_rwlock_unlock(&app->reload_lock);
		tokens_free(old_t);
	} else {
		log_error("reload: keeping the operator tokens loaded before");
	}
	tr = enroll_trust_new((const char *const *)o->ek_ca.v, o->ek_ca.n);
	if (tr) {
		pthread_rwlock_wrlock(&app->reload_lock);
		old_tr = app->trust;
		app->trust = tr;
		pthread_rwlock_unlock(&app->reload_lock);
		enroll_trust_free(old_tr);
		log_info("reload: %zu EK CA files", o->ek_ca.n);
	} else {
		log_error("reload: keeping the EK CAs loaded before");
	}
	if (o->policy_signers) {
		struct policy_signers *s = NULL, *old_s;

		if (policy_signers_load(o->policy_signers, &s) == 0) {
			pthread_rwlock_wrlock(&app->reload_lock);
			old_s = app->signers;
			app->signers = s;
			pthread_rwlock_unlock(&app->reload_lock);
			policy_signers_free(old_s);
			log_info("reload: %zu policy signers", s->n);
		} else {
			log_error("reload: keeping the policy signers loaded before");
		}
	}
	reload_tls(srv, o, sd);
}

/* What an imported Keylime policy does not enforce as Keylime would: one log line each. */
static void log_warnings(const char *file, const struct policy *p)
{
	const char *w;
	size_t n;

	for (size_t i = 0; (w = policy_warning(p, i, &n)); i++)
		log_warn("policy \"%s\": %.*s", file, (int)n, w);
}

/* "2026-12-03 07:31:57Z" for a log line. */
static void fmt_utc(int64_t t, char *out, size_t cap)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%d %H:%M:%SZ", &tm))
		snprintf(out, cap, "%lld", (long long)t);
}

struct newest_version {
	int64_t version, time;
	char actor[128];
};

static int newest_cb(void *arg, const struct store_policy_version *v)
{
	struct newest_version *n = arg;

	n->version = v->version;
	n->time = v->time;
	snprintf(n->actor, sizeof(n->actor), "%s", v->actor);
	return 1; /* newest first: the first row is all we want */
}

/*
 * --policy FILE seeds the default policy: it becomes the stored default only when the store has
 * none (or with --policy-replace). A store that has one keeps it, approvals and rollbacks
 * included, whatever a unit file passes on every restart; the log says which copy is used.
 * The file may be a DSSE envelope (attestctl policy sign): an envelope is checked as a PUT's
 * (policy_sign.h) and refused when it does not verify, and with --policy-signers an unsigned
 * file is refused when it would be stored.
 */
static int load_default_policy(struct app *app, const char *file, bool replace)
{
	struct newest_version cur = { 0 };
	char err[256] = "", actor[PATH_MAX + 32], when[32];
	char *text = NULL, *stored = NULL;
	const char *json;
	struct signed_policy sp;
	struct store_policy_sig sig;
	enum sign_status ss;
	size_t len = 0;
	struct policy *p;
	int64_t ver = 0;
	int ret;

	ret = policy_file_read(file, &text, &len, err, sizeof(err));
	if (ret) {
		log_error("%s", err);
		return ret;
	}
	ss = policy_sign_open(app, text, len, &sp);
	if (ss != SIGN_OK && ss != SIGN_UNSIGNED) {
		log_error("policy \"%s\": %s", file, ss == SIGN_NOMEM ? "out of memory" : sp.why);
		ret = -EINVAL;
		goto out;
	}
	/* unsigned while signers are configured: the text itself, refused below if stored */
	json = ss == SIGN_OK ? sp.json : text;
	len = ss == SIGN_OK ? sp.len : len;
	p = policy_load(json, len, err, sizeof(err));
	if (!p) {
		log_error("policy \"%s\" does not load: %s", file, err);
		ret = -EINVAL;
		goto out;
	}
	log_warnings(file, p);
	policy_unref(p);
	ret = store_policy_get(app->store, POLICY_DEFAULT_NAME, &stored, &ver);
	if (ret && ret != -ENOENT)
		goto out;
	if (!ret && strcmp(stored, json) == 0) {
		log_info("default policy: version %" PRId64 " in the store is \"%s\"", ver, file);
		goto out;
	}
	if (!ret && !replace) {
		ret = store_policy_versions(app->store, POLICY_DEFAULT_NAME, newest_cb, &cur);
		if (ret < 0)
			goto out;
		fmt_utc(cur.time, when, sizeof(when));
		log_warn("default policy: keeping the store's version %" PRId64 " (by %s, %s), which"
			 " differs from \"%s\" given with --policy; the file only seeds a store that"
			 " has no default policy. To replace the store's copy (and what approvals and"
			 " rollbacks made of it) with the file, start once with --policy-replace",
			 cur.version, cur.actor, when, file);
		ret = 0;
		goto out;
	}
	if (ss == SIGN_UNSIGNED) {
		log_error("policy \"%s\": %s", file, sp.why);
		ret = -EINVAL;
		goto out;
	}
	snprintf(actor, sizeof(actor), "command line (%s)", file);
	sig.signer = sp.signer;
	sig.signature = sp.signature;
	ret = store_policy_put_signed(app->store, POLICY_DEFAULT_NAME, STORE_POLICY_ANY, json,
				      sp.is_signed ? &sig : NULL, actor, (int64_t)time(NULL), &ver);
	if (!ret && stored)
		log_warn("default policy: --policy-replace: \"%s\" replaced the store's copy as"
			 " version %" PRId64 " (the older versions stay in its history)", file, ver);
	else if (!ret)
		log_info("default policy: seeded from \"%s\" as version %" PRId64 "%s%s", file, ver,
			 sp.signer[0] ? ", signed by " : "", sp.signer);
out:
	signed_policy_release(&sp);
	free(stored);
	free(text);
	return ret;
}

int main(int argc, char **argv)
{
	struct verifier_options o;
	enum opts_action action;
	struct app app;
	struct tls_material tls;
	struct http_server_config cfg;
	struct http_server *srv = NULL;
	struct webhooks *hooks = NULL;
	struct retention *pruner = NULL;
	char path[PATH_MAX];
	sigset_t sigs;
	uint16_t port = 0;
	int sig = 0, ret, status = 1;
	struct statedir sd = { .dfd = -1, .lock_fd = -1 };

	log_init("verifier", LOG_LVL_INFO);
	memset(&o, 0, sizeof(o));
	memset(&app, 0, sizeof(app));
	memset(&tls, 0, sizeof(tls));
	policy_cache_init(&app.policies);
	policy_cache_init(&app.amendments);
	if (verifier_options_parse(&o, argc, argv, &action)) {
		verifier_options_release(&o);
		return 2;
	}
	if (action != OPTS_RUN) {
		if (action == OPTS_HELP)
			opts_usage(&verifier_opts_spec, stdout);
		else
			opts_version("verifier", stdout);
		verifier_options_release(&o);
		return 0;
	}
	if (o.verbose)
		log_set_level(LOG_LVL_DEBUG);
	app.nonce_ttl = (int64_t)o.nonce_ttl;
	app.pending_ttl = (int64_t)o.pending_ttl;
	app.liveness.default_interval = o.default_interval;
	app.liveness.intervals = o.stale_intervals;
	app.metrics_agents_public = o.metrics_agents == METRICS_AGENTS_PUBLIC;
	app.evidence_keep = (enum evidence_keep)o.evidence_keep;
	app.admission = (enum admission)o.admission;

	/* Block the stop signals before any thread exists: MHD's threads inherit the mask and
	 * only main() receives them, in sigwait() below. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP); /* reload */
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();

	/* Every file the verifier creates (keys, token, the store and its journals) is 0600. */
	umask(077);
	if (statedir_open(o.state_dir, &sd))
		goto out;
	/* SQLite opens by path: one through the directory checked (statedir.h). */
	memcpy(path, "sqlite:", 7);
	if (!o.store && statedir_path(&sd, "verifier.db", path + 7, sizeof(path) - 7)) {
		log_error("state: \"%s\": path too long", o.state_dir);
		goto out;
	}
	if ((ret = store_open(o.store ? o.store : path, &app.store))) {
		if (o.store)
			log_error("cannot open the store \"%s\"", o.store);
		else
			log_error("cannot open the store \"%s/verifier.db\"", o.state_dir);
		goto out;
	}
	{
		struct store_enroll_limits lim = {
			.pending_ttl = (int64_t)o.pending_ttl,
			.max_pending_per_ek = LIMIT_PENDING_PER_EK,
			.max_pending = LIMIT_PENDING_ENROLLMENTS,
		};

		store_set_enroll_limits(app.store, &lim);
	}
	pthread_rwlock_init(&app.reload_lock, NULL);
	if (load_tokens(&o, &sd, &app.tokens))
		goto out;
	/* Before the webhooks' thread, which signs results too. */
	if (ear_keys_open(&sd, (int64_t)o.ear_key_keep, &app.ear_keys) ||
	    ear_results_new(&app.ear_results))
		goto out;
	if (o.cluster_key && cluster_load(o.cluster_key, &app.cluster))
		goto out;
	if (o.cluster_key && !strncmp(o.store ? o.store : path, "sqlite:", 7))
		log_warn("--cluster-key with a SQLite store: only one verifier can use it; the key"
			 " is for verifiers sharing a PostgreSQL store");
	{
		/* Before the store is shared: events are written for these URLs from now on. */
		const struct webhooks_config wc = {
			.urls = (const char *const *)o.webhook.v,
			.n = o.webhook.n,
			.secret_file = o.webhook_secret_file,
			.ca_file = o.webhook_ca,
			.max_backoff = o.webhook_max_backoff,
		};

		if (webhooks_start(&app, &wc, &hooks))
			goto out;
		app.webhooks = hooks;
	}
	{
		const struct retention_config rc = {
			.verdicts_keep = o.verdicts_keep,
			.counters_days = o.counters_days,
			.interval = o.prune_interval,
		};

		if ((ret = retention_start(app.store, &rc, &pruner))) {
			log_error("retention: cannot start its thread: error %d", ret);
			goto out;
		}
	}
	if (audit_signer_start(app.store, &sd, o.audit_key, o.audit_sign_interval, &app.audit))
		goto out;
	app.nonces = nonces_new();
	app.agents = agentcache_new();
	if (!app.nonces || !app.agents) {
		log_error("cannot create the challenge table or agent cache: out of memory or no randomness");
		goto out;
	}
	if (o.ek_ca.n == 0)
		log_warn("no --ek-ca given: every enrollment will be refused (ek_untrusted)");
	app.trust = enroll_trust_new((const char *const *)o.ek_ca.v, o.ek_ca.n);
	if (!app.trust)
		goto out;
	if (o.policy_signers && policy_signers_load(o.policy_signers, &app.signers))
		goto out;
	if (o.policy_replace && !o.policy) {
		log_error("--policy-replace needs --policy FILE");
		goto out;
	}
	if (o.policy && load_default_policy(&app, o.policy, o.policy_replace))
		goto out;
	if (tls_setup(sd.dfd, o.state_dir, o.tls_cert, o.tls_key, (const char *const *)o.tls_san.v,
		      o.tls_san.n, &tls))
		goto out;
	if (tls.ca_path)
		log_info("tls: agents trust \"%s\"; server certificate \"%s\", key \"%s\"",
			 tls.ca_path, tls.cert_path, tls.key_path);

	memset(&cfg, 0, sizeof(cfg));
	cfg.listen = o.listen;
	cfg.threads = o.threads;
	cfg.cert_pem = tls.cert_pem;
	cfg.key_pem = tls.key_pem;
	cfg.routes = app_routes;
	cfg.nroutes = app_nroutes;
	cfg.app = &app;
	cfg.authorize = app_authorize;
	cfg.admit = app_admit;
	cfg.client_connections = o.client_connections;
	cfg.observe = app_observe;
	srv = http_server_start(&cfg, &port);
	if (!srv)
		goto out;
	{
		/* The address as given, with the port actually bound. */
		const char *colon = strrchr(o.listen, ':');
		int hl = colon ? (int)(colon - o.listen) : (int)strlen(o.listen);
		char ready[128];

		printf("listening on https://%.*s:%u\n", hl, o.listen, port);
		fflush(stdout);
		snprintf(ready, sizeof(ready), "READY=1\nSTATUS=listening on https://%.*s:%u", hl,
			 o.listen, port);
		(void)sdnotify(ready);
	}
	while (sigwait(&sigs, &sig) == 0 && sig == SIGHUP) {
		(void)sdnotify("RELOADING=1");
		log_info("SIGHUP: reloading the operator tokens, the EK CAs, the policy signers and the TLS certificate");
		reload(&app, srv, &o, &sd);
		(void)sdnotify("READY=1");
	}
	log_info("signal %d: stopping", sig);
	(void)sdnotify("STOPPING=1");
	status = 0;
out:
	http_server_stop(srv);
	retention_stop(pruner);
	audit_signer_stop(app.audit);
	webhooks_stop(hooks);
	policy_cache_release(&app.policies);
	policy_cache_release(&app.amendments);
	enroll_trust_free(app.trust);
	policy_signers_free(app.signers);
	store_close(app.store);
	nonces_free(app.nonces);
	agentcache_free(app.agents);
	cluster_free(app.cluster);
	ear_results_free(app.ear_results);
	ear_keys_free(app.ear_keys);
	tls_material_release(&tls);
	tokens_free(app.tokens);
	statedir_close(&sd);
	verifier_options_release(&o);
	return status;
}
