/*
 * attestctl policy get NAME | put NAME FILE | assign AGENT NAME | diff OLD NEW
 *
 * Named policies on a running verifier (every put is a new version; the verifier keeps the old
 * ones and who made them). diff compares two policies, each a file or @NAME on the verifier,
 * and prints one line per change: `+ PATH ALG:HEX`, `- PATH ALG:HEX`, `+excludes RE`,
 * `-excludes RE`, the same for digest_only, keys (a trusted signing key added or dropped is a
 * change a reviewer must see), require_signatures and ignored_keyrings, and changed settings
 * (keyrings among them). put sends key files the policy names inline
 * (policy_file.h) and prints the verifier's import warnings on stderr (what a Keylime policy
 * asks for that is not enforced as Keylime would). Exit 0 (diff: 0 same, 1 different), 1 the
 * verifier refused, 2 usage, I/O or transport error. Common options as in online.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/dynbuf.h"
#include "proto/limits.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/online.h"
#include "verifier/policy_file.h"

static const char usage_text[] =
	"usage: attestctl policy get NAME | put NAME FILE | assign AGENT NAME | diff OLD NEW\n"
	"       (OLD and NEW are files or @NAME on the verifier)\n"
	"       [--verifier URL] [--ca FILE] [--token-file FILE]\n";

/* A policy's JSON: "@NAME" from the verifier, anything else a file. NULL after a message. */
static json_t *load_policy(const struct online_opts *o, const char *what)
{
	json_error_t jerr;
	json_t *j = NULL;

	if (what[0] == '@') {
		char path[256];
		struct online_opts quiet = *o;

		quiet.json = false;
		snprintf(path, sizeof(path), "/v1/policies/%s", what + 1);
		if (online_fetch(&quiet, HTTP_GET, path, NULL, &j))
			return NULL;
		return j;
	}
	/* Key files resolved as put resolves them, so a file and what put stored compare equal. */
	char *text = NULL, err[512];
	size_t len = 0;
	if (policy_file_read(what, &text, &len, err, sizeof(err))) {
		fprintf(stderr, "attestctl: %s\n", err);
		return NULL;
	}
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!j)
		fprintf(stderr, "attestctl: \"%s\" is not JSON: %s (line %d)\n", what, jerr.text,
			jerr.line);
	return j;
}

static bool array_has(json_t *arr, json_t *v)
{
	size_t i;
	json_t *x;

	json_array_foreach(arr, i, x)
		if (json_equal(x, v))
			return true;
	return false;
}

/* Prints `sign PATH DIGEST` for digests of a's paths that b lacks. */
static unsigned diff_digests(json_t *a, json_t *b, char sign)
{
	const char *path;
	json_t *list, *d;
	size_t i;
	unsigned n = 0;

	json_object_foreach(json_object_get(a, "digests"), path, list) {
		json_t *other = json_object_get(json_object_get(b, "digests"), path);

		json_array_foreach(list, i, d)
			if (!other || !array_has(other, d)) {
				printf("%c %s %s\n", sign, path, json_string_value(d) ? json_string_value(d) : "?");
				n++;
			}
	}
	return n;
}

static unsigned diff_list(json_t *a, json_t *b, const char *key, char sign)
{
	json_t *v;
	size_t i;
	unsigned n = 0;

	json_array_foreach(json_object_get(a, key), i, v)
		if (!array_has(json_object_get(b, key), v)) {
			char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
			printf("%c%s %s\n", sign, key, s ? s : "?");
			free(s);
			n++;
		}
	return n;
}

