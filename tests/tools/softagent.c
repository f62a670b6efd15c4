/*
 * softagent: one software agent against a real verifier, for the attack matrix (tests/attacks/).
 *
 *   softagent mkca DIR                         a test EK CA: DIR/ca-key.pem, DIR/ca.pem
 *   softagent init DIR --ca-key KEY --ca-cert CERT
 *                                              EK (RSA-2048) + AK (P-256) + EK certificate, a
 *                                              simulated IMA list holding boot_aggregate, a clock
 *   softagent enroll DIR --verifier URL --cacert FILE --id ID [--wrong-secret]
 *                    [--attack NAME] [--other-dir DIR2] [--sleep SECONDS]
 *   softagent round DIR [--append PATH:HEXDIGEST]... [--violation PATH]
 *                   [--flood N:PATH:HEXDIGEST] [--spray N:PREFIX] [--attack NAME]
 *                   [--other-dir DIR2] [--other-id ID2] [--sleep SECONDS]
 *   softagent reboot DIR                       resetCount + 1, the IMA list starts over
 *   softagent ek-sha256 DIR                    the SHA-256 of the TPM2B_PUBLIC its enrollment
 *                                              sends as ek_pub (what attestd --print-ek-sha256
 *                                              prints for a real TPM)
 *
 * --sleep waits that long before the evidence (round) or before the activation (enroll).
 *
 * Every HTTP exchange prints one line `NAME STATUS BODY` (enroll, activate, challenge,
 * evidence); the last line is the answer that matters. Exit 0 when the last answer was 2xx, 1
 * when it was a refusal (>= 400), 2 on usage, I/O or transport errors.
 *
 * The state directory holds ek.pem, ak.pem (private keys, PEM), ek.der (its EK certificate),
 * list.bin (the simulated kernel's binary IMA list, ima-ng, sha256 file digests), clock
 * (`clock resetCount restartCount rebooted`), and after enroll: url, cacert, id. PCR 0-9 are
 * zero; PCR 10 is always the replay of list.bin (proto/replay.h), so the agent's "TPM" follows
 * its "kernel" as IMA does. --append and --violation add true entries to list.bin (and so to PCR
 * 10: what root can do with /dev/tpmrm0); every other attack mutates only what is sent.
 *
 * A PATH given to --append or --violation may contain \xNN escapes (control bytes, invalid
 * UTF-8); it must not contain NUL. --flood appends N entries of one file (a flood); --spray
 * appends N distinct files PREFIX0 .. PREFIX(N-1), each with the SHA-256 of its own name as its
 * digest (more files than a round stores one by one).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <tss2/tss2_tpm2_types.h>

#include "common/curl_setup.h"
#include "proto/dynbuf.h"
#include "proto/encoding.h"
#include "proto/evidence.h"
#include "proto/imalog.h"
#include "proto/replay.h"
#include "tests/lib/softtpm.h"
#include "proto/tpmkey.h"

#define SA_MAX_APPEND 64
#define SA_RESPONSE_MAX (1024u * 1024u)
#define SA_LIST_MAX LIMIT_REQUEST_BODY /* every buffer here: what one evidence body carries */
#define SA_DEEP_JSON 100000u

struct sa_clock {
	uint64_t clock;
	uint32_t reset_count;
	uint32_t restart_count;
	unsigned rebooted;
};

static void buf_u32(struct dynbuf *b, uint32_t v)
{
	uint8_t le[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	dynbuf_add(b, le, 4);
}

static const uint8_t *bytes(const struct dynbuf *b)
{
	return (const uint8_t *)dynbuf_str(b);
}

/* Files ---------------------------------------------------------------------------------------- */

static char *path_in(const char *dir, const char *name)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return NULL;
	return p;
}

/* Initialises out (capped at SA_LIST_MAX) and fills it; released again on failure. */
static int read_file(const char *dir, const char *name, struct dynbuf *out)
{
	char *p = path_in(dir, name);
	FILE *f = p ? fopen(p, "rb") : NULL;
	uint8_t chunk[65536];
	size_t n;
	int ret = 0;

	dynbuf_init(out, SA_LIST_MAX);
	if (!f) {
		fprintf(stderr, "softagent: cannot read %s/%s\n", dir, name);
		ret = -ENOENT;
		goto out;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		dynbuf_add(out, chunk, n);
	if (ferror(f) || dynbuf_error(out)) {
		fprintf(stderr, "softagent: cannot read %s/%s\n", dir, name);
		dynbuf_release(out);
		ret = -EIO;
	}
out:
	if (f)
		fclose(f);
	free(p);
	return ret;
}

static int write_file(const char *dir, const char *name, const void *data, size_t len,
		      mode_t mode)
{
	char *p = path_in(dir, name);
	char *tmp = p ? path_in(dir, ".tmp") : NULL;
	FILE *f = NULL;
	int ret = -EIO;

	if (!tmp)
		goto out;
	f = fopen(tmp, "wb");
	if (!f || chmod(tmp, mode) != 0)
		goto out;
	if (len && fwrite(data, 1, len, f) != len)
		goto out;
	if (fclose(f) != 0) {
		f = NULL;
		goto out;
	}
	f = NULL;
	if (rename(tmp, p) != 0)
		goto out;
	ret = 0;
out:
	if (f)
		fclose(f);
	if (ret)
		fprintf(stderr, "softagent: cannot write %s/%s\n", dir, name);
	free(p);
	free(tmp);
	return ret;
}

/* A one-line text file, without its newline, into a malloc'd string. */
static char *read_line(const char *dir, const char *name)
{
	struct dynbuf b;
	size_t len;
	char *s;

	if (read_file(dir, name, &b))
		return NULL;
	len = b.len;
	while (len && (b.buf[len - 1] == '\n' || b.buf[len - 1] == '\r'))
		len--;
	s = strndup(dynbuf_str(&b), len);
	dynbuf_release(&b);
	return s;
}

static int write_line(const char *dir, const char *name, const char *s)
{
	char *t = NULL;
	int ret;

	if (asprintf(&t, "%s\n", s) < 0)
		return -ENOMEM;
	ret = write_file(dir, name, t, strlen(t), 0644);
	free(t);
	return ret;
}

static EVP_PKEY *load_key(const char *dir, const char *name)
{
	char *p = path_in(dir, name);
	FILE *f = p ? fopen(p, "r") : NULL;
	EVP_PKEY *k = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;

	if (!k)
		fprintf(stderr, "softagent: cannot load key %s/%s\n", dir, name);
	if (f)
		fclose(f);
	free(p);
	return k;
}

static int save_key(const char *dir, const char *name, EVP_PKEY *k)
{
	char *p = path_in(dir, name);
	FILE *f = p ? fopen(p, "w") : NULL;
	int ret = -EIO;

	if (!f || chmod(p, 0600) != 0)
		goto out;
	if (PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) != 1)
		goto out;
	ret = 0;
out:
	if (f && fclose(f) != 0)
		ret = -EIO;
	if (ret)
		fprintf(stderr, "softagent: cannot write key %s/%s\n", dir, name);
	free(p);
	return ret;
}

