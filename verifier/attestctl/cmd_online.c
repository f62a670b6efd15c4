/*
 * attestctl subcommands that talk to a running verifier over HTTPS (operator API, bearer token):
 *
 *   agents [--state S] [--policy NAME] | agent ID | verdicts ID [--limit N] | counters ID [--limit N] | violations [--open|--state S] [--agent ID]
 *   approve VIOLATION_ID [--scope agent|policy] | dismiss VIOLATION_ID
 *   approve|dismiss --path PATH --digest ALG:HEX [--agent ID | --policy NAME] [--yes]
 *
 * approve allows the file for the violation's agent only (its amendment) unless --scope policy
 * widens the policy the agent uses; it prints which, and the version it wrote.
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
#include <inttypes.h>
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
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/online.h"
#include "verifier/attestctl/show.h"
#include "verifier/http/api_codec.h"

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
			    strcmp(argv[i], "--open") && i + 1 < argc)
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

static json_int_t num(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* Runs the request and handles the common parts: transport errors, API errors, --json. */
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

/*
 * The VERDICT column is what vouches for the machine now: not the last verdict of a stale or a
 * retired agent. A stale agent's last verdict is old news and a retired agent's evidence is refused, so
 * theirs shows "-" (the STATE column says why; `attestctl agent ID` still shows it).
 */
static void print_agent_row(const json_t *o)
{
	char t[32], seen[32];
	struct api_agent a;
	const char *lv;

	api_agent_decode(o, &a);
	lv = a.last_verdict;
	if (a.state && (!strcmp(a.state, "stale") || !strcmp(a.state, "retired")))
		lv = NULL;
	online_fmt_time(a.last_verdict_at, t, sizeof(t));
	online_fmt_time(a.last_seen, seen, sizeof(seen));
	printf("%-24s %-8s %-12s %-10s %-21s %-21s %6" PRId64 " %8" PRId64 " %6" PRId64 "\n",
	       show_cstr(a.agent_id), show_cstr(a.state), show_cstr(a.policy), show_cstr(lv), t, seen,
	       a.boot_number, a.next_entry, a.open_violations);
}

int cmd_agents(int argc, char **argv)
{
	struct online_opts o;
	char path[256];
	const char *pos;
	json_t *j = NULL, *arr, *a;
	size_t i;
	int ret;

	if ((ret = online_parse_opts(argc, argv, &o, &pos)))
		return ret;
	/* The verifier checks the values (400 bad_request, with what it takes). */
	if (pos || (o.state && !agent_id_valid(o.state)) || (o.policy && !agent_id_valid(o.policy))) {
		online_usage("agents");
		return 2;
	}
	snprintf(path, sizeof(path), "/v1/agents%s%s%s%s", o.state ? "?state=" : "",
		 o.state ? o.state : "", o.policy ? (o.state ? "&policy=" : "?policy=") : "",
		 o.policy ? o.policy : "");
	if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &j)) || !j)
		return ret;
	arr = json_object_get(j, API_AGENTS);
	printf("%-24s %-8s %-12s %-10s %-21s %-21s %6s %8s %6s\n", "AGENT", "STATE", "POLICY",
	       "VERDICT", "LAST VERDICT", "LAST SEEN", "BOOT", "ENTRIES", "OPEN");
	json_array_foreach(arr, i, a)
		print_agent_row(a);
	json_decref(j);
	return 0;
}

