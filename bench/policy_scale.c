/*
 * policy_scale: a policy of N paths in our format (policies/README.md): load time, memory, and
 * lookups per second, each next to a peer measured in the same run.
 *
 *   policy_scale [--entries N] [--lookups L] [--packages P]
 *
 * With --packages P the same N paths come as a package-aware policy (policies/README.md,
 * "Packages"): P package versions of N/P files each, as policy-gen --apt-repo writes a whole
 * Debian release (tens of thousands of packages, millions of files), so that its load time and
 * memory per path stand beside the plain policy's.
 *
 * The JSON (path /opt/bench/dNNNN/fileNNNNNNN -> one "sha256:HEX") is built in memory first.
 * Load: policy_load() wall and CPU time, and the growth of VmRSS it causes (measured after
 * malloc_trim(), so the parse's transient tree is not counted; the JSON text is not counted); peer: json_loadb() of the same text with jansson alone (the parse
 * every JSON loader pays), its tree freed again. Lookups: policy_check() of L paths drawn at
 * random from the policy (hits, digest compared) and L unknown paths (misses, no excludes);
 * peer: the same lookups in a policy of 1,000 paths (O(1) means the same rate).
 *
 * Output lines `key value`: entries json_mb load_s load_cpu_s jansson_s rss_kib
 * bytes_per_entry hit_per_s miss_per_s small_hit_per_s small_miss_per_s.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <jansson.h>
#include <malloc.h>
#include <openssl/sha.h>
#include <tss2/tss2_tpm2_types.h>

#include "bench/bench.h"
#include "proto/encoding.h"
#include "verifier/policy/policy.h"

static void path_of(unsigned long i, char *out, size_t cap)
{
	snprintf(out, cap, "/opt/bench/d%04lu/file%07lu", i % 1000, i);
}

/* npkg 0: {"digests": {path: [digest]}}; else {"packages": [npkg versions of n/npkg files]}. */
static char *make_json(unsigned long n, unsigned long npkg, size_t *len)
{
	unsigned long per = npkg ? n / npkg : n; /* the last version takes the remainder */
	size_t cap = 128 + n * 140 + npkg * 160, off = 0;
	char *s = malloc(cap), p[64], hex[65];
	uint8_t d[32];

	if (!s)
		return NULL;
	off += (size_t)snprintf(s + off, cap - off, npkg ? "{\"version\": 1, \"packages\": [\n"
							: "{\"version\": 1, \"digests\": {\n");
	for (unsigned long i = 0; i < n; i++) {
		bool first = npkg ? i % per == 0 && i / per < npkg : i == 0;

		if (npkg && first)
			off += (size_t)snprintf(s + off, cap - off,
						"%s{\"package\": \"pkg%lu\", \"version\": \"1.%lu-1\", \"architecture\": \"amd64\", \"files\": {\n",
						i ? "}}," : "", i / per, i % 7);
		path_of(i, p, sizeof(p));
		SHA256((const uint8_t *)p, strlen(p), d);
		hex_encode(d, 32, hex);
		off += (size_t)snprintf(s + off, cap - off, "%s\"%s\": [\"sha256:%s\"]\n", first ? "" : ",", p, hex);
		if (off + 400 > cap) {
			free(s);
			return NULL;
		}
	}
	off += (size_t)snprintf(s + off, cap - off, npkg ? "}}]}\n" : "}}\n");
	*len = off;
	return s;
}

#define SAMPLES 65536u

struct sample {
	char path[48];
	uint8_t digest[32];
};

