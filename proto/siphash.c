/* SipHash-2-4 (Aumasson and Bernstein, 2012), the reference algorithm; see siphash.h. */
#include "proto/siphash.h"


#define ROTL64(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                   \
	do {                                                                       \
		v0 += v1; v1 = ROTL64(v1, 13); v1 ^= v0; v0 = ROTL64(v0, 32);      \
		v2 += v3; v3 = ROTL64(v3, 16); v3 ^= v2;                           \
		v0 += v3; v3 = ROTL64(v3, 21); v3 ^= v0;                           \
		v2 += v1; v1 = ROTL64(v1, 17); v1 ^= v2; v2 = ROTL64(v2, 32);      \
	} while (0)

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

uint64_t siphash24(const uint64_t key[2], const void *data, size_t len)
{
	const uint8_t *in = data;
	uint64_t v0 = 0x736f6d6570736575ULL ^ key[0], v1 = 0x646f72616e646f6dULL ^ key[1];
	uint64_t v2 = 0x6c7967656e657261ULL ^ key[0], v3 = 0x7465646279746573ULL ^ key[1];
	uint64_t b = (uint64_t)len << 56, m;
	size_t full = len - len % 8, i;

	for (i = 0; i < full; i += 8) {
		m = le64(in + i);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t j = 0; j < len % 8; j++)
		b |= (uint64_t)in[full + j] << (8 * j);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}