static int load_clock(const char *dir, struct sa_clock *c)
{
	char *s = read_line(dir, "clock");
	unsigned long long clk;
	unsigned long rc, rs, rb;
	char *end;
	int ret = -EINVAL;

	if (!s)
		return -ENOENT;
	errno = 0;
	clk = strtoull(s, &end, 10);
	rc = strtoul(end, &end, 10);
	rs = strtoul(end, &end, 10);
	rb = strtoul(end, &end, 10);
	if (errno == 0 && *end == '\0' && rc <= UINT32_MAX && rs <= UINT32_MAX) {
		c->clock = clk;
		c->reset_count = (uint32_t)rc;
		c->restart_count = (uint32_t)rs;
		c->rebooted = rb != 0;
		ret = 0;
	} else {
		fprintf(stderr, "softagent: %s/clock is malformed\n", dir);
	}
	free(s);
	return ret;
}

static int save_clock(const char *dir, const struct sa_clock *c)
{
	char line[128];

	snprintf(line, sizeof(line), "%llu %u %u %u", (unsigned long long)c->clock, c->reset_count,
		 c->restart_count, c->rebooted);
	return write_line(dir, "clock", line);
}

/* IMA list --------------------------------------------------------------------------------------- */

/*
 * One ima-ng entry for PCR 10: sha256 digest, path (no NUL inside), violation or not. Without
 * fix_hash the template hash is left zero, as an attacker who edits an entry but not its hash.
 */
static int ima_ng_entry(struct dynbuf *out, const char *path, size_t path_len,
			const uint8_t digest[32], bool violation, bool fix_hash)
{
	size_t need = softtpm_ima_ng_size("sha256", 32, path_len);
	uint8_t *rec = need <= SA_LIST_MAX ? malloc(need) : NULL;
	int ret = -ENOMEM;

	if (rec && softtpm_ima_ng_entry(rec, need, "sha256", digest, 32, path, path_len,
					violation || !fix_hash) == (ssize_t)need)
		ret = dynbuf_add(out, rec, need);
	free(rec);
	return ret;
}

/* PCR 0-9 of the simulated machine: zero, as after a reset with no firmware measurements. */
static void boot_pcrs(struct pcr_set *s)
{
	memset(s, 0, sizeof(*s));
	pcr_set_add_bank(s, TPM2_ALG_SHA1)->mask = 0x3ff;
	pcr_set_add_bank(s, TPM2_ALG_SHA256)->mask = 0x3ff;
}

static int boot_aggregate_entry(struct dynbuf *out)
{
	struct pcr_set s;
	uint8_t ba[LIMIT_DIGEST];
	size_t ba_len = 0;

	boot_pcrs(&s);
	if (replay_boot_aggregate(TPM2_ALG_SHA256, &s, ba, &ba_len) || ba_len != 32)
		return -EINVAL;
	return ima_ng_entry(out, "boot_aggregate", 14, ba, false, true) ? -ENOMEM : 0;
}

struct span {
	size_t start, end;
};

/*
 * Decodes list.bin: entry spans into *spans (malloc'd, *n set) and the replayed PCR 10 into st.
 * The list was written by this tool, so any decode error is a bug or a damaged state dir.
 */
static int list_scan(const struct dynbuf *list, struct span **spans, size_t *n,
		     struct replay_state *st)
{
	struct imalog *log = imalog_new();
	struct replay_ctx *rc = replay_ctx_new(REPLAY_SHA1 | REPLAY_SHA256);
	struct ima_entry e;
	struct ima_error err;
	/* The whole list may go in one round (a reboot, a verifier that lost state). */
	struct dynbuf sp;
	struct span *one;
	int r, ret = -ENOMEM;

	dynbuf_init(&sp, (size_t)LIMIT_IMA_ENTRIES_PER_ROUND * sizeof(struct span));
	*spans = NULL;
	*n = 0;
	if (!log || !rc)
		goto out;
	replay_state_init(st, REPLAY_SHA1 | REPLAY_SHA256);
	imalog_reset(log, bytes(list), list->len, 0);
	while ((r = imalog_next(log, &e, &err)) == 1) {
		one = dynbuf_grow(&sp, sizeof(*one));
		if (!one)
			goto out;
		one->start = e.offset;
		one->end = e.end;
		(*n)++;
		if (replay_extend(rc, st, &e)) {
			ret = -EINVAL;
			goto out;
		}
	}
	if (r < 0) {
		fprintf(stderr, "softagent: list.bin entry %llu: %s\n",
			(unsigned long long)err.index, err.msg);
		ret = -EINVAL;
		goto out;
	}
	*spans = (struct span *)dynbuf_take(&sp, NULL);
	ret = *spans ? 0 : -ENOMEM;
out:
	if (ret)
		*n = 0;
	dynbuf_release(&sp);
	imalog_free(log);
	replay_ctx_free(rc);
	return ret;
}

/* "/a\x0ab" -> bytes; false on a bad escape or a NUL. */
static bool unescape_path(const char *in, size_t in_len, char *out, size_t cap, size_t *out_len)
{
	size_t o = 0;

	for (size_t i = 0; i < in_len; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c == '\\' && i + 1 < in_len && in[i + 1] == 'x') {
			uint8_t v;

			if (i + 4 > in_len || hex_decode(in + i + 2, 2, &v, 1) != 1)
				return false;
			c = v;
			i += 3;
		}
		if (c == 0 || o + 1 >= cap)
			return false;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	*out_len = o;
	return o > 0;
}

enum append_kind { APPEND_FILE, APPEND_VIOLATION, APPEND_FLOOD, APPEND_SPRAY };

