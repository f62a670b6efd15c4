/*
 * libFuzzer target: the protocol JSON parsers of proto/evidence.h. The first input byte picks
 * the parser (evidence, enroll request and response, activate, challenge, verdict, error), the
 * rest is the body. Nothing may crash or leak; what parses must encode, and the encoding must
 * parse again to the same message (a parser that accepts what its encoder cannot say, or an
 * encoder that says something else, would let the agent and the verifier disagree).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/evidence.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum which { W_EVIDENCE, W_ENROLL_REQ, W_ENROLL_RESP, W_ACTIVATE, W_CHALLENGE, W_VERDICT, W_ERROR, W_COUNT };

static void check(int ok)
{
	if (!ok)
		abort();
}

static int bytes_eq(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	return al == bl && (al == 0 || memcmp(a, b, al) == 0);
}

/* Field by field: padding bytes in struct pcr_bank are not part of the message. */
static int pcrs_eq(const struct pcr_set *a, const struct pcr_set *b, int values)
{
	if (a->nbanks != b->nbanks || a->nbanks > LIMIT_PCR_BANKS)
		return 0;
	for (unsigned i = 0; i < a->nbanks; i++) {
		const struct pcr_bank *x = &a->bank[i], *y = &b->bank[i];
		size_t d = pcr_alg_digest_size(x->alg);

		if (x->alg != y->alg || x->mask != y->mask || !d)
			return 0;
		for (unsigned n = 0; values && n < PCR_COUNT; n++)
			if ((x->mask >> n & 1) && memcmp(x->value[n], y->value[n], d) != 0)
				return 0;
	}
	return 1;
}

static void do_evidence(const char *js, size_t len)
{
	struct evidence a, b;
	const char *why = NULL;
	char *enc;

	if (evidence_parse(js, len, &a, &why) != 0) {
		check(why != NULL);
		return;
	}
	enc = evidence_encode(&a);
	check(enc != NULL);
	check(evidence_parse(enc, strlen(enc), &b, &why) == 0);
	check(bytes_eq(a.nonce, a.nonce_len, b.nonce, b.nonce_len));
	check(bytes_eq(a.attest, a.attest_len, b.attest, b.attest_len));
	check(bytes_eq(a.signature, a.signature_len, b.signature, b.signature_len));
	check(bytes_eq(a.log, a.log_len, b.log, b.log_len));
	check(a.log_offset == b.log_offset);
	check(pcrs_eq(&a.pcrs, &b.pcrs, 1));
	check(bytes_eq(a.boot_log, a.boot_log_len, b.boot_log, b.boot_log_len));
	check(!a.boot_log == !b.boot_log);
	check(!a.boot_cmdline == !b.boot_cmdline &&
	      (!a.boot_cmdline || strcmp(a.boot_cmdline, b.boot_cmdline) == 0));
	free(enc);
	evidence_release(&a);
	evidence_release(&b);
}

static void do_enroll_request(const char *js, size_t len)
{
	struct enroll_request a, b;
	const char *why = NULL;
	char *enc;

	if (enroll_request_parse(js, len, &a, &why) != 0) {
		check(why != NULL && a.ek_pub == NULL && a.ek_cert == NULL && a.ak_pub == NULL);
		return;
	}
	check(agent_id_valid(a.agent_id));
	enc = enroll_request_encode(&a);
	check(enc != NULL);
	check(enroll_request_parse(enc, strlen(enc), &b, &why) == 0);
	check(strcmp(a.agent_id, b.agent_id) == 0);
	check(bytes_eq(a.ek_pub, a.ek_pub_len, b.ek_pub, b.ek_pub_len));
	check(bytes_eq(a.ek_cert, a.ek_cert_len, b.ek_cert, b.ek_cert_len));
	check(bytes_eq(a.ak_pub, a.ak_pub_len, b.ak_pub, b.ak_pub_len));
	free(enc);
	enroll_request_release(&a);
	enroll_request_release(&b);
}

static void do_enroll_response(const char *js, size_t len)
{
	struct enroll_response a, b;
	const char *why = NULL;
	char *enc;

	if (enroll_response_parse(js, len, &a, &why) != 0) {
		check(why != NULL && a.credential_blob == NULL && a.encrypted_secret == NULL);
		return;
	}
	check(agent_id_valid(a.agent_id));
	enc = enroll_response_encode(&a);
	check(enc != NULL);
	check(enroll_response_parse(enc, strlen(enc), &b, &why) == 0);
	check(strcmp(a.agent_id, b.agent_id) == 0);
	check(bytes_eq(a.credential_blob, a.credential_blob_len, b.credential_blob,
		       b.credential_blob_len));
	check(bytes_eq(a.encrypted_secret, a.encrypted_secret_len, b.encrypted_secret,
		       b.encrypted_secret_len));
	free(enc);
	enroll_response_release(&a);
	enroll_response_release(&b);
}

