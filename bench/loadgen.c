/*
 * loadgen: N software agents against a real verifier over HTTPS, for throughput and latency.
 *
 *   loadgen --make-ca DIR
 *       Writes DIR/ek-ca.pem (an EC P-256 EK CA certificate for the verifier's --ek-ca),
 *       DIR/ek-ca.key and DIR/policy.json (the LOADGEN_FILES paths the agents measure, each
 *       with sha256 = SHA-256(path)).
 *   loadgen --url https://127.0.0.1:PORT --ca VERIFIER_CA --ek-ca-dir DIR --agents N
 *           [--threads T] [--seconds S] [--verifier-pid PID] [--entries-per-round K]
 *           [--verdict-log FILE] [--max-errors N] [--error-pause-ms MS]
 *           [--id-prefix PREFIX] [--pending 1] [--split-connections 1] [--drain-outbox 1]
 *           [--fresh-challenges 1] [--warmup-rounds N]
 *           [--interval S --change-per-min PCT [--detect-log FILE]]
 *
 * Each agent is what a TPM and attestd would send, made in software:
 *   - an EC P-256 EK of its own in the TCG default template L-2 (softtpm_ek_public), with an
 *     EK certificate signed by the CA above: the verifier takes one EK as one agent, and a
 *     P-256 key is made in microseconds where RSA-2048 takes ~100 ms;
 *   - an ECDSA P-256 AK (softtpm_ak_public); ECDSA keeps the load generator's signing cost
 *     (~30 us) small next to the verifier's work;
 *   - ActivateCredential in software (softtpm_activate_credential: ECDH and KDFe for the
 *     seed, KDFa, outer HMAC check, AES-128-CFB decrypt; the mirror of proto/credential.c);
 *   - per round: a challenge (the one the last verdict carried; --fresh-challenges 1 asks
 *     POST .../challenges every round, the protocol's two exchanges), K new ima-ng entries
 *     (the first round also boot_aggregate),
 *     PCR 10 extended with proto/replay, a softtpm quote over sha1+sha256 PCR 0-10, evidence
 *     with the entries from the challenge's log_offset on.
 * Threads: T, each with one libcurl handle (TLS, keep-alive) serving agents i % T == t, closed
 * loop. Setup and enrollment are untimed. For S seconds every thread attests its agents round
 * robin; latency is one attestation as the agent sees it (from the start of its round, a
 * challenge asked for or not, to its verdict, the quote made in between).
 *
 * --drain-outbox 1: before the timed phase, wait until the verifier's /metrics says no webhook
 * delivery is pending (the enrollments' events delivered), so that what the timed phase raises
 * is not queued behind them; prints outbox_drain_s.
 * --warmup-rounds N: after enrollment, N untimed rounds of every agent (each trusted, else the
 * run fails), so that the timed phase measures a fleet in its steady state whatever its size:
 * with 100,000 agents a 15 s run would otherwise attest each agent at most once, always its
 * first round (a whole list, a challenge asked for, a boot state inserted). The line
 * `timed_phase 1` is printed (flushed) when the timed phase starts.
 *
 * --split-connections 1: each thread has a second connection of its own, so that behind a
 * load balancer a challenge and its answer usually reach different verifiers (the scale-out
 * test: a challenge of one verifier accepted by another, verifier/store/cluster.h). A challenge asked
 * for is answered on the second connection; one a verdict carried, on the other connection than
 * the one that verdict came on.
 *
 * --interval S: a paced fleet instead of a closed loop, as attestd runs: each agent sends a
 * round every S seconds (the heartbeat; the first ones spread evenly over S), and PCT percent of
 * the agents per minute run a program the policy does not list, at random moments of the timed
 * phase (each agent at most once). Such an agent sends a round at its next look for new
 * measurements (attestd's --watch 1: uniform in 0..1 s later) instead of at its heartbeat, with
 * the unlisted entry in it; the time from the program's start to its untrusted verdict is the
 * time to detect (`detect_n`, `detect_p50_ms`, `detect_p99_ms`; `untrusted` counts these
 * verdicts and any other untrusted one is an error). --detect-log appends
 * `change_unix_ms verdict_unix_ms agent_id` per detection, for the webhook's delivery time.
 *
 * Agent ids are PREFIX-NNNNN (bench-00000 ...). --pending 1 enrolls them and stops there,
 * leaving N pending enrollments (the web page's paging test).
 *
 * Fault tests (tests/faults/): --verdict-log appends `unix_ms agent_id verdict_id` for every
 * verdict received, as soon as it is received; --max-errors lets each thread survive N failed
 * rounds (default 100) and --error-pause-ms waits that long after each, so a verifier that is
 * down for a moment is waited for instead of ending the run.
 *
 * Output lines `key value`: agents threads enroll_s [warmup_s] timed_phase attestations seconds
 * per_s p50_ms p99_ms [detect_n detect_p50_ms detect_p99_ms] untrusted errors challenges (asked for in the timed phase) refused_given
 * (a verdict's challenge refused, another asked for) verifier_cpu_pct verifier_cpu_ms (its CPU
 * over the timed phase, /proc's clock ticks) loadgen_cpu_pct
 * rss_start_kib rss_enrolled_kib rss_end_kib.
 */
#define OPENSSL_SUPPRESS_DEPRECATED /* SHA1_Init for boot_aggregate */
#include <inttypes.h>
#include <pthread.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <tss2/tss2_tpm2_types.h>

#include "bench/bench.h"
#include "common/curl_setup.h"
#include "proto/dynbuf.h"
#include "proto/encoding.h"
#include "proto/errors.h"
#include "proto/evidence.h"
#include "proto/imalog.h"
#include "proto/limits.h"
#include "proto/replay.h"
#include "tests/lib/softtpm.h"
#include "proto/tpmkey.h"

#define LOADGEN_FILES 1000u
#define LOADGEN_MAX_AGENTS 100000u
#define LOADGEN_MAX_THREADS 256u
#define LOADGEN_MAX_LAT 4000000u
#define LOADGEN_RESP_MAX (1u << 20)
#define LOADGEN_LOOK_S 1.0 /* attestd's --watch default: a look for new measurements per second */

