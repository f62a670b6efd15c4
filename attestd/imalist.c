/* IMA binary list reader with an index -> offset map; see imalist.h. */
#include "attestd/imalist.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "proto/dynbuf.h"
#include "proto/imalog.h"
#include "proto/limits.h"

#define READ_CHUNK (64u * 1024u)
#define KERNEL_LIST_NAME "binary_runtime_measurements"
#define KERNEL_DELETED_NAME "runtime_measurements_deleted"
#define NUMBER_TEXT_MAX 32u /* a decimal uint64_t and a newline */

/* base64 of a full round, with room for the JSON around it, is one evidence request. */
_Static_assert(IMALIST_ROUND_MAX / 3u * 4u + 4u + LIMIT_SMALL_BODY <= LIMIT_REQUEST_BODY,
	       "a round of IMALIST_ROUND_MAX bytes fits LIMIT_REQUEST_BODY");

struct checkpoint {
	uint64_t index;
	uint64_t offset;
};

struct imalist {
	char *path;
	char *deleted_path; /* the kernel's deleted count beside the list; NULL: none */
	dev_t dev;
	ino_t ino;
	bool have_id;
	unsigned ncp;
	/* sorted by index; cp[0] = {D, 0}: the list's first entry, D the deleted count */
	struct checkpoint cp[IMALIST_CHECKPOINTS];
	uint64_t last_bytes_read;
};

/*
 * The framing is proto's (imalog_record(), little-endian as on the x86 kernels attestd runs on),
 * so attestd refuses exactly the records the verifier's cursor refuses.
 */
int imalist_record_len(const uint8_t *p, size_t avail, size_t *len)
{
	struct ima_record rec;
	const char *msg;
	int r = imalog_record(p, avail, &rec, &msg);

	*len = rec.len;
	return r;
}

struct imalist *imalist_new(const char *path)
{
	struct imalist *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->path = strdup(path);
	if (!l->path) {
		free(l);
		return NULL;
	}
	l->ncp = 1; /* cp[0] = {0, 0}: entry 0 starts the file until records are deleted */
	l->deleted_path = imalist_sibling(path, KERNEL_DELETED_NAME);
	return l;
}

void imalist_free(struct imalist *l)
{
	if (!l)
		return;
	free(l->path);
	free(l->deleted_path);
	free(l);
}

uint64_t imalist_last_bytes_read(const struct imalist *l)
{
	return l->last_bytes_read;
}

static void cp_forget(struct imalist *l)
{
	l->ncp = 1;
}

/*
 * The list now starts at entry `base` (the deleted count). A deletion up to a remembered entry
 * shifts the map by that entry's offset; any other change (a deletion to an entry not
 * remembered, or a count that went back: another list) drops it.
 */
static void cp_rebase(struct imalist *l, uint64_t base)
{
	unsigned i, n = 0;
	uint64_t shift;

	if (base == l->cp[0].index)
		return;
	for (i = 0; i < l->ncp && l->cp[i].index != base; i++)
		;
	if (base < l->cp[0].index || i == l->ncp) {
		l->cp[0].index = base;
		l->cp[0].offset = 0;
		l->ncp = 1;
		return;
	}
	shift = l->cp[i].offset;
	for (; i < l->ncp; i++, n++) {
		l->cp[n].index = l->cp[i].index;
		l->cp[n].offset = l->cp[i].offset - shift;
	}
	l->ncp = n;
}

static const struct checkpoint *cp_lookup(const struct imalist *l, uint64_t index)
{
	const struct checkpoint *best = &l->cp[0];

	for (unsigned i = 1; i < l->ncp; i++)
		if (l->cp[i].index <= index)
			best = &l->cp[i];
	return best;
}

static void cp_add(struct imalist *l, uint64_t index, uint64_t offset)
{
	unsigned i;

	if (index <= l->cp[0].index)
		return;
	for (i = 0; i < l->ncp; i++) {
		if (l->cp[i].index == index) {
			l->cp[i].offset = offset;
			return;
		}
		if (l->cp[i].index > index)
			break;
	}
	if (l->ncp == IMALIST_CHECKPOINTS) {
		/* Full: drop the oldest learned point (rounds move forward). */
		memmove(&l->cp[1], &l->cp[2], (l->ncp - 2) * sizeof(l->cp[0]));
		l->ncp--;
		if (i > 1)
			i--;
	}
	memmove(&l->cp[i + 1], &l->cp[i], (l->ncp - i) * sizeof(l->cp[0]));
	l->cp[i].index = index;
	l->cp[i].offset = offset;
	l->ncp++;
}

/*
 * A sliding window over the file; byte 0 of b is at file offset base. It holds the payload being
 * collected (at most max(max_bytes, LIMIT_IMA_RECORD)), the record being framed (at most
 * LIMIT_IMA_RECORD) and one read ahead (READ_CHUNK): window_cap() is that sum, fixed at init.
 */
