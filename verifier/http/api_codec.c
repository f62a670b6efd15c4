/*
 * api_codec: the operator API's resources as they travel (api_codec.h).
 */
#include "verifier/http/api_codec.h"

static json_t *versions_encode(const struct api_versions *v)
{
	if (!v->known)
		return json_null();
	return json_pack("{s:s, s:I, s:I}", "policy", v->policy, "policy_version",
			 (json_int_t)v->policy_version, "amendment_version",
			 (json_int_t)v->amendment_version);
}

static const char *get_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int64_t get_int(const json_t *o, const char *key)
{
	return (int64_t)json_integer_value(json_object_get(o, key));
}

static bool get_bool(const json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

static void versions_decode(const json_t *o, struct api_versions *v)
{
	v->known = json_is_object(o);
	v->policy = get_str(o, "policy");
	v->policy_version = get_int(o, "policy_version");
	v->amendment_version = get_int(o, "amendment_version");
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *api_agent_encode(const struct api_agent *a)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "agent_id",
			      a->agent_id, "state", a->state, "policy", a->policy, "ak_name",
			      a->ak_name, "created_at", (json_int_t)a->created_at, "activated_at",
			      (json_int_t)a->activated_at, "boot_number", (json_int_t)a->boot_number,
			      "next_entry", (json_int_t)a->next_entry, "last_verdict_at",
			      (json_int_t)a->last_verdict_at, "open_violations",
			      (json_int_t)a->open_violations);

	if (!o) {
		json_decref(a->last_reasons);
		json_decref(a->boot);
		return NULL;
	}
	/* Lifecycle: when it was retired, and whether its next enrollment may bring another EK
	 * and AK (an operator reset it). */
	json_object_set_new(o, "retired_at", json_integer(a->retired_at));
	json_object_set_new(o, "reset_at", json_integer(a->reset_at));
	/* Liveness: the last valid evidence (or activation), the interval it is held to. */
	json_object_set_new(o, "last_seen", json_integer(a->last_seen));
	json_object_set_new(o, "interval", json_integer(a->interval));
	json_object_set_new(o, "interval_reported", json_boolean(a->interval_reported));
	json_object_set_new(o, "stale_after", json_integer(a->stale_after));
	json_object_set_new(o, "stale", json_boolean(a->stale));
	json_object_set_new(o, "rejudging", json_boolean(a->rejudging));
	json_object_set_new(o, "judged_by", versions_encode(&a->judged_by));
	json_object_set_new(o, "policy_version", json_integer(a->policy_version));
	json_object_set_new(o, "amendment_version", json_integer(a->amendment_version));
	if (a->last_reasons)
		json_object_set_new(o, "last_reasons", a->last_reasons);
	json_object_set_new(o, "last_verdict", str_or_null(a->last_verdict));
	if (a->detail) {
		json_object_set_new(o, "ek_cert", str_or_null(a->ek_cert));
		json_object_set_new(o, "ak_pub", str_or_null(a->ak_pub));
		json_object_set_new(o, "boot", a->boot ? a->boot : json_null());
	} else {
		json_decref(a->boot);
	}
	return o;
}

void api_agent_decode(const json_t *o, struct api_agent *a)
{
	json_t *boot = json_object_get(o, "boot");
	json_t *reasons = json_object_get(o, "last_reasons");

	a->agent_id = get_str(o, "agent_id");
	a->state = get_str(o, "state");
	a->policy = get_str(o, "policy");
	a->ak_name = get_str(o, "ak_name");
	a->created_at = get_int(o, "created_at");
	a->activated_at = get_int(o, "activated_at");
	a->boot_number = get_int(o, "boot_number");
	a->next_entry = get_int(o, "next_entry");
	a->last_verdict_at = get_int(o, "last_verdict_at");
	a->open_violations = get_int(o, "open_violations");
	a->retired_at = get_int(o, "retired_at");
	a->reset_at = get_int(o, "reset_at");
	a->last_seen = get_int(o, "last_seen");
	a->interval = get_int(o, "interval");
	a->interval_reported = get_bool(o, "interval_reported");
	a->stale_after = get_int(o, "stale_after");
	a->stale = get_bool(o, "stale");
	a->rejudging = get_bool(o, "rejudging");
	versions_decode(json_object_get(o, "judged_by"), &a->judged_by);
	a->policy_version = get_int(o, "policy_version");
	a->amendment_version = get_int(o, "amendment_version");
	a->last_reasons = json_is_array(reasons) ? reasons : NULL;
	a->last_verdict = get_str(o, "last_verdict");
	a->detail = json_object_get(o, "ek_cert") || json_object_get(o, "boot");
	a->ek_cert = get_str(o, "ek_cert");
	a->ak_pub = get_str(o, "ak_pub");
	a->boot = json_is_object(boot) ? boot : NULL;
}

