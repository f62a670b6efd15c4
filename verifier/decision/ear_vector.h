/*
 * ear_vector: what a verdict lets the verifier claim in an EAR's AR4SI trustworthiness vector
 * (proto/ear.h), and its ear.status. Pure; the reasons of SECURITY.md ("Attestation results for
 * relying parties") are the rows of ear_vector_of()'s switch, which names every reason: a new
 * reason does not compile until it says which claim it worsens.
 *
 * Only what the verifier checked is claimed:
 *   hardware 2           the AK was enrolled with an EK certificate that chains to a trusted
 *                        TPM maker's CA, and the TPM proved it holds both (credential
 *                        activation): every agent that has a verdict did
 *   instance-identity 2  the quote is signed by that AK over the verifier's fresh nonce (a
 *                        round that fails this stores no verdict)
 *   configuration 2      the agent's policy judges the boot (a "boot" section): the firmware's
 *                        event log replays to the quoted PCR 0-9 and is allowed; absent otherwise
 *   executables 2        every file IMA measured replays to the quoted PCR 10 and is allowed by
 *                        the policy, and the boot was judged too ("during and after the boot");
 *                        -2 (our non-standard affirming value) when the boot was not judged: the
 *                        files IMA measured after the kernel started, nothing before it
 * file-system, runtime-opaque, storage-opaque and sourced-data are never claimed: IMA measures
 * what runs and is read, not a directory's content; a TPM alone hides no memory nor storage; the
 * machine's data sources are not appraised.
 */
#ifndef VERIFIER_EAR_VECTOR_H
#define VERIFIER_EAR_VECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/ear.h"
#include "verifier/facts/reasons.h"

/* The non-standard affirming value of "executables" when the boot was not judged. */
#define EAR_EXECUTABLES_RUNTIME_ONLY (-2)

/*
 * The vector and status of a stored verdict: trusted or not, its reasons (as the enum), and
 * whether the agent's policy judges the boot. An untrusted verdict is "contraindicated"
 * whatever its vector (AR4SI lets ear.status be worse than the vector's worst claim: the verdict
 * is the verifier's conclusion); a trusted one is the vector's worst tier.
 */
void ear_vector_of(bool trusted, const enum reason *reasons, size_t nreasons, bool boot_judged,
		   struct ear_vector *vec, enum ear_tier *status);

#endif