struct agent {
	char id[24];
	unsigned index;
	EVP_PKEY *ek;
	uint8_t ek_pub[LIMIT_TPM2B_PUBLIC];
	size_t ek_pub_len;
	uint8_t *cert;
	size_t cert_len;
	EVP_PKEY *ak;
	uint8_t ak_pub[LIMIT_TPM2B_PUBLIC];
	size_t ak_pub_len;
	uint8_t ak_name[LIMIT_TPM_NAME];
	size_t ak_name_len;
	struct pcr_set pcrs;
	struct replay_state pcr10;
	struct softtpm_clock clk;
	/* The agent's whole IMA list: it may all go in one round (a verifier that lost state). */
	struct dynbuf list;      /* at most LIMIT_REQUEST_BODY */
	struct dynbuf entry_off; /* size_t byte offset of each entry, LIMIT_IMA_ENTRIES_PER_ROUND */
	size_t nentries;
	unsigned files_next;
	/* The challenge the last verdict carried, for the next round (one exchange per round). */
	struct challenge next;
	bool has_next;
	CURL *next_via; /* the connection that verdict came on */
	/* --interval: the next round's time (bench_now()), and the unlisted program's start (0:
	 * none, or already reported); unlisted: the next round carries it. */
	double due, change_at, seen_at; /* seen_at: attestd's first look after change_at */
	bool unlisted, detected; /* detected: it stays untrusted from then on, as it should */
};

struct opts {
	const char *url, *ca, *dir;
	unsigned agents, threads, per_round;
	double seconds;
	int vpid;
	unsigned long max_errors;
	unsigned error_pause_ms;
	const char *id_prefix;
	bool pending; /* enroll only */
	bool drain;   /* before the timed phase, wait until the verifier's webhook outbox is empty */
	bool split;   /* evidence on a connection of its own */
	bool fresh;   /* ask a challenge every round, ignoring the one a verdict carries */
	unsigned warmup; /* untimed rounds of every agent before the timed phase */
	FILE *verdict_log; /* shared by the threads: one fprintf per line, flushed at once */
	double interval;   /* > 0: a paced fleet (rounds every interval seconds), not a closed loop */
	double change_pct; /* with interval: percent of the agents per minute that run an unlisted program */
	FILE *detect_log;  /* with interval: one line per detection */
};

struct worker {
	pthread_t tid;
	unsigned index;
	const struct opts *o;
	struct agent *agents;
	CURL *curl, *curl_evidence; /* the same handle unless --split-connections */
	struct curl_slist *hdr;
	struct replay_ctx *rc;
	struct imalog *log;
	double *lat;
	size_t nlat;
	double *detect; /* --interval: ms from an unlisted program's start to its verdict */
	size_t ndetect;
	unsigned long untrusted, errors;
	unsigned long challenges;    /* asked for (POST .../challenges) */
	unsigned long refused_given; /* a verdict's challenge refused: asked for another */
	double stop_at;
	int phase; /* 0 enroll, 1 attest (timed), 2 warm-up */
	int failed;
};

struct buf {
	char *p;
	size_t len;
};

static void agent_init(struct agent *a)
{
	dynbuf_init(&a->list, LIMIT_REQUEST_BODY);
	dynbuf_init(&a->entry_off, (size_t)LIMIT_IMA_ENTRIES_PER_ROUND * sizeof(size_t));
}

static size_t entry_off(const struct agent *a, size_t i)
{
	return ((const size_t *)a->entry_off.buf)[i];
}

static size_t on_data(char *ptr, size_t size, size_t n, void *arg)
{
	struct dynbuf *b = arg; /* capped at LOADGEN_RESP_MAX */
	size_t add = size * n;

	return dynbuf_add(b, ptr, add) ? 0 : add;
}

/* How every handle reaches the verifier (common/curl_setup.h): its CA pinned, as attestd does. */
static struct http_client_opts net_opts(const struct opts *o)
{
	return (struct http_client_opts){ .ca_file = o->ca, .ca_only = true, .total_timeout = 30 };
}

/*
 * The verifier's attest_webhook_deliveries_pending from GET /metrics (public); -1 when it
 * cannot be read.
 */
static long long outbox_pending(const struct opts *o)
{
	static const char key[] = "\nattest_webhook_deliveries_pending ";
	char url[512];
	struct dynbuf body;
	const struct http_client_opts net = net_opts(o);
	CURL *c = curl_easy_init();
	long status = 0;
	long long n = -1;

	dynbuf_init(&body, (size_t)64 << 20); /* per-agent series at 100,000 agents fit */
	if (c && (size_t)snprintf(url, sizeof(url), "%s/metrics", o->url) < sizeof(url) &&
	    curl_setup_handle(c, &net) == 0 && curl_easy_setopt(c, CURLOPT_URL, url) == CURLE_OK &&
	    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data) == CURLE_OK &&
	    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body) == CURLE_OK &&
	    curl_easy_perform(c) == CURLE_OK &&
	    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK && status == 200 &&
	    body.buf && !body.err) {
		const char *p = strstr(body.buf, key);
		char *end;

		if (p) {
			errno = 0;
			n = strtoll(p + sizeof(key) - 1, &end, 10);
			if (errno || end == p + sizeof(key) - 1 || n < 0)
				n = -1;
		}
	}
	dynbuf_release(&body);
	curl_easy_cleanup(c);
	return n;
}

/* Waits (up to 30 minutes) until the verifier has no webhook delivery pending; 0 or -1. */
static int outbox_drain(const struct opts *o)
{
	double t0 = bench_now();
	long long n;

	while ((n = outbox_pending(o)) != 0) {
		if (n < 0 || bench_now() - t0 > 1800) {
			fprintf(stderr, "loadgen: the verifier's webhook outbox %s\n",
				n < 0 ? "cannot be read from /metrics" : "is not empty after 30 min");
			return -1;
		}
		usleep(200 * 1000);
	}
	printf("outbox_drain_s %.3f\n", bench_now() - t0);
	return 0;
}

/* POST json to the base URL plus path; 0 and *status, *out (caller frees out->p), or -EIO. */
static int post_on(struct worker *w, CURL *c, const char *path, const char *json, long *status,
		   struct buf *out)
{
	char url[512];
	struct dynbuf body;

