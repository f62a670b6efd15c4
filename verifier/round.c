/* One attestation round as a service; the order of its steps is in round.h. */
#include "verifier/round.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <tss2/tss2_tpm2_types.h>

#include "common/log.h"
#include "proto/tpmkey.h"
#include "verifier/agentcache.h"
#include "verifier/attest.h"
#include "verifier/policy.h"

#define CHALLENGE_NONCE_BYTES 32u
#define CHALLENGE_PCR_MASK 0x7ffu /* PCR 0-10: boot_aggregate inputs (0-9) and IMA (10) */

/* The agent from the store; ROUND_OK with *a to release, or why not. */
static enum round_status get_active(struct app *app, const char *id, struct store_agent *a)
{
	int ret;

	if (!agent_id_valid(id))
		return ROUND_UNKNOWN_AGENT;
	ret = store_agent_get(app->store, id, a);
	if (ret == -ENOENT)
		return ROUND_UNKNOWN_AGENT;
	if (ret)
		return ROUND_STORE_FAILED;
	if (a->state != AGENT_ACTIVE) {
		enum round_status st = a->state == AGENT_RETIRED ? ROUND_RETIRED : ROUND_NOT_ACTIVATED;

		store_agent_release(a);
		return st;
	}
	return ROUND_OK;
}

enum round_status round_challenge(struct app *app, const char *id, struct challenge *c)
{
	struct store_agent a;
	struct boot_state bs;
	int64_t now = (int64_t)time(NULL);
	enum round_status st;
	int ret;

	st = get_active(app, id, &a);
	if (st)
		return st;
	memset(c, 0, sizeof(*c));
	if (store_boot_get(app->store, a.id, &bs, NULL)) {
		st = ROUND_STORE_FAILED;
		goto out;
	}
	if (RAND_bytes(c->nonce, CHALLENGE_NONCE_BYTES) != 1) {
		log_openssl("challenge: random nonce");
		st = ROUND_INTERNAL;
		goto out;
	}
	c->nonce_len = CHALLENGE_NONCE_BYTES;
	c->expires_at = now + app->nonce_ttl;
	c->log_offset = bs.started ? bs.next_entry : 0;
	{
		/* The agent resends its firmware log only when it is not the one held here. */
		struct store_boot_log bl;

		ret = store_boot_log_get(app->store, a.id, &bl);
		if (ret && ret != -ENOENT) {
			st = ROUND_STORE_FAILED;
			goto out;
		}
		if (!ret) {
			c->has_boot_log_sha256 = true;
			memcpy(c->boot_log_sha256, bl.sha256, sizeof(bl.sha256));
		}
		store_boot_log_release(&bl);
	}
	pcr_set_add_bank(&c->selection, TPM2_ALG_SHA1)->mask = CHALLENGE_PCR_MASK;
	pcr_set_add_bank(&c->selection, TPM2_ALG_SHA256)->mask = CHALLENGE_PCR_MASK;
	ret = nonces_add(app->nonces, a.id, c, now);
	st = ret == -EBUSY ? ROUND_RATE_LIMITED : ret ? ROUND_INTERNAL : ROUND_OK;
out:
	store_agent_release(&a);
	return st;
}

/*
 * The active agent's policy name and AK, from the agent cache or else from the store (then
 * cached). *ak is a new reference on ROUND_OK.
 */
static enum round_status load_active(struct app *app, const char *id,
				     char policy[LIMIT_POLICY_NAME + 1], EVP_PKEY **ak)
{
	struct store_agent a;
	TPMT_PUBLIC akpub;
	enum round_status st;
	uint64_t gen;

	*ak = NULL;
	if (agent_id_valid(id) && agentcache_get(app->agents, id, ak, policy))
		return ROUND_OK;
	gen = agentcache_generation(app->agents);
	st = get_active(app, id, &a);
	if (st)
		return st;
	if (tpmkey_parse_public(a.ak_pub, a.ak_pub_len, &akpub) || !(*ak = tpmkey_to_evp(&akpub))) {
		log_error("evidence: stored AK of agent \"%s\" does not load", a.id);
		store_agent_release(&a);
		return ROUND_INTERNAL;
	}
	memcpy(policy, a.policy, sizeof(a.policy));
	agentcache_put(app->agents, gen, a.id, *ak, a.policy);
	store_agent_release(&a);
	return ROUND_OK;
}

