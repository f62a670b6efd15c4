/* The firmware event log against the quote and the boot policy; the contract is in boot_check.h. */
#include "verifier/decision/boot_check.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/dynbuf.h"
#include "proto/encoding.h"
#include "proto/eventlog.h"
#include "verifier/api/api_codec.h"
#include "verifier/policy/policy_json.h"

#define DESC_MAX 200u /* an event's words inside a reason's detail */
#define MARKER_ACTION_MAX 64u /* bytes of an action string passed over as a marker */
#define BOOT_FINDINGS_MAX 1024u

struct check {
	const struct boot_policy *bp;
	const struct boot_policy *amend; /* adds to bp's lists; NULL: none */
	const struct boot_input *in;
	const struct pcr_set *quoted; /* what the quote covers: only its banks' digests count */
	const struct eventlog *log;
	struct boot_result *out;
	struct dynbuf findings;
	uint64_t suppressed; /* findings past BOOT_FINDINGS_MAX: counted in the last one's words */
	int err;
};

static struct boot_finding *add(struct check *c, enum reason reason, const struct eventlog_event *e,
				const char *category, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static struct boot_finding *add(struct check *c, enum reason reason, const struct eventlog_event *e,
				const char *category, const char *fmt, ...)
{
	struct boot_finding *f = dynbuf_grow(&c->findings, sizeof(*f));
	va_list ap;

	if (!f) {
		if (dynbuf_error(&c->findings) == -E2BIG)
			c->suppressed++;
		else
			c->err = -ENOMEM;
		return NULL;
	}
	memset(f, 0, sizeof(*f));
	f->reason = reason;
	f->event = e ? (int64_t)e->index : -1;
	f->category = category;
	va_start(ap, fmt);
	vsnprintf(f->detail, sizeof(f->detail), fmt, ap);
	va_end(ap);
	c->out->findings = (struct boot_finding *)c->findings.buf;
	c->out->nfindings++;
	return f;
}

/* The event's digest to show and store: sha256 when it has one, else its first bank's. */
static void digest_text(const struct eventlog_event *e, char *out, size_t cap)
{
	const struct eventlog_digest *d = &e->digest[0];

	for (unsigned i = 0; i < e->ndigests; i++)
		if (e->digest[i].alg->id == TPM2_ALG_SHA256)
			d = &e->digest[i];
	policy_digest_text(d->alg->name, d->value, d->alg->size, out, cap);
}

/* A finding about one event: subject "PCR n: <the event in words>", its digest. */
static void add_event(struct check *c, enum reason reason, const struct eventlog_event *e,
		      const char *category, const char *verdict)
{
	char desc[DESC_MAX], digest[LIMIT_DIGEST_TEXT + 1];
	struct boot_finding *f;

	eventlog_describe(e, desc, sizeof(desc));
	digest_text(e, digest, sizeof(digest));
	f = add(c, reason, e, category, "PCR %u: %s %s %s", e->pcr, desc, digest, verdict);
	if (f) {
		snprintf(f->subject, sizeof(f->subject), "PCR %u: %s", e->pcr, desc);
		snprintf(f->digest, sizeof(f->digest), "%s", digest);
	}
}

/* The list of bp at offset off, or of the amendment, lists one of e's digests. */
static const struct boot_digest *allowed(const struct check *c, size_t off,
					 const struct eventlog_event *e)
{
	const struct boot_list *l = (const struct boot_list *)((const char *)c->bp + off);
	const struct boot_digest *d = boot_list_match(l, e, c->quoted);

	if (!d && c->amend)
		d = boot_list_match((const struct boot_list *)((const char *)c->amend + off), e, c->quoted);
	return d;
}

static bool is_extend(const struct eventlog_event *e)
{
	return e->type != EV_NO_ACTION;
}

/*
 * The data of a separator or an action event in its spec form. The form is what matters, not
 * the type: an Authenticode digest or a firmware volume's digest is a plain hash of bytes root
 * can have, so any measurement could be relabelled as an action with those bytes as its data.
 * A separator is a UINT32 0, or 1 or 0xFFFFFFFF for an error (PC Client PFP 10.4.1, TPM 1.2
 * BIOS); an action is a short ASCII string (the PFP's and SeaBIOS's are 15 to 47 bytes; some
 * firmware adds a NUL). Neither can be the bytes behind an image's or a volume's digest.
 */
static bool marker_form(const struct eventlog_event *e)
{
	size_t n = e->data_len;

	if (e->type == EV_SEPARATOR) {
		uint32_t v;

		if (n != 4)
			return false;
		v = (uint32_t)e->data[0] | (uint32_t)e->data[1] << 8 | (uint32_t)e->data[2] << 16 |
		    (uint32_t)e->data[3] << 24;
		return v == 0 || v == 1 || v == 0xffffffffu;
	}
	if (e->type != EV_EFI_ACTION && e->type != EV_ACTION)
		return false;
	if (n > 0 && e->data[n - 1] == '\0')
		n--;
	if (n == 0 || n > MARKER_ACTION_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (e->data[i] < 0x20 || e->data[i] > 0x7e)
			return false;
	return true;
}

/*
 * One of e's digests is in a bank where the quote covers e's PCR: check_replay() compared it.
 * A digest in another bank is the agent's word.
 */
static bool has_quoted_digest(const struct check *c, const struct eventlog_event *e)
{
	for (unsigned i = 0; i < e->ndigests; i++) {
		const struct pcr_bank *b = pcr_set_bank_const(c->quoted, e->digest[i].alg->id);

		if (b && (b->mask & (1u << e->pcr)))
			return true;
	}
	return false;
}

/* Every digest e carries is H(data), one of them quoted: the data is what was measured. */
static bool measured(const struct check *c, const struct eventlog_event *e, const void *data, size_t len)
{
	return has_quoted_digest(c, e) && eventlog_digests_match(e, data, len);
}

/* A separator or an action string whose data is what was hashed: nothing to judge. */
static bool is_verified_marker(const struct check *c, const struct eventlog_event *e)
{
	return marker_form(e) && measured(c, e, e->data, e->data_len);
}

/* ---- 1. replay against the quote ------------------------------------------------------------- */

/*
 * Compares the replay with each quoted bank. Returns true when every PCR that must match does;
 * else adds one boot_log_mismatch naming the first PCR that differs.
 */
static bool check_replay(struct check *c, const struct pcr_set *replay, const struct pcr_set *quoted)
{
	unsigned bad = 0;
	char first[320] = "";

	for (unsigned b = 0; b < quoted->nbanks; b++) {
		const struct pcr_bank *q = &quoted->bank[b];
		const struct pcr_bank *r = pcr_set_bank_const(replay, q->alg);
		size_t size = pcr_alg_digest_size(q->alg);

		for (unsigned n = 0; n < PCR_COUNT; n++) {
			char qh[2 * LIMIT_DIGEST + 1], rh[2 * LIMIT_DIGEST + 1];
			const uint8_t *want;

			if (!(q->mask & (1u << n)) || n == PCR_IMA)
				continue;
			if (n > 9 && !(r && (r->mask & (1u << n))))
				continue; /* a PCR the firmware does not own and the log does not touch */
			if (!r) {
				if (!bad++)
					snprintf(first, sizeof(first), "the log has no %s bank, and the quote covers PCR %u in it",
						 pcr_alg_name(q->alg), n);
				continue;
			}
			want = r->value[n]; /* zeros where the log extends nothing: the reset value */
			if (memcmp(want, q->value[n], size) == 0)
				continue;
			if (!bad++) {
				hex_encode(want, size, rh);
				hex_encode(q->value[n], size, qh);
				snprintf(first, sizeof(first), "PCR %u %s: the log replays to %.16s..., the quote says %.16s...",
					 n, pcr_alg_name(q->alg), rh, qh);
			}
		}
	}
	if (bad)
		add(c, REASON_BOOT_LOG_MISMATCH, NULL, BOOT_CAT_EVENT,
		    "%s%s (%u PCR values differ): the log was altered, or a PCR was extended after boot",
		    first, bad > 1 ? " and more" : "", bad);
	return bad == 0;
}

/* ---- 2. the boot policy ------------------------------------------------------------------------ */

/* PCR 0: every measurement of the firmware must be listed. */
static void judge_firmware(struct check *c)
{
	const struct boot_policy *bp = c->bp;

	if (!bp->firmware.set)
		return;
	for (size_t i = 0; i < c->log->nevents; i++) {
		const struct eventlog_event *e = &c->log->events[i];

		if (e->pcr != 0 || !is_extend(e) ||
		    (e->type == EV_SEPARATOR && is_verified_marker(c, e)) ||
		    allowed(c, offsetof(struct boot_policy, firmware), e))
			continue;
		add_event(c, REASON_BOOT_NOT_IN_POLICY, e, BOOT_CAT_FIRMWARE, "is not allowed firmware");
	}
}

/* PCR 4: every image the firmware loaded must be an allowed kernel or boot application. */
static void judge_kernel(struct check *c)
{
	const struct boot_policy *bp = c->bp;
	bool kernel = false, other = false;

	if (!bp->kernels.set && !bp->boot_apps.set)
		return;
	for (size_t i = 0; i < c->log->nevents; i++) {
		const struct eventlog_event *e = &c->log->events[i];

		if (e->pcr != 4 || !is_extend(e) || is_verified_marker(c, e))
			continue;
		if (allowed(c, offsetof(struct boot_policy, kernels), e)) {
			kernel = true;
		} else if (!allowed(c, offsetof(struct boot_policy, boot_apps), e)) {
			other = true;
			add_event(c, REASON_BOOT_NOT_IN_POLICY, e, BOOT_CAT_KERNEL,
				  e->type == EV_EFI_BOOT_SERVICES_APPLICATION
					  ? "is not an allowed kernel"
					  : "is not an allowed kernel or boot application");
		}
	}
	if (bp->kernels.set && !kernel && !other)
		add(c, REASON_BOOT_UNVERIFIABLE, NULL, BOOT_CAT_EVENT,
		    "PCR 4: the firmware loaded no allowed kernel (the log has no EFI application the policy lists)");
}

enum secure_state { SB_UNKNOWN, SB_OFF, SB_ON };

/* e extends a separator's value (0, 1 or 0xFFFFFFFF), by its digests: whatever its type says. */
static bool extends_separator(const struct check *c, const struct eventlog_event *e)
{
	static const uint8_t values[3][4] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {0xff, 0xff, 0xff, 0xff}};

	for (unsigned i = 0; i < 3; i++)
		if (measured(c, e, values[i], sizeof(values[i])))
			return true;
	return false;
}

/*
 * PCR 7 as the firmware measured it. The firmware measures SecureBoot, PK, KEK, db and dbx
 * once, then PCR 7's separator; what follows it is image authorities (and a boot loader's own
 * variables), and anything root extended after boot. The separator is found by its digest and
 * a SecureBoot variable by its content (which must hash to its digest), whatever the types
 * say: root can relabel events but not change what they extended.
 */
struct pcr7 {
	const struct eventlog_event *separator; /* the first; NULL: none, nothing can be told */
	const struct eventlog_event *state;     /* the SecureBoot variable before it */
	const struct eventlog_event *extra;     /* a second SecureBoot variable, before or after it */
	enum secure_state secure;               /* SB_UNKNOWN unless exactly one, before separator */
};

/* The variable e holds, if its content is what was measured. */
static bool verified_variable(const struct check *c, const struct eventlog_event *e,
			      struct eventlog_variable *v)
{
	return measured(c, e, e->data, e->data_len) && eventlog_decode_variable(e, v) == 0;
}

static void read_pcr7(const struct check *c, struct pcr7 *p)
{
	const struct eventlog *log = c->log;

	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < log->nevents && !p->separator; i++) {
		const struct eventlog_event *e = &log->events[i];

		if (e->pcr == 7 && is_extend(e) && extends_separator(c, e))
			p->separator = e;
	}
	for (size_t i = 0; i < log->nevents; i++) {
		const struct eventlog_event *e = &log->events[i];
		struct eventlog_variable v;

		if (e->pcr != 7 || !is_extend(e) || e == p->separator || !verified_variable(c, e, &v) ||
		    !eventlog_variable_is(&v, eventlog_guid_global, "SecureBoot"))
			continue;
		if (!p->state && p->separator && e->index < p->separator->index) {
			p->state = e;
			p->secure = v.data_len == 1 && v.data[0] == 1 ? SB_ON : SB_OFF;
		} else if (!p->extra) {
			p->extra = e;
		}
	}
	if (p->extra)
		p->secure = SB_UNKNOWN;
}

