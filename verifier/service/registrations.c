/* Registration requests checked whole; the contract is in registrations.h. */
#include "verifier/service/registrations.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/encoding.h"
#include "proto/evidence.h"
#include "proto/labels.h"
#include "verifier/facts/enroll.h"
#include "verifier/policy/policy_cache.h"

/* What the items' borrowed strings and own buffers live in. */
struct owned {
	json_t *doc;
	uint8_t **certs;  /* n, NULL where the item has no certificate */
	char **labels;    /* n canonical JSON texts */
	size_t n;
};

static int bad(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int bad(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool policy_spelt(const char *s)
{
	return s && strlen(s) <= LIMIT_POLICY_NAME && agent_id_valid(s);
}

/* The item's labels as canonical JSON (sorted keys) into *out. */
static int item_labels(json_t *labels, size_t i, char **out, char *why, size_t cap)
{
	const char *key;
	json_t *v;

	if (!labels) {
		*out = strdup("{}");
		return *out ? 0 : -ENOMEM;
	}
	if (!json_is_object(labels) || json_object_size(labels) > LIMIT_LABELS)
		return bad(why, cap, "registrations[%zu]: labels must be an object of at most %u"
			   " KEY: VALUE", i, LIMIT_LABELS);
	json_object_foreach(labels, key, v) {
		if (!label_key_valid(key) || !json_is_string(v) ||
		    !label_value_valid(json_string_value(v)))
			return bad(why, cap, "registrations[%zu]: label \"%.*s\" is not KEY: VALUE"
				   " (a key of 1-%u [A-Za-z0-9._/-], a value of 1-%u [A-Za-z0-9._:/-])",
				   i, (int)LIMIT_LABEL_KEY, key, LIMIT_LABEL_KEY, LIMIT_LABEL_VALUE);
	}
	*out = json_dumps(labels, JSON_COMPACT | JSON_SORT_KEYS);
	return *out ? 0 : -ENOMEM;
}

/* What names the item's EK: exactly one of ek_sha256 and ek_cert. */
static int item_ek(json_t *item, size_t i, struct store_registration *r, uint8_t **cert,
		   char *why, size_t cap)
{
	const char *hex = json_string_value(json_object_get(item, "ek_sha256"));
	const char *b64 = json_string_value(json_object_get(item, "ek_cert"));
	size_t der_len = 0, cert_len = 0;

	if (!!json_object_get(item, "ek_sha256") + !!json_object_get(item, "ek_cert") != 1)
		return bad(why, cap, "registrations[%zu]: give exactly one of ek_sha256 and ek_cert",
			   i);
	if (json_object_get(item, "ek_sha256")) {
		r->ek_kind = STORE_EK_PUBLIC;
		if (!hex || strlen(hex) != 2 * sizeof(r->ek_sha256) ||
		    hex_decode(hex, strlen(hex), r->ek_sha256, sizeof(r->ek_sha256)) !=
			    (ssize_t)sizeof(r->ek_sha256))
			return bad(why, cap, "registrations[%zu]: ek_sha256 must be 64 hex digits (the"
				   " SHA-256 of the EK's TPM2B_PUBLIC)", i);
		return 0;
	}
	r->ek_kind = STORE_EK_CERT;
	if (!b64 || strlen(b64) > base64_encoded_size(LIMIT_EK_CERT) ||
	    !(*cert = base64_decode_alloc(b64, strlen(b64), &der_len)) ||
	    enroll_ek_cert_digest(*cert, der_len, r->ek_sha256, &cert_len))
		return bad(why, cap, "registrations[%zu]: ek_cert must be one DER certificate of at"
			   " most %u bytes, base64", i, LIMIT_EK_CERT);
	r->ek_cert = *cert;
	r->ek_cert_len = cert_len;
	return 0;
}

static int item_parse(json_t *item, size_t i, struct store_registration *r, struct owned *o,
		      char *why, size_t cap)
{
	static const char *const members[] = { "agent_id", "ek_sha256", "ek_cert", "policy",
					       "labels" };
	json_t *policy = json_object_get(item, "policy");
	const char *key;
	json_t *v;
	int ret;

	if (!json_is_object(item))
		return bad(why, cap, "registrations[%zu] is not an object", i);
	json_object_foreach(item, key, v) {
		size_t m = 0;

		while (m < sizeof(members) / sizeof(members[0]) && strcmp(key, members[m]))
			m++;
		if (m == sizeof(members) / sizeof(members[0]))
			return bad(why, cap, "registrations[%zu]: unknown member \"%.32s\"", i, key);
	}
	r->agent = json_string_value(json_object_get(item, "agent_id"));
	if (!r->agent || !agent_id_valid(r->agent))
		return bad(why, cap, "registrations[%zu]: agent_id missing or invalid (1-%u of"
			   " [A-Za-z0-9._-])", i, LIMIT_AGENT_ID);
	if ((ret = item_ek(item, i, r, &o->certs[i], why, cap)))
		return ret;
	r->policy = "";
	if (policy) {
		if (!policy_spelt(json_string_value(policy)))
			return bad(why, cap, "registrations[%zu]: policy is not a policy name", i);
		if (strcmp(json_string_value(policy), POLICY_DEFAULT_NAME))
			r->policy = json_string_value(policy);
	}
	if ((ret = item_labels(json_object_get(item, "labels"), i, &o->labels[i], why, cap)))
		return ret;
	r->labels = o->labels[i];
	return 0;
}

int registrations_parse(const char *body, size_t len, struct registration_batch *out,
			char *why, size_t cap)
{
	struct owned *o;
	json_t *list;
	size_t n;
	int ret;

	memset(out, 0, sizeof(*out));
	snprintf(why, cap, "want {\"registrations\": [{\"agent_id\", \"ek_sha256\" or"
		 " \"ek_cert\", \"policy\", \"labels\"}, ...]}");
	if (!(o = calloc(1, sizeof(*o))))
		return -ENOMEM;
	out->owned = o;
	o->doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	list = json_object_get(o->doc, "registrations");
	if (!json_is_object(o->doc) || json_object_size(o->doc) != 1 || !json_is_array(list))
		return -EINVAL;
	n = json_array_size(list);
	if (n == 0 || n > LIMIT_REGISTRATIONS)
		return bad(why, cap, "registrations holds 1 to %u agents", LIMIT_REGISTRATIONS);
	o->certs = calloc(n, sizeof(*o->certs));
	o->labels = calloc(n, sizeof(*o->labels));
	out->regs = calloc(n, sizeof(*out->regs));
	if (!o->certs || !o->labels || !out->regs)
		return -ENOMEM;
	o->n = n;
	for (size_t i = 0; i < n; i++)
		if ((ret = item_parse(json_array_get(list, i), i, &out->regs[i], o, why, cap)))
			return ret;
	out->n = n;
	why[0] = '\0';
	return 0;
}

void registration_batch_release(struct registration_batch *b)
{
	struct owned *o = b ? b->owned : NULL;

	if (!b)
		return;
	if (o) {
		for (size_t i = 0; i < o->n; i++) {
			free(o->certs[i]);
			free(o->labels[i]);
		}
		free(o->certs);
		free(o->labels);
		json_decref(o->doc);
		free(o);
	}
	free(b->regs);
	memset(b, 0, sizeof(*b));
}
