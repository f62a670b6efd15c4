/*
 * IMA binary measurement list codec: a zero-copy streaming cursor.
 *
 * Input is the content of /sys/kernel/security/ima/binary_runtime_measurements (or any slice of
 * it that starts at an entry boundary: the agent sends entries from index N on). Every u32 is
 * little-endian (x86; see docs/design.md, IMA measurement list). Per entry the cursor checks each length against what
 * remains and against proto/limits.h, decodes the template fields, and verifies the SHA-1
 * template hash against the template data; a violation entry (template hash of 20 zero bytes)
 * is not hashed. The first error stops the cursor; it reports the entry index, the byte offset
 * of the entry start and a static message.
 *
 * Ownership: the cursor and every `struct ima_entry` point into the caller's buffer, which must
 * outlive them. Nothing is copied. Create a cursor once with imalog_new() (NULL on allocation
 * failure), point it at buffers with imalog_reset() as often as needed, and release it with
 * imalog_free() (accepts NULL). A cursor is not thread-safe; use one per thread. Decoding never
 * allocates.
 */
#ifndef PROTO_IMALOG_H
#define PROTO_IMALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/limits.h"

#define IMA_TEMPLATE_HASH_LEN 20u /* SHA-1, the only template hash in the 6.1 binary list */

/* How the template data is laid out and hashed. */
enum ima_template_kind {
	IMA_TEMPLATE_IMA,     /* legacy "ima": d[20] | u32 n_len | n, hashed with n padded to 256 */
	IMA_TEMPLATE_FIELDS,  /* a known template or field list ("ima-ng", "d-ng|n-ng|sig", ...) */
	IMA_TEMPLATE_UNKNOWN, /* unknown name: template data split into u32-length fields only */
};

/*
 * What a file digest is a digest of. d-ngv2 names it ("ima:" or "verity:", kernel 5.19+);
 * d-ng and d are always IMA's hash of the file. A digest is compared, and a signature checked,
 * only against one of the same type: the fs-verity digest of a file is not its hash.
 */
enum ima_digest_type {
	IMA_DIGEST_IMA = 0, /* IMA's hash of the file's content (d, d-ng, d-ngv2 "ima:") */
	IMA_DIGEST_VERITY,  /* the file's fs-verity digest (d-ngv2 "verity:") */
	IMA_DIGEST_OTHER,   /* a d-ngv2 type the kernel does not write: comparable to nothing */
};

/* One decoded entry; every pointer points into the buffer given to imalog_reset(). */
struct ima_entry {
	uint64_t index;       /* position in the whole list (first_index + entries before it) */
	size_t offset;        /* byte offset of the entry start in the buffer */
	size_t end;           /* byte offset just past the entry: resume here */
	uint32_t pcr;         /* PCR the kernel extended (10 unless a policy rule says pcr=) */
	const uint8_t *template_hash; /* IMA_TEMPLATE_HASH_LEN bytes, verified unless violation */
	bool violation;       /* template hash is all zero: extend 0xff, ignore the data */

	const char *template_name; /* not NUL-terminated */
	uint32_t template_name_len;
	enum ima_template_kind kind;

	/*
	 * The template data as stored in the file. For IMA_TEMPLATE_FIELDS/UNKNOWN this is exactly
	 * what H_bank hashes. For IMA_TEMPLATE_IMA it is d[20] | u32 n_len | n and the hash input
	 * is rebuilt by imalog_template_digest().
	 */
	const uint8_t *data;
	uint32_t data_len;

	/*
	 * File digest: from d-ng/d-ngv2 ("<alg>:\0" digest) or d (20 raw bytes, sha1). digest is
	 * NULL if the template has neither, or for a violation whose digest field is malformed
	 * (kernels differ there). digest_alg is the TPM2_ALG_ID when the name is sha1/sha256/
	 * sha384/sha512 and 0 otherwise; digest_alg_name is the name as recorded (no ':').
	 */
	const char *digest_alg_name;
	uint32_t digest_alg_name_len;
	uint16_t digest_alg;
	enum ima_digest_type digest_type;
	const uint8_t *digest;
	uint32_t digest_len;

