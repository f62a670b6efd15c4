/* attestd configuration file and command line; see config.h. */
#include "attestd/config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "attestd/imatrim.h"
#include "common/log.h"
#include "common/options.h"
#include "proto/evidence.h"
#include "proto/tpmkey.h"

#define OFF(f) offsetof(struct attestd_config, f)
#define STR_(x) #x
#define STR(x) STR_(x)

_Static_assert(ATTESTD_MAX_INTERVAL == LIMIT_AGENT_INTERVAL,
	       "attestd's longest interval is the verifier's");

static const char *const ak_algs[] = { [ATTESTD_AK_RSA] = "rsa", [ATTESTD_AK_ECC] = "ecc", NULL };

static const struct opt_def defs[] = {
	{ "verifier", OPT_STRING, OFF(verifier), "URL", NULL, 0, 0, NULL },
	{ "ca", OPT_STRING, OFF(ca), "FILE", NULL, 0, 0, NULL },
	{ "agent-id", OPT_STRING, OFF(agent_id), "ID", NULL, 0, 0, NULL },
	/* No table default: $TPM2TOOLS_TCTI and $TSS2_TCTI come first (config_parse()). */
	{ "tcti", OPT_STRING, OFF(tcti), "TCTI", NULL, 0, 0, NULL },
	{ "ima-list", OPT_STRING, OFF(ima_list), "PATH", ATTESTD_DEFAULT_IMA_LIST, 0, 0, NULL },
	{ "event-log", OPT_STRING, OFF(event_log), "PATH|none", ATTESTD_DEFAULT_EVENT_LOG, 0, 0,
	  NULL },
	{ "cmdline", OPT_STRING, OFF(cmdline), "PATH", ATTESTD_DEFAULT_CMDLINE, 0, 0, NULL },
	{ "state-dir", OPT_STRING, OFF(state_dir), "DIR", NULL, 0, 0, NULL },
	{ "ear-file", OPT_STRING, OFF(ear_file), "PATH", NULL, 0, 0, NULL },
	{ "ima-keep-records", OPT_UINT, OFF(ima_keep_records), "N", "0", 0,
	  ATTESTD_MAX_KEEP_RECORDS, NULL },
	/* No table default: the state directory's (config_parse()). */
	{ "ima-export", OPT_STRING, OFF(ima_export), "PATH", NULL, 0, 0, NULL },
	{ "interval", OPT_UINT, OFF(interval), "SECONDS", STR(ATTESTD_DEFAULT_INTERVAL), 1,
	  ATTESTD_MAX_INTERVAL, NULL },
	{ "watch", OPT_UINT, OFF(watch), "SECONDS", STR(ATTESTD_DEFAULT_WATCH), 0,
	  ATTESTD_MAX_WATCH, NULL },
	{ "round-gap", OPT_UINT, OFF(round_gap), "SECONDS", STR(ATTESTD_DEFAULT_ROUND_GAP), 1,
	  ATTESTD_MAX_INTERVAL, NULL },
	{ "round-burst", OPT_UINT, OFF(round_burst), "N", STR(ATTESTD_DEFAULT_ROUND_BURST), 1,
	  ATTESTD_MAX_ROUND_BURST, NULL },
	{ "ak-alg", OPT_CHOICE, OFF(ak_alg), "rsa|ecc", "rsa", 0, 0, ak_algs },
	{ "ek-profile", OPT_STRING, OFF(ek_profile), "auto|L-1|L-2|H-1|...", "auto", 0, 0, NULL },
	{ "ek-cert", OPT_STRING, OFF(ek_cert), "FILE", NULL, 0, 0, NULL },
	{ "once", OPT_BOOL, OFF(once), NULL, NULL, 0, 0, NULL },
	{ "print-ek-sha256", OPT_BOOL, OFF(print_ek_sha256), NULL, NULL, 0, 0, NULL },
	{ "foreground", OPT_BOOL, OFF(foreground), NULL, NULL, 0, 0, NULL },
	{ "debug", OPT_BOOL, OFF(debug), NULL, NULL, 0, 0, NULL },
};

static const struct opts_spec spec = {
	.prog = "attestd",
	.defs = defs,
	.ndefs = sizeof(defs) / sizeof(defs[0]),
	.default_config = ATTESTD_DEFAULT_CONFIG,
	.man_page = "attestd(8)",
	.notes = "agent id: the hostname unless set; state dir: --state-dir, else\n"
		 "$STATE_DIRECTORY (systemd), else " ATTESTD_DEFAULT_STATE_DIR "\n"
		 "--once: enroll if needed, one round, print the verdict; exit 0 trusted,\n"
		 "1 untrusted, 2 error. attestd never forks: --foreground is the default.\n"
		 "--print-ek-sha256: print the SHA-256 of the EK's TPM2B_PUBLIC (for\n"
		 "`attestctl agent add ID --ek-sha256 HEX`) and exit.\n",
};

