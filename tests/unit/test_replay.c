/*
 * PCR 10 replay against an independent model: expected bank values are computed here with
 * OpenSSL one-shot EVP calls over the hand-built entries (template `ima` padded form, violations
 * as 0xff, pcr != 10 skipped). Also: resume from a stored state at every boundary, the quoted-PCR
 * comparison, boot_aggregate, and any recorded list in tests/data (NAME.bin with NAME.pcrs).
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <tss2/tss2_tpm2_types.h>

#include "proto/encoding.h"
#include "proto/imalog.h"
#include "proto/replay.h"
#include "tests/unit/check.h"

struct model {
	uint8_t b[1 << 15];
	size_t len, ends[32];
	unsigned n;
	uint8_t pcr1[20], pcr256[32], pcr384[48], pcr512[64];
	unsigned violations, other;
};

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

static void dig(const EVP_MD *md, const void *p, size_t n, uint8_t *out)
{
	unsigned int len;

	EVP_Digest(p, n, out, &len, md, NULL);
}

static void model_extend(const EVP_MD *md, uint8_t *pcr, size_t size, const uint8_t *d)
{
	uint8_t in[128];

	memcpy(in, pcr, size);
	memcpy(in + size, d, size);
	dig(md, in, 2 * size, pcr);
}

/* hashed = what IMA hashes for this entry (padded form for `ima`). */
static void model_add(struct model *m, uint32_t pcr, const char *tname, const uint8_t *data,
		      size_t dlen, const uint8_t *hashed, size_t hlen, bool violation)
{
	uint8_t *p = m->b + m->len, th[20], d256[32], d384[48], d512[64];
	size_t t = strlen(tname), hdr;
	bool legacy = !strcmp(tname, "ima");

	if (violation) {
		memset(th, 0, 20);
		memset(d256, 0xff, 32);
		memset(d384, 0xff, 48);
		memset(d512, 0xff, 64);
	} else {
		dig(EVP_sha1(), hashed, hlen, th);
		dig(EVP_sha256(), hashed, hlen, d256);
		dig(EVP_sha384(), hashed, hlen, d384);
		dig(EVP_sha512(), hashed, hlen, d512);
	}
	put32(p, pcr);
	memcpy(p + 4, th, 20);
	put32(p + 24, (uint32_t)t);
	memcpy(p + 28, tname, t);
	hdr = 28 + t;
	if (!legacy) {
		put32(p + hdr, (uint32_t)dlen);
		hdr += 4;
	}
	memcpy(p + hdr, data, dlen);
	m->len += hdr + dlen;
	m->ends[m->n++] = m->len;
	m->violations += violation;
	if (pcr != 10) {
		m->other++;
		return;
	}
	if (violation)
		memset(th, 0xff, 20);
	model_extend(EVP_sha1(), m->pcr1, 20, th);
	model_extend(EVP_sha256(), m->pcr256, 32, d256);
	model_extend(EVP_sha384(), m->pcr384, 48, d384);
	model_extend(EVP_sha512(), m->pcr512, 64, d512);
}

static size_t field(uint8_t *d, size_t off, const void *p, size_t n)
{
	put32(d + off, (uint32_t)n);
	memcpy(d + off + 4, p, n);
	return off + 4 + n;
}

static void add_ng(struct model *m, uint32_t pcr, const char *tname, const char *path,
		   uint8_t fill, bool violation, bool with_sig)
{
	uint8_t d[4200], dg[40] = "sha256:";
	size_t n;

	dg[7] = 0;
	memset(dg + 8, violation ? 0 : fill, 32);
	n = field(d, 0, dg, 40);
	n = field(d, n, path, strlen(path) + 1);
	if (with_sig)
		n = field(d, n, "\x03\x02sig", 5);
	model_add(m, pcr, tname, d, n, d, n, violation);
}

static void add_legacy(struct model *m, const char *path, uint8_t fill, bool violation)
{
	uint8_t d[300], padded[276] = {0};
	size_t nl = strlen(path);

	memset(d, violation ? 0 : fill, 20);
	put32(d + 20, (uint32_t)nl);
	memcpy(d + 24, path, nl);
	memcpy(padded, d, 20);
	memcpy(padded + 20, path, nl);
	model_add(m, 10, "ima", d, 24 + nl, padded, sizeof(padded), violation);
}

static void build(struct model *m)
{
	char longname[3000];

	memset(m, 0, sizeof(*m));
	memset(longname, 'x', sizeof(longname));
	longname[0] = '/';
	longname[sizeof(longname) - 1] = 0;
	add_ng(m, 10, "ima-ng", "boot_aggregate", 1, false, false);
	add_ng(m, 10, "ima-ng", "/usr/bin/a_file_with_spaces", 2, false, false);
	add_ng(m, 10, "ima-sig", "/usr/bin/signed", 3, false, true);
	add_legacy(m, "/etc/legacy", 4, false);
	add_ng(m, 10, "ima-ng", "/tmp/tomtou", 0, true, false);
	add_ng(m, 11, "ima-ng", "/other/pcr", 5, false, false);
	add_legacy(m, "/var/violation", 0, true);
	add_ng(m, 10, "ima-ng", longname, 6, false, false);
	add_ng(m, 10, "ima-buf", "kexec-cmdline", 7, false, true);
}