struct window {
	int fd;
	struct dynbuf b;
	size_t pos;
	uint64_t base;
	bool eof;
	uint64_t *bytes_read;
};

static size_t window_cap(size_t max_bytes)
{
	size_t fixed = 2 * (size_t)LIMIT_IMA_RECORD + READ_CHUNK;

	return max_bytes > SIZE_MAX - fixed ? SIZE_MAX - 1 : max_bytes + fixed;
}

static const uint8_t *window_at(const struct window *w, size_t pos)
{
	return (const uint8_t *)dynbuf_str(&w->b) + pos;
}

/* Makes at least `need` bytes available at pos, unless the file ends first. */
static int window_fill(struct window *w, size_t need, size_t keep_from)
{
	/* Drop what no longer matters, keeping win[keep_from..] (the payload being collected). */
	if (keep_from > 0) {
		dynbuf_tail(&w->b, w->b.len - keep_from);
		w->pos -= keep_from;
		w->base += keep_from;
	}
	while (!w->eof && w->b.len - w->pos < need) {
		size_t len = w->b.len, want = READ_CHUNK;
		uint8_t *at;
		ssize_t n;

		if (want < w->pos + need - len)
			want = w->pos + need - len;
		at = dynbuf_grow(&w->b, want);
		if (!at)
			return dynbuf_error(&w->b);
		n = pread(w->fd, at, want, (off_t)(w->base + len));
		dynbuf_setlen(&w->b, len + (n > 0 ? (size_t)n : 0));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			w->eof = true;
		*w->bytes_read += (uint64_t)n;
	}
	return 0;
}

/* One walk from the checkpoint at or before `from`; see imalist_read(). */
static int walk(struct imalist *l, int fd, uint64_t from, uint64_t until, size_t max_bytes,
		struct imalist_chunk *out)
{
	const struct checkpoint *cp = cp_lookup(l, from);
	struct window w = { .fd = fd, .base = cp->offset, .bytes_read = &l->last_bytes_read };
	uint64_t index = cp->index;
	size_t collect_start = 0; /* window position where the payload starts */
	bool collecting = false;
	int ret;

	dynbuf_init(&w.b, window_cap(max_bytes));
	for (;;) {
		struct ima_record rec;
		const char *why = NULL;
		size_t rec_len;
		int r;

		if (!collecting && index == from) {
			collecting = true;
			collect_start = w.pos;
			cp_add(l, index, w.base + w.pos);
		}
		if (collecting && index >= until)
			break;
		r = imalog_record(window_at(&w, w.pos), w.b.len - w.pos, &rec, &why);
		rec_len = rec.len;
		if (r == 0) {
			size_t keep = collecting ? collect_start : w.pos;

			if (w.eof)
				break; /* clean end, or a partial record: next round */
			ret = window_fill(&w, rec_len, keep);
			if (ret < 0)
				goto fail;
			collect_start -= collecting ? keep : 0;
			continue;
		}
		if (r < 0) {
			log_warn("bad ima list record %llu at byte %llu in '%s': %s",
				 (unsigned long long)index, (unsigned long long)(w.base + w.pos),
				 l->path, why);
			ret = r;
			goto fail;
		}
		/* At least one record per round, or a huge record would stall the agent. */
		if (collecting && out->count > 0 && w.pos + rec_len - collect_start > max_bytes) {
			out->more = true;
			break;
		}
		w.pos += rec_len;
		index++;
		if (collecting)
			out->count++;
	}
	if (!collecting) {
		out->short_list = true;
		dynbuf_release(&w.b);
		return 0;
	}
	cp_add(l, index, w.base + w.pos);
	out->len = w.pos - collect_start;
	if (out->len == 0) {
		dynbuf_release(&w.b);
		return 0;
	}
	/* Hand the payload over without a copy when it starts the buffer. */
	dynbuf_setlen(&w.b, w.pos);
	dynbuf_tail(&w.b, out->len);
	out->data = (uint8_t *)dynbuf_take(&w.b, NULL);
	return out->data ? 0 : -ENOMEM;
fail:
	dynbuf_release(&w.b);
	return ret;
}

char *imalist_sibling(const char *ima_list, const char *name)
{
	const char *slash = strrchr(ima_list, '/');
	const char *base = slash ? slash + 1 : ima_list;
	size_t dir_len = (size_t)(base - ima_list), name_len = strlen(name);
	char *out;

	if (strncmp(base, KERNEL_LIST_NAME, strlen(KERNEL_LIST_NAME)) != 0)
		return NULL;
	out = malloc(dir_len + name_len + 1);
	if (!out)
		return NULL;
	memcpy(out, ima_list, dir_len);
	memcpy(out + dir_len, name, name_len + 1);
	return out;
}

int imalist_read_number(const char *path, uint64_t *out)
{
	char text[NUMBER_TEXT_MAX + 1], *end;
	unsigned long long v;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	do {
		n = read(fd, text, NUMBER_TEXT_MAX);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	text[n] = '\0';
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text || text[0] < '0' || text[0] > '9' || (*end && strcmp(end, "\n")))
		return -EBADMSG;
	*out = v;
	return 0;
}

