/*
 * verifier/api/api_codec: the operator API's agent, verdict, counter, violation, decision,
 * history, policy, version, rollback, stored-policy, amendment, EAR, registration, label, audit
 * head and webhook event resources, a verdict's reasons, the list answers and the boot summary with its log. Encoding writes
 * the members the API has always answered, in its order (the exact compact text is pinned: a
 * rename or a reorder is a change of the contract, to make in docs/openapi.json too); decoding
 * reads back every member, and reads a missing or mistyped one as 0, false or NULL.
 */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "verifier/api/api_codec.h"
#include "verifier/service/registrations.h"

static char *compact(json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return s;
}

static bool text_is(char *got, const char *want)
{
	bool same = got && !strcmp(got, want);

	if (!same)
		fprintf(stderr, "  got:  %s\n  want: %s\n", got ? got : "(null)", want);
	free(got);
	return same;
}

/*
 * docs/openapi.json's schemas, to hold each encoded resource to the description: every member
 * the codec writes is a property the schema names, every property it requires is written, at
 * every level the schema describes (a $ref followed, an anyOf's object taken, an array's items).
 */
static json_t *openapi;

static const json_t *schema_resolve(const json_t *s)
{
	const char *ref;
	const json_t *alt;
	size_t i;

	for (int depth = 0; depth < 8 && s; depth++) {
		ref = json_string_value(json_object_get(s, "$ref"));
		if (ref && !strncmp(ref, "#/components/schemas/", 21)) {
			s = json_object_get(json_object_get(json_object_get(openapi, "components"),
							    "schemas"),
					    ref + 21);
			continue;
		}
		if (json_is_array(json_object_get(s, "anyOf"))) {
			const json_t *found = NULL;

			json_array_foreach(json_object_get(s, "anyOf"), i, alt)
				if (!json_is_string(json_object_get(alt, "type")) ||
				    strcmp(json_string_value(json_object_get(alt, "type")), "null"))
					found = alt;
			s = found;
			continue;
		}
		return s;
	}
	return s;
}

/* Whether v fits schema s by member names; where says where in the resource (for the log). */
static bool fits(const json_t *v, const json_t *s, const char *where)
{
	const json_t *props, *m, *r;
	const char *key;
	size_t i;
	bool ok = true;

	s = schema_resolve(s);
	if (!s || json_is_null(v))
		return s != NULL;
	if (json_is_array(v) && json_object_get(s, "items")) {
		json_array_foreach(v, i, m)
			ok = fits(m, json_object_get(s, "items"), where) && ok;
		return ok;
	}
	props = json_object_get(s, "properties");
	if (!json_is_object(v) || !props)
		return true;
	json_object_foreach((json_t *)v, key, m) {
		if (!json_object_get(props, key)) {
			fprintf(stderr, "  %s: member \"%s\" is not in docs/openapi.json\n", where, key);
			ok = false;
		} else {
			ok = fits(m, json_object_get(props, key), key) && ok;
		}
	}
	json_array_foreach(json_object_get(s, "required"), i, r)
		if (!json_object_get(v, json_string_value(r))) {
			fprintf(stderr, "  %s: required \"%s\" not written\n", where,
				json_string_value(r));
			ok = false;
		}
	return ok;
}

/* Whether o (taken) fits components/schemas/name. */
static bool fits_schema(json_t *o, const char *name)
{
	json_t *ref = json_pack("{s:s+}", "$ref", "#/components/schemas/", name);
	bool ok = o && ref && schema_resolve(ref) && fits(o, ref, name);

	json_decref(ref);
	json_decref(o);
	return ok;
}

/*
 * The agent the first two cases encode, filled in main(): the second takes what the first left
 * and drops its verdict.
 */
static struct api_agent agent;

static void test_an_agent_in_the_fleet_list(void)
{
	CHECK(text_is(compact(api_agent_encode(&agent)),
		      "{\"agent_id\":\"host-1\",\"state\":\"stale\",\"policy\":\"default\","
		      "\"ak_name\":\"000b\",\"created_at\":1,\"activated_at\":2,\"boot_number\":3,"
		      "\"next_entry\":4,\"last_verdict_at\":5,\"open_violations\":6,\"retired_at\":7,"
		      "\"reset_at\":8,\"last_seen\":9,\"interval\":10,\"interval_reported\":true,"
		      "\"stale_after\":11,\"stale\":true,\"rejudging\":false,\"judged_by\":{\"policy\":"
		      "\"fleet\",\"policy_version\":12,\"amendment_version\":13},\"policy_version\":14,"
		      "\"amendment_version\":15,\"last_reasons\":[\"not_in_allowlist\"],"
		      "\"last_verdict\":\"untrusted\",\"labels\":{},\"registered\":false}"),
	      "members and order");
}

static void test_an_agent_in_detail_never_judged(void)
{
	struct api_agent d;
	json_t *o;

	agent.last_reasons = NULL;
	agent.last_verdict = NULL;
	agent.judged_by.known = false;
	agent.detail = true;
	agent.ek_cert = "RUs=";
	agent.ak_pub = NULL;
	agent.boot = json_pack("{s:s}", "status", "replays");
	o = api_agent_encode(&agent);
	CHECK(o && json_is_null(json_object_get(o, "last_verdict")) &&
	      json_is_null(json_object_get(o, "judged_by")) && !json_object_get(o, "last_reasons"),
	      "no verdict yet: null, null, no last_reasons");
	api_agent_decode(o, &d);
	CHECK(d.agent_id && !strcmp(d.agent_id, "host-1") && !strcmp(d.state, "stale") &&
	      !strcmp(d.policy, "default") && !strcmp(d.ak_name, "000b") && d.created_at == 1 &&
	      d.activated_at == 2 && d.boot_number == 3 && d.next_entry == 4 &&
	      d.last_verdict_at == 5 && d.open_violations == 6 && d.retired_at == 7 &&
	      d.reset_at == 8 && d.last_seen == 9 && d.interval == 10 && d.interval_reported &&
	      d.stale_after == 11 && d.stale && !d.rejudging && !d.judged_by.known &&
	      d.policy_version == 14 && d.amendment_version == 15 && !d.last_reasons &&
	      !d.last_verdict && d.detail && !strcmp(d.ek_cert, "RUs=") && !d.ak_pub &&
	      json_is_object(d.boot) &&
	      !strcmp(json_string_value(json_object_get(d.boot, "status")), "replays"),
	      "decoded back, member by member");
	json_decref(o);
}

static void test_decoding_is_lenient(void)
{
	struct api_agent d;
	json_t *o;

	o = json_pack("{s:i, s:s, s:s}", "agent_id", 5, "stale_after", "soon", "judged_by", "x");
	api_agent_decode(o, &d);
	CHECK(!d.agent_id && d.stale_after == 0 && !d.judged_by.known && !d.state && !d.boot &&
	      !d.detail, "mistyped and missing members read as NULL, 0, false");
	json_decref(o);
}