static int replay_buf(struct replay_ctx *rc, struct imalog *log, struct replay_state *st,
		      const uint8_t *b, size_t len, uint64_t first)
{
	struct ima_entry e;
	struct ima_error err;
	int r;

	imalog_reset(log, b, len, first);
	while ((r = imalog_next(log, &e, &err)) == 1)
		if (replay_extend(rc, st, &e) < 0)
			return -EINVAL;
	return r;
}

/* The replay context and list parser of the cases that take them, made once in main(). */
static struct replay_ctx *shared_rc;
static struct imalog *shared_log;

static void test_model(void)
{
	struct replay_ctx *rc = shared_rc;
	struct imalog *log = shared_log;
	static struct model m;
	struct replay_state st, full;
	size_t len;

	build(&m);
	replay_state_init(&st, REPLAY_ALL_BANKS);
	CHECK(replay_buf(rc, log, &st, m.b, m.len, 0) == 0, "model list replays");
	CHECK(!memcmp(replay_state_pcr(&st, TPM2_ALG_SHA1, &len), m.pcr1, 20) && len == 20,
	      "sha1 bank matches the model");
	CHECK(!memcmp(replay_state_pcr(&st, TPM2_ALG_SHA256, &len), m.pcr256, 32) && len == 32,
	      "sha256 bank matches the model");
	CHECK(!memcmp(replay_state_pcr(&st, TPM2_ALG_SHA384, &len), m.pcr384, 48) && len == 48,
	      "sha384 bank matches the model");
	CHECK(!memcmp(replay_state_pcr(&st, TPM2_ALG_SHA512, &len), m.pcr512, 64) && len == 64,
	      "sha512 bank matches the model");
	CHECK(st.entries == m.n && st.violations == m.violations && st.other_pcr == m.other &&
		      m.violations == 2 && m.other == 1,
	      "counters: %llu entries %llu violations", (unsigned long long)st.entries,
	      (unsigned long long)st.violations);
	full = st;

	/* Store the state as bytes after every boundary, restore it, continue: same result. */
	for (unsigned k = 0; k <= m.n; k++) {
		size_t off = k ? m.ends[k - 1] : 0;
		uint8_t stored[sizeof(struct replay_state)];
		struct replay_state a, b;

		replay_state_init(&a, REPLAY_SHA1 | REPLAY_SHA256);
		replay_buf(rc, log, &a, m.b, off, 0);
		memcpy(stored, &a, sizeof(stored));
		memset(&a, 0x5a, sizeof(a));
		memcpy(&b, stored, sizeof(b));
		CHECK(replay_buf(rc, log, &b, m.b + off, m.len - off, b.entries) == 0 &&
			      b.entries == m.n && !memcmp(b.sha1, full.sha1, 20) &&
			      !memcmp(b.sha256, full.sha256, 32),
		      "resume after %u entries gives the full replay", k);
	}

	/* Only the banks asked for; a ctx without the state's bank refuses. */
	{
		struct replay_ctx *only1 = replay_ctx_new(REPLAY_SHA1);
		struct ima_entry e;
		struct ima_error err;

		replay_state_init(&st, REPLAY_SHA1 | REPLAY_SHA256);
		imalog_reset(log, m.b, m.len, 0);
		CHECK(imalog_next(log, &e, &err) == 1 && only1 &&
			      replay_extend(only1, &st, &e) == -EINVAL && st.entries == 0,
		      "ctx lacking a bank refuses the state");
		replay_ctx_free(only1);
		replay_state_init(&st, REPLAY_SHA1);
		CHECK(replay_state_pcr(&st, TPM2_ALG_SHA256, NULL) == NULL, "unfollowed bank is NULL");
	}
	CHECK(replay_ctx_new(0) == NULL && replay_ctx_new(1u << 7) == NULL, "bad bank masks");
}

static void test_matches(void)
{
	static struct pcr_set q;
	struct replay_state st;
	struct pcr_bank *b1, *b256;

	replay_state_init(&st, REPLAY_SHA1 | REPLAY_SHA256);
	memset(st.sha1, 0x11, 20);
	memset(st.sha256, 0x22, 32);
	memset(&q, 0, sizeof(q));
	b1 = pcr_set_add_bank(&q, TPM2_ALG_SHA1);
	b256 = pcr_set_add_bank(&q, TPM2_ALG_SHA256);
	CHECK(!replay_state_matches(&st, &q), "no PCR 10 selected: no match");
	b1->mask = b256->mask = 1u << 10;
	memset(b1->value[10], 0x11, 20);
	memset(b256->value[10], 0x22, 32);
	CHECK(replay_state_matches(&st, &q), "both banks match");
	b256->value[10][31] ^= 1;
	CHECK(!replay_state_matches(&st, &q), "one bank differs");
	b256->mask = 0;
	CHECK(replay_state_matches(&st, &q), "only the sha1 bank quoted");
	pcr_set_add_bank(&q, TPM2_ALG_SHA384)->mask = 1u << 10;
	CHECK(!replay_state_matches(&st, &q), "quoted bank not replayed: no match");
}

