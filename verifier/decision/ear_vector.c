/* The AR4SI vector of a verdict (ear_vector.h); values from draft-ietf-rats-ar4si 2.3.4. */
#include "verifier/decision/ear_vector.h"

#include <string.h>

/* AR4SI values used below, by claim. */
#define AR_AFFIRM 2            /* each claim's "recognized and approved" */
#define AR_UNKNOWN_ELEMENTS 1  /* evidence the verifier cannot evaluate */
#define AR_CRYPTO_FAILED 99    /* cryptographic validation of the evidence failed */
#define INSTANCE_UNTRUSTWORTHY 96 /* its key indicates a device that is not trustworthy */
#define CONFIG_UNAVAILABLE 36  /* elements relevant to security unavailable to the verifier */
#define CONFIG_UNSUPPORTABLE 96
#define EXEC_CANNOT_VOUCH 32   /* recognized, but the verifier cannot vouch for a subset */
#define EXEC_UNRECOGNIZED 33   /* runtime memory includes objects not recognized */
#define EXEC_CONTRAINDICATED 96

/* What one reason of an untrusted verdict says, as claims made worse. */
static void worsen_by(struct ear_vector *v, enum reason r)
{
	switch (r) {
	/* The quote itself: such rounds store no verdict, but a reason has a row here all the same. */
	case REASON_BAD_SIGNATURE:
	case REASON_MALFORMED_SIGNATURE:
	case REASON_UNSUPPORTED_ALGORITHM:
	case REASON_NONCE_MISMATCH:
	case REASON_BAD_MAGIC:
	case REASON_BAD_TYPE:
	case REASON_MALFORMED_ATTEST:
		ear_vector_worsen(v, EAR_INSTANCE_IDENTITY, AR_CRYPTO_FAILED);
		break;
	/* PCR values that do not match what was signed: nothing read from them holds. */
	case REASON_PCR_SELECTION_MISMATCH:
	case REASON_PCR_DIGEST_MISMATCH:
		ear_vector_worsen(v, EAR_CONFIGURATION, AR_CRYPTO_FAILED);
		ear_vector_worsen(v, EAR_EXECUTABLES, AR_CRYPTO_FAILED);
		break;
	/* The TPM's clock went back: another TPM behind this AK's name, or a replay. */
	case REASON_RESET_COUNT_ROLLBACK:
	case REASON_RESTART_COUNT_ROLLBACK:
	case REASON_CLOCK_ROLLBACK:
		ear_vector_worsen(v, EAR_INSTANCE_IDENTITY, INSTANCE_UNTRUSTWORTHY);
		break;
	/* Not judged this round: the list starts over or resumes elsewhere. */
	case REASON_REBOOT:
	case REASON_LOG_OFFSET_MISMATCH:
	case REASON_LOG_RECORDS_DELETED:
	case REASON_LOG_INCOMPLETE:
	case REASON_UNJUDGEABLE_ENTRY:
		ear_vector_worsen(v, EAR_EXECUTABLES, AR_UNKNOWN_ELEMENTS);
		break;
	/* The list is not the one the TPM's PCR 10 holds, or is not anchored in the TPM at all. */
	case REASON_LOG_CORRUPT:
	case REASON_PCR_MISMATCH:
	case REASON_BOOT_AGGREGATE_MISSING:
	case REASON_TPM_BYPASS:
	case REASON_IMA_PCR_NOT_EXTENDED:
		ear_vector_worsen(v, EAR_EXECUTABLES, AR_CRYPTO_FAILED);
		break;
	case REASON_BOOT_AGGREGATE_UNVERIFIED:
	case REASON_BOOT_LOG_MISSING:
	case REASON_BOOT_UNVERIFIABLE:
		ear_vector_worsen(v, EAR_CONFIGURATION, CONFIG_UNAVAILABLE);
		break;
	case REASON_BOOT_AGGREGATE_MISMATCH:
	case REASON_BOOT_LOG_MISMATCH:
		ear_vector_worsen(v, EAR_CONFIGURATION, AR_CRYPTO_FAILED);
		break;
	case REASON_BOOT_LOG_CORRUPT:
		ear_vector_worsen(v, EAR_CONFIGURATION, AR_UNKNOWN_ELEMENTS);
		break;
	/* A boot the policy does not allow: an operator's "no". */
	case REASON_BOOT_AGGREGATE_NOT_ALLOWED:
	case REASON_BOOT_NOT_IN_POLICY:
	case REASON_SECURE_BOOT_MISMATCH:
		ear_vector_worsen(v, EAR_CONFIGURATION, CONFIG_UNSUPPORTABLE);
		break;
	/* A file written while it ran (ToMToU): known, but what ran cannot be vouched for. */
	case REASON_VIOLATION_ENTRY:
		ear_vector_worsen(v, EAR_EXECUTABLES, EXEC_CANNOT_VOUCH);
		break;
	case REASON_NOT_IN_ALLOWLIST:
	case REASON_DIGEST_MISMATCH:
	case REASON_UNKNOWN_SIGNING_KEY:
	case REASON_MISSING_FILE_SIGNATURE:
	case REASON_KEYRING_KEY_NOT_ALLOWED:
	case REASON_OPEN_VIOLATIONS:
	case REASON_VIOLATIONS_UNRECORDED:
		ear_vector_worsen(v, EAR_EXECUTABLES, EXEC_UNRECOGNIZED);
		break;
	/* A signature that does not match its file: modified after signing. */
	case REASON_BAD_FILE_SIGNATURE:
		ear_vector_worsen(v, EAR_EXECUTABLES, EXEC_CONTRAINDICATED);
		break;
	/* Says only that the list of reasons was cut; the others carry the claims. */
	case REASON_MORE_REASONS:
	case REASON_COUNT:
		break;
	}
}

void ear_vector_of(bool trusted, const enum reason *reasons, size_t nreasons, bool boot_judged,
		   struct ear_vector *vec, enum ear_tier *status)
{
	memset(vec, 0, sizeof(*vec));
	/* Every stored verdict is of an activated agent whose quote verified: see the header. */
	vec->v[EAR_HARDWARE] = AR_AFFIRM;
	vec->v[EAR_INSTANCE_IDENTITY] = AR_AFFIRM;
	vec->v[EAR_EXECUTABLES] = boot_judged ? AR_AFFIRM : EAR_EXECUTABLES_RUNTIME_ONLY;
	if (boot_judged)
		vec->v[EAR_CONFIGURATION] = AR_AFFIRM;
	for (size_t i = 0; i < nreasons; i++)
		worsen_by(vec, reasons[i]);
	*status = trusted ? ear_vector_tier(vec) : EAR_TIER_CONTRAINDICATED;
}
