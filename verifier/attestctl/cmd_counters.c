/*
 * attestctl counters ID [--limit N]: an agent's hourly counters (online.h for the common
 * options, defaults, output and exit status).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "proto/evidence.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/online.h"
#include "verifier/api/api_codec.h"

int cmd_counters(int argc, char **argv)
{
	struct online_opts o;
	const char *pos;
	char path[300], t[32];
	json_t *j = NULL, *h;
	size_t i;
	int ret;

	if ((ret = online_parse_opts(argc, argv, &o, &pos)))
		return ret;
	if (!pos || !agent_id_valid(pos) || (o.limit && strspn(o.limit, "0123456789") != strlen(o.limit))) {
		online_usage("counters");
		return 2;
	}
	snprintf(path, sizeof(path), "/v1/agents/%s/counters%s%s", pos, o.limit ? "?limit=" : "",
		 o.limit ? o.limit : "");
	if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &j)) || !j)
		return ret;
	printf("%-21s %8s %8s %9s\n", "HOUR", "ROUNDS", "TRUSTED", "UNTRUSTED");
	json_array_foreach(api_list_items(j, API_HOURS), i, h) {
		struct api_hour hr;

		api_hour_decode(h, &hr);
		online_fmt_time(hr.hour, t, sizeof(t));
		printf("%-21s %8" PRId64 " %8" PRId64 " %9" PRId64 "\n", t, hr.rounds, hr.trusted,
		       hr.untrusted);
	}
	json_decref(j);
	return 0;
}
