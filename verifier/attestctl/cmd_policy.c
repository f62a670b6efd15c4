/*
 * attestctl policy list | get NAME [--version N] | put NAME FILE | assign AGENT NAME
 *                  | diff OLD NEW | history NAME | rollback NAME VERSION | delete NAME
 *                  | sign --key KEY FILE [--out FILE] (cmd_policy_sign.c)
 *
 * Named policies on a running verifier (every put is a new version; the verifier keeps the old
 * ones and who made them: `history` lists them, `get --version` reads one, `rollback` makes an
 * old version's text current again as a new version; `list` names every policy with its newest
 * version and how many agents use it; `delete` removes a policy no agent uses, with its
 * history). diff compares two policies, each a file
 * or @NAME on the verifier, and prints one line per change: `+ PATH ALG:HEX`, `- PATH ALG:HEX`
 * (digests and digests_hex), `+excludes RE`, `-excludes RE`, the same for digest_only, keys (a
 * trusted signing key added or dropped is a change a reviewer must see), require_signatures and
 * ignored_keyrings, package versions (`+package NAME VERSION ARCH`, `-package`, `~package`
 * for one whose files or marks changed), and changed settings (keyrings among them). put sends key files the policy
 * names inline (policy_file.h), a DSSE envelope (policy sign) as it is, and prints the verifier's import warnings on stderr (what a
 * Keylime policy asks for that is not enforced as Keylime would). Exit 0 (diff: 0 same, 1
 * different), 1 the verifier refused, 2 usage, I/O or transport error. Common options as in
 * online.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/dynbuf.h"
#include "proto/limits.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/online.h"
#include "verifier/attestctl/show.h"
#include "verifier/api/api_codec.h"
#include "verifier/policy/policy_file.h"

static const char usage_text[] =
	"usage: attestctl policy list | get NAME [--version N] | put NAME FILE | assign AGENT NAME\n"
	"                      | assign --label KEY=VALUE NAME [--yes]\n"
	"                      | diff OLD NEW | history NAME | rollback NAME VERSION | delete NAME\n"
	"                      | update NAME --apt-repo DIR --keyring FILE [...] (policy update --help)\n"
	"                      | sign --key KEY.pem FILE [--out FILE]\n"
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

/*
 * Prints `sign PATH DIGEST` for digests of a's paths that b lacks, in table `key`: "digests", or
 * "digests_hex" (paths that are not UTF-8, printed as hex:HEX).
 */
