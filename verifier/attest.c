/*
 * attest: the verdict on one piece of evidence (see attest.h for the caller's part).
 *
 * Order matters. Nothing in the evidence is believed before the quote's signature verifies
 * with the enrolled AK and binds the challenge's nonce; the PCR values are believed only once
 * pcrDigest matches them. Then the TPM's clock decides whether this is the same boot session
 * (continue the stored replay) or a new one (replay from entry 0). The new IMA entries are
 * replayed on top of the stored state and PCR 10 is compared after every entry: IMA appends an
 * entry before it extends the PCR, so the quote may cover any prefix of what the agent read.
 * Every entry sent is judged against the policy, matched or not.
 */
#include "verifier/attest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/dynbuf.h"
#include "proto/encoding.h"
#include "proto/imalog.h"
#include "proto/quote.h"
#include "verifier/policy.h"

/* Reasons past this many are summarised in one `more_reasons` line. */
#define ATTEST_DETAILED_REASONS (LIMIT_VERDICT_REASONS - 1)

struct eval {
	const struct attest_request *req;
	struct attest_result *out;
	struct dynbuf violations; /* out->violations grows here; out owns the bytes */
	uint64_t suppressed; /* reasons not listed individually */
	int err;             /* allocation failure while recording */
	/* Entry 0 is a zero boot_aggregate and the quote covers no boot_aggregate_late after it
	 * yet: nothing shows that IMA has bound a TPM (see check_boot_aggregate()). */
	bool bypass_pending;
	bool late_seen;  /* the first boot_aggregate_late after it was judged */
	bool late_bound; /* ... and it is not zero: a quote that covers it ends the bypass */
};

/* Length of the well-formed UTF-8 sequence at p[0..n), or 0 if it is not one (RFC 3629). */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (p[0] >= 0x01 && p[0] <= 0x7f)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

/*
 * Untrusted bytes (a path, a template or algorithm name) as text that JSON can carry: valid
 * UTF-8 is copied, every other byte becomes the four characters \xNN. A name that is not UTF-8
 * must still be stored and shown: jansson refuses such strings, and a verdict or violation that
 * cannot be encoded would be lost. Stops before a sequence or escape that does not fit.
 */
static void copy_text(char *out, size_t cap, const char *in, size_t n)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t o = 0, i = 0;

	while (i < n) {
		size_t len = utf8_seq(p + i, n - i);

		if (len) {
			if (o + len >= cap)
				break;
			memcpy(out + o, p + i, len);
			o += len;
			i += len;
		} else {
			if (o + 4 >= cap)
				break;
			snprintf(out + o, 5, "\\x%02x", p[i]);
			o += 4;
			i++;
		}
	}
	out[o] = '\0';
}

/* Cuts an incomplete UTF-8 sequence that truncation left at the end of s (valid before). */
static void utf8_trim_tail(char *s)
{
	size_t len = strlen(s), j = len;

	while (j > 0 && len - j < 3 && ((unsigned char)s[j - 1] & 0xc0) == 0x80)
		j--;
	if (j > 0 && (unsigned char)s[j - 1] >= 0xc0) {
		unsigned char b = (unsigned char)s[j - 1];
		size_t want = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;

		if (len - (j - 1) < want)
			s[j - 1] = '\0';
	}
}

