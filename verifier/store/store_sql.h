/*
 * store_sql: the store's rules over an SQL driver (store_driver.h). Every operation of
 * store_backend.h is written here once; a backend is a driver plus the store_ops that
 * STORE_SQL_OPS() makes for it:
 *
 *   static int open_x(const char *location, struct store_backend **out)
 *   {
 *           return store_sql_open(&x_driver, &store_x_ops, location, out);
 *   }
 *   const struct store_ops store_x_ops = STORE_SQL_OPS("x", open_x);
 */
#ifndef VERIFIER_STORE_SQL_H
#define VERIFIER_STORE_SQL_H

#include "verifier/store/store_backend.h"
#include "verifier/store/store_driver.h"

/* Opens the driver at location (the URI after "SCHEME:"); ops is the backend's store_ops. */
int store_sql_open(const struct store_driver_ops *drv, const struct store_ops *ops,
		   const char *location, struct store_backend **out);

void store_sql_close(struct store_backend *b);
int store_sql_agent_enroll(struct store_backend *b, const struct store_agent *a,
			   const struct store_admission *adm, int64_t now,
			   const struct store_enroll_limits *lim,
			   enum store_enroll_result *result);
int store_sql_registrations_add(struct store_backend *b, const struct store_registration *regs,
				size_t n, const char *actor, int64_t now, size_t *failed);
int store_sql_registration_get(struct store_backend *b, const char *agent,
			       store_registration_cb cb, void *arg);
int store_sql_registrations_list(struct store_backend *b, store_registration_cb cb, void *arg);
int store_sql_registration_delete(struct store_backend *b, const char *agent,
				  const char *actor, int64_t now);
int store_sql_agent_labels(struct store_backend *b, const char *agent, store_label_cb cb,
			   void *arg);
int store_sql_labels_all(struct store_backend *b, store_fleet_label_cb cb, void *arg);
int store_sql_agent_labels_change(struct store_backend *b, const char *id,
				  const struct store_label *set, size_t nset,
				  const char *const *remove, size_t nremove, const char *actor,
				  int64_t now);
int store_sql_policy_assign_label(struct store_backend *b, const char *policy,
				  const struct store_label *l, bool apply, const char *actor,
				  int64_t now, store_id_cb cb, void *arg, uint64_t *matching);
int store_sql_agent_get(struct store_backend *b, const char *id, struct store_agent *out);
int store_sql_agent_activate(struct store_backend *b, const char *id,
			     const uint8_t digest[STORE_CRED_DIGEST_LEN], int64_t now,
			     const struct store_enroll_limits *lim);
int store_sql_agent_set_policy(struct store_backend *b, const char *id, const char *policy);
int store_sql_agents_list(struct store_backend *b, store_agent_cb cb, void *arg);
int store_sql_agents_liveness(struct store_backend *b, store_agent_cb cb, void *arg);
int store_sql_boot_get(struct store_backend *b, const char *agent, struct boot_state *out,
		       uint64_t *version);
int store_sql_boot_log_get(struct store_backend *b, const char *agent,
			   struct store_boot_log *out);
int store_sql_round_context(struct store_backend *b, const char *agent,
			    const char *default_policy, const char *amendment,
			    struct store_round_ctx *out);
void store_sql_commit_rounds(struct store_backend *b, struct store_pending_round *batch);
int store_sql_verdicts_list(struct store_backend *b, const char *agent, unsigned limit,
			    store_verdict_cb cb, void *arg);
int store_sql_verdicts_prune(struct store_backend *b, const char *agent, unsigned keep,
			     unsigned limit, uint64_t *deleted);
int store_sql_counters_prune(struct store_backend *b, int64_t before, unsigned limit,
			     uint64_t *deleted);
int store_sql_counters_list(struct store_backend *b, const char *agent, int64_t since,
			    unsigned limit, store_counters_cb cb, void *arg);
int store_sql_evidence_logs_prune(struct store_backend *b, int64_t before, unsigned limit,
				  uint64_t *deleted);
int store_sql_evidence_get(struct store_backend *b, int64_t verdict_id,
			   struct store_evidence *out);
int store_sql_evidence_policy(struct store_backend *b, const char *name, int64_t version,
			      char **json);
int store_sql_agent_ids(struct store_backend *b, const char *after, unsigned limit,
			store_agent_id_cb cb, void *arg);
int store_sql_audit_list(struct store_backend *b, int64_t after, unsigned limit,
			 store_audit_cb cb, void *arg);
int store_sql_audit_last(struct store_backend *b, int64_t *seq, uint8_t hash[AUDIT_HASH_LEN]);
int store_sql_audit_signed_put(struct store_backend *b, const struct store_audit_signed *s);
int store_sql_audit_signed_list(struct store_backend *b, unsigned limit,
				store_audit_signed_cb cb, void *arg);
int store_sql_violations_list(struct store_backend *b, int state, const char *agent,
			      unsigned limit, store_violation_cb cb, void *arg);
int store_sql_violation_get(struct store_backend *b, int64_t id, store_violation_cb cb,
			    void *arg);
int store_sql_violations_open_count(struct store_backend *b, const char *agent,
				    uint64_t boot_number, uint64_t *total, uint64_t *in_boot);
int store_sql_violation_decide(struct store_backend *b, int64_t id, enum violation_state state,
			       int64_t now, const char *decision);
int store_sql_policy_put(struct store_backend *b, const char *name, int64_t expected,
			 const char *json, const struct store_policy_sig *sig, const char *actor,
			 int64_t now, int64_t *version);
