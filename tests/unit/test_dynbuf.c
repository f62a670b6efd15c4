/* proto/dynbuf: growth, the cap, the sticky error, NUL termination and ownership hand-off. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dynbuf.h"
#include "tests/unit/check.h"

static void test_append_and_nul(void)
{
	struct dynbuf b;
	char *p;
	size_t n;

	dynbuf_init(&b, 1000);
	CHECK(strcmp(dynbuf_str(&b), "") == 0, "empty buffer reads as \"\"");
	CHECK(dynbuf_add(&b, "ab", 2) == 0 && b.len == 2, "add 2 bytes");
	CHECK(dynbuf_adds(&b, "cd") == 0 && strcmp(dynbuf_str(&b), "abcd") == 0, "adds");
	CHECK(dynbuf_addf(&b, "-%d-%s", 42, "x") == 0 && strcmp(dynbuf_str(&b), "abcd-42-x") == 0,
	      "addf: '%s'", dynbuf_str(&b));
	CHECK(dynbuf_add(&b, NULL, 0) == 0 && b.len == 9, "empty add is a no-op");
	p = dynbuf_take(&b, &n);
	CHECK(p && n == 9 && strcmp(p, "abcd-42-x") == 0, "take hands over the bytes");
	CHECK(b.buf == NULL && b.len == 0 && b.max == 1000, "take empties and keeps the cap");
	free(p);
	p = dynbuf_take(&b, &n);
	CHECK(p && n == 0 && p[0] == '\0', "take of an empty buffer gives \"\"");
	free(p);
	dynbuf_release(&b);
}

static void test_growth_past_first_alloc(void)
{
	struct dynbuf b;
	char chunk[100];
	int ok = 1;

	memset(chunk, 'z', sizeof(chunk));
	dynbuf_init(&b, 1u << 20);
	for (int i = 0; i < 1000; i++)
		if (dynbuf_add(&b, chunk, sizeof(chunk)))
			ok = 0;
	CHECK(ok && b.len == 100000 && b.buf[b.len] == '\0', "100,000 bytes in 100-byte appends");
	CHECK(b.cap <= (1u << 20) + 1, "allocation never passes the cap (cap %zu)", b.cap);
	/* A long formatted append that does not fit what is allocated. */
	dynbuf_reset(&b);
	CHECK(dynbuf_addf(&b, "%0500d", 7) == 0 && b.len == 500 && b.buf[499] == '7',
	      "addf that needs to grow");
	dynbuf_release(&b);
}

static void test_cap_is_sticky(void)
{
	struct dynbuf b;

	dynbuf_init(&b, 10);
	CHECK(dynbuf_add(&b, "0123456789", 10) == 0, "exactly the cap fits");
	CHECK(dynbuf_add(&b, "x", 1) == -E2BIG, "one past the cap is -E2BIG");
	CHECK(strcmp(dynbuf_str(&b), "0123456789") == 0, "a refused append changes nothing");
	CHECK(dynbuf_error(&b) == -E2BIG, "error is sticky");
	CHECK(dynbuf_add(&b, "", 0) == -E2BIG, "even an empty append fails after an error");
	CHECK(dynbuf_grow(&b, 0) == NULL, "grow fails after an error");
	CHECK(dynbuf_take(&b, NULL) == NULL && b.len == 0 && b.err == 0,
	      "take after an error gives NULL and empties the buffer");
	dynbuf_release(&b);

	dynbuf_init(&b, 8);
	CHECK(dynbuf_addf(&b, "%s", "abc") == 0, "short addf");
	CHECK(dynbuf_addf(&b, "%s", "defghi") == -E2BIG, "addf past the cap");
	CHECK(strcmp(dynbuf_str(&b), "abc") == 0, "refused addf leaves the text as it was: '%s'",
	      dynbuf_str(&b));
	dynbuf_reset(&b);
	CHECK(dynbuf_error(&b) == 0 && dynbuf_add(&b, "12345678", 8) == 0, "reset clears the error");
	dynbuf_release(&b);

	dynbuf_init(&b, 16);
	CHECK(dynbuf_grow(&b, (size_t)-1) == NULL && dynbuf_error(&b) == -E2BIG,
	      "a huge grow is refused without overflow");
	dynbuf_release(&b);
}

