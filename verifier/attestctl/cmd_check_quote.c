/*
 * attestctl check-quote --ak AKPUB --message MSG --signature SIG --nonce HEX
 *                       [--pcrs PCRS] [--list LIST]
 *
 * Stands in for tpm2_checkquote on the files tpm2-tools writes: AKPUB is a TPM2B_PUBLIC
 * (`tpm2_createak -u`, whose AK attributes are then checked too) or a PEM public key; MSG is
 * `tpm2_quote -m` (TPMS_ATTEST), SIG `tpm2_quote -s` (TPMT_SIGNATURE), PCRS `tpm2_quote -o`
 * (tpm2-tools' serialized PCR file). With PCRS the quoted selection must be the file's and
 * pcrDigest must match its values. With LIST (binary IMA list) the replay must equal PCR 10 of
 * every quoted bank after some prefix of the list (IMA appends before it extends).
 * Exit: 0 valid, 1 invalid (one stderr line with a reason code), 2 usage or unreadable input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/pem.h>

#include "common/file.h"
#include "proto/dynbuf.h"
#include "proto/encoding.h"
#include "proto/imalog.h"
#include "proto/pcrs.h"
#include "proto/quote.h"
#include "proto/replay.h"
#include "proto/tpmkey.h"
#include "verifier/attestctl/commands.h"
#include "verifier/facts/reasons.h"

static const char usage_text[] =
	"usage: attestctl check-quote --ak AKPUB --message MSG --signature SIG --nonce HEX "
	"[--pcrs PCRS] [--list LIST]\n";

#define SMALL_FILE (64u * 1024u)
#define LIST_FILE (1024u * 1024u * 1024u)

/* Reads a whole regular file of at most cap bytes (common/file.h); caller frees *buf. */
static int slurp(const char *path, size_t cap, uint8_t **buf, size_t *len)
{
	struct dynbuf b;
	int ret;

	dynbuf_init(&b, cap);
	ret = file_read(path, &b);
	if (ret)
		return ret;
	*buf = (uint8_t *)dynbuf_take(&b, len);
	return *buf ? 0 : -ENOMEM;
}

static void fail(const char *code, const char *detail)
{
	fprintf(stderr, "attestctl check-quote: invalid: %s%s%s\n", code, detail ? ": " : "",
		detail ? detail : "");
}

/* AK from a TPM2B_PUBLIC (attributes checked) or a PEM SubjectPublicKeyInfo. */
static EVP_PKEY *load_ak(const uint8_t *buf, size_t len, const char **why)
{
	TPMT_PUBLIC pub;
	enum tpmkey_check c;
	BIO *bio;
	EVP_PKEY *k;

	*why = NULL;
	if (tpmkey_parse_public(buf, len, &pub) == 0) {
		c = tpmkey_check_ak(&pub);
		if (c != TPMKEY_OK) {
			*why = tpmkey_check_str(c);
			return NULL;
		}
		return tpmkey_to_evp(&pub);
	}
	bio = BIO_new_mem_buf(buf, (int)len);
	k = bio ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;
	BIO_free(bio);
	return k;
}

static void print_selection(const char *label, const struct pcr_set *s)
{
	printf("%s", label);
	for (unsigned i = 0; i < s->nbanks; i++) {
		const char *sep = ":";
		printf(" %s", pcr_alg_name(s->bank[i].alg) ? pcr_alg_name(s->bank[i].alg) : "?");
		for (unsigned n = 0; n < PCR_COUNT; n++)
			if (s->bank[i].mask >> n & 1) {
				printf("%s%u", sep, n);
				sep = ",";
			}
	}
	printf("\n");
}

/* 0 matched (prefix in *at), 1 no prefix matched, -1 corrupt list (message printed). */
static int check_list(const uint8_t *buf, size_t len, const struct pcr_set *pcrs, uint64_t *at,
		      uint64_t *total)
{
	uint32_t banks = 0;
	struct imalog *log = imalog_new();
	struct replay_ctx *rc = NULL;
	struct replay_state st;
	struct ima_entry e;
	struct ima_error err;
	int r, ret = -1;
	bool matched = false;

	for (unsigned i = 0; i < pcrs->nbanks; i++)
		if (pcrs->bank[i].mask >> PCR_IMA & 1)
			banks |= replay_bank_of_alg(pcrs->bank[i].alg);
	if (!banks) {
		fail(reason_name(REASON_PCR_MISMATCH), "the quote does not cover PCR 10");
		ret = 1;
		goto cleanup;
	}
	rc = replay_ctx_new(banks);
	if (!log || !rc) {
		fail("internal", "out of memory");
		goto cleanup;
	}
	imalog_reset(log, buf, len, 0);
	replay_state_init(&st, banks);
	/* The empty prefix counts: a quote taken before the first measurement. */
	if (replay_state_matches(&st, pcrs)) {
		matched = true;
		*at = 0;
	}
	while ((r = imalog_next(log, &e, &err)) == 1) {
		if (replay_extend(rc, &st, &e) < 0) {
			fail("internal", "replay failed");
			goto cleanup;
		}
		if (replay_state_matches(&st, pcrs)) {
			matched = true;
			*at = st.entries;
		}
	}
	if (r < 0) {
		fprintf(stderr, "attestctl check-quote: invalid: malformed_list: entry %llu at offset %zu: %s\n",
			(unsigned long long)err.index, err.offset, err.msg);
		goto cleanup;
	}
	*total = st.entries;
	if (!matched)
		fail(reason_name(REASON_PCR_MISMATCH), "no prefix of the list replays to the quoted PCR 10");
	ret = matched ? 0 : 1;
cleanup:
	replay_ctx_free(rc);
	imalog_free(log);
	return ret;
}

