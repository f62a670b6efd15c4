/*
 * attestctl's admission commands (verifier(8), ADMISSION): `agent add` registers agents before
 * they enroll (POST /v1/registrations), one from the command line or many from a file, all or
 * none; `registrations` lists them; `agent unregister ID` deletes one.
 *
 *   agent add ID (--ek-cert FILE | --ek-sha256 HEX) [--policy NAME] [--label KEY=VALUE]...
 *   agent add --from FILE
 *
 * FILE is JSON (an array of {"agent_id", "ek_sha256" | "ek_cert": CERT-FILE, "policy",
 * "labels": {KEY: VALUE}}, or the API's {"registrations": [...]}) when it starts with '[' or
 * '{', else CSV: a header naming the columns (agent_id and ek_sha256 or ek_cert; policy and
 * labels optional; any order), then one agent a line; labels are KEY=VALUE joined by ';';
 * empty lines and lines starting with '#' are skipped; no quoting (no field holds a comma). A
 * certificate is PEM or DER; a relative CERT-FILE is read from FILE's directory.
 *
 * Every line is checked before anything is sent: the first bad one is named (FILE:LINE for
 * CSV, FILE: item N for JSON) and nothing is registered. The verifier registers the whole
 * request in one transaction or none of it; its refusal of one element (an id registered
 * already, an unknown policy) is named by line too.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "common/file.h"
#include "proto/encoding.h"
#include "proto/evidence.h"
#include "proto/labels.h"
#include "verifier/api/api_codec.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/online.h"
#include "verifier/attestctl/show.h"

#define ADD_FILE_MAX (256u << 20) /* a --from file */
#define LINE_MAX_BYTES 8192u

static int usage(void)
{
	fprintf(stderr, "usage: attestctl agent add ID (--ek-cert FILE | --ek-sha256 HEX)"
			" [--policy NAME] [--label KEY=VALUE]...\n"
			"       attestctl agent add --from FILE (CSV or JSON)\n");
	return 2;
}

/* A certificate file (PEM or DER) as DER base64 into *b64 (caller frees); why on failure. */
static int cert_base64(const char *path, char **b64, char *why, size_t cap)
{
	struct dynbuf f;
	const unsigned char *p;
	unsigned char *der = NULL;
	X509 *x = NULL;
	int n = 0, ret = -EINVAL;

	*b64 = NULL;
	dynbuf_init(&f, LIMIT_EK_CERT * 2 + 4096);
	if (file_read(path, &f)) {
		snprintf(why, cap, "cannot read the EK certificate \"%.300s\"", path);
		goto out;
	}
	if (f.len > 10 && !memcmp(f.buf, "-----BEGIN", 10)) {
		BIO *bio = BIO_new_mem_buf(f.buf, (int)f.len);

		x = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
		BIO_free(bio);
	} else {
		p = (const unsigned char *)f.buf;
		x = d2i_X509(NULL, &p, (long)f.len);
	}
	if (!x || (n = i2d_X509(x, &der)) <= 0 || (size_t)n > LIMIT_EK_CERT) {
		snprintf(why, cap, "\"%.300s\" is not a certificate (PEM or DER, at most %u bytes)", path,
			 LIMIT_EK_CERT);
		goto out;
	}
	*b64 = base64_encode_alloc(der, (size_t)n);
	ret = *b64 ? 0 : -ENOMEM;
	if (ret)
		snprintf(why, cap, "out of memory");
out:
	OPENSSL_free(der);
	X509_free(x);
	dynbuf_release(&f);
	return ret;
}

