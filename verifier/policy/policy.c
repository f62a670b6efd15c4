/*
 * Allowlist policy engine: parse (ours or Keylime), O(1) lookup, serialise. See policy.h for the
 * API and ownership, policies/README.md for the format.
 *
 * Storage is built for million-entry policies: paths live in one byte arena, digests in another
 * (records of [alg index][digest bytes], contiguous per path), and a path table of 12-byte
 * entries is indexed by open addressing over 8-byte slots. There is one malloc per arena, not
 * per entry. Paths come from the measured machine, so the index hashes with SipHash-2-4 under a
 * random per-table key: an attacker who picks file names cannot aim them at one probe chain.
 */
#include "verifier/policy/policy.h"

#include <errno.h>
#include <malloc.h>
#include <regex.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/alg.h"
#include "proto/dynbuf.h"
#include "proto/siphash.h"
#include "proto/encoding.h"
#include "proto/limits.h"
#include "proto/text.h"
#include "verifier/policy/policy_json.h"
#include "verifier/policy/policy_keys.h"
#include "verifier/policy/boot_policy.h"
#include "verifier/policy/policy_packages.h"

#define POLICY_FORMAT_VERSION 1
/* Import warnings: LIMIT_POLICY_WARNINGS lines of at most POLICY_WARNING_LINE bytes. */
#define POLICY_WARNING_LINE 384u
#define POLICY_WARNINGS_BYTES (LIMIT_POLICY_WARNINGS * (POLICY_WARNING_LINE + 1u))
#define POLICY_MODE_PCRS_NAME "any-matching-pcrs"

/* --- algorithms: proto/alg rows that allow ALG_USE_POLICY; records store the row index --- */

static const struct alg *const algs = alg_table;
#define NALGS ALG_COUNT

static int alg_index(uint16_t id)
{
	const struct alg *a = alg_for_use(id, ALG_USE_POLICY);

	return a ? (int)(a - alg_table) : -1;
}

/*
 * A stored file digest's first byte (a path's records, digest_only's keys): the index of its
 * algorithm in alg_table, with DIG_VERITY set for an fs-verity digest ("verity:alg:hex"), so
 * that a digest matches only one of its own type. boot_aggregate's list holds plain indices.
 */
#define DIG_VERITY 0x80
_Static_assert(ALG_COUNT < DIG_VERITY, "an algorithm index leaves DIG_VERITY free");

static const struct alg *dk_alg(int dk)
{
	return &algs[dk & ~DIG_VERITY];
}

/* The stored byte of a digest of this type and algorithm index, or -1 (IMA_DIGEST_OTHER). */
static int dk_of(enum ima_digest_type type, int ai)
{
	if (ai < 0 || type == IMA_DIGEST_OTHER)
		return -1;
	return type == IMA_DIGEST_VERITY ? (ai | DIG_VERITY) : ai;
}

uint16_t policy_alg_from_name(const char *name, size_t len)
{
	const struct alg *a = alg_by_name_len(name, len);

	return alg_allows(a, ALG_USE_POLICY) ? a->id : 0;
}

const char *policy_alg_name(uint16_t alg)
{
	int i = alg_index(alg);

	return i < 0 ? NULL : algs[i].name;
}

size_t policy_alg_digest_size(uint16_t alg)
{
	int i = alg_index(alg);

	return i < 0 ? 0 : algs[i].size;
}


/*
 * --- byte arenas: dynbufs capped at LIMIT_POLICY_BYTES ------------------------------------
 *
 * A policy's stored bytes never outgrow its JSON (a path is stored with one NUL where the JSON
 * has two quotes, a digest in binary where the JSON has hex), so the JSON's cap bounds each
 * arena; it also keeps every offset within the u32 the tables store.
 */
_Static_assert(LIMIT_POLICY_BYTES <= UINT32_MAX, "arena offsets are u32");

static uint8_t *arena_at(const struct dynbuf *a, size_t off)
{
	return (uint8_t *)a->buf + off;
}

/* --- key table: byte-string keys -> 12-byte entries, open addressing ---------------------- */

struct kentry {
	uint32_t key_off;  /* into keys */
	uint32_t dig_off;  /* into policy->digs: ndig records, contiguous */
	uint16_t key_len;  /* <= LIMIT_IMA_PATH */
	uint16_t ndig;     /* <= LIMIT_POLICY_DIGESTS_PER_PATH */
};

struct kslot {
	uint32_t idx;      /* entry index + 1; 0 = empty */
	uint32_t tag;      /* high half of the hash, to skip most memcmps */
};

struct ktab {
	uint64_t key[2];
	struct kslot *slots;
	uint32_t mask;     /* slot count - 1; slots == NULL when empty */
	uint32_t count;
	struct dynbuf ents; /* struct kentry[count], at most LIMIT_POLICY_ENTRIES */
	struct dynbuf keys; /* arena */
};

static struct kentry *ktab_ent(const struct ktab *t, uint32_t i)
{
	return (struct kentry *)t->ents.buf + i;
}

static int ktab_init(struct ktab *t)
{
	memset(t, 0, sizeof(*t));
	dynbuf_init(&t->ents, (size_t)LIMIT_POLICY_ENTRIES * sizeof(struct kentry));
	dynbuf_init(&t->keys, LIMIT_POLICY_BYTES);
	if (RAND_bytes((unsigned char *)t->key, sizeof(t->key)) != 1)
		return -EIO;
	return 0;
}

static void ktab_release(struct ktab *t)
{
	free(t->slots);
	dynbuf_release(&t->ents);
	dynbuf_release(&t->keys);
	OPENSSL_cleanse(t->key, sizeof(t->key));
}

static uint64_t ktab_hash(const struct ktab *t, const void *key, size_t len)
{
	return siphash24(t->key, key, len);
}

static void ktab_place(struct kslot *slots, uint32_t mask, uint64_t h, uint32_t idx)
{
	uint32_t i = (uint32_t)h & mask;

	while (slots[i].idx)
		i = (i + 1) & mask;
	slots[i].idx = idx + 1;
	slots[i].tag = (uint32_t)(h >> 32);
}

