/*
 * options: a daemon's settings from one table. The same table drives the command line
 * (`--name VALUE`, `--name=VALUE`, `--switch`), the configuration file (`name = value`, the
 * same names without "--"), the defaults and --help, so an option added to the table is a flag
 * and a file key at once. The man page is where options are documented (tests/install/docs.sh
 * checks that it names exactly the options --help prints).
 *
 * Precedence: built-in default < configuration file < command line. The file is the one named
 * by --config FILE (which must exist), else the spec's default_config when it exists.
 * `--config /dev/null` is the empty configuration: no file is read, not even the default one
 * (what tests and the demo pass, so that a host's configuration never reaches them). A list
 * option given on the command line replaces the file's values for that key; within one source
 * its values accumulate in order.
 *
 * File format: one `key = value` per line, blanks around both trimmed; '#' at the start of a
 * line or after a blank starts a comment; empty lines ignored; lines shorter than
 * OPTS_LINE_MAX bytes, files of at most OPTS_FILE_MAX, no NUL byte. A key the table does not
 * know, a scalar key set twice in one file, an empty value, a number outside its bounds or a
 * value not among a choice's names is an error naming the file and line.
 *
 * Ownership: OPT_STRING fields (char *) and OPT_LIST values are malloc'd copies owned by the
 * caller's struct; opts_release() frees them (NULL-safe, idempotent). The caller zeroes its
 * struct (or releases it) before opts_parse().
 *
 * Errors are logged (common/log.h) and returned as -EINVAL (-ENOMEM when out of memory).
 */
#ifndef COMMON_OPTIONS_H
#define COMMON_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define OPTS_EMPTY_CONFIG "/dev/null" /* --config that names no settings at all */
#define OPTS_LINE_MAX 4096u /* one line of a configuration file, newline included */
#define OPTS_FILE_MAX 65536 /* a whole configuration file (a plain literal: LIMIT_STR) */
#define OPTS_LIST_MAX 16u   /* values of one OPT_LIST option */

enum opt_kind {
	OPT_STRING, /* char *: a copy of the value */
	OPT_UINT,   /* unsigned: decimal, min..max */
	OPT_BOOL,   /* bool: true/false/yes/no/1/0; on the command line `--name` alone is true */
	OPT_LIST,   /* struct opt_list: repeatable, up to max values (at most OPTS_LIST_MAX) */
	OPT_CHOICE, /* int: the index of the value among choices (NULL-terminated) */
};

struct opt_list {
	char *v[OPTS_LIST_MAX];
	size_t n;
};

struct opt_def {
	const char *name;           /* the flag without "--" and the file key */
	enum opt_kind kind;
	size_t off;                 /* offsetof the field in the caller's struct */
	const char *arg;            /* what --help shows for the value ("ADDR:PORT"); not for OPT_BOOL */
	const char *dflt;           /* the default, as the text a user would write; NULL: none */
	unsigned long min, max;     /* OPT_UINT bounds; OPT_LIST: max is the most values */
	const char *const *choices; /* OPT_CHOICE */
};

struct opts_spec {
	const char *prog;           /* "verifier": for --help and --version */
	const struct opt_def *defs;
	size_t ndefs;
	const char *default_config; /* read when present and no --config is given; NULL: none */
	const char *man_page;       /* "verifier(8)": --help points there */
	const char *notes;          /* more lines for --help (NULL: none) */
};

enum opts_action {
	OPTS_RUN,     /* settings complete: run */
	OPTS_HELP,    /* --help or -h: print opts_usage() on stdout, exit 0 */
	OPTS_VERSION, /* --version: print opts_version() on stdout, exit 0 */
};

/*
 * Defaults, then the configuration file, then argv (argv[0] skipped) into cfg. 0 with
 * *action set, or -EINVAL / -ENOMEM (logged). With OPTS_HELP or OPTS_VERSION nothing but the
 * command line was looked at.
 */
int opts_parse(const struct opts_spec *spec, void *cfg, int argc, char *const argv[],
	       enum opts_action *action);

/* Applies one configuration file over cfg; missing_ok allows ENOENT. 0, -ENOENT or -EINVAL. */
int opts_load_file(const struct opts_spec *spec, void *cfg, const char *path, bool missing_ok);

/* Frees every OPT_STRING and OPT_LIST value of cfg and sets them to NULL / empty. */
void opts_release(const struct opts_spec *spec, void *cfg);

/* The synopsis: every option with its value and default, one per line. */
void opts_usage(const struct opts_spec *spec, FILE *out);

/* "PROG VERSION" (the build's version, Makefile VERSION). */
void opts_version(const char *prog, FILE *out);

#endif
