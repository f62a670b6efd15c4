/*
 * online: the HTTPS client of attestctl's subcommands that talk to a running verifier
 * (operator API, bearer token): the common options, the token file, one request, a download
 * into a file, and the common handling of an answer (online.h). The subcommands are each in
 * their cmd_<name>.c.
 *
 *   common options: --verifier URL  --ca FILE  --token-file FILE  --token-name NAME  --json
 *
 * Defaults: $ATTEST_VERIFIER or https://127.0.0.1:8443, $ATTEST_CA, $ATTEST_TOKEN_FILE,
 * $ATTEST_TOKEN_NAME.
 * Output: a readable table, or the verifier's JSON with --json (for scripts), every string from
 * the verifier shown through show.h (no byte of it can forge a line or move the cursor).
 * Exit: 0 ok, 1 the verifier refused (its error code is printed), 2 usage or transport error.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "common/file.h"
#include "common/http_client.h"
#include "common/token_file.h"
#include "proto/dynbuf.h"
#include "proto/evidence.h"
#include "proto/limits.h"
#include "verifier/attestctl/online.h"
#include "verifier/attestctl/show.h"

#define TOKEN_MAX 4096u
#define ONLINE_TIMEOUT 30L /* seconds for a whole request */

/* Which token of a file to send (read_token()'s callback): the named one, else the only one. */
struct token_pick {
	const char *want; /* --token-name, or NULL */
	char *out;
	size_t cap;
	unsigned found;   /* tokens that matched (with want: 0 or 1; without: every token) */
	char names[256];  /* the names seen, for the message when several match */
};

static int pick_token(void *arg, const struct token_line *l, char *err, size_t cap)
{
	struct token_pick *p = arg;
	size_t n = strlen(p->names);

	(void)err;
	(void)cap;
	if (p->want && (strlen(p->want) != l->name_len || memcmp(p->want, l->name, l->name_len)))
		return 0;
	if (n < sizeof(p->names) - 1)
		snprintf(p->names + n, sizeof(p->names) - n, "%s%.*s", n ? ", " : "",
			 (int)l->name_len, l->name);
	if (p->found++ == 0 && l->token_len < p->cap)
		snprintf(p->out, p->cap, "%.*s", (int)l->token_len, l->token);
	return 0;
}

/*
 * The bearer token from a token file as the verifier reads them (common/token_file.h): a bare
 * token, or `NAME ROLE TOKEN` lines, of which `name` picks one (NULL: the file's only one).
 * 0, or -errno with a message that names the file.
 */
static int read_token(const char *path, const char *name, char *out, size_t cap)
{
	struct token_pick pick = { .want = name, .out = out, .cap = cap };
	char why[160] = "";
	struct dynbuf b;
	int ret;

	out[0] = '\0';
	dynbuf_init(&b, TOKEN_FILE_MAX);
	ret = file_read(path, &b);
	if (ret == -EFBIG) {
		fprintf(stderr, "attestctl: token file \"%s\" is larger than %u bytes\n", path,
			TOKEN_FILE_MAX);
		return ret;
	}
	if (ret) {
		fprintf(stderr, "attestctl: cannot read token file \"%s\": %s\n", path,
			strerror(-ret));
		return ret;
	}
	ret = token_file_parse(b.buf ? b.buf : "", b.len, pick_token, &pick, why, sizeof(why));
	if (b.buf)
		OPENSSL_cleanse(b.buf, b.len);
	dynbuf_release(&b);
	if (ret) {
		fprintf(stderr, "attestctl: token file \"%s\": %s\n", path, why);
		goto fail;
	}
	if (pick.found == 0) {
		if (name)
			fprintf(stderr, "attestctl: token file \"%s\" has no token named \"%s\"\n",
				path, name);
		else
			fprintf(stderr, "attestctl: token file \"%s\" holds no token\n", path);
		goto fail;
	}
	if (pick.found > 1) {
		fprintf(stderr, "attestctl: token file \"%s\" holds %u tokens (%s): choose one with"
				" --token-name NAME or $ATTEST_TOKEN_NAME\n", path, pick.found,
			pick.names);
		goto fail;
	}
	if (!out[0]) {
		fprintf(stderr, "attestctl: token file \"%s\": the token is longer than %zu bytes\n",
			path, cap - 1);
		goto fail;
	}
	return 0;
fail:
	OPENSSL_cleanse(out, cap);
	return -EINVAL;
}

