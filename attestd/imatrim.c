/* Export and deletion of the kernel's measurement records; see imatrim.h. */
#include "attestd/imatrim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file.h"
#include "common/log.h"
#include "proto/limits.h"

#define KERNEL_COUNT_NAME "runtime_measurements_count"
#define KERNEL_DELETED_NAME "runtime_measurements_deleted"
#define COUNT_CHUNK (64u * 1024u)

struct imatrim {
	char *count_path;   /* NULL: the list is not the kernel's (nothing is deleted) */
	char *deleted_path;
	char *export_path;
	uint64_t keep;
	struct imalist *exported; /* reader of the export */
	uint64_t exported_n;      /* whole records at the export's start that are entries 0.. */
	uint64_t exported_bytes;  /* their size */
	bool known;               /* exported_n and the file's identity below are current */
	bool lacking;             /* the export lacks records below the kernel's D */
	bool unsupported_said;
	struct stat seen;         /* the export as last counted or written (st_ino 0: none) */
	imatrim_delete_fn *del;
	void *del_ctx;
};

/* The kernel's write: "h\n" into runtime_measurements_deleted. */
static int kernel_delete(void *ctx, const char *path, uint64_t h)
{
	char text[32];
	int n = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)h);
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC), ret = 0;
	ssize_t w;

	(void)ctx;
	if (fd < 0)
		return -errno;
	do {
		w = write(fd, text, (size_t)n);
	} while (w < 0 && errno == EINTR);
	if (w < 0)
		ret = -errno;
	else if (w != n)
		ret = -EIO;
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	return ret;
}

struct imatrim *imatrim_new(const char *ima_list, const char *export_path, uint64_t keep)
{
	struct imatrim *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->keep = keep;
	t->del = kernel_delete;
	t->export_path = strdup(export_path);
	t->exported = imalist_new(export_path);
	t->count_path = imalist_sibling(ima_list, KERNEL_COUNT_NAME);
	t->deleted_path = imalist_sibling(ima_list, KERNEL_DELETED_NAME);
	if (!t->export_path || !t->exported || !t->count_path != !t->deleted_path) {
		imatrim_free(t);
		return NULL;
	}
	return t;
}

void imatrim_free(struct imatrim *t)
{
	if (!t)
		return;
	free(t->count_path);
	free(t->deleted_path);
	free(t->export_path);
	imalist_free(t->exported);
	free(t);
}

void imatrim_set_deleter(struct imatrim *t, imatrim_delete_fn *fn, void *ctx)
{
	t->del = fn ? fn : kernel_delete;
	t->del_ctx = ctx;
}

uint64_t imatrim_exported(const struct imatrim *t)
{
	return t->exported_n;
}

bool imatrim_lacking(const struct imatrim *t)
{
	return t->lacking;
}

/* The kernel's D: 0 when it has no deleted file (or the list is a plain file). */
static int read_deleted(const struct imatrim *t, uint64_t *d, bool *supported)
{
	int ret;

	*d = 0;
	*supported = false;
	if (!t->deleted_path)
		return 0;
	ret = imalist_read_number(t->deleted_path, d);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0) {
		log_error("cannot read '%s': %s", t->deleted_path, strerror(-ret));
		return ret;
	}
	*supported = true;
	return 0;
}

/*
 * Whole records at the start of fd, at most `limit` of them: *n and their size *bytes. Stops at
 * the first record that does not frame (a cut or edited file): what follows is not counted.
 */
static int count_records(int fd, uint64_t limit, uint64_t *n, uint64_t *bytes)
{
	size_t cap = (size_t)LIMIT_IMA_RECORD + COUNT_CHUNK, have = 0, pos = 0;
	uint8_t *buf = malloc(cap);
	uint64_t off = 0;
	bool eof = false;
	int ret = 0;

	*n = 0;
	*bytes = 0;
	if (!buf)
		return -ENOMEM;
	while (*n < limit) {
		size_t len = 0;
		int r = imalist_record_len(buf + pos, have - pos, &len);
		ssize_t got;

		if (r < 0)
			break;
		if (r == 1) {
			pos += len;
			*bytes += len;
			(*n)++;
			continue;
		}
		if (eof)
			break;
		memmove(buf, buf + pos, have - pos);
		have -= pos;
		pos = 0;
		do {
			got = pread(fd, buf + have, cap - have, (off_t)off);
		} while (got < 0 && errno == EINTR);
		if (got < 0) {
			ret = -errno;
			break;
		}
		eof = got == 0;
		have += (size_t)got;
		off += (uint64_t)got;
	}
	free(buf);
	return ret;
}

/* Remembers the export's identity as counted or written (a change means someone replaced it). */
static void remember(struct imatrim *t)
{
	if (stat(t->export_path, &t->seen) < 0)
		memset(&t->seen, 0, sizeof(t->seen));
}