/* The kernel's deleted count: 0 when the list has none (unsupported, or a plain file). */
static int read_deleted(const struct imalist *l, uint64_t *deleted)
{
	int ret;

	*deleted = 0;
	if (!l->deleted_path)
		return 0;
	ret = imalist_read_number(l->deleted_path, deleted);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		log_error("cannot read the deleted count '%s': %s", l->deleted_path, strerror(-ret));
	return ret;
}

/* One read at the deleted count `deleted`; see imalist_read_until(). */
static int read_at(struct imalist *l, uint64_t deleted, uint64_t from, uint64_t until,
		   size_t max_bytes, struct imalist_chunk *out)
{
	struct stat st;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	out->first = from;
	out->deleted = deleted;
	if (from < deleted) {
		out->gone = true;
		return 0;
	}
	fd = open(l->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		log_error("cannot open ima list '%s': %s", l->path, strerror(errno));
		return ret;
	}
	/* A replaced file (tests, or a remounted securityfs) invalidates every offset. */
	if (fstat(fd, &st) == 0) {
		if (l->have_id && (st.st_dev != l->dev || st.st_ino != l->ino))
			cp_forget(l);
		l->dev = st.st_dev;
		l->ino = st.st_ino;
		l->have_id = true;
	}
	cp_rebase(l, deleted);
	ret = walk(l, fd, from, until, max_bytes, out);
	if (ret < 0 && ret != -ENOMEM && cp_lookup(l, from)->index != l->cp[0].index) {
		/* A remembered offset may be stale: forget them all and walk from the start. */
		log_warn("rescanning ima list '%s' from its first entry", l->path);
		cp_forget(l);
		memset(out, 0, sizeof(*out));
		out->first = from;
		out->deleted = deleted;
		ret = walk(l, fd, from, until, max_bytes, out);
	}
	close(fd);
	return ret;
}

int imalist_read_until(struct imalist *l, uint64_t from, uint64_t until, size_t max_bytes,
		       struct imalist_chunk *out)
{
	uint64_t before, after;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	l->last_bytes_read = 0;
	if (max_bytes == 0)
		max_bytes = IMALIST_ROUND_MAX;
	for (int tries = 0; tries < 2; tries++) {
		if ((ret = read_deleted(l, &before)) < 0)
			break;
		ret = read_at(l, before, from, until, max_bytes, out);
		/* A walk that failed because the list moved under it is walked again, too. */
		if (read_deleted(l, &after) < 0 || after == before) {
			if (ret < 0)
				break;
			return 0;
		}
		/* Records were deleted while the list was read: its positions moved. */
		log_info("the ima list's deleted count moved from %llu to %llu while reading it;"
			 " reading again", (unsigned long long)before, (unsigned long long)after);
		free(out->data);
		memset(out, 0, sizeof(*out));
		ret = -EAGAIN;
	}
	memset(out, 0, sizeof(*out));
	return ret;
}

int imalist_read(struct imalist *l, uint64_t from, size_t max_bytes, struct imalist_chunk *out)
{
	return imalist_read_until(l, from, UINT64_MAX, max_bytes, out);
}

int imalist_check(const char *path, char *why, size_t cap)
{
	uint8_t head[64];
	struct stat st;
	size_t len;
	ssize_t n;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, cap, "cannot open the IMA list \"%s\": %s (attestd reads it as root,"
			 " from securityfs: /sys/kernel/security/ima/binary_runtime_measurements)",
			 path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		snprintf(why, cap, "the IMA list \"%s\" is a directory: give the list's file, e.g."
			 " %s/binary_runtime_measurements", path, path);
		return -EISDIR;
	}
	do {
		n = read(fd, head, sizeof(head));
	} while (n < 0 && errno == EINTR);
	ret = n < 0 ? -errno : 0;
	close(fd);
	if (ret) {
		snprintf(why, cap, "cannot read the IMA list \"%s\": %s", path, strerror(-ret));
		return ret;
	}
	if (n == 0)
		return 0;
	/* The ASCII list starts with the PCR number as text ("10 "), the binary one with it as a
	 * 32-bit integer (0a 00 00 00). */
	if (n >= 3 && head[0] >= '0' && head[0] <= '9' &&
	    (head[1] == ' ' || (head[1] >= '0' && head[1] <= '9' && head[2] == ' '))) {
		snprintf(why, cap, "the IMA list \"%s\" is text (the ASCII list?): attestd sends the"
			 " binary one, binary_runtime_measurements", path);
		return -EPROTO;
	}
	ret = imalist_record_len(head, (size_t)n, &len);
	if (ret < 0) {
		snprintf(why, cap, "\"%s\" is not a binary IMA measurement list (its first record"
			 " does not frame as one)", path);
		return -EBADMSG;
	}
	return 0;
}