int cmd_check_quote(int argc, char **argv)
{
	const char *ak_path = NULL, *msg_path = NULL, *sig_path = NULL, *nonce_hex = NULL;
	const char *pcrs_path = NULL, *list_path = NULL;
	uint8_t *ak_buf = NULL, *msg = NULL, *sig = NULL, *pcr_buf = NULL, *list = NULL;
	size_t ak_len = 0, msg_len = 0, sig_len = 0, pcr_len = 0, list_len = 0;
	uint8_t nonce[LIMIT_NONCE_BYTES];
	ssize_t nonce_len;
	struct pcr_set pcrs;
	struct quote_info info;
	enum quote_result qr;
	EVP_PKEY *ak = NULL;
	const char *why;
	int ret = 2;

	for (int i = 1; i < argc; i++) {
		const char **slot = !strcmp(argv[i], "--ak")		? &ak_path
				    : !strcmp(argv[i], "--message")	? &msg_path
				    : !strcmp(argv[i], "--signature") ? &sig_path
				    : !strcmp(argv[i], "--nonce")	? &nonce_hex
				    : !strcmp(argv[i], "--pcrs")	? &pcrs_path
				    : !strcmp(argv[i], "--list")	? &list_path
								: NULL;
		if (!slot || i + 1 >= argc || *slot) {
			fputs(usage_text, stderr);
			return 2;
		}
		*slot = argv[++i];
	}
	if (!ak_path || !msg_path || !sig_path || !nonce_hex || (list_path && !pcrs_path)) {
		fputs(usage_text, stderr);
		if (list_path && !pcrs_path)
			fprintf(stderr, "attestctl check-quote: --list needs --pcrs (the PCR values)\n");
		return 2;
	}
	nonce_len = hex_decode(nonce_hex, strlen(nonce_hex), nonce, sizeof(nonce));
	if (nonce_len < 0) {
		fprintf(stderr, "attestctl check-quote: --nonce must be hex, at most %u bytes\n",
			LIMIT_NONCE_BYTES);
		return 2;
	}
	{
		const struct {
			const char *path;
			size_t cap;
			uint8_t **buf;
			size_t *len;
		} in[] = {
			{ak_path, SMALL_FILE, &ak_buf, &ak_len},
			{msg_path, SMALL_FILE, &msg, &msg_len},
			{sig_path, SMALL_FILE, &sig, &sig_len},
			{pcrs_path, SMALL_FILE, &pcr_buf, &pcr_len},
			{list_path, LIST_FILE, &list, &list_len},
		};
		for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
			int r;
			if (!in[i].path)
				continue;
			r = slurp(in[i].path, in[i].cap, in[i].buf, in[i].len);
			if (r < 0) {
				fprintf(stderr, "attestctl check-quote: cannot read \"%s\": %s\n",
					in[i].path,
					r == -EINVAL || r == -EFBIG ? "not a regular file or too large"
								    : strerror(-r));
				goto cleanup;
			}
		}
	}
	ak = load_ak(ak_buf, ak_len, &why);
	if (!ak) {
		if (why) {
			fail("bad_ak", why);
			ret = 1;
		} else {
			fprintf(stderr, "attestctl check-quote: \"%s\" is neither a TPM2B_PUBLIC nor a PEM public key\n",
				ak_path);
		}
		goto cleanup;
	}
	if (pcrs_path && quote_parse_tpm2tools_pcrs(pcr_buf, pcr_len, &pcrs) != 0) {
		fprintf(stderr, "attestctl check-quote: \"%s\" is not a tpm2-tools PCR file\n", pcrs_path);
		goto cleanup;
	}
	qr = quote_verify(ak, msg, msg_len, sig, sig_len, nonce, (size_t)nonce_len,
			  pcrs_path ? &pcrs : NULL, pcrs_path ? &pcrs : NULL, &info);
	if (qr != QUOTE_OK) {
		fail(reason_name(reason_of_quote(qr)), NULL);
		ret = 1;
		goto cleanup;
	}
	printf("quote ok\n");
	printf("signature %s %s\n",
	       info.sig_alg == TPM2_ALG_RSASSA ? "rsassa" : info.sig_alg == TPM2_ALG_RSAPSS ? "rsapss" : "ecdsa",
	       pcr_alg_name(info.sig_hash));
	printf("clock %llu reset_count %u restart_count %u safe %d firmware %016llx\n",
	       (unsigned long long)info.clock, info.reset_count, info.restart_count, info.safe,
	       (unsigned long long)info.firmware_version);
	print_selection("selection", &info.selection);
	if (!pcrs_path)
		printf("pcr values not checked (no --pcrs)\n");
	if (list_path) {
		uint64_t at = 0, total = 0;
		int r = check_list(list, list_len, &pcrs, &at, &total);
		if (r != 0) {
			ret = 1;
			goto cleanup;
		}
		printf("list matches pcr10 after %llu of %llu entries\n", (unsigned long long)at,
		       (unsigned long long)total);
	}
	ret = 0;
cleanup:
	EVP_PKEY_free(ak);
	free(ak_buf);
	free(msg);
	free(sig);
	free(pcr_buf);
	free(list);
	return ret;
}