static void test_a_verdict(void)
{
	json_t *o;

	{
		struct api_verdict v = { 7, 100, 2, "untrusted", false,
					 json_pack("[o]", api_reason_encode(&(struct api_reason){
								  "not_in_allowlist", "/x", 3 })),
					 40, { true, "default", 1, 0 } }, dv;
		struct api_reason dr;

		o = api_verdict_encode(&v);
		CHECK(text_is(json_dumps(o, JSON_COMPACT),
			      "{\"id\":7,\"time\":100,\"boot_number\":2,\"verdict\":\"untrusted\","
			      "\"trusted\":false,\"reasons\":[{\"code\":\"not_in_allowlist\",\"detail\":"
			      "\"/x\",\"entry\":3}],\"next_offset\":40,\"judged_by\":{\"policy\":"
			      "\"default\",\"policy_version\":1,\"amendment_version\":0}}"),
		      "members and order");
		api_verdict_decode(o, &dv);
		CHECK(dv.id == 7 && dv.time == 100 && dv.boot_number == 2 &&
		      !strcmp(dv.verdict, "untrusted") && !dv.trusted &&
		      json_array_size(dv.reasons) == 1 && dv.next_offset == 40 &&
		      dv.judged_by.known && !strcmp(dv.judged_by.policy, "default") &&
		      dv.judged_by.policy_version == 1 && dv.judged_by.amendment_version == 0,
		      "decoded back");
		api_reason_decode(json_array_get(dv.reasons, 0), &dr);
		CHECK(!strcmp(dr.code, "not_in_allowlist") && !strcmp(dr.detail, "/x") && dr.entry == 3,
		      "its reason decoded back");
		api_reason_decode(NULL, &dr);
		CHECK(!dr.code && !dr.detail && !dr.entry, "no reason: none");
		json_decref(o);
		v.reasons = NULL;
		v.judged_by.known = false;
		o = api_verdict_encode(&v);
		CHECK(json_array_size(json_object_get(o, "reasons")) == 0 &&
		      json_is_array(json_object_get(o, "reasons")) &&
		      json_is_null(json_object_get(o, "judged_by")),
		      "no reasons: []; versions not recorded: null");
		json_decref(o);
	}
}

static void test_an_hour_of_counters(void)
{
	json_t *o;

	{
		struct api_hour h = { 3600, 360, 359, 1 }, dh;

		o = api_hour_encode(&h);
		CHECK(text_is(json_dumps(o, JSON_COMPACT),
			      "{\"hour\":3600,\"rounds\":360,\"trusted\":359,\"untrusted\":1}"),
		      "members and order");
		api_hour_decode(o, &dh);
		CHECK(!memcmp(&h, &dh, sizeof(h)), "decoded back");
		json_decref(o);
	}
}

static void test_a_violation_annotated(void)
{
	json_t *o;

	{
		struct api_violation v = {
			.id = 2, .agent_id = "host-1", .boot_number = 1, .entry = 3,
			.path = "/usr/bin/app1", .path_escaped = false, .path_hex = "2f",
			.digest = "sha256:33", .template_name = "ima-ng", .reason = "digest_mismatch",
			.first_seen = 10, .last_seen = 11, .count = 2, .state = "open",
			.approvable = true, .decided_at = 0, .decision = "", .recurs = 1,
		}, dv;
		struct api_expected e = { "default", 1, json_pack("[s]", "sha256:11"), 0, NULL };

		o = api_violation_encode(&v);
		api_violation_annotate(o, api_expected_encode(&e), "not foo 1.0");
		CHECK(text_is(json_dumps(o, JSON_COMPACT),
			      "{\"id\":2,\"agent_id\":\"host-1\",\"boot_number\":1,\"entry\":3,"
			      "\"path\":\"/usr/bin/app1\",\"path_escaped\":false,\"path_hex\":\"2f\","
			      "\"digest\":\"sha256:33\",\"template\":\"ima-ng\",\"reason\":"
			      "\"digest_mismatch\",\"first_seen\":10,\"last_seen\":11,\"count\":2,"
			      "\"state\":\"open\",\"approvable\":true,\"decided_at\":0,\"decision\":"
			      "\"\",\"recurs\":1,\"expected\":{\"policy\":\"default\","
			      "\"policy_version\":1,\"digests\":[\"sha256:11\"],"
			      "\"amendment_version\":0,\"amendment_digests\":[]},\"explanation\":"
			      "\"not foo 1.0\"}"),
		      "members and order");
		api_violation_decode(o, &dv);
		CHECK(dv.id == 2 && !strcmp(dv.agent_id, "host-1") && dv.boot_number == 1 &&
		      dv.entry == 3 && !strcmp(dv.path, "/usr/bin/app1") && !dv.path_escaped &&
		      !strcmp(dv.path_hex, "2f") && !strcmp(dv.digest, "sha256:33") &&
		      !strcmp(dv.template_name, "ima-ng") && !strcmp(dv.reason, "digest_mismatch") &&
		      dv.first_seen == 10 && dv.last_seen == 11 && dv.count == 2 &&
		      !strcmp(dv.state, "open") && dv.approvable && dv.decided_at == 0 &&
		      !strcmp(dv.decision, "") && dv.recurs == 1 && json_is_object(dv.expected) &&
		      !strcmp(dv.explanation, "not foo 1.0"),
		      "decoded back");
		json_decref(o);
		v.recurs = 0;
		o = api_violation_encode(&v);
		CHECK(o && !json_object_get(o, "recurs") && !json_object_get(o, "expected") &&
		      !json_object_get(o, "explanation"), "no recurs, expected, explanation: no members");
		json_decref(o);
	}
}

static void test_a_decision(void)
{
	json_t *o;

	{
		struct api_decision dec = { 1, "approved", "host-1", "not_in_allowlist", "/usr/bin/evil",
					  false, "sha256:22", "default", "agent", false, 0, 0, true,
					  1 }, dd;

		o = api_decision_encode(&dec);
		CHECK(text_is(json_dumps(o, JSON_COMPACT),
			      "{\"id\":1,\"state\":\"approved\",\"agent_id\":\"host-1\",\"reason\":"
			      "\"not_in_allowlist\",\"path\":\"/usr/bin/evil\",\"path_escaped\":false,"
			      "\"digest\":\"sha256:22\",\"policy\":\"default\",\"scope\":\"agent\","
			      "\"amendment_version\":1}"),
		      "into the amendment: members and order");
		api_decision_decode(o, &dd);
		CHECK(dd.id == 1 && !strcmp(dd.state, "approved") && !strcmp(dd.scope, "agent") &&
		      !dd.into_policy && dd.into_amendment && dd.amendment_version == 1 &&
		      !strcmp(dd.policy, "default") && !strcmp(dd.agent_id, "host-1"),
		      "decoded back");
		json_decref(o);
		dec = (struct api_decision){ 2, "approved", "host-1", "digest_mismatch", "/x", false,
					   "sha256:33", "default", "policy", true, 2, 5, false, 0 };
		o = api_decision_encode(&dec);
		api_decision_decode(o, &dd);
		CHECK(dd.into_policy && dd.policy_version == 2 && dd.policy_agents == 5 &&
		      !dd.into_amendment && !json_object_get(o, "amendment_version"),
		      "into the policy: its version and agents, no amendment version");
		json_decref(o);
		dec = (struct api_decision){ 3, "dismissed", "host-1", "r", "/y", false, "d", "default",
					   NULL, false, 0, 0, false, 0 };
		o = api_decision_encode(&dec);
		CHECK(o && !json_object_get(o, "scope"), "a dismissal has no scope");
		json_decref(o);
	}
}

