/*
 * imagen: deterministic synthetic IMA binary measurement list generator.
 *
 * Writes a valid little-endian binary list that starts with boot_aggregate, and the PCR 10 values
 * a TPM would hold after extending every entry (sha1 and sha256 banks). The expected values are
 * computed here with OpenSSL directly, independently of proto/imalog.c and proto/replay.c, so
 * tests can compare the two. Same arguments, same bytes: the only randomness is a seeded PRNG.
 *
 *   imagen [--entries N] [--template ima|ima-ng|ima-sig|ima-buf|mixed] [--hash sha1|sha256]
 *          [--violations EVERY_N] [--seed S] [--long-names] [--spaces] [--zero-boot-pcrs]
 *          --out LIST [--pcrs-out FILE] [--tpm2-extend-script FILE] [--evmctl-pcrs PREFIX]
 *
 * --pcrs-out: lines `sha1 HEX` and `sha256 HEX` (expected PCR 10).
 * --tpm2-extend-script: one line per entry, `10:sha1=HEX,sha256=HEX`, the argument of
 *   `tpm2_pcrextend` that makes a TPM's PCR 10 follow the list.
 * --evmctl-pcrs PREFIX: PREFIX.sha1 and PREFIX.sha256, 24 lines `PCR-NN: HEX` each (PCR 0-9
 *   the simulated boot values, 10 the expected value, the rest zero) for `evmctl ima_measurement
 *   --pcrs sha1,PREFIX.sha1 --pcrs sha256,PREFIX.sha256`.
 * --zero-boot-pcrs: PCR 0-9 are all zero (as on a fresh swtpm) instead of seeded values.
 * --boot-pcrs FILE: PCR 0-9 from `pcrN BANK HEX` lines (attestctl eventlog --replay of a
 *   firmware log), zero where FILE has none: the boot_aggregate of a machine that booted so.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "proto/encoding.h"

#define PATH_MAX_GEN 4000u

enum tmpl { T_IMA, T_NG, T_SIG, T_BUF, T_MIXED };

struct gen {
	uint64_t rng;
	EVP_MD_CTX *ctx;
	EVP_MD *sha1, *sha256, *file_md;
	size_t file_len;
	const char *file_alg;
	uint8_t pcr1[20], pcr256[32];
	uint8_t boot1[10][20], boot256[10][32];
	FILE *out, *script;
};

static uint64_t rnd(struct gen *g)
{
	/* splitmix64: tiny, fast, and the same on every machine. */
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rnd_bytes(struct gen *g, uint8_t *p, size_t n)
{
	while (n > 0) {
		uint64_t v = rnd(g);
		size_t k = n < 8 ? n : 8;

		memcpy(p, &v, k);
		p += k;
		n -= k;
	}
}

static void die(const char *what)
{
	fprintf(stderr, "imagen: %s\n", what);
	exit(2);
}

/* H(a || b || c), any part may be empty. */
static void hash3(struct gen *g, const EVP_MD *md, const void *a, size_t alen, const void *b,
		  size_t blen, const void *c, size_t clen, uint8_t *out)
{
	if (EVP_DigestInit_ex2(g->ctx, md, NULL) != 1 || EVP_DigestUpdate(g->ctx, a, alen) != 1 ||
	    EVP_DigestUpdate(g->ctx, b, blen) != 1 || EVP_DigestUpdate(g->ctx, c, clen) != 1 ||
	    EVP_DigestFinal_ex(g->ctx, out, NULL) != 1)
		die("openssl digest failed");
}

static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static size_t add_field(uint8_t *data, size_t off, const void *p, size_t n)
{
	put_u32(data + off, (uint32_t)n);
	memcpy(data + off + 4, p, n);
	return off + 4 + n;
}

static void hexline(FILE *f, const uint8_t *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		fputc(hx[p[i] >> 4], f);
		fputc(hx[p[i] & 15], f);
	}
}

