/*
 * TPM2B_PUBLIC parsing, names, EVP conversion and AK/EK checks on keys captured from swtpm
 * (tests/data/tpm/): the RSA-2048 EK (tpm2_createek -G rsa), its certificate from NV
 * 0x01C00002, swtpm's P-384 high-range EK, and AKs from tpm2_createak with their .name files.
 * The EK and AK templates: the bytes attestd has always created from, the keys tpm2-tools
 * makes, and exactly what the checks accept.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/x509.h>
#include <tss2/tss2_mu.h>

#include "proto/encoding.h"
#include "proto/tpmkey.h"
#include "tests/unit/check.h"
#include "tests/unit/testdata.h"


static void test_ak(const char *stem)
{
	char pn[64], nn[64];
	struct blob p, n;
	TPMT_PUBLIC pub, mod;
	uint8_t name[LIMIT_TPM_NAME], again[sizeof(TPM2B_PUBLIC)];
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
		uint8_t nm[LIMIT_TPM_NAME];
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
	CHECK(tpmkey_check_ek(&mod) == TPMKEY_BAD_SYMMETRIC,
	      "EK 3072 bits with L-1's AES-128: not H-6 (AES-256)");
	mod = ek;
	mod.parameters.rsaDetail.keyBits = 1024;
	CHECK(tpmkey_check_ek(&mod) == TPMKEY_BAD_TYPE, "EK 1024 bits: no profile");
	{
		const struct tpmkey_ek_profile *pr = tpmkey_ek_profile_of(&ek);
		CHECK(pr && pr->cert_nv_index == 0x01c00002u && !strncmp(pr->name, "L-1", 3),
		      "the swtpm RSA EK is L-1, certificate at 0x01c00002");
	}

	/* swtpm's ECC EK: the high-range template H-3 (P-384, sha384, PolicyB, AES-256). */
	CHECK(tpmkey_parse_public(e.p, e.n, &ecc) == 0, "P-384 EK parses");
	CHECK(tpmkey_check_ek(&ecc) == TPMKEY_OK, "P-384 high-range EK matches H-3");
	{
		const struct tpmkey_ek_profile *pr = tpmkey_ek_profile_of(&ecc);
		CHECK(pr && pr->cert_nv_index == 0x01c00016u && !strncmp(pr->name, "H-3", 3),
		      "its profile is H-3, certificate at 0x01c00016");
	}
	mod = ecc;
	mod.objectAttributes &= ~TPMA_OBJECT_USERWITHAUTH;
	CHECK(tpmkey_check_ek(&mod) == TPMKEY_BAD_ATTRIBUTES, "H-3 without userWithAuth");
	mod = ecc;
	mod.parameters.eccDetail.symmetric.keyBits.aes = 128;
	CHECK(tpmkey_check_ek(&mod) == TPMKEY_BAD_SYMMETRIC, "H-3 with AES-128");
	mod = ecc;
	mod.nameAlg = TPM2_ALG_SHA256;
	CHECK(tpmkey_check_ek(&mod) == TPMKEY_BAD_NAME_ALG, "H-3 with a sha256 nameAlg");
	mod = ecc;
	mod.authPolicy = ek.authPolicy;
	CHECK(tpmkey_check_ek(&mod) == TPMKEY_BAD_POLICY, "H-3 with PolicyA");
	mod = ek;
	mod.objectAttributes |= TPMA_OBJECT_USERWITHAUTH;
	mod.authPolicy.size = 32;
	memcpy(mod.authPolicy.buffer, "\xca\x3d\x0a\x99\xa2\xb9\x39\x06\xf7\xa3\x34\x24\x14\xef\xcf\xb3"
	       "\xa3\x85\xd4\x4c\xd1\xfd\x45\x90\x89\xd1\x9b\x50\x71\xc0\xb7\xa0", 32);
	CHECK(tpmkey_check_ek(&mod) == TPMKEY_OK && tpmkey_ek_profile_of(&mod) &&
		      tpmkey_ek_profile_of(&mod)->cert_nv_index == 0x01c00012u,
	      "the RSA key with userWithAuth and PolicyB: H-1");
	mod.objectAttributes &= ~TPMA_OBJECT_USERWITHAUTH;
	CHECK(tpmkey_check_ek(&mod) == TPMKEY_BAD_ATTRIBUTES, "PolicyB without userWithAuth");
	{
		size_t n = 0;
		const struct tpmkey_ek_profile *all = tpmkey_ek_profiles(&n);
		unsigned indices = 0;

		for (size_t i = 0; i < n; i++)
			indices += all[i].cert_nv_index >= 0x01c00002u && all[i].cert_nv_index <= 0x01c0001eu;
		CHECK(n == 8 && indices == 8, "8 profiles, each with an EK certificate index");
	}
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