static void test_an_agent_s_history_policies_versions_a_rollback(void)
{
	json_t *o;

	{
		struct api_agent_event ev = { 2, 100, "activated", "agent", NULL }, dev;
		struct api_policy_summary ps = { "fleet", 3, 200, "alice", 7 }, dps;
		struct api_policy_version pv = { 2, "bob", 300, 144, true, NULL }, dpv;
		struct api_rollback rb = { 4, 2, true, 7, "", NULL, "host-1" }, drb;

		o = api_agent_event_encode(&ev);
		CHECK(text_is(json_dumps(o, JSON_COMPACT),
			      "{\"id\":2,\"time\":100,\"event\":\"activated\",\"actor\":\"agent\","
			      "\"detail\":\"\"}"),
		      "event: members and order (no detail: \"\")");
		api_agent_event_decode(o, &dev);
		CHECK(dev.id == 2 && dev.time == 100 && !strcmp(dev.event, "activated") &&
		      !strcmp(dev.actor, "agent") && !strcmp(dev.detail, ""), "event decoded back");
		json_decref(o);
		o = api_policy_summary_encode(&ps);
		CHECK(text_is(json_dumps(o, JSON_COMPACT),
			      "{\"name\":\"fleet\",\"version\":3,\"time\":200,\"actor\":\"alice\","
			      "\"agents\":7}"),
		      "policy: members and order");
		api_policy_summary_decode(o, &dps);
		CHECK(!strcmp(dps.name, "fleet") && dps.version == 3 && dps.time == 200 &&
		      !strcmp(dps.actor, "alice") && dps.agents == 7, "policy decoded back");
		json_decref(o);
		o = api_policy_version_encode(&pv);
		CHECK(text_is(json_dumps(o, JSON_COMPACT),
			      "{\"version\":2,\"actor\":\"bob\",\"time\":300,\"bytes\":144,"
			      "\"signed\":true,\"signer\":\"\"}"),
		      "version: members and order (no signer: \"\")");
		api_policy_version_decode(o, &dpv);
		CHECK(dpv.version == 2 && !strcmp(dpv.actor, "bob") && dpv.time == 300 &&
		      dpv.bytes == 144 && dpv.signed_ && !strcmp(dpv.signer, ""),
		      "version decoded back");
		json_decref(o);
		o = api_rollback_encode(&rb);
		CHECK(text_is(json_dumps(o, JSON_COMPACT),
			      "{\"version\":4,\"from\":2,\"changed\":true,\"agents\":7,"
			      "\"signer\":\"\",\"agent_id\":\"host-1\"}"),
		      "an amendment's rollback: members and order");
		api_rollback_decode(o, &drb);
		CHECK(drb.version == 4 && drb.from == 2 && drb.changed && drb.agents == 7 &&
		      !strcmp(drb.agent_id, "host-1") && !drb.name, "rollback decoded back");
		json_decref(o);
		rb.agent_id = NULL;
		rb.name = "fleet";
		o = api_rollback_encode(&rb);
		CHECK(o && !strcmp(json_string_value(json_object_get(o, "name")), "fleet") &&
		      !json_object_get(o, "agent_id"), "a policy's rollback names the policy");
		json_decref(o);
	}
}

static void test_a_policy_stored_an_amendment(void)
{
	json_t *o;

	{
		struct api_policy_stored ps = { "p2", 1, NULL, false, "" }, dps;
		struct api_amendment am = { "host-1", 0, NULL }, dam;

		o = api_policy_stored_encode(&ps);
		CHECK(text_is(json_dumps(o, JSON_COMPACT),
			      "{\"name\":\"p2\",\"version\":1,\"warnings\":[],\"signed\":false,"
			      "\"signer\":\"\"}"),
		      "stored: members and order (no warnings: [])");
		api_policy_stored_decode(o, &dps);
		CHECK(!strcmp(dps.name, "p2") && dps.version == 1 && json_is_array(dps.warnings) &&
		      !dps.signed_ && !strcmp(dps.signer, ""), "stored decoded back");
		json_decref(o);
		o = api_amendment_encode(&am);
		CHECK(text_is(json_dumps(o, JSON_COMPACT),
			      "{\"agent_id\":\"host-1\",\"version\":0,\"amendment\":null}"),
		      "no amendment yet: version 0, null");
		api_amendment_decode(o, &dam);
		CHECK(!strcmp(dam.agent_id, "host-1") && dam.version == 0 && !dam.amendment,
		      "decoded back");
		json_decref(o);
		am.version = 2;
		am.amendment = json_pack("{s:{}}", "digests");
		o = api_amendment_encode(&am);
		api_amendment_decode(o, &dam);
		CHECK(dam.version == 2 && json_is_object(json_object_get(dam.amendment, "digests")),
		      "an amendment's document");
		json_decref(o);
	}
}

static void test_an_attestation_result_pending_a_key_rotation(void)
{
	json_t *o;

	{
		struct api_ear ok = { "host-1", "a.b.c", NULL, 0 }, wait = { NULL, NULL, "n0nce", 3 }, de;
		struct api_ear_rotation rot = { "k2", "k1" }, dr;

		CHECK(text_is(compact(api_ear_encode(&ok)), "{\"agent_id\":\"host-1\",\"ear\":\"a.b.c\"}"),
		      "a result");
		o = api_ear_encode(&wait);
		CHECK(text_is(json_dumps(o, JSON_COMPACT),
			      "{\"status\":\"pending\",\"nonce\":\"n0nce\",\"retry_after\":3}"),
		      "pending");
		api_ear_decode(o, &de);
		CHECK(!de.token && !strcmp(de.nonce, "n0nce") && de.retry_after == 3,
		      "pending decoded back");
		json_decref(o);
		o = api_ear_rotation_encode(&rot);
		CHECK(text_is(json_dumps(o, JSON_COMPACT), "{\"kid\":\"k2\",\"retired_kid\":\"k1\"}"),
		      "a rotation");
		api_ear_rotation_decode(o, &dr);
		CHECK(!strcmp(dr.kid, "k2") && !strcmp(dr.retired_kid, "k1"), "rotation decoded back");
		json_decref(o);
	}
}

