/*
 * common/options.c and the verifier's table on it (verifier/options.c): the config file and
 * the command line from one table, precedence, lists, choices, duplicates, bad input; the
 * verifier's state directory from systemd's $STATE_DIRECTORY.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/options.h"
#include "tests/unit/check.h"
#include "verifier/options.h"

static char tmpdir[] = "/tmp/test_options.XXXXXX";

/* Writes len bytes (text may hold a NUL) to tmpdir/name; the path lives until the next call. */
static char *write_file(const char *name, const char *text, size_t len)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "we");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f))
		exit(2);
	return path;
}
#define WRITE(name, text) write_file((name), (text), strlen(text))

/* A table with one option of each kind. */
struct demo {
	char *name;
	unsigned count;
	bool loud;
	struct opt_list tags;
	int color;
};
static const char *const colors[] = { "red", "green", NULL };
static const struct opt_def demo_defs[] = {
	{ "name", OPT_STRING, offsetof(struct demo, name), "NAME", "anon", 0, 0, NULL },
	{ "count", OPT_UINT, offsetof(struct demo, count), "N", "3", 1, 9, NULL },
	{ "loud", OPT_BOOL, offsetof(struct demo, loud), NULL, NULL, 0, 0, NULL },
	{ "tag", OPT_LIST, offsetof(struct demo, tags), "TAG", NULL, 0, 3, NULL },
	{ "color", OPT_CHOICE, offsetof(struct demo, color), "red|green", "green", 0, 0, colors },
};
static const struct opts_spec demo_spec = {
	.prog = "demo",
	.defs = demo_defs,
	.ndefs = sizeof(demo_defs) / sizeof(demo_defs[0]),
	.default_config = NULL,
	.man_page = "demo(1)",
};

#define ARGV(...) ((char *const[]){ "demo", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *const[]){ "demo", __VA_ARGS__ }) / sizeof(char *)))
/* Parses into a fresh struct demo d (released first); evaluates to opts_parse's return. */
#define DEMO(...) (opts_release(&demo_spec, &d), memset(&d, 0, sizeof(d)), \
		   opts_parse(&demo_spec, &d, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), &act))

static void test_defaults_file_and_flags(void)
{
	struct demo d = { 0 };
	enum opts_action act;
	char *conf;

	CHECK(DEMO("--loud") == 0 && act == OPTS_RUN, "flags alone parse");
	CHECK(!strcmp(d.name, "anon") && d.count == 3 && d.color == 1 && d.loud && d.tags.n == 0,
	      "defaults applied, a bare switch is true");

	conf = WRITE("a.conf", "# demo\n"
			       "name = from file   # a comment after a blank\n"
			       "count=7\n"
			       "\n"
			       "   tag = a#b\n"
			       "tag = second\n"
			       "color = red\n"
			       "loud = no\n");
	CHECK(DEMO("--config", conf) == 0, "file parses");
	CHECK(!strcmp(d.name, "from file") && d.count == 7 && d.color == 0 && !d.loud,
	      "values from the file, trimmed, comment cut");
	CHECK(d.tags.n == 2 && !strcmp(d.tags.v[0], "a#b") && !strcmp(d.tags.v[1], "second"),
	      "a '#' inside a value is kept; list values accumulate in order");

	CHECK(DEMO("--count", "2", "--config", conf, "--name=cli", "--loud=true", "--tag", "x",
		   "--tag", "y") == 0,
	      "file and command line parse");
	CHECK(!strcmp(d.name, "cli") && d.count == 2 && d.loud && d.color == 0,
	      "the command line wins, before or after --config");
	CHECK(d.tags.n == 2 && !strcmp(d.tags.v[0], "x") && !strcmp(d.tags.v[1], "y"),
	      "a list on the command line replaces the file's list");

	CHECK(DEMO("--help") == 0 && act == OPTS_HELP, "--help");
	CHECK(DEMO("-h") == 0 && act == OPTS_HELP, "-h");
	CHECK(DEMO("--version") == 0 && act == OPTS_VERSION, "--version");
	opts_release(&demo_spec, &d);
	opts_release(&demo_spec, &d); /* idempotent */
	CHECK(d.name == NULL && d.tags.n == 0, "release empties the struct");
}

static void test_bad_input(void)
{
	static const char *const bad_files[] = {
		"count = 0\n",      "count = 10\n",      "count = -1\n",    "count = 0x3\n",
		"count = 3 4\n",    "count = 99999999999999999999\n",     "color = blue\n",
		"nosuch = 1\n",     "name\n",            "loud = maybe\n",  "name =\n",
		"name = a\nname = b\n",                  "tag = 1\ntag = 2\ntag = 3\ntag = 4\n",
		"config = x\n",     "help = 1\n",
	};
	struct demo d = { 0 };
	enum opts_action act;
	char path[300], big[OPTS_LINE_MAX + 10];

	for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		char *p = WRITE("bad.conf", bad_files[i]);

		CHECK(DEMO("--config", p) == -EINVAL, "bad file refused: %s", bad_files[i]);
	}
	CHECK(DEMO("--config", write_file("nul.conf", "name = a\0b\n", 11)) == -EINVAL,
	      "a NUL byte in the file is refused, not cut");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK(DEMO("--config", WRITE("long.conf", big)) == -EINVAL, "an over-long line is refused");
	snprintf(path, sizeof(path), "%s/missing.conf", tmpdir);
	CHECK(DEMO("--config", path) == -EINVAL, "a missing --config file is an error");
	CHECK(DEMO("--bogus") == -EINVAL, "unknown option");
	CHECK(DEMO("--count") == -EINVAL, "missing value");
	CHECK(DEMO("--count", "x") == -EINVAL, "non-numeric value");
	CHECK(DEMO("--name=") == -EINVAL, "empty value");
	CHECK(DEMO("stray") == -EINVAL, "stray argument");
	CHECK(DEMO("--config") == -EINVAL, "--config without a value");
	CHECK(DEMO("--tag", "1", "--tag", "2", "--tag", "3", "--tag", "4") == -EINVAL,
	      "a list past its cap");
	CHECK(opts_load_file(&demo_spec, &d, path, true) == 0,
	      "a missing default file is fine");
	opts_release(&demo_spec, &d);
}

