/*
 * Reader of the kernel's IMA binary measurement list from entry N on.
 *
 * The verifier names the first entry it needs (the challenge's log_offset). A round must not
 * cost more as the list grows, so the reader remembers where entries start (a small map from
 * entry index to byte offset, learned while reading) and resumes from the nearest known entry
 * at or before N, walking records by their length fields only (it does not hash or decode
 * fields; the verifier does). The framing is proto's imalog_record(), the first step of the
 * verifier's cursor, so attestd refuses the records the verifier would; every length is
 * checked against proto/limits.h before use, and the read window is a dynbuf whose cap is set
 * from max_bytes and LIMIT_IMA_RECORD. If
 * the verifier asks for an index before every remembered one but the list's first (it lost
 * state, or the list was replaced) the walk restarts from the list's first entry; if a resumed
 * walk finds garbage, the map is dropped and the walk is redone from the first entry once.
 *
 * Indexes are absolute: entry N is the Nth record measured since boot. A kernel that lets user
 * space delete records (securityfs' runtime_measurements_deleted, beside the list: D, the
 * records deleted since boot) lists them from entry D on, so file position k holds entry D + k.
 * The reader reads D before and after each walk and walks again (once) if it moved; its map
 * follows the list's start (a deletion up to a remembered entry shifts the map, any other
 * drops it). Without that file (an older kernel, or a list given as a plain file) D is 0.
 * Entries below D are not in the list: imalist_read() says so (`gone`) and reads nothing;
 * the caller serves them from the export (imatrim.h).
 *
 * Ownership: imalist_new() copies the path; imalist_free() accepts NULL. The bytes returned by
 * imalist_read() are malloc'd and owned by the caller (free()). Not thread-safe.
 */
#ifndef ATTESTD_IMALIST_H
#define ATTESTD_IMALIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IMALIST_ROUND_MAX (16u * 1024u * 1024u) /* default payload cap per round */
#define IMALIST_CHECKPOINTS 64u                 /* remembered (index, offset) pairs */

struct imalist;

struct imalist_chunk {
	uint8_t *data;       /* whole entries from index `first` on; caller frees */
	size_t len;
	uint64_t first;      /* index of the first entry in data (the requested one) */
	uint64_t count;      /* entries in data */
	bool more;           /* stopped at max_bytes: more entries follow */
	bool short_list;     /* the list ends before `first` */
	bool gone;           /* `first` is below `deleted`: nothing read (see above) */
	uint64_t deleted;    /* the kernel's deleted count D this read used (0: none, unsupported) */
};

struct imalist *imalist_new(const char *path);
void imalist_free(struct imalist *l);

/*
 * Reads whole entries from index `from` on into *out, at most max_bytes of them (0 means
 * IMALIST_ROUND_MAX; a first record larger than that is still returned, alone); a partial
 * record at the end of the file is left for the next round.
 * Returns 0, -errno from open/read, -EBADMSG for a malformed record, -E2BIG for a length past a
 * cap. On error *out is zeroed.
 */
int imalist_read(struct imalist *l, uint64_t from, size_t max_bytes, struct imalist_chunk *out);

/*
 * As imalist_read(), stopping before entry `until` (out->more is not set for that stop).
 * -EAGAIN when the deleted count moved during two walks in a row.
 */
int imalist_read_until(struct imalist *l, uint64_t from, uint64_t until, size_t max_bytes,
		       struct imalist_chunk *out);

/*
 * The path of the securityfs file `name` beside the kernel's list `ima_list` (its basename
 * starts with binary_runtime_measurements), malloc'd (caller frees); NULL when ima_list is
 * not the kernel's list (or on ENOMEM).
 */
char *imalist_sibling(const char *ima_list, const char *name);

/*
 * A securityfs count file: one decimal number and an optional newline. 0 and *out, -ENOENT
 * when the file does not exist, -EBADMSG when it holds anything else, else read's -errno.
 */
int imalist_read_number(const char *path, uint64_t *out);

/*
 * Before enrolling: the list at `path` is readable, not a directory, and in the
 * binary format (its first record frames as one). 0, or -errno with a message naming the fix
 * in why: -EISDIR a directory, -EPROTO the ASCII list (ascii_runtime_measurements) or another
 * text file, -EBADMSG not a list, else open/read's error. An empty list is fine.
 */
int imalist_check(const char *path, char *why, size_t cap);

/* Bytes read from the file by the last imalist_read() (tests check the resume works). */
uint64_t imalist_last_bytes_read(const struct imalist *l);

/*
 * Length of the record at p if avail holds all of it: returns 1 and sets *len; 0 if more bytes
 * are needed (*len then holds a lower bound of the record size); -EBADMSG or -E2BIG for a bad
 * record (imalog_record()). Exposed for the unit tests.
 */
int imalist_record_len(const uint8_t *p, size_t avail, size_t *len);

#endif
