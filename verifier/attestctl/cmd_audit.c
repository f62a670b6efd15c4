/*
 * attestctl audit verify --store URI [--key PUBKEY.pem]
 * attestctl audit export --store URI
 *
 * The audit trail (verifier/store/audit.h), read from a store offline: a verifier's store, a
 * backup or a copy; no verifier is needed. verify walks the chain from its first record and
 * checks every record's seq, prev_hash and hash, then every signed head: its signature (with
 * --key, the verifier's public key; else with the key stored beside it, which a rewriter of the
 * store could have replaced) and that the chain holds the record it signed (so the newest
 * records deleted are found back to the last signed head). Exit: 0 intact, 1 broken, 2 usage or
 * a store error. export writes one JSON object per record, oldest first (JSON lines).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "proto/encoding.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/show.h"
#include "verifier/store/store.h"

#define AUDIT_PAGE 1000u
#define AUDIT_HEADS_MAX 1000000u

struct head {
	int64_t seq, time;
	uint8_t hash[AUDIT_HASH_LEN];
	bool good_sig;
	bool seen;
};

struct walk {
	struct audit_check check;
	struct head *heads; /* ascending seq */
	size_t nheads, next_head;
	int64_t last_seq;
	bool head_mismatch;
	int64_t mismatch_seq;
	bool export;
};

static void usage(void)
{
	fprintf(stderr, "usage: attestctl audit verify --store URI [--key PUBKEY.pem]\n"
			"       attestctl audit export --store URI\n");
}

static int export_record(const struct audit_record *r)
{
	char prev[2 * AUDIT_HASH_LEN + 1], hash[2 * AUDIT_HASH_LEN + 1];
	json_t *detail = json_loads(r->detail, 0, NULL);
	json_t *o;
	char *line;

	hex_encode(r->prev_hash, AUDIT_HASH_LEN, prev);
	hex_encode(r->hash, AUDIT_HASH_LEN, hash);
	o = json_pack("{s:I, s:I, s:s, s:s, s:s, s:o, s:s, s:s}", "seq", (json_int_t)r->seq,
		      "time", (json_int_t)r->time, "kind", r->kind, "actor", r->actor, "agent",
		      r->agent, "detail", detail ? detail : json_string(r->detail), "prev_hash",
		      prev, "hash", hash);
	line = o ? show_json(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!line)
		return -ENOMEM;
	puts(line);
	free(line);
	return 0;
}

static int record_cb(void *arg, const struct audit_record *r)
{
	struct walk *w = arg;

	w->last_seq = r->seq;
	if (w->export)
		return export_record(r);
	if (!audit_check_next(&w->check, r))
		return 1;
	while (w->next_head < w->nheads && w->heads[w->next_head].seq <= r->seq) {
		struct head *h = &w->heads[w->next_head++];

		h->seen = h->seq == r->seq;
		if (h->seen && memcmp(h->hash, r->hash, AUDIT_HASH_LEN) != 0 && !w->head_mismatch) {
			w->head_mismatch = true;
			w->mismatch_seq = h->seq;
		}
	}
	return 0;
}

struct heads_ctx {
	struct walk *w;
	EVP_PKEY *pinned;
	size_t cap;
};

static bool sig_ok(EVP_PKEY *key, const struct store_audit_signed *s)
{
	uint8_t msg[AUDIT_HEAD_MSG_LEN];
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	bool ok;

	audit_head_message(s->seq, s->hash, s->time, msg);
	ok = md && key && EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
	     EVP_DigestVerify(md, s->signature, s->signature_len, msg, sizeof(msg)) == 1;
	EVP_MD_CTX_free(md);
	return ok;
}

static int head_cb(void *arg, const struct store_audit_signed *s)
{
	struct heads_ctx *c = arg;
	struct walk *w = c->w;
	const unsigned char *p = s->public_key;
	EVP_PKEY *stored = NULL;
	struct head *h;

	if (w->nheads == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct head *n = cap <= AUDIT_HEADS_MAX ? realloc(w->heads, cap * sizeof(*n)) : NULL;

		if (!n)
			return -ENOMEM;
		w->heads = n;
		c->cap = cap;
	}
	h = &w->heads[w->nheads++];
	memset(h, 0, sizeof(*h));
	h->seq = s->seq;
	h->time = s->time;
	memcpy(h->hash, s->hash, AUDIT_HASH_LEN);
	if (!c->pinned)
		stored = d2i_PUBKEY(NULL, &p, (long)s->public_key_len);
	h->good_sig = sig_ok(c->pinned ? c->pinned : stored, s);
	EVP_PKEY_free(stored);
	return 0;
}