/* Makes room in the index for n entries in total at a load factor of at most 0.7. */
static int ktab_reserve(struct ktab *t, size_t n)
{
	size_t nslots = 16;
	struct kslot *ns;

	if (n > LIMIT_POLICY_ENTRIES)
		return -E2BIG;
	while (nslots * 7 < n * 10)
		nslots *= 2;
	if (t->slots && nslots <= (size_t)t->mask + 1)
		return 0;
	ns = calloc(nslots, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (uint32_t e = 0; e < t->count; e++) {
		const struct kentry *ke = ktab_ent(t, e);

		ktab_place(ns, (uint32_t)(nslots - 1),
			   ktab_hash(t, arena_at(&t->keys, ke->key_off), ke->key_len), e);
	}
	free(t->slots);
	t->slots = ns;
	t->mask = (uint32_t)(nslots - 1);
	return 0;
}

static long ktab_find(const struct ktab *t, const void *key, size_t len)
{
	uint64_t h;
	uint32_t i, tag;

	if (!t->count)
		return -1;
	h = ktab_hash(t, key, len);
	tag = (uint32_t)(h >> 32);
	for (i = (uint32_t)h & t->mask; t->slots[i].idx; i = (i + 1) & t->mask) {
		const struct kentry *e = ktab_ent(t, t->slots[i].idx - 1);

		if (t->slots[i].tag == tag && e->key_len == len &&
		    memcmp(arena_at(&t->keys, e->key_off), key, len) == 0)
			return (long)t->slots[i].idx - 1;
	}
	return -1;
}

/* Inserts a key known to be absent; returns its entry index or -errno. */
static long ktab_insert(struct ktab *t, const void *key, size_t len)
{
	struct kentry *e;
	uint8_t *k;
	int rc;

	if (len > UINT16_MAX)
		return -EINVAL;
	rc = ktab_reserve(t, (size_t)t->count + 1);
	if (rc)
		return rc;
	/* The entry only after the key: a failure leaves ents holding exactly count entries. */
	k = dynbuf_grow(&t->keys, len + 1);
	if (!k)
		return dynbuf_error(&t->keys);
	e = dynbuf_grow(&t->ents, sizeof(*e));
	if (!e)
		return dynbuf_error(&t->ents);
	e->key_off = (uint32_t)(k - arena_at(&t->keys, 0));
	e->key_len = (uint16_t)len;
	e->dig_off = 0;
	e->ndig = 0;
	memcpy(k, key, len);
	/* NUL after each key so a path can be handed to C string APIs when serialising. */
	k[len] = '\0';
	ktab_place(t->slots, t->mask, ktab_hash(t, key, len), t->count);
	return (long)t->count++;
}

/* --- the policy ------------------------------------------------------------------------- */

struct ba_value {
	uint8_t ai;  /* index into algs */
	uint8_t d[LIMIT_DIGEST];
};

struct exclude {
	char *src;   /* our syntax, as serialised */
	regex_t re;  /* "^(src)$" */
};

struct policy {
	atomic_size_t refs;
	bool keylime;
	bool violations_ignore;
	bool reboot_clears; /* "reboot_clears_open_violations": true */
	enum policy_boot_aggregate_mode ba_mode;
	char *description;
	struct ktab paths;  /* path -> digests */
	struct ktab donly;  /* [ai][digest] -> nothing: digest_only */
	struct dynbuf digs; /* arena of [ai][digest] records */
	struct dynbuf ba;   /* struct ba_value[nba], at most LIMIT_POLICY_DIGESTS_PER_PATH */
	size_t nba;
	struct dynbuf ex;   /* struct exclude[nex], at most LIMIT_POLICY_EXCLUDES */
	size_t nex;
	struct policy_keys *keys; /* signature section: policy_keys.c */
	struct dynbuf warnings;   /* import warnings, one per line */
	struct boot_policy *boot; /* the "boot" section (boot_policy.c); NULL: none */
	struct policy_packages *pkgs; /* the "packages" section (policy_packages.c); NULL: none */
	bool conffiles_any;       /* "conffiles": "any": a conffile's path passes with any content */
};

static struct ba_value *ba_at(const struct policy *p, size_t i)
{
	return (struct ba_value *)p->ba.buf + i;
}

static struct exclude *ex_at(const struct policy *p, size_t i)
{
	return (struct exclude *)p->ex.buf + i;
}

struct policy *policy_new(void)
{
	struct policy *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	atomic_init(&p->refs, 1);
	dynbuf_init(&p->digs, LIMIT_POLICY_BYTES);
	dynbuf_init(&p->ba, (size_t)LIMIT_POLICY_DIGESTS_PER_PATH * sizeof(struct ba_value));
	dynbuf_init(&p->ex, (size_t)LIMIT_POLICY_EXCLUDES * sizeof(struct exclude));
	dynbuf_init(&p->warnings, POLICY_WARNINGS_BYTES);
	p->ba_mode = POLICY_BOOT_AGGREGATE_MATCHING_PCRS;
	p->keys = policy_keys_new();
	if (!p->keys || ktab_init(&p->paths) || ktab_init(&p->donly)) {
		policy_keys_free(p->keys);
		free(p);
		return NULL;
	}
	return p;
}

static void policy_destroy(struct policy *p)
{
	ktab_release(&p->paths);
	ktab_release(&p->donly);
	dynbuf_release(&p->digs);
	dynbuf_release(&p->ba);
	for (size_t i = 0; i < p->nex; i++) {
		regfree(&ex_at(p, i)->re);
		free(ex_at(p, i)->src);
	}
	dynbuf_release(&p->ex);
	policy_keys_free(p->keys);
	dynbuf_release(&p->warnings);
	boot_policy_free(p->boot);
	policy_packages_free(p->pkgs);
	free(p->description);
	free(p);
}

struct policy *policy_ref(struct policy *p)
{
	if (p)
		atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
	return p;
}

void policy_unref(struct policy *p)
{
	if (p && atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1)
		policy_destroy(p);
}

void policy_free(struct policy *p)
{
	policy_unref(p);
}

static bool policy_shared(const struct policy *p)
{
	return atomic_load_explicit(&((struct policy *)p)->refs, memory_order_acquire) != 1;
}

/* The index of the path's record of (ai, d), or -1. */
static int records_find(const struct policy *p, const struct kentry *e, int ai, const uint8_t *d)
{
	const uint8_t *r = arena_at(&p->digs, e->dig_off);

	for (uint16_t n = 0; n < e->ndig; n++) {
		size_t sz = dk_alg(r[0])->size;

		if (r[0] == ai && memcmp(r + 1, d, sz) == 0)
			return n;
		r += 1 + sz;
	}
	return -1;
}

static bool records_contain(const struct policy *p, const struct kentry *e, int ai,
			    const uint8_t *d)
{
	return records_find(p, e, ai, d) >= 0;
}

static size_t records_len(const struct policy *p, const struct kentry *e)
{
	size_t len = 0;

	for (uint16_t n = 0; n < e->ndig; n++)
		len += 1 + dk_alg(*arena_at(&p->digs, e->dig_off + len))->size;
	return len;
}

/*
 * Appends a digest to entry ei. A path's records must stay contiguous: loading appends them in
 * order, so only a later addition to an earlier path moves that path's records to the tail.
 */
static int entry_add_digest_nth(struct policy *p, uint32_t ei, int ai, const uint8_t *d,
				uint16_t *nth)
{
	struct kentry *e = ktab_ent(&p->paths, ei);
	size_t old = records_len(p, e), sz = dk_alg(ai)->size;
	int have = records_find(p, e, ai, d);
	uint8_t *at;

	if (have >= 0) {
		*nth = (uint16_t)have;
		return 0;
	}
	if (e->ndig >= LIMIT_POLICY_DIGESTS_PER_PATH)
		return -E2BIG;
	if (e->ndig && (size_t)e->dig_off + old == p->digs.len) {
		at = dynbuf_grow(&p->digs, 1 + sz);
		if (!at)
			return dynbuf_error(&p->digs);
	} else {
		at = dynbuf_grow(&p->digs, old + 1 + sz);
		if (!at)
			return dynbuf_error(&p->digs);
		memmove(at, arena_at(&p->digs, e->dig_off), old);
		e->dig_off = (uint32_t)(at - arena_at(&p->digs, 0));
		at += old;
	}
	at[0] = (uint8_t)ai;
	memcpy(at + 1, d, sz);
	/* Records are only ever appended, moved whole: a record's index in its path is stable,
	 * which is what a package's reference to it (policy_packages.h) relies on. */
	*nth = e->ndig++;
	return 0;
}

static int entry_add_digest(struct policy *p, uint32_t ei, int ai, const uint8_t *d)
{
	uint16_t nth;

	return entry_add_digest_nth(p, ei, ai, d, &nth);
}

static long path_entry(struct policy *p, const char *path, size_t len)
{
	long ei = ktab_find(&p->paths, path, len);

	return ei >= 0 ? ei : ktab_insert(&p->paths, path, len);
}

static int donly_add(struct policy *p, int ai, const uint8_t *d)
{
	uint8_t key[1 + LIMIT_DIGEST];
	size_t klen = 1 + dk_alg(ai)->size;
	long rc;

	key[0] = (uint8_t)ai;
	memcpy(key + 1, d, dk_alg(ai)->size);
	if (ktab_find(&p->donly, key, klen) >= 0)
		return 0;
	rc = ktab_insert(&p->donly, key, klen);
	return rc < 0 ? (int)rc : 0;
}

static int ba_add(struct policy *p, int ai, const uint8_t *d)
{
	struct ba_value *nb;

	for (size_t i = 0; i < p->nba; i++)
		if (ba_at(p, i)->ai == ai && memcmp(ba_at(p, i)->d, d, algs[ai].size) == 0)
			return 0;
	if (p->nba >= LIMIT_POLICY_DIGESTS_PER_PATH)
		return -E2BIG;
	nb = dynbuf_grow(&p->ba, sizeof(*nb));
	if (!nb)
		return dynbuf_error(&p->ba);
	memset(nb, 0, sizeof(*nb));
	nb->ai = (uint8_t)ai;
	memcpy(nb->d, d, algs[ai].size);
	p->nba++;
	p->ba_mode = POLICY_BOOT_AGGREGATE_LIST;
	return 0;
}

/* Why a path cannot be a key, or NULL when it can. */
static const char *path_problem(const char *path, size_t len)
{
	if (len == 0)
		return "empty path";
	if (len > LIMIT_IMA_PATH)
		return "path longer than LIMIT_IMA_PATH";
	if (memchr(path, '\0', len))
		return "NUL in path";
	if (memchr(path, ' ', len))
		return "space in path: IMA records spaces as '_', write the path with '_'";
	return NULL;
}

int policy_add_digest_bytes(struct policy *p, const char *path, size_t path_len, uint16_t alg,
			    const uint8_t *digest, size_t len)
{
	return policy_add_file_digest(p, path, path_len, IMA_DIGEST_IMA, alg, digest, len);
}

int policy_add_file_digest(struct policy *p, const char *path, size_t path_len,
			   enum ima_digest_type type, uint16_t alg, const uint8_t *digest,
			   size_t len)
{
	int ai = dk_of(type, alg_index(alg));
	long ei;

	if (!p || !path || !digest || ai < 0 || len != dk_alg(ai)->size)
		return -EINVAL;
	if (policy_shared(p))
		return -EBUSY;
	/* Raw bytes: a path that is not UTF-8 is serialised under digests_hex. */
	if (path_problem(path, path_len))
		return -EINVAL;
	ei = path_entry(p, path, path_len);
	if (ei < 0)
		return (int)ei;
	return entry_add_digest(p, (uint32_t)ei, ai, digest);
}

int policy_add_digest(struct policy *p, const char *path, uint16_t alg, const uint8_t *digest,
		      size_t len)
{
	return policy_add_digest_bytes(p, path, path ? strlen(path) : 0, alg, digest, len);
}


static bool exclude_too_complex(const char *src)
{
	unsigned quant = 0;
	bool br = false;

	if (strlen(src) > LIMIT_POLICY_EXCLUDE_BYTES)
		return true;
	for (const char *c = src; *c; c++) {
		if (*c == '\\' && c[1]) {
			c++;
		} else if (br) {
			br = *c != ']';
		} else if (*c == '[') {
			br = true;
			if (c[1] == '^')
				c++;
			if (c[1] == ']')
				c++; /* a ']' first in a bracket is literal */
		} else if (*c == '*' || *c == '+' || *c == '?' || *c == '{') {
			quant++;
		}
	}
	return quant > LIMIT_POLICY_EXCLUDE_QUANTIFIERS;
}

/* Compiles our-syntax src (whole-path match) into ex. Returns 0 or a regcomp error code. */
static int exclude_compile(const char *src, regex_t *re, char *why, size_t whylen)
{
	size_t n = strlen(src);
	char *anchored;
	int rc;

	if (exclude_too_complex(src)) {
		snprintf(why, whylen, "pattern longer than %u bytes or with more than %u repeats",
			 LIMIT_POLICY_EXCLUDE_BYTES, LIMIT_POLICY_EXCLUDE_QUANTIFIERS);
		return REG_BADPAT;
	}

	/* Compile alone first: a pattern that compiles by itself has balanced groups, so
	 * wrapping it in ^(...)$ cannot change what its alternatives bind to. */
	rc = regcomp(re, src, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, re, why, whylen);
		regfree(re);
		return rc;
	}
	regfree(re);
	anchored = malloc(n + 5);
	if (!anchored) {
		snprintf(why, whylen, "out of memory");
		return REG_ESPACE;
	}
	memcpy(anchored, "^(", 2);
	memcpy(anchored + 2, src, n);
	memcpy(anchored + 2 + n, ")$", 3);
	rc = regcomp(re, anchored, REG_EXTENDED | REG_NOSUB);
	free(anchored);
	if (rc) {
		regerror(rc, re, why, whylen);
		regfree(re);
	}
	return rc;
}

