/*
 * libFuzzer target: load arbitrary bytes as a policy (ours or Keylime). When they load, every
 * lookup must be safe, and the policy must survive a round trip: serialise, reload, serialise
 * again to the same text, with the same answers (signing keys, required prefixes and keyrings
 * included). The engine comes from the verifier's library,
 * which the fuzz rule links.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_tpm2_types.h>

#include "verifier/policy/policy.h"
#include "verifier/policy/policy_keys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void probe(const struct policy *a, const struct policy *b, const uint8_t *data, size_t size)
{
	static const uint16_t ids[] = { TPM2_ALG_SHA1, TPM2_ALG_SHA256, TPM2_ALG_SHA384,
					TPM2_ALG_SHA512, 0x0012 };
	uint8_t d[64] = { 0 };
	size_t plen = size < 200 ? size : 200;

	memcpy(d, data, size < sizeof(d) ? size : sizeof(d));
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		size_t dl = policy_alg_digest_size(ids[i]);

		/* The input's own bytes as a path: hits excludes and odd characters. */
		if (policy_check(a, (const char *)data, plen, ids[i], d, dl ? dl : 32) !=
		    policy_check(b, (const char *)data, plen, ids[i], d, dl ? dl : 32))
			abort();
		if (policy_boot_aggregate_accepts(a, ids[i], d, dl) !=
		    policy_boot_aggregate_accepts(b, ids[i], d, dl))
			abort();
		if (policy_keys_keyring(policy_keys(a), (const char *)data, plen, ids[i], d, dl) !=
		    policy_keys_keyring(policy_keys(b), (const char *)data, plen, ids[i], d, dl))
			abort();
	}
	if (policy_keys_required(policy_keys(a), (const char *)data, plen) !=
	    policy_keys_required(policy_keys(b), (const char *)data, plen) ||
	    policy_excluded(a, (const char *)data, plen) != policy_excluded(b, (const char *)data, plen))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy *p, *q = NULL;
	char err[256], *js = NULL, *js2 = NULL;

	p = policy_load((const char *)data, size, err, sizeof(err));
	if (!p) {
		if (!memchr(err, '\0', sizeof(err)))
			abort();
		return 0;
	}
	js = policy_to_json(p);
	if (!js)
		goto out;
	q = policy_load(js, strlen(js), err, sizeof(err));
	if (!q)
		abort();  /* whatever we accept, we must be able to write back */
	if (policy_entry_count(p) != policy_entry_count(q) ||
	    policy_violations_allowed(p) != policy_violations_allowed(q) ||
	    policy_boot_aggregate_mode(p) != policy_boot_aggregate_mode(q) ||
	    policy_keys_key_count(policy_keys(p)) != policy_keys_key_count(policy_keys(q)) ||
	    policy_keys_required_count(policy_keys(p)) != policy_keys_required_count(policy_keys(q)) ||
	    policy_keys_keyring_count(policy_keys(p)) != policy_keys_keyring_count(policy_keys(q)))
		abort();
	js2 = policy_to_json(q);
	if (js2 && strcmp(js, js2) != 0)
		abort();
	probe(p, q, data, size);
out:
	free(js);
	free(js2);
	policy_free(q);
	policy_free(p);
	return 0;
}