/* One registration for the API from its parts; NULL with why if one is bad. */
static json_t *item(const char *id, const char *sha, const char *cert, const char *dir,
		    const char *policy, json_t *labels, char *why, size_t cap)
{
	char path[4096], *b64 = NULL;
	json_t *o;
	uint8_t d[32];

	if (!id || !agent_id_valid(id)) {
		snprintf(why, cap, "agent id missing or invalid (1-%u of [A-Za-z0-9._-])",
			 LIMIT_AGENT_ID);
		return NULL;
	}
	if ((sha && *sha) == (cert && *cert)) {
		snprintf(why, cap, "agent %s: give exactly one of ek_sha256 and ek_cert", id);
		return NULL;
	}
	if (policy && *policy && (strlen(policy) > LIMIT_POLICY_NAME || !agent_id_valid(policy))) {
		snprintf(why, cap, "agent %s: \"%s\" is not a policy name", id, policy);
		return NULL;
	}
	if (sha && *sha && (strlen(sha) != 64 || hex_decode(sha, 64, d, sizeof(d)) != 32)) {
		snprintf(why, cap, "agent %s: ek_sha256 is not 64 hex digits", id);
		return NULL;
	}
	if (cert && *cert) {
		if (cert[0] == '/' || !dir)
			snprintf(path, sizeof(path), "%s", cert);
		else
			snprintf(path, sizeof(path), "%s/%s", dir, cert);
		if (cert_base64(path, &b64, why, cap))
			return NULL;
	}
	o = api_registration_encode(&(struct api_registration){
		.agent_id = id,
		.ek_cert = b64,
		.ek_sha256 = sha,
		.policy = policy,
		.labels = labels ? json_incref(labels) : NULL,
	});
	free(b64);
	if (!o)
		snprintf(why, cap, "out of memory");
	return o;
}

/* Adds KEY=VALUE to labels; why on a bad one. */
static int label_add(json_t *labels, const char *text, char *why, size_t cap)
{
	char k[LIMIT_LABEL_KEY + 1], v[LIMIT_LABEL_VALUE + 1];

	if (label_parse(text, k, v)) {
		snprintf(why, cap, "label \"%.80s\" is not KEY=VALUE (a key of 1-%u [A-Za-z0-9._/-],"
			 " a value of 1-%u [A-Za-z0-9._:/-])", text, LIMIT_LABEL_KEY,
			 LIMIT_LABEL_VALUE);
		return -EINVAL;
	}
	if (json_object_get(labels, k)) {
		snprintf(why, cap, "label %s given twice", k);
		return -EINVAL;
	}
	if (json_object_size(labels) >= LIMIT_LABELS) {
		snprintf(why, cap, "more than %u labels", LIMIT_LABELS);
		return -EINVAL;
	}
	return json_object_set_new(labels, k, json_string(v)) ? -ENOMEM : 0;
}

/* The CSV header's column of each name (-1: absent). */
enum { COL_ID, COL_SHA, COL_CERT, COL_POLICY, COL_LABELS, NCOLS };
static const char *const col_names[NCOLS] = { "agent_id", "ek_sha256", "ek_cert", "policy",
					       "labels" };

/* Splits line at commas into at most max fields (in place). The number of fields, or -1. */
static int split(char *line, char **f, int max)
{
	int n = 0;

	for (char *s = line;; s++) {
		if (n == max)
			return -1;
		f[n++] = s;
		s = strchr(s, ',');
		if (!s)
			return n;
		*s = '\0';
	}
}

