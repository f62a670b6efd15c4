/*
 * Admission in the store (store.h, "Registrations") on a backend (SQLite, or PostgreSQL with
 * ATTEST_TEST_PG: tests/lib/teststore.h): registrations stored all or none; an enrollment
 * admitted or refused in its own transaction (an unregistered id when admission is required,
 * a registered id with another EK in either mode), a refusal storing nothing; a registered
 * agent enrolling with its registration's policy and labels; a policy assigned to a registered
 * id before it enrolls; a policy in use by a registration not deleted; the audit records;
 * labels gone with a purge.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "tests/lib/teststore.h"
#include "tests/unit/check.h"
#include "verifier/store/store.h"

#define T0 1000000

/* An agent's keys, derived from a seed (two seeds, two TPMs). */
struct tpm {
	uint8_t ek[32], ak[32];
	struct store_admission adm;
};

static void tpm_of(const char *seed, bool required, struct tpm *t)
{
	char s[64];

	memset(t, 0, sizeof(*t));
	snprintf(s, sizeof(s), "ek:%s", seed);
	EVP_Digest(s, strlen(s), t->ek, NULL, EVP_sha256(), NULL);
	s[0] = 'a';
	EVP_Digest(s, strlen(s), t->ak, NULL, EVP_sha256(), NULL);
	t->adm.required = required;
	/* What enroll_check() computes: the digest of ek_pub, of the certificate's key. */
	EVP_Digest(t->ek, sizeof(t->ek), t->adm.ek_pub_sha256, NULL, EVP_sha256(), NULL);
	snprintf(s, sizeof(s), "spki:%s", seed);
	EVP_Digest(s, strlen(s), t->adm.ek_spki_sha256, NULL, EVP_sha256(), NULL);
}

static int enroll(struct store *st, const char *id, const struct tpm *t, bool with_adm,
		  enum store_enroll_result *r)
{
	struct store_agent a;

	memset(&a, 0, sizeof(a));
	snprintf(a.id, sizeof(a.id), "%s", id);
	a.ek_pub = (uint8_t *)t->ek;
	a.ek_pub_len = sizeof(t->ek);
	a.ek_cert = (uint8_t *)"cert";
	a.ek_cert_len = 4;
	a.ak_pub = (uint8_t *)t->ak;
	a.ak_pub_len = sizeof(t->ak);
	a.ak_name_len = 34;
	memcpy(a.ak_name, t->ak, 32);
	memset(a.cred_digest, 0x5a, sizeof(a.cred_digest));
	return with_adm ? store_agent_enroll_admitted(st, &a, &t->adm, T0, r)
			: store_agent_enroll(st, &a, T0, r);
}

static bool known(struct store *st, const char *id)
{
	struct store_agent a;
	int ret = store_agent_get(st, id, &a);

	store_agent_release(&a);
	return ret == 0;
}

static struct store_registration reg(const char *id, const struct tpm *t, bool by_cert,
				     const char *policy, const char *labels)
{
	struct store_registration r;

	memset(&r, 0, sizeof(r));
	r.agent = id;
	r.ek_kind = by_cert ? STORE_EK_CERT : STORE_EK_PUBLIC;
	memcpy(r.ek_sha256, by_cert ? t->adm.ek_spki_sha256 : t->adm.ek_pub_sha256, 32);
	if (by_cert) {
		r.ek_cert = (const uint8_t *)"DER";
		r.ek_cert_len = 3;
	}
	r.policy = policy;
	r.labels = labels;
	return r;
}

/* "id:kind:policy:labels:actor;" for each registration. */
static int reg_text(void *arg, const struct store_registration *r)
{
	char *out = arg;
	size_t n = strlen(out);

	snprintf(out + n, 1024 - n, "%s:%s:%s:%s:%s:%s;", r->agent, store_ek_kind_str(r->ek_kind),
		 r->policy, r->labels, r->actor, r->ek_cert_len ? "cert" : "-");
	return 0;
}

static int label_text(void *arg, const char *k, const char *v)
{
	char *out = arg;
	size_t n = strlen(out);

	snprintf(out + n, 256 - n, "%s=%s;", k, v);
	return 0;
}

static const char *labels_of(struct store *st, const char *id)
{
	static char buf[256];

	buf[0] = '\0';
	if (store_agent_labels(st, id, label_text, buf))
		return "(error)";
	return buf;
}

static int count_kind(void *arg, const struct audit_record *r)
{
	char *out = arg;
	size_t n = strlen(out);

	if (!strncmp(r->kind, "agent.registered", 16) || !strcmp(r->kind, "agent.unregistered") ||
	    !strcmp(r->kind, "agent.policy"))
		snprintf(out + n, 1024 - n, "%s:%s ", r->kind, r->agent);
	return 0;
}

