/*
 * evidence_record: a round's inputs kept with its verdict, and the verdict reached again from
 * them (evidence_record.h). The codecs of proto/evidence.h carry the evidence, the challenge
 * and the verdict; boot_state.h's encoding the state the round started from. The check calls
 * attest_evaluate(), the verifier's own decision, never a second one.
 */
#include "verifier/decision/evidence_record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/encoding.h"
#include "proto/text.h"
#include "proto/tpmkey.h"
#include "verifier/policy/policy.h"
#include "verifier/store/store.h"

/* A JSON text made by one of proto's encoders, as a value to embed (NULL: it failed). */
static json_t *embed(char *text)
{
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;

	free(text);
	return v;
}

static json_t *b64_value(const uint8_t *p, size_t n)
{
	char *s = base64_encode_alloc(p, n);
	json_t *v = s ? json_string(s) : NULL;

	free(s);
	return v;
}

static json_t *hex_value(const uint8_t *p, size_t n)
{
	char hex[2 * 64 + 1];

	if (n > 64)
		return NULL;
	hex_encode(p, n, hex);
	return json_string(hex);
}

/* The evidence as the agent sent it, but its firmware log: "boot" holds the one judged. */
static json_t *evidence_value(const struct evidence *ev)
{
	struct evidence copy = *ev;

	copy.boot_log = NULL;
	copy.boot_log_len = 0;
	copy.boot_cmdline = NULL;
	copy.want_ear = false;
	return embed(evidence_encode(&copy));
}

static json_t *boot_value(const struct boot_input *b, const uint8_t *sha256)
{
	json_t *o;

	if (!b || !b->log || !sha256)
		return json_null();
	o = json_pack("{s:o, s:o, s:I, s:o}", "sha256", hex_value(sha256, 32), "cmdline",
		      b->cmdline ? json_string(b->cmdline) : json_null(), "judged_boot",
		      (json_int_t)(b->judged ? b->judged_boot : 0), "judged_key",
		      b->judged ? hex_value(b->judged_key, 32) : json_null());
	return o;
}

char *evidence_record_encode(const struct evidence_kept *k)
{
	const struct attest_request *req = k->req;
	uint8_t state[BOOT_STATE_ENCODED_LEN];
	struct boot_state none;
	struct verdict_response v = *k->verdict;
	json_t *root, *judged = json_null();
	char *out;

	memset(&none, 0, sizeof(none));
	boot_state_encode(req->prev ? req->prev : &none, state);
	v.has_next_challenge = false;
	v.ear = NULL;
	v.verdict_id = 0;
	if (req->judged_by && req->judged_by->known)
		judged = json_pack("{s:s, s:I, s:I}", "policy", req->judged_by->policy,
				   "policy_version", (json_int_t)req->judged_by->policy_version,
				   "amendment_version",
				   (json_int_t)req->judged_by->amendment_version);
	root = json_pack("{s:i, s:s, s:I, s:o, s:o, s:o, s:I, s:I, s:o, s:o, s:o}", "format",
			 EVIDENCE_RECORD_FORMAT, "agent", k->agent, "time", (json_int_t)k->time,
			 "evidence", evidence_value(req->ev), "challenge",
			 embed(challenge_encode(k->challenge)), "prev_state",
			 b64_value(state, sizeof(state)), "open_violations",
			 (json_int_t)req->open_violations, "open_violations_in_boot",
			 (json_int_t)req->open_violations_prev_boot, "judged_by", judged, "boot",
			 boot_value(req->boot, k->boot_log_sha256), "verdict",
			 embed(verdict_response_encode(&v)));
	if (root && k->ak_pub &&
	    json_object_set_new(root, "ak_pub", b64_value(k->ak_pub, k->ak_pub_len))) {
		json_decref(root);
		return NULL;
	}
	out = root ? json_dumps(root, JSON_COMPACT) : NULL;
	json_decref(root);
	return out;
}

/* A hex field of exactly n bytes. */
static int get_hex(json_t *o, const char *key, uint8_t *out, size_t n)
{
	const char *s = json_string_value(json_object_get(o, key));

	if (!s || strlen(s) != 2 * n || hex_decode(s, 2 * n, out, n) != (ssize_t)n)
		return -EINVAL;
	return 0;
}

