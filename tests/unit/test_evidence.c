/* Protocol JSON codecs: round trips of every message and rejection of malformed bodies. */
#include "proto/errors.h"
#include "proto/evidence.h"
#include "proto/text.h"
#include "proto/limits.h"
#include "tests/unit/check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_tpm2_types.h>

static void fill_evidence(struct evidence *ev)
{
	static uint8_t attest[] = {0xff, 'T', 'C', 'G', 0x80, 0x18};
	static uint8_t sig[] = {0x00, 0x14, 0x00, 0x0b, 1, 2, 3};
	static uint8_t log[300];

	memset(ev, 0, sizeof(*ev));
	for (size_t i = 0; i < 32; i++)
		ev->nonce[i] = (uint8_t)i;
	ev->nonce_len = 32;
	ev->attest = attest;
	ev->attest_len = sizeof(attest);
	ev->signature = sig;
	ev->signature_len = sizeof(sig);
	for (size_t i = 0; i < sizeof(log); i++)
		log[i] = (uint8_t)(i * 13);
	ev->log = log;
	ev->log_len = sizeof(log);
	ev->log_offset = 4242;
	struct pcr_bank *b1 = pcr_set_add_bank(&ev->pcrs, TPM2_ALG_SHA1);
	struct pcr_bank *b2 = pcr_set_add_bank(&ev->pcrs, TPM2_ALG_SHA256);
	for (unsigned n = 0; n <= 10; n++) {
		b1->mask |= 1u << n;
		b2->mask |= 1u << n;
		memset(b1->value[n], (int)n + 1, 20);
		memset(b2->value[n], (int)n + 0x40, 32);
	}
}

static void test_evidence_roundtrip(void)
{
	struct evidence in, out;
	const char *why = NULL;

	fill_evidence(&in);
	char *json = evidence_encode(&in);
	CHECK(json != NULL, "evidence encodes");
	if (!json)
		return;
	CHECK(evidence_parse(json, strlen(json), &out, &why) == 0, "evidence parses: %s", why);
	CHECK(out.nonce_len == 32 && memcmp(out.nonce, in.nonce, 32) == 0, "nonce survives");
	CHECK(out.attest_len == in.attest_len && memcmp(out.attest, in.attest, in.attest_len) == 0,
	      "attest survives");
	CHECK(out.log_len == in.log_len && memcmp(out.log, in.log, in.log_len) == 0, "log survives");
	CHECK(out.log_offset == 4242, "log_offset survives");
	CHECK(memcmp(&out.pcrs, &in.pcrs, sizeof(in.pcrs)) == 0, "pcr values survive");
	evidence_release(&out);
	evidence_release(&out); /* idempotent */

	/* Every strict prefix of a valid body is malformed and must be refused without a leak. */
	size_t len = strlen(json), refused = 0;
	for (size_t n = 0; n < len; n++)
		if (evidence_parse(json, n, &out, &why) == -EINVAL)
			refused++;
	CHECK(refused == len, "%zu of %zu truncations refused", refused, len);
	free(json);
}

static void expect_evidence_refused(const char *json, const char *what)
{
	struct evidence ev;
	const char *why = NULL;

	CHECK(evidence_parse(json, strlen(json), &ev, &why) == -EINVAL && why, "%s refused", what);
}

