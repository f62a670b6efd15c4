/*
 * libFuzzer target: the verifier's boot check (verifier/decision/boot_check.c) on arbitrary bytes as a
 * firmware event log, under a boot policy with every rule. The quote is the log's own replay
 * (PCR 0-10 of its banks), so a log that parses reaches the policy's judgement; the first byte
 * picks whether the quote is altered instead (a mismatch) and whether a command line is sent.
 * Nothing may crash or leak; every finding has words and a known reason; a log that replays is
 * judged and summarised.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/eventlog.h"
#include "verifier/decision/boot_check.h"
#include "verifier/policy/boot_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char policy_json[] =
	"{\"kernels\": [\"sha256:834c9fac477eecef074f8d88cd0a659fa58c978e308290c549731d854127d4bd\"],"
	" \"boot_applications\": [\"sha1:3dc6dd607ce23923d896826cdc727e6553cf441b\"],"
	" \"firmware\": [\"sha256:96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7\"],"
	" \"secure_boot\": \"on\", \"pk\": [], \"kek\": [], \"db\": [], \"dbx\": [],"
	" \"cmdline\": {\"exact\": [\"console=ttyS0\"], \"required\": [\"ima_policy=tcb\"], \"forbidden\": [\"ima_tpm\"]}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct boot_policy *bp;
	struct boot_input in = {0};
	struct boot_result r;
	struct eventlog log;
	struct eventlog_error err;
	struct pcr_set q;
	bool parsed;

	if (!bp) {
		json_t *v = json_loads(policy_json, 0, NULL);
		char e[128];

		bp = v ? boot_policy_parse(v, e, sizeof(e)) : NULL;
		json_decref(v);
		if (!bp)
			abort();
	}
	if (size < 1)
		return 0;
	in.log = data + 1;
	in.log_len = size - 1;
	in.cmdline = data[0] & 1 ? "console=ttyS0 root=/dev/vda ima_policy=tcb" : NULL;
	memset(&q, 0, sizeof(q));
	parsed = eventlog_parse(in.log, in.log_len, &log, &err) == 0;
	if (parsed) {
		if (eventlog_replay(&log, &q) < 0)
			abort();
		for (unsigned b = 0; b < q.nbanks; b++)
			q.bank[b].mask = 0x7ff;
		if (data[0] & 2 && q.nbanks)
			q.bank[0].value[data[0] >> 4 & 7][0] ^= 1;
		eventlog_release(&log);
	}
	if (boot_check(bp, NULL, &in, &q, 1, &r) != 0)
		return 0; /* out of memory */
	for (size_t i = 0; i < r.nfindings; i++)
		if (!r.findings[i].detail[0] || (unsigned)r.findings[i].reason >= REASON_COUNT ||
		    !r.findings[i].category)
			abort();
	if (parsed && !(data[0] & 2) && (!r.judged || !r.summary))
		abort();
	boot_result_release(&r);
	return 0;
}
