/*
 * The TCG event log parser, replay and decoders; the contract is in eventlog.h.
 *
 * One cursor (struct rd) walks the buffer: every read checks what remains first and fails
 * sticky, so a record is parsed field by field and checked once at its end. Names of fields in
 * the messages are the spec's (TCG PC Client PFP, UEFI 2.x), so a reader can look them up.
 */
#include "proto/eventlog.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_tpm2_types.h>

#include "proto/dynbuf.h"

#define SHA1_SIZE 20u
#define SPEC_ID_SIGNATURE "Spec ID Event03"  /* 16 bytes with its NUL */
#define STARTUP_LOCALITY_SIGNATURE "StartupLocality" /* 16 bytes with its NUL */

/* EFI_GLOBAL_VARIABLE 8be4df61-93ca-11d2-aa0d-00e098032b8c */
const uint8_t eventlog_guid_global[16] = {0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11,
					  0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c};
/* EFI_IMAGE_SECURITY_DATABASE_GUID d719b2cb-3d3a-4596-a3bc-dad00e67656f */
const uint8_t eventlog_guid_image_security[16] = {0xcb, 0xb2, 0x19, 0xd7, 0x3a, 0x3d, 0x96, 0x45,
						  0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f};

/* ---- a bounded little-endian reader ---------------------------------------------------- */

struct rd {
	const uint8_t *p;
	size_t left;
	bool bad; /* a read went past the end: every later read returns zeros */
};

static const uint8_t *rd_take(struct rd *r, size_t n)
{
	const uint8_t *p = r->p;

	if (r->bad || n > r->left) {
		r->bad = true;
		return NULL;
	}
	r->p += n;
	r->left -= n;
	return p;
}

