/*
 * The boot policy (verifier/policy/boot_policy.c) and the boot check (verifier/decision/boot_check.c) on the
 * real OVMF and SeaBIOS guest logs of tests/data/eventlog: replay against a quote (PCR 0-10 in
 * sha1 and sha256, as the verifier's challenge asks), every rule of the policy with the words
 * of its finding, judging once per boot, events edited or relabelled in the log, an agent's
 * amendment that only adds, the command line's tokenizer and rules, teaching, and the section's
 * parse errors and round trip.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/alg.h"
#include "proto/encoding.h"
#include "proto/eventlog.h"
#include "tests/unit/check.h"
#include "tests/unit/testdata.h"
#include "verifier/decision/boot_check.h"
#include "verifier/policy/boot_policy.h"
#include "verifier/policy/policy.h"

#define OVMF_KERNEL "sha256:834c9fac477eecef074f8d88cd0a659fa58c978e308290c549731d854127d4bd"
#define OTHER "sha256:1111111111111111111111111111111111111111111111111111111111111111"

static struct blob ovmf, seabios;
static char cmdline[512];

/* The quote a TPM that booted as the log says would give: PCR 0-10 of sha1 and sha256. */
static void quote_of(const uint8_t *log, size_t len, struct pcr_set *q)
{
	struct eventlog l;
	struct eventlog_error err;
	struct pcr_set r;

	memset(q, 0, sizeof(*q));
	if (eventlog_parse(log, len, &l, &err) || eventlog_replay(&l, &r))
		abort();
	for (unsigned b = 0; b < r.nbanks; b++) {
		struct pcr_bank *qb = pcr_set_add_bank(q, r.bank[b].alg);

		*qb = r.bank[b];
		qb->mask = 0x7ff;
		memset(qb->value[10], 0xaa, sizeof(qb->value[10])); /* IMA's: not the log's */
	}
	eventlog_release(&l);
}

static struct boot_policy *bp_of(const char *json)
{
	char err[256] = "";
	json_t *v = json_loads(json, 0, NULL);
	struct boot_policy *bp = v ? boot_policy_parse(v, err, sizeof(err)) : NULL;