/* PCR 7: the Secure Boot state and the key databases. */
static void judge_secure_boot(struct check *c)
{
	const struct boot_policy *bp = c->bp;
	static const struct {
		const char *name;
		const uint8_t *guid;
		const char *category;
		size_t off; /* of the list in struct boot_policy */
	} vars[] = {
		{"PK", eventlog_guid_global, BOOT_CAT_PK, offsetof(struct boot_policy, pk)},
		{"KEK", eventlog_guid_global, BOOT_CAT_KEK, offsetof(struct boot_policy, kek)},
		{"db", eventlog_guid_image_security, BOOT_CAT_DB, offsetof(struct boot_policy, db)},
		{"dbx", eventlog_guid_image_security, BOOT_CAT_DBX, offsetof(struct boot_policy, dbx)},
	};
	bool seen[4] = {false}, any = bp->secure_boot != BOOT_SECURE_ANY;
	const char *required = bp->secure_boot == BOOT_SECURE_ON ? "on" : "off";
	struct pcr7 p;

	for (unsigned k = 0; k < 4; k++)
		any |= ((const struct boot_list *)((const char *)bp + vars[k].off))->set;
	if (!any)
		return;
	read_pcr7(c, &p);
	if (!p.separator) {
		add(c, REASON_BOOT_UNVERIFIABLE, NULL, BOOT_CAT_EVENT,
		    "PCR 7 has no separator: what the firmware measured cannot be told from what was extended after boot");
		return;
	}
	for (size_t i = 0; i < c->log->nevents; i++) {
		const struct eventlog_event *e = &c->log->events[i];
		struct eventlog_variable v;

		if (e->pcr != 7 || !is_extend(e) || e == p.separator || is_verified_marker(c, e))
			continue;
		if (!measured(c, e, e->data, e->data_len)) {
			add_event(c, REASON_BOOT_UNVERIFIABLE, e, BOOT_CAT_EVENT,
				  eventlog_digests_match(e, e->data, e->data_len)
					  ? "has no digest in a bank the quote covers: its content cannot be judged"
					  : "does not match its digest: its content cannot be judged");
			continue;
		}
		/* Authority events (the db entry that verified an image) are covered by db itself. */
		if (e->type != EV_EFI_VARIABLE_DRIVER_CONFIG || eventlog_decode_variable(e, &v) < 0)
			continue;
		for (unsigned k = 0; k < 4; k++) {
			const struct boot_list *l = (const struct boot_list *)((const char *)bp + vars[k].off);
			char verdict[80];

			if (!l->set || !eventlog_variable_is(&v, vars[k].guid, vars[k].name))
				continue;
			if (e->index > p.separator->index) {
				snprintf(verdict, sizeof(verdict),
					 "is measured after PCR 7's separator: not the firmware's %s", vars[k].name);
				add_event(c, REASON_BOOT_UNVERIFIABLE, e, BOOT_CAT_EVENT, verdict);
				continue;
			}
			seen[k] = true;
			if (!allowed(c, vars[k].off, e)) {
				snprintf(verdict, sizeof(verdict), "is not an allowed %s", vars[k].name);
				add_event(c, REASON_BOOT_NOT_IN_POLICY, e, vars[k].category, verdict);
			}
		}
	}
	for (unsigned k = 0; k < 4; k++)
		if (((const struct boot_list *)((const char *)bp + vars[k].off))->set && !seen[k])
			add(c, REASON_BOOT_UNVERIFIABLE, NULL, BOOT_CAT_EVENT,
			    "PCR 7: the log has no %s variable before PCR 7's separator, which the policy judges",
			    vars[k].name);
	if (bp->secure_boot == BOOT_SECURE_ANY)
		return;
	if (p.extra) {
		add_event(c, REASON_BOOT_UNVERIFIABLE, p.extra, BOOT_CAT_SECURE_BOOT,
			  p.extra->index > p.separator->index
				  ? "is a second SecureBoot variable, measured after PCR 7's separator: the firmware measures one, before it; the Secure Boot state cannot be told"
				  : "is a second SecureBoot variable: the firmware measures one; the Secure Boot state cannot be told");
	} else if (p.secure == SB_UNKNOWN) {
		add(c, REASON_BOOT_UNVERIFIABLE, NULL, BOOT_CAT_SECURE_BOOT,
		    "PCR 7: the log has no SecureBoot variable: the Secure Boot state is unknown, and the policy requires it %s",
		    required);
	} else if ((p.secure == SB_ON) != (bp->secure_boot == BOOT_SECURE_ON)) {
		struct boot_finding *f = add(c, REASON_SECURE_BOOT_MISMATCH, p.state, BOOT_CAT_SECURE_BOOT,
					     "PCR 7: Secure Boot is %s (variable SecureBoot, event %u); the policy requires it %s",
					     p.secure == SB_ON ? "on" : "off", p.state->index, required);
		if (f) {
			snprintf(f->subject, sizeof(f->subject), "PCR 7: Secure Boot %s", p.secure == SB_ON ? "on" : "off");
			digest_text(p.state, f->digest, sizeof(f->digest));
		}
	}
}