	/* Path from n-ng or n, without its NUL (never contains one); NULL if absent. */
	const char *path;
	uint32_t path_len;

	/* Optional fields; NULL if the template has no such field, non-NULL with len 0 if empty. */
	const uint8_t *sig;
	uint32_t sig_len;
	const uint8_t *buf;
	uint32_t buf_len;
};

/* Where and why parsing stopped. msg is a static string; index/offset locate the bad entry. */
struct ima_error {
	uint64_t index;
	size_t offset;
	int err; /* the -errno imalog_next() returned */
	const char *msg;
};

/*
 * One record framed but not decoded: the header read, the template name and data located, every
 * length checked against what is there and against proto/limits.h. This is the first step of
 * imalog_next(), exposed for readers that only need record boundaries (attestd walks the
 * kernel's file by it); both therefore accept and reject the same framing.
 */
struct ima_record {
	uint32_t pcr;                 /* < PCR_COUNT */
	const uint8_t *template_hash; /* IMA_TEMPLATE_HASH_LEN bytes, not checked */
	const char *template_name;    /* 1..LIMIT_IMA_TEMPLATE_NAME bytes, not NUL-terminated */
	uint32_t template_name_len;
	bool legacy;                  /* template "ima": d[20] | u32 n_len | n, no data length */
	const uint8_t *data;          /* template data (legacy: d[20] | u32 n_len | n) */
	uint32_t data_len;
	size_t len;                   /* bytes of the whole record */
};

/*
 * Frames the record at p[0..avail). Returns 1 with *rec filled; 0 if avail ends inside the
 * record (rec->len then holds a lower bound of the record size and *msg says what is cut); or
 * -EBADMSG (malformed) or -E2BIG (a length past a proto/limits.h cap) with *msg set. *msg is a
 * static string. Reads nothing at or past p + avail; p may be NULL when avail is 0. Little-endian
 * u32s, as imalog_next().
 */
int imalog_record(const uint8_t *p, size_t avail, struct ima_record *rec, const char **msg);

struct imalog;

struct imalog *imalog_new(void);
void imalog_free(struct imalog *log);

/*
 * Points the cursor at buf[0..len), which must begin at an entry boundary; first_index is the
 * list index of the entry at buf[0]. Clears a previous error.
 */
void imalog_reset(struct imalog *log, const uint8_t *buf, size_t len, uint64_t first_index);

/*
 * Decodes the next entry into *e. Returns 1 with *e filled, 0 at the clean end of the buffer, or
 * a negative errno: -EBADMSG (malformed or trailing bytes: a partial entry at the end is an
 * error, since the agent sends whole entries), -E2BIG (a length past a proto/limits.h cap),
 * -EPROTO (template hash does not match the data: the list is corrupt). On error *err (if non-NULL) is filled and every later call returns the same error.
 */
int imalog_next(struct imalog *log, struct ima_entry *e, struct ima_error *err);

/*
 * Turns the SHA-1 template hash check off for this cursor (structure is still checked in
 * full). Only for a second pass over bytes that another cursor verifies at the same time,
 * such as a replay that hashes each bank on its own thread; never for input nobody checks.
 */
void imalog_skip_hash_check(struct imalog *log, bool skip);

/* Byte offset of the next entry to decode (the end of the last good one). */
size_t imalog_offset(const struct imalog *log);
/* Index the next entry will get. */
uint64_t imalog_index(const struct imalog *log);

/*
 * Computes H_alg(template data) of an entry into out (the digest size of alg, a TPM2_ALG_ID:
 * sha1, sha256, sha384 or sha512), rebuilding the padded form for template `ima`. This is the
 * value IMA extends into the bank of alg. Returns 0 or -EINVAL for another alg. Does not
 * allocate.
 */
int imalog_template_digest(uint16_t alg, const struct ima_entry *e, uint8_t *out);

#endif
