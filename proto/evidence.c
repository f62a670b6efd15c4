/*
 * Protocol JSON codecs (see evidence.h for the wire format).
 *
 * Parsing is done in two steps: a cheap scan that bounds nesting depth (jansson's own limit is
 * 2048 levels, far more than any message needs), then jansson with duplicate keys rejected,
 * then a typed walk over exactly the fields we expect. Unknown fields are ignored so that a
 * newer agent can add fields without breaking an older verifier.
 */
#include "proto/evidence.h"
#include "proto/ear.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <openssl/crypto.h>

#include "proto/encoding.h"
#include "proto/limits.h"

#define NONCE_WHY                                                                        \
	"nonce must be hex of " LIMIT_STR(LIMIT_NONCE_MIN_BYTES) "-" LIMIT_STR(LIMIT_NONCE_BYTES) \
	" bytes"

bool agent_id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > LIMIT_AGENT_ID || id[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

bool code_valid(const char *code)
{
	size_t n = strlen(code);

	if (n == 0 || n > 31)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = code[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

/* Bounds the nesting of {} and [] outside strings before jansson sees the text. */
static bool json_depth_ok(const char *s, size_t len, unsigned max)
{
	unsigned depth = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == '{' || c == '[') {
			if (++depth > max)
				return false;
		} else if ((c == '}' || c == ']') && depth) {
			depth--;
		}
	}
	return true;
}

static json_t *load_object(const char *text, size_t len, const char **why)
{
	json_error_t jerr;

	if (!json_depth_ok(text, len, LIMIT_JSON_DEPTH)) {
		*why = "json nested too deeply";
		return NULL;
	}
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		*why = "malformed json";
		return NULL;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		*why = "json body must be an object";
		return NULL;
	}
	return root;
}

/* Decodes a required base64 string field into a fresh buffer of at most max bytes. */
static int get_b64(json_t *obj, const char *key, size_t max, bool allow_empty, uint8_t **out,
		   size_t *outlen, const char **why, const char *err_missing, const char *err_bad)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_string(v)) {
		*why = err_missing;
		return -EINVAL;
	}
	const char *s = json_string_value(v);
	size_t slen = json_string_length(v);
	if (base64_decoded_max(slen) > max + 2) {
		*why = err_bad;
		return -EINVAL;
	}
	size_t n = 0;
	uint8_t *buf = base64_decode_alloc(s, slen, &n);
	if (!buf || n > max || (!allow_empty && n == 0)) {
		free(buf);
		*why = err_bad;
		return -EINVAL;
	}
	*out = buf;
	*outlen = n;
	return 0;
}

static int get_hex_fixed(json_t *obj, const char *key, uint8_t *out, size_t cap, size_t min,
			 size_t *outlen, const char **why, const char *err)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_string(v)) {
		*why = err;
		return -EINVAL;
	}
	ssize_t n = hex_decode(json_string_value(v), json_string_length(v), out, cap);
	if (n < (ssize_t)min) {
		*why = err;
		return -EINVAL;
	}
	*outlen = (size_t)n;
	return 0;
}

