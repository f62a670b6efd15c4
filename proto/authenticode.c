/* The Authenticode digest of a PE/COFF image; the contract is in authenticode.h. */
#include "proto/authenticode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#define PE32_MAGIC 0x10b
#define PE32PLUS_MAGIC 0x20b
#define DIR_SECURITY 4u /* the Certificate Table's index among the data directories */

static uint32_t le16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

struct section {
	uint32_t ptr, size;
};

static int by_ptr(const void *a, const void *b)
{
	const struct section *x = a, *y = b;

	return x->ptr < y->ptr ? -1 : x->ptr > y->ptr;
}

/* The layout facts the digest needs, each checked against len. */
struct pe {
	size_t csum;         /* offset of CheckSum */
	size_t certdir;      /* offset of the Certificate Table entry; 0: none */
	size_t headers;      /* SizeOfHeaders */
	uint32_t cert_size;  /* the Certificate Table's size */
	unsigned nsec;
	struct section sec[AUTHENTICODE_MAX_SECTIONS];
};

static int pe_layout(const uint8_t *img, size_t len, struct pe *pe, const char **why)
{
	size_t sig, oh, table, dirs;
	uint32_t magic, optsize, nrva;

	memset(pe, 0, sizeof(*pe));
	if (len < 0x40 || img[0] != 'M' || img[1] != 'Z') {
		*why = "not a PE/COFF image: no MZ header";
		return -EINVAL;
	}
	sig = le32(img + 0x3c);
	if (sig > len || len - sig < 24 || memcmp(img + sig, "PE\0\0", 4) != 0) {
		*why = "not a PE/COFF image: e_lfanew does not point at a PE signature";
		return -EINVAL;
	}
	pe->nsec = le16(img + sig + 6);
	optsize = le16(img + sig + 20);
	oh = sig + 24;
	if (pe->nsec > AUTHENTICODE_MAX_SECTIONS) {
		*why = "NumberOfSections is past the PE/COFF limit of 96";
		return -EINVAL;
	}
	if (optsize < 2 || oh + optsize > len) {
		*why = "the optional header is outside the file";
		return -EINVAL;
	}
	magic = le16(img + oh);
	if (magic == PE32_MAGIC && optsize >= 96) {
		nrva = le32(img + oh + 92);
		dirs = 96;
	} else if (magic == PE32PLUS_MAGIC && optsize >= 112) {
		nrva = le32(img + oh + 108);
		dirs = 112;
	} else {
		*why = "the optional header is neither PE32 nor PE32+ (or too short)";
		return -EINVAL;
	}
	pe->csum = oh + 64;
	pe->headers = le32(img + oh + 60);
	if (nrva > (optsize - dirs) / 8) {
		*why = "NumberOfRvaAndSizes names directories past the optional header";
		return -EINVAL;
	}
	if (nrva > DIR_SECURITY) {
		pe->certdir = oh + dirs + 8 * DIR_SECURITY;
		pe->cert_size = le32(img + pe->certdir + 4);
	}
	table = oh + optsize;
	if (pe->headers > len || pe->headers < (pe->certdir ? pe->certdir + 8 : pe->csum + 4) ||
	    table + 40u * pe->nsec > len) {
		*why = "SizeOfHeaders or the section table is outside the file";
		return -EINVAL;
	}
	for (unsigned i = 0; i < pe->nsec; i++) {
		const uint8_t *s = img + table + 40u * i;

		pe->sec[i].size = le32(s + 16);
		pe->sec[i].ptr = le32(s + 20);
		if (pe->sec[i].size && (pe->sec[i].ptr > len || pe->sec[i].size > len - pe->sec[i].ptr)) {
			*why = "a section's raw data is outside the file";
			return -EINVAL;
		}
	}
	qsort(pe->sec, pe->nsec, sizeof(pe->sec[0]), by_ptr);
	return 0;
}

int authenticode_digest(const struct alg *alg, const uint8_t *img, size_t len, uint8_t *out,
			const char **why)
{
	struct pe *pe = malloc(sizeof(*pe));
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	const EVP_MD *md = alg_evp_md(alg);
	size_t sum;
	int ret = -ENOMEM;
	bool ok;

	*why = NULL;
	if (!pe || !ctx || !md) {
		*why = "out of memory";
		goto out;
	}
	ret = pe_layout(img, len, pe, why);
	if (ret)
		goto out;
	ok = EVP_DigestInit_ex(ctx, md, NULL) == 1 && EVP_DigestUpdate(ctx, img, pe->csum) == 1;
	if (pe->certdir)
		ok = ok && EVP_DigestUpdate(ctx, img + pe->csum + 4, pe->certdir - (pe->csum + 4)) == 1 &&
		     EVP_DigestUpdate(ctx, img + pe->certdir + 8, pe->headers - (pe->certdir + 8)) == 1;
	else
		ok = ok && EVP_DigestUpdate(ctx, img + pe->csum + 4, pe->headers - (pe->csum + 4)) == 1;
	sum = pe->headers;
	for (unsigned i = 0; ok && i < pe->nsec; i++) {
		if (!pe->sec[i].size)
			continue;
		ok = EVP_DigestUpdate(ctx, img + pe->sec[i].ptr, pe->sec[i].size) == 1;
		sum += pe->sec[i].size;
	}
	/* EDK2 (DxeTpm2MeasureBootLib): what lies past the bytes hashed, less the certificates. */
	if (ok && len > sum && len - sum > pe->cert_size)
		ok = EVP_DigestUpdate(ctx, img + sum, len - sum - pe->cert_size) == 1;
	ok = ok && EVP_DigestFinal_ex(ctx, out, NULL) == 1;
	ret = ok ? 0 : -EIO;
	if (!ok)
		*why = "openssl digest failed";
out:
	EVP_MD_CTX_free(ctx);
	free(pe);
	return ret;
}