/* Makes a file name the way the kernel records it (spaces already turned into '_'). */
static size_t make_name(struct gen *g, uint64_t i, bool long_names, bool spaces, size_t max,
			char *name)
{
	static const char *const dirs[] = {"/usr/bin", "/usr/lib/x86_64-linux-gnu", "/etc",
					   "/usr/sbin", "/lib/modules/6.1.0/kernel", "/opt/app"};
	int n = snprintf(name, max + 1, "%s/%s%" PRIu64 "%s", dirs[rnd(g) % 6],
			 spaces ? "my_file_" : "f", i, spaces ? "_(copy).txt" : ".so");
	size_t len = (size_t)n > max ? max : (size_t)n;

	if (long_names && i % 5 == 0) {
		size_t target = max < 300 ? max : 256 + rnd(g) % (max - 256);

		while (len < target) {
			name[len] = (char)('a' + rnd(g) % 26);
			if (len % 50 == 49)
				name[len] = '/';
			len++;
		}
	}
	name[len] = '\0';
	return len;
}

static void emit(struct gen *g, enum tmpl t, const char *tname, const uint8_t *data, size_t dlen,
		 bool violation, const char *legacy_name, size_t legacy_len)
{
	uint8_t hdr[4 + 20 + 4 + 16], th[20], d256[32], ext1[20];
	size_t tlen = strlen(tname), hlen;
	static const uint8_t zero[256];

	if (violation) {
		memset(th, 0, sizeof(th));
		memset(ext1, 0xff, sizeof(ext1));
		memset(d256, 0xff, sizeof(d256));
	} else if (t == T_IMA) {
		/* SHA-1(d || n padded with zeros to 256 bytes); the same bytes for sha256. */
		hash3(g, g->sha1, data, 20, legacy_name, legacy_len, zero, 256 - legacy_len, th);
		hash3(g, g->sha256, data, 20, legacy_name, legacy_len, zero, 256 - legacy_len, d256);
		memcpy(ext1, th, 20);
	} else {
		hash3(g, g->sha1, data, dlen, NULL, 0, NULL, 0, th);
		hash3(g, g->sha256, data, dlen, NULL, 0, NULL, 0, d256);
		memcpy(ext1, th, 20);
	}
	put_u32(hdr, 10);
	memcpy(hdr + 4, th, 20);
	put_u32(hdr + 24, (uint32_t)tlen);
	memcpy(hdr + 28, tname, tlen);
	hlen = 28 + tlen;
	if (t != T_IMA) {
		put_u32(hdr + hlen, (uint32_t)dlen);
		hlen += 4;
	}
	if (fwrite(hdr, 1, hlen, g->out) != hlen || fwrite(data, 1, dlen, g->out) != dlen)
		die("write failed");
	hash3(g, g->sha1, g->pcr1, 20, ext1, 20, NULL, 0, g->pcr1);
	hash3(g, g->sha256, g->pcr256, 32, d256, 32, NULL, 0, g->pcr256);
	if (g->script) {
		fputs("10:sha1=", g->script);
		hexline(g->script, ext1, 20);
		fputs(",sha256=", g->script);
		hexline(g->script, d256, 32);
		fputc('\n', g->script);
	}
}

static void write_pcrs(struct gen *g, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die("cannot open --pcrs-out file");
	fputs("sha1 ", f);
	hexline(f, g->pcr1, 20);
	fputs("\nsha256 ", f);
	hexline(f, g->pcr256, 32);
	fputc('\n', f);
	if (fclose(f) != 0)
		die("write failed");
}

static void write_evmctl(struct gen *g, const char *prefix)
{
	char path[4096];
	static const uint8_t zero[32];

	for (int bank = 0; bank < 2; bank++) {
		size_t sz = bank ? 32 : 20;
		FILE *f;

		snprintf(path, sizeof(path), "%s.%s", prefix, bank ? "sha256" : "sha1");
		f = fopen(path, "w");
		if (!f)
			die("cannot open --evmctl-pcrs file");
		for (int i = 0; i < 24; i++) {
			const uint8_t *v = i < 10 ? (bank ? g->boot256[i] : g->boot1[i])
					  : i == 10 ? (bank ? g->pcr256 : g->pcr1) : zero;

			fprintf(f, "PCR-%02d: ", i);
			hexline(f, v, sz);
			fputc('\n', f);
		}
		if (fclose(f) != 0)
			die("write failed");
	}
}

static uint64_t num_arg(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v > 100000000ull)
		die("bad number");
	return v;
}