static void test_evidence_rejects(void)
{
	const char *pcrs = "\"pcrs\":{\"sha1\":{\"10\":\"0000000000000000000000000000000000000000\"}}";
	char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"nonce\":\"00112233445566778899aabbccddeeff\",\"attest\":\"AAAA\",\"signature\":\"AAAA\",%s,\"log_offset\":0,\"log\":\"\"}",
		 pcrs);
	struct evidence ev;
	const char *why = NULL;
	CHECK(evidence_parse(buf, strlen(buf), &ev, &why) == 0, "minimal evidence parses: %s", why);
	evidence_release(&ev);

	expect_evidence_refused("[]", "array body");
	expect_evidence_refused("{\"nonce\":\"0011\"}", "short nonce");
	expect_evidence_refused(
		"{\"nonce\":\"00112233445566778899aabbccddeeff\",\"attest\":\"A===\",\"signature\":\"AAAA\",\"pcrs\":{},\"log_offset\":0,\"log\":\"\"}",
		"bad base64");
	expect_evidence_refused(
		"{\"nonce\":\"00112233445566778899aabbccddeeff\",\"attest\":\"AAAA\",\"signature\":\"AAAA\",\"pcrs\":{\"md5\":{}},\"log_offset\":0,\"log\":\"\"}",
		"unknown bank");
	expect_evidence_refused(
		"{\"nonce\":\"00112233445566778899aabbccddeeff\",\"attest\":\"AAAA\",\"signature\":\"AAAA\",\"pcrs\":{\"sha1\":{\"24\":\"0000000000000000000000000000000000000000\"}},\"log_offset\":0,\"log\":\"\"}",
		"PCR index 24");
	expect_evidence_refused(
		"{\"nonce\":\"00112233445566778899aabbccddeeff\",\"attest\":\"AAAA\",\"signature\":\"AAAA\",\"pcrs\":{\"sha1\":{\"10\":\"00\"}},\"log_offset\":0,\"log\":\"\"}",
		"short PCR value");
	expect_evidence_refused(
		"{\"nonce\":\"00112233445566778899aabbccddeeff\",\"attest\":\"AAAA\",\"signature\":\"AAAA\",\"pcrs\":{\"sha1\":{\"10\":\"0000000000000000000000000000000000000000\"}},\"log_offset\":-1,\"log\":\"\"}",
		"negative log_offset");
	expect_evidence_refused("{\"a\":1,\"a\":2}", "duplicate keys");

	/* Deep nesting is refused before jansson recurses into it. */
	char deep[4096];
	size_t n = 0;
	deep[n++] = '{';
	deep[n++] = '"';
	deep[n++] = 'x';
	deep[n++] = '"';
	deep[n++] = ':';
	for (int i = 0; i < 1000; i++)
		deep[n++] = '[';
	for (int i = 0; i < 1000; i++)
		deep[n++] = ']';
	deep[n++] = '}';
	deep[n] = '\0';
	expect_evidence_refused(deep, "deep nesting");
}

/* The optional boot log and command line (issue 13), and the challenge's boot_log_sha256. */
static void test_boot_fields(void)
{
	static uint8_t blog[100];
	struct evidence in, out;
	struct challenge c, c2;
	const char *why = NULL;
	char *json, buf[1024];
	static const char head[] =
		"{\"nonce\":\"00112233445566778899aabbccddeeff\",\"attest\":\"AAAA\",\"signature\":\"AAAA\","
		"\"pcrs\":{\"sha1\":{\"10\":\"0000000000000000000000000000000000000000\"}},\"log_offset\":0,\"log\":\"\"";

	fill_evidence(&in);
	json = evidence_encode(&in);
	CHECK(json && !strstr(json, "boot_log") && !strstr(json, "boot_cmdline"), "no boot fields unless set");
	CHECK(json && evidence_parse(json, strlen(json), &out, &why) == 0 && !out.boot_log && !out.boot_cmdline,
	      "absent boot fields parse as absent");
	evidence_release(&out);
	free(json);
	for (size_t i = 0; i < sizeof(blog); i++)
		blog[i] = (uint8_t)(i * 7);
	in.boot_log = blog;
	in.boot_log_len = sizeof(blog);
	in.boot_cmdline = (char *)"console=ttyS0 ima_policy=tcb \xc3\xa9";
	json = evidence_encode(&in);
	CHECK(json && evidence_parse(json, strlen(json), &out, &why) == 0, "evidence with a boot log parses: %s", why);
	CHECK(out.boot_log_len == sizeof(blog) && out.boot_log && !memcmp(out.boot_log, blog, sizeof(blog)),
	      "the boot log survives");
	CHECK(out.boot_cmdline && !strcmp(out.boot_cmdline, in.boot_cmdline), "the command line survives");
	evidence_release(&out);
	CHECK(out.boot_log == NULL && out.boot_cmdline == NULL, "release frees the boot fields");
	free(json);

	snprintf(buf, sizeof(buf), "%s,\"boot_log\":\"\"}", head);
	expect_evidence_refused(buf, "an empty boot_log");
	snprintf(buf, sizeof(buf), "%s,\"boot_log\":1}", head);
	expect_evidence_refused(buf, "a boot_log that is not base64 text");
	snprintf(buf, sizeof(buf), "%s,\"boot_cmdline\":\"a\\u0000b\"}", head);
	expect_evidence_refused(buf, "a command line with a NUL");
	snprintf(buf, sizeof(buf), "%s,\"boot_cmdline\":[]}", head);
	expect_evidence_refused(buf, "a command line that is not a string");
	{
		size_t n = strlen(head) + 32 + LIMIT_CMDLINE + 1;
		char *big = malloc(n);

		if (big) {
			int len = snprintf(big, n, "%s,\"boot_cmdline\":\"", head);

			memset(big + len, 'a', LIMIT_CMDLINE + 1);
			memcpy(big + len + LIMIT_CMDLINE + 1, "\"}", 3);
			expect_evidence_refused(big, "a command line past LIMIT_CMDLINE");
			free(big);
		}
	}

	memset(&c, 0, sizeof(c));
	c.nonce_len = 16;
	c.expires_at = 5;
	pcr_set_add_bank(&c.selection, TPM2_ALG_SHA256)->mask = 0x7ff;
	c.has_boot_log_sha256 = true;
	memset(c.boot_log_sha256, 0xab, 32);
	json = challenge_encode(&c);
	CHECK(json && challenge_parse(json, strlen(json), &c2, &why) == 0 && c2.has_boot_log_sha256 &&
	      !memcmp(c2.boot_log_sha256, c.boot_log_sha256, 32), "a challenge names the held boot log's digest");
	free(json);
	c.has_boot_log_sha256 = false;
	json = challenge_encode(&c);
	CHECK(json && !strstr(json, "boot_log_sha256") && challenge_parse(json, strlen(json), &c2, &why) == 0 &&
	      !c2.has_boot_log_sha256, "and none when it holds none");
	free(json);
	{
		static const char shortsha[] =
			"{\"nonce\":\"00112233445566778899aabbccddeeff\",\"expires_at\":1,\"log_offset\":0,"
			"\"pcr_selection\":{\"sha256\":[0]},\"boot_log_sha256\":\"abcd\"}";

		CHECK(challenge_parse(shortsha, strlen(shortsha), &c2, &why) == -EINVAL,
		      "a short boot_log_sha256 refused");
	}
}

