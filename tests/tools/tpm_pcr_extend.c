/*
 * Extends one PCR from user space, the way an attacker with root in the guest could:
 * end-to-end tests use it to move PCR 10 away from the IMA list (the verifier must say
 * pcr_mismatch) or a boot PCR away from the boot_aggregate (boot_aggregate_mismatch).
 *
 *   tpm_pcr_extend [--tcti TCTI] PCR [TEXT]
 *       extends PCR (0-23) in the sha1 and sha256 banks with SHA-1(TEXT) and SHA-256(TEXT)
 *       (TEXT defaults to "tpm_pcr_extend"); TCTI defaults to device:/dev/tpmrm0.
 *       Prints "extended pcr N".
 * Exit 0 on success, 1 on failure, 2 on bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

static int usage(void)
{
	fprintf(stderr, "usage: tpm_pcr_extend [--tcti TCTI] PCR [TEXT]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *tcti_conf = "device:/dev/tpmrm0";
	const char *text = "tpm_pcr_extend";
	TSS2_TCTI_CONTEXT *tcti = NULL;
	ESYS_CONTEXT *ctx = NULL;
	TPML_DIGEST_VALUES values = { 0 };
	unsigned long pcr;
	char *end;
	TSS2_RC rc;
	int ret = 1, i = 1;

	if (argc > 2 && !strcmp(argv[1], "--tcti")) {
		tcti_conf = argv[2];
		i = 3;
	}
	if (argc - i < 1 || argc - i > 2)
		return usage();
	errno = 0;
	pcr = strtoul(argv[i], &end, 10);
	if (errno || end == argv[i] || *end || pcr > 23)
		return usage();
	if (argc - i == 2)
		text = argv[i + 1];

	values.count = 2;
	values.digests[0].hashAlg = TPM2_ALG_SHA1;
	SHA1((const unsigned char *)text, strlen(text), values.digests[0].digest.sha1);
	values.digests[1].hashAlg = TPM2_ALG_SHA256;
	SHA256((const unsigned char *)text, strlen(text), values.digests[1].digest.sha256);

	rc = Tss2_TctiLdr_Initialize(tcti_conf, &tcti);
	if (rc != TSS2_RC_SUCCESS) {
		fprintf(stderr, "tpm_pcr_extend: cannot open tcti \"%s\": %s\n", tcti_conf,
			Tss2_RC_Decode(rc));
		return 1;
	}
	rc = Esys_Initialize(&ctx, tcti, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		fprintf(stderr, "tpm_pcr_extend: esys init failed: %s\n", Tss2_RC_Decode(rc));
		goto out;
	}
	rc = Esys_PCR_Extend(ctx, ESYS_TR_PCR0 + (ESYS_TR)pcr, ESYS_TR_PASSWORD, ESYS_TR_NONE,
			     ESYS_TR_NONE, &values);
	if (rc != TSS2_RC_SUCCESS) {
		fprintf(stderr, "tpm_pcr_extend: extend of pcr %lu failed: %s\n", pcr,
			Tss2_RC_Decode(rc));
		goto out;
	}
	printf("extended pcr %lu\n", pcr);
	ret = 0;
out:
	Esys_Finalize(&ctx);
	Tss2_TctiLdr_Finalize(&tcti);
	return ret;
}