static int get_u64(json_t *obj, const char *key, uint64_t *out, const char **why, const char *err)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		*why = err;
		return -EINVAL;
	}
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_agent_id(json_t *obj, char *out, const char **why)
{
	json_t *v = json_object_get(obj, "agent_id");

	if (!json_is_string(v) || json_string_length(v) > LIMIT_AGENT_ID ||
	    strlen(json_string_value(v)) != json_string_length(v) ||
	    !agent_id_valid(json_string_value(v))) {
		*why = "agent_id missing or invalid (1-" LIMIT_STR(LIMIT_AGENT_ID) " of [A-Za-z0-9._-])";
		return -EINVAL;
	}
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static char *dump_and_free(json_t *root)
{
	char *s = root ? json_dumps(root, JSON_COMPACT) : NULL;

	json_decref(root);
	return s;
}

/* json_pack("s%") does not exist for base64; build the string first. */
static json_t *b64_value(const uint8_t *buf, size_t len)
{
	char *s = base64_encode_alloc(buf, len);
	json_t *v = s ? json_string(s) : NULL;

	free(s);
	return v;
}

static json_t *hex_value(const uint8_t *buf, size_t len)
{
	char tmp[2 * 128 + 1];

	if (len > 128)
		return NULL;
	hex_encode(buf, len, tmp);
	return json_string(tmp);
}

/* ---- enrollment ------------------------------------------------------------------------- */

int enroll_request_parse(const char *json, size_t len, struct enroll_request *out, const char **why)
{
	memset(out, 0, sizeof(*out));
	json_t *root = load_object(json, len, why);
	int rc = -EINVAL;

	if (!root)
		return -EINVAL;
	if (get_agent_id(root, out->agent_id, why) ||
	    get_b64(root, "ek_pub", LIMIT_TPM2B_PUBLIC, false, &out->ek_pub, &out->ek_pub_len, why,
		    "ek_pub missing",
		    "ek_pub is not valid base64 of at most " LIMIT_STR(LIMIT_TPM2B_PUBLIC) " bytes") ||
	    get_b64(root, "ek_cert", LIMIT_EK_CERT, true, &out->ek_cert, &out->ek_cert_len, why,
		    "ek_cert missing",
		    "ek_cert is not valid base64 of at most " LIMIT_STR(LIMIT_EK_CERT) " bytes") ||
	    get_b64(root, "ak_pub", LIMIT_TPM2B_PUBLIC, false, &out->ak_pub, &out->ak_pub_len, why,
		    "ak_pub missing",
		    "ak_pub is not valid base64 of at most " LIMIT_STR(LIMIT_TPM2B_PUBLIC) " bytes"))
		goto out;
	if (json_object_get(root, "ek_chain") &&
	    get_b64(root, "ek_chain", LIMIT_EK_CHAIN, false, &out->ek_chain, &out->ek_chain_len,
		    why, "ek_chain must be base64",
		    "ek_chain is not valid base64 of 1-" LIMIT_STR(LIMIT_EK_CHAIN) " bytes"))
		goto out;
	rc = 0;
out:
	json_decref(root);
	if (rc)
		enroll_request_release(out);
	return rc;
}

char *enroll_request_encode(const struct enroll_request *req)
{
	json_t *root = json_pack("{s:s, s:o, s:o, s:o}", "agent_id", req->agent_id,
				 "ek_pub", b64_value(req->ek_pub, req->ek_pub_len),
				 "ek_cert", b64_value(req->ek_cert, req->ek_cert_len),
				 "ak_pub", b64_value(req->ak_pub, req->ak_pub_len));

	if (root && req->ek_chain_len &&
	    json_object_set_new(root, "ek_chain", b64_value(req->ek_chain, req->ek_chain_len))) {
		json_decref(root);
		return NULL;
	}
	return dump_and_free(root);
}

void enroll_request_release(struct enroll_request *req)
{
	if (!req)
		return;
	free(req->ek_pub);
	free(req->ek_cert);
	free(req->ak_pub);
	free(req->ek_chain);
	req->ek_pub = req->ek_cert = req->ak_pub = req->ek_chain = NULL;
	req->ek_pub_len = req->ek_cert_len = req->ak_pub_len = req->ek_chain_len = 0;
}

int enroll_response_parse(const char *json, size_t len, struct enroll_response *out, const char **why)
{
	memset(out, 0, sizeof(*out));
	json_t *root = load_object(json, len, why);
	int rc = -EINVAL;

	if (!root)
		return -EINVAL;
	if (get_agent_id(root, out->agent_id, why) ||
	    get_b64(root, "credential_blob", LIMIT_ID_OBJECT, false, &out->credential_blob,
		    &out->credential_blob_len, why, "credential_blob missing",
		    "credential_blob is not valid base64 of at most " LIMIT_STR(LIMIT_ID_OBJECT)
		    " bytes") ||
	    get_b64(root, "encrypted_secret", LIMIT_ENC_SECRET, false, &out->encrypted_secret,
		    &out->encrypted_secret_len, why, "encrypted_secret missing",
		    "encrypted_secret is not valid base64 of at most " LIMIT_STR(LIMIT_ENC_SECRET)
		    " bytes"))
		goto out;
	rc = 0;
out:
	json_decref(root);
	if (rc)
		enroll_response_release(out);
	return rc;
}

char *enroll_response_encode(const struct enroll_response *resp)
{
	return dump_and_free(json_pack(
		"{s:s, s:o, s:o}", "agent_id", resp->agent_id, "credential_blob",
		b64_value(resp->credential_blob, resp->credential_blob_len), "encrypted_secret",
		b64_value(resp->encrypted_secret, resp->encrypted_secret_len)));
}

void enroll_response_release(struct enroll_response *resp)
{
	if (!resp)
		return;
	free(resp->credential_blob);
	free(resp->encrypted_secret);
	resp->credential_blob = resp->encrypted_secret = NULL;
	resp->credential_blob_len = resp->encrypted_secret_len = 0;
}

int activate_request_parse(const char *json, size_t len, struct activate_request *out, const char **why)
{
	memset(out, 0, sizeof(*out));
	json_t *root = load_object(json, len, why);
	uint8_t *buf = NULL;
	size_t n = 0;
	int rc;

	if (!root)
		return -EINVAL;
	rc = get_b64(root, "secret", sizeof(out->secret), false, &buf, &n, why, "secret missing",
		     "secret is not valid base64 of 1-" LIMIT_STR(LIMIT_DIGEST) " bytes");
	if (!rc) {
		memcpy(out->secret, buf, n);
		out->secret_len = n;
		OPENSSL_cleanse(buf, n);
	}
	free(buf);
	json_decref(root);
	return rc;
}

char *activate_request_encode(const struct activate_request *req)
{
	return dump_and_free(json_pack("{s:o}", "secret", b64_value(req->secret, req->secret_len)));
}

/* ---- PCR selections and values ---------------------------------------------------------- */

/* {"sha1": [0, 1, ...], ...} -> masks. Banks keep the order they appear in (jansson keeps it). */
static int selection_parse(json_t *obj, struct pcr_set *set, const char **why)
{
	const char *name;
	json_t *list;

	memset(set, 0, sizeof(*set));
	if (!json_is_object(obj) || json_object_size(obj) == 0 ||
	    json_object_size(obj) > LIMIT_PCR_BANKS) {
		*why = "pcr_selection must be an object of 1-4 banks";
		return -EINVAL;
	}
	json_object_foreach(obj, name, list) {
		struct pcr_bank *b = pcr_set_add_bank(set, pcr_alg_from_name(name));
		size_t i;
		json_t *v;

		if (!b || !json_is_array(list) || json_array_size(list) == 0 ||
		    json_array_size(list) > PCR_COUNT) {
			*why = "pcr_selection: unknown or repeated bank, or bad PCR list";
			return -EINVAL;
		}
		json_array_foreach(list, i, v) {
			json_int_t n = json_is_integer(v) ? json_integer_value(v) : -1;
			if (n < 0 || n >= (json_int_t)PCR_COUNT || (b->mask & (1u << n))) {
				*why = "pcr_selection: PCR index must be 0-23, each once";
				return -EINVAL;
			}
			b->mask |= 1u << n;
		}
	}
	return 0;
}

static json_t *selection_value(const struct pcr_set *set)
{
	json_t *obj = json_object();

	for (unsigned i = 0; obj && i < set->nbanks; i++) {
		json_t *list = json_array();
		for (unsigned n = 0; list && n < PCR_COUNT; n++)
			if (set->bank[i].mask & (1u << n))
				json_array_append_new(list, json_integer(n));
		json_object_set_new(obj, pcr_alg_name(set->bank[i].alg), list);
	}
	return obj;
}

/* {"sha1": {"0": HEX, ...}, ...} -> masks and values. */
static int pcr_values_parse(json_t *obj, struct pcr_set *set, const char **why)
{
	const char *name, *idx;
	json_t *bank, *v;

	memset(set, 0, sizeof(*set));
	if (!json_is_object(obj) || json_object_size(obj) == 0 ||
	    json_object_size(obj) > LIMIT_PCR_BANKS) {
		*why = "pcrs must be an object of 1-4 banks";
		return -EINVAL;
	}
	json_object_foreach(obj, name, bank) {
		struct pcr_bank *b = pcr_set_add_bank(set, pcr_alg_from_name(name));
		if (!b || !json_is_object(bank) || json_object_size(bank) > PCR_COUNT) {
			*why = "pcrs: unknown or repeated bank, or bank is not an object";
			return -EINVAL;
		}
		size_t dlen = pcr_alg_digest_size(b->alg);
		json_object_foreach(bank, idx, v) {
			char *end;
			unsigned long n = strtoul(idx, &end, 10);
			if (!idx[0] || *end || n >= PCR_COUNT || (idx[0] == '0' && idx[1]) ||
			    (b->mask & (1u << n)) || !json_is_string(v) ||
			    hex_decode(json_string_value(v), json_string_length(v), b->value[n],
				       dlen) != (ssize_t)dlen) {
				*why = "pcrs: PCR index must be 0-23 and value hex of the bank's digest size";
				return -EINVAL;
			}
			b->mask |= 1u << n;
		}
	}
	return 0;
}

static json_t *pcr_values_value(const struct pcr_set *set)
{
	json_t *obj = json_object();

	for (unsigned i = 0; obj && i < set->nbanks; i++) {
		const struct pcr_bank *b = &set->bank[i];
		json_t *bank = json_object();
		for (unsigned n = 0; bank && n < PCR_COUNT; n++) {
			char key[4];
			if (!(b->mask & (1u << n)))
				continue;
			snprintf(key, sizeof(key), "%u", n);
			json_object_set_new(bank, key, hex_value(b->value[n], pcr_alg_digest_size(b->alg)));
		}
		json_object_set_new(obj, pcr_alg_name(b->alg), bank);
	}
	return obj;
}

/* ---- challenge and evidence ------------------------------------------------------------- */

/* A challenge object (the body of POST .../challenges, or a verdict's next_challenge). */
static int challenge_from(json_t *root, struct challenge *out, const char **why)
{
	uint64_t exp;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(root)) {
		*why = "a challenge must be an object";
		return -EINVAL;
	}
	if (get_hex_fixed(root, "nonce", out->nonce, sizeof(out->nonce), LIMIT_NONCE_MIN_BYTES,
			  &out->nonce_len, why, NONCE_WHY) ||
	    get_u64(root, "expires_at", &exp, why, "expires_at must be a non-negative integer") ||
	    get_u64(root, "log_offset", &out->log_offset, why,
		    "log_offset must be a non-negative integer") ||
	    selection_parse(json_object_get(root, "pcr_selection"), &out->selection, why))
		return -EINVAL;
	if (json_object_get(root, "boot_log_sha256")) {
		size_t n = 0;

		if (get_hex_fixed(root, "boot_log_sha256", out->boot_log_sha256,
				  sizeof(out->boot_log_sha256), sizeof(out->boot_log_sha256), &n, why,
				  "boot_log_sha256 must be hex of 32 bytes"))
			return -EINVAL;
		out->has_boot_log_sha256 = true;
	}
	out->expires_at = (int64_t)exp;
	return 0;
}