static bool changed(const struct imatrim *t)
{
	struct stat st;

	if (stat(t->export_path, &st) < 0)
		return t->seen.st_ino != 0;
	return st.st_ino != t->seen.st_ino || st.st_dev != t->seen.st_dev ||
	       st.st_size != t->seen.st_size || st.st_mtim.tv_sec != t->seen.st_mtim.tv_sec ||
	       st.st_mtim.tv_nsec != t->seen.st_mtim.tv_nsec;
}

int imatrim_reconcile(struct imatrim *t)
{
	uint64_t d, n = 0, bytes = 0;
	bool supported, was_lacking = t->lacking && t->known;
	struct stat st;
	int fd, ret;

	t->known = false;
	if ((ret = read_deleted(t, &d, &supported)) < 0)
		return ret;
	if (!supported) {
		/* No D from the kernel (no deleted file, securityfs not mounted, a list that is
		 * not the kernel's): D = 0 says nothing of this boot, and the export may hold the
		 * only copy of the records the kernel deleted. Left as it is, counted once D
		 * can be read (nothing is read from it or deleted until then). */
		t->exported_n = 0;
		t->exported_bytes = 0;
		t->lacking = false;
		return 0;
	}
	fd = open(t->export_path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT) {
		ret = -errno;
		log_error("cannot open the ima export '%s': %s", t->export_path, strerror(errno));
		t->lacking = d > 0;
		return ret;
	}
	if (fd >= 0) {
		ret = count_records(fd, d, &n, &bytes);
		if (ret == 0 && n == d && fstat(fd, &st) == 0 && (uint64_t)st.st_size > bytes) {
			/* Records at or past D: exported, then not deleted (a crash, a failed write),
			 * or of an earlier boot. The kernel's list holds this boot's. */
			log_info("the ima export '%s' holds %llu bytes past entry %llu, the kernel's"
				 " first: cutting them off", t->export_path,
				 (unsigned long long)((uint64_t)st.st_size - bytes),
				 (unsigned long long)d);
			if (ftruncate(fd, (off_t)bytes) < 0 || fsync(fd) < 0)
				ret = -errno;
		}
		close(fd);
		if (ret < 0) {
			log_error("cannot reconcile the ima export '%s': %s", t->export_path,
				  strerror(-ret));
			t->lacking = d > 0;
			return ret;
		}
	}
	t->exported_n = n;
	t->exported_bytes = bytes;
	t->lacking = n < d;
	t->known = true;
	remember(t);
	if (t->lacking && !was_lacking)
		log_error("the kernel deleted ima entries 0-%llu but the export '%s' holds only %llu"
			  " of them (lost, cut, or deleted by another program): a verifier that needs"
			  " entries %llu-%llu will say log_records_deleted, and attestd deletes nothing"
			  " more this boot; restore the export file, or reboot to start a fresh list",
			  (unsigned long long)(d - 1), t->export_path, (unsigned long long)n,
			  (unsigned long long)n, (unsigned long long)(d - 1));
	else if (!t->lacking && was_lacking)
		log_info("the ima export '%s' holds every deleted entry again (0-%llu)",
			 t->export_path, (unsigned long long)(d - 1));
	return 0;
}

uint64_t imatrim_log_deleted(const struct imalist_chunk *c, uint64_t asked)
{
	return c->first > asked ? c->deleted : 0;
}

/* Counts the export again when it was never counted or someone changed it. */
static int refresh(struct imatrim *t)
{
	if (t->known && !changed(t))
		return 0;
	return imatrim_reconcile(t);
}

/* a then b, into a (b released). */
static int append_chunk(struct imalist_chunk *a, struct imalist_chunk *b)
{
	uint8_t *p;

	if (b->len) {
		p = realloc(a->data, a->len + b->len);
		if (!p) {
			free(b->data);
			return -ENOMEM;
		}
		memcpy(p + a->len, b->data, b->len);
		a->data = p;
		a->len += b->len;
		a->count += b->count;
	}
	a->more = b->more;
	free(b->data);
	memset(b, 0, sizeof(*b));
	return 0;
}

/* From the kernel's first entry D on (the export cannot serve what was asked). */
static int read_kernel_from(struct imalist *kernel, uint64_t d, size_t max_bytes,
			    struct imalist_chunk *out)
{
	int ret = imalist_read(kernel, d, max_bytes, out);

	if (ret == 0 && out->gone) {
		memset(out, 0, sizeof(*out));
		return -EAGAIN; /* D moved again: another deleter; the next round reads afresh */
	}
	return ret;
}

int imatrim_read(struct imatrim *t, struct imalist *kernel, uint64_t from, size_t max_bytes,
		 struct imalist_chunk *out)
{
	struct imalist_chunk rest;
	uint64_t d;
	int ret;

