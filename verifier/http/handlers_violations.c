/*
 * GET /v1/violations and an operator's decision on one (POST .../approve, .../dismiss): the
 * list reads the store, with what the agent's policy expects beside each digest_mismatch; the
 * decision is review.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "proto/encoding.h"
#include "proto/limits.h"
#include "proto/text.h"
#include "verifier/facts/reasons.h"
#include "verifier/api/api_codec.h"
#include "verifier/http/handlers.h"
#include "verifier/policy/policy.h"
#include "verifier/policy/policy_json.h"
#include "verifier/service/judges.h"
#include "verifier/service/review.h"

/*
 * The policy and amendment an agent is judged by now (judges.h, the parsed copies rounds use):
 * looked up once per agent of a list, for its digest_mismatch violations.
 */
#define JUDGED_BY_AGENTS 16u

struct judged_by {
	char agent[LIMIT_AGENT_ID + 1];
	bool failed;
	struct store_round_ctx ctx;
	struct judges j; /* names point into ctx */
};

struct violations_ctx {
	struct app *app;
	json_t *arr;
	struct judged_by *by; /* JUDGED_BY_AGENTS of them, allocated at the first need */
	unsigned nby;
};

static void judged_by_release(struct violations_ctx *c)
{
	for (unsigned i = 0; c->by && i < c->nby; i++)
		judges_release(&c->by[i].j);
	c->nby = 0;
}

static const struct judged_by *judged_by(struct violations_ctx *c, const char *agent)
{
	enum judges_part failed;
	struct judged_by *b;

	for (unsigned i = 0; c->by && i < c->nby; i++)
		if (!strcmp(c->by[i].agent, agent))
			return &c->by[i];
	if (!c->by && !(c->by = calloc(JUDGED_BY_AGENTS, sizeof(*c->by))))
		return NULL;
	if (c->nby == JUDGED_BY_AGENTS)
		judged_by_release(c); /* a bound on what one list holds, not a cache */
	b = &c->by[c->nby++];
	memset(b, 0, sizeof(*b));
	snprintf(b->agent, sizeof(b->agent), "%s", agent);
	if (store_round_context(c->app->store, agent, POLICY_DEFAULT_NAME, &b->ctx)) {
		b->failed = true;
		return b;
	}
	b->failed = judges_load(c->app, agent, &b->ctx, &b->j, &failed) != 0;
	return b;
}

/*
 * For a digest_mismatch: what the agent's policy and its amendment list for the path now, beside
 * the digest measured: {policy, policy_version, digests, amendment_version, amendment_digests}
 * ([] where the path is not listed, e.g. after a rollback). NULL when they cannot be read.
 */
static json_t *expected_json(struct violations_ctx *c, const char *agent, const char *path,
			     size_t path_len)
{
	const struct judged_by *b = judged_by(c, agent);
	json_t *d, *ad;

	if (!b || b->failed)
		return NULL;
	d = policy_json_path_digests(b->j.policy, path, path_len);
	ad = policy_json_path_digests(b->j.amendment, path, path_len);
	return api_expected_encode(&(struct api_expected){
		.policy = b->j.policy_name,
		.policy_version = b->ctx.policy_version,
		.digests = d,
		.amendment_version = b->ctx.amendment_version,
		.amendment_digests = ad,
	});
}

/*
 * A stored violation as JSON. `path` is the path as text (proto/text.h: exact when it is UTF-8,
 * else escaped, and then `path_escaped` is true); `path_hex` is always its raw bytes. `approvable`
 * says whether approval can allow it (reasons.h), `recurs` names the decided violation it recurred
 * after.
 */
