/*
 * Labels in the store (store.h, "Labels") on a backend (SQLite, or PostgreSQL with
 * ATTEST_TEST_PG: tests/lib/teststore.h): an agent's labels set, replaced and removed in one
 * transaction, capped, audited; a registered id's labels changed in its registration; the
 * fleet's labels in one listing; a policy assigned to every agent with a label, only counted
 * without apply, audited per agent, an unknown policy refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/storeagent.h"
#include "tests/lib/teststore.h"
#include "tests/unit/check.h"
#include "verifier/store/store.h"

#define T0 2000000

static int label_text(void *arg, const char *k, const char *v)
{
	char *out = arg;
	size_t n = strlen(out);

	snprintf(out + n, 512 - n, "%s=%s;", k, v);
	return 0;
}

static const char *labels_of(struct store *st, const char *id)
{
	static char buf[512];

	buf[0] = '\0';
	if (store_agent_labels(st, id, label_text, buf))
		return "(error)";
	return buf;
}

static int fleet_text(void *arg, const char *agent, const char *k, const char *v)
{
	char *out = arg;
	size_t n = strlen(out);

	snprintf(out + n, 1024 - n, "%s:%s=%s;", agent, k, v);
	return 0;
}

static int reg_labels(void *arg, const struct store_registration *r)
{
	snprintf(arg, 256, "%s", r->labels);
	return 0;
}

static int ids_text(void *arg, const char *id)
{
	char *out = arg;
	size_t n = strlen(out);

	snprintf(out + n, 512 - n, "%s ", id);
	return 0;
}

static int audit_text(void *arg, const struct audit_record *r)
{
	char *out = arg;
	size_t n = strlen(out);

	if (!strcmp(r->kind, "agent.labels") || !strcmp(r->kind, "agent.policy"))
		snprintf(out + n, 4096 - n, "%s:%s:%s:%s ", r->kind, r->actor, r->agent, r->detail);
	return 0;
}

static const char *policy_of(struct store *st, const char *id)
{
	static char p[LIMIT_POLICY_NAME + 1];
	struct store_agent a;

	if (store_agent_get(st, id, &a))
		return "(none)";
	snprintf(p, sizeof(p), "%s", a.policy);
	store_agent_release(&a);
	return p;
}

static struct store *shared_store;
static char tmp_dir[] = "/tmp/test_store_labels.XXXXXX";

static void test_change(void)
{
	struct store *st = shared_store;
	struct store_label set[LIMIT_LABELS + 1];
	struct store_registration r;
	const char *rm[] = { "role" };
	char keys[LIMIT_LABELS + 1][8], buf[256] = "";
	size_t failed;

	CHECK(storeagent_active(st, "a1", T0) == 0 && storeagent_active(st, "a2", T0) == 0 &&
		      storeagent_active(st, "a3", T0) == 0, "three agents");
	set[0] = (struct store_label){ "site", "lab1" };
	set[1] = (struct store_label){ "role", "db" };
	CHECK(store_agent_labels_change(st, "a1", set, 2, NULL, 0, "alice", T0) == 0 &&
		      !strcmp(labels_of(st, "a1"), "role=db;site=lab1;"),
	      "two labels set: %s", labels_of(st, "a1"));
	set[0] = (struct store_label){ "site", "lab2" };
	CHECK(store_agent_labels_change(st, "a1", set, 1, rm, 1, "alice", T0) == 0 &&
		      !strcmp(labels_of(st, "a1"), "site=lab2;"),
	      "one replaced, one removed in one call: %s", labels_of(st, "a1"));
	CHECK(store_agent_labels_change(st, "a1", NULL, 0, rm, 1, "alice", T0) == 0,
	      "removing a label it lacks is no error");
	CHECK(store_agent_labels_change(st, "nobody", set, 1, NULL, 0, "alice", T0) == -ENOENT,
	      "an unknown id: -ENOENT");
	for (unsigned i = 0; i < LIMIT_LABELS; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%u", i);
		set[i] = (struct store_label){ keys[i], "v" };
	}
	CHECK(store_agent_labels_change(st, "a1", set, LIMIT_LABELS, NULL, 0, "alice", T0) ==
			  -E2BIG && !strcmp(labels_of(st, "a1"), "site=lab2;"),
	      "more than %u labels in all: -E2BIG, nothing changed (%s)", LIMIT_LABELS,
	      labels_of(st, "a1"));

	/* A registered id not enrolled yet: its registration's labels. */
	memset(&r, 0, sizeof(r));
	r.agent = "r1";
	r.policy = "";
	r.labels = "{\"site\":\"lab9\"}";
	CHECK(store_registrations_add(st, &r, 1, "alice", T0, &failed) == 0, "r1 registered");
	set[0] = (struct store_label){ "rack", "r7" };
	CHECK(store_agent_labels_change(st, "r1", set, 1, (const char *[]){ "site" }, 1, "alice",
					T0) == 0 &&
		      store_registration_get(st, "r1", reg_labels, buf) == 0 &&
		      !strcmp(buf, "{\"rack\":\"r7\"}"),
	      "a registered id's labels changed in its registration: %s", buf);

	set[0] = (struct store_label){ "site", "lab1" };
	CHECK(store_agent_labels_change(st, "a2", set, 1, NULL, 0, "bob", T0) == 0 &&
		      store_agent_labels_change(st, "a3", set, 1, NULL, 0, "bob", T0) == 0,
	      "a2 and a3 labelled site=lab1");
	{
		char all[1024] = "";

		CHECK(store_labels_all(st, fleet_text, all) == 0 &&
			      !strcmp(all, "a1:site=lab2;a2:site=lab1;a3:site=lab1;"),
		      "the fleet's labels by agent (a registration's are not an agent's): %s", all);
	}
}

