/*
 * floor_replay: the least work any PCR 10 replay of an ima-ng list must do, timed, next to our
 * own replay (proto/imalog + proto/replay) on the same bytes in the same process.
 *
 *   floor_replay [--reps N] LIST
 *
 * The floor, per entry, on template data located before the clock starts (no parsing, no
 * length checks, no field decoding): SHA-1(template data) compared with the stored template
 * hash (the check that makes an edited list fail), SHA-256(template data) (the sha256 bank's
 * digest), then one SHA-1 extend and one SHA-256 extend. A violation entry costs the two extends
 * of 0xff only. The floor hashes with OpenSSL's low-level SHA1_Init/SHA256_Init family on stack
 * contexts (no allocation, no provider dispatch), the fastest OpenSSL path; floor_evp is the
 * same loop through reused EVP_MD_CTXs. The PCR values are printed so run.sh can check that the
 * floor did the same work.
 *
 * Output lines `key value`: entries, violations, floor_wall, floor_cpu, ours_wall, ours_cpu
 * (best of N, seconds), floor_sha1, floor_sha256, ours_sha1, ours_sha256 (PCR 10 hex).
 */
#define OPENSSL_SUPPRESS_DEPRECATED /* the low-level SHA API: the fastest path, and the one proto uses */
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <tss2/tss2_tpm2_types.h>

#include "bench/bench.h"
#include "proto/dynbuf.h"
#include "proto/encoding.h"
#include "proto/imalog.h"
#include "proto/replay.h"

struct rec {
	const uint8_t *hash; /* 20 bytes as stored */
	const uint8_t *data;
	uint32_t len;
	int violation;
};

static uint32_t le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Locates each entry's template data. Trusts the file: this is setup for the floor, not a parser. */
static int index_list(const uint8_t *buf, size_t len, struct rec **out, size_t *n)
{
	size_t cnt = 0, off = 0;
	struct dynbuf recs;
	struct rec *r;
	static const uint8_t zero[20];

	/* Every record is at least 32 bytes: len / 32 of them at most. */
	dynbuf_init(&recs, len / 32 * sizeof(*r));
	while (off + 32 <= len) {
		uint32_t nlen = le32(buf + off + 24), dlen;

		if (off + 28 + nlen + 4 > len)
			break;
		dlen = le32(buf + off + 28 + nlen);
		if (off + 32 + nlen + dlen > len)
			break;
		r = dynbuf_grow(&recs, sizeof(*r));
		if (!r) {
			dynbuf_release(&recs);
			return -ENOMEM;
		}
		r->hash = buf + off + 4;
		r->data = buf + off + 32 + nlen;
		r->len = dlen;
		r->violation = !memcmp(buf + off + 4, zero, 20);
		cnt++;
		off += 32 + nlen + dlen;
	}
	if (off != len) {
		dynbuf_release(&recs);
		return -EBADMSG;
	}
	*out = (struct rec *)dynbuf_take(&recs, NULL);
	*n = cnt;
	return *out ? 0 : -ENOMEM;
}

static int floor_lowlevel(const struct rec *r, size_t n, uint8_t p1[20], uint8_t p256[32])
{
	uint8_t d1[20], d256[32], ff[32];
	SHA_CTX c1;
	SHA256_CTX c256;

	memset(p1, 0, 20);
	memset(p256, 0, 32);
	memset(ff, 0xff, sizeof(ff));
	for (size_t i = 0; i < n; i++) {
		const uint8_t *e1 = ff, *e256 = ff;

		if (!r[i].violation) {
			SHA1_Init(&c1);
			SHA1_Update(&c1, r[i].data, r[i].len);
			SHA1_Final(d1, &c1);
			SHA256_Init(&c256);
			SHA256_Update(&c256, r[i].data, r[i].len);
			SHA256_Final(d256, &c256);
			if (memcmp(d1, r[i].hash, 20) != 0)
				return -EPROTO;
			e1 = d1;
			e256 = d256;
		}
		SHA1_Init(&c1);
		SHA1_Update(&c1, p1, 20);
		SHA1_Update(&c1, e1, 20);
		SHA1_Final(p1, &c1);
		SHA256_Init(&c256);
		SHA256_Update(&c256, p256, 32);
		SHA256_Update(&c256, e256, 32);
		SHA256_Final(p256, &c256);
	}
	return 0;
}