static json_t *violation_json(const struct store_violation *v)
{
	size_t plen = v->path_len < LIMIT_IMA_PATH ? v->path_len : LIMIT_IMA_PATH;
	char *text = malloc(TEXT_ESCAPED_MAX(LIMIT_IMA_PATH)), *hex = malloc(2 * plen + 1);
	enum reason reason;
	bool escaped;
	json_t *o = NULL;

	if (!text || !hex)
		goto out;
	escaped = text_render(v->path, plen, text, TEXT_ESCAPED_MAX(LIMIT_IMA_PATH));
	hex_encode((const uint8_t *)v->path, plen, hex);
	o = api_violation_encode(&(struct api_violation){
		.id = v->id,
		.agent_id = v->agent,
		.boot_number = v->boot_number,
		.entry = v->entry,
		.path = text,
		.path_escaped = escaped,
		.path_hex = hex,
		.digest = v->digest,
		.template_name = v->template_name,
		.reason = v->reason,
		.first_seen = v->first_seen,
		.last_seen = v->last_seen,
		.count = v->count,
		.state = violation_state_str(v->state),
		.approvable = reason_from_name(v->reason, &reason) &&
			      (reason_info(reason)->kind == REASON_KIND_LEARNABLE ||
			       reason_info(reason)->kind == REASON_KIND_BOOT_LEARNABLE),
		.decided_at = v->decided_at,
		.decision = v->decision,
		.recurs = v->recurs,
	});
out:
	free(text);
	free(hex);
	return o;
}

/*
 * Each digest_mismatch of the list gets its "expected" digests, and, where the policy was
 * built from packages, each digest_mismatch and not_in_allowlist its "explanation"
 * (policy_explain()). After the list, not in its
 * callback: the store is not re-entered while it walks its rows (the SQLite store holds its
 * lock through the callbacks).
 */
static void add_expected(struct violations_ctx *c)
{
	uint8_t *raw = malloc(LIMIT_IMA_PATH);
	size_t i;
	json_t *o;

	if (!raw)
		return;
	json_array_foreach(c->arr, i, o) {
		struct api_violation v;
		const char *agent, *reason, *explanation;
		json_t *e;
		ssize_t n;

		api_violation_decode(o, &v);
		agent = v.agent_id;
		reason = v.reason;

		enum reason r;
		bool known = reason_from_name(reason, &r);
		bool mismatch = known && r == REASON_DIGEST_MISMATCH;
		bool unknown = known && r == REASON_NOT_IN_ALLOWLIST;
		const struct judged_by *by;
		char why[POLICY_EXPLANATION_MAX];

		if (!agent || !v.path_hex || (!mismatch && !unknown))
			continue;
		n = hex_decode(v.path_hex, strlen(v.path_hex), raw, LIMIT_IMA_PATH);
		if (n < 0)
			continue;
		e = mismatch ? expected_json(c, agent, (const char *)raw, (size_t)n) : NULL;
		/* In words, for a policy built from packages: which package owns the path, and
		 * which of its versions the file is not. */
		by = judged_by(c, agent);
		explanation = by && !by->failed &&
					      policy_explain(by->j.policy, (const char *)raw, (size_t)n,
							     mismatch ? POLICY_DIGEST_MISMATCH
								      : POLICY_NOT_IN_ALLOWLIST,
							     why, sizeof(why))
				      ? why
				      : NULL;
		api_violation_annotate(o, e, explanation);
	}
	free(raw);
}

static int violations_cb(void *arg, const struct store_violation *v)
{
	struct violations_ctx *c = arg;
	json_t *o = violation_json(v);

	return o && json_array_append_new(c->arr, o) == 0 ? 0 : -ENOMEM;
}

void handle_violations_list(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	const char *state = http_query(req, "state");
	const char *agent = http_query(req, "agent");
	struct violations_ctx c = { .app = app };
	int st = -1;
	unsigned limit;

	if (state) {
		st = violation_state_from_str(state);
		if (st < 0) {
			http_reply_error(resp, PROTO_ERR_BAD_REQUEST,
					 "state must be open, approved or dismissed");
			return;
		}
	}
	if (agent && !agent_id_valid(agent)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "bad agent id");
		return;
	}
	if (!query_limit(req, resp, &limit))
		goto out;
	c.arr = json_array();
	if (!c.arr || store_violations_list(app->store, st, agent, limit,
					    violations_cb, &c)) {
		json_decref(c.arr);
		http_reply_store_failure(resp);
		goto out;
	}
	add_expected(&c);
	reply_json_value(resp, 200, api_list_encode(API_VIOLATIONS, c.arr));
out:
	judged_by_release(&c);
	free(c.by);
}

