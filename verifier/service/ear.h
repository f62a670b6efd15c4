/*
 * ear: attestation results for relying parties, as signed EARs (proto/ear.h).
 *
 * After each committed round, round.c records what that verdict established (ear_record()):
 * its id and time, trusted or not, its reasons, the policy and amendment versions that judged
 * it, whether the policy judged the boot, and until when it stands (the time the agent turns
 * stale). ear_token() signs the agent's latest record on demand, with the key of
 * verifier/store/ear_keys.h, so a round costs no signature unless someone asks.
 *
 * The records live in this verifier's memory: after a restart, or for a round another verifier
 * of a fleet judged, there is none until the agent's next round here (ear_token() says so).
 * The stored verdict alone does not say which policy version judged it, and an EAR claims only
 * what is known.
 *
 * A relying party's nonce (ear_token() with nonce): the answer binds it only from a round whose
 * challenge was issued after the nonce arrived, so the evidence is provably newer than the
 * relying party's question. The first call registers the nonce and answers EAR_PENDING; the
 * agent's next challenge carries it (ear_challenge_issued(), called by round.c whenever it
 * issues one); the round that answers that challenge resolves it (ear_record() with the
 * challenge's nonce); a later call gets the EAR with "eat_nonce". A TPM quote cannot be asked
 * for out of turn (the agent has no inbound port), so this takes up to two of the agent's
 * intervals. Pending nonces are kept EAR_NONCE_TTL seconds, at most EAR_NONCES_PER_AGENT per
 * agent.
 *
 * Thread-safe.
 */
#ifndef VERIFIER_SERVICE_EAR_H
#define VERIFIER_SERVICE_EAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/ear.h"
#include "proto/evidence.h"
#include "proto/limits.h"
#include "verifier/facts/reasons.h"

struct app;
struct ear_results;

#define EAR_NONCE_TTL 600
#define EAR_NONCES_PER_AGENT 16
/* The submodule of every EAR: the one attester, a machine's TPM and IMA. */
#define EAR_SUBMOD "tpm-ima"

int ear_results_new(struct ear_results **out);
void ear_results_free(struct ear_results *r);

/* What a committed round established (round.c). */
struct ear_round {
	const char *agent;
	const struct verdict_response *verdict; /* its id, trusted, number of reasons */
	const enum reason *reasons;   /* verdict->nreasons of them (attest.h) */
	int64_t time;
	int64_t expires;         /* when the agent turns stale without a newer round */
	uint32_t interval;       /* seconds between the agent's rounds */
	const char *policy;      /* the policy's name */
	int64_t policy_version;
	int64_t amendment_version; /* 0: none */
	uint64_t boot_number;
	bool boot_judged;        /* the policy has a boot section */
	const uint8_t *challenge; /* the nonce the round answered */
	size_t challenge_len;
};
void ear_record(struct ear_results *r, const struct ear_round *round);
/* A challenge issued to agent: pending relying parties' nonces of the agent now ride on it. */
void ear_challenge_issued(struct ear_results *r, const char *agent, const uint8_t *nonce,
			  size_t len, int64_t now);
/* Drops what is kept of an agent (retired, purged, reset). */
void ear_forget(struct ear_results *r, const char *agent);

enum ear_answer {
	EAR_OK = 0,
	EAR_NO_RESULT,     /* no round of the agent recorded here yet */
	EAR_PENDING,       /* the nonce is registered (or waiting): ask again later */
	EAR_TOO_MANY,      /* EAR_NONCES_PER_AGENT nonces are pending */
	EAR_FAILED,        /* signing or memory */
};
/*
 * The signed EAR of agent's latest result (nonce NULL; with verdict_id > 0 only if the latest
 * is that verdict, else EAR_NO_RESULT), or of the result of a round whose challenge carried
 * `nonce` (a valid ear_nonce_valid() text). *token is the caller's to free. *retry_after gets
 * the seconds to wait on EAR_PENDING.
 */
enum ear_answer ear_token(struct app *app, const char *agent, int64_t verdict_id,
			  const char *nonce, int64_t now, char **token, int64_t *retry_after);

#endif