/* --- templates ------------------------------------------------------------------------- */

#define EK_POLICY_HEX "837197674484b3f81a90cc8d46a5d724fd52d76e06520b64f2a1da1b331469aa"
#define ZEROS32_HEX "0000000000000000000000000000000000000000000000000000000000000000"

/*
 * Marshalled templates. RSA EK and both AKs: the bytes attestd/tpm.c created from before the
 * templates moved to proto/tpmkey (CreatePrimary derives the EK from them: a changed byte is
 * another key than the certificate's). ECC EK: TCG EK Credential Profile template L-2.
 */
static const struct {
	const char *what;
	bool ek;
	enum tpmkey_kind kind;
	const char *head; /* followed by `zeros` zero bytes (the unique), then the end */
	size_t zeros;
} golden[] = {
	{ "EK RSA-2048 (L-1)", true, TPMKEY_RSA2048,
	  "013a0001000b000300b20020" EK_POLICY_HEX "00060080004300100800000000000100", 256 },
	{ "EK P-256 (L-2)", true, TPMKEY_ECC_P256,
	  "007a0023000b000300b20020" EK_POLICY_HEX "0006008000430010000300100020" ZEROS32_HEX
	  "0020", 32 },
	{ "AK RSA-2048", false, TPMKEY_RSA2048, "00180001000b00050072000000100014000b0800000000000000", 0 },
	{ "AK P-256", false, TPMKEY_ECC_P256, "00180023000b00050072000000100018000b0003001000000000", 0 },
};

static void template_of(bool ek, enum tpmkey_kind kind, TPM2B_PUBLIC *t)
{
	if (ek)
		tpmkey_ek_template(t, kind);
	else
		tpmkey_ak_template(t, kind);
}

static bool template_bytes(const TPMT_PUBLIC *pub, uint8_t *buf, size_t cap, size_t *len)
{
	return tpmkey_marshal_public(pub, buf, cap, len) == 0;
}

/* The key's public part as the TPM writes it into the template's unique. */
static bool put_unique(TPMT_PUBLIC *pub, EVP_PKEY *k)
{
	BIGNUM *a = NULL, *b = NULL;
	bool ok;

	if (pub->type == TPM2_ALG_RSA) {
		ok = EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_N, &a) &&
		     BN_bn2binpad(a, pub->unique.rsa.buffer, 256) == 256;
		pub->unique.rsa.size = 256;
	} else {
		ok = EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_X, &a) &&
		     EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_Y, &b) &&
		     BN_bn2binpad(a, pub->unique.ecc.x.buffer, 32) == 32 &&
		     BN_bn2binpad(b, pub->unique.ecc.y.buffer, 32) == 32;
		pub->unique.ecc.x.size = 32;
		pub->unique.ecc.y.size = 32;
	}
	BN_free(a);
	BN_free(b);
	return ok;
}

