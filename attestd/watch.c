/* Cheap notice of new measurements; see watch.h. */
#include "attestd/watch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attestd/imalist.h"

/* The kernel's count beside its list files (one per bank on newer kernels: _sha256, ...). */
#define KERNEL_COUNT_NAME "runtime_measurements_count"

struct list_watch {
	char *list_path;
	char *count_path; /* NULL: stat the list */
};

char *list_watch_count_path(const char *ima_list)
{
	return imalist_sibling(ima_list, KERNEL_COUNT_NAME);
}

struct list_watch *list_watch_new(const char *ima_list)
{
	struct list_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->list_path = strdup(ima_list);
	if (!w->list_path) {
		free(w);
		return NULL;
	}
	w->count_path = list_watch_count_path(ima_list); /* NULL is fine: stat the list */
	return w;
}

void list_watch_free(struct list_watch *w)
{
	if (!w)
		return;
	free(w->list_path);
	free(w->count_path);
	free(w);
}

int list_watch_mark(const struct list_watch *w, struct list_mark *mark)
{
	struct stat st;

	memset(mark, 0, sizeof(*mark));
	if (w->count_path && imalist_read_number(w->count_path, &mark->count) == 0)
		return 0;
	if (stat(w->list_path, &st) < 0)
		return -errno;
	mark->size = (int64_t)st.st_size;
	mark->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return 0;
}

bool list_mark_changed(const struct list_mark *before, const struct list_mark *now)
{
	return before->count != now->count || before->size != now->size ||
	       before->mtime_ns != now->mtime_ns;
}