enum round_status round_admit(struct app *app, const char *id)
{
	char policy[LIMIT_POLICY_NAME + 1];
	EVP_PKEY *ak = NULL;
	enum round_status st;

	/* The cache first: an active agent with a round in progress is usually there. */
	st = load_active(app, id, policy, &ak);
	EVP_PKEY_free(ak);
	if (st)
		return st;
	if (!nonces_outstanding(app->nonces, id, (int64_t)time(NULL)))
		return ROUND_NO_CHALLENGE;
	return ROUND_OK;
}

/* The verdict's reasons as the JSON array stored with it. */
static char *reasons_json(const struct verdict_response *v)
{
	json_t *arr = json_array();
	char *s = NULL;

	if (!arr)
		return NULL;
	for (unsigned i = 0; i < v->nreasons && i < LIMIT_VERDICT_REASONS; i++) {
		const struct verdict_reason *r = &v->reason[i];
		json_t *o = json_pack("{s:s, s:s, s:I}", "code", r->code, "detail", r->detail,
				      "entry", (json_int_t)r->entry);

		if (!o || json_array_append_new(arr, o))
			goto out;
	}
	s = json_dumps(arr, JSON_COMPACT);
out:
	json_decref(arr);
	return s;
}

static enum round_status spend_nonce(struct app *app, const char *id, const struct evidence *ev,
				     int64_t now, struct challenge *ch)
{
	switch (nonces_consume(app->nonces, id, ev->nonce, ev->nonce_len, now, ch)) {
	case 0:
		return ROUND_OK;
	case -ENOENT:
		return ROUND_NONCE_UNKNOWN;
	case -EALREADY:
		log_warn("evidence: agent \"%s\" replayed a used nonce", id);
		return ROUND_NONCE_REUSED;
	case -ETIMEDOUT:
		return ROUND_NONCE_EXPIRED;
	default:
		return ROUND_STORE_FAILED;
	}
}

/*
 * Boot state, verdict, violations and the boot log in one transaction: durable before
 * acknowledged. Only over the boot state version `prev_version` the round started from:
 * ROUND_CONFLICT, nothing written, if another round of the agent committed in between.
 */
static enum round_status commit(struct app *app, const char *id, int64_t now,
				uint64_t prev_version, struct attest_result *res,
				const struct store_boot_log *boot_log, uint32_t interval)
{
	int ret;
	struct store_round_violation *viol = NULL;
	struct store_round round;
	int64_t verdict_id = 0;
	enum round_status st = ROUND_INTERNAL;
	char *reasons = reasons_json(&res->verdict);

	if (!reasons)
		return ROUND_INTERNAL;
	/* The store borrows the strings for the call; reasons go as their wire names. */
	if (res->nviolations) {
		viol = calloc(res->nviolations, sizeof(*viol));
		if (!viol)
			goto out;
	}
	for (size_t i = 0; i < res->nviolations; i++) {
		const struct attest_violation *v = &res->violations[i];

		viol[i].entry = v->entry;
		viol[i].last_entry = v->last_entry;
		viol[i].count = v->count;
		viol[i].reason = reason_name(v->reason);
		viol[i].path = v->path;
		viol[i].path_len = v->path_len;
		viol[i].digest = v->digest;
		viol[i].template_name = v->template_name;
	}
	memset(&round, 0, sizeof(round));
	round.agent = id;
	round.prev_version = prev_version;
	round.next = &res->next;
	round.boot_log = boot_log;
	round.trusted = res->verdict.trusted;
	round.reasons_json = reasons;
	round.next_offset = res->verdict.next_offset;
	round.violations = viol;
	round.nviolations = res->nviolations;
	round.interval = interval;
	round.now = now;
	ret = store_round_commit(app->store, &round, &verdict_id);
	if (ret == -EKEYREVOKED) {
		/* Retired, purged or re-enrolled while the round was judged: not its AK any more. */
		agentcache_invalidate(app->agents, id);
		log_warn("evidence: agent \"%s\" is no longer active; its round is refused,"
			 " nothing stored", id);
		st = ROUND_RETIRED;
		goto out;
	}
	if (ret == -ESTALE) {
		log_warn("evidence: agent \"%s\": another round of it committed first; this one"
			 " is refused, nothing stored", id);
		st = ROUND_CONFLICT;
		goto out;
	}
	if (ret) {
		st = ROUND_STORE_FAILED;
		goto out;
	}
	res->verdict.verdict_id = verdict_id;
	st = ROUND_OK;
out:
	free(viol);
	free(reasons);
	return st;
}