int evidence_record_refs(const char *stored, struct evidence_refs *out)
{
	json_t *root = json_loads(stored, 0, NULL);
	json_t *j, *boot;
	const char *name;
	int ret = -EINVAL;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(root))
		goto out;
	name = json_string_value(json_object_get(root, "agent"));
	if (!name || !agent_id_valid(name))
		goto out;
	snprintf(out->agent, sizeof(out->agent), "%s", name);
	j = json_object_get(root, "judged_by");
	if (json_is_object(j)) {
		name = json_string_value(json_object_get(j, "policy"));
		if (!name || strlen(name) > LIMIT_POLICY_NAME)
			goto out;
		out->has_policy = true;
		snprintf(out->policy, sizeof(out->policy), "%s", name);
		out->policy_version = json_integer_value(json_object_get(j, "policy_version"));
		out->amendment_version = json_integer_value(json_object_get(j, "amendment_version"));
	}
	boot = json_object_get(root, "boot");
	if (json_is_object(boot)) {
		if (get_hex(boot, "sha256", out->boot_log_sha256, 32))
			goto out;
		out->has_boot_log = true;
	}
	ret = 0;
out:
	json_decref(root);
	return ret;
}

static json_t *text_part(const char *name, int64_t version, const char *text)
{
	if (!text)
		return json_null();
	return json_pack("{s:s, s:I, s:s}", "name", name, "version", (json_int_t)version, "text",
			 text);
}

char *evidence_record_export(const char *stored, int64_t verdict_id, const uint8_t *ak_pub,
			     size_t ak_pub_len, const char *policy_text,
			     const char *amendment_text, const uint8_t *boot_log,
			     size_t boot_log_len)
{
	json_t *root = json_loads(stored, 0, NULL);
	char amendment[STORE_AMENDMENT_NAME_MAX + 1];
	struct evidence_refs refs;
	json_t *boot;
	char *out = NULL;

	if (!json_is_object(root) || evidence_record_refs(stored, &refs))
		goto out;
	store_amendment_name(refs.agent, amendment);
	boot = json_object_get(root, "boot");
	if (json_object_set_new(root, "verdict_id", json_integer(verdict_id)) ||
	    (json_is_object(json_object_get(root, "verdict")) &&
	     json_object_set_new(json_object_get(root, "verdict"), "verdict_id",
				 json_integer(verdict_id))) ||
	    (ak_pub && json_object_set_new(root, "ak_pub", b64_value(ak_pub, ak_pub_len))) ||
	    json_object_set_new(root, "policy",
				text_part(refs.policy, refs.policy_version,
					  refs.has_policy && refs.policy_version > 0 ? policy_text
										    : NULL)) ||
	    json_object_set_new(root, "amendment",
				text_part(amendment, refs.amendment_version,
					  refs.amendment_version ? amendment_text : NULL)) ||
	    (json_is_object(boot) && boot_log &&
	     json_object_set_new(boot, "log", b64_value(boot_log, boot_log_len))))
		goto out;
	out = json_dumps(root, JSON_COMPACT);
out:
	json_decref(root);
	return out;
}

/* An object member as the JSON text a proto parser takes. */
static int parse_member(json_t *root, const char *key, char **text)
{
	json_t *v = json_object_get(root, key);

	*text = json_is_object(v) ? json_dumps(v, JSON_COMPACT) : NULL;
	return *text ? 0 : -EINVAL;
}

