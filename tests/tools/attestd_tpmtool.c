/*
 * Drives attestd/tpm.c from the shell so tests can check it against tpm2-tools.
 *
 *   attestd_tpmtool TCTI enroll STATEDIR OUTDIR [rsa|ecc]
 *       loads or creates the EK and AK; writes OUTDIR/ek.pub, ek.crt (DER), ak.pub
 *       (TPM2B_PUBLIC) and ak.name (hex); prints "created" or "loaded".
 *   attestd_tpmtool TCTI activate STATEDIR CREDFILE
 *       ActivateCredential of a tpm2_makecredential output file; prints the secret in hex.
 *   attestd_tpmtool TCTI quote STATEDIR NONCEHEX SPEC PREFIX
 *       SPEC like "sha1:0,10+sha256:10"; writes PREFIX.msg (TPMS_ATTEST), PREFIX.sig
 *       (TPMT_SIGNATURE) and PREFIX.pcrs (tpm2-tools' serialized PCR file); prints one
 *       "ALG:N=HEX" line per PCR.
 * Exit 0 on success, 1 on failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_tpm2_types.h>

#include "attestd/tpm.h"
#include "proto/encoding.h"
#include "proto/pcrs.h"

static int write_out(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s%s", dir, name[0] == '.' ? "" : "/", name);
	f = fopen(path, "we");
	if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f)) {
		fprintf(stderr, "cannot write %s\n", path);
		return -EIO;
	}
	return 0;
}

static int cmd_enroll(struct tpm *t, const char *state, const char *out, const char *alg)
{
	uint8_t *ekpub = NULL, *cert = NULL, *akpub = NULL;
	size_t ekpub_len, cert_len, akpub_len, name_len;
	uint8_t name[LIMIT_TPM_NAME];
	char hex[2 * LIMIT_TPM_NAME + 2];
	bool created;
	int ret;

	ret = tpm_ak_load_or_create(t, state, alg && !strcmp(alg, "ecc") ? ATTESTD_AK_ECC
									 : ATTESTD_AK_RSA,
				    &created);
	if (ret < 0)
		goto out;
	if ((ret = tpm_ek_public(t, &ekpub, &ekpub_len)) < 0 ||
	    (ret = tpm_ek_cert(t, &cert, &cert_len)) < 0 ||
	    (ret = tpm_ak_public(t, &akpub, &akpub_len)) < 0 ||
	    (ret = tpm_ak_name(t, name, &name_len)) < 0)
		goto out;
	hex_encode(name, name_len, hex);
	if ((ret = write_out(out, "ek.pub", ekpub, ekpub_len)) < 0 ||
	    (ret = write_out(out, "ek.crt", cert, cert_len)) < 0 ||
	    (ret = write_out(out, "ak.pub", akpub, akpub_len)) < 0 ||
	    (ret = write_out(out, "ak.name", hex, strlen(hex))) < 0)
		goto out;
	printf("%s\n", created ? "created" : "loaded");
out:
	free(ekpub);
	free(cert);
	free(akpub);
	return ret;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int cmd_activate(struct tpm *t, const char *state, const char *credfile)
{
	uint8_t file[4096], blob[2048], secret[1024], out[64];
	char hex[2 * sizeof(out) + 1];
	size_t len, blen, slen, out_len;
	bool created;
	FILE *f = fopen(credfile, "re");
	int ret;

	if (!f)
		return -errno;
	len = fread(file, 1, sizeof(file), f);
	fclose(f);
	/* u32be 0xBADCC0DE | u32be 1 | u16 blobLen | blob | u16 secretLen | secret */
	if (len < 12 || be32(file) != 0xBADCC0DEu || be32(file + 4) != 1)
		return -EINVAL;
	blen = (size_t)file[8] << 8 | file[9];
	if (10 + blen + 2 > len || blen + 2 > sizeof(blob))
		return -EINVAL;
	slen = (size_t)file[10 + blen] << 8 | file[11 + blen];
	if (12 + blen + slen != len || slen + 2 > sizeof(secret))
		return -EINVAL;
	/* The protocol carries the TPM2Bs with their size: rebuild that form. */
	memcpy(blob, file + 8, 2 + blen);
	memcpy(secret, file + 10 + blen, 2 + slen);

	ret = tpm_ak_load_or_create(t, state, ATTESTD_AK_RSA, &created);
	if (ret < 0)
		return ret;
	if (created) {
		fprintf(stderr, "no saved ak in %s\n", state);
		return -ENOENT;
	}
	ret = tpm_activate_credential(t, blob, blen + 2, secret, slen + 2, out, sizeof(out),
				      &out_len);
	if (ret < 0)
		return ret;
	hex_encode(out, out_len, hex);
	printf("%s\n", hex);
	return 0;
}

