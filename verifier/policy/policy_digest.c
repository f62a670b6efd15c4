/*
 * policy_digest: "alg:hex" parsed and written, algorithm names (policy_digest.h). Needs no other
 * part of the policy engine.
 */
#include "verifier/policy/policy_digest.h"

#include <stdio.h>
#include <string.h>

#include "proto/encoding.h"
#include "verifier/policy/policy_internal.h"

uint16_t policy_alg_from_name(const char *name, size_t len)
{
	const struct alg *a = alg_by_name_len(name, len);

	return alg_allows(a, ALG_USE_POLICY) ? a->id : 0;
}

const char *policy_alg_name(uint16_t alg)
{
	int i = alg_index(alg);

	return i < 0 ? NULL : alg_table[i].name;
}

size_t policy_alg_digest_size(uint16_t alg)
{
	int i = alg_index(alg);

	return i < 0 ? 0 : alg_table[i].size;
}

const struct alg *policy_digest_parse(const char *s, size_t len, uint8_t *out, const char **why)
{
	const char *colon = memchr(s, ':', len), *hex;
	const struct alg *a;
	size_t hlen;

	if (!colon) {
		*why = "not \"alg:hex\"";
		return NULL;
	}
	a = alg_by_name_len(s, (size_t)(colon - s));
	if (!alg_allows(a, ALG_USE_POLICY)) {
		*why = "unknown algorithm (sha1, sha256, sha384, sha512)";
		return NULL;
	}
	hex = colon + 1;
	hlen = len - (size_t)(hex - s);
	for (size_t i = 0; i < hlen; i++) {
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f'))) {
			*why = "not lowercase hex";
			return NULL;
		}
	}
	if (hlen != 2 * a->size) {
		*why = "digest length does not match the algorithm";
		return NULL;
	}
	hex_decode(hex, hlen, out, LIMIT_DIGEST);
	return a;
}

const struct alg *policy_file_digest_parse(const char *s, size_t len, uint8_t *out,
					   enum ima_digest_type *type, const char **why)
{
	*type = IMA_DIGEST_IMA;
	if (len > 4 && memcmp(s, "ima:", 4) == 0) {
		s += 4, len -= 4;
	} else if (len > 7 && memcmp(s, "verity:", 7) == 0) {
		*type = IMA_DIGEST_VERITY;
		s += 7, len -= 7;
	}
	return policy_digest_parse(s, len, out, why);
}

char *policy_digest_text(const char *alg_name, const uint8_t *digest, size_t len, char *out,
			 size_t cap)
{
	char hex[2 * LIMIT_DIGEST + 1] = "";

	if (digest && len <= LIMIT_DIGEST)
		hex_encode(digest, len, hex);
	snprintf(out, cap, "%s:%s", alg_name, hex);
	return out;
}