static void test_an_agent_s_labels_and_registration(void)
{
	struct api_agent d;
	json_t *o;

	agent.labels = json_pack("{s:s}", "site", "ams");
	agent.registered = true;
	agent.boot = NULL;
	o = api_agent_encode(&agent);
	api_agent_decode(o, &d);
	CHECK(d.registered && d.labels &&
	      !strcmp(json_string_value(json_object_get(d.labels, "site")), "ams"),
	      "labels and registered decoded back");
	json_decref(o);
	agent.labels = NULL;
	agent.registered = false;
}

static void test_a_registration_listed_and_requested(void)
{
	struct api_registration r = {
		.listed = true, .agent_id = "host-1", .ek = "public", .ek_sha256 = "ab",
		.policy = "fleet", .labels = json_pack("{s:s}", "site", "ams"), .actor = "alice",
		.created_at = 7,
	}, d;
	struct registration_batch batch;
	char why[256], *text;
	json_t *o;

	o = api_registration_encode(&r);
	CHECK(text_is(json_dumps(o, JSON_COMPACT),
		      "{\"agent_id\":\"host-1\",\"ek\":\"public\",\"ek_sha256\":\"ab\","
		      "\"policy\":\"fleet\",\"labels\":{\"site\":\"ams\"},\"actor\":\"alice\","
		      "\"created_at\":7}"),
	      "listed: members and order");
	CHECK(api_registration_decode(o, &d) && d.listed && !strcmp(d.agent_id, "host-1") &&
	      !strcmp(d.ek, "public") && !strcmp(d.ek_sha256, "ab") && !strcmp(d.policy, "fleet") &&
	      !strcmp(json_string_value(json_object_get(d.labels, "site")), "ams") &&
	      !strcmp(d.actor, "alice") && d.created_at == 7 && !d.ek_cert,
	      "listed decoded back");
	json_decref(o);

	/* A request as attestctl writes it, read by the verifier's own strict check. */
	r = (struct api_registration){
		.agent_id = "host-2",
		.ek_sha256 = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
		.policy = "fleet", .labels = json_pack("{s:s}", "rack", "r1"),
	};
	o = json_pack("{s:[o]}", API_REGISTRATIONS, api_registration_encode(&r));
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	CHECK(text_is(text ? strdup(text) : NULL,
		      "{\"registrations\":[{\"agent_id\":\"host-2\",\"ek_sha256\":"
		      "\"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\","
		      "\"policy\":\"fleet\",\"labels\":{\"rack\":\"r1\"}}]}"),
	      "a request: members and order");
	CHECK(text && registrations_parse(text, strlen(text), &batch, why, sizeof(why)) == 0 &&
	      batch.n == 1 && !strcmp(batch.regs[0].agent, "host-2") &&
	      batch.regs[0].ek_kind == STORE_EK_PUBLIC && batch.regs[0].ek_sha256[1] == 0x11 &&
	      !strcmp(batch.regs[0].policy, "fleet") &&
	      !strcmp(batch.regs[0].labels, "{\"rack\":\"r1\"}"),
	      "the verifier's check takes the request");
	registration_batch_release(&batch);
	free(text);
	json_decref(o);
	r = (struct api_registration){ .agent_id = "host-3", .ek_cert = "MAA=", .ek_sha256 = "x" };
	o = api_registration_encode(&r);
	CHECK(text_is(json_dumps(o, JSON_COMPACT), "{\"agent_id\":\"host-3\",\"ek_cert\":\"MAA=\"}"),
	      "a request by certificate: no policy, no labels, no ek_sha256");
	json_decref(o);
	o = json_pack("{s:s, s:i}", "agent_id", "h", "labels", 1);
	CHECK(!api_registration_decode(o, &d) && !d.labels, "labels of another type: not typed");
	json_decref(o);

	o = api_registered_encode(&(struct api_registered){ .count = 3 });
	CHECK(text_is(json_dumps(o, JSON_COMPACT), "{\"registered\":3}"), "registered: a count");
	json_decref(o);
	o = api_registered_encode(&(struct api_registered){ .agent_id = "host-1" });
	CHECK(text_is(json_dumps(o, JSON_COMPACT), "{\"agent_id\":\"host-1\",\"registered\":false}"),
	      "unregistered");
	json_decref(o);
}

static void test_labels_changed_and_assigned(void)
{
	struct api_labels_change c = { json_pack("{s:s}", "site", "ams"), json_pack("[s]", "old") },
				 dc;
	struct api_agent_labels l = { "host-1", NULL }, dl;
	struct api_assign a = { .policy = "fleet", .label = "site=ams", .apply = true,
				.matching = 3, .agents = json_pack("[s]", "host-1") }, da;
	json_t *o;

	o = api_labels_change_encode(&c);
	CHECK(text_is(json_dumps(o, JSON_COMPACT), "{\"set\":{\"site\":\"ams\"},\"remove\":[\"old\"]}"),
	      "a change: members and order");
	api_labels_change_decode(o, &dc);
	CHECK(json_object_size(dc.set) == 1 && json_array_size(dc.remove) == 1, "decoded back");
	json_decref(o);
	o = api_labels_change_encode(&(struct api_labels_change){ NULL, json_pack("[s]", "x") });
	CHECK(text_is(json_dumps(o, JSON_COMPACT), "{\"remove\":[\"x\"]}"), "nothing set: no set");
	json_decref(o);
	o = api_agent_labels_encode(&l);
	CHECK(text_is(json_dumps(o, JSON_COMPACT), "{\"agent_id\":\"host-1\",\"labels\":{}}"),
	      "an agent's labels: none is {}");
	api_agent_labels_decode(o, &dl);
	CHECK(!strcmp(dl.agent_id, "host-1") && json_is_object(dl.labels), "decoded back");
	json_decref(o);
	CHECK(text_is(compact(api_assign_request_encode(&a)), "{\"label\":\"site=ams\",\"apply\":true}"),
	      "an assignment's request");
	o = api_assign_request_encode(&a);
	CHECK(o && json_is_true(api_assign_request_apply(o)), "its apply read back for the check");
	json_decref(o);
	o = api_assign_request_encode(&(struct api_assign){ .label = "site=ams" });
	CHECK(o && json_is_false(api_assign_request_apply(o)) && !api_assign_request_apply(NULL),
	      "apply false, and none without a request");
	json_decref(o);
	o = api_assign_encode(&a);
	CHECK(text_is(json_dumps(o, JSON_COMPACT),
		      "{\"policy\":\"fleet\",\"label\":\"site=ams\",\"applied\":true,\"matching\":3,"
		      "\"agents\":[\"host-1\"]}"),
	      "an assignment's answer");
	api_assign_decode(o, &da);
	CHECK(!strcmp(da.policy, "fleet") && !strcmp(da.label, "site=ams") && da.apply &&
	      da.matching == 3 && json_array_size(da.agents) == 1, "decoded back");
	json_decref(o);
}