/*
 * --config /dev/null: no file at all, not even the default one (a scratch daemon on a host whose
 * own configuration must not reach it). The default here is a file that would change `name`.
 */
static void test_empty_config(void)
{
	char deflt[256];
	struct opts_spec spec = demo_spec;
	struct demo d = { 0 };
	enum opts_action act;
	char *const argv1[] = { "demo", NULL };
	char *const argv2[] = { "demo", "--config", "/dev/null", NULL };
	char *const argv3[] = { "demo", "--config=/dev/null", "--count", "5", NULL };

	snprintf(deflt, sizeof(deflt), "%s", WRITE("host.conf", "name = from the host\n"));
	spec.default_config = deflt;
	CHECK(opts_parse(&spec, &d, 1, argv1, &act) == 0 && !strcmp(d.name, "from the host"),
	      "without --config the default file is read");
	opts_release(&spec, &d);
	memset(&d, 0, sizeof(d));
	CHECK(opts_parse(&spec, &d, 3, argv2, &act) == 0 && act == OPTS_RUN &&
		      !strcmp(d.name, "anon") && d.count == 3,
	      "--config /dev/null: the built-in defaults, the default file unread");
	opts_release(&spec, &d);
	memset(&d, 0, sizeof(d));
	CHECK(opts_parse(&spec, &d, 4, argv3, &act) == 0 && !strcmp(d.name, "anon") &&
		      d.count == 5,
	      "--config=/dev/null with flags: the flags over the defaults");
	opts_release(&spec, &d);
}

static void test_verifier_table(void)
{
	struct verifier_options o;
	enum opts_action act;
	char conf[256], empty[256], bad[256]; /* write_file() reuses its buffer */
	char *const argv[] = { "verifier", "--config", conf, "--threads", "8", NULL };
	char *const argv2[] = { "verifier", "--config", conf, "--ek-ca", "/c.pem", NULL };
	char *const argv3[] = { "verifier", "--config", empty, NULL };
	char *const argv4[] = { "verifier", "--config", bad, NULL };

	snprintf(conf, sizeof(conf), "%s", WRITE("verifier.conf", "listen = 127.0.0.1:9000\n"
								 "ek-ca = /a.pem\n"
								 "ek-ca = /b.pem\n"
								 "threads = 4\n"
								 "verbose = yes\n"
								 "state-dir = /from-file\n"));
	snprintf(empty, sizeof(empty), "%s", WRITE("empty.conf", ""));
	snprintf(bad, sizeof(bad), "%s", WRITE("t.conf", "threads = 257\n"));

	CHECK(verifier_options_parse(&o, 5, argv, &act) == 0 && act == OPTS_RUN, "parses");
	CHECK(!strcmp(o.listen, "127.0.0.1:9000") && o.threads == 8 && o.verbose &&
		      o.nonce_ttl == 60 && !strcmp(o.state_dir, "/from-file"),
	      "file, flag over file, default");
	CHECK(o.ek_ca.n == 2 && !strcmp(o.ek_ca.v[1], "/b.pem"), "ek-ca list from the file");
	verifier_options_release(&o);

	CHECK(verifier_options_parse(&o, 5, argv2, &act) == 0 && o.ek_ca.n == 1 &&
		      !strcmp(o.ek_ca.v[0], "/c.pem"),
	      "--ek-ca on the command line replaces the file's");
	verifier_options_release(&o);

	setenv("STATE_DIRECTORY", "/var/lib/attest-verifier-x:/other", 1);
	CHECK(verifier_options_parse(&o, 3, argv3, &act) == 0 &&
		      !strcmp(o.state_dir, "/var/lib/attest-verifier-x"),
	      "no state-dir set: systemd's $STATE_DIRECTORY (its first entry)");
	verifier_options_release(&o);
	CHECK(verifier_options_parse(&o, 5, argv, &act) == 0 && !strcmp(o.state_dir, "/from-file"),
	      "a configured state-dir wins over $STATE_DIRECTORY");
	verifier_options_release(&o);
	unsetenv("STATE_DIRECTORY");
	CHECK(verifier_options_parse(&o, 3, argv3, &act) == 0 &&
		      !strcmp(o.state_dir, VERIFIER_DEFAULT_STATE_DIR) &&
		      !strcmp(o.listen, "127.0.0.1:8443") && o.threads == 32 && !o.store,
	      "built-in defaults");
	verifier_options_release(&o);
	CHECK(verifier_options_parse(&o, 3, argv4, &act) == -EINVAL, "threads past 256 refused");
	verifier_options_release(&o);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(tmpdir))
		return 2;
	CASE(test_defaults_file_and_flags);
	CASE(test_bad_input);
	CASE(test_empty_config);
	CASE(test_verifier_table);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return check_finish();
}
