/*
 * The TCG event log parser, replay and decoders: hand-built logs whose digests are computed
 * here with OpenSSL one-shot calls (not with the code under test); truncation at every length,
 * edits, reordering, every refusal of the parser with its message; and every recorded log in
 * tests/data/eventlog and its public/ (NAME.bin with NAME.pcrs, `pcrN BANK HEX` lines from the
 * guest's TPM, or tpm2_eventlog's for the public logs rebuilt by public/build.py) replays to its
 * PCRs.
 */
#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/encoding.h"
#include "proto/eventlog.h"
#include "tests/unit/check.h"

#define CAP (1u << 16)

struct log {
	uint8_t b[CAP];
	size_t len;
	size_t ends[64]; /* record boundaries */
	unsigned n;
	unsigned nalgs;
	uint16_t algs[4];
};

static void put(struct log *l, const void *p, size_t n)
{
	if (l->len + n > CAP)
		abort();
	memcpy(l->b + l->len, p, n);
	l->len += n;
}

static void put_le(struct log *l, uint64_t v, unsigned bytes)
{
	uint8_t b[8];

	for (unsigned i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put(l, b, bytes);
}

static const EVP_MD *md_of(uint16_t alg)
{
	switch (alg) {
	case TPM2_ALG_SHA1: return EVP_sha1();
	case TPM2_ALG_SHA256: return EVP_sha256();
	case TPM2_ALG_SHA384: return EVP_sha384();
	default: return EVP_sha512();
	}
}

static size_t hash(uint16_t alg, const void *p, size_t n, uint8_t *out)
{
	unsigned int len = 0;

	EVP_Digest(p, n, out, &len, md_of(alg), NULL);
	return len;
}

/* The Spec ID header record for banks algs[0..n). */
static void header(struct log *l, unsigned n, const uint16_t *algs, uint8_t vendor)
{
	uint8_t zero[20] = {0};
	size_t size = 16 + 4 + 4 + 4 + 4u * n + 1 + vendor;

	memset(l, 0, sizeof(*l));
	put_le(l, 0, 4);
	put_le(l, EV_NO_ACTION, 4);
	put(l, zero, 20);
	put_le(l, size, 4);
	put(l, "Spec ID Event03", 16);
	put_le(l, 0, 4);            /* platformClass */
	put_le(l, 0x0200, 2);       /* minor 0, major 2 */
	put_le(l, 0x0200, 2);       /* errata 0, uintnSize 2 */
	put_le(l, n, 4);
	for (unsigned i = 0; i < n; i++) {
		uint8_t d[64];

		put_le(l, algs[i], 2);
		put_le(l, hash(algs[i], "", 0, d), 2);
		l->algs[i] = algs[i];
	}
	l->nalgs = n;
	put_le(l, vendor, 1);
	for (unsigned i = 0; i < vendor; i++)
		put_le(l, 0xa5, 1);
	l->ends[l->n++] = l->len;
}

static const uint16_t two_banks[2] = {TPM2_ALG_SHA1, TPM2_ALG_SHA256};

/* An EVENT2 record whose digests are H(data) in every bank of the log. */
static void event(struct log *l, uint32_t pcr, uint32_t type, const void *data, size_t n)
{
	put_le(l, pcr, 4);
	put_le(l, type, 4);
	put_le(l, l->nalgs, 4);
	for (unsigned i = 0; i < l->nalgs; i++) {
		uint8_t d[64];
		size_t dl = hash(l->algs[i], data, n, d);

		put_le(l, l->algs[i], 2);
		put(l, d, dl);
	}
	put_le(l, n, 4);
	put(l, data, n);
	l->ends[l->n++] = l->len;
}

/* A typical UEFI log: firmware, Secure Boot variables, a kernel, its command line. */
static void typical(struct log *l)
{
	uint8_t blob[16] = {0, 0, 0x82, 0, 0, 0, 0, 0, 0, 0, 0x0e, 0, 0, 0, 0, 0};
	uint8_t var[32 + 20 + 1];
	uint8_t tag[8 + 26];
	uint8_t image[32 + 22];
	static const uint8_t dp[22] = {4, 4, 18, 0, 'k', 0, 'e', 0, 'r', 0, 'n', 0, 'e', 0, 'l', 0,
				       0, 0, 0x7f, 0xff, 4, 0};

	header(l, 2, two_banks, 0);
	event(l, 0, EV_S_CRTM_VERSION, "\0\0", 2);
	event(l, 0, EV_EFI_PLATFORM_FIRMWARE_BLOB, blob, sizeof(blob));
	/* SecureBoot = 1 */
	memset(var, 0, sizeof(var));
	memcpy(var, eventlog_guid_global, 16);
	var[16] = 10;  /* UnicodeNameLength */
	var[24] = 1;   /* VariableDataLength */
	for (int i = 0; i < 10; i++)
		var[32 + 2 * i] = (uint8_t)"SecureBoot"[i];
	var[52] = 1;
	event(l, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, var, sizeof(var));
	event(l, 7, EV_SEPARATOR, "\0\0\0\0", 4);
	memset(image, 0, sizeof(image));
	image[8] = 0x10; /* length 0x10 */
	image[24] = sizeof(dp);
	memcpy(image + 32, dp, sizeof(dp));
	event(l, 4, EV_EFI_BOOT_SERVICES_APPLICATION, image, sizeof(image));
	memset(tag, 0, sizeof(tag));
	tag[0] = 0xed, tag[1] = 0x22, tag[2] = 0x3b, tag[3] = 0x8f;
	tag[4] = 26;
	memcpy(tag + 8, "LOADED_IMAGE::LoadOptions", 26);
	event(l, 9, EV_EVENT_TAG, tag, sizeof(tag));
	event(l, 5, EV_EFI_ACTION, "Exit Boot Services Invocation", 29);
}

/* Expected PCR value of one bank: extend every listed digest of pcr in order, from zeros. */
static void expect_pcr(const struct eventlog *log, uint16_t alg, uint32_t pcr, uint8_t *out)
{
	uint8_t buf[128];
	size_t n = hash(alg, "", 0, buf);

	memset(out, 0, n);
	for (size_t i = 0; i < log->nevents; i++) {
		const uint8_t *d = eventlog_event_digest(&log->events[i], alg);

		if (log->events[i].type == EV_NO_ACTION || log->events[i].pcr != pcr || !d)
			continue;
		memcpy(buf, out, n);
		memcpy(buf + n, d, n);
		hash(alg, buf, 2 * n, out);
	}
}

static int parse(const struct log *l, struct eventlog *log, struct eventlog_error *err)
{
	return eventlog_parse(l->b, l->len, log, err);
}

static void test_typical_log(void)
{
	struct log l;
	struct eventlog log;
	struct eventlog_error err;
	struct pcr_set pcrs;

	typical(&l);
	CHECK(parse(&l, &log, &err) == 0, "typical log parses: %s", err.msg);
	CHECK(log.crypto_agile && log.nalgs == 2 && log.nevents == 8, "header: %u banks, %zu events",
	      log.nalgs, log.nevents);
	CHECK(log.spec_major == 2 && log.uintn_size == 2, "spec version");
	CHECK(log.events[4].pcr == 7 && log.events[4].type == EV_SEPARATOR, "event 4 is PCR 7's separator");
	CHECK(log.events[7].offset == l.ends[6], "offset of the last event");
	CHECK(eventlog_replay(&log, &pcrs) == 0, "replay");
	CHECK(pcrs.nbanks == 2 && pcrs.bank[0].alg == TPM2_ALG_SHA1 && pcrs.bank[1].alg == TPM2_ALG_SHA256,
	      "replay banks in the header's order");
	CHECK(pcrs.bank[1].mask == ((1u << 0) | (1u << 4) | (1u << 5) | (1u << 7) | (1u << 9)),
	      "mask: the PCRs the log extends (0x%x)", pcrs.bank[1].mask);
	for (unsigned b = 0; b < 2; b++) {
		for (uint32_t p = 0; p < PCR_COUNT; p++) {
			uint8_t want[64];

			if (!(pcrs.bank[b].mask & (1u << p)))
				continue;
			expect_pcr(&log, pcrs.bank[b].alg, p, want);
			CHECK(memcmp(want, pcrs.bank[b].value[p], pcr_alg_digest_size(pcrs.bank[b].alg)) == 0,
			      "bank %u PCR %u replays", b, p);
		}
	}
	eventlog_release(&log);
	eventlog_release(&log);
	CHECK(log.events == NULL && log.nevents == 0, "release is idempotent");
}

/* Every cut that is not at a record boundary fails; a cut at one is a shorter valid log. */
static void test_truncation(void)
{
	struct log l;
	struct eventlog log;
	struct eventlog_error err;
	unsigned bad = 0, good = 0;

	typical(&l);
	for (size_t cut = 0; cut < l.len; cut++) {
		bool boundary = false;
		int r = eventlog_parse(l.b, cut, &log, &err);

		for (unsigned i = 0; i < l.n; i++)
			boundary |= l.ends[i] == cut;
		if (boundary) {
			good += r == 0;
			CHECK(r == 0, "cut at boundary %zu parses: %s", cut, err.msg);
		} else {
			bad += r == -EINVAL;
			CHECK(r == -EINVAL && err.msg[0] && err.offset <= cut, "cut at %zu refused (%d)", cut, r);
			CHECK(log.events == NULL && log.nevents == 0, "nothing returned after a failure");
		}
		eventlog_release(&log);
	}
	CHECK(good == l.n - 1 && bad == l.len - good, "%u good cuts, %u refused", good, bad);
}

/*
 * Any single-byte edit is refused by the parser, seen by the replay or by the data check --
 * except an edit of an eventType: nothing binds the type to what was measured, so a policy
 * must never let a relabelled event escape it (boot_check.c judges PCR 0, 4 and 7 by digest
 * whatever the type says). The test pins that fact down.
 */
static void test_edits(void)
{
	struct log l, e;
	struct eventlog base, log;
	struct eventlog_error err;
	struct pcr_set want, got;
	unsigned refused = 0, replay = 0, data = 0, type = 0, other = 0;

	typical(&l);
	CHECK(parse(&l, &base, &err) == 0 && eventlog_replay(&base, &want) == 0, "base log");
	for (size_t i = l.ends[0]; i < l.len; i++) {
		bool in_type = false;

		for (unsigned k = 0; k + 1 < l.n; k++)
			in_type |= i >= l.ends[k] + 4 && i < l.ends[k] + 8;
		e = l;
		e.b[i] ^= 0x01;
		if (parse(&e, &log, &err) < 0) {
			refused++;
			continue;
		}
		eventlog_replay(&log, &got);
		if (memcmp(&got, &want, sizeof(got)) != 0 || log.nevents != base.nevents) {
			replay++;
		} else {
			bool mismatch = false;

			for (size_t k = 1; k < log.nevents; k++)
				mismatch |= !eventlog_digests_match(&log.events[k], log.events[k].data,
								    log.events[k].data_len);
			if (mismatch)
				data++;
			else if (in_type)
				type++;
			else
				other++;
		}
		eventlog_release(&log);
	}
	CHECK(other == 0, "every edit is refused (%u), changes the replay (%u) or breaks an event's digest (%u), or is in an eventType (%u); %u unnoticed",
	      refused, replay, data, type, other);
	CHECK(refused && replay && data && type == 4 * (l.n - 1), "each happens; every type edit passes (%u)", type);
	eventlog_release(&base);
}

/* Swap two records: same PCR changes the replay, different PCRs do not (order across PCRs is
 * not bound by a quote, only within one). */
static void swap(struct log *l, unsigned a)
{
	size_t s0 = l->ends[a - 1], s1 = l->ends[a], s2 = l->ends[a + 1];
	uint8_t tmp[CAP];

	memcpy(tmp, l->b + s1, s2 - s1);
	memcpy(tmp + (s2 - s1), l->b + s0, s1 - s0);
	memcpy(l->b + s0, tmp, s2 - s0);
}

static void test_reorder(void)
{
	struct log l, r;
	struct eventlog log;
	struct eventlog_error err;
	struct pcr_set want, got;

	typical(&l);
	CHECK(parse(&l, &log, &err) == 0 && eventlog_replay(&log, &want) == 0, "base");
	eventlog_release(&log);
	r = l;
	swap(&r, 1); /* events 1 and 2: both PCR 0 */
	CHECK(parse(&r, &log, &err) == 0 && eventlog_replay(&log, &got) == 0, "reordered parses");
	CHECK(memcmp(got.bank[1].value[0], want.bank[1].value[0], 32) != 0,
	      "two PCR 0 events swapped: PCR 0 differs");
	eventlog_release(&log);
	r = l;
	swap(&r, 4); /* events 4 (PCR 7) and 5 (PCR 4) */
	CHECK(parse(&r, &log, &err) == 0 && eventlog_replay(&log, &got) == 0, "reordered parses");
	CHECK(memcmp(&got, &want, sizeof(got)) == 0, "events of different PCRs swapped: same PCRs");
	eventlog_release(&log);
}

/* A log whose bytes after the header are raw, for the refusals. */
static void expect_refused(const char *what, const struct log *l, const char *msg_part)
{
	struct eventlog log;
	struct eventlog_error err;
	int r = parse(l, &log, &err);

	CHECK(r == -EINVAL, "%s: refused (%d)", what, r);
	CHECK(strstr(err.msg, msg_part) != NULL, "%s: message \"%s\" names \"%s\"", what, err.msg, msg_part);
	eventlog_release(&log);
}

static void test_refusals(void)
{
	struct log l;
	uint16_t sm3[2] = {TPM2_ALG_SHA256, 0x0012};
	uint16_t twice[2] = {TPM2_ALG_SHA256, TPM2_ALG_SHA256};
	uint8_t d32[32] = {0};

	header(&l, 2, sm3, 0);
	/* hash() gave SM3 a size of sha512's; the parser refuses the id before the size */
	expect_refused("unknown algorithm in the Spec ID event", &l, "0x0012");
	header(&l, 2, twice, 0);
	expect_refused("a bank declared twice", &l, "twice");
	header(&l, 1, two_banks + 1, 0);
	l.b[32 + 28 + 2] = 20; /* sha256's digestSize */
	expect_refused("wrong digest size", &l, "digest size of 20");
	header(&l, 0, two_banks, 0);
	expect_refused("no algorithm", &l, "declares 0 algorithms");
	header(&l, 1, two_banks + 1, 3);
	l.len -= 1;
	l.b[28] -= 1; /* eventSize, one vendor byte short */
	expect_refused("vendorInfo cut", &l, "vendorInfo");

	header(&l, 2, two_banks, 0);
	event(&l, 0, EV_SEPARATOR, "\0\0\0\0", 4);
	l.b[l.ends[0] + 8] = 0; /* digests.count 0 */
	expect_refused("digests.count 0", &l, "digests.count 0");
	l.b[l.ends[0] + 8] = 3;
	expect_refused("digests.count past the banks", &l, "digests.count 3");
	header(&l, 1, two_banks + 1, 0);
	event(&l, 24, EV_SEPARATOR, "\0\0\0\0", 4);
	expect_refused("PCR 24", &l, "pcrIndex 24");
	header(&l, 1, two_banks + 1, 0);
	put_le(&l, 0, 4), put_le(&l, EV_SEPARATOR, 4), put_le(&l, 1, 4);
	put_le(&l, TPM2_ALG_SHA1, 2), put(&l, d32, 20), put_le(&l, 0, 4);
	expect_refused("a digest of a bank the header does not declare", &l, "hashAlg 0x0004");
	header(&l, 2, two_banks, 0);
	put_le(&l, 0, 4), put_le(&l, EV_SEPARATOR, 4), put_le(&l, 2, 4);
	put_le(&l, TPM2_ALG_SHA256, 2), put(&l, d32, 32);
	put_le(&l, TPM2_ALG_SHA256, 2), put(&l, d32, 32), put_le(&l, 0, 4);
	expect_refused("the same bank twice in one event", &l, "repeats bank sha256");
	header(&l, 1, two_banks + 1, 0);
	event(&l, 0, EV_SEPARATOR, "\0\0\0\0", 4);
	l.b[l.len - 4 - 4] = 5; /* eventSize 5 of 4 bytes left */
	expect_refused("eventSize past the end", &l, "eventSize 5");
	header(&l, 1, two_banks + 1, 0);
	put_le(&l, 0, 4), put_le(&l, EV_SEPARATOR, 4), put_le(&l, 1, 4);
	put_le(&l, TPM2_ALG_SHA256, 2), put(&l, d32, 32), put_le(&l, LIMIT_EVENTLOG_EVENT_DATA + 1u, 4);
	expect_refused("eventSize past the cap", &l, "past the cap");
	header(&l, 1, two_banks + 1, 0);
	event(&l, 0, EV_NO_ACTION, "Spec ID Event03", 16);
	expect_refused("a second Spec ID event", &l, "second Spec ID");
	header(&l, 1, two_banks + 1, 0);
	put_le(&l, 0, 3);
	expect_refused("trailing bytes", &l, "header");

	{
		struct eventlog log;
		struct eventlog_error err;
		uint8_t one = 0;

		CHECK(eventlog_parse(&one, 0, &log, &err) == -EINVAL && strstr(err.msg, "empty"),
		      "empty log refused: %s", err.msg);
		CHECK(eventlog_parse(l.b, LIMIT_EVENTLOG_BYTES + 1u, &log, &err) == -EINVAL &&
		      strstr(err.msg, "past the cap"), "log past the byte cap refused");
	}
}

static void test_locality_and_sha1_log(void)
{
	struct log l;
	struct eventlog log;
	struct eventlog_error err;
	struct pcr_set pcrs;
	uint8_t loc[17] = "StartupLocality";
	uint8_t want[32] = {0}, buf[64], d[32];

	loc[16] = 3;
	header(&l, 1, two_banks + 1, 0);
	event(&l, 0, EV_NO_ACTION, loc, sizeof(loc));
	event(&l, 0, EV_SEPARATOR, "\0\0\0\0", 4);
	CHECK(parse(&l, &log, &err) == 0 && log.startup_locality == 3, "StartupLocality 3 read");
	CHECK(eventlog_replay(&log, &pcrs) == 0, "replay");
	want[31] = 3;
	memcpy(buf, want, 32);
	hash(TPM2_ALG_SHA256, "\0\0\0\0", 4, buf + 32);
	hash(TPM2_ALG_SHA256, buf, 64, d);
	CHECK(memcmp(pcrs.bank[0].value[0], d, 32) == 0, "PCR 0 starts at the locality");
	eventlog_release(&log);
	event(&l, 0, EV_NO_ACTION, loc, sizeof(loc));
	expect_refused("two StartupLocality events", &l, "second StartupLocality");

	/* SHA-1 only: TCG_PCR_EVENT records throughout */
	memset(&l, 0, sizeof(l));
	for (int i = 0; i < 3; i++) {
		uint8_t h[20];

		hash(TPM2_ALG_SHA1, "abcd", 4, h);
		put_le(&l, (uint32_t)i, 4), put_le(&l, EV_SEPARATOR, 4), put(&l, h, 20);
		put_le(&l, 4, 4), put(&l, "abcd", 4);
	}
	CHECK(parse(&l, &log, &err) == 0, "SHA-1 log parses: %s", err.msg);
	CHECK(!log.crypto_agile && log.nalgs == 1 && log.algs[0]->id == TPM2_ALG_SHA1 && log.nevents == 3,
	      "SHA-1 log: one bank, three events");
	CHECK(eventlog_replay(&log, &pcrs) == 0 && pcrs.nbanks == 1 && pcrs.bank[0].mask == 7,
	      "SHA-1 log replays PCR 0-2 (the first record is an event too)");
	CHECK(eventlog_digests_match(&log.events[2], "abcd", 4), "SHA-1 event's data matches");
	eventlog_release(&log);
}

static void test_decoders(void)
{
	struct log l;
	struct eventlog log;
	struct eventlog_error err;
	struct eventlog_variable v;
	struct eventlog_image im;
	struct eventlog_tagged t;
	struct eventlog_blob b;
	struct eventlog_event cut;
	char file[64], text[256];

	typical(&l);
	CHECK(parse(&l, &log, &err) == 0, "typical log");
	CHECK(eventlog_decode_variable(&log.events[3], &v) == 0, "variable decodes");
	CHECK(eventlog_variable_is(&v, eventlog_guid_global, "SecureBoot") && v.data_len == 1 && v.data[0] == 1,
	      "SecureBoot = 1");
	CHECK(!eventlog_variable_is(&v, eventlog_guid_image_security, "SecureBoot") &&
	      !eventlog_variable_is(&v, eventlog_guid_global, "Secure"), "another GUID or name is not it");
	CHECK(eventlog_digests_match(&log.events[3], log.events[3].data, log.events[3].data_len),
	      "the variable's data hashes to its digests");
	cut = log.events[3];
	cut.data_len--;
	CHECK(eventlog_decode_variable(&cut, &v) == -EINVAL, "variable one byte short refused");
	CHECK(!eventlog_digests_match(&cut, cut.data, cut.data_len), "and no longer matches its digest");

	CHECK(eventlog_decode_image(&log.events[5], &im) == 0 && im.length == 0x10 && im.device_path_len == 22,
	      "image decodes");
	CHECK(eventlog_device_path_file(im.device_path, im.device_path_len, file, sizeof(file)) == 0 &&
	      !strcmp(file, "kernel"), "device path file \"%s\"", file);
	CHECK(eventlog_device_path_file(im.device_path, 3, file, sizeof(file)) == -EINVAL,
	      "device path cut inside a node refused");
	CHECK(eventlog_device_path_file(im.device_path + 18, 4, file, sizeof(file)) == -ENOENT,
	      "device path without a file node: -ENOENT");
	CHECK(eventlog_device_path_file(im.device_path, im.device_path_len, file, 4) == -EINVAL,
	      "a file name that does not fit refused");

	CHECK(eventlog_decode_tagged(&log.events[6], &t) == 0 && t.id == EVENTLOG_TAG_LOAD_OPTIONS &&
	      t.len == 26, "tagged event decodes");
	cut = log.events[6];
	cut.data_len++;
	CHECK(eventlog_decode_tagged(&cut, &t) == -EINVAL, "tagged event with a byte more refused");

	CHECK(eventlog_decode_blob(&log.events[2], &b) == 0 && b.base == 0x820000 && b.length == 0xe0000,
	      "firmware blob decodes");
	CHECK(eventlog_decode_blob(&log.events[4], &b) == -EINVAL, "a separator is no blob");

	eventlog_describe(&log.events[3], text, sizeof(text));
	CHECK(!strcmp(text, "variable SecureBoot = 1 (on)"), "describe: %s", text);
	eventlog_describe(&log.events[5], text, sizeof(text));
	CHECK(!strcmp(text, "EFI application \"kernel\" (16 bytes)"), "describe: %s", text);
	eventlog_describe(&log.events[2], text, sizeof(text));
	CHECK(!strcmp(text, "firmware volume at 0x820000 (917504 bytes)"), "describe: %s", text);
	eventlog_describe(&log.events[7], text, sizeof(text));
	CHECK(!strcmp(text, "action \"Exit Boot Services Invocation\""), "describe: %s", text);
	eventlog_describe(&log.events[6], text, 8);
	CHECK(strlen(text) == 7, "describe cuts to the buffer");
	CHECK(!strcmp(eventlog_type_name(EV_EFI_VARIABLE_AUTHORITY), "EV_EFI_VARIABLE_AUTHORITY") &&
	      eventlog_type_name(0x12345) == NULL, "type names");
	eventlog_release(&log);
}

static void test_text(void)
{
	static const uint8_t pair[] = {0x3d, 0xd8, 0x00, 0xde, 'a', 0}; /* U+1F600 then 'a' */
	static const uint8_t lone[] = {0x00, 0xdc, 'a', 0};
	char out[16];
	uint8_t d[32], want[32];
	static const char cmdline[] = "console=ttyS0 root=/dev/vda rw rootfstype=ext4 panic=-1 ima_policy=tcb";

	CHECK(eventlog_utf16_to_utf8(pair, 3, out, sizeof(out)) == 0 && !strcmp(out, "\xf0\x9f\x98\x80" "a"),
	      "surrogate pair to UTF-8");
	CHECK(eventlog_utf16_to_utf8(lone, 2, out, sizeof(out)) == -EINVAL, "lone low surrogate refused");
	CHECK(eventlog_utf16_to_utf8(pair, 1, out, sizeof(out)) == -EINVAL, "high surrogate at the end refused");
	CHECK(eventlog_utf16_to_utf8(pair, 3, out, 4) == -EINVAL, "too long for the buffer refused");

	/* The digest OVMF + the EFI stub logged for this command line in PCR 9 (sha256), as
	 * recorded in tests/data/eventlog/guest-ovmf.bin (tpm2_eventlog shows it too). */
	hex_decode("26931de4ea297e6ef211ac01d7aa5aeeb1067d300110e36b6b09edfb2d76b2c9", 64, want, 32);
	CHECK(eventlog_load_options_digest(alg_by_id(TPM2_ALG_SHA256), cmdline, strlen(cmdline), d) == 0 &&
	      !memcmp(d, want, 32), "LoadOptions digest of the guest's command line");
	CHECK(eventlog_load_options_digest(alg_by_id(TPM2_ALG_SHA256), "a\xff", 2, d) == -EINVAL,
	      "a command line that is not UTF-8 refused");
	CHECK(eventlog_load_options_digest(alg_by_id(TPM2_ALG_SHA256), "a\0b", 3, d) == -EINVAL,
	      "a command line with a NUL refused");
	{
		/* U+00E9 and U+1F600: one and two UTF-16 code units */
		static const uint8_t u16[] = {0xe9, 0, 0x3d, 0xd8, 0x00, 0xde, 0, 0};

		hash(TPM2_ALG_SHA256, u16, sizeof(u16), want);
		CHECK(eventlog_load_options_digest(alg_by_id(TPM2_ALG_SHA256), "\xc3\xa9\xf0\x9f\x98\x80", 6, d) == 0 &&
		      !memcmp(d, want, 32), "non-ASCII command line as UTF-16LE");
	}
}

/* Every recorded log replays to its PCRs. */
static void test_recorded_logs(void)
{
	glob_t g;
	unsigned n = 0;

	if (glob("tests/data/eventlog/*.bin", 0, NULL, &g) != 0 ||
	    glob("tests/data/eventlog/public/*.bin", GLOB_APPEND, NULL, &g) != 0) {
		CHECK(0, "no recorded logs in tests/data/eventlog and its public/");
		return;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char pcrs_path[512], line[256], hex[2 * LIMIT_DIGEST + 1];
		FILE *f = fopen(g.gl_pathv[i], "rb");
		static uint8_t buf[LIMIT_EVENTLOG_BYTES];
		size_t len = f ? fread(buf, 1, sizeof(buf), f) : 0;
		struct eventlog log;
		struct eventlog_error err;
		struct pcr_set pcrs;
		unsigned lines = 0, want = 0;

		if (f)
			fclose(f);
		snprintf(pcrs_path, sizeof(pcrs_path), "%.*s.pcrs", (int)(strlen(g.gl_pathv[i]) - 4), g.gl_pathv[i]);
		f = fopen(pcrs_path, "r");
		CHECK(f != NULL, "%s has its .pcrs", g.gl_pathv[i]);
		if (!f)
			continue;
		CHECK(eventlog_parse(buf, len, &log, &err) == 0, "%s parses: event %u at %zu: %s",
		      g.gl_pathv[i], err.index, err.offset, err.msg);
		CHECK(eventlog_replay(&log, &pcrs) == 0, "%s replays", g.gl_pathv[i]);
		while (fgets(line, sizeof(line), f)) {
			unsigned pcr;
			char bank[16], *sp = strchr(line, ' ');
			const struct pcr_bank *b;

			if (line[0] == '#' || line[0] == '\n')
				continue;
			lines++;
			if (!sp || strncmp(line, "pcr", 3) != 0)
				continue;
			pcr = (unsigned)strtoul(line + 3, NULL, 10);
			snprintf(bank, sizeof(bank), "%.*s", (int)strcspn(sp + 1, " "), sp + 1);
			b = pcr_set_bank_const(&pcrs, pcr_alg_from_name(bank));
			if (!b || pcr >= PCR_COUNT || !(b->mask & (1u << pcr)))
				continue;
			hex_encode(b->value[pcr], pcr_alg_digest_size(b->alg), hex);
			want += strncmp(sp + 1 + strlen(bank) + 1, hex, strlen(hex)) == 0;
		}
		fclose(f);
		unsigned extended = 0;
		for (unsigned k = 0; k < pcrs.nbanks; k++)
			extended += (unsigned)__builtin_popcount(pcrs.bank[k].mask);
		CHECK(want == lines && extended == lines,
		      "%s: %u of %u PCR lines match, the log extends %u", g.gl_pathv[i], want, lines, extended);
		eventlog_release(&log);
		n++;
	}
	globfree(&g);
	CHECK(n >= 6, "%u recorded logs", n);
}

int main(void)
{
	CASE(test_typical_log);
	CASE(test_truncation);
	CASE(test_edits);
	CASE(test_reorder);
	CASE(test_refusals);
	CASE(test_locality_and_sha1_log);
	CASE(test_decoders);
	CASE(test_text);
	CASE(test_recorded_logs);
	return check_finish();
}