/* True when cmdline, as LoadOptions, hashes to every digest the event carries, one of them quoted. */
static bool cmdline_is(const struct check *c, const struct eventlog_event *e, const char *cmdline)
{
	uint8_t d[LIMIT_DIGEST];

	if (!cmdline || !has_quoted_digest(c, e))
		return false;
	for (unsigned i = 0; i < e->ndigests; i++)
		if (eventlog_load_options_digest(e->digest[i].alg, cmdline, strlen(cmdline), d) < 0 ||
		    memcmp(d, e->digest[i].value, e->digest[i].alg->size) != 0)
			return false;
	return e->ndigests > 0;
}

/* PCR 9's tagged event `id` (the EFI stub's: EVENTLOG_TAG_*). */
static bool is_tagged(const struct eventlog_event *e, uint32_t id)
{
	struct eventlog_tagged t;

	return e->pcr == 9 && e->type == EV_EVENT_TAG && eventlog_decode_tagged(e, &t) == 0 && t.id == id;
}

static bool is_load_options(const struct eventlog_event *e)
{
	return is_tagged(e, EVENTLOG_TAG_LOAD_OPTIONS);
}

/*
 * PCR 9 under a command-line rule: the command line event the EFI stub logged, or NULL. The
 * stub measures the command line once, then at most one initrd (efi_convert_cmdline() runs
 * before efi_load_initrd()), whose content is not judged. Any other extend of PCR 9 cannot be
 * told from one root made after boot: a relabelled command line (its tag id or type changed,
 * its digest kept) followed by a benign command line extended and appended later would
 * otherwise pass as the only one. Each is boot_unverifiable.
 */
