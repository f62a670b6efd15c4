/*
 * libFuzzer target: the whole decision, attest_evaluate() as round.c calls it, linked with the
 * verifier's library. The harness holds a fixed AK and signs a quote over whatever PCR values
 * the input picks, so the fuzzer gets past the signature into the clock, replay, policy and
 * review rules instead of dying at the first check.
 *
 * Input: byte 0 flags, byte 1 log offset, bytes 2..33 a PCR 10 value, the rest an IMA list.
 *   bit 0  the agent has a stored boot state        bit 4  PCR 10 = the list's own replay
 *   bit 1  the quote's resetCount is one higher     bit 5  the boot has unreviewed violations
 *   bits 2-3  policy: none, strict, lenient, strict  bit 6  quote made over another nonce
 *   bit 7  log offset from byte 1 (else the stored next entry)
 *   bits 2-3 both set (strict): the agent also says the entries before its log offset were
 *   deleted from kernel memory (log_deleted = the log offset) and that more entries follow
 *   those it sends (log_more)
 *
 * Invariants checked (abort on breach): the call succeeds or runs out of memory; a trusted
 * verdict has no reasons and no violations; every reason is a row of reasons.h; every violation
 * is a kind an operator reviews, stands for at least one entry, and no two share a reason, raw
 * path and digest; a verdict lists at most LIMIT_VERDICT_REASONS; the expected next entry never
 * moves back within a boot; unreviewed violations never leave a verdict trusted, in the same
 * boot or after a reboot (neither policy here forgets them); a quote over another nonce is never
 * trusted; a log_records_deleted verdict is never trusted and leaves the boot's replay as it was;
 * a trusted verdict leaves no unconfirmed replay, a log_incomplete one always does.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/encoding.h"
#include "proto/imalog.h"
#include "proto/replay.h"
#include "verifier/decision/attest.h"
#include "verifier/policy/policy.h"
#include "tests/lib/softtpm.h"
#include "verifier/facts/reasons.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEADER 34u

static EVP_PKEY *ak;
static struct policy *strict, *lenient;
static bool verbose;

/* The files both policies allow: each with the SHA-256 of its own path as its digest. */
static const char *const allowed[] = { "/bin/a", "/bin/b", "/usr/bin/tool" };

/*
 * The strict policy also trusts a signing key (ima-sig entries reach the signature checks of
 * verifier/decision/judge.c), requires signatures under /usr/sig/ and names the .ima keyring.
 */
static struct policy *make_policy(bool ignore_violations)
{
	char json[2048], hex[65], *b64 = NULL;
	size_t o;
	uint8_t d[32];
	char err[128];
	EVP_PKEY *signer = ignore_violations ? NULL : EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	unsigned char *der = NULL;
	int der_len = signer ? i2d_PUBKEY(signer, &der) : -1;

	if (der_len > 0)
		b64 = base64_encode_alloc(der, (size_t)der_len);
	OPENSSL_free(der);
	EVP_PKEY_free(signer);
	o = (size_t)snprintf(json, sizeof(json), "{\"version\":1,\"violations\":\"%s\",\"excludes\":[\"/tmp/ok/.*\"],",
			     ignore_violations ? "ignore" : "fail");
	if (b64)
		o += (size_t)snprintf(json + o, sizeof(json) - o,
				      "\"keys\":[{\"der\":\"%s\"}],\"require_signatures\":[\"/usr/sig/\"],"
				      "\"keyrings\":{\".ima\":[\"sha256:%064d\"]},", b64, 0);
	free(b64);
	o += (size_t)snprintf(json + o, sizeof(json) - o, "\"digests\":{");
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		SHA256((const uint8_t *)allowed[i], strlen(allowed[i]), d);
		hex_encode(d, 32, hex);
		o += (size_t)snprintf(json + o, sizeof(json) - o, "%s\"%s\":[\"sha256:%s\"]",
				      i ? "," : "", allowed[i], hex);
	}
	snprintf(json + o, sizeof(json) - o, "}}");
	return policy_load(json, strlen(json), err, sizeof(err));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("TSS2_LOG", "all+none", 0);
	verbose = getenv("FUZZ_ATTEST_VERBOSE") != NULL;
	ak = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	strict = make_policy(false);
	lenient = make_policy(true);
	if (!ak || !strict || !lenient)
		abort();
	return 0;
}