/* The {id} of /v1/violations/{id}/...: a positive decimal, else 0. */
static int64_t violation_id_arg(const struct http_request *req)
{
	char *end;
	long long id;

	errno = 0;
	id = strtoll(req->arg[0], &end, 10);
	if (errno || end == req->arg[0] || *end || id <= 0)
		return 0;
	return id;
}

/* The scope of an approval: the body's "scope" ("agent" when there is no body). */
static int approve_scope(const struct http_request *req, enum review_scope *scope)
{
	json_t *body, *v;
	int sc;

	*scope = REVIEW_SCOPE_AGENT;
	if (!req->body_len)
		return 0;
	body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, NULL);
	v = (json_t *)api_approve_request_scope(body);
	sc = review_scope_from_str(json_string_value(v));
	if (!json_is_object(body) || json_object_size(body) != (v ? 1u : 0u) || (v && sc < 0)) {
		json_decref(body);
		return -EINVAL;
	}
	if (v)
		*scope = (enum review_scope)sc;
	json_decref(body);
	return 0;
}

static void act_on_violation(const struct http_request *req, struct http_response *resp,
			     enum violation_state st)
{
	struct app *app = req->app;
	enum review_scope scope;
	struct review_result *r = calloc(1, sizeof(*r)); /* large: it holds a path as text */

	if (!r) {
		http_reply_error(resp, PROTO_ERR_INTERNAL, "out of memory");
		return;
	}
	if (approve_scope(req, &scope)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST,
				 "want no body or {\"scope\": \"agent\"|\"policy\"}");
		goto out;
	}
	switch (review_decide(app, violation_id_arg(req), st, scope, app_actor(req), r)) {
	case REVIEW_OK:
		break;
	case REVIEW_UNKNOWN_VIOLATION:
		http_reply_error(resp, PROTO_ERR_UNKNOWN_VIOLATION, "no such violation");
		goto out;
	case REVIEW_UNKNOWN_AGENT:
		http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "the violation's agent is gone");
		goto out;
	case REVIEW_ALREADY_DECIDED:
		http_reply_error(resp, PROTO_ERR_ALREADY_DECIDED, "%s", r->why);
		goto out;
	case REVIEW_NOT_APPROVABLE:
		http_reply_error(resp, PROTO_ERR_NOT_APPROVABLE, "%s", r->why);
		goto out;
	case REVIEW_UNKNOWN_POLICY:
		http_reply_error(resp, PROTO_ERR_REVIEW_UNKNOWN_POLICY, "%s", r->why);
		goto out;
	case REVIEW_POLICY_BROKEN:
		http_reply_error(resp, PROTO_ERR_INTERNAL, "%s", r->why);
		goto out;
	case REVIEW_CONFLICT:
		http_reply_error(resp, PROTO_ERR_POLICY_CONFLICT, "%s", r->why);
		goto out;
	case REVIEW_SIGNATURE_REQUIRED:
		http_reply_error(resp, PROTO_ERR_SIGNATURE_REQUIRED, "%s", r->why);
		goto out;
	case REVIEW_STORE_FAILED:
	case REVIEW_INTERNAL:
	default:
		http_reply_store_failure(resp);
		goto out;
	}
	/* What the call did, exactly: the scope, and the policy or amendment version it wrote. */
	reply_json_value(resp, 200, api_decision_encode(&(struct api_decision){
		.id = violation_id_arg(req),
		.state = violation_state_str(r->state),
		.agent_id = r->agent,
		.reason = r->reason,
		.path = r->path,
		.path_escaped = r->path_escaped,
		.digest = r->digest,
		.policy = r->policy,
		.scope = st == VIOLATION_APPROVED ? review_scope_str(r->scope) : NULL,
		.into_policy = r->into_policy,
		.policy_version = r->policy_version,
		.policy_agents = (int64_t)r->policy_agents,
		.into_amendment = r->into_amendment,
		.amendment_version = r->amendment_version,
	}));
out:
	free(r);
}

void handle_violation_approve(const struct http_request *req, struct http_response *resp)
{
	act_on_violation(req, resp, VIOLATION_APPROVED);
}

void handle_violation_dismiss(const struct http_request *req, struct http_response *resp)
{
	act_on_violation(req, resp, VIOLATION_DISMISSED);
}
