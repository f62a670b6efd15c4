/*
 * attestctl policy-check POLICY [PATH ALG:HEX]
 *
 * Loads a policy file (ours or Keylime) the way the verifier does and prints a summary; with a
 * path and digest, prints the decision the verifier would reach for that measurement (by the
 * digest list: a signature needs the whole entry, see `attestctl evaluate`). Key files the
 * policy names are read as `policy put` reads them; import warnings go to stderr. PATH is
 * taken as IMA records it, so spaces are turned into '_'. Exit 0 when the policy loads and the
 * measurement (if any) is allowed or excluded, 1 when it is refused or the policy is invalid,
 * 2 for usage or I/O errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/encoding.h"
#include "verifier/attestctl/commands.h"
#include "verifier/policy/boot_policy.h"
#include "verifier/policy/policy.h"
#include "verifier/policy/policy_file.h"
#include "verifier/policy/policy_keys.h"

static const char usage_text[] = "usage: attestctl policy-check POLICY [PATH ALG:HEX]\n";

/* Import warnings of a Keylime policy, one stderr line each. */
void print_warnings(const char *file, const struct policy *p)
{
	const char *w;
	size_t n;

	for (size_t i = 0; (w = policy_warning(p, i, &n)); i++)
		fprintf(stderr, "attestctl: warning: %s: %.*s\n", file, (int)n, w);
}

int cmd_policy_check(int argc, char **argv)
{
	char *buf = NULL;
	struct policy *pol = NULL;
	enum policy_decision d;
	uint8_t digest[64];
	char err[512], *path = NULL;
	const char *colon, *text;
	enum ima_digest_type type = IMA_DIGEST_IMA;
	size_t len = 0, dlen;
	uint16_t alg;
	ssize_t n;
	int rc = 2, r;

	if (argc != 2 && argc != 4) {
		fputs(usage_text, stderr);
		return 2;
	}
	r = policy_file_read(argv[1], &buf, &len, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "attestctl: %s\n", err);
		return 2;
	}
	pol = policy_load(buf, len, err, sizeof(err));
	if (!pol) {
		fprintf(stderr, "attestctl: invalid policy \"%s\": %s\n", argv[1], err);
		rc = 1;
		goto out;
	}
	print_warnings(argv[1], pol);
	if (argc == 2) {
		const struct policy_keys *k = policy_keys(pol);

		printf("format %s, %zu paths, %zu package versions, violations %s, boot_aggregate %s, %zu signing keys, %zu signed prefixes, %zu keyrings\n",
		       policy_is_keylime(pol) ? "keylime" : "attest", policy_entry_count(pol),
		       policy_package_count(pol),
		       policy_violations_allowed(pol) ? "ignore" : "fail",
		       policy_boot_aggregate_mode(pol) == POLICY_BOOT_AGGREGATE_LIST
			       ? "list"
			       : "any-matching-pcrs",
		       policy_keys_key_count(k), policy_keys_required_count(k),
		       policy_keys_keyring_count(k));
		if (policy_boot(pol)) {
			const struct boot_policy *bp = policy_boot(pol);

			printf("boot: %zu kernels, %zu boot applications, %zu firmware events, Secure Boot %s,"
			       " pk/kek/db/dbx %s, command line %s\n",
			       bp->kernels.n, bp->boot_apps.n, bp->firmware.n,
			       bp->secure_boot == BOOT_SECURE_ON ? "on" : bp->secure_boot == BOOT_SECURE_OFF ? "off" : "any",
			       bp->pk.set || bp->kek.set || bp->db.set || bp->dbx.set ? "judged" : "not judged",
			       bp->cmdline.set ? "judged" : "not judged");
		} else {
			printf("boot: not judged (no boot section)\n");
		}
		rc = 0;
		goto out;
	}
	/* A digest typed as d-ngv2 types it: "ima:" IMA's file hash (the default), "verity:". */
	text = argv[3];
	if (!strncmp(text, "ima:", 4)) {
		text += 4;
	} else if (!strncmp(text, "verity:", 7)) {
		type = IMA_DIGEST_VERITY;
		text += 7;
	}
	colon = strchr(text, ':');
	alg = colon ? policy_alg_from_name(text, (size_t)(colon - text)) : 0;
	dlen = policy_alg_digest_size(alg);
	n = alg ? hex_decode(colon + 1, strlen(colon + 1), digest, sizeof(digest)) : -1;
	if (!alg || n < 0 || (size_t)n != dlen) {
		fprintf(stderr, "attestctl: \"%s\" is not [ima:|verity:]ALG:HEX with ALG sha1, sha256, sha384 or sha512 and a digest of that size\n",
			argv[3]);
		goto out;
	}
	path = strdup(argv[2]);
	if (!path)
		goto out;
	for (char *c = path; *c; c++)
		if (*c == ' ')
			*c = '_';
	d = policy_check_typed(pol, path, strlen(path), type, alg, digest, dlen);
	{
		enum reason refused;

		/* a refusal by its reason's name; a pass as "allowed" or "excluded" */
		if (policy_decision_reason(d, &refused))
			printf("%s\n", reason_name(refused));
		else
			printf("%s\n", d == POLICY_EXCLUDED ? "excluded" : "allowed");
	}
	{
		char why[POLICY_EXPLANATION_MAX];

		if (policy_explain(pol, path, strlen(path), d, why, sizeof(why)))
			printf("%s\n", why);
	}
	rc = d == POLICY_ALLOWED || d == POLICY_EXCLUDED ? 0 : 1;
out:
	free(path);
	policy_free(pol);
	free(buf);
	return rc;
}
