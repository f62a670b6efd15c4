/*
 * attestctl policy-learn LIST [--out FILE]
 *
 * Builds a policy from the IMA list of a machine known to be good (trust on first use, as
 * Keylime's create_runtime_policy does from a list): every measured path with the digest it had.
 * Violation entries and boot_aggregate are not learned; the policy checks boot_aggregate
 * against the quoted PCRs. Exit 0, 1 for a corrupt list, 2 usage or I/O error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "proto/imalog.h"
#include "proto/limits.h"
#include "verifier/attestctl/commands.h"
#include "verifier/policy/policy.h"

static const char usage_text[] = "usage: attestctl policy-learn LIST [--out FILE]\n";

int cmd_policy_learn(int argc, char **argv)
{
	const char *list = NULL, *out_path = NULL;
	const uint8_t *buf = NULL;
	size_t len = 0, learned = 0;
	struct imalog *log = NULL;
	struct policy *pol = NULL;
	struct ima_entry e;
	struct ima_error err;
	char *json = NULL;
	static char path[LIMIT_IMA_PATH + 1];
	int rc = 2, r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out_path = argv[++i];
		else if (argv[i][0] != '-' && !list)
			list = argv[i];
		else {
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (!list) {
		fputs(usage_text, stderr);
		return 2;
	}
	if ((r = file_map(list, &buf, &len)) < 0) {
		fprintf(stderr, "attestctl: cannot read \"%s\": %s\n", list, strerror(-r));
		return 2;
	}
	log = imalog_new();
	pol = policy_new();
	if (!log || !pol)
		goto out;
	imalog_reset(log, buf, len, 0);
	while ((r = imalog_next(log, &e, &err)) == 1) {
		if (e.violation || e.index == 0 || !e.path || !e.digest || !e.digest_alg)
			continue;
		if (e.path_len > LIMIT_IMA_PATH)
			continue; /* the policy cannot hold it; the verifier will flag it */
		memcpy(path, e.path, e.path_len);
		path[e.path_len] = '\0';
		r = policy_add_digest(pol, path, e.digest_alg, e.digest, e.digest_len);
		if (r < 0) {
			fprintf(stderr, "attestctl: entry %llu: cannot add \"%.*s\": %s\n",
				(unsigned long long)e.index, (int)e.path_len, e.path, strerror(-r));
			rc = 1;
			goto out;
		}
		learned++;
	}
	if (r < 0) {
		fprintf(stderr, "attestctl: corrupt list: entry %llu at byte %zu: %s\n",
			(unsigned long long)err.index, err.offset, err.msg);
		rc = 1;
		goto out;
	}
	json = policy_to_json(pol);
	if (!json)
		goto out;
	FILE *f = out_path ? fopen(out_path, "w") : stdout;
	if (!f) {
		fprintf(stderr, "attestctl: cannot write \"%s\": %s\n", out_path, strerror(errno));
		goto out;
	}
	fputs(json, f);
	fputc('\n', f);
	if ((out_path ? fclose(f) : fflush(f)) != 0)
		goto out;
	fprintf(stderr, "learned %zu measurements of %zu paths\n", learned, policy_entry_count(pol));
	rc = 0;
out:
	free(json);
	policy_free(pol);
	imalog_free(log);
	file_unmap(buf, len);
	return rc;
}
