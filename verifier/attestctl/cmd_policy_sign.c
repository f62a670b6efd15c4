/*
 * attestctl policy sign --key KEY.pem FILE [--out FILE]
 *
 * Signs a policy for a verifier that takes only signed ones (--policy-signers, verifier(8)
 * SIGNED POLICIES): writes the DSSE envelope (proto/dsse.h, the format Keylime's
 * `keylime-policy sign` writes: ECDSA P-256 over SHA-256, the keyid Keylime's) whose payload is
 * the policy exactly as `attestctl policy put` would send it (key files the policy names put
 * inline, policy_file.h), so what the verifier stores is the signed bytes. The payload type says
 * what the payload is: Keylime's ("application/vnd.keylime+json") for a Keylime runtime policy,
 * as keylime-policy writes it, ours for a policy of ours. The envelope goes to --out (written
 * whole, mode 0644) or stdout; `attestctl policy put NAME ENVELOPE` sends it as it is.
 *
 * KEY.pem is the signer's private key (PEM, PKCS#8 or SEC1 "EC PRIVATE KEY", ECDSA P-256); its
 * public half goes into the verifier's --policy-signers file. A policy that does not load is not
 * signed, nor an envelope (sign the policy itself). Exit 0, 2 usage, I/O or a policy or key
 * that does not load.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/pem.h>

#include "common/file.h"
#include "proto/dsse.h"
#include "verifier/attestctl/commands.h"
#include "verifier/policy/policy.h"
#include "verifier/policy/policy_file.h"

static const char usage_text[] = "usage: attestctl policy sign --key KEY.pem FILE [--out FILE]\n";

/* The private key of a PEM file, one a signer may hold; NULL after a message. */
static EVP_PKEY *load_key(const char *path)
{
	EVP_PKEY *k = NULL;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "attestctl: cannot open \"%s\": %s\n", path, strerror(errno));
		return NULL;
	}
	k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!k) {
		fprintf(stderr, "attestctl: \"%s\" holds no PEM private key\n", path);
		return NULL;
	}
	if (!dsse_key_ok(k)) {
		fprintf(stderr, "attestctl: \"%s\" is not an ECDSA P-256 key (what policy signers"
			" hold)\n", path);
		EVP_PKEY_free(k);
		return NULL;
	}
	return k;
}

int cmd_policy_sign(int argc, char **argv)
{
	const char *key_path = NULL, *out_path = NULL, *file = NULL, *why = "";
	char *text = NULL, *env = NULL, err[512] = "";
	struct dsse_envelope probe;
	enum dsse_status ds;
	struct policy *p = NULL;
	EVP_PKEY *key = NULL;
	size_t len = 0;
	int ret = 2;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--key") && i + 1 < argc && !key_path)
			key_path = argv[++i];
		else if (!strcmp(argv[i], "--out") && i + 1 < argc && !out_path)
			out_path = argv[++i];
		else if (argv[i][0] != '-' && !file)
			file = argv[i];
		else {
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (!key_path || !file) {
		fputs(usage_text, stderr);
		return 2;
	}
	if (!(key = load_key(key_path)))
		return 2;
	if (policy_file_read(file, &text, &len, err, sizeof(err))) {
		fprintf(stderr, "attestctl: %s\n", err);
		goto out;
	}
	memset(&probe, 0, sizeof(probe));
	ds = dsse_parse(text, len, len, &probe, &why);
	dsse_envelope_release(&probe);
	if (ds == DSSE_OK || ds == DSSE_BAD_TYPE) {
		fprintf(stderr, "attestctl: \"%s\" is already a DSSE envelope: sign the policy itself\n",
			file);
		goto out;
	}
	p = policy_load(text, len, err, sizeof(err));
	if (!p) {
		fprintf(stderr, "attestctl: policy \"%s\" does not load: %s\n", file, err);
		goto out;
	}
	print_warnings(file, p);
	env = dsse_sign(policy_is_keylime(p) ? DSSE_TYPE_KEYLIME : DSSE_TYPE_POLICY,
			(const uint8_t *)text, len, key);
	if (!env) {
		fprintf(stderr, "attestctl: signing \"%s\" failed\n", file);
		goto out;
	}
	if (out_path) {
		int r = file_write_atomic(out_path, env, strlen(env), 0644);

		if (r) {
			fprintf(stderr, "attestctl: cannot write \"%s\": %s\n", out_path, strerror(-r));
			goto out;
		}
	} else if (printf("%s\n", env) < 0 || fflush(stdout)) {
		fprintf(stderr, "attestctl: cannot write the envelope\n");
		goto out;
	}
	ret = 0;
out:
	policy_unref(p);
	EVP_PKEY_free(key);
	free(text);
	free(env);
	return ret;
}
