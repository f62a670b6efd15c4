/*
 * attestctl replay [--bank BANKS] LIST
 *
 * Replays an IMA binary measurement list into PCR 10 and prints `pcr10 BANK HEX` per bank, then
 * `entries N violations N`. BANKS is sha1, sha256, sha384, sha512, a comma list of them, or
 * `all` (all four); the default is sha1,sha256, the banks swtpm and our guests run.
 * Exit: 0 ok, 1 corrupt list (one stderr line: entry index, byte offset, reason), 2 usage/I/O.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proto/encoding.h"
#include "proto/imalog.h"
#include "proto/pcrs.h"
#include "proto/replay.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/util.h"

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
	strcpy(tmp, arg);
	*mask = 0;
	for (char *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint32_t bit = replay_bank_of_alg(pcr_alg_from_name(tok));

		if (!bit)
			return -EINVAL;
		*mask |= bit;
	}
	return *mask ? 0 : -EINVAL;
}


int cmd_replay(int argc, char **argv)
{
	uint32_t mask = REPLAY_SHA1 | REPLAY_SHA256;
	const char *path = NULL;
	const uint8_t *buf = NULL;
	size_t len = 0;
	struct imalog *log = NULL;
	struct replay_ctx *rc = NULL;
	struct replay_state st;
	struct ima_entry e;
	struct ima_error err;
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
	r = attestctl_map_file(path, &buf, &len);
	if (r < 0) {
		fprintf(stderr, "attestctl replay: cannot read \"%s\": %s\n", path, strerror(-r));
		return 2;
	}
	log = imalog_new();
	rc = replay_ctx_new(mask);
	if (!log || !rc) {
		fprintf(stderr, "attestctl replay: out of memory or openssl failure\n");
		goto cleanup;
	}
	imalog_reset(log, buf, len, 0);
	replay_state_init(&st, mask);
	while ((r = imalog_next(log, &e, &err)) == 1) {
		if (replay_extend(rc, &st, &e) < 0) {
			fprintf(stderr, "attestctl replay: openssl failure at entry %llu\n",
				(unsigned long long)e.index);
			goto cleanup;
		}
	}
	if (r < 0) {
		fprintf(stderr, "attestctl replay: corrupt list: entry %llu at offset %zu: %s\n",
			(unsigned long long)err.index, err.offset, err.msg);
		ret = 1;
		goto cleanup;
	}
	for (uint16_t alg = 1; alg < 0x20; alg++) {
		size_t plen;
		const uint8_t *pcr = replay_state_pcr(&st, alg, &plen);
		char hex[2 * PCR_MAX_DIGEST + 1];

		if (!pcr)
			continue;
		hex_encode(pcr, plen, hex);
		printf("pcr10 %s %s\n", pcr_alg_name(alg), hex);
	}
	printf("entries %llu violations %llu\n", (unsigned long long)st.entries,
	       (unsigned long long)st.violations);
	ret = fflush(stdout) == 0 ? 0 : 2;
cleanup:
	replay_ctx_free(rc);
	imalog_free(log);
	attestctl_unmap_file(buf, len);
	return ret;
}
