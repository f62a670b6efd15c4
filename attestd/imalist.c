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

/* base64 of a full round, with room for the JSON around it, is one evidence request. */
_Static_assert(IMALIST_ROUND_MAX / 3u * 4u + 4u + LIMIT_SMALL_BODY <= LIMIT_REQUEST_BODY,
	       "a round of IMALIST_ROUND_MAX bytes fits LIMIT_REQUEST_BODY");

struct checkpoint {
	uint64_t index;
	uint64_t offset;
};

struct imalist {
	char *path;
	dev_t dev;
	ino_t ino;
	bool have_id;
	unsigned ncp;
	struct checkpoint cp[IMALIST_CHECKPOINTS]; /* sorted by index; cp[0] = {0, 0} */
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
	l->ncp = 1; /* cp[0] = {0, 0}: entry 0 starts the file */
	return l;
}

void imalist_free(struct imalist *l)
{
	if (!l)
		return;
	free(l->path);
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

	if (index == 0)
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
static int walk(struct imalist *l, int fd, uint64_t from, size_t max_bytes,
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

int imalist_read(struct imalist *l, uint64_t from, size_t max_bytes, struct imalist_chunk *out)
{
	struct stat st;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	out->first = from;
	l->last_bytes_read = 0;
	if (max_bytes == 0)
		max_bytes = IMALIST_ROUND_MAX;

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
	ret = walk(l, fd, from, max_bytes, out);
	if (ret < 0 && ret != -ENOMEM && cp_lookup(l, from)->index != 0) {
		/* A remembered offset may be stale: forget them all and walk from entry 0. */
		log_warn("rescanning ima list '%s' from entry 0", l->path);
		cp_forget(l);
		memset(out, 0, sizeof(*out));
		out->first = from;
		ret = walk(l, fd, from, max_bytes, out);
	}
	close(fd);
	if (ret < 0)
		memset(out, 0, sizeof(*out));
	return ret;
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