static int exclude_add(struct policy *p, const char *src, char *why, size_t whylen)
{
	struct exclude ne;
	int rc;

	if (p->nex >= LIMIT_POLICY_EXCLUDES) {
		snprintf(why, whylen, "more than LIMIT_POLICY_EXCLUDES (%u) excludes",
			 LIMIT_POLICY_EXCLUDES);
		return -E2BIG;
	}
	ne.src = strdup(src);
	if (!ne.src)
		return -ENOMEM;
	rc = exclude_compile(src, &ne.re, why, whylen);
	if (rc) {
		free(ne.src);
		return rc == REG_ESPACE ? -ENOMEM : -EINVAL;
	}
	/* A compiled regex_t moves like any struct: the array was always grown by realloc. */
	rc = dynbuf_add(&p->ex, &ne, sizeof(ne));
	if (rc) {
		regfree(&ne.re);
		free(ne.src);
		snprintf(why, whylen, "%s", strerror(-rc));
		return rc;
	}
	p->nex++;
	return 0;
}

int policy_add_exclude(struct policy *p, const char *regex)
{
	char why[128];

	if (!p || !regex || !*regex || strlen(regex) > LIMIT_IMA_PATH)
		return -EINVAL;
	if (policy_shared(p))
		return -EBUSY;
	return exclude_add(p, regex, why, sizeof(why));
}

/* --- lookups ---------------------------------------------------------------------------- */

static bool path_excluded(const struct policy *p, const char *path, size_t len)
{
	char buf[LIMIT_IMA_PATH + 1];

	/* Longer paths are never excluded (fail closed) and never cost a long regex scan. */
	if (!p->nex || len > LIMIT_IMA_PATH || memchr(path, '\0', len))
		return false;
	/* A counted copy rather than REG_STARTEND: sanitizers' regexec interceptors strlen() the
	 * subject, and paths usually point into a list buffer with no NUL after them. */
	memcpy(buf, path, len);
	buf[len] = '\0';
	for (size_t i = 0; i < p->nex; i++)
		if (regexec(&ex_at(p, i)->re, buf, 0, NULL, 0) == 0)
			return true;
	return false;
}

enum policy_decision policy_check(const struct policy *p, const char *path, size_t path_len,
				  uint16_t alg, const uint8_t *digest, size_t digest_len)
{
	return policy_check_typed(p, path, path_len, IMA_DIGEST_IMA, alg, digest, digest_len);
}

enum policy_decision policy_check_typed(const struct policy *p, const char *path,
					size_t path_len, enum ima_digest_type type, uint16_t alg,
					const uint8_t *digest, size_t digest_len)
{
	int ai = dk_of(type, alg_index(alg));
	bool okdig = ai >= 0 && digest && digest_len == dk_alg(ai)->size;
	long ei;

	if (!p || (!path && path_len))
		return POLICY_NOT_IN_ALLOWLIST;
	if (path_len <= LIMIT_IMA_PATH) {
		ei = ktab_find(&p->paths, path, path_len);
		if (ei >= 0) {
			uint32_t owner;
			bool conffile;

			if (okdig && records_contain(p, ktab_ent(&p->paths, (uint32_t)ei), ai, digest))
				return POLICY_ALLOWED;
			/* "conffiles": "any": the operator accepts whatever a machine made of its
			 * configuration files, and only of those. */
			if (p->conffiles_any &&
			    policy_packages_owner(p->pkgs, (uint32_t)ei, &owner, &conffile) && conffile)
				return POLICY_EXCLUDED;
			return POLICY_DIGEST_MISMATCH;
		}
	}
	if (okdig && p->donly.count) {
		uint8_t key[1 + LIMIT_DIGEST];

		key[0] = (uint8_t)ai;
		memcpy(key + 1, digest, digest_len);
		if (ktab_find(&p->donly, key, 1 + digest_len) >= 0)
			return POLICY_ALLOWED;
	}
	if (path && path_excluded(p, path, path_len))
		return POLICY_EXCLUDED;
	return POLICY_NOT_IN_ALLOWLIST;
}

bool policy_excluded(const struct policy *p, const char *path, size_t path_len)
{
	if (!p || !path || path_len > LIMIT_IMA_PATH || ktab_find(&p->paths, path, path_len) >= 0)
		return false;
	return path_excluded(p, path, path_len);
}

const struct policy_keys *policy_keys(const struct policy *p)
{
	return p ? p->keys : NULL;
}

const char *policy_warnings(const struct policy *p)
{
	return p ? dynbuf_str(&p->warnings) : "";
}

const char *policy_warning(const struct policy *p, size_t i, size_t *len)
{
	const char *w = policy_warnings(p);

	for (; *w; i--) {
		size_t n = strcspn(w, "\n");

		if (!i) {
			*len = n;
			return w;
		}
		w += n + (w[n] == '\n');
	}
	return NULL;
}

const char *policy_decision_name(enum policy_decision d)
{
	switch (d) {
	case POLICY_ALLOWED:
		return "allowed";
	case POLICY_EXCLUDED:
		return "excluded";
	case POLICY_NOT_IN_ALLOWLIST:
		return "not_in_allowlist";
	case POLICY_DIGEST_MISMATCH:
		return "digest_mismatch";
	}
	return "unknown";
}

bool policy_violations_allowed(const struct policy *p)
{
	return p && p->violations_ignore;
}

bool policy_reboot_clears_open_violations(const struct policy *p)
{
	return p && p->reboot_clears;
}

enum policy_boot_aggregate_mode policy_boot_aggregate_mode(const struct policy *p)
{
	return p ? p->ba_mode : POLICY_BOOT_AGGREGATE_MATCHING_PCRS;
}

bool policy_boot_aggregate_accepts(const struct policy *p, uint16_t alg, const uint8_t *digest,
				   size_t len)
{
	int ai = alg_index(alg);

	if (!p || p->ba_mode != POLICY_BOOT_AGGREGATE_LIST || ai < 0 || !digest ||
	    len != algs[ai].size)
		return false;
	for (size_t i = 0; i < p->nba; i++)
		if (ba_at(p, i)->ai == ai && memcmp(ba_at(p, i)->d, digest, len) == 0)
			return true;
	return false;
}

size_t policy_entry_count(const struct policy *p)
{
	return p ? p->paths.count : 0;
}

bool policy_is_keylime(const struct policy *p)
{
	return p && p->keylime;
}

size_t policy_package_count(const struct policy *p)
{
	return p ? policy_packages_count(p->pkgs) : 0;
}

bool policy_explain(const struct policy *p, const char *path, size_t path_len,
		    enum policy_decision d, char *out, size_t cap)
{
	char shown[TEXT_ESCAPED_MAX(POLICY_EXPLAIN_PATH)];
	char versions[POLICY_EXPLANATION_MAX / 2];
	uint32_t owner;
	bool conffile;
	long ei;

	if (cap)
		out[0] = '\0';
	if (!p || !p->pkgs || !path || path_len > LIMIT_IMA_PATH || !cap)
		return false;
	/* The path shown as text_render() shows any path to an operator, cut to fit a line. */
	text_render(path, path_len < POLICY_EXPLAIN_PATH ? path_len : POLICY_EXPLAIN_PATH, shown,
		    sizeof(shown));
	ei = ktab_find(&p->paths, path, path_len);
	if (d == POLICY_NOT_IN_ALLOWLIST && ei < 0) {
		snprintf(out, cap, "%s%s: no package owns this path", shown,
			 path_len > POLICY_EXPLAIN_PATH ? "..." : "");
		return true;
	}
	if (d != POLICY_DIGEST_MISMATCH || ei < 0 ||
	    !policy_packages_owner(p->pkgs, (uint32_t)ei, &owner, &conffile))
		return false;
	policy_packages_versions_text(p->pkgs, owner, versions, sizeof(versions));
	snprintf(out, cap, "%s%s: not the content of any known version of %s; %s", shown,
		 path_len > POLICY_EXPLAIN_PATH ? "..." : "", versions,
		 conffile ? "a conffile the machine changed (set \"conffiles\": \"any\" to accept local configuration)"
			  : "the file was changed after installation or comes from elsewhere");
	return true;
}