static const struct eventlog_event *pcr9_load_options(const struct check *c, struct check *report,
						      bool *clean)
{
	const struct eventlog *log = c->log;
	const struct eventlog_event *lo = NULL, *initrd = NULL;

	*clean = true;
	for (size_t i = 0; i < log->nevents; i++) {
		const struct eventlog_event *e = &log->events[i];
		const char *why;

		if (e->pcr != 9 || !is_extend(e) || is_verified_marker(c, e))
			continue;
		if (is_load_options(e) && !lo) {
			lo = e;
			continue;
		}
		if (is_tagged(e, EVENTLOG_TAG_LINUX_INITRD) && lo && !initrd) {
			initrd = e;
			continue;
		}
		if (is_load_options(e))
			why = "is a second command line event: the EFI stub measures one, so which one the kernel booted with cannot be told";
		else if (is_tagged(e, EVENTLOG_TAG_LINUX_INITRD))
			why = "is an initrd event where the EFI stub measures none (it measures one, after the command line): it cannot be told from a relabelled command line";
		else
			why = "is neither the command line nor the initrd the EFI stub measures: it cannot be told from a relabelled command line";
		*clean = false;
		if (report)
			add_event(report, REASON_BOOT_UNVERIFIABLE, e, BOOT_CAT_CMDLINE, why);
	}
	return lo;
}