json_t *api_verdict_encode(const struct api_verdict *v)
{
	json_t *o = json_pack("{s:I, s:I, s:I, s:s, s:b, s:o, s:I}", "id", (json_int_t)v->id,
			      "time", (json_int_t)v->time, "boot_number",
			      (json_int_t)v->boot_number, "verdict", v->verdict, "trusted",
			      v->trusted, "reasons", v->reasons ? v->reasons : json_array(),
			      "next_offset", (json_int_t)v->next_offset);

	if (o)
		json_object_set_new(o, "judged_by", versions_encode(&v->judged_by));
	return o;
}

void api_verdict_decode(const json_t *o, struct api_verdict *v)
{
	json_t *reasons = json_object_get(o, "reasons");

	v->id = get_int(o, "id");
	v->time = get_int(o, "time");
	v->boot_number = get_int(o, "boot_number");
	v->verdict = get_str(o, "verdict");
	v->trusted = get_bool(o, "trusted");
	v->reasons = json_is_array(reasons) ? reasons : NULL;
	v->next_offset = get_int(o, "next_offset");
	versions_decode(json_object_get(o, "judged_by"), &v->judged_by);
}

json_t *api_hour_encode(const struct api_hour *h)
{
	return json_pack("{s:I, s:I, s:I, s:I}", "hour", (json_int_t)h->hour, "rounds",
			 (json_int_t)h->rounds, "trusted", (json_int_t)h->trusted, "untrusted",
			 (json_int_t)h->untrusted);
}

void api_hour_decode(const json_t *o, struct api_hour *h)
{
	h->hour = get_int(o, "hour");
	h->rounds = get_int(o, "rounds");
	h->trusted = get_int(o, "trusted");
	h->untrusted = get_int(o, "untrusted");
}

json_t *api_violation_encode(const struct api_violation *v)
{
	json_t *o = json_pack("{s:I, s:s, s:I, s:I, s:s, s:b, s:s, s:s, s:s, s:s, s:I, s:I, s:I,"
			      " s:s, s:b, s:I, s:s}",
			      "id", (json_int_t)v->id, "agent_id", v->agent_id, "boot_number",
			      (json_int_t)v->boot_number, "entry", (json_int_t)v->entry, "path",
			      v->path, "path_escaped", v->path_escaped, "path_hex", v->path_hex,
			      "digest", v->digest, "template", v->template_name, "reason", v->reason,
			      "first_seen", (json_int_t)v->first_seen, "last_seen",
			      (json_int_t)v->last_seen, "count", (json_int_t)v->count, "state",
			      v->state, "approvable", v->approvable, "decided_at",
			      (json_int_t)v->decided_at, "decision", v->decision);

	if (o && v->recurs)
		json_object_set_new(o, "recurs", json_integer(v->recurs));
	if (o)
		api_violation_annotate(o, v->expected, v->explanation);
	else
		json_decref(v->expected);
	return o;
}

void api_violation_annotate(json_t *o, json_t *expected, const char *explanation)
{
	if (expected)
		json_object_set_new(o, "expected", expected);
	if (explanation)
		json_object_set_new(o, "explanation", json_string(explanation));
}