/* The agent's interval (issue 16): optional, 1..LIMIT_AGENT_INTERVAL seconds. */
static void test_interval(void)
{
	struct evidence in, out;
	const char *why = NULL;
	char *json, buf[1024];
	static const char head[] =
		"{\"nonce\":\"00112233445566778899aabbccddeeff\",\"attest\":\"AAAA\",\"signature\":\"AAAA\","
		"\"pcrs\":{\"sha1\":{\"10\":\"0000000000000000000000000000000000000000\"}},\"log_offset\":0,\"log\":\"\"";

	fill_evidence(&in);
	json = evidence_encode(&in);
	CHECK(json && !strstr(json, "interval") && evidence_parse(json, strlen(json), &out, &why) == 0 &&
		      out.interval == 0,
	      "none sent, none parsed");
	evidence_release(&out);
	free(json);
	in.interval = 30;
	json = evidence_encode(&in);
	CHECK(json && evidence_parse(json, strlen(json), &out, &why) == 0 && out.interval == 30,
	      "an interval survives");
	evidence_release(&out);
	free(json);
	snprintf(buf, sizeof(buf), "%s,\"interval\":%d}", head, LIMIT_AGENT_INTERVAL);
	CHECK(evidence_parse(buf, strlen(buf), &out, &why) == 0 && out.interval == LIMIT_AGENT_INTERVAL,
	      "the longest accepted");
	evidence_release(&out);
	snprintf(buf, sizeof(buf), "%s,\"interval\":%d}", head, LIMIT_AGENT_INTERVAL + 1);
	expect_evidence_refused(buf, "an interval past LIMIT_AGENT_INTERVAL");
	snprintf(buf, sizeof(buf), "%s,\"interval\":0}", head);
	expect_evidence_refused(buf, "an interval of 0");
	snprintf(buf, sizeof(buf), "%s,\"interval\":\"10\"}", head);
	expect_evidence_refused(buf, "an interval that is not a number");
}