static int get_uint(json_t *o, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -EINVAL;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

/* A base64 field of 1..cap bytes into a new buffer. */
static int get_b64(json_t *o, const char *key, size_t cap, uint8_t **out, size_t *len)
{
	const char *s = json_string_value(json_object_get(o, key));

	*out = NULL;
	*len = 0;
	if (!s || base64_decoded_max(strlen(s)) > cap + 3)
		return -EINVAL;
	*out = base64_decode_alloc(s, strlen(s), len);
	if (!*out || *len == 0 || *len > cap) {
		free(*out);
		*out = NULL;
		return -EINVAL;
	}
	return 0;
}

/* "policy" or "amendment": its text when present; none is NULL. */
static int get_text(json_t *root, const char *key, char **text)
{
	json_t *o = json_object_get(root, key);
	const char *s;

	*text = NULL;
	if (!o || json_is_null(o))
		return 0;
	s = json_string_value(json_object_get(o, "text"));
	if (!s || strlen(s) > LIMIT_POLICY_BYTES)
		return -EINVAL;
	*text = strdup(s);
	return *text ? 0 : -ENOMEM;
}

static int parse_judged_by(json_t *root, struct evidence_record *r)
{
	json_t *j = json_object_get(root, "judged_by");
	const char *name;
	uint64_t pv, av;

	if (!j || json_is_null(j))
		return 0;
	name = json_string_value(json_object_get(j, "policy"));
	if (!name || strlen(name) > LIMIT_POLICY_NAME || get_uint(j, "policy_version", &pv) ||
	    get_uint(j, "amendment_version", &av))
		return -EINVAL;
	r->has_judged_by = true;
	r->judged_by.known = true;
	snprintf(r->judged_by.policy, sizeof(r->judged_by.policy), "%s", name);
	r->judged_by.policy_version = (int64_t)pv;
	r->judged_by.amendment_version = (int64_t)av;
	return 0;
}

static int parse_boot(json_t *root, struct evidence_record *r, const char **why)
{
	json_t *b = json_object_get(root, "boot");
	json_t *cmd, *key;
	uint64_t judged_boot;

	if (!b || json_is_null(b))
		return 0;
	*why = "boot";
	if (!json_is_object(b) || get_hex(b, "sha256", r->boot_sha256, 32) ||
	    get_uint(b, "judged_boot", &judged_boot))
		return -EINVAL;
	*why = "boot.log";
	if (get_b64(b, "log", LIMIT_EVENTLOG_BYTES, &r->boot_log, &r->boot.log_len))
		return -EINVAL;
	*why = "boot.cmdline";
	cmd = json_object_get(b, "cmdline");
	if (json_is_string(cmd)) {
		if (strlen(json_string_value(cmd)) > LIMIT_CMDLINE ||
		    !(r->boot_cmdline = strdup(json_string_value(cmd))))
			return -EINVAL;
	} else if (!json_is_null(cmd)) {
		return -EINVAL;
	}
	*why = "boot.judged_key";
	key = json_object_get(b, "judged_key");
	if (judged_boot) {
		if (get_hex(b, "judged_key", r->boot.judged_key, 32))
			return -EINVAL;
	} else if (!json_is_null(key)) {
		return -EINVAL;
	}
	r->has_boot = true;
	r->boot.log = r->boot_log;
	r->boot.cmdline = r->boot_cmdline;
	r->boot.judged = judged_boot != 0;
	r->boot.judged_boot = judged_boot;
	return 0;
}

int evidence_record_parse(const char *json, size_t len, struct evidence_record *out,
			  const char **why)
{
	json_error_t jerr;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
	json_t *v;
	uint8_t *state = NULL;
	size_t state_len = 0;
	char *text = NULL;
	uint64_t u;
	const char *s;
	int ret = -EINVAL;

	memset(out, 0, sizeof(*out));
	*why = "not a JSON object";
	if (!json_is_object(root))
		goto out;
	*why = "format";
	v = json_object_get(root, "format");
	if (!json_is_integer(v) || json_integer_value(v) != EVIDENCE_RECORD_FORMAT)
		goto out;
	*why = "verdict_id";
	if (get_uint(root, "verdict_id", &u))
		goto out;
	out->verdict_id = (int64_t)u;
	*why = "agent";
	s = json_string_value(json_object_get(root, "agent"));
	if (!s || !agent_id_valid(s))
		goto out;
	snprintf(out->agent, sizeof(out->agent), "%s", s);
	*why = "time";
	if (get_uint(root, "time", &u))
		goto out;
	out->time = (int64_t)u;
	*why = "evidence";
	if (parse_member(root, "evidence", &text) ||
	    evidence_parse(text, strlen(text), &out->ev, why))
		goto out;
	free(text);
	*why = "challenge";
	if (parse_member(root, "challenge", &text) ||
	    challenge_parse(text, strlen(text), &out->challenge, why))
		goto out;
	free(text);
	*why = "verdict";
	if (parse_member(root, "verdict", &text) ||
	    verdict_response_parse(text, strlen(text), &out->verdict, why))
		goto out;
	free(text);
	text = NULL;
	*why = "ak_pub";
	if (get_b64(root, "ak_pub", LIMIT_TPM2B_PUBLIC, &out->ak_pub, &out->ak_pub_len))
		goto out;
	*why = "prev_state";
	if (get_b64(root, "prev_state", BOOT_STATE_ENCODED_LEN, &state, &state_len) ||
	    boot_state_decode(state, state_len, &out->prev))
		goto out;
	*why = "open_violations";
	if (get_uint(root, "open_violations", &out->open_violations) ||
	    get_uint(root, "open_violations_in_boot", &out->open_violations_in_boot) ||
	    out->open_violations_in_boot > out->open_violations)
		goto out;
	*why = "judged_by";
	if (parse_judged_by(root, out))
		goto out;
	if (parse_boot(root, out, why))
		goto out;
	*why = "policy";
	if (get_text(root, "policy", &out->policy_text))
		goto out;
	*why = "amendment";
	if (get_text(root, "amendment", &out->amendment_text))
		goto out;
	*why = NULL;
	ret = 0;
out:
	free(text);
	free(state);
	json_decref(root);
	if (ret)
		evidence_record_release(out);
	return ret;
}

void evidence_record_release(struct evidence_record *r)
{
	if (!r)
		return;
	evidence_release(&r->ev);
	free(r->ak_pub);
	free(r->boot_log);
	free(r->boot_cmdline);
	free(r->policy_text);
	free(r->amendment_text);
	r->ak_pub = r->boot_log = NULL;
	r->boot_cmdline = r->policy_text = r->amendment_text = NULL;
	r->boot.log = NULL;
	r->boot.cmdline = NULL;
}

/* The first difference between the verdict reached and the one recorded, or false. */
static bool differs(const struct verdict_response *now, const struct verdict_response *then,
		    char *why, size_t cap)
{
	if (now->trusted != then->trusted) {
		snprintf(why, cap, "the verdict is %s, recorded %s",
			 now->trusted ? "trusted" : "untrusted",
			 then->trusted ? "trusted" : "untrusted");
		return true;
	}
	for (unsigned i = 0; i < now->nreasons || i < then->nreasons; i++) {
		const struct verdict_reason *a = i < now->nreasons ? &now->reason[i] : NULL;
		const struct verdict_reason *b = i < then->nreasons ? &then->reason[i] : NULL;

		if (!a || !b || strcmp(a->code, b->code)) {
			snprintf(why, cap, "reason %u is %s, recorded %s", i + 1,
				 a ? a->code : "(none)", b ? b->code : "(none)");
			return true;
		}
		if (strcmp(a->detail, b->detail) ||
		    (a->entry != b->entry && (a->entry >= 0 || b->entry >= 0))) {
			snprintf(why, cap, "reason %u (%s) is at entry %lld \"%.150s\", recorded at"
				 " entry %lld \"%.150s\"", i + 1, a->code, (long long)a->entry,
				 a->detail, (long long)b->entry, b->detail);
			text_trim_utf8_tail(why);
			return true;
		}
	}
	if (now->next_offset != then->next_offset) {
		snprintf(why, cap, "the quote covers entries up to %llu, recorded %llu",
			 (unsigned long long)now->next_offset,
			 (unsigned long long)then->next_offset);
		return true;
	}
	return false;
}

static int load_policy(const char *what, const char *text, struct policy **out, char *why,
		       size_t cap)
{
	char err[256];

	*out = NULL;
	if (!text)
		return 0;
	*out = policy_load(text, strlen(text), err, sizeof(err));
	if (!*out) {
		snprintf(why, cap, "the %s does not load: %s", what, err);
		return -EINVAL;
	}
	return 0;
}

int evidence_record_check(const struct evidence_record *r, struct evidence_check *out)
{
	struct policy *pol = NULL, *amend = NULL;
	struct attest_request req;
	struct attest_result res;
	uint8_t sha[32];
	TPMT_PUBLIC akpub;
	EVP_PKEY *ak = NULL;
	int ret = -EINVAL;

	memset(out, 0, sizeof(*out));
	if (tpmkey_parse_public(r->ak_pub, r->ak_pub_len, &akpub) || !(ak = tpmkey_to_evp(&akpub))) {
		snprintf(out->why, sizeof(out->why), "the AK does not load");
		goto out;
	}
	if (r->has_boot) {
		if (EVP_Digest(r->boot.log, r->boot.log_len, sha, NULL, EVP_sha256(), NULL) != 1)
			goto out;
		if (memcmp(sha, r->boot_sha256, 32)) {
			snprintf(out->why, sizeof(out->why),
				 "the event log is not the one the round judged (its SHA-256 differs)");
			goto out;
		}
	}
	if (r->has_judged_by && r->judged_by.policy_version > 0 && !r->policy_text) {
		snprintf(out->why, sizeof(out->why), "the record names policy \"%s\" but holds no text",
			 r->judged_by.policy);
		goto out;
	}
	if (r->has_judged_by && r->judged_by.amendment_version && !r->amendment_text) {
		snprintf(out->why, sizeof(out->why), "the record names an amendment but holds no text");
		goto out;
	}
	if (load_policy("policy", r->policy_text, &pol, out->why, sizeof(out->why)) ||
	    load_policy("amendment", r->amendment_text, &amend, out->why, sizeof(out->why)))
		goto out;
	memset(&req, 0, sizeof(req));
	req.ak = ak;
	req.nonce = r->challenge.nonce;
	req.nonce_len = r->challenge.nonce_len;
	req.requested = &r->challenge.selection;
	req.policy = pol;
	req.amendment = amend;
	req.judged_by = r->has_judged_by ? &r->judged_by : NULL;
	req.prev = &r->prev;
	req.open_violations = r->open_violations;
	req.open_violations_prev_boot = r->open_violations_in_boot;
	req.ev = &r->ev;
	req.boot = r->has_boot ? &r->boot : NULL;
	ret = attest_evaluate(&req, &res);
	if (ret)
		goto out;
	out->verdict = res.verdict;
	out->authenticated = res.authenticated;
	attest_result_release(&res);
	out->reproduced = !differs(&out->verdict, &r->verdict, out->why, sizeof(out->why));
	if (!out->authenticated)
		snprintf(out->why, sizeof(out->why),
			 "the quote's signature does not verify with the record's AK");
out:
	EVP_PKEY_free(ak);
	policy_unref(pol);
	policy_unref(amend);
	return ret;
}