/* The authorization header from --token-file ("" without one). 0, or 2 with a message. */
static int auth_header(const struct online_opts *o, char *auth, size_t cap)
{
	char token[TOKEN_MAX];

	auth[0] = '\0';
	if (!o->token_file)
		return 0;
	if (read_token(o->token_file, o->token_name, token, sizeof(token)))
		return 2;
	snprintf(auth, cap, "Authorization: Bearer %s", token);
	OPENSSL_cleanse(token, sizeof(token));
	return 0;
}

/*
 * What every call needs: the URL of path, the authorization header and a client with the
 * given timeouts (seconds). 0, or 2 with a message printed (*c NULL).
 */
static int prepare(const struct online_opts *o, const char *path, long connect_timeout,
		   long total_timeout, char *url, size_t url_cap, char *auth, size_t auth_cap,
		   struct http_client **c)
{
	/* --ca adds to the system store, as libcurl does by default; attestd pins its CA. */
	const struct http_client_opts opts = {
		.ca_file = o->ca,
		.allow_http = true,
		.connect_timeout = connect_timeout,
		.total_timeout = total_timeout,
	};

	*c = NULL;
	if (auth_header(o, auth, auth_cap))
		return 2;
	if (snprintf(url, url_cap, "%s%s", o->url, path) >= (int)url_cap) {
		fprintf(stderr, "attestctl: URL too long\n");
		return 2;
	}
	*c = http_client_new(&opts);
	if (!*c) {
		fprintf(stderr, "attestctl: cannot set up the HTTPS client\n");
		return 2;
	}
	return 0;
}

/* After a TLS failure: which CA file to give (the verifier made it, STATE_DIR/ca.pem). */
static void ca_hint(const struct online_opts *o, const struct http_client *c)
{
	const char *e = http_client_error(c), *d = http_client_error_detail(c);

	if (!strstr(e, "certificate") && !strstr(e, "SSL") && !strstr(d, "certificate"))
		return;
	fprintf(stderr, "attestctl: the verifier's certificate is not trusted%s%s%s: give --ca"
			" STATE_DIR/ca.pem, the CA the verifier made in its state directory (or the"
			" CA of its --tls-cert), or set ATTEST_CA\n",
		o->ca ? " with --ca \"" : " (no --ca given)", o->ca ? o->ca : "",
		o->ca ? "\"" : "");
}

/*
 * method PATH on the verifier; *status and *body (caller frees) on success. 0, or 2 with a
 * message printed.
 */
int online_request(const struct online_opts *o, enum http_method method, const char *path,
		   const char *send, long *status, char **body)
{
	char auth[TOKEN_MAX + 32], url[2048];
	struct http_client *c = NULL;
	struct dynbuf b;
	int ret, r;

	*body = NULL;
	dynbuf_init(&b, LIMIT_OPERATOR_RESPONSE);
	ret = prepare(o, path, 0, ONLINE_TIMEOUT, url, sizeof(url), auth, sizeof(auth), &c);
	if (ret)
		goto out;
	ret = 2;
	r = http_client_request(c, method, url, auth[0] ? auth : NULL, send,
				send ? strlen(send) : 0, status, &b);
	if (r < 0) {
		fprintf(stderr, "attestctl: %s %s: %s\n", http_method_name(method), url,
			r == -EFBIG ? "response too large" : http_client_error(c));
		ca_hint(o, c);
		goto out;
	}
	*body = dynbuf_take(&b, NULL);
	ret = *body ? 0 : 2;
out:
	OPENSSL_cleanse(auth, sizeof(auth));
	dynbuf_release(&b);
	http_client_free(c);
	return ret;
}

/* Prints the verifier's refusal: its error code and message when it sent one. */
static void print_refusal(long status, const char *body, size_t len)
{
	char code[64], msg[512];

	/* The code is checked on parse ([a-z0-9_]); the message is any text: escaped. */
	if (error_parse(body, len, code, sizeof(code), msg, sizeof(msg)) == 0)
		fprintf(stderr, "attestctl: verifier refused (%ld %s): %s\n", status, code,
			show_cstr(msg));
	else
		fprintf(stderr, "attestctl: verifier answered %ld\n", status);
}

