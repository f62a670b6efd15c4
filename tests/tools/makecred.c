/*
 * makecred: proto/credential.c driven from files, for the tpm2-tools cross-check.
 *
 *   makecred EK.pub AK.pub SECRET OUT   MakeCredential for the AK's name under the EK (both
 *                                       TPM2B_PUBLIC), written in tpm2-tools' credential file
 *                                       format for `tpm2_activatecredential -i OUT`
 *   makecred --parse FILE               reads that format (e.g. from tpm2_makecredential),
 *                                       checks its structures, prints `blob N` and `secret N`
 *
 * File format (tpm2-tools tools/tpm2_makecredential.c write_cred_and_secret, lib/files.c):
 * u32be 0xBADCC0DE | u32be 1 | TPM2B_ID_OBJECT | TPM2B_ENCRYPTED_SECRET (sizes big-endian).
 * Exit 0 ok, 1 rejected input, 2 usage or I/O.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <tss2/tss2_mu.h>

#include "proto/credential.h"
#include "proto/tpmkey.h"

#define MAX_FILE 4096

static long read_small(const char *path, uint8_t *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, cap, f);
	/* one byte more than cap would mean the file is too big */
	if (ferror(f) || (n == cap && fgetc(f) != EOF))
		n = (size_t)-1;
	fclose(f);
	return n == (size_t)-1 ? -1 : (long)n;
}

static int parse(const char *path)
{
	uint8_t buf[MAX_FILE];
	long n = read_small(path, buf, sizeof(buf));
	TPM2B_ID_OBJECT id;
	TPM2B_ENCRYPTED_SECRET es;
	size_t off = 8;

	if (n < 0) {
		fprintf(stderr, "makecred: cannot read %s\n", path);
		return 2;
	}
	if (n < 8 || buf[0] != 0xba || buf[1] != 0xdc || buf[2] != 0xc0 || buf[3] != 0xde ||
	    buf[4] || buf[5] || buf[6] || buf[7] != 1 ||
	    Tss2_MU_TPM2B_ID_OBJECT_Unmarshal(buf, (size_t)n, &off, &id) != TSS2_RC_SUCCESS ||
	    Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(buf, (size_t)n, &off, &es) != TSS2_RC_SUCCESS ||
	    off != (size_t)n) {
		fprintf(stderr, "makecred: %s is not a tpm2-tools credential file\n", path);
		return 1;
	}
	/* credentialBlob = TPM2B_DIGEST integrityHMAC || encIdentity */
	if (id.size < 2 || (size_t)((id.credential[0] << 8 | id.credential[1]) + 2) >= id.size) {
		fprintf(stderr, "makecred: credential blob has no room for its HMAC\n");
		return 1;
	}
	printf("blob %u hmac %u\nsecret %u\n", id.size, id.credential[0] << 8 | id.credential[1],
	       es.size);
	return 0;
}

int main(int argc, char **argv)
{
	uint8_t ekb[MAX_FILE], akb[MAX_FILE], sec[128], name[LIMIT_TPM_NAME];
	TPMT_PUBLIC ek, ak;
	struct credential c;
	size_t name_len = 0;
	long ekn, akn, sn;
	FILE *out;
	int ret = 2;

	if (argc == 3 && !strcmp(argv[1], "--parse"))
		return parse(argv[2]);
	if (argc != 5) {
		fprintf(stderr, "usage: makecred EK.pub AK.pub SECRET OUT | makecred --parse FILE\n");
		return 2;
	}
	ekn = read_small(argv[1], ekb, sizeof(ekb));
	akn = read_small(argv[2], akb, sizeof(akb));
	sn = read_small(argv[3], sec, sizeof(sec));
	if (ekn < 0 || akn < 0 || sn < 0) {
		fprintf(stderr, "makecred: cannot read input\n");
		return 2;
	}
	if (tpmkey_parse_public(ekb, (size_t)ekn, &ek) || tpmkey_parse_public(akb, (size_t)akn, &ak) ||
	    tpmkey_name(&ak, name, &name_len)) {
		fprintf(stderr, "makecred: EK or AK is not a TPM2B_PUBLIC\n");
		return 1;
	}
	if (tpmkey_check_ek(&ek) != TPMKEY_OK) {
		fprintf(stderr, "makecred: not a standard EK: %s\n",
			tpmkey_check_str(tpmkey_check_ek(&ek)));
		return 1;
	}
	if (credential_make(&ek, name, name_len, sec, (size_t)sn, &c) != 0) {
		fprintf(stderr, "makecred: MakeCredential failed\n");
		ret = 1;
		goto cleanup;
	}
	out = fopen(argv[4], "wb");
	if (!out)
		goto cleanup;
	static const uint8_t hdr[8] = {0xba, 0xdc, 0xc0, 0xde, 0, 0, 0, 1};
	if (fwrite(hdr, 1, 8, out) == 8 && fwrite(c.blob, 1, c.blob_len, out) == c.blob_len &&
	    fwrite(c.encrypted_secret, 1, c.encrypted_secret_len, out) == c.encrypted_secret_len)
		ret = 0;
	if (fclose(out) != 0)
		ret = 2;
cleanup:
	OPENSSL_cleanse(sec, sizeof(sec));
	OPENSSL_cleanse(&c, sizeof(c));
	return ret;
}