	if (!bp)
		fprintf(stderr, "policy %s: %s\n", json, err);
	json_decref(v);
	return bp;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * Appends a crypto-agile event to buf (len bytes so far; the caller made room) with a sha1 and
 * a sha256 digest: d1/d256, or H(data) where NULL. What root can do after boot: extend a PCR
 * with any digest and append the matching event, with any type and data, to the log it sends.
 */
static size_t append(uint8_t *buf, size_t len, uint32_t pcr, uint32_t type, const uint8_t *d1,
		     const uint8_t *d256, const void *data, uint32_t dlen)
{
	uint8_t h1[20], h256[32];

	if (!d1) {
		EVP_Digest(data, dlen, h1, NULL, EVP_sha1(), NULL);
		d1 = h1;
	}
	if (!d256) {
		EVP_Digest(data, dlen, h256, NULL, EVP_sha256(), NULL);
		d256 = h256;
	}
	put32(buf + len, pcr);
	put32(buf + len + 4, type);
	put32(buf + len + 8, 2);
	buf[len + 12] = (uint8_t)TPM2_ALG_SHA1;
	buf[len + 13] = (uint8_t)(TPM2_ALG_SHA1 >> 8);
	memcpy(buf + len + 14, d1, 20);
	buf[len + 34] = (uint8_t)TPM2_ALG_SHA256;
	buf[len + 35] = (uint8_t)(TPM2_ALG_SHA256 >> 8);
	memcpy(buf + len + 36, d256, 32);
	put32(buf + len + 68, dlen);
	memcpy(buf + len + 72, data, dlen);
	return len + 72 + dlen;
}

/* A copy of the OVMF log with room for `extra` more bytes. */
static uint8_t *ovmf_copy(size_t extra)
{
	uint8_t *copy = malloc(ovmf.n + extra);

	if (!copy)
		abort();
	memcpy(copy, ovmf.p, ovmf.n);
	return copy;
}

/* Runs the check; returns the number of findings with that reason (all if r < 0). */
static size_t run(const struct boot_policy *bp, const uint8_t *log, size_t len, const char *cmd,
		  const struct pcr_set *q, struct boot_result *res)
{
	struct boot_input in = {.log = log, .log_len = len, .cmdline = cmd};

	if (boot_check(bp, NULL, &in, q, 1, res) != 0)
		abort();
	return res->nfindings;
}

/*
 * The quote of a server that started its TPM at a higher locality, from NAME.pcrs, which
 * tests/data/eventlog/locality/build.py computed with hashlib (not with this project's replay);
 * PCR 10 is IMA's, not the log's.
 */
static void quote_from_pcrs(const char *name, struct pcr_set *q)
{
	struct blob b = load(name);
	char *line, *next;

	memset(q, 0, sizeof(*q));
	b.p[b.n] = 0;
	for (line = (char *)b.p; *line; line = next) {
		char bank[16], hex[2 * LIMIT_DIGEST + 1];
		unsigned pcr;
		TPM2_ALG_ID alg;
		struct pcr_bank *qb;
		char *sp1, *sp2;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		else
			next = line + strlen(line);
		sp1 = strchr(line, ' ');
		sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;

		if (!sp1 || !sp2 || (size_t)(sp2 - sp1 - 1) >= sizeof(bank) || strlen(sp2 + 1) >= sizeof(hex))
			abort();
		pcr = (unsigned)strtoul(line + 3, NULL, 10);
		snprintf(bank, sizeof(bank), "%.*s", (int)(sp2 - sp1 - 1), sp1 + 1);
		snprintf(hex, sizeof(hex), "%s", sp2 + 1);
		alg = strcmp(bank, "sha1") == 0 ? TPM2_ALG_SHA1 : TPM2_ALG_SHA256;
		qb = pcr_set_bank(q, alg) ? pcr_set_bank(q, alg) : pcr_set_add_bank(q, alg);
		if (!qb || pcr > 9 || hex_decode(hex, strlen(hex), qb->value[pcr], sizeof(qb->value[pcr])) < 0)
			abort();
		qb->mask |= 1u << pcr | 1u << 10;
		memset(qb->value[10], 0xaa, sizeof(qb->value[10]));
	}
	free(b.p);
}

static void test_startup_locality(void)
{
	struct blob l3 = load("locality/ovmf-locality3.bin"), l4 = load("locality/ovmf-hcrtm4.bin");
	struct pcr_set q3, q4, zero_start;
	struct boot_result r;
	json_t *s;

	quote_from_pcrs("locality/ovmf-locality3.pcrs", &q3);
	quote_from_pcrs("locality/ovmf-hcrtm4.pcrs", &q4);
	CHECK(run(NULL, l3.p, l3.n, cmdline, &q3, &r) == 0, "locality 3: the log replays to the quote");
	s = json_loads(r.summary ? r.summary : "", 0, NULL);
	CHECK(s && json_integer_value(json_object_get(s, "startup_locality")) == 3 &&
		      strstr(json_string_value(json_object_get(s, "firmware")), "TPM started at locality 3"),
	      "summary: startup locality 3 (%s)", r.summary ? r.summary : "");
	json_decref(s);
	boot_result_release(&r);
	CHECK(run(NULL, l4.p, l4.n, cmdline, &q4, &r) == 0, "H-CRTM, locality 4: replays");
	CHECK(r.summary && strstr(r.summary, "locality 4 (H-CRTM)"), "summary names the H-CRTM");
	boot_result_release(&r);
	CHECK(run(NULL, l4.p, l4.n, cmdline, &q3, &r) == 1 &&
		      r.findings[0].reason == REASON_BOOT_LOG_MISMATCH && strstr(r.findings[0].detail, "PCR 0"),
	      "a log that says 4 against a TPM that started at 3: PCR 0 mismatch");
	boot_result_release(&r);
	quote_of(ovmf.p, ovmf.n, &zero_start);
	CHECK(run(NULL, l3.p, l3.n, cmdline, &zero_start, &r) == 1 &&
		      r.findings[0].reason == REASON_BOOT_LOG_MISMATCH,
	      "PCR 0 started at zeros: the locality log does not replay to it");
	boot_result_release(&r);
	free(l3.p);
	free(l4.p);
}

static const struct boot_finding *find(const struct boot_result *r, enum reason reason)
{
	for (size_t i = 0; i < r->nfindings; i++)
		if (r->findings[i].reason == reason)
			return &r->findings[i];
	return NULL;
}

static void test_no_log(void)
{
	struct boot_policy *bp = bp_of("{}");
	struct boot_input in = {0};
	struct boot_result r;
	struct pcr_set q = {0};

	CHECK(boot_check(NULL, NULL, &in, &q, 1, &r) == 0 && r.nfindings == 0 && !r.summary,
	      "no log, no boot policy: nothing to say");
	boot_result_release(&r);
	CHECK(boot_check(bp, NULL, &in, &q, 1, &r) == 0 && r.nfindings == 1 &&
	      r.findings[0].reason == REASON_BOOT_LOG_MISSING, "no log under a boot policy: boot_log_missing");
	boot_result_release(&r);
	in.log = ovmf.p;
	in.log_len = 1000;
	CHECK(boot_check(NULL, NULL, &in, &q, 1, &r) == 0 && r.nfindings == 1 &&
	      r.findings[0].reason == REASON_BOOT_LOG_CORRUPT && strstr(r.findings[0].detail, "at byte"),
	      "a cut log: boot_log_corrupt with where (%s)", r.nfindings ? r.findings[0].detail : "");
	CHECK(r.summary && strstr(r.summary, "\"status\":\"corrupt\""), "summary says corrupt");
	boot_result_release(&r);
	boot_policy_free(bp);
}

static void test_replay_against_quote(void)
{
	struct pcr_set q, bad;
	struct boot_result r;
	json_t *s;

	quote_of(ovmf.p, ovmf.n, &q);
	CHECK(run(NULL, ovmf.p, ovmf.n, cmdline, &q, &r) == 0 && !r.judged, "the log replays to its quote");
	s = json_loads(r.summary ? r.summary : "", 0, NULL);
	CHECK(s && !strcmp(json_string_value(json_object_get(s, "status")), "replays"), "summary: replays");
	CHECK(s && !strcmp(json_string_value(json_object_get(json_object_get(s, "kernel"), "digest")), OVMF_KERNEL),
	      "summary: the kernel's digest");
	CHECK(s && !strcmp(json_string_value(json_object_get(json_object_get(s, "kernel"), "file")), "kernel"),
	      "summary: the file the firmware named");
	CHECK(s && !strcmp(json_string_value(json_object_get(s, "secure_boot")), "off"), "summary: Secure Boot off");
	CHECK(s && json_is_true(json_object_get(s, "cmdline_verified")), "summary: the command line is the measured one");
	CHECK(s && !strncmp(json_string_value(json_object_get(s, "firmware")), "UEFI, 2 firmware volumes", 24),
	      "summary: firmware %s", s ? json_string_value(json_object_get(s, "firmware")) : "");
	json_decref(s);
	boot_result_release(&r);

	bad = q;
	pcr_set_bank(&bad, TPM2_ALG_SHA256)->value[9][0] ^= 1;
	CHECK(run(NULL, ovmf.p, ovmf.n, cmdline, &bad, &r) == 1 && r.findings[0].reason == REASON_BOOT_LOG_MISMATCH &&
	      !strncmp(r.findings[0].detail, "PCR 9 sha256: the log replays to", 32),
	      "PCR 9 moved after boot: boot_log_mismatch naming it (%s)", r.nfindings ? r.findings[0].detail : "");
	CHECK(r.summary && strstr(r.summary, "\"status\":\"mismatch\""), "summary says mismatch");
	boot_result_release(&r);

	bad = q;
	pcr_set_bank(&bad, TPM2_ALG_SHA1)->value[8][3] ^= 1; /* untouched by the log: must stay zero */
	CHECK(run(NULL, ovmf.p, ovmf.n, cmdline, &bad, &r) == 1 && strstr(r.findings[0].detail, "PCR 8 sha1"),
	      "PCR 8, which the log never extends, must still be zero");
	boot_result_release(&r);

	bad = q;
	pcr_set_bank(&bad, TPM2_ALG_SHA1)->mask |= 1u << 16;
	pcr_set_bank(&bad, TPM2_ALG_SHA1)->value[16][0] = 7;
	CHECK(run(NULL, ovmf.p, ovmf.n, cmdline, &bad, &r) == 0,
	      "PCR 10 (IMA's) and a PCR past 9 the log does not touch are not the log's");
	boot_result_release(&r);

	bad = q;
	{
		struct pcr_bank *b = pcr_set_add_bank(&bad, TPM2_ALG_SHA384);

		b->mask = 1;
	}
	CHECK(run(NULL, ovmf.p, ovmf.n, cmdline, &bad, &r) == 1 && strstr(r.findings[0].detail, "no sha384 bank"),
	      "a quoted bank the log lacks: mismatch (%s)", r.nfindings ? r.findings[0].detail : "");
	boot_result_release(&r);
}

static void test_learned_policy_passes_once(void)
{
	struct boot_policy *bp = bp_of("{\"kernels\": [{\"digest\": \"" OVMF_KERNEL "\", \"name\": \"bz\"}],"
				       " \"secure_boot\": \"off\", \"cmdline\": {\"required\": [\"ima_policy=tcb\"]},"
				       " \"firmware\": [\"sha256:96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7\","
				       " \"sha256:6fbd222db6f4e09fd082a99185e71dbf35204f63fcf17aab5345b15fbadcd639\","
				       " \"sha256:82a0445201cb49945461acc6ed78426700fb7e92819862edc55ba3ad4559b135\"],"
				       " \"db\": [\"sha256:baf89a3ccace52750c5f0128351e0422a41597a1adfd50822aa363b9d124ea7c\"]}");
	struct boot_input in = {.log = ovmf.p, .log_len = ovmf.n, .cmdline = cmdline};
	struct pcr_set q;
	struct boot_result r;
	uint8_t key[32];

	CHECK(bp != NULL, "policy parses");
	if (!bp)
		return;
	quote_of(ovmf.p, ovmf.n, &q);
	CHECK(boot_check(bp, NULL, &in, &q, 4, &r) == 0 && r.nfindings == 0 && r.judged,
	      "the guest's own boot passes its policy (%zu findings: %s)", r.nfindings,
	      r.nfindings ? r.findings[0].detail : "");
	CHECK(r.summary && strstr(r.summary, "\"name\":\"bz\"") && strstr(r.summary, "\"allowed\":true"),
	      "summary names the allowed kernel");
	memcpy(key, r.key, 32);
	boot_result_release(&r);
	in.judged = true;
	in.judged_boot = 4;
	memcpy(in.judged_key, key, 32);
	CHECK(boot_check(bp, NULL, &in, &q, 4, &r) == 0 && !r.judged, "the same boot, log and policy: not judged again");
	boot_result_release(&r);
	CHECK(boot_check(bp, NULL, &in, &q, 5, &r) == 0 && r.judged, "a new boot session: judged again");
	boot_result_release(&r);
	in.cmdline = "console=ttyS0";
	CHECK(boot_check(bp, NULL, &in, &q, 4, &r) == 0 && r.judged, "another command line reported: judged again");
	boot_result_release(&r);
	boot_policy_free(bp);
}

static void test_findings(void)
{
	struct pcr_set q;
	struct boot_result r;
	struct boot_policy *bp;
	const struct boot_finding *f;

	quote_of(ovmf.p, ovmf.n, &q);
	bp = bp_of("{\"kernels\": [\"" OTHER "\"]}");
	CHECK(run(bp, ovmf.p, ovmf.n, cmdline, &q, &r) == 1, "another kernel allowed: one finding");
	f = find(&r, REASON_BOOT_NOT_IN_POLICY);
	CHECK(f && !strcmp(f->detail, "PCR 4: EFI application \"kernel\" (1954816 bytes) " OVMF_KERNEL
			   " is not an allowed kernel"), "detail in words: %s", f ? f->detail : "");
	CHECK(f && !strcmp(f->subject, "PCR 4: EFI application \"kernel\" (1954816 bytes)") &&
	      !strcmp(f->digest, OVMF_KERNEL) && !strcmp(f->category, BOOT_CAT_KERNEL) && f->event == 10,
	      "stored as: subject, digest, category, event index");
	boot_result_release(&r);
	boot_policy_free(bp);

	bp = bp_of("{\"firmware\": [\"sha256:6fbd222db6f4e09fd082a99185e71dbf35204f63fcf17aab5345b15fbadcd639\"]}");
	CHECK(run(bp, ovmf.p, ovmf.n, cmdline, &q, &r) == 2, "two PCR 0 events not listed: two findings");
	CHECK(r.nfindings == 2 && strstr(r.findings[1].detail, "PCR 0: firmware volume at 0x900000 (12582912 bytes)") &&
	      strstr(r.findings[1].detail, "is not allowed firmware") && !strcmp(r.findings[1].category, BOOT_CAT_FIRMWARE),
	      "firmware finding: %s", r.nfindings > 1 ? r.findings[1].detail : "");
	boot_result_release(&r);
	boot_policy_free(bp);

	bp = bp_of("{\"secure_boot\": \"on\", \"db\": [\"" OTHER "\"]}");
	CHECK(run(bp, ovmf.p, ovmf.n, cmdline, &q, &r) == 2, "Secure Boot required on, another db");
	f = find(&r, REASON_SECURE_BOOT_MISMATCH);
	CHECK(f && !strcmp(f->detail, "PCR 7: Secure Boot is off (variable SecureBoot, event 4); the policy requires it on"),
	      "secure boot finding: %s", f ? f->detail : "");
	f = find(&r, REASON_BOOT_NOT_IN_POLICY);
	CHECK(f && !strcmp(f->category, BOOT_CAT_DB) && strstr(f->detail, "PCR 7: variable db (0 bytes) sha256:baf89a3c") &&
	      strstr(f->detail, "is not an allowed db"), "db finding: %s", f ? f->detail : "");
	boot_result_release(&r);
	boot_policy_free(bp);
}

static void test_cmdline_rules(void)
{
	struct pcr_set q;
	struct boot_result r;
	struct boot_policy *bp;
	const struct boot_finding *f;

	quote_of(ovmf.p, ovmf.n, &q);
	bp = bp_of("{\"cmdline\": {\"required\": [\"ima_policy=appraise_tcb\"]}}");
	CHECK(run(bp, ovmf.p, ovmf.n, cmdline, &q, &r) == 1, "a required word missing");
	f = find(&r, REASON_BOOT_NOT_IN_POLICY);
	CHECK(f && strstr(f->detail, "PCR 9: the kernel command line \"console=ttyS0 ") &&
	      strstr(f->detail, "\" lacks the required \"ima_policy=appraise_tcb\"") && !strcmp(f->subject, cmdline) &&
	      !strcmp(f->category, BOOT_CAT_CMDLINE), "%s", f ? f->detail : "");
	boot_result_release(&r);
	boot_policy_free(bp);

	bp = bp_of("{\"cmdline\": {\"forbidden\": [\"panic\"]}}");
	CHECK(run(bp, ovmf.p, ovmf.n, cmdline, &q, &r) == 1 && strstr(r.findings[0].detail, "has the forbidden \"panic\""),
	      "a forbidden name matches panic=-1");
	boot_result_release(&r);
	boot_policy_free(bp);

	bp = bp_of("{\"cmdline\": {\"exact\": [\"console=ttyS0\"]}}");
	CHECK(run(bp, ovmf.p, ovmf.n, cmdline, &q, &r) == 1 &&
	      strstr(r.findings[0].detail, "is none of the 1 command lines the policy allows"), "exact only: another line fails");
	boot_result_release(&r);
	boot_policy_free(bp);

	{
		char json[700];

		snprintf(json, sizeof(json), "{\"cmdline\": {\"exact\": [\"%s\"], \"required\": [\"nosuch\"]}}", cmdline);
		bp = bp_of(json);
	}
	CHECK(run(bp, ovmf.p, ovmf.n, NULL, &q, &r) == 0, "a listed command line passes by digest, even unreported");
	boot_result_release(&r);
	boot_policy_free(bp);

	bp = bp_of("{\"cmdline\": {\"required\": [\"ima_policy=tcb\"]}}");
	CHECK(run(bp, ovmf.p, ovmf.n, NULL, &q, &r) == 1 && r.findings[0].reason == REASON_BOOT_UNVERIFIABLE &&
	      strstr(r.findings[0].detail, "the agent reported no command line"), "rules without the text: unverifiable");
	boot_result_release(&r);
	CHECK(run(bp, ovmf.p, ovmf.n, "console=ttyS0 ima_policy=tcb", &q, &r) == 1 &&
	      r.findings[0].reason == REASON_BOOT_UNVERIFIABLE &&
	      strstr(r.findings[0].detail, "does not match the command line the agent reported"),
	      "a reported line that is not the measured one: unverifiable");
	boot_result_release(&r);
	quote_of(seabios.p, seabios.n, &q);
	CHECK(run(bp, seabios.p, seabios.n, cmdline, &q, &r) == 1 && r.findings[0].reason == REASON_BOOT_UNVERIFIABLE &&
	      strstr(r.findings[0].detail, "the log has no kernel command line event"), "SeaBIOS measures no command line");
	CHECK(r.summary && strstr(r.summary, "\"firmware\":\"BIOS") && strstr(r.summary, "\"cmdline_verified\":false"),
	      "SeaBIOS summary: BIOS, command line as reported");
	boot_result_release(&r);
	boot_policy_free(bp);
	bp = bp_of("{\"kernels\": [\"" OVMF_KERNEL "\"]}");
	CHECK(run(bp, seabios.p, seabios.n, cmdline, &q, &r) == 1 && strstr(r.findings[0].detail, "loaded no allowed kernel"),
	      "SeaBIOS measures no kernel: %s", r.nfindings ? r.findings[0].detail : "");
	boot_result_release(&r);
	boot_policy_free(bp);
}

/* Offset of event idx's data in the OVMF log (parsed). */
static size_t data_offset(const uint8_t *log, size_t len, unsigned idx, uint32_t *type_off)
{
	struct eventlog l;
	struct eventlog_error err;
	size_t off;

	if (eventlog_parse(log, len, &l, &err))
		abort();
	off = (size_t)(l.events[idx].data - log);
	*type_off = (uint32_t)l.events[idx].offset + 4;
	eventlog_release(&l);
	return off;
}

/* Sets the type of event idx of a log (its records are not moved). */
static void retype(uint8_t *log, size_t len, unsigned idx, uint32_t type)
{
	uint32_t type_off;

	data_offset(log, len, idx, &type_off);
	put32(log + type_off, type);
}

/*
 * An event's data edited: it no longer hashes to the digests the quote covers, so nothing is
 * believed from it. Edits that keep the digests (a type, a tag id relabelled, data replaced by
 * what was hashed): test_relabelled_markers, test_secure_boot_forged, test_cmdline_laundering.
 */
static void test_edited_events(void)
{
	uint8_t *copy = malloc(ovmf.n);
	struct pcr_set q;
	struct boot_result r;
	struct boot_policy *bp;
	uint32_t type_off;
	size_t off;

	quote_of(ovmf.p, ovmf.n, &q);
	/* SecureBoot's data byte (event 4) from 0 to 1: the digest no longer matches it */
	memcpy(copy, ovmf.p, ovmf.n);
	off = data_offset(copy, ovmf.n, 4, &type_off);
	copy[off + 52] = 1;
	bp = bp_of("{\"secure_boot\": \"on\"}");
	CHECK(run(bp, copy, ovmf.n, cmdline, &q, &r) >= 1 && r.findings[0].reason == REASON_BOOT_UNVERIFIABLE &&
	      strstr(r.findings[0].detail, "does not match its digest"), "an edited SecureBoot value cannot fool the policy (%s)",
	      r.nfindings ? r.findings[0].detail : "");
	CHECK(!find(&r, REASON_SECURE_BOOT_MISMATCH), "and no Secure Boot state is believed from it");
	CHECK(r.summary && strstr(r.summary, "\"secure_boot\":\"unknown\""), "summary: Secure Boot unknown");
	boot_result_release(&r);
	boot_policy_free(bp);
	free(copy);
}

/*
 * A marker (a separator, an action string) is passed over, so it must be one in its spec form:
 * an image's Authenticode digest or a firmware volume's digest is a plain hash of bytes root
 * has, and an event relabelled as an action with those bytes as its data hashes to its digest.
 */
static void test_relabelled_markers(void)
{
	static const char calling[] = "Calling EFI Application from Boot Option";
	struct boot_policy *bp = bp_of("{\"kernels\": [\"" OVMF_KERNEL "\"]}");
	struct boot_policy *fw = bp_of("{\"firmware\": [\"sha256:96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7\","
				       " \"sha256:6fbd222db6f4e09fd082a99185e71dbf35204f63fcf17aab5345b15fbadcd639\","
				       " \"sha256:82a0445201cb49945461acc6ed78426700fb7e92819862edc55ba3ad4559b135\"]}");
	static uint8_t image[65536];
	static const uint8_t load[32] = {0}; /* location, length, link address, device path length */
	uint8_t *copy = ovmf_copy(sizeof(image) + 4096), d1[20], d256[32];
	char text[80];
	struct pcr_set q;
	struct boot_result r;
	size_t len;

	CHECK(bp && fw, "policies");
	if (!bp || !fw)
		goto out;
	for (size_t i = 0; i < sizeof(image); i++)
		image[i] = (uint8_t)(i * 7 + 3);
	quote_of(ovmf.p, ovmf.n, &q);
	CHECK(run(bp, ovmf.p, ovmf.n, cmdline, &q, &r) == 0 && run(fw, ovmf.p, ovmf.n, cmdline, &q, &r) == 0,
	      "the guest's own boot passes both");
	boot_result_release(&r);

	/* the guest's kernel retyped as a driver: PCR 4 is judged by digest whatever the type */
	retype(copy, ovmf.n, 10, EV_EFI_BOOT_SERVICES_DRIVER);
	quote_of(copy, ovmf.n, &q);
	CHECK(run(bp, copy, ovmf.n, cmdline, &q, &r) == 0,
	      "the allowed kernel retyped as a driver still passes (%s)", r.nfindings ? r.findings[0].detail : "");
	boot_result_release(&r);
	{
		struct boot_policy *other = bp_of("{\"kernels\": [\"" OTHER "\"]}");

		CHECK(other && run(other, copy, ovmf.n, cmdline, &q, &r) == 1 &&
		      !strcmp(r.findings[0].digest, OVMF_KERNEL) && r.findings[0].event == 10,
		      "and where another kernel is listed it is judged by its digest, not allowed");
		boot_result_release(&r);
		boot_policy_free(other);
	}
	memcpy(copy, ovmf.p, ovmf.n);

	/*
	 * An unlisted image (a boot application root chose) measured into PCR 4 as the firmware
	 * logs it: its digests are the image's Authenticode hash, its data the image's load event
	 * (UEFI_IMAGE_LOAD_EVENT, no device path). The guest kernel's hashed bytes are not in
	 * tests/data, so an image of known bytes stands in: its Authenticode hash is H(image).
	 */
	EVP_Digest(image, sizeof(image), d1, NULL, EVP_sha1(), NULL);
	EVP_Digest(image, sizeof(image), d256, NULL, EVP_sha256(), NULL);
	len = append(copy, ovmf.n, 4, EV_EFI_BOOT_SERVICES_APPLICATION, d1, d256, load, sizeof(load));
	quote_of(copy, len, &q);
	CHECK(run(bp, copy, len, cmdline, &q, &r) == 1 && r.findings[0].reason == REASON_BOOT_NOT_IN_POLICY &&
	      r.findings[0].event == 24, "the image as the firmware logs it: not an allowed kernel (%s)",
	      r.nfindings ? r.findings[0].detail : "no finding");
	boot_result_release(&r);
	for (uint32_t t = 0; t < 3; t++) {
		uint32_t type = t == 0 ? EV_EFI_ACTION : t == 1 ? EV_ACTION : EV_SEPARATOR;

		/* relabelled, its data left as it was: the data is not what was hashed */
		len = append(copy, ovmf.n, 4, type, d1, d256, load, sizeof(load));
		quote_of(copy, len, &q);
		CHECK(run(bp, copy, len, cmdline, &q, &r) == 1 && r.findings[0].event == 24,
		      "relabelled 0x%x, its load event left as data: judged by its digest", type);
		boot_result_release(&r);
		/* relabelled and its data replaced by the hashed bytes (probe 3): now the data hashes
		 * to the digests, and only the marker's spec form tells it from an image */
		len = append(copy, ovmf.n, 4, type, NULL, NULL, image, sizeof(image));
		quote_of(copy, len, &q);
		CHECK(run(bp, copy, len, cmdline, &q, &r) == 1 && r.findings[0].reason == REASON_BOOT_NOT_IN_POLICY &&
		      r.findings[0].event == 24 && !strcmp(r.findings[0].category, BOOT_CAT_KERNEL),
		      "relabelled 0x%x with its hashed bytes as data: judged, not allowed (%zu findings)",
		      type, r.nfindings);
		boot_result_release(&r);
	}
	/* a firmware volume's event in PCR 0 typed as a separator */
	len = append(copy, ovmf.n, 0, EV_SEPARATOR, NULL, NULL, image, sizeof(image));
	quote_of(copy, len, &q);
	CHECK(run(fw, copy, len, cmdline, &q, &r) == 1 && strstr(r.findings[0].detail, "is not allowed firmware"),
	      "PCR 0: a volume typed as a separator is judged as firmware (%s)",
	      r.nfindings ? r.findings[0].detail : "no finding");
	boot_result_release(&r);
	/* spec forms still pass: 4-byte separators (0, 1, 0xFFFFFFFF), short action strings */
	{
		static const uint8_t seps[3][4] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {0xff, 0xff, 0xff, 0xff}};

		len = ovmf.n;
		for (int i = 0; i < 3; i++)
			len = append(copy, len, 4, EV_SEPARATOR, NULL, NULL, seps[i], 4);
		len = append(copy, len, 4, EV_EFI_ACTION, NULL, NULL, calling, sizeof(calling) - 1);
		len = append(copy, len, 4, EV_EFI_ACTION, NULL, NULL, calling, sizeof(calling)); /* with its NUL */
		memset(text, 'a', 64);
		len = append(copy, len, 4, EV_ACTION, NULL, NULL, text, 64);
		quote_of(copy, len, &q);
		CHECK(run(bp, copy, len, cmdline, &q, &r) == 0,
		      "separators 0, 1 and 0xFFFFFFFF and action strings of up to 64 bytes are markers (%s)",
		      r.nfindings ? r.findings[0].detail : "");
		boot_result_release(&r);
	}
	/* and nothing else is one */
	{
		static const uint8_t sep2[4] = {2, 0, 0, 0}, sep5[5] = {0};
		static const char bin[] = "Calling\001EFI";

		memset(text, 'a', 65);
		len = append(copy, ovmf.n, 4, EV_SEPARATOR, NULL, NULL, sep2, 4);
		len = append(copy, len, 4, EV_SEPARATOR, NULL, NULL, sep5, 5);
		len = append(copy, len, 4, EV_EFI_ACTION, NULL, NULL, text, 65);
		len = append(copy, len, 4, EV_EFI_ACTION, NULL, NULL, bin, sizeof(bin) - 1);
		len = append(copy, len, 4, EV_EFI_ACTION, NULL, NULL, "", 0);
		quote_of(copy, len, &q);
		CHECK(run(bp, copy, len, cmdline, &q, &r) == 5,
		      "a separator of 2 or of 5 bytes, an action of 65 bytes, one not printable, an empty one:"
		      " judged as images (%zu findings)", r.nfindings);
		boot_result_release(&r);
	}
out:
	free(copy);
	boot_policy_free(bp);
	boot_policy_free(fw);
}

