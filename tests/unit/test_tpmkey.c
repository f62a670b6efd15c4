/*
 * TPM2B_PUBLIC parsing, names, EVP conversion and AK/EK checks on keys captured from swtpm
 * (tests/data/tpm/): the RSA-2048 EK (tpm2_createek -G rsa), its certificate from NV
 * 0x01C00002, swtpm's P-384 high-range EK, and AKs from tpm2_createak with their .name files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/x509.h>

#include "proto/tpmkey.h"
#include "tests/unit/check.h"
#include "tests/unit/testdata.h"


static void test_ak(const char *stem)
{
	char pn[64], nn[64];
	struct blob p, n;
	TPMT_PUBLIC pub, mod;
	uint8_t name[TPMKEY_NAME_MAX], again[sizeof(TPM2B_PUBLIC)];
	size_t name_len = 0, alen = 0;
	EVP_PKEY *k;
	int bad = 0;

	snprintf(pn, sizeof(pn), "%s.pub", stem);
	snprintf(nn, sizeof(nn), "%s.name", stem);
	p = load(pn);
	n = load(nn);
	CHECK(tpmkey_parse_public(p.p, p.n, &pub) == 0, "%s parses", stem);
	CHECK(tpmkey_name(&pub, name, &name_len) == 0 && name_len == n.n && !memcmp(name, n.p, n.n),
	      "%s name equals tpm2_createak -n", stem);
	CHECK(tpmkey_marshal_public(&pub, again, sizeof(again), &alen) == 0 && alen == p.n &&
		      !memcmp(again, p.p, p.n), "%s marshal round trip", stem);
	CHECK(tpmkey_marshal_public(&pub, again, 10, &alen) == -ENOSPC, "%s marshal small buf", stem);
	k = tpmkey_to_evp(&pub);
	CHECK(k != NULL, "%s to EVP", stem);
	CHECK(tpmkey_matches_evp(&pub, k), "%s matches its EVP", stem);
	EVP_PKEY_free(k);
	CHECK(tpmkey_check_ak(&pub) == TPMKEY_OK, "%s is an AK", stem);
	CHECK(tpmkey_check_ek(&pub) != TPMKEY_OK, "%s is no EK", stem);

	/* each required attribute missing, decrypt added */
	const TPMA_OBJECT need[] = {TPMA_OBJECT_RESTRICTED, TPMA_OBJECT_SIGN_ENCRYPT,
				    TPMA_OBJECT_FIXEDTPM, TPMA_OBJECT_FIXEDPARENT,
				    TPMA_OBJECT_SENSITIVEDATAORIGIN, TPMA_OBJECT_USERWITHAUTH};
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		mod = pub;
		mod.objectAttributes &= ~need[i];
		CHECK(tpmkey_check_ak(&mod) == TPMKEY_BAD_ATTRIBUTES, "%s without attr %#x", stem,
		      (unsigned)need[i]);
	}
	mod = pub;
	mod.objectAttributes |= TPMA_OBJECT_DECRYPT;
	CHECK(tpmkey_check_ak(&mod) == TPMKEY_BAD_ATTRIBUTES, "%s with decrypt", stem);
	mod = pub;
	mod.nameAlg = TPM2_ALG_SHA1;
	CHECK(tpmkey_check_ak(&mod) == TPMKEY_BAD_NAME_ALG, "%s sha1 nameAlg", stem);
	mod = pub;
	if (pub.type == TPM2_ALG_RSA) {
		mod.parameters.rsaDetail.scheme.scheme = TPM2_ALG_NULL;
		CHECK(tpmkey_check_ak(&mod) == TPMKEY_BAD_SCHEME, "%s no scheme", stem);
		mod = pub;
		mod.parameters.rsaDetail.scheme.details.anySig.hashAlg = TPM2_ALG_SHA1;
		CHECK(tpmkey_check_ak(&mod) == TPMKEY_BAD_SCHEME, "%s sha1 scheme", stem);
		mod = pub;
		mod.unique.rsa.size = 128;
		CHECK(tpmkey_to_evp(&mod) == NULL, "%s modulus shorter than keyBits", stem);
	} else {
		mod.parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDH;
		CHECK(tpmkey_check_ak(&mod) == TPMKEY_BAD_SCHEME, "%s ecdh scheme", stem);
		mod = pub;
		mod.unique.ecc.y.buffer[5] ^= 1;
		CHECK(tpmkey_to_evp(&mod) == NULL, "%s point off the curve", stem);
		mod = pub;
		mod.unique.ecc.x.size = 31;
		CHECK(tpmkey_to_evp(&mod) == NULL, "%s short coordinate", stem);
	}

	for (size_t l = 0; l < p.n; l++)
		if (tpmkey_parse_public(p.p, l, &mod) != -EINVAL)
			bad++;
	CHECK(bad == 0, "%s: %d truncations accepted", stem, bad);
	p.p[p.n] = 0;
	CHECK(tpmkey_parse_public(p.p, p.n + 1, &mod) == -EINVAL, "%s trailing byte", stem);
	/* outer size one larger than the content: unmarshal must not run past it */
	p.p[1]++;
	CHECK(tpmkey_parse_public(p.p, p.n, &mod) == -EINVAL, "%s size field +1", stem);
	p.p[1]--;
	/* bit flips: rejected, or a different key with a different name; never a crash */
	bad = 0;
	for (size_t i = 0; i < p.n * 8; i++) {
		uint8_t nm[TPMKEY_NAME_MAX];
		size_t nl = 0;
		p.p[i / 8] ^= (uint8_t)(1u << (i % 8));
		if (tpmkey_parse_public(p.p, p.n, &mod) == 0) {
			EVP_PKEY_free(tpmkey_to_evp(&mod));
			(void)tpmkey_check_ak(&mod);
			if (tpmkey_name(&mod, nm, &nl) == 0 && nl == name_len && !memcmp(nm, name, nl))
				bad++;
		}
		p.p[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	CHECK(bad == 0, "%s: %d bit flips kept the name", stem, bad);
	free(p.p);
	free(n.p);
}

static void test_ek(void)
{
	struct blob p = load("ek.pub"), c = load("ek_cert.der"), a = load("ak_rsassa.pub");
	struct blob e = load("ekecc.pub");
	TPMT_PUBLIC ek, mod, ak, ecc;
	const uint8_t *cp = c.p;
	X509 *cert = d2i_X509(NULL, &cp, (long)c.n);
	EVP_PKEY *ck = cert ? X509_get0_pubkey(cert) : NULL;

	CHECK(tpmkey_parse_public(p.p, p.n, &ek) == 0, "EK parses");
	CHECK(tpmkey_parse_public(a.p, a.n, &ak) == 0, "AK parses");
	CHECK(tpmkey_check_ek(&ek) == TPMKEY_OK, "EK matches template L-1");
	CHECK(tpmkey_check_ak(&ek) != TPMKEY_OK, "EK is no AK");
	CHECK(ck != NULL, "EK cert parses");
	CHECK(tpmkey_matches_evp(&ek, ck), "EK cert key equals EK");
	CHECK(!tpmkey_matches_evp(&ak, ck), "EK cert key is not the AK");
	CHECK(!tpmkey_matches_evp(&ek, NULL), "NULL key");

	mod = ek;
	mod.authPolicy.buffer[31] ^= 1;
	CHECK(tpmkey_check_ek(&mod) == TPMKEY_BAD_POLICY, "EK policy altered");
	mod = ek;
	mod.authPolicy.size = 0;
	CHECK(tpmkey_check_ek(&mod) == TPMKEY_BAD_POLICY, "EK without policy");
	mod = ek;
	mod.objectAttributes |= TPMA_OBJECT_USERWITHAUTH;
	CHECK(tpmkey_check_ek(&mod) == TPMKEY_BAD_ATTRIBUTES, "EK userWithAuth");
	mod = ek;
	mod.objectAttributes &= ~TPMA_OBJECT_RESTRICTED;
	CHECK(tpmkey_check_ek(&mod) == TPMKEY_BAD_ATTRIBUTES, "EK not restricted");
	mod = ek;
	mod.parameters.rsaDetail.symmetric.keyBits.aes = 256;
	CHECK(tpmkey_check_ek(&mod) == TPMKEY_BAD_SYMMETRIC, "EK AES-256");
	mod = ek;
	mod.nameAlg = TPM2_ALG_SHA384;
	CHECK(tpmkey_check_ek(&mod) == TPMKEY_BAD_NAME_ALG, "EK sha384 nameAlg");
	mod = ek;
	mod.parameters.rsaDetail.keyBits = 3072;
	CHECK(tpmkey_check_ek(&mod) == TPMKEY_BAD_TYPE, "EK 3072 bits");

	CHECK(tpmkey_parse_public(e.p, e.n, &ecc) == 0, "P-384 EK parses");
	CHECK(tpmkey_check_ek(&ecc) == TPMKEY_BAD_TYPE, "P-384 high-range EK is not L-2");
	{
		EVP_PKEY *k = tpmkey_to_evp(&ecc);
		CHECK(k && EVP_PKEY_get_bits(k) == 384, "P-384 EK to EVP");
		EVP_PKEY_free(k);
	}
	CHECK(!strcmp(tpmkey_check_str(TPMKEY_BAD_POLICY), "bad_policy"), "check str");
	CHECK(tpmkey_parse_public(NULL, 0, &mod) == -EINVAL, "NULL input");
	X509_free(cert);
	free(p.p);
	free(c.p);
	free(a.p);
	free(e.p);
}

int main(void)
{
	CHECK_CASE("ak rsassa", test_ak("ak_rsassa"));
	CHECK_CASE("ak rsapss", test_ak("ak_rsapss"));
	CHECK_CASE("ak ecdsa", test_ak("ak_ecdsa"));
	CASE(test_ek);
	return check_finish();
}
