/*
 * verdict_evidence: the evidence a verdict was reached from, exported as one self-contained
 * record (verifier/decision/evidence_record.h, the exported form) that `attestctl
 * verify-evidence` checks offline. Which verdicts keep theirs is --evidence-keep (round.c);
 * how long, the verdict's retention (store.h, "Evidence").
 */
#ifndef VERIFIER_VERDICT_EVIDENCE_H
#define VERIFIER_VERDICT_EVIDENCE_H

#include <stdint.h>

#include "verifier/service/app.h"

enum verdict_evidence_status {
	VERDICT_EVIDENCE_OK = 0,
	VERDICT_EVIDENCE_UNKNOWN,      /* no evidence is kept for that verdict */
	VERDICT_EVIDENCE_STORE_FAILED,
	VERDICT_EVIDENCE_INTERNAL,     /* memory, or a stored record that does not parse */
};

/*
 * The exported record of verdict `verdict_id` in *json (caller frees). A policy version or
 * event log whose kept copy is missing is left out (logged): the record then says so when it
 * is checked, rather than not being handed out at all.
 */
enum verdict_evidence_status verdict_evidence_export(struct app *app, int64_t verdict_id,
						     char **json);

#endif
