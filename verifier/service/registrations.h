/*
 * registrations: admission's requests as a service (store.h, "Registrations"): the body of
 * POST /v1/registrations checked whole before anything is stored, so that a batch (attestctl
 * agent add --from FILE) is refused as a whole with the first bad element named.
 *
 * The body: {"registrations": [ITEM, ...]}, 1 to LIMIT_REGISTRATIONS items, each
 *   {"agent_id": ID, "ek_sha256": HEX} or {"agent_id": ID, "ek_cert": BASE64-DER},
 *   optional "policy": NAME ("default" or absent: the default policy) and
 *   optional "labels": {KEY: VALUE, ...} (proto/labels.h, at most LIMIT_LABELS);
 * no other member. ek_sha256 is the SHA-256 of the EK's marshalled TPM2B_PUBLIC (what
 * `tpm2_readpublic -o FILE` writes, what `attestd --print-ek-sha256` prints); ek_cert is the EK
 * certificate, one DER certificate (its NV fill allowed), named by the SHA-256 of its
 * SubjectPublicKeyInfo.
 */
#ifndef VERIFIER_SERVICE_REGISTRATIONS_H
#define VERIFIER_SERVICE_REGISTRATIONS_H

#include <stddef.h>

#include "verifier/store/store.h"

struct registration_batch {
	struct store_registration *regs; /* n of them; their strings and buffers are the batch's */
	size_t n;
	void *owned; /* what the batch keeps alive */
};

/*
 * Parses and checks a body (above) into out. -EINVAL with why (an English sentence naming
 * "registrations[I]" for a bad item) if it is not one; -ENOMEM. Release out either way.
 */
int registrations_parse(const char *body, size_t len, struct registration_batch *out,
			char *why, size_t cap);
void registration_batch_release(struct registration_batch *b);

#endif
