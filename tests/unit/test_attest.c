/*
 * The verifier's decision logic (verifier/decision/attest.c) on quotes made in software (tests/lib/softtpm)
 * over hand-built ima-ng lists: trusted rounds, incremental rounds, prefix matches, and every
 * way the evidence can lie. Each case builds its own machine and boot (attested_boot()), so a
 * case that fails leaves nothing behind for the next.
 */
#include "verifier/decision/attest.h"
#include "tests/unit/check.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/encoding.h"
#include "proto/eventlog.h"
#include "tests/lib/softtpm.h"
#include "tests/unit/testdata.h"
#include "verifier/policy/policy.h"

struct list {
	uint8_t buf[16384];
	size_t len;
	size_t entry_end[64];
	unsigned n;
};

/* Appends an ima-ng entry; violation: zero template hash (the kernel's ToMToU record). */
static void add_entry(struct list *l, const char *alg, const uint8_t *digest, size_t dlen,
		      const char *path, bool violation)
{
	ssize_t n = softtpm_ima_ng_entry(l->buf + l->len, sizeof(l->buf) - l->len, alg, digest,
					 dlen, path, strlen(path), violation);

	if (n < 0)
		abort(); /* the test's own buffer is too small: fix the test */
	l->len += (size_t)n;
	l->entry_end[l->n++] = l->len;
}

/* Appends an ima-sig entry of path with the sha256 digest d and the signature field sig. */
static void add_signed(struct list *l, const char *path, const uint8_t *d, const uint8_t *sig,
		       size_t sig_len)
{
	ssize_t n = softtpm_ima_sig_entry(l->buf + l->len, sizeof(l->buf) - l->len, "sha256", d, 32,
					  path, strlen(path), sig, sig_len);

	if (n < 0)
		abort(); /* the test's own buffer is too small: fix the test */
	l->len += (size_t)n;
	l->entry_end[l->n++] = l->len;
}

static void file_digest(const char *path, uint8_t out[32])
{
	SHA256((const uint8_t *)path, strlen(path), out); /* "content" = the path, for tests */
}

static void add_file(struct list *l, const char *path)
{
	uint8_t d[32];

	file_digest(path, d);
	add_entry(l, "sha256", d, 32, path, false);
}

struct machine {
	EVP_PKEY *ak;
	struct pcr_set pcrs;       /* sha1 + sha256, PCR 0-10 */
	struct replay_state pcr10; /* what the TPM holds in PCR 10 */
	struct replay_ctx *rc;
	struct imalog *log;
	struct softtpm_clock clk;
	struct list list;
	unsigned extended;         /* entries of list extended into pcr10 */
};

/* boot_aggregate as the kernel computes it with ima_hash=sha1: sha1 over PCR 0-7. */
static void sha1_aggregate(const struct machine *m, uint8_t out[20])
{
	const struct pcr_bank *b1 = pcr_set_bank_const(&m->pcrs, TPM2_ALG_SHA1);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
	for (unsigned i = 0; i < 8; i++)
		EVP_DigestUpdate(ctx, b1->value[i], 20);
	EVP_DigestFinal_ex(ctx, out, NULL);
	EVP_MD_CTX_free(ctx);
}

static void machine_boot(struct machine *m, uint8_t firmware_seed)
{
	memset(&m->pcrs, 0, sizeof(m->pcrs));
	struct pcr_bank *b1 = pcr_set_add_bank(&m->pcrs, TPM2_ALG_SHA1);
	struct pcr_bank *b2 = pcr_set_add_bank(&m->pcrs, TPM2_ALG_SHA256);
	for (unsigned i = 0; i <= 10; i++) {
		b1->mask |= 1u << i;
		b2->mask |= 1u << i;
		if (i < 10) {
			memset(b1->value[i], firmware_seed + (int)i, 20);
			memset(b2->value[i], firmware_seed + 0x40 + (int)i, 32);
		}
	}
	replay_state_init(&m->pcr10, REPLAY_SHA1 | REPLAY_SHA256);
	m->list.len = 0;
	m->list.n = 0;
	m->extended = 0;
	m->clk.reset_count++;
	m->clk.clock += 1000;
	m->clk.safe = 1;

	/* boot_aggregate: sha1 over PCR 0-7, recorded as d-ng "sha1:" (ima_hash=sha1). */
	uint8_t agg[20];
	sha1_aggregate(m, agg);
	add_entry(&m->list, "sha1", agg, 20, "boot_aggregate", false);
}

/* A boot where IMA found no TPM at init: the list starts with a zero boot_aggregate. */
static void machine_boot_bypass(struct machine *m, uint8_t firmware_seed)
{
	static const uint8_t zero[20];

	machine_boot(m, firmware_seed);
	m->list.len = 0;
	m->list.n = 0;
	add_entry(&m->list, "sha1", zero, 20, "boot_aggregate", false);
}

/* Extends PCR 10 with the list's entries up to `upto`, as the kernel would. */
static void machine_extend(struct machine *m, unsigned upto)
{
	struct ima_entry e;
	size_t start = m->extended ? m->list.entry_end[m->extended - 1] : 0;

	imalog_reset(m->log, m->list.buf + start, m->list.entry_end[upto - 1] - start, m->extended);
	while (imalog_next(m->log, &e, NULL) == 1)
		replay_extend(m->rc, &m->pcr10, &e);
	m->extended = upto;
	struct pcr_bank *b1 = pcr_set_bank(&m->pcrs, TPM2_ALG_SHA1);
	struct pcr_bank *b2 = pcr_set_bank(&m->pcrs, TPM2_ALG_SHA256);
	memcpy(b1->value[10], m->pcr10.sha1, 20);
	memcpy(b2->value[10], m->pcr10.sha256, 32);
}

struct round {
	struct evidence ev;
	uint8_t attest[LIMIT_ATTEST], sig[LIMIT_SIGNATURE];
	uint8_t nonce[32];
	struct attest_result res;
};

/* Unreviewed violations of prev's boot, as round.c reads them from the store. */
static uint64_t round_open_violations, round_open_prev_boot;
static const struct policy *round_amendment;
/* The versions of the policy and amendment a round is judged by (NULL: unversioned). */
static const struct judged_versions *round_judged_by;
/* The agent's log_deleted: records its kernel deleted (0: none, not sent). */
static uint64_t round_log_deleted;
/* The agent's log_more: it read more entries than it sends. */
static bool round_log_more;

/* Quotes and sends entries [from, to) of the list; evaluates against prev. */
static int run_round(struct machine *m, struct round *r, unsigned from, unsigned to,
		     const struct boot_state *prev, const struct policy *pol,
		     const uint8_t *quote_nonce)
{
	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < 32; i++)
		r->nonce[i] = (uint8_t)(rand() & 0xff);
	size_t start = from ? m->list.entry_end[from - 1] : 0;
	size_t end = to ? m->list.entry_end[to - 1] : 0;
	memcpy(r->ev.nonce, r->nonce, 32);
	r->ev.nonce_len = 32;
	r->ev.pcrs = m->pcrs;
	r->ev.log = m->list.buf + start;
	r->ev.log_len = end - start;
	r->ev.log_offset = from;
	r->ev.log_deleted = round_log_deleted;
	r->ev.log_more = round_log_more;
	if (softtpm_quote(m->ak, quote_nonce ? quote_nonce : r->nonce, 32, &m->pcrs, &m->clk,
			  r->attest, sizeof(r->attest), &r->ev.attest_len, r->sig, sizeof(r->sig),
			  &r->ev.signature_len))
		return -1;
	r->ev.attest = r->attest;
	r->ev.signature = r->sig;
	struct pcr_set requested = m->pcrs;
	struct attest_request req = {.ak = m->ak, .nonce = r->nonce, .nonce_len = 32,
				     .requested = &requested, .policy = pol, .prev = prev, .ev = &r->ev,
				     .open_violations = round_open_violations,
				     .open_violations_prev_boot = round_open_prev_boot,
				     .amendment = round_amendment, .judged_by = round_judged_by};
	return attest_evaluate(&req, &r->res);
}

static bool has_reason(const struct attest_result *res, const char *code)
{
	for (unsigned i = 0; i < res->verdict.nreasons; i++)
		if (strcmp(res->verdict.reason[i].code, code) == 0)
			return true;
	return false;
}

static struct policy *make_policy(const char *violations)
{
	static const char *paths[] = {"/bin/a", "/bin/b", "/bin/c", "/usr/bin/tool"};
	struct policy *p = policy_new();
	uint8_t d[32];

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		file_digest(paths[i], d);
		policy_add_digest(p, paths[i], TPM2_ALG_SHA256, d, 32);
	}
	if (violations) {
		char *json = policy_to_json(p), err[128];
		/* flip the violations mode through the JSON form, as an operator would */
		char *pos = json ? strstr(json, "\"fail\"") : NULL;
		struct policy *q = NULL;
		if (pos) {
			size_t n = strlen(json);
			char *buf = malloc(n + 8);
			size_t pre = (size_t)(pos - json);
			memcpy(buf, json, pre);
			snprintf(buf + pre, n + 8 - pre, "\"ignore\"%s", pos + 6);
			q = policy_load(buf, strlen(buf), err, sizeof(err));
			free(buf);
		}
		free(json);
		policy_free(p);
		return q;
	}
	return p;
}

