/*
 * imatrim: the kernel's measurement list kept bounded in memory. Records the verifier has
 * acknowledged are exported to a file and then deleted from kernel memory; the entries below
 * the kernel's deleted count are served from that file (docs/design.md, "Deleted measurement
 * records").
 *
 * The kernel (kernel-patches/; securityfs, beside binary_runtime_measurements):
 *   runtime_measurements_count    C: records measured since boot, deleted ones included
 *   runtime_measurements_deleted  D: records deleted since boot; writing H deletes every
 *                                 record below entry H (absolute: H <= D does nothing, so a
 *                                 retried write is harmless; H > C is refused)
 * A kernel without the deleted file cannot delete: D is 0 and nothing is deleted.
 *
 * The export (--ima-export) holds this boot's records from entry 0 on, verbatim
 * (binary_runtime_measurements' format): its record k is entry k. What holds:
 *  - records are appended to it and it is fsync'd before the kernel is asked to delete them, so
 *    a crash anywhere loses nothing; it may then hold records at or past D (the deletion never
 *    happened: they are still in the kernel's list), which imatrim_reconcile() cuts off;
 *  - records are deleted only below `acked`, the next_offset of a verdict (the verifier
 *    committed its replay up to there before it answered), only while more than `keep` are
 *    in kernel memory, and never below C - keep;
 *  - the export is cut back to D only when D was read from the kernel: a kernel without the
 *    deleted file, or a list path that is not the kernel's, or securityfs not mounted yet,
 *    leaves it as it is (it may be this boot's only copy of the deleted records);
 *  - when the export lacks records below D (the file was lost or cut, or another program
 *    deleted records), nothing more is deleted this boot, and imatrim_read() sends from D when
 *    asked for an entry the export lacks; the verifier answers log_records_deleted (the
 *    evidence's log_deleted says why). A restored file is noticed at the next read (its size,
 *    inode or time changed) and counted again.
 * A new boot starts with D = 0: the export, of the old boot, is emptied at the first reconcile.
 * The export is judged by no one here: the verifier replays it against PCR 10 like the kernel's
 * list, so an edited export fails the replay (SECURITY.md).
 *
 * Ownership: imatrim_new() copies its strings; imatrim_free() accepts NULL. Not thread-safe.
 */
#ifndef ATTESTD_IMATRIM_H
#define ATTESTD_IMATRIM_H

#include <stdbool.h>
#include <stdint.h>

#include "attestd/imalist.h"

#define IMATRIM_DEFAULT_EXPORT_NAME "ima-exported.bin" /* in the state directory */

struct imatrim;

/*
 * The kernel write that deletes the records below h (path: runtime_measurements_deleted).
 * 0 or -errno. The default writes "h\n"; tests play the kernel with their own.
 */
typedef int imatrim_delete_fn(void *ctx, const char *path, uint64_t h);

/* keep: records left in kernel memory at least (0: never delete). NULL on ENOMEM. */
struct imatrim *imatrim_new(const char *ima_list, const char *export_path, uint64_t keep);
void imatrim_free(struct imatrim *t);
void imatrim_set_deleter(struct imatrim *t, imatrim_delete_fn *fn, void *ctx);

/*
 * Counts the export's whole records against the kernel's D: records at or past D are cut off
 * (fsync'd), fewer than D mark the export as lacking (logged: what is lost, what to do). A
 * missing file is an empty export. 0 or -errno (the export unreadable: treated as lacking).
 */
int imatrim_reconcile(struct imatrim *t);

/*
 * Entries from `from` on, as imalist_read() (max_bytes 0: IMALIST_ROUND_MAX): those below the
 * kernel's D from the export, then the kernel's list, in one chunk of at most max_bytes. When
 * the export lacks an entry below D that was asked for, the chunk starts at D (out->first).
 * out->deleted is D. 0 or -errno (-EAGAIN: D moved under the read).
 */
int imatrim_read(struct imatrim *t, struct imalist *kernel, uint64_t from, size_t max_bytes,
		 struct imalist_chunk *out);

/*
 * The evidence's log_deleted for a chunk imatrim_read() returned when entry `asked` was asked
 * for: the kernel's D when the chunk starts after `asked` (entries deleted and not in the
 * export: the verifier answers log_records_deleted), else 0. Not D whenever D is above 0: the
 * verifier judges evidence that carries log_deleted even while a policy change waits for the
 * list from entry 0 (verifier/service/round.c), so an agent that answers a challenge given
 * before the change (it names the entry after the last replayed, often D itself) and says D
 * would be told log_records_deleted, with the old challenge's entry, round after round.
 */
uint64_t imatrim_log_deleted(const struct imalist_chunk *c, uint64_t asked);

/*
 * After a verdict whose next_offset is `acked`: when more than `keep` records are in kernel
 * memory, deletes those below H = min(acked, C - keep) once they are in the export (appended,
 * fsync'd). *deleted_to is H when records were deleted, else 0. 0 (also when nothing is to be
 * done, or deletion is off, unsupported, or stopped by a lacking export) or -errno (logged).
 */
int imatrim_after_verdict(struct imatrim *t, struct imalist *kernel, uint64_t acked,
			  uint64_t *deleted_to);

/* Whole records in the export, and whether it lacks records the kernel deleted (tests). */
uint64_t imatrim_exported(const struct imatrim *t);
bool imatrim_lacking(const struct imatrim *t);

#endif
