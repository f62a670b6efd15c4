/*
 * enroll_check() against EK certificates as TPM makers ship them (fixtures and their
 * provenance: tests/data/ekcert/README.md): a certificate followed by the fill of its NV index,
 * a CA file whose CA is not a root (every certificate of the file is an anchor), and the
 * intermediates an agent sends from NV 0x01C00100 (ek_chain, untrusted). The EK and AK are the
 * swtpm keys of tests/data/tpm.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/ekcert.h"
#include "proto/evidence.h"
#include "tests/unit/check.h"
#include "tests/unit/testdata.h"
#include "verifier/facts/enroll.h"

#define EKCERT_DIR "tests/data/ekcert/"

static struct blob ek_pub, ak_pub;

static struct blob cert_file(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "../ekcert/%s", name);
	return load(path);
}

/* enroll_check with these anchors, this ek_cert and ek_chain; the status, *why filled. */
static enum enroll_status try_enroll(const char *const *cas, size_t ncas, const char *cert,
				     const char *chain, struct enroll_result *res)
{
	struct enroll_trust *t = enroll_trust_new(cas, ncas);
	struct enroll_request req;
	struct blob c = cert_file(cert), ch = {NULL, 0};
	enum enroll_status st;

	if (chain)
		ch = cert_file(chain);
	memset(&req, 0, sizeof(req));
	snprintf(req.agent_id, sizeof(req.agent_id), "%s", "a1");
	req.ek_pub = ek_pub.p;
	req.ek_pub_len = ek_pub.n;
	req.ak_pub = ak_pub.p;
	req.ak_pub_len = ak_pub.n;
	req.ek_cert = c.p;
	req.ek_cert_len = c.n;
	req.ek_chain = ch.p;
	req.ek_chain_len = ch.n;
	st = t ? enroll_check(t, &req, res) : ENROLL_INTERNAL;
	enroll_trust_free(t);
	free(c.p);
	free(ch.p);
	return st;
}

static void test_padding(void)
{
	static const char *const cas[] = {EKCERT_DIR "root.pem", EKCERT_DIR "vendor.pem"};
	struct enroll_result r;
	struct blob der = cert_file("ek_rsa.der");

	CHECK(try_enroll(cas, 2, "ek_rsa.der", NULL, &r) == ENROLL_OK && r.ek_cert_len == der.n,
	      "plain DER certificate: enrolled (%s)", r.why);
	CHECK(try_enroll(cas, 2, "ek_rsa_ff.bin", NULL, &r) == ENROLL_OK && r.ek_cert_len == der.n,
	      "certificate + 0xFF fill of a 1600-byte index: enrolled, stored without the fill (%s)",
	      r.why);
	CHECK(try_enroll(cas, 2, "ek_rsa_00.bin", NULL, &r) == ENROLL_OK && r.ek_cert_len == der.n,
	      "certificate + 0x00 fill: enrolled (%s)", r.why);
	CHECK(try_enroll(cas, 2, "ek_rsa_stray.bin", NULL, &r) == ENROLL_EK_UNTRUSTED &&
		      strstr(r.why, "not one DER certificate"),
	      "a stray byte in the fill: refused (%s)", r.why);
	free(der.p);
}

static void test_anchors(void)
{
	static const char *const vendor_only[] = {EKCERT_DIR "vendor.pem"};
	static const char *const root_only[] = {EKCERT_DIR "root.pem"};
	static const char *const other[] = {EKCERT_DIR "other.pem"};
	struct enroll_result r;

	CHECK(try_enroll(vendor_only, 1, "ek_rsa.der", NULL, &r) == ENROLL_OK,
	      "CA file with the maker's CA alone, its root absent: the CA is an anchor (%s)", r.why);
	CHECK(try_enroll(root_only, 1, "ek_rsa.der", NULL, &r) == ENROLL_EK_UNTRUSTED &&
		      strstr(r.why, "not trusted"),
	      "root alone, no intermediate sent: refused (%s)", r.why);
	CHECK(try_enroll(root_only, 1, "ek_rsa_ff.bin", "chain_ff.bin", &r) == ENROLL_OK,
	      "root alone, the maker's CA sent from NV as ek_chain: enrolled (%s)", r.why);
	CHECK(try_enroll(other, 1, "ek_rsa.der", "chain_ff.bin", &r) == ENROLL_EK_UNTRUSTED,
	      "an unrelated root: an intermediate sent does not make the chain trusted (%s)", r.why);
	CHECK(try_enroll(other, 1, "ek_rsa.der", "ek_rsa_stray.bin", &r) == ENROLL_EK_UNTRUSTED &&
		      strstr(r.why, "ek_chain"),
	      "an ek_chain that is not DER certificates: refused (%s)", r.why);
}

