/*
 * watch: notices, cheaply and without reading the list, that the kernel measured something
 * since a round began, so that attestd sends a round at once instead of at the next interval.
 * The interval stays the heartbeat that proves liveness; this only brings a round forward.
 *
 * The mark of a list: the kernel's entry count (securityfs' runtime_measurements_count, beside
 * binary_runtime_measurements) when the list is the kernel's, one small read; otherwise (a list
 * file, as on a host with --ima-list FILE) the file's size and modification time, one stat().
 * Neither walks the list, whose kernel file is read from its head on every read.
 *
 * Ownership: list_watch_new() copies the path; list_watch_free() accepts NULL.
 */
#ifndef ATTESTD_WATCH_H
#define ATTESTD_WATCH_H

#include <stdbool.h>
#include <stdint.h>

struct list_watch;

struct list_mark {
	uint64_t count;   /* entries, from the count file; 0 when it is not used */
	int64_t size;     /* the list file's size and mtime when there is no count file */
	int64_t mtime_ns;
};

/* NULL on ENOMEM. */
struct list_watch *list_watch_new(const char *ima_list);
void list_watch_free(struct list_watch *w);

/* The list's mark now: 0, or -errno when neither the count nor the file can be read. */
int list_watch_mark(const struct list_watch *w, struct list_mark *mark);

/* True when the two marks differ: the kernel measured something in between. */
bool list_mark_changed(const struct list_mark *before, const struct list_mark *now);

/* The count file used for `ima_list` (malloc'd, caller frees), or NULL when it has none. */
char *list_watch_count_path(const char *ima_list);

#endif
