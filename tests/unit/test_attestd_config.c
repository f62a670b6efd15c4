/* attestd/config.c: file + command line, precedence, bounds, errors. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attestd/config.h"
#include "common/options.h"
#include "tests/unit/check.h"

static char tmpdir[] = "/tmp/test_attestd_config.XXXXXX";

static char *write_conf(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "we");
	if (!f || fputs(text, f) < 0 || fclose(f))
		exit(2);
	return path;
}

#define ARGV(...) ((char *const[]){ "attestd", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *const[]){ "attestd", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(cfg, ...) config_parse(cfg, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

/* tpm2-tools' conventions: -T, then $TPM2TOOLS_TCTI, then $TSS2_TCTI, then the default. */
static void test_tcti(void)
{
	struct attestd_config cfg;
	char *empty = write_conf("empty-tcti.conf", "# nothing\n");

	setenv("TSS2_TCTI", "swtpm:port=3", 1);
	CHECK(PARSE(&cfg, "--config", empty) == 0 && !strcmp(cfg.tcti, "swtpm:port=3"),
	      "$TSS2_TCTI");
	config_release(&cfg);
	setenv("TPM2TOOLS_TCTI", "swtpm:port=2", 1);
	CHECK(PARSE(&cfg, "--config", empty) == 0 && !strcmp(cfg.tcti, "swtpm:port=2"),
	      "$TPM2TOOLS_TCTI before $TSS2_TCTI");
	config_release(&cfg);
	CHECK(PARSE(&cfg, "--config", empty, "-T", "swtpm:port=1") == 0 &&
	      !strcmp(cfg.tcti, "swtpm:port=1"), "-T TCTI before both");
	config_release(&cfg);
	CHECK(PARSE(&cfg, "--config", empty, "-Tswtpm:port=4") == 0 &&
	      !strcmp(cfg.tcti, "swtpm:port=4"), "-TTCTI");
	config_release(&cfg);
	CHECK(PARSE(&cfg, "--config", empty, "--tcti", "swtpm:port=5") == 0 &&
	      !strcmp(cfg.tcti, "swtpm:port=5"), "--tcti before both");
	config_release(&cfg);
	unsetenv("TPM2TOOLS_TCTI");
	unsetenv("TSS2_TCTI");
}

static void test_defaults_and_args(void)
{
	struct attestd_config cfg;
	char *empty = write_conf("empty.conf", "# nothing\n\n");
	int ret;

	ret = PARSE(&cfg, "--config", empty);
	CHECK(ret == 0, "empty config parses");
	CHECK(cfg.tcti && !strcmp(cfg.tcti, ATTESTD_DEFAULT_TCTI), "default tcti");
	CHECK(cfg.ima_list && !strcmp(cfg.ima_list, ATTESTD_DEFAULT_IMA_LIST), "default list");
	CHECK(cfg.state_dir && !strcmp(cfg.state_dir, ATTESTD_DEFAULT_STATE_DIR), "default state");
	CHECK(cfg.interval == 10 && cfg.ak_alg == ATTESTD_AK_RSA && !cfg.once, "default numbers");
	CHECK(cfg.watch == 1 && cfg.round_gap == 5 && cfg.round_burst == 3,
	      "a look for new measurements every second; rounds brought forward in bursts of 3, "
	      "then one per 5 s");
	CHECK(cfg.agent_id && cfg.agent_id[0], "agent id defaults to the hostname");
	CHECK(config_check(&cfg) == -EINVAL, "no verifier fails the check");
	config_release(&cfg);
	config_release(&cfg); /* idempotent */

	ret = PARSE(&cfg, "--config", empty, "--verifier", "https://127.0.0.1:8443",
		    "--ca=/x/ca.pem", "--agent-id", "web-01", "--interval", "3", "--ak-alg",
		    "ecc", "--once", "--tcti", "swtpm:port=1", "--state-dir", "/s",
		    "--ima-list", "/l");
	CHECK(ret == 0, "full command line parses");
	CHECK(!strcmp(cfg.verifier, "https://127.0.0.1:8443") && !strcmp(cfg.ca, "/x/ca.pem"),
	      "url and ca");
	CHECK(!strcmp(cfg.agent_id, "web-01") && cfg.interval == 3 &&
		      cfg.ak_alg == ATTESTD_AK_ECC && cfg.once,
	      "id, interval, alg, once");
	CHECK(!strcmp(cfg.tcti, "swtpm:port=1") && !strcmp(cfg.state_dir, "/s") &&
		      !strcmp(cfg.ima_list, "/l"),
	      "tcti, state, list");
	CHECK(config_check(&cfg) == 0, "complete config passes the check");
	config_release(&cfg);
}

