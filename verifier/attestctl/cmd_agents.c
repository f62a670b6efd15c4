/*
 * attestctl agents [--state S] [--policy NAME]: the agents a verifier knows, one row each
 * (online.h for the common options, defaults, output and exit status).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "proto/evidence.h"
#include "proto/labels.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/online.h"
#include "verifier/attestctl/show.h"
#include "verifier/api/api_codec.h"

/*
 * The VERDICT column is what vouches for the machine now: not the last verdict of a stale or a
 * retired agent. A stale agent's last verdict is old news and a retired agent's evidence is refused, so
 * theirs shows "-" (the STATE column says why; `attestctl agent ID` still shows it).
 */
static void print_agent_row(const json_t *o)
{
	char t[32], seen[32];
	struct api_agent a;
	const char *lv;

	api_agent_decode(o, &a);
	lv = a.last_verdict;
	if (a.state && (!strcmp(a.state, "stale") || !strcmp(a.state, "retired")))
		lv = NULL;
	online_fmt_time(a.last_verdict_at, t, sizeof(t));
	online_fmt_time(a.last_seen, seen, sizeof(seen));
	printf("%-24s %-8s %-12s %-10s %-21s %-21s %6" PRId64 " %8" PRId64 " %6" PRId64 "\n",
	       show_cstr(a.agent_id), show_cstr(a.state), show_cstr(a.policy), show_cstr(lv), t, seen,
	       a.boot_number, a.next_entry, a.open_violations);
}

int cmd_agents(int argc, char **argv)
{
	char key[LIMIT_LABEL_KEY + 1], value[LIMIT_LABEL_VALUE + 1];
	struct online_opts o;
	char path[512];
	const char *pos;
	json_t *j = NULL, *arr, *a;
	size_t i;
	int ret;

	if ((ret = online_parse_opts(argc, argv, &o, &pos)))
		return ret;
	/* The verifier checks the values (400 bad_request, with what it takes). */
	if (pos || (o.state && !agent_id_valid(o.state)) || (o.policy && !agent_id_valid(o.policy))) {
		online_usage("agents");
		return 2;
	}
	if (o.label && label_parse(o.label, key, value)) {
		fprintf(stderr, "attestctl: --label KEY=VALUE (a key of 1-%u [A-Za-z0-9._/-], a value"
				" of 1-%u [A-Za-z0-9._:/-])\n", LIMIT_LABEL_KEY, LIMIT_LABEL_VALUE);
		return 2;
	}
	snprintf(path, sizeof(path), "/v1/agents%s%s%s%s%s%s%s%s", o.state ? "?state=" : "",
		 o.state ? o.state : "", o.policy ? (o.state ? "&policy=" : "?policy=") : "",
		 o.policy ? o.policy : "", o.label ? (o.state || o.policy ? "&label=" : "?label=") : "",
		 o.label ? key : "", o.label ? "%3D" : "", o.label ? value : "");
	if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &j)) || !j)
		return ret;
	arr = api_list_items(j, API_AGENTS);
	printf("%-24s %-8s %-12s %-10s %-21s %-21s %6s %8s %6s\n", "AGENT", "STATE", "POLICY",
	       "VERDICT", "LAST VERDICT", "LAST SEEN", "BOOT", "ENTRIES", "OPEN");
	json_array_foreach(arr, i, a)
		print_agent_row(a);
	json_decref(j);
	return 0;
}