const struct boot_policy *policy_boot(const struct policy *p)
{
	return p ? p->boot : NULL;
}

int policy_boot_teach(struct policy *p, const char *category, const char *subject,
		      const char *digest, char *why, size_t whylen)
{
	if (policy_shared(p))
		return -EBUSY;
	if (!p->boot && !(p->boot = boot_policy_new()))
		return -ENOMEM;
	return boot_policy_teach(p->boot, category, subject, digest, why, whylen);
}

/* --- loading ---------------------------------------------------------------------------- */

void policy_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

#define seterr policy_seterr

void policy_warn(struct dynbuf *warnings, const char *fmt, ...)
{
	char line[POLICY_WARNING_LINE];
	size_t lines = 0;
	va_list ap;

	for (size_t i = 0; i < warnings->len; i++)
		lines += warnings->buf[i] == '\n';
	/* Past the cap one last line says so: no warning disappears without a trace. */
	if (lines >= LIMIT_POLICY_WARNINGS)
		return;
	if (lines == LIMIT_POLICY_WARNINGS - 1) {
		dynbuf_adds(warnings, "more than " LIMIT_STR(LIMIT_POLICY_WARNINGS)
			    " warnings: the rest are not listed; fix these and load the policy again\n");
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	line[strcspn(line, "\n")] = '\0';
	dynbuf_adds(warnings, line);
	dynbuf_adds(warnings, "\n");
}

static bool depth_ok(const json_t *v, unsigned depth)
{
	const char *k;
	json_t *c;
	size_t i;

	if (depth > LIMIT_JSON_DEPTH)
		return false;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, c)
			if (!depth_ok(c, depth + 1))
				return false;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, c)
			if (!depth_ok(c, depth + 1))
				return false;
	}
	return true;
}

const struct alg *policy_digest_parse(const char *s, size_t len, uint8_t *out, const char **why)
{
	const char *colon = memchr(s, ':', len), *hex;
	const struct alg *a;
	size_t hlen;

	if (!colon) {
		*why = "not \"alg:hex\"";
		return NULL;
	}
	a = alg_by_name_len(s, (size_t)(colon - s));
	if (!alg_allows(a, ALG_USE_POLICY)) {
		*why = "unknown algorithm (sha1, sha256, sha384, sha512)";
		return NULL;
	}
	hex = colon + 1;
	hlen = len - (size_t)(hex - s);
	for (size_t i = 0; i < hlen; i++) {
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f'))) {
			*why = "not lowercase hex";
			return NULL;
		}
	}
	if (hlen != 2 * a->size) {
		*why = "digest length does not match the algorithm";
		return NULL;
	}
	hex_decode(hex, hlen, out, LIMIT_DIGEST);
	return a;
}

const struct alg *policy_file_digest_parse(const char *s, size_t len, uint8_t *out,
					   enum ima_digest_type *type, const char **why)
{
	*type = IMA_DIGEST_IMA;
	if (len > 4 && memcmp(s, "ima:", 4) == 0) {
		s += 4, len -= 4;
	} else if (len > 7 && memcmp(s, "verity:", 7) == 0) {
		*type = IMA_DIGEST_VERITY;
		s += 7, len -= 7;
	}
	return policy_digest_parse(s, len, out, why);
}

/* Parses "alg:hex" (ours: lowercase hex). Returns the alg index or -1 with *why set. */
static int parse_alg_digest(const json_t *v, uint8_t *out, const char **why)
{
	const struct alg *a;

	if (!json_is_string(v)) {
		*why = "not a string";
		return -1;
	}
	a = policy_digest_parse(json_string_value(v), json_string_length(v), out, why);
	return a ? (int)(a - alg_table) : -1;
}

/*
 * A file digest: "alg:hex", "ima:alg:hex" or "verity:alg:hex". Returns its stored byte (an alg
 * index, DIG_VERITY set for verity) or -1 with *why set.
 */
static int parse_file_digest(const json_t *v, uint8_t *out, const char **why)
{
	enum ima_digest_type type;
	const struct alg *a;

	if (!json_is_string(v)) {
		*why = "not a string";
		return -1;
	}
	a = policy_file_digest_parse(json_string_value(v), json_string_length(v), out, &type, why);
	return a ? dk_of(type, (int)(a - alg_table)) : -1;
}

/* Keylime digests carry no algorithm: the hex length implies it (keylime ima.py does so). */
static int parse_keylime_digest(const json_t *v, uint8_t *out, const char **why)
{
	const char *s;
	size_t len;

	if (!json_is_string(v)) {
		*why = "not a string";
		return -1;
	}
	s = json_string_value(v);
	len = json_string_length(v);
	for (size_t ai = 0; ai < NALGS; ai++) {
		if (alg_allows(&algs[ai], ALG_USE_POLICY) && len == 2 * algs[ai].size) {
			if (hex_decode(s, len, out, LIMIT_DIGEST) != (ssize_t)algs[ai].size) {
				*why = "not hex";
				return -1;
			}
			return (int)ai;
		}
	}
	*why = "hex length is none of 40, 64, 96, 128";
	return -1;
}

uint16_t policy_json_digest(const json_t *v, bool keylime, uint8_t *out, const char **why)
{
	int ai = keylime ? parse_keylime_digest(v, out, why) : parse_alg_digest(v, out, why);

	return ai < 0 ? 0 : algs[ai].id;
}

/* Where a digests table comes from: its keys are paths, hex of raw paths, or Keylime's. */
enum digests_form {
	DIGESTS_OURS,    /* "digests": UTF-8 path -> ["alg:hex"] */
	DIGESTS_HEX,     /* "digests_hex": hex of a path that is not UTF-8 -> ["alg:hex"] */
	DIGESTS_KEYLIME, /* Keylime "digests": path -> [hex] */
};

/*
 * The raw path a key of `form` stands for, returned with its length in *plen (in buf when it
 * is not the key itself); NULL with *why set when the key names no path.
 */
static const char *digests_key_path(const char *key, enum digests_form form, char *buf,
				    size_t *plen, const char **why)
{
	size_t klen = strlen(key);
	ssize_t n;

	*plen = klen;
	if (form == DIGESTS_KEYLIME && klen <= LIMIT_IMA_PATH && memchr(key, ' ', klen)) {
		/* Keylime compares the recorded (underscored) name: map its policy keys the same
		 * way; two keys that collide merge their digests. */
		memcpy(buf, key, klen);
		for (size_t i = 0; i < klen; i++)
			if (buf[i] == ' ')
				buf[i] = '_';
		return buf;
	}
	if (form != DIGESTS_HEX)
		return key;
	/* One spelling per path: lowercase hex, and only for names JSON cannot carry. */
	if (klen > 2 * LIMIT_IMA_PATH || strspn(key, "0123456789abcdef") != klen ||
	    (n = hex_decode(key, klen, (uint8_t *)buf, LIMIT_IMA_PATH)) < 0) {
		*why = "not lowercase hex of at most " LIMIT_STR(LIMIT_IMA_PATH) " bytes";
		return NULL;
	}
	*plen = (size_t)n;
	if (*plen && text_is_utf8(buf, *plen)) {
		*why = "the path is UTF-8: write it under \"digests\"";
		return NULL;
	}
	return buf;
}

