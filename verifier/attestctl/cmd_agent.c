/*
 * attestctl agent ID: one agent, its last verdict and what it booted; agent retire ID [--purge],
 * agent reset ID, agent history ID: its lifecycle (online.h for the common options, defaults,
 * output and exit status; `agent add` and `agent unregister` are cmd_registrations.c's).
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

/* Runs the request and handles the common parts: transport errors, API errors, --json. */

/* An agent's labels, KEY=VALUE in the order the verifier sent them (by key). */
static void print_labels(json_t *labels)
{
	const char *key;
	json_t *v;

	printf("labels:         ");
	json_object_foreach(labels, key, v)
		printf(" %s=%s", show_cstr(key), show_cstr(json_string_value(v)));
	printf("%s\n", json_object_size(labels) ? "" : " -");
}

/* The "boot" object of an agent: what its firmware event log says it booted. */
static void print_boot(json_t *b)
{
	struct api_boot_summary bs;
	struct api_boot_log log;
	const char *status;
	char t[32];

	if (!json_is_object(b)) {
		printf("boot:            no firmware event log (an agent without one, or older than this verifier)\n");
		return;
	}
	api_boot_summary_decode(b, &bs);
	api_boot_log_decode(b, &log);
	status = show_cstr(bs.status);
	online_fmt_time(log.received_at, t, sizeof(t));
	printf("boot log:        %" PRId64 " events, %" PRId64 " bytes, received %s; %s\n",
	       bs.events, log.log_bytes, t,
	       !strcmp(status, "replays")    ? "replays to the quoted PCRs"
	       : !strcmp(status, "mismatch") ? "does NOT replay to the quoted PCRs"
	       : !strcmp(status, "corrupt")  ? "does not parse"
					     : status);
	printf("firmware:        ");
	fputs(show_cstr(bs.firmware), stdout);
	if (bs.pcr0)
		printf(" (PCR 0 %s)", show_cstr(bs.pcr0));
	printf("\nsecure boot:     %s\n", show_cstr(bs.secure_boot));
	printf("kernel:          ");
	if (bs.has_kernel) {
		printf("%s", show_cstr(bs.kernel.digest));
		if (bs.kernel.file) {
			printf(" from \"");
			fputs(show_cstr(bs.kernel.file), stdout);
			printf("\"");
		}
		if (bs.kernel.name) {
			printf(", \"");
			fputs(show_cstr(bs.kernel.name), stdout);
			printf("\"");
		}
		if (bs.kernel.has_allowed)
			printf(" (%s)", bs.kernel.allowed ? "allowed" : "NOT allowed by the policy");
	} else {
		printf("- (no EFI application in PCR 4)");
	}
	printf("\ncommand line:    ");
	if (bs.cmdline) {
		fputs(show_cstr(bs.cmdline), stdout);
		printf(" (%s)", bs.cmdline_verified ? "verified against PCR 9"
						    : "as the agent reported it: not measured, or not the measured one");
	} else {
		printf("- (not reported)");
	}
	printf("\n");
}

/* agent retire ID [--purge] | agent reset ID | agent history ID */
static int agent_lifecycle(int argc, char **argv)
{
	struct online_opts o;
	const char *args[2];
	char path[300], t[32];
	json_t *j = NULL, *e;
	size_t i;
	int n, ret;

	if ((ret = online_parse_words(argc, argv, &o, args, 2, &n)))
		return ret;
	if (n != 2 || !agent_id_valid(args[1]) || (o.purge && strcmp(args[0], "retire"))) {
		fprintf(stderr, "usage: attestctl agent retire ID [--purge] | agent reset ID |"
				" agent history ID\n");
		return 2;
	}
	if (!strcmp(args[0], "retire")) {
		snprintf(path, sizeof(path), "/v1/agents/%s%s", args[1], o.purge ? "?purge=1" : "");
		if ((ret = online_fetch(&o, HTTP_DELETE, path, NULL, &j)) || !j)
			return ret;
		printf(o.purge ? "agent %s: purged (it and everything stored for it are deleted;"
				 " the id is free)\n"
			       : "agent %s: retired (its evidence is refused, its EK is free, its"
				 " history is kept)\n", args[1]);
	} else if (!strcmp(args[0], "reset")) {
		snprintf(path, sizeof(path), "/v1/agents/%s/reset", args[1]);
		if ((ret = online_fetch(&o, HTTP_POST, path, NULL, &j)) || !j)
			return ret;
		printf("agent %s: reset (its next enrollment may bring a new EK and AK)\n", args[1]);
	} else {
		snprintf(path, sizeof(path), "/v1/agents/%s/history", args[1]);
		if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &j)) || !j)
			return ret;
		printf("%-21s %-12s %-16s %s\n", "TIME", "EVENT", "ACTOR", "DETAIL");
		json_array_foreach(api_list_items(j, API_HISTORY), i, e) {
			struct api_agent_event ev;

			api_agent_event_decode(e, &ev);
			online_fmt_time(ev.time, t, sizeof(t));
			printf("%-21s %-12s %-16s %s\n", t, show_cstr(ev.event), show_cstr(ev.actor),
			       show_cstr(ev.detail));
		}
	}
	json_decref(j);
	return 0;
}

int cmd_agent(int argc, char **argv)
{
	struct online_opts o;
	const char *pos;
	char path[256], t1[32], t2[32], t3[32], t4[32];
	struct api_agent a;
	json_t *j = NULL;
	int ret;

	/* The first word that is not an option or an option's value names the action. */
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-') {
			if (strcmp(argv[i], "--json") && strcmp(argv[i], "--purge") &&
			    !strchr(argv[i], '='))
				i++;
			continue;
		}
		if (!strcmp(argv[i], "retire") || !strcmp(argv[i], "reset") ||
		    !strcmp(argv[i], "history"))
			return agent_lifecycle(argc, argv);
		if (!strcmp(argv[i], "add"))
			return cmd_agent_add(argc, argv);
		if (!strcmp(argv[i], "label"))
			return cmd_agent_label(argc, argv);
		if (!strcmp(argv[i], "unregister"))
			return cmd_agent_unregister(argc, argv);
		break;
	}
	if ((ret = online_parse_opts(argc, argv, &o, &pos)))
		return ret;
	if (!pos || !agent_id_valid(pos)) {
		online_usage("agent");
		return 2;
	}
	snprintf(path, sizeof(path), "/v1/agents/%s", pos);
	if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &j)) || !j)
		return ret;
	api_agent_decode(j, &a);
	online_fmt_time(a.created_at, t1, sizeof(t1));
	online_fmt_time(a.activated_at, t2, sizeof(t2));
	online_fmt_time(a.last_seen, t3, sizeof(t3));
	online_fmt_time(a.stale_after, t4, sizeof(t4));
	printf("agent:           %s\nstate:           %s\npolicy:          %s\n"
	       "ak name:         %s\nenrolled:        %s\nactivated:       %s\n"
	       "boot number:     %" PRId64 "\nnext entry:      %" PRId64 "\n"
	       "last verdict:    %s\nopen violations: %" PRId64 "\n"
	       "last seen:       %s (every %" PRId64 " s%s; stale after %s)\n",
	       show_cstr(a.agent_id), show_cstr(a.state), show_cstr(a.policy), show_cstr(a.ak_name),
	       t1, t2, a.boot_number, a.next_entry, show_cstr(a.last_verdict), a.open_violations, t3,
	       a.interval, a.interval_reported ? ", as the agent reported" : ", the verifier's default",
	       t4);
	print_labels(a.labels);
	print_boot(a.boot);
	json_decref(j);
	return 0;
}