/* The "boot" object of an agent: what its firmware event log says it booted. */
static void print_boot(json_t *b)
{
	json_t *k = json_object_get(b, "kernel");
	const char *status = show_str(b, "status");
	char t[32];

	if (!json_is_object(b)) {
		printf("boot:            no firmware event log (an agent without one, or older than this verifier)\n");
		return;
	}
	online_fmt_time(num(b, "received_at"), t, sizeof(t));
	printf("boot log:        %" JSON_INTEGER_FORMAT " events, %" JSON_INTEGER_FORMAT " bytes, received %s; %s\n",
	       num(b, "events"), num(b, "log_bytes"), t,
	       !strcmp(status, "replays")    ? "replays to the quoted PCRs"
	       : !strcmp(status, "mismatch") ? "does NOT replay to the quoted PCRs"
	       : !strcmp(status, "corrupt")  ? "does not parse"
					     : status);
	printf("firmware:        ");
	fputs(show_str(b, "firmware"), stdout);
	if (json_is_string(json_object_get(b, "pcr0")))
		printf(" (PCR 0 %s)", show_str(b, "pcr0"));
	printf("\nsecure boot:     %s\n", show_str(b, "secure_boot"));
	printf("kernel:          ");
	if (json_is_object(k)) {
		json_t *allowed = json_object_get(k, "allowed");

		printf("%s", show_str(k, "digest"));
		if (json_is_string(json_object_get(k, "file"))) {
			printf(" from \"");
			fputs(show_str(k, "file"), stdout);
			printf("\"");
		}
		if (json_is_string(json_object_get(k, "name"))) {
			printf(", \"");
			fputs(show_str(k, "name"), stdout);
			printf("\"");
		}
		if (json_is_boolean(allowed))
			printf(" (%s)", json_is_true(allowed) ? "allowed" : "NOT allowed by the policy");
	} else {
		printf("- (no EFI application in PCR 4)");
	}
	printf("\ncommand line:    ");
	if (json_is_string(json_object_get(b, "cmdline"))) {
		fputs(show_str(b, "cmdline"), stdout);
		printf(" (%s)", json_is_true(json_object_get(b, "cmdline_verified"))
				      ? "verified against PCR 9"
				      : "as the agent reported it: not measured, or not the measured one");
	} else {
		printf("- (not reported)");
	}
	printf("\n");
}

/* agent retire ID [--purge] | agent reset ID | agent history ID */
static int agent_lifecycle(int argc, char **argv)
{
	struct online_opts o;
	const char *args[2];
	char path[300], t[32];
	json_t *j = NULL, *e;
	size_t i;
	int n, ret;

	if ((ret = online_parse_words(argc, argv, &o, args, 2, &n)))
		return ret;
	if (n != 2 || !agent_id_valid(args[1]) || (o.purge && strcmp(args[0], "retire"))) {
		fprintf(stderr, "usage: attestctl agent retire ID [--purge] | agent reset ID |"
				" agent history ID\n");
		return 2;
	}
	if (!strcmp(args[0], "retire")) {
		snprintf(path, sizeof(path), "/v1/agents/%s%s", args[1], o.purge ? "?purge=1" : "");
		if ((ret = online_fetch(&o, HTTP_DELETE, path, NULL, &j)) || !j)
			return ret;
		printf(o.purge ? "agent %s: purged (it and everything stored for it are deleted;"
				 " the id is free)\n"
			       : "agent %s: retired (its evidence is refused, its EK is free, its"
				 " history is kept)\n", args[1]);
	} else if (!strcmp(args[0], "reset")) {
		snprintf(path, sizeof(path), "/v1/agents/%s/reset", args[1]);
		if ((ret = online_fetch(&o, HTTP_POST, path, NULL, &j)) || !j)
			return ret;
		printf("agent %s: reset (its next enrollment may bring a new EK and AK)\n", args[1]);
	} else {
		snprintf(path, sizeof(path), "/v1/agents/%s/history", args[1]);
		if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &j)) || !j)
			return ret;
		printf("%-21s %-12s %-16s %s\n", "TIME", "EVENT", "ACTOR", "DETAIL");
		json_array_foreach(json_object_get(j, "history"), i, e) {
			online_fmt_time(num(e, "time"), t, sizeof(t));
			printf("%-21s %-12s %-16s ", t, show_str(e, "event"), show_str(e, "actor"));
			fputs(show_str(e, "detail"), stdout);
			printf("\n");
		}
	}
	json_decref(j);
	return 0;
}