int challenge_parse(const char *json, size_t len, struct challenge *out, const char **why)
{
	json_t *root = load_object(json, len, why);
	int rc;

	if (!root) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	rc = challenge_from(root, out, why);
	json_decref(root);
	return rc;
}

/* The challenge as a JSON object; NULL when out of memory. */
static json_t *challenge_value(const struct challenge *c)
{
	json_t *root = json_pack("{s:o, s:I, s:I, s:o}", "nonce", hex_value(c->nonce, c->nonce_len),
				 "expires_at", (json_int_t)c->expires_at, "log_offset",
				 (json_int_t)c->log_offset, "pcr_selection",
				 selection_value(&c->selection));

	if (root && c->has_boot_log_sha256 &&
	    json_object_set_new(root, "boot_log_sha256",
				hex_value(c->boot_log_sha256, sizeof(c->boot_log_sha256)))) {
		json_decref(root);
		root = NULL;
	}
	return root;
}

char *challenge_encode(const struct challenge *c)
{
	return dump_and_free(challenge_value(c));
}

/* The optional boot log and command line of an evidence (see evidence.h). */
static int boot_parse(json_t *root, struct evidence *out, const char **why)
{
	json_t *cmd = json_object_get(root, "boot_cmdline");

	if (json_object_get(root, "boot_log") &&
	    get_b64(root, "boot_log", LIMIT_EVENTLOG_BYTES, false, &out->boot_log, &out->boot_log_len,
		    why, "boot_log must be base64",
		    "boot_log is not valid base64 of 1-" LIMIT_STR(LIMIT_EVENTLOG_BYTES) " bytes"))
		return -EINVAL;
	if (!cmd)
		return 0;
	if (!json_is_string(cmd) || json_string_length(cmd) > LIMIT_CMDLINE ||
	    strlen(json_string_value(cmd)) != json_string_length(cmd)) {
		*why = "boot_cmdline must be a string of at most " LIMIT_STR(LIMIT_CMDLINE) " bytes without NUL";
		return -EINVAL;
	}
	out->boot_cmdline = strdup(json_string_value(cmd));
	if (!out->boot_cmdline) {
		*why = "out of memory";
		return -ENOMEM;
	}
	return 0;
}

