/* IMA binary list reader with an index -> offset map; see imalist.h. */
#include "attestd/imalist.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "proto/imalog.h"
#include "proto/limits.h"

#define READ_CHUNK (64u * 1024u)
#define HEADER_LEN (4u + IMA_TEMPLATE_HASH_LEN + 4u)
/* The largest record we accept; the window grows up to this. */
#define RECORD_MAX (HEADER_LEN + LIMIT_IMA_TEMPLATE_NAME + 4u + LIMIT_IMA_TEMPLATE_DATA)

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

/* The kernel writes native-endian u32s and attestd runs on that kernel. */
static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int imalist_record_len(const uint8_t *p, size_t avail, size_t *len)
{
	uint32_t name_len, n;
	size_t need = HEADER_LEN;

	*len = need;
	if (avail < need)
		return 0;
	name_len = get_u32(p + 4 + IMA_TEMPLATE_HASH_LEN);
	if (name_len > LIMIT_IMA_TEMPLATE_NAME)
		return -E2BIG;
	need += name_len;
	if (name_len == 3 && memcmp(p + HEADER_LEN, "ima", 3) == 0) {
		/* legacy "ima": d[20] | u32 n_len | n, no data length field */
		need += IMA_TEMPLATE_HASH_LEN + 4;
		*len = need;
		if (avail < need)
			return 0;
		n = get_u32(p + need - 4);
		if (n > IMA_LEGACY_NAME_MAX)
			return -E2BIG;
	} else {
		need += 4;
		*len = need;
		if (avail < need)
			return 0;
		n = get_u32(p + need - 4);
		if (n > LIMIT_IMA_TEMPLATE_DATA)
			return -E2BIG;
	}
	need += n;
	*len = need;
	return avail < need ? 0 : 1;
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

/* A sliding window over the file; win[0] is at file offset base. */
struct window {
	int fd;
	uint8_t *buf;
	size_t cap, len, pos;
	uint64_t base;
	bool eof;
	uint64_t *bytes_read;
};

/* Makes at least `need` bytes available at pos, unless the file ends first. */
static int window_fill(struct window *w, size_t need, size_t keep_from)
{
	/* Drop what no longer matters, keeping win[keep_from..] (the payload being collected). */
	if (keep_from > 0) {
		memmove(w->buf, w->buf + keep_from, w->len - keep_from);
		w->len -= keep_from;
		w->pos -= keep_from;
		w->base += keep_from;
	}
	while (!w->eof && w->len - w->pos < need) {
		size_t want = w->len + READ_CHUNK;
		ssize_t n;

		if (want < w->pos + need)
			want = w->pos + need;
		if (want > w->cap) {
			uint8_t *nb = realloc(w->buf, want);

			if (!nb)
				return -ENOMEM;
			w->buf = nb;
			w->cap = want;
		}
		n = pread(w->fd, w->buf + w->len, w->cap - w->len, (off_t)(w->base + w->len));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			w->eof = true;
		w->len += (size_t)n;
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

	for (;;) {
		size_t rec_len = 0;
		int r;

		if (!collecting && index == from) {
			collecting = true;
			collect_start = w.pos;
			cp_add(l, index, w.base + w.pos);
		}
		r = imalist_record_len(w.buf ? w.buf + w.pos : NULL, w.len - w.pos, &rec_len);
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
			log_warn("bad ima list record %llu at byte %llu in '%s'",
				 (unsigned long long)index, (unsigned long long)(w.base + w.pos),
				 l->path);
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
		free(w.buf);
		return 0;
	}
	cp_add(l, index, w.base + w.pos);
	out->len = w.pos - collect_start;
	if (out->len == 0) {
		free(w.buf);
		return 0;
	}
	/* Hand the payload over without a copy when it starts the buffer. */
	if (collect_start > 0)
		memmove(w.buf, w.buf + collect_start, out->len);
	out->data = w.buf;
	return 0;
fail:
	free(w.buf);
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