	out->p = NULL;
	out->len = 0;
	dynbuf_init(&body, LOADGEN_RESP_MAX);
	if ((size_t)snprintf(url, sizeof(url), "%s%s", w->o->url, path) >= sizeof(url))
		return -EINVAL;
	if (curl_easy_setopt(c, CURLOPT_URL, url) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_POSTFIELDS, json) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(json)) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body) != CURLE_OK)
		return -EIO;
	if (curl_easy_perform(c) != CURLE_OK ||
	    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status) != CURLE_OK) {
		dynbuf_release(&body);
		return -EIO;
	}
	/* "" for an empty body: never NULL. */
	out->p = dynbuf_take(&body, &out->len);
	return out->p ? 0 : -ENOMEM;
}

static int post(struct worker *w, const char *path, const char *json, long *status, struct buf *out)
{
	return post_on(w, w->curl, path, json, status, out);
}

/* --- EK, certificates, CA ------------------------------------------------------------------ */

static X509 *make_cert(EVP_PKEY *subject_key, const char *cn, long serial, X509 *issuer,
		       EVP_PKEY *issuer_key, int is_ca)
{
	X509 *x = X509_new();
	X509_NAME *name = X509_NAME_new();
	X509V3_CTX v3;
	X509_EXTENSION *ext = NULL;

	if (!x || !name || !X509_set_version(x, 2) ||
	    !ASN1_INTEGER_set(X509_get_serialNumber(x), serial) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -86400) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), 86400L * 3650) ||
	    !X509_set_pubkey(x, subject_key) ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0) ||
	    !X509_set_subject_name(x, name) ||
	    !X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name))
		goto fail;
	X509V3_set_ctx(&v3, issuer ? issuer : x, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints,
				  is_ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
	if (!ext || !X509_add_ext(x, ext, -1))
		goto fail;
	X509_EXTENSION_free(ext);
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_key_usage,
				  is_ca ? "critical,keyCertSign,cRLSign" : "critical,keyEncipherment");
	if (!ext || !X509_add_ext(x, ext, -1))
		goto fail;
	X509_EXTENSION_free(ext);
	ext = NULL;
	if (!X509_sign(x, issuer_key, EVP_sha256()))
		goto fail;
	X509_NAME_free(name);
	return x;
fail:
	X509_EXTENSION_free(ext);
	X509_NAME_free(name);
	X509_free(x);
	return NULL;
}

static int write_pem(const char *dir, const char *name, X509 *cert, EVP_PKEY *key)
{
	char path[4096];
	FILE *f;
	int ok;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ok = cert ? PEM_write_X509(f, cert) : PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
	if (fclose(f) != 0 || !ok)
		return -EIO;
	return 0;
}

static void file_path(unsigned i, char *out, size_t cap)
{
	snprintf(out, cap, "/usr/bin/bench-%04u", i % LOADGEN_FILES);
}

static int make_ca(const char *dir)
{
	EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	X509 *ca = key ? make_cert(key, "loadgen EK CA", 1, NULL, key, 1) : NULL;
	char path[4096], p[64], hex[65];
	uint8_t d[32];
	FILE *f = NULL;
	int ret = -EIO;

	if (!ca || write_pem(dir, "ek-ca.pem", ca, NULL) != 0 ||
	    write_pem(dir, "ek-ca.key", NULL, key) != 0)
		goto cleanup;
	snprintf(path, sizeof(path), "%s/policy.json", dir);
	f = fopen(path, "w");
	if (!f)
		goto cleanup;
	fprintf(f, "{\"version\": 1, \"description\": \"loadgen agents\", \"digests\": {\n");
	for (unsigned i = 0; i < LOADGEN_FILES; i++) {
		file_path(i, p, sizeof(p));
		SHA256((const uint8_t *)p, strlen(p), d);
		hex_encode(d, 32, hex);
		fprintf(f, "%s\"%s\": [\"sha256:%s\"]\n", i ? "," : "", p, hex);
	}
	fprintf(f, "}}\n");
	ret = 0;
cleanup:
	if (f && fclose(f) != 0)
		ret = -EIO;
	X509_free(ca);
	EVP_PKEY_free(key);
	return ret;
}

/* --- the agent's IMA list ------------------------------------------------------------------ */

static int list_append(struct agent *a, const char *alg, const uint8_t *digest, size_t dlen,
		       const char *path)
{
	size_t need = softtpm_ima_ng_size(alg, dlen, strlen(path)), at = a->list.len;
	uint8_t *rec;
	ssize_t n;

	if (dynbuf_add(&a->entry_off, &at, sizeof(at)))
		return dynbuf_error(&a->entry_off);
	rec = dynbuf_grow(&a->list, need);
	if (!rec)
		return dynbuf_error(&a->list);
	n = softtpm_ima_ng_entry(rec, need, alg, digest, dlen, path, strlen(path), false);
	if (n < 0)
		return (int)n;
	a->nentries++;
	return 0;
}

/* Appends k entries (boot_aggregate first on an empty list) and extends PCR 10 over them. */
static int agent_measure(struct worker *w, struct agent *a, unsigned k)
{
	size_t start = a->list.len, first = a->nentries;
	struct ima_entry e;
	int r;

	if (a->nentries == 0) {
		const struct pcr_bank *b1 = pcr_set_bank_const(&a->pcrs, TPM2_ALG_SHA1);
		uint8_t agg[20];
		SHA_CTX c;

		SHA1_Init(&c);
		for (unsigned i = 0; i < 8; i++)
			SHA1_Update(&c, b1->value[i], 20);
		SHA1_Final(agg, &c);
		if (list_append(a, "sha1", agg, 20, "boot_aggregate") != 0)
			return -ENOMEM;
	}
	for (unsigned i = 0; i < k; i++) {
		char p[64];
		uint8_t d[32];

		file_path(a->index * 7 + a->files_next++, p, sizeof(p));
		SHA256((const uint8_t *)p, strlen(p), d);
		if (list_append(a, "sha256", d, 32, p) != 0)
			return -ENOMEM;
	}
	if (a->unlisted) {
		char p[64];
		uint8_t d[32];

		snprintf(p, sizeof(p), "/opt/unlisted/prog-%u", a->index);
		SHA256((const uint8_t *)p, strlen(p), d);
		if (list_append(a, "sha256", d, 32, p) != 0)
			return -ENOMEM;
		a->unlisted = false;
	}
	imalog_reset(w->log, (const uint8_t *)a->list.buf + start, a->list.len - start, first);
	while ((r = imalog_next(w->log, &e, NULL)) == 1)
		if (replay_extend(w->rc, &a->pcr10, &e) != 0)
			return -EIO;
	if (r != 0)
		return -EIO;
	memcpy(pcr_set_bank(&a->pcrs, TPM2_ALG_SHA1)->value[10], a->pcr10.sha1, 20);
	memcpy(pcr_set_bank(&a->pcrs, TPM2_ALG_SHA256)->value[10], a->pcr10.sha256, 32);
	return 0;
}

