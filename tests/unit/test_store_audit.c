/*
 * The audit trail (verifier/store/audit.h, store.h "Audit trail") on a backend (SQLite, or
 * PostgreSQL with ATTEST_TEST_PG: tests/lib/teststore.h): which changes append a record and
 * which do not, the chain checked (and broken by each kind of tampering, in memory), appends
 * from concurrent writers gapless, and the signer's key and signed head.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/storeagent.h"
#include "tests/lib/teststore.h"
#include "tests/unit/check.h"
#include "verifier/service/audit_sign.h"
#include "verifier/store/audit.h"
#include "verifier/store/store.h"

#define MAXREC 512

struct trail {
	struct audit_record r[MAXREC];
	char kind[MAXREC][32], actor[MAXREC][64], agent[MAXREC][64], detail[MAXREC][256];
	unsigned n;
};

static int trail_cb(void *arg, const struct audit_record *r)
{
	struct trail *t = arg;

	if (t->n >= MAXREC)
		return -E2BIG;
	t->r[t->n] = *r;
	snprintf(t->kind[t->n], 32, "%s", r->kind);
	snprintf(t->actor[t->n], 64, "%s", r->actor);
	snprintf(t->agent[t->n], 64, "%s", r->agent);
	snprintf(t->detail[t->n], 256, "%s", r->detail);
	t->r[t->n].kind = t->kind[t->n];
	t->r[t->n].actor = t->actor[t->n];
	t->r[t->n].agent = t->agent[t->n];
	t->r[t->n].detail = t->detail[t->n];
	t->n++;
	return 0;
}

static int read_trail(struct store *st, struct trail *t)
{
	memset(t, 0, sizeof(*t));
	return store_audit_list(st, 0, MAXREC, trail_cb, t);
}

/* Whether the chain of t checks, and where it broke. */
/* A copy's records point into the copy's own strings. */
static void repoint(struct trail *x)
{
	for (unsigned i = 0; i < x->n; i++) {
		x->r[i].kind = x->kind[i];
		x->r[i].actor = x->actor[i];
		x->r[i].agent = x->agent[i];
		x->r[i].detail = x->detail[i];
	}
}

static bool chain_ok(const struct trail *t, int64_t *bad)
{
	struct audit_check c;

	audit_check_init(&c);
	for (unsigned i = 0; i < t->n; i++)
		if (!audit_check_next(&c, &t->r[i]))
			break;
	*bad = c.failed ? c.failed_seq : 0;
	return !c.failed;
}

static struct boot_state bs = { .started = true, .boot_number = 1 };

static int commit(struct store *st, const char *agent, uint64_t *ver, bool trusted, int64_t now)
{
	struct store_round r = {
		.agent = agent, .prev_version = *ver, .next = &bs, .trusted = trusted,
		.reasons_json = trusted ? "[]" : "[{\"code\":\"not_in_allowlist\"}]", .now = now,
	};
	struct store_round_violation v = {
		.reason = "not_in_allowlist", .path = "/x", .digest = "sha256:00",
		.template_name = "ima-ng", .entry = 1,
	};
	int64_t id;
	int ret;

	if (!trusted) {
		r.violations = &v;
		r.nviolations = 1;
	}
	ret = store_round_commit(st, &r, &id);
	if (!ret)
		(*ver)++;
	return ret;
}

static int first_violation(void *arg, const struct store_violation *v)
{
	*(int64_t *)arg = v->id;
	return 1;
}

/* The temporary directory and the store every case works in, made in main(). */
static char tmp_dir[] = "/tmp/test_store_audit.XXXXXX";
static struct store *shared_store;