/* The optional interval, want_ear, log_deleted and log_more of an evidence (evidence.h). */
static int interval_parse(json_t *root, struct evidence *out, const char **why)
{
	json_t *v = json_object_get(root, "interval");
	json_t *w = json_object_get(root, "want_ear");

	if (v && (!json_is_integer(v) || json_integer_value(v) < 1 ||
		  json_integer_value(v) > LIMIT_AGENT_INTERVAL)) {
		*why = "interval must be an integer of 1-" LIMIT_STR(LIMIT_AGENT_INTERVAL) " seconds";
		return -EINVAL;
	}
	if (v)
		out->interval = (uint32_t)json_integer_value(v);
	if (w && !json_is_boolean(w)) {
		*why = "want_ear must be true or false";
		return -EINVAL;
	}
	out->want_ear = json_is_true(w);
	if (json_object_get(root, "log_deleted") &&
	    get_u64(root, "log_deleted", &out->log_deleted, why,
		    "log_deleted must be a non-negative integer"))
		return -EINVAL;
	w = json_object_get(root, "log_more");
	if (w && !json_is_boolean(w)) {
		*why = "log_more must be true or false";
		return -EINVAL;
	}
	out->log_more = json_is_true(w);
	return 0;
}

int evidence_parse(const char *json, size_t len, struct evidence *out, const char **why)
{
	memset(out, 0, sizeof(*out));
	json_t *root = load_object(json, len, why);
	int rc = -EINVAL;

	if (!root)
		return -EINVAL;
	if (get_hex_fixed(root, "nonce", out->nonce, sizeof(out->nonce), LIMIT_NONCE_MIN_BYTES,
			  &out->nonce_len, why, NONCE_WHY) ||
	    get_b64(root, "attest", LIMIT_ATTEST, false, &out->attest, &out->attest_len, why,
		    "attest missing",
		    "attest is not valid base64 of at most " LIMIT_STR(LIMIT_ATTEST) " bytes") ||
	    get_b64(root, "signature", LIMIT_SIGNATURE, false, &out->signature,
		    &out->signature_len, why, "signature missing",
		    "signature is not valid base64 of at most " LIMIT_STR(LIMIT_SIGNATURE) " bytes") ||
	    pcr_values_parse(json_object_get(root, "pcrs"), &out->pcrs, why) ||
	    get_u64(root, "log_offset", &out->log_offset, why,
		    "log_offset must be a non-negative integer") ||
	    get_b64(root, "log", LIMIT_REQUEST_BODY, true, &out->log, &out->log_len, why,
		    "log missing", "log is not valid base64") ||
	    boot_parse(root, out, why) || interval_parse(root, out, why))
		goto out;
	rc = 0;
out:
	json_decref(root);
	if (rc)
		evidence_release(out);
	return rc;
}

