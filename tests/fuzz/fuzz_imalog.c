/*
 * libFuzzer target: parse arbitrary bytes as an IMA binary list and replay every entry it
 * accepts, then resume from the middle and check the resumed replay equals the full one.
 * Every entry is also framed on its own by imalog_record() (attestd's reader): it must frame
 * each accepted entry to the same length, and refuse or ask for more where the cursor failed
 * in the framing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/imalog.h"
#include "proto/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct imalog *log;
	static struct replay_ctx *rc;
	struct replay_state full, part;
	struct ima_entry e;
	struct ima_error err;
	struct ima_record rec;
	const char *why = NULL;
	size_t mid = 0;
	uint64_t mid_index = 0;
	int r;

	if (!log)
		log = imalog_new();
	if (!rc)
		rc = replay_ctx_new(REPLAY_ALL_BANKS);
	if (!log || !rc)
		abort();
	replay_state_init(&full, REPLAY_ALL_BANKS);
	imalog_reset(log, data, size, 0);
	while ((r = imalog_next(log, &e, &err)) == 1) {
		if (e.end <= e.offset || e.end > size)
			abort();
		if (imalog_record(data + e.offset, size - e.offset, &rec, &why) != 1 ||
		    rec.len != e.end - e.offset)
			abort();
		if (e.path && memchr(e.path, 0, e.path_len))
			abort();
		replay_extend(rc, &full, &e);
		if (e.index == full.entries / 2) {
			mid = e.end;
			mid_index = e.index + 1;
			part = full;
		}
	}
	if (r < 0 && (!err.msg || err.offset > size))
		abort();
	if (r < 0) {
		/* A framing error of the cursor is one of imalog_record(), with the same message. */
		int f = imalog_record(data + err.offset, size - err.offset, &rec, &why);

		if (f <= 0 && (f == 0 ? -EBADMSG : f) != r)
			abort();
		if (f <= 0 && strcmp(why, err.msg) != 0)
			abort();
	}
	if (mid) {
		/* Resume after the middle entry over the good prefix only. */
		size_t good = imalog_offset(log);

		imalog_reset(log, data + mid, good - mid, mid_index);
		while (imalog_next(log, &e, &err) == 1)
			replay_extend(rc, &part, &e);
		if (memcmp(&part, &full, sizeof(full)) != 0)
			abort();
	}
	return 0;
}