/*
 * The first round of a new boot carrying boot_aggregate, then `copies` entries of one file
 * /opt/flood, then `distinct` files /opt/d/N, none of them in pol, PCR 10 extended over all of
 * them (a list far larger than struct list holds).
 */
static int flood_round(struct machine *m, struct round *r, const struct policy *pol,
		       size_t copies, size_t distinct)
{
	size_t one = softtpm_ima_ng_size("sha256", 32, 40), cap = m->list.len + (copies + distinct) * one;
	uint8_t *buf = malloc(cap), d[32];
	struct ima_entry e;
	size_t len = m->list.len;
	char path[40];
	int ret = -1;

	if (!buf)
		return -1;
	memcpy(buf, m->list.buf, len);
	for (size_t i = 0; i < copies + distinct; i++) {
		ssize_t n;

		if (i < copies)
			snprintf(path, sizeof(path), "/opt/flood");
		else
			snprintf(path, sizeof(path), "/opt/d/%zu", i - copies);
		file_digest(path, d);
		n = softtpm_ima_ng_entry(buf + len, cap - len, "sha256", d, 32, path, strlen(path),
					 false);
		if (n < 0)
			goto out;
		len += (size_t)n;
	}
	replay_state_init(&m->pcr10, REPLAY_SHA1 | REPLAY_SHA256);
	imalog_reset(m->log, buf, len, 0);
	while (imalog_next(m->log, &e, NULL) == 1)
		replay_extend(m->rc, &m->pcr10, &e);
	memcpy(pcr_set_bank(&m->pcrs, TPM2_ALG_SHA1)->value[10], m->pcr10.sha1, 20);
	memcpy(pcr_set_bank(&m->pcrs, TPM2_ALG_SHA256)->value[10], m->pcr10.sha256, 32);
	memset(r, 0, sizeof(*r));
	memset(r->nonce, 0x42, 32);
	memcpy(r->ev.nonce, r->nonce, 32);
	r->ev.nonce_len = 32;
	r->ev.pcrs = m->pcrs;
	r->ev.log = buf;
	r->ev.log_len = len;
	if (softtpm_quote(m->ak, r->nonce, 32, &m->pcrs, &m->clk, r->attest, sizeof(r->attest),
			  &r->ev.attest_len, r->sig, sizeof(r->sig), &r->ev.signature_len))
		goto out;
	r->ev.attest = r->attest;
	r->ev.signature = r->sig;
	{
		struct pcr_set requested = m->pcrs;
		struct attest_request req = {.ak = m->ak, .nonce = r->nonce, .nonce_len = 32,
					     .requested = &requested, .policy = pol, .ev = &r->ev};

		ret = attest_evaluate(&req, &r->res);
	}
out:
	r->ev.log = NULL;
	free(buf);
	return ret;
}

static const struct attest_violation *violation_of(const struct attest_result *res,
						   const char *path, const char *reason)
{
	for (size_t i = 0; i < res->nviolations; i++)
		if (res->violations[i].path_len == strlen(path) &&
		    !memcmp(res->violations[i].path, path, strlen(path)) &&
		    !strcmp(reason_name(res->violations[i].reason), reason))
			return &res->violations[i];
	return NULL;
}


/* ---- the firmware event log in a round (boot_check.c through attest.c) ---------------------- */

/* A TPM that booted as the recorded OVMF log says: PCR 0-9 of its replay, PCR 10 as m holds it. */
static void boot_pcrs_of(const struct blob *log, struct pcr_set *q)
{
	struct eventlog l;
	struct eventlog_error err;
	struct pcr_set r;

	memset(q, 0, sizeof(*q));
	if (eventlog_parse(log->p, log->n, &l, &err) || eventlog_replay(&l, &r))
		abort(); /* the recorded log is the test's input */
	for (unsigned b = 0; b < r.nbanks; b++) {
		struct pcr_bank *qb = pcr_set_add_bank(q, r.bank[b].alg);

		*qb = r.bank[b];
		qb->mask = 0x7ff;
		memset(qb->value[10], 0, sizeof(qb->value[10]));
	}
	eventlog_release(&l);
}

/* One round of m (PCRs from the boot log, list entries [from, to)) with the boot log `in`. */
static int boot_round(struct machine *m, struct round *r, unsigned from, unsigned to,
		      uint64_t log_offset, const struct boot_state *prev, const struct policy *pol,
		      const struct boot_input *in, uint64_t open_violations)
{
	size_t start = from ? m->list.entry_end[from - 1] : 0;
	size_t end = to ? m->list.entry_end[to - 1] : 0;
	struct pcr_set requested;
	struct attest_request req;

	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < 32; i++)
		r->nonce[i] = (uint8_t)(rand() & 0xff);
	memcpy(r->ev.nonce, r->nonce, 32);
	r->ev.nonce_len = 32;
	r->ev.pcrs = m->pcrs;
	r->ev.log = end > start ? m->list.buf + start : NULL;
	r->ev.log_len = end - start;
	r->ev.log_offset = log_offset;
	m->clk.clock += 10;
	if (softtpm_quote(m->ak, r->nonce, 32, &m->pcrs, &m->clk, r->attest, sizeof(r->attest),
			  &r->ev.attest_len, r->sig, sizeof(r->sig), &r->ev.signature_len))
		return -1;
	r->ev.attest = r->attest;
	r->ev.signature = r->sig;
	requested = m->pcrs;
	memset(&req, 0, sizeof(req));
	req.ak = m->ak;
	req.nonce = r->nonce;
	req.nonce_len = 32;
	req.requested = &requested;
	req.policy = pol;
	req.prev = prev;
	req.ev = &r->ev;
	req.boot = in;
	req.open_violations = open_violations;
	req.open_violations_prev_boot = prev && prev->started ? open_violations : 0;
	return attest_evaluate(&req, &r->res);
}

/*
 * Shared by every case and never changed by one: the machine's AK, another AK, a strict policy
 * (make_policy(NULL)) and a lenient one (violations ignored). Each case builds its own machine
 * (machine_init()) and boot, so that a failing case leaves nothing behind for the next.
 */
static EVP_PKEY *ak, *other_ak;
static struct policy *pol, *lenient;
static const uint8_t zero[32];

static void machine_init(struct machine *m)
{
	memset(m, 0, sizeof(*m));
	m->ak = ak;
	m->rc = replay_ctx_new(REPLAY_SHA1 | REPLAY_SHA256);
	m->log = imalog_new();
}

static void machine_release(struct machine *m)
{
	replay_ctx_free(m->rc);
	imalog_free(m->log);
}

/*
 * The boot most cases start from: boot_aggregate, then /bin/a, /bin/b, /tmp/evil (which pol
 * does not list), /bin/c, /usr/bin/tool; the first n entries listed, extended into PCR 10 and
 * attested by one round against pol; *st is the state after it (next entry n).
 */
static void attested_boot(struct machine *m, struct boot_state *st, unsigned n)
{
	static const char *const files[] = {"/bin/a", "/bin/b", "/tmp/evil", "/bin/c",
					    "/usr/bin/tool"};
	struct boot_state none = {0};
	struct round r;

	machine_boot(m, 1);
	for (unsigned i = 1; i < n; i++)
		add_file(&m->list, files[i - 1]);
	machine_extend(m, n);
	CHECK(run_round(m, &r, 0, n, &none, pol, NULL) == 0 && r.res.next.next_entry == n &&
		      r.res.next.boot_number == 1,
	      "a boot of %u entries attested", n);
	*st = r.res.next;
	attest_result_release(&r.res);
}

/*
 * The first round of a boot judges its firmware log even when the evidence starts at the wrong
 * entry (log_offset_mismatch): round.c stores the judgement's key with the boot, so the next
 * round does not judge it again. The findings must be the round's violations, stored with it:
 * before, they were dropped, and the next round of the same boot (an unlisted kernel) was
 * trusted.
 */