/* --- enrollment ------------------------------------------------------------------------------ */

static int agent_enroll(struct worker *w, struct agent *a)
{
	struct enroll_request req;
	struct enroll_response er;
	struct activate_request act;
	char path[64], *json = NULL;
	const char *why = NULL;
	struct buf b = {0};
	long st = 0;
	int ret = -EIO;

	memset(&req, 0, sizeof(req));
	memset(&er, 0, sizeof(er));
	snprintf(req.agent_id, sizeof(req.agent_id), "%s", a->id);
	req.ek_pub = a->ek_pub;
	req.ek_pub_len = a->ek_pub_len;
	req.ek_cert = a->cert;
	req.ek_cert_len = a->cert_len;
	req.ak_pub = a->ak_pub;
	req.ak_pub_len = a->ak_pub_len;
	json = enroll_request_encode(&req);
	if (!json || post(w, "/v1/agents", json, &st, &b) != 0)
		goto cleanup;
	if (st != 201 || enroll_response_parse(b.p, b.len, &er, &why) != 0) {
		fprintf(stderr, "loadgen: enroll %s: HTTP %ld %s\n", a->id, st, b.p);
		goto cleanup;
	}
	if (w->o->pending) {
		ret = 0;
		goto cleanup;
	}
	if (softtpm_activate_credential(a->ek, a->ak_name, a->ak_name_len, er.credential_blob,
					er.credential_blob_len, er.encrypted_secret,
					er.encrypted_secret_len, act.secret, &act.secret_len) != 0) {
		fprintf(stderr, "loadgen: %s: activation in software failed\n", a->id);
		goto cleanup;
	}
	free(json);
	free(b.p);
	b.p = NULL;
	json = activate_request_encode(&act);
	snprintf(path, sizeof(path), "/v1/agents/%s/activate", a->id);
	if (!json || post(w, path, json, &st, &b) != 0)
		goto cleanup;
	if (st != 200) {
		fprintf(stderr, "loadgen: activate %s: HTTP %ld %s\n", a->id, st, b.p);
		goto cleanup;
	}
	ret = 0;
cleanup:
	OPENSSL_cleanse(&act, sizeof(act));
	enroll_response_release(&er);
	free(json);
	free(b.p);
	return ret;
}

/* --- one attestation ------------------------------------------------------------------------- */

/*
 * The challenge of agent a's round in *ch: the one its last verdict carried (*given), unless
 * --fresh-challenges or it expires within 2 s (this host's clock is the verifier's), else one
 * asked for.
 */
static int challenge_for(struct worker *w, struct agent *a, struct challenge *ch, bool *given)
{
	char path[64];
	const char *why = NULL;
	struct buf b = {0};
	long st = 0;
	int ret = -EIO;

	*given = a->has_next && !w->o->fresh && a->next.expires_at > (int64_t)time(NULL) + 2;
	a->has_next = false;
	if (*given) {
		*ch = a->next;
		return 0;
	}
	snprintf(path, sizeof(path), "/v1/agents/%s/challenges", a->id);
	if (post(w, path, "", &st, &b) != 0)
		goto out;
	if (st != 201 || challenge_parse(b.p, b.len, ch, &why) != 0) {
		fprintf(stderr, "loadgen: challenge %s: HTTP %ld %s\n", a->id, st, b.p);
		goto out;
	}
	w->challenges++;
	ret = 0;
out:
	free(b.p);
	return ret;
}

/* Quotes for challenge ch and sends the list from its offset; the answer's status and body. */
static int answer(struct worker *w, struct agent *a, const struct challenge *ch, bool given,
		  long *st, struct buf *b)
{
	/* With --split-connections, never where the challenge came from (see the top). */
	CURL *h = !given ? w->curl_evidence
		  : a->next_via == w->curl_evidence ? w->curl : w->curl_evidence;
	struct evidence ev;
	uint8_t attest[LIMIT_ATTEST], sig[LIMIT_SIGNATURE];
	char path[64], *json;
	size_t from;
	int ret;

	if (ch->log_offset > a->nentries)
		return -EIO;
	a->clk.clock += 2000;
	memset(&ev, 0, sizeof(ev));
	memcpy(ev.nonce, ch->nonce, ch->nonce_len);
	ev.nonce_len = ch->nonce_len;
	if (softtpm_quote(a->ak, ch->nonce, ch->nonce_len, &a->pcrs, &a->clk, attest,
			  sizeof(attest), &ev.attest_len, sig, sizeof(sig), &ev.signature_len) != 0)
		return -EIO;
	ev.attest = attest;
	ev.signature = sig;
	ev.pcrs = a->pcrs;
	ev.log_offset = ch->log_offset;
	from = ch->log_offset < a->nentries ? entry_off(a, ch->log_offset) : a->list.len;
	ev.log = (uint8_t *)a->list.buf + from;
	ev.log_len = a->list.len - from;
	/* A paced agent says its interval, as attestd does, or the verifier finds it stale. */
	ev.interval = (uint32_t)w->o->interval;
	json = evidence_encode(&ev);
	snprintf(path, sizeof(path), "/v1/agents/%s/evidence", a->id);
	ret = json ? post_on(w, h, path, json, st, b) : -ENOMEM;
	a->next_via = h;
	free(json);
	return ret;
}

