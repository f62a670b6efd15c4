/* Attestation results for relying parties (ear.h). */
#include "verifier/service/ear.h"

#include <errno.h>
#include <pthread.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "buildinfo.h"
#include "common/log.h"
#include "verifier/decision/ear_vector.h"
#include "verifier/facts/reasons.h"
#include "verifier/service/app.h"
#include "verifier/store/ear_keys.h"

struct result {
	bool valid;
	int64_t verdict_id, time, expires;
	bool trusted;
	struct ear_vector vec;
	enum ear_tier status;
	char policy[LIMIT_POLICY_NAME + 1];
	int64_t policy_version, amendment_version;
	uint64_t boot_number;
	enum reason reasons[LIMIT_VERDICT_REASONS];
	size_t nreasons;
};

enum rp_state { RP_WAITING, RP_CARRIED, RP_ANSWERED };

struct rp_nonce {
	char text[EAR_NONCE_MAX + 1];
	int64_t registered;
	enum rp_state state;
	uint8_t challenge[LIMIT_NONCE_BYTES];
	size_t challenge_len;
	struct result answer;
};

struct agent_rec {
	char agent[LIMIT_AGENT_ID + 1];
	struct result latest;
	uint32_t interval;
	struct rp_nonce nonces[EAR_NONCES_PER_AGENT];
	size_t nnonces;
};

struct ear_results {
	pthread_mutex_t lock;
	void *root; /* tsearch(3) tree of struct agent_rec, by agent */
};

static int rec_cmp(const void *a, const void *b)
{
	return strcmp(((const struct agent_rec *)a)->agent, ((const struct agent_rec *)b)->agent);
}

int ear_results_new(struct ear_results **out)
{
	struct ear_results *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	*out = r;
	return 0;
}