static void test_template_bytes(void)
{
	for (size_t g = 0; g < sizeof(golden) / sizeof(golden[0]); g++) {
		uint8_t want[sizeof(TPM2B_PUBLIC)], got[sizeof(TPM2B_PUBLIC)];
		size_t hl = strlen(golden[g].head), wl = hl / 2 + golden[g].zeros, gl = 0;
		TPM2B_PUBLIC t;

		memset(want, 0, sizeof(want));
		CHECK(hex_decode(golden[g].head, hl, want, sizeof(want)) == (ssize_t)(hl / 2),
		      "%s: golden hex", golden[g].what);
		template_of(golden[g].ek, golden[g].kind, &t);
		CHECK(t.size == 0, "%s: size left to marshalling", golden[g].what);
		CHECK(template_bytes(&t.publicArea, got, sizeof(got), &gl) && gl == wl &&
			      memcmp(got, want, wl) == 0,
		      "%s: template bytes unchanged (%zu bytes, want %zu)", golden[g].what, gl, wl);
	}
}

/* What tpm2_createek -G rsa and tpm2_createak made on swtpm is our template plus a unique. */
static void test_template_is_tpm2_tools(const char *file, bool ek, enum tpmkey_kind kind)
{
	struct blob p = load(file);
	TPMT_PUBLIC pub;
	TPM2B_PUBLIC t;
	uint8_t a[sizeof(TPM2B_PUBLIC)], b[sizeof(TPM2B_PUBLIC)];
	size_t al = 0, bl = 0;

	CHECK(tpmkey_parse_public(p.p, p.n, &pub) == 0, "%s parses", file);
	template_of(ek, kind, &t);
	pub.unique = t.publicArea.unique;
	CHECK(template_bytes(&pub, a, sizeof(a), &al) &&
		      template_bytes(&t.publicArea, b, sizeof(b), &bl) && al == bl &&
		      memcmp(a, b, al) == 0,
	      "%s without its unique is the %s template", file, ek ? "EK" : "AK");
	free(p.p);
}

/* The checks accept each template holding a real key, and reject any change to a field. */
static void test_template_is_checked(bool ek, enum tpmkey_kind kind)
{
	const char *what = ek ? (kind == TPMKEY_RSA2048 ? "EK rsa" : "EK p256")
			      : (kind == TPMKEY_RSA2048 ? "AK rsa" : "AK p256");
	EVP_PKEY *k = kind == TPMKEY_RSA2048 ? EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048)
					     : EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	enum tpmkey_check (*check)(const TPMT_PUBLIC *) = ek ? tpmkey_check_ek : tpmkey_check_ak;
	TPM2B_PUBLIC t;
	TPMT_PUBLIC pub, mod;
	EVP_PKEY *back;
	int bad = 0;

	template_of(ek, kind, &t);
	pub = t.publicArea;
	CHECK(check(&pub) == TPMKEY_BAD_TYPE, "%s: the bare template holds no key", what);
	CHECK(k && put_unique(&pub, k), "%s: key into the template", what);
	CHECK(check(&pub) == TPMKEY_OK, "%s: the template with a key passes the check", what);
	CHECK((ek ? tpmkey_check_ak : tpmkey_check_ek)(&pub) != TPMKEY_OK,
	      "%s: and not the other role's", what);
	back = tpmkey_to_evp(&pub);
	CHECK(back && EVP_PKEY_eq(back, k) == 1, "%s: the key comes back out", what);
	EVP_PKEY_free(back);

	/* Every attribute the template sets is required; an EK's must match exactly. */
	for (unsigned bit = 0; bit < 32; bit++) {
		TPMA_OBJECT m = (TPMA_OBJECT)1u << bit;

		mod = pub;
		mod.objectAttributes ^= m;
		if ((pub.objectAttributes & m) || ek) {
			if (check(&mod) != TPMKEY_BAD_ATTRIBUTES)
				bad++;
		}
	}
	CHECK(bad == 0, "%s: %d attribute flips accepted", what, bad);
	mod = pub;
	mod.nameAlg = TPM2_ALG_SHA1;
	CHECK(check(&mod) == TPMKEY_BAD_NAME_ALG, "%s: sha1 nameAlg", what);
	if (ek) {
		mod = pub;
		mod.authPolicy.buffer[0] ^= 0x80;
		CHECK(check(&mod) == TPMKEY_BAD_POLICY, "%s: policy byte", what);
		mod = pub;
		if (kind == TPMKEY_RSA2048)
			mod.parameters.rsaDetail.symmetric.mode.aes = TPM2_ALG_CBC;
		else
			mod.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CBC;
		CHECK(check(&mod) == TPMKEY_BAD_SYMMETRIC, "%s: AES-CBC", what);
		mod = pub;
		if (kind == TPMKEY_RSA2048) {
			mod.parameters.rsaDetail.exponent = 65537;
			CHECK(check(&mod) == TPMKEY_OK, "%s: exponent 65537 spelled out", what);
			mod.parameters.rsaDetail.exponent = 3;
			CHECK(check(&mod) == TPMKEY_BAD_TYPE, "%s: exponent 3", what);
			mod = pub;
			mod.parameters.rsaDetail.scheme.scheme = TPM2_ALG_OAEP;
		} else {
			mod.parameters.eccDetail.kdf.scheme = TPM2_ALG_KDF1_SP800_56A;
		}
		CHECK(check(&mod) == TPMKEY_BAD_SCHEME, "%s: a scheme or KDF set", what);
	} else {
		mod = pub;
		if (kind == TPMKEY_RSA2048)
			mod.parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_AES;
		else
			mod.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
		CHECK(check(&mod) == TPMKEY_BAD_SYMMETRIC, "%s: a symmetric algorithm", what);
	}
	EVP_PKEY_free(k);
}