/* "N:REST": N (1..LIMIT_IMA_ENTRIES_PER_ROUND) and where REST starts; false if it is not one. */
static bool count_prefix(const char *spec, unsigned long *n, const char **rest)
{
	char *end;

	errno = 0;
	*n = strtoul(spec, &end, 10);
	if (errno || end == spec || *end != ':' || *n == 0 || *n > LIMIT_IMA_ENTRIES_PER_ROUND ||
	    spec[0] == '-')
		return false;
	*rest = end + 1;
	return true;
}

static int append_spec(struct dynbuf *list, const char *spec, bool violation);

/* --flood N:PATH:HEX (N entries of one file) or --spray N:PREFIX (N distinct files). */
static int append_many(struct dynbuf *list, const char *spec, enum append_kind kind)
{
	char path[LIMIT_IMA_PATH + 1], name[LIMIT_IMA_PATH + 1];
	uint8_t digest[32];
	unsigned long n;
	const char *rest;
	size_t plen = 0;

	if (!count_prefix(spec, &n, &rest)) {
		fprintf(stderr, "softagent: --%s wants N:..., got \"%s\"\n",
			kind == APPEND_FLOOD ? "flood" : "spray", spec);
		return -EINVAL;
	}
	if (kind == APPEND_FLOOD) {
		for (unsigned long i = 0; i < n; i++)
			if (append_spec(list, rest, false))
				return -EINVAL;
		return dynbuf_error(list);
	}
	if (!unescape_path(rest, strlen(rest), path, sizeof(path) - 24, &plen)) {
		fprintf(stderr, "softagent: bad prefix in \"%s\"\n", spec);
		return -EINVAL;
	}
	for (unsigned long i = 0; i < n; i++) {
		int len = snprintf(name, sizeof(name), "%s%lu", path, i);

		SHA256((const uint8_t *)name, (size_t)len, digest);
		if (ima_ng_entry(list, name, (size_t)len, digest, false, true))
			return -ENOMEM;
	}
	return 0;
}

/* PATH:HEX (the last ':' splits) appended to list; a violation entry when hex is NULL. */
static int append_spec(struct dynbuf *list, const char *spec, bool violation)
{
	char path[LIMIT_IMA_PATH + 1];
	uint8_t digest[32] = { 0 };
	const char *colon = violation ? NULL : strrchr(spec, ':');
	size_t plen = violation ? strlen(spec) : (colon ? (size_t)(colon - spec) : 0), n = 0;

	if (!violation && (!colon || hex_decode(colon + 1, strlen(colon + 1), digest, 32) != 32)) {
		fprintf(stderr, "softagent: --append wants PATH:SHA256HEX, got \"%s\"\n", spec);
		return -EINVAL;
	}
	if (!unescape_path(spec, plen, path, sizeof(path), &n)) {
		fprintf(stderr, "softagent: bad path in \"%s\"\n", spec);
		return -EINVAL;
	}
	return ima_ng_entry(list, path, n, digest, violation, true) ? -ENOMEM : 0;
}

/* HTTP ----------------------------------------------------------------------------------------- */

static size_t on_data(char *p, size_t size, size_t nmemb, void *arg)
{
	struct dynbuf *b = arg; /* capped at SA_RESPONSE_MAX */
	size_t n = size * nmemb;

	return dynbuf_add(b, p, n) ? 0 : n;
}

/*
 * POSTs body to base+path; prints `name STATUS BODY`. *status 0 on a transport error.
 * *answer (if non-NULL) gets the NUL-terminated body, caller frees.
 */
static int http_post(const char *base, const char *cacert, const char *path, const char *name,
		     const char *body, size_t body_len, long *status, char **answer)
{
	/* the verifier's CA pinned, as attestd does (common/curl_setup.h) */
	const struct http_client_opts net = { .ca_file = cacert, .ca_only = true, .total_timeout = 60 };
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	struct dynbuf b;
	char *url = NULL, *text;
	size_t len;
	CURLcode cr;
	int ret = -EIO;

	dynbuf_init(&b, SA_RESPONSE_MAX);
	*status = 0;
	if (answer)
		*answer = NULL;
	if (!c || asprintf(&url, "%s%s", base, path) < 0)
		goto out;
	h = curl_slist_append(NULL, "Content-Type: application/json");
	if (!h || curl_setup_handle(c, &net) || curl_easy_setopt(c, CURLOPT_URL, url) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_POST, 1L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b) != CURLE_OK)
		goto out;
	cr = curl_easy_perform(c);
	if (cr != CURLE_OK) {
		/* A server that refuses a huge body early closes the connection: say so. */
		printf("%s 0 {\"transport\": \"%s\"}\n", name, curl_easy_strerror(cr));
		fflush(stdout);
		goto out;
	}
	if (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status) != CURLE_OK)
		goto out;
	text = dynbuf_take(&b, &len);
	if (!text)
		goto out;
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		text[--len] = '\0';
	printf("%s %ld %s\n", name, *status, text);
	fflush(stdout);
	if (answer)
		*answer = text;
	else
		free(text);
	ret = 0;
out:
	dynbuf_release(&b);
	free(url);
	curl_slist_free_all(h);
	if (c)
		curl_easy_cleanup(c);
	return ret;
}

/* Commands ------------------------------------------------------------------------------------- */

static int cmd_mkca(const char *dir)
{
	EVP_PKEY *key = NULL;
	X509 *cert = NULL;
	char *p = NULL;
	FILE *f = NULL;
	int ret = 2;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "softagent: mkdir %s: %s\n", dir, strerror(errno));
		return 2;
	}
	if (softtpm_ca_new("softagent test EK CA", &key, &cert))
		goto out;
	if (save_key(dir, "ca-key.pem", key))
		goto out;
	p = path_in(dir, "ca.pem");
	f = p ? fopen(p, "w") : NULL;
	if (!f || PEM_write_X509(f, cert) != 1)
		goto out;
	ret = 0;
out:
	if (f && fclose(f) != 0)
		ret = 2;
	if (ret)
		fprintf(stderr, "softagent: mkca %s failed\n", dir);
	free(p);
	X509_free(cert);
	EVP_PKEY_free(key);
	return ret;
}

