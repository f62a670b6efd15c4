/* SipHash-2-4 against the reference vectors of the SipHash paper (key 00..0f, message 00..n-1). */
#include "proto/siphash.h"
#include "tests/unit/check.h"

static void test_reference_vectors(void)
{
	/* The key bytes 00..0f as two little-endian words. */
	const uint64_t key[2] = {0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};
	uint8_t msg[64];

	for (unsigned i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	/* vectors.h of the reference implementation, read as little-endian u64 */
	CHECK(siphash24(key, msg, 0) == 0x726fdb47dd0e0e31ULL, "empty message");
	CHECK(siphash24(key, msg, 1) == 0x74f839c593dc67fdULL, "1 byte");
	CHECK(siphash24(key, msg, 7) == 0xab0200f58b01d137ULL, "7 bytes");
	CHECK(siphash24(key, msg, 8) == 0x93f5f5799a932462ULL, "8 bytes");
	CHECK(siphash24(key, msg, 15) == 0xa129ca6149be45e5ULL, "15 bytes (the paper's example)");
	CHECK(siphash24(key, msg, 63) == 0x958a324ceb064572ULL, "63 bytes");
	const uint64_t other[2] = {1, 0};
	CHECK(siphash24(other, msg, 15) != siphash24(key, msg, 15), "the key changes the hash");
}

int main(void)
{
	CASE(test_reference_vectors);
	return check_finish();
}