/*
 * The firmware log this round checks: the one the evidence carries (with the command line
 * sent along with it), else the one stored for the agent; and what its last judgement covered.
 */
static void boot_input_of(const struct evidence *ev, const struct store_boot_log *stored,
			  bool have_stored, struct boot_input *in)
{
	memset(in, 0, sizeof(*in));
	if (ev->boot_log) {
		in->log = ev->boot_log;
		in->log_len = ev->boot_log_len;
		in->cmdline = ev->boot_cmdline;
	} else if (have_stored) {
		in->log = stored->log;
		in->log_len = stored->log_len;
		in->cmdline = stored->cmdline;
	}
	if (have_stored && stored->judged_boot) {
		in->judged = true;
		in->judged_boot = stored->judged_boot;
		memcpy(in->judged_key, stored->judged_key, sizeof(in->judged_key));
	}
}

/*
 * What to store of the boot log after the round, in *put: NULL when nothing changed (no log
 * sent, none judged, the same summary), so that a plain round writes no blob.
 */
static const struct store_boot_log *boot_log_to_store(const struct evidence *ev,
						      const struct store_boot_log *stored,
						      bool have_stored, const struct boot_input *in,
						      const struct attest_result *res, int64_t now,
						      struct store_boot_log *put)
{
	bool same_summary = have_stored && stored->summary && res->boot.summary &&
			    !strcmp(stored->summary, res->boot.summary);

	if (!in->log || (!ev->boot_log && !res->boot.judged && same_summary))
		return NULL;
	memset(put, 0, sizeof(*put));
	put->log = (uint8_t *)in->log;
	put->log_len = in->log_len;
	put->cmdline = (char *)in->cmdline;
	put->summary = res->boot.summary;
	if (ev->boot_log) {
		EVP_Digest(in->log, in->log_len, put->sha256, NULL, EVP_sha256(), NULL);
		put->received_at = now;
	} else {
		memcpy(put->sha256, stored->sha256, sizeof(put->sha256));
		put->received_at = stored->received_at;
	}
	if (res->boot.judged) {
		put->judged_boot = res->next.boot_number;
		memcpy(put->judged_key, res->boot.key, sizeof(put->judged_key));
	} else if (have_stored) {
		put->judged_boot = stored->judged_boot;
		memcpy(put->judged_key, stored->judged_key, sizeof(put->judged_key));
	}
	return put;
}

enum round_status round_evidence(struct app *app, const char *id, const struct evidence *ev,
				 struct verdict_response *verdict)
{
	struct store_boot_log stored, put;
	struct boot_input boot;
	bool have_stored = false;
	char policy_name[LIMIT_POLICY_NAME + 1] = "";
	struct attest_request ar;
	struct attest_result res;
	struct challenge ch;
	struct boot_state prev;
	uint64_t prev_version = 0;
	struct policy *policy = NULL, *amendment = NULL;
	char amendment_name[STORE_AMENDMENT_NAME_MAX + 1];
	EVP_PKEY *ak = NULL;
	enum round_status st;
	bool have_result = false;
	int64_t now;
	int ret;

