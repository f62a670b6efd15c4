/*
 * attestctl amendment AGENT | amendment history AGENT | amendment rollback AGENT VERSION
 *
 * An agent's amendment: the files (and boot findings, in its boot section) an operator approved
 * for that agent alone (`approve N` without --scope policy), consulted after the agent's policy
 * says no. The first form lists
 * them; `history` lists its versions; `rollback` makes an older version current again as a new
 * version, and version 0 is the empty amendment (it withdraws every approval scoped to the
 * agent). Exit 0, 1 the verifier refused, 2 usage or transport error. Options as in online.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/evidence.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/online.h"
#include "verifier/attestctl/show.h"
#include "verifier/api/api_codec.h"

static const char usage_text[] =
	"usage: attestctl amendment AGENT | amendment history AGENT\n"
	"                          | amendment rollback AGENT VERSION (0: withdraw every approval)\n"
	"       [--verifier URL] [--ca FILE] [--token-file FILE] [--json]\n";

static void print_paths(json_t *digests, bool hex)
{
	const char *path;
	json_t *list, *d;
	size_t i;

	json_object_foreach(digests, path, list) {
		printf("%s%s", hex ? "hex:" : "", show_cstr(path));
		json_array_foreach(list, i, d)
			printf(" %s", show_cstr(json_string_value(d)));
		printf("\n");
	}
}

static int show(const struct online_opts *o, const char *agent)
{
	struct api_amendment am;
	char path[256];
	json_t *j = NULL, *doc, *boot;
	int ret;

	snprintf(path, sizeof(path), "/v1/agents/%s/amendment", agent);
	if ((ret = online_fetch(o, HTTP_GET, path, NULL, &j)) || !j)
		return ret;
	api_amendment_decode(j, &am);
	doc = am.amendment;
	printf("agent %s: amendment version %" PRId64 "\n", agent, am.version);
	print_paths(json_object_get(doc, "digests"), false);
	/* Paths that are not UTF-8 travel as the hex of their bytes. */
	print_paths(json_object_get(doc, "digests_hex"), true);
	/* Boot findings approved for this agent: a boot section that only adds to the policy's. */
	boot = json_object_get(doc, "boot");
	if (boot) {
		char *text = show_json(boot, JSON_COMPACT | JSON_SORT_KEYS);

		printf("boot, allowed in addition to the policy's: %s\n", text ? text : "?");
		free(text);
	}
	if (!json_object_size(json_object_get(doc, "digests")) &&
	    !json_object_size(json_object_get(doc, "digests_hex")) && !boot)
		printf("(nothing approved for this agent alone)\n");
	json_decref(j);
	return 0;
}

int cmd_amendment(int argc, char **argv)
{
	struct online_opts o;
	const char *args[3] = { NULL, NULL, NULL };
	char path[256], what[192];
	int nargs = 0;

	if (online_parse_words(argc, argv, &o, args, 3, &nargs) || nargs < 1 || nargs > 3)
		goto usage;
	if (nargs == 1 && agent_id_valid(args[0]))
		return show(&o, args[0]);
	if (nargs < 2 || !agent_id_valid(args[1]))
		goto usage;
	snprintf(what, sizeof(what), "amendment of agent %s", args[1]);
	if (!strcmp(args[0], "history") && nargs == 2) {
		snprintf(path, sizeof(path), "/v1/agents/%s/amendment/versions", args[1]);
		return policy_print_history(&o, path, what);
	}
	if (!strcmp(args[0], "rollback") && nargs == 3 && args[2][0] &&
	    strspn(args[2], "0123456789") == strlen(args[2]) && strlen(args[2]) <= 18) {
		snprintf(path, sizeof(path), "/v1/agents/%s/amendment/rollback", args[1]);
		return policy_rollback_to(&o, path, what, args[2]);
	}
usage:
	fputs(usage_text, stderr);
	return 2;
}
