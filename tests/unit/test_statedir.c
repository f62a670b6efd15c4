/*
 * verifier/store/statedir.c with the files the verifier keeps in its state directory (the operator
 * token, the TLS keys, the store): once the directory is checked, a directory swapped for a
 * link at its path (to one an attacker filled with a token of their choosing) changes nothing:
 * every file is reached through the directory checked, not through its path. A directory under
 * one that others can change is refused before anything is created; under a sticky one (as
 * /tmp) it is not.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file.h"
#include "tests/unit/check.h"
#include "verifier/store/operator_token.h"
#include "verifier/store/statedir.h"
#include "verifier/store/store.h"
#include "verifier/http/tls.h"
#include "verifier/http/tokens.h"

#define PLANTED "a-token-the-attacker-chose-0123456789"

static char base[] = "/tmp/test_statedir.XXXXXX";

static bool exists(const char *dir, const char *name)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s/%s", base, dir, name);
	return lstat(p, &st) == 0;
}

/* Entries in base/dir (. and .. not counted); -1 if it cannot be read. */
static int entries(const char *dir)
{
	char p[512];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(p, sizeof(p), "%s/%s", base, dir);
	d = opendir(p);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* The verifier's start, with the directory swapped for a link between the check and the opens. */
static void test_swapped_after_checks(void)
{
	char state[64], moved[64], attacker[64], planted[96], db[128], uri[160];
	struct statedir sd;
	struct tls_material tls;
	struct store *st = NULL;
	struct dynbuf b;
	char tpath[PATH_MAX], shown[PATH_MAX], terr[256] = "";
	struct tokens *tokens = NULL;
	int64_t ver = 0;

	snprintf(state, sizeof(state), "%s/state", base);
	snprintf(moved, sizeof(moved), "%s/moved", base);
	snprintf(attacker, sizeof(attacker), "%s/attacker", base);
	snprintf(planted, sizeof(planted), "%s/operator-token", attacker);
	CHECK(statedir_open(state, &sd) == 0, "the state directory is checked and locked");
	CHECK(rename(state, moved) == 0 && mkdir(attacker, 0700) == 0 &&
		      file_write_atomic(planted, PLANTED "\n", strlen(PLANTED) + 1, 0600) == 0 &&
		      symlink("attacker", state) == 0,
	      "then swapped: a link to the attacker's directory, with their token, at its path");
	snprintf(db, sizeof(db), "%s/operator-token", state);
	dynbuf_init(&b, 4096);
	CHECK(file_read(db, &b) == 0 && !strncmp(dynbuf_str(&b), PLANTED, strlen(PLANTED)),
	      "(by its path, the token file is now the attacker's)");
	dynbuf_release(&b);

	CHECK(operator_token_file(NULL, &sd, state, tpath, shown, sizeof(tpath)) == 0 &&
		      tokens_load(tpath, &tokens, terr, sizeof(terr)) == 0,
	      "the operator token is set up and read (%s)", terr);
	CHECK(tokens && !tokens_find(tokens, PLANTED, strlen(PLANTED)),
	      "it is not the attacker's token");
	dynbuf_init(&b, 4096);
	CHECK(exists("moved", "operator-token") && file_read_at(sd.dfd, "operator-token", &b) == 0 &&
		      b.len == 65 && tokens && tokens_find(tokens, dynbuf_str(&b), 64),
	      "it is a new one, in the directory checked");
	dynbuf_release(&b);
	CHECK(!strcmp(shown + strlen(shown) - 21, "/state/operator-token"),
	      "named in messages by the path given (%s)", shown);
	tokens_free(tokens);

	CHECK(tls_setup(sd.dfd, state, NULL, NULL, NULL, 0, &tls) == 0 && tls.generated,
	      "the TLS CA and server key are made");
	CHECK(exists("moved", "ca.pem") && exists("moved", "ca-key.pem") &&
		      exists("moved", "server.pem") && exists("moved", "server-key.pem"),
	      "in the directory checked");
	CHECK(tls.ca_path && !strcmp(tls.ca_path + strlen(tls.ca_path) - 13, "/state/ca.pem"),
	      "named in messages by the path given (%s)", tls.ca_path ? tls.ca_path : "none");
	tls_material_release(&tls);

	CHECK(statedir_path(&sd, "verifier.db", db, sizeof(db)) == 0 &&
		      snprintf(uri, sizeof(uri), "sqlite:%s", db) > 0 && store_open(uri, &st) == 0 &&
		      store_policy_put(st, "default", "{}", "test", 1, &ver) == 0,
	      "the store opens through the directory (%s) and is written", db);
	store_close(st);
	CHECK(exists("moved", "verifier.db"), "in the directory checked");
	CHECK(entries("attacker") == 1, "the attacker's directory holds only what they put there (%d)",
	      entries("attacker"));
	statedir_close(&sd);
	CHECK(sd.dfd == -1 && sd.lock_fd == -1, "closed");
}

/* Refused under a directory others can write; nothing created. */
static void test_parents(void)
{
	char open_dir[128], state[160];
	struct statedir sd;

	snprintf(open_dir, sizeof(open_dir), "%s/open", base);
	snprintf(state, sizeof(state), "%s/state", open_dir);
	CHECK(mkdir(open_dir, 0700) == 0 && chmod(open_dir, 0777) == 0, "a directory anyone can write");
	CHECK(statedir_open(state, &sd) == -EPERM && sd.dfd == -1 && sd.lock_fd == -1,
	      "a state directory under it is refused");
	CHECK(entries("open") == 0, "nothing is created there");
	CHECK(chmod(open_dir, 0770) == 0 && statedir_open(state, &sd) == -EPERM,
	      "nor under one its group can write");
	CHECK(chmod(open_dir, 01777) == 0 && statedir_open(state, &sd) == 0,
	      "under a sticky one (as /tmp: others cannot rename what is ours), it is taken");
	statedir_close(&sd);
}

int main(void)
{
	umask(077);
	if (!mkdtemp(base))
		return 1;
	CASE(test_swapped_after_checks);
	CASE(test_parents);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", base);
	}
	return check_finish();
}