static void test_boot_aggregate(void)
{
	static struct pcr_set s;
	struct pcr_bank *b1, *b256;
	uint8_t out[64], cat[10 * 32], want[32];
	size_t len = 0;

	memset(&s, 0, sizeof(s));
	b1 = pcr_set_add_bank(&s, TPM2_ALG_SHA1);
	b256 = pcr_set_add_bank(&s, TPM2_ALG_SHA256);
	for (unsigned i = 0; i < 10; i++) {
		memset(b1->value[i], (int)(i + 1), 20);
		memset(b256->value[i], (int)(i + 0x40), 32);
	}
	b1->mask = 0xff;
	b256->mask = 0x3ff;
	for (unsigned i = 0; i < 8; i++)
		memcpy(cat + 20 * i, b1->value[i], 20);
	dig(EVP_sha1(), cat, 160, want);
	CHECK(replay_boot_aggregate(TPM2_ALG_SHA1, &s, out, &len) == 0 && len == 20 &&
		      !memcmp(out, want, 20),
	      "sha1 boot_aggregate over PCR 0-7");
	for (unsigned i = 0; i < 10; i++)
		memcpy(cat + 32 * i, b256->value[i], 32);
	dig(EVP_sha256(), cat, 320, want);
	CHECK(replay_boot_aggregate(TPM2_ALG_SHA256, &s, out, &len) == 0 && len == 32 &&
		      !memcmp(out, want, 32),
	      "sha256 boot_aggregate over PCR 0-9");
	b256->mask = 0xff;
	CHECK(replay_boot_aggregate(TPM2_ALG_SHA256, &s, out, &len) == -EINVAL,
	      "sha256 needs PCR 8 and 9");
	CHECK(replay_boot_aggregate(TPM2_ALG_SHA384, &s, out, &len) == -EINVAL, "missing bank");
}

/* tests/data: NAME.bin with NAME.pcrs (`sha1 HEX` / `sha256 HEX`), recorded from real guests. */
static void test_data_lists(void)
{
	struct replay_ctx *rc = shared_rc;
	struct imalog *log = shared_log;
	glob_t g;

	if (glob("tests/data/*.bin", 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char pcrs[4096], bank[16], hex[200];
		FILE *f;
		uint8_t *buf;
		long n;
		struct replay_state st;

		snprintf(pcrs, sizeof(pcrs), "%.*s.pcrs", (int)(strlen(g.gl_pathv[i]) - 4),
			 g.gl_pathv[i]);
		f = fopen(pcrs, "r");
		if (!f)
			continue;
		FILE *lf = fopen(g.gl_pathv[i], "rb");

		if (!lf || fseek(lf, 0, SEEK_END) || (n = ftell(lf)) < 0 || fseek(lf, 0, SEEK_SET)) {
			CHECK(0, "cannot read %s", g.gl_pathv[i]);
			fclose(f);
			if (lf)
				fclose(lf);
			continue;
		}
		buf = malloc((size_t)n + 1);
		CHECK(buf && fread(buf, 1, (size_t)n, lf) == (size_t)n, "read %s", g.gl_pathv[i]);
		fclose(lf);
		replay_state_init(&st, REPLAY_SHA1 | REPLAY_SHA256);
		CHECK(replay_buf(rc, log, &st, buf, (size_t)n, 0) == 0, "%s parses", g.gl_pathv[i]);
		while (fscanf(f, "%15s %199s", bank, hex) == 2) {
			size_t len;
			const uint8_t *v = replay_state_pcr(&st, pcr_alg_from_name(bank), &len);
			char got[129];

			if (!v)
				continue;
			hex_encode(v, len, got);
			CHECK(!strcmp(got, hex), "%s %s: replay %s, recorded %s", g.gl_pathv[i], bank,
			      got, hex);
		}
		fclose(f);
		free(buf);
	}
	globfree(&g);
}

int main(void)
{
	shared_rc = replay_ctx_new(REPLAY_ALL_BANKS);
	shared_log = imalog_new();

	CHECK(shared_rc && shared_log, "constructors");
	if (shared_rc && shared_log) {
		CASE(test_model);
		CASE(test_matches);
		CASE(test_boot_aggregate);
		CASE(test_data_lists);
	}
	replay_ctx_free(shared_rc);
	imalog_free(shared_log);
	replay_ctx_free(NULL);
	return check_finish();
}