	memset(&res, 0, sizeof(res));
	memset(&ar, 0, sizeof(ar));
	memset(&stored, 0, sizeof(stored));
	st = load_active(app, id, policy_name, &ak);
	if (st)
		return st;
	ret = policy_cache_get(&app->policies, app->store, policy_name, &policy);
	if (ret) {
		log_error("evidence: agent \"%s\" is assigned policy \"%s\", which %s", id,
			  policy_name[0] ? policy_name : POLICY_DEFAULT_NAME,
			  ret == -ENOENT ? "does not exist; PUT it or reassign the agent"
					 : "fails to load");
		st = ROUND_POLICY_UNAVAILABLE;
		goto out;
	}
	/* The agent's own approvals: none is the common case (-ENOENT, nothing cached). */
	store_amendment_name(id, amendment_name);
	ret = policy_cache_get(&app->amendments, app->store, amendment_name, &amendment);
	if (ret && ret != -ENOENT) {
		log_error("evidence: agent \"%s\": its amendment (\"%s\") %s", id, amendment_name,
			  ret == -EINVAL ? "does not load" : "cannot be read");
		st = ret == -EINVAL ? ROUND_POLICY_UNAVAILABLE : ROUND_STORE_FAILED;
		goto out;
	}
	now = (int64_t)time(NULL);
	st = spend_nonce(app, id, ev, now, &ch);
	if (st)
		goto out;
	if (store_boot_get(app->store, id, &prev, &prev_version) ||
	    store_violations_open_count(app->store, id, prev.boot_number, &ar.open_violations,
					&ar.open_violations_prev_boot)) {
		st = ROUND_STORE_FAILED;
		goto out;
	}
	ret = store_boot_log_get(app->store, id, &stored);
	if (ret && ret != -ENOENT) {
		st = ROUND_STORE_FAILED;
		goto out;
	}
	have_stored = ret == 0;
	boot_input_of(ev, &stored, have_stored, &boot);
	ar.boot = &boot;
	ar.ak = ak;
	ar.nonce = ch.nonce;
	ar.nonce_len = ch.nonce_len;
	ar.requested = &ch.selection;
	ar.policy = policy;
	ar.amendment = amendment;
	ar.prev = &prev;
	ar.ev = ev;
	ret = attest_evaluate(&ar, &res);
	if (ret) {
		log_error("evidence: agent \"%s\": evaluation failed: %s", id, strerror(-ret));
		st = ROUND_INTERNAL;
		goto out;
	}
	have_result = true;
	if (!res.authenticated) {
		log_warn("evidence: agent \"%s\": quote not signed by its AK (%s); refused, nothing stored",
			 id, res.verdict.nreasons ? res.verdict.reason[0].code : "?");
		*verdict = res.verdict;
		st = ROUND_NOT_AUTHENTIC;
		goto out;
	}
	if (app->before_commit)
		app->before_commit(app, id);
	st = commit(app, id, now, prev_version, &res,
		    boot_log_to_store(ev, &stored, have_stored, &boot, &res, now, &put),
		    ev->interval);
	if (st)
		goto out;
	*verdict = res.verdict;
	if (res.verdict.trusted)
		log_debug("evidence: agent \"%s\" trusted, next entry %llu", id,
			  (unsigned long long)res.verdict.next_offset);
	else
		log_warn("evidence: agent \"%s\" untrusted: %s%s", id,
			 res.verdict.nreasons ? res.verdict.reason[0].code : "?",
			 res.verdict.nreasons > 1 ? " and more" : "");
out:
	if (have_result)
		attest_result_release(&res);
	store_boot_log_release(&stored);
	policy_unref(policy);
	policy_unref(amendment);
	EVP_PKEY_free(ak);
	return st;
}