/* CSV into items, each line's number in lines[]; why names the line. */
static int parse_csv(char *text, const char *file, const char *dir, json_t *items,
		     json_t *lines, char *why, size_t cap)
{
	int col[NCOLS], nhead = 0, lineno = 0;
	char *line, *next, *f[NCOLS + 1], msg[512];

	for (int c = 0; c < NCOLS; c++)
		col[c] = -1;
	for (line = text; line; line = next) {
		json_t *labels, *o;
		size_t len;
		int n;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		len = strlen(line);
		lineno++;
		if (len && line[len - 1] == '\r')
			line[--len] = '\0';
		if (len == 0 || line[0] == '#')
			continue;
		if (len > LINE_MAX_BYTES) {
			snprintf(why, cap, "%s:%d: a line of more than %u bytes", file, lineno,
				 LINE_MAX_BYTES);
			return -EINVAL;
		}
		n = split(line, f, NCOLS);
		if (n < 0) {
			snprintf(why, cap, "%s:%d: more than %d fields", file, lineno, NCOLS);
			return -EINVAL;
		}
		if (!nhead) {
			for (int i = 0; i < n; i++) {
				int c = 0;

				while (c < NCOLS && strcmp(f[i], col_names[c]))
					c++;
				if (c == NCOLS || col[c] >= 0) {
					snprintf(why, cap, "%s:%d: the header names columns of"
						 " agent_id,ek_sha256,ek_cert,policy,labels, each once;"
						 " not \"%.40s\"", file, lineno, f[i]);
					return -EINVAL;
				}
				col[c] = i;
			}
			if (col[COL_ID] < 0 || (col[COL_SHA] < 0 && col[COL_CERT] < 0)) {
				snprintf(why, cap, "%s:%d: the header needs agent_id and ek_sha256 or"
					 " ek_cert", file, lineno);
				return -EINVAL;
			}
			nhead = n;
			continue;
		}
		if (n != nhead) {
			snprintf(why, cap, "%s:%d: %d fields, the header has %d", file, lineno, n,
				 nhead);
			return -EINVAL;
		}
		labels = json_object();
		if (!labels)
			return -ENOMEM;
		if (col[COL_LABELS] >= 0 && *f[col[COL_LABELS]]) {
			char *lsave = NULL;

			for (char *l = strtok_r(f[col[COL_LABELS]], ";", &lsave); l;
			     l = strtok_r(NULL, ";", &lsave)) {
				if (label_add(labels, l, msg, sizeof(msg))) {
					json_decref(labels);
					snprintf(why, cap, "%s:%d: %s", file, lineno, msg);
					return -EINVAL;
				}
			}
		}
		o = item(f[col[COL_ID]], col[COL_SHA] >= 0 ? f[col[COL_SHA]] : NULL,
			 col[COL_CERT] >= 0 ? f[col[COL_CERT]] : NULL, dir,
			 col[COL_POLICY] >= 0 ? f[col[COL_POLICY]] : NULL, labels, msg, sizeof(msg));
		json_decref(labels);
		if (!o) {
			snprintf(why, cap, "%s:%d: %s", file, lineno, msg);
			return -EINVAL;
		}
		if (json_array_append_new(items, o) ||
		    json_array_append_new(lines, json_integer(lineno)))
			return -ENOMEM;
	}
	if (!nhead || json_array_size(items) == 0) {
		snprintf(why, cap, "%s: no agents (a header line, then one agent a line)", file);
		return -EINVAL;
	}
	return 0;
}

/* JSON into items (item N counts from 1); why names the item. */
static int parse_json(const char *text, size_t len, const char *file, const char *dir,
		      json_t *items, json_t *lines, char *why, size_t cap)
{
	json_error_t jerr;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr), *list, *e, *o;
	char msg[512];
	size_t i;
	int ret = -EINVAL;

	if (!doc) {
		snprintf(why, cap, "%s:%d: not JSON: %s", file, jerr.line, jerr.text);
		return -EINVAL;
	}
	list = json_is_array(doc) ? doc : api_list_items(doc, API_REGISTRATIONS);
	if (!json_is_array(list) || json_array_size(list) == 0) {
		snprintf(why, cap, "%s: want an array of agents (or {\"registrations\": [...]})",
			 file);
		goto out;
	}
	json_array_foreach(list, i, e) {
		json_t *mine = json_object(), *v;
		struct api_registration r;
		bool typed = api_registration_decode(e, &r);
		const char *k;

		if (!mine) {
			ret = -ENOMEM;
			goto out;
		}
		if (!typed) {
			json_decref(mine);
			snprintf(why, cap, "%s: item %zu: not {\"agent_id\", \"ek_sha256\" or"
				 " \"ek_cert\", \"policy\", \"labels\": {...}}", file, i + 1);
			goto out;
		}
		json_object_foreach(r.labels, k, v) {
			char kv[LIMIT_LABEL_KEY + LIMIT_LABEL_VALUE + 2];

			snprintf(kv, sizeof(kv), "%s=%s", k, json_is_string(v) ? json_string_value(v)
										: "");
			if (label_add(mine, kv, msg, sizeof(msg))) {
				json_decref(mine);
				snprintf(why, cap, "%s: item %zu: %s", file, i + 1, msg);
				goto out;
			}
		}
		o = item(r.agent_id, r.ek_sha256, r.ek_cert, dir, r.policy, mine, msg,
			 sizeof(msg));
		json_decref(mine);
		if (!o) {
			snprintf(why, cap, "%s: item %zu: %s", file, i + 1, msg);
			goto out;
		}
		if (json_array_append_new(items, o) ||
		    json_array_append_new(lines, json_integer((json_int_t)i + 1))) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = 0;
out:
	json_decref(doc);
	return ret;
}