static int cmd_init(const char *dir, const char *ca_key_path, const char *ca_cert_path)
{
	EVP_PKEY *ek = NULL, *ak = NULL, *ca_key = NULL;
	X509 *ca_cert = NULL;
	FILE *f = NULL;
	uint8_t *der = NULL;
	size_t der_len = 0;
	uint64_t serial = 0;
	struct dynbuf list;
	struct sa_clock clk = { .clock = 1000, .reset_count = 3, .restart_count = 2 };
	int ret = 2;

	dynbuf_init(&list, SA_LIST_MAX);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "softagent: mkdir %s: %s\n", dir, strerror(errno));
		return 2;
	}
	f = fopen(ca_key_path, "r");
	ca_key = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;
	if (f)
		fclose(f);
	f = fopen(ca_cert_path, "r");
	ca_cert = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
	if (f)
		fclose(f);
	f = NULL;
	if (!ca_key || !ca_cert) {
		fprintf(stderr, "softagent: cannot load the CA from %s and %s\n", ca_key_path,
			ca_cert_path);
		goto out;
	}
	ek = EVP_RSA_gen(2048);
	ak = EVP_EC_gen("P-256");
	if (!ek || !ak || RAND_bytes((uint8_t *)&serial, sizeof(serial)) != 1)
		goto out;
	serial = (serial >> 2) + 1;
	if (softtpm_ek_cert(ek, ca_key, ca_cert, serial, &der, &der_len))
		goto out;
	if (boot_aggregate_entry(&list))
		goto out;
	if (save_key(dir, "ek.pem", ek) || save_key(dir, "ak.pem", ak) ||
	    write_file(dir, "ek.der", der, der_len, 0644) ||
	    write_file(dir, "list.bin", list.buf, list.len, 0644) || save_clock(dir, &clk))
		goto out;
	ret = 0;
out:
	dynbuf_release(&list);
	free(der);
	EVP_PKEY_free(ek);
	EVP_PKEY_free(ak);
	EVP_PKEY_free(ca_key);
	X509_free(ca_cert);
	return ret;
}

static int cmd_reboot(const char *dir)
{
	struct sa_clock clk;
	struct dynbuf list;
	int ret = 2;

	if (load_clock(dir, &clk))
		return 2;
	dynbuf_init(&list, SA_LIST_MAX);
	clk.reset_count++;
	clk.restart_count = 0;
	clk.clock = 1000;
	clk.rebooted = 1;
	if (boot_aggregate_entry(&list) || write_file(dir, "list.bin", list.buf, list.len, 0644) ||
	    save_clock(dir, &clk))
		goto out;
	ret = 0;
out:
	dynbuf_release(&list);
	return ret;
}

static int cmd_ek_sha256(const char *dir)
{
	uint8_t pub[LIMIT_TPM2B_PUBLIC], d[SHA256_DIGEST_LENGTH];
	char hex[2 * SHA256_DIGEST_LENGTH + 1];
	EVP_PKEY *ek = load_key(dir, "ek.pem");
	size_t len = 0;
	int ret = 2;

	if (ek && !softtpm_ek_public(ek, pub, sizeof(pub), &len)) {
		SHA256(pub, len, d);
		hex_encode(d, sizeof(d), hex);
		printf("%s\n", hex);
		ret = 0;
	}
	EVP_PKEY_free(ek);
	return ret;
}

static int ak_public_of(EVP_PKEY *ak, uint32_t attrs, uint8_t *out, size_t *len)
{
	return softtpm_ak_public(ak, attrs, out, LIMIT_TPM2B_PUBLIC, len);
}

static int exit_for(long status)
{
	if (status == 0)
		return 2;
	return status >= 400 ? 1 : 0;
}

struct enroll_opts {
	const char *url, *cacert, *id, *attack, *other_dir;
	bool wrong_secret;
	double sleep_s;
};