static void test_templates(void)
{
	TPM2B_PUBLIC a, b;

	test_template_bytes();
	test_template_is_tpm2_tools("ek.pub", true, TPMKEY_RSA2048);
	test_template_is_tpm2_tools("ak_rsassa.pub", false, TPMKEY_RSA2048);
	test_template_is_tpm2_tools("ak_ecdsa.pub", false, TPMKEY_ECC_P256);
	test_template_is_checked(true, TPMKEY_RSA2048);
	test_template_is_checked(true, TPMKEY_ECC_P256);
	test_template_is_checked(false, TPMKEY_RSA2048);
	test_template_is_checked(false, TPMKEY_ECC_P256);
	/* Both AK kinds require the same attributes, and an EK's differ from them. */
	tpmkey_ak_template(&a, TPMKEY_RSA2048);
	tpmkey_ak_template(&b, TPMKEY_ECC_P256);
	CHECK(a.publicArea.objectAttributes == b.publicArea.objectAttributes,
	      "AK attributes do not depend on the kind");
	tpmkey_ek_template(&b, TPMKEY_ECC_P256);
	CHECK(a.publicArea.objectAttributes != b.publicArea.objectAttributes, "EK attributes differ");
}

/*
 * The policy sessions attestd satisfies an EK's authPolicy with: PolicyA (computed) is the
 * low range's policy, and PolicyOR(PolicyA, PolicyC) = H(0..0 || TPM_CC_PolicyOR || A || C)
 * is each high-range row's PolicyB, so the PolicyC digests copied from the profile are right.
 */
