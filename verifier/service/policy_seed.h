/*
 * policy_seed: --policy FILE seeds the store's default policy at start (verifier(8), --policy,
 * --policy-replace).
 *
 * The file becomes the stored default only when the store has none, or with replace
 * (--policy-replace). A store that has one keeps it, approvals and rollbacks included, whatever
 * a unit file passes on every restart; the log says which copy is used. The file may be a DSSE
 * envelope (attestctl policy sign): an envelope is checked as a PUT's (policy_sign.h) and
 * refused when it does not verify, and with --policy-signers an unsigned file is refused when
 * it would be stored. What an imported Keylime policy does not enforce as Keylime would is
 * logged, one line each.
 */
#ifndef VERIFIER_SERVICE_POLICY_SEED_H
#define VERIFIER_SERVICE_POLICY_SEED_H

#include <stdbool.h>

struct app;

/* 0 (the store's default kept, seeded or replaced), or -errno (logged). Before the server
 * starts: app->store, app->signers set. */
int policy_seed_default(struct app *app, const char *file, bool replace);

#endif
