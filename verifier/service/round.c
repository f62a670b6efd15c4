/* One attestation round as a service; the order of its steps is in round.h. */
#include "verifier/service/round.h"
#include "verifier/service/ear.h"

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
#include "verifier/api/api_codec.h"
#include "verifier/facts/agentcache.h"
#include "verifier/decision/attest.h"
#include "verifier/decision/evidence_record.h"
#include "verifier/store/cluster.h"
#include "verifier/policy/policy.h"
#include "verifier/service/judges.h"
#include "verifier/service/webhooks.h"

#define CHALLENGE_NONCE_BYTES 32u
#define CHALLENGE_PCR_MASK 0x7ffu /* PCR 0-10: boot_aggregate inputs (0-9) and IMA (10) */

_Static_assert(CHALLENGE_NONCE_BYTES == CLUSTER_NONCE_LEN, "one nonce length with or without"
	       " a cluster key");

/* What every challenge asks the TPM to quote: sha1 and sha256, PCR 0-10. */
static void challenge_selection(struct pcr_set *sel)
{
	memset(sel, 0, sizeof(*sel));
	pcr_set_add_bank(sel, TPM2_ALG_SHA1)->mask = CHALLENGE_PCR_MASK;
	pcr_set_add_bank(sel, TPM2_ALG_SHA256)->mask = CHALLENGE_PCR_MASK;
}

/*
 * Why a retired agent gets no round: retired, or retired and then reset by an operator, when
 * the answer must tell the agent to enroll again (nothing else would: its identity is still the
 * one that was retired). Read only on this rare path, not with every round's context.
 */
static enum round_status retired_status(struct app *app, const char *id)
{
	struct store_agent a;
	bool reset;

	if (store_agent_get(app->store, id, &a))
		return ROUND_RETIRED;
	reset = a.state == AGENT_RETIRED && a.reset_at != 0;
	store_agent_release(&a);
	return reset ? ROUND_RESET : ROUND_RETIRED;
}

/*
 * The agent as the store has it now, with everything a round reads (store_round_context()):
 * ROUND_OK with *ctx filled for an active agent, or why not.
 */
static enum round_status context(struct app *app, const char *id, struct store_round_ctx *ctx)
{
	int ret;

	if (!agent_id_valid(id))
		return ROUND_UNKNOWN_AGENT;
	ret = store_round_context(app->store, id, POLICY_DEFAULT_NAME, ctx);
	if (ret == -ENOENT)
		return ROUND_UNKNOWN_AGENT;
	if (ret)
		return ROUND_STORE_FAILED;
	if (ctx->state != AGENT_ACTIVE)
		return ctx->state == AGENT_RETIRED ? retired_status(app, id) : ROUND_NOT_ACTIVATED;
	return ROUND_OK;
}

/*
 * A new challenge for agent `id` whose next round starts at list entry `log_offset`, naming the
 * firmware log the store holds for it (NULL: none): kept in the nonce table, MAC'd with the
 * cluster key if there is one; `given`: it goes with a verdict (nonces_add_given()).
 * ROUND_RATE_LIMITED when the agent has NONCES_MAX_OUTSTANDING unanswered ones here (never
 * with a cluster key, see below).
 */
static enum round_status issue(struct app *app, const char *id, int64_t now, uint64_t log_offset,
			       const uint8_t *boot_log_sha256, bool given, struct challenge *c)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->expires_at = now + app->nonce_ttl;
	/* With a cluster key any verifier of the fleet recognizes the nonce (cluster.h). */
	if (app->cluster) {
		if (cluster_nonce_make(app->cluster, id, c->expires_at, c->nonce))
			return ROUND_INTERNAL;
	} else if (RAND_bytes(c->nonce, CHALLENGE_NONCE_BYTES) != 1) {
		log_openssl("challenge: random nonce");
		return ROUND_INTERNAL;
	}
	c->nonce_len = CHALLENGE_NONCE_BYTES;
	c->log_offset = log_offset;
	/* The agent resends its firmware log only when it is not the one held here. */
	if (boot_log_sha256) {
		c->has_boot_log_sha256 = true;
		memcpy(c->boot_log_sha256, boot_log_sha256, sizeof(c->boot_log_sha256));
	}
	challenge_selection(&c->selection);
	/* Kept here too: the rate limit, round_admit(), and a reuse refused before the store. */
	ret = given ? nonces_add_given(app->nonces, id, c, now)
		    : nonces_add(app->nonces, id, c, now);
	/* Relying parties' nonces waiting for a round of this agent ride on it (ear.h). */
	if ((!ret || (ret == -EBUSY && app->cluster)) && app->ear_results)
		ear_challenge_issued(app->ear_results, id, c->nonce, c->nonce_len, now);
	/*
	 * With a cluster key a challenge stands on its MAC, and the answer often goes to another
	 * verifier (behind a load balancer), which cannot tell this one: the challenges it
	 * answered stay outstanding here until they expire. Refusing new ones then would stop a
	 * healthy agent, so a full table only means this one is not kept here.
	 */
	if (ret == -EBUSY && app->cluster)
		return ROUND_OK;
	return ret == -EBUSY ? ROUND_RATE_LIMITED : ret ? ROUND_INTERNAL : ROUND_OK;
}

