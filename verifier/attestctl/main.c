/* attestctl: operator CLI. Dispatches argv[1] through a table; see commands.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/options.h"
#include "verifier/attestctl/commands.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
} commands[] = {
	{"replay", cmd_replay, "replay [--bank sha1|sha256|sha384|sha512|all] LIST"},
	{"check-quote", cmd_check_quote, "check-quote --ak AKPUB --message MSG --signature SIG --nonce HEX [--pcrs PCRS] [--list LIST]"},
	{"policy-learn", cmd_policy_learn, "policy-learn LIST [--out FILE]"},
	{"policy", cmd_policy, "policy get NAME [--version N] | put NAME FILE | assign AGENT NAME | assign --label KEY=VALUE NAME [--yes] | diff OLD NEW | history NAME | rollback NAME VERSION | sign --key KEY.pem FILE [--out FILE] | update NAME --apt-repo DIR --keyring FILE [--dist SUITE] [--package NAME... | --selections FILE | --all-packages] [--hash ALG]... [--retire-after DAYS] [--dry-run]"},
	{"policy-gen", cmd_policy_gen,
	 "policy-gen DIR [--exclude REGEX]... [--hash sha1|sha256|sha384|sha512] [--prefix /] [--out FILE] | policy-gen (--deb FILE.deb... | --apt-repo DIR --keyring FILE [--dist SUITE] (--package NAME... | --selections FILE | --all-packages)) [--hash ALG]... [--conffiles packaged|any] [--exclude REGEX]... [--out FILE]"},
	{"policy-check", cmd_policy_check, "policy-check POLICY [PATH ALG:HEX]"},
	{"evaluate", cmd_evaluate, "evaluate --policy POLICY [--offset N] LIST"},
	{"eventlog", cmd_eventlog, "eventlog [--replay] FILE"},
	{"boot-policy", cmd_boot_policy,
	 "boot-policy kernel [--qemu] [--hash ALG|all] BZIMAGE | learn LOG [--cmdline TEXT | --cmdline-file FILE] [--require WORD]... [--forbid WORD]... [--kernel-name NAME] [--policy POLICY] [--out FILE]"},
	{"agents", cmd_agents, "agents [--state S] [--policy NAME] [--label KEY=VALUE] [--verifier URL] [--ca FILE] [--token-file FILE] [--token-name NAME] [--json]"},
	{"agent", cmd_agent, "agent ID | agent retire ID [--purge] | agent reset ID | agent history ID | agent add ID (--ek-cert FILE | --ek-sha256 HEX) [--policy NAME] [--label KEY=VALUE]... | agent add --from FILE | agent unregister ID | agent label ID KEY=VALUE... [--remove KEY]... [--verifier URL] [--ca FILE] [--token-file FILE] [--token-name NAME] [--json]"},
	{"registrations", cmd_registrations, "registrations [--verifier URL] [--ca FILE] [--token-file FILE] [--token-name NAME] [--json]"},
	{"verdicts", cmd_verdicts, "verdicts ID [--limit N] [--verifier URL] [--ca FILE] [--token-file FILE] [--token-name NAME] [--json]"},
	{"counters", cmd_counters, "counters ID [--limit N] [--verifier URL] [--ca FILE] [--token-file FILE] [--token-name NAME] [--json]"},
	{"violations", cmd_violations,
	 "violations [--open | --state open|approved|dismissed] [--agent ID] [--verifier URL] [--ca FILE] [--token-file FILE] [--token-name NAME] [--json]"},
	{"approve", cmd_approve, "approve VIOLATION_ID | --path PATH --digest ALG:HEX [--agent ID | --policy NAME] [--yes] [--scope agent|policy] [--verifier URL] [--ca FILE] [--token-file FILE] [--token-name NAME]"},
	{"dismiss", cmd_dismiss, "dismiss VIOLATION_ID | --path PATH --digest ALG:HEX [--agent ID | --policy NAME] [--yes] [--verifier URL] [--ca FILE] [--token-file FILE] [--token-name NAME]"},
	{"amendment", cmd_amendment, "amendment AGENT | amendment history AGENT | amendment rollback AGENT VERSION [--verifier URL] [--ca FILE] [--token-file FILE] [--token-name NAME]"},
	{"ear", cmd_ear, "ear verify FILE --jwks JWKS [--nonce N] [--max-age SECONDS] [--json] | ear get AGENT [--nonce N] [--wait SECONDS] [--out FILE] | ear jwks [--out FILE] | ear rotate"},
	{"backup", cmd_backup, "backup FILE [--verifier URL] [--ca FILE] [--token-file FILE] [--token-name NAME]"},
	{"store", cmd_store, "store copy FROM-URI TO-URI"},
	{"evidence", cmd_evidence, "evidence get VERDICT-ID --out FILE [--verifier URL] [--ca FILE] [--token-file FILE] [--token-name NAME]"},
	{"verify-evidence", cmd_verify_evidence, "verify-evidence FILE [--json]"},
	{"audit", cmd_audit, "audit verify --store URI [--key PUBKEY.pem] | audit export --store URI"},
};

static int run(int argc, char **argv);

static int usage(FILE *f)
{
	fprintf(f, "usage: attestctl COMMAND [ARGS] | --help | --version\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %s\n", commands[i].usage);
	fprintf(f, "see attestctl(1)\n");
	return 2;
}

/* Options of the online commands that take no value (every other one takes one). */
static bool flag_option(const char *a)
{
	return !strcmp(a, "--json") || !strcmp(a, "--purge") || !strcmp(a, "--open") ||
	       strchr(a, '=') != NULL;
}

/*
 * Global options may come before the command, as in `attestctl --verifier URL --ca F agents`:
 * they are moved after the command's own words (each command parses options anywhere). The
 * result reuses argv's strings; argv[0] stays first. 0, or -ENOMEM.
 */
static int command_first(int argc, char **argv, char ***out)
{
	char **v = calloc((size_t)argc + 1, sizeof(*v));
	int i = 1, n = 0, lead;

	*out = v;
	if (!v)
		return -ENOMEM;
	while (i < argc && argv[i][0] == '-' && argv[i][1] == '-' && argv[i][2] &&
	       strcmp(argv[i], "--help") && strcmp(argv[i], "--version"))
		i += flag_option(argv[i]) || i + 1 >= argc ? 1 : 2;
	lead = i;
	v[n++] = argv[0];
	for (int k = lead; k < argc; k++)
		v[n++] = argv[k];
	for (int k = 1; k < lead; k++)
		v[n++] = argv[k];
	return 0;
}

int main(int argc, char **argv)
{
	char **args = NULL;
	int ret;

	log_init("attestctl", LOG_LVL_INFO);
	if (command_first(argc, argv, &args)) {
		fprintf(stderr, "attestctl: out of memory\n");
		return 2;
	}
	argv = args;
	ret = run(argc, argv);
	free(args);
	return ret;
}

static int run(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		opts_version("attestctl", stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "attestctl: unknown command \"%s\"\n", argv[1]);
	return usage(stderr);
}
