/*
 * api_codec: the operator API's resources as they travel (api_codec.h).
 */
#include <string.h>

#include "verifier/api/api_codec.h"

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

/* Sets key to v (taken; NULL: an empty object or, with empty_array, array). */
static int set_or_empty(json_t *o, const char *key, json_t *v, bool empty_array)
{
	if (!v)
		v = empty_array ? json_array() : json_object();
	return json_object_set_new(o, key, v);
}

json_t *api_reason_encode(const struct api_reason *r)
{
	return json_pack("{s:s, s:s, s:I}", "code", r->code, "detail", r->detail, "entry",
			 (json_int_t)r->entry);
}

void api_reason_decode(const json_t *o, struct api_reason *r)
{
	r->code = get_str(o, "code");
	r->detail = get_str(o, "detail");
	r->entry = get_int(o, "entry");
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
		json_decref(a->labels);
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
	if (set_or_empty(o, "labels", a->labels, false) ||
	    json_object_set_new(o, "registered", json_boolean(a->registered))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void api_agent_decode(const json_t *o, struct api_agent *a)
{
	json_t *boot = json_object_get(o, "boot");
	json_t *reasons = json_object_get(o, "last_reasons");
	json_t *labels = json_object_get(o, "labels");

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
	a->labels = json_is_object(labels) ? labels : NULL;
	a->registered = get_bool(o, "registered");
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

json_t *api_registration_encode(const struct api_registration *r)
{
	json_t *o;

	if (r->listed) {
		o = json_pack("{s:s, s:s, s:s, s:s}", "agent_id", r->agent_id, "ek", r->ek,
			      "ek_sha256", r->ek_sha256, "policy", r->policy);
		if (o && (set_or_empty(o, "labels", r->labels, false) ||
			  json_object_set_new(o, "actor", json_string(r->actor ? r->actor : "")) ||
			  json_object_set_new(o, "created_at", json_integer(r->created_at)))) {
			json_decref(o);
			return NULL;
		}
		if (!o)
			json_decref(r->labels);
		return o;
	}
	o = json_pack("{s:s}", "agent_id", r->agent_id);
	if (o && (r->ek_cert ? json_object_set_new(o, "ek_cert", json_string(r->ek_cert))
			     : json_object_set_new(o, "ek_sha256", json_string(r->ek_sha256))))
		goto fail;
	if (o && r->policy && r->policy[0] &&
	    json_object_set_new(o, "policy", json_string(r->policy)))
		goto fail;
	if (o && json_object_size(r->labels))
		return json_object_set_new(o, "labels", r->labels) ? (json_decref(o), NULL) : o;
	json_decref(r->labels);
	return o;
fail:
	json_decref(r->labels);
	json_decref(o);
	return NULL;
}

/* Whether o's member key, if there, is a string. */
static bool str_or_absent(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return !v || json_is_string(v);
}

bool api_registration_decode(const json_t *o, struct api_registration *r)
{
	json_t *labels = json_object_get(o, "labels");
	bool typed = json_is_object(o) && (!labels || json_is_object(labels)) &&
		     str_or_absent(o, "agent_id") && str_or_absent(o, "ek") &&
		     str_or_absent(o, "ek_sha256") && str_or_absent(o, "ek_cert") &&
		     str_or_absent(o, "policy") && str_or_absent(o, "actor");

	r->listed = json_object_get(o, "created_at") != NULL;
	r->agent_id = get_str(o, "agent_id");
	r->ek = get_str(o, "ek");
	r->ek_sha256 = get_str(o, "ek_sha256");
	r->ek_cert = get_str(o, "ek_cert");
	r->policy = get_str(o, "policy");
	r->labels = json_is_object(labels) ? labels : NULL;
	r->actor = get_str(o, "actor");
	r->created_at = get_int(o, "created_at");
	return typed;
}

json_t *api_registered_encode(const struct api_registered *r)
{
	if (r->agent_id)
		return json_pack("{s:s, s:b}", "agent_id", r->agent_id, "registered", 0);
	return json_pack("{s:I}", "registered", (json_int_t)r->count);
}

void api_registered_decode(const json_t *o, struct api_registered *r)
{
	r->agent_id = get_str(o, "agent_id");
	r->count = get_int(o, "registered");
}

json_t *api_labels_change_encode(const struct api_labels_change *c)
{
	json_t *o = json_object();

	if (o && json_object_size(c->set) && json_object_set(o, "set", c->set))
		goto fail;
	if (o && json_array_size(c->remove) && json_object_set(o, "remove", c->remove))
		goto fail;
	json_decref(c->set);
	json_decref(c->remove);
	return o;
fail:
	json_decref(c->set);
	json_decref(c->remove);
	json_decref(o);
	return NULL;
}

void api_labels_change_decode(const json_t *o, struct api_labels_change *c)
{
	json_t *set = json_object_get(o, "set"), *remove = json_object_get(o, "remove");

	c->set = json_is_object(set) ? set : NULL;
	c->remove = json_is_array(remove) ? remove : NULL;
}

json_t *api_agent_labels_encode(const struct api_agent_labels *l)
{
	json_t *o = json_pack("{s:s}", "agent_id", l->agent_id);

	if (!o || set_or_empty(o, "labels", l->labels, false)) {
		if (!o)
			json_decref(l->labels);
		json_decref(o);
		return NULL;
	}
	return o;
}

void api_agent_labels_decode(const json_t *o, struct api_agent_labels *l)
{
	json_t *labels = json_object_get(o, "labels");

	l->agent_id = get_str(o, "agent_id");
	l->labels = json_is_object(labels) ? labels : NULL;
}

json_t *api_assign_request_encode(const struct api_assign *a)
{
	return json_pack("{s:s, s:b}", "label", a->label, "apply", a->apply);
}

json_t *api_assign_encode(const struct api_assign *a)
{
	return json_pack("{s:s, s:s, s:b, s:I, s:o}", "policy", a->policy, "label", a->label,
			 "applied", a->apply, "matching", (json_int_t)a->matching, "agents",
			 a->agents ? a->agents : json_array());
}

void api_assign_decode(const json_t *o, struct api_assign *a)
{
	json_t *agents = json_object_get(o, "agents");

	a->policy = get_str(o, "policy");
	a->label = get_str(o, "label");
	a->apply = json_object_get(o, "applied") ? get_bool(o, "applied") : get_bool(o, "apply");
	a->matching = get_int(o, "matching");
	a->agents = json_is_array(agents) ? agents : NULL;
}

json_t *api_audit_signed_encode(const struct api_audit_signed *s)
{
	json_t *o = s->hash ? json_pack("{s:I, s:s, s:I, s:s}", "seq", (json_int_t)s->seq, "hash",
					s->hash, "time", (json_int_t)s->time, "signature",
					s->signature)
			    : json_pack("{s:I}", "seq", (json_int_t)s->seq);

	if (o && s->public_key && json_object_set_new(o, "public_key", json_string(s->public_key))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void api_audit_signed_decode(const json_t *o, struct api_audit_signed *s)
{
	s->seq = get_int(o, "seq");
	s->hash = get_str(o, "hash");
	s->time = get_int(o, "time");
	s->signature = get_str(o, "signature");
	s->public_key = get_str(o, "public_key");
}

json_t *api_audit_head_encode(const struct api_audit_head *h)
{
	json_t *o = json_pack("{s:I, s:s}", "seq", (json_int_t)h->seq, "hash", h->hash);

	if (o && h->has_signed &&
	    json_object_set_new(o, "signed", api_audit_signed_encode(&h->signed_))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void api_audit_head_decode(const json_t *o, struct api_audit_head *h)
{
	json_t *s = json_object_get(o, "signed");

	h->seq = get_int(o, "seq");
	h->hash = get_str(o, "hash");
	h->has_signed = json_is_object(s);
	api_audit_signed_decode(s, &h->signed_);
}

/* An event's data, by its type (api_codec.h); NULL for another type or out of memory. */
static json_t *event_data_encode(const struct api_event *e)
{
	const char *t = e->type ? e->type : "";
	json_t *d;

	if (!strcmp(t, API_EVENT_UNTRUSTED))
		return json_pack("{s:I, s:I, s:o}", "verdict_id", (json_int_t)e->verdict_id,
				 "boot_number", (json_int_t)e->boot_number, "reasons",
				 e->reasons ? e->reasons : json_array());
	json_decref(e->reasons);
	if (!strcmp(t, API_EVENT_VIOLATION)) {
		d = json_pack("{s:I, s:s, s:s, s:b, s:s, s:s, s:I, s:I, s:I}", "violation_id",
			      (json_int_t)e->violation_id, "reason", e->reason, "path", e->path,
			      "path_escaped", e->path_escaped, "path_hex", e->path_hex, "digest",
			      e->digest, "boot_number", (json_int_t)e->boot_number, "entry",
			      (json_int_t)e->entry, "count", (json_int_t)e->count);
		if (d && e->recurs && json_object_set_new(d, "recurs", json_integer(e->recurs))) {
			json_decref(d);
			return NULL;
		}
		return d;
	}
	if (!strcmp(t, API_EVENT_STALE))
		return json_pack("{s:I, s:I, s:I}", "last_seen", (json_int_t)e->last_seen,
				 "interval", (json_int_t)e->interval, "stale_after",
				 (json_int_t)e->stale_after);
	if (!strcmp(t, API_EVENT_ENROLLED))
		return json_pack("{s:s}", "ak_name", e->ak_name);
	if (!strcmp(t, API_EVENT_RETIRED))
		return json_pack("{s:b, s:s}", "purged", e->purged, "actor", e->actor);
	if (!strcmp(t, API_EVENT_RESET))
		return json_pack("{s:s}", "actor", e->actor);
	return NULL;
}

json_t *api_event_encode(const struct api_event *e)
{
	json_t *o = json_pack("{s:s, s:s, s:I, s:s, s:o*}", "id", e->id, "type", e->type, "time",
			      (json_int_t)e->time, "agent_id", e->agent_id, "data",
			      event_data_encode(e));

	if (o && (!json_object_get(o, "data") ||
		  (e->audit_head && json_object_set_new(o, "audit_head",
							api_audit_head_encode(e->audit_head))))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void api_event_decode(const json_t *o, struct api_event *e, struct api_audit_head *head)
{
	const json_t *d = json_object_get(o, "data");
	json_t *reasons = json_object_get(d, "reasons"), *h = json_object_get(o, "audit_head");

	e->id = get_str(o, "id");
	e->type = get_str(o, "type");
	e->time = get_int(o, "time");
	e->agent_id = get_str(o, "agent_id");
	e->verdict_id = get_int(d, "verdict_id");
	e->boot_number = get_int(d, "boot_number");
	e->reasons = json_is_array(reasons) ? reasons : NULL;
	e->violation_id = get_int(d, "violation_id");
	e->reason = get_str(d, "reason");
	e->path = get_str(d, "path");
	e->path_escaped = get_bool(d, "path_escaped");
	e->path_hex = get_str(d, "path_hex");
	e->digest = get_str(d, "digest");
	e->entry = get_int(d, "entry");
	e->count = get_int(d, "count");
	e->recurs = get_int(d, "recurs");
	e->last_seen = get_int(d, "last_seen");
	e->interval = get_int(d, "interval");
	e->stale_after = get_int(d, "stale_after");
	e->ak_name = get_str(d, "ak_name");
	e->purged = get_bool(d, "purged");
	e->actor = get_str(d, "actor");
	api_audit_head_decode(h, head);
	e->audit_head = json_is_object(h) ? head : NULL;
}

json_t *api_agent_policy_request_encode(const char *policy)
{
	return json_pack("{s:s}", "policy", policy);
}

json_t *api_agent_policy_encode(const struct api_agent_policy *p)
{
	return json_pack("{s:s, s:s}", "agent_id", p->agent_id, "policy", p->policy);
}

void api_agent_policy_decode(const json_t *o, struct api_agent_policy *p)
{
	p->agent_id = get_str(o, "agent_id");
	p->policy = get_str(o, "policy");
}

json_t *api_agent_retired_encode(const char *agent_id, bool purged)
{
	return json_pack("{s:s, s:s}", "agent_id", agent_id, "state",
			 purged ? "purged" : "retired");
}

json_t *api_agent_reset_encode(const char *agent_id)
{
	return json_pack("{s:s, s:b}", "agent_id", agent_id, "reset", 1);
}

json_t *api_policy_deleted_encode(const char *name)
{
	return json_pack("{s:s, s:b}", "policy", name, "deleted", 1);
}

json_t *api_rollback_request_encode(int64_t version)
{
	return json_pack("{s:I}", "version", (json_int_t)version);
}

const json_t *api_assign_request_apply(const json_t *o)
{
	return json_object_get(o, "apply");
}

const json_t *api_rollback_request_version(const json_t *o)
{
	return json_object_get(o, "version");
}

json_t *api_approve_request_encode(const char *scope)
{
	return scope ? json_pack("{s:s}", "scope", scope) : json_object();
}

const json_t *api_approve_request_scope(const json_t *o)
{
	return json_object_get(o, "scope");
}

json_t *api_enforced_encode(const struct api_enforced *e)
{
	return json_pack("{s:s, s:I, s:s, s:o, s:o, s:o}", "name", e->name, "version",
			 (json_int_t)e->version, "format", e->format, "warnings",
			 e->warnings ? e->warnings : json_array(), "source_excludes",
			 e->source_excludes ? e->source_excludes : json_array(), "policy",
			 e->policy ? e->policy : json_null());
}

void api_enforced_decode(const json_t *o, struct api_enforced *e)
{
	json_t *w = json_object_get(o, "warnings"), *x = json_object_get(o, "source_excludes");
	json_t *p = json_object_get(o, "policy");

	e->name = get_str(o, "name");
	e->version = get_int(o, "version");
	e->format = get_str(o, "format");
	e->warnings = json_is_array(w) ? w : NULL;
	e->source_excludes = json_is_array(x) ? x : NULL;
	e->policy = json_is_object(p) ? p : NULL;
}

json_t *api_list_encode(const char *member, json_t *items)
{
	return items ? json_pack("{s:o}", member, items) : NULL;
}

json_t *api_agent_list_encode(const char *agent_id, const char *member, json_t *items)
{
	return items ? json_pack("{s:s, s:o}", "agent_id", agent_id, member, items) : NULL;
}

json_t *api_policy_versions_encode(const char *name, int64_t agents, json_t *versions)
{
	return versions ? json_pack("{s:s, s:I, s:o}", "name", name, API_VERSIONS_AGENTS,
				    (json_int_t)agents, API_VERSIONS, versions)
			: NULL;
}

json_t *api_list_items(const json_t *o, const char *member)
{
	json_t *a = json_object_get(o, member);

	return json_is_array(a) ? a : NULL;
}

const char *api_list_agent_id(const json_t *o)
{
	return get_str(o, "agent_id");
}

int64_t api_policy_versions_agents(const json_t *o, bool *has)
{
	*has = json_object_get(o, API_VERSIONS_AGENTS) != NULL;
	return get_int(o, API_VERSIONS_AGENTS);
}

int api_boot_log_annotate(json_t *boot, const struct api_boot_log *l)
{
	if (json_object_set_new(boot, "log_sha256", json_string(l->log_sha256)) ||
	    json_object_set_new(boot, "log_bytes", json_integer((json_int_t)l->log_bytes)) ||
	    json_object_set_new(boot, "received_at", json_integer((json_int_t)l->received_at)))
		return -1;
	return 0;
}

void api_boot_log_decode(const json_t *boot, struct api_boot_log *l)
{
	l->log_sha256 = get_str(boot, "log_sha256");
	l->log_bytes = get_int(boot, "log_bytes");
	l->received_at = get_int(boot, "received_at");
}

static json_t *boot_kernel_encode(const struct api_boot_kernel *k)
{
	json_t *o = json_object();

	if (!o || (k->has_allowed && json_object_set_new(o, "allowed", json_boolean(k->allowed))) ||
	    json_object_set_new(o, "digest", json_string(k->digest)) ||
	    (k->file && json_object_set_new(o, "file", json_string(k->file))) ||
	    (k->name && json_object_set_new(o, "name", json_string(k->name)))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *api_boot_summary_encode(const struct api_boot_summary *b)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (!b->has_log) {
		if (json_object_set_new(o, "status", json_string(b->status))) {
			json_decref(o);
			return NULL;
		}
		return o;
	}
	if ((b->cmdline && (json_object_set_new(o, "cmdline", json_string(b->cmdline)) ||
			    json_object_set_new(o, "cmdline_verified",
						json_boolean(b->cmdline_verified)))) ||
	    json_object_set_new(o, "events", json_integer((json_int_t)b->events)) ||
	    json_object_set_new(o, "firmware", json_string(b->firmware)) ||
	    (b->has_kernel && json_object_set_new(o, "kernel", boot_kernel_encode(&b->kernel))) ||
	    (b->pcr0 && json_object_set_new(o, "pcr0", json_string(b->pcr0))) ||
	    json_object_set_new(o, "secure_boot", json_string(b->secure_boot)) ||
	    (b->has_locality && json_object_set_new(o, "startup_locality",
						    json_integer((json_int_t)b->startup_locality))) ||
	    json_object_set_new(o, "status", json_string(b->status))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void api_boot_summary_decode(const json_t *o, struct api_boot_summary *b)
{
	const json_t *k = json_object_get(o, "kernel"), *allowed = json_object_get(k, "allowed");

	b->status = get_str(o, "status");
	b->has_log = json_object_get(o, "events") != NULL;
	b->events = get_int(o, "events");
	b->has_locality = json_is_integer(json_object_get(o, "startup_locality"));
	b->startup_locality = get_int(o, "startup_locality");
	b->firmware = get_str(o, "firmware");
	b->secure_boot = get_str(o, "secure_boot");
	b->pcr0 = get_str(o, "pcr0");
	b->has_kernel = json_is_object(k);
	b->kernel.digest = get_str(k, "digest");
	b->kernel.file = get_str(k, "file");
	b->kernel.name = get_str(k, "name");
	b->kernel.has_allowed = json_is_boolean(allowed);
	b->kernel.allowed = json_is_true(allowed);
	b->cmdline = get_str(o, "cmdline");
	b->cmdline_verified = get_bool(o, "cmdline_verified");
}