int online_download(const struct online_opts *o, const char *path, int fd, uint64_t max,
		    long timeout, uint64_t *written)
{
	char auth[TOKEN_MAX + 32], url[2048];
	struct http_client *c = NULL;
	struct dynbuf err;
	long status = 0;
	int ret, r;

	*written = 0;
	dynbuf_init(&err, LIMIT_OPERATOR_RESPONSE);
	ret = prepare(o, path, ONLINE_TIMEOUT, timeout, url, sizeof(url), auth, sizeof(auth), &c);
	if (ret)
		goto out;
	ret = 2;
	r = http_client_download(c, url, auth[0] ? auth : NULL, fd, max, &status, written, &err);
	if (r < 0) {
		fprintf(stderr, "attestctl: GET %s: %s\n", url,
			r == -EFBIG ? "response too large"
			: r == -EIO || r == -ECONNREFUSED || r == -ETIMEDOUT || r == -EHOSTUNREACH
				? http_client_error(c)
				: strerror(-r));
		goto out;
	}
	if (status != 200) {
		print_refusal(status, dynbuf_str(&err), err.len);
		ret = 1;
		goto out;
	}
	ret = 0;
out:
	OPENSSL_cleanse(auth, sizeof(auth));
	dynbuf_release(&err);
	http_client_free(c);
	return ret;
}

void online_usage(const char *cmd)
{
	fprintf(stderr,
		"usage: attestctl %s [--verifier URL] [--ca FILE] [--token-file FILE] [--token-name NAME]"
		" [--json]%s\n",
		cmd,
		!strcmp(cmd, "agent") || !strcmp(cmd, "verdicts") || !strcmp(cmd, "counters") ? " ID"
		: !strcmp(cmd, "violations") ? " [--open | --state open|approved|dismissed] [--agent ID]"
		: !strcmp(cmd, "agents") ? " [--state S] [--policy NAME]"
		: !strcmp(cmd, "approve") ? " VIOLATION_ID [--scope agent|policy]\n"
					    "       | --path PATH --digest ALG:HEX"
					    " [--agent ID | --policy NAME] [--yes]"
		: !strcmp(cmd, "dismiss") ? " VIOLATION_ID\n       | --path PATH --digest ALG:HEX"
					    " [--agent ID | --policy NAME] [--yes]"
					  : "");
}

