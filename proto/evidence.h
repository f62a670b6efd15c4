/*
 * JSON codecs for the agent <-> verifier protocol (docs/design.md, Protocol), on jansson.
 *
 * Wire format (binary fields base64, digests and nonces lowercase hex):
 *
 *   POST /v1/agents                      enroll_request
 *     {"agent_id": "web-01", "ek_pub": B64(TPM2B_PUBLIC), "ek_cert": B64(DER),
 *      "ak_pub": B64(TPM2B_PUBLIC),
 *      "ek_chain": B64(DER certificates, one after the other)}           (optional)
 *   201                                  enroll_response
 *     {"agent_id": "web-01", "credential_blob": B64(TPM2B_ID_OBJECT),
 *      "encrypted_secret": B64(TPM2B_ENCRYPTED_SECRET)}
 *   POST /v1/agents/{id}/activate        activate_request   {"secret": B64}
 *   POST /v1/agents/{id}/challenges      (empty body)
 *   201                                  challenge
 *     {"nonce": HEX, "expires_at": UNIX_SECONDS, "log_offset": N,
 *      "pcr_selection": {"sha1": [0,1,...,10], "sha256": [0,...,10]},
 *      "boot_log_sha256": HEX}                                       (optional)
 *   POST /v1/agents/{id}/evidence        evidence
 *     {"nonce": HEX, "attest": B64(TPMS_ATTEST), "signature": B64(TPMT_SIGNATURE),
 *      "pcrs": {"sha1": {"0": HEX, ..., "10": HEX}, "sha256": {...}},
 *      "log_offset": N, "log": B64(binary IMA entries from entry N on),
 *      "boot_log": B64(the firmware's TCG event log), "boot_cmdline": TEXT,  (both optional)
 *      "interval": SECONDS, "want_ear": true,                               (both optional)
 *      "log_deleted": D, "log_more": true}                                  (optional)
 *   200                                  verdict_response
 *     {"verdict": "trusted"|"untrusted", "verdict_id": N, "next_offset": N,
 *      "reasons": [{"code": "not_in_allowlist", "detail": "/usr/bin/x sha256:ab..", "entry": 42}],
 *      "next_challenge": challenge,                                     (optional)
 *      "ear": JWT}                                            (optional: asked with want_ear)
 *   errors (any status >= 400)           {"error": {"code": "bad_request", "message": "..."}}
 *
 * One exchange per round: a verdict carries "next_challenge", the challenge of the agent's
 * next round, issued from the state the verdict committed (what POST .../challenges would
 * answer then). The agent answers it at its next round without asking, so a round is one
 * request; it asks (POST .../challenges) when it holds none, or when the evidence answering
 * one is refused as nonce_unknown (the verifier restarted: challenges live in its memory),
 * nonce_expired, or no_challenge (a body over 64 KiB is read only for a challenge the agent
 * asked for, since every active agent holds a given one: SECURITY.md), or rejudgement (the
 * agent's policy or amendment changed since its boot was judged: the challenge it asks for
 * names entry 0, and it sends its whole list, judged again). The verifier offers one
 * only when the agent's interval is at most half of --nonce-ttl, and keeps one such challenge
 * per agent outstanding (a newer replaces it), so a client that ignores them is not
 * rate-limited by them. Freshness is bounded by --nonce-ttl either way (SECURITY.md, "What a
 * trusted verdict proves"); an honest agent now quotes up to one interval after the issue
 * instead of just after asking. An older agent ignores the field; an older verifier sends none.
 *
 * The boot log: "boot_log" is /sys/kernel/security/tpm0/binary_bios_measurements
 * whole (at most LIMIT_EVENTLOG_BYTES) and "boot_cmdline" the kernel's /proc/cmdline without its
 * newline (at most LIMIT_CMDLINE bytes, no NUL); an agent sends them together. The verifier
 * keeps the last log an agent sent and checks it against every later quote; its challenge
 * names that log's SHA-256 in "boot_log_sha256", and the agent sends its log (again) whenever
 * the one it reads now has another digest: in the first round of a boot whose log differs,
 * after the verifier lost it, and whenever the firmware appended to it. An older verifier
 * ignores both fields; an older agent sends neither (a boot policy then finds no log).
 *
 * The interval: the seconds attestd waits between rounds (1-LIMIT_AGENT_INTERVAL).
 * The verifier stores it with the round it came with, so only evidence whose quote checked
 * sets it (the challenge request carries none: anyone may ask for a challenge), and an agent
 * silent for several intervals is stale. An agent that sends none gets the verifier's default.
 *
 * The passport (want_ear): an agent that presents its attestation result to local services
 * asks for it with "want_ear": true, and the verdict carries "ear", the verifier's signed EAR of
 * this very verdict (proto/ear.h; verifier(8), ATTESTATION RESULTS). Only then: a signature per
 * round costs the verifier time nobody asked for. An older verifier ignores the field and
 * sends none; the agent then keeps the file it has (and says so).
 *
 * Deleted records (log_deleted): on a kernel that lets user space delete measurement records
 * from its memory (kernel-patches/, securityfs' runtime_measurements_deleted), entry indexes
 * stay absolute: entry N is the Nth measured since boot, deleted or not. attestd exports what it
 * deletes and serves entries below the kernel's deleted count from that export, so log_offset
 * is always the index asked for when it can. When the export lacks entries the verifier asked
 * for (lost, or deleted by another program), the agent sends from the first entry it has
 * (log_offset = D) with "log_deleted", the kernel's deleted count D, and the verifier answers
 * `log_records_deleted`: it never trusts a list it cannot replay. "log_deleted" is sent only
 * then, never with a list that starts where it was asked to: the verifier judges evidence that
 * carries it even while a policy change waits for the list from entry 0 (asking again would
 * get the same answer), so an agent answering a challenge given before the change with it would
 * be told `log_records_deleted` round after round instead of being asked for entry 0. The
 * field is the agent's word, outside the quote: it only chooses which untrusted reason is
 * given. An older verifier ignores it; an older agent never deletes and sends none.
 *
 * More than one request holds (log_more): a list larger than one round's cap (attestd's
 * IMALIST_ROUND_MAX, 16 MiB) is sent over several rounds. The agent says "log_more": true when
 * it read entries past those it sends; the quote then covers entries the request does not carry,
 * so no prefix may replay to it. The verifier then keeps the whole chunk's replay as unconfirmed
 * (verdict untrusted `log_incomplete`, next_offset past the chunk), and the next round goes on
 * from there: the first quote that a prefix of the continued replay matches confirms every entry
 * before it, as one hash chain from the boot's first entry. An older verifier ignores the field
 * (and answers pcr_mismatch, as before); an older agent never sends it.
 *
 * Parsers: the input is untrusted. They check every type and size (limits.h), reject unknown
 * values, and on failure return -EINVAL with *why pointing to a static string naming the field.
 * Parsed structures own their buffers: release with the matching *_release() (NULL-safe,
 * idempotent). Encoders return a malloc'd NUL-terminated JSON string (caller frees) or NULL.
 */