void api_violation_decode(const json_t *o, struct api_violation *v)
{
	json_t *expected = json_object_get(o, "expected");

	v->id = get_int(o, "id");
	v->agent_id = get_str(o, "agent_id");
	v->boot_number = get_int(o, "boot_number");
	v->entry = get_int(o, "entry");
	v->path = get_str(o, "path");
	v->path_escaped = get_bool(o, "path_escaped");
	v->path_hex = get_str(o, "path_hex");
	v->digest = get_str(o, "digest");
	v->template_name = get_str(o, "template");
	v->reason = get_str(o, "reason");
	v->first_seen = get_int(o, "first_seen");
	v->last_seen = get_int(o, "last_seen");
	v->count = get_int(o, "count");
	v->state = get_str(o, "state");
	v->approvable = get_bool(o, "approvable");
	v->decided_at = get_int(o, "decided_at");
	v->decision = get_str(o, "decision");
	v->recurs = get_int(o, "recurs");
	v->expected = json_is_object(expected) ? expected : NULL;
	v->explanation = get_str(o, "explanation");
}

json_t *api_expected_encode(const struct api_expected *e)
{
	return json_pack("{s:s, s:I, s:o, s:I, s:o}", "policy", e->policy, "policy_version",
			 (json_int_t)e->policy_version, "digests",
			 e->digests ? e->digests : json_array(), "amendment_version",
			 (json_int_t)e->amendment_version, "amendment_digests",
			 e->amendment_digests ? e->amendment_digests : json_array());
}

json_t *api_decision_encode(const struct api_decision *d)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:s, s:b, s:s, s:s}", "id", (json_int_t)d->id,
			      "state", d->state, "agent_id", d->agent_id, "reason", d->reason,
			      "path", d->path, "path_escaped", d->path_escaped, "digest", d->digest,
			      "policy", d->policy);

	if (o && d->scope)
		json_object_set_new(o, "scope", json_string(d->scope));
	if (o && d->into_policy) {
		json_object_set_new(o, "policy_version", json_integer(d->policy_version));
		json_object_set_new(o, "policy_agents", json_integer(d->policy_agents));
	}
	if (o && d->into_amendment)
		json_object_set_new(o, "amendment_version", json_integer(d->amendment_version));
	return o;
}

void api_decision_decode(const json_t *o, struct api_decision *d)
{
	d->id = get_int(o, "id");
	d->state = get_str(o, "state");
	d->agent_id = get_str(o, "agent_id");
	d->reason = get_str(o, "reason");
	d->path = get_str(o, "path");
	d->path_escaped = get_bool(o, "path_escaped");
	d->digest = get_str(o, "digest");
	d->policy = get_str(o, "policy");
	d->scope = get_str(o, "scope");
	d->into_policy = json_object_get(o, "policy_version") != NULL;
	d->policy_version = get_int(o, "policy_version");
	d->policy_agents = get_int(o, "policy_agents");
	d->into_amendment = json_object_get(o, "amendment_version") != NULL;
	d->amendment_version = get_int(o, "amendment_version");
}

json_t *api_agent_event_encode(const struct api_agent_event *e)
{
	return json_pack("{s:I, s:I, s:s, s:s, s:s}", "id", (json_int_t)e->id, "time",
			 (json_int_t)e->time, "event", e->event, "actor", e->actor, "detail",
			 e->detail ? e->detail : "");
}

void api_agent_event_decode(const json_t *o, struct api_agent_event *e)
{
	e->id = get_int(o, "id");
	e->time = get_int(o, "time");
	e->event = get_str(o, "event");
	e->actor = get_str(o, "actor");
	e->detail = get_str(o, "detail");
}

json_t *api_policy_summary_encode(const struct api_policy_summary *p)
{
	return json_pack("{s:s, s:I, s:I, s:s, s:I}", "name", p->name, "version",
			 (json_int_t)p->version, "time", (json_int_t)p->time, "actor", p->actor,
			 "agents", (json_int_t)p->agents);
}