/* The policy and amendment versions that judge the agent's rounds now. */
static void current_judgement(const struct store_round_ctx *ctx, struct judged_versions *j)
{
	judges_versions_of(ctx->policy, ctx->policy_version, ctx->amendment_version, j);
}

/*
 * Where the agent's next round starts: where the stored replay stopped, or entry 0 when the
 * versions that judged it changed since (the whole boot is judged again).
 */
static uint64_t next_offset_of(const struct store_round_ctx *ctx)
{
	struct judged_versions now;

	current_judgement(ctx, &now);
	if (!ctx->boot.started || attest_needs_rejudgement(&ctx->boot, &now))
		return 0;
	return ctx->boot.next_entry;
}

enum round_status round_challenge(struct app *app, const char *id, struct challenge *c)
{
	struct store_round_ctx ctx;
	enum round_status st;

	st = context(app, id, &ctx);
	if (st)
		return st;
	return issue(app, id, (int64_t)time(NULL), next_offset_of(&ctx),
		     ctx.has_boot_log ? ctx.boot_log_sha256 : NULL, false, c);
}

/*
 * The active agent's AK: from the agent cache when it holds the AK the store names now
 * (ak_name; NULL: any), else from the store (then cached). *ak is a new reference on ROUND_OK.
 */
static enum round_status agent_ak(struct app *app, const char *id, const uint8_t *ak_name,
				  size_t ak_name_len, EVP_PKEY **ak)
{
	struct store_agent a;
	TPMT_PUBLIC akpub;
	uint64_t gen;
	int ret;

	*ak = NULL;
	if (agentcache_get(app->agents, id, ak_name, ak_name_len, ak))
		return ROUND_OK;
	gen = agentcache_generation(app->agents);
	ret = store_agent_get(app->store, id, &a);
	if (ret)
		return ret == -ENOENT ? ROUND_UNKNOWN_AGENT : ROUND_STORE_FAILED;
	if (a.state != AGENT_ACTIVE) {
		enum round_status st = a.state != AGENT_RETIRED ? ROUND_NOT_ACTIVATED
				       : a.reset_at		 ? ROUND_RESET
								 : ROUND_RETIRED;

		store_agent_release(&a);
		return st;
	}
	if (tpmkey_parse_public(a.ak_pub, a.ak_pub_len, &akpub) || !(*ak = tpmkey_to_evp(&akpub))) {
		log_error("evidence: stored AK of agent \"%s\" does not load", a.id);
		store_agent_release(&a);
		return ROUND_INTERNAL;
	}
	agentcache_put(app->agents, gen, a.id, *ak, a.ak_name, a.ak_name_len);
	store_agent_release(&a);
	return ROUND_OK;
}

enum round_status round_admit(struct app *app, const char *id)
{
	EVP_PKEY *ak = NULL;
	enum round_status st;

	if (!agent_id_valid(id))
		return ROUND_UNKNOWN_AGENT;
	/* The cache first: an active agent with a round in progress is usually there. */
	st = agent_ak(app, id, NULL, 0, &ak);
	EVP_PKEY_free(ak);
	if (st)
		return st;
	/*
	 * With a cluster key the challenge may be another verifier's: this one cannot know before
	 * the body is read, so an active agent is admitted (the nonce is checked once it is).
	 * Without, only a challenge the agent asked for counts: every active agent holds the one
	 * its last verdict carried, so counting those would admit large bodies for any agent. An
	 * agent whose round is large is answered no_challenge and asks (proto/evidence.h).
	 */
	if (!app->cluster && !nonces_outstanding_asked(app->nonces, id, (int64_t)time(NULL)))
		return ROUND_NO_CHALLENGE;
	return ROUND_OK;
}

