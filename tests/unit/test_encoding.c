/* Hex and base64: RFC 4648 vectors, round trips, and every kind of malformed input. */
#include "proto/encoding.h"
#include "tests/unit/check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void test_base64_vectors(void)
{
	static const struct { const char *plain, *b64; } v[] = {
		{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"},
		{"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char enc[32];
		uint8_t dec[32];

		base64_encode((const uint8_t *)v[i].plain, strlen(v[i].plain), enc);
		CHECK(strcmp(enc, v[i].b64) == 0, "encode '%s' gave '%s'", v[i].plain, enc);
		ssize_t n = base64_decode(v[i].b64, strlen(v[i].b64), dec, sizeof(dec));
		CHECK(n == (ssize_t)strlen(v[i].plain) && memcmp(dec, v[i].plain, (size_t)n) == 0,
		      "decode '%s'", v[i].b64);
	}
}

static void test_base64_rejects(void)
{
	static const char *bad[] = {"Zg=", "Zg", "Z===", "Zm9v\n", " Zm9v", "Zm9-", "Zm=v",
				    "QR==", "Zm9=", "====", "Zg==Zg=="};
	uint8_t out[16];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(base64_decode(bad[i], strlen(bad[i]), out, sizeof(out)) == -EINVAL,
		      "'%s' must be rejected", bad[i]);
	CHECK(base64_decode("Zm9vYmFy", 8, out, 5) == -ENOSPC, "no room must be -ENOSPC");
}

static void test_base64_roundtrip(void)
{
	uint8_t in[257], out[257];
	int bad = 0;

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 7 + 3);
	for (size_t len = 0; len <= sizeof(in); len++) {
		char *enc = base64_encode_alloc(in, len);
		size_t n = 0;
		uint8_t *dec = enc ? base64_decode_alloc(enc, strlen(enc), &n) : NULL;

		if (!dec || n != len || memcmp(dec, in, len))
			bad++;
		free(enc);
		free(dec);
	}
	(void)out;
	CHECK(bad == 0, "%d round trips failed", bad);
}

static void test_hex(void)
{
	uint8_t in[] = {0x00, 0x01, 0xab, 0xff}, out[4];
	char enc[9];

	hex_encode(in, 4, enc);
	CHECK(strcmp(enc, "0001abff") == 0, "hex encode gave '%s'", enc);
	CHECK(hex_decode("0001ABff", 8, out, 4) == 4 && memcmp(in, out, 4) == 0, "hex decode mixed case");
	CHECK(hex_decode("abc", 3, out, 4) == -EINVAL, "odd length");
	CHECK(hex_decode("zz", 2, out, 4) == -EINVAL, "bad digit");
	CHECK(hex_decode("0g", 2, out, 4) == -EINVAL, "bad low digit");
	CHECK(hex_decode("0001abff00", 10, out, 4) == -ENOSPC, "too long");
}

static void test_base64url(void)
{
	static const struct { const char *plain, *b64u; } v[] = {
		{"", ""}, {"f", "Zg"}, {"fo", "Zm8"}, {"foo", "Zm9v"}, {"\xfb\xff", "-_8"},
	};
	static const char *bad[] = {"Z", "Zg==", "Zm9v+", "Zm9/", "Zh", "Zm9", "Zm8=", "Zm 9v"};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char *enc = base64url_encode_alloc((const uint8_t *)v[i].plain, strlen(v[i].plain));
		size_t n = 99;
		uint8_t *dec = base64url_decode_alloc(v[i].b64u, strlen(v[i].b64u), &n);

		CHECK(enc && strcmp(enc, v[i].b64u) == 0, "base64url of '%s' gave '%s'", v[i].plain,
		      enc ? enc : "(null)");
		CHECK(dec && n == strlen(v[i].plain) && memcmp(dec, v[i].plain, n) == 0,
		      "base64url decode '%s'", v[i].b64u);
		free(enc);
		free(dec);
	}
	/* "Zh" and "Zm9" carry bits past the last byte; '+', '/', '=' are not base64url. */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t n;
		uint8_t *dec = base64url_decode_alloc(bad[i], strlen(bad[i]), &n);

		CHECK(!dec, "base64url '%s' must be refused", bad[i]);
		free(dec);
	}
}

int main(void)
{
	CASE(test_base64url);
	CASE(test_base64_vectors);
	CASE(test_base64_rejects);
	CASE(test_base64_roundtrip);
	CASE(test_hex);
	return check_finish();
}
