/*
 * attestctl evaluate --policy POLICY [--offset N] LIST
 *
 * "Would this machine pass under this policy?", offline: judges every entry of an IMA binary
 * list as the verifier would (verifier/decision/judge.c: file signatures, keyrings, the digest list,
 * violations), without a quote. Prints one line per entry that is not allowed,
 * `entry N PATH ALG:HEX REASON[ (why)]` (bytes of the path outside printable ASCII as \xNN),
 * then `entries N not_allowed M`.
 *
 * Without a quote there are no PCR values: the first entry of a boot (entry 0) is judged
 * against the policy's boot_aggregate list when it has one, and otherwise reported as
 * `entry 0 boot_aggregate not checkable offline (no quote)`, which is not a failure. An entry 0
 * that is not boot_aggregate fails as on the verifier. --offset N says the list starts at
 * entry N (a slice, as an agent sends it in a later round): then there is no entry 0.
 *
 * The policy is read as `policy put` reads it (key files inline; import warnings on stderr).
 * Exit: 0 every entry allowed, 1 some not, 2 bad input (usage, unreadable or invalid policy,
 * a list that does not parse: one stderr line with the entry and byte offset).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "proto/encoding.h"
#include "proto/imalog.h"
#include "verifier/attestctl/commands.h"
#include "verifier/decision/judge.h"
#include "verifier/policy/policy.h"
#include "verifier/policy/policy_file.h"

static const char usage_text[] = "usage: attestctl evaluate --policy POLICY [--offset N] LIST\n";

/* Untrusted bytes (a path, an algorithm name) readable on one line. */
static void put_text(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x21 && c <= 0x7e && c != '\\')
			putchar(c);
		else
			printf("\\x%02x", c);
	}
}

static void print_entry(const struct ima_entry *e, const char *reason, const char *why)
{
	char hex[2 * LIMIT_DIGEST + 1] = "";

	printf("entry %llu ", (unsigned long long)e->index);
	if (e->path)
		put_text(e->path, e->path_len);
	else
		fputs("-", stdout);
	putchar(' ');
	if (e->digest && e->digest_len <= LIMIT_DIGEST) {
		hex_encode(e->digest, e->digest_len, hex);
		if (e->digest_type == IMA_DIGEST_VERITY)
			fputs("verity:", stdout);
		if (e->digest_alg_name)
			put_text(e->digest_alg_name, e->digest_alg_name_len);
		else
			fputs("sha1", stdout);
		printf(":%s", hex);
	} else {
		fputs("-", stdout);
	}
	printf(" %s", reason);
	if (why)
		printf(" (%s)", why);
	putchar('\n');
}

/* Entry 0: boot_aggregate by the policy's list, or not checkable without a quote. */
static bool judge_first(const struct policy *pol, const struct ima_entry *e)
{
	if (!e->path || e->path_len != 14 || memcmp(e->path, "boot_aggregate", 14) != 0 ||
	    !e->digest) {
		print_entry(e, reason_name(REASON_BOOT_AGGREGATE_MISSING), NULL);
		return false;
	}
	if (policy_boot_aggregate_mode(pol) != POLICY_BOOT_AGGREGATE_LIST) {
		printf("entry 0 boot_aggregate not checkable offline (no quote)\n");
		return true;
	}
	if (policy_boot_aggregate_accepts(pol, e->digest_alg, e->digest, e->digest_len))
		return true;
	print_entry(e, reason_name(REASON_BOOT_AGGREGATE_NOT_ALLOWED), NULL);
	return false;
}

int cmd_evaluate(int argc, char **argv)
{
	const char *policy_path = NULL, *list_path = NULL;
	unsigned long long offset = 0, entries = 0, refused = 0;
	const uint8_t *buf = NULL;
	char *json = NULL, err[512] = "", *end;
	struct policy *pol = NULL;
	struct imalog *log = NULL;
	struct ima_entry e;
	struct ima_error ierr;
	size_t len = 0, json_len = 0;
	int ret = 2, r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--policy") && i + 1 < argc) {
			policy_path = argv[++i];
		} else if (!strcmp(argv[i], "--offset") && i + 1 < argc) {
			errno = 0;
			offset = strtoull(argv[++i], &end, 10);
			if (errno || end == argv[i] || *end || argv[i][0] == '-') {
				fprintf(stderr, "attestctl evaluate: bad --offset \"%s\"\n", argv[i]);
				return 2;
			}
		} else if (argv[i][0] == '-' || list_path) {
			fputs(usage_text, stderr);
			return 2;
		} else {
			list_path = argv[i];
		}
	}
	if (!policy_path || !list_path) {
		fputs(usage_text, stderr);
		return 2;
	}
	if (policy_file_read(policy_path, &json, &json_len, err, sizeof(err))) {
		fprintf(stderr, "attestctl evaluate: %s\n", err);
		return 2;
	}
	pol = policy_load(json, json_len, err, sizeof(err));
	if (!pol) {
		fprintf(stderr, "attestctl evaluate: invalid policy \"%s\": %s\n", policy_path, err);
		goto out;
	}
	print_warnings(policy_path, pol);
	r = file_map(list_path, &buf, &len);
	if (r < 0) {
		fprintf(stderr, "attestctl evaluate: cannot read \"%s\": %s\n", list_path, strerror(-r));
		goto out;
	}
	log = imalog_new();
	if (!log)
		goto out;
	imalog_reset(log, buf, len, offset);
	while ((r = imalog_next(log, &e, &ierr)) == 1) {
		struct judgement j;
		bool ok;

		entries++;
		if (e.index == 0) {
			ok = judge_first(pol, &e);
		} else {
			ok = judge_measurement(pol, &e, &j);
			if (!ok)
				print_entry(&e, reason_name(j.reason), j.why);
		}
		refused += !ok;
	}
	if (r < 0) {
		fprintf(stderr, "attestctl evaluate: corrupt list: entry %llu at offset %zu: %s\n",
			(unsigned long long)ierr.index, ierr.offset, ierr.msg);
		goto out;
	}
	printf("entries %llu not_allowed %llu\n", entries, refused);
	ret = fflush(stdout) != 0 ? 2 : refused ? 1 : 0;
out:
	imalog_free(log);
	file_unmap(buf, len);
	policy_free(pol);
	free(json);
	return ret;
}