int cmd_agent(int argc, char **argv)
{
	struct online_opts o;
	const char *pos;
	char path[256], t1[32], t2[32], t3[32], t4[32];
	struct api_agent a;
	json_t *j = NULL;
	int ret;

	/* The first word that is not an option or an option's value names the action. */
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-') {
			if (strcmp(argv[i], "--json") && strcmp(argv[i], "--purge") &&
			    !strchr(argv[i], '='))
				i++;
			continue;
		}
		if (!strcmp(argv[i], "retire") || !strcmp(argv[i], "reset") ||
		    !strcmp(argv[i], "history"))
			return agent_lifecycle(argc, argv);
		if (!strcmp(argv[i], "add"))
			return cmd_agent_add(argc, argv);
		if (!strcmp(argv[i], "unregister"))
			return cmd_agent_unregister(argc, argv);
		break;
	}
	if ((ret = online_parse_opts(argc, argv, &o, &pos)))
		return ret;
	if (!pos || !agent_id_valid(pos)) {
		online_usage("agent");
		return 2;
	}
	snprintf(path, sizeof(path), "/v1/agents/%s", pos);
	if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &j)) || !j)
		return ret;
	api_agent_decode(j, &a);
	online_fmt_time(a.created_at, t1, sizeof(t1));
	online_fmt_time(a.activated_at, t2, sizeof(t2));
	online_fmt_time(a.last_seen, t3, sizeof(t3));
	online_fmt_time(a.stale_after, t4, sizeof(t4));
	printf("agent:           %s\nstate:           %s\npolicy:          %s\n"
	       "ak name:         %s\nenrolled:        %s\nactivated:       %s\n"
	       "boot number:     %" PRId64 "\nnext entry:      %" PRId64 "\n"
	       "last verdict:    %s\nopen violations: %" PRId64 "\n"
	       "last seen:       %s (every %" PRId64 " s%s; stale after %s)\n",
	       show_cstr(a.agent_id), show_cstr(a.state), show_cstr(a.policy), show_cstr(a.ak_name),
	       t1, t2, a.boot_number, a.next_entry, show_cstr(a.last_verdict), a.open_violations, t3,
	       a.interval, a.interval_reported ? ", as the agent reported" : ", the verifier's default",
	       t4);
	print_boot(a.boot);
	json_decref(j);
	return 0;
}

int cmd_counters(int argc, char **argv)
{
	struct online_opts o;
	const char *pos;
	char path[300], t[32];
	json_t *j = NULL, *h;
	size_t i;
	int ret;

	if ((ret = online_parse_opts(argc, argv, &o, &pos)))
		return ret;
	if (!pos || !agent_id_valid(pos) || (o.limit && strspn(o.limit, "0123456789") != strlen(o.limit))) {
		online_usage("counters");
		return 2;
	}
	snprintf(path, sizeof(path), "/v1/agents/%s/counters%s%s", pos, o.limit ? "?limit=" : "",
		 o.limit ? o.limit : "");
	if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &j)) || !j)
		return ret;
	printf("%-21s %8s %8s %9s\n", "HOUR", "ROUNDS", "TRUSTED", "UNTRUSTED");
	json_array_foreach(json_object_get(j, API_HOURS), i, h) {
		struct api_hour hr;

		api_hour_decode(h, &hr);
		online_fmt_time(hr.hour, t, sizeof(t));
		printf("%-21s %8" PRId64 " %8" PRId64 " %9" PRId64 "\n", t, hr.rounds, hr.trusted,
		       hr.untrusted);
	}
	json_decref(j);
	return 0;
}

int cmd_verdicts(int argc, char **argv)
{
	struct online_opts o;
	const char *pos;
	char path[300], t[32];
	json_t *j = NULL, *v, *r;
	size_t i, k;
	int ret;

	if ((ret = online_parse_opts(argc, argv, &o, &pos)))
		return ret;
	if (!pos || !agent_id_valid(pos) || (o.limit && strspn(o.limit, "0123456789") != strlen(o.limit))) {
		online_usage("verdicts");
		return 2;
	}
	snprintf(path, sizeof(path), "/v1/agents/%s/verdicts%s%s", pos, o.limit ? "?limit=" : "",
		 o.limit ? o.limit : "");
	if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &j)) || !j)
		return ret;
	printf("%-8s %-21s %-10s %5s %8s  %-24s %s\n", "ID", "TIME", "VERDICT", "BOOT", "NEXT",
	       "JUDGED BY", "REASONS");
	json_array_foreach(json_object_get(j, API_VERDICTS), i, v) {
		/* POLICY@VERSION, +N for the agent's amendment version N; "-" before verdicts named
		 * them. */
		char by[LIMIT_POLICY_NAME + 48] = "-";
		struct api_verdict vd;

		api_verdict_decode(v, &vd);
		online_fmt_time(vd.time, t, sizeof(t));
		printf("%-8" PRId64 " %-21s %-10s %5" PRId64 " %8" PRId64 "  ", vd.id, t,
		       show_cstr(vd.verdict), vd.boot_number, vd.next_offset);
		if (vd.judged_by.known)
			snprintf(by, sizeof(by), "%s@%" PRId64 "+%" PRId64,
				 show_cstr(vd.judged_by.policy), vd.judged_by.policy_version,
				 vd.judged_by.amendment_version);
		printf("%-24s ", by);
		json_array_foreach(vd.reasons, k, r) {
			if (k >= 3) {
				printf(" ...");
				break;
			}
			printf("%s%s", k ? ", " : "", show_str(r, "code"));
		}
		printf("\n");
	}
	json_decref(j);
	return 0;
}