static void do_activate(const char *js, size_t len)
{
	struct activate_request a, b;
	const char *why = NULL;
	char *enc;

	if (activate_request_parse(js, len, &a, &why) != 0) {
		check(why != NULL);
		return;
	}
	check(a.secret_len >= 1 && a.secret_len <= sizeof(a.secret));
	enc = activate_request_encode(&a);
	check(enc != NULL);
	check(activate_request_parse(enc, strlen(enc), &b, &why) == 0);
	check(bytes_eq(a.secret, a.secret_len, b.secret, b.secret_len));
	free(enc);
}

static void do_challenge(const char *js, size_t len)
{
	struct challenge a, b;
	const char *why = NULL;
	char *enc;

	if (challenge_parse(js, len, &a, &why) != 0) {
		check(why != NULL);
		return;
	}
	check(a.nonce_len >= LIMIT_NONCE_MIN_BYTES && a.nonce_len <= LIMIT_NONCE_BYTES);
	check(a.expires_at >= 0);
	enc = challenge_encode(&a);
	check(enc != NULL);
	check(challenge_parse(enc, strlen(enc), &b, &why) == 0);
	check(bytes_eq(a.nonce, a.nonce_len, b.nonce, b.nonce_len));
	check(a.expires_at == b.expires_at && a.log_offset == b.log_offset);
	check(pcrs_eq(&a.selection, &b.selection, 0));
	check(a.has_boot_log_sha256 == b.has_boot_log_sha256 &&
	      (!a.has_boot_log_sha256 || memcmp(a.boot_log_sha256, b.boot_log_sha256, 32) == 0));
	free(enc);
}

static void do_verdict(const char *js, size_t len)
{
	/* Large (64 reasons of 512 bytes): static, the target is single-threaded. */
	static struct verdict_response a, b;
	const char *why = NULL;
	char *enc;

	if (verdict_response_parse(js, len, &a, &why) != 0) {
		check(why != NULL);
		return;
	}
	check(a.nreasons <= LIMIT_VERDICT_REASONS && (!a.trusted || a.nreasons == 0));
	enc = verdict_response_encode(&a);
	check(enc != NULL);
	check(verdict_response_parse(enc, strlen(enc), &b, &why) == 0);
	check(a.trusted == b.trusted && a.verdict_id == b.verdict_id &&
	      a.next_offset == b.next_offset && a.nreasons == b.nreasons);
	for (unsigned i = 0; i < a.nreasons; i++) {
		check(strcmp(a.reason[i].code, b.reason[i].code) == 0);
		check(strcmp(a.reason[i].detail, b.reason[i].detail) == 0);
		check(a.reason[i].entry == b.reason[i].entry);
	}
	free(enc);
}

static void do_error(const char *js, size_t len)
{
	char code[64], msg[256], code2[64], msg2[256];
	char *enc;

	if (error_parse(js, len, code, sizeof(code), msg, sizeof(msg)) != 0)
		return;
	check(memchr(code, 0, sizeof(code)) && memchr(msg, 0, sizeof(msg)));
	enc = error_encode(code, msg);
	check(enc != NULL);
	check(error_parse(enc, strlen(enc), code2, sizeof(code2), msg2, sizeof(msg2)) == 0);
	check(strcmp(code, code2) == 0 && strcmp(msg, msg2) == 0);
	free(enc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *js;
	size_t len;

	if (size < 1)
		return 0;
	js = (const char *)data + 1;
	len = size - 1;
	switch (data[0] % W_COUNT) {
	case W_EVIDENCE: do_evidence(js, len); break;
	case W_ENROLL_REQ: do_enroll_request(js, len); break;
	case W_ENROLL_RESP: do_enroll_response(js, len); break;
	case W_ACTIVATE: do_activate(js, len); break;
	case W_CHALLENGE: do_challenge(js, len); break;
	case W_VERDICT: do_verdict(js, len); break;
	case W_ERROR: do_error(js, len); break;
	}
	return 0;
}
