/* The reason table of reasons.h, expanded once. */
#include "verifier/facts/reasons.h"

#include <string.h>

static const struct reason_info reasons[REASON_COUNT] = {
#define REASON_ROW(id, wire, kind_, text) [REASON_##id] = { .name = wire, .kind = kind_, .hint = text },
	VERDICT_REASONS(REASON_ROW)
#undef REASON_ROW
};

const struct reason_info *reason_info(enum reason r)
{
	return &reasons[(unsigned)r < REASON_COUNT ? r : REASON_MORE_REASONS];
}

const char *reason_name(enum reason r)
{
	return reason_info(r)->name;
}

bool reason_from_name(const char *name, enum reason *out)
{
	for (unsigned i = 0; name && i < REASON_COUNT; i++) {
		if (!strcmp(reasons[i].name, name)) {
			*out = (enum reason)i;
			return true;
		}
	}
	return false;
}

enum reason reason_of_quote(enum quote_result q)
{
	switch (q) {
	case QUOTE_BAD_SIGNATURE: return REASON_BAD_SIGNATURE;
	case QUOTE_NONCE_MISMATCH: return REASON_NONCE_MISMATCH;
	case QUOTE_BAD_MAGIC: return REASON_BAD_MAGIC;
	case QUOTE_BAD_TYPE: return REASON_BAD_TYPE;
	case QUOTE_PCR_SELECTION_MISMATCH: return REASON_PCR_SELECTION_MISMATCH;
	case QUOTE_PCR_DIGEST_MISMATCH: return REASON_PCR_DIGEST_MISMATCH;
	case QUOTE_MALFORMED_ATTEST: return REASON_MALFORMED_ATTEST;
	case QUOTE_MALFORMED_SIGNATURE: return REASON_MALFORMED_SIGNATURE;
	case QUOTE_UNSUPPORTED_ALGORITHM: return REASON_UNSUPPORTED_ALGORITHM;
	case QUOTE_OK: break;
	}
	return REASON_MALFORMED_ATTEST;
}
