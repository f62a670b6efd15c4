/*
 * attestd configuration: a `key = value` file plus the command line (the command line wins).
 *
 *   attestd [--config FILE] [--verifier URL] [--ca FILE] [--agent-id ID] [--tcti TCTI]
 *           [--ima-list PATH] [--state-dir DIR] [--interval SECONDS] [--ak-alg rsa|ecc]
 *           [--event-log PATH|none] [--cmdline PATH]
 *           [--once] [--foreground] [--debug]
 *
 * File keys are the long option names without "--" (verifier, ca, agent-id, tcti, ima-list,
 * event-log, cmdline, state-dir, interval, ak-alg, once, foreground, debug); '#' starts a comment; booleans are
 * true/false/yes/no/1/0. The default file /etc/attestd.conf may be missing; a file named with
 * --config must exist. Options take "--name VALUE" or "--name=VALUE".
 *
 * Ownership: struct attestd_config owns its strings; config_release() frees them (NULL-safe,
 * idempotent). config_parse() fills defaults, so a released-then-parsed struct is complete.
 */
#ifndef ATTESTD_CONFIG_H
#define ATTESTD_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#define ATTESTD_DEFAULT_CONFIG "/etc/attestd.conf"
#define ATTESTD_DEFAULT_TCTI "device:/dev/tpmrm0"
#define ATTESTD_DEFAULT_IMA_LIST "/sys/kernel/security/ima/binary_runtime_measurements"
/* The firmware's TCG event log and the kernel command line it measured (issue 13). */
#define ATTESTD_DEFAULT_EVENT_LOG "/sys/kernel/security/tpm0/binary_bios_measurements"
#define ATTESTD_DEFAULT_CMDLINE "/proc/cmdline"
#define ATTESTD_DEFAULT_STATE_DIR "/var/lib/attestd"
#define ATTESTD_DEFAULT_INTERVAL 10u
#define ATTESTD_MAX_INTERVAL 86400u
#define ATTESTD_CONFIG_LINE_MAX 4096u

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
	char *state_dir;
	unsigned interval; /* seconds between rounds, 1..ATTESTD_MAX_INTERVAL */
	enum attestd_ak_alg ak_alg;
	bool once;
	bool foreground;
	bool debug;
	bool help; /* --help seen: caller prints config_usage() and exits 0 */
};

/*
 * Parses argv (argv[0] skipped) and the config file into *cfg (which it initializes; call
 * config_release() afterwards even on failure). Does not require --verifier (the caller checks
 * what its mode needs with config_check()). Returns 0 or -EINVAL (the reason logged).
 */
int config_parse(struct attestd_config *cfg, int argc, char *const argv[]);

/* Applies a config file; missing_ok allows ENOENT. Returns 0, -ENOENT or -EINVAL. */
int config_load_file(struct attestd_config *cfg, const char *path, bool missing_ok);

/* Checks the settings a run needs: verifier (https://), ca, agent id. 0 or -EINVAL. */
int config_check(const struct attestd_config *cfg);

void config_release(struct attestd_config *cfg);
void config_usage(FILE *out);

#endif