/* UEFI_VARIABLE_DATA of a variable with an ASCII name and a one-byte value, in var. */
static uint32_t variable(uint8_t *var, const uint8_t guid[16], const char *name, uint8_t value)
{
	size_t n = strlen(name);

	memcpy(var, guid, 16);
	memset(var + 16, 0, 16);
	var[16] = (uint8_t)n;
	var[24] = 1;
	for (size_t i = 0; i < n; i++) {
		var[32 + 2 * i] = (uint8_t)name[i];
		var[33 + 2 * i] = 0;
	}
	var[32 + 2 * n] = value;
	return (uint32_t)(32 + 2 * n + 1);
}

/*
 * The Secure Boot state is the SecureBoot variable the firmware measured before PCR 7's
 * separator. Root can extend PCR 7 after boot and append a SecureBoot variable of its choosing
 * to the log (and relabel the firmware's events): before, the last one won.
 */
static void test_secure_boot_forged(void)
{
	struct boot_policy *on = bp_of("{\"secure_boot\": \"on\"}");
	struct boot_policy *db = bp_of("{\"db\": [\"sha256:baf89a3ccace52750c5f0128351e0422a41597a1adfd50822aa363b9d124ea7c\"]}");
	uint8_t *copy = ovmf_copy(4096), var[64];
	static const uint8_t sep[4] = {0};
	uint32_t vlen;
	struct pcr_set q;
	struct boot_result r;
	size_t len;

	CHECK(on && db, "policies");
	if (!on || !db)
		goto out;
	quote_of(ovmf.p, ovmf.n, &q);
	CHECK(run(on, ovmf.p, ovmf.n, cmdline, &q, &r) == 1 && r.findings[0].reason == REASON_SECURE_BOOT_MISMATCH,
	      "the guest's boot: Secure Boot off");
	boot_result_release(&r);

	/* SecureBoot=1 appended after the firmware's SecureBoot=0 (probe 2) */
	vlen = variable(var, eventlog_guid_global, "SecureBoot", 1);
	len = append(copy, ovmf.n, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, NULL, NULL, var, vlen);
	quote_of(copy, len, &q);
	CHECK(run(on, copy, len, cmdline, &q, &r) >= 1 && find(&r, REASON_BOOT_UNVERIFIABLE) &&
	      strstr(find(&r, REASON_BOOT_UNVERIFIABLE)->detail, "a second SecureBoot variable"),
	      "SecureBoot=1 appended: a second SecureBoot variable, unverifiable (%s)",
	      r.nfindings ? r.findings[0].detail : "no finding");
	CHECK(r.summary && strstr(r.summary, "\"secure_boot\":\"unknown\""), "summary: Secure Boot unknown");
	boot_result_release(&r);

	/* ... with the firmware's SecureBoot=0 (event 4) and separator (event 9) relabelled, and a
	 * separator appended after the forged variable */
	memcpy(copy, ovmf.p, ovmf.n);
	retype(copy, ovmf.n, 4, EV_EFI_VARIABLE_AUTHORITY);
	retype(copy, ovmf.n, 9, EV_EFI_VARIABLE_AUTHORITY);
	len = append(copy, ovmf.n, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, NULL, NULL, var, vlen);
	len = append(copy, len, 7, EV_SEPARATOR, NULL, NULL, sep, 4);
	quote_of(copy, len, &q);
	CHECK(run(on, copy, len, cmdline, &q, &r) >= 1 && find(&r, REASON_BOOT_UNVERIFIABLE) &&
	      strstr(find(&r, REASON_BOOT_UNVERIFIABLE)->detail, "a second SecureBoot variable") &&
	      r.summary && strstr(r.summary, "\"secure_boot\":\"unknown\""),
	      "the firmware's variable and separator relabelled: still two SecureBoot variables (%s)",
	      r.nfindings ? r.findings[0].detail : "no finding");
	boot_result_release(&r);

	/* the only SecureBoot variable, measured after the separator */
	memcpy(copy, ovmf.p, ovmf.n);
	retype(copy, ovmf.n, 4, EV_EFI_ACTION); /* hide the firmware's: its data is no action string */
	len = append(copy, ovmf.n, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, NULL, NULL, var, vlen);
	quote_of(copy, len, &q);
	CHECK(run(on, copy, len, cmdline, &q, &r) >= 1 && !find(&r, REASON_SECURE_BOOT_MISMATCH) &&
	      find(&r, REASON_BOOT_UNVERIFIABLE) && r.summary && strstr(r.summary, "\"secure_boot\":\"unknown\""),
	      "the firmware's hidden and SecureBoot=1 measured after PCR 7's separator: not believed (%s)",
	      r.nfindings ? r.findings[0].detail : "no finding");
	boot_result_release(&r);

	/* a db variable measured after the separator, the firmware's relabelled as an authority */
	memcpy(copy, ovmf.p, ovmf.n);
	{
		struct eventlog l;
		struct eventlog_error err;
		const struct eventlog_event *e7;

		if (eventlog_parse(ovmf.p, ovmf.n, &l, &err))
			abort();
		e7 = &l.events[7]; /* the firmware's db */
		len = append(copy, ovmf.n, 7, EV_EFI_VARIABLE_DRIVER_CONFIG, NULL, NULL, e7->data, e7->data_len);
		eventlog_release(&l);
	}
	retype(copy, ovmf.n, 7, EV_EFI_VARIABLE_AUTHORITY);
	quote_of(copy, len, &q);
	CHECK(run(db, copy, len, cmdline, &q, &r) >= 1 && find(&r, REASON_BOOT_UNVERIFIABLE),
	      "db only after the separator: unverifiable (%s)", r.nfindings ? r.findings[0].detail : "no finding");
	boot_result_release(&r);

	/* no separator in PCR 7 at all: nothing tells the firmware's variables from later ones */
	memcpy(copy, ovmf.p, ovmf.n);
	{
		uint32_t type_off;

		data_offset(copy, ovmf.n, 9, &type_off);
		copy[type_off - 4] = 6; /* PCR 7's separator recorded as PCR 6's: the quote follows */
	}
	quote_of(copy, ovmf.n, &q);
	CHECK(run(on, copy, ovmf.n, cmdline, &q, &r) == 1 && r.findings[0].reason == REASON_BOOT_UNVERIFIABLE &&
	      strstr(r.findings[0].detail, "no separator"),
	      "PCR 7 without a separator: unverifiable (%s)", r.nfindings ? r.findings[0].detail : "no finding");
	boot_result_release(&r);
out:
	free(copy);
	boot_policy_free(on);
	boot_policy_free(db);
}