/* The passport: "want_ear" (a boolean) asks for the verdict's "ear", which only then comes. */
static void test_want_ear(void)
{
	struct evidence in, out;
	struct verdict_response v, vout;
	const char *why = NULL;
	char *json, *ear, buf[1024];
	static const char head[] =
		"{\"nonce\":\"00112233445566778899aabbccddeeff\",\"attest\":\"AAAA\",\"signature\":\"AAAA\","
		"\"pcrs\":{\"sha1\":{\"10\":\"0000000000000000000000000000000000000000\"}},\"log_offset\":0,\"log\":\"\"";

	fill_evidence(&in);
	json = evidence_encode(&in);
	CHECK(json && !strstr(json, "want_ear") && evidence_parse(json, strlen(json), &out, &why) == 0 &&
		      !out.want_ear,
	      "not asked: not sent, not parsed");
	evidence_release(&out);
	free(json);
	in.want_ear = true;
	json = evidence_encode(&in);
	CHECK(json && evidence_parse(json, strlen(json), &out, &why) == 0 && out.want_ear,
	      "asked: survives");
	evidence_release(&out);
	free(json);
	snprintf(buf, sizeof(buf), "%s,\"want_ear\":\"yes\"}", head);
	expect_evidence_refused(buf, "want_ear that is not a boolean");
	memset(&v, 0, sizeof(v));
	v.trusted = true;
	v.verdict_id = 7;
	json = verdict_response_encode(&v);
	ear = json ? verdict_response_ear(json, strlen(json)) : NULL;
	CHECK(json && !strstr(json, "\"ear\"") && !ear, "a verdict without an EAR has no \"ear\"");
	free(ear);
	free(json);
	v.ear = "aGVhZA.Y2xhaW1z.c2ln";
	json = verdict_response_encode(&v);
	ear = json ? verdict_response_ear(json, strlen(json)) : NULL;
	CHECK(ear && !strcmp(ear, v.ear), "the EAR is carried and read back");
	CHECK(json && verdict_response_parse(json, strlen(json), &vout, &why) == 0 && !vout.ear &&
		      vout.verdict_id == 7,
	      "the parser of the verdict takes the rest, and borrows nothing");
	free(ear);
	free(json);
}

/* "log_deleted": the kernel's count of deleted records, sent only when some were deleted. */
static void test_log_deleted(void)
{
	struct evidence in, out;
	const char *why = NULL;
	char *json, buf[1024];
	static const char head[] =
		"{\"nonce\":\"00112233445566778899aabbccddeeff\",\"attest\":\"AAAA\",\"signature\":\"AAAA\","
		"\"pcrs\":{\"sha1\":{\"10\":\"0000000000000000000000000000000000000000\"}},\"log_offset\":0,\"log\":\"\"";

	fill_evidence(&in);
	json = evidence_encode(&in);
	CHECK(json && !strstr(json, "log_deleted") &&
		      evidence_parse(json, strlen(json), &out, &why) == 0 && out.log_deleted == 0,
	      "nothing deleted: not sent, parsed as 0");
	evidence_release(&out);
	free(json);
	in.log_deleted = 123456789012ull;
	json = evidence_encode(&in);
	CHECK(json && evidence_parse(json, strlen(json), &out, &why) == 0 &&
		      out.log_deleted == 123456789012ull,
	      "a deleted count survives the round trip");
	evidence_release(&out);
	free(json);
	snprintf(buf, sizeof(buf), "%s,\"log_deleted\":-1}", head);
	expect_evidence_refused(buf, "a negative log_deleted");
	snprintf(buf, sizeof(buf), "%s,\"log_deleted\":\"5\"}", head);
	expect_evidence_refused(buf, "a log_deleted that is not a number");
	snprintf(buf, sizeof(buf), "%s,\"log_deleted\":1.5}", head);
	expect_evidence_refused(buf, "a log_deleted that is not an integer");
	in.log_more = true;
	json = evidence_encode(&in);
	CHECK(json && evidence_parse(json, strlen(json), &out, &why) == 0 && out.log_more,
	      "log_more survives the round trip");
	evidence_release(&out);
	free(json);
	in.log_more = false;
	json = evidence_encode(&in);
	CHECK(json && !strstr(json, "log_more") && evidence_parse(json, strlen(json), &out, &why) == 0 &&
		      !out.log_more,
	      "no more entries: log_more not sent");
	evidence_release(&out);
	free(json);
	snprintf(buf, sizeof(buf), "%s,\"log_more\":1}", head);
	expect_evidence_refused(buf, "a log_more that is not a boolean");
}