static uint64_t rd_le(struct rd *r, unsigned bytes)
{
	const uint8_t *p = rd_take(r, bytes);
	uint64_t v = 0;

	for (unsigned i = 0; p && i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* ---- names ------------------------------------------------------------------------------ */

static const struct {
	uint32_t type;
	const char *name;
} type_names[] = {
	{EV_PREBOOT_CERT, "EV_PREBOOT_CERT"},
	{EV_POST_CODE, "EV_POST_CODE"},
	{EV_UNUSED, "EV_UNUSED"},
	{EV_NO_ACTION, "EV_NO_ACTION"},
	{EV_SEPARATOR, "EV_SEPARATOR"},
	{EV_ACTION, "EV_ACTION"},
	{EV_EVENT_TAG, "EV_EVENT_TAG"},
	{EV_S_CRTM_CONTENTS, "EV_S_CRTM_CONTENTS"},
	{EV_S_CRTM_VERSION, "EV_S_CRTM_VERSION"},
	{EV_CPU_MICROCODE, "EV_CPU_MICROCODE"},
	{EV_PLATFORM_CONFIG_FLAGS, "EV_PLATFORM_CONFIG_FLAGS"},
	{EV_TABLE_OF_DEVICES, "EV_TABLE_OF_DEVICES"},
	{EV_COMPACT_HASH, "EV_COMPACT_HASH"},
	{EV_IPL, "EV_IPL"},
	{EV_IPL_PARTITION_DATA, "EV_IPL_PARTITION_DATA"},
	{EV_NONHOST_CODE, "EV_NONHOST_CODE"},
	{EV_NONHOST_CONFIG, "EV_NONHOST_CONFIG"},
	{EV_NONHOST_INFO, "EV_NONHOST_INFO"},
	{EV_OMIT_BOOT_DEVICE_EVENTS, "EV_OMIT_BOOT_DEVICE_EVENTS"},
	{EV_POST_CODE2, "EV_POST_CODE2"},
	{EV_EFI_VARIABLE_DRIVER_CONFIG, "EV_EFI_VARIABLE_DRIVER_CONFIG"},
	{EV_EFI_VARIABLE_BOOT, "EV_EFI_VARIABLE_BOOT"},
	{EV_EFI_BOOT_SERVICES_APPLICATION, "EV_EFI_BOOT_SERVICES_APPLICATION"},
	{EV_EFI_BOOT_SERVICES_DRIVER, "EV_EFI_BOOT_SERVICES_DRIVER"},
	{EV_EFI_RUNTIME_SERVICES_DRIVER, "EV_EFI_RUNTIME_SERVICES_DRIVER"},
	{EV_EFI_GPT_EVENT, "EV_EFI_GPT_EVENT"},
	{EV_EFI_ACTION, "EV_EFI_ACTION"},
	{EV_EFI_PLATFORM_FIRMWARE_BLOB, "EV_EFI_PLATFORM_FIRMWARE_BLOB"},
	{EV_EFI_HANDOFF_TABLES, "EV_EFI_HANDOFF_TABLES"},
	{EV_EFI_PLATFORM_FIRMWARE_BLOB2, "EV_EFI_PLATFORM_FIRMWARE_BLOB2"},
	{EV_EFI_HANDOFF_TABLES2, "EV_EFI_HANDOFF_TABLES2"},
	{EV_EFI_VARIABLE_BOOT2, "EV_EFI_VARIABLE_BOOT2"},
	{EV_EFI_GPT_EVENT2, "EV_EFI_GPT_EVENT2"},
	{EV_EFI_HCRTM_EVENT, "EV_EFI_HCRTM_EVENT"},
	{EV_EFI_VARIABLE_AUTHORITY, "EV_EFI_VARIABLE_AUTHORITY"},
	{EV_EFI_SPDM_FIRMWARE_BLOB, "EV_EFI_SPDM_FIRMWARE_BLOB"},
	{EV_EFI_SPDM_FIRMWARE_CONFIG, "EV_EFI_SPDM_FIRMWARE_CONFIG"},
};

const char *eventlog_type_name(uint32_t type)
{
	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (type_names[i].type == type)
			return type_names[i].name;
	return NULL;
}

/* ---- parsing ---------------------------------------------------------------------------- */

struct parser {
	struct rd rd;
	const uint8_t *base;
	struct eventlog *log;
	struct dynbuf events;
	struct eventlog_error *err;
	uint32_t index;
	size_t offset; /* of the record being parsed */
};

static int fail(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct parser *ps, const char *fmt, ...)
{
	va_list ap;

	ps->err->index = ps->index;
	ps->err->offset = ps->offset;
	va_start(ap, fmt);
	vsnprintf(ps->err->msg, sizeof(ps->err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Reads `u32 size | data`, size checked against what remains and the cap. */
static int read_data(struct parser *ps, struct eventlog_event *e)
{
	uint64_t size = rd_le(&ps->rd, 4);

	if (ps->rd.bad)
		return fail(ps, "record ends inside its eventSize field");
	if (size > LIMIT_EVENTLOG_EVENT_DATA)
		return fail(ps, "eventSize %llu is past the cap of " LIMIT_STR(LIMIT_EVENTLOG_EVENT_DATA)
			    " bytes", (unsigned long long)size);
	if (size > ps->rd.left)
		return fail(ps, "eventSize %llu is more than the %zu bytes left in the log",
			    (unsigned long long)size, ps->rd.left);
	e->data_len = (uint32_t)size;
	e->data = rd_take(&ps->rd, (size_t)size);
	return 0;
}

static int check_pcr(struct parser *ps, const struct eventlog_event *e)
{
	if (e->pcr >= PCR_COUNT)
		return fail(ps, "pcrIndex %u is not a PCR of a PC Client TPM (0-%u)", e->pcr,
			    PCR_COUNT - 1);
	return 0;
}

/* TCG_PCR_EVENT: u32 pcr | u32 type | sha1[20] | u32 size | data */
static int parse_sha1_record(struct parser *ps, struct eventlog_event *e)
{
	e->pcr = (uint32_t)rd_le(&ps->rd, 4);
	e->type = (uint32_t)rd_le(&ps->rd, 4);
	e->digest[0].value = rd_take(&ps->rd, SHA1_SIZE);
	e->digest[0].alg = alg_by_id(TPM2_ALG_SHA1);
	e->ndigests = 1;
	if (ps->rd.bad)
		return fail(ps, "record ends inside its header (pcrIndex, eventType, digest)");
	if (read_data(ps, e))
		return -EINVAL;
	return check_pcr(ps, e);
}

/* TCG_PCR_EVENT2: u32 pcr | u32 type | TPML_DIGEST_VALUES | u32 size | data */
static int parse_event2(struct parser *ps, struct eventlog_event *e)
{
	const struct eventlog *log = ps->log;
	uint64_t count;

	e->pcr = (uint32_t)rd_le(&ps->rd, 4);
	e->type = (uint32_t)rd_le(&ps->rd, 4);
	count = rd_le(&ps->rd, 4);
	if (ps->rd.bad)
		return fail(ps, "record ends inside its header (pcrIndex, eventType, digests.count)");
	if (count == 0 || count > log->nalgs)
		return fail(ps, "digests.count %llu: the log has %u banks, and an event carries 1 to %u",
			    (unsigned long long)count, log->nalgs, log->nalgs);
	for (unsigned i = 0; i < count; i++) {
		uint16_t id = (uint16_t)rd_le(&ps->rd, 2);
		const struct alg *a = NULL;

		if (ps->rd.bad)
			return fail(ps, "record ends inside digest %u's hashAlg", i);
		for (unsigned k = 0; k < log->nalgs; k++)
			if (log->algs[k]->id == id)
				a = log->algs[k];
		if (!a)
			return fail(ps, "digest %u has hashAlg 0x%04x, not a bank of this log's Spec ID event",
				    i, id);
		for (unsigned k = 0; k < i; k++)
			if (e->digest[k].alg == a)
				return fail(ps, "digest %u repeats bank %s", i, a->name);
		e->digest[i].alg = a;
		e->digest[i].value = rd_take(&ps->rd, a->size);
		if (ps->rd.bad)
			return fail(ps, "record ends inside its %s digest", a->name);
	}
	e->ndigests = (unsigned)count;
	if (read_data(ps, e))
		return -EINVAL;
	return check_pcr(ps, e);
}

/*
 * TCG_EfiSpecIdEvent: signature[16] | u32 platformClass | u8 minor | u8 major | u8 errata |
 * u8 uintnSize | u32 numberOfAlgorithms | {u16 algorithmId, u16 digestSize}[n] |
 * u8 vendorInfoSize | vendorInfo
 */
static int parse_spec_id(struct parser *ps, const struct eventlog_event *hdr)
{
	struct eventlog *log = ps->log;
	struct rd r = {.p = hdr->data, .left = hdr->data_len};
	uint64_t n, vendor;

	rd_take(&r, 16);
	log->platform_class = (uint32_t)rd_le(&r, 4);
	log->spec_minor = (uint8_t)rd_le(&r, 1);
	log->spec_major = (uint8_t)rd_le(&r, 1);
	log->spec_errata = (uint8_t)rd_le(&r, 1);
	log->uintn_size = (uint8_t)rd_le(&r, 1);
	n = rd_le(&r, 4);
	if (r.bad)
		return fail(ps, "Spec ID event ends before numberOfAlgorithms");
	if (n == 0 || n > LIMIT_PCR_BANKS)
		return fail(ps, "Spec ID event declares %llu algorithms; 1 to %u are accepted",
			    (unsigned long long)n, LIMIT_PCR_BANKS);
	for (unsigned i = 0; i < n; i++) {
		uint16_t id = (uint16_t)rd_le(&r, 2);
		uint16_t size = (uint16_t)rd_le(&r, 2);
		const struct alg *a = alg_for_use(id, ALG_USE_PCR);

		if (r.bad)
			return fail(ps, "Spec ID event ends inside algorithm %u", i);
		if (!a)
			return fail(ps, "Spec ID event declares algorithm 0x%04x, which this verifier does not know (sha1, sha256, sha384 and sha512 are accepted)",
				    id);
		if (size != a->size)
			return fail(ps, "Spec ID event gives %s a digest size of %u, not %zu", a->name,
				    size, a->size);
		for (unsigned k = 0; k < i; k++)
			if (log->algs[k] == a)
				return fail(ps, "Spec ID event declares %s twice", a->name);
		log->algs[i] = a;
	}
	log->nalgs = (unsigned)n;
	vendor = rd_le(&r, 1);
	rd_take(&r, (size_t)vendor);
	if (r.bad)
		return fail(ps, "Spec ID event ends inside vendorInfo (%llu bytes)", (unsigned long long)vendor);
	if (r.left)
		return fail(ps, "Spec ID event has %zu bytes after vendorInfo", r.left);
	if (log->uintn_size != 1 && log->uintn_size != 2)
		return fail(ps, "Spec ID event has uintnSize %u (1: 32-bit UINTN, 2: 64-bit)",
			    log->uintn_size);
	return 0;
}

static bool is_spec_id(const struct eventlog_event *e)
{
	return e->type == EV_NO_ACTION && e->data_len >= 16 &&
	       memcmp(e->data, SPEC_ID_SIGNATURE, 16) == 0;
}

/* An EV_NO_ACTION "StartupLocality" event: signature[16] | u8 locality. */
static int note_locality(struct parser *ps, const struct eventlog_event *e)
{
	if (e->type != EV_NO_ACTION || e->data_len < 16 ||
	    memcmp(e->data, STARTUP_LOCALITY_SIGNATURE, 16) != 0)
		return 0;
	if (e->data_len != 17 || e->pcr != 0)
		return fail(ps, "StartupLocality event must be 17 bytes for PCR 0 (%u bytes, PCR %u)",
			    e->data_len, e->pcr);
	if (ps->log->startup_locality >= 0)
		return fail(ps, "a second StartupLocality event");
	ps->log->startup_locality = e->data[16];
	return 0;
}

static struct eventlog_event *new_event(struct parser *ps)
{
	struct eventlog_event *e;

	if (ps->index >= LIMIT_EVENTLOG_EVENTS) {
		fail(ps, "more than " LIMIT_STR(LIMIT_EVENTLOG_EVENTS) " events");
		return NULL;
	}
	e = dynbuf_grow(&ps->events, sizeof(*e));
	if (!e)
		return NULL;
	memset(e, 0, sizeof(*e));
	e->index = ps->index;
	e->offset = ps->offset;
	return e;
}

int eventlog_parse(const uint8_t *buf, size_t len, struct eventlog *out, struct eventlog_error *err)
{
	struct parser ps = {.rd = {.p = buf, .left = len}, .base = buf, .log = out, .err = err};
	struct eventlog_event *e;
	int ret;

	memset(out, 0, sizeof(*out));
	memset(err, 0, sizeof(*err));
	out->startup_locality = -1;
	dynbuf_init(&ps.events, (size_t)LIMIT_EVENTLOG_EVENTS * sizeof(struct eventlog_event));
	if (!buf && len) {
		ret = fail(&ps, "no buffer");
		goto out;
	}
	if (len > LIMIT_EVENTLOG_BYTES) {
		ret = fail(&ps, "log is %zu bytes, past the cap of " LIMIT_STR(LIMIT_EVENTLOG_BYTES), len);
		goto out;
	}
	if (len == 0) {
		ret = fail(&ps, "the log is empty");
		goto out;
	}
	/* The first record is always SHA-1 style; in a crypto-agile log it names the banks. */
	ret = -ENOMEM;
	e = new_event(&ps);
	if (!e)
		goto out_err;
	ret = parse_sha1_record(&ps, e);
	if (ret)
		goto out;
	out->crypto_agile = is_spec_id(e);
	if (out->crypto_agile) {
		if (e->pcr != 0)
			ret = fail(&ps, "Spec ID event is for PCR %u, not 0", e->pcr);
		else
			ret = parse_spec_id(&ps, e);
		if (ret)
			goto out;
	} else {
		out->nalgs = 1;
		out->algs[0] = e->digest[0].alg;
		ret = note_locality(&ps, e);
		if (ret)
			goto out;
	}
	while (ps.rd.left) {
		ps.index++;
		ps.offset = (size_t)(ps.rd.p - buf);
		e = new_event(&ps);
		if (!e) {
			ret = ps.err->msg[0] ? -EINVAL : -ENOMEM;
			goto out_err;
		}
		ret = out->crypto_agile ? parse_event2(&ps, e) : parse_sha1_record(&ps, e);
		if (!ret && is_spec_id(e))
			ret = fail(&ps, "a second Spec ID event");
		if (!ret)
			ret = note_locality(&ps, e);
		if (ret)
			goto out;
	}
	out->nevents = ps.events.len / sizeof(struct eventlog_event);
	out->events = (struct eventlog_event *)dynbuf_take(&ps.events, NULL);
	if (!out->events) {
		ret = -ENOMEM;
		goto out_err;
	}
	return 0;
out_err:
	if (ret == -ENOMEM)
		fail(&ps, "out of memory");
out:
	dynbuf_release(&ps.events);
	memset(out, 0, sizeof(*out));
	out->startup_locality = -1;
	return ret;
}

void eventlog_release(struct eventlog *log)
{
	if (!log)
		return;
	free(log->events);
	log->events = NULL;
	log->nevents = 0;
}

const uint8_t *eventlog_event_digest(const struct eventlog_event *e, uint16_t alg)
{
	for (unsigned i = 0; i < e->ndigests; i++)
		if (e->digest[i].alg->id == alg)
			return e->digest[i].value;
	return NULL;
}

/* ---- replay ----------------------------------------------------------------------------- */

int eventlog_replay(const struct eventlog *log, struct pcr_set *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned b = 0; b < log->nalgs; b++) {
		struct pcr_bank *bank = pcr_set_add_bank(out, log->algs[b]->id);

		if (!bank)
			return -EINVAL;
		if (log->startup_locality >= 0) {
			bank->value[0][log->algs[b]->size - 1] = (uint8_t)log->startup_locality;
			bank->mask |= 1u;
		}
	}
	for (size_t i = 0; i < log->nevents; i++) {
		const struct eventlog_event *e = &log->events[i];

		if (e->type == EV_NO_ACTION)
			continue;
		for (unsigned d = 0; d < e->ndigests; d++) {
			const struct alg *a = e->digest[d].alg;
			struct pcr_bank *bank = pcr_set_bank(out, a->id);

			if (!bank || alg_digest3(a, bank->value[e->pcr], a->size, e->digest[d].value,
						 a->size, NULL, 0, bank->value[e->pcr]) < 0)
				return -EINVAL;
			bank->mask |= 1u << e->pcr;
		}
	}
	return 0;
}

bool eventlog_digests_match(const struct eventlog_event *e, const void *data, size_t len)
{
	uint8_t d[LIMIT_DIGEST];

	if (e->ndigests == 0)
		return false;
	for (unsigned i = 0; i < e->ndigests; i++) {
		const struct alg *a = e->digest[i].alg;

		if (alg_digest3(a, data, len, NULL, 0, NULL, 0, d) < 0 ||
		    memcmp(d, e->digest[i].value, a->size) != 0)
			return false;
	}
	return true;
}

/* ---- decoders --------------------------------------------------------------------------- */

int eventlog_decode_variable(const struct eventlog_event *e, struct eventlog_variable *out)
{
	struct rd r = {.p = e->data, .left = e->data_len};
	const uint8_t *guid;
	uint64_t nchars, dlen;

	memset(out, 0, sizeof(*out));
	guid = rd_take(&r, 16);
	nchars = rd_le(&r, 8);
	dlen = rd_le(&r, 8);
	if (r.bad || nchars > r.left / 2)
		return -EINVAL;
	out->name = rd_take(&r, (size_t)nchars * 2);
	if (dlen != r.left)
		return -EINVAL; /* VariableDataLength must be exactly what follows the name */
	out->data = rd_take(&r, (size_t)dlen);
	if (r.bad)
		return -EINVAL;
	memcpy(out->guid, guid, 16);
	out->name_chars = (size_t)nchars;
	out->data_len = (size_t)dlen;
	return 0;
}

bool eventlog_variable_is(const struct eventlog_variable *v, const uint8_t guid[16], const char *name)
{
	size_t n = strlen(name);

	if (memcmp(v->guid, guid, 16) != 0 || v->name_chars != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (v->name[2 * i] != (uint8_t)name[i] || v->name[2 * i + 1] != 0)
			return false;
	return true;
}

int eventlog_decode_image(const struct eventlog_event *e, struct eventlog_image *out)
{
	struct rd r = {.p = e->data, .left = e->data_len};
	uint64_t dplen;

	memset(out, 0, sizeof(*out));
	out->location = rd_le(&r, 8);
	out->length = rd_le(&r, 8);
	out->link_time = rd_le(&r, 8);
	dplen = rd_le(&r, 8);
	if (r.bad || dplen != r.left)
		return -EINVAL;
	out->device_path = rd_take(&r, (size_t)dplen);
	out->device_path_len = (size_t)dplen;
	return 0;
}

/*
 * EFI_DEVICE_PATH_PROTOCOL nodes: u8 type | u8 subtype | u16 length (header included), ending
 * with an end node (0x7f 0xff). A file-path node (4/4) holds a NUL-terminated UTF-16LE path.
 */
int eventlog_device_path_file(const uint8_t *dp, size_t len, char *out, size_t cap)
{
	struct rd r = {.p = dp, .left = len};
	const uint8_t *name = NULL;
	size_t name_len = 0;

	if (cap)
		out[0] = '\0';
	while (r.left) {
		uint8_t type = (uint8_t)rd_le(&r, 1), sub = (uint8_t)rd_le(&r, 1);
		uint16_t nlen = (uint16_t)rd_le(&r, 2);
		const uint8_t *body;

		if (r.bad || nlen < 4)
			return -EINVAL;
		body = rd_take(&r, nlen - 4u);
		if (!body)
			return -EINVAL;
		if (type == 0x7f && sub == 0xff)
			break;
		if (type == 4 && sub == 4) {
			name = body;
			name_len = nlen - 4u;
		}
	}
	if (!name)
		return -ENOENT;
	if (name_len % 2)
		return -EINVAL;
	return eventlog_utf16_to_utf8(name, name_len / 2, out, cap);
}

int eventlog_decode_tagged(const struct eventlog_event *e, struct eventlog_tagged *out)
{
	struct rd r = {.p = e->data, .left = e->data_len};
	uint64_t size;

	memset(out, 0, sizeof(*out));
	out->id = (uint32_t)rd_le(&r, 4);
	size = rd_le(&r, 4);
	if (r.bad || size != r.left)
		return -EINVAL;
	out->data = rd_take(&r, (size_t)size);
	out->len = (uint32_t)size;
	return 0;
}

int eventlog_decode_blob(const struct eventlog_event *e, struct eventlog_blob *out)
{
	struct rd r = {.p = e->data, .left = e->data_len};

	memset(out, 0, sizeof(*out));
	if (e->type == EV_EFI_PLATFORM_FIRMWARE_BLOB2) {
		out->desc_len = (size_t)rd_le(&r, 1);
		out->desc = rd_take(&r, out->desc_len);
	} else if (e->type != EV_EFI_PLATFORM_FIRMWARE_BLOB) {
		return -EINVAL;
	}
	out->base = rd_le(&r, 8);
	out->length = rd_le(&r, 8);
	return r.bad || r.left ? -EINVAL : 0;
}

/* ---- text ------------------------------------------------------------------------------- */

static int put_utf8(char *out, size_t cap, size_t *o, uint32_t cp)
{
	uint8_t b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (uint8_t)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (uint8_t)(0xc0 | cp >> 6);
		b[1] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (uint8_t)(0xe0 | cp >> 12);
		b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (uint8_t)(0xf0 | cp >> 18);
		b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 4;
	}
	if (*o + n >= cap)
		return -EINVAL;
	memcpy(out + *o, b, n);
	*o += n;
	return 0;
}

int eventlog_utf16_to_utf8(const uint8_t *in, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	if (cap == 0)
		return -EINVAL;
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		uint32_t cp = (uint32_t)in[2 * i] | (uint32_t)in[2 * i + 1] << 8;

		if (cp == 0)
			break;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			uint32_t lo = i + 1 < n ? ((uint32_t)in[2 * i + 2] | (uint32_t)in[2 * i + 3] << 8) : 0;

			if (lo < 0xdc00 || lo > 0xdfff)
				return -EINVAL;
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			i++;
		} else if (cp >= 0xdc00 && cp <= 0xdfff) {
			return -EINVAL;
		}
		if (put_utf8(out, cap, &o, cp) < 0) {
			out[0] = '\0';
			return -EINVAL;
		}
	}
	out[o] = '\0';
	return 0;
}

/* Decodes one UTF-8 sequence at s[0..n) (RFC 3629: no overlongs, no surrogates); 0 if invalid. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, *cp = s[0] & 0x1fu, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, *cp = s[0] & 0x0fu, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, *cp = s[0] & 0x07u, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3fu);
	}
	if (*cp < min || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return len;
}

int eventlog_load_options_digest(const struct alg *alg, const char *cmdline, size_t len,
				 uint8_t *out)
{
	const unsigned char *s = (const unsigned char *)cmdline;
	struct dynbuf u16;
	int ret = -EINVAL;

	if (!alg || len > LIMIT_CMDLINE || memchr(cmdline, 0, len))
		return -EINVAL;
	/* At most two UTF-16 code units per input byte, and the NUL. */
	dynbuf_init(&u16, 4 * (size_t)LIMIT_CMDLINE + 2);
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = utf8_decode(s + i, len - i, &cp);
		uint8_t b[4];

		if (!n)
			goto out;
		i += n;
		if (cp >= 0x10000) {
			uint32_t v = cp - 0x10000, hi = 0xd800 + (v >> 10), lo = 0xdc00 + (v & 0x3ff);

			b[0] = (uint8_t)hi, b[1] = (uint8_t)(hi >> 8), b[2] = (uint8_t)lo, b[3] = (uint8_t)(lo >> 8);
			dynbuf_add(&u16, b, 4);
		} else {
			b[0] = (uint8_t)cp, b[1] = (uint8_t)(cp >> 8);
			dynbuf_add(&u16, b, 2);
		}
	}
	dynbuf_add(&u16, "\0\0", 2);
	ret = dynbuf_error(&u16);
	if (!ret)
		ret = alg_digest3(alg, u16.buf, u16.len, NULL, 0, NULL, 0, out);
out:
	dynbuf_release(&u16);
	return ret;
}