int store_sql_policy_version(struct store_backend *b, const char *name, int64_t *version);
int store_sql_policy_get(struct store_backend *b, const char *name, char **json,
			 int64_t *version);
int store_sql_policy_get_version(struct store_backend *b, const char *name, int64_t version,
				 char **json, char **signer, char **signature);
int store_sql_policy_versions(struct store_backend *b, const char *name,
			      store_policy_version_cb cb, void *arg);
int store_sql_policy_agents(struct store_backend *b, const char *name, uint64_t *count);
int store_sql_policies_list(struct store_backend *b, const char *default_policy,
			    store_policy_summary_cb cb, void *arg);
int store_sql_policy_delete(struct store_backend *b, const char *name, const char *actor,
			    int64_t now);
int store_sql_counts(struct store_backend *b, struct store_counts *out);
int store_sql_agent_retire(struct store_backend *b, const char *id, int64_t now,
			   const char *actor, bool purge);
int store_sql_agent_reset(struct store_backend *b, const char *id, int64_t now,
			  const char *actor);
int store_sql_agent_history(struct store_backend *b, const char *id, unsigned limit,
			    store_agent_event_cb cb, void *arg);
int store_sql_agent_mark_stale(struct store_backend *b, const char *id, int64_t last_seen,
			       uint32_t interval, int64_t stale_after, int64_t now);
int store_sql_outbox_claim(struct store_backend *b, const char *target, int64_t now,
			   int64_t lease, unsigned limit, store_outbox_cb cb, void *arg);
int store_sql_outbox_settle(struct store_backend *b, const struct store_outbox_settle *v,
			    size_t n);
int store_sql_outbox_pending(struct store_backend *b, const char *target, uint64_t *count);

/*
 * store.h's store_copy() between two open stores of this file: every table, read from one
 * snapshot of the source (store_driver.h), written in one transaction on the target. 0;
 * -ENOTEMPTY (logged) if the target has a row in any table.
 */
int store_sql_copy(struct store_backend *from, struct store_backend *to);

/*
 * store.h's store_backup(): store_sql_copy() into a new SQLite store in a scratch file
 * ($TMPDIR, else /tmp), whatever the database, handed over open and unlinked.
 */
int store_sql_backup(struct store_backend *b, int *fd, uint64_t *size);

/*
 * The name of table i of what store_sql_copy() copies and the number of its columns it copies;
 * NULL past the last (for the tests).
 */
const char *store_sql_copy_table(size_t i, unsigned *ncolumns);

#define STORE_SQL_OPS(scheme_, open_)                                                    \
	{                                                                                  \
		.scheme = (scheme_), .open = (open_), .close = store_sql_close,            \
		.agent_enroll = store_sql_agent_enroll, .agent_get = store_sql_agent_get,  \
		.agent_activate = store_sql_agent_activate,                                \
		.registrations_add = store_sql_registrations_add,                          \
		.registration_get = store_sql_registration_get,                            \
		.registrations_list = store_sql_registrations_list,                        \
		.registration_delete = store_sql_registration_delete,                      \
		.agent_labels = store_sql_agent_labels,                                    \
		.labels_all = store_sql_labels_all,                                        \
		.agent_labels_change = store_sql_agent_labels_change,                      \
		.policy_assign_label = store_sql_policy_assign_label,                      \
		.agent_set_policy = store_sql_agent_set_policy,                            \
		.agents_list = store_sql_agents_list, .boot_get = store_sql_boot_get,      \
		.agents_liveness = store_sql_agents_liveness,                               \
		.boot_log_get = store_sql_boot_log_get,                                    \
		.round_context = store_sql_round_context,                                  \
		.commit_rounds = store_sql_commit_rounds,                                  \
		.verdicts_list = store_sql_verdicts_list,                                  \
		.verdicts_prune = store_sql_verdicts_prune,                                \
		.counters_prune = store_sql_counters_prune,                                \
		.counters_list = store_sql_counters_list, .agent_ids = store_sql_agent_ids, \
		.evidence_logs_prune = store_sql_evidence_logs_prune,                      \
		.evidence_get = store_sql_evidence_get,                                    \
		.evidence_policy = store_sql_evidence_policy,                              \
		.audit_list = store_sql_audit_list, .audit_last = store_sql_audit_last,    \
		.audit_signed_put = store_sql_audit_signed_put,                            \
		.audit_signed_list = store_sql_audit_signed_list,                          \
		.violations_list = store_sql_violations_list,                              \
		.violation_get = store_sql_violation_get,                                  \
		.violations_open_count = store_sql_violations_open_count,                  \
		.violation_decide = store_sql_violation_decide,                            \
		.policy_put = store_sql_policy_put, .policy_version = store_sql_policy_version, \
		.policy_get = store_sql_policy_get,                                        \
		.policy_get_version = store_sql_policy_get_version,                        \
		.policy_versions = store_sql_policy_versions,                              \
		.policy_agents = store_sql_policy_agents,                                  \
		.policies_list = store_sql_policies_list,                                  \
		.policy_delete = store_sql_policy_delete, .counts = store_sql_counts,      \
		.agent_retire = store_sql_agent_retire, .agent_reset = store_sql_agent_reset, \
		.agent_history = store_sql_agent_history,                                  \
		.agent_mark_stale = store_sql_agent_mark_stale,                            \
		.outbox_claim = store_sql_outbox_claim,                                    \
		.outbox_settle = store_sql_outbox_settle,                                  \
		.outbox_pending = store_sql_outbox_pending, .backup = store_sql_backup,    \
	}

#endif
