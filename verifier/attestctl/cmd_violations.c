/*
 * attestctl violations [--open|--state S] [--agent ID]: the violations awaiting review or
 * reviewed (online.h for the common options, defaults, output and exit status).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "proto/evidence.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/online.h"
#include "verifier/attestctl/show.h"
#include "verifier/api/api_codec.h"

int cmd_violations(int argc, char **argv)
{
	struct online_opts o;
	const char *pos;
	char path[512], t[32];
	json_t *j = NULL, *v;
	size_t i;
	int ret;

	if ((ret = online_parse_opts(argc, argv, &o, &pos)))
		return ret;
	if (pos || (o.state && strcmp(o.state, "open") && strcmp(o.state, "approved") &&
		    strcmp(o.state, "dismissed")) ||
	    (o.agent && !agent_id_valid(o.agent))) {
		online_usage("violations");
		return 2;
	}
	snprintf(path, sizeof(path), "/v1/violations?%s%s%s%s", o.state ? "state=" : "",
		 o.state ? o.state : "", o.agent ? (o.state ? "&agent=" : "agent=") : "",
		 o.agent ? o.agent : "");
	if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &j)) || !j)
		return ret;
	printf("%-6s %-16s %-9s %-16s %-5s %-21s %s\n", "ID", "AGENT", "STATE", "REASON", "COUNT",
	       "LAST SEEN", "PATH / DIGEST");
	json_array_foreach(api_list_items(j, API_VIOLATIONS), i, v) {
		struct api_violation vi;

		api_violation_decode(v, &vi);
		online_fmt_time(vi.last_seen, t, sizeof(t));
		/* The path as the verifier renders it: escaped (and said so) when not UTF-8. */
		printf("%-6" PRId64 " %-16s %-9s %-16s %-5" PRId64 " %-21s %s%s %s", vi.id,
		       show_cstr(vi.agent_id), show_cstr(vi.state), show_cstr(vi.reason), vi.count, t,
		       show_cstr(vi.path), vi.path_escaped ? " (not UTF-8, shown escaped)" : "",
		       show_cstr(vi.digest));
		if (vi.recurs)
			printf("  (recurs after %" PRId64 ")", vi.recurs);
		printf("\n");
		if (vi.explanation)
			printf("       %s\n", show_cstr(vi.explanation));
	}
	if (json_array_size(api_list_items(j, API_VIOLATIONS)) == 0)
		printf("(none)\n");
	json_decref(j);
	return 0;
}