static void test_file_and_precedence(void)
{
	struct attestd_config cfg;
	char *conf = write_conf("a.conf",
				      "# attestd\n"
				      "verifier = https://verifier.example:443   # trailing comment\n"
				      "  ca=/etc/attestd/ca.pem\n"
				      "agent-id = from-file\n"
				      "interval = 60\n"
				      "ak-alg = ecc\n"
				      "foreground = yes\n");
	int ret;

	ret = PARSE(&cfg, "--config", conf);
	CHECK(ret == 0, "file parses");
	CHECK(!strcmp(cfg.verifier, "https://verifier.example:443"), "value trimmed, comment cut");
	CHECK(!strcmp(cfg.ca, "/etc/attestd/ca.pem") && !strcmp(cfg.agent_id, "from-file"),
	      "ca and id from file");
	CHECK(cfg.interval == 60 && cfg.ak_alg == ATTESTD_AK_ECC && cfg.foreground,
	      "numbers and bools from file");
	config_release(&cfg);

	/* The command line wins, whether before or after --config. */
	ret = PARSE(&cfg, "--interval", "5", "--config", conf, "--agent-id", "cli", "--ak-alg",
		    "rsa");
	CHECK(ret == 0 && cfg.interval == 5 && !strcmp(cfg.agent_id, "cli") &&
		      cfg.ak_alg == ATTESTD_AK_RSA && !strcmp(cfg.ca, "/etc/attestd/ca.pem"),
	      "command line overrides file");
	config_release(&cfg);
}

static void test_errors(void)
{
	struct attestd_config cfg;
	char *empty = write_conf("e.conf", "");
	char missing[300];
	static const char *const bad_files[] = {
		"interval = 0\n",         "interval = 86401\n",    "interval = -1\n",
		"interval = 10s\n",       "interval = 99999999999999999999\n",
		"ak-alg = dsa\n",         "nosuchkey = 1\n",       "verifier\n",
		"once = maybe\n",         "ca =\n",               "round-burst = 0\n",
		"round-burst = 101\n",
	};

	snprintf(missing, sizeof(missing), "%s/missing.conf", tmpdir);
	CHECK(PARSE(&cfg, "--config", missing) < 0, "missing explicit config is an error");
	config_release(&cfg);

	for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		char *p = write_conf("bad.conf", bad_files[i]);

		CHECK(PARSE(&cfg, "--config", p) == -EINVAL, "bad file line rejected: %s",
		      bad_files[i]);
		config_release(&cfg);
	}
	empty = write_conf("e.conf", ""); /* write_conf reuses one path buffer */
	CHECK(PARSE(&cfg, "--config", empty, "--bogus") == -EINVAL, "unknown option");
	config_release(&cfg);
	CHECK(PARSE(&cfg, "--config", empty, "--interval") == -EINVAL, "missing value");
	config_release(&cfg);
	CHECK(PARSE(&cfg, "--config", empty, "stray") == -EINVAL, "stray argument");
	config_release(&cfg);
	CHECK(PARSE(&cfg, "--config", empty, "--interval", "abc") == -EINVAL, "non-numeric");
	config_release(&cfg);
	CHECK(PARSE(&cfg, "--config") == -EINVAL, "--config without a value");
	config_release(&cfg);

	CHECK(PARSE(&cfg, "--config", empty, "--verifier", "http://plain:80", "--ca", "/c") == 0 &&
		      config_check(&cfg) == -EINVAL,
	      "plain http refused by the check");
	config_release(&cfg);
	CHECK(PARSE(&cfg, "--config", empty, "--verifier", "https://v", "--ca", "/c",
		    "--agent-id", "bad id/../x") == 0 &&
		      config_check(&cfg) == -EINVAL,
	      "bad agent id refused by the check");
	config_release(&cfg);
	CHECK(PARSE(&cfg, "--config", empty, "--verifier", "https://v") == 0 &&
		      config_check(&cfg) == -EINVAL,
	      "missing ca refused by the check");
	config_release(&cfg);
	CHECK(PARSE(&cfg, "--help") == 0 && cfg.help, "--help");
	config_release(&cfg);
	{
		char longline[OPTS_LINE_MAX + 100];

		memset(longline, 'a', sizeof(longline) - 2);
		longline[sizeof(longline) - 2] = '\n';
		longline[sizeof(longline) - 1] = '\0';
		CHECK(PARSE(&cfg, "--config", write_conf("long.conf", longline)) == -EINVAL,
		      "over-long line rejected");
		config_release(&cfg);
	}
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(tmpdir))
		return 2;
	CASE(test_tcti);
	CASE(test_defaults_and_args);
	CASE(test_file_and_precedence);
	CASE(test_errors);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return check_finish();
}