static void test_grow_fills(void)
{
	struct dynbuf b;
	char *at;

	dynbuf_init(&b, 100);
	dynbuf_adds(&b, "ab");
	at = dynbuf_grow(&b, 3);
	CHECK(at == b.buf + 2 && b.len == 5, "grow returns where the new bytes start");
	memcpy(at, "cde", 3);
	CHECK(strcmp(dynbuf_str(&b), "abcde") == 0, "grown bytes are NUL-terminated");
	dynbuf_release(&b);
}

static void test_setlen_and_tail(void)
{
	struct dynbuf b;
	char *at;

	dynbuf_init(&b, 16);
	CHECK(dynbuf_setlen(&b, 0) == 0 && dynbuf_tail(&b, 0) == 0, "setlen/tail 0 on empty");
	CHECK(dynbuf_setlen(&b, 1) == -EINVAL && dynbuf_tail(&b, 1) == -EINVAL, "past held on empty");
	at = dynbuf_grow(&b, 10);
	CHECK(at != NULL, "grow 10");
	if (at)
		memcpy(at, "abcdefghij", 3); /* a short read filled 3 of the 10 */
	CHECK(dynbuf_setlen(&b, 3) == 0 && b.len == 3 && strcmp(dynbuf_str(&b), "abc") == 0,
	      "setlen gives back the unfilled bytes: '%s'", dynbuf_str(&b));
	CHECK(dynbuf_setlen(&b, 4) == -EINVAL && b.len == 3, "setlen cannot grow");
	CHECK(dynbuf_adds(&b, "defg") == 0 && dynbuf_tail(&b, 3) == 0 &&
		      strcmp(dynbuf_str(&b), "efg") == 0,
	      "tail keeps the last bytes: '%s'", dynbuf_str(&b));
	CHECK(dynbuf_tail(&b, 4) == -EINVAL && b.len == 3, "tail past held");
	CHECK(dynbuf_tail(&b, 3) == 0 && strcmp(dynbuf_str(&b), "efg") == 0, "tail of all is a no-op");
	CHECK(dynbuf_add(&b, "0123456789abcdef", 16) == -E2BIG, "cap still applies");
	CHECK(dynbuf_setlen(&b, 1) == 0 && dynbuf_error(&b) == -E2BIG &&
		      strcmp(dynbuf_str(&b), "e") == 0,
	      "setlen keeps the sticky error");
	dynbuf_release(&b);
}

static void test_trim(void)
{
	struct dynbuf b;

	dynbuf_init(&b, 1000);
	dynbuf_trim(&b);
	CHECK(b.buf == NULL && b.cap == 0, "trim of an empty buffer allocates nothing");
	CHECK(dynbuf_add(&b, "abcdef", 6) == 0 && b.cap > 7, "growth leaves slack (cap %zu)", b.cap);
	dynbuf_trim(&b);
	CHECK(b.cap == 7 && b.len == 6 && strcmp(dynbuf_str(&b), "abcdef") == 0,
	      "trim keeps the bytes and their NUL, nothing more (cap %zu)", b.cap);
	CHECK(dynbuf_add(&b, "g", 1) == 0 && strcmp(dynbuf_str(&b), "abcdefg") == 0,
	      "appends after a trim grow again");
	dynbuf_release(&b);
}

int main(void)
{
	CASE(test_append_and_nul);
	CASE(test_growth_past_first_alloc);
	CASE(test_cap_is_sticky);
	CASE(test_grow_fills);
	CASE(test_setlen_and_tail);
	CASE(test_trim);
	return check_finish();
}