/* PCR 0-9 fixed (the firmware), PCR 10 filled by the caller; sha1 and sha256 banks. */
static void firmware_pcrs(struct pcr_set *p)
{
	memset(p, 0, sizeof(*p));
	struct pcr_bank *b1 = pcr_set_add_bank(p, TPM2_ALG_SHA1);
	struct pcr_bank *b2 = pcr_set_add_bank(p, TPM2_ALG_SHA256);

	b1->mask = b2->mask = 0x7ff;
	for (unsigned i = 0; i < 10; i++) {
		memset(b1->value[i], (int)(i + 1), 20);
		memset(b2->value[i], (int)(0x41 + i), 32);
	}
}

/* PCR 10 as the list's parseable entries replay from `from`. */
static void replay_list(struct pcr_set *p, const struct replay_state *from, const uint8_t *log,
			size_t len, uint64_t offset)
{
	struct replay_state st = *from;
	struct replay_ctx *rc = replay_ctx_new(REPLAY_SHA1 | REPLAY_SHA256);
	struct imalog *il = imalog_new();
	struct ima_entry e;

	if (!rc || !il)
		abort();
	imalog_reset(il, log, len, offset);
	while (imalog_next(il, &e, NULL) == 1)
		if (replay_extend(rc, &st, &e) < 0)
			break;
	memcpy(pcr_set_bank(p, TPM2_ALG_SHA1)->value[PCR_IMA], st.sha1, 20);
	memcpy(pcr_set_bank(p, TPM2_ALG_SHA256)->value[PCR_IMA], st.sha256, 32);
	imalog_free(il);
	replay_ctx_free(rc);
}

