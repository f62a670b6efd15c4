/*
 * attestctl approve VIOLATION_ID [--scope agent|policy] | dismiss VIOLATION_ID
 *           approve|dismiss --path PATH --digest ALG:HEX [--agent ID | --policy NAME] [--yes]
 *
 * An operator's review of violations. approve allows the file for the violation's agent only
 * (its amendment) unless --scope policy widens the policy the agent uses; it prints which, and
 * the version it wrote. With --path and --digest, every open violation of that file (of one
 * agent, or of the agents one policy judges) is counted, and decided with --yes. online.h for
 * the common options, defaults, output and exit status.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/evidence.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/online.h"
#include "verifier/attestctl/show.h"
#include "verifier/api/api_codec.h"

/* What an approval or dismissal did, in one line: its scope and the version it wrote. */
static void print_decision(const char *id, const json_t *j)
{
	struct api_decision d;

	api_decision_decode(j, &d);
	if (!d.state || strcmp(d.state, "approved")) {
		printf("violation %s: %s\n", id, show_cstr(d.state));
	} else if (d.scope && !strcmp(d.scope, "policy")) {
		printf("violation %s: approved into policy %s: now version %" PRId64 ", used by %"
		       PRId64 " agents\n", id, show_cstr(d.policy), d.policy_version, d.policy_agents);
	} else {
		printf("violation %s: approved for agent %s only: its amendment version %" PRId64
		       " (over policy %s; the policy is unchanged)\n", id, show_cstr(d.agent_id),
		       d.amendment_version, show_cstr(d.policy));
	}
}

/* Whether agent id is in the "agents" array of a GET /v1/agents answer. */
static bool agent_listed(json_t *agents, const char *id)
{
	json_t *a;
	size_t i;

	json_array_foreach(api_list_items(agents, API_AGENTS), i, a) {
		struct api_agent ag;

		api_agent_decode(a, &ag);
		if (ag.agent_id && !strcmp(ag.agent_id, id))
			return true;
	}
	return false;
}

/* Whether violation v (decoded into *vi) is of --path and --digest, on one of agents if given. */
static bool of_file(const struct online_opts *o, json_t *agents, const json_t *v,
		    struct api_violation *vi)
{
	api_violation_decode(v, vi);
	return vi->path && !strcmp(vi->path, o->path) && vi->digest &&
	       !strcmp(vi->digest, o->digest) &&
	       (!agents || (vi->agent_id && agent_listed(agents, vi->agent_id)));
}

/*
 * approve|dismiss --path PATH --digest ALG:HEX [--agent ID | --policy NAME] [--yes]: every open
 * violation of that file (on one agent, or on the agents a policy judges) is counted and listed;
 * with --yes each is decided as `approve ID` (for its agent alone) or `dismiss ID` would, each
 * in its own call, and the count of those
 * decided and of those refused is printed. 0 all decided, 1 not asked to (no --yes) or one
 * refused, 2 usage or an answer that lists too many.
 */
static int set_violations_of_file(struct online_opts *o, const char *action)
{
	char path[512], idtext[24];
	json_t *vs = NULL, *agents = NULL, *v, *j;
	struct api_violation vi;
	size_t i, n = 0, done = 0, refused = 0;
	int ret;

	snprintf(path, sizeof(path), "/v1/violations?state=open&limit=%u%s%s", LIMIT_LIST_ROWS,
		 o->agent ? "&agent=" : "", o->agent ? o->agent : "");
	if ((ret = online_fetch(o, HTTP_GET, path, NULL, &vs)) || !vs)
		return ret ? ret : 1;
	if (json_array_size(api_list_items(vs, API_VIOLATIONS)) >= LIMIT_LIST_ROWS) {
		fprintf(stderr, "attestctl: %u open violations or more: narrow the set with --agent"
				" (none was decided)\n", LIMIT_LIST_ROWS);
		ret = 2;
		goto out;
	}
	if (o->policy) {
		snprintf(path, sizeof(path), "/v1/agents?policy=%s", o->policy);
		if ((ret = online_fetch(o, HTTP_GET, path, NULL, &agents)) || !agents) {
			ret = ret ? ret : 1;
			goto out;
		}
	}
	json_array_foreach(api_list_items(vs, API_VIOLATIONS), i, v) {
		if (!of_file(o, agents, v, &vi))
			continue;
		if (n++ == 0)
			printf("%-6s %-24s %s\n", "ID", "AGENT", "REASON");
		printf("%-6" PRId64 " %-24s %s\n", vi.id, show_cstr(vi.agent_id), show_cstr(vi.reason));
	}
	printf("%zu open violations of %s %s%s%s\n", n, o->path, o->digest,
	       o->policy ? " on agents of policy " : "", o->policy ? o->policy : "");
	if (!n || !o->yes) {
		if (n)
			printf("nothing decided: run again with --yes to %s them\n", action);
		ret = n ? 1 : 0;
		goto out;
	}
	json_array_foreach(api_list_items(vs, API_VIOLATIONS), i, v) {
		if (!of_file(o, agents, v, &vi))
			continue;
		snprintf(idtext, sizeof(idtext), "%" PRId64, vi.id);
		snprintf(path, sizeof(path), "/v1/violations/%s/%s", idtext, action);
		j = NULL;
		if (online_fetch(o, HTTP_POST, path, NULL, &j) || !j) {
			refused++; /* online_fetch() said why */
		} else {
			print_decision(idtext, j);
			done++;
		}
		json_decref(j);
	}
	printf("%zu of %zu decided (%s), %zu refused\n", done, n, action, refused);
	ret = refused ? 1 : 0;
out:
	json_decref(vs);
	json_decref(agents);
	return ret;
}

static int set_violation(int argc, char **argv, const char *action)
{
	struct online_opts o;
	const char *pos;
	char path[128], *body = NULL;
	json_t *b;
	json_t *j = NULL;
	bool json_out;
	int ret;

	if ((ret = online_parse_opts(argc, argv, &o, &pos)))
		return ret;
	if (o.path || o.digest) {
		if (pos || !o.path || !o.digest || !o.path[0] || !o.digest[0] || o.json ||
		    (o.agent && !agent_id_valid(o.agent)) || (o.policy && !agent_id_valid(o.policy)) ||
		    (o.agent && o.policy) ||
		    (o.scope && (strcmp(action, "approve") || strcmp(o.scope, "agent")))) {
			/* Into a policy, one approval (approve ID --scope policy) serves them all. */
			online_usage(action);
			return 2;
		}
		return set_violations_of_file(&o, action);
	}
	if (!pos || !pos[0] || strspn(pos, "0123456789") != strlen(pos) || strlen(pos) > 18 ||
	    (o.scope && (strcmp(action, "approve") ||
			 (strcmp(o.scope, "agent") && strcmp(o.scope, "policy"))))) {
		online_usage(action);
		return 2;
	}
	if (o.scope) {
		b = api_approve_request_encode(o.scope);
		body = b ? json_dumps(b, JSON_COMPACT) : NULL;
		json_decref(b);
		if (!body)
			return 2;
	}
	snprintf(path, sizeof(path), "/v1/violations/%s/%s", pos, action);
	json_out = o.json;
	ret = online_fetch(&o, HTTP_POST, path, body, &j);
	free(body);
	if (ret || !j)
		return ret;
	if (!json_out)
		print_decision(pos, j);
	json_decref(j);
	return 0;
}

int cmd_approve(int argc, char **argv)
{
	return set_violation(argc, argv, "approve");
}

int cmd_dismiss(int argc, char **argv)
{
	return set_violation(argc, argv, "dismiss");
}
