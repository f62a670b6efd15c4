/*
 * attestctl subcommands: one file per subcommand (cmd_<name>.c), each exporting one entry point
 * that gets argv with argv[0] = the subcommand name. Return value is the process exit status
 * (0 success, 1 a negative result such as a corrupt list, 2 usage or I/O error).
 *
 * To add a subcommand: write cmd_<name>.c, declare it here, add one row to the table in main.c.
 */
#ifndef VERIFIER_ATTESTCTL_COMMANDS_H
#define VERIFIER_ATTESTCTL_COMMANDS_H

int cmd_replay(int argc, char **argv);
/* cmd_registrations.c: `agent add`, `agent unregister` (argv[0] = "agent"), `registrations` */
int cmd_agent_add(int argc, char **argv);
int cmd_agent_unregister(int argc, char **argv);
int cmd_registrations(int argc, char **argv);
/* cmd_labels.c: `agent label` (argv[0] = "agent") */
int cmd_agent_label(int argc, char **argv);
int cmd_check_quote(int argc, char **argv);
int cmd_policy_learn(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_policy_gen(int argc, char **argv);
/* cmd_policy_update.c: `policy update NAME --apt-repo ...`, argv[0] = "update" */
int cmd_policy_update(int argc, char **argv);
/* cmd_policy_sign.c: `policy sign --key KEY FILE [--out FILE]`, argv[0] = "sign" */
int cmd_policy_sign(int argc, char **argv);
int cmd_policy_check(int argc, char **argv);
int cmd_evaluate(int argc, char **argv);
/* A policy's import warnings (policy_warning()), one "attestctl: warning:" line each on stderr. */
struct policy;
void print_warnings(const char *file, const struct policy *p);
int cmd_eventlog(int argc, char **argv);
int cmd_boot_policy(int argc, char **argv);

struct dynbuf;
struct eventlog;
/*
 * cmd_eventlog.c: reads FILE into buf (capped) and parses it into log for command cmd; on
 * failure prints why and returns the exit status (1 a log that does not parse, 2 I/O), else 0
 * with buf and log to release (eventlog_release(), dynbuf_release()).
 */
int eventlog_load(const char *cmd, const char *path, struct dynbuf *buf, struct eventlog *log);
/* operator calls to a running verifier (online.h): cmd_agents.c, cmd_agent.c, cmd_verdicts.c,
 * cmd_counters.c, cmd_audit.c, cmd_violations.c, cmd_review.c (approve, dismiss), cmd_amendment.c */
int cmd_agents(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_verdicts(int argc, char **argv);
int cmd_counters(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_violations(int argc, char **argv);
int cmd_approve(int argc, char **argv);
int cmd_dismiss(int argc, char **argv);
int cmd_amendment(int argc, char **argv);
/* cmd_ear.c: attestation results (EARs): verify one offline, get one, the keys, rotate */
int cmd_ear(int argc, char **argv);

/* cmd_evidence.c: a verdict's evidence exported, and re-checked offline */
int cmd_evidence(int argc, char **argv);
int cmd_verify_evidence(int argc, char **argv);

/* cmd_store.c: a store copied to another backend, offline */
int cmd_store(int argc, char **argv);

/* cmd_backup.c: a copy of a running verifier's store */
int cmd_backup(int argc, char **argv);

#endif