static void test_small_changes_and_an_enforced_policy(void)
{
	struct api_agent_policy ap;
	struct api_enforced de;
	json_t *o;

	CHECK(text_is(compact(api_agent_policy_request_encode("fleet")), "{\"policy\":\"fleet\"}"),
	      "an assignment's request");
	o = api_agent_policy_encode(&(struct api_agent_policy){ "h", "fleet" });
	CHECK(text_is(json_dumps(o, JSON_COMPACT), "{\"agent_id\":\"h\",\"policy\":\"fleet\"}"),
	      "its answer");
	api_agent_policy_decode(o, &ap);
	CHECK(!strcmp(ap.agent_id, "h") && !strcmp(ap.policy, "fleet"), "decoded back");
	json_decref(o);
	CHECK(text_is(compact(api_agent_retired_encode("h", false)),
		      "{\"agent_id\":\"h\",\"state\":\"retired\"}") &&
	      text_is(compact(api_agent_retired_encode("h", true)),
		      "{\"agent_id\":\"h\",\"state\":\"purged\"}"),
	      "retired, purged");
	CHECK(text_is(compact(api_agent_reset_encode("h")), "{\"agent_id\":\"h\",\"reset\":true}"),
	      "reset");
	CHECK(text_is(compact(api_policy_deleted_encode("p")), "{\"policy\":\"p\",\"deleted\":true}"),
	      "a policy deleted");
	o = api_rollback_request_encode(3);
	CHECK(text_is(json_dumps(o, JSON_COMPACT), "{\"version\":3}") &&
	      json_integer_value(api_rollback_request_version(o)) == 3, "a rollback's request");
	json_decref(o);
	o = api_approve_request_encode("policy");
	CHECK(text_is(json_dumps(o, JSON_COMPACT), "{\"scope\":\"policy\"}") &&
	      !strcmp(json_string_value(api_approve_request_scope(o)), "policy"),
	      "an approval's request");
	json_decref(o);
	CHECK(text_is(compact(api_approve_request_encode(NULL)), "{}"), "an approval, no scope");
	o = api_enforced_encode(&(struct api_enforced){ "p", 2, "attest", NULL, NULL,
							json_pack("{s:i}", "version", 1) });
	CHECK(text_is(json_dumps(o, JSON_COMPACT),
		      "{\"name\":\"p\",\"version\":2,\"format\":\"attest\",\"warnings\":[],"
		      "\"source_excludes\":[],\"policy\":{\"version\":1}}"),
	      "an enforced policy: members and order");
	api_enforced_decode(o, &de);
	CHECK(!strcmp(de.name, "p") && de.version == 2 && !strcmp(de.format, "attest") &&
	      json_is_array(de.warnings) && json_is_array(de.source_excludes) &&
	      json_is_object(de.policy), "decoded back");
	json_decref(o);
}

static void test_the_audit_head(void)
{
	struct api_audit_signed none = { .seq = 0, .public_key = "PEM" }, d;
	struct api_audit_signed head = { 4, "aa", 9, "c2ln", "PEM" };
	json_t *o;

	CHECK(text_is(compact(api_audit_signed_encode(&none)), "{\"seq\":0,\"public_key\":\"PEM\"}"),
	      "nothing signed yet: seq 0 and the key");
	o = api_audit_signed_encode(&head);
	CHECK(text_is(json_dumps(o, JSON_COMPACT),
		      "{\"seq\":4,\"hash\":\"aa\",\"time\":9,\"signature\":\"c2ln\","
		      "\"public_key\":\"PEM\"}"),
	      "a signed head: members and order");
	api_audit_signed_decode(o, &d);
	CHECK(d.seq == 4 && !strcmp(d.hash, "aa") && d.time == 9 && !strcmp(d.signature, "c2ln") &&
	      !strcmp(d.public_key, "PEM"), "decoded back");
	json_decref(o);
}

static void test_webhook_events(void)
{
	struct api_audit_head head = { 5, "bb", true, { 4, "aa", 9, "c2ln", "REVS" } }, dh;
	struct api_event e = {
		.id = "evt-1", .type = API_EVENT_VIOLATION, .time = 100, .agent_id = "host-1",
		.violation_id = 2, .reason = "not_in_allowlist", .path = "/usr/bin/x",
		.path_escaped = false, .path_hex = "2f", .digest = "sha256:00", .boot_number = 3,
		.entry = 4, .count = 5, .recurs = 1, .audit_head = &head,
	}, d;
	json_t *o;

	o = api_event_encode(&e);
	CHECK(text_is(json_dumps(o, JSON_COMPACT),
		      "{\"id\":\"evt-1\",\"type\":\"violation.opened\",\"time\":100,"
		      "\"agent_id\":\"host-1\",\"data\":{\"violation_id\":2,\"reason\":"
		      "\"not_in_allowlist\",\"path\":\"/usr/bin/x\",\"path_escaped\":false,"
		      "\"path_hex\":\"2f\",\"digest\":\"sha256:00\",\"boot_number\":3,\"entry\":4,"
		      "\"count\":5,\"recurs\":1},\"audit_head\":{\"seq\":5,\"hash\":\"bb\","
		      "\"signed\":{\"seq\":4,\"hash\":\"aa\",\"time\":9,\"signature\":\"c2ln\","
		      "\"public_key\":\"REVS\"}}}"),
	      "violation.opened with the audit head: members and order");
	api_event_decode(o, &d, &dh);
	CHECK(!strcmp(d.id, "evt-1") && !strcmp(d.type, API_EVENT_VIOLATION) && d.time == 100 &&
	      !strcmp(d.agent_id, "host-1") && d.violation_id == 2 &&
	      !strcmp(d.reason, "not_in_allowlist") && !strcmp(d.path, "/usr/bin/x") &&
	      !d.path_escaped && !strcmp(d.path_hex, "2f") && !strcmp(d.digest, "sha256:00") &&
	      d.boot_number == 3 && d.entry == 4 && d.count == 5 && d.recurs == 1 &&
	      d.audit_head == &dh && dh.seq == 5 && !strcmp(dh.hash, "bb") && dh.has_signed &&
	      dh.signed_.seq == 4 && !strcmp(dh.signed_.hash, "aa") && dh.signed_.time == 9 &&
	      !strcmp(dh.signed_.signature, "c2ln") && !strcmp(dh.signed_.public_key, "REVS"),
	      "decoded back, member by member");
	json_decref(o);

	e = (struct api_event){ .id = "evt-2", .type = API_EVENT_UNTRUSTED, .time = 1,
				.agent_id = "h", .verdict_id = 8, .boot_number = 2 };
	head.has_signed = false;
	e.audit_head = &head;
	CHECK(text_is(compact(api_event_encode(&e)),
		      "{\"id\":\"evt-2\",\"type\":\"agent.untrusted\",\"time\":1,\"agent_id\":\"h\","
		      "\"data\":{\"verdict_id\":8,\"boot_number\":2,\"reasons\":[]},"
		      "\"audit_head\":{\"seq\":5,\"hash\":\"bb\"}}"),
	      "agent.untrusted, nothing signed yet");
	e = (struct api_event){ .id = "i", .type = API_EVENT_STALE, .time = 1, .agent_id = "h",
				.last_seen = 2, .interval = 3, .stale_after = 4 };
	CHECK(text_is(compact(api_event_encode(&e)),
		      "{\"id\":\"i\",\"type\":\"agent.stale\",\"time\":1,\"agent_id\":\"h\",\"data\":"
		      "{\"last_seen\":2,\"interval\":3,\"stale_after\":4}}"),
	      "agent.stale without an audit head");
	e = (struct api_event){ .id = "i", .type = API_EVENT_ENROLLED, .time = 1, .agent_id = "h",
				.ak_name = "000b" };
	CHECK(text_is(compact(api_event_encode(&e)),
		      "{\"id\":\"i\",\"type\":\"agent.enrolled\",\"time\":1,\"agent_id\":\"h\",\"data\":"
		      "{\"ak_name\":\"000b\"}}"),
	      "agent.enrolled");
	e = (struct api_event){ .id = "i", .type = API_EVENT_RETIRED, .time = 1, .agent_id = "h",
				.purged = true, .actor = "alice" };
	o = api_event_encode(&e);
	CHECK(text_is(json_dumps(o, JSON_COMPACT),
		      "{\"id\":\"i\",\"type\":\"agent.retired\",\"time\":1,\"agent_id\":\"h\",\"data\":"
		      "{\"purged\":true,\"actor\":\"alice\"}}"),
	      "agent.retired");
	api_event_decode(o, &d, &dh);
	CHECK(d.purged && !strcmp(d.actor, "alice") && !d.audit_head, "decoded back: no head");
	json_decref(o);
	e = (struct api_event){ .id = "i", .type = API_EVENT_RESET, .time = 1, .agent_id = "h",
				.actor = "bob" };
	CHECK(text_is(compact(api_event_encode(&e)),
		      "{\"id\":\"i\",\"type\":\"agent.reset\",\"time\":1,\"agent_id\":\"h\",\"data\":"
		      "{\"actor\":\"bob\"}}"),
	      "agent.reset");
	e.type = "agent.other";
	CHECK(!api_event_encode(&e), "a type the API has not: none");
}