/* The verdict's reasons as the JSON array stored with it: [{code, detail, entry}, ...]. */
static char *reasons_json(const struct attest_result *res)
{
	const struct verdict_response *v = &res->verdict;
	json_t *arr = json_array();
	char *s = NULL;

	if (!arr)
		return NULL;
	for (unsigned i = 0; i < v->nreasons && i < LIMIT_VERDICT_REASONS; i++) {
		const struct verdict_reason *r = &v->reason[i];
		json_t *o = api_reason_encode(&(struct api_reason){ reason_name(res->reasons[i]),
								    r->detail, r->entry });

		if (!o || json_array_append_new(arr, o))
			goto out;
	}
	s = json_dumps(arr, JSON_COMPACT);
out:
	json_decref(arr);
	return s;
}

/*
 * Spends the evidence's nonce: one this verifier issued (nonces.h), else, with a cluster key,
 * one another verifier of the fleet issued to this agent (cluster.h). With a cluster key the
 * store records it as spent with the round, which is what makes it single-use across the
 * fleet; the table here refuses a reuse on this verifier before any work.
 */
static enum round_status spend_nonce(struct app *app, const char *id, const struct evidence *ev,
				     int64_t now, struct challenge *ch)
{
	int ret = nonces_consume(app->nonces, id, ev->nonce, ev->nonce_len, now, ch);

	if (ret == -ENOENT && app->cluster) {
		ret = cluster_nonce_check(app->cluster, id, ev->nonce, ev->nonce_len, now,
					  &ch->expires_at);
		if (!ret) {
			memcpy(ch->nonce, ev->nonce, ev->nonce_len);
			ch->nonce_len = ev->nonce_len;
			challenge_selection(&ch->selection);
			APP_COUNT(app, challenges_foreign);
		}
	}
	switch (ret) {
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
 * *raised: the round wrote webhook events (the caller wakes their delivery).
 */
static enum round_status commit(struct app *app, const char *id, int64_t now,
				uint64_t prev_version, const struct challenge *ch,
				struct attest_result *res, const struct store_boot_log *boot_log,
				uint32_t interval, const struct store_round_evidence *evidence,
				bool *announced, bool *raised)
{
	int ret;
	struct store_round_violation *viol = NULL;
	struct store_round round;
	int64_t verdict_id = 0;
	enum round_status st = ROUND_INTERNAL;
	char *reasons = reasons_json(res);

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
	round.raised = raised;
	round.judged = &res->next.judged;
	round.violations = viol;
	round.nviolations = res->nviolations;
	round.interval = interval;
	round.now = now;
	round.evidence = evidence;
	/* The commit ends the round's announcement (store_round_announce()). */
	round.announced = *announced;
	*announced = false;
	if (app->cluster) {
		round.nonce = ch->nonce;
		round.nonce_len = ch->nonce_len;
		round.nonce_expires = ch->expires_at;
	}
	ret = store_round_commit(app->store, &round, &verdict_id);
	if (ret == -EALREADY) {
		log_warn("evidence: agent \"%s\" replayed a nonce another round answered (on this"
			 " verifier or another); nothing stored", id);
		st = ROUND_NONCE_REUSED;
		goto out;
	}
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

/*
 * The evidence this round keeps with its verdict (--evidence-keep), as *out for the store
 * (its record in *record, caller frees), or NULL: none kept. A record that cannot be made
 * (memory) is logged and the round commits without it: a verdict is never refused for it.
 */
static const struct store_round_evidence *evidence_to_keep(
	struct app *app, const char *id, int64_t now, const struct attest_request *ar,
	const struct attest_result *res, const struct challenge *ch,
	const uint8_t *boot_log_sha256, struct store_round_evidence *out, char **record)
{
	struct evidence_kept k;

	*record = NULL;
	if (app->evidence_keep == EVIDENCE_KEEP_NONE ||
	    (app->evidence_keep == EVIDENCE_KEEP_UNTRUSTED && res->verdict.trusted))
		return NULL;
	memset(&k, 0, sizeof(k));
	k.agent = id;
	k.time = now;
	k.req = ar;
	k.challenge = ch;
	k.boot_log_sha256 = ar->boot && ar->boot->log ? boot_log_sha256 : NULL;
	k.verdict = &res->verdict;
	*record = evidence_record_encode(&k);
	if (!*record) {
		log_error("evidence: agent \"%s\": its round's evidence could not be encoded (out"
			  " of memory); its verdict is stored without it", id);
		return NULL;
	}
	memset(out, 0, sizeof(*out));
	out->record = *record;
	out->boot_log_sha256 = k.boot_log_sha256;
	if (ar->judged_by && ar->judged_by->known && ar->policy) {
		out->policy = ar->judged_by->policy;
		out->policy_version = ar->judged_by->policy_version;
	}
	if (ar->amendment && ar->judged_by)
		out->amendment_version = ar->judged_by->amendment_version;
	return out;
}

/*
 * The challenge of the agent's next round, sent with this round's verdict (one exchange per
 * round, proto/evidence.h): issued from the boot state just committed, so it names what a challenge
 * asked for now would. Only when the agent's next round (its interval, else the verifier's
 * default) comes well before the nonce expires: an agent would otherwise answer a nonce
 * already expired. Not offered when the agent has too many unanswered challenges.
 */
static void next_challenge(struct app *app, const char *id, int64_t now, uint32_t interval,
			   const struct boot_state *next, const uint8_t *boot_log_sha256,
			   struct verdict_response *verdict)
{
	uint64_t every = interval ? interval : app->liveness.default_interval;

	verdict->has_next_challenge = false;
	if (every > (uint64_t)app->nonce_ttl / 2)
		return;
	if (issue(app, id, now, next->started ? next->next_entry : 0, boot_log_sha256, true,
		  &verdict->next_challenge) == ROUND_OK)
		verdict->has_next_challenge = true;
}

/*
 * What the committed round established, for relying parties (ear.h): before the next challenge
 * is issued, so that a relying party's nonce that challenge carries is answered by the round
 * after this one, never by this one.
 */
static void record_result(struct app *app, const char *id, int64_t now,
			  const struct store_round_ctx *ctx, uint32_t interval,
			  const struct policy *policy, const struct attest_result *res,
			  const struct challenge *ch)
{
	uint32_t every = interval ? interval : app->liveness.default_interval;
	struct ear_round er;

	if (!app->ear_results)
		return;
	memset(&er, 0, sizeof(er));
	er.agent = id;
	er.verdict = &res->verdict;
	er.reasons = res->reasons;
	er.time = now;
	er.interval = every;
	/* The moment the agent turns stale without a newer round (store_agent_stale_after()). */
	er.expires = now + (int64_t)every * (int64_t)app->liveness.intervals;
	er.policy = ctx->policy[0] ? ctx->policy : POLICY_DEFAULT_NAME;
	er.policy_version = ctx->policy_version;
	er.amendment_version = ctx->amendment_version;
	er.boot_number = res->next.boot_number;
	/* Only the policy says what of the boot is judged (boot_check.h). */
	er.boot_judged = policy_boot(policy) != NULL;
	er.challenge = ch->nonce;
	er.challenge_len = ch->nonce_len;
	ear_record(app->ear_results, &er);
}

enum round_status round_evidence(struct app *app, const char *id, const struct evidence *ev,
				 struct verdict_response *verdict)
{
	struct store_boot_log stored, put;
	const struct store_boot_log *to_store;
	struct store_round_evidence kept;
	const struct store_round_evidence *keep;
	char *record = NULL;
	const uint8_t *held_boot_log; /* the SHA-256 of the firmware log stored after the round */
	struct store_round_ctx ctx;
	struct boot_input boot;
	bool have_stored = false;
	struct attest_request ar;
	struct attest_result res;
	struct challenge ch;
	struct judges judges = { 0 };
	enum judges_part failed;
	struct judged_versions judged_by;
	EVP_PKEY *ak = NULL;
	enum round_status st;
	bool have_result = false;
	bool announced = true, raised = false;
	int64_t now;
	int ret;

	memset(&res, 0, sizeof(res));
	memset(&ar, 0, sizeof(ar));
	memset(&stored, 0, sizeof(stored));
	/* Its commit follows soon: the group commit waits for it (store_round_announce()). */
	store_round_announce(app->store);
	/* One read of the store for the round: the agent, its state, its policies' versions. */
	st = context(app, id, &ctx);
	if (st)
		goto out;
	st = agent_ak(app, id, ctx.ak_name, ctx.ak_name_len, &ak);
	if (st)
		goto out;
	ret = judges_load(app, id, &ctx, &judges, &failed);
	if (ret && failed == JUDGES_POLICY) {
		log_error("evidence: agent \"%s\" is assigned policy \"%s\", which %s", id,
			  ctx.policy[0] ? ctx.policy : POLICY_DEFAULT_NAME,
			  ret == -ENOENT ? "does not exist; PUT it or reassign the agent"
					 : "fails to load");
		st = ret == -ENOENT || ret == -EINVAL ? ROUND_POLICY_UNAVAILABLE : ROUND_STORE_FAILED;
		goto out;
	}
	if (ret) {
		char amendment[STORE_AMENDMENT_NAME_MAX + 1];

		store_amendment_name(id, amendment);
		log_error("evidence: agent \"%s\": its amendment (\"%s\") %s", id, amendment,
			  ret == -EINVAL ? "does not load" : "cannot be read");
		st = ret == -EINVAL ? ROUND_POLICY_UNAVAILABLE : ROUND_STORE_FAILED;
		goto out;
	}
	/*
	 * The versions changed since the boot was judged (a challenge issued before the change,
	 * often the one the last verdict carried): this evidence cannot be judged whole. Refused
	 * before its nonce is spent, nothing stored; the agent asks for a challenge, which names
	 * entry 0 (proto/evidence.h, given_challenge_refused()). Unless the agent says entry 0
	 * was deleted from its kernel's memory and not exported (log_deleted): asking again would
	 * get the same answer forever, so the round is judged, untrusted log_records_deleted.
	 */
	current_judgement(&ctx, &judged_by);
	if (attest_needs_rejudgement(&ctx.boot, &judged_by) && ev->log_offset != 0 &&
	    ev->log_deleted == 0) {
		log_info("evidence: agent \"%s\": its boot was judged by policy \"%s\" version %lld"
			 " and amendment version %lld, now %lld and %lld; asking for its list from"
			 " entry 0", id, ctx.boot.judged.known ? ctx.boot.judged.policy : "?",
			 (long long)ctx.boot.judged.policy_version,
			 (long long)ctx.boot.judged.amendment_version,
			 (long long)judged_by.policy_version, (long long)judged_by.amendment_version);
		st = ROUND_REJUDGE;
		goto out;
	}
	now = (int64_t)time(NULL);
	st = spend_nonce(app, id, ev, now, &ch);
	if (st)
		goto out;
	ar.open_violations = ctx.open_violations;
	ar.open_violations_prev_boot = ctx.open_violations_in_boot;
	if (ctx.has_boot_log) {
		ret = store_boot_log_get(app->store, id, &stored);
		if (ret && ret != -ENOENT) {
			st = ROUND_STORE_FAILED;
			goto out;
		}
		have_stored = ret == 0;
	}
	boot_input_of(ev, &stored, have_stored, &boot);
	ar.boot = &boot;
	ar.ak = ak;
	ar.nonce = ch.nonce;
	ar.nonce_len = ch.nonce_len;
	ar.requested = &ch.selection;
	ar.policy = judges.policy;
	ar.amendment = judges.amendment;
	ar.judged_by = &judged_by;
	ar.prev = &ctx.boot;
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
			 id, res.verdict.nreasons ? reason_name(res.reasons[0]) : "?");
		*verdict = res.verdict;
		st = ROUND_NOT_AUTHENTIC;
		goto out;
	}
	if (app->before_commit)
		app->before_commit(app, id);
	to_store = boot_log_to_store(ev, &stored, have_stored, &boot, &res, now, &put);
	held_boot_log = to_store ? to_store->sha256 : have_stored ? stored.sha256 : NULL;
	keep = evidence_to_keep(app, id, now, &ar, &res, &ch, held_boot_log, &kept, &record);
	st = commit(app, id, now, ctx.version, &ch, &res, to_store, ev->interval, keep, &announced,
		    &raised);
	if (st)
		goto out;
	*verdict = res.verdict;
	record_result(app, id, now, &ctx, ev->interval, judges.policy, &res, &ch);
	/*
	 * The events the round wrote leave now, after its result is recorded: a delivery signs the
	 * agent's latest result into X-Attest-EAR, which must be this round's. Not woken for a
	 * round that wrote none (an agent staying untrusted over the same violations).
	 */
	if (raised)
		webhooks_kick(app->webhooks);
	next_challenge(app, id, now, ev->interval, &res.next, held_boot_log, verdict);
	if (res.verdict.trusted)
		log_debug("evidence: agent \"%s\" trusted, next entry %llu", id,
			  (unsigned long long)res.verdict.next_offset);
	else
		log_warn("evidence: agent \"%s\" untrusted: %s%s", id,
			 res.verdict.nreasons ? reason_name(res.reasons[0]) : "?",
			 res.verdict.nreasons > 1 ? " and more" : "");
out:
	if (announced)
		store_round_withdraw(app->store);
	free(record);
	if (have_result)
		attest_result_release(&res);
	store_boot_log_release(&stored);
	judges_release(&judges);
	EVP_PKEY_free(ak);
	return st;
}