static void test_boot_findings_survive_a_log_offset_mismatch(void)
{
	struct machine mach, *m = &mach;
	struct blob ovmf = load("guest-ovmf.bin");
	const char *pj = "{\"version\": 1, \"digests\": {}, \"excludes\": [\".*\"], \"boot\":"
			 " {\"kernels\": [\"sha256:1111111111111111111111111111111111111111111111111111111111111111\"]}}";
	char err[256] = "";
	struct policy *boot_pol = policy_load(pj, strlen(pj), err, sizeof(err));
	struct boot_input in = {.log = ovmf.p, .log_len = ovmf.n, .cmdline = NULL};
	struct boot_state prev;
	struct round r;
	const struct attest_violation *v;
	size_t nfindings;

	machine_init(m);
	CHECK(boot_pol != NULL, "a policy that allows another kernel (%s)", err);
	machine_boot(m, 9);
	boot_pcrs_of(&ovmf, &m->pcrs);
	{
		/* boot_aggregate of the log's PCR 0-7 (sha1), as IMA records it at boot */
		uint8_t agg[20];
		EVP_MD_CTX *ctx = EVP_MD_CTX_new();
		const struct pcr_bank *b1 = pcr_set_bank_const(&m->pcrs, TPM2_ALG_SHA1);

		EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
		for (unsigned i = 0; i < 8; i++)
			EVP_DigestUpdate(ctx, b1->value[i], 20);
		EVP_DigestFinal_ex(ctx, agg, NULL);
		EVP_MD_CTX_free(ctx);
		m->list.len = 0;
		m->list.n = 0;
		add_entry(&m->list, "sha1", agg, 20, "boot_aggregate", false);
	}
	replay_state_init(&m->pcr10, REPLAY_SHA1 | REPLAY_SHA256);
	m->extended = 0;
	machine_extend(m, 1);

	/* round 1: a new boot whose evidence claims to start at entry 7 */
	CHECK(boot_round(m, &r, 0, 1, 7, NULL, boot_pol, &in, 0) == 0, "round 1 evaluates");
	nfindings = r.res.boot.nfindings;
	CHECK(!r.res.verdict.trusted && has_reason(&r.res, "log_offset_mismatch") &&
		      has_reason(&r.res, "boot_not_in_policy") && r.res.boot.judged && nfindings == 1,
	      "round 1: the boot is judged (an unlisted kernel) and the offset is wrong");
	v = r.res.nviolations ? &r.res.violations[0] : NULL;
	CHECK(r.res.nviolations == nfindings && v && v->reason == REASON_BOOT_NOT_IN_POLICY &&
		      !strcmp(v->template_name, BOOT_CAT_KERNEL) && v->entry == 10,
	      "its finding is a violation of the round, to be stored with it (%zu violations)",
	      r.res.nviolations);
	CHECK(r.res.verdict.next_offset == 0, "the agent is told to send from entry 0");
	prev = r.res.next;
	in.judged = true;
	in.judged_boot = r.res.next.boot_number;
	memcpy(in.judged_key, r.res.boot.key, sizeof(in.judged_key));
	attest_result_release(&r.res);

	/* round 2: from entry 0, the boot not judged again; its stored finding awaits review */
	CHECK(boot_round(m, &r, 0, 1, 0, &prev, boot_pol, &in, nfindings) == 0, "round 2 evaluates");
	CHECK(!r.res.boot.judged && !r.res.verdict.trusted && has_reason(&r.res, "open_violations"),
	      "round 2: not judged again, untrusted while the finding is open (%s)",
	      r.res.verdict.nreasons ? r.res.verdict.reason[0].code : "trusted");
	attest_result_release(&r.res);
	policy_free(boot_pol);
	free(ovmf.p);
	machine_release(m);
}

static struct judged_versions versions(const char *policy, int64_t pv, int64_t av)
{
	struct judged_versions j = {.known = true, .policy_version = pv, .amendment_version = av};

	snprintf(j.policy, sizeof(j.policy), "%s", policy);
	return j;
}

/*
 * A policy change re-judges what already ran: entries judged by other versions are judged
 * again from entry 0 under the new ones, whether the change tightens (a file allowed before is
 * not any more) or widens (a file refused before is allowed now).
 */
static void test_a_policy_change_rejudges_the_whole_boot(void)
{
	struct machine mach, *m = &mach;
	const char *empty_json = "{\"version\": 1, \"digests\": {}}";
	char err[128] = "", *wide_json;
	struct policy *empty = policy_load(empty_json, strlen(empty_json), err, sizeof(err));
	struct policy *wide = NULL;
	struct judged_versions v1 = versions("default", 1, 0), v2 = versions("default", 2, 0);
	struct judged_versions other = versions("measured", 1, 0), amended = versions("default", 1, 1);
	struct boot_state st, st1;
	struct round r;
	uint8_t d[32];

	machine_init(m);
	CHECK(empty != NULL, "an empty policy loads (%s)", err);
	machine_boot(m, 4);
	file_digest("/bin/a", d);
	add_entry(&m->list, "sha256", d, 32, "/bin/a", false);
	machine_extend(m, 2);
	round_judged_by = &v1;
	CHECK(run_round(m, &r, 0, 2, NULL, pol, NULL) == 0 && r.res.verdict.trusted &&
		      r.res.next.next_entry == 2 && judged_versions_equal(&r.res.next.judged, &v1),
	      "version 1 allows /bin/a: trusted, the state judged by version 1");
	st = r.res.next;
	attest_result_release(&r.res);
	CHECK(!attest_needs_rejudgement(&st, &v1) && attest_needs_rejudgement(&st, &v2) &&
		      attest_needs_rejudgement(&st, &other) && attest_needs_rejudgement(&st, &amended),
	      "another policy version, another policy, another amendment version: judged again");
	CHECK(run_round(m, &r, 2, 2, &st, pol, NULL) == 0 && r.res.verdict.trusted &&
		      !r.res.rejudged && r.res.next.next_entry == 2,
	      "the same versions: the round goes on from entry 2");
	attest_result_release(&r.res);

	/* Tightening: version 2 lists nothing. */
	round_judged_by = &v2;
	CHECK(run_round(m, &r, 2, 2, &st, empty, NULL) == 0 && !r.res.verdict.trusted &&
		      has_reason(&r.res, "log_offset_mismatch") && r.res.verdict.next_offset == 0 &&
		      r.res.rejudged && r.res.next.next_entry == 0 &&
		      r.res.next.boot_number == st.boot_number,
	      "version 2, evidence from entry 2: not judged; the agent is told to send from entry 0");
	st1 = r.res.next;
	attest_result_release(&r.res);
	CHECK(run_round(m, &r, 0, 2, &st1, empty, NULL) == 0 && !r.res.verdict.trusted &&
		      has_reason(&r.res, "not_in_allowlist") && r.res.nviolations == 1 &&
		      r.res.next.next_entry == 2 && judged_versions_equal(&r.res.next.judged, &v2),
	      "tightening: the whole boot judged by version 2, /bin/a no longer allowed");
	attest_result_release(&r.res);
	CHECK(run_round(m, &r, 0, 2, &st, empty, NULL) == 0 && !r.res.verdict.trusted &&
		      r.res.rejudged && has_reason(&r.res, "not_in_allowlist"),
	      "tightening, straight from the state judged by version 1 (an agent asked for entry 0)");
	attest_result_release(&r.res);

	/* Widening: /opt/x refused by version 1, allowed by version 2. */
	file_digest("/opt/x", d);
	add_entry(&m->list, "sha256", d, 32, "/opt/x", false);
	machine_extend(m, 3);
	round_judged_by = &v1;
	CHECK(run_round(m, &r, 2, 3, &st, pol, NULL) == 0 && !r.res.verdict.trusted &&
		      has_reason(&r.res, "not_in_allowlist"),
	      "version 1 does not list /opt/x: untrusted");
	st = r.res.next;
	attest_result_release(&r.res);
	wide_json = policy_to_json(pol);
	if (wide_json) {
		struct policy *p = policy_load(wide_json, strlen(wide_json), err, sizeof(err));

		if (p)
			policy_add_digest(p, "/opt/x", TPM2_ALG_SHA256, d, 32);
		wide = p;
	}
	round_judged_by = &v2;
	CHECK(wide && run_round(m, &r, 0, 3, &st, wide, NULL) == 0 && r.res.verdict.trusted &&
		      r.res.rejudged && r.res.nviolations == 0 && r.res.next.next_entry == 3,
	      "widening: the whole boot judged by version 2, /opt/x allowed: nothing refused");
	attest_result_release(&r.res);

	/* Unversioned judgement (attestctl evaluate) and an old state nobody recorded. */
	round_judged_by = NULL;
	CHECK(run_round(m, &r, 3, 3, &st, pol, NULL) == 0 && !r.res.rejudged,
	      "no versions given: nothing judged again");
	attest_result_release(&r.res);
	st.judged.known = false;
	CHECK(attest_needs_rejudgement(&st, &v1), "a state judged by unrecorded versions: judged again");
	st.next_entry = 0;
	CHECK(!attest_needs_rejudgement(&st, &v2), "a state that folded no entry: nothing to judge");
	free(wide_json);
	policy_free(wide);
	policy_free(empty);
	machine_release(m);
}