/* Each resource with every member it can have, held to docs/openapi.json. */
static void test_the_lists(void)
{
	json_t *o;
	bool has = true;

	CHECK(text_is(compact(api_list_encode(API_AGENTS, json_pack("[{s:s}]", "agent_id", "h"))),
		      "{\"agents\":[{\"agent_id\":\"h\"}]}") &&
		      text_is(compact(api_list_encode(API_VIOLATIONS, json_array())),
			      "{\"violations\":[]}") &&
		      text_is(compact(api_list_encode(API_POLICIES, json_array())), "{\"policies\":[]}") &&
		      text_is(compact(api_list_encode(API_REGISTRATIONS, json_array())),
			      "{\"registrations\":[]}"),
	      "a list: {MEMBER: [...]}");
	CHECK(text_is(compact(api_agent_list_encode("h", API_VERDICTS, json_array())),
		      "{\"agent_id\":\"h\",\"verdicts\":[]}") &&
		      text_is(compact(api_agent_list_encode("h", API_HOURS, json_array())),
			      "{\"agent_id\":\"h\",\"hours\":[]}") &&
		      text_is(compact(api_agent_list_encode("h", API_HISTORY, json_array())),
			      "{\"agent_id\":\"h\",\"history\":[]}") &&
		      text_is(compact(api_agent_list_encode("h", API_VERSIONS, json_array())),
			      "{\"agent_id\":\"h\",\"versions\":[]}"),
	      "an agent's list: {\"agent_id\", MEMBER: [...]}");
	CHECK(text_is(compact(api_policy_versions_encode("fleet", 3, json_array())),
		      "{\"name\":\"fleet\",\"agents\":3,\"versions\":[]}"),
	      "a policy's versions: name, agents, versions");
	CHECK(!api_list_encode(API_AGENTS, NULL) && !api_agent_list_encode("h", API_HOURS, NULL) &&
		      !api_policy_versions_encode("fleet", 1, NULL),
	      "no items: no list");
	o = api_agent_list_encode("h", API_HOURS, json_pack("[i]", 1));
	CHECK(o && !strcmp(api_list_agent_id(o), "h") &&
		      json_array_size(api_list_items(o, API_HOURS)) == 1 &&
		      !api_list_items(o, API_VERDICTS),
	      "an agent's list read back");
	json_decref(o);
	o = api_policy_versions_encode("fleet", 3, json_array());
	CHECK(o && api_policy_versions_agents(o, &has) == 3 && has &&
		      api_list_items(o, API_VERSIONS) && !api_policy_versions_agents(NULL, &has) && !has,
	      "a policy's versions read back, its agents there or not");
	json_decref(o);
	o = json_pack("{s:i}", API_AGENTS, 1);
	CHECK(o && !api_list_items(o, API_AGENTS) && !api_list_agent_id(o),
	      "a list that is not one reads as none");
	json_decref(o);
}

static void test_a_boot_summary(void)
{
	struct api_boot_summary b = {
		.status = "replays", .has_log = true, .events = 40, .has_locality = true,
		.startup_locality = 3, .firmware = "UEFI, 2 firmware volumes", .secure_boot = "off",
		.pcr0 = "sha256:00", .has_kernel = true,
		.kernel = { "sha256:11", "kernel", "guest bzImage", true, true },
		.cmdline = "ro quiet", .cmdline_verified = true,
	}, d;
	json_t *o = api_boot_summary_encode(&b);

	CHECK(text_is(json_dumps(o, JSON_COMPACT),
		      "{\"cmdline\":\"ro quiet\",\"cmdline_verified\":true,\"events\":40,"
		      "\"firmware\":\"UEFI, 2 firmware volumes\",\"kernel\":{\"allowed\":true,"
		      "\"digest\":\"sha256:11\",\"file\":\"kernel\",\"name\":\"guest bzImage\"},"
		      "\"pcr0\":\"sha256:00\",\"secure_boot\":\"off\",\"startup_locality\":3,"
		      "\"status\":\"replays\"}"),
	      "every member, in key order");
	api_boot_summary_decode(o, &d);
	CHECK(!strcmp(d.status, "replays") && d.has_log && d.events == 40 && d.has_locality &&
		      d.startup_locality == 3 && !strcmp(d.firmware, "UEFI, 2 firmware volumes") &&
		      !strcmp(d.secure_boot, "off") && !strcmp(d.pcr0, "sha256:00") && d.has_kernel &&
		      !strcmp(d.kernel.digest, "sha256:11") && !strcmp(d.kernel.file, "kernel") &&
		      !strcmp(d.kernel.name, "guest bzImage") && d.kernel.has_allowed &&
		      d.kernel.allowed && !strcmp(d.cmdline, "ro quiet") && d.cmdline_verified,
	      "decoded back");
	json_decref(o);
	CHECK(text_is(compact(api_boot_summary_encode(&(struct api_boot_summary){
			      .status = "mismatch", .has_log = true, .events = 2, .firmware = "BIOS",
			      .secure_boot = "unknown", .has_kernel = true,
			      .kernel = { .digest = "sha256:11" } })),
		      "{\"events\":2,\"firmware\":\"BIOS\",\"kernel\":{\"digest\":\"sha256:11\"},"
		      "\"secure_boot\":\"unknown\",\"status\":\"mismatch\"}"),
	      "no locality, PCR 0, kernel file, name, allowed or command line: no members");
	o = api_boot_summary_encode(&(struct api_boot_summary){ .status = "corrupt" });
	CHECK(text_is(json_dumps(o, JSON_COMPACT), "{\"status\":\"corrupt\"}"),
	      "no log: only its status");
	api_boot_summary_decode(o, &d);
	CHECK(!strcmp(d.status, "corrupt") && !d.has_log && !d.has_kernel && !d.has_locality &&
		      !d.kernel.has_allowed && !d.cmdline && !d.pcr0,
	      "decoded back: no log");
	json_decref(o);
}