static void add_reason(struct eval *ev, enum reason code, int64_t entry, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add_reason(struct eval *ev, enum reason code, int64_t entry, const char *fmt, ...)
{
	struct verdict_response *v = &ev->out->verdict;

	v->trusted = false;
	if (v->nreasons >= ATTEST_DETAILED_REASONS) {
		ev->suppressed++;
		return;
	}
	struct verdict_reason *r = &v->reason[v->nreasons++];
	snprintf(r->code, sizeof(r->code), "%s", reason_name(code));
	r->entry = entry;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
	utf8_trim_tail(r->detail);
}

static void format_digest(char *out, size_t cap, const struct ima_entry *e)
{
	char hex[2 * LIMIT_DIGEST + 1] = "";
	char name[4 * 16 + 1];
	size_t name_len = e->digest_alg_name_len < 16 ? e->digest_alg_name_len : 16;

	if (e->digest && e->digest_len <= LIMIT_DIGEST)
		hex_encode(e->digest, e->digest_len, hex);
	if (e->digest_alg_name && name_len > 0) {
		copy_text(name, sizeof(name), e->digest_alg_name, name_len);
		snprintf(out, cap, "%s:%s", name, hex);
		utf8_trim_tail(out);
	} else {
		snprintf(out, cap, "%s%s", e->digest ? "sha1:" : "", hex);
	}
}

/* Copies a path for display and storage; it stays untrusted bytes (the UI escapes it). */
static void copy_path(char *out, size_t cap, const struct ima_entry *e)
{
	copy_text(out, cap, e->path, e->path ? e->path_len : 0);
}

static void record_violation(struct eval *ev, const struct ima_entry *e, enum reason reason)
{
	struct attest_result *out = ev->out;
	char digest[sizeof(out->violations[0].digest)];
	char path[LIMIT_IMA_PATH + 1];

	format_digest(digest, sizeof(digest), e);
	copy_path(path, sizeof(path), e);
	add_reason(ev, reason, (int64_t)e->index, "%s %s", path, digest);

	struct attest_violation *v = dynbuf_grow(&ev->violations, sizeof(*v));
	if (!v) {
		/* Past LIMIT_IMA_VIOLATIONS (a list this bad) entries are not recorded one by one. */
		if (dynbuf_error(&ev->violations) == -ENOMEM)
			ev->err = -ENOMEM;
		return;
	}
	out->violations = (struct attest_violation *)ev->violations.buf;
	out->nviolations++;
	memset(v, 0, sizeof(*v));
	v->entry = e->index;
	v->reason = reason;
	memcpy(v->path, path, sizeof(v->path));
	memcpy(v->digest, digest, sizeof(v->digest));
	copy_text(v->template_name, sizeof(v->template_name), e->template_name,
		  e->template_name_len);
}

static bool is_boot_aggregate(const struct ima_entry *e)
{
	return e->path && e->path_len == 14 && memcmp(e->path, "boot_aggregate", 14) == 0;
}

static bool is_boot_aggregate_late(const struct ima_entry *e)
{
	return e->path && e->path_len == 19 && memcmp(e->path, "boot_aggregate_late", 19) == 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;

	for (size_t i = 0; i < n; i++)
		acc |= p[i];
	return acc == 0;
}

/*
 * The first entry of a boot is boot_aggregate: H(PCR 0-7) in sha1, H(PCR 0-9) in other banks,
 * in the bank of the entry's digest algorithm. It ties the IMA list to the firmware's
 * measurements that the quote covers.
 *
 * A zero boot_aggregate means IMA found no TPM when it started (TPM-bypass). The patched
 * kernel (kernel-patches/, Documentation/security/IMA-tpm.rst) binds the chip when it
 * registers later, extends it with the whole list from entry 0, and appends
 * boot_aggregate_late, computed as boot_aggregate from the chip's PCRs at that moment. So the
 * verdict on a zero boot_aggregate waits for that entry (check_late_aggregate()) and for a
 * quote that covers it: an entry the quote does not cover is only the agent's word. Until
 * then nothing of the list is tied to a TPM: tpm_bypass, and replay_and_judge() does not
 * advance past entry 0, so every round judges the list from the start.
 */
static void check_aggregate_value(struct eval *ev, const struct ima_entry *e)
{
	const struct policy *pol = ev->req->policy;
	uint8_t want[LIMIT_DIGEST];
	size_t want_len = 0;

	if (pol && policy_boot_aggregate_mode(pol) == POLICY_BOOT_AGGREGATE_LIST) {
		if (!policy_boot_aggregate_accepts(pol, e->digest_alg, e->digest, e->digest_len))
			record_violation(ev, e, REASON_BOOT_AGGREGATE_NOT_ALLOWED);
		return;
	}
	if (replay_boot_aggregate(e->digest_alg, &ev->req->ev->pcrs, want, &want_len) < 0) {
		add_reason(ev, REASON_BOOT_AGGREGATE_UNVERIFIED, (int64_t)e->index,
			   "the quote does not cover PCR 0-9 in the boot_aggregate's bank");
		return;
	}
	if (want_len != e->digest_len || memcmp(want, e->digest, want_len) != 0)
		record_violation(ev, e, REASON_BOOT_AGGREGATE_MISMATCH);
}

static void check_boot_aggregate(struct eval *ev, const struct ima_entry *e)
{
	if (!is_boot_aggregate(e) || !e->digest) {
		add_reason(ev, REASON_BOOT_AGGREGATE_MISSING, (int64_t)e->index,
			   "the first entry of a boot must be boot_aggregate");
		return;
	}
	if (all_zero(e->digest, e->digest_len)) {
		ev->bypass_pending = true;
		return;
	}
	check_aggregate_value(ev, e);
}

/*
 * The first boot_aggregate_late after a zero boot_aggregate: the TPM IMA bound late. It is
 * checked like boot_aggregate; a zero one proves nothing (the kernel could not read the
 * chip's PCRs). Returns false for any other entry, and for a second boot_aggregate_late,
 * which are judged as any entry (a name no policy lists).
 */
static bool check_late_aggregate(struct eval *ev, const struct ima_entry *e)
{
	if (!ev->bypass_pending || ev->late_seen || !is_boot_aggregate_late(e) || !e->digest)
		return false;
	ev->late_seen = true;
	if (all_zero(e->digest, e->digest_len))
		return true;
	ev->late_bound = true;
	check_aggregate_value(ev, e);
	return true;
}

static void judge_entry(struct eval *ev, const struct ima_entry *e)
{
	const struct policy *pol = ev->req->policy;

	if (e->index == 0) {
		check_boot_aggregate(ev, e);
		return;
	}
	if (check_late_aggregate(ev, e))
		return;
	if (e->violation) {
		if (!pol || !policy_violations_allowed(pol))
			record_violation(ev, e, REASON_VIOLATION_ENTRY);
		return;
	}
	if (!pol)
		return;
	if (!e->path || !e->digest || !e->digest_alg) {
		record_violation(ev, e, REASON_UNJUDGEABLE_ENTRY);
		return;
	}
	switch (policy_check(pol, e->path, e->path_len, e->digest_alg, e->digest, e->digest_len)) {
	case POLICY_ALLOWED:
	case POLICY_EXCLUDED:
		break;
	case POLICY_NOT_IN_ALLOWLIST:
		record_violation(ev, e, REASON_NOT_IN_ALLOWLIST);
		break;
	case POLICY_DIGEST_MISMATCH:
		record_violation(ev, e, REASON_DIGEST_MISMATCH);
		break;
	}
}

static uint32_t banks_of(const struct pcr_set *pcrs)
{
	uint32_t banks = 0;

	for (unsigned i = 0; i < pcrs->nbanks; i++)
		if (pcrs->bank[i].mask & (1u << PCR_IMA))
			banks |= replay_bank_of_alg(pcrs->bank[i].alg);
	return banks;
}

/*
 * Decides which boot session the quote belongs to. Returns false (with a reason) if the clock
 * information contradicts the stored history; otherwise sets out->next to the state to
 * continue from.
 */
static bool check_clock(struct eval *ev, const struct quote_info *qi)
{
	const struct boot_state *prev = ev->req->prev;
	struct attest_result *out = ev->out;

	if (prev && prev->started) {
		if (qi->reset_count < prev->reset_count) {
			add_reason(ev, REASON_RESET_COUNT_ROLLBACK, -1, "TPM resetCount went from %u to %u",
				   prev->reset_count, qi->reset_count);
			return false;
		}
		if (qi->reset_count == prev->reset_count) {
			if (qi->restart_count < prev->restart_count) {
				add_reason(ev, REASON_RESTART_COUNT_ROLLBACK, -1,
					   "TPM restartCount went from %u to %u", prev->restart_count,
					   qi->restart_count);
				return false;
			}
			if (qi->clock < prev->clock) {
				add_reason(ev, REASON_CLOCK_ROLLBACK, -1,
					   "TPM clock went back from %llu to %llu without a reset",
					   (unsigned long long)prev->clock,
					   (unsigned long long)qi->clock);
				return false;
			}
			out->next = *prev;
			return true;
		}
	}
	/* First evidence, or resetCount went up: the machine rebooted; replay from entry 0. */
	memset(&out->next, 0, sizeof(out->next));
	out->next.started = true;
	out->next.boot_number = prev && prev->started ? prev->boot_number + 1 : 1;
	replay_state_init(&out->next.replay, banks_of(&ev->req->ev->pcrs));
	out->new_boot = prev && prev->started;
	return true;
}

/* Replays the new entries; returns false if none of the prefixes matches the quoted PCR 10. */
static int replay_and_judge(struct eval *ev)
{
	const struct evidence *e = ev->req->ev;
	struct boot_state *next = &ev->out->next;
	struct replay_state run = next->replay, matched = next->replay;
	uint64_t matched_entries = next->next_entry;
	bool match = replay_state_matches(&run, &e->pcrs);
	struct imalog *log = imalog_new();
	struct replay_ctx *rc = replay_ctx_new(run.banks);
	struct ima_entry ent;
	struct ima_error ierr = {0};
	int r = 0;

	if (!log || !rc) {
		r = -ENOMEM;
		goto out;
	}
	imalog_reset(log, e->log, e->log_len, e->log_offset);
	while ((r = imalog_next(log, &ent, &ierr)) == 1) {
		if (replay_extend(rc, &run, &ent) < 0) {
			r = -ENOMEM;
			goto out;
		}
		judge_entry(ev, &ent);
		if (ev->err) {
			r = ev->err;
			goto out;
		}
		if (replay_state_matches(&run, &e->pcrs)) {
			match = true;
			/* The quote covers boot_aggregate_late (judged above, at this entry or
			 * before): the bypass is over. Until then nothing is committed, so the
			 * next round starts from entry 0 again and is judged whole. */
			if (ev->late_bound)
				ev->bypass_pending = false;
			if (!ev->bypass_pending) {
				matched = run;
				matched_entries = ent.index + 1;
			}
		}
	}
	if (r == -ENOMEM)
		goto out;
	if (r < 0)
		add_reason(ev, REASON_LOG_CORRUPT, (int64_t)ierr.index, "entry %llu at byte %zu: %s",
			   (unsigned long long)ierr.index, ierr.offset, ierr.msg);
	r = 0;
	if (ev->bypass_pending)
		add_reason(ev, REASON_TPM_BYPASS, 0,
			   "boot_aggregate is zero and the quote covers no boot_aggregate_late after it: "
			   "IMA has bound no TPM (check ima_tpm= and the TPM driver)");
	if (!match) {
		const struct pcr_bank *b = pcr_set_bank_const(&e->pcrs, TPM2_ALG_SHA256);
		char hex[2 * LIMIT_DIGEST + 1] = "";
		if (b)
			hex_encode(b->value[PCR_IMA], 32, hex);
		add_reason(ev, REASON_PCR_MISMATCH, -1,
			   "no prefix of entries %llu-%llu replays to the quoted PCR 10 (sha256 %s)",
			   (unsigned long long)e->log_offset,
			   (unsigned long long)imalog_index(log), hex);
		goto out;
	}
	next->replay = matched;
	next->next_entry = matched_entries;
out:
	imalog_free(log);
	replay_ctx_free(rc);
	return r;
}

/* The quote's failure as a reason of the verdict. */
static enum reason reason_of_quote(enum quote_result q)
{
	switch (q) {
	case QUOTE_BAD_SIGNATURE: return REASON_BAD_SIGNATURE;
	case QUOTE_NONCE_MISMATCH: return REASON_NONCE_MISMATCH;
	case QUOTE_BAD_MAGIC: return REASON_BAD_MAGIC;
	case QUOTE_BAD_TYPE: return REASON_BAD_TYPE;
	case QUOTE_PCR_SELECTION_MISMATCH: return REASON_PCR_SELECTION_MISMATCH;
	case QUOTE_PCR_DIGEST_MISMATCH: return REASON_PCR_DIGEST_MISMATCH;
	case QUOTE_MALFORMED_ATTEST: return REASON_MALFORMED_ATTEST;
	case QUOTE_MALFORMED_SIGNATURE: return REASON_MALFORMED_SIGNATURE;
	case QUOTE_UNSUPPORTED_ALGORITHM: return REASON_UNSUPPORTED_ALGORITHM;
	case QUOTE_OK: break;
	}
	return REASON_MALFORMED_ATTEST; /* not reached: QUOTE_OK is not a failure */
}

/*
 * A violation seen earlier in this boot keeps the machine untrusted until an operator approves
 * or dismisses it, however clean the rounds after it are. A new boot starts with none.
 */
static void check_review(struct eval *ev)
{
	const struct attest_request *req = ev->req;
	const struct attest_result *out = ev->out;

	if (!out->verdict.trusted || !req->open_violations || !req->prev || !req->prev->started ||
	    out->next.boot_number != req->prev->boot_number)
		return;
	add_reason(ev, REASON_OPEN_VIOLATIONS, -1, "%llu violations of this boot await an operator's review",
		   (unsigned long long)req->open_violations);
}

int attest_evaluate(const struct attest_request *req, struct attest_result *out)
{
	struct eval ev = {.req = req, .out = out};
	struct quote_info qi;

	memset(out, 0, sizeof(*out));
	dynbuf_init(&ev.violations, (size_t)LIMIT_IMA_VIOLATIONS * sizeof(struct attest_violation));
	out->verdict.trusted = true;
	if (req->prev)
		out->next = *req->prev;

	enum quote_result q = quote_verify(req->ak, req->ev->attest, req->ev->attest_len,
					   req->ev->signature, req->ev->signature_len, req->nonce,
					   req->nonce_len, req->requested, &req->ev->pcrs, &qi);
	/* quote_verify() checks the signature before anything else in the attest. */
	out->authenticated = q != QUOTE_BAD_SIGNATURE && q != QUOTE_MALFORMED_SIGNATURE &&
			     q != QUOTE_UNSUPPORTED_ALGORITHM;
	if (q != QUOTE_OK) {
		add_reason(&ev, reason_of_quote(q), -1, "the quote does not verify");
		goto done;
	}
	if (!check_clock(&ev, &qi))
		goto done;
	out->next.reset_count = qi.reset_count;
	out->next.restart_count = qi.restart_count;
	out->next.clock = qi.clock;

	if (req->ev->log_offset != out->next.next_entry) {
		add_reason(&ev, out->new_boot ? REASON_REBOOT : REASON_LOG_OFFSET_MISMATCH, -1,
			   "evidence starts at entry %llu, expected %llu",
			   (unsigned long long)req->ev->log_offset,
			   (unsigned long long)out->next.next_entry);
		goto done;
	}
	int r = replay_and_judge(&ev);
	if (r < 0) {
		attest_result_release(out);
		return r;
	}
	check_review(&ev);
done:
	if (ev.suppressed) {
		/* add_reason() keeps the last slot free for this summary. */
		struct verdict_reason *more = &out->verdict.reason[out->verdict.nreasons++];
		snprintf(more->code, sizeof(more->code), "%s", reason_name(REASON_MORE_REASONS));
		snprintf(more->detail, sizeof(more->detail), "%llu more reasons not listed",
			 (unsigned long long)ev.suppressed);
		more->entry = -1;
	}
	out->verdict.next_offset = out->next.next_entry;
	return 0;
}

void attest_result_release(struct attest_result *res)
{
	if (!res)
		return;
	free(res->violations);
	res->violations = NULL;
	res->nviolations = 0;
}
