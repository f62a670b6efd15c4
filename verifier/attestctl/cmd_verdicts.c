/*
 * attestctl verdicts ID [--limit N]: an agent's verdicts, newest first, with their reasons
 * (online.h for the common options, defaults, output and exit status).
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

int cmd_verdicts(int argc, char **argv)
{
	struct online_opts o;
	const char *pos;
	char path[300], t[32];
	json_t *j = NULL, *v, *r;
	size_t i, k;
	int ret;

	if ((ret = online_parse_opts(argc, argv, &o, &pos)))
		return ret;
	if (!pos || !agent_id_valid(pos) || (o.limit && strspn(o.limit, "0123456789") != strlen(o.limit))) {
		online_usage("verdicts");
		return 2;
	}
	snprintf(path, sizeof(path), "/v1/agents/%s/verdicts%s%s", pos, o.limit ? "?limit=" : "",
		 o.limit ? o.limit : "");
	if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &j)) || !j)
		return ret;
	printf("%-8s %-21s %-10s %5s %8s  %-24s %s\n", "ID", "TIME", "VERDICT", "BOOT", "NEXT",
	       "JUDGED BY", "REASONS");
	json_array_foreach(api_list_items(j, API_VERDICTS), i, v) {
		/* POLICY@VERSION, +N for the agent's amendment version N; "-" before verdicts named
		 * them. */
		char by[LIMIT_POLICY_NAME + 48] = "-";
		struct api_verdict vd;
		struct api_reason rs;

		api_verdict_decode(v, &vd);
		online_fmt_time(vd.time, t, sizeof(t));
		printf("%-8" PRId64 " %-21s %-10s %5" PRId64 " %8" PRId64 "  ", vd.id, t,
		       show_cstr(vd.verdict), vd.boot_number, vd.next_offset);
		if (vd.judged_by.known)
			snprintf(by, sizeof(by), "%s@%" PRId64 "+%" PRId64,
				 show_cstr(vd.judged_by.policy), vd.judged_by.policy_version,
				 vd.judged_by.amendment_version);
		printf("%-24s ", by);
		json_array_foreach(vd.reasons, k, r) {
			if (k >= 3) {
				printf(" ...");
				break;
			}
			api_reason_decode(r, &rs);
			printf("%s%s", k ? ", " : "", show_cstr(rs.code));
		}
		printf("\n");
	}
	json_decref(j);
	return 0;
}
