/*
 * policy_sign: signed policies as the verifier checks them (--policy-signers FILE, verifier(8)
 * SIGNED POLICIES; the envelope is proto/dsse.h's).
 *
 * The signers are the PEM public keys of one file (ECDSA P-256), loaded at the start and again
 * on SIGHUP (app.c swaps the set under app->reload_lock; readers hold it for reading while
 * they check). With signers, a policy or amendment version is stored only from a DSSE envelope
 * a signer's key verifies, over the exact bytes stored; the signer recorded is the Keylime keyid
 * of the key that verified (computed here), never the keyid the envelope claims. Without
 * signers, a plain policy is stored as before and an envelope's payload is stored with its
 * signature kept but unchecked (signer "": nothing was configured to check it).
 *
 * Ownership: a policy_signers set is immutable once loaded and freed by its owner (app.c); a
 * signed_policy owns its buffers (signed_policy_release(), idempotent).
 */
#ifndef VERIFIER_POLICY_SIGN_H
#define VERIFIER_POLICY_SIGN_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/evp.h>

#include "proto/dsse.h"

struct app;

struct policy_signers {
	EVP_PKEY **keys;
	size_t n;
	char (*keyids)[DSSE_KEYID_LEN + 1]; /* keyids[i] is keys[i]'s */
};

/* The signers of a PEM file (dsse_keys_parse()): 0 with *out, or -errno (the reason logged,
 * naming the file). */
int policy_signers_load(const char *path, struct policy_signers **out);
void policy_signers_free(struct policy_signers *s);

enum sign_status {
	SIGN_OK = 0,        /* out filled: an envelope that verified, or one kept unchecked, or a
			     * plain policy while no signature is required */
	SIGN_UNSIGNED,      /* a plain policy, and signers are configured */
	SIGN_MALFORMED,     /* an envelope that does not parse, or of another payload type */
	SIGN_BAD_SIGNATURE, /* an envelope no signature of which a signer's key verifies */
	SIGN_NOMEM,
};

/* A policy text as it is to be stored (store_policy_sig). */
struct signed_policy {
	char *json;        /* the policy: the envelope's payload, or the body itself */
	size_t len;
	bool is_signed;    /* it came in an envelope (signature holds it) */
	char signer[DSSE_KEYID_LEN + 1]; /* the keyid that verified; "" unchecked or unsigned */
	char *signature;   /* the envelope without its payload (JSON text); NULL when plain */
	char why[192];     /* for a status but SIGN_OK */
};

void signed_policy_release(struct signed_policy *sp);

/* Whether app's verifier requires signed policies (--policy-signers). */
bool policy_sign_required(struct app *app);

/*
 * Opens a body (a policy, or a DSSE envelope of one) against app's signers, as above. The
 * payload is not loaded as a policy here (the caller does, as for a plain one).
 */
enum sign_status policy_sign_open(struct app *app, const char *body, size_t len,
				  struct signed_policy *out);

/*
 * Checks a stored version again (rollback): its JSON and what the store keeps of its envelope
 * (signature "" for a version stored unsigned). SIGN_OK with out->signer the key that verifies
 * it now (or "" with no signers); SIGN_UNSIGNED for an unsigned version when signers are
 * configured; SIGN_BAD_SIGNATURE when no signer's key verifies it now.
 */
enum sign_status policy_sign_recheck(struct app *app, const char *json, const char *signature,
				     struct signed_policy *out);

#endif
