/*
 * libFuzzer target: an evidence record as `attestctl verify-evidence` reads it (a file an auditor
 * was handed: verifier/decision/evidence_record.h). Nothing may crash or leak: a record that
 * parses is checked again (evidence_record_check(): the AK, the policies, the event log's
 * digest, attest_evaluate()), and its verdict is one the decision could have reached (every
 * reason a known code). The seed is an exported record of an untrusted round.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/decision/evidence_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evidence_record r;
	struct evidence_check c;
	const char *why = NULL;

	if (evidence_record_parse((const char *)data, size, &r, &why)) {
		if (!why)
			abort(); /* a refusal always names what */
		return 0;
	}
	if (evidence_record_check(&r, &c) == 0)
		for (unsigned i = 0; i < c.verdict.nreasons; i++)
			if (!code_valid(c.verdict.reason[i].code))
				abort();
	evidence_record_release(&r);
	return 0;
}
