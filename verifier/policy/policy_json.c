/*
 * policy_json: a policy's digests as JSON values (ours "alg:hex", typed "ima:"/"verity:", and
 * Keylime's bare hex), and the loaders' one-line errors and import warnings (policy_json.h).
 * Needs no other part of the policy engine: boot_policy.c and policy_keys.c build on it.
 */
#include "verifier/policy/policy_json.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proto/encoding.h"
#include "verifier/policy/policy_internal.h"

void policy_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}


void policy_warn(struct dynbuf *warnings, const char *fmt, ...)
{
	char line[POLICY_WARNING_LINE];
	size_t lines = 0;
	va_list ap;

	for (size_t i = 0; i < warnings->len; i++)
		lines += warnings->buf[i] == '\n';
	/* Past the cap one last line says so: no warning disappears without a trace. */
	if (lines >= LIMIT_POLICY_WARNINGS)
		return;
	if (lines == LIMIT_POLICY_WARNINGS - 1) {
		dynbuf_adds(warnings, "more than " LIMIT_STR(LIMIT_POLICY_WARNINGS)
			    " warnings: the rest are not listed; fix these and load the policy again\n");
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	line[strcspn(line, "\n")] = '\0';
	dynbuf_adds(warnings, line);
	dynbuf_adds(warnings, "\n");
}

/* Parses "alg:hex" (ours: lowercase hex). Returns the alg index or -1 with *why set. */
int parse_alg_digest(const json_t *v, uint8_t *out, const char **why)
{
	const struct alg *a;

	if (!json_is_string(v)) {
		*why = "not a string";
		return -1;
	}
	a = policy_digest_parse(json_string_value(v), json_string_length(v), out, why);
	return a ? (int)(a - alg_table) : -1;
}

/*
 * A file digest: "alg:hex", "ima:alg:hex" or "verity:alg:hex". Returns its stored byte (an alg
 * index, DIG_VERITY set for verity) or -1 with *why set.
 */
int parse_file_digest(const json_t *v, uint8_t *out, const char **why)
{
	enum ima_digest_type type;
	const struct alg *a;

	if (!json_is_string(v)) {
		*why = "not a string";
		return -1;
	}
	a = policy_file_digest_parse(json_string_value(v), json_string_length(v), out, &type, why);
	return a ? dk_of(type, (int)(a - alg_table)) : -1;
}

/* Keylime digests carry no algorithm: the hex length implies it (keylime ima.py does so). */
int parse_keylime_digest(const json_t *v, uint8_t *out, const char **why)
{
	const char *s;
	size_t len;

	if (!json_is_string(v)) {
		*why = "not a string";
		return -1;
	}
	s = json_string_value(v);
	len = json_string_length(v);
	for (size_t ai = 0; ai < NALGS; ai++) {
		if (alg_allows(&alg_table[ai], ALG_USE_POLICY) && len == 2 * alg_table[ai].size) {
			if (hex_decode(s, len, out, LIMIT_DIGEST) != (ssize_t)alg_table[ai].size) {
				*why = "not hex";
				return -1;
			}
			return (int)ai;
		}
	}
	*why = "hex length is none of 40, 64, 96, 128";
	return -1;
}

uint16_t policy_json_digest(const json_t *v, bool keylime, uint8_t *out, const char **why)
{
	int ai = keylime ? parse_keylime_digest(v, out, why) : parse_alg_digest(v, out, why);

	return ai < 0 ? 0 : alg_table[ai].id;
}

json_t *policy_json_digest_string(uint16_t alg, const uint8_t *digest)
{
	int ai = alg_index(alg);

	return ai < 0 ? NULL : digest_json(ai, digest);
}

json_t *digest_json(int ai, const uint8_t *d)
{
	char buf[LIMIT_DIGEST_TEXT + 1], name[32];
	const struct alg *a = dk_alg(ai);

	snprintf(name, sizeof(name), "%s%s", (ai & DIG_VERITY) ? "verity:" : "", a->name);
	return json_string(policy_digest_text(name, d, a->size, buf, sizeof(buf)));
}