static int floor_evp(const struct rec *r, size_t n, uint8_t p1[20], uint8_t p256[32])
{
	EVP_MD *sha1 = EVP_MD_fetch(NULL, "SHA1", NULL), *sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	EVP_MD_CTX *c1 = EVP_MD_CTX_new(), *c256 = EVP_MD_CTX_new();
	uint8_t d1[20], d256[32], ff[32];
	int ret = -EIO;

	memset(p1, 0, 20);
	memset(p256, 0, 32);
	memset(ff, 0xff, sizeof(ff));
	if (!sha1 || !sha256 || !c1 || !c256)
		goto cleanup;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *e1 = ff, *e256 = ff;

		if (!r[i].violation) {
			if (!EVP_DigestInit_ex2(c1, sha1, NULL) ||
			    !EVP_DigestUpdate(c1, r[i].data, r[i].len) ||
			    !EVP_DigestFinal_ex(c1, d1, NULL) ||
			    !EVP_DigestInit_ex2(c256, sha256, NULL) ||
			    !EVP_DigestUpdate(c256, r[i].data, r[i].len) ||
			    !EVP_DigestFinal_ex(c256, d256, NULL))
				goto cleanup;
			if (memcmp(d1, r[i].hash, 20) != 0) {
				ret = -EPROTO;
				goto cleanup;
			}
			e1 = d1;
			e256 = d256;
		}
		if (!EVP_DigestInit_ex2(c1, sha1, NULL) || !EVP_DigestUpdate(c1, p1, 20) ||
		    !EVP_DigestUpdate(c1, e1, 20) || !EVP_DigestFinal_ex(c1, p1, NULL) ||
		    !EVP_DigestInit_ex2(c256, sha256, NULL) || !EVP_DigestUpdate(c256, p256, 32) ||
		    !EVP_DigestUpdate(c256, e256, 32) || !EVP_DigestFinal_ex(c256, p256, NULL))
			goto cleanup;
	}
	ret = 0;
cleanup:
	EVP_MD_CTX_free(c1);
	EVP_MD_CTX_free(c256);
	EVP_MD_free(sha1);
	EVP_MD_free(sha256);
	return ret;
}

static int ours_run(const uint8_t *buf, size_t len, struct replay_state *st)
{
	struct imalog *log = imalog_new();
	struct replay_ctx *rc = replay_ctx_new(REPLAY_SHA1 | REPLAY_SHA256);
	struct ima_entry e;
	int r, ret = -EIO;

	if (!log || !rc)
		goto cleanup;
	imalog_reset(log, buf, len, 0);
	replay_state_init(st, REPLAY_SHA1 | REPLAY_SHA256);
	while ((r = imalog_next(log, &e, NULL)) == 1)
		if (replay_extend(rc, st, &e) < 0)
			goto cleanup;
	ret = r;
cleanup:
	replay_ctx_free(rc);
	imalog_free(log);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned long reps = 3;
	const char *path = NULL;
	const uint8_t *buf = NULL;
	size_t len = 0, n = 0, viol = 0;
	struct rec *recs = NULL;
	double fw = 1e30, fc = 1e30, ow = 1e30, oc = 1e30, ew = 1e30, ec = 1e30;
	uint8_t p1[20], p256[32];
	char hex[65];
	struct replay_state st;
	int ret = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			if (bench_parse_ulong(argv[++i], 100, &reps) < 0 || reps == 0)
				goto usage;
		} else if (argv[i][0] != '-' && !path) {
			path = argv[i];
		} else {
			goto usage;
		}
	}
	if (!path)
		goto usage;
	if (bench_map_file(path, &buf, &len) < 0 || index_list(buf, len, &recs, &n) < 0) {
		fprintf(stderr, "floor_replay: cannot read or index %s\n", path);
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		viol += (size_t)recs[i].violation;
	for (unsigned long k = 0; k < reps; k++) {
		double w0 = bench_now(), c0 = bench_cpu(RUSAGE_SELF), w, c;

		if (floor_evp(recs, n, p1, p256) < 0) {
			fprintf(stderr, "floor_replay: EVP floor loop failed\n");
			goto cleanup;
		}
		w = bench_now() - w0;
		c = bench_cpu(RUSAGE_SELF) - c0;
		ew = w < ew ? w : ew;
		ec = c < ec ? c : ec;
		w0 = bench_now();
		c0 = bench_cpu(RUSAGE_SELF);
		if (floor_lowlevel(recs, n, p1, p256) < 0) {
			fprintf(stderr, "floor_replay: floor loop failed\n");
			goto cleanup;
		}
		w = bench_now() - w0;
		c = bench_cpu(RUSAGE_SELF) - c0;
		fw = w < fw ? w : fw;
		fc = c < fc ? c : fc;
		w0 = bench_now();
		c0 = bench_cpu(RUSAGE_SELF);
		if (ours_run(buf, len, &st) != 0) {
			fprintf(stderr, "floor_replay: our replay failed\n");
			goto cleanup;
		}
		w = bench_now() - w0;
		c = bench_cpu(RUSAGE_SELF) - c0;
		ow = w < ow ? w : ow;
		oc = c < oc ? c : oc;
	}
	printf("entries %zu\nviolations %zu\n", n, viol);
	printf("floor_evp_wall %.6f\nfloor_evp_cpu %.6f\n", ew, ec);
	printf("floor_wall %.6f\nfloor_cpu %.6f\nours_wall %.6f\nours_cpu %.6f\n", fw, fc, ow, oc);
	hex_encode(p1, 20, hex);
	printf("floor_sha1 %s\n", hex);
	hex_encode(p256, 32, hex);
	printf("floor_sha256 %s\n", hex);
	hex_encode(st.sha1, 20, hex);
	printf("ours_sha1 %s\n", hex);
	hex_encode(st.sha256, 32, hex);
	printf("ours_sha256 %s\n", hex);
	ret = 0;
cleanup:
	free(recs);
	munmap((void *)buf, len);
	return ret;
usage:
	fprintf(stderr, "usage: floor_replay [--reps N] LIST\n");
	return 2;
}