char *evidence_encode(const struct evidence *ev)
{
	json_t *root = json_pack(
		"{s:o, s:o, s:o, s:o, s:I, s:o}", "nonce", hex_value(ev->nonce, ev->nonce_len),
		"attest", b64_value(ev->attest, ev->attest_len), "signature",
		b64_value(ev->signature, ev->signature_len), "pcrs", pcr_values_value(&ev->pcrs),
		"log_offset", (json_int_t)ev->log_offset, "log", b64_value(ev->log, ev->log_len));

	if (root && ev->boot_log &&
	    json_object_set_new(root, "boot_log", b64_value(ev->boot_log, ev->boot_log_len)))
		goto fail;
	if (root && ev->boot_cmdline &&
	    json_object_set_new(root, "boot_cmdline", json_string(ev->boot_cmdline)))
		goto fail;
	if (root && ev->interval &&
	    json_object_set_new(root, "interval", json_integer(ev->interval)))
		goto fail;
	if (root && ev->want_ear && json_object_set_new(root, "want_ear", json_true()))
		goto fail;
	if (root && ev->log_deleted &&
	    json_object_set_new(root, "log_deleted", json_integer((json_int_t)ev->log_deleted)))
		goto fail;
	if (root && ev->log_more && json_object_set_new(root, "log_more", json_true()))
		goto fail;
	return dump_and_free(root);
fail:
	json_decref(root);
	return NULL;
}

