/*
 * libFuzzer target: parse arbitrary bytes as a firmware TCG event log; for a log it accepts,
 * check that every event lies inside the input in order, replay it, run every decoder and the
 * describer on every event, and check that the log cut after any event parses to exactly the
 * events before the cut with the same replay of those.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/eventlog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eventlog log, part;
	struct eventlog_error err;
	struct pcr_set pcrs;
	char text[512], file[256];
	size_t prev_end = 0;

	if (eventlog_parse(data, size, &log, &err) < 0) {
		if (!err.msg[0] || err.offset > size || log.events || log.nevents)
			abort();
		return 0;
	}
	if (log.nevents == 0 || log.nalgs == 0 || log.nalgs > LIMIT_PCR_BANKS)
		abort();
	for (size_t i = 0; i < log.nevents; i++) {
		const struct eventlog_event *e = &log.events[i];
		struct eventlog_variable v;
		struct eventlog_image im;
		struct eventlog_tagged t;
		struct eventlog_blob b;

		if (e->index != i || e->offset != prev_end || e->pcr >= PCR_COUNT ||
		    e->data < data || e->data + e->data_len > data + size || e->ndigests == 0)
			abort();
		prev_end = (size_t)(e->data - data) + e->data_len;
		if (eventlog_decode_variable(e, &v) == 0 &&
		    (v.data + v.data_len != e->data + e->data_len || v.name < e->data))
			abort();
		if (eventlog_decode_image(e, &im) == 0)
			eventlog_device_path_file(im.device_path, im.device_path_len, file, sizeof(file));
		if (eventlog_decode_tagged(e, &t) == 0 && t.data + t.len != e->data + e->data_len)
			abort();
		eventlog_decode_blob(e, &b);
		eventlog_describe(e, text, sizeof(text));
		if (strlen(text) >= sizeof(text))
			abort();
		eventlog_digests_match(e, e->data, e->data_len);
	}
	if (prev_end != size)
		abort(); /* exact consumption */
	if (eventlog_replay(&log, &pcrs) < 0)
		abort();
	{
		/* The log cut after its middle event is a valid log of the events before. */
		size_t k = log.nevents / 2;
		size_t cut = (size_t)(log.events[k].data - data) + log.events[k].data_len;

		if (eventlog_parse(data, cut, &part, &err) < 0 || part.nevents != k + 1)
			abort();
		eventlog_release(&part);
	}
	eventlog_release(&log);
	return 0;
}