/* Appends PCR 9's tagged event `id` with the LoadOptions digest of text (or, text NULL, H(data)). */
static size_t append_tagged(uint8_t *buf, size_t len, uint32_t id, const char *text)
{
	uint8_t tag[8 + 13], d1[20], d256[32];
	static const char initrd[] = "Linux initrd";

	put32(tag, id);
	put32(tag + 4, sizeof(initrd));
	memcpy(tag + 8, initrd, sizeof(initrd));
	if (!text)
		return append(buf, len, 9, EV_EVENT_TAG, NULL, NULL, tag, sizeof(tag));
	eventlog_load_options_digest(alg_by_id(TPM2_ALG_SHA1), text, strlen(text), d1);
	eventlog_load_options_digest(alg_by_id(TPM2_ALG_SHA256), text, strlen(text), d256);
	put32(tag + 4, 0);
	return append(buf, len, 9, EV_EVENT_TAG, d1, d256, tag, 8);
}

/*
 * Nothing binds a tag id to the quote: root can relabel the command line the EFI stub measured
 * (flip its tag id) and, after boot, extend PCR 9 with a benign command line's LoadOptions
 * digest and append that event. The EFI stub measures one command line, then at most one
 * initrd; anything else in PCR 9 under a command-line rule cannot be told from an extend after
 * boot.
 */