/* PCR 9: the command line the EFI stub measured, judged in the words the agent reported. */
static void judge_cmdline(struct check *c)
{
	const struct boot_cmdline_rules *r = &c->bp->cmdline;
	const char *cmdline = c->in->cmdline;
	const struct eventlog_event *e;
	char why[LIMIT_CMDLINE + 64];
	bool exact = false, clean;
	struct boot_finding *f;

	if (!r->set)
		return;
	e = pcr9_load_options(c, c, &clean);
	if (!e) {
		add(c, REASON_BOOT_UNVERIFIABLE, NULL, BOOT_CAT_CMDLINE,
		    "PCR 9: the log has no kernel command line event (LoadOptions, logged by the kernel's EFI stub): the command line cannot be judged");
		return;
	}
	for (size_t k = 0; k < r->nexact && !exact; k++)
		exact = cmdline_is(c, e, r->exact[k]);
	/* An amendment's line adds to what passes, but keeps the policy's words (it was measured:
	 * it hashes to the event's digest). */
	for (size_t k = 0; c->amend && k < c->amend->cmdline.nexact && !exact; k++)
		exact = cmdline_is(c, e, c->amend->cmdline.exact[k]) &&
			!boot_cmdline_judge_words(r, c->amend->cmdline.exact[k], why, sizeof(why));
	if (exact)
		return;
	if (!cmdline_is(c, e, cmdline)) {
		add_event(c, REASON_BOOT_UNVERIFIABLE, e, BOOT_CAT_CMDLINE,
			  cmdline ? "does not match the command line the agent reported: it cannot be judged"
				  : "cannot be judged: the agent reported no command line");
		return;
	}
	if (!boot_cmdline_judge(r, cmdline, why, sizeof(why)))
		return;
	f = add(c, REASON_BOOT_NOT_IN_POLICY, e, BOOT_CAT_CMDLINE, "PCR 9: the kernel command line \"%s\" %s",
		cmdline, why);
	if (f) {
		snprintf(f->subject, sizeof(f->subject), "%s", cmdline);
		digest_text(e, f->digest, sizeof(f->digest));
	}
}