/* The temporary directory and the store every case works in, made in main(). */
static char tmp_dir[] = "/tmp/test_store_admission.XXXXXX";
static struct store *shared_store;

static void test_registrations(void)
{
	struct store *st = shared_store;
	struct tpm t1, t2, t3;
	struct store_registration regs[3];
	char list[1024] = "";
	size_t failed = 99;
	int64_t v;

	tpm_of("one", true, &t1);
	tpm_of("two", true, &t2);
	tpm_of("three", true, &t3);
	CHECK(store_policy_put(st, "strict", "{}", "test", T0, &v) == 0, "a policy strict");
	regs[0] = reg("r1", &t1, false, "", "{}");
	regs[1] = reg("r2", &t2, true, "strict", "{\"role\":\"db\",\"site\":\"lab1\"}");
	CHECK(store_registrations_add(st, regs, 2, "alice", T0, &failed) == 0, "two registered");
	CHECK(store_registrations_list(st, reg_text, list) == 0 &&
		      !strcmp(list, "r1:public::{}:alice:-;"
				    "r2:cert:strict:{\"role\":\"db\",\"site\":\"lab1\"}:alice:cert;"),
	      "listed with what they name: %s", list);
	list[0] = '\0';
	CHECK(store_registration_get(st, "r2", reg_text, list) == 0 && !strncmp(list, "r2:cert", 7),
	      "one read: %s", list);
	CHECK(store_registration_get(st, "nobody", reg_text, list) == -ENOENT, "unknown: -ENOENT");

	/* All or none. */
	regs[0] = reg("r3", &t3, false, "", "{}");
	regs[1] = reg("r1", &t3, false, "", "{}");
	CHECK(store_registrations_add(st, regs, 2, "alice", T0, &failed) == -EEXIST && failed == 1,
	      "an id registered already: -EEXIST naming it (%zu)", failed);
	regs[1] = reg("r4", &t3, false, "missing", "{}");
	CHECK(store_registrations_add(st, regs, 2, "alice", T0, &failed) == -ENODATA && failed == 1,
	      "an unknown policy: -ENODATA naming it (%zu)", failed);
	regs[1] = reg("r3", &t2, false, "", "{}");
	CHECK(store_registrations_add(st, regs, 2, "alice", T0, &failed) == -EEXIST && failed == 1,
	      "an id twice in one batch: -EEXIST (%zu)", failed);
	list[0] = '\0';
	CHECK(store_registration_get(st, "r3", reg_text, list) == -ENOENT &&
		      store_registration_get(st, "r4", reg_text, list) == -ENOENT,
	      "nothing of a refused batch stored");
}

static void test_enrollment(void)
{
	struct store *st = shared_store;
	struct tpm t1, t2, t3, other, open1, open_other;
	struct store_registration r;
	enum store_enroll_result res;
	struct store_agent a;
	size_t failed;

	tpm_of("one", true, &t1);
	tpm_of("two", true, &t2);
	tpm_of("three", true, &t3);
	tpm_of("other", true, &other);
	CHECK(enroll(st, "u1", &t3, true, &res) == 0 && res == STORE_ENROLL_NOT_REGISTERED,
	      "required: an unregistered id refused (%d)", res);
	CHECK(!known(st, "u1"), "nothing stored");
	CHECK(enroll(st, "r1", &other, true, &res) == 0 && res == STORE_ENROLL_EK_NOT_REGISTERED,
	      "a registered id (by TPM2B_PUBLIC) with another EK refused (%d)", res);
	CHECK(enroll(st, "r2", &other, true, &res) == 0 && res == STORE_ENROLL_EK_NOT_REGISTERED,
	      "a registered id (by certificate) with another EK refused (%d)", res);
	CHECK(!known(st, "r1") && !known(st, "r2"), "nothing stored");
	/* The EK's TPM2B_PUBLIC digest does not stand for the certificate's, nor the reverse. */
	r = reg("x1", &t3, false, "", "{}");
	memcpy(r.ek_sha256, t3.adm.ek_spki_sha256, 32);
	CHECK(store_registrations_add(st, &r, 1, "alice", T0, &failed) == 0, "x1 registered");
	CHECK(enroll(st, "x1", &t3, true, &res) == 0 && res == STORE_ENROLL_EK_NOT_REGISTERED,
	      "a digest of the other kind does not admit (%d)", res);

	CHECK(enroll(st, "r1", &t1, true, &res) == 0 && res == STORE_ENROLL_NEW,
	      "r1 with its EK: admitted (%d)", res);
	CHECK(store_agent_get(st, "r1", &a) == 0 && a.policy[0] == '\0', "r1: the default policy");
	store_agent_release(&a);
	CHECK(enroll(st, "r2", &t2, true, &res) == 0 && res == STORE_ENROLL_NEW,
	      "r2 with its certificate's key: admitted (%d)", res);
	CHECK(store_agent_get(st, "r2", &a) == 0 && !strcmp(a.policy, "strict"),
	      "r2 enrolled with its registration's policy (\"%s\")", a.policy);
	store_agent_release(&a);
	CHECK(!strcmp(labels_of(st, "r2"), "role=db;site=lab1;"), "and its labels: %s",
	      labels_of(st, "r2"));
	CHECK(enroll(st, "r2", &t2, true, &res) == 0 && res == STORE_ENROLL_REFRESHED,
	      "re-enrolled while pending: refreshed (%d)", res);

	/* Open: unregistered ids as before, a registered id bound to its EK all the same. */
	tpm_of("open1", false, &open1);
	tpm_of("open-other", false, &open_other);
	CHECK(enroll(st, "o1", &open1, true, &res) == 0 && res == STORE_ENROLL_NEW,
	      "open: an unregistered id enrolls (%d)", res);
	r = reg("o2", &open1, false, "", "{}");
	CHECK(store_registrations_add(st, &r, 1, "alice", T0, &failed) == 0, "o2 registered");
	CHECK(enroll(st, "o2", &open_other, true, &res) == 0 &&
		      res == STORE_ENROLL_EK_NOT_REGISTERED && !known(st, "o2"),
	      "open: a registered id with another EK refused, nothing stored (%d)", res);
	CHECK(enroll(st, "o3", &open_other, false, &res) == 0 && res == STORE_ENROLL_NEW,
	      "no admission given (store_agent_enroll()): first come (%d)", res);
}

