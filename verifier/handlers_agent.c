/*
 * Agent-facing calls: enroll, activate, challenges, evidence (DESIGN.md section 5).
 *
 * Every refusal is decided before anything is written, so a bad request never changes stored
 * state; the one exception is by design: evidence consumes its nonce first, so a replayed body
 * is `nonce_reused` even if the evidence itself is then judged untrusted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/evidence.h"
#include "proto/tpmkey.h"
#include "verifier/agentcache.h"
#include "verifier/attest.h"
#include "verifier/handlers.h"
#include "verifier/log.h"
#include "verifier/policy.h"

#define CHALLENGE_NONCE_BYTES 32u
#define CHALLENGE_PCR_MASK 0x7ffu /* PCR 0-10: boot_aggregate inputs (0-9) and IMA (10) */

/*
 * The store failed (disk full, I/O error, database locked): nothing was recorded. 503, not
 * 500: the request was fine and the same request later may succeed, so agents retry.
 */
static void reply_store_failure(struct http_response *resp)
{
	http_reply_error(resp, 503, "storage_unavailable",
			 "the verifier cannot use its store; nothing was recorded, retry later");
}

/* Looks up the agent named in the path; on failure the reply is set and false returned. */
static bool load_agent(const struct http_request *req, struct http_response *resp,
		       struct store_agent *a, bool need_active)
{
	struct app *app = req->app;
	int ret;

	if (!agent_id_valid(req->arg[0])) {
		http_reply_error(resp, 404, "unknown_agent", "no agent with this id");
		return false;
	}
	ret = store_agent_get(app->store, req->arg[0], a);
	if (ret == -ENOENT) {
		http_reply_error(resp, 404, "unknown_agent", "no agent \"%s\"", req->arg[0]);
		return false;
	}
	if (ret) {
		reply_store_failure(resp);
		return false;
	}
	if (need_active && a->state != AGENT_ACTIVE) {
		store_agent_release(a);
		http_reply_error(resp, 403, "not_activated",
				 "agent \"%s\" has not activated its credential", req->arg[0]);
		return false;
	}
	return true;
}

void handle_enroll(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct enroll_request er;
	struct enroll_result res;
	struct enroll_response out;
	struct store_agent a;
	enum store_enroll_result sr;
	const char *why = NULL;
	int ret;

	memset(&er, 0, sizeof(er));
	if (enroll_request_parse(req->body, req->body_len, &er, &why)) {
		http_reply_error(resp, 400, "bad_request", "%s", why ? why : "bad enroll request");
		goto refused;
	}
	switch (enroll_check(app->trust, &er, &res)) {
	case ENROLL_OK:
		break;
	case ENROLL_BAD_EK:
		http_reply_error(resp, 400, "bad_ek", "%s", res.why);
		goto refused;
	case ENROLL_BAD_AK:
		http_reply_error(resp, 400, "bad_ak", "%s", res.why);
		goto refused;
	case ENROLL_EK_UNTRUSTED:
		http_reply_error(resp, 403, "ek_untrusted", "%s", res.why);
		goto refused;
	case ENROLL_EK_MISMATCH:
		http_reply_error(resp, 403, "ek_mismatch", "%s", res.why);
		goto refused;
	case ENROLL_INTERNAL:
	default:
		http_reply_error(resp, 500, "internal", "enrollment failed on the verifier");
		goto out;
	}

	memset(&a, 0, sizeof(a));
	snprintf(a.id, sizeof(a.id), "%s", er.agent_id);
	a.state = AGENT_PENDING;
	a.ek_pub = er.ek_pub;
	a.ek_pub_len = er.ek_pub_len;
	a.ek_cert = er.ek_cert;
	a.ek_cert_len = er.ek_cert_len;
	a.ak_pub = er.ak_pub;
	a.ak_pub_len = er.ak_pub_len;
	memcpy(a.ak_name, res.ak_name, res.ak_name_len);
	a.ak_name_len = res.ak_name_len;
	memcpy(a.cred_digest, res.secret_digest, sizeof(a.cred_digest));
	ret = store_agent_enroll(app->store, &a, (int64_t)time(NULL), &sr);
	if (ret) {
		reply_store_failure(resp);
		goto out;
	}
	if (sr == STORE_ENROLL_ALREADY) {
		http_reply_error(resp, 409, "already_enrolled",
				 "agent \"%s\" is enrolled and active with this EK and AK", a.id);
		goto out;
	}
	if (sr == STORE_ENROLL_CONFLICT) {
		log_warn("enroll: agent \"%s\" refused: id taken by another TPM or AK", a.id);
		http_reply_error(resp, 409, "agent_exists",
				 "agent \"%s\" is enrolled with another EK or AK", a.id);
		goto refused;
	}
	memset(&out, 0, sizeof(out));
	snprintf(out.agent_id, sizeof(out.agent_id), "%s", a.id);
	out.credential_blob = res.cred.blob;
	out.credential_blob_len = res.cred.blob_len;
	out.encrypted_secret = res.cred.encrypted_secret;
	out.encrypted_secret_len = res.cred.encrypted_secret_len;
	http_reply_json(resp, 201, enroll_response_encode(&out));
	log_info("enroll: agent \"%s\" %s, waiting for activation", a.id,
		 sr == STORE_ENROLL_NEW ? "enrolled" : "re-enrolled");
	APP_COUNT(app, enroll_ok);
	goto out;
refused:
	APP_COUNT(app, enroll_refused);
out:
	OPENSSL_cleanse(&res, sizeof(res));
	enroll_request_release(&er);
}