/* The verifier refused the challenge it gave with a verdict: ask for one (proto/errors.h). */
static bool given_nonce_refused(long st, const struct buf *b)
{
	char code[64], msg[8];

	return b->p && error_parse(b->p, b->len, code, sizeof(code), msg, sizeof(msg)) == 0 &&
	       proto_error_action(st, code) == PROTO_ACTION_NEW_CHALLENGE;
}

static int agent_round(struct worker *w, struct agent *a, bool *trusted)
{
	struct challenge ch;
	struct verdict_response *vr = NULL;
	const char *why = NULL;
	struct buf b = {0};
	bool given;
	long st = 0;
	int ret = -EIO;

	if (challenge_for(w, a, &ch, &given) != 0 || agent_measure(w, a, w->o->per_round) != 0 ||
	    answer(w, a, &ch, given, &st, &b) != 0)
		goto cleanup;
	if (given && given_nonce_refused(st, &b)) {
		/* As attestd does: ask for a challenge and answer it in the same round. */
		w->refused_given++;
		free(b.p);
		b.p = NULL;
		if (challenge_for(w, a, &ch, &given) != 0 || answer(w, a, &ch, given, &st, &b) != 0)
			goto cleanup;
	}
	vr = malloc(sizeof(*vr));
	if (!vr || st != 200 || verdict_response_parse(b.p, b.len, vr, &why) != 0) {
		fprintf(stderr, "loadgen: evidence %s: HTTP %ld %.300s\n", a->id, st, b.p);
		goto cleanup;
	}
	a->has_next = vr->has_next_challenge;
	if (a->has_next)
		a->next = vr->next_challenge;
	*trusted = vr->trusted;
	if (w->o->verdict_log) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		flockfile(w->o->verdict_log);
		fprintf(w->o->verdict_log, "%lld %s %" PRId64 "\n",
			(long long)now.tv_sec * 1000 + now.tv_nsec / 1000000, a->id, vr->verdict_id);
		fflush(w->o->verdict_log);
		funlockfile(w->o->verdict_log);
	}
	if (!vr->trusted && w->untrusted < 3)
		fprintf(stderr, "loadgen: %s untrusted: %s %s\n", a->id,
			vr->nreasons ? vr->reason[0].code : "?", vr->nreasons ? vr->reason[0].detail : "");
	ret = 0;
cleanup:
	free(vr);
	free(b.p);
	return ret;
}

/* Sleeps until the bench_now() time `until` (no sleep when it has passed). */
static void sleep_until(double until)
{
	double left = until - bench_now();

	if (left > 0) {
		struct timespec ts = { .tv_sec = (time_t)left,
				       .tv_nsec = (long)((left - (double)(time_t)left) * 1e9) };

		nanosleep(&ts, NULL);
	}
}

static double realtime_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

/*
 * --interval: this thread's agents as a paced fleet (loadgen.c's header). The changes are drawn
 * here, before the clock starts: each a distinct agent of this thread, at a uniform moment of
 * the phase's first seconds - 2 (so that its round fits in), seen at the next look.
 */
static void *paced_main(struct worker *w)
{
	const struct opts *o = w->o;
	double t0 = w->stop_at - o->seconds;
	unsigned mine = 0, k = 0, changes;
	unsigned seed = 0x9e3779b9u ^ w->index;

	for (unsigned i = w->index; i < o->agents; i += o->threads)
		mine++;
	changes = (unsigned)((double)mine * o->change_pct / 100.0 * o->seconds / 60.0 + 0.5);
	if (changes > mine)
		changes = mine;
	for (unsigned i = w->index; i < o->agents; i += o->threads, k++) {
		struct agent *a = &w->agents[i];

		a->due = t0 + o->interval * k / mine;
		a->change_at = 0;
	}
	/* Every (mine / changes)-th agent, from a random start: distinct agents, a random set. */
	for (unsigned c = 0, first = mine ? (unsigned)rand_r(&seed) % mine : 0; c < changes; c++) {
		unsigned pos = (first + (unsigned)((double)c * mine / changes)) % mine;
		struct agent *a = &w->agents[w->index + pos * o->threads];
		double span = o->seconds > 3 ? o->seconds - 2 : o->seconds / 2;

		a->change_at = t0 + span * rand_r(&seed) / ((double)RAND_MAX + 1);
		a->unlisted = false;
		a->seen_at = a->change_at + LOADGEN_LOOK_S * rand_r(&seed) / ((double)RAND_MAX + 1);
		if (a->seen_at < a->due)
			a->due = a->seen_at;
	}
	for (;;) {
		struct agent *next = NULL;
		bool trusted = false;

		for (unsigned i = w->index; i < o->agents; i += o->threads)
			if (!next || w->agents[i].due < next->due)
				next = &w->agents[i];
		if (!next || next->due >= w->stop_at)
			return NULL;
		sleep_until(next->due);
		/* The program runs at change_at; a round after it carries its entry. */
		bool detecting = next->change_at > 0 && bench_now() >= next->change_at;
		next->unlisted = detecting;
		double t1 = bench_now();
		if (agent_round(w, next, &trusted) != 0) {
			if (++w->errors > o->max_errors) {
				w->failed = 1;
				return NULL;
			}
			next->due = bench_now() + 1.0;
			continue;
		}
		double t2 = bench_now();
		if (w->nlat < LOADGEN_MAX_LAT / o->threads)
			w->lat[w->nlat++] = (t2 - t1) * 1e3;
		if (detecting) {
			if (trusted) {
				w->errors++; /* the unlisted program was not reported */
			} else {
				double ms = (t2 - next->change_at) * 1e3;

				w->untrusted++;
				w->detect[w->ndetect++] = ms;
				if (o->detect_log) {
					double now_ms = realtime_ms();

					flockfile(o->detect_log);
					fprintf(o->detect_log, "%.0f %.0f %s\n", now_ms - ms, now_ms,
						next->id);
					fflush(o->detect_log);
					funlockfile(o->detect_log);
				}
			}
			next->change_at = 0;
			next->detected = true;
		} else if (!trusted && !next->detected) {
			w->errors++; /* untrusted with nothing unlisted run */
		}
		next->due = bench_now() + o->interval;
		if (next->change_at > 0 && next->seen_at < next->due)
			next->due = next->seen_at; /* a change still to come is seen before the heartbeat */
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct opts *o = w->o;

	if (w->phase == 0) {
		for (unsigned i = w->index; i < o->agents; i += o->threads)
			if (agent_enroll(w, &w->agents[i]) != 0) {
				w->failed = 1;
				return NULL;
			}
		return NULL;
	}
	if (w->phase == 2) {
		for (unsigned r = 0; r < o->warmup; r++)
			for (unsigned i = w->index; i < o->agents; i += o->threads) {
				bool trusted = false;

				if (agent_round(w, &w->agents[i], &trusted) != 0 || !trusted) {
					w->failed = 1;
					return NULL;
				}
			}
		return NULL;
	}
	if (o->interval > 0)
		return paced_main(w);
	for (unsigned long round = 0; round < 100000000ul; round++) {
		for (unsigned i = w->index; i < o->agents; i += o->threads) {
			double t0 = bench_now(), t1;
			bool trusted = false;

			if (t0 >= w->stop_at)
				return NULL;
			if (agent_round(w, &w->agents[i], &trusted) != 0) {
				if (++w->errors > o->max_errors) {
					w->failed = 1;
					return NULL;
				}
				if (o->error_pause_ms) {
					struct timespec ts = { .tv_sec = o->error_pause_ms / 1000,
							       .tv_nsec = (long)(o->error_pause_ms % 1000) * 1000000L };

					nanosleep(&ts, NULL);
				}
				continue;
			}
			t1 = bench_now();
			if (!trusted)
				w->untrusted++;
			if (w->nlat < LOADGEN_MAX_LAT / o->threads)
				w->lat[w->nlat++] = (t1 - t0) * 1e3;
		}
	}
	return NULL;
}

static int handle_init(CURL *c, const struct opts *o, struct curl_slist *hdr)
{
	const struct http_client_opts net = net_opts(o);

	if (curl_setup_handle(c, &net) ||
	    curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_POST, 1L) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK)
		return -EIO;
	return 0;
}