static void test_a_boot_summary_s_log(void)
{
	json_t *b = json_pack("{s:s, s:i}", "status", "replays", "events", 40);
	struct api_boot_log l;

	CHECK(b && !api_boot_log_annotate(b, &(struct api_boot_log){ "ab", 2048, 7 }),
	      "annotated");
	json_incref(b);
	CHECK(text_is(compact(b),
		      "{\"status\":\"replays\",\"events\":40,\"log_sha256\":\"ab\","
		      "\"log_bytes\":2048,\"received_at\":7}"),
	      "after the summary's own members: log_sha256, log_bytes, received_at");
	api_boot_log_decode(b, &l);
	CHECK(!strcmp(l.log_sha256, "ab") && l.log_bytes == 2048 && l.received_at == 7, "read back");
	json_decref(b);
	api_boot_log_decode(NULL, &l);
	CHECK(!l.log_sha256 && !l.log_bytes && !l.received_at, "no summary: none");
}

static void test_every_resource_fits_docs_openapi(void)
{
	struct api_versions jb = { true, "fleet", 1, 2 };
	struct api_agent a = {
		.agent_id = "h", .state = "rejudging", .policy = "default", .ak_name = "000b",
		.judged_by = jb, .last_reasons = json_pack("[s]", "x"), .last_verdict = "trusted",
		.detail = true, .ek_cert = "RUs=", .ak_pub = "AA==",
		.boot = api_boot_summary_encode(&(struct api_boot_summary){
			.status = "replays", .has_log = true, .events = 4, .has_locality = true,
			.firmware = "UEFI", .secure_boot = "on", .pcr0 = "sha256:00", .has_kernel = true,
			.kernel = { "sha256:11", "kernel", "k", true, false }, .cmdline = "ro" }),
		.labels = json_pack("{s:s}", "site", "ams"), .registered = true,
	};
	struct api_verdict v = { 1, 2, 3, "untrusted", false,
				 json_pack("[o]", api_reason_encode(&(struct api_reason){ "x", "/x", 1 })),
				 4, jb };
	struct api_violation vi = {
		.id = 1, .agent_id = "h", .path = "/x", .path_hex = "2f78", .digest = "sha256:00",
		.template_name = "ima-ng", .reason = "digest_mismatch", .state = "approved",
		.decision = "approved", .recurs = 7,
		.expected = api_expected_encode(&(struct api_expected){ "fleet", 1, NULL, 2, NULL }),
		.explanation = "from a package",
	};
	struct api_decision d = { 1, "approved", "h", "x", "/x", false, "sha256:00", "fleet",
				  "policy", true, 3, 4, true, 5 };
	struct api_audit_head head = { 5, "bb", true, { 4, "aa", 9, "c2ln", "REVS" } };
	static const char *const types[] = { API_EVENT_UNTRUSTED, API_EVENT_VIOLATION,
					     API_EVENT_STALE, API_EVENT_ENROLLED,
					     API_EVENT_RETIRED, API_EVENT_RESET };
	bool events = true;

	CHECK(openapi != NULL, "docs/openapi.json read");
	CHECK(!api_boot_log_annotate(a.boot, &(struct api_boot_log){ "ab", 2048, 7 }) &&
		      fits_schema(api_list_encode(API_AGENTS, json_pack("[o]", api_agent_encode(&a))),
				  "AgentList"),
	      "an agent in detail, its boot summary with the log's: Agent, BootSummary");
	a = (struct api_agent){ .agent_id = "h", .state = "active", .policy = "default",
				.ak_name = "00" };
	CHECK(fits_schema(api_agent_encode(&a), "Agent"), "an agent never judged: Agent");
	CHECK(fits_schema(api_agent_list_encode("h", API_VERDICTS, json_pack("[o]",
				    api_verdict_encode(&v))), "VerdictList"),
	      "a verdict: VerdictList");
	CHECK(fits_schema(api_agent_list_encode("h", API_HOURS, json_pack("[o]",
				    api_hour_encode(&(struct api_hour){ 1, 2, 3, 4 }))),
			  "Counters"),
	      "an hour: Counters");
	CHECK(fits_schema(api_list_encode(API_VIOLATIONS, json_pack("[o]", api_violation_encode(&vi))),
			  "ViolationList"),
	      "a violation with expected and explanation: ViolationList");
	CHECK(fits_schema(api_decision_encode(&d), "Decision"), "a decision into both: Decision");
	CHECK(fits_schema(api_agent_list_encode("h", API_HISTORY, json_pack("[o]",
				    api_agent_event_encode(&(struct api_agent_event){
					    1, 2, "enrolled", "agent", "d" }))),
			  "History"),
	      "an agent's history: History");
	CHECK(fits_schema(api_list_encode(API_POLICIES, json_pack("[o]",
				    api_policy_summary_encode(&(struct api_policy_summary){
					    "fleet", 1, 2, "alice", 3 }))),
			  "PolicyList"),
	      "a policy: PolicyList");
	CHECK(fits_schema(api_policy_versions_encode("fleet", 2, json_pack("[o]",
				    api_policy_version_encode(&(struct api_policy_version){
					    1, "alice", 2, 3, true, "ab" }))),
			  "PolicyVersions"),
	      "a policy's versions: PolicyVersions");
	CHECK(fits_schema(api_agent_list_encode("h", API_VERSIONS, json_pack("[o]",
				    api_policy_version_encode(&(struct api_policy_version){
					    1, "alice", 2, 3, false, "" }))),
			  "PolicyVersions"),
	      "an amendment's versions: PolicyVersions");
	CHECK(fits_schema(api_rollback_encode(&(struct api_rollback){ 3, 1, true, 2, "", NULL,
								      "h" }),
			  "Rollback"),
	      "an amendment's rollback: Rollback");
	CHECK(fits_schema(api_policy_stored_encode(&(struct api_policy_stored){
				  "fleet", 2, json_pack("[s]", "w"), true, "ab" }),
			  "PolicyStored"),
	      "a policy stored: PolicyStored");
	CHECK(fits_schema(api_amendment_encode(&(struct api_amendment){
				  "h", 1, json_pack("{s:{}}", "digests") }),
			  "Amendment"),
	      "an amendment: Amendment");
	CHECK(fits_schema(api_ear_encode(&(struct api_ear){ "h", "a.b.c", NULL, 0 }), "Ear") &&
	      fits_schema(api_ear_encode(&(struct api_ear){ NULL, NULL, "n", 3 }), "EarPending") &&
	      fits_schema(api_ear_rotation_encode(&(struct api_ear_rotation){ "k2", "k1" }),
			  "EarRotation"),
	      "an attestation result, pending, a rotation: Ear, EarPending, EarRotation");
	CHECK(fits_schema(api_list_encode(API_REGISTRATIONS, json_pack("[o]",
				    api_registration_encode(&(struct api_registration){
					    .listed = true, .agent_id = "h", .ek = "cert",
					    .ek_sha256 = "ab", .policy = "default",
					    .actor = "alice", .created_at = 1 }))),
			  "RegistrationList") &&
	      fits_schema(api_list_encode(API_REGISTRATIONS, json_pack("[o]",
				    api_registration_encode(&(struct api_registration){
					    .agent_id = "h", .ek_cert = "MAA=", .policy = "p",
					    .labels = json_pack("{s:s}", "a", "b") }))),
			  "Registrations") &&
	      fits_schema(api_registered_encode(&(struct api_registered){ .count = 2 }),
			  "Registered") &&
	      fits_schema(api_registered_encode(&(struct api_registered){ .agent_id = "h" }),
			  "Unregistered"),
	      "registrations and their answers");
	CHECK(fits_schema(api_labels_change_encode(&(struct api_labels_change){
				  json_pack("{s:s}", "a", "b"), json_pack("[s]", "c") }),
			  "LabelsChange") &&
	      fits_schema(api_agent_labels_encode(&(struct api_agent_labels){ "h", NULL }),
			  "AgentLabels") &&
	      fits_schema(api_assign_request_encode(&(struct api_assign){ .label = "a=b",
									   .apply = true }),
			  "PolicyAssign") &&
	      fits_schema(api_assign_encode(&(struct api_assign){ "fleet", "a=b", true, 1, NULL }),
			  "PolicyAssignResult"),
	      "labels and an assignment by label, asked and answered");
	CHECK(fits_schema(api_audit_signed_encode(&head.signed_), "AuditHead") &&
	      fits_schema(api_audit_signed_encode(&(struct api_audit_signed){ .public_key = "P" }),
			  "AuditHead"),
	      "the audit head, signed and not yet: AuditHead");
	CHECK(fits_schema(api_agent_policy_request_encode("fleet"), "AgentPolicyRequest") &&
	      fits_schema(api_agent_policy_encode(&(struct api_agent_policy){ "h", "fleet" }),
			  "AgentPolicy") &&
	      fits_schema(api_agent_retired_encode("h", true), "Retired") &&
	      fits_schema(api_agent_reset_encode("h"), "Reset") &&
	      fits_schema(api_policy_deleted_encode("fleet"), "PolicyDeleted") &&
	      fits_schema(api_rollback_request_encode(2), "RollbackRequest") &&
	      fits_schema(api_approve_request_encode("policy"), "ApproveRequest") &&
	      fits_schema(api_enforced_encode(&(struct api_enforced){
				  "fleet", 2, "keylime", json_pack("[s]", "w"), json_pack("[s]", "x"),
				  json_pack("{s:i}", "version", 1) }),
			  "Enforced"),
	      "an operator's small changes, asked and answered, and an enforced policy");
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct api_event e = {
			.id = "evt-1", .type = types[i], .time = 1, .agent_id = "h",
			.reasons = json_pack("[o]", api_reason_encode(&(struct api_reason){ "x", "/x", 1 })),
			.reason = "x", .path = "/x", .path_hex = "2f78",
			.digest = "sha256:00", .recurs = 2, .ak_name = "000b", .actor = "alice",
			.audit_head = &head,
		};

		events = fits_schema(api_event_encode(&e), "WebhookEvent") && events;
	}
	CHECK(events, "every webhook event's type: WebhookEvent");
}