static void test_enroll_and_challenge(void)
{
	uint8_t ek[] = {0, 3, 1, 2, 3}, cert[] = {0x30, 0x82}, ak[] = {0, 2, 9, 9};
	struct enroll_request req = {.ek_pub = ek, .ek_pub_len = sizeof(ek), .ek_cert = cert,
				     .ek_cert_len = sizeof(cert), .ak_pub = ak, .ak_pub_len = sizeof(ak)};
	struct enroll_request out;
	const char *why = NULL;

	snprintf(req.agent_id, sizeof(req.agent_id), "web-01.example");
	char *json = enroll_request_encode(&req);
	CHECK(json && enroll_request_parse(json, strlen(json), &out, &why) == 0, "enroll round trip: %s", why);
	CHECK(strcmp(out.agent_id, "web-01.example") == 0 && out.ek_pub_len == 5 &&
	      memcmp(out.ak_pub, ak, 4) == 0, "enroll fields survive");
	enroll_request_release(&out);
	free(json);

	snprintf(req.agent_id, sizeof(req.agent_id), "../etc");
	json = enroll_request_encode(&req);
	CHECK(json && enroll_request_parse(json, strlen(json), &out, &why) == -EINVAL, "agent id with '/' refused");
	free(json);
	CHECK(!agent_id_valid("") && !agent_id_valid(".hidden") && !agent_id_valid("a b") &&
	      agent_id_valid("A-z_0.9"), "agent id rules");

	struct challenge c = {.nonce_len = 32, .expires_at = 1700000000, .log_offset = 17}, c2;
	memset(c.nonce, 0xab, 32);
	struct pcr_bank *b = pcr_set_add_bank(&c.selection, TPM2_ALG_SHA256);
	b->mask = 0x7ff;
	b = pcr_set_add_bank(&c.selection, TPM2_ALG_SHA1);
	b->mask = 0x400;
	json = challenge_encode(&c);
	CHECK(json && challenge_parse(json, strlen(json), &c2, &why) == 0, "challenge round trip: %s", why);
	CHECK(c2.expires_at == c.expires_at && c2.log_offset == 17 && c2.nonce_len == 32 &&
	      pcr_set_same_selection(&c.selection, &c2.selection), "challenge fields and bank order survive");
	free(json);
}

