/*
 * audit_sign: signs the head of the audit trail (verifier/store/audit.h) with a key the
 * verifier keeps, so that deleting the newest records, or rewriting the trail without the key,
 * is found by `attestctl audit verify`. The key is an EC P-256 private key in PEM: the file
 * given (--audit-key), else STATE_DIR/audit-key.pem; made (0600) if missing. A thread of its
 * own signs the head every `interval` seconds when it moved since the last signature, and once
 * at stop; each signature is stored in the store (store_audit_signed_put()) and can be read
 * back (GET /v1/audit/head).
 */
#ifndef VERIFIER_AUDIT_SIGN_H
#define VERIFIER_AUDIT_SIGN_H

#include <stdint.h>

struct store;
struct statedir;
struct audit_signer;

#define AUDIT_SIGN_INTERVAL_DEFAULT 60
#define AUDIT_KEY_FILE "audit-key.pem"

/* key_file NULL: STATE_DIR/audit-key.pem. 0, or -errno (logged). */
int audit_signer_start(struct store *st, const struct statedir *sd, const char *key_file,
		       unsigned interval, struct audit_signer **out);
/* Signs the head now if it moved since the last signature. 0 or -errno (logged). */
int audit_signer_sign(struct audit_signer *s);
/* The public key as PEM text (the signer's; valid until stop). */
const char *audit_signer_public_pem(const struct audit_signer *s);
/* Signs a last time and stops; NULL-safe. */
void audit_signer_stop(struct audit_signer *s);

#endif