static void test_cmdline_laundering(void)
{
	static const char benign[] = "root=/dev/vda rw rootfstype=ext4 panic=-1 ima_policy=tcb";
	struct boot_policy *bp = bp_of("{\"cmdline\": {\"forbidden\": [\"console\"]}}");
	uint8_t *copy = ovmf_copy(4096);
	struct pcr_set q;
	struct boot_result r;
	size_t len, off;
	uint32_t type_off;

	CHECK(bp != NULL, "a policy forbidding console=");
	if (!bp)
		goto out;
	quote_of(ovmf.p, ovmf.n, &q);
	CHECK(run(bp, ovmf.p, ovmf.n, cmdline, &q, &r) == 1 && strstr(r.findings[0].detail, "has the forbidden \"console\""),
	      "the guest's command line has console=");
	boot_result_release(&r);

	/* the real one's tag id flipped, nothing in its place: no command line to judge */
	off = data_offset(copy, ovmf.n, 21, &type_off);
	copy[off] ^= 1;
	quote_of(copy, ovmf.n, &q);
	CHECK(run(bp, copy, ovmf.n, cmdline, &q, &r) == 2 && r.findings[0].event == 21 &&
	      r.findings[0].reason == REASON_BOOT_UNVERIFIABLE &&
	      strstr(r.findings[1].detail, "no kernel command line event"),
	      "an edited tag id alone: the edited event cannot be judged, the command line is missing");
	boot_result_release(&r);

	/* probe 1: the same, and a benign command line extended into PCR 9 after boot, its event
	 * appended and reported: before, the only LoadOptions event matched and passed */
	len = append_tagged(copy, ovmf.n, EVENTLOG_TAG_LOAD_OPTIONS, benign);
	quote_of(copy, len, &q);
	CHECK(run(bp, copy, len, benign, &q, &r) == 1 && r.findings[0].reason == REASON_BOOT_UNVERIFIABLE &&
	      r.findings[0].event == 21 && strstr(r.findings[0].detail, "it cannot be told from a relabelled command line"),
	      "the relabelled command line is unverifiable (%s)", r.nfindings ? r.findings[0].detail : "no finding");
	CHECK(r.summary && strstr(r.summary, "\"cmdline_verified\":false"),
	      "and the summary does not call the benign one verified");
	boot_result_release(&r);

	/* relabelled as the initrd: it comes before the command line, where no initrd is measured */
	memcpy(copy, ovmf.p, ovmf.n);
	put32(copy + off, EVENTLOG_TAG_LINUX_INITRD);
	len = append_tagged(copy, ovmf.n, EVENTLOG_TAG_LOAD_OPTIONS, benign);
	quote_of(copy, len, &q);
	CHECK(run(bp, copy, len, benign, &q, &r) >= 1 && find(&r, REASON_BOOT_UNVERIFIABLE) &&
	      strstr(find(&r, REASON_BOOT_UNVERIFIABLE)->detail, "initrd"),
	      "relabelled as an initrd before the command line: unverifiable (%s)",
	      r.nfindings ? r.findings[0].detail : "no finding");
	boot_result_release(&r);

	/* relabelled as another type */
	memcpy(copy, ovmf.p, ovmf.n);
	retype(copy, ovmf.n, 21, EV_IPL);
	len = append_tagged(copy, ovmf.n, EVENTLOG_TAG_LOAD_OPTIONS, benign);
	quote_of(copy, len, &q);
	CHECK(run(bp, copy, len, benign, &q, &r) >= 1 && find(&r, REASON_BOOT_UNVERIFIABLE),
	      "relabelled EV_IPL: unverifiable (%s)", r.nfindings ? r.findings[0].detail : "no finding");
	boot_result_release(&r);

	/* not relabelled: two command lines */
	memcpy(copy, ovmf.p, ovmf.n);
	len = append_tagged(copy, ovmf.n, EVENTLOG_TAG_LOAD_OPTIONS, benign);
	quote_of(copy, len, &q);
	CHECK(run(bp, copy, len, benign, &q, &r) >= 1 && find(&r, REASON_BOOT_UNVERIFIABLE) &&
	      strstr(find(&r, REASON_BOOT_UNVERIFIABLE)->detail, "a second command line"),
	      "a second command line: unverifiable (%s)", r.nfindings ? r.findings[0].detail : "no finding");
	boot_result_release(&r);

	/* the initrd the EFI stub measures after the command line is not judged; a second one is */
	len = append_tagged(copy, ovmf.n, EVENTLOG_TAG_LINUX_INITRD, NULL);
	quote_of(copy, len, &q);
	CHECK(run(bp, copy, len, cmdline, &q, &r) == 1 && r.findings[0].reason == REASON_BOOT_NOT_IN_POLICY,
	      "an initrd after the command line: only the command line is judged (%s)",
	      r.nfindings ? r.findings[0].detail : "no finding");
	boot_result_release(&r);
	len = append_tagged(copy, len, EVENTLOG_TAG_LINUX_INITRD, NULL);
	quote_of(copy, len, &q);
	CHECK(run(bp, copy, len, cmdline, &q, &r) == 2 && find(&r, REASON_BOOT_UNVERIFIABLE),
	      "a second initrd: unverifiable (%zu findings)", r.nfindings);
	boot_result_release(&r);
out:
	free(copy);
	boot_policy_free(bp);
}

