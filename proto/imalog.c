/*
 * IMA binary measurement list cursor. Layout and hashing rules: docs/design.md, IMA measurement list
 * (linux:security/integrity/ima/ima_fs.c ima_measurements_show, ima_crypto.c).
 * Template digests use alg_digest3() (OpenSSL's low-level SHA functions; proto/alg.c says why).
 */
#include "proto/imalog.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_tpm2_types.h>

#include "proto/alg.h"
#include "proto/limits.h"
#include "proto/pcrs.h"

struct imalog {
	const uint8_t *buf;
	size_t len;
	size_t off;      /* start of the next entry */
	uint64_t index;  /* index of the next entry */
	struct ima_error error;
	bool failed;     /* sticky: the list is bad from `error` on */
	bool skip_hash_check; /* another cursor verifies these bytes (imalog_skip_hash_check) */
};

/* Template field ids we can interpret (linux:.../ima_template.c supported_fields). */
enum field_id {
	F_D, F_N, F_D_NG, F_N_NG, F_D_NGV2, F_SIG, F_BUF, F_OPAQUE,
};

static const struct {
	const char *id;
	enum field_id f;
} field_ids[] = {
	{"d", F_D},
	{"n", F_N},
	{"d-ng", F_D_NG},
	{"n-ng", F_N_NG},
	{"d-ngv2", F_D_NGV2},
	{"sig", F_SIG},
	{"buf", F_BUF},
	{"d-modsig", F_OPAQUE},
	{"modsig", F_OPAQUE},
	{"evmsig", F_OPAQUE},
	{"xattrnames", F_OPAQUE},
	{"xattrlengths", F_OPAQUE},
	{"xattrvalues", F_OPAQUE},
	{"iuid", F_OPAQUE},
	{"igid", F_OPAQUE},
	{"imode", F_OPAQUE},
};

/* Built-in template names and their field lists (linux:.../ima_template.c builtin_templates). */
static const struct {
	const char *name;
	const char *fmt;
} builtin_templates[] = {
	{"ima-ng", "d-ng|n-ng"},
	{"ima-sig", "d-ng|n-ng|sig"},
	{"ima-buf", "d-ng|n-ng|buf"},
	{"ima-modsig", "d-ng|n-ng|sig|d-modsig|modsig"},
	{"ima-ngv2", "d-ngv2|n-ng"},
	{"ima-sigv2", "d-ngv2|n-ng|sig"},
	{"evm-sig", "d-ng|n-ng|evmsig|xattrnames|xattrlengths|xattrvalues|iuid|igid|imode"},
};

/*
 * Kernel hash names (linux:crypto/hash_info.c hash_algo_name) that have no TPM id here, with
 * their sizes, so a wrong digest length is caught at parse time. The algorithms with a TPM id
 * come from proto/alg (ALG_USE_IMA).
 */
static const struct {
	const char *name;
	uint32_t size;
} other_digest_algs[] = {
	{"md5", 16},
	{"rmd160", 20},
	{"sha224", 28},
	{"wp512", 64},
	{"sm3", 32},
	{"sm3-256", 32},
	{"streebog256", 32},
	{"streebog512", 64},
};

static const uint8_t zeros[LIMIT_IMA_LEGACY_NAME + 1];

struct imalog *imalog_new(void)
{
	return calloc(1, sizeof(struct imalog));
}

void imalog_free(struct imalog *log)
{
	free(log);
}

void imalog_reset(struct imalog *log, const uint8_t *buf, size_t len, uint64_t first_index)
{
	log->buf = buf;
	log->len = buf ? len : 0;
	log->off = 0;
	log->index = first_index;
	log->failed = false;
	memset(&log->error, 0, sizeof(log->error));
}

void imalog_skip_hash_check(struct imalog *log, bool skip)
{
	log->skip_hash_check = skip;
}

size_t imalog_offset(const struct imalog *log)
{
	return log->off;
}

uint64_t imalog_index(const struct imalog *log)
{
	return log->index;
}

static uint32_t get_u32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int fail(struct imalog *log, struct ima_error *err, int code, const char *msg)
{
	log->failed = true;
	log->error.index = log->index;
	log->error.offset = log->off;
	log->error.err = code;
	log->error.msg = msg;
	if (err)
		*err = log->error;
	return code;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;

	for (size_t i = 0; i < n; i++)
		acc |= p[i];
	return acc == 0;
}

