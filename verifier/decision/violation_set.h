/*
 * violation_set: what one round found against the policy, one record per (reason, raw path,
 * digest) with the number of the round's entries it stands for. Pure (no I/O).
 *
 * A flood must not hide anything: 100,000 entries of one file are one record with count
 * 100,000, and every other file is a record of its own. Storage is still bounded: at most
 * `max` distinct records per round (LIMIT_ROUND_VIOLATIONS); entries of further distinct files
 * are counted, never dropped silently, and violation_set_take() turns that count into one more
 * record of reason `violations_unrecorded` that an operator must review like any other.
 *
 * Paths are the raw bytes IMA recorded (not UTF-8 necessarily, never NUL inside), kept in an
 * arena that the taken records point into. Ownership: violation_set_take() hands the record
 * array and the arena to the caller, who frees both with free() (attest_result_release());
 * violation_set_release() frees what was not taken.
 */
#ifndef VERIFIER_VIOLATION_SET_H
#define VERIFIER_VIOLATION_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/dynbuf.h"
#include "proto/limits.h"
#include "verifier/facts/reasons.h"

struct attest_violation {
	uint64_t entry;         /* the first of the round's entries it stands for */
	uint64_t last_entry;    /* the last of them */
	uint64_t count;         /* how many entries of the round it stands for */
	enum reason reason;     /* one whose kind is not REASON_KIND_VERDICT */
	const char *path;       /* raw bytes, path_len of them, NUL after them */
	size_t path_len;
	char digest[LIMIT_DIGEST_TEXT_ESCAPED + 1]; /* "sha256:hex"; an odd algorithm name escaped */
	char template_name[LIMIT_IMA_TEMPLATE_NAME + 1]; /* display text */
	int reason_slot;        /* the verdict reason naming it, or -1 (attest.c's) */
};

struct violation_set {
	struct dynbuf recs;   /* struct attest_violation[n]; path holds an arena offset until taken */
	struct dynbuf paths;  /* raw paths, each followed by a NUL */
	uint32_t *slots;      /* record index + 1, open addressing; 0 = empty */
	size_t mask;          /* slot count - 1 */
	size_t n, max;
	uint64_t key[2];      /* SipHash key: paths are chosen by the measured machine */
	uint64_t unrecorded;  /* entries of distinct files past `max` */
	uint64_t unrecorded_first;
};

/* 0, or -ENOMEM / -EIO (no randomness for the hash key). */
int violation_set_init(struct violation_set *s, size_t max);
void violation_set_release(struct violation_set *s);

/*
 * Counts one entry. Returns the record's index (>= 0) with *fresh telling whether the entry
 * made a new record; -E2BIG when it is a new file past `max` (counted as unrecorded);
 * -ENOMEM. path may be NULL when path_len is 0; digest and template_name are display text.
 */
long violation_set_add(struct violation_set *s, enum reason reason, uint64_t entry,
		       const char *path, size_t path_len, const char *digest,
		       const char *template_name, bool *fresh);

/* The record at index i (paths not resolved until taken). */
struct attest_violation *violation_set_at(struct violation_set *s, size_t i);

/*
 * Hands the records over (with one `violations_unrecorded` record appended if entries were
 * counted past `max`): *recs (NULL when none), *n, and the arena *paths they point into.
 * 0 or -ENOMEM (nothing handed over then). The set is empty afterwards.
 */
int violation_set_take(struct violation_set *s, struct attest_violation **recs, size_t *n,
		       char **paths);

#endif