void api_policy_summary_decode(const json_t *o, struct api_policy_summary *p)
{
	p->name = get_str(o, "name");
	p->version = get_int(o, "version");
	p->time = get_int(o, "time");
	p->actor = get_str(o, "actor");
	p->agents = get_int(o, "agents");
}

json_t *api_policy_version_encode(const struct api_policy_version *v)
{
	return json_pack("{s:I, s:s, s:I, s:I, s:b, s:s}", "version", (json_int_t)v->version,
			 "actor", v->actor, "time", (json_int_t)v->time, "bytes",
			 (json_int_t)v->bytes, "signed", v->signed_, "signer",
			 v->signer ? v->signer : "");
}

void api_policy_version_decode(const json_t *o, struct api_policy_version *v)
{
	v->version = get_int(o, "version");
	v->actor = get_str(o, "actor");
	v->time = get_int(o, "time");
	v->bytes = get_int(o, "bytes");
	v->signed_ = get_bool(o, "signed");
	v->signer = get_str(o, "signer");
}

json_t *api_rollback_encode(const struct api_rollback *r)
{
	json_t *o = json_pack("{s:I, s:I, s:b, s:I, s:s}", "version", (json_int_t)r->version,
			      "from", (json_int_t)r->from, "changed", r->changed, "agents",
			      (json_int_t)r->agents, "signer", r->signer);

	if (o)
		json_object_set_new(o, r->agent_id ? "agent_id" : "name",
				    json_string(r->agent_id ? r->agent_id : r->name));
	return o;
}

void api_rollback_decode(const json_t *o, struct api_rollback *r)
{
	r->version = get_int(o, "version");
	r->from = get_int(o, "from");
	r->changed = get_bool(o, "changed");
	r->agents = get_int(o, "agents");
	r->signer = get_str(o, "signer");
	r->name = get_str(o, "name");
	r->agent_id = get_str(o, "agent_id");
}

json_t *api_policy_stored_encode(const struct api_policy_stored *p)
{
	return json_pack("{s:s, s:I, s:o, s:b, s:s}", "name", p->name, "version",
			 (json_int_t)p->version, "warnings", p->warnings ? p->warnings : json_array(),
			 "signed", p->signed_, "signer", p->signer);
}

void api_policy_stored_decode(const json_t *o, struct api_policy_stored *p)
{
	json_t *w = json_object_get(o, "warnings");

	p->name = get_str(o, "name");
	p->version = get_int(o, "version");
	p->warnings = json_is_array(w) ? w : NULL;
	p->signed_ = get_bool(o, "signed");
	p->signer = get_str(o, "signer");
}

json_t *api_amendment_encode(const struct api_amendment *a)
{
	return json_pack("{s:s, s:I, s:o}", "agent_id", a->agent_id, "version",
			 (json_int_t)a->version, "amendment",
			 a->amendment ? a->amendment : json_null());
}

void api_amendment_decode(const json_t *o, struct api_amendment *a)
{
	json_t *doc = json_object_get(o, "amendment");

	a->agent_id = get_str(o, "agent_id");
	a->version = get_int(o, "version");
	a->amendment = json_is_object(doc) ? doc : NULL;
}

json_t *api_ear_encode(const struct api_ear *e)
{
	if (e->token)
		return json_pack("{s:s, s:s}", "agent_id", e->agent_id, "ear", e->token);
	return json_pack("{s:s, s:s, s:I}", "status", "pending", "nonce", e->nonce, "retry_after",
			 (json_int_t)e->retry_after);
}

void api_ear_decode(const json_t *o, struct api_ear *e)
{
	e->agent_id = get_str(o, "agent_id");
	e->token = get_str(o, "ear");
	e->nonce = get_str(o, "nonce");
	e->retry_after = get_int(o, "retry_after");
}

json_t *api_ear_rotation_encode(const struct api_ear_rotation *r)
{
	return json_pack("{s:s, s:s}", "kid", r->kid, "retired_kid", r->retired_kid);
}

void api_ear_rotation_decode(const json_t *o, struct api_ear_rotation *r)
{
	r->kid = get_str(o, "kid");
	r->retired_kid = get_str(o, "retired_kid");
}