int imalog_template_digest(uint16_t alg, const struct ima_entry *e, uint8_t *out)
{
	const struct alg *a = alg_by_id(alg);

	/* Template `ima`: d[20] || n || zeros up to IMA_EVENT_NAME_LEN_MAX + 1 (NUL included). */
	if (e->kind == IMA_TEMPLATE_IMA)
		return alg_digest3(a, e->data, IMA_TEMPLATE_HASH_LEN, e->path, e->path_len, zeros,
				   sizeof(zeros) - e->path_len, out);
	return alg_digest3(a, e->data, e->data_len, NULL, 0, NULL, 0, out);
}

/* Looks a field id up by name; -1 if we do not know it. */
static int field_lookup(const char *id, size_t len)
{
	for (size_t i = 0; i < sizeof(field_ids) / sizeof(field_ids[0]); i++)
		if (strlen(field_ids[i].id) == len && memcmp(field_ids[i].id, id, len) == 0)
			return (int)field_ids[i].f;
	return -1;
}

/*
 * Turns a template name into its field list. A name that is not built in may be a format string
 * (custom ima_template_fmt prints the format as the name). Returns the field count, or 0 if any
 * part is unknown (the entry is then IMA_TEMPLATE_UNKNOWN).
 */
static unsigned template_fields(const char *name, size_t len, enum field_id *fields)
{
	const char *fmt = NULL;
	size_t fmtlen = 0;
	unsigned n = 0;

	for (size_t i = 0; i < sizeof(builtin_templates) / sizeof(builtin_templates[0]); i++) {
		if (strlen(builtin_templates[i].name) == len &&
		    memcmp(builtin_templates[i].name, name, len) == 0) {
			fmt = builtin_templates[i].fmt;
			fmtlen = strlen(fmt);
			break;
		}
	}
	if (!fmt) {
		fmt = name;
		fmtlen = len;
	}
	for (size_t start = 0; start <= fmtlen;) {
		const char *bar = memchr(fmt + start, '|', fmtlen - start);
		size_t end = bar ? (size_t)(bar - fmt) : fmtlen;
		int f = field_lookup(fmt + start, end - start);

		if (f < 0 || n >= LIMIT_IMA_FIELDS)
			return 0;
		fields[n++] = (enum field_id)f;
		start = end + 1;
	}
	return n;
}