void handle_activate(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct activate_request ar;
	struct store_agent a;
	const char *why = NULL;
	int ret;

	memset(&ar, 0, sizeof(ar));
	if (!load_agent(req, resp, &a, false))
		return;
	if (activate_request_parse(req->body, req->body_len, &ar, &why)) {
		http_reply_error(resp, 400, "bad_request", "%s", why ? why : "bad activate request");
		goto out;
	}
	if (!enroll_secret_matches(a.cred_digest, ar.secret, ar.secret_len)) {
		log_warn("activate: agent \"%s\" sent a wrong secret", a.id);
		http_reply_error(resp, 403, "activation_failed",
				 "the secret does not match the credential issued at enrollment");
		APP_COUNT(app, activate_failed);
		goto out;
	}
	if (a.state == AGENT_PENDING) {
		ret = store_agent_activate(app->store, a.id, a.cred_digest, (int64_t)time(NULL));
		if (ret == -ESTALE) {
			/* Re-enrolled in between: this secret belongs to a dead credential. */
			http_reply_error(resp, 403, "activation_failed",
					 "the credential was replaced by a newer enrollment");
			APP_COUNT(app, activate_failed);
			goto out;
		}
		if (ret) {
			reply_store_failure(resp);
			goto out;
		}
		log_info("activate: agent \"%s\" active, its AK is trusted", a.id);
	}
	{
		json_t *o = json_pack("{s:s, s:s}", "agent_id", a.id, "state", "active");
		char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

		json_decref(o);
		http_reply_json(resp, 200, s);
	}
	APP_COUNT(app, activate_ok);
out:
	OPENSSL_cleanse(&ar, sizeof(ar));
	store_agent_release(&a);
}

void handle_challenge(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct store_agent a;
	struct boot_state bs;
	struct challenge c;
	int64_t now = (int64_t)time(NULL);
	int ret;

	if (!load_agent(req, resp, &a, true))
		return;
	memset(&c, 0, sizeof(c));
	if (store_boot_get(app->store, a.id, &bs)) {
		reply_store_failure(resp);
		goto out;
	}
	if (RAND_bytes(c.nonce, CHALLENGE_NONCE_BYTES) != 1) {
		log_openssl("challenge: random nonce");
		http_reply_error(resp, 500, "internal", "no randomness");
		goto out;
	}
	c.nonce_len = CHALLENGE_NONCE_BYTES;
	c.expires_at = now + app->nonce_ttl;
	c.log_offset = bs.started ? bs.next_entry : 0;
	pcr_set_add_bank(&c.selection, TPM2_ALG_SHA1)->mask = CHALLENGE_PCR_MASK;
	pcr_set_add_bank(&c.selection, TPM2_ALG_SHA256)->mask = CHALLENGE_PCR_MASK;
	ret = nonces_add(app->nonces, a.id, &c, now);
	if (ret == -EBUSY) {
		http_reply_error(resp, 429, "rate_limited",
				 "agent \"%s\" has %u unanswered challenges; answer or let them expire",
				 a.id, NONCES_MAX_OUTSTANDING);
		goto out;
	}
	if (ret) {
		http_reply_error(resp, 500, "internal", "out of memory");
		goto out;
	}
	http_reply_json(resp, 201, challenge_encode(&c));
	APP_COUNT(app, challenges);
out:
	store_agent_release(&a);
}

