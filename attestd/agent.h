/*
 * The attestd state machine: enroll once, then attestation rounds.
 *
 * Enrollment: POST /v1/agents with the EK public, EK certificate and AK public; the verifier
 * answers a credential that only this TPM can open (ActivateCredential), and the secret goes
 * back with /activate. The state dir then holds a marker `enrolled` (agent id and verifier URL)
 * so later starts skip straight to rounds. A 409 "already_enrolled" answer (this AK is enrolled
 * and active for this id) counts as enrolled. A 404 "unknown_agent", 403 "not_activated" or
 * 403 "agent_reset" (retired, then reset by an operator) on a challenge drops the marker and
 * enrolls again.
 *
 * A round: challenge -> quote of the requested PCRs with the nonce (values read with it) ->
 * IMA entries from the challenge's log_offset (capped; the verifier names next_offset) ->
 * evidence -> verdict. The evidence JSON sent last is kept in state-dir/last-evidence.json.
 *
 * agent_run() never gives up: verifier or TLS failures and TPM errors are logged and retried
 * with capped exponential backoff and jitter (1 s doubling to 60 s, +-20%); between rounds it
 * waits --interval seconds. *stop (set from a signal handler) ends it between steps; waits
 * poll it at least every 200 ms.
 */
#ifndef ATTESTD_AGENT_H
#define ATTESTD_AGENT_H

#include <signal.h>

#include "attestd/config.h"

#define AGENT_BACKOFF_MIN_MS 1000u
#define AGENT_BACKOFF_MAX_MS 60000u

/* Exit codes of --once. */
enum agent_exit {
	AGENT_EXIT_TRUSTED = 0,
	AGENT_EXIT_UNTRUSTED = 1,
	AGENT_EXIT_ERROR = 2,
};

/*
 * --print-ek-sha256: the SHA-256 of the EK's marshalled TPM2B_PUBLIC (what enrollment sends as
 * ek_pub, and what `tpm2_readpublic -o` writes) as 64 hex digits and a newline on stdout, for
 * `attestctl agent add ID --ek-sha256 HEX`. Needs the TPM settings of cfg only (--tcti,
 * --ek-profile, --ek-cert); 0 or -errno (logged).
 */
int agent_print_ek_sha256(const struct attestd_config *cfg);

/*
 * cfg must have passed config_check(). With cfg->once: enroll if needed, one round, print the
 * verdict line on stdout, return an enum agent_exit. Otherwise loop until *stop; returns 0.
 */
int agent_run(const struct attestd_config *cfg, volatile sig_atomic_t *stop);

/*
 * Next retry delay in ms. *base_ms is the backoff state: 0 before the first failure (reset it
 * to 0 after a success); each call moves it to AGENT_BACKOFF_MIN_MS or doubles it up to
 * AGENT_BACKOFF_MAX_MS, and returns it with +-20% jitter so agents do not retry in step, never
 * more than AGENT_BACKOFF_MAX_MS (at the cap the jitter is below it).
 */
unsigned agent_backoff_next(unsigned *base_ms);

#endif