static void test_first_round_of_a_boot(void)
{
	struct machine m;
	struct round r;
	struct boot_state st = {0};

	machine_init(&m);
	/* First round of a boot: boot_aggregate and two allowed files. */
	machine_boot(&m, 1);
	add_file(&m.list, "/bin/a");
	add_file(&m.list, "/bin/b");
	machine_extend(&m, 3);
	CHECK(run_round(&m, &r, 0, 3, &st, pol, NULL) == 0, "round 1 evaluates");
	CHECK(r.res.verdict.trusted && r.res.verdict.nreasons == 0, "round 1 trusted (%s)",
	      r.res.verdict.nreasons ? r.res.verdict.reason[0].code : "");
	CHECK(r.res.next.next_entry == 3 && r.res.verdict.next_offset == 3, "round 1 consumed 3 entries");
	CHECK(r.res.next.boot_number == 1 && !r.res.new_boot, "first boot is boot 1");
	st = r.res.next;
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_incremental_round_unknown_program(void)
{
	struct machine m;
	struct round r;
	struct boot_state st = {0};

	machine_init(&m);
	attested_boot(&m, &st, 3);
	/* Incremental: only the new entry is sent; an unknown program. */
	add_file(&m.list, "/tmp/evil");
	machine_extend(&m, 4);
	CHECK(run_round(&m, &r, 3, 4, &st, pol, NULL) == 0, "round 2 evaluates");
	CHECK(!r.res.verdict.trusted && has_reason(&r.res, "not_in_allowlist"), "unknown program untrusted");
	CHECK(r.res.nviolations == 1 && strcmp(r.res.violations[0].path, "/tmp/evil") == 0 &&
	      r.res.violations[0].entry == 3 && strncmp(r.res.violations[0].digest, "sha256:", 7) == 0 &&
	      strcmp(r.res.violations[0].template_name, "ima-ng") == 0,
	      "violation names path, entry, digest, template");
	CHECK(r.res.next.next_entry == 4, "replay still advances past a policy failure");
	st = r.res.next;
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_a_prefix_of_the_list_quoted(void)
{
	struct machine m;
	struct round r;
	struct boot_state st = {0};

	machine_init(&m);
	attested_boot(&m, &st, 4);
	/* Prefix: two new entries read, PCR extended only for the first. */
	add_file(&m.list, "/bin/c");
	add_file(&m.list, "/usr/bin/tool");
	machine_extend(&m, 5);
	CHECK(run_round(&m, &r, 4, 6, &st, pol, NULL) == 0 && r.res.verdict.trusted,
	      "prefix match trusted");
	CHECK(r.res.next.next_entry == 5, "unmatched tail left for the next round (next %llu)",
	      (unsigned long long)r.res.next.next_entry);
	st = r.res.next;
	attest_result_release(&r.res);
	machine_extend(&m, 6);
	CHECK(run_round(&m, &r, 5, 6, &st, pol, NULL) == 0 && r.res.verdict.trusted &&
	      r.res.next.next_entry == 6, "tail attested next round");
	st = r.res.next;
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_nothing_new(void)
{
	struct machine m;
	struct round r;
	struct boot_state st = {0};

	machine_init(&m);
	attested_boot(&m, &st, 6);
	/* Nothing new: the stored state alone must match. */
	CHECK(run_round(&m, &r, 6, 6, &st, pol, NULL) == 0 && r.res.verdict.trusted,
	      "round without new entries trusted");
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_open_violations(void)
{
	struct machine m;
	struct round r;
	struct boot_state st = {0};

	machine_init(&m);
	attested_boot(&m, &st, 6);
	/* Violations of this boot not yet reviewed keep a clean round untrusted. */
	round_open_violations = 2;
	CHECK(run_round(&m, &r, 6, 6, &st, pol, NULL) == 0 && !r.res.verdict.trusted &&
	      r.res.verdict.nreasons == 1 && has_reason(&r.res, "open_violations") &&
	      r.res.next.next_entry == 6 && r.res.nviolations == 0,
	      "open violations of this boot: untrusted open_violations, nothing new recorded");
	attest_result_release(&r.res);
	CHECK(run_round(&m, &r, 6, 6, &st, pol, (const uint8_t[32]){9}) == 0 &&
	      has_reason(&r.res, "nonce_mismatch") && !has_reason(&r.res, "open_violations"),
	      "an untrusted round names its own reasons, not open_violations");
	attest_result_release(&r.res);
	round_open_violations = 0;
	machine_release(&m);
}

static void test_stale_nonce_other_ak_lying_pcr(void)
{
	struct machine m;
	struct round r;
	struct boot_state st = {0};

	machine_init(&m);
	attested_boot(&m, &st, 6);
	/* A quote over another nonce, another AK, a lying PCR value. */
	uint8_t stale[32] = {1};
	CHECK(run_round(&m, &r, 6, 6, &st, pol, stale) == 0 && has_reason(&r.res, "nonce_mismatch") &&
	      memcmp(&r.res.next, &st, sizeof(st)) == 0, "stale nonce: nonce_mismatch, state unchanged");
	attest_result_release(&r.res);
	EVP_PKEY *real = m.ak;
	m.ak = other_ak;
	struct round r2;
	memset(&r2, 0, sizeof(r2));
	run_round(&m, &r2, 6, 6, &st, pol, NULL); /* signed by other_ak ... */
	struct attest_request req = {.ak = real, .nonce = r2.nonce, .nonce_len = 32,
				     .requested = &m.pcrs, .policy = pol, .prev = &st, .ev = &r2.ev};
	attest_result_release(&r2.res);
	CHECK(attest_evaluate(&req, &r2.res) == 0 && has_reason(&r2.res, "bad_signature"),
	      "quote by another AK: bad_signature");
	attest_result_release(&r2.res);
	m.ak = real;
	CHECK(run_round(&m, &r, 6, 6, &st, pol, NULL) == 0, "setup for lying PCR");
	attest_result_release(&r.res);
	r.ev.pcrs.bank[1].value[10][0] ^= 1; /* agent reports another value than it quoted */
	req = (struct attest_request){.ak = m.ak, .nonce = r.nonce, .nonce_len = 32,
				      .requested = &m.pcrs, .policy = pol, .prev = &st, .ev = &r.ev};
	CHECK(attest_evaluate(&req, &r.res) == 0 && has_reason(&r.res, "pcr_digest_mismatch"),
	      "reported PCR differs from quoted: pcr_digest_mismatch");
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_edited_entry(void)
{
	struct machine m;
	struct round r;
	struct boot_state st = {0};

	machine_init(&m);
	attested_boot(&m, &st, 6);
	/* An edited entry whose template hash was recomputed: the replay exposes it. */
	{
		struct machine f2 = m;
		struct boot_state s5;
		/* the stored state after entry 5, rebuilt by replaying entries 0-4 */
		replay_state_init(&s5.replay, REPLAY_SHA1 | REPLAY_SHA256);
		struct ima_entry e;
		imalog_reset(m.log, m.list.buf, m.list.entry_end[4], 0);
		while (imalog_next(m.log, &e, NULL) == 1)
			replay_extend(m.rc, &s5.replay, &e);
		s5 = (struct boot_state){.started = true, .reset_count = st.reset_count,
					 .restart_count = st.restart_count, .clock = st.clock,
					 .boot_number = st.boot_number, .next_entry = 5,
					 .replay = s5.replay};
		f2.list.len = m.list.entry_end[4];
		f2.list.n = 5;
		add_file(&f2.list, "/bin/a");
		CHECK(run_round(&f2, &r, 5, 6, &s5, pol, NULL) == 0 && has_reason(&r.res, "pcr_mismatch") &&
		      r.res.next.next_entry == 5, "edited entry with recomputed hash: pcr_mismatch");
		attest_result_release(&r.res);
		/* An edit without recomputing the hash is a corrupt list. */
		f2.list.buf[f2.list.len - 3] ^= 0x20;
		CHECK(run_round(&f2, &r, 5, 6, &s5, pol, NULL) == 0 && has_reason(&r.res, "log_corrupt") &&
		      has_reason(&r.res, "pcr_mismatch"), "edited entry with stale hash: log_corrupt");
		attest_result_release(&r.res);
	}
	machine_release(&m);
}

static void test_log_offset_mismatch(void)
{
	struct machine m;
	struct round r;
	struct boot_state st = {0};

	machine_init(&m);
	attested_boot(&m, &st, 6);
	/* Evidence starting at another offset than the verifier expects. */
	CHECK(run_round(&m, &r, 5, 6, &st, pol, NULL) == 0 && has_reason(&r.res, "log_offset_mismatch"),
	      "resent old entries: log_offset_mismatch");
	attest_result_release(&r.res);
	machine_release(&m);
}

static const char *reason_detail(const struct attest_result *res, const char *code)
{
	for (unsigned i = 0; i < res->verdict.nreasons; i++)
		if (strcmp(res->verdict.reason[i].code, code) == 0)
			return res->verdict.reason[i].detail;
	return "";
}

/*
 * Records deleted from the machine's kernel memory (proto/evidence.h, "Deleted records"):
 * evidence that starts after the entry the verifier needs, saying that entry was deleted, is
 * untrusted log_records_deleted with the stored replay kept, whatever the entries sent; the
 * same entries served from the agent's export are judged as ever. A verifier without the
 * boot's replay (a new one), and one judging the boot again after a policy change, say so too.
 */
static void test_log_records_deleted(void)
{
	struct judged_versions v1 = versions("default", 1, 0), v2 = versions("default", 2, 0);
	struct boot_state st = {0}, none = {0};
	struct machine m;
	struct round r;

	machine_init(&m);
	round_judged_by = &v1;
	attested_boot(&m, &st, 3);
	add_file(&m.list, "/bin/c");
	add_file(&m.list, "/bin/a");
	machine_extend(&m, 5);

	/* The kernel deleted entries 0-3 and the agent has no export: it sends from entry 4. */
	round_log_deleted = 4;
	CHECK(run_round(&m, &r, 4, 5, &st, pol, NULL) == 0 && !r.res.verdict.trusted &&
		      has_reason(&r.res, "log_records_deleted") &&
		      !has_reason(&r.res, "log_offset_mismatch") && r.res.next.next_entry == 3 &&
		      r.res.verdict.next_offset == 3 &&
		      !memcmp(&r.res.next.replay, &st.replay, sizeof(st.replay)),
	      "entries 3- deleted, none exported: untrusted log_records_deleted, replay kept at 3");
	CHECK(strstr(reason_detail(&r.res, "log_records_deleted"), "Restore attestd's export") &&
		      strstr(reason_detail(&r.res, "log_records_deleted"), "reboot"),
	      "the detail says what the operator can do (%s)",
	      reason_detail(&r.res, "log_records_deleted"));
	attest_result_release(&r.res);

	round_log_deleted = 0;
	CHECK(run_round(&m, &r, 4, 5, &st, pol, NULL) == 0 && !r.res.verdict.trusted &&
		      has_reason(&r.res, "log_offset_mismatch") &&
		      !has_reason(&r.res, "log_records_deleted"),
	      "the same evidence without log_deleted: log_offset_mismatch, as before");
	attest_result_release(&r.res);
	round_log_deleted = 3;
	CHECK(run_round(&m, &r, 4, 5, &st, pol, NULL) == 0 && !r.res.verdict.trusted &&
		      has_reason(&r.res, "log_offset_mismatch") &&
		      !has_reason(&r.res, "log_records_deleted"),
	      "entry 3 not deleted, yet skipped: log_offset_mismatch");
	attest_result_release(&r.res);

	round_log_deleted = 4;
	CHECK(run_round(&m, &r, 3, 5, &st, pol, NULL) == 0 && r.res.verdict.trusted &&
		      r.res.next.next_entry == 5,
	      "entries 3-4 served from the export although the kernel deleted 0-3: trusted");
	attest_result_release(&r.res);

	CHECK(run_round(&m, &r, 4, 5, &none, pol, NULL) == 0 && !r.res.verdict.trusted &&
		      has_reason(&r.res, "log_records_deleted") && r.res.next.next_entry == 0 &&
		      strstr(reason_detail(&r.res, "log_records_deleted"), "no replay of this boot"),
	      "a verifier without the boot's replay (new, or restored from before): "
	      "log_records_deleted, never trusted");
	attest_result_release(&r.res);
	CHECK(run_round(&m, &r, 0, 5, &none, pol, NULL) == 0 && r.res.verdict.trusted &&
		      r.res.next.next_entry == 5,
	      "... and trusted once the whole list is served (the export restored)");
	attest_result_release(&r.res);

	round_judged_by = &v2;
	CHECK(run_round(&m, &r, 4, 5, &st, pol, NULL) == 0 && !r.res.verdict.trusted &&
		      has_reason(&r.res, "log_records_deleted") && !r.res.rejudged &&
		      r.res.next.next_entry == 3 && judged_versions_equal(&r.res.next.judged, &v1) &&
		      !memcmp(&r.res.next.replay, &st.replay, sizeof(st.replay)) &&
		      strstr(reason_detail(&r.res, "log_records_deleted"), "policy changed"),
	      "a policy change cannot judge deleted entries: log_records_deleted, the state "
	      "judged by version 1 kept");
	attest_result_release(&r.res);
	round_judged_by = NULL;
	round_log_deleted = 0;
	machine_release(&m);
}

/*
 * A list larger than one request (proto/evidence.h, "More than one request holds"): the quote
 * covers every entry, each part carries only some. Before, no part replayed to the quote and the
 * verdict was pcr_mismatch with nothing kept, round after round: such a machine never attested.
 * Parts sent with log_more are kept unconfirmed (log_incomplete) until a quote matches the
 * continued replay; a chain that never reaches one is dropped.
 */
static void test_list_larger_than_one_request(void)
{
	static const char *const files[] = {"/bin/a", "/bin/b", "/bin/c", "/usr/bin/tool",
					    "/bin/a", "/bin/b"};
	struct boot_state none = {0}, st;
	struct machine m;
	struct round r;

	machine_init(&m);
	machine_boot(&m, 1);
	for (unsigned i = 0; i < 6; i++)
		add_file(&m.list, files[i]);
	machine_extend(&m, 7); /* the quote covers entries 0-6 */

	CHECK(run_round(&m, &r, 0, 3, &none, pol, NULL) == 0 && !r.res.verdict.trusted &&
		      has_reason(&r.res, "pcr_mismatch") && r.res.next.next_entry == 0,
	      "a part without log_more: pcr_mismatch, nothing kept (the old answer, forever)");
	attest_result_release(&r.res);

	round_log_more = true;
	CHECK(run_round(&m, &r, 0, 3, &none, pol, NULL) == 0 && !r.res.verdict.trusted &&
		      has_reason(&r.res, "log_incomplete") && !has_reason(&r.res, "pcr_mismatch") &&
		      r.res.next.next_entry == 3 && r.res.verdict.next_offset == 3 &&
		      r.res.next.unconfirmed,
	      "entries 0-2 with log_more: log_incomplete, kept unconfirmed, next entry 3");
	st = r.res.next;
	attest_result_release(&r.res);
	CHECK(run_round(&m, &r, 3, 5, &st, pol, NULL) == 0 && !r.res.verdict.trusted &&
		      has_reason(&r.res, "log_incomplete") && r.res.next.next_entry == 5 &&
		      r.res.next.unconfirmed,
	      "entries 3-4 with log_more: still unconfirmed, next entry 5");
	st = r.res.next;
	attest_result_release(&r.res);
	round_log_more = false;
	CHECK(run_round(&m, &r, 5, 7, &st, pol, NULL) == 0 && r.res.verdict.trusted &&
		      r.res.next.next_entry == 7 && !r.res.next.unconfirmed,
	      "the last part: the quote matches the whole chain, trusted, confirmed");
	attest_result_release(&r.res);

	/* A chain that never reaches the quote: the last part, sent without log_more, does not
	 * match (entries 5-6 left out), so the unconfirmed replay is dropped. */
	CHECK(run_round(&m, &r, 5, 6, &st, pol, NULL) == 0 && !r.res.verdict.trusted &&
		      has_reason(&r.res, "pcr_mismatch") && r.res.next.next_entry == 0 &&
		      !r.res.next.unconfirmed,
	      "an unconfirmed chain that ends without a match: pcr_mismatch, replayed from 0 next");
	attest_result_release(&r.res);
	round_log_more = true;
	m.list.buf[m.list.entry_end[5] - 3] ^= 0x20; /* entry 5 edited, its hash stale */
	CHECK(run_round(&m, &r, 5, 6, &st, pol, NULL) == 0 && !r.res.verdict.trusted &&
		      has_reason(&r.res, "log_corrupt") && !has_reason(&r.res, "log_incomplete") &&
		      r.res.next.next_entry == 0 && !r.res.next.unconfirmed,
	      "a corrupt part is never kept, log_more or not: the unconfirmed chain dropped");
	attest_result_release(&r.res);
	m.list.buf[m.list.entry_end[5] - 3] ^= 0x20;
	round_log_more = false;
	machine_release(&m);
}

static void test_clock_rollbacks(void)
{
	struct machine m;
	struct round r;
	struct boot_state st = {0};

	machine_init(&m);
	attested_boot(&m, &st, 6);
	/* Clock rollbacks. */
	struct softtpm_clock saved = m.clk;
	m.clk.clock = st.clock - 1;
	CHECK(run_round(&m, &r, 6, 6, &st, pol, NULL) == 0 && has_reason(&r.res, "clock_rollback"),
	      "clock back without reset: clock_rollback");
	attest_result_release(&r.res);
	m.clk = saved;
	m.clk.reset_count = st.reset_count - 1;
	CHECK(run_round(&m, &r, 6, 6, &st, pol, NULL) == 0 && has_reason(&r.res, "reset_count_rollback"),
	      "resetCount back: reset_count_rollback");
	attest_result_release(&r.res);
	m.clk = saved;
	machine_release(&m);
}

static void test_violation_entries(void)
{
	struct machine m;
	struct round r;
	struct boot_state st = {0};

	machine_init(&m);
	attested_boot(&m, &st, 6);
	/* Violation entries: strict policy fails them, a lenient one accepts them. */
	add_entry(&m.list, "sha256", zero, 32, "/var/log/app.log", true);
	machine_extend(&m, 7);
	CHECK(run_round(&m, &r, 6, 7, &st, pol, NULL) == 0 && has_reason(&r.res, "violation_entry") &&
	      r.res.next.next_entry == 7, "ToMToU entry: violation_entry, replayed with 0xff");
	attest_result_release(&r.res);
	CHECK(run_round(&m, &r, 6, 7, &st, lenient, NULL) == 0 && r.res.verdict.trusted,
	      "ToMToU entry accepted when the policy says ignore");
	st = r.res.next;
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_reboot(void)
{
	struct machine m;
	struct round r;
	struct boot_state st = {0};

	machine_init(&m);
	attested_boot(&m, &st, 6);
	/* The ToMToU entry of "violation entries", accepted: the state at entry 7. */
	add_entry(&m.list, "sha256", zero, 32, "/var/log/app.log", true);
	machine_extend(&m, 7);
	CHECK(run_round(&m, &r, 6, 7, &st, lenient, NULL) == 0 && r.res.verdict.trusted &&
		      r.res.next.next_entry == 7,
	      "a boot of 7 entries attested, the last a violation");
	st = r.res.next;
	attest_result_release(&r.res);
	/* Reboot: resetCount up; evidence from the old offset is told to start over. */
	machine_boot(&m, 1);
	add_file(&m.list, "/bin/a");
	machine_extend(&m, 2);
	CHECK(run_round(&m, &r, 7, 7, &st, pol, NULL) == 0 && has_reason(&r.res, "reboot") &&
	      r.res.verdict.next_offset == 0 && r.res.new_boot && r.res.next.boot_number == 2,
	      "reboot seen: reason reboot, next_offset 0, boot 2");
	struct boot_state after_reboot = r.res.next;
	attest_result_release(&r.res);
	CHECK(run_round(&m, &r, 0, 2, &after_reboot, pol, NULL) == 0 && r.res.verdict.trusted &&
	      r.res.next.next_entry == 2 && r.res.next.boot_number == 2, "new boot replayed from 0: trusted");
	struct boot_state in_boot2 = r.res.next;
	attest_result_release(&r.res);
	round_open_violations = 5; /* of boot 1: a reboot does not launder them */
	round_open_prev_boot = 5;
	CHECK(run_round(&m, &r, 0, 2, &st, pol, NULL) == 0 && !r.res.verdict.trusted &&
		      r.res.new_boot && r.res.verdict.nreasons == 1 &&
		      has_reason(&r.res, "open_violations") &&
		      strstr(r.res.verdict.reason[0].detail, "5 of earlier boots"),
	      "after a reboot, unreviewed violations of the old boot keep the agent untrusted");
	attest_result_release(&r.res);
	{
		char *js = policy_to_json(pol), *opt = js ? strstr(js, "\"version\"") : NULL, err[128];
		struct policy *forgets = NULL;

		if (opt) {
			char buf[4096];

			snprintf(buf, sizeof(buf), "%.*s\"reboot_clears_open_violations\": true, %s",
				 (int)(opt - js), js, opt);
			forgets = policy_load(buf, strlen(buf), err, sizeof(err));
		}
		CHECK(forgets && policy_reboot_clears_open_violations(forgets) &&
			      run_round(&m, &r, 0, 2, &st, forgets, NULL) == 0 &&
			      r.res.verdict.trusted && r.res.new_boot,
		      "with reboot_clears_open_violations, a new boot starts with none");
		attest_result_release(&r.res);
		round_open_prev_boot = 2; /* now only those of the current boot count */
		CHECK(forgets && run_round(&m, &r, 2, 2, &in_boot2, forgets, NULL) == 0 &&
			      has_reason(&r.res, "open_violations") &&
			      strstr(r.res.verdict.reason[0].detail, "2 of this boot, 0 of earlier"),
		      "and those of the current boot still count");
		attest_result_release(&r.res);
		policy_free(forgets);
		free(js);
	}
	round_open_violations = 0;
	round_open_prev_boot = 0;
	machine_release(&m);
}

static void test_boot_aggregate_mismatch(void)
{
	struct machine m;
	struct round r;
	struct boot_state st = {0};

	machine_init(&m);
	attested_boot(&m, &st, 6);
	/* The machine rebooted (as in "reboot"); st is still the state of boot 1. */
	machine_boot(&m, 1);
	add_file(&m.list, "/bin/a");
	machine_extend(&m, 2);
	/* boot_aggregate that does not match the quoted PCR 0-7. */
	struct pcr_bank *b1 = pcr_set_bank(&m.pcrs, TPM2_ALG_SHA1);
	b1->value[3][0] ^= 0x80;
	CHECK(run_round(&m, &r, 0, 2, &st, pol, NULL) == 0 && has_reason(&r.res, "boot_aggregate_mismatch"),
	      "firmware PCRs differ from boot_aggregate: boot_aggregate_mismatch");
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_tpm_bypass(void)
{
	struct machine m;
	struct round r;

	machine_init(&m);
	/* IMA without a TPM (ima_tpm=7): zero boot_aggregate, PCR 10 never extended. */
	machine_boot(&m, 1);
	m.list.len = 0;
	m.list.n = 0;
	add_entry(&m.list, "sha1", zero, 20, "boot_aggregate", false);
	add_file(&m.list, "/bin/a");
	CHECK(run_round(&m, &r, 0, 2, NULL, pol, NULL) == 0 && has_reason(&r.res, "tpm_bypass") &&
	      !r.res.verdict.trusted && r.res.next.next_entry == 0,
	      "TPM bypass: tpm_bypass, nothing of the list is covered by PCR 10");
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_pcr_10_that_never_followed_the_list(void)
{
	struct machine m;
	struct round r;

	machine_init(&m);
	/* A list with entries and PCR 10 at its reset value: only the empty prefix replays. */
	machine_boot(&m, 3);
	add_file(&m.list, "/bin/a");
	CHECK(run_round(&m, &r, 0, 2, NULL, pol, NULL) == 0 && !r.res.verdict.trusted &&
		      has_reason(&r.res, "ima_pcr_not_extended") && r.res.next.next_entry == 0,
	      "PCR 10 zero with 2 entries: ima_pcr_not_extended, not only a boot problem");
	attest_result_release(&r.res);
	machine_extend(&m, 2);
	CHECK(run_round(&m, &r, 0, 2, NULL, pol, NULL) == 0 && r.res.verdict.trusted,
	      "the same list once PCR 10 follows it: trusted");
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_amendment(void)
{
	struct machine m;
	struct round r;

	machine_init(&m);
	/* An operator approved /opt/mine for this agent only: its amendment allows it. */
	{
		struct policy *am = policy_new();
		uint8_t d[32];

		file_digest("/opt/mine", d);
		policy_add_digest(am, "/opt/mine", TPM2_ALG_SHA256, d, 32);
		machine_boot(&m, 4);
		add_file(&m.list, "/opt/mine");
		add_file(&m.list, "/opt/other");
		machine_extend(&m, 3);
		CHECK(run_round(&m, &r, 0, 3, NULL, pol, NULL) == 0 && r.res.nviolations == 2,
		      "without the amendment: two files not allowed");
		attest_result_release(&r.res);
		round_amendment = am;
		CHECK(run_round(&m, &r, 0, 3, NULL, pol, NULL) == 0 && r.res.nviolations == 1 &&
			      violation_of(&r.res, "/opt/other", "not_in_allowlist"),
		      "with it: only the other file");
		attest_result_release(&r.res);
		round_amendment = NULL;
		policy_free(am);
	}
	machine_release(&m);
}

static void test_a_flood_hides_nothing(void)
{
	struct machine m;
	struct round r;

	machine_init(&m);
	/* 100,000 entries of one unknown file, then one more unknown file. */
	machine_boot(&m, 5);
	CHECK(flood_round(&m, &r, pol, 100000, 1) == 0 && !r.res.verdict.trusted &&
		      r.res.nviolations == 2,
	      "two violations stored, not one (%zu)", r.res.nviolations);
	{
		const struct attest_violation *fl = violation_of(&r.res, "/opt/flood", "not_in_allowlist");
		const struct attest_violation *d0 = violation_of(&r.res, "/opt/d/0", "not_in_allowlist");

		CHECK(fl && fl->count == 100000 && fl->entry == 1 && fl->last_entry == 100000,
		      "the flood: one violation with count 100000, entries 1..100000");
		CHECK(d0 && d0->count == 1 && d0->entry == 100001, "the other file: its own violation");
		CHECK(r.res.verdict.nreasons == 2 &&
			      strstr(r.res.verdict.reason[0].detail, "(100000 entries)") &&
			      strstr(r.res.verdict.reason[1].detail, "/opt/d/0"),
		      "the verdict names both, the flood with its count");
	}
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_past_the_cap_counted_and_stored(void)
{
	struct machine m;
	struct round r;

	machine_init(&m);
	/* More distinct unknown files than a round stores one by one. */
	machine_boot(&m, 6);
	CHECK(flood_round(&m, &r, pol, 0, LIMIT_ROUND_VIOLATIONS + 5) == 0 &&
		      r.res.nviolations == LIMIT_ROUND_VIOLATIONS + 1,
	      "%u violations and one more (%zu)", LIMIT_ROUND_VIOLATIONS, r.res.nviolations);
	if (r.res.nviolations) {
		const struct attest_violation *last = &r.res.violations[r.res.nviolations - 1];

		CHECK(last->reason == REASON_VIOLATIONS_UNRECORDED && last->count == 5 &&
			      last->entry == LIMIT_ROUND_VIOLATIONS + 1 && last->path_len == 0 &&
			      last->path && !last->path[0],
		      "the last: violations_unrecorded, 5 entries, from entry %u",
		      LIMIT_ROUND_VIOLATIONS + 1);
	}
	CHECK(has_reason(&r.res, "violations_unrecorded") && has_reason(&r.res, "more_reasons"),
	      "the verdict says so even with its reasons full");
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_tpm_bypass_pcr_10_extended_by_user_space(void)
{
	struct machine m;
	struct round r;
	struct boot_state st = {0};

	machine_init(&m);
	/* In bypass nothing stops root from extending PCR 10 of the quoted chip to match the
	 * list: still tpm_bypass, and the list is judged from entry 0 again next round. */
	machine_boot_bypass(&m, 1);
	add_file(&m.list, "/bin/a");
	machine_extend(&m, 2);
	CHECK(run_round(&m, &r, 0, 2, NULL, pol, NULL) == 0 && has_reason(&r.res, "tpm_bypass") &&
	      !has_reason(&r.res, "pcr_mismatch") && !r.res.verdict.trusted &&
	      r.res.next.next_entry == 0,
	      "forged PCR 10 in bypass: tpm_bypass, nothing committed");
	st = r.res.next;
	attest_result_release(&r.res);
	add_file(&m.list, "/bin/b");
	machine_extend(&m, 3);
	CHECK(run_round(&m, &r, 0, 3, &st, pol, NULL) == 0 && has_reason(&r.res, "tpm_bypass") &&
	      r.res.next.next_entry == 0, "next round, again from entry 0: tpm_bypass");
	attest_result_release(&r.res);
	CHECK(run_round(&m, &r, 2, 3, &st, pol, NULL) == 0 &&
	      has_reason(&r.res, "log_offset_mismatch") && !r.res.verdict.trusted,
	      "an agent that skips entry 0 is not judged on the tail alone");
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_tpm_bound_late(void)
{
	struct machine m;
	struct round r;
	struct boot_state st = {0};
	uint8_t late[20];

	machine_init(&m);
	/* The chip registered after IMA started (kernel-patches/0006, 0007): zero
	 * boot_aggregate, the entries measured before, boot_aggregate_late over the chip's PCRs,
	 * all of it extended: trusted from entry 0, then incrementally. */
	machine_boot_bypass(&m, 4);
	add_file(&m.list, "/bin/a");
	sha1_aggregate(&m, late);
	add_entry(&m.list, "sha1", late, 20, "boot_aggregate_late", false);
	add_file(&m.list, "/bin/b");
	machine_extend(&m, 4);
	CHECK(run_round(&m, &r, 0, 4, NULL, pol, NULL) == 0 && r.res.verdict.trusted &&
	      r.res.next.next_entry == 4,
	      "late TPM: trusted, all 4 entries attested (%s)",
	      r.res.verdict.nreasons ? r.res.verdict.reason[0].code : "");
	st = r.res.next;
	attest_result_release(&r.res);
	add_file(&m.list, "/bin/c");
	machine_extend(&m, 5);
	CHECK(run_round(&m, &r, 4, 5, &st, pol, NULL) == 0 && r.res.verdict.trusted &&
	      r.res.next.next_entry == 5, "late TPM: the next round is incremental and trusted");
	st = r.res.next;
	attest_result_release(&r.res);
	add_entry(&m.list, "sha1", late, 20, "boot_aggregate_late", false);
	machine_extend(&m, 6);
	CHECK(run_round(&m, &r, 5, 6, &st, pol, NULL) == 0 && has_reason(&r.res, "not_in_allowlist"),
	      "a second boot_aggregate_late: not_in_allowlist");
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_tpm_bound_late_quote_before_boot_aggregate_late(void)
{
	struct machine m;
	struct round r;
	uint8_t late[20];

	machine_init(&m);
	/* The quote covers only entries before boot_aggregate_late: an entry past the quoted
	 * PCR is the agent's word, not the TPM's. */
	machine_boot_bypass(&m, 4);
	add_file(&m.list, "/bin/a");
	machine_extend(&m, 2);
	sha1_aggregate(&m, late);
	add_entry(&m.list, "sha1", late, 20, "boot_aggregate_late", false);
	add_file(&m.list, "/bin/b");
	CHECK(run_round(&m, &r, 0, 4, NULL, pol, NULL) == 0 && has_reason(&r.res, "tpm_bypass") &&
	      !r.res.verdict.trusted && r.res.next.next_entry == 0,
	      "boot_aggregate_late past the quoted PCR: tpm_bypass, nothing committed");
	attest_result_release(&r.res);
	machine_boot_bypass(&m, 4);
	add_file(&m.list, "/bin/a");
	sha1_aggregate(&m, late);
	add_entry(&m.list, "sha1", late, 20, "boot_aggregate_late", false);
	CHECK(run_round(&m, &r, 0, 3, NULL, pol, NULL) == 0 && has_reason(&r.res, "tpm_bypass") &&
	      r.res.next.next_entry == 0,
	      "bypass, PCR 10 untouched, agent appends boot_aggregate_late: tpm_bypass");
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_tpm_bound_late_wrong_boot_aggregate_late(void)
{
	struct machine m;
	struct round r;
	uint8_t late[20];

	machine_init(&m);
	/* boot_aggregate_late is checked like boot_aggregate; a zero one binds nothing. */
	machine_boot_bypass(&m, 4);
	add_file(&m.list, "/bin/a");
	sha1_aggregate(&m, late);
	late[0] ^= 1;
	add_entry(&m.list, "sha1", late, 20, "boot_aggregate_late", false);
	machine_extend(&m, 3);
	CHECK(run_round(&m, &r, 0, 3, NULL, pol, NULL) == 0 &&
	      has_reason(&r.res, "boot_aggregate_mismatch") && !has_reason(&r.res, "tpm_bypass"),
	      "boot_aggregate_late not matching PCR 0-7: boot_aggregate_mismatch");
	attest_result_release(&r.res);
	machine_boot_bypass(&m, 4);
	add_file(&m.list, "/bin/a");
	add_entry(&m.list, "sha1", zero, 20, "boot_aggregate_late", false);
	machine_extend(&m, 3);
	CHECK(run_round(&m, &r, 0, 3, NULL, pol, NULL) == 0 && has_reason(&r.res, "tpm_bypass") &&
	      r.res.next.next_entry == 0, "zero boot_aggregate_late: still tpm_bypass");
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_boot_aggregate_late_in_a_normal_boot(void)
{
	struct machine m;
	struct round r;
	uint8_t late[20];

	machine_init(&m);
	machine_boot(&m, 5);
	sha1_aggregate(&m, late);
	add_entry(&m.list, "sha1", late, 20, "boot_aggregate_late", false);
	machine_extend(&m, 2);
	CHECK(run_round(&m, &r, 0, 2, NULL, pol, NULL) == 0 && has_reason(&r.res, "not_in_allowlist") &&
	      !has_reason(&r.res, "tpm_bypass"),
	      "boot_aggregate_late after a real boot_aggregate: not_in_allowlist");
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_upstream_late_start_boot_aggregate_late_as_entry_0(void)
{
	struct machine m;
	struct round r;
	uint8_t late[20];

	machine_init(&m);
	/* The upstream IMA_INIT_LATE_SYNC option names the first entry boot_aggregate_late,
	 * computed as boot_aggregate: judged as boot_aggregate, and a later one is still a
	 * second name no policy lists. */
	machine_boot(&m, 6);
	m.list.len = 0;
	m.list.n = 0;
	sha1_aggregate(&m, late);
	add_entry(&m.list, "sha1", late, 20, "boot_aggregate_late", false);
	add_file(&m.list, "/bin/a");
	machine_extend(&m, 2);
	CHECK(run_round(&m, &r, 0, 2, NULL, pol, NULL) == 0 && r.res.verdict.trusted &&
	      r.res.next.next_entry == 2, "entry 0 boot_aggregate_late matching PCR 0-7: trusted (%s)",
	      r.res.verdict.nreasons ? r.res.verdict.reason[0].code : "");
	attest_result_release(&r.res);
	machine_boot(&m, 6);
	m.list.len = 0;
	m.list.n = 0;
	sha1_aggregate(&m, late);
	late[3] ^= 1;
	add_entry(&m.list, "sha1", late, 20, "boot_aggregate_late", false);
	machine_extend(&m, 1);
	CHECK(run_round(&m, &r, 0, 1, NULL, pol, NULL) == 0 &&
	      has_reason(&r.res, "boot_aggregate_mismatch") && !r.res.verdict.trusted,
	      "entry 0 boot_aggregate_late not matching PCR 0-7: boot_aggregate_mismatch");
	attest_result_release(&r.res);
	machine_boot(&m, 6);
	m.list.len = 0;
	m.list.n = 0;
	add_entry(&m.list, "sha1", zero, 20, "boot_aggregate_late", false);
	add_file(&m.list, "/bin/a");
	sha1_aggregate(&m, late);
	add_entry(&m.list, "sha1", late, 20, "boot_aggregate_late", false);
	machine_extend(&m, 3);
	CHECK(run_round(&m, &r, 0, 3, NULL, pol, NULL) == 0 && r.res.verdict.trusted,
	      "zero entry-0 boot_aggregate_late, then our late binding: trusted (%s)",
	      r.res.verdict.nreasons ? r.res.verdict.reason[0].code : "");
	attest_result_release(&r.res);
	machine_boot(&m, 6);
	m.list.len = 0;
	m.list.n = 0;
	add_entry(&m.list, "sha1", zero, 20, "boot_aggregate_late", false);
	add_file(&m.list, "/bin/a");
	machine_extend(&m, 2);
	CHECK(run_round(&m, &r, 0, 2, NULL, pol, NULL) == 0 && has_reason(&r.res, "tpm_bypass") &&
	      r.res.next.next_entry == 0, "zero entry-0 boot_aggregate_late alone: tpm_bypass");
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_no_policy(void)
{
	struct machine m;
	struct round r;

	machine_init(&m);
	/* No policy: every entry passes, only the cryptography is judged. */
	machine_boot(&m, 2);
	add_file(&m.list, "/opt/anything");
	machine_extend(&m, 2);
	CHECK(run_round(&m, &r, 0, 2, NULL, NULL, NULL) == 0 && r.res.verdict.trusted,
	      "no policy: trusted on cryptography alone");
	attest_result_release(&r.res);
	machine_release(&m);
}

static void test_signed_files(void)
{
	struct machine m;
	struct round r;
	struct boot_state st = {0};

	machine_init(&m);
	/* ima-sig entries: a trusted signature admits a file the digest list lacks; the same
	 * signature over changed content is bad_file_signature, recorded for review. */
	{
		EVP_PKEY *signer = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		unsigned char *der = NULL;
		int der_len = signer ? i2d_PUBKEY(signer, &der) : -1;
		char *b64 = der_len > 0 ? base64_encode_alloc(der, (size_t)der_len) : NULL, *json;
		char err[256] = "";
		struct policy *signed_pol = NULL;
		uint8_t d[32], field[9 + 128];
		size_t flen = 0;

		json = b64 ? malloc(strlen(b64) + 64) : NULL;
		if (json) {
			snprintf(json, strlen(b64) + 64, "{\"version\": 1, \"keys\": [{\"der\": \"%s\"}]}", b64);
			signed_pol = policy_load(json, strlen(json), err, sizeof(err));
		}
		CHECK(signed_pol != NULL, "policy with a trusted key loads (%s)", err);
		machine_boot(&m, 3);
		file_digest("/opt/signed", d);
		CHECK(softtpm_ima_sign(signer, "sha256", d, 32, field, sizeof(field), &flen) == 0,
		      "signed /opt/signed");
		add_signed(&m.list, "/opt/signed", d, field, flen);
		machine_extend(&m, 2);
		CHECK(run_round(&m, &r, 0, 2, NULL, signed_pol, NULL) == 0 && r.res.verdict.trusted,
		      "a signed file absent from the digest list is trusted by the key (%s)",
		      r.res.verdict.nreasons ? r.res.verdict.reason[0].code : "");
		st = r.res.next;
		attest_result_release(&r.res);
		/* The file is changed after signing: the kernel measures new content, old xattr. */
		d[0] ^= 1;
		add_signed(&m.list, "/opt/signed", d, field, flen);
		machine_extend(&m, 3);
		CHECK(run_round(&m, &r, 2, 3, &st, signed_pol, NULL) == 0 && !r.res.verdict.trusted &&
			      has_reason(&r.res, "bad_file_signature") && r.res.nviolations == 1 &&
			      r.res.violations[0].reason == REASON_BAD_FILE_SIGNATURE &&
			      strcmp(r.res.violations[0].template_name, "ima-sig") == 0 &&
			      r.res.next.next_entry == 3,
		      "the same signature over changed content: bad_file_signature, recorded");
		st = r.res.next;
		attest_result_release(&r.res);
		/*
		 * fs-verity (ima-sigv2, d-ngv2 "verity:"): the version 3 signature over
		 * H(06 || 04 || verity digest) admits the file; over another verity digest it is
		 * bad_file_signature, and the violation names the digest typed, as a policy lists it.
		 */
		{
			uint8_t fid[2 + 32], h[32], vfield[9 + 128];
			size_t vlen = 0;
			ssize_t n;

			memset(d, 0x5c, sizeof(d));
			fid[0] = 6, fid[1] = 4;
			memcpy(fid + 2, d, 32);
			SHA256(fid, sizeof(fid), h);
			CHECK(softtpm_ima_sign(signer, "sha256", h, 32, vfield, sizeof(vfield),
					       &vlen) == 0,
			      "fs-verity signature made");
			vfield[0] = 6, vfield[1] = 3;
			n = softtpm_ima_sigv2_entry(m.list.buf + m.list.len,
						    sizeof(m.list.buf) - m.list.len, "verity:sha256",
						    d, 32, "/opt/verity", 11, vfield, vlen);
			m.list.len += (size_t)(n > 0 ? n : 0);
			m.list.entry_end[m.list.n++] = m.list.len;
			d[0] ^= 1;
			n = softtpm_ima_sigv2_entry(m.list.buf + m.list.len,
						    sizeof(m.list.buf) - m.list.len, "verity:sha256",
						    d, 32, "/opt/verity", 11, vfield, vlen);
			m.list.len += (size_t)(n > 0 ? n : 0);
			m.list.entry_end[m.list.n++] = m.list.len;
			machine_extend(&m, 5);
			CHECK(run_round(&m, &r, 3, 5, &st, signed_pol, NULL) == 0 &&
				      !r.res.verdict.trusted && r.res.nviolations == 1 &&
				      r.res.violations[0].reason == REASON_BAD_FILE_SIGNATURE &&
				      r.res.violations[0].entry == 4 &&
				      !strncmp(r.res.violations[0].digest, "verity:sha256:5d5c", 18),
			      "fs-verity: entry 3 allowed by its v3 signature, entry 4 (another "
			      "digest) refused and recorded as %s",
			      r.res.nviolations ? r.res.violations[0].digest : "nothing");
			attest_result_release(&r.res);
		}
		policy_free(signed_pol);
		free(json);
		free(b64);
		OPENSSL_free(der);
		EVP_PKEY_free(signer);
	}
	machine_release(&m);
}

int main(void)
{
	setenv("TPM_TEST_DATA", "tests/data/eventlog", 0);
	srand(7);
	ak = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	other_ak = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	pol = make_policy(NULL);
	lenient = make_policy("ignore");
	CHECK(ak && other_ak && pol, "setup");
	CHECK(lenient && policy_violations_allowed(lenient), "lenient policy has violations ignored");

	CASE(test_first_round_of_a_boot);
	CASE(test_incremental_round_unknown_program);
	CASE(test_a_prefix_of_the_list_quoted);
	CASE(test_nothing_new);
	CASE(test_open_violations);
	CASE(test_stale_nonce_other_ak_lying_pcr);
	CASE(test_edited_entry);
	CASE(test_log_offset_mismatch);
	CASE(test_log_records_deleted);
	CASE(test_list_larger_than_one_request);
	CASE(test_clock_rollbacks);
	CASE(test_violation_entries);
	CASE(test_reboot);
	CASE(test_boot_aggregate_mismatch);
	CASE(test_tpm_bypass);
	CASE(test_pcr_10_that_never_followed_the_list);
	CASE(test_amendment);
	CASE(test_a_flood_hides_nothing);
	CASE(test_past_the_cap_counted_and_stored);
	CASE(test_tpm_bypass_pcr_10_extended_by_user_space);
	CASE(test_tpm_bound_late);
	CASE(test_tpm_bound_late_quote_before_boot_aggregate_late);
	CASE(test_tpm_bound_late_wrong_boot_aggregate_late);
	CASE(test_boot_aggregate_late_in_a_normal_boot);
	CASE(test_upstream_late_start_boot_aggregate_late_as_entry_0);
	CASE(test_no_policy);
	CASE(test_signed_files);

	CASE(test_boot_findings_survive_a_log_offset_mismatch);
	CASE(test_a_policy_change_rejudges_the_whole_boot);

	policy_free(pol);
	policy_free(lenient);
	EVP_PKEY_free(ak);
	EVP_PKEY_free(other_ak);
	return check_finish();
}