static void test_ek_policy_branches(void)
{
	static const uint8_t cc_or[4] = { 0x00, 0x00, 0x01, 0x71 };
	const struct tpmkey_ek_profile *ps, *l1 = tpmkey_ek_profile_by_id("L-1");
	size_t n, high = 0;

	ps = tpmkey_ek_profiles(&n);
	for (size_t i = 0; i < n; i++) {
		TPM2B_DIGEST br[2];
		uint8_t zero[64] = { 0 }, d[64];
		unsigned dlen = 0;
		const EVP_MD *md;
		EVP_MD_CTX *c;
		int k = tpmkey_ek_policy_branches(&ps[i], br);

		if (ps[i].name[0] == 'L') {
			CHECK(k == 0, "%s: PolicySecret alone", ps[i].name);
			continue;
		}
		CHECK(k == 2, "%s: two PolicyOR branches", ps[i].name);
		if (k != 2)
			continue;
		high++;
		md = ps[i].tmpl.nameAlg == TPM2_ALG_SHA256   ? EVP_sha256()
		     : ps[i].tmpl.nameAlg == TPM2_ALG_SHA384 ? EVP_sha384()
							     : EVP_sha512();
		if (ps[i].tmpl.nameAlg == TPM2_ALG_SHA256)
			CHECK(br[0].size == l1->tmpl.authPolicy.size &&
				      !memcmp(br[0].buffer, l1->tmpl.authPolicy.buffer, br[0].size),
			      "%s: PolicyA is the low range's policy", ps[i].name);
		c = EVP_MD_CTX_new();
		EVP_DigestInit_ex(c, md, NULL);
		EVP_DigestUpdate(c, zero, (size_t)EVP_MD_get_size(md));
		EVP_DigestUpdate(c, cc_or, sizeof(cc_or));
		EVP_DigestUpdate(c, br[0].buffer, br[0].size);
		EVP_DigestUpdate(c, br[1].buffer, br[1].size);
		EVP_DigestFinal_ex(c, d, &dlen);
		EVP_MD_CTX_free(c);
		CHECK(dlen == ps[i].tmpl.authPolicy.size &&
			      !memcmp(d, ps[i].tmpl.authPolicy.buffer, dlen),
		      "%s: PolicyOR(PolicyA, PolicyC) is the template's PolicyB", ps[i].name);
	}
	CHECK(high == 6, "six high-range profiles (%zu)", high);
}

/* Operators name a profile by its id; a certificate's key picks the first of its shape. */
static void test_ek_profile_lookup(void)
{
	struct blob c = load("ek_cert.der");
	const uint8_t *q = c.p;
	X509 *x = d2i_X509(NULL, &q, (long)c.n);
	EVP_PKEY *p384 = EVP_EC_gen("P-384"), *p256 = EVP_EC_gen("P-256");
	const struct tpmkey_ek_profile *p;

	CHECK((p = tpmkey_ek_profile_by_id("L-2")) && p->cert_nv_index == 0x01c0000a, "L-2");
	CHECK((p = tpmkey_ek_profile_by_id("h-3")) && p->cert_nv_index == 0x01c00016, "h-3");
	CHECK(!tpmkey_ek_profile_by_id("H-5"), "H-5 (SM2) is not offered");
	CHECK(!tpmkey_ek_profile_by_id("H"), "a prefix is no id");
	CHECK(!tpmkey_ek_profile_by_id(""), "empty");
	CHECK((p = tpmkey_ek_profile_for_key(x ? X509_get0_pubkey(x) : NULL)) &&
		      p->cert_nv_index == 0x01c00002,
	      "an RSA-2048 certificate: L-1");
	CHECK((p = tpmkey_ek_profile_for_key(p256)) && p->cert_nv_index == 0x01c0000a,
	      "a P-256 key: L-2");
	CHECK((p = tpmkey_ek_profile_for_key(p384)) && p->cert_nv_index == 0x01c00016,
	      "a P-384 key: H-3");
	CHECK(!tpmkey_ek_profile_for_key(NULL), "no key");
	X509_free(x);
	EVP_PKEY_free(p256);
	EVP_PKEY_free(p384);
	free(c.p);
}

static void test_ak_rsassa(void)
{
	test_ak("ak_rsassa");
}

static void test_ak_rsapss(void)
{
	test_ak("ak_rsapss");
}

static void test_ak_ecdsa(void)
{
	test_ak("ak_ecdsa");
}

int main(void)
{
	CASE(test_ak_rsassa);
	CASE(test_ak_rsapss);
	CASE(test_ak_ecdsa);
	CASE(test_ek);
	CASE(test_templates);
	CASE(test_ek_policy_branches);
	CASE(test_ek_profile_lookup);
	return check_finish();
}