#ifndef PROTO_EVIDENCE_H
#define PROTO_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/limits.h"
#include "proto/pcrs.h"

/* Agent ids: 1..LIMIT_AGENT_ID chars of [A-Za-z0-9._-], not starting with '.'. */
bool agent_id_valid(const char *id);

/*
 * Codes (a verdict reason's, an error's): 1..31 chars of [a-z0-9_]. Parsers refuse any other,
 * so that a code from the network can be printed, logged and written to a status line as it is
 * (a code with a newline or a terminal escape would forge lines of its own).
 */
bool code_valid(const char *code);

struct enroll_request {
	char agent_id[LIMIT_AGENT_ID + 1];
	uint8_t *ek_pub;
	size_t ek_pub_len;
	uint8_t *ek_cert;
	size_t ek_cert_len;
	uint8_t *ak_pub;
	size_t ak_pub_len;
	uint8_t *ek_chain; /* intermediates between ek_cert and an anchor; NULL if none */
	size_t ek_chain_len;
};
int enroll_request_parse(const char *json, size_t len, struct enroll_request *out, const char **why);
char *enroll_request_encode(const struct enroll_request *req);
void enroll_request_release(struct enroll_request *req);

struct enroll_response {
	char agent_id[LIMIT_AGENT_ID + 1];
	uint8_t *credential_blob;
	size_t credential_blob_len;
	uint8_t *encrypted_secret;
	size_t encrypted_secret_len;
};
int enroll_response_parse(const char *json, size_t len, struct enroll_response *out, const char **why);
char *enroll_response_encode(const struct enroll_response *resp);
void enroll_response_release(struct enroll_response *resp);

