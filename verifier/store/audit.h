/*
 * audit: the audit trail's hash chain, its canonical encoding and its check (docs/design.md,
 * "Audit trail"). The store appends a record for every operator action that changed something
 * and every change of an agent's trust, in the transaction of that change (store_sql.c); this
 * file says what a record's hash covers, once, for the store that writes it and for
 * `attestctl audit verify`, which checks a store offline.
 *
 * A record's hash is SHA-256 over, in order:
 *   the 16 bytes "attest-audit-v1\0";
 *   seq and time, each a big-endian 64-bit integer;
 *   kind, actor, agent, detail, each a big-endian 32-bit length and its bytes (no NUL);
 *   prev_hash: the hash of record seq - 1 (32 zero bytes for record 1).
 * seq counts from 1 without a gap. So a deleted record leaves a gap or a prev_hash that names
 * no record, a reordered one a prev_hash that does not match, an edited one a hash that does not.
 * Deleting the newest records is seen only against a head published or signed before.
 */
#ifndef VERIFIER_STORE_AUDIT_H
#define VERIFIER_STORE_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUDIT_HASH_LEN 32u
#define AUDIT_DOMAIN "attest-audit-v1" /* and its NUL: 16 bytes */

struct audit_record {
	int64_t seq;
	int64_t time;
	const char *kind;   /* audit_kind_str(): "trust", "violation.decided", ... */
	const char *actor;  /* a token name, "operator", or "verifier" for a round */
	const char *agent;  /* "" when the action names none */
	const char *detail; /* JSON object text */
	uint8_t prev_hash[AUDIT_HASH_LEN];
	uint8_t hash[AUDIT_HASH_LEN];
};

/* The hash the encoding above gives r (r->hash is not read). 0 or -EIO (OpenSSL). */
int audit_record_hash(const struct audit_record *r, uint8_t out[AUDIT_HASH_LEN]);

/*
 * A chain checked record by record, in seq order: audit_check_init(), audit_check_next() for
 * each record, audit_check_done() at the end. The first failure is kept (its seq and what broke)
 * and the rest are not judged.
 */
struct audit_check {
	int64_t next_seq;
	uint8_t prev_hash[AUDIT_HASH_LEN];
	bool failed;
	int64_t failed_seq;
	const char *why;
};
void audit_check_init(struct audit_check *c);
/* false once the chain is broken (c->why says how). */
bool audit_check_next(struct audit_check *c, const struct audit_record *r);

/*
 * What a signed head signs: the 21 bytes "attest-audit-head-v1\0", seq (big-endian 64-bit), the
 * record's hash (32 bytes), the time of signing (big-endian 64-bit): 69 bytes, signed with
 * ECDSA P-256 over SHA-256 (a DER signature).
 */
#define AUDIT_HEAD_DOMAIN "attest-audit-head-v1"
#define AUDIT_HEAD_MSG_LEN (sizeof(AUDIT_HEAD_DOMAIN) + 8u + AUDIT_HASH_LEN + 8u)
void audit_head_message(int64_t seq, const uint8_t hash[AUDIT_HASH_LEN], int64_t time,
			uint8_t out[AUDIT_HEAD_MSG_LEN]);

#endif