/* Drops bank alg from a quote: the challenge asked for the others only. */
static void unquote(struct pcr_set *q, uint16_t alg)
{
	struct pcr_set keep = *q;

	memset(q, 0, sizeof(*q));
	for (unsigned b = 0; b < keep.nbanks; b++)
		if (keep.bank[b].alg != alg)
			*pcr_set_add_bank(q, keep.bank[b].alg) = keep.bank[b];
}

/*
 * Only digests of banks the quote covers are compared with it (check_replay); a digest in any
 * other bank of the log is the agent's word, so no list may match it and no content is believed
 * on it alone.
 */
static void test_unquoted_banks(void)
{
	static const char other_sha1[] = "sha1:2222222222222222222222222222222222222222";
	struct boot_policy *bp = bp_of("{\"kernels\": [\"sha1:2222222222222222222222222222222222222222\"]}");
	uint8_t *copy = ovmf_copy(0), want[20];
	struct eventlog l;
	struct eventlog_error err;
	struct pcr_set q;
	struct boot_result r;
	size_t off;

	CHECK(bp != NULL, "a policy allowing a kernel by its sha1 digest");
	if (!bp)
		goto out;
	/* another kernel booted; the log's sha1 digest of it edited to the allowed one */
	if (eventlog_parse(copy, ovmf.n, &l, &err))
		abort();
	off = (size_t)(eventlog_event_digest(&l.events[10], TPM2_ALG_SHA1) - copy);
	eventlog_release(&l);
	hex_decode(other_sha1 + 5, 40, want, sizeof(want));
	memcpy(copy + off, want, 20);
	quote_of(ovmf.p, ovmf.n, &q);
	unquote(&q, TPM2_ALG_SHA1);
	CHECK(run(bp, copy, ovmf.n, cmdline, &q, &r) == 1 && r.findings[0].reason == REASON_BOOT_NOT_IN_POLICY &&
	      r.findings[0].event == 10,
	      "the quote covers sha256 only: a sha1 digest it never compared allows nothing (%s)",
	      r.nfindings ? r.findings[0].detail : "no finding");
	boot_result_release(&r);
	quote_of(copy, ovmf.n, &q);
	CHECK(run(bp, copy, ovmf.n, cmdline, &q, &r) == 0,
	      "quoted in sha1 too, the same digest is the measured one and is allowed");
	boot_result_release(&r);
out:
	free(copy);
	boot_policy_free(bp);
}

