/*
 * attest: the verdict on one piece of evidence (see attest.h for the caller's part).
 *
 * Order matters. Nothing in the evidence is believed before the quote's signature verifies
 * with the enrolled AK and binds the challenge's nonce; the PCR values are believed only once
 * pcrDigest matches them. Then the TPM's clock decides whether this is the same boot session
 * (continue the stored replay) or a new one (replay from entry 0). The firmware's event log
 * is replayed against the quoted PCR 0-9 and judged by the policy's boot section
 * (boot_check.c): the boot decides whether IMA's list can be believed at all. The new IMA
 * entries are replayed on top of the stored state and PCR 10 is compared after every entry: IMA appends an
 * entry before it extends the PCR, so the quote may cover any prefix of what the agent read.
 * Every entry sent is judged against the policy, matched or not.
 */
#include "verifier/decision/attest.h"

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
#include "proto/text.h"
#include "verifier/decision/judge.h"
#include "verifier/policy/policy.h"
#include "verifier/policy/policy_json.h"

/* Reasons past this many are summarised in one `more_reasons` line. */
#define ATTEST_DETAILED_REASONS (LIMIT_VERDICT_REASONS - 1)

struct eval {
	const struct attest_request *req;
	struct attest_result *out;
	struct violation_set violations; /* out->violations once the round is judged */
	uint64_t suppressed; /* reasons not listed individually */
	int err;             /* allocation failure while recording */
	/* Entry 0 is a zero boot_aggregate and the quote covers no boot_aggregate_late after it
	 * yet: nothing shows that IMA has bound a TPM (see check_boot_aggregate()). */
	bool bypass_pending;
	bool late_seen;  /* the first boot_aggregate_late after it was judged */
	bool late_bound; /* ... and it is not zero: a quote that covers it ends the bypass */
};