/* The verdict's reasons as the JSON array stored with it. */
static char *reasons_json(const struct verdict_response *v)
{
	json_t *arr = json_array();
	char *s = NULL;

	if (!arr)
		return NULL;
	for (unsigned i = 0; i < v->nreasons && i < VERDICT_MAX_REASONS; i++) {
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

static void observe_latency(struct app *app, const struct timespec *t0)
{
	static const double bounds[APP_LATENCY_BUCKETS] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
							     0.5, 1, 2.5, 5, 10, 1e300 };
	struct timespec t;
	double s;

	clock_gettime(CLOCK_MONOTONIC, &t);
	s = (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
	for (unsigned i = 0; i < APP_LATENCY_BUCKETS; i++) {
		if (s <= bounds[i]) {
			__atomic_add_fetch(&app->metrics.latency_bucket[i], 1, __ATOMIC_RELAXED);
			break;
		}
	}
	__atomic_add_fetch(&app->metrics.latency_count, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&app->metrics.latency_sum_us, (uint64_t)(s * 1e6), __ATOMIC_RELAXED);
}

/*
 * The active agent named in the path as the evidence path needs it: its policy name and its
 * AK, from the agent cache or else from the store (then cached). 0, or on failure the reply is
 * set and -EACCES (refused: unknown or not active) or -EIO (the verifier's own failure).
 */
static int load_active(const struct http_request *req, struct http_response *resp,
		       char policy[STORE_POLICY_NAME_MAX + 1], EVP_PKEY **ak)
{
	struct app *app = req->app;
	struct store_agent a;
	TPMT_PUBLIC akpub;
	uint64_t gen;

	*ak = NULL;
	if (agent_id_valid(req->arg[0]) && agentcache_get(app->agents, req->arg[0], ak, policy))
		return 0;
	gen = agentcache_generation(app->agents);
	if (!load_agent(req, resp, &a, true))
		return -EACCES;
	if (tpmkey_parse_public(a.ak_pub, a.ak_pub_len, &akpub) || !(*ak = tpmkey_to_evp(&akpub))) {
		log_error("evidence: stored AK of agent \"%s\" does not load", a.id);
		http_reply_error(resp, 500, "internal", "stored AK unusable");
		store_agent_release(&a);
		return -EIO;
	}
	memcpy(policy, a.policy, sizeof(a.policy));
	agentcache_put(app->agents, gen, a.id, *ak, a.policy);
	store_agent_release(&a);
	return 0;
}

void handle_evidence(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct evidence ev;
	const char *id = req->arg[0];
	char policy_name[STORE_POLICY_NAME_MAX + 1] = "";
	struct challenge ch;
	struct boot_state prev;
	struct attest_request ar;
	struct attest_result res;
	struct store_round round;
	struct store_round_violation *sviol = NULL;
	struct policy *policy = NULL;
	EVP_PKEY *ak = NULL;
	struct timespec t0;
	const char *why = NULL;
	char *reasons = NULL;
	int64_t verdict_id = 0, now;
	bool have_result = false;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&ev, 0, sizeof(ev));
	memset(&res, 0, sizeof(res));
	if (evidence_parse(req->body, req->body_len, &ev, &why)) {
		http_reply_error(resp, 400, "bad_request", "%s", why ? why : "bad evidence");
		goto refused;
	}
	/* Everything that can fail for the verifier's own reasons, before the nonce is spent. */
	ret = load_active(req, resp, policy_name, &ak);
	if (ret == -EACCES)
		goto refused;
	if (ret)
		goto out;
	ret = app_policy_get(app, policy_name, &policy);
	if (ret) {
		log_error("evidence: agent \"%s\" is assigned policy \"%s\", which %s", id,
			  policy_name[0] ? policy_name : APP_DEFAULT_POLICY,
			  ret == -ENOENT ? "does not exist; PUT it or reassign the agent"
					 : "fails to load");
		http_reply_error(resp, 503, "policy_unavailable",
				 "the verifier cannot load this agent's policy");
		goto out;
	}

	now = (int64_t)time(NULL);
	ret = nonces_consume(app->nonces, id, ev.nonce, ev.nonce_len, now, &ch);
	switch (ret) {
	case 0:
		break;
	case -ENOENT:
		http_reply_error(resp, 400, "nonce_unknown", "nonce was not issued to this agent");
		goto refused;
	case -EALREADY:
		log_warn("evidence: agent \"%s\" replayed a used nonce", id);
		http_reply_error(resp, 409, "nonce_reused", "nonce was used before");
		goto refused;
	case -ETIMEDOUT:
		http_reply_error(resp, 409, "nonce_expired", "nonce expired; ask for a new challenge");
		goto refused;
	default:
		reply_store_failure(resp);
		goto out;
	}
	if (store_boot_get(app->store, id, &prev)) {
		reply_store_failure(resp);
		goto out;
	}

	memset(&ar, 0, sizeof(ar));
	ar.ak = ak;
	ar.nonce = ch.nonce;
	ar.nonce_len = ch.nonce_len;
	ar.requested = &ch.selection;
	ar.policy = policy;
	ar.prev = &prev;
	ar.ev = &ev;
	ret = attest_evaluate(&ar, &res);
	if (ret) {
		log_error("evidence: agent \"%s\": evaluation failed: %s", id, strerror(-ret));
		http_reply_error(resp, 500, "internal", "evaluation failed");
		goto out;
	}
	have_result = true;
	if (!res.authenticated) {
		log_warn("evidence: agent \"%s\": quote not signed by its AK (%s); refused, nothing stored",
			 id, res.verdict.nreasons ? res.verdict.reason[0].code : "?");
		http_reply_error(resp, 400, res.verdict.nreasons ? res.verdict.reason[0].code : "bad_signature",
				 "the quote is not signed by this agent's attestation key");
		goto refused;
	}

	/*
	 * A violation seen earlier in this boot keeps the machine untrusted until an operator
	 * approves or dismisses it: what ran cannot be taken back by later clean rounds.
	 */
	if (res.verdict.trusted) {
		uint64_t open = 0;

		if (store_violations_open_count(app->store, id, res.next.boot_number, &open)) {
			reply_store_failure(resp);
			goto out;
		}
		if (open) {
			struct verdict_reason *r = &res.verdict.reason[res.verdict.nreasons++];

			res.verdict.trusted = false;
			snprintf(r->code, sizeof(r->code), "open_violations");
			snprintf(r->detail, sizeof(r->detail),
				 "%llu violations of this boot await an operator's review",
				 (unsigned long long)open);
			r->entry = -1;
		}
	}

	reasons = reasons_json(&res.verdict);
	if (!reasons) {
		http_reply_error(resp, 500, "internal", "out of memory");
		goto out;
	}
	if (res.nviolations) {
		sviol = calloc(res.nviolations, sizeof(*sviol));
		if (!sviol) {
			http_reply_error(resp, 500, "internal", "out of memory");
			goto out;
		}
	}
	for (size_t i = 0; i < res.nviolations; i++) {
		const struct attest_violation *v = &res.violations[i];

		sviol[i] = (struct store_round_violation){ .entry = v->entry, .reason = v->reason,
			.path = v->path, .digest = v->digest, .template_name = v->template_name };
	}
	memset(&round, 0, sizeof(round));
	round.agent = id;
	round.next = &res.next;
	round.trusted = res.verdict.trusted;
	round.reasons_json = reasons;
	round.next_offset = res.verdict.next_offset;
	round.violations = sviol;
	round.nviolations = res.nviolations;
	round.now = now;
	/* Durable before acknowledged: the agent may act on this verdict. */
	if (store_round_commit(app->store, &round, &verdict_id)) {
		reply_store_failure(resp);
		goto out;
	}
	res.verdict.verdict_id = verdict_id;
	http_reply_json(resp, 200, verdict_response_encode(&res.verdict));
	if (res.verdict.trusted) {
		APP_COUNT(app, attest_trusted);
		log_debug("evidence: agent \"%s\" trusted, next entry %llu", id,
			  (unsigned long long)res.verdict.next_offset);
	} else {
		APP_COUNT(app, attest_untrusted);
		log_warn("evidence: agent \"%s\" untrusted: %s%s", id,
			 res.verdict.nreasons ? res.verdict.reason[0].code : "?",
			 res.verdict.nreasons > 1 ? " and more" : "");
	}
	observe_latency(app, &t0);
	goto out;
refused:
	APP_COUNT(app, attest_refused);
out:
	if (have_result)
		attest_result_release(&res);
	free(sviol);
	free(reasons);
	policy_unref(policy);
	EVP_PKEY_free(ak);
	evidence_release(&ev);
}
