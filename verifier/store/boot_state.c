/* boot_state.h: the versioned byte layout of a boot state. Pure; no I/O. */
#include "verifier/store/boot_state.h"

#include <errno.h>
#include <string.h>

struct bs_writer {
	uint8_t *p;
};

static void put_u8(struct bs_writer *w, uint8_t v)
{
	*w->p++ = v;
}

static void put_be(struct bs_writer *w, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		w->p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
	w->p += bytes;
}

static void put_bytes(struct bs_writer *w, const uint8_t *b, size_t n)
{
	memcpy(w->p, b, n);
	w->p += n;
}

/* The caller checked the length once: every read stays inside it. */
struct bs_reader {
	const uint8_t *p;
};

static uint64_t get_be(struct bs_reader *r, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v = v << 8 | r->p[i];
	r->p += bytes;
	return v;
}

static void get_bytes(struct bs_reader *r, uint8_t *b, size_t n)
{
	memcpy(b, r->p, n);
	r->p += n;
}

void boot_state_encode(const struct boot_state *bs, uint8_t out[BOOT_STATE_ENCODED_LEN])
{
	struct bs_writer w = { out };
	const struct replay_state *rs = &bs->replay;

	put_u8(&w, BOOT_STATE_VERSION);
	put_u8(&w, bs->started ? 1 : 0);
	put_be(&w, bs->reset_count, 4);
	put_be(&w, bs->restart_count, 4);
	put_be(&w, bs->clock, 8);
	put_be(&w, bs->boot_number, 8);
	put_be(&w, bs->next_entry, 8);
	put_be(&w, rs->banks, 4);
	put_be(&w, rs->entries, 8);
	put_be(&w, rs->violations, 8);
	put_be(&w, rs->other_pcr, 8);
	put_bytes(&w, rs->sha1, sizeof(rs->sha1));
	put_bytes(&w, rs->sha256, sizeof(rs->sha256));
	put_bytes(&w, rs->sha384, sizeof(rs->sha384));
	put_bytes(&w, rs->sha512, sizeof(rs->sha512));
	{
		uint8_t name[LIMIT_POLICY_NAME] = { 0 };
		size_t n = bs->judged.known ? strnlen(bs->judged.policy, LIMIT_POLICY_NAME) : 0;

		memcpy(name, bs->judged.policy, n);
		put_u8(&w, bs->judged.known ? 1 : 0);
		put_u8(&w, (uint8_t)n);
		put_bytes(&w, name, sizeof(name));
		put_be(&w, bs->judged.known ? (uint64_t)bs->judged.policy_version : 0, 8);
		put_be(&w, bs->judged.known ? (uint64_t)bs->judged.amendment_version : 0, 8);
	}
	put_u8(&w, bs->unconfirmed ? 1 : 0);
}

bool judged_versions_equal(const struct judged_versions *a, const struct judged_versions *b)
{
	return a->known && b->known && !strcmp(a->policy, b->policy) &&
	       a->policy_version == b->policy_version &&
	       a->amendment_version == b->amendment_version;
}

int boot_state_decode(const uint8_t *buf, size_t len, struct boot_state *out)
{
	struct bs_reader r = { buf };
	struct replay_state *rs = &out->replay;
	uint64_t started, known = 0, name_len = 0, unconfirmed = 0;
	uint8_t name[LIMIT_POLICY_NAME];

	memset(out, 0, sizeof(*out));
	if (!buf || !((len == BOOT_STATE_ENCODED_LEN && buf[0] == BOOT_STATE_VERSION) ||
		      (len == BOOT_STATE_ENCODED_LEN_V2 && buf[0] == 2) ||
		      (len == BOOT_STATE_ENCODED_LEN_V1 && buf[0] == 1)))
		return -EINVAL;
	r.p++;
	started = get_be(&r, 1);
	out->started = started == 1;
	out->reset_count = (uint32_t)get_be(&r, 4);
	out->restart_count = (uint32_t)get_be(&r, 4);
	out->clock = get_be(&r, 8);
	out->boot_number = get_be(&r, 8);
	out->next_entry = get_be(&r, 8);
	rs->banks = (uint32_t)get_be(&r, 4);
	rs->entries = get_be(&r, 8);
	rs->violations = get_be(&r, 8);
	rs->other_pcr = get_be(&r, 8);
	get_bytes(&r, rs->sha1, sizeof(rs->sha1));
	get_bytes(&r, rs->sha256, sizeof(rs->sha256));
	get_bytes(&r, rs->sha384, sizeof(rs->sha384));
	get_bytes(&r, rs->sha512, sizeof(rs->sha512));
	if (buf[0] >= 2) {
		known = get_be(&r, 1);
		name_len = get_be(&r, 1);
		get_bytes(&r, name, sizeof(name));
		out->judged.known = known == 1;
		out->judged.policy_version = (int64_t)get_be(&r, 8);
		out->judged.amendment_version = (int64_t)get_be(&r, 8);
		if (name_len <= LIMIT_POLICY_NAME && !memchr(name, 0, name_len))
			memcpy(out->judged.policy, name, name_len);
	}
	if (buf[0] >= 3) {
		unconfirmed = get_be(&r, 1);
		out->unconfirmed = unconfirmed == 1;
	}
	if (started > 1 || known > 1 || unconfirmed > 1 || name_len > LIMIT_POLICY_NAME ||
	    (name_len && memchr(name, 0, name_len)) ||
	    (rs->banks & ~(uint32_t)REPLAY_ALL_BANKS) || (size_t)(r.p - buf) != len) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return 0;
}
