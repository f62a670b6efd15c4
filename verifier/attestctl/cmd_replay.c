/*
 * attestctl replay [--bank BANKS] LIST
 *
 * Replays an IMA binary measurement list into PCR 10 and prints `pcr10 BANK HEX` per bank, then
 * `entries N violations N`. BANKS is sha1, sha256, sha384, sha512, a comma list of them, or
 * `all` (all four); the default is sha1,sha256, the banks swtpm and our guests run.
 * Exit: 0 ok, 1 corrupt list (one stderr line: entry index, byte offset, reason), 2 usage/I/O.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/file.h"
#include "proto/encoding.h"
#include "proto/imalog.h"
#include "proto/pcrs.h"
#include "proto/replay.h"
#include "verifier/attestctl/commands.h"

static const char usage_text[] = "usage: attestctl replay [--bank sha1|sha256|sha384|sha512|all] LIST\n";

static int parse_banks(const char *arg, uint32_t *mask)
{
	char tmp[64];
	char *save = NULL;

	if (!strcmp(arg, "all")) {
		*mask = REPLAY_ALL_BANKS;
		return 0;
	}
	if (strlen(arg) >= sizeof(tmp))
		return -EINVAL;
	snprintf(tmp, sizeof(tmp), "%s", arg);
	*mask = 0;
	for (char *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint32_t bit = replay_bank_of_alg(pcr_alg_from_name(tok));

		if (!bit)
			return -EINVAL;
		*mask |= bit;
	}
	return *mask ? 0 : -EINVAL;
}


/*
 * One pass over the list for some banks. The bank holding SHA-1 checks every template hash;
 * the others trust that pass and only hash, so the two can run on two cores at once.
 */
struct bank_pass {
	const uint8_t *buf;
	size_t len;
	uint32_t banks;
	bool verify;
	struct replay_state st;
	struct ima_error err;
	int rc; /* 0 done, 1 corrupt list (err), 2 out of memory or openssl failure */
};

static void *run_pass(void *arg)
{
	struct bank_pass *p = arg;
	struct imalog *log = imalog_new();
	struct replay_ctx *rc = replay_ctx_new(p->banks);
	struct ima_entry e;
	int r;

	p->rc = 2;
	if (!log || !rc)
		goto out;
	imalog_reset(log, p->buf, p->len, 0);
	imalog_skip_hash_check(log, !p->verify);
	replay_state_init(&p->st, p->banks);
	while ((r = imalog_next(log, &e, &p->err)) == 1)
		if (replay_extend(rc, &p->st, &e) < 0)
			goto out;
	p->rc = r < 0 ? 1 : 0;
out:
	replay_ctx_free(rc);
	imalog_free(log);
	return NULL;
}

int cmd_replay(int argc, char **argv)
{
	uint32_t mask = REPLAY_SHA1 | REPLAY_SHA256;
	const char *path = NULL;
	const uint8_t *buf = NULL;
	size_t len = 0;
	struct bank_pass a = {0}, b = {0};
	pthread_t thread;
	bool threaded;
	int ret = 2, r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bank") && i + 1 < argc) {
			if (parse_banks(argv[++i], &mask) < 0) {
				fprintf(stderr, "attestctl replay: unknown bank \"%s\"\n", argv[i]);
				fputs(usage_text, stderr);
				return 2;
			}
		} else if (argv[i][0] == '-' || path) {
			fputs(usage_text, stderr);
			return 2;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		fputs(usage_text, stderr);
		return 2;
	}
	r = file_map(path, &buf, &len);
	if (r < 0) {
		fprintf(stderr, "attestctl replay: cannot read \"%s\": %s\n", path, strerror(-r));
		return 2;
	}
	/* The SHA-1 pass verifies; the other banks go to a second thread when there are any. */
	a = (struct bank_pass){.buf = buf, .len = len, .banks = mask, .verify = true};
	threaded = (mask & REPLAY_SHA1) && (mask & ~(uint32_t)REPLAY_SHA1);
	if (threaded) {
		a.banks = REPLAY_SHA1;
		b = (struct bank_pass){.buf = buf, .len = len, .banks = mask & ~(uint32_t)REPLAY_SHA1};
		if (pthread_create(&thread, NULL, run_pass, &b) != 0) {
			threaded = false; /* one pass for every bank, then */
			a.banks = mask;
		}
	}
	run_pass(&a);
	if (threaded)
		pthread_join(thread, NULL);
	if (a.rc == 1) {
		fprintf(stderr, "attestctl replay: corrupt list: entry %llu at offset %zu: %s\n",
			(unsigned long long)a.err.index, a.err.offset, a.err.msg);
		ret = 1;
		goto cleanup;
	}
	if (a.rc || (threaded && b.rc)) {
		fprintf(stderr, "attestctl replay: out of memory or openssl failure\n");
		goto cleanup;
	}
	for (uint16_t alg = 1; alg < 0x20; alg++) {
		size_t plen;
		const uint8_t *pcr = replay_state_pcr(&a.st, alg, &plen);
		char hex[2 * LIMIT_DIGEST + 1];

		if (!pcr && threaded)
			pcr = replay_state_pcr(&b.st, alg, &plen);
		if (!pcr)
			continue;
		hex_encode(pcr, plen, hex);
		printf("pcr10 %s %s\n", pcr_alg_name(alg), hex);
	}
	printf("entries %llu violations %llu\n", (unsigned long long)a.st.entries,
	       (unsigned long long)a.st.violations);
	ret = fflush(stdout) == 0 ? 0 : 2;
cleanup:
	file_unmap(buf, len);
	return ret;
}