int main(void)
{
	agent = (struct api_agent){
		.agent_id = "host-1", .state = "stale", .policy = "default", .ak_name = "000b",
		.created_at = 1, .activated_at = 2, .boot_number = 3, .next_entry = 4,
		.last_verdict_at = 5, .open_violations = 6, .retired_at = 7, .reset_at = 8,
		.last_seen = 9, .interval = 10, .interval_reported = true, .stale_after = 11,
		.stale = true, .rejudging = false,
		.judged_by = { true, "fleet", 12, 13 }, .policy_version = 14, .amendment_version = 15,
		.last_reasons = json_pack("[s]", "not_in_allowlist"), .last_verdict = "untrusted",
	};

	CASE(test_an_agent_in_the_fleet_list);
	CASE(test_an_agent_in_detail_never_judged);
	CASE(test_decoding_is_lenient);
	CASE(test_a_verdict);
	CASE(test_an_hour_of_counters);
	CASE(test_a_violation_annotated);
	CASE(test_a_decision);
	CASE(test_an_agent_s_history_policies_versions_a_rollback);
	CASE(test_a_policy_stored_an_amendment);
	CASE(test_an_attestation_result_pending_a_key_rotation);
	CASE(test_an_agent_s_labels_and_registration);
	CASE(test_a_registration_listed_and_requested);
	CASE(test_labels_changed_and_assigned);
	CASE(test_small_changes_and_an_enforced_policy);
	CASE(test_the_audit_head);
	CASE(test_webhook_events);
	CASE(test_the_lists);
	CASE(test_a_boot_summary);
	CASE(test_a_boot_summary_s_log);
	openapi = json_load_file("docs/openapi.json", 0, NULL);
	CASE(test_every_resource_fits_docs_openapi);
	json_decref(openapi);
	CHECK(!strcmp(API_AGENTS, "agents") && !strcmp(API_VERDICTS, "verdicts") &&
	      !strcmp(API_HOURS, "hours") && !strcmp(API_VIOLATIONS, "violations") &&
	      !strcmp(API_HISTORY, "history") && !strcmp(API_POLICIES, "policies") &&
	      !strcmp(API_VERSIONS, "versions") && !strcmp(API_VERSIONS_AGENTS, "agents"),
	      "the lists' members");
	return check_finish();
}