/*
 * tpm2-tools' short option: "-T TCTI" and "-TTCTI" become "--tcti TCTI" (*out: a copy of argv
 * reusing its strings, or the same strings with the one rewritten in place; caller frees the
 * array). -ENOMEM.
 */
static int short_tcti(int argc, char *const argv[], char ***out)
{
	char **v = calloc((size_t)argc + 2, sizeof(*v));
	int n = 0;

	*out = v;
	if (!v)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		if (i > 0 && !strcmp(argv[i], "-T")) {
			v[n++] = (char *)"--tcti";
		} else if (i > 0 && !strncmp(argv[i], "-T", 2) && argv[i][2]) {
			v[n++] = (char *)"--tcti";
			v[n++] = argv[i] + 2;
		} else {
			v[n++] = argv[i];
		}
	}
	return n;
}

int config_parse(struct attestd_config *cfg, int argc, char *const argv[])
{
	enum opts_action action;
	const char *env;
	char host[256];
	char **args = NULL;
	int ret, n;

	memset(cfg, 0, sizeof(*cfg));
	n = short_tcti(argc, argv, &args);
	if (n < 0)
		return -ENOMEM;
	ret = opts_parse(&spec, cfg, n, args, &action);
	free(args);
	if (ret < 0)
		return ret == -ENOMEM ? -ENOMEM : -EINVAL;
	cfg->help = action == OPTS_HELP;
	cfg->version = action == OPTS_VERSION;
	if (action != OPTS_RUN)
		return 0;

	/* As tpm2-tools: the option or the file, else $TPM2TOOLS_TCTI, else $TSS2_TCTI. */
	if (!cfg->tcti) {
		env = getenv("TPM2TOOLS_TCTI");
		if (!env || !env[0])
			env = getenv("TSS2_TCTI");
		cfg->tcti = strdup(env && env[0] ? env : ATTESTD_DEFAULT_TCTI);
		if (!cfg->tcti)
			return -ENOMEM;
	}

	if (strcasecmp(cfg->ek_profile, "auto") != 0 && !tpmkey_ek_profile_by_id(cfg->ek_profile)) {
		size_t nprof;
		const struct tpmkey_ek_profile *ps = tpmkey_ek_profiles(&nprof);
		char ids[128] = "auto";

		for (size_t i = 0; i < nprof; i++) {
			size_t used = strlen(ids);

			snprintf(ids + used, sizeof(ids) - used, ", %.*s",
				 (int)strcspn(ps[i].name, " "), ps[i].name);
		}
		log_error("unknown --ek-profile '%s'; one of: %s", cfg->ek_profile, ids);
		return -EINVAL;
	}

	if (!cfg->agent_id) {
		if (gethostname(host, sizeof(host)) < 0) {
			log_error("cannot read the hostname: %s; set --agent-id", strerror(errno));
			return -EINVAL;
		}
		host[sizeof(host) - 1] = '\0';
		cfg->agent_id = strdup(host);
		if (!cfg->agent_id)
			return -ENOMEM;
	}
	if (!cfg->state_dir) {
		/* systemd's StateDirectory= names the directory it made (the first of a list). */
		env = getenv("STATE_DIRECTORY");
		if (env && env[0] && env[0] != ':')
			cfg->state_dir = strndup(env, strcspn(env, ":"));
		else
			cfg->state_dir = strdup(ATTESTD_DEFAULT_STATE_DIR);
		if (!cfg->state_dir)
			return -ENOMEM;
	}
	if (!cfg->ima_export) {
		size_t len = strlen(cfg->state_dir) + sizeof("/" IMATRIM_DEFAULT_EXPORT_NAME);

		cfg->ima_export = malloc(len);
		if (!cfg->ima_export)
			return -ENOMEM;
		snprintf(cfg->ima_export, len, "%s/%s", cfg->state_dir, IMATRIM_DEFAULT_EXPORT_NAME);
	}
	return 0;
}

int config_check(const struct attestd_config *cfg)
{
	if (!cfg->verifier) {
		log_error("no verifier url; set --verifier https://host:port");
		return -EINVAL;
	}
	/* TLS is not optional: the evidence and the enrollment credential travel over it. */
	if (strncmp(cfg->verifier, "https://", 8) != 0 || cfg->verifier[8] == '\0') {
		log_error("verifier url must start with https://: '%s'", cfg->verifier);
		return -EINVAL;
	}
	if (!cfg->ca) {
		log_error("no ca file for the verifier's certificate; set --ca FILE");
		return -EINVAL;
	}
	if (!cfg->agent_id || !agent_id_valid(cfg->agent_id)) {
		log_error("bad agent id '%s': use 1..%u of [A-Za-z0-9._-], not starting with '.'",
			  cfg->agent_id ? cfg->agent_id : "", LIMIT_AGENT_ID);
		return -EINVAL;
	}
	return 0;
}

void config_release(struct attestd_config *cfg)
{
	opts_release(&spec, cfg);
}

void config_usage(FILE *out)
{
	opts_usage(&spec, out);
}

void config_version(FILE *out)
{
	opts_version("attestd", out);
}