static void test_records(void)
{
	struct store *st = shared_store;
	const char *want[] = { "trust", "trust", "trust", "policy.version", "agent.policy",
			       "violation.decided", "agent.reset", "agent.retired", "agent.purged" };
	static struct trail t;
	uint64_t ver = 0, ver2 = 0;
	int64_t pv, vid = 0, bad;
	unsigned ok = 0;

	CHECK(storeagent_active(st, "au-1", 100) == 0 && storeagent_active(st, "au-2", 100) == 0,
	      "two agents");
	CHECK(read_trail(st, &t) == 0 && t.n == 0, "enrollment and activation are the agents' own:"
	      " no record (%u)", t.n);
	CHECK(commit(st, "au-1", &ver, true, 200) == 0 && commit(st, "au-1", &ver, true, 210) == 0 &&
		      commit(st, "au-1", &ver, false, 220) == 0 &&
		      commit(st, "au-1", &ver, false, 230) == 0 && commit(st, "au-2", &ver2, true, 240) == 0,
	      "rounds: au-1 trusted twice then untrusted twice, au-2 trusted");
	CHECK(store_policy_put(st, "p1", "{}", "alice", 300, &pv) == 0 &&
		      store_policy_put(st, "p1", "{}", "alice", 301, &pv) == 0,
	      "a policy put twice with the same text (the second changes nothing)");
	CHECK(store_agent_set_policy(st, "au-2", "p1") == 0 &&
		      store_agent_set_policy(st, "nosuch", "p1") == -ENOENT,
	      "a policy assigned (and one to an unknown agent refused)");
	CHECK(store_violations_list(st, 0, "au-1", 1, first_violation, &vid) >= 0 && vid > 0 &&
		      store_violation_decide(st, vid, VIOLATION_DISMISSED, 400, "dismissed by bob") == 0 &&
		      store_violation_decide(st, vid, VIOLATION_APPROVED, 401, "again") == -EALREADY,
	      "a violation dismissed (deciding it again changes nothing)");
	CHECK(store_agent_reset(st, "au-2", 500, "carol") == 0 &&
		      store_agent_retire(st, "au-2", 501, "carol", false) == 0 &&
		      store_agent_retire(st, "au-2", 502, "carol", false) == -EALREADY &&
		      store_agent_retire(st, "au-1", 503, "dave", true) == 0,
	      "reset, retired (twice: refused), another purged");
	CHECK(read_trail(st, &t) == 0 && t.n == 9, "nine records (%u)", t.n);
	for (unsigned i = 0; i < t.n && i < 9; i++)
		ok += !strcmp(t.kind[i], want[i]);
	CHECK(ok == 9, "in order: first trust, turned untrusted, au-2's first, then each operator"
	      " action (%u of 9)", ok);
	CHECK(t.n == 9 && !strcmp(t.agent[0], "au-1") && !strcmp(t.agent[2], "au-2") &&
		      !strcmp(t.actor[3], "alice") && !strcmp(t.actor[7], "carol") &&
		      !strcmp(t.agent[8], "au-1") && strstr(t.detail[5], "dismissed by bob"),
	      "each names its agent, its actor and what it did");
	CHECK(chain_ok(&t, &bad), "the chain checks (broken at %lld)", (long long)bad);

	/* Each tampering, on the records read back. */
	if (t.n == 9) {
		static struct trail x;

		x = t;
		repoint(&x);
		x.actor[4][0] = 'X';
		CHECK(!chain_ok(&x, &bad) && bad == 5, "an edited actor: broken at 5 (%lld)", (long long)bad);
		x = t;
		repoint(&x);
		memmove(&x.r[3], &x.r[4], 5 * sizeof(x.r[0]));
		x.n = 8;
		CHECK(!chain_ok(&x, &bad) && bad == 4, "a deleted record: broken at 4 (%lld)", (long long)bad);
		x = t;
		repoint(&x);
		x.r[5].seq = 7;
		x.r[6].seq = 6;
		CHECK(!chain_ok(&x, &bad), "two records' places swapped: broken");
		x.r[5].seq = 6;
		x.r[6].seq = 7;
		x.r[2].time++;
		CHECK(!chain_ok(&x, &bad) && bad == 3, "an edited time: broken at 3 (%lld)", (long long)bad);
	}
}

struct writer {
	struct store *st;
	int id;
	int ok;
};

static void *writer_thread(void *p)
{
	struct writer *w = p;
	char name[32], json[64];
	int64_t v;

	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "cw%d", w->id);
		snprintf(json, sizeof(json), "{\"i\": %d}", i);
		w->ok += store_policy_put(w->st, name, json, "writer", 1000 + i, &v) == 0;
	}
	return NULL;
}

static void test_concurrent(void)
{
	struct store *st = shared_store;
	struct writer w[4];
	pthread_t th[4];
	static struct trail t;
	int64_t before, bad;
	uint8_t h[AUDIT_HASH_LEN];
	int ok = 0;

	CHECK(store_audit_last(st, &before, h) == 0, "the head before");
	for (int i = 0; i < 4; i++) {
		w[i] = (struct writer){ .st = st, .id = i };
		pthread_create(&th[i], NULL, writer_thread, &w[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		ok += w[i].ok;
	}
	CHECK(ok == 80, "four writers at once wrote 80 policy versions (%d)", ok);
	CHECK(read_trail(st, &t) == 0 && t.n == (unsigned)before + 80 && chain_ok(&t, &bad),
	      "and 80 records more, gapless, the chain intact (%u records, broken at %lld)", t.n,
	      (long long)bad);
}

static int signed_cb(void *arg, const struct store_audit_signed *s)
{
	*(struct store_audit_signed *)arg = *s;
	return 1;
}

static void test_signer(void)
{
	struct store *st = shared_store;
	const char *dir = tmp_dir;
	struct audit_signer *s = NULL;
	struct store_audit_signed head = { 0 };
	char key[256];
	struct stat sb;
	int64_t seq;
	uint8_t h[AUDIT_HASH_LEN];

	snprintf(key, sizeof(key), "%s/audit-key.pem", dir);
	CHECK(audit_signer_start(st, NULL, key, 3600, &s) == 0 && s, "the signer starts");
	CHECK(stat(key, &sb) == 0 && (sb.st_mode & 0777) == 0600, "its key is made, 0600 (%o)",
	      sb.st_mode & 0777);
	CHECK(audit_signer_sign(s) == 0 && store_audit_last(st, &seq, h) == 0 &&
		      store_audit_signed_list(st, 1, signed_cb, &head) == 1 && head.seq == seq &&
		      !memcmp(head.hash, h, AUDIT_HASH_LEN) && head.signature_len > 0,
	      "the head is signed: its seq and hash");
	audit_signer_stop(s);
	s = NULL;
	CHECK(audit_signer_start(st, NULL, key, 3600, &s) == 0 && s, "it starts again with its key");
	audit_signer_stop(s);
	audit_signer_stop(NULL);
}

int main(void)
{
	char uri[256];

	if (!mkdtemp(tmp_dir))
		return 2;
	printf("# backend: %s\n", teststore_backend());
	CHECK(teststore_uri(tmp_dir, "audit", uri, sizeof(uri)) == 0 &&
		      store_open(uri, &shared_store) == 0,
	      "open");
	if (shared_store) {
		CASE(test_records);
		CASE(test_concurrent);
		CASE(test_signer);
		store_close(shared_store);
	}
	snprintf(uri, sizeof(uri), "rm -rf %s", tmp_dir);
	if (system(uri) != 0)
		fprintf(stderr, "cleanup of %s failed\n", tmp_dir);
	return check_finish();
}