static int policy_diff(const struct online_opts *o, const char *old_src, const char *new_src)
{
	/* keyrings is compared whole, like a setting: a change to it is rare and small. */
	static const char *settings[] = {"violations", "boot_aggregate", "version", "keyrings"};
	static const char *lists[] = {"excludes", "digest_only", "keys", "require_signatures",
				      "ignored_keyrings"};
	json_t *a = load_policy(o, old_src), *b = a ? load_policy(o, new_src) : NULL;
	unsigned n = 0;

	if (!a || !b) {
		json_decref(a);
		return 2;
	}
	n += diff_digests(a, b, '-');
	n += diff_digests(b, a, '+');
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		n += diff_list(a, b, lists[i], '-');
		n += diff_list(b, a, lists[i], '+');
	}
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		json_t *x = json_object_get(a, settings[i]), *y = json_object_get(b, settings[i]);
		if (!json_equal(x, y) && (x || y)) {
			char *sx = x ? json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
			char *sy = y ? json_dumps(y, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
			printf("~%s %s -> %s\n", settings[i], sx ? sx : "(unset)", sy ? sy : "(unset)");
			free(sx);
			free(sy);
			n++;
		}
	}
	json_decref(a);
	json_decref(b);
	return n ? 1 : 0;
}

int cmd_policy(int argc, char **argv)
{
	struct online_opts o;
	const char *args[3] = {NULL, NULL, NULL};
	int nargs = 0, ret;
	json_t *j = NULL;
	char path[512];

	/* Split positional words from options so online_parse_opts sees options only. */
	char **opt_argv = calloc((size_t)argc + 1, sizeof(*opt_argv));
	int opt_argc = 0;
	if (!opt_argv)
		return 2;
	opt_argv[opt_argc++] = argv[0];
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1] == '-') {
			opt_argv[opt_argc++] = argv[i];
			if (strcmp(argv[i], "--json") && i + 1 < argc)
				opt_argv[opt_argc++] = argv[++i];
		} else if (nargs < 3) {
			args[nargs++] = argv[i];
		} else {
			nargs = 99;
		}
	}
	const char *pos = NULL;
	ret = online_parse_opts(opt_argc, opt_argv, &o, &pos);
	free(opt_argv);
	if (ret || pos || nargs < 2 || nargs > 3) {
		fputs(usage_text, stderr);
		return 2;
	}
	const char *verb = args[0];
	if (!strcmp(verb, "get") && nargs == 2) {
		o.json = false;
		snprintf(path, sizeof(path), "/v1/policies/%s", args[1]);
		if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &j)))
			return ret;
		char *s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(j);
		return 0;
	}
	if (!strcmp(verb, "put") && nargs == 3) {
		char *text = NULL, err[512];
		size_t len = 0, i;
		json_t *w;

		/* Key files named in the policy travel inline: the verifier reads no operator files. */
		if (policy_file_read(args[2], &text, &len, err, sizeof(err))) {
			fprintf(stderr, "attestctl: %s\n", err);
			return 2;
		}
		o.json = false;
		snprintf(path, sizeof(path), "/v1/policies/%s", args[1]);
		ret = online_fetch(&o, HTTP_PUT, path, text, &j);
		free(text);
		if (ret)
			return ret;
		printf("policy %s version %lld\n", args[1],
		       (long long)json_integer_value(json_object_get(j, "version")));
		json_array_foreach(json_object_get(j, "warnings"), i, w)
			fprintf(stderr, "attestctl: warning: policy %s: %s\n", args[1],
				json_string_value(w) ? json_string_value(w) : "?");
		json_decref(j);
		return 0;
	}
	if (!strcmp(verb, "assign") && nargs == 3) {
		json_t *body = json_pack("{s:s}", "policy", args[2]);
		char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
		json_decref(body);
		if (!text)
			return 2;
		o.json = false;
		snprintf(path, sizeof(path), "/v1/agents/%s/policy", args[1]);
		ret = online_fetch(&o, HTTP_PUT, path, text, &j);
		free(text);
		if (ret)
			return ret;
		printf("agent %s now uses policy %s\n", args[1], args[2]);
		json_decref(j);
		return 0;
	}
	if (!strcmp(verb, "diff") && nargs == 3)
		return policy_diff(&o, args[1], args[2]);
	fputs(usage_text, stderr);
	return 2;
}