static int worker_init(struct worker *w, const struct opts *o)
{
	w->curl = curl_easy_init();
	w->curl_evidence = o->split ? curl_easy_init() : w->curl;
	w->hdr = curl_slist_append(NULL, "Content-Type: application/json");
	w->rc = replay_ctx_new(REPLAY_SHA1 | REPLAY_SHA256);
	w->log = imalog_new();
	w->lat = malloc(sizeof(double) * (LOADGEN_MAX_LAT / o->threads + 1));
	w->detect = malloc(sizeof(double) * (o->agents / o->threads + 2));
	if (!w->curl || !w->curl_evidence || !w->hdr || !w->rc || !w->log || !w->lat || !w->detect)
		return -ENOMEM;
	if (handle_init(w->curl, o, w->hdr) ||
	    (w->curl_evidence != w->curl && handle_init(w->curl_evidence, o, w->hdr)))
		return -EIO;
	return 0;
}

static void worker_release(struct worker *w)
{
	if (w->curl_evidence != w->curl)
		curl_easy_cleanup(w->curl_evidence);
	curl_easy_cleanup(w->curl);
	curl_slist_free_all(w->hdr);
	replay_ctx_free(w->rc);
	imalog_free(w->log);
	free(w->lat);
	free(w->detect);
}

/* utime+stime of a process in seconds, -1 on error. */
static double proc_cpu(int pid)
{
	char path[64], line[2048], *p;
	unsigned long ut = 0, stime = 0;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (!p || !(p = strrchr(line, ')')))
		return -1;
	/* after ") ": state is field 3; utime and stime are fields 14 and 15 */
	p += 2;
	for (int field = 3; field < 14 && p; field++) {
		p = strchr(p, ' ');
		p = p ? p + 1 : NULL;
	}
	ok = p != NULL;
	if (ok) {
		char *end;

		ut = strtoul(p, &end, 10);
		ok = end != p && *end == ' ';
		if (ok) {
			p = end + 1;
			stime = strtoul(p, &end, 10);
			ok = end != p;
		}
	}
	return ok ? (double)(ut + stime) / (double)sysconf(_SC_CLK_TCK) : -1;
}

static int run_threads(struct worker *ws, unsigned n)
{
	int failed = 0;

	for (unsigned t = 0; t < n; t++)
		if (pthread_create(&ws[t].tid, NULL, worker_main, &ws[t]) != 0)
			return -EAGAIN; /* the threads already started end by their own bounds */
	for (unsigned t = 0; t < n; t++) {
		pthread_join(ws[t].tid, NULL);
		failed |= ws[t].failed;
	}
	return failed ? -EIO : 0;
}

static int setup_agents(const struct opts *o, struct agent *agents, X509 *ca, EVP_PKEY *ca_key)
{
	for (unsigned i = 0; i < o->agents; i++) {
		struct agent *a = &agents[i];
		X509 *cert;
		uint8_t *der = NULL;
		TPMT_PUBLIC tp;
		int n;

		a->index = i;
		snprintf(a->id, sizeof(a->id), "%s-%05u", o->id_prefix, i);
		a->ek = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		if (!a->ek || softtpm_ek_public(a->ek, a->ek_pub, sizeof(a->ek_pub), &a->ek_pub_len))
			return -EIO;
		cert = make_cert(a->ek, a->id, 1000 + i, ca, ca_key, 0);
		n = cert ? i2d_X509(cert, &der) : -1;
		X509_free(cert);
		if (n <= 0)
			return -EIO;
		a->cert = der;
		a->cert_len = (size_t)n;
		a->ak = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		if (!a->ak || softtpm_ak_public(a->ak, 0, a->ak_pub, sizeof(a->ak_pub), &a->ak_pub_len) != 0 ||
		    tpmkey_parse_public(a->ak_pub, a->ak_pub_len, &tp) != 0 ||
		    tpmkey_name(&tp, a->ak_name, &a->ak_name_len) != 0)
			return -EIO;
		memset(&a->pcrs, 0, sizeof(a->pcrs));
		struct pcr_bank *b1 = pcr_set_add_bank(&a->pcrs, TPM2_ALG_SHA1);
		struct pcr_bank *b2 = pcr_set_add_bank(&a->pcrs, TPM2_ALG_SHA256);
		if (!b1 || !b2)
			return -EIO;
		b1->mask = b2->mask = 0x7ff;
		for (unsigned k = 0; k < 10; k++) {
			memset(b1->value[k], (int)(i + k) & 0xff, 20);
			memset(b2->value[k], (int)(i + 0x40 + k) & 0xff, 32);
		}
		replay_state_init(&a->pcr10, REPLAY_SHA1 | REPLAY_SHA256);
		a->clk.clock = 1000;
		a->clk.reset_count = 1;
		a->clk.safe = 1;
	}
	return 0;
}