/* The N of a refusal's message that starts "registrations[N]" (registrations.h). */
static bool element_index(const char *msg, size_t *idx)
{
	static const char prefix[] = "registrations[";
	char *end = NULL;
	unsigned long v;

	if (strncmp(msg, prefix, sizeof(prefix) - 1) || msg[sizeof(prefix) - 1] < '0' ||
	    msg[sizeof(prefix) - 1] > '9')
		return false;
	v = strtoul(msg + sizeof(prefix) - 1, &end, 10);
	if (!end || *end != ']')
		return false;
	*idx = (size_t)v;
	return true;
}

/* Sends the registrations; a refusal of element N is told as the line (or item) it came from. */
static int send_all(const struct online_opts *o, json_t *items, json_t *lines, const char *file,
		    bool csv)
{
	char *send = NULL, *body = NULL, code[64], msg[512];
	json_t *req = api_list_encode(API_REGISTRATIONS, json_incref(items));
	long status = 0;
	size_t idx;
	int ret;

	if (!req || !(send = json_dumps(req, JSON_COMPACT))) {
		json_decref(req);
		fprintf(stderr, "attestctl: out of memory\n");
		return 2;
	}
	json_decref(req);
	ret = online_request(o, HTTP_POST, "/v1/registrations", send, &status, &body);
	free(send);
	if (ret)
		return ret;
	if (status >= 400) {
		if (error_parse(body, strlen(body), code, sizeof(code), msg, sizeof(msg))) {
			fprintf(stderr, "attestctl: verifier answered %ld\n", status);
		} else {
			const char *shown = show_cstr(msg);

			if (file && element_index(msg, &idx) && idx < json_array_size(lines))
				fprintf(stderr, "attestctl: %s%s%" JSON_INTEGER_FORMAT ": verifier"
					" refused (%ld %s): %s\n", file, csv ? ":" : ": item ",
					json_integer_value(json_array_get(lines, idx)), status, code,
					shown);
			else
				fprintf(stderr, "attestctl: verifier refused (%ld %s): %s\n", status,
					code, shown);
		}
		free(body);
		return 1;
	}
	free(body);
	if (file)
		printf("%zu agents registered from %s\n", json_array_size(items), file);
	else {
		struct api_registration r;

		api_registration_decode(json_array_get(items, 0), &r);
		printf("agent %s: registered\n", r.agent_id);
	}
	return 0;
}