/* Parses common options; *pos gets the first positional argument (or NULL). */
int online_parse_opts(int argc, char **argv, struct online_opts *o, const char **pos)
{
	static const struct option longopts[] = {
		{ "verifier", required_argument, NULL, 'u' },
		{ "ca", required_argument, NULL, 'c' },
		{ "token-file", required_argument, NULL, 't' },
		{ "token-name", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "purge", no_argument, NULL, 'P' },
		/* Refused: a token in argv is visible to every user (ps, /proc, shell history). */
		{ "token", required_argument, NULL, 'T' },
		{ "open", no_argument, NULL, 'o' },
		{ "state", required_argument, NULL, 's' },
		{ "agent", required_argument, NULL, 'a' },
		{ "limit", required_argument, NULL, 'l' },
		{ "scope", required_argument, NULL, 'S' },
		{ "version", required_argument, NULL, 'V' },
		{ "policy", required_argument, NULL, 'p' },
		{ "path", required_argument, NULL, 'F' },
		{ "digest", required_argument, NULL, 'D' },
		{ "yes", no_argument, NULL, 'y' },
		{ "label", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	memset(o, 0, sizeof(*o));
	o->url = getenv("ATTEST_VERIFIER") ? getenv("ATTEST_VERIFIER") : "https://127.0.0.1:8443";
	o->ca = getenv("ATTEST_CA");
	o->token_file = getenv("ATTEST_TOKEN_FILE");
	o->token_name = getenv("ATTEST_TOKEN_NAME");
	*pos = NULL;
	optind = 1;
	opterr = 0; /* getopt would echo a bad option whole, --token=SECRET included */
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'T':
			fprintf(stderr, "attestctl: --token is refused (its value is not shown): a"
					" token on the command line is visible to other users; put it in a"
					" file (mode 0600) and give --token-file FILE, or set"
					" ATTEST_TOKEN_FILE\n");
			return 2;
		case '?':
			/* The option's name alone, never a value after '='. */
			if (optopt)
				fprintf(stderr, "attestctl: %s: option -%c unknown or without its value\n",
					argv[0], optopt);
			else
				fprintf(stderr, "attestctl: %s: option \"%.*s\" unknown or without its"
						" value\n", argv[0],
					(int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
			online_usage(argv[0]);
			return 2;
		case 'u': o->url = optarg; break;
		case 'c': o->ca = optarg; break;
		case 't': o->token_file = optarg; break;
		case 'n': o->token_name = optarg; break;
		case 'j': o->json = true; break;
		case 'P': o->purge = true; break;
		case 'o': o->state = "open"; break;
		case 's': o->state = optarg; break;
		case 'a': o->agent = optarg; break;
		case 'l': o->limit = optarg; break;
		case 'S': o->scope = optarg; break;
		case 'V': o->version = optarg; break;
		case 'p': o->policy = optarg; break;
		case 'F': o->path = optarg; break;
		case 'D': o->digest = optarg; break;
		case 'y': o->yes = true; break;
		case 'L': o->label = optarg; break;
		default: online_usage(argv[0]); return 2;
		}
	}
	if (optind < argc)
		*pos = argv[optind++];
	if (optind < argc) {
		online_usage(argv[0]);
		return 2;
	}
	/* Drop a trailing slash so paths join cleanly. */
	{
		size_t n = strlen(o->url);

		if (n > 0 && o->url[n - 1] == '/') {
			static char url[2048];

			snprintf(url, sizeof(url), "%.*s", (int)(n - 1), o->url);
			o->url = url;
		}
	}
	return 0;
}

int online_parse_words(int argc, char **argv, struct online_opts *o, const char **args, int max,
		       int *n)
{
	char **opt_argv = calloc((size_t)argc + 1, sizeof(*opt_argv));
	const char *pos = NULL;
	int opt_argc = 0, ret;

	*n = 0;
	if (!opt_argv)
		return 2;
	/* Words apart from options, so online_parse_opts sees options only. */
	opt_argv[opt_argc++] = argv[0];
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1] == '-') {
			opt_argv[opt_argc++] = argv[i];
			if (strcmp(argv[i], "--json") && strcmp(argv[i], "--purge") &&
			    strcmp(argv[i], "--open") && strcmp(argv[i], "--yes") && i + 1 < argc)
				opt_argv[opt_argc++] = argv[++i];
		} else if (*n < max) {
			args[(*n)++] = argv[i];
		} else {
			*n = max + 1;
		}
	}
	ret = online_parse_opts(opt_argc, opt_argv, o, &pos);
	free(opt_argv);
	return ret ? ret : pos ? 2 : 0;
}

void online_fmt_time(json_int_t t, char *out, size_t cap)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || !gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%d %H:%M:%SZ", &tm))
		snprintf(out, cap, "-");
}

int online_fetch(const struct online_opts *o, enum http_method method, const char *path,
		 const char *send, json_t **out)
{
	char *body = NULL;
	long status = 0;
	json_error_t jerr;
	json_t *j;
	int ret;

	*out = NULL;
	if ((ret = online_request(o, method, path, send, &status, &body)))
		return ret;
	if (status >= 400) {
		print_refusal(status, body, strlen(body));
		free(body);
		return 1;
	}
	j = json_loads(body, 0, &jerr);
	free(body);
	if (!j) {
		fprintf(stderr, "attestctl: verifier answer is not JSON: %s\n", show_cstr(jerr.text));
		return 2;
	}
	if (o->json) {
		/* The answer as the verifier writes it (compact), its strings' DEL and C1 escaped. */
		char *s = show_json(j, JSON_COMPACT);

		json_decref(j);
		if (!s) {
			fprintf(stderr, "attestctl: out of memory\n");
			return 2;
		}
		printf("%s\n", s);
		free(s);
		return 0;
	}
	*out = j;
	return 0;
}
