/* Cheap notice of new measurements; see watch.h. */
#include "attestd/watch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/file.h"
#include "proto/dynbuf.h"

/* The kernel's list files (one per bank on newer kernels: _sha256, ...) and its count. */
#define KERNEL_LIST_NAME "binary_runtime_measurements"
#define KERNEL_COUNT_NAME "runtime_measurements_count"
#define COUNT_TEXT_MAX 32u /* a decimal uint64_t and a newline */

struct list_watch {
	char *list_path;
	char *count_path; /* NULL: stat the list */
};

char *list_watch_count_path(const char *ima_list)
{
	const char *slash = strrchr(ima_list, '/');
	const char *base = slash ? slash + 1 : ima_list;
	size_t dir_len = (size_t)(base - ima_list);
	char *out;

	if (strncmp(base, KERNEL_LIST_NAME, strlen(KERNEL_LIST_NAME)) != 0)
		return NULL;
	out = malloc(dir_len + sizeof(KERNEL_COUNT_NAME));
	if (!out)
		return NULL;
	memcpy(out, ima_list, dir_len);
	memcpy(out + dir_len, KERNEL_COUNT_NAME, sizeof(KERNEL_COUNT_NAME));
	return out;
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

/* The kernel's count: 0 and *count, or -errno (unreadable, or not one decimal number). */
static int read_count(const char *path, uint64_t *count)
{
	struct dynbuf b;
	unsigned long long v;
	char *end;
	int ret;

	dynbuf_init(&b, COUNT_TEXT_MAX);
	ret = file_read(path, &b);
	if (ret == 0) {
		const char *s = dynbuf_str(&b);

		errno = 0;
		v = strtoull(s, &end, 10);
		if (errno || end == s || (*end && strcmp(end, "\n") != 0))
			ret = -EBADMSG;
		else
			*count = v;
	}
	dynbuf_release(&b);
	return ret;
}

int list_watch_mark(const struct list_watch *w, struct list_mark *mark)
{
	struct stat st;

	memset(mark, 0, sizeof(*mark));
	if (w->count_path && read_count(w->count_path, &mark->count) == 0)
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
