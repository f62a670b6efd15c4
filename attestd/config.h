/*
 * attestd configuration: the option table (config.c) drives the command line, the file
 * (attestd.conf(5): `key = value`, the long option names without "--") and --help; see
 * common/options.h for the precedence (the command line wins) and the file format. Options
 * are documented in attestd/attestd.8.scd only; tests/install/docs.sh checks it against
 * --help. The default file ATTESTD_DEFAULT_CONFIG may be missing; one named with --config
 * must exist.
 *
 * To add an option: a field here, a row in config.c's table, a paragraph under OPTIONS in
 * attestd.8.scd (the example attestd.conf is generated from it).
 *
 * Ownership: struct attestd_config owns its strings; config_release() frees them (NULL-safe,
 * idempotent). config_parse() fills defaults, so a released-then-parsed struct is complete.
 */
#ifndef ATTESTD_CONFIG_H
#define ATTESTD_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#include "buildinfo.h" /* ATTEST_SYSCONFDIR */

#define ATTESTD_DEFAULT_CONFIG ATTEST_SYSCONFDIR "/attest/attestd.conf"
#define ATTESTD_DEFAULT_TCTI "device:/dev/tpmrm0"
#define ATTESTD_DEFAULT_IMA_LIST "/sys/kernel/security/ima/binary_runtime_measurements"
/* The firmware's TCG event log and the kernel command line it measured. */
#define ATTESTD_DEFAULT_EVENT_LOG "/sys/kernel/security/tpm0/binary_bios_measurements"
#define ATTESTD_DEFAULT_CMDLINE "/proc/cmdline"
#define ATTESTD_DEFAULT_STATE_DIR "/var/lib/attestd"
#define ATTESTD_DEFAULT_INTERVAL 10 /* a plain literal: config.c spells it */
#define ATTESTD_MAX_INTERVAL 86400u /* LIMIT_AGENT_INTERVAL: what the verifier accepts */
#define ATTESTD_DEFAULT_WATCH 1     /* seconds between looks at the list's count (watch.h) */
#define ATTESTD_MAX_WATCH 3600u
/* Rounds that new entries bring forward (pace.h): a burst of ROUND_BURST at once, then one per
 * ROUND_GAP seconds. */
#define ATTESTD_DEFAULT_ROUND_GAP 5
#define ATTESTD_DEFAULT_ROUND_BURST 3
#define ATTESTD_MAX_ROUND_BURST 100u
#define ATTESTD_MAX_KEEP_RECORDS 1000000000u

enum attestd_ak_alg {
	ATTESTD_AK_RSA, /* RSA-2048, RSASSA-SHA256 */
	ATTESTD_AK_ECC, /* NIST P-256, ECDSA-SHA256 */
};

struct attestd_config {
	char *verifier;  /* https://host:port base URL, no trailing slash needed */
	char *ca;        /* PEM bundle that signs the verifier's TLS certificate */
	char *agent_id;  /* default: the hostname */
	char *tcti;
	char *ima_list;
	char *event_log; /* "none": never send one */
	char *cmdline;
	char *state_dir; /* --state-dir, else $STATE_DIRECTORY (systemd), else the default */
	char *ear_file;  /* where the EAR of the latest verdict is written; NULL: not asked for */
	char *ima_export; /* the deleted records' export (imatrim.h); default in the state dir */
	unsigned ima_keep_records; /* records kept in kernel memory at least; 0: never delete */
	unsigned interval; /* seconds between rounds, 1..ATTESTD_MAX_INTERVAL */
	unsigned watch;    /* seconds between looks for new measurements; 0: never */
	unsigned round_gap;   /* seconds to earn back one round brought forward (pace.h) */
	unsigned round_burst; /* rounds that may be brought forward one after the other */
	enum attestd_ak_alg ak_alg;
	char *ek_profile; /* "auto", or an EK Credential Profile id ("L-1", "H-3"; tpmkey.h) */
	char *ek_cert;    /* the EK certificate as a file (ekfile.h); NULL: from the TPM's NV */
	bool once;
	bool print_ek_sha256; /* print the EK's SHA-256 for admission and exit (agent.h) */
	bool foreground;
	bool debug;
	bool help;    /* --help seen: caller prints config_usage() and exits 0 */
	bool version; /* --version seen: caller prints config_version() and exits 0 */
};

/*
 * Parses argv (argv[0] skipped) and the config file into *cfg (which it initializes; call
 * config_release() afterwards even on failure). Does not require --verifier (the caller checks
 * what its mode needs with config_check()). Returns 0 or -EINVAL (the reason logged).
 */
int config_parse(struct attestd_config *cfg, int argc, char *const argv[]);

/* Checks the settings a run needs: verifier (https://), ca, agent id. 0 or -EINVAL. */
int config_check(const struct attestd_config *cfg);

void config_release(struct attestd_config *cfg);
void config_usage(FILE *out);
void config_version(FILE *out);

#endif