	if (max_bytes == 0)
		max_bytes = IMALIST_ROUND_MAX;
	ret = imalist_read(kernel, from, max_bytes, out);
	if (ret < 0 || !out->gone)
		return ret;
	d = out->deleted;
	ret = refresh(t);
	if (ret == 0 && t->exported_n >= d) {
		ret = imalist_read_until(t->exported, from, d, max_bytes, out);
		if (ret == 0 && !out->more && from + out->count != d) {
			log_error("the ima export '%s' ends before entry %llu: counting it again",
				  t->export_path, (unsigned long long)d);
			free(out->data);
			(void)imatrim_reconcile(t);
			ret = -EIO;
		}
		if (ret < 0) {
			memset(out, 0, sizeof(*out));
		} else {
			out->deleted = d;
			if (out->len >= max_bytes)
				out->more = true; /* the kernel's entries: next round */
			if (out->more)
				return 0;
			ret = imalist_read(kernel, d, max_bytes - out->len, &rest);
			if (ret == 0 && rest.gone)
				ret = -EAGAIN;
			if (ret == 0 && rest.len > max_bytes - out->len) {
				/* One record past the cap: it goes next round. */
				free(rest.data);
				out->more = true;
				return 0;
			}
			if (ret == 0)
				ret = append_chunk(out, &rest);
			if (ret < 0) {
				free(out->data);
				memset(out, 0, sizeof(*out));
			}
			return ret;
		}
	}
	log_warn("ima entries %llu-%llu were deleted from kernel memory and the export '%s' lacks"
		 " them: sending from entry %llu (the verifier will say log_records_deleted)",
		 (unsigned long long)from, (unsigned long long)(d - 1), t->export_path,
		 (unsigned long long)d);
	ret = read_kernel_from(kernel, d, max_bytes, out);
	if (ret == 0)
		out->deleted = d;
	return ret;
}

static int write_all(int fd, const uint8_t *p, size_t len, uint64_t off)
{
	while (len > 0) {
		ssize_t w = pwrite(fd, p, len, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		len -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* Appends entries [exported_n, h) of the kernel's list to the export, fsync'd. */
static int export_to(struct imatrim *t, struct imalist *kernel, uint64_t h)
{
	uint64_t index = t->exported_n, off = t->exported_bytes;
	struct stat st;
	bool created = stat(t->export_path, &st) < 0;
	int fd, ret = 0;

	fd = open(t->export_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (ret == 0 && index < h) {
		struct imalist_chunk c;

		ret = imalist_read_until(kernel, index, h, 0, &c);
		if (ret == 0 && (c.gone || c.count == 0))
			ret = c.gone ? -EAGAIN : -EIO; /* deleted by another, or shorter than C */
		if (ret == 0)
			ret = write_all(fd, c.data, c.len, off);
		if (ret == 0) {
			index += c.count;
			off += c.len;
		}
		free(c.data);
	}
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	if (ret == 0 && created)
		ret = file_sync_parent(t->export_path);
	if (ret < 0) {
		/* What was written past exported_bytes is cut off at the next count. */
		t->known = false;
		return ret;
	}
	t->exported_n = index;
	t->exported_bytes = off;
	remember(t);
	return 0;
}

int imatrim_after_verdict(struct imatrim *t, struct imalist *kernel, uint64_t acked,
			  uint64_t *deleted_to)
{
	uint64_t c, d, d2, h;
	bool supported;
	int ret;

	*deleted_to = 0;
	if (!t->keep || !t->count_path)
		return 0;
	if ((ret = read_deleted(t, &d, &supported)) < 0)
		return ret;
	if (!supported) {
		if (!t->unsupported_said)
			log_warn("--ima-keep-records is set, but the kernel cannot delete measurement"
				 " records (no '%s'): the list stays in kernel memory",
				 t->deleted_path);
		t->unsupported_said = true;
		return 0;
	}
	ret = imalist_read_number(t->count_path, &c);
	if (ret < 0) {
		log_error("cannot read '%s': %s", t->count_path, strerror(-ret));
		return ret;
	}
	if (c < d || c - d <= t->keep)
		return 0;
	h = acked < c - t->keep ? acked : c - t->keep;
	if (h <= d)
		return 0;
	if ((ret = refresh(t)) < 0)
		return ret;
	if (t->lacking)
		return 0; /* said when it was counted */
	if (t->exported_n < h && (ret = export_to(t, kernel, h)) < 0) {
		log_error("cannot export ima entries %llu-%llu to '%s': %s; nothing deleted",
			  (unsigned long long)t->exported_n, (unsigned long long)(h - 1),
			  t->export_path, strerror(-ret));
		return ret;
	}
	/* Only the records exported and fsync'd above, and only if nobody else deleted since. */
	if ((ret = read_deleted(t, &d2, &supported)) < 0)
		return ret;
	if (d2 != d) {
		t->known = false;
		return -EAGAIN;
	}
	ret = t->del(t->del_ctx, t->deleted_path, h);
	if (ret < 0) {
		log_error("cannot delete ima entries %llu-%llu from kernel memory ('%s'): %s",
			  (unsigned long long)d, (unsigned long long)(h - 1), t->deleted_path,
			  strerror(-ret));
		return ret;
	}
	log_info("deleted ima entries %llu-%llu from kernel memory (exported to '%s'); %llu"
		 " entries left in memory", (unsigned long long)d, (unsigned long long)(h - 1),
		 t->export_path, (unsigned long long)(c - h));
	*deleted_to = h;
	return 0;
}