static void test_verdict_and_error(void)
{
	struct verdict_response v = {.trusted = false, .verdict_id = 7, .next_offset = 606, .nreasons = 2};
	struct verdict_response out;
	const char *why = NULL;

	snprintf(v.reason[0].code, sizeof(v.reason[0].code), "not_in_allowlist");
	snprintf(v.reason[0].detail, sizeof(v.reason[0].detail), "/tmp/x sha256:00");
	v.reason[0].entry = 42;
	snprintf(v.reason[1].code, sizeof(v.reason[1].code), "pcr_mismatch");
	v.reason[1].entry = -1;
	char *json = verdict_response_encode(&v);
	CHECK(json && verdict_response_parse(json, strlen(json), &out, &why) == 0, "verdict round trip: %s", why);
	CHECK(!out.has_next_challenge, "a verdict without next_challenge has none");
	CHECK(!out.trusted && out.verdict_id == 7 && out.next_offset == 606 && out.nreasons == 2 &&
	      out.reason[0].entry == 42 && out.reason[1].entry == -1 &&
	      strcmp(out.reason[1].code, "pcr_mismatch") == 0, "verdict fields survive");
	free(json);
	const char *bad = "{\"verdict\":\"trusted\",\"verdict_id\":1,\"next_offset\":1,\"reasons\":[{\"code\":\"x\"}]}";
	CHECK(verdict_response_parse(bad, strlen(bad), &out, &why) == -EINVAL, "trusted with reasons refused");
	/* fuzz_evidence round trip: -5 parsed, was encoded without an entry and read back as -1. */
	bad = "{\"verdict\":\"untrusted\",\"verdict_id\":1,\"next_offset\":2,\"reasons\":[{\"code\":\"x\",\"entry\":-5}]}";
	CHECK(verdict_response_parse(bad, strlen(bad), &out, &why) == -EINVAL, "negative reason entry refused");

	/* The next round's challenge travels with the verdict (one exchange per round). */
	v.has_next_challenge = true;
	v.next_challenge.nonce_len = 32;
	memset(v.next_challenge.nonce, 0xa5, 32);
	v.next_challenge.expires_at = 1700000060;
	v.next_challenge.log_offset = 606;
	pcr_set_add_bank(&v.next_challenge.selection, TPM2_ALG_SHA256)->mask = 0x7ff;
	v.next_challenge.has_boot_log_sha256 = true;
	memset(v.next_challenge.boot_log_sha256, 0x5a, 32);
	json = verdict_response_encode(&v);
	CHECK(json && verdict_response_parse(json, strlen(json), &out, &why) == 0 &&
	      out.has_next_challenge && out.next_challenge.nonce_len == 32 &&
	      out.next_challenge.nonce[31] == 0xa5 && out.next_challenge.expires_at == 1700000060 &&
	      out.next_challenge.log_offset == 606 && out.next_challenge.has_boot_log_sha256 &&
	      out.next_challenge.boot_log_sha256[0] == 0x5a &&
	      out.next_challenge.selection.nbanks == 1 &&
	      out.next_challenge.selection.bank[0].mask == 0x7ff,
	      "next_challenge round trip: %s", why);
	free(json);
	bad = "{\"verdict\":\"trusted\",\"verdict_id\":1,\"next_offset\":1,\"reasons\":[],"
	      "\"next_challenge\":{\"nonce\":\"00\",\"expires_at\":1,\"log_offset\":1,"
	      "\"pcr_selection\":{}}}";
	CHECK(verdict_response_parse(bad, strlen(bad), &out, &why) == -EINVAL,
	      "a next_challenge with a short nonce refused");
	bad = "{\"verdict\":\"trusted\",\"verdict_id\":1,\"next_offset\":1,\"reasons\":[],"
	      "\"next_challenge\":[]}";
	CHECK(verdict_response_parse(bad, strlen(bad), &out, &why) == -EINVAL,
	      "a next_challenge that is not an object refused");
	CHECK(proto_error_action(400, "nonce_unknown") == PROTO_ACTION_NEW_CHALLENGE &&
		      proto_error_action(409, "nonce_expired") == PROTO_ACTION_NEW_CHALLENGE &&
		      proto_error_action(409, "no_challenge") == PROTO_ACTION_NEW_CHALLENGE &&
		      proto_error_action(409, "nonce_reused") != PROTO_ACTION_NEW_CHALLENGE &&
		      proto_error_action(409, "round_conflict") != PROTO_ACTION_NEW_CHALLENGE &&
		      proto_error_action(400, "bad_signature") != PROTO_ACTION_NEW_CHALLENGE &&
		      proto_error_action(409, "rejudgement") == PROTO_ACTION_NEW_CHALLENGE &&
		      proto_error_action(404, "nonce_unknown") != PROTO_ACTION_NEW_CHALLENGE,
	      "which refusals of a carried challenge mean: ask for one (a replay never does)");

	char code[32], msg[128];
	json = error_encode("nonce_reused", "nonce was used already");
	CHECK(json && error_parse(json, strlen(json), code, sizeof(code), msg, sizeof(msg)) == 0 &&
	      strcmp(code, "nonce_reused") == 0 && strcmp(msg, "nonce was used already") == 0,
	      "error round trip");
	free(json);
}

/* Each cap is enforced at its value, and the message spells that value (LIMIT_STR). */
/*
 * Strings from the network that attestd prints: a reason code or an error code with a newline or
 * a terminal escape would forge a "verdict trusted" line in its output, log, last-verdict file
 * and status. Codes are refused on parse unless [a-z0-9_]; messages are shown escaped.
 */
