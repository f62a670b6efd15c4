/*
 * storeagent: an active agent in a store, for unit tests that commit rounds through the store
 * API (a round is stored only for an agent that is active: store_round_commit()).
 */
#ifndef TESTS_LIB_STOREAGENT_H
#define TESTS_LIB_STOREAGENT_H

#include "verifier/store/store.h"

/*
 * Enrolls and activates agent `id` at time `now` with an EK and AK of its own (derived from
 * the id, so two ids never share a TPM). 0, or what the store answered (-EEXIST: the id was
 * taken already with other keys).
 */
int storeagent_active(struct store *st, const char *id, int64_t now);

#endif