/* Runs the check with the agent's amendment's boot section too. */
static size_t run_amended(const struct boot_policy *bp, const struct boot_policy *am,
			  const struct pcr_set *q, struct boot_result *res)
{
	struct boot_input in = {.log = ovmf.p, .log_len = ovmf.n, .cmdline = cmdline};

	if (boot_check(bp, am, &in, q, 1, res) != 0)
		abort();
	return res->nfindings;
}

/*
 * What an operator approved for one agent (review.c, scope agent) lives in its amendment's boot
 * section: it allows more (a kernel, an exact command line, a firmware event, a db entry), and
 * never less, nor can it lift the policy's Secure Boot state or required/forbidden words (an
 * exact command line of the amendment passes only if it keeps them).
 */
static void test_amendment_adds_only(void)
{
	struct boot_policy *bp = bp_of("{\"kernels\": [\"" OTHER "\"], \"secure_boot\": \"on\","
				       " \"cmdline\": {\"required\": [\"ima_policy=appraise_tcb\"]}}");
	struct boot_policy *am = boot_policy_new();
	struct boot_result r;
	struct pcr_set q;
	uint8_t key[32];
	char why[256];

	CHECK(bp && am, "policy and an empty amendment");
	if (!bp || !am)
		goto out;
	quote_of(ovmf.p, ovmf.n, &q);
	CHECK(run_amended(bp, NULL, &q, &r) == 3 && find(&r, REASON_SECURE_BOOT_MISMATCH),
	      "without an amendment: kernel, command line, Secure Boot (%zu findings)", r.nfindings);
	boot_result_release(&r);
	CHECK(run_amended(bp, am, &q, &r) == 3, "an empty amendment changes nothing");
	memcpy(key, r.key, sizeof(key));
	boot_result_release(&r);

	/* what approving the kernel finding for this agent writes */
	CHECK(boot_policy_teach(am, BOOT_CAT_KERNEL, "PCR 4: EFI application", OVMF_KERNEL, why,
				sizeof(why)) == 0, "the amendment learns the kernel");
	CHECK(run_amended(bp, am, &q, &r) == 2 && find(&r, REASON_BOOT_NOT_IN_POLICY) &&
	      strstr(find(&r, REASON_BOOT_NOT_IN_POLICY)->detail, "command line"),
	      "the kernel passes through the amendment; the command line still fails");
	CHECK(memcmp(key, r.key, sizeof(key)) != 0,
	      "a changed amendment is another judgement: the boot is judged again");
	CHECK(r.summary && strstr(r.summary, "\"allowed\":true"), "the summary says the kernel is allowed");
	boot_result_release(&r);
	CHECK(run_amended(bp, NULL, &q, &r) == 3, "another agent, without that amendment: still refused");
	boot_result_release(&r);

	/* an exact command line in the amendment that lacks the policy's required word */
	CHECK(boot_policy_teach(am, BOOT_CAT_CMDLINE, cmdline, "", why, sizeof(why)) == 0,
	      "the amendment lists the guest's exact command line");
	CHECK(run_amended(bp, am, &q, &r) == 2 && find(&r, REASON_SECURE_BOOT_MISMATCH) &&
	      find(&r, REASON_BOOT_NOT_IN_POLICY) &&
	      strstr(find(&r, REASON_BOOT_NOT_IN_POLICY)->detail, "lacks the required \"ima_policy=appraise_tcb\""),
	      "it lifts no required word: the command line and the Secure Boot state still fail (%zu findings)",
	      r.nfindings);
	boot_result_release(&r);
	boot_policy_free(bp);

	/* where the policy lists exact command lines alone, the amendment's adds one */
	bp = bp_of("{\"cmdline\": {\"exact\": [\"console=ttyS0\"]}}");
	CHECK(bp && run_amended(bp, NULL, &q, &r) == 1, "a policy of exact command lines refuses the guest's");
	boot_result_release(&r);
	CHECK(bp && run_amended(bp, am, &q, &r) == 0, "the amendment's exact line passes it (%s)",
	      r.nfindings ? r.findings[0].detail : "");
	boot_result_release(&r);
	boot_policy_free(bp);

	/* and where the policy forbids a word the line has, it does not */
	bp = bp_of("{\"cmdline\": {\"exact\": [\"console=ttyS0\"], \"forbidden\": [\"panic\"]}}");
	CHECK(bp && run_amended(bp, am, &q, &r) == 1 && strstr(r.findings[0].detail, "has the forbidden \"panic\""),
	      "a forbidden word is not lifted either (%s)", r.nfindings ? r.findings[0].detail : "");
	boot_result_release(&r);
	boot_policy_free(am);

	/* an amendment that would be stricter, or lift a requirement, counts for nothing of that */
	boot_policy_free(bp);
	bp = bp_of("{\"secure_boot\": \"on\", \"cmdline\": {\"required\": [\"ima_policy=tcb\"]}}");
	am = bp_of("{\"secure_boot\": \"off\", \"cmdline\": {\"forbidden\": [\"console\"]},"
		   " \"firmware\": [\"" OTHER "\"], \"kernels\": [\"" OTHER "\"]}");
	CHECK(bp && am && run_amended(bp, am, &q, &r) == 1 &&
	      r.findings[0].reason == REASON_SECURE_BOOT_MISMATCH,
	      "secure_boot off in an amendment lifts nothing; its forbidden words, firmware and"
	      " kernels lists judge nothing the policy does not (%zu findings)", r.nfindings);
	boot_result_release(&r);
	CHECK(am && run_amended(NULL, am, &q, &r) == 0 && !r.judged,
	      "an amendment without a policy boot section judges nothing");
	boot_result_release(&r);
out:
	boot_policy_free(am);
	boot_policy_free(bp);
}

