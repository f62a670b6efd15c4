/*
 * options: the verifier's settings, one table (options.c) for the command line, the
 * configuration file (verifier.conf(5): the same names without "--") and --help; see
 * common/options.h for the precedence and the file format. Documented in verifier/verifier.8.scd,
 * the one place an option is described; tests/install/docs.sh checks the two agree.
 *
 * To add an option: a field here, a row in options.c's table, a paragraph under OPTIONS in
 * verifier.8.scd (the example verifier.conf is generated from it).
 *
 * Ownership: strings and lists are owned by the struct; verifier_options_release() frees them.
 */
#ifndef VERIFIER_OPTIONS_H
#define VERIFIER_OPTIONS_H

#include <stdbool.h>

#include "common/options.h"

#define VERIFIER_DEFAULT_STATE_DIR "/var/lib/attest-verifier"

struct verifier_options {
	char *listen;
	char *state_dir;  /* --state-dir, else $STATE_DIRECTORY (systemd), else the default */
	char *store;      /* NULL: sqlite:STATE_DIR/verifier.db */
	char *cluster_key; /* NULL: challenges are this verifier's alone (cluster.h) */
	char *tls_cert, *tls_key;
	struct opt_list tls_san;
	struct opt_list ek_ca;
	char *policy;
	bool policy_replace; /* --policy replaces the store's default policy, not only seeds it */
	char *policy_signers; /* PEM public keys; NULL: policies need no signature */
	char *token_file;
	unsigned threads;
	unsigned nonce_ttl; /* seconds */
	unsigned pending_ttl; /* seconds an enrollment may stay pending */
	int admission;        /* enum admission (service/app.h): --admission */
	unsigned ear_key_keep; /* seconds a rotated-out EAR key stays published */
	unsigned client_connections; /* open connections per client address */
	unsigned default_interval; /* seconds between rounds of an agent that reported none */
	unsigned stale_intervals;  /* intervals without valid evidence that make an agent stale */
	unsigned verdicts_keep;    /* per agent besides those that changed trust; 0: all */
	unsigned counters_days;    /* age of the hourly counters kept; 0: all */
	unsigned prune_interval;   /* seconds between retention passes */
	int evidence_keep;         /* enum evidence_keep (service/app.h): --evidence-keep */
	char *audit_key;           /* the audit head's signing key; NULL: STATE_DIR/audit-key.pem */
	unsigned audit_sign_interval; /* seconds between signatures of the audit head */
	int metrics_agents;        /* METRICS_AGENTS_TOKEN or _PUBLIC: who sees per-agent series */
	struct opt_list webhook;    /* URLs events are POSTed to */
	char *webhook_secret_file;  /* the HMAC key of their signatures */
	char *webhook_ca;           /* trust anchors for https receivers; NULL: the system's */
	unsigned webhook_max_backoff; /* seconds */
	bool verbose;
};

enum { METRICS_AGENTS_TOKEN, METRICS_AGENTS_PUBLIC }; /* --metrics-agents token|public */

extern const struct opts_spec verifier_opts_spec;

/*
 * Fills *o (zeroed first) from the defaults, the configuration file and argv. 0 with *action
 * (common/options.h), or -EINVAL / -ENOMEM (logged). Release *o in every case.
 */
int verifier_options_parse(struct verifier_options *o, int argc, char *const argv[],
			   enum opts_action *action);
void verifier_options_release(struct verifier_options *o);

/*
 * The configuration step of main(): verifier_options_parse(), --help and --version answered
 * on stdout, --verbose applied. -1: run with *o; else the exit status (0 after --help or
 * --version, 2 for options refused) with *o released.
 */
int verifier_configure(struct verifier_options *o, int argc, char *const argv[]);

struct app;
/* The settings the service reads from *app (service/app.h), from *o. */
void verifier_options_apply(const struct verifier_options *o, struct app *app);

#endif