/* Lookups per second over `count` random hits (hit=1) or misses (hit=0); -1 if one was wrong. */
static double lookups(const struct policy *pol, unsigned long n, unsigned long count, int hit)
{
	struct sample *s = malloc(SAMPLES * sizeof(*s));
	uint64_t x = 88172645463325252ull;
	unsigned long ok = 0;
	double t0, w;

	if (!s)
		return -1;
	/* Paths and the digests their entries carry, drawn before the clock starts. */
	for (unsigned k = 0; k < SAMPLES; k++) {
		unsigned long i;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		i = (unsigned long)(x % n);
		if (hit)
			path_of(i, s[k].path, sizeof(s[k].path));
		else
			snprintf(s[k].path, sizeof(s[k].path), "/opt/other/d%04lu/file%07lu", i % 1000, i);
		SHA256((const uint8_t *)s[k].path, strlen(s[k].path), s[k].digest);
	}
	t0 = bench_now();
	for (unsigned long k = 0; k < count; k++) {
		const struct sample *e = &s[k % SAMPLES];

		ok += policy_check(pol, e->path, strlen(e->path), TPM2_ALG_SHA256, e->digest, 32) ==
		      POLICY_ALLOWED;
	}
	w = bench_now() - t0;
	free(s);
	if (ok != (hit ? count : 0))
		return -1;
	return (double)count / w;
}

int main(int argc, char **argv)
{
	unsigned long n = 1000000, nl = 1000000, npkg = 0;
	char *json = NULL, *small = NULL, err[256];
	size_t len = 0, slen = 0;
	struct policy *pol = NULL, *spol = NULL;
	json_t *root;
	json_error_t jerr;
	double t0, c0, load_s, load_cpu, jansson_s;
	long rss0, rss1;
	int ret = 1;

	for (int i = 1; i + 1 < argc; i += 2) {
		unsigned long *dst = !strcmp(argv[i], "--entries") ? &n :
				     !strcmp(argv[i], "--lookups") ? &nl :
				     !strcmp(argv[i], "--packages") ? &npkg : NULL;

		if (!dst || bench_parse_ulong(argv[i + 1], 20000000ul, dst) < 0 || *dst == 0)
			goto usage;
	}
	if (npkg > n)
		goto usage;
	if (argc % 2 == 0)
		goto usage;
	json = make_json(n, npkg, &len);
	small = make_json(1000, 0, &slen);
	if (!json || !small) {
		fprintf(stderr, "policy_scale: out of memory\n");
		goto cleanup;
	}
	malloc_trim(0);
	rss0 = bench_rss_kib(0);
	t0 = bench_now();
	c0 = bench_cpu(RUSAGE_SELF);
	pol = policy_load(json, len, err, sizeof(err));
	load_s = bench_now() - t0;
	load_cpu = bench_cpu(RUSAGE_SELF) - c0;
	malloc_trim(0); /* give back what the parse needed only for a moment */
	rss1 = bench_rss_kib(0);
	t0 = bench_now();
	root = json_loadb(json, len, 0, &jerr);
	jansson_s = bench_now() - t0;
	if (!root) {
		fprintf(stderr, "policy_scale: jansson: %s\n", jerr.text);
		goto cleanup;
	}
	json_decref(root);
	spol = policy_load(small, slen, err, sizeof(err));
	if (!pol || !spol || policy_entry_count(pol) != n) {
		fprintf(stderr, "policy_scale: load failed: %s\n", err);
		goto cleanup;
	}
	if (npkg && policy_package_count(pol) != npkg) {
		fprintf(stderr, "policy_scale: %zu package versions loaded, %lu made\n",
			policy_package_count(pol), npkg);
		goto cleanup;
	}
	printf("packages %lu\n", npkg);
	printf("entries %lu\njson_mb %.1f\nload_s %.3f\nload_cpu_s %.3f\njansson_s %.3f\n", n,
	       (double)len / 1e6, load_s, load_cpu, jansson_s);
	printf("rss_kib %ld\nbytes_per_entry %.0f\n", rss1 - rss0, (double)(rss1 - rss0) * 1024.0 / (double)n);
	printf("hit_per_s %.0f\n", lookups(pol, n, nl, 1));
	printf("miss_per_s %.0f\n", lookups(pol, n, nl, 0));
	printf("small_hit_per_s %.0f\n", lookups(spol, 1000, nl, 1));
	printf("small_miss_per_s %.0f\n", lookups(spol, 1000, nl, 0));
	ret = 0;
cleanup:
	policy_free(pol);
	policy_free(spol);
	free(json);
	free(small);
	return ret;
usage:
	fprintf(stderr, "usage: policy_scale [--entries N] [--lookups L] [--packages P <= N]\n");
	return 2;
}