int cmd_violations(int argc, char **argv)
{
	struct online_opts o;
	const char *pos;
	char path[512], t[32];
	json_t *j = NULL, *v;
	size_t i;
	int ret;

	if ((ret = online_parse_opts(argc, argv, &o, &pos)))
		return ret;
	if (pos || (o.state && strcmp(o.state, "open") && strcmp(o.state, "approved") &&
		    strcmp(o.state, "dismissed")) ||
	    (o.agent && !agent_id_valid(o.agent))) {
		online_usage("violations");
		return 2;
	}
	snprintf(path, sizeof(path), "/v1/violations?%s%s%s%s", o.state ? "state=" : "",
		 o.state ? o.state : "", o.agent ? (o.state ? "&agent=" : "agent=") : "",
		 o.agent ? o.agent : "");
	if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &j)) || !j)
		return ret;
	printf("%-6s %-16s %-9s %-16s %-5s %-21s %s\n", "ID", "AGENT", "STATE", "REASON", "COUNT",
	       "LAST SEEN", "PATH / DIGEST");
	json_array_foreach(json_object_get(j, API_VIOLATIONS), i, v) {
		struct api_violation vi;

		api_violation_decode(v, &vi);
		online_fmt_time(vi.last_seen, t, sizeof(t));
		/* The path as the verifier renders it: escaped (and said so) when not UTF-8. */
		printf("%-6" PRId64 " %-16s %-9s %-16s %-5" PRId64 " %-21s %s%s %s", vi.id,
		       show_cstr(vi.agent_id), show_cstr(vi.state), show_cstr(vi.reason), vi.count, t,
		       show_cstr(vi.path), vi.path_escaped ? " (not UTF-8, shown escaped)" : "",
		       show_cstr(vi.digest));
		if (vi.recurs)
			printf("  (recurs after %" PRId64 ")", vi.recurs);
		printf("\n");
		if (vi.explanation)
			printf("       %s\n", show_cstr(vi.explanation));
	}
	if (json_array_size(json_object_get(j, API_VIOLATIONS)) == 0)
		printf("(none)\n");
	json_decref(j);
	return 0;
}

/* What an approval or dismissal did, in one line: its scope and the version it wrote. */
static void print_decision(const char *id, const json_t *j)
{
	struct api_decision d;

	api_decision_decode(j, &d);
	if (!d.state || strcmp(d.state, "approved")) {
		printf("violation %s: %s\n", id, show_cstr(d.state));
	} else if (d.scope && !strcmp(d.scope, "policy")) {
		printf("violation %s: approved into policy %s: now version %" PRId64 ", used by %"
		       PRId64 " agents\n", id, show_cstr(d.policy), d.policy_version, d.policy_agents);
	} else {
		printf("violation %s: approved for agent %s only: its amendment version %" PRId64
		       " (over policy %s; the policy is unchanged)\n", id, show_cstr(d.agent_id),
		       d.amendment_version, show_cstr(d.policy));
	}
}

/* Whether agent id is in the "agents" array of a GET /v1/agents answer. */
static bool agent_listed(json_t *agents, const char *id)
{
	json_t *a;
	size_t i;

	json_array_foreach(json_object_get(agents, API_AGENTS), i, a) {
		struct api_agent ag;

		api_agent_decode(a, &ag);
		if (ag.agent_id && !strcmp(ag.agent_id, id))
			return true;
	}
	return false;
}

/* Whether violation v (decoded into *vi) is of --path and --digest, on one of agents if given. */
static bool of_file(const struct online_opts *o, json_t *agents, const json_t *v,
		    struct api_violation *vi)
{
	api_violation_decode(v, vi);
	return vi->path && !strcmp(vi->path, o->path) && vi->digest &&
	       !strcmp(vi->digest, o->digest) &&
	       (!agents || (vi->agent_id && agent_listed(agents, vi->agent_id)));
}

/*
 * approve|dismiss --path PATH --digest ALG:HEX [--agent ID | --policy NAME] [--yes]: every open
 * violation of that file (on one agent, or on the agents a policy judges) is counted and listed;
 * with --yes each is decided as `approve ID` (for its agent alone) or `dismiss ID` would, each
 * in its own call, and the count of those
 * decided and of those refused is printed. 0 all decided, 1 not asked to (no --yes) or one
 * refused, 2 usage or an answer that lists too many.
 */