/*
 * H(log || cmdline || the policy's digest || the amendment's): what one judgement covers, so
 * that a change to either section judges the boot again.
 */
static int judgement_key(const struct check *c, uint8_t key[32])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t cm = c->in->cmdline ? 1 : 0, am = c->amend ? 1 : 0;
	int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
		 EVP_DigestUpdate(ctx, c->in->log, c->in->log_len) == 1 &&
		 EVP_DigestUpdate(ctx, &cm, 1) == 1 &&
		 (!cm || EVP_DigestUpdate(ctx, c->in->cmdline, strlen(c->in->cmdline) + 1) == 1) &&
		 EVP_DigestUpdate(ctx, c->bp->digest, sizeof(c->bp->digest)) == 1 &&
		 (!am || EVP_DigestUpdate(ctx, c->amend->digest, sizeof(c->amend->digest)) == 1) &&
		 EVP_DigestFinal_ex(ctx, key, NULL) == 1;

	EVP_MD_CTX_free(ctx);
	return ok ? 0 : -ENOMEM;
}

/* ---- 3. the summary ----------------------------------------------------------------------------- */

static json_t *summary(const struct check *c, const char *status, const struct pcr_set *replay)
{
	const struct eventlog *log = c->log;
	const struct eventlog_event *kernel = NULL, *cmdline_event;
	unsigned volumes = 0;
	bool uefi = false, verified, clean;
	struct pcr7 p7;
	char crtm[128] = "", text[DESC_MAX], digest[LIMIT_DIGEST_TEXT + 1];
	char kdigest[LIMIT_DIGEST_TEXT + 1], file[128] = "";
	struct api_boot_summary b = { .status = status, .has_log = true,
				      .events = (int64_t)log->nevents, .secure_boot = "unknown" };

	for (size_t i = 0; i < log->nevents; i++) {
		const struct eventlog_event *e = &log->events[i];

		uefi |= e->type >= 0x80000000u;
		if (e->pcr == 0 && (e->type == EV_EFI_PLATFORM_FIRMWARE_BLOB || e->type == EV_EFI_PLATFORM_FIRMWARE_BLOB2))
			volumes++;
		if (e->pcr == 0 && e->type == EV_S_CRTM_VERSION && e->data_len % 2 == 0)
			eventlog_utf16_to_utf8(e->data, e->data_len / 2, crtm, sizeof(crtm));
		if (e->pcr == 4 && e->type == EV_EFI_BOOT_SERVICES_APPLICATION)
			kernel = e;
	}
	read_pcr7(c, &p7);
	cmdline_event = pcr9_load_options(c, NULL, &clean);
	verified = cmdline_event && clean && cmdline_is(c, cmdline_event, c->in->cmdline);
	if (p7.separator && p7.secure != SB_UNKNOWN)
		b.secure_boot = p7.secure == SB_ON ? "on" : "off";
	if (uefi)
		snprintf(text, sizeof(text), "UEFI, %u firmware volume%s%s%s%s", volumes, volumes == 1 ? "" : "s",
			 crtm[0] ? ", S-CRTM version \"" : "", crtm, crtm[0] ? "\"" : "");
	else
		snprintf(text, sizeof(text), "BIOS (no UEFI events: the kernel is not measured)");
	/* The TPM started at a higher locality (a server's firmware, an H-CRTM at 4): PCR 0 was
	 * replayed from 00..0L, which an operator comparing PCR 0 by hand needs to know. */
	if (log->startup_locality >= 0) {
		size_t n = strlen(text);

		snprintf(text + n, sizeof(text) - n, ", TPM started at locality %d%s",
			 log->startup_locality, log->startup_locality == 4 ? " (H-CRTM)" : "");
		b.has_locality = true;
		b.startup_locality = log->startup_locality;
	}
	b.firmware = text;
	if (replay) {
		const struct pcr_bank *bank = pcr_set_bank_const(replay, TPM2_ALG_SHA256);

		if (!bank && replay->nbanks)
			bank = &replay->bank[0];
		if (bank)
			b.pcr0 = policy_digest_text(pcr_alg_name(bank->alg), bank->value[0],
						    pcr_alg_digest_size(bank->alg), digest,
						    sizeof(digest));
	}
	if (kernel) {
		struct eventlog_image im;
		const struct boot_digest *named =
			c->bp ? allowed(c, offsetof(struct boot_policy, kernels), kernel) : NULL;

		digest_text(kernel, kdigest, sizeof(kdigest));
		if (eventlog_decode_image(kernel, &im) == 0)
			eventlog_device_path_file(im.device_path, im.device_path_len, file, sizeof(file));
		b.has_kernel = true;
		b.kernel = (struct api_boot_kernel){
			.digest = kdigest, .file = file[0] ? file : NULL,
			.name = named ? named->name : NULL,
			.has_allowed = c->bp && c->bp->kernels.set, .allowed = named != NULL,
		};
	}
	if (c->in->cmdline) {
		b.cmdline = c->in->cmdline;
		b.cmdline_verified = verified;
	}
	return api_boot_summary_encode(&b);
}

