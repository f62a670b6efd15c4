/*
 * The Authenticode digest (proto/authenticode.c) on a hand-built PE32+ image whose expected
 * digest is computed here over the ranges the specification names, with OpenSSL one-shot
 * calls: the CheckSum field, the Certificate Table entry and the certificates themselves are
 * left out (a signature must not change the digest), sections are hashed in file order whatever
 * the section table's order, the bytes after the last section are hashed; and malformed images
 * are refused with the field named. (The digest of the real guest kernel is checked against the
 * one OVMF logs in tests/vm/50-eventlog.sh and tests/e2e/74-measured-boot.sh.)
 */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/authenticode.h"
#include "tests/unit/check.h"

#define PE_OFF 0x80u
#define OH (PE_OFF + 24u)            /* optional header */
#define CSUM (OH + 64u)
#define CERTDIR (OH + 112u + 8u * 4u) /* data directory 4 */
#define SECTABLE (OH + 240u)
#define HEADERS 0x200u
#define SEC_A 0x200u /* second in the table, first in the file */
#define SEC_B 0x400u
#define EXTRA 0x600u
#define CERT 0x640u
#define IMG_LEN (CERT + 0x80u)

static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, v), put16(p + 2, v >> 16); }

static void build(uint8_t *img)
{
	memset(img, 0, IMG_LEN);
	for (size_t i = 0; i < IMG_LEN; i++)
		img[i] = (uint8_t)(i * 7 + 3);
	img[0] = 'M', img[1] = 'Z';
	put32(img + 0x3c, PE_OFF);
	memcpy(img + PE_OFF, "PE\0\0", 4);
	put16(img + PE_OFF + 4, 0x8664);
	put16(img + PE_OFF + 6, 2);     /* NumberOfSections */
	put16(img + PE_OFF + 20, 240);  /* SizeOfOptionalHeader */
	put16(img + OH, 0x20b);         /* PE32+ */
	put32(img + OH + 60, HEADERS);  /* SizeOfHeaders */
	put32(img + OH + 108, 16);      /* NumberOfRvaAndSizes */
	put32(img + CERTDIR, CERT);
	put32(img + CERTDIR + 4, IMG_LEN - CERT);
	/* section table: B first, then A (the digest goes by PointerToRawData) */
	memcpy(img + SECTABLE, ".b\0\0\0\0\0\0", 8);
	put32(img + SECTABLE + 16, 0x200);
	put32(img + SECTABLE + 20, SEC_B);
	memcpy(img + SECTABLE + 40, ".a\0\0\0\0\0\0", 8);
	put32(img + SECTABLE + 40 + 16, 0x200);
	put32(img + SECTABLE + 40 + 20, SEC_A);
}

static void expected(const uint8_t *img, uint8_t *out)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	EVP_DigestInit_ex(c, EVP_sha256(), NULL);
	EVP_DigestUpdate(c, img, CSUM);
	EVP_DigestUpdate(c, img + CSUM + 4, CERTDIR - CSUM - 4);
	EVP_DigestUpdate(c, img + CERTDIR + 8, HEADERS - CERTDIR - 8);
	EVP_DigestUpdate(c, img + SEC_A, 0x200);
	EVP_DigestUpdate(c, img + SEC_B, 0x200);
	EVP_DigestUpdate(c, img + EXTRA, CERT - EXTRA);
	EVP_DigestFinal_ex(c, out, NULL);
	EVP_MD_CTX_free(c);
}

static int digest(const uint8_t *img, size_t len, uint8_t *out, const char **why)
{
	return authenticode_digest(alg_by_id(TPM2_ALG_SHA256), img, len, out, why);
}

static void test_digest(void)
{
	static uint8_t img[IMG_LEN], copy[IMG_LEN];
	uint8_t want[32], got[32], other[32];
	const char *why = "";

	build(img);
	expected(img, want);
	CHECK(digest(img, IMG_LEN, got, &why) == 0 && !memcmp(got, want, 32), "the specification's ranges (%s)", why);
	memcpy(copy, img, IMG_LEN);
	put32(copy + CSUM, 0x12345678);
	put32(copy + CERTDIR + 4, IMG_LEN - CERT); /* same size */
	copy[CERT + 5] ^= 0xff;
	CHECK(digest(copy, IMG_LEN, other, &why) == 0 && !memcmp(other, want, 32),
	      "CheckSum and the certificates are left out");
	memcpy(copy, img, IMG_LEN);
	copy[SEC_A + 1] ^= 1;
	CHECK(digest(copy, IMG_LEN, other, &why) == 0 && memcmp(other, want, 32), "a section byte counts");
	memcpy(copy, img, IMG_LEN);
	copy[EXTRA + 1] ^= 1;
	CHECK(digest(copy, IMG_LEN, other, &why) == 0 && memcmp(other, want, 32), "bytes after the sections count");
	memcpy(copy, img, IMG_LEN);
	put32(copy + CERTDIR + 4, 0);
	CHECK(digest(copy, IMG_LEN, other, &why) == 0 && memcmp(other, want, 32),
	      "without a certificate table the trailing bytes are hashed too");
	memcpy(copy, img, IMG_LEN);
	put32(copy + OH + 108, 4); /* no Certificate Table entry at all */
	CHECK(digest(copy, IMG_LEN, other, &why) == 0 && memcmp(other, want, 32),
	      "with 4 data directories the entry's bytes are header bytes like the others");
}

static void test_refusals(void)
{
	static uint8_t img[IMG_LEN], copy[IMG_LEN];
	uint8_t d[32];
	struct {
		const char *what;
		size_t off;
		uint32_t value;
		int bytes;
		const char *why;
	} bad[] = {
		{"no MZ", 0, 'X', 1, "MZ"},
		{"e_lfanew past the end", 0x3c, IMG_LEN, 4, "e_lfanew"},
		{"no PE signature", PE_OFF, 'X', 1, "e_lfanew"},
		{"97 sections", PE_OFF + 6, 97, 2, "NumberOfSections"},
		{"an optional header past the end", PE_OFF + 20, 0xffff, 2, "optional header"},
		{"neither PE32 nor PE32+", OH, 0x107, 2, "neither PE32"},
		{"SizeOfHeaders past the end", OH + 60, IMG_LEN + 1, 4, "SizeOfHeaders"},
		{"SizeOfHeaders inside the directories", OH + 60, CERTDIR, 4, "SizeOfHeaders"},
		{"a section past the end", SECTABLE + 20, IMG_LEN - 0x100, 4, "section"},
		{"NumberOfRvaAndSizes past the header", OH + 108, 40, 4, "NumberOfRvaAndSizes"},
	};
	const char *why;

	build(img);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(copy, img, IMG_LEN);
		if (bad[i].bytes == 1)
			copy[bad[i].off] = (uint8_t)bad[i].value;
		else if (bad[i].bytes == 2)
			put16(copy + bad[i].off, bad[i].value);
		else
			put32(copy + bad[i].off, bad[i].value);
		why = "";
		CHECK(digest(copy, IMG_LEN, d, &why) == -EINVAL && strstr(why, bad[i].why),
		      "%s refused: %s", bad[i].what, why);
	}
	for (size_t cut = 0; cut < SECTABLE + 80; cut += 7) {
		why = "";
		CHECK(digest(img, cut, d, &why) == -EINVAL, "an image cut at %zu refused (%s)", cut, why);
	}
}

int main(void)
{
	CASE(test_digest);
	CASE(test_refusals);
	return check_finish();
}
