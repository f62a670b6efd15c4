/*
 * Extends one PCR from user space, the way an attacker with root in the guest could:
 * end-to-end tests use it to move PCR 10 away from the IMA list (the verifier must say
 * pcr_mismatch) or a boot PCR away from the boot_aggregate (boot_aggregate_mismatch).
 *
 *   tpm_pcr_extend [--tcti TCTI] PCR [TEXT]
 *       extends PCR (0-23) in the sha1 and sha256 banks with SHA-1(TEXT) and SHA-256(TEXT)
 *       (TEXT defaults to "tpm_pcr_extend"); TCTI defaults to device:/dev/tpmrm0.
 *       Prints "extended pcr N".
 *   tpm_pcr_extend [--tcti TCTI] --script FILE
 *       extends PCR 10 with each line of FILE in order, `10:sha1=HEX,sha256=HEX` (the lines of
 *       tools/imagen --tpm2-extend-script), over one connection: a TPM follows a list of a
 *       million entries in minutes, where a tpm2_pcrextend per entry would take hours.
 *       Prints "extended pcr 10 N times".
 * Exit 0 on success, 1 on failure, 2 on bad usage.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>
#include <sys/types.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include "proto/encoding.h"

static int usage(void)
{
	fprintf(stderr, "usage: tpm_pcr_extend [--tcti TCTI] PCR [TEXT]\n"
			"       tpm_pcr_extend [--tcti TCTI] --script FILE\n");
	return 2;
}

/* hex of exactly 2*n digits into out; false otherwise. */
static bool unhex(const char *s, size_t slen, uint8_t *out, size_t n)
{
	return slen == 2 * n && hex_decode(s, slen, out, n) == (ssize_t)n;
}

/* One script line, `10:sha1=HEX,sha256=HEX` (a newline at most after it), into *v. */
static bool parse_script_line(const char *line, TPML_DIGEST_VALUES *v)
{
	const char *sha1 = "10:sha1=", *sha256 = ",sha256=";
	size_t len = strcspn(line, "\n");

	if (len != strlen(sha1) + 40 + strlen(sha256) + 64 || strncmp(line, sha1, strlen(sha1)) ||
	    strncmp(line + strlen(sha1) + 40, sha256, strlen(sha256)))
		return false;
	memset(v, 0, sizeof(*v));
	v->count = 2;
	v->digests[0].hashAlg = TPM2_ALG_SHA1;
	v->digests[1].hashAlg = TPM2_ALG_SHA256;
	return unhex(line + strlen(sha1), 40, v->digests[0].digest.sha1, 20) &&
	       unhex(line + strlen(sha1) + 40 + strlen(sha256), 64, v->digests[1].digest.sha256, 32);
}

static int extend_script(ESYS_CONTEXT *ctx, const char *path)
{
	char line[256];
	unsigned long n = 0;
	FILE *f = fopen(path, "r");
	int ret = 0;

	if (!f) {
		fprintf(stderr, "tpm_pcr_extend: cannot open \"%s\": %s\n", path, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		TPML_DIGEST_VALUES v;
		TSS2_RC rc;

		if (!parse_script_line(line, &v)) {
			fprintf(stderr, "tpm_pcr_extend: %s:%lu: not `10:sha1=HEX,sha256=HEX`\n", path,
				n + 1);
			ret = 1;
			break;
		}
		rc = Esys_PCR_Extend(ctx, ESYS_TR_PCR10, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
				     &v);
		if (rc != TSS2_RC_SUCCESS) {
			fprintf(stderr, "tpm_pcr_extend: extend %lu failed: %s\n", n + 1,
				Tss2_RC_Decode(rc));
			ret = 1;
			break;
		}
		n++;
	}
	if (ferror(f))
		ret = 1;
	fclose(f);
	if (!ret)
		printf("extended pcr 10 %lu times\n", n);
	return ret;
}

int main(int argc, char **argv)
{
	const char *tcti_conf = "device:/dev/tpmrm0";
	const char *text = "tpm_pcr_extend";
	TSS2_TCTI_CONTEXT *tcti = NULL;
	ESYS_CONTEXT *ctx = NULL;
	TPML_DIGEST_VALUES values = { 0 };
	unsigned long pcr = 10;
	char *end;
	const char *script = NULL;
	TSS2_RC rc;
	int ret = 1, i = 1;

	if (argc > 2 && !strcmp(argv[1], "--tcti")) {
		tcti_conf = argv[2];
		i = 3;
	}
	if (argc - i == 2 && !strcmp(argv[i], "--script")) {
		script = argv[i + 1];
		goto open;
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

open:
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
	if (script) {
		ret = extend_script(ctx, script);
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