static void check_result(const struct attest_request *req, const struct attest_result *res,
			 bool other_nonce)
{
	const struct verdict_response *v = &res->verdict;

	if (v->nreasons > LIMIT_VERDICT_REASONS)
		abort();
	if (v->trusted && (v->nreasons || res->nviolations))
		abort();
	if (other_nonce && v->trusted)
		abort();
	for (unsigned i = 0; i < v->nreasons; i++) {
		enum reason r;

		/* the code on the wire is the name of the typed reason the verifier keeps */
		if (!reason_from_name(v->reason[i].code, &r) || r != res->reasons[i])
			abort();
	}
	for (size_t i = 0; i < res->nviolations; i++) {
		const struct attest_violation *a = &res->violations[i];

		if ((unsigned)a->reason >= REASON_COUNT ||
		    reason_info(a->reason)->kind == REASON_KIND_VERDICT || a->count == 0 ||
		    a->last_entry < a->entry)
			abort();
		for (size_t k = i + 1; k < res->nviolations && k < 1000; k++) {
			const struct attest_violation *b = &res->violations[k];

			if (a->reason == b->reason && a->path_len == b->path_len &&
			    !memcmp(a->path, b->path, a->path_len) && !strcmp(a->digest, b->digest))
				abort();
		}
	}
	if (req->prev->started && res->next.boot_number == req->prev->boot_number &&
	    res->next.next_entry < req->prev->next_entry)
		abort();
	if (req->open_violations && v->trusted)
		abort();
	if (v->trusted && res->next.unconfirmed)
		abort();
	for (unsigned i = 0; i < v->nreasons; i++) {
		if (!strcmp(v->reason[i].code, reason_name(REASON_LOG_INCOMPLETE)) &&
		    (v->trusted || !res->next.unconfirmed))
			abort();
		if (strcmp(v->reason[i].code, reason_name(REASON_LOG_RECORDS_DELETED)) != 0)
			continue;
		if (v->trusted)
			abort();
		if (req->prev->started && res->next.boot_number == req->prev->boot_number &&
		    (res->next.next_entry != req->prev->next_entry ||
		     memcmp(&res->next.replay, &req->prev->replay, sizeof(res->next.replay)) != 0))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t nonce[32] = { 1, 2, 3, 4 };
	static const uint8_t other[32] = { 9 };
	uint8_t attest[LIMIT_ATTEST], sig[LIMIT_SIGNATURE];
	struct softtpm_clock clk = { .clock = 5000, .reset_count = 3, .restart_count = 0, .safe = 1 };
	struct boot_state prev;
	struct evidence ev;
	struct attest_request req;
	struct attest_result res;
	struct pcr_set requested;
	uint8_t flags;
	int r;

	if (size < HEADER)
		return 0;
	flags = data[0];
	memset(&prev, 0, sizeof(prev));
	if (flags & 1) {
		prev.started = true;
		prev.reset_count = 3;
		prev.clock = 4000;
		prev.boot_number = 2;
		prev.next_entry = data[1] & 0x0f;
		replay_state_init(&prev.replay, REPLAY_SHA1 | REPLAY_SHA256);
		prev.replay.entries = prev.next_entry;
	}
	if (flags & 2)
		clk.reset_count++;
	memset(&ev, 0, sizeof(ev));
	firmware_pcrs(&ev.pcrs);
	ev.log = (uint8_t *)(uintptr_t)(data + HEADER); /* attest_evaluate only reads it */
	ev.log_len = size - HEADER;
	ev.log_offset = (flags & 0x80) ? data[1] : prev.next_entry;
	if (((flags >> 2) & 3) == 3) {
		ev.log_deleted = ev.log_offset;
		ev.log_more = true;
	}
	if (flags & 0x10) {
		struct replay_state fresh;

		replay_state_init(&fresh, REPLAY_SHA1 | REPLAY_SHA256);
		replay_list(&ev.pcrs, (flags & 3) == 1 ? &prev.replay : &fresh, ev.log, ev.log_len,
			    ev.log_offset);
	} else {
		memcpy(pcr_set_bank(&ev.pcrs, TPM2_ALG_SHA1)->value[PCR_IMA], data + 2, 20);
		memcpy(pcr_set_bank(&ev.pcrs, TPM2_ALG_SHA256)->value[PCR_IMA], data + 2, 32);
	}
	if (softtpm_quote(ak, (flags & 0x40) ? other : nonce, 32, &ev.pcrs, &clk, attest,
			  sizeof(attest), &ev.attest_len, sig, sizeof(sig), &ev.signature_len))
		abort();
	ev.attest = attest;
	ev.signature = sig;
	memcpy(ev.nonce, nonce, 32);
	ev.nonce_len = 32;
	requested = ev.pcrs;

	memset(&req, 0, sizeof(req));
	req.ak = ak;
	req.nonce = nonce;
	req.nonce_len = 32;
	req.requested = &requested;
	switch ((flags >> 2) & 3) {
	case 0: req.policy = NULL; break;
	case 2: req.policy = lenient; break;
	default: req.policy = strict; break;
	}
	req.prev = &prev;
	req.open_violations = (flags & 0x20) ? 1 + data[1] : 0;
	req.open_violations_prev_boot = req.open_violations / 2;
	req.ev = &ev;
	r = attest_evaluate(&req, &res);
	if (r == -ENOMEM)
		return 0;
	if (r)
		abort();
	if (!res.authenticated)
		abort(); /* the harness signs every quote with the AK it passes */
	check_result(&req, &res, flags & 0x40);
	if (verbose) {
		/* FUZZ_ATTEST_VERBOSE=1: what each input decided, to keep the seed corpus honest. */
		fprintf(stderr, "%s", res.verdict.trusted ? "trusted" : "untrusted");
		for (unsigned i = 0; i < res.verdict.nreasons; i++)
			fprintf(stderr, " %s", res.verdict.reason[i].code);
		fprintf(stderr, " (next %llu, %zu violations)\n",
			(unsigned long long)res.next.next_entry, res.nviolations);
	}
	attest_result_release(&res);
	return 0;
}