/* Adds a reason; returns its slot, or -1 when it is only counted in `more_reasons`. */
static int add_reason(struct eval *ev, enum reason code, int64_t entry, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int add_reason(struct eval *ev, enum reason code, int64_t entry, const char *fmt, ...)
{
	struct verdict_response *v = &ev->out->verdict;

	v->trusted = false;
	if (v->nreasons >= ATTEST_DETAILED_REASONS) {
		ev->suppressed++;
		return -1;
	}
	struct verdict_reason *r = &v->reason[v->nreasons];
	ev->out->reasons[v->nreasons] = code;
	snprintf(r->code, sizeof(r->code), "%s", reason_name(code));
	r->entry = entry;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
	text_trim_utf8_tail(r->detail);
	return (int)v->nreasons++;
}

/*
 * The entry's digest as "alg:hex" (ima-ng's algorithm name escaped; ima's is sha1), an
 * fs-verity digest as "verity:alg:hex" (what a policy lists it as, so approving teaches it
 * typed), or "".
 */
static void format_digest(char *out, size_t cap, const struct ima_entry *e)
{
	char name[LIMIT_DIGEST_TYPE + 4 * 16 + 1];
	size_t name_len = e->digest_alg_name_len < 16 ? e->digest_alg_name_len : 16;
	size_t pre = e->digest_type == IMA_DIGEST_VERITY ? LIMIT_DIGEST_TYPE : 0;

	if (e->digest_alg_name && name_len > 0) {
		memcpy(name, "verity:", pre);
		text_render(e->digest_alg_name, name_len, name + pre, sizeof(name) - pre);
		text_trim_utf8_tail(policy_digest_text(name, e->digest, e->digest_len, out, cap));
	} else if (e->digest) {
		policy_digest_text("sha1", e->digest, e->digest_len, out, cap);
	} else if (cap) {
		out[0] = '\0';
	}
}

/*
 * A violation's reason detail: "<path as text> <digest>", and " (N entries)" once the round
 * saw it more than once. The path is cut, never the digest or the count.
 */
static void violation_detail(char *out, size_t cap, const struct attest_violation *v)
{
	char tail[LIMIT_DIGEST_TEXT_ESCAPED + 48];
	int n = v->count > 1 ? snprintf(tail, sizeof(tail), " %s (%llu entries)", v->digest,
					(unsigned long long)v->count)
			     : snprintf(tail, sizeof(tail), " %s", v->digest);
	size_t room = n > 0 && (size_t)n < cap ? cap - (size_t)n : 1;

	text_render(v->path, v->path_len, out, room);
	snprintf(out + strlen(out), cap - strlen(out), "%s", tail);
	text_trim_utf8_tail(out);
}

/*
 * Counts a violation in the round's set: the first entry of each (reason, path, digest) gets a
 * reason of the verdict, later ones only raise its count (the detail says how many at the end).
 */
static void record_violation(struct eval *ev, const struct ima_entry *e, enum reason reason)
{
	char digest[LIMIT_DIGEST_TEXT_ESCAPED + 1];
	char template_name[LIMIT_IMA_TEMPLATE_NAME + 1];
	struct attest_violation *v;
	bool fresh;
	long i;

	format_digest(digest, sizeof(digest), e);
	text_render(e->template_name, e->template_name_len, template_name, sizeof(template_name));
	i = violation_set_add(&ev->violations, reason, e->index, e->path, e->path ? e->path_len : 0,
			      digest, template_name, &fresh);
	if (i == -ENOMEM)
		ev->err = -ENOMEM;
	if (i < 0 || !fresh)
		return; /* past the cap: counted, and stored as one record when the round ends */
	v = violation_set_at(&ev->violations, (size_t)i);
	{
		/* The record's path is an arena offset until the set is taken: show the entry's. */
		struct attest_violation shown = *v;
		char detail[LIMIT_VERDICT_DETAIL];

		shown.path = e->path;
		violation_detail(detail, sizeof(detail), &shown);
		v->reason_slot = add_reason(ev, reason, (int64_t)e->index, "%s", detail);
	}
}

/*
 * A boot finding (boot_check.c) as a reason, and as a violation of the round if it is reviewed:
 * its subject stands as the path, the event's index in the firmware log as the entry and its
 * BOOT_CAT_* as the template name, which approval reads to know what to teach (review.c).
 */
static void record_boot_finding(struct eval *ev, const struct boot_finding *f)
{
	bool fresh;

	add_reason(ev, f->reason, -1, "%s", f->detail);
	if (reason_info(f->reason)->kind == REASON_KIND_VERDICT)
		return;
	/* Its record names no reason slot: the detail stays the finding's words, never a count. */
	if (violation_set_add(&ev->violations, f->reason, f->event >= 0 ? (uint64_t)f->event : 0,
			      f->subject, strlen(f->subject), f->digest, f->category,
			      &fresh) == -ENOMEM)
		ev->err = -ENOMEM;
}

/*
 * The firmware event log against the quoted PCR 0-9 and the policy's boot section; the
 * agent's amendment's boot section (what operators approved for it alone) only adds to what
 * that section allows.
 */
static int check_boot(struct eval *ev)
{
	static const struct boot_input none;
	const struct attest_request *req = ev->req;
	struct attest_result *out = ev->out;
	int r = boot_check(policy_boot(req->policy), policy_boot(req->amendment),
			   req->boot ? req->boot : &none, &req->ev->pcrs, out->next.boot_number,
			   &out->boot);

	for (size_t i = 0; !r && i < out->boot.nfindings && !ev->err; i++)
		record_boot_finding(ev, &out->boot.findings[i]);
	return r ? r : ev->err;
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

/* An operator approved this path with this digest for this agent only (its amendment). */
static bool amended(const struct eval *ev, const struct ima_entry *e)
{
	const struct policy *am = ev->req->amendment;

	return am && policy_check_typed(am, e->path, e->path_len, e->digest_type, e->digest_alg,
					e->digest, e->digest_len) == POLICY_ALLOWED;
}

/*
 * Entry 0 may also be named boot_aggregate_late: the upstream kernel option
 * IMA_INIT_LATE_SYNC starts IMA at late_initcall_sync and names its first entry so, computed
 * exactly as boot_aggregate (zero if it found no TPM even then). It is judged as boot_aggregate;
 * a later boot_aggregate_late is the late binding of check_late_aggregate().
 */
static void check_boot_aggregate(struct eval *ev, const struct ima_entry *e)
{
	if (!(is_boot_aggregate(e) || is_boot_aggregate_late(e)) || !e->digest) {
		add_reason(ev, REASON_BOOT_AGGREGATE_MISSING, (int64_t)e->index,
			   "the first entry of a boot must be boot_aggregate (or boot_aggregate_late)");
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

/* The first entry of a boot against the quote; every other against the policy (judge.h). */
static void judge_entry(struct eval *ev, const struct ima_entry *e)
{
	struct judgement j;

	if (e->index == 0) {
		check_boot_aggregate(ev, e);
		return;
	}
	if (check_late_aggregate(ev, e))
		return;
	if (judge_measurement(ev->req->policy, e, &j))
		return;
	/* Only what approval can teach is looked up in the agent's amendment. */
	if (reason_info(j.reason)->kind == REASON_KIND_LEARNABLE && amended(ev, e))
		return;
	record_violation(ev, e, j.reason);
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
	/* A state that never started may still carry a boot number: an agent re-enrolled after a
	 * reset (store.h) goes on from its last boot, so old violations stay apart. */
	out->next.boot_number = prev ? prev->boot_number + 1 : 1;
	replay_state_init(&out->next.replay, banks_of(&ev->req->ev->pcrs));
	out->new_boot = prev && prev->started;
	return true;
}

/*
 * Replays the new entries on the stored state and keeps the longest prefix that matches the
 * quoted PCR 10 (a match confirms every entry the state folds, unconfirmed ones too). Without
 * a match the state stays, with pcr_mismatch; unless the agent said more entries follow
 * (log_more: a list larger than one request), when the whole part's replay is kept,
 * unconfirmed, for the next round to continue (log_incomplete; never a corrupt part). An
 * unconfirmed state that evidence continues without a match, and that is not kept so, is
 * dropped: the next round replays the boot from entry 0.
 */
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
	bool corrupt = false;
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
	corrupt = r < 0;
	if (r < 0)
		add_reason(ev, REASON_LOG_CORRUPT, (int64_t)ierr.index, "entry %llu at byte %zu: %s",
			   (unsigned long long)ierr.index, ierr.offset, ierr.msg);
	r = 0;
	if (ev->bypass_pending)
		add_reason(ev, REASON_TPM_BYPASS, 0,
			   "boot_aggregate is zero and the quote covers no boot_aggregate_late after it: "
			   "IMA has bound no TPM (check ima_tpm= and the TPM driver)");
	else if (match && e->log_offset == 0 && matched_entries == 0 && imalog_index(log) > 0) {
		/*
		 * Only the empty prefix replays: PCR 10 still holds its reset value although the
		 * list has entries. IMA extends boot_aggregate before anything can run, so this
		 * TPM's PCR 10 never followed this list (IMA extends another TPM, or none).
		 */
		add_reason(ev, REASON_IMA_PCR_NOT_EXTENDED, -1,
			   "PCR 10 is zero in every quoted bank while the list has %llu entries: IMA never extended this TPM's PCR 10",
			   (unsigned long long)imalog_index(log));
	}
	if (!match && e->log_more && !corrupt && !ev->bypass_pending &&
	    imalog_index(log) > e->log_offset) {
		add_reason(ev, REASON_LOG_INCOMPLETE, -1,
			   "entries %llu-%llu replayed, not yet confirmed: the agent's list is larger"
			   " than one request holds, the rest comes next round, and the first quote"
			   " that the continued replay matches confirms them",
			   (unsigned long long)e->log_offset,
			   (unsigned long long)(imalog_index(log) - 1));
		next->replay = run;
		next->next_entry = imalog_index(log);
		next->unconfirmed = true;
		goto out;
	}
	if (!match) {
		const struct pcr_bank *b = pcr_set_bank_const(&e->pcrs, TPM2_ALG_SHA256);
		char hex[2 * LIMIT_DIGEST + 1] = "";
		if (b)
			hex_encode(b->value[PCR_IMA], 32, hex);
		add_reason(ev, REASON_PCR_MISMATCH, -1,
			   "no prefix of entries %llu-%llu replays to the quoted PCR 10 (sha256 %s)",
			   (unsigned long long)e->log_offset,
			   (unsigned long long)imalog_index(log), hex);
		if (next->unconfirmed) {
			/* The parts sent never reached a quote: start the boot over. */
			replay_state_init(&next->replay, run.banks);
			next->next_entry = 0;
			next->unconfirmed = false;
		}
		goto out;
	}
	next->replay = matched;
	next->next_entry = matched_entries;
	next->unconfirmed = false;
out:
	imalog_free(log);
	replay_ctx_free(rc);
	return r;
}

/*
 * Evidence that starts after the entry the verifier needs because the machine's kernel deleted
 * it (the agent's log_deleted is above that entry; proto/evidence.h, "Deleted records") and
 * the agent holds no export of it: the list cannot be replayed to PCR 10, so it is never
 * trusted, whatever the entries sent say. The stored replay is kept as it was (a policy change's
 * rejudgement, which would start it over from entry 0, is undone: the old state still holds),
 * so a restored export, or the old versions back, let the next round go on. Returns false for
 * any other offset mismatch.
 */
static bool records_deleted(struct eval *ev)
{
	const struct attest_request *req = ev->req;
	struct attest_result *out = ev->out;
	const struct evidence *e = req->ev;
	uint64_t want = out->next.next_entry;
	bool fresh = out->new_boot || !req->prev || !req->prev->started;
	bool rejudged = out->rejudged;

	if (!(e->log_offset > want && e->log_deleted > want))
		return false;
	if (!fresh) {
		out->next.replay = req->prev->replay;
		out->next.next_entry = req->prev->next_entry;
		out->next.judged = req->prev->judged;
		out->next.unconfirmed = req->prev->unconfirmed;
		out->rejudged = false;
	}
	add_reason(ev, REASON_LOG_RECORDS_DELETED, (int64_t)want,
		   "evidence starts at entry %llu, expected %llu: the machine deleted its first %llu"
		   " measurement records from kernel memory and its agent has no export of them%s;"
		   " the list cannot be replayed to PCR 10. Restore attestd's export file on the"
		   " machine (--ima-export, by default ima-exported.bin in its state directory), or"
		   " reboot it to start a fresh list",
		   (unsigned long long)e->log_offset, (unsigned long long)want,
		   (unsigned long long)e->log_deleted,
		   fresh ? " (this verifier holds no replay of this boot: a new verifier, or a state"
			   " restored from before the deletion)"
		   : rejudged ? " (its policy changed: the boot is judged again from entry 0)" : "");
	return true;
}

/*
 * A violation no operator has reviewed keeps the machine untrusted, however clean the rounds
 * after it are, and across reboots: rebooting must not launder what ran. A policy may say
 * "reboot_clears_open_violations", and then only those of the current boot count.
 */
static void check_review(struct eval *ev)
{
	const struct attest_request *req = ev->req;
	const struct attest_result *out = ev->out;
	bool same_boot = req->prev && req->prev->started &&
			 out->next.boot_number == req->prev->boot_number;
	uint64_t this_boot = same_boot ? req->open_violations_prev_boot : 0;
	uint64_t earlier = req->open_violations - (same_boot ? req->open_violations_prev_boot : 0);

	if (policy_reboot_clears_open_violations(req->policy))
		earlier = 0;
	if (!out->verdict.trusted || this_boot + earlier == 0)
		return;
	add_reason(ev, REASON_OPEN_VIOLATIONS, -1,
		   "%llu violations await an operator's review (%llu of this boot, %llu of earlier boots)",
		   (unsigned long long)(this_boot + earlier), (unsigned long long)this_boot,
		   (unsigned long long)earlier);
}

/*
 * The round's violations into out: the detail of each reason whose file recurred in the round
 * says how many entries it stands for, and entries past the cap are one more violation with a
 * reason of their own, listed even when the reasons are full (they must never go unseen).
 */
static int take_violations(struct eval *ev)
{
	struct attest_result *out = ev->out;
	struct verdict_response *v = &out->verdict;
	uint64_t unrecorded = ev->violations.unrecorded;
	int ret;

	ret = violation_set_take(&ev->violations, &out->violations, &out->nviolations,
				 &out->violation_paths);
	if (ret)
		return ret;
	for (size_t i = 0; i < out->nviolations; i++) {
		const struct attest_violation *a = &out->violations[i];

		if (a->count > 1 && a->reason_slot >= 0)
			violation_detail(v->reason[a->reason_slot].detail,
					 sizeof(v->reason[a->reason_slot].detail), a);
	}
	if (unrecorded) {
		if (v->nreasons >= ATTEST_DETAILED_REASONS) {
			v->nreasons--; /* the last detailed reason makes room; it is counted instead */
			ev->suppressed++;
		}
		add_reason(ev, REASON_VIOLATIONS_UNRECORDED, (int64_t)ev->violations.unrecorded_first,
			   "%llu entries of more than %u distinct files that break the policy were not stored one by one; the agent stays untrusted until this is reviewed",
			   (unsigned long long)unrecorded, LIMIT_ROUND_VIOLATIONS);
	}
	return 0;
}

int attest_evaluate(const struct attest_request *req, struct attest_result *out)
{
	struct eval ev = {.req = req, .out = out};
	struct quote_info qi;

	memset(out, 0, sizeof(*out));
	if (violation_set_init(&ev.violations, LIMIT_ROUND_VIOLATIONS)) {
		violation_set_release(&ev.violations);
		return -ENOMEM;
	}
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
	/*
	 * Versions changed since the entries were judged: the same boot is judged again, from
	 * entry 0, from a fresh replay (the agent was asked for its list from entry 0; one that
	 * sends from elsewhere gets log_offset_mismatch below and resends).
	 */
	if (!out->new_boot && req->judged_by && attest_needs_rejudgement(&out->next, req->judged_by)) {
		uint64_t boot = out->next.boot_number;

		memset(&out->next.replay, 0, sizeof(out->next.replay));
		replay_state_init(&out->next.replay, banks_of(&req->ev->pcrs));
		out->next.next_entry = 0;
		out->next.unconfirmed = false;
		out->next.boot_number = boot;
		out->rejudged = true;
	}
	/* From here on, whatever the state folds was judged by these versions. */
	if (req->judged_by)
		out->next.judged = *req->judged_by;
	out->next.reset_count = qi.reset_count;
	out->next.restart_count = qi.restart_count;
	out->next.clock = qi.clock;
	int r = check_boot(&ev);

	if (r < 0) {
		violation_set_release(&ev.violations);
		attest_result_release(out);
		return r;
	}

	if (req->ev->log_offset != out->next.next_entry && records_deleted(&ev)) {
		/* Nothing to replay: the stored state stays as it was (records_deleted()). */
		r = take_violations(&ev);
		if (r < 0) {
			violation_set_release(&ev.violations);
			attest_result_release(out);
			return r;
		}
		goto done;
	}
	if (req->ev->log_offset != out->next.next_entry) {
		add_reason(&ev, out->new_boot ? REASON_REBOOT : REASON_LOG_OFFSET_MISMATCH, -1,
			   "evidence starts at entry %llu, expected %llu",
			   (unsigned long long)req->ev->log_offset,
			   (unsigned long long)out->next.next_entry);
		/*
		 * No entry is judged, but the boot may have been: its findings are stored with
		 * the judgement (round.c keeps out->boot.key), or the next round, which does not
		 * judge the same boot again, would never see them.
		 */
		r = take_violations(&ev);
		if (r < 0) {
			violation_set_release(&ev.violations);
			attest_result_release(out);
			return r;
		}
		goto done;
	}
	r = replay_and_judge(&ev);
	if (!r)
		r = take_violations(&ev);
	if (r < 0) {
		violation_set_release(&ev.violations);
		attest_result_release(out);
		return r;
	}
	check_review(&ev);
done:
	violation_set_release(&ev.violations);
	if (ev.suppressed) {
		/* add_reason() keeps the last slot free for this summary. */
		struct verdict_reason *more = &out->verdict.reason[out->verdict.nreasons];
		out->reasons[out->verdict.nreasons++] = REASON_MORE_REASONS;
		snprintf(more->code, sizeof(more->code), "%s", reason_name(REASON_MORE_REASONS));
		snprintf(more->detail, sizeof(more->detail), "%llu more reasons not listed",
			 (unsigned long long)ev.suppressed);
		more->entry = -1;
	}
	out->verdict.next_offset = out->next.next_entry;
	return 0;
}

bool attest_needs_rejudgement(const struct boot_state *prev, const struct judged_versions *now)
{
	return prev && prev->started && prev->next_entry > 0 && now &&
	       !judged_versions_equal(&prev->judged, now);
}

void attest_result_release(struct attest_result *res)
{
	if (!res)
		return;
	free(res->violations);
	free(res->violation_paths);
	res->violations = NULL;
	res->violation_paths = NULL;
	res->nviolations = 0;
	boot_result_release(&res->boot);
}