struct activate_request {
	uint8_t secret[LIMIT_DIGEST];
	size_t secret_len;
};
int activate_request_parse(const char *json, size_t len, struct activate_request *out, const char **why);
char *activate_request_encode(const struct activate_request *req);

struct challenge {
	uint8_t nonce[LIMIT_NONCE_BYTES];
	size_t nonce_len;
	int64_t expires_at;
	uint64_t log_offset;
	struct pcr_set selection; /* masks only; values unused */
	bool has_boot_log_sha256;  /* the verifier holds a boot log with this digest */
	uint8_t boot_log_sha256[32];
};
int challenge_parse(const char *json, size_t len, struct challenge *out, const char **why);
char *challenge_encode(const struct challenge *c);

struct evidence {
	uint8_t nonce[LIMIT_NONCE_BYTES];
	size_t nonce_len;
	uint8_t *attest;
	size_t attest_len;
	uint8_t *signature;
	size_t signature_len;
	struct pcr_set pcrs;
	uint64_t log_offset;
	uint8_t *log;
	size_t log_len;
	uint8_t *boot_log;  /* NULL: not sent */
	size_t boot_log_len;
	char *boot_cmdline; /* NULL: not sent */
	uint32_t interval;  /* seconds to the agent's next round; 0: not sent */
	bool want_ear;      /* the verdict should carry the signed EAR ("want_ear": true) */
	uint64_t log_deleted; /* D, when the list starts there, after the entry asked; 0: not sent */
	bool log_more;        /* the agent read more entries than `log` carries ("log_more") */
};
int evidence_parse(const char *json, size_t len, struct evidence *out, const char **why);
char *evidence_encode(const struct evidence *ev);
void evidence_release(struct evidence *ev);


struct verdict_reason {
	char code[32];
	char detail[LIMIT_VERDICT_DETAIL];
	int64_t entry; /* IMA entry index, -1 if none */
};

struct verdict_response {
	bool trusted;
	int64_t verdict_id;
	uint64_t next_offset;
	unsigned nreasons;
	struct verdict_reason reason[LIMIT_VERDICT_REASONS];
	/*
	 * The challenge for the agent's next round, issued with this verdict so that a round is
	 * one exchange (above, "One exchange per round"); absent when the verifier does not
	 * offer one. The agent asks POST .../challenges when it has none or it was refused.
	 */
	bool has_next_challenge;
	struct challenge next_challenge;
	/* The EAR of this verdict (encode only: borrowed, NULL for none; the parser leaves it
	 * NULL: verdict_response_ear() reads it). */
	const char *ear;
};
/* The "ear" of a verdict_response's JSON as a new string (caller frees); NULL when absent. */
char *verdict_response_ear(const char *json, size_t len);
int verdict_response_parse(const char *json, size_t len, struct verdict_response *out, const char **why);
char *verdict_response_encode(const struct verdict_response *v);

/* Which error answers mean "ask for a challenge and answer that one" (One exchange per round,
 * above) is the table's (errors.h: PROTO_ACTION_NEW_CHALLENGE). */
/* {"error": {"code": CODE, "message": MESSAGE}}; caller frees. */
char *error_encode(const char *code, const char *message);
int error_parse(const char *json, size_t len, char *code, size_t code_cap, char *msg, size_t msg_cap);

#endif