static int load_ca(const char *dir, X509 **ca, EVP_PKEY **key)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/ek-ca.pem", dir);
	if (!(f = fopen(path, "r")))
		return -errno;
	*ca = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	snprintf(path, sizeof(path), "%s/ek-ca.key", dir);
	if (!(f = fopen(path, "r")))
		return -errno;
	*key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	return *ca && *key ? 0 : -EINVAL;
}

static int parse_opts(int argc, char **argv, struct opts *o, const char **make_ca_dir)
{
	unsigned long v;

	memset(o, 0, sizeof(*o));
	o->threads = 8;
	o->seconds = 5;
	o->per_round = 10;
	o->max_errors = 100;
	o->id_prefix = "bench";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!val)
			return -EINVAL;
		i++;
		if (!strcmp(a, "--make-ca"))
			*make_ca_dir = val;
		else if (!strcmp(a, "--url"))
			o->url = val;
		else if (!strcmp(a, "--ca"))
			o->ca = val;
		else if (!strcmp(a, "--ek-ca-dir"))
			o->dir = val;
		else if (!strcmp(a, "--agents") && bench_parse_ulong(val, LOADGEN_MAX_AGENTS, &v) == 0 && v)
			o->agents = (unsigned)v;
		else if (!strcmp(a, "--threads") && bench_parse_ulong(val, LOADGEN_MAX_THREADS, &v) == 0 && v)
			o->threads = (unsigned)v;
		else if (!strcmp(a, "--seconds") && bench_parse_ulong(val, 3600, &v) == 0 && v)
			o->seconds = (double)v;
		else if (!strcmp(a, "--entries-per-round") && bench_parse_ulong(val, 10000, &v) == 0)
			o->per_round = (unsigned)v;
		else if (!strcmp(a, "--verifier-pid") && bench_parse_ulong(val, 1u << 22, &v) == 0)
			o->vpid = (int)v;
		else if (!strcmp(a, "--verdict-log") && !o->verdict_log) {
			o->verdict_log = fopen(val, "a");
			if (!o->verdict_log) {
				fprintf(stderr, "loadgen: cannot open \"%s\": %s\n", val, strerror(errno));
				return -EINVAL;
			}
		} else if (!strcmp(a, "--max-errors") && bench_parse_ulong(val, 100000000ul, &v) == 0)
			o->max_errors = v;
		else if (!strcmp(a, "--error-pause-ms") && bench_parse_ulong(val, 60000, &v) == 0)
			o->error_pause_ms = (unsigned)v;
		else if (!strcmp(a, "--id-prefix") && strlen(val) <= 16 && agent_id_valid(val))
			o->id_prefix = val;
		else if (!strcmp(a, "--pending") && bench_parse_ulong(val, 1, &v) == 0)
			o->pending = v == 1;
		else if (!strcmp(a, "--drain-outbox") && bench_parse_ulong(val, 1, &v) == 0)
			o->drain = v == 1;
		else if (!strcmp(a, "--split-connections") && bench_parse_ulong(val, 1, &v) == 0)
			o->split = v == 1;
		else if (!strcmp(a, "--fresh-challenges") && bench_parse_ulong(val, 1, &v) == 0)
			o->fresh = v == 1;
		else if (!strcmp(a, "--warmup-rounds") && bench_parse_ulong(val, 10, &v) == 0)
			o->warmup = (unsigned)v;
		else if (!strcmp(a, "--interval") && bench_parse_ulong(val, 3600, &v) == 0 && v)
			o->interval = (double)v;
		else if (!strcmp(a, "--change-per-min") && bench_parse_ulong(val, 100, &v) == 0)
			o->change_pct = (double)v;
		else if (!strcmp(a, "--detect-log") && !o->detect_log) {
			o->detect_log = fopen(val, "a");
			if (!o->detect_log) {
				fprintf(stderr, "loadgen: cannot open \"%s\": %s\n", val, strerror(errno));
				return -EINVAL;
			}
		} else
			return -EINVAL;
	}
	if (*make_ca_dir)
		return 0;
	if (!o->url || !o->ca || !o->dir || !o->agents)
		return -EINVAL;
	if (o->threads > o->agents)
		o->threads = o->agents;
	if ((o->change_pct > 0 || o->detect_log) && o->interval <= 0)
		return -EINVAL; /* changes are a paced fleet's */
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	const char *make_ca_dir = NULL;
	struct agent *agents = NULL;
	struct worker *ws = NULL;
	X509 *ca = NULL;
	EVP_PKEY *ca_key = NULL;
	double t0, c0, lg0, w, *all = NULL;
	long rss0 = -1, rss1 = -1, rss2 = -1;
	size_t nall = 0;
	unsigned long untrusted = 0, errors = 0, challenges = 0, refused_given = 0;
	int ret = 1;

	if (parse_opts(argc, argv, &o, &make_ca_dir) != 0) {
		fprintf(stderr, "usage: loadgen --make-ca DIR\n"
				"       loadgen --url URL --ca FILE --ek-ca-dir DIR --agents N [--threads T]\n"
				"               [--seconds S] [--verifier-pid PID] [--entries-per-round K]\n"
				"               [--verdict-log FILE] [--max-errors N] [--error-pause-ms MS]\n"
				"               [--id-prefix PREFIX] [--pending 1] [--split-connections 1] [--drain-outbox 1]\n"
				"               [--fresh-challenges 1] [--warmup-rounds N]\n"
				"               [--interval S --change-per-min PCT [--detect-log FILE]]\n");
		return 2;
	}
	if (make_ca_dir) {
		if (make_ca(make_ca_dir) != 0) {
			fprintf(stderr, "loadgen: cannot write the CA into %s\n", make_ca_dir);
			return 1;
		}
		return 0;
	}
	if (curl_setup_global())
		return 1;
	agents = calloc(o.agents, sizeof(*agents));
	ws = calloc(o.threads, sizeof(*ws));
	for (unsigned i = 0; agents && i < o.agents; i++)
		agent_init(&agents[i]);
	if (!agents || !ws || load_ca(o.dir, &ca, &ca_key) != 0 ||
	    setup_agents(&o, agents, ca, ca_key) != 0) {
		fprintf(stderr, "loadgen: setup failed\n");
		goto cleanup;
	}
	for (unsigned t = 0; t < o.threads; t++) {
		ws[t].index = t;
		ws[t].o = &o;
		ws[t].agents = agents;
		if (worker_init(&ws[t], &o) != 0) {
			fprintf(stderr, "loadgen: worker init failed\n");
			goto cleanup;
		}
	}
	if (o.vpid)
		rss0 = bench_rss_kib(o.vpid);
	t0 = bench_now();
	if (run_threads(ws, o.threads) != 0) {
		fprintf(stderr, "loadgen: enrollment failed\n");
		goto cleanup;
	}
	printf("agents %u\nthreads %u\nenroll_s %.3f\n", o.agents, o.threads, bench_now() - t0);
	fflush(stdout); /* scripts watching the output start their clocks here */
	if (o.pending) {
		ret = 0;
		goto cleanup;
	}
	if (o.vpid)
		rss1 = bench_rss_kib(o.vpid);
	if (o.warmup) {
		t0 = bench_now();
		for (unsigned t = 0; t < o.threads; t++)
			ws[t].phase = 2;
		if (run_threads(ws, o.threads) != 0) {
			fprintf(stderr, "loadgen: a warm-up round failed\n");
			goto cleanup;
		}
		printf("warmup_s %.3f\n", bench_now() - t0);
		for (unsigned t = 0; t < o.threads; t++)
			ws[t].challenges = ws[t].refused_given = 0;
	}
	if (o.drain && outbox_drain(&o) != 0)
		goto cleanup;
	/* Scripts that measure the verifier over the timed phase start their clocks here. */
	printf("timed_phase 1\n");
	fflush(stdout);

	t0 = bench_now();
	c0 = o.vpid ? proc_cpu(o.vpid) : 0;
	lg0 = bench_cpu(RUSAGE_SELF);
	for (unsigned t = 0; t < o.threads; t++) {
		ws[t].phase = 1;
		ws[t].stop_at = t0 + o.seconds;
	}
	if (run_threads(ws, o.threads) != 0)
		fprintf(stderr, "loadgen: too many errors, stopped early\n");
	w = bench_now() - t0;
	if (o.vpid) {
		double c1 = proc_cpu(o.vpid);

		rss2 = bench_rss_kib(o.vpid);
		printf("verifier_cpu_pct %.1f\n", c0 >= 0 && c1 >= 0 ? 100 * (c1 - c0) / w : -1);
		/* The same CPU unrounded: a paced fleet's 1.5% of a core is 1.5 ± 0.05 above. */
		printf("verifier_cpu_ms %.0f\n", c0 >= 0 && c1 >= 0 ? 1000 * (c1 - c0) : -1);
	}
	printf("loadgen_cpu_pct %.1f\n", 100 * (bench_cpu(RUSAGE_SELF) - lg0) / w);
	for (unsigned t = 0; t < o.threads; t++)
		nall += ws[t].nlat;
	all = malloc(sizeof(double) * (nall + 1));
	if (!all)
		goto cleanup;
	nall = 0;
	for (unsigned t = 0; t < o.threads; t++) {
		memcpy(all + nall, ws[t].lat, ws[t].nlat * sizeof(double));
		nall += ws[t].nlat;
		untrusted += ws[t].untrusted;
		errors += ws[t].errors;
		challenges += ws[t].challenges;
		refused_given += ws[t].refused_given;
	}
	printf("attestations %zu\nseconds %.3f\nper_s %.1f\n", nall, w, (double)nall / w);
	printf("p50_ms %.3f\n", bench_percentile(all, nall, 0.50, 0));
	printf("p99_ms %.3f\n", bench_percentile(all, nall, 0.99, 1));
	if (o.interval > 0) {
		size_t nd = 0;

		for (unsigned t = 0; t < o.threads; t++)
			nd += ws[t].ndetect;
		double *d = malloc(sizeof(double) * (nd + 1));
		if (!d)
			goto cleanup;
		nd = 0;
		for (unsigned t = 0; t < o.threads; t++) {
			memcpy(d + nd, ws[t].detect, ws[t].ndetect * sizeof(double));
			nd += ws[t].ndetect;
		}
		printf("detect_n %zu\n", nd);
		printf("detect_p50_ms %.1f\n", nd ? bench_percentile(d, nd, 0.50, 0) : -1.0);
		printf("detect_p99_ms %.1f\n", nd ? bench_percentile(d, nd, 0.99, 1) : -1.0);
		free(d);
	}
	printf("untrusted %lu\nerrors %lu\n", untrusted, errors);
	printf("challenges %lu\nrefused_given %lu\n", challenges, refused_given);
	printf("rss_start_kib %ld\nrss_enrolled_kib %ld\nrss_end_kib %ld\n", rss0, rss1, rss2);
	/* A paced fleet's untrusted verdicts are its detections (the others count as errors). */
	ret = nall > 0 && (untrusted == 0 || o.interval > 0) && errors == 0 ? 0 : 1;
cleanup:
	free(all);
	if (ws)
		for (unsigned t = 0; t < o.threads; t++)
			worker_release(&ws[t]);
	free(ws);
	if (agents)
		for (unsigned i = 0; i < o.agents; i++) {
			EVP_PKEY_free(agents[i].ak);
			EVP_PKEY_free(agents[i].ek);
			OPENSSL_free(agents[i].cert);
			dynbuf_release(&agents[i].list);
			dynbuf_release(&agents[i].entry_off);
		}
	free(agents);
	X509_free(ca);
	EVP_PKEY_free(ca_key);
	if (o.verdict_log && fclose(o.verdict_log) != 0)
		ret = 1;
	if (o.detect_log && fclose(o.detect_log) != 0)
		ret = 1;
	curl_global_cleanup();
	return ret;
}