static bool collect(const char *w, size_t n, void *arg)
{
	char *out = arg;
	size_t len = strlen(out);

	if (len + n + 2 < 256) {
		memcpy(out + len, w, n);
		out[len + n] = '|';
		out[len + n + 1] = '\0';
	}
	return false;
}

static void test_cmdline_words(void)
{
	char out[256] = "", why[128];
	struct boot_cmdline_rules r = {0};
	char *req[] = {"ima_policy=tcb"}, *forb[] = {"ima-appraise"};

	boot_cmdline_words("  a=1 \"b=two words\" c=\"x y\"\td -- ima_policy=tcb e", collect, out);
	CHECK(!strcmp(out, "a=1|b=two words|c=x y|d|"), "words like next_arg(), stop at --: %s", out);
	r.required = req;
	r.nrequired = 1;
	CHECK(boot_cmdline_judge(&r, "x -- ima_policy=tcb", why, sizeof(why)) != NULL,
	      "a parameter after -- goes to init, not to the kernel");
	CHECK(boot_cmdline_judge(&r, "x \"ima_policy=tcb\"", why, sizeof(why)) == NULL, "a quoted parameter counts");
	CHECK(boot_cmdline_judge(&r, "x ima-policy=tcb", why, sizeof(why)) != NULL,
	      "required words are exact (__setup names are)");
	r.forbidden = forb;
	r.nforbidden = 1;
	CHECK(boot_cmdline_judge(&r, "ima_policy=tcb ima_appraise=off", why, sizeof(why)) != NULL &&
	      strstr(why, "forbidden"), "a forbidden name matches with - and _ alike");
	CHECK(boot_cmdline_judge(&r, "ima_policy=tcb ima_appraisex=1", why, sizeof(why)) == NULL,
	      "a longer name is another parameter");
}

static void test_parse_and_teach(void)
{
	static const char *bad[] = {
		"[]", "{\"kernel\": []}", "{\"kernels\": \"x\"}", "{\"kernels\": [\"sha256:00\"]}",
		"{\"kernels\": [\"SHA256:" "834c9fac477eecef074f8d88cd0a659fa58c978e308290c549731d854127d4bd\"]}",
		"{\"kernels\": [{\"digest\": \"" OVMF_KERNEL "\", \"nam\": \"x\"}]}",
		"{\"kernels\": [{\"digest\": \"" OVMF_KERNEL "\", \"name\": \"\"}]}",
		"{\"secure_boot\": true}", "{\"secure_boot\": \"maybe\"}", "{\"cmdline\": []}",
		"{\"cmdline\": {\"required\": [\"a b\"]}}", "{\"cmdline\": {\"forbidden\": [\"\"]}}",
		"{\"cmdline\": {\"requires\": []}}",
	};
	char err[256], why[256];
	struct boot_policy *bp;
	uint8_t before[32];
	struct pcr_set q;
	struct boot_result r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *v = json_loads(bad[i], JSON_DECODE_ANY, NULL);

		err[0] = '\0';
		bp = v ? boot_policy_parse(v, err, sizeof(err)) : NULL;
		CHECK(v && !bp && strstr(err, "boot"), "refused: %s (%s)", bad[i], err);
		boot_policy_free(bp);
		json_decref(v);
	}
	bp = bp_of("{\"kernels\": [\"" OTHER "\"], \"cmdline\": {\"required\": [\"ima_policy=appraise_tcb\"]}}");
	if (!bp)
		return;
	memcpy(before, bp->digest, 32);
	CHECK(boot_policy_teach(bp, BOOT_CAT_KERNEL, "x", OVMF_KERNEL, why, sizeof(why)) == 0 && bp->kernels.n == 2,
	      "teach a kernel");
	CHECK(memcmp(before, bp->digest, 32) != 0, "the policy's digest changes with it");
	CHECK(boot_policy_teach(bp, BOOT_CAT_KERNEL, "x", OVMF_KERNEL, why, sizeof(why)) == 0 && bp->kernels.n == 2,
	      "teaching twice adds nothing");
	CHECK(boot_policy_teach(bp, BOOT_CAT_CMDLINE, cmdline, "sha256:00", why, sizeof(why)) == 0 &&
	      bp->cmdline.nexact == 1, "teach a command line: listed as exact");
	CHECK(boot_policy_teach(bp, BOOT_CAT_SECURE_BOOT, "x", OVMF_KERNEL, why, sizeof(why)) == -EINVAL &&
	      strstr(why, "teaches the policy nothing"), "a Secure Boot finding teaches nothing: %s", why);
	CHECK(boot_policy_teach(bp, BOOT_CAT_DB, "x", "nonsense", why, sizeof(why)) == -EINVAL, "a bad digest refused");
	quote_of(ovmf.p, ovmf.n, &q);
	CHECK(run(bp, ovmf.p, ovmf.n, cmdline, &q, &r) == 0, "the taught policy passes the boot it was taught");
	boot_result_release(&r);

	/* the section inside a policy: loaded, serialised, loaded again to the same digest */
	{
		json_t *o = boot_policy_json(bp);
		char *js = json_dumps(json_pack("{s:i, s:o}", "version", 1, "boot", o), 0);
		struct policy *p = js ? policy_load(js, strlen(js), err, sizeof(err)) : NULL;
		char *out = p ? policy_to_json(p) : NULL;
		struct policy *p2 = out ? policy_load(out, strlen(out), err, sizeof(err)) : NULL;

		CHECK(p && p2 && policy_boot(p2) && !memcmp(policy_boot(p2)->digest, bp->digest, 32),
		      "a policy's boot section round-trips: %s", err);
		CHECK(p && policy_boot_teach(p, BOOT_CAT_FIRMWARE, "x", OTHER, why, sizeof(why)) == 0 &&
		      policy_boot(p)->firmware.n == 1, "policy_boot_teach on a private copy");
		CHECK(p && policy_ref(p) && policy_boot_teach(p, BOOT_CAT_FIRMWARE, "x", OVMF_KERNEL, why, sizeof(why)) == -EBUSY,
		      "and refused on a shared one");
		policy_unref(p);
		policy_free(p);
		policy_free(p2);
		free(out);
		free(js);
	}
	boot_policy_free(bp);
}

int main(void)
{
	struct blob c;

	setenv("TPM_TEST_DATA", "tests/data/eventlog", 0);
	ovmf = load("guest-ovmf.bin");
	seabios = load("guest-seabios.bin");
	c = load("guest-ovmf.cmdline");
	c.p[c.n] = 0;
	snprintf(cmdline, sizeof(cmdline), "%.*s", (int)strcspn((char *)c.p, "\n"), (char *)c.p);
	free(c.p);
	CASE(test_no_log);
	CASE(test_replay_against_quote);
	CASE(test_startup_locality);
	CASE(test_learned_policy_passes_once);
	CASE(test_findings);
	CASE(test_cmdline_rules);
	CASE(test_edited_events);
	CASE(test_relabelled_markers);
	CASE(test_secure_boot_forged);
	CASE(test_cmdline_laundering);
	CASE(test_unquoted_banks);
	CASE(test_amendment_adds_only);
	CASE(test_cmdline_words);
	CASE(test_parse_and_teach);
	free(ovmf.p);
	free(seabios.p);
	return check_finish();
}
