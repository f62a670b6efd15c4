/*
 * attestd: the guest attestation daemon. See agent.h for what it does and config.h for the
 * command line. attestd never forks: run it under an init system or supervisor (the
 * --foreground flag is accepted and is the only mode).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "attestd/agent.h"
#include "attestd/config.h"
#include "attestd/imalist.h"
#include "common/log.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

int main(int argc, char **argv)
{
	struct attestd_config cfg;
	struct sigaction sa;
	int ret;

	log_init("attestd", LOG_LVL_INFO);
	if (config_parse(&cfg, argc, argv) < 0) {
		config_release(&cfg);
		return 2;
	}
	if (cfg.help || cfg.version) {
		if (cfg.help)
			config_usage(stdout);
		else
			config_version(stdout);
		config_release(&cfg);
		return 0;
	}
	if (config_check(&cfg) < 0) {
		config_release(&cfg);
		return 2;
	}
	if (cfg.debug)
		log_set_level(LOG_LVL_DEBUG);

	/* No SA_RESTART: a signal interrupts sleeps so shutdown is prompt. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	{
		/* A wrong list is a setting to fix, not untrusted verdicts in the agent's history. */
		char why[512];

		if (imalist_check(cfg.ima_list, why, sizeof(why))) {
			log_error("%s", why);
			config_release(&cfg);
			return 2;
		}
	}
	ret = agent_run(&cfg, &stop_flag);
	config_release(&cfg);
	if (cfg.once)
		return ret;
	return ret < 0 ? 2 : 0;
}