static void test_ekcert(void)
{
	struct blob ff = cert_file("ek_rsa_ff.bin"), der = cert_file("ek_rsa.der");
	struct blob chain = cert_file("chain_ff.bin");
	size_t n = 0, off = 0;
	uint8_t two[4096];

	CHECK(ekcert_trim(ff.p, ff.n, &n) == 0 && n == der.n, "trim: DER length from the header");
	CHECK(ekcert_trim(der.p, der.n - 1, &n) != 0, "trim: a certificate cut short");
	CHECK(ekcert_trim(ff.p + 1, ff.n - 1, &n) != 0, "trim: no SEQUENCE at the start");
	CHECK(ekcert_trim(ff.p, 1, &n) != 0 && ekcert_trim(NULL, 0, &n) != 0, "trim: too short");
	memset(two, 0xFF, 8);
	CHECK(ekcert_trim(two, 8, &n) != 0, "trim: only fill is no certificate");
	/* Two certificates, then fill: both found, then the end. */
	memcpy(two, der.p, der.n);
	memcpy(two + der.n, chain.p, chain.n);
	CHECK(ekcert_next(two, der.n + chain.n, &off, &n) == 0 && n == der.n &&
		      ekcert_next(two, der.n + chain.n, &off, &n) == 0 &&
		      ekcert_next(two, der.n + chain.n, &off, &n) == 1 && off == der.n + chain.n,
	      "next: two certificates and fill");
	two[der.n] = 0x31;
	off = 0;
	CHECK(ekcert_next(two, der.n + chain.n, &off, &n) == 0 &&
		      ekcert_next(two, der.n + chain.n, &off, &n) < 0,
	      "next: a SET where a certificate should be");
	free(ff.p);
	free(der.p);
	free(chain.p);
}

static void test_wire(void)
{
	struct enroll_request req, back;
	uint8_t chain[3] = {1, 2, 3};
	const char *why = NULL;
	char *json;

	memset(&req, 0, sizeof(req));
	snprintf(req.agent_id, sizeof(req.agent_id), "%s", "a1");
	req.ek_pub = ek_pub.p;
	req.ek_pub_len = ek_pub.n;
	req.ak_pub = ak_pub.p;
	req.ak_pub_len = ak_pub.n;
	req.ek_cert = chain;
	req.ek_cert_len = 3;
	json = enroll_request_encode(&req);
	CHECK(json && !strstr(json, "ek_chain") &&
		      enroll_request_parse(json, strlen(json), &back, &why) == 0 && !back.ek_chain,
	      "no ek_chain: the field is left out and parses as none");
	enroll_request_release(&back);
	free(json);
	req.ek_chain = chain;
	req.ek_chain_len = 3;
	json = enroll_request_encode(&req);
	CHECK(json && enroll_request_parse(json, strlen(json), &back, &why) == 0 &&
		      back.ek_chain_len == 3 && !memcmp(back.ek_chain, chain, 3),
	      "ek_chain round trip");
	enroll_request_release(&back);
	free(json);
	json = strdup("{\"agent_id\":\"a\",\"ek_pub\":\"AAE=\",\"ek_cert\":\"\",\"ak_pub\":\"AAE=\","
		      "\"ek_chain\":5}");
	CHECK(json && enroll_request_parse(json, strlen(json), &back, &why) != 0 && why &&
		      strstr(why, "ek_chain"), "ek_chain not base64: refused (%s)", why ? why : "");
	free(json);
}

int main(void)
{
	ek_pub = load("ek.pub");
	ak_pub = load("ak_rsassa.pub");
	CASE(test_ekcert);
	CASE(test_padding);
	CASE(test_anchors);
	CASE(test_wire);
	free(ek_pub.p);
	free(ak_pub.p);
	return check_finish();
}
