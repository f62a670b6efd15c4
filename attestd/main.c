/*
 * attestd: the guest attestation daemon. See agent.h for what it does and config.h for the
 * command line. attestd never forks: run it under an init system or supervisor (the
 * --foreground flag is accepted and is the only mode).
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "attestd/agent.h"
#include "attestd/config.h"
#include "attestd/imalist.h"
#include "common/log.h"

static volatile sig_atomic_t stop_flag;

/*
 * One attestd per state directory, a daemon or --once: two would share the AK files and the
 * enrollment marker and race for each round. STATE_DIR/lock is held (flock) while attestd runs
 * and released by the kernel when it exits however it exits, so a crash leaves no stale lock. Returns the open fd,
 * or -1 with the reason logged.
 */
static int state_lock(const char *dir)
{
	char path[4096], pid[32];
	int fd, n;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		log_error("cannot create state directory \"%s\": %s", dir, strerror(errno));
		return -1;
	}
	n = snprintf(path, sizeof(path), "%s/lock", dir);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		log_error("state directory path too long: \"%s\"", dir);
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		log_error("cannot open \"%s\": %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		n = (int)pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		log_error("another attestd (pid %s) uses state directory \"%s\": stop it, or give"
			  " this one its own --state-dir", pid[0] ? pid : "?", dir);
		close(fd);
		return -1;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n)
		log_warn("cannot write the pid into \"%s\": %s", path, strerror(errno));
	return fd;
}

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

int main(int argc, char **argv)
{
	struct attestd_config cfg;
	struct sigaction sa;
	int ret, lock_fd = -1;

	log_init("attestd", LOG_LVL_INFO);
	/*
	 * A fixed threshold: buffers of 1 MiB and more (a long list's first round sends 16 MiB
	 * parts) are mapped and unmapped whole. glibc's default raises the threshold to the largest
	 * block freed, so after that round such buffers came from the heap, which the daemon kept
	 * for the rest of its life (16 MiB more RSS at 1,000,000 entries than at 1,000).
	 */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
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
	if (cfg.print_ek_sha256) {
		ret = agent_print_ek_sha256(&cfg);
		config_release(&cfg);
		return ret < 0 ? 2 : 0;
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
	if ((lock_fd = state_lock(cfg.state_dir)) < 0) {
		config_release(&cfg);
		return 2;
	}
	ret = agent_run(&cfg, &stop_flag);
	if (lock_fd >= 0)
		close(lock_fd);
	config_release(&cfg);
	if (cfg.once)
		return ret;
	return ret < 0 ? 2 : 0;
}