static unsigned diff_digests(json_t *a, json_t *b, char sign, const char *key)
{
	const char *path;
	json_t *list, *d;
	size_t i;
	unsigned n = 0;

	json_object_foreach(json_object_get(a, key), path, list) {
		json_t *other = json_object_get(json_object_get(b, key), path);

		json_array_foreach(list, i, d)
			if (!other || !array_has(other, d)) {
				printf("%c %s%s %s\n", sign, strcmp(key, "digests") ? "hex:" : "",
				       show_cstr(path), show_cstr(json_string_value(d)));
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
			char *s = show_json(v, JSON_COMPACT);
			printf("%c%s %s\n", sign, key, s ? s : "?");
			free(s);
			n++;
		}
	return n;
}

/* "name version arch" -> version object, for the versions of a's packages list. */
static json_t *package_index(json_t *a)
{
	json_t *idx = json_object(), *v;
	size_t i;

	json_array_foreach(json_object_get(a, "packages"), i, v) {
		char key[800];

		snprintf(key, sizeof(key), "%s %s %s", json_string_value(json_object_get(v, "package")),
			 json_string_value(json_object_get(v, "version")),
			 json_string_value(json_object_get(v, "architecture")));
		json_object_set(idx, key, v);
	}
	return idx;
}

/*
 * Package versions: `-package NAME VERSION ARCH` (dropped), `+package ...` (added, with its file
 * count) and `~package ...` (same version, other files or marks: missing_since among them).
 */
static unsigned diff_packages(json_t *a, json_t *b)
{
	json_t *ia = package_index(a), *ib = package_index(b), *v;
	const char *key;
	unsigned n = 0;

	json_object_foreach(ia, key, v) {
		json_t *w = json_object_get(ib, key);

		if (!w)
			printf("-package %s\n", show_cstr(key)), n++;
		else if (!json_equal(v, w))
			printf("~package %s\n", show_cstr(key)), n++;
	}
	json_object_foreach(ib, key, v)
		if (!json_object_get(ia, key))
			printf("+package %s (%zu files)\n", show_cstr(key),
			       json_object_size(json_object_get(v, "files")) +
				       json_object_size(json_object_get(v, "files_hex"))), n++;
	json_decref(ia);
	json_decref(ib);
	return n;
}

static int policy_diff(const struct online_opts *o, const char *old_src, const char *new_src)
{
	/* keyrings and boot are compared whole, like a setting: a change to either is rare and small. */
	static const char *settings[] = {"violations", "boot_aggregate", "version",
					 "reboot_clears_open_violations", "keyrings", "boot", "conffiles"};
	static const char *lists[] = {"excludes", "digest_only", "keys", "require_signatures",
				      "ignored_keyrings"};
	json_t *a = load_policy(o, old_src), *b = a ? load_policy(o, new_src) : NULL;
	unsigned n = 0;

	if (!a || !b) {
		json_decref(a);
		return 2;
	}
	n += diff_digests(a, b, '-', "digests");
	n += diff_digests(b, a, '+', "digests");
	n += diff_digests(a, b, '-', "digests_hex");
	n += diff_digests(b, a, '+', "digests_hex");
	n += diff_packages(a, b);
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		n += diff_list(a, b, lists[i], '-');
		n += diff_list(b, a, lists[i], '+');
	}
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		json_t *x = json_object_get(a, settings[i]), *y = json_object_get(b, settings[i]);
		if (!json_equal(x, y) && (x || y)) {
			char *sx = x ? show_json(x, JSON_COMPACT) : NULL;
			char *sy = y ? show_json(y, JSON_COMPACT) : NULL;
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

static bool is_number(const char *s)
{
	return s && *s && strspn(s, "0123456789") == strlen(s) && strlen(s) <= 18;
}

/*
 * A policy's (or an amendment's) versions, newest first: VERSION TIME BYTES SIGNER BY; SIGNER is
 * the first 16 hex digits of the keyid that verified it, "unchecked" for one signed but stored
 * by a verifier without --policy-signers, "-" unsigned (--json: the whole keyid).
 */
int policy_print_history(const struct online_opts *o, const char *path, const char *what)
{
	json_t *j = NULL, *v;
	char t[32];
	size_t i;
	int ret;
	int64_t agents;
	bool has_agents;

	if ((ret = online_fetch(o, HTTP_GET, path, NULL, &j)) || !j)
		return ret;
	agents = api_policy_versions_agents(j, &has_agents);
	if (has_agents)
		printf("%s: used by %" PRId64 " agents\n", what, agents);
	printf("%-8s %-21s %10s  %-16s  %s\n", "VERSION", "TIME", "BYTES", "SIGNER", "BY");
	json_array_foreach(api_list_items(j, API_VERSIONS), i, v) {
		struct api_policy_version pv;
		const char *signer;

		api_policy_version_decode(v, &pv);
		signer = pv.signer && pv.signer[0] ? show_cstr(pv.signer)
			 : pv.signed_		   ? "unchecked"
						   : "-";
		online_fmt_time(pv.time, t, sizeof(t));
		printf("%-8" PRId64 " %-21s %10" PRId64 "  %-16.16s  %s\n", pv.version, t, pv.bytes,
		       signer, show_cstr(pv.actor));
	}
	if (!json_array_size(api_list_items(j, API_VERSIONS)))
		printf("(none)\n");
	json_decref(j);
	return 0;
}

/* POST {"version": N} to a rollback URL; prints what it did. */
int policy_rollback_to(const struct online_opts *o, const char *path, const char *what,
		       const char *version)
{
	struct api_rollback r;
	json_t *b = api_rollback_request_encode(strtoll(version, NULL, 10)), *j = NULL;
	char *body = b ? json_dumps(b, JSON_COMPACT) : NULL;
	int ret;

	json_decref(b);
	if (!body)
		return 2;
	ret = online_fetch(o, HTTP_POST, path, body, &j);
	free(body);
	if (ret || !j)
		return ret;
	api_rollback_decode(j, &r);
	if (r.changed)
		printf("%s rolled back to version %s: now version %" PRId64 "\n", what, version,
		       r.version);
	else
		printf("%s: version %" PRId64 " already has the text of version %s; nothing changed\n",
		       what, r.version, version);
	json_decref(j);
	return 0;
}

/* Every named policy: NAME VERSION AGENTS WRITTEN BY. */
static int policy_list(struct online_opts *o)
{
	json_t *j = NULL, *p;
	char t[32];
	size_t i;
	int ret;

	if ((ret = online_fetch(o, HTTP_GET, "/v1/policies", NULL, &j)) || !j)
		return ret;
	printf("%-24s %7s %6s  %-21s %s\n", "POLICY", "VERSION", "AGENTS", "WRITTEN", "BY");
	json_array_foreach(api_list_items(j, API_POLICIES), i, p) {
		struct api_policy_summary ps;

		api_policy_summary_decode(p, &ps);
		online_fmt_time(ps.time, t, sizeof(t));
		printf("%-24s %7" PRId64 " %6" PRId64 "  %-21s %s\n", show_cstr(ps.name), ps.version,
		       ps.agents, t, show_cstr(ps.actor));
	}
	json_decref(j);
	return 0;
}

int cmd_policy(int argc, char **argv)
{
	struct online_opts o;
	const char *args[3] = {NULL, NULL, NULL};
	int nargs = 0, ret;
	json_t *j = NULL;
	char path[512], what[300];

	if (argc > 1 && !strcmp(argv[1], "update"))
		return cmd_policy_update(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "sign"))
		return cmd_policy_sign(argc - 1, argv + 1);
	ret = online_parse_words(argc, argv, &o, args, 3, &nargs);
	if (!ret && nargs == 1 && !strcmp(args[0], "list"))
		return policy_list(&o);
	if (ret || nargs < 2 || nargs > 3) {
		fputs(usage_text, stderr);
		return 2;
	}
	const char *verb = args[0];
	if (!strcmp(verb, "get") && nargs == 2) {
		if (o.version && !is_number(o.version)) {
			fputs(usage_text, stderr);
			return 2;
		}
		o.json = false;
		snprintf(path, sizeof(path), "/v1/policies/%s%s%s", args[1],
			 o.version ? "/versions/" : "", o.version ? o.version : "");
		if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &j)))
			return ret;
		char *s = show_json(j, JSON_INDENT(2) | JSON_SORT_KEYS);
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(j);
		return 0;
	}
	if (!strcmp(verb, "put") && nargs == 3) {
		struct api_policy_stored stored;
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
		api_policy_stored_decode(j, &stored);
		printf("policy %s version %" PRId64, args[1], stored.version);
		if (stored.signer && stored.signer[0])
			printf(", signed by %s", show_cstr(stored.signer));
		else if (stored.signed_)
			printf(", signed (unchecked: the verifier has no --policy-signers)");
		printf("\n");
		json_array_foreach(stored.warnings, i, w)
			fprintf(stderr, "attestctl: warning: policy %s: %s\n", args[1],
				show_cstr(json_string_value(w)));
		json_decref(j);
		return 0;
	}
	if (!strcmp(verb, "assign") && nargs == 2 && o.label)
		return policy_assign_label(&o, args[1]);
	if (!strcmp(verb, "assign") && nargs == 3 && !o.label) {
		json_t *body = api_agent_policy_request_encode(args[2]);
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
	if (!strcmp(verb, "delete") && nargs == 2) {
		o.json = false;
		snprintf(path, sizeof(path), "/v1/policies/%s", args[1]);
		if ((ret = online_fetch(&o, HTTP_DELETE, path, NULL, &j)))
			return ret;
		printf("policy %s deleted with its history\n", args[1]);
		json_decref(j);
		return 0;
	}
	snprintf(what, sizeof(what), "policy %s", args[1]);
	if (!strcmp(verb, "history") && nargs == 2) {
		snprintf(path, sizeof(path), "/v1/policies/%s/versions", args[1]);
		return policy_print_history(&o, path, what);
	}
	if (!strcmp(verb, "rollback") && nargs == 3 && is_number(args[2])) {
		snprintf(path, sizeof(path), "/v1/policies/%s/rollback", args[1]);
		return policy_rollback_to(&o, path, what, args[2]);
	}
	fputs(usage_text, stderr);
	return 2;
}