static int set_violations_of_file(struct online_opts *o, const char *action)
{
	char path[512], idtext[24];
	json_t *vs = NULL, *agents = NULL, *v, *j;
	struct api_violation vi;
	size_t i, n = 0, done = 0, refused = 0;
	int ret;

	snprintf(path, sizeof(path), "/v1/violations?state=open&limit=%u%s%s", LIMIT_LIST_ROWS,
		 o->agent ? "&agent=" : "", o->agent ? o->agent : "");
	if ((ret = online_fetch(o, HTTP_GET, path, NULL, &vs)) || !vs)
		return ret ? ret : 1;
	if (json_array_size(json_object_get(vs, API_VIOLATIONS)) >= LIMIT_LIST_ROWS) {
		fprintf(stderr, "attestctl: %u open violations or more: narrow the set with --agent"
				" (none was decided)\n", LIMIT_LIST_ROWS);
		ret = 2;
		goto out;
	}
	if (o->policy) {
		snprintf(path, sizeof(path), "/v1/agents?policy=%s", o->policy);
		if ((ret = online_fetch(o, HTTP_GET, path, NULL, &agents)) || !agents) {
			ret = ret ? ret : 1;
			goto out;
		}
	}
	json_array_foreach(json_object_get(vs, API_VIOLATIONS), i, v) {
		if (!of_file(o, agents, v, &vi))
			continue;
		if (n++ == 0)
			printf("%-6s %-24s %s\n", "ID", "AGENT", "REASON");
		printf("%-6" PRId64 " %-24s %s\n", vi.id, show_cstr(vi.agent_id), show_cstr(vi.reason));
	}
	printf("%zu open violations of %s %s%s%s\n", n, o->path, o->digest,
	       o->policy ? " on agents of policy " : "", o->policy ? o->policy : "");
	if (!n || !o->yes) {
		if (n)
			printf("nothing decided: run again with --yes to %s them\n", action);
		ret = n ? 1 : 0;
		goto out;
	}
	json_array_foreach(json_object_get(vs, API_VIOLATIONS), i, v) {
		if (!of_file(o, agents, v, &vi))
			continue;
		snprintf(idtext, sizeof(idtext), "%" PRId64, vi.id);
		snprintf(path, sizeof(path), "/v1/violations/%s/%s", idtext, action);
		j = NULL;
		if (online_fetch(o, HTTP_POST, path, NULL, &j) || !j) {
			refused++; /* online_fetch() said why */
		} else {
			print_decision(idtext, j);
			done++;
		}
		json_decref(j);
	}
	printf("%zu of %zu decided (%s), %zu refused\n", done, n, action, refused);
	ret = refused ? 1 : 0;
out:
	json_decref(vs);
	json_decref(agents);
	return ret;
}

static int set_violation(int argc, char **argv, const char *action)
{
	struct online_opts o;
	const char *pos;
	char path[128], body[64] = "";
	json_t *j = NULL;
	bool json_out;
	int ret;

	if ((ret = online_parse_opts(argc, argv, &o, &pos)))
		return ret;
	if (o.path || o.digest) {
		if (pos || !o.path || !o.digest || !o.path[0] || !o.digest[0] || o.json ||
		    (o.agent && !agent_id_valid(o.agent)) || (o.policy && !agent_id_valid(o.policy)) ||
		    (o.agent && o.policy) ||
		    (o.scope && (strcmp(action, "approve") || strcmp(o.scope, "agent")))) {
			/* Into a policy, one approval (approve ID --scope policy) serves them all. */
			online_usage(action);
			return 2;
		}
		return set_violations_of_file(&o, action);
	}
	if (!pos || !pos[0] || strspn(pos, "0123456789") != strlen(pos) || strlen(pos) > 18 ||
	    (o.scope && (strcmp(action, "approve") ||
			 (strcmp(o.scope, "agent") && strcmp(o.scope, "policy"))))) {
		online_usage(action);
		return 2;
	}
	if (o.scope)
		snprintf(body, sizeof(body), "{\"scope\": \"%s\"}", o.scope);
	snprintf(path, sizeof(path), "/v1/violations/%s/%s", pos, action);
	json_out = o.json;
	if ((ret = online_fetch(&o, HTTP_POST, path, body[0] ? body : NULL, &j)) || !j)
		return ret;
	if (!json_out)
		print_decision(pos, j);
	json_decref(j);
	return 0;
}

int cmd_approve(int argc, char **argv)
{
	return set_violation(argc, argv, "approve");
}

int cmd_dismiss(int argc, char **argv)
{
	return set_violation(argc, argv, "dismiss");
}
