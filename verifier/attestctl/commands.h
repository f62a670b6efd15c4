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
int cmd_check_quote(int argc, char **argv);
int cmd_policy_learn(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_policy_gen(int argc, char **argv);
int cmd_policy_check(int argc, char **argv);
/* cmd_online.c: operator calls to a running verifier */
int cmd_agents(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_verdicts(int argc, char **argv);
int cmd_violations(int argc, char **argv);
int cmd_approve(int argc, char **argv);
int cmd_dismiss(int argc, char **argv);
/* cmd_backup.c: a copy of a running verifier's store */
int cmd_backup(int argc, char **argv);

#endif