void ear_results_free(struct ear_results *r)
{
	if (!r)
		return;
	tdestroy(r->root, free);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* The record of agent, made if `make`; NULL if none (or out of memory). Under the lock. */
static struct agent_rec *find(struct ear_results *r, const char *agent, bool make)
{
	struct agent_rec key, *rec, **slot;

	snprintf(key.agent, sizeof(key.agent), "%s", agent);
	slot = tfind(&key, &r->root, rec_cmp);
	if (slot)
		return *slot;
	if (!make)
		return NULL;
	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return NULL;
	memcpy(rec->agent, key.agent, sizeof(rec->agent));
	slot = tsearch(rec, &r->root, rec_cmp);
	if (!slot || *slot != rec) {
		free(rec);
		return NULL;
	}
	return rec;
}

/* Pending nonces past their time leave. Under the lock. */
static void expire_nonces(struct agent_rec *rec, int64_t now)
{
	size_t keep = 0;

	for (size_t i = 0; i < rec->nnonces; i++)
		if (now - rec->nonces[i].registered < EAR_NONCE_TTL)
			rec->nonces[keep++] = rec->nonces[i];
	rec->nnonces = keep;
}

void ear_record(struct ear_results *r, const struct ear_round *round)
{
	const struct verdict_response *v = round->verdict;
	struct agent_rec *rec;
	struct result res;

	memset(&res, 0, sizeof(res));
	res.valid = true;
	res.verdict_id = v->verdict_id;
	res.time = round->time;
	res.expires = round->expires;
	res.trusted = v->trusted;
	snprintf(res.policy, sizeof(res.policy), "%s", round->policy);
	res.policy_version = round->policy_version;
	res.amendment_version = round->amendment_version;
	res.boot_number = round->boot_number;
	for (unsigned i = 0; i < v->nreasons && i < LIMIT_VERDICT_REASONS; i++)
		res.reasons[res.nreasons++] = round->reasons[i];
	ear_vector_of(v->trusted, res.reasons, res.nreasons, round->boot_judged, &res.vec,
		      &res.status);

	pthread_mutex_lock(&r->lock);
	rec = find(r, round->agent, true);
	if (rec) {
		rec->latest = res;
		rec->interval = round->interval;
		for (size_t i = 0; i < rec->nnonces; i++) {
			struct rp_nonce *n = &rec->nonces[i];

			if (n->state == RP_CARRIED && n->challenge_len == round->challenge_len &&
			    round->challenge_len &&
			    !CRYPTO_memcmp(n->challenge, round->challenge, round->challenge_len)) {
				n->state = RP_ANSWERED;
				n->answer = res;
			}
		}
	}
	pthread_mutex_unlock(&r->lock);
	if (!rec)
		log_error("ear: out of memory: no attestation result kept for agent \"%s\"", round->agent);
}

void ear_challenge_issued(struct ear_results *r, const char *agent, const uint8_t *nonce,
			  size_t len, int64_t now)
{
	struct agent_rec *rec;

	if (len > LIMIT_NONCE_BYTES)
		return;
	pthread_mutex_lock(&r->lock);
	rec = find(r, agent, false);
	if (rec) {
		expire_nonces(rec, now);
		for (size_t i = 0; i < rec->nnonces; i++) {
			struct rp_nonce *n = &rec->nonces[i];

			/* The newest challenge carries it: an agent answers the last one it got
			 * (a refused or large round asks for a new one). */
			if (n->state == RP_ANSWERED)
				continue;
			memcpy(n->challenge, nonce, len);
			n->challenge_len = len;
			n->state = RP_CARRIED;
		}
	}
	pthread_mutex_unlock(&r->lock);
}

void ear_forget(struct ear_results *r, const char *agent)
{
	struct agent_rec key, **slot, *rec;

	snprintf(key.agent, sizeof(key.agent), "%s", agent);
	pthread_mutex_lock(&r->lock);
	slot = tfind(&key, &r->root, rec_cmp);
	if (slot) {
		rec = *slot;
		tdelete(&key, &r->root, rec_cmp);
		free(rec);
	}
	pthread_mutex_unlock(&r->lock);
}

static json_t *claims_of(const char *agent, const struct result *res, const char *nonce)
{
	json_t *reasons = json_array(), *vec = ear_vector_json(&res->vec), *sub, *c;
	char policy_id[LIMIT_POLICY_NAME + 64];

	for (size_t i = 0; reasons && i < res->nreasons; i++)
		json_array_append_new(reasons, json_string(reason_name(res->reasons[i])));
	if (res->amendment_version)
		snprintf(policy_id, sizeof(policy_id), "policy:%s@%lld+amendment@%lld", res->policy,
			 (long long)res->policy_version, (long long)res->amendment_version);
	else
		snprintf(policy_id, sizeof(policy_id), "policy:%s@%lld", res->policy,
			 (long long)res->policy_version);
	sub = json_pack("{s:s, s:o, s:s, s:s, s:I, s:s, s:o, s:{s:s, s:I}, s:I, s:I}", "ear.status",
			ear_tier_name(res->status), "ear.trustworthiness-vector", vec,
			"ear.appraisal-policy-id", policy_id, "attest.agent-id", agent,
			"attest.verdict-id", (json_int_t)res->verdict_id, "attest.verdict",
			res->trusted ? "trusted" : "untrusted", "attest.reasons", reasons,
			"attest.policy", "name", res->policy, "version",
			(json_int_t)res->policy_version, "attest.amendment-version",
			(json_int_t)res->amendment_version, "attest.boot-number",
			(json_int_t)res->boot_number);
	if (!sub)
		return NULL;
	c = json_pack("{s:s, s:I, s:I, s:{s:s, s:s}, s:{s:o}}", "eat_profile", EAR_PROFILE, "iat",
		      (json_int_t)res->time, "exp", (json_int_t)res->expires, "ear.verifier-id",
		      "build", "attest verifier " ATTEST_VERSION, "developer", "attest", "submods",
		      EAR_SUBMOD, sub);
	if (c && nonce && json_object_set_new(c, "eat_nonce", json_string(nonce))) {
		json_decref(c);
		return NULL;
	}
	return c;
}

static enum ear_answer sign(struct app *app, const char *agent, const struct result *res,
			    const char *nonce, char **token)
{
	json_t *claims = claims_of(agent, res, nonce);
	EVP_PKEY *key = ear_keys_current(app->ear_keys);

	*token = claims && key ? ear_jwt_sign(key, claims) : NULL;
	json_decref(claims);
	EVP_PKEY_free(key);
	if (!*token) {
		log_error("ear: cannot sign the result of agent \"%s\"", agent);
		return EAR_FAILED;
	}
	return EAR_OK;
}

enum ear_answer ear_token(struct app *app, const char *agent, int64_t verdict_id,
			  const char *nonce, int64_t now, char **token, int64_t *retry_after)
{
	struct ear_results *r = app->ear_results;
	enum ear_answer ans = EAR_NO_RESULT;
	struct agent_rec *rec;
	struct result res;
	size_t i;

	*token = NULL;
	*retry_after = 0;
	memset(&res, 0, sizeof(res));
	pthread_mutex_lock(&r->lock);
	rec = find(r, agent, nonce != NULL);
	if (!rec) {
		ans = nonce ? EAR_FAILED : EAR_NO_RESULT;
		goto unlock;
	}
	if (!nonce) {
		res = rec->latest;
		ans = res.valid && (verdict_id <= 0 || res.verdict_id == verdict_id) ? EAR_OK
										       : EAR_NO_RESULT;
		goto unlock;
	}
	expire_nonces(rec, now);
	*retry_after = rec->interval ? rec->interval : 10;
	for (i = 0; i < rec->nnonces; i++)
		if (!strcmp(rec->nonces[i].text, nonce))
			break;
	if (i < rec->nnonces) {
		if (rec->nonces[i].state == RP_ANSWERED) {
			res = rec->nonces[i].answer;
			ans = EAR_OK;
		} else {
			ans = EAR_PENDING;
		}
		goto unlock;
	}
	if (rec->nnonces == EAR_NONCES_PER_AGENT) {
		ans = EAR_TOO_MANY;
		goto unlock;
	}
	memset(&rec->nonces[rec->nnonces], 0, sizeof(rec->nonces[0]));
	snprintf(rec->nonces[rec->nnonces].text, sizeof(rec->nonces[0].text), "%s", nonce);
	rec->nonces[rec->nnonces].registered = now;
	rec->nonces[rec->nnonces].state = RP_WAITING;
	rec->nnonces++;
	ans = EAR_PENDING;
unlock:
	pthread_mutex_unlock(&r->lock);
	if (ans != EAR_OK)
		return ans;
	return sign(app, agent, &res, nonce, token);
}