static int head_cmp(const void *a, const void *b)
{
	const struct head *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static EVP_PKEY *read_pubkey(const char *path)
{
	FILE *f = fopen(path, "r");
	EVP_PKEY *k = f ? PEM_read_PUBKEY(f, NULL, NULL, NULL) : NULL;

	if (f)
		fclose(f);
	if (!k)
		fprintf(stderr, "attestctl: audit: \"%s\" is not a public key in PEM\n", path);
	return k;
}

static int walk_all(struct store *st, struct walk *w)
{
	int64_t after = 0;
	int ret;

	do {
		int64_t before = w->last_seq;

		ret = store_audit_list(st, after, AUDIT_PAGE, record_cb, w);
		if (ret)
			return ret;
		if (w->last_seq == before)
			break;
		after = w->last_seq;
	} while (1);
	return 0;
}

static int verify(struct store *st, const char *key_path)
{
	struct walk w = { 0 };
	struct heads_ctx hc = { .w = &w };
	int ret, status = 0;
	size_t bad_sigs = 0, unseen = 0;

	audit_check_init(&w.check);
	if (key_path && !(hc.pinned = read_pubkey(key_path)))
		return 2;
	ret = store_audit_signed_list(st, AUDIT_HEADS_MAX, head_cb, &hc);
	EVP_PKEY_free(hc.pinned);
	if (ret) {
		fprintf(stderr, "attestctl: audit: cannot read the signed heads: %s\n", strerror(-ret));
		free(w.heads);
		return 2;
	}
	qsort(w.heads, w.nheads, sizeof(*w.heads), head_cmp);
	ret = walk_all(st, &w);
	if (ret < 0) {
		fprintf(stderr, "attestctl: audit: cannot read the trail: %s\n", strerror(-ret));
		free(w.heads);
		return 2;
	}
	if (w.check.failed) {
		printf("audit trail broken at seq %lld: the record %s\n",
		       (long long)w.check.failed_seq, show_cstr(w.check.why));
		status = 1;
	}
	for (size_t i = 0; i < w.nheads; i++) {
		bad_sigs += !w.heads[i].good_sig;
		unseen += !w.check.failed && w.heads[i].seq > w.last_seq;
	}
	if (bad_sigs) {
		printf("audit trail: %zu signed head(s) whose signature does not verify%s\n", bad_sigs,
		       key_path ? " with the key given" : "");
		status = 1;
	}
	if (w.head_mismatch) {
		printf("audit trail: the record at seq %lld is not the one its signed head names\n",
		       (long long)w.mismatch_seq);
		status = 1;
	}
	if (unseen) {
		printf("audit trail: records after seq %lld are missing (a head was signed at seq"
		       " %lld)\n", (long long)w.last_seq, (long long)w.heads[w.nheads - 1].seq);
		status = 1;
	}
	if (!status) {
		printf("audit trail intact: %lld records", (long long)w.last_seq);
		if (w.nheads)
			printf(", %zu signed heads verified (the newest at seq %lld)%s\n", w.nheads,
			       (long long)w.heads[w.nheads - 1].seq,
			       key_path ? "" : " with the keys the store holds (pin yours: --key)");
		else
			printf("; no signed head yet: deleted newest records cannot be told\n");
	}
	free(w.heads);
	return status;
}

int cmd_audit(int argc, char **argv)
{
	const char *uri = NULL, *key = NULL;
	struct store *st = NULL;
	bool do_verify;
	int ret, status;

	if (argc < 2 || (strcmp(argv[1], "verify") && strcmp(argv[1], "export"))) {
		usage();
		return 2;
	}
	do_verify = !strcmp(argv[1], "verify");
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--store") && i + 1 < argc) {
			uri = argv[++i];
		} else if (do_verify && !strcmp(argv[i], "--key") && i + 1 < argc) {
			key = argv[++i];
		} else {
			usage();
			return 2;
		}
	}
	if (!uri) {
		usage();
		return 2;
	}
	/* A file that is not there is not an empty trail: store_open() would make one. */
	if (!strncmp(uri, "sqlite:", 7) && access(uri + 7, R_OK) != 0) {
		fprintf(stderr, "attestctl: audit: cannot read \"%s\": %s\n", uri + 7, strerror(errno));
		return 2;
	}
	if ((ret = store_open(uri, &st))) {
		fprintf(stderr, "attestctl: audit: cannot open the store: %s\n", strerror(-ret));
		return 2;
	}
	if (do_verify) {
		status = verify(st, key);
	} else {
		struct walk w = { .export = true };

		ret = walk_all(st, &w);
		status = ret ? 2 : 0;
		if (ret)
			fprintf(stderr, "attestctl: audit: export failed: %s\n", strerror(-ret));
	}
	store_close(st);
	return status;
}