static void sleep_for(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s,
			       .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	while (s > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int cmd_enroll(const char *dir, const struct enroll_opts *o)
{
	EVP_PKEY *ek = NULL, *ak = NULL;
	struct dynbuf ekcert;
	struct enroll_request er;
	struct enroll_response eresp;
	struct activate_request act;
	uint8_t ekpub[LIMIT_TPM2B_PUBLIC], akpub[LIMIT_TPM2B_PUBLIC];
	uint8_t name[LIMIT_TPM_NAME];
	size_t ekpub_len = 0, akpub_len = 0, name_len = 0, secret_len = 0;
	uint32_t attrs = 0;
	TPMT_PUBLIC akt;
	char *json = NULL, *answer = NULL, *path = NULL;
	const char *why = NULL;
	long status = 0;
	int ret = 2;

	dynbuf_init(&ekcert, SA_LIST_MAX);
	memset(&er, 0, sizeof(er));
	memset(&eresp, 0, sizeof(eresp));
	memset(&act, 0, sizeof(act));
	ek = load_key(dir, "ek.pem");
	ak = load_key(dir, "ak.pem");
	if (!ek || !ak)
		goto out;
	if (o->attack && !strcmp(o->attack, "ek-mismatch")) {
		/* Another TPM's genuine certificate presented with our EK. */
		if (!o->other_dir || read_file(o->other_dir, "ek.der", &ekcert))
			goto usage;
	} else if (read_file(dir, "ek.der", &ekcert)) {
		goto out;
	}
	if (o->attack && !strcmp(o->attack, "ak-unrestricted"))
		attrs = TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
			TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH;
	else if (o->attack && !strcmp(o->attack, "ak-not-fixedtpm"))
		attrs = TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT |
			TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
			TPMA_OBJECT_USERWITHAUTH;
	else if (o->attack && strcmp(o->attack, "ek-mismatch"))
		goto usage;
	if (softtpm_ek_public(ek, ekpub, sizeof(ekpub), &ekpub_len) ||
	    ak_public_of(ak, attrs, akpub, &akpub_len) ||
	    tpmkey_parse_public(akpub, akpub_len, &akt) || tpmkey_name(&akt, name, &name_len))
		goto out;
	if (strlen(o->id) > LIMIT_AGENT_ID)
		goto usage;
	/* Not agent_id_valid(): the verifier, not this tool, must refuse a bad id. */
	memcpy(er.agent_id, o->id, strlen(o->id) + 1);
	er.ek_pub = ekpub;
	er.ek_pub_len = ekpub_len;
	er.ek_cert = (uint8_t *)ekcert.buf;
	er.ek_cert_len = ekcert.len;
	er.ak_pub = akpub;
	er.ak_pub_len = akpub_len;
	json = enroll_request_encode(&er);
	if (!json || http_post(o->url, o->cacert, "/v1/agents", "enroll", json, strlen(json),
			       &status, &answer))
		goto out;
	if (status != 201) {
		ret = exit_for(status);
		goto out;
	}
	if (enroll_response_parse(answer, strlen(answer), &eresp, &why)) {
		fprintf(stderr, "softagent: enroll answer: %s\n", why ? why : "malformed");
		goto out;
	}
	secret_len = sizeof(act.secret);
	if (softtpm_activate_credential(ek, name, name_len, eresp.credential_blob,
					eresp.credential_blob_len, eresp.encrypted_secret,
					eresp.encrypted_secret_len, act.secret, &secret_len)) {
		fprintf(stderr, "softagent: the credential does not activate with this EK and AK\n");
		goto out;
	}
	act.secret_len = secret_len;
	if (o->wrong_secret)
		act.secret[0] ^= 0x01;
	sleep_for(o->sleep_s);
	free(json);
	free(answer);
	answer = NULL;
	json = activate_request_encode(&act);
	if (!json || asprintf(&path, "/v1/agents/%s/activate", o->id) < 0 ||
	    http_post(o->url, o->cacert, path, "activate", json, strlen(json), &status, NULL))
		goto out;
	ret = exit_for(status);
	if (write_line(dir, "url", o->url) || write_line(dir, "cacert", o->cacert) ||
	    write_line(dir, "id", o->id))
		ret = 2;
	goto out;
usage:
	fprintf(stderr, "softagent: enroll: unknown --attack or missing --other-dir\n");
out:
	OPENSSL_cleanse(&act, sizeof(act));
	if (json)
		OPENSSL_cleanse(json, strlen(json));
	free(json);
	free(answer);
	free(path);
	enroll_response_release(&eresp);
	dynbuf_release(&ekcert);
	EVP_PKEY_free(ek);
	EVP_PKEY_free(ak);
	return ret;
}

struct round_opts {
	const char *append[SA_MAX_APPEND];
	enum append_kind append_kind[SA_MAX_APPEND];
	unsigned nappend;
	const char *attack, *other_dir, *other_id;
	double sleep_s;
	unsigned interval; /* reported with the evidence; 0: none */
};

/* Names of the evidence attacks; each is described where it is applied. */
static const char *const round_attacks[] = {
	"replay", "foreign-nonce", "ak-random", "ak-other", "quote-nonce", "pcr-selection",
	"pcr-selection-drop10", "pcr-digest", "pcr-digest-boot", "bank-split", "edit", "edit-raw",
	"reorder", "truncate", "drop-middle", "fabricate", "boot-aggregate-middle", "bad-template-name",
	"reset-back", "restart-back", "clock-back", "offset-ahead", "offset-behind",
	"record-len-overflow", "name-len-overflow", "field-len-overflow", "nonce-empty",
	"nonce-65", "nonce-15", "bad-base64", "deep-json", "dup-key", "pcr-index-huge",
	"pcr-index-24", "unknown-bank", "offset-huge", "offset-negative", "oversized", "pcr10-zero",
	"firmware-changed", NULL,
};

static bool attack_is(const struct round_opts *o, const char *name)
{
	return o->attack && !strcmp(o->attack, name);
}

/* JSON-level mutations of an encoded evidence body; returns a new malloc'd body or NULL. */
static char *mutate_json(const char *json, const struct round_opts *o, size_t *len)
{
	json_t *root = json_loads(json, 0, NULL);
	json_t *pcrs = root ? json_object_get(root, "pcrs") : NULL;
	json_t *sha256 = pcrs ? json_object_get(pcrs, "sha256") : NULL;
	char *out = NULL;
	uint8_t raw[65];
	char hex[2 * sizeof(raw) + 1];

	if (!root || !sha256)
		goto out;
	if (attack_is(o, "nonce-empty") || attack_is(o, "nonce-65") || attack_is(o, "nonce-15")) {
		size_t n = attack_is(o, "nonce-empty") ? 0 : attack_is(o, "nonce-65") ? 65 : 15;

		if (RAND_bytes(raw, sizeof(raw)) != 1)
			goto out;
		hex_encode(raw, n, hex);
		json_object_set_new(root, "nonce", json_string(hex));
	} else if (attack_is(o, "bad-base64")) {
		json_object_set_new(root, "attest", json_string("AAAA!!!!====\n"));
	} else if (attack_is(o, "pcr-index-huge") || attack_is(o, "pcr-index-24")) {
		json_t *v = json_object_get(sha256, "10");

		json_object_set(sha256, attack_is(o, "pcr-index-24") ? "24" : "4294967306", v);
	} else if (attack_is(o, "unknown-bank")) {
		json_object_set(pcrs, "md5", sha256);
	} else if (attack_is(o, "offset-negative")) {
		json_object_set_new(root, "log_offset", json_integer(-1));
	}
	out = json_dumps(root, JSON_COMPACT);
	if (out && (attack_is(o, "dup-key") || attack_is(o, "offset-huge"))) {
		/* jansson cannot write these; splice text after the opening brace. */
		const char *ins = attack_is(o, "dup-key")
					  ? "\"log_offset\":0,"
					  : "\"log_offset\":18446744073709551615,";
		char *t = NULL;

		if (attack_is(o, "offset-huge")) {
			json_object_del(root, "log_offset");
			free(out);
			out = json_dumps(root, JSON_COMPACT);
			if (!out)
				goto out;
		}
		if (asprintf(&t, "{%s%s", ins, out + 1) < 0)
			t = NULL;
		free(out);
		out = t;
	}
	if (out && attack_is(o, "deep-json")) {
		size_t n = SA_DEEP_JSON, total = 2 * n + 16;
		char *t = malloc(total);

		free(out);
		out = NULL;
		if (!t)
			goto out;
		memcpy(t, "{\"nonce\":", 9);
		memset(t + 9, '[', n);
		memset(t + 9 + n, ']', n);
		memcpy(t + 9 + 2 * n, "}", 2);
		out = t;
	}
out:
	json_decref(root);
	if (out)
		*len = strlen(out);
	return out;
}

/* The spans of entries sent, mutated as the attack says, concatenated into *log. */
static int build_log(const struct dynbuf *list, const struct span *all, size_t nall, size_t from,
		     const struct round_opts *o, struct dynbuf *log)
{
	size_t n = from < nall ? nall - from : 0;
	const struct span *s = all + (from < nall ? from : nall);
	struct span tmp;
	struct span *v = NULL;
	int ret = -EINVAL;

	dynbuf_init(log, SA_LIST_MAX);
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, s, n * sizeof(*v));
	if (attack_is(o, "reorder")) {
		if (n < 2)
			goto need;
		tmp = v[n - 1];
		v[n - 1] = v[n - 2];
		v[n - 2] = tmp;
	} else if (attack_is(o, "truncate")) {
		if (n < 1)
			goto need;
		n--;
	} else if (attack_is(o, "drop-middle")) {
		if (n < 3)
			goto need;
		memmove(&v[1], &v[n - 1], sizeof(*v));
		n = 2;
	}
	for (size_t i = 0; i < n; i++) {
		bool last = i + 1 == n;
		const uint8_t *e = bytes(list) + v[i].start;
		size_t elen = v[i].end - v[i].start;

		if (last && (attack_is(o, "edit") || attack_is(o, "edit-raw"))) {
			/* Flip a bit of the file digest (last 32+? bytes: the path follows it). */
			struct imalog *cur = imalog_new();
			struct ima_entry ent;
			uint8_t d[32];

			if (!cur)
				goto out;
			imalog_reset(cur, e, elen, 0);
			if (imalog_next(cur, &ent, NULL) != 1 || !ent.digest || ent.digest_len != 32 ||
			    !ent.path) {
				imalog_free(cur);
				goto out;
			}
			memcpy(d, ent.digest, 32);
			d[0] ^= 0x01;
			if (ima_ng_entry(log, ent.path, ent.path_len, d, false, attack_is(o, "edit"))) {
				imalog_free(cur);
				goto out;
			}
			if (attack_is(o, "edit-raw")) {
				/* keep the original template hash: the entry no longer matches it */
				memcpy(log->buf + log->len - elen + 4, ent.template_hash, 20);
			}
			imalog_free(cur);
			continue;
		}
		dynbuf_add(log, e, elen);
	}
	if (attack_is(o, "record-len-overflow") || attack_is(o, "name-len-overflow") ||
	    attack_is(o, "field-len-overflow")) {
		uint8_t th[20] = { 1 };

		buf_u32(log, PCR_IMA);
		if (attack_is(o, "field-len-overflow")) {
			/* template data length is honest; the d-ng field inside claims 4 GiB */
			struct dynbuf data;

			dynbuf_init(&data, 64);
			buf_u32(&data, 0xffffffffu);
			dynbuf_add(&data, "sha256:", 8);
			if (dynbuf_error(&data)) {
				dynbuf_release(&data);
				goto out;
			}
			SHA1(bytes(&data), data.len, th);
			dynbuf_add(log, th, 20);
			buf_u32(log, 6);
			dynbuf_add(log, "ima-ng", 6);
			buf_u32(log, (uint32_t)data.len);
			dynbuf_add(log, data.buf, data.len);
			dynbuf_release(&data);
		} else {
			dynbuf_add(log, th, 20);
			if (attack_is(o, "name-len-overflow")) {
				buf_u32(log, 0xffffffffu);
				dynbuf_add(log, "ima-ng", 6);
			} else {
				buf_u32(log, 6);
				dynbuf_add(log, "ima-ng", 6);
				buf_u32(log, 0xffffffffu);
				dynbuf_add(log, "sha256:", 8);
			}
		}
	}
	ret = dynbuf_error(log) ? -ENOMEM : 0;
	goto out;
need:
	fprintf(stderr, "softagent: --attack %s needs more new entries (use --append)\n", o->attack);
out:
	free(v);
	if (ret)
		dynbuf_release(log);
	return ret;
}

/* Sets PCR 0-9 (zeros) and PCR 10 (st) into the challenge's banks and masks. */
static int fill_pcrs(const struct challenge *ch, const struct replay_state *st, struct pcr_set *out)
{
	*out = ch->selection;
	for (unsigned i = 0; i < out->nbanks; i++) {
		struct pcr_bank *b = &out->bank[i];
		size_t len = 0;
		const uint8_t *v = replay_state_pcr(st, b->alg, &len);

		memset(b->value, 0, sizeof(b->value));
		if ((b->mask & (1u << PCR_IMA)) && v)
			memcpy(b->value[PCR_IMA], v, len);
	}
	return out->nbanks ? 0 : -EINVAL;
}

static int get_challenge(const char *url, const char *cacert, const char *id, struct challenge *ch,
			 long *status)
{
	char *path = NULL, *answer = NULL;
	const char *why = NULL;
	int ret = -EIO;

	if (asprintf(&path, "/v1/agents/%s/challenges", id) < 0)
		return -ENOMEM;
	if (http_post(url, cacert, path, "challenge", "", 0, status, &answer))
		goto out;
	if (*status != 201) {
		ret = -EPROTO;
		goto out;
	}
	if (challenge_parse(answer, strlen(answer), ch, &why)) {
		fprintf(stderr, "softagent: challenge answer: %s\n", why ? why : "malformed");
		goto out;
	}
	ret = 0;
out:
	free(path);
	free(answer);
	return ret;
}

static int cmd_round(const char *dir, const struct round_opts *o)
{
	char *url = read_line(dir, "url"), *cacert = read_line(dir, "cacert");
	char *id = read_line(dir, "id"), *json = NULL, *body = NULL, *path = NULL;
	EVP_PKEY *ak = NULL, *signer = NULL;
	struct sa_clock clk;
	struct softtpm_clock qclk;
	struct dynbuf list, log;
	struct span *spans = NULL;
	size_t nspans = 0, body_len = 0, attest_len = 0, sig_len = 0;
	struct replay_state st;
	struct challenge ch, other;
	struct pcr_set pcrs;
	struct evidence ev;
	uint8_t attest[LIMIT_ATTEST], sig[LIMIT_SIGNATURE], qnonce[LIMIT_NONCE_BYTES];
	uint64_t from, prev_clock;
	long status = 0;
	int ret = 2;

	dynbuf_init(&list, SA_LIST_MAX);
	dynbuf_init(&log, SA_LIST_MAX);
	memset(&ev, 0, sizeof(ev));
	if (o->attack) {
		bool known = false;

		for (unsigned i = 0; round_attacks[i]; i++)
			known |= !strcmp(round_attacks[i], o->attack);
		if (!known) {
			fprintf(stderr, "softagent: unknown --attack %s\n", o->attack);
			goto out;
		}
	}
	if (!url || !cacert || !id || load_clock(dir, &clk) || read_file(dir, "list.bin", &list))
		goto out;
	ak = load_key(dir, "ak.pem");
	if (!ak)
		goto out;

	/* The simulated kernel appends first (true entries, extended into PCR 10). */
	for (unsigned i = 0; i < o->nappend; i++)
		if (o->append_kind[i] == APPEND_FLOOD || o->append_kind[i] == APPEND_SPRAY
			    ? append_many(&list, o->append[i], o->append_kind[i])
			    : append_spec(&list, o->append[i], o->append_kind[i] == APPEND_VIOLATION))
			goto out;
	if (attack_is(o, "fabricate")) {
		/* Root writes a made-up entry and extends PCR 10 to match it. */
		uint8_t d[32];

		if (RAND_bytes(d, sizeof(d)) != 1)
			goto out;
		if (ima_ng_entry(&list, "/usr/bin/fabricated", 19, d, false, true))
			goto out;
	} else if (attack_is(o, "boot-aggregate-middle")) {
		if (boot_aggregate_entry(&list))
			goto out;
	} else if (attack_is(o, "bad-template-name")) {
		/* An entry of an unknown template whose name is not UTF-8 (and HTML). */
		static const char name[] = "<b>\xff\xfe";
		static const uint8_t data[] = { 4, 0, 0, 0, 'a', 'b', 'c', 'd' };
		uint8_t th[SHA_DIGEST_LENGTH];

		SHA1(data, sizeof(data), th);
		buf_u32(&list, PCR_IMA);
		dynbuf_add(&list, th, sizeof(th));
		buf_u32(&list, (uint32_t)(sizeof(name) - 1));
		dynbuf_add(&list, name, sizeof(name) - 1);
		buf_u32(&list, (uint32_t)sizeof(data));
		dynbuf_add(&list, data, sizeof(data));
	}
	if (dynbuf_error(&list) || list_scan(&list, &spans, &nspans, &st))
		goto out;
	if (write_file(dir, "list.bin", list.buf, list.len, 0644))
		goto out;

	if (get_challenge(url, cacert, id, &ch, &status)) {
		ret = status ? exit_for(status) : 2;
		goto out;
	}
	from = clk.rebooted ? 0 : ch.log_offset;
	if (from > nspans) {
		fprintf(stderr, "softagent: the verifier expects entry %llu, the list has %zu\n",
			(unsigned long long)from, nspans);
		goto out;
	}
	if (attack_is(o, "offset-behind") && from > 0)
		from--;
	if (build_log(&list, spans, nspans, (size_t)from, o, &log))
		goto out;
	if (fill_pcrs(&ch, &st, &pcrs))
		goto out;

	/* The TPM's clock moves on in every round; the attacks below lie about it. */
	prev_clock = clk.clock;
	clk.clock += 1000;
	qclk = (struct softtpm_clock){ .clock = clk.clock, .reset_count = clk.reset_count,
				       .restart_count = clk.restart_count, .safe = 1 };
	if (attack_is(o, "reset-back"))
		qclk.reset_count--;
	else if (attack_is(o, "restart-back"))
		qclk.restart_count--;
	else if (attack_is(o, "clock-back"))
		qclk.clock = prev_clock - 1; /* just before the previous round's quote */

	memcpy(qnonce, ch.nonce, ch.nonce_len);
	if (attack_is(o, "foreign-nonce")) {
		/* A challenge issued to another agent, answered as this one. */
		if (!o->other_id || get_challenge(url, cacert, o->other_id, &other, &status))
			goto out;
		memcpy(ch.nonce, other.nonce, other.nonce_len);
		ch.nonce_len = other.nonce_len;
		memcpy(qnonce, other.nonce, other.nonce_len);
	} else if (attack_is(o, "quote-nonce")) {
		if (RAND_bytes(qnonce, (int)ch.nonce_len) != 1)
			goto out;
	}
	if (attack_is(o, "pcr-selection")) {
		for (unsigned i = 0; i < pcrs.nbanks; i++)
			pcrs.bank[i].mask |= 1u << 11;
	} else if (attack_is(o, "pcr-selection-drop10")) {
		for (unsigned i = 0; i < pcrs.nbanks; i++)
			pcrs.bank[i].mask &= ~(1u << PCR_IMA);
	} else if (attack_is(o, "firmware-changed")) {
		/* PCR 0 is not what the list's boot_aggregate was computed from (quoted as it is). */
		for (unsigned i = 0; i < pcrs.nbanks; i++)
			pcrs.bank[i].value[0][0] ^= 0x01;
	} else if (attack_is(o, "pcr10-zero")) {
		/* A TPM whose PCR 10 IMA never extended: quoted (and reported) at its reset value. */
		for (unsigned i = 0; i < pcrs.nbanks; i++)
			memset(pcrs.bank[i].value[PCR_IMA], 0, sizeof(pcrs.bank[i].value[PCR_IMA]));
	} else if (attack_is(o, "bank-split")) {
		/* sha1 PCR 10 tells the truth, sha256 PCR 10 does not; both are quoted */
		struct pcr_bank *b = pcr_set_bank(&pcrs, TPM2_ALG_SHA256);

		if (!b)
			goto out;
		b->value[PCR_IMA][0] ^= 0x80;
	}

	signer = ak;
	if (attack_is(o, "ak-random")) {
		signer = EVP_EC_gen("P-256");
	} else if (attack_is(o, "ak-other")) {
		if (!o->other_dir)
			goto out;
		signer = load_key(o->other_dir, "ak.pem");
	}
	if (!signer)
		goto out;
	if (softtpm_quote(signer, qnonce, ch.nonce_len, &pcrs, &qclk, attest, sizeof(attest),
			  &attest_len, sig, sizeof(sig), &sig_len))
		goto out;
	if (attack_is(o, "pcr-digest")) {
		/* reported after quoting: PCR 10 no longer matches pcrDigest */
		pcr_set_bank(&pcrs, TPM2_ALG_SHA256)->value[PCR_IMA][31] ^= 0x01;
	} else if (attack_is(o, "pcr-digest-boot")) {
		pcr_set_bank(&pcrs, TPM2_ALG_SHA256)->value[0][0] ^= 0x01;
	}

	memcpy(ev.nonce, ch.nonce, ch.nonce_len);
	ev.nonce_len = ch.nonce_len;
	ev.interval = o->interval;
	ev.attest = attest;
	ev.attest_len = attest_len;
	ev.signature = sig;
	ev.signature_len = sig_len;
	ev.pcrs = pcrs;
	ev.log_offset = from + (attack_is(o, "offset-ahead") ? 5 : 0);
	ev.log = (uint8_t *)log.buf;
	ev.log_len = log.len;
	json = evidence_encode(&ev);
	if (!json)
		goto out;
	if (attack_is(o, "oversized")) {
		body_len = LIMIT_REQUEST_BODY + 1;
		body = malloc(body_len + 1);
		if (!body)
			goto out;
		memset(body, ' ', body_len);
		body[0] = '{';
		body[body_len - 1] = '}';
		body[body_len] = '\0';
	} else {
		body = mutate_json(json, o, &body_len);
		if (!body)
			goto out;
	}

	sleep_for(o->sleep_s);
	if (asprintf(&path, "/v1/agents/%s/evidence", id) < 0) {
		path = NULL;
		goto out;
	}
	if (http_post(url, cacert, path, "evidence", body, body_len, &status, NULL))
		goto out;
	if (attack_is(o, "replay") &&
	    http_post(url, cacert, path, "evidence", body, body_len, &status, NULL))
		goto out;
	ret = exit_for(status);
	if (ret == 0 || ret == 1) {
		/* the TPM's clock advanced whatever the verifier said */
		clk.rebooted = 0;
		if (save_clock(dir, &clk))
			ret = 2;
	}
out:
	if (signer && signer != ak)
		EVP_PKEY_free(signer);
	EVP_PKEY_free(ak);
	free(spans);
	dynbuf_release(&list);
	dynbuf_release(&log);
	free(json);
	free(body);
	free(path);
	free(url);
	free(cacert);
	free(id);
	return ret;
}

/* Main ----------------------------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
		"usage: softagent mkca DIR\n"
		"       softagent init DIR --ca-key KEY --ca-cert CERT\n"
		"       softagent enroll DIR --verifier URL --cacert FILE --id ID [--wrong-secret]\n"
		"                        [--attack ek-mismatch|ak-unrestricted|ak-not-fixedtpm]\n"
		"                        [--other-dir DIR2] [--sleep SECONDS]\n"
		"       softagent round DIR [--append PATH:HEX]... [--violation PATH]...\n"
		"                       [--flood N:PATH:HEX] [--spray N:PREFIX]\n"
		"                       [--attack NAME] [--other-dir DIR2] [--other-id ID2]\n"
		"                       [--sleep SECONDS] [--interval SECONDS]\n"
		"       softagent reboot DIR\n"
		"       softagent ek-sha256 DIR\n"
		"round attacks:");
	for (unsigned i = 0; round_attacks[i]; i++)
		fprintf(stderr, " %s", round_attacks[i]);
	fprintf(stderr, "\n");
}

int main(int argc, char **argv)
{
	const char *cmd, *dir, *ca_key = NULL, *ca_cert = NULL;
	struct enroll_opts eo = { 0 };
	struct round_opts ro = { 0 };
	int ret;

	if (argc < 3) {
		usage();
		return 2;
	}
	cmd = argv[1];
	dir = argv[2];
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--wrong-secret")) {
			eo.wrong_secret = true;
			continue;
		}
		if (!v) {
			usage();
			return 2;
		}
		i++;
		if (!strcmp(a, "--ca-key")) {
			ca_key = v;
		} else if (!strcmp(a, "--ca-cert")) {
			ca_cert = v;
		} else if (!strcmp(a, "--verifier")) {
			eo.url = v;
		} else if (!strcmp(a, "--cacert")) {
			eo.cacert = v;
		} else if (!strcmp(a, "--id")) {
			eo.id = v;
		} else if (!strcmp(a, "--attack")) {
			eo.attack = ro.attack = v;
		} else if (!strcmp(a, "--other-dir")) {
			eo.other_dir = ro.other_dir = v;
		} else if (!strcmp(a, "--other-id")) {
			ro.other_id = v;
		} else if (!strcmp(a, "--append") || !strcmp(a, "--violation") ||
			   !strcmp(a, "--flood") || !strcmp(a, "--spray")) {
			if (ro.nappend == SA_MAX_APPEND) {
				fprintf(stderr, "softagent: at most %d entries per round\n",
					SA_MAX_APPEND);
				return 2;
			}
			ro.append_kind[ro.nappend] = !strcmp(a, "--violation") ? APPEND_VIOLATION
						     : !strcmp(a, "--flood")   ? APPEND_FLOOD
						     : !strcmp(a, "--spray")   ? APPEND_SPRAY
									       : APPEND_FILE;
			ro.append[ro.nappend++] = v;
		} else if (!strcmp(a, "--interval")) {
			char *end;
			unsigned long n = strtoul(v, &end, 10);

			if (*end || n == 0 || n > LIMIT_AGENT_INTERVAL) {
				usage();
				return 2;
			}
			ro.interval = (unsigned)n;
		} else if (!strcmp(a, "--sleep")) {
			char *end;

			ro.sleep_s = strtod(v, &end);
			if (*end || ro.sleep_s < 0 || ro.sleep_s > 60) {
				usage();
				return 2;
			}
			eo.sleep_s = ro.sleep_s;
		} else {
			usage();
			return 2;
		}
	}
	if (curl_setup_global())
		return 2;
	if (!strcmp(cmd, "mkca")) {
		ret = cmd_mkca(dir);
	} else if (!strcmp(cmd, "init") && ca_key && ca_cert) {
		ret = cmd_init(dir, ca_key, ca_cert);
	} else if (!strcmp(cmd, "enroll") && eo.url && eo.cacert && eo.id) {
		ret = cmd_enroll(dir, &eo);
	} else if (!strcmp(cmd, "round")) {
		ret = cmd_round(dir, &ro);
	} else if (!strcmp(cmd, "reboot")) {
		ret = cmd_reboot(dir);
	} else if (!strcmp(cmd, "ek-sha256")) {
		ret = cmd_ek_sha256(dir);
	} else {
		usage();
		ret = 2;
	}
	curl_global_cleanup();
	return ret;
}
