/* One round's violations, deduplicated; the contract is in violation_set.h. */
#include "verifier/decision/violation_set.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "proto/siphash.h"

int violation_set_init(struct violation_set *s, size_t max)
{
	memset(s, 0, sizeof(*s));
	s->max = max;
	/* One spare record for the unrecorded summary violation_set_take() may append. */
	dynbuf_init(&s->recs, (max + 1) * sizeof(struct attest_violation));
	/* Every path came in the evidence body, which is capped. */
	dynbuf_init(&s->paths, LIMIT_REQUEST_BODY);
	if (RAND_bytes((unsigned char *)s->key, sizeof(s->key)) != 1)
		return -EIO;
	return 0;
}

void violation_set_release(struct violation_set *s)
{
	free(s->slots);
	s->slots = NULL;
	dynbuf_release(&s->recs);
	dynbuf_release(&s->paths);
	OPENSSL_cleanse(s->key, sizeof(s->key));
	s->n = 0;
}

struct attest_violation *violation_set_at(struct violation_set *s, size_t i)
{
	return (struct attest_violation *)s->recs.buf + i;
}

static const char *path_of(const struct violation_set *s, const struct attest_violation *v)
{
	return s->paths.buf ? s->paths.buf + (uintptr_t)v->path : "";
}

static uint64_t key_hash(const struct violation_set *s, enum reason reason, const char *path,
			 size_t path_len, const char *digest)
{
	const uint64_t k2[2] = { s->key[1], s->key[0] };

	return siphash24(s->key, path, path_len) ^ (siphash24(k2, digest, strlen(digest)) + reason);
}

static void place(uint32_t *slots, size_t mask, uint64_t h, size_t idx)
{
	size_t i = (size_t)h & mask;

	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = (uint32_t)(idx + 1);
}

/* Keeps the load factor at most 1/2 for n + 1 records. */
static int reserve(struct violation_set *s)
{
	size_t nslots = 64;
	uint32_t *ns;

	while (nslots < 2 * (s->n + 1))
		nslots *= 2;
	if (s->slots && nslots <= s->mask + 1)
		return 0;
	ns = calloc(nslots, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		const struct attest_violation *v = violation_set_at(s, i);

		place(ns, nslots - 1, key_hash(s, v->reason, path_of(s, v), v->path_len, v->digest), i);
	}
	free(s->slots);
	s->slots = ns;
	s->mask = nslots - 1;
	return 0;
}

long violation_set_add(struct violation_set *s, enum reason reason, uint64_t entry,
		       const char *path, size_t path_len, const char *digest,
		       const char *template_name, bool *fresh)
{
	struct attest_violation *v;
	uint64_t h;
	size_t i;
	char *p;

	*fresh = false;
	if (!path)
		path_len = 0;
	if (reserve(s))
		return -ENOMEM;
	h = key_hash(s, reason, path ? path : "", path_len, digest);
	for (i = (size_t)h & s->mask; s->slots[i]; i = (i + 1) & s->mask) {
		v = violation_set_at(s, s->slots[i] - 1);
		if (v->reason == reason && v->path_len == path_len &&
		    memcmp(path_of(s, v), path ? path : "", path_len) == 0 &&
		    strcmp(v->digest, digest) == 0) {
			v->count++;
			v->last_entry = entry;
			return (long)(s->slots[i] - 1);
		}
	}
	if (s->n >= s->max) {
		if (!s->unrecorded++)
			s->unrecorded_first = entry;
		return -E2BIG;
	}
	p = dynbuf_grow(&s->paths, path_len + 1);
	if (!p)
		return -ENOMEM; /* the arena holds at most what the evidence carried */
	memcpy(p, path ? path : "", path_len);
	p[path_len] = '\0';
	v = dynbuf_grow(&s->recs, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(v, 0, sizeof(*v));
	v->entry = v->last_entry = entry;
	v->count = 1;
	v->reason = reason;
	v->path = (const char *)(uintptr_t)(p - s->paths.buf);
	v->path_len = path_len;
	memcpy(v->digest, digest, strnlen(digest, sizeof(v->digest) - 1));
	memcpy(v->template_name, template_name,
	       strnlen(template_name, sizeof(v->template_name) - 1));
	v->reason_slot = -1;
	place(s->slots, s->mask, h, s->n);
	*fresh = true;
	return (long)s->n++;
}

int violation_set_take(struct violation_set *s, struct attest_violation **recs, size_t *n,
		       char **paths)
{
	*recs = NULL;
	*n = 0;
	*paths = NULL;
	if (s->unrecorded) {
		/* The one record past `max` (the recs cap left room for it), with an empty path. */
		struct attest_violation *v = dynbuf_grow(&s->recs, sizeof(*v));
		char *empty = dynbuf_grow(&s->paths, 1);

		if (!v || !empty)
			return -ENOMEM;
		*empty = '\0';
		memset(v, 0, sizeof(*v));
		v->entry = s->unrecorded_first;
		v->last_entry = s->unrecorded_first;
		v->count = s->unrecorded;
		v->reason = REASON_VIOLATIONS_UNRECORDED;
		v->path = (const char *)(uintptr_t)(empty - s->paths.buf);
		v->reason_slot = -1;
		s->n++;
	}
	if (!s->n)
		return 0;
	*n = s->n;
	for (size_t i = 0; i < s->n; i++) {
		struct attest_violation *v = violation_set_at(s, i);

		v->path = path_of(s, v);
	}
	/* The arena stops moving once taken: point the records into it first (done above). */
	*paths = dynbuf_take(&s->paths, NULL);
	*recs = (struct attest_violation *)dynbuf_take(&s->recs, NULL);
	if (!*paths || !*recs) {
		free(*paths);
		free(*recs);
		*paths = NULL;
		*recs = NULL;
		*n = 0;
		return -ENOMEM;
	}
	s->n = 0;
	return 0;
}
