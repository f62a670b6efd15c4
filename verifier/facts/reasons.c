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
