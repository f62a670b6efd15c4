/*
 * Agent-facing calls as HTTP: enroll, activate, challenges, evidence (DESIGN.md section 5).
 * Challenges and evidence are round.c's services; these handlers only translate.
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
#include "verifier/round.h"

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

/*
 * The refusals of a round as HTTP. Store and policy failures are 503: the request was fine and
 * the same request later may succeed, so agents retry.
 */
static void reply_round_status(struct http_response *resp, const char *id, enum round_status st,
			       const struct verdict_response *v)
{
	switch (st) {
	case ROUND_OK:
		break;
	case ROUND_UNKNOWN_AGENT:
		if (agent_id_valid(id))
			http_reply_error(resp, 404, "unknown_agent", "no agent \"%s\"", id);
		else
			http_reply_error(resp, 404, "unknown_agent", "no agent with this id");
		break;
	case ROUND_NOT_ACTIVATED:
		http_reply_error(resp, 403, "not_activated",
				 "agent \"%s\" has not activated its credential", id);
		break;
	case ROUND_RATE_LIMITED:
		http_reply_error(resp, 429, "rate_limited",
				 "agent \"%s\" has %u unanswered challenges; answer or let them expire",
				 id, NONCES_MAX_OUTSTANDING);
		break;
	case ROUND_NONCE_UNKNOWN:
		http_reply_error(resp, 400, "nonce_unknown", "nonce was not issued to this agent");
		break;
	case ROUND_NONCE_REUSED:
		http_reply_error(resp, 409, "nonce_reused", "nonce was used before");
		break;
	case ROUND_NONCE_EXPIRED:
		http_reply_error(resp, 409, "nonce_expired", "nonce expired; ask for a new challenge");
		break;
	case ROUND_NOT_AUTHENTIC:
		http_reply_error(resp, 400, v && v->nreasons ? v->reason[0].code : "bad_signature",
				 "the quote is not signed by this agent's attestation key");
		break;
	case ROUND_POLICY_UNAVAILABLE:
		http_reply_error(resp, 503, "policy_unavailable",
				 "the verifier cannot load this agent's policy");
		break;
	case ROUND_STORE_FAILED:
		reply_store_failure(resp);
		break;
	case ROUND_INTERNAL:
	default:
		http_reply_error(resp, 500, "internal", "the verifier failed; its log says why");
		break;
	}
}

void handle_challenge(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct challenge c;
	enum round_status st = round_challenge(app, req->arg[0], &c);

	if (st) {
		reply_round_status(resp, req->arg[0], st, NULL);
		return;
	}
	http_reply_json(resp, 201, challenge_encode(&c));
	APP_COUNT(app, challenges);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

void handle_evidence(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct verdict_response v;
	struct evidence ev;
	struct timespec t0;
	const char *why = NULL;
	enum round_status st;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&ev, 0, sizeof(ev));
	if (evidence_parse(req->body, req->body_len, &ev, &why)) {
		http_reply_error(resp, 400, "bad_request", "%s", why ? why : "bad evidence");
		APP_COUNT(app, attest_refused);
		goto out;
	}
	st = round_evidence(app, req->arg[0], &ev, &v);
	if (st) {
		reply_round_status(resp, req->arg[0], st, &v);
		/* Refusals of the request count; the verifier's own failures do not. */
		if (st != ROUND_POLICY_UNAVAILABLE && st != ROUND_STORE_FAILED && st != ROUND_INTERNAL)
			APP_COUNT(app, attest_refused);
		goto out;
	}
	http_reply_json(resp, 200, verdict_response_encode(&v));
	if (v.trusted)
		APP_COUNT(app, attest_trusted);
	else
		APP_COUNT(app, attest_untrusted);
	metrics_observe_latency(&app->metrics, seconds_since(&t0));
out:
	evidence_release(&ev);
}