static void test_network_text(void)
{
	struct verdict_response out;
	const char *why = NULL;
	char code[64], msg[256], line[256];
	const char *forged[] = {
		"{\"verdict\":\"untrusted\",\"verdict_id\":1,\"next_offset\":0,\"reasons\":"
		"[{\"code\":\"x\\nverdict trusted id=2\"}]}",
		"{\"verdict\":\"untrusted\",\"verdict_id\":1,\"next_offset\":0,\"reasons\":"
		"[{\"code\":\"\\u001b[2Kverdict\"}]}",
		"{\"verdict\":\"untrusted\",\"verdict_id\":1,\"next_offset\":0,\"reasons\":"
		"[{\"code\":\"Not_Allowed\"}]}",
		"{\"verdict\":\"untrusted\",\"verdict_id\":1,\"next_offset\":0,\"reasons\":"
		"[{\"code\":\"\"}]}",
	};
	const char *ok = "{\"verdict\":\"untrusted\",\"verdict_id\":1,\"next_offset\":0,"
			 "\"reasons\":[{\"code\":\"not_in_allowlist_2\"}]}";

	for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++)
		CHECK(verdict_response_parse(forged[i], strlen(forged[i]), &out, &why) == -EINVAL,
		      "a reason code outside [a-z0-9_] refused (%zu)", i);
	CHECK(verdict_response_parse(ok, strlen(ok), &out, &why) == 0, "a plain reason code parses");
	CHECK(code_valid("agent_reset") && !code_valid("a b") && !code_valid("a\n") &&
		      !code_valid("") && !code_valid("abcdefghijklmnopqrstuvwxyz_0123x"),
	      "code_valid: [a-z0-9_], 1..31");
	why = "{\"error\":{\"code\":\"x\\r\\nverdict\",\"message\":\"m\"}}";
	CHECK(error_parse(why, strlen(why), code, sizeof(code), msg, sizeof(msg)) == -EINVAL,
	      "an error code with a newline refused");
	CHECK(text_render_line("a\nverdict trusted\x1b[0m\\ \xc2\x9b \xc3\xa9 \xff", 30, line,
			       sizeof(line)) &&
		      !strcmp(line, "a\\x0averdict trusted\\x1b[0m\\\\ \\xc2\\x9b \xc3\xa9 \\xff"),
	      "text_render_line: newline, ESC, backslash, C1, invalid escaped; UTF-8 kept: %s", line);
	CHECK(!text_render_line("plain text", 10, line, sizeof(line)) && !strcmp(line, "plain text"),
	      "text_render_line: plain text unchanged");
	CHECK(text_render_line("\n\n\n", 3, line, 9) && !strcmp(line, "\\x0a\\x0a"),
	      "text_render_line: stops before an escape that does not fit: %s", line);
}

static void test_caps_in_messages(void)
{
	static uint8_t big[LIMIT_ATTEST + 1];
	struct evidence ev, out;
	const char *why = NULL;
	char *json;
	int rc;

	CHECK(strtoul(LIMIT_STR(LIMIT_ATTEST), NULL, 10) == LIMIT_ATTEST &&
		      strtoul(LIMIT_STR(LIMIT_SIGNATURE), NULL, 10) == LIMIT_SIGNATURE &&
		      strtoul(LIMIT_STR(LIMIT_TPM2B_PUBLIC), NULL, 10) == LIMIT_TPM2B_PUBLIC &&
		      strtoul(LIMIT_STR(LIMIT_EK_CERT), NULL, 10) == LIMIT_EK_CERT &&
		      strtoul(LIMIT_STR(LIMIT_NONCE_BYTES), NULL, 10) == LIMIT_NONCE_BYTES,
	      "LIMIT_STR spells the values");
	for (size_t n = LIMIT_ATTEST; n <= LIMIT_ATTEST + 1; n++) {
		fill_evidence(&ev);
		ev.attest = big;
		ev.attest_len = n;
		json = evidence_encode(&ev);
		why = NULL;
		rc = json ? evidence_parse(json, strlen(json), &out, &why) : -ENOMEM;
		if (n == LIMIT_ATTEST) {
			CHECK(rc == 0 && out.attest_len == n, "attest of %zu bytes accepted: %d", n, rc);
			evidence_release(&out);
		} else {
			CHECK(rc == -EINVAL && why &&
				      strcmp(why, "attest is not valid base64 of at most 1024 bytes") == 0,
			      "attest of %zu bytes refused: %s", n, why ? why : "(none)");
		}
		free(json);
	}
}

int main(void)
{
	CASE(test_evidence_roundtrip);
	CASE(test_evidence_rejects);
	CASE(test_boot_fields);
	CASE(test_interval);
	CASE(test_want_ear);
	CASE(test_log_deleted);
	CASE(test_enroll_and_challenge);
	CASE(test_verdict_and_error);
	CASE(test_network_text);
	CASE(test_caps_in_messages);
	return check_finish();
}