static void test_assign(void)
{
	struct store *st = shared_store;
	struct store_label l = { "site", "lab1" };
	char ids[512] = "", trail[4096] = "";
	uint64_t matching = 0;
	int64_t v;

	CHECK(store_policy_put(st, "strict", "{}", "test", T0, &v) == 0, "a policy strict");
	CHECK(store_policy_assign_label(st, "missing", &l, true, "bob", T0, ids_text, ids,
					&matching) == -ENODATA, "an unknown policy: -ENODATA");
	CHECK(store_policy_assign_label(st, "strict", &l, false, "bob", T0, ids_text, ids,
					&matching) == 0 && !strcmp(ids, "a2 a3 ") && matching == 2,
	      "counted: a2 and a3 (%s, %llu)", ids, (unsigned long long)matching);
	CHECK(!strcmp(policy_of(st, "a2"), "") && !strcmp(policy_of(st, "a3"), ""),
	      "without apply nothing changed");
	CHECK(store_agent_set_policy(st, "a3", "strict") == 0, "a3 assigned strict by hand");
	ids[0] = '\0';
	CHECK(store_policy_assign_label(st, "strict", &l, true, "bob", T0, ids_text, ids,
					&matching) == 0 && !strcmp(ids, "a2 ") && matching == 2,
	      "applied: a2 changes, a3 had it already (%s, %llu)", ids,
	      (unsigned long long)matching);
	CHECK(!strcmp(policy_of(st, "a2"), "strict") && !strcmp(policy_of(st, "a1"), ""),
	      "a2 uses strict, a1 (another label) untouched");
	ids[0] = '\0';
	CHECK(store_policy_assign_label(st, "", &l, true, "bob", T0, ids_text, ids, &matching) ==
			  0 && !strcmp(ids, "a2 a3 ") && !strcmp(policy_of(st, "a3"), ""),
	      "back to the default: %s", ids);
	CHECK(store_audit_list(st, 0, 1000, audit_text, trail) == 0 &&
		      strstr(trail, "agent.labels:alice:a1:{\"remove\":[\"role\"],\"set\":{\"site\":"
				    "\"lab2\"}}") &&
		      strstr(trail, "agent.policy:bob:a2:{\"label\":\"site=lab1\",\"policy\":"
				    "\"strict\"}") &&
		      !strstr(trail, "agent.policy:bob:a3:{\"label\":\"site=lab1\",\"policy\":"
				     "\"strict\"}"),
	      "label changes and assignments by label audited, one record per agent changed: %s",
	      trail);
	CHECK(store_agent_retire(st, "a1", T0, "bob", true) == 0 && !labels_of(st, "a1")[0],
	      "purged: its labels go with it");
}

int main(void)
{
	char uri[256];

	if (!mkdtemp(tmp_dir))
		return 2;
	printf("# backend: %s\n", teststore_backend());
	CHECK(teststore_uri(tmp_dir, "labels", uri, sizeof(uri)) == 0 &&
		      store_open(uri, &shared_store) == 0,
	      "open");
	if (shared_store) {
		CASE(test_change);
		CASE(test_assign);
		store_close(shared_store);
	}
	snprintf(uri, sizeof(uri), "rm -rf %s", tmp_dir);
	if (system(uri) != 0)
		fprintf(stderr, "cleanup of %s failed\n", tmp_dir);
	return check_finish();
}