/* --boot-pcrs: `pcrN sha1|sha256 HEX` lines into g->boot1 / g->boot256 (PCR 0-9 only). */
static void read_boot_pcrs(struct gen *g, const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f)
		die("cannot open --boot-pcrs file");
	while (fgets(line, sizeof(line), f)) {
		char *end, *bank, *hex;
		unsigned long n;

		if (strncmp(line, "pcr", 3) != 0)
			continue;
		n = strtoul(line + 3, &end, 10);
		if (*end != ' ' || n >= 24)
			die("bad --boot-pcrs line");
		bank = end + 1;
		hex = strchr(bank, ' ');
		if (!hex)
			die("bad --boot-pcrs line");
		*hex++ = '\0';
		hex[strcspn(hex, "\n")] = '\0';
		if (n >= 10)
			continue;
		if (!strcmp(bank, "sha1") && hex_decode(hex, strlen(hex), g->boot1[n], 20) != 20)
			die("bad sha1 value in --boot-pcrs");
		if (!strcmp(bank, "sha256") && hex_decode(hex, strlen(hex), g->boot256[n], 32) != 32)
			die("bad sha256 value in --boot-pcrs");
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	struct gen g = {0};
	const char *boot_pcrs = NULL;
	uint64_t entries = 100, viol_every = 0, seed = 1;
	enum tmpl tmpl = T_NG;
	bool long_names = false, spaces = false, zero_boot = false;
	const char *out = NULL, *pcrs_out = NULL, *script = NULL, *evm = NULL;
	static uint8_t data[4 + 8 + 64 + 4 + PATH_MAX_GEN + 1 + 4 + 512];
	static char name[PATH_MAX_GEN + 1];
	static char outbuf[1 << 20];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--long-names")) {
			long_names = true;
			continue;
		}
		if (!strcmp(a, "--spaces")) {
			spaces = true;
			continue;
		}
		if (!strcmp(a, "--zero-boot-pcrs")) {
			zero_boot = true;
			continue;
		}
		if (!v)
			die("usage: see the comment at the top of tests/tools/imagen.c");
		i++;
		if (!strcmp(a, "--entries"))
			entries = num_arg(v);
		else if (!strcmp(a, "--violations"))
			viol_every = num_arg(v);
		else if (!strcmp(a, "--seed"))
			seed = num_arg(v);
		else if (!strcmp(a, "--out"))
			out = v;
		else if (!strcmp(a, "--pcrs-out"))
			pcrs_out = v;
		else if (!strcmp(a, "--tpm2-extend-script"))
			script = v;
		else if (!strcmp(a, "--evmctl-pcrs"))
			evm = v;
		else if (!strcmp(a, "--boot-pcrs"))
			boot_pcrs = v;
		else if (!strcmp(a, "--hash"))
			g.file_alg = v;
		else if (!strcmp(a, "--template")) {
			if (!strcmp(v, "ima"))
				tmpl = T_IMA;
			else if (!strcmp(v, "ima-ng"))
				tmpl = T_NG;
			else if (!strcmp(v, "ima-sig"))
				tmpl = T_SIG;
			else if (!strcmp(v, "ima-buf"))
				tmpl = T_BUF;
			else if (!strcmp(v, "mixed"))
				tmpl = T_MIXED;
			else
				die("unknown --template");
		} else
			die("unknown option");
	}
	if (!out || entries < 1)
		die("--out is required and --entries must be >= 1");
	if (!g.file_alg)
		g.file_alg = "sha256";
	if (strcmp(g.file_alg, "sha1") && strcmp(g.file_alg, "sha256"))
		die("--hash must be sha1 or sha256");
	g.rng = seed;
	g.ctx = EVP_MD_CTX_new();
	g.sha1 = EVP_MD_fetch(NULL, "SHA1", NULL);
	g.sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (!g.ctx || !g.sha1 || !g.sha256)
		die("openssl init failed");
	g.file_md = strcmp(g.file_alg, "sha1") ? g.sha256 : g.sha1;
	g.file_len = strcmp(g.file_alg, "sha1") ? 32 : 20;
	g.out = fopen(out, "wb");
	if (!g.out)
		die("cannot open --out file");
	setvbuf(g.out, outbuf, _IOFBF, sizeof(outbuf));
	if (script && !(g.script = fopen(script, "w")))
		die("cannot open --tpm2-extend-script file");
	if (boot_pcrs) {
		read_boot_pcrs(&g, boot_pcrs);
	} else if (!zero_boot) {
		for (int i = 0; i < 10; i++) {
			rnd_bytes(&g, g.boot1[i], 20);
			rnd_bytes(&g, g.boot256[i], 32);
		}
	}

	for (uint64_t i = 0; i < entries; i++) {
		enum tmpl t = tmpl == T_MIXED ? (enum tmpl)(T_NG + i % 3) : tmpl;
		bool viol = i > 0 && viol_every && i % viol_every == 0;
		uint8_t digest[32], dng[8 + 32];
		size_t nlen, dlen = 0, dnglen, alen = strlen(g.file_alg);
		const char *tname = t == T_IMA ? "ima" : t == T_SIG ? "ima-sig"
						   : t == T_BUF ? "ima-buf" : "ima-ng";

		if (i == 0 && t == T_BUF)
			t = T_NG, tname = "ima-ng";
		if (i == 0) {
			snprintf(name, sizeof(name), "boot_aggregate");
			nlen = strlen(name);
		} else if (t == T_BUF) {
			snprintf(name, sizeof(name), "%s", i % 2 ? "kexec-cmdline" : ".ima");
			nlen = strlen(name);
		} else {
			nlen = make_name(&g, i, long_names, spaces,
					 t == T_IMA ? 255 : PATH_MAX_GEN, name);
		}

		if (t == T_IMA) {
			/* d is always SHA-1; boot_aggregate over sha1 PCR 0-7. */
			if (viol)
				memset(digest, 0, 20);
			else if (i == 0)
				hash3(&g, g.sha1, g.boot1, sizeof(g.boot1[0]) * 8, NULL, 0, NULL, 0, digest);
			else
				rnd_bytes(&g, digest, 20);
			memcpy(data, digest, 20);
			put_u32(data + 20, (uint32_t)nlen);
			memcpy(data + 24, name, nlen);
			emit(&g, t, tname, data, 24 + nlen, viol, name, nlen);
			continue;
		}

		uint8_t bufdata[256];
		size_t buflen = 0;

		if (t == T_BUF) {
			buflen = 16 + rnd(&g) % 200;
			rnd_bytes(&g, bufdata, buflen);
		}
		if (viol)
			memset(digest, 0, g.file_len);
		else if (i == 0 && g.file_len == 20)
			hash3(&g, g.sha1, g.boot1, sizeof(g.boot1[0]) * 8, NULL, 0, NULL, 0, digest);
		else if (i == 0)
			hash3(&g, g.sha256, g.boot256, sizeof(g.boot256), NULL, 0, NULL, 0, digest);
		else if (t == T_BUF)
			hash3(&g, g.file_md, bufdata, buflen, NULL, 0, NULL, 0, digest);
		else
			rnd_bytes(&g, digest, g.file_len);
		memcpy(dng, g.file_alg, alen);
		dng[alen] = ':';
		dng[alen + 1] = '\0';
		memcpy(dng + alen + 2, digest, g.file_len);
		dnglen = alen + 2 + g.file_len;

		dlen = add_field(data, 0, dng, dnglen);
		dlen = add_field(data, dlen, name, nlen + 1);
		if (t == T_SIG) {
			uint8_t sig[300];
			size_t slen = i % 2 ? 0 : 40 + rnd(&g) % 250;

			if (slen) {
				/* signature_v2_hdr: type 3, version 2, hash algo, keyid, sig size, sig */
				rnd_bytes(&g, sig, slen);
				sig[0] = 3;
				sig[1] = 2;
			}
			dlen = add_field(data, dlen, sig, slen);
		} else if (t == T_BUF) {
			dlen = add_field(data, dlen, bufdata, buflen);
		}
		emit(&g, t, tname, data, dlen, viol, NULL, 0);
	}
	if (fclose(g.out) != 0)
		die("write failed");
	if (g.script && fclose(g.script) != 0)
		die("write failed");
	if (pcrs_out)
		write_pcrs(&g, pcrs_out);
	if (evm)
		write_evmctl(&g, evm);
	EVP_MD_CTX_free(g.ctx);
	EVP_MD_free(g.sha1);
	EVP_MD_free(g.sha256);
	return 0;
}