/* "sha1:0,10+sha256:10" */
static int parse_spec(const char *spec, struct pcr_set *set)
{
	char buf[256], *save = NULL, *part;

	memset(set, 0, sizeof(*set));
	snprintf(buf, sizeof(buf), "%s", spec);
	for (part = strtok_r(buf, "+", &save); part; part = strtok_r(NULL, "+", &save)) {
		char *colon = strchr(part, ':'), *save2 = NULL, *n;
		struct pcr_bank *b;

		if (!colon)
			return -EINVAL;
		*colon = '\0';
		b = pcr_set_add_bank(set, pcr_alg_from_name(part));
		if (!b)
			return -EINVAL;
		for (n = strtok_r(colon + 1, ",", &save2); n; n = strtok_r(NULL, ",", &save2)) {
			long v = strtol(n, NULL, 10);

			if (v < 0 || v >= (long)PCR_COUNT)
				return -EINVAL;
			b->mask |= 1u << v;
		}
	}
	return set->nbanks ? 0 : -EINVAL;
}

/* tpm2-tools lib/pcr.c pcr_fwrite_serialized: host-order structs. */
static int write_pcr_file(const char *prefix, const struct pcr_set *set)
{
	TPML_PCR_SELECTION sel;
	TPML_DIGEST d[(PCR_COUNT * LIMIT_PCR_BANKS + 7) / 8];
	uint32_t nd = 0;
	char path[4096];
	FILE *f;

	memset(&sel, 0, sizeof(sel));
	memset(d, 0, sizeof(d));
	for (unsigned i = 0; i < set->nbanks; i++) {
		const struct pcr_bank *b = &set->bank[i];
		TPMS_PCR_SELECTION *s = &sel.pcrSelections[sel.count++];
		size_t dsz = pcr_alg_digest_size(b->alg);

		s->hash = b->alg;
		s->sizeofSelect = 3;
		for (unsigned p = 0; p < PCR_COUNT; p++) {
			TPML_DIGEST *cur;

			if (!(b->mask & (1u << p)))
				continue;
			s->pcrSelect[p / 8] |= (uint8_t)(1u << (p % 8));
			if (nd == 0 || d[nd - 1].count == 8)
				nd++;
			cur = &d[nd - 1];
			cur->digests[cur->count].size = (uint16_t)dsz;
			memcpy(cur->digests[cur->count].buffer, b->value[p], dsz);
			cur->count++;
		}
	}
	snprintf(path, sizeof(path), "%s.pcrs", prefix);
	f = fopen(path, "we");
	if (!f || fwrite(&sel, sizeof(sel), 1, f) != 1 || fwrite(&nd, sizeof(nd), 1, f) != 1 ||
	    fwrite(d, sizeof(d[0]), nd, f) != nd || fclose(f))
		return -EIO;
	return 0;
}

static int cmd_quote(struct tpm *t, const char *state, const char *nonce_hex, const char *spec,
		     const char *prefix)
{
	uint8_t nonce[LIMIT_NONCE_BYTES], *attest = NULL, *sig = NULL;
	size_t attest_len, sig_len;
	ssize_t nonce_len;
	struct pcr_set set;
	char hex[2 * LIMIT_DIGEST + 1];
	bool created;
	int ret;

	nonce_len = hex_decode(nonce_hex, strlen(nonce_hex), nonce, sizeof(nonce));
	if (nonce_len < 0 || parse_spec(spec, &set) < 0)
		return -EINVAL;
	ret = tpm_ak_load_or_create(t, state, ATTESTD_AK_RSA, &created);
	if (ret < 0)
		return ret;
	ret = tpm_quote(t, nonce, (size_t)nonce_len, &set, &attest, &attest_len, &sig, &sig_len);
	if (ret < 0)
		return ret;
	if ((ret = write_out(prefix, ".msg", attest, attest_len)) < 0 ||
	    (ret = write_out(prefix, ".sig", sig, sig_len)) < 0 ||
	    (ret = write_pcr_file(prefix, &set)) < 0)
		goto out;
	for (unsigned i = 0; i < set.nbanks; i++)
		for (unsigned p = 0; p < PCR_COUNT; p++)
			if (set.bank[i].mask & (1u << p)) {
				hex_encode(set.bank[i].value[p],
					   pcr_alg_digest_size(set.bank[i].alg), hex);
				printf("%s:%u=%s\n", pcr_alg_name(set.bank[i].alg), p, hex);
			}
out:
	free(attest);
	free(sig);
	return ret;
}

int main(int argc, char **argv)
{
	struct tpm *t;
	int ret = -EINVAL;

	if (argc < 4) {
		fprintf(stderr, "usage: see the comment at the top of attestd_tpmtool.c\n");
		return 1;
	}
	t = tpm_open(argv[1]);
	if (!t)
		return 1;
	if (!strcmp(argv[2], "enroll") && (argc == 5 || argc == 6))
		ret = cmd_enroll(t, argv[3], argv[4], argc == 6 ? argv[5] : NULL);
	else if (!strcmp(argv[2], "activate") && argc == 5)
		ret = cmd_activate(t, argv[3], argv[4]);
	else if (!strcmp(argv[2], "quote") && argc == 7)
		ret = cmd_quote(t, argv[3], argv[4], argv[5], argv[6]);
	else
		fprintf(stderr, "unknown command or wrong arguments\n");
	tpm_close(t);
	if (ret < 0)
		fprintf(stderr, "attestd_tpmtool: %s failed: %s\n", argv[2], strerror(-ret));
	return ret < 0 ? 1 : 0;
}