/* "<alg>:\0" digest (d-ng) or "<type>:<alg>:\0" digest (d-ngv2). */
static const char *parse_digest_ng(struct ima_entry *e, const uint8_t *p, uint32_t len, bool v2)
{
	const uint8_t *nul = memchr(p, '\0', len);
	const struct alg *a;
	const char *alg;
	size_t alglen;

	if (!nul || nul == p || nul[-1] != ':')
		return "digest field lacks the \"<alg>:\\0\" prefix";
	alg = (const char *)p;
	alglen = (size_t)(nul - p) - 1;
	if (v2) {
		const char *colon = memchr(alg, ':', alglen);

		if (!colon || colon == alg)
			return "d-ngv2 field lacks the \"<type>:\" prefix";
		if (colon - alg == 3 && memcmp(alg, "ima", 3) == 0)
			e->digest_type = IMA_DIGEST_IMA;
		else if (colon - alg == 6 && memcmp(alg, "verity", 6) == 0)
			e->digest_type = IMA_DIGEST_VERITY;
		else
			e->digest_type = IMA_DIGEST_OTHER;
		alglen -= (size_t)(colon + 1 - alg);
		alg = colon + 1;
	}
	if (alglen == 0 || alglen > LIMIT_IMA_TEMPLATE_NAME)
		return "digest algorithm name is empty or too long";
	for (size_t i = 0; i < alglen; i++) {
		char c = alg[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return "digest algorithm name has a bad character";
	}
	e->digest_alg_name = alg;
	e->digest_alg_name_len = (uint32_t)alglen;
	e->digest = nul + 1;
	e->digest_len = len - (uint32_t)(nul + 1 - p);
	if (e->digest_len == 0 || e->digest_len > LIMIT_DIGEST)
		return "file digest length out of range";
	a = alg_by_name_len(alg, alglen);
	if (alg_allows(a, ALG_USE_IMA)) {
		if (a->size != e->digest_len)
			return "file digest length does not match its algorithm";
		e->digest_alg = a->id;
		return NULL;
	}
	for (size_t i = 0; i < sizeof(other_digest_algs) / sizeof(other_digest_algs[0]); i++) {
		if (strlen(other_digest_algs[i].name) == alglen &&
		    memcmp(other_digest_algs[i].name, alg, alglen) == 0) {
			if (other_digest_algs[i].size != e->digest_len)
				return "file digest length does not match its algorithm";
			break;
		}
	}
	return NULL;
}

/* n / n-ng: the name plus its NUL; no other NUL inside. */
static int parse_name(struct ima_entry *e, const uint8_t *p, uint32_t len, uint32_t max,
		      const char **msg)
{
	if (len == 0 || p[len - 1] != '\0') {
		*msg = "file name field is not NUL-terminated";
		return -EBADMSG;
	}
	if (len - 1 > max) {
		*msg = "file name longer than the limit";
		return -E2BIG;
	}
	if (memchr(p, '\0', len - 1)) {
		*msg = "file name contains a NUL byte";
		return -EBADMSG;
	}
	e->path = (const char *)p;
	e->path_len = len - 1;
	return 0;
}

/* Splits template data into `u32 len | bytes` fields and interprets the known ones. */
static int parse_fields(struct ima_entry *e, const enum field_id *fields, unsigned nfields,
			const char **msg)
{
	const uint8_t *p = e->data;
	uint32_t left = e->data_len;
	unsigned n = 0;

	while (left > 0) {
		uint32_t flen;
		const uint8_t *f;
		const char *m;
		int rc;

		if (left < 4) {
			*msg = "template data ends inside a field length";
			return -EBADMSG;
		}
		flen = get_u32le(p);
		if (flen > left - 4) {
			*msg = "template field longer than the template data";
			return -EBADMSG;
		}
		f = p + 4;
		p += 4 + (size_t)flen;
		left -= 4 + flen;
		if (n >= LIMIT_IMA_FIELDS) {
			*msg = "more template fields than the limit";
			return -E2BIG;
		}
		if (e->kind == IMA_TEMPLATE_UNKNOWN) {
			n++;
			continue;
		}
		if (n >= nfields) {
			*msg = "more template fields than the template has";
			return -EBADMSG;
		}
		switch (fields[n++]) {
		case F_D:
			if (e->digest)
				break;
			if (flen != 20 && flen != 16) {
				if (e->violation)
					break;
				*msg = "d field is not a 20-byte sha1 or 16-byte md5 digest";
				return -EBADMSG;
			}
			e->digest_alg_name = flen == 20 ? "sha1" : "md5";
			e->digest_alg_name_len = (uint32_t)strlen(e->digest_alg_name);
			e->digest_alg = flen == 20 ? TPM2_ALG_SHA1 : 0;
			e->digest = f;
			e->digest_len = flen;
			break;
		case F_D_NG:
		case F_D_NGV2:
			if (e->digest)
				break;
			m = parse_digest_ng(e, f, flen, fields[n - 1] == F_D_NGV2);
			if (m) {
				/* Violation digests changed shape across kernels (docs/design.md, Violations). */
				e->digest = NULL;
				e->digest_len = 0;
				e->digest_alg = 0;
				e->digest_alg_name = NULL;
				e->digest_alg_name_len = 0;
				if (e->violation)
					break;
				*msg = m;
				return -EBADMSG;
			}
			break;
		case F_N:
		case F_N_NG:
			if (e->path) {
				*msg = "template has two file name fields";
				return -EBADMSG;
			}
			rc = parse_name(e, f, flen,
					fields[n - 1] == F_N ? LIMIT_IMA_LEGACY_NAME : LIMIT_IMA_PATH, msg);
			if (rc < 0)
				return rc;
			break;
		case F_SIG:
			e->sig = f;
			e->sig_len = flen;
			break;
		case F_BUF:
			e->buf = f;
			e->buf_len = flen;
			break;
		case F_OPAQUE:
			break;
		}
	}
	if (e->kind != IMA_TEMPLATE_UNKNOWN && n != nfields) {
		*msg = "fewer template fields than the template has";
		return -EBADMSG;
	}
	return 0;
}

/* Each length is checked before the bytes it counts are touched; a cut record returns 0. */
int imalog_record(const uint8_t *p, size_t avail, struct ima_record *rec, const char **msg)
{
	size_t need = 4 + IMA_TEMPLATE_HASH_LEN + 4;
	uint32_t namelen, n;

	memset(rec, 0, sizeof(*rec));
	/* u32 pcr | u8 template_hash[20] | u32 name_len | name */
	rec->len = need;
	if (avail < need) {
		*msg = "truncated entry header";
		return 0;
	}
	rec->pcr = get_u32le(p);
	if (rec->pcr >= PCR_COUNT) {
		*msg = "PCR index out of range";
		return -EBADMSG;
	}
	rec->template_hash = p + 4;
	namelen = get_u32le(p + 4 + IMA_TEMPLATE_HASH_LEN);
	if (namelen == 0) {
		*msg = "empty template name";
		return -EBADMSG;
	}
	if (namelen > LIMIT_IMA_TEMPLATE_NAME) {
		*msg = "template name longer than the limit";
		return -E2BIG;
	}
	need += namelen;
	rec->len = need;
	if (avail < need) {
		*msg = "truncated template name";
		return 0;
	}
	rec->template_name = (const char *)p + 4 + IMA_TEMPLATE_HASH_LEN + 4;
	rec->template_name_len = namelen;
	rec->data = p + need;
	if (namelen == 3 && memcmp(rec->template_name, "ima", 3) == 0) {
		/* Legacy template: d[20] | u32 n_len | n, no data length, n without its NUL. */
		rec->legacy = true;
		rec->len = need + IMA_TEMPLATE_HASH_LEN + 4;
		if (avail - need < IMA_TEMPLATE_HASH_LEN + 4) {
			*msg = "truncated ima template data";
			return 0;
		}
		n = get_u32le(rec->data + IMA_TEMPLATE_HASH_LEN);
		if (n > LIMIT_IMA_LEGACY_NAME) {
			*msg = "ima template name longer than " LIMIT_STR(LIMIT_IMA_LEGACY_NAME) " bytes";
			return -E2BIG;
		}
		rec->data_len = IMA_TEMPLATE_HASH_LEN + 4 + n;
		rec->len = need + rec->data_len;
		if (avail - need - IMA_TEMPLATE_HASH_LEN - 4 < n) {
			*msg = "truncated ima template file name";
			return 0;
		}
		return 1;
	}
	rec->len = need + 4;
	if (avail - need < 4) {
		*msg = "truncated template data length";
		return 0;
	}
	n = get_u32le(p + need);
	need += 4;
	if (n > LIMIT_IMA_TEMPLATE_DATA) {
		*msg = "template data longer than the limit";
		return -E2BIG;
	}
	rec->data = p + need;
	rec->data_len = n;
	rec->len = need + n;
	if (avail - need < n) {
		*msg = "truncated template data";
		return 0;
	}
	return 1;
}

int imalog_next(struct imalog *log, struct ima_entry *e, struct ima_error *err)
{
	enum field_id fields[LIMIT_IMA_FIELDS];
	unsigned nfields = 0;
	struct ima_record rec;
	const char *msg = NULL;
	uint8_t md[IMA_TEMPLATE_HASH_LEN];
	int rc;

	if (log->failed) {
		if (err)
			*err = log->error;
		return log->error.err;
	}
	if (log->off == log->len)
		return 0;
	memset(e, 0, sizeof(*e));
	e->index = log->index;
	e->offset = log->off;

	/* A record cut short is an error here: the agent sends whole entries. */
	rc = imalog_record(log->buf + log->off, log->len - log->off, &rec, &msg);
	if (rc <= 0)
		return fail(log, err, rc == 0 ? -EBADMSG : rc, msg);
	e->pcr = rec.pcr;
	e->template_hash = rec.template_hash;
	e->violation = all_zero(e->template_hash, IMA_TEMPLATE_HASH_LEN);
	e->template_name = rec.template_name;
	e->template_name_len = rec.template_name_len;
	e->data = rec.data;
	e->data_len = rec.data_len;

	if (rec.legacy) {
		e->kind = IMA_TEMPLATE_IMA;
		e->path = (const char *)e->data + IMA_TEMPLATE_HASH_LEN + 4;
		e->path_len = e->data_len - IMA_TEMPLATE_HASH_LEN - 4;
		if (memchr(e->path, '\0', e->path_len))
			return fail(log, err, -EBADMSG, "file name contains a NUL byte");
		e->digest_alg_name = "sha1";
		e->digest_alg_name_len = 4;
		e->digest_alg = TPM2_ALG_SHA1;
		e->digest = e->data;
		e->digest_len = IMA_TEMPLATE_HASH_LEN;
	} else {
		nfields = template_fields(e->template_name, e->template_name_len, fields);
		e->kind = nfields ? IMA_TEMPLATE_FIELDS : IMA_TEMPLATE_UNKNOWN;
		rc = parse_fields(e, fields, nfields, &msg);
		if (rc < 0)
			return fail(log, err, rc,
				    e->kind == IMA_TEMPLATE_UNKNOWN && rc == -EBADMSG
					    ? "unknown template and its data is not a field list"
					    : msg);
	}
	e->end = log->off + rec.len;

	if (!e->violation && !log->skip_hash_check) {
		(void)imalog_template_digest(TPM2_ALG_SHA1, e, md);
		if (memcmp(md, e->template_hash, sizeof(md)) != 0)
			return fail(log, err, -EPROTO, "template hash does not match the template data");
	}
	log->off = e->end;
	log->index++;
	return 1;
}