static void test_policy_and_delete(void)
{
	struct store *st = shared_store;
	struct store_registration r;
	struct tpm t4;
	struct store_agent a;
	enum store_enroll_result res;
	char list[1024] = "", kinds[1024] = "";
	size_t failed;

	tpm_of("four", true, &t4);
	r = reg("r5", &t4, false, "", "{\"site\":\"lab2\"}");
	CHECK(store_registrations_add(st, &r, 1, "bob", T0, &failed) == 0, "r5 registered");
	CHECK(store_agent_set_policy(st, "r5", "strict") == 0,
	      "a policy assigned to a registered id before it enrolls");
	CHECK(store_agent_set_policy(st, "r5", "missing") == -ENODATA, "an unknown policy: -ENODATA");
	CHECK(store_agent_set_policy(st, "nobody", "strict") == -ENOENT,
	      "an id neither enrolled nor registered: -ENOENT");
	CHECK(store_registration_get(st, "r5", reg_text, list) == 0 &&
		      !strncmp(list, "r5:public:strict:", 17), "the registration has it: %s", list);
	CHECK(store_policy_delete(st, "strict", "bob", T0) == -EBUSY,
	      "a policy a registration names is not deleted");
	CHECK(enroll(st, "r5", &t4, true, &res) == 0 && res == STORE_ENROLL_NEW &&
		      store_agent_get(st, "r5", &a) == 0 && !strcmp(a.policy, "strict"),
	      "r5 enrolls with the policy assigned before");
	store_agent_release(&a);
	CHECK(store_agent_set_policy(st, "r5", "") == 0, "assigned the default once enrolled");
	list[0] = '\0';
	CHECK(store_registration_get(st, "r5", reg_text, list) == 0 &&
		      !strncmp(list, "r5:public::", 11), "its registration follows: %s", list);

	CHECK(store_registration_delete(st, "r5", "bob", T0) == 0, "a registration deleted");
	CHECK(store_registration_delete(st, "r5", "bob", T0) == -ENOENT, "twice: -ENOENT");
	CHECK(known(st, "r5"), "the enrolled agent stays");
	CHECK(store_agent_retire(st, "r5", T0, "bob", true) == 0 && !labels_of(st, "r5")[0],
	      "purged: its labels are gone too");
	CHECK(store_audit_list(st, 0, 1000, count_kind, kinds) == 0 &&
		      strstr(kinds, "agent.registered:r1 agent.registered:r2 ") &&
		      strstr(kinds, "agent.registered:r5 agent.policy:r5 agent.policy:r5 "
				    "agent.unregistered:r5"),
	      "registrations, assignments and deletions audited: %s", kinds);
}

int main(void)
{
	char uri[256];

	if (!mkdtemp(tmp_dir))
		return 2;
	printf("# backend: %s\n", teststore_backend());
	CHECK(teststore_uri(tmp_dir, "admission", uri, sizeof(uri)) == 0 &&
		      store_open(uri, &shared_store) == 0,
	      "open");
	if (shared_store) {
		CASE(test_registrations);
		CASE(test_enrollment);
		CASE(test_policy_and_delete);
		store_close(shared_store);
	}
	snprintf(uri, sizeof(uri), "rm -rf %s", tmp_dir);
	if (system(uri) != 0)
		fprintf(stderr, "cleanup of %s failed\n", tmp_dir);
	return check_finish();
}
