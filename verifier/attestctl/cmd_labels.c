/*
 * attestctl's label commands (verifier(8), LABELS):
 *
 *   agent label ID KEY=VALUE... [--remove KEY]...   PUT /v1/agents/ID/labels
 *   policy assign --label KEY=VALUE NAME [--yes]    POST /v1/policies/NAME/assign
 *
 * `policy assign --label` first asks which agents it would change and shows their count; only
 * with --yes is the policy assigned to them, in one transaction on the verifier (each
 * assignment audited).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/evidence.h"
#include "proto/labels.h"
#include "verifier/api/api_codec.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/online.h"
#include "verifier/attestctl/show.h"

static int label_usage(void)
{
	fprintf(stderr, "usage: attestctl agent label ID KEY=VALUE... [--remove KEY]...\n");
	return 2;
}

int cmd_agent_label(int argc, char **argv)
{
	char **rest = calloc((size_t)argc + 1, sizeof(*rest)), path[300], *text = NULL;
	const char *args[2 + LIMIT_LABELS + 1];
	char key[LIMIT_LABEL_KEY + 1], value[LIMIT_LABEL_VALUE + 1];
	json_t *set = json_object(), *remove = json_array(), *body = NULL, *j = NULL, *v;
	struct api_agent_labels now;
	struct online_opts o;
	const char *k;
	int nrest = 0, n = 0, ret = 2;

	if (!rest || !set || !remove)
		goto out;
	rest[nrest++] = argv[0];
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--remove")) {
			if (i + 1 >= argc || !label_key_valid(argv[i + 1])) {
				ret = label_usage();
				goto out;
			}
			json_array_append_new(remove, json_string(argv[++i]));
		} else {
			rest[nrest++] = argv[i];
		}
	}
	if ((ret = online_parse_words(nrest, rest, &o, args, 2 + LIMIT_LABELS, &n)))
		goto out;
	ret = 2;
	if (n < 2 || n > 2 + (int)LIMIT_LABELS || !agent_id_valid(args[1]) ||
	    (n == 2 && !json_array_size(remove))) {
		ret = label_usage();
		goto out;
	}
	for (int i = 2; i < n; i++) {
		if (label_parse(args[i], key, value) || json_object_get(set, key)) {
			fprintf(stderr, "attestctl: \"%s\" is not KEY=VALUE (a key of 1-%u"
					" [A-Za-z0-9._/-], given once; a value of 1-%u"
					" [A-Za-z0-9._:/-])\n", show_cstr(args[i]), LIMIT_LABEL_KEY,
				LIMIT_LABEL_VALUE);
			goto out;
		}
		json_object_set_new(set, key, json_string(value));
	}
	body = api_labels_change_encode(&(struct api_labels_change){ set, remove });
	set = remove = NULL; /* taken */
	if (!body || !(text = json_dumps(body, JSON_COMPACT)))
		goto out;
	snprintf(path, sizeof(path), "/v1/agents/%s/labels", args[1]);
	if ((ret = online_fetch(&o, HTTP_PUT, path, text, &j)) || !j)
		goto out;
	api_agent_labels_decode(j, &now);
	printf("agent %s: labels", args[1]);
	json_object_foreach(now.labels, k, v)
		printf(" %s=%s", show_cstr(k), show_cstr(json_string_value(v)));
	printf("%s\n", json_object_size(now.labels) ? "" : " none");
out:
	free(text);
	json_decref(j);
	json_decref(body);
	json_decref(set);
	json_decref(remove);
	free(rest);
	return ret;
}

int policy_assign_label(const struct online_opts *o, const char *policy)
{
	char key[LIMIT_LABEL_KEY + 1], value[LIMIT_LABEL_VALUE + 1], path[300], *text;
	struct online_opts q = *o;
	json_t *body, *j = NULL, *id;
	struct api_assign a;
	size_t n, i;
	int ret;

	if (label_parse(o->label, key, value) || !agent_id_valid(policy)) {
		fprintf(stderr, "usage: attestctl policy assign --label KEY=VALUE NAME [--yes]\n");
		return 2;
	}
	body = api_assign_request_encode(&(struct api_assign){ .label = o->label, .apply = o->yes });
	text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (!text)
		return 2;
	q.json = false;
	snprintf(path, sizeof(path), "/v1/policies/%s/assign", policy);
	ret = online_fetch(&q, HTTP_POST, path, text, &j);
	free(text);
	if (ret || !j)
		return ret;
	api_assign_decode(j, &a);
	n = json_array_size(a.agents);
	if (o->yes) {
		json_array_foreach(a.agents, i, id)
			printf("agent %s now uses policy %s\n", show_cstr(json_string_value(id)),
			       policy);
		printf("%zu agents labelled %s assigned policy %s (%" PRId64 " have the label)\n",
		       n, o->label, policy, a.matching);
	} else {
		json_array_foreach(a.agents, i, id)
			printf("%s\n", show_cstr(json_string_value(id)));
		printf("%zu agents labelled %s would be assigned policy %s (%" PRId64
		       " have the label; the others use it already)\n", n, o->label, policy,
		       a.matching);
		if (n)
			printf("nothing assigned: run again with --yes to assign them\n");
		ret = n ? 1 : 0;
	}
	json_decref(j);
	return ret;
}