int cmd_agent_add(int argc, char **argv)
{
	const char *cert = NULL, *sha = NULL, *from = NULL, *policy = NULL, *args[2];
	char **rest = calloc((size_t)argc + 1, sizeof(*rest)), why[1024], dirbuf[4096];
	json_t *labels = json_object(), *items = json_array(), *lines = json_array(), *o;
	struct online_opts opts;
	struct dynbuf f;
	int nrest = 0, n = 0, ret = 2;

	dynbuf_init(&f, ADD_FILE_MAX);
	if (!rest || !labels || !items || !lines)
		goto out;
	/* This command's options out; the rest (and "add") to the common parser. */
	rest[nrest++] = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--ek-cert") || !strcmp(a, "--ek-sha256") || !strcmp(a, "--from") ||
		    !strcmp(a, "--label") || !strcmp(a, "--policy")) {
			if (i + 1 >= argc) {
				ret = usage();
				goto out;
			}
			if (!strcmp(a, "--ek-cert"))
				cert = argv[++i];
			else if (!strcmp(a, "--ek-sha256"))
				sha = argv[++i];
			else if (!strcmp(a, "--from"))
				from = argv[++i];
			else if (!strcmp(a, "--policy"))
				policy = argv[++i];
			else if (label_add(labels, argv[++i], why, sizeof(why))) {
				fprintf(stderr, "attestctl: %s\n", why);
				goto out;
			}
		} else {
			rest[nrest++] = argv[i];
		}
	}
	if ((ret = online_parse_words(nrest, rest, &opts, args, 2, &n)))
		goto out;
	ret = 2;
	if (from) {
		bool csv;
		size_t k = 0;

		if (n != 1 || cert || sha || policy || json_object_size(labels)) {
			ret = usage();
			goto out;
		}
		if (file_read(from, &f)) {
			fprintf(stderr, "attestctl: cannot read %s\n", from);
			goto out;
		}
		snprintf(dirbuf, sizeof(dirbuf), "%s", from);
		while (k < f.len && (f.buf[k] == ' ' || f.buf[k] == '\t' || f.buf[k] == '\n' ||
				     f.buf[k] == '\r'))
			k++;
		csv = !(k < f.len && (f.buf[k] == '[' || f.buf[k] == '{'));
		ret = csv ? parse_csv(f.buf, from, dirname(dirbuf), items, lines, why, sizeof(why))
			  : parse_json(f.buf, f.len, from, dirname(dirbuf), items, lines, why,
				       sizeof(why));
		if (ret) {
			fprintf(stderr, "attestctl: %s; nothing was registered\n",
				ret == -ENOMEM ? "out of memory" : why);
			ret = 2;
			goto out;
		}
		ret = send_all(&opts, items, lines, from, csv);
		goto out;
	}
	if (n != 2) {
		ret = usage();
		goto out;
	}
	o = item(args[1], sha, cert, NULL, policy, labels, why, sizeof(why));
	if (!o) {
		fprintf(stderr, "attestctl: %s\n", why);
		goto out;
	}
	json_array_append_new(items, o);
	ret = send_all(&opts, items, lines, NULL, false);
out:
	dynbuf_release(&f);
	json_decref(labels);
	json_decref(items);
	json_decref(lines);
	free(rest);
	return ret;
}

int cmd_registrations(int argc, char **argv)
{
	struct online_opts o;
	const char *pos;
	json_t *j = NULL, *e;
	size_t i;
	int ret;

	if ((ret = online_parse_opts(argc, argv, &o, &pos)))
		return ret;
	if (pos) {
		online_usage("registrations");
		return 2;
	}
	if ((ret = online_fetch(&o, HTTP_GET, "/v1/registrations", NULL, &j)) || !j)
		return ret;
	printf("%-24s %-6s %-64s %-16s %s\n", "AGENT", "EK", "EK SHA256", "POLICY", "LABELS");
	json_array_foreach(api_list_items(j, API_REGISTRATIONS), i, e) {
		struct api_registration r;
		char *labels;

		api_registration_decode(e, &r);
		labels = show_json(r.labels, JSON_COMPACT | JSON_SORT_KEYS);
		printf("%-24s %-6s %-64s %-16s %s\n", show_cstr(r.agent_id), show_cstr(r.ek),
		       show_cstr(r.ek_sha256), show_cstr(r.policy),
		       show_cstr(labels ? labels : "{}"));
		free(labels);
	}
	json_decref(j);
	return 0;
}

int cmd_agent_unregister(int argc, char **argv)
{
	struct online_opts o;
	const char *args[2];
	char path[300];
	json_t *j = NULL;
	int n, ret;

	if ((ret = online_parse_words(argc, argv, &o, args, 2, &n)))
		return ret;
	if (n != 2 || !agent_id_valid(args[1])) {
		fprintf(stderr, "usage: attestctl agent unregister ID\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/v1/registrations/%s", args[1]);
	if ((ret = online_fetch(&o, HTTP_DELETE, path, NULL, &j)) || !j)
		return ret;
	printf("agent %s: unregistered (an enrolled agent stays; with --admission registered"
	       " its next enrollment is refused)\n", args[1]);
	json_decref(j);
	return 0;
}