static int load_digests(struct policy *p, const json_t *digests, enum digests_form form,
			char *err, size_t errlen)
{
	const char *table = form == DIGESTS_HEX ? "digests_hex" : "digests";
	bool keylime = form == DIGESTS_KEYLIME;
	uint8_t d[LIMIT_DIGEST];
	const char *key, *why;
	char *buf = NULL;
	json_t *list, *v;
	size_t i;
	int rc = -EINVAL;

	if (!json_is_object(digests)) {
		seterr(err, errlen, "\"%s\" must be an object of path -> list", table);
		return -EINVAL;
	}
	buf = malloc(LIMIT_IMA_PATH + 1);
	if (!buf)
		return -ENOMEM;
	rc = ktab_reserve(&p->paths, (size_t)p->paths.count + json_object_size(digests));
	if (rc) {
		seterr(err, errlen, "out of memory for %zu paths", json_object_size(digests));
		goto out;
	}
	/* json_object_foreach finds the next pair through the key: never reassign it. Messages
	 * quote the key (always UTF-8), never the raw path. */
	json_object_foreach((json_t *)digests, key, list) {
		bool is_ba = keylime && strcmp(key, "boot_aggregate") == 0;
		const char *path, *problem;
		size_t plen;
		long ei = -1;

		rc = -EINVAL;
		path = digests_key_path(key, form, buf, &plen, &why);
		problem = path ? path_problem(path, plen) : why;
		if (problem) {
			seterr(err, errlen, "%s[\"%.200s\"]: %s", table, key, problem);
			goto out;
		}
		if (!json_is_array(list)) {
			seterr(err, errlen, "%s[\"%.200s\"]: must be a list of digests", table, key);
			goto out;
		}
		if (json_array_size(list) > LIMIT_POLICY_DIGESTS_PER_PATH) {
			seterr(err, errlen, "%s[\"%.200s\"]: more than %u digests", table, key,
			       LIMIT_POLICY_DIGESTS_PER_PATH);
			goto out;
		}
		if (!is_ba) {
			ei = path_entry(p, path, plen);
			if (ei < 0) {
				rc = (int)ei;
				seterr(err, errlen, "%s[\"%.200s\"]: cannot store", table, key);
				goto out;
			}
		}
		json_array_foreach(list, i, v) {
			int ai = keylime ? parse_keylime_digest(v, d, &why)
				 : is_ba ? parse_alg_digest(v, d, &why)
					 : parse_file_digest(v, d, &why);

			if (ai < 0) {
				seterr(err, errlen, "%s[\"%.200s\"][%zu]: %s", table, key, i, why);
				rc = -EINVAL;
				goto out;
			}
			rc = is_ba ? ba_add(p, ai, d) : entry_add_digest(p, (uint32_t)ei, ai, d);
			if (rc) {
				seterr(err, errlen, "%s[\"%.200s\"][%zu]: cannot store (%s)", table,
				       key, i, strerror(-rc));
				goto out;
			}
		}
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

/*
 * Rewrites a Python `re` pattern (as Keylime applies it, with re.match: anchored at the start
 * only) into our syntax (POSIX ERE, whole-path match): "(translated).*". Maps the common
 * Python-only spellings; anything whose meaning would change (lookaround, backreferences,
 * inline flags, possessive quantifiers) is refused. Returns NULL with *why set.
 */
static char *keylime_regex(const char *py, const char **why, char *whybuf, size_t whylen)
{
	size_t n = strlen(py), o = 0;
	char *out = malloc(n * 16 + 8);
	bool br = false;   /* inside [...] */
	bool quant = false; /* the previous token was *, + or ? */
	size_t br_start = 0;
	regex_t re;
	int rc;

	if (!out) {
		*why = "out of memory";
		return NULL;
	}
	out[o++] = '(';
	for (size_t i = 0; i < n; i++) {
		char c = py[i], nx = i + 1 < n ? py[i + 1] : '\0';
		const char *rep = NULL;
		bool after_quant = quant;

		quant = false;
		if (br) {
			if (c == ']' && i > br_start) {
				br = false;
				out[o++] = c;
				continue;
			}
			if (c == '[' && (nx == ':' || nx == '.' || nx == '=')) {
				/* "[[:alpha:]]" is a class in POSIX but literal characters in Python. */
				*why = "\"[:\", \"[.\" or \"[=\" inside [...] (POSIX classes mean otherwise in Python)";
				goto fail;
			}
			if (c != '\\') {
				out[o++] = c;
				continue;
			}
			i++;
			switch (nx) {
			case 'd': rep = "[:digit:]"; break;
			case 'w': rep = "[:alnum:]_"; break;
			case 's': rep = "[:space:]"; break;
			case 'n': rep = "\n"; break;
			case 't': rep = "\t"; break;
			case '\\': rep = "\\"; break;
			default:
				/* POSIX brackets have no escapes: a literal punctuation character
				 * stands for itself, except the three with positional meaning. */
				if (nx && nx != ']' && nx != '^' && nx != '-' &&
				    !((nx >= '0' && nx <= '9') || (nx >= 'a' && nx <= 'z') ||
				      (nx >= 'A' && nx <= 'Z'))) {
					out[o++] = nx;
					continue;
				}
				*why = "unsupported escape inside [...]";
				goto fail;
			}
			memcpy(out + o, rep, strlen(rep));
			o += strlen(rep);
			continue;
		}
		switch (c) {
		case '[':
			br = true;
			out[o++] = c;
			if (nx == '^') {
				out[o++] = '^';
				i++;
			}
			/* A ']' right after '[' or '[^' is literal in both dialects. */
			br_start = i + 1;
			continue;
		case '(':
			if (nx == '?') {
				if (i + 2 < n && py[i + 2] == ':') {
					out[o++] = '(';
					i += 2;
					continue;
				}
				*why = "(?...) construct other than (?:...) (lookaround, flags, names)";
				goto fail;
			}
			out[o++] = c;
			continue;
		case '*':
		case '+':
		case '?':
		case '}':
			/* Python refuses "a**" (multiple repeat); glibc takes it, and compiles a run
			 * of them in superlinear time (fuzz_policy: 23 s for one policy). */
			if (after_quant && c != '}') {
				*why = "multiple repeat (a quantifier right after *, + or ?)";
				goto fail;
			}
			quant = c != '}';
			out[o++] = c;
			if (nx == '?')  /* lazy: under re.match only the match's length differs */
				i++;
			else if (nx == '+') {
				*why = "possessive quantifier";
				goto fail;
			}
			continue;
		case '\\':
			i++;
			switch (nx) {
			case 'd': rep = "[0-9]"; break;
			case 'D': rep = "[^0-9]"; break;
			case 'w': rep = "[[:alnum:]_]"; break;
			case 'W': rep = "[^[:alnum:]_]"; break;
			case 's': rep = "[[:space:]]"; break;
			case 'S': rep = "[^[:space:]]"; break;
			case 'A': rep = "^"; break;
			case 'Z': rep = "$"; break;
			case 'n': rep = "\n"; break;
			case 't': rep = "\t"; break;
			default:
				if (nx && strchr(".[]{}()\\*+?|^$", nx)) {
					out[o++] = '\\';
					out[o++] = nx;
					continue;
				}
				if (nx && !((nx >= '0' && nx <= '9') || (nx >= 'a' && nx <= 'z') ||
					    (nx >= 'A' && nx <= 'Z'))) {
					out[o++] = nx;  /* "\/", "\-": the character itself */
					continue;
				}
				*why = "unsupported escape (backreference, \\b, \\x, ...)";
				goto fail;
			}
			memcpy(out + o, rep, strlen(rep));
			o += strlen(rep);
			continue;
		default:
			out[o++] = c;
		}
	}
	if (br) {
		*why = "unterminated [";
		goto fail;
	}
	/* The translation alone must compile, or its parentheses could pair with ours. */
	out[o] = '\0';
	rc = regcomp(&re, out + 1, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, &re, whybuf, whylen);
		regfree(&re);
		*why = whybuf;
		goto fail;
	}
	regfree(&re);
	memcpy(out + o, ").*", 4);
	return out;
fail:
	free(out);
	return NULL;
}

static int load_excludes(struct policy *p, const json_t *list, bool keylime, char *err,
			 size_t errlen)
{
	char whybuf[160];
	json_t *v;
	size_t i;
	int rc;

	if (!json_is_array(list)) {
		seterr(err, errlen, "\"excludes\" must be a list of regular expressions");
		return -EINVAL;
	}
	if (json_array_size(list) > LIMIT_POLICY_EXCLUDES - p->nex) {
		seterr(err, errlen, "\"excludes\": more than LIMIT_POLICY_EXCLUDES (%u)",
		       LIMIT_POLICY_EXCLUDES);
		return -E2BIG;
	}
	json_array_foreach(list, i, v) {
		const char *src, *why = NULL;
		char *conv = NULL;

		if (!json_is_string(v) || json_string_length(v) == 0 ||
		    json_string_length(v) > LIMIT_IMA_PATH ||
		    strlen(json_string_value(v)) != json_string_length(v)) {
			seterr(err, errlen, "excludes[%zu]: must be a non-empty string of at most %u bytes",
			       i, LIMIT_IMA_PATH);
			return -EINVAL;
		}
		src = json_string_value(v);
		if (keylime) {
			conv = keylime_regex(src, &why, whybuf, sizeof(whybuf));
			if (!conv) {
				seterr(err, errlen, "excludes[%zu]: Python pattern \"%.200s\" refused: %s",
				       i, src, why);
				return -EINVAL;
			}
		}
		rc = exclude_add(p, conv ? conv : src, whybuf, sizeof(whybuf));
		free(conv);
		if (rc) {
			seterr(err, errlen, "excludes[%zu]: regcomp refused \"%.200s\": %s", i, src,
			       rc == -ENOMEM ? "out of memory" : whybuf);
			return rc;
		}
	}
	return 0;
}

static int load_digest_list(const json_t *list, const char *key, struct policy *p,
			    int (*add)(struct policy *, int, const uint8_t *), char *err,
			    size_t errlen)
{
	uint8_t d[LIMIT_DIGEST];
	const char *why;
	json_t *v;
	size_t i;
	int rc;

	json_array_foreach(list, i, v) {
		/* digest_only lists file digests, typed; boot_aggregate's are IMA's own. */
		int ai = add == donly_add ? parse_file_digest(v, d, &why) : parse_alg_digest(v, d, &why);

		if (ai < 0) {
			seterr(err, errlen, "%s[%zu]: %s", key, i, why);
			return -EINVAL;
		}
		rc = add(p, ai, d);
		if (rc) {
			seterr(err, errlen, "%s[%zu]: cannot store (%s)", key, i, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/*
 * A package field as Debian spells it (policy 5.6.1, 5.6.7, 5.6.12): a name of lowercase
 * letters, digits and "+-.", a version of letters, digits and ".+~:-", an architecture of
 * lowercase letters, digits and "-". Narrower than what JSON carries, so that a violation's
 * text naming the package can be read as it is.
 */
static const char *package_field(const json_t *o, const char *key, const char *allowed)
{
	const json_t *v = json_object_get(o, key);
	const char *s;
	size_t n;

	if (!json_is_string(v))
		return NULL;
	s = json_string_value(v);
	n = json_string_length(v);
	if (n == 0 || n > LIMIT_PACKAGE_FIELD || strlen(s) != n || strspn(s, allowed) != n)
		return NULL;
	return s;
}

#define PKG_LOWER "abcdefghijklmnopqrstuvwxyz0123456789"
#define PKG_NAME_CHARS PKG_LOWER "+-."
#define PKG_VERSION_CHARS PKG_LOWER "ABCDEFGHIJKLMNOPQRSTUVWXYZ.+~:-"
#define PKG_ARCH_CHARS PKG_LOWER "-"

/* The files (or files_hex) of version `id`: each digest added to the path table and refed. */
static int load_package_files(struct policy *p, const json_t *files, enum digests_form form,
			      const char *where, char *err, size_t errlen)
{
	const char *table = form == DIGESTS_HEX ? "files_hex" : "files";
	uint8_t d[LIMIT_DIGEST];
	const char *key, *why;
	char *buf = NULL;
	json_t *list, *v;
	size_t i;
	int rc = 0;

	if (!files)
		return 0;
	if (!json_is_object(files)) {
		seterr(err, errlen, "%s: \"%s\" must be an object of path -> list", where, table);
		return -EINVAL;
	}
	buf = malloc(LIMIT_IMA_PATH + 1);
	if (!buf)
		return -ENOMEM;
	rc = ktab_reserve(&p->paths, (size_t)p->paths.count + json_object_size(files));
	if (rc) {
		seterr(err, errlen, "%s: out of memory for %zu paths", where, json_object_size(files));
		goto out;
	}
	json_object_foreach((json_t *)files, key, list) {
		const char *path, *problem;
		size_t plen;
		long ei;

		rc = -EINVAL;
		path = digests_key_path(key, form, buf, &plen, &why);
		problem = path ? path_problem(path, plen) : why;
		if (problem) {
			seterr(err, errlen, "%s: %s[\"%.200s\"]: %s", where, table, key, problem);
			goto out;
		}
		if (!json_is_array(list) || json_array_size(list) == 0 ||
		    json_array_size(list) > LIMIT_POLICY_DIGESTS_PER_PATH) {
			seterr(err, errlen, "%s: %s[\"%.200s\"]: must be a list of 1 to %u digests",
			       where, table, key, LIMIT_POLICY_DIGESTS_PER_PATH);
			goto out;
		}
		ei = path_entry(p, path, plen);
		if (ei < 0) {
			rc = (int)ei;
			seterr(err, errlen, "%s: %s[\"%.200s\"]: cannot store", where, table, key);
			goto out;
		}
		json_array_foreach(list, i, v) {
			int ai = parse_file_digest(v, d, &why);
			uint16_t nth;

			if (ai < 0) {
				seterr(err, errlen, "%s: %s[\"%.200s\"][%zu]: %s", where, table, key, i,
				       why);
				rc = -EINVAL;
				goto out;
			}
			rc = entry_add_digest_nth(p, (uint32_t)ei, ai, d, &nth);
			if (!rc)
				rc = policy_packages_add_ref(p->pkgs, (uint32_t)ei, nth, false);
			if (rc) {
				seterr(err, errlen, "%s: %s[\"%.200s\"][%zu]: cannot store (%s)", where,
				       table, key, i, strerror(-rc));
				goto out;
			}
		}
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

/* conffiles (or conffiles_hex): paths of this version's files that dpkg treats as conffiles. */
static int load_package_conffiles(struct policy *p, const json_t *list, enum digests_form form,
				  const char *where, char *err, size_t errlen)
{
	const char *table = form == DIGESTS_HEX ? "conffiles_hex" : "conffiles";
	char buf[LIMIT_IMA_PATH + 1];
	const char *why;
	size_t i;
	json_t *v;

	if (!list)
		return 0;
	if (!json_is_array(list)) {
		seterr(err, errlen, "%s: \"%s\" must be a list of paths", where, table);
		return -EINVAL;
	}
	json_array_foreach(list, i, v) {
		const char *path;
		size_t plen;
		long ei;

		path = json_is_string(v) ? digests_key_path(json_string_value(v), form, buf, &plen, &why)
					 : NULL;
		ei = path && !path_problem(path, plen) ? ktab_find(&p->paths, path, plen) : -1;
		/* Only a path among this version's files: the mark is the version's word on it. */
		if (ei < 0 || policy_packages_mark_conffile(p->pkgs, (uint32_t)ei)) {
			seterr(err, errlen, "%s: %s[%zu]: not a path among the version's files", where,
			       table, i);
			return -EINVAL;
		}
	}
	return 0;
}

static int load_packages(struct policy *p, const json_t *arr, char *err, size_t errlen)
{
	static const char *const known[] = {"package", "version", "architecture", "files",
					    "files_hex", "conffiles", "conffiles_hex",
					    "missing_since"};
	struct ktab seen;
	json_t *o;
	size_t i;
	int rc;

	if (!json_is_array(arr)) {
		seterr(err, errlen, "\"packages\" must be a list of package versions");
		return -EINVAL;
	}
	if (p->pkgs) {
		seterr(err, errlen, "\"packages\" given twice");
		return -EINVAL;
	}
	p->pkgs = policy_packages_new();
	if (!p->pkgs || ktab_init(&seen)) {
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	json_array_foreach(arr, i, o) {
		const char *name, *ver, *arch, *key;
		char where[3 * LIMIT_PACKAGE_FIELD + 32], id3[3 * (LIMIT_PACKAGE_FIELD + 1)];
		const json_t *ms, *v;
		uint32_t id;
		int n;

		rc = -EINVAL;
		if (!json_is_object(o)) {
			seterr(err, errlen, "packages[%zu]: must be an object", i);
			goto out;
		}
		json_object_foreach((json_t *)o, key, v) {
			size_t k = 0;

			while (k < sizeof(known) / sizeof(known[0]) && strcmp(key, known[k]))
				k++;
			if (k == sizeof(known) / sizeof(known[0])) {
				seterr(err, errlen, "packages[%zu]: unknown key \"%.64s\"", i, key);
				goto out;
			}
		}
		name = package_field(o, "package", PKG_NAME_CHARS);
		ver = package_field(o, "version", PKG_VERSION_CHARS);
		arch = package_field(o, "architecture", PKG_ARCH_CHARS);
		if (!name || !ver || !arch) {
			seterr(err, errlen, "packages[%zu]: \"package\", \"version\" and \"architecture\" must be Debian's words (a name of [a-z0-9+.-], a version of [A-Za-z0-9.+~:-], an architecture of [a-z0-9-], each 1 to %u bytes)",
			       i, LIMIT_PACKAGE_FIELD);
			goto out;
		}
		snprintf(where, sizeof(where), "packages[%zu] (%s %s %s)", i, name, ver, arch);
		ms = json_object_get(o, "missing_since");
		if (ms && (!json_is_integer(ms) || json_integer_value(ms) <= 0)) {
			seterr(err, errlen, "%s: \"missing_since\" must be a positive Unix time", where);
			goto out;
		}
		n = snprintf(id3, sizeof(id3), "%s%c%s%c%s", name, 0, ver, 0, arch);
		if (ktab_find(&seen, id3, (size_t)n) >= 0) {
			seterr(err, errlen, "%s: listed twice", where);
			goto out;
		}
		if (ktab_insert(&seen, id3, (size_t)n) < 0 ||
		    (rc = policy_packages_add_version(p->pkgs, name, ver, arch,
						      ms ? json_integer_value(ms) : 0, &id))) {
			seterr(err, errlen, "%s: cannot store", where);
			rc = rc ? rc : -ENOMEM;
			goto out;
		}
		rc = load_package_files(p, json_object_get(o, "files"), DIGESTS_OURS, where, err, errlen);
		if (!rc)
			rc = load_package_files(p, json_object_get(o, "files_hex"), DIGESTS_HEX, where,
						err, errlen);
		if (!rc)
			rc = load_package_conffiles(p, json_object_get(o, "conffiles"), DIGESTS_OURS,
						    where, err, errlen);
		if (!rc)
			rc = load_package_conffiles(p, json_object_get(o, "conffiles_hex"), DIGESTS_HEX,
						    where, err, errlen);
		if (rc)
			goto out;
	}
	rc = 0;
out:
	ktab_release(&seen);
	return rc;
}

static int load_ours(struct policy *p, const json_t *root, char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	int rc;

	json_object_foreach((json_t *)root, key, v) {
		if (strcmp(key, "version") == 0) {
			if (!json_is_integer(v) || json_integer_value(v) != POLICY_FORMAT_VERSION) {
				seterr(err, errlen, "\"version\" must be the integer %d",
				       POLICY_FORMAT_VERSION);
				return -EINVAL;
			}
		} else if (strcmp(key, "description") == 0) {
			if (!json_is_string(v)) {
				seterr(err, errlen, "\"description\" must be a string");
				return -EINVAL;
			}
			free(p->description);
			p->description = strdup(json_string_value(v));
			if (!p->description)
				return -ENOMEM;
		} else if (strcmp(key, "digests") == 0 || strcmp(key, "digests_hex") == 0) {
			rc = load_digests(p, v, key[7] ? DIGESTS_HEX : DIGESTS_OURS, err, errlen);
			if (rc)
				return rc;
		} else if (strcmp(key, "reboot_clears_open_violations") == 0) {
			if (!json_is_boolean(v)) {
				seterr(err, errlen, "\"reboot_clears_open_violations\" must be true or false");
				return -EINVAL;
			}
			p->reboot_clears = json_is_true(v);
		} else if (strcmp(key, "excludes") == 0) {
			rc = load_excludes(p, v, false, err, errlen);
			if (rc)
				return rc;
		} else if (strcmp(key, "violations") == 0) {
			if (json_is_string(v) && strcmp(json_string_value(v), "fail") == 0) {
				p->violations_ignore = false;
			} else if (json_is_string(v) && strcmp(json_string_value(v), "ignore") == 0) {
				p->violations_ignore = true;
			} else {
				seterr(err, errlen, "\"violations\" must be \"fail\" or \"ignore\"");
				return -EINVAL;
			}
		} else if (strcmp(key, "boot_aggregate") == 0) {
			if (json_is_string(v) &&
			    strcmp(json_string_value(v), POLICY_MODE_PCRS_NAME) == 0) {
				p->ba_mode = POLICY_BOOT_AGGREGATE_MATCHING_PCRS;
			} else if (json_is_array(v) && json_array_size(v) > 0) {
				rc = load_digest_list(v, "boot_aggregate", p, ba_add, err, errlen);
				if (rc)
					return rc;
			} else {
				seterr(err, errlen, "\"boot_aggregate\" must be \"%s\" or a non-empty list of \"alg:hex\"",
				       POLICY_MODE_PCRS_NAME);
				return -EINVAL;
			}
		} else if (strcmp(key, "packages") == 0) {
			rc = load_packages(p, v, err, errlen);
			if (rc)
				return rc;
		} else if (strcmp(key, "conffiles") == 0) {
			if (json_is_string(v) && strcmp(json_string_value(v), "packaged") == 0) {
				p->conffiles_any = false;
			} else if (json_is_string(v) && strcmp(json_string_value(v), "any") == 0) {
				p->conffiles_any = true;
			} else {
				seterr(err, errlen, "\"conffiles\" must be \"packaged\" or \"any\"");
				return -EINVAL;
			}
		} else if (strcmp(key, "boot") == 0) {
			p->boot = boot_policy_parse(v, err, errlen);
			if (!p->boot)
				return -EINVAL;
		} else if (strcmp(key, "digest_only") == 0) {
			if (!json_is_array(v)) {
				seterr(err, errlen, "\"digest_only\" must be a list of \"alg:hex\"");
				return -EINVAL;
			}
			rc = ktab_reserve(&p->donly, json_array_size(v));
			if (!rc)
				rc = load_digest_list(v, "digest_only", p, donly_add, err, errlen);
			if (rc)
				return rc;
		} else {
			rc = policy_keys_load(p->keys, key, v, err, errlen);
			if (rc == -ENOENT) {
				seterr(err, errlen, "unknown key \"%.100s\"", key);
				return -EINVAL;
			}
			if (rc)
				return rc;
		}
	}
	return 0;
}

/*
 * The "ima" object of a Keylime policy: ignored_keyrings is policy_keys.c's; the others change
 * nothing here, which the importer says rather than drops.
 */
static int keylime_ima(struct policy *p, const json_t *ima, char *err, size_t errlen)
{
	const char *key;
	json_t *v;

	if (!ima)
		return 0;
	if (!json_is_object(ima)) {
		seterr(err, errlen, "keylime \"ima\" must be an object");
		return -EINVAL;
	}
	json_object_foreach((json_t *)ima, key, v) {
		if (!strcmp(key, "ignored_keyrings"))
			continue;
		if (!strcmp(key, "log_hash_alg")) {
			if (!json_is_string(v) || strcmp(json_string_value(v), "sha1") != 0)
				policy_warn(&p->warnings, "ima.log_hash_alg: not used; the verifier checks the SHA-1 template hash of the binary list (Linux 6.1) and replays every quoted PCR 10 bank");
		} else if (!strcmp(key, "dm_policy")) {
			if (!json_is_null(v))
				policy_warn(&p->warnings, "ima.dm_policy: device-mapper measurements are not checked against it; their ima-buf entries are judged by name against \"digests\" and fail unless listed");
		} else {
			policy_warn(&p->warnings, "ima.%.64s: unknown key, not used", key);
		}
	}
	return 0;
}

/*
 * Keylime runtime policy. digests, excludes, keyrings, ima.ignored_keyrings and
 * verification-keys are enforced; ima-buf digests join the digest table (an ima-buf entry that
 * is not a key is judged by its name there); meta and release are metadata. Anything else is
 * named in a warning (policy_warnings()): nothing is dropped silently.
 */
static int load_keylime(struct policy *p, const json_t *root, char *err, size_t errlen)
{
	static const char *const known[] = {"meta", "release", "digests", "excludes", "keyrings",
					    "ima", "ima-buf", "verification-keys"};
	const json_t *meta = json_object_get(root, "meta"), *v;
	const char *key;
	int rc;

	p->keylime = true;
	if (!json_is_object(meta)) {
		seterr(err, errlen, "keylime \"meta\" must be an object");
		return -EINVAL;
	}
	v = json_object_get(meta, "version");
	if (v && !json_is_integer(v)) {
		seterr(err, errlen, "keylime \"meta.version\" must be an integer");
		return -EINVAL;
	}
	v = json_object_get(root, "digests");
	if (v) {
		rc = load_digests(p, v, DIGESTS_KEYLIME, err, errlen);
		if (rc)
			return rc;
	}
	v = json_object_get(root, "excludes");
	if (v) {
		rc = load_excludes(p, v, true, err, errlen);
		if (rc)
			return rc;
	}
	v = json_object_get(root, "ima-buf");
	if (v) {
		rc = load_digests(p, v, DIGESTS_KEYLIME, err, errlen);
		if (rc)
			return rc;
	}
	rc = keylime_ima(p, json_object_get(root, "ima"), err, errlen);
	if (!rc)
		rc = policy_keys_load_keylime(p->keys, root, &p->warnings, err, errlen);
	if (rc)
		return rc;
	json_object_foreach((json_t *)root, key, v) {
		size_t i = 0;

		while (i < sizeof(known) / sizeof(known[0]) && strcmp(key, known[i]))
			i++;
		if (i == sizeof(known) / sizeof(known[0]))
			policy_warn(&p->warnings, "%.64s: unknown key, not used", key);
	}
	return 0;
}

struct policy *policy_load(const char *json, size_t len, char *err, size_t errlen)
{
	struct policy *p = NULL;
	json_error_t jerr;
	json_t *root = NULL;
	int rc;

	seterr(err, errlen, "no error");
	if (!json) {
		seterr(err, errlen, "no input");
		return NULL;
	}
	if (len > LIMIT_POLICY_BYTES) {
		seterr(err, errlen, "policy is %zu bytes, more than LIMIT_POLICY_BYTES (%u)", len,
		       LIMIT_POLICY_BYTES);
		return NULL;
	}
	/* Duplicate keys would let one path's digests silently replace another's. */
	root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		seterr(err, errlen, "invalid JSON at line %d column %d: %s", jerr.line, jerr.column,
		       jerr.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		seterr(err, errlen, "policy must be a JSON object");
		goto fail;
	}
	if (!depth_ok(root, 1)) {
		seterr(err, errlen, "JSON nested deeper than %u", LIMIT_JSON_DEPTH);
		goto fail;
	}
	p = policy_new();
	if (!p) {
		seterr(err, errlen, "out of memory");
		goto fail;
	}
	if (json_object_get(root, "version"))
		rc = load_ours(p, root, err, errlen);
	else if (json_object_get(root, "meta"))
		rc = load_keylime(p, root, err, errlen);
	else {
		seterr(err, errlen, "unknown policy format: no \"version\" (attest policy) and no \"meta\" (keylime runtime policy)");
		goto fail;
	}
	if (rc)
		goto fail;
	dynbuf_trim(&p->digs);
	dynbuf_trim(&p->paths.keys);
	json_decref(root);
	/* The parse tree of a large policy is many small blocks; hand them back to the system so
	 * the verifier's resident size reflects the compact tables. */
	if (len > (16u << 20))
		malloc_trim(0);
	return p;
fail:
	json_decref(root);
	policy_free(p);
	return NULL;
}

/* --- serialising ------------------------------------------------------------------------ */

static json_t *digest_json(int ai, const uint8_t *d);

json_t *policy_json_digest_string(uint16_t alg, const uint8_t *digest)
{
	int ai = alg_index(alg);

	return ai < 0 ? NULL : digest_json(ai, digest);
}

char *policy_digest_text(const char *alg_name, const uint8_t *digest, size_t len, char *out,
			 size_t cap)
{
	char hex[2 * LIMIT_DIGEST + 1] = "";

	if (digest && len <= LIMIT_DIGEST)
		hex_encode(digest, len, hex);
	snprintf(out, cap, "%s:%s", alg_name, hex);
	return out;
}

static json_t *digest_json(int ai, const uint8_t *d)
{
	char buf[LIMIT_DIGEST_TEXT + 1], name[32];
	const struct alg *a = dk_alg(ai);

	snprintf(name, sizeof(name), "%s%s", (ai & DIG_VERITY) ? "verity:" : "", a->name);
	return json_string(policy_digest_text(name, d, a->size, buf, sizeof(buf)));
}

json_t *policy_json_path_digests(const struct policy *p, const char *path, size_t path_len)
{
	const struct kentry *ke;
	const uint8_t *r;
	json_t *list;
	long ei;

	if (!p || !path || path_len > LIMIT_IMA_PATH)
		return NULL;
	ei = ktab_find(&p->paths, path, path_len);
	if (ei < 0)
		return NULL;
	ke = ktab_ent(&p->paths, (uint32_t)ei);
	r = arena_at(&p->digs, ke->dig_off);
	list = json_array();
	for (uint16_t n = 0; list && n < ke->ndig; n++) {
		if (json_array_append_new(list, digest_json(r[0], r + 1))) {
			json_decref(list);
			return NULL;
		}
		r += 1 + dk_alg(r[0])->size;
	}
	return list;
}

/* The byte offset in p->digs of record nth of entry e. */
static size_t record_offset(const struct policy *p, const struct kentry *e, uint16_t nth)
{
	size_t off = e->dig_off;

	for (uint16_t n = 0; n < nth; n++)
		off += 1 + dk_alg(*arena_at(&p->digs, off))->size;
	return off;
}

/*
 * One bit per byte of p->digs, set at each record a package version lists: those are written
 * under "packages", and only the others under "digests". NULL (and *fail false) when the
 * policy has no packages.
 */
static uint8_t *owned_records(const struct policy *p, bool *fail)
{
	uint8_t *bits;

	*fail = false;
	if (!policy_packages_count(p->pkgs))
		return NULL;
	bits = calloc(p->digs.len / 8 + 1, 1);
	if (!bits) {
		*fail = true;
		return NULL;
	}
	for (size_t i = 0; i < policy_packages_count(p->pkgs); i++) {
		const struct policy_package_ref *refs;
		const char *n, *v, *a;
		size_t nrefs;
		int64_t ms;

		policy_packages_version(p->pkgs, i, &n, &v, &a, &ms, &refs, &nrefs);
		for (size_t r = 0; r < nrefs; r++) {
			size_t off = record_offset(p, ktab_ent(&p->paths, refs[r].entry), refs[r].nth);

			bits[off / 8] |= (uint8_t)(1u << (off % 8));
		}
	}
	return bits;
}

static bool owned(const uint8_t *bits, size_t off)
{
	return bits && (bits[off / 8] >> (off % 8)) & 1u;
}

/* A path as a key of an object: itself when UTF-8, else hex in `hexkey` (the *_hex table). */
static int set_path_key(json_t *obj, json_t **hexobj, json_t *parent, const char *hexname,
			const char *path, size_t len, json_t *value)
{
	char hex[2 * LIMIT_IMA_PATH + 1];

	if (text_is_utf8(path, len))
		return json_object_setn_new(obj, path, len, value);
	if (!*hexobj) {
		*hexobj = json_object();
		if (json_object_set_new(parent, hexname, *hexobj)) {
			json_decref(value);
			return -1;
		}
	}
	hex_encode((const uint8_t *)path, len, hex);
	return json_object_set_new(*hexobj, hex, value);
}

static int path_list_append(json_t **list, json_t *parent, const char *hexname,
			    const char *path, size_t len, json_t **hexlist)
{
	char hex[2 * LIMIT_IMA_PATH + 1];
	json_t **l = text_is_utf8(path, len) ? list : hexlist;
	const char *name = l == list ? NULL : hexname;

	if (!*l) {
		*l = json_array();
		if (json_object_set_new(parent, name ? name : "conffiles", *l))
			return -1;
	}
	if (l == list)
		return json_array_append_new(*l, json_stringn(path, len));
	hex_encode((const uint8_t *)path, len, hex);
	return json_array_append_new(*l, json_string(hex));
}

/* The "packages" list: each version with its files (digests by path) and conffiles. */
static json_t *packages_json(const struct policy *p)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < policy_packages_count(p->pkgs); i++) {
		const struct policy_package_ref *refs;
		const char *n, *v, *a;
		json_t *o, *files, *fhex = NULL, *conf = NULL, *chex = NULL, *list = NULL;
		size_t nrefs;
		int64_t ms;

		policy_packages_version(p->pkgs, i, &n, &v, &a, &ms, &refs, &nrefs);
		o = json_pack("{s:s, s:s, s:s, s:{}}", "package", n, "version", v, "architecture", a,
			      "files");
		if (!o || json_array_append_new(arr, o))
			goto fail;
		files = json_object_get(o, "files");
		if (ms && json_object_set_new(o, "missing_since", json_integer(ms)))
			goto fail;
		for (size_t r = 0; r < nrefs; r++) {
			const struct kentry *ke = ktab_ent(&p->paths, refs[r].entry);
			const char *path = (const char *)arena_at(&p->paths.keys, ke->key_off);
			const uint8_t *rec = arena_at(&p->digs, record_offset(p, ke, refs[r].nth));

			/* A path's refs are adjacent: loading adds them path by path. */
			if (r == 0 || refs[r - 1].entry != refs[r].entry) {
				list = json_array();
				if (set_path_key(files, &fhex, o, "files_hex", path, ke->key_len, list))
					goto fail;
				if (refs[r].conffile &&
				    path_list_append(&conf, o, "conffiles_hex", path, ke->key_len, &chex))
					goto fail;
			}
			if (json_array_append_new(list, digest_json(rec[0], rec + 1)))
				goto fail;
		}
	}
	return arr;
fail:
	json_decref(arr);
	return NULL;
}

char *policy_to_json(const struct policy *p)
{
	json_t *root = NULL, *digs, *list, *ex, *ba, *hexdigs = NULL;
	uint8_t *own = NULL;
	bool own_fail;
	char *out = NULL;

	if (!p)
		return NULL;
	root = json_object();
	if (!root)
		return NULL;
	digs = json_object();
	ex = json_array();
	if (json_object_set_new(root, "digests", digs) ||
	    json_object_set_new(root, "excludes", ex) ||
	    json_object_set_new(root, "version", json_integer(POLICY_FORMAT_VERSION)) ||
	    json_object_set_new(root, "violations",
				json_string(p->violations_ignore ? "ignore" : "fail")))
		goto out;
	if (p->description &&
	    json_object_set_new(root, "description", json_string(p->description)))
		goto out;
	if (p->reboot_clears &&
	    json_object_set_new(root, "reboot_clears_open_violations", json_true()))
		goto out;
	if (p->ba_mode == POLICY_BOOT_AGGREGATE_LIST) {
		ba = json_array();
		if (json_object_set_new(root, "boot_aggregate", ba))
			goto out;
		for (size_t i = 0; i < p->nba; i++)
			if (json_array_append_new(ba, digest_json(ba_at(p, i)->ai, ba_at(p, i)->d)))
				goto out;
	} else if (json_object_set_new(root, "boot_aggregate", json_string(POLICY_MODE_PCRS_NAME))) {
		goto out;
	}
	own = owned_records(p, &own_fail);
	if (own_fail)
		goto out;
	for (uint32_t e = 0; e < p->paths.count; e++) {
		const struct kentry *ke = ktab_ent(&p->paths, e);
		const uint8_t *r = arena_at(&p->digs, ke->dig_off);
		const char *path = (const char *)arena_at(&p->paths.keys, ke->key_off);
		uint16_t mine = 0;

		/* Digests a package lists are written with it; a path whose digests all come
		 * from packages is not repeated here (one listed nowhere stays: pinned to nothing). */
		for (uint16_t n = 0; own && n < ke->ndig; n++) {
			size_t off = record_offset(p, ke, n);

			mine += !owned(own, off);
		}
		if (own && ke->ndig && !mine)
			continue;
		list = json_array();
		if (text_is_utf8(path, ke->key_len)) {
			if (json_object_setn_new(digs, path, ke->key_len, list))
				goto out;
		} else {
			/* JSON carries UTF-8 only: the raw bytes as hex, never an escaped look-alike. */
			char hex[2 * LIMIT_IMA_PATH + 1];

			if (!hexdigs) {
				hexdigs = json_object();
				if (json_object_set_new(root, "digests_hex", hexdigs)) {
					json_decref(list);
					goto out;
				}
			}
			hex_encode((const uint8_t *)path, ke->key_len, hex);
			if (json_object_set_new(hexdigs, hex, list))
				goto out;
		}
		for (uint16_t n = 0; n < ke->ndig; n++) {
			if (!owned(own, (size_t)(r - arena_at(&p->digs, 0))) &&
			    json_array_append_new(list, digest_json(r[0], r + 1)))
				goto out;
			r += 1 + dk_alg(r[0])->size;
		}
	}
	if (p->pkgs && json_object_set_new(root, "packages", packages_json(p)))
		goto out;
	if (p->conffiles_any && json_object_set_new(root, "conffiles", json_string("any")))
		goto out;
	for (size_t i = 0; i < p->nex; i++)
		if (json_array_append_new(ex, json_string(ex_at(p, i)->src)))
			goto out;
	if (p->boot && json_object_set_new(root, "boot", boot_policy_json(p->boot)))
		goto out;
	if (p->donly.count) {
		list = json_array();
		if (json_object_set_new(root, "digest_only", list))
			goto out;
		for (uint32_t e = 0; e < p->donly.count; e++) {
			const uint8_t *k = arena_at(&p->donly.keys, ktab_ent(&p->donly, e)->key_off);

			if (json_array_append_new(list, digest_json(k[0], k + 1)))
				goto out;
		}
	}
	if (policy_keys_to_json(p->keys, root))
		goto out;
	out = json_dumps(root, JSON_INDENT(1) | JSON_SORT_KEYS);
out:
	free(own);
	json_decref(root);
	return out;
}