static int set_summary(struct check *c, const char *status, const struct pcr_set *replay)
{
	json_t *o = c->log ? summary(c, status, replay)
			   : api_boot_summary_encode(&(struct api_boot_summary){ .status = status });

	c->out->summary = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	return c->out->summary ? 0 : -ENOMEM;
}

int boot_check(const struct boot_policy *bp, const struct boot_policy *amend,
	       const struct boot_input *in, const struct pcr_set *quoted, uint64_t boot_number,
	       struct boot_result *out)
{
	struct check c = {.bp = bp, .amend = bp ? amend : NULL, .in = in, .quoted = quoted, .out = out};
	struct eventlog log;
	struct eventlog_error err;
	struct pcr_set replay;
	int ret;

	memset(out, 0, sizeof(*out));
	memset(&log, 0, sizeof(log));
	dynbuf_init(&c.findings, BOOT_FINDINGS_MAX * sizeof(struct boot_finding));
	if (!in->log) {
		if (bp)
			add(&c, REASON_BOOT_LOG_MISSING, NULL, BOOT_CAT_EVENT,
			    "the policy judges the boot, and the agent sent no firmware event log (attestd sends /sys/kernel/security/tpm0/binary_bios_measurements)");
		ret = c.err;
		goto out;
	}
	ret = eventlog_parse(in->log, in->log_len, &log, &err);
	if (ret == -ENOMEM)
		goto out;
	if (ret) {
		add(&c, REASON_BOOT_LOG_CORRUPT, NULL, BOOT_CAT_EVENT, "event %u at byte %zu: %s", err.index,
		    err.offset, err.msg);
		ret = c.err ? c.err : set_summary(&c, "corrupt", NULL);
		goto out;
	}
	c.log = &log;
	if (eventlog_replay(&log, &replay) < 0) {
		/* Not reached for a log eventlog_parse() took; if it were, the log is the cause. */
		add(&c, REASON_BOOT_LOG_CORRUPT, NULL, BOOT_CAT_EVENT,
		    "the log parses, but its banks cannot be replayed");
		ret = c.err ? c.err : set_summary(&c, "corrupt", NULL);
		goto out;
	}
	if (!check_replay(&c, &replay, quoted)) {
		ret = c.err ? c.err : set_summary(&c, "mismatch", &replay);
		goto out;
	}
	if (bp) {
		ret = judgement_key(&c, out->key);
		if (ret)
			goto out;
		if (!in->judged || in->judged_boot != boot_number || memcmp(in->judged_key, out->key, 32) != 0) {
			out->judged = true;
			judge_firmware(&c);
			judge_kernel(&c);
			judge_secure_boot(&c);
			judge_cmdline(&c);
		}
	}
	if (c.suppressed) {
		struct boot_finding *last = &out->findings[out->nfindings - 1];
		size_t n = strlen(last->detail);

		snprintf(last->detail + n, sizeof(last->detail) - n, " (and %llu more boot findings not listed)",
			 (unsigned long long)c.suppressed);
	}
	ret = c.err ? c.err : set_summary(&c, "replays", &replay);
out:
	eventlog_release(&log);
	if (ret) {
		dynbuf_release(&c.findings);
		free(out->summary);
		memset(out, 0, sizeof(*out));
		return ret;
	}
	/* out->findings points into the dynbuf: hand the bytes over */
	out->findings = (struct boot_finding *)dynbuf_take(&c.findings, NULL);
	if (out->nfindings && !out->findings) {
		free(out->summary);
		memset(out, 0, sizeof(*out));
		return -ENOMEM;
	}
	return 0;
}

void boot_result_release(struct boot_result *r)
{
	if (!r)
		return;
	free(r->findings);
	free(r->summary);
	memset(r, 0, sizeof(*r));
}