void evidence_release(struct evidence *ev)
{
	if (!ev)
		return;
	free(ev->attest);
	free(ev->signature);
	free(ev->log);
	free(ev->boot_log);
	free(ev->boot_cmdline);
	ev->attest = ev->signature = ev->log = ev->boot_log = NULL;
	ev->boot_cmdline = NULL;
	ev->attest_len = ev->signature_len = ev->log_len = ev->boot_log_len = 0;
}

/* ---- verdicts and errors ---------------------------------------------------------------- */

static int copy_str(json_t *v, char *out, size_t cap)
{
	if (!json_is_string(v) || json_string_length(v) >= cap ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return -EINVAL;
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

int verdict_response_parse(const char *json, size_t len, struct verdict_response *out, const char **why)
{
	memset(out, 0, sizeof(*out));
	json_t *root = load_object(json, len, why);
	json_t *reasons, *r;
	const char *verdict;
	size_t i;
	int rc = -EINVAL;

	if (!root)
		return -EINVAL;
	verdict = json_string_value(json_object_get(root, "verdict"));
	if (!verdict || (strcmp(verdict, "trusted") && strcmp(verdict, "untrusted"))) {
		*why = "verdict must be trusted or untrusted";
		goto out;
	}
	out->trusted = strcmp(verdict, "trusted") == 0;
	uint64_t id;
	if (get_u64(root, "verdict_id", &id, why, "verdict_id must be a non-negative integer") ||
	    get_u64(root, "next_offset", &out->next_offset, why,
		    "next_offset must be a non-negative integer"))
		goto out;
	out->verdict_id = (int64_t)id;
	reasons = json_object_get(root, "reasons");
	if (!json_is_array(reasons) || json_array_size(reasons) > LIMIT_VERDICT_REASONS) {
		*why = "reasons must be an array of at most " LIMIT_STR(LIMIT_VERDICT_REASONS);
		goto out;
	}
	json_array_foreach(reasons, i, r) {
		struct verdict_reason *vr = &out->reason[i];
		json_t *e = json_object_get(r, "entry");
		json_t *d = json_object_get(r, "detail");
		if (copy_str(json_object_get(r, "code"), vr->code, sizeof(vr->code)) ||
		    !code_valid(vr->code) ||
		    (d && copy_str(d, vr->detail, sizeof(vr->detail))) ||
		    (e && (!json_is_integer(e) || json_integer_value(e) < 0))) {
			/* A negative entry would read back as "no entry" (-1) once encoded. */
			*why = "reason needs a code of [a-z0-9_] (and optional detail, entry >= 0)";
			goto out;
		}
		vr->entry = e ? json_integer_value(e) : -1;
		out->nreasons++;
	}
	if (out->trusted && out->nreasons) {
		*why = "a trusted verdict carries no reasons";
		goto out;
	}
	if (json_object_get(root, "next_challenge")) {
		if (challenge_from(json_object_get(root, "next_challenge"), &out->next_challenge,
				   why))
			goto out;
		out->has_next_challenge = true;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

char *verdict_response_encode(const struct verdict_response *v)
{
	json_t *reasons = json_array();

	for (unsigned i = 0; reasons && i < v->nreasons && i < LIMIT_VERDICT_REASONS; i++) {
		const struct verdict_reason *r = &v->reason[i];
		json_t *o = json_pack("{s:s, s:s}", "code", r->code, "detail", r->detail);
		if (o && r->entry >= 0)
			json_object_set_new(o, "entry", json_integer(r->entry));
		json_array_append_new(reasons, o);
	}
	json_t *root = json_pack("{s:s, s:I, s:I, s:o}", "verdict",
				 v->trusted ? "trusted" : "untrusted", "verdict_id",
				 (json_int_t)v->verdict_id, "next_offset", (json_int_t)v->next_offset,
				 "reasons", reasons);

	if (root && v->has_next_challenge &&
	    json_object_set_new(root, "next_challenge", challenge_value(&v->next_challenge))) {
		json_decref(root);
		root = NULL;
	}
	if (root && v->ear && json_object_set_new(root, "ear", json_string(v->ear))) {
		json_decref(root);
		root = NULL;
	}
	return dump_and_free(root);
}

char *verdict_response_ear(const char *json, size_t len)
{
	const char *why;
	json_t *root = load_object(json, len, &why);
	const char *ear = json_string_value(json_object_get(root, "ear"));
	char *copy = ear && strlen(ear) <= EAR_TOKEN_MAX ? strdup(ear) : NULL;

	json_decref(root);
	return copy;
}

char *error_encode(const char *code, const char *message)
{
	return dump_and_free(json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", message));
}

int error_parse(const char *json, size_t len, char *code, size_t code_cap, char *msg, size_t msg_cap)
{
	const char *why;
	json_t *root = load_object(json, len, &why);
	int rc = -EINVAL;

	if (!root)
		return -EINVAL;
	json_t *err = json_object_get(root, "error");
	if (!copy_str(json_object_get(err, "code"), code, code_cap) && code_valid(code)) {
		if (copy_str(json_object_get(err, "message"), msg, msg_cap) && msg_cap)
			msg[0] = '\0';
		rc = 0;
	}
	json_decref(root);
	return rc;
}
