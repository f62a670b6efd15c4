/*
 * attestctl ear: attestation results (EARs) for relying parties.
 *
 *   ear verify FILE --jwks JWKS [--nonce N] [--max-age SECONDS] [--json]
 *       offline: the token in FILE ("-": stdin; a bare token, or the verifier's answer
 *       {"ear": TOKEN}) against the JWK set in JWKS: the ES256 signature by a key of the set,
 *       the profile and required claims, freshness (iat not in the future, exp not passed,
 *       and with --max-age not older than that), the nonce; then the status and the vector.
 *   ear get AGENT [--nonce N] [--wait SECONDS] [--out FILE]      GET /v1/agents/AGENT/ear
 *       the token (to FILE, or stdout); with --nonce, asks again until a round whose challenge
 *       carried N answers, at most --wait seconds (default 120)
 *   ear jwks [--out FILE]                                        GET /v1/jwks
 *   ear rotate                                                   POST /v1/ear/keys/rotate
 *
 * Exit: 0 verified (or done), 1 refused (the token, or the verifier's answer), 2 usage, I/O or
 * transport error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "common/file.h"
#include "proto/ear.h"
#include "proto/limits.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/online.h"
#include "verifier/attestctl/show.h"
#include "verifier/api/api_codec.h"

#define JWKS_MAX (1u << 20)
/* Clocks of the verifier and of whoever checks may differ this much. */
#define CLOCK_SKEW 60

struct ear_opts {
	const char *jwks, *nonce, *out;
	long max_age, wait;
};

static void usage(void)
{
	fprintf(stderr, "usage: attestctl ear verify FILE --jwks JWKS [--nonce N] [--max-age SECONDS] [--json]\n"
			"       attestctl ear get AGENT [--nonce N] [--wait SECONDS] [--out FILE]\n"
			"       attestctl ear jwks [--out FILE] | ear rotate\n"
			"       (online ones take --verifier URL --ca FILE --token-file FILE)\n");
}

static bool parse_seconds(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 10L * 365 * 86400)
		return false;
	*out = v;
	return true;
}

/*
 * Takes this command's own options out of argv (the rest goes to online_parse_opts()); argv
 * is compacted in place. 0 or 2.
 */
static int take_opts(int *argc, char **argv, struct ear_opts *eo)
{
	int n = 1;

	memset(eo, 0, sizeof(*eo));
	eo->wait = 120;
	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i];
		const char **str = !strcmp(a, "--jwks") ? &eo->jwks : !strcmp(a, "--nonce") ? &eo->nonce
				   : !strcmp(a, "--out") ? &eo->out : NULL;
		long *num = !strcmp(a, "--max-age") ? &eo->max_age : !strcmp(a, "--wait") ? &eo->wait
											 : NULL;

		if ((str || num) && i + 1 >= *argc) {
			fprintf(stderr, "attestctl: %s needs a value\n", a);
			return 2;
		}
		if (str) {
			*str = argv[++i];
		} else if (num) {
			if (!parse_seconds(argv[++i], num)) {
				fprintf(stderr, "attestctl: %s: a number of seconds, not \"%s\"\n", a,
					argv[i]);
				return 2;
			}
		} else {
			argv[n++] = argv[i];
		}
	}
	argv[n] = NULL;
	*argc = n;
	if (eo->nonce && !ear_nonce_valid(eo->nonce)) {
		fprintf(stderr, "attestctl: --nonce: %d to %d base64url characters (A-Z a-z 0-9 - _)\n",
			EAR_NONCE_MIN, EAR_NONCE_MAX);
		return 2;
	}
	return 0;
}

/* Reads a whole file ("-": stdin) into a NUL-terminated buffer; NULL with a message. */
static char *slurp(const char *path, size_t max, size_t *len)
{
	struct dynbuf b;
	int ret;

	dynbuf_init(&b, max);
	if (!strcmp(path, "-")) {
		char chunk[4096];
		size_t n;

		while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0)
			dynbuf_add(&b, chunk, n);
		ret = dynbuf_error(&b);
	} else {
		ret = file_read(path, &b);
	}
	if (ret) {
		fprintf(stderr, "attestctl: cannot read \"%s\": %s\n", path,
			ret == -EFBIG || ret == -E2BIG ? "too large" : strerror(-ret));
		dynbuf_release(&b);
		return NULL;
	}
	*len = b.len;
	return b.buf ? b.buf : strdup("");
}

static int write_out(const char *path, const char *text)
{
	FILE *f = path ? fopen(path, "w") : stdout;

	if (!f || fprintf(f, "%s\n", text) < 0 || (path && fclose(f))) {
		fprintf(stderr, "attestctl: cannot write \"%s\": %s\n", path ? path : "-",
			strerror(errno));
		return 2;
	}
	if (!path)
		fflush(stdout);
	return 0;
}

static void print_result(const json_t *claims)
{
	const char *name;
	json_t *sub;
	char t[32];

	online_fmt_time(json_integer_value(json_object_get(claims, "iat")), t, sizeof(t));
	printf("verified: signature, profile %s, issued %s", EAR_PROFILE, t);
	if (json_object_get(claims, "exp")) {
		online_fmt_time(json_integer_value(json_object_get(claims, "exp")), t, sizeof(t));
		printf(", stands until %s", t);
	}
	printf("\n");
	if (json_is_string(json_object_get(claims, "eat_nonce")))
		printf("nonce: %s\n", show_str(claims, "eat_nonce"));
	json_object_foreach(json_object_get(claims, "submods"), name, sub) {
		const json_t *tv = json_object_get(sub, "ear.trustworthiness-vector");
		struct ear_vector vec;
		const char *why;

		printf("%s: %s", show_cstr(name), show_str(sub, "ear.status"));
		if (json_is_string(json_object_get(sub, "attest.agent-id")))
			printf(" (agent %s, verdict %" JSON_INTEGER_FORMAT " %s, %s)",
			       show_str(sub, "attest.agent-id"),
			       json_integer_value(json_object_get(sub, "attest.verdict-id")),
			       show_str(sub, "attest.verdict"), show_str(sub, "ear.appraisal-policy-id"));
		printf("\n");
		if (!tv || ear_vector_from_json(tv, &vec, &why))
			continue;
		for (unsigned c = 0; c < EAR_CLAIM_COUNT; c++) {
			if (!vec.v[c])
				printf("  %-18s -    (no claim)\n", ear_claim_name((enum ear_claim)c));
			else
				printf("  %-18s %-4d %s\n", ear_claim_name((enum ear_claim)c), vec.v[c],
				       ear_tier_name(ear_tier_of(vec.v[c])));
		}
	}
}

static int ear_verify(int argc, char **argv, const struct ear_opts *eo)
{
	bool json_out = argc == 4 && !strcmp(argv[3], "--json");
	char *text = NULL, *jwks_text = NULL, why[512];
	const char *token;
	json_t *jwks = NULL, *wrapped = NULL, *claims = NULL;
	size_t len = 0, jlen = 0;
	int ret = 2;

	if ((argc != 3 && !json_out) || !eo->jwks) {
		usage();
		return 2;
	}
	text = slurp(argv[2], EAR_TOKEN_MAX + 4096, &len);
	jwks_text = slurp(eo->jwks, JWKS_MAX, &jlen);
	if (!text || !jwks_text)
		goto out;
	jwks = json_loadb(jwks_text, jlen, 0, NULL);
	if (!json_is_object(jwks)) {
		fprintf(stderr, "attestctl: \"%s\" is not a JWK set (JSON {\"keys\": [...]})\n", eo->jwks);
		goto out;
	}
	/* The verifier's answer as saved, or the bare token; surrounding whitespace is no part of it. */
	while (len && strchr(" \t\r\n", text[len - 1]))
		text[--len] = '\0';
	token = text + strspn(text, " \t\r\n");
	if (*token == '{') {
		struct api_ear ear;

		wrapped = json_loads(token, 0, NULL);
		api_ear_decode(wrapped, &ear);
		token = ear.token;
		if (!token) {
			fprintf(stderr, "attestctl: \"%s\" is JSON without an \"ear\" member\n", argv[2]);
			goto out;
		}
	}
	ret = ear_jwt_verify(token, strlen(token), jwks, &claims, why, sizeof(why));
	if (!ret)
		ret = ear_claims_check(claims, (int64_t)time(NULL), CLOCK_SKEW, eo->max_age, eo->nonce,
				       why, sizeof(why));
	if (ret) {
		fprintf(stderr, "attestctl: refused: %s\n", show_cstr(why));
		ret = 1;
		goto out;
	}
	if (json_out) {
		char *s = show_json(claims, JSON_INDENT(2) | JSON_SORT_KEYS);

		printf("%s\n", s ? s : "null");
		free(s);
	} else {
		print_result(claims);
	}
	ret = 0;
out:
	free(text);
	free(jwks_text);
	json_decref(jwks);
	json_decref(wrapped);
	json_decref(claims);
	return ret;
}

static int ear_get(int argc, char **argv, const struct ear_opts *eo)
{
	struct online_opts o;
	const char *agent = NULL;
	char path[LIMIT_AGENT_ID + 128];
	time_t until = time(NULL) + eo->wait;
	int ret;

	if ((ret = online_parse_opts(argc - 1, argv + 1, &o, &agent)))
		return ret;
	if (!agent) {
		usage();
		return 2;
	}
	snprintf(path, sizeof(path), "/v1/agents/%s/ear%s%s", agent, eo->nonce ? "?nonce=" : "",
		 eo->nonce ? eo->nonce : "");
	for (;;) {
		struct api_ear ear;
		json_t *ans = NULL;
		long status = 0;
		char *body = NULL;
		json_int_t retry;

		if ((ret = online_request(&o, HTTP_GET, path, NULL, &status, &body)))
			return ret;
		if (status != 202) {
			free(body);
			/* Once more through the common path: its refusal message, its JSON parse. */
			o.json = false;
			if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &ans)))
				return ret;
			/* A file gets the token as sent (a JWT: base64url and dots); the
			 * terminal gets it shown. */
			api_ear_decode(ans, &ear);
			ret = write_out(eo->out, eo->out ? (ear.token ? ear.token : "")
							 : show_cstr(ear.token));
			json_decref(ans);
			return ret;
		}
		ans = json_loads(body, 0, NULL);
		free(body);
		api_ear_decode(ans, &ear);
		retry = ear.retry_after;
		json_decref(ans);
		if (retry < 1)
			retry = 1;
		if (retry > 5)
			retry = 5; /* ask often: the round may come sooner than an interval */
		if (time(NULL) + retry > until) {
			fprintf(stderr, "attestctl: no round of agent \"%s\" answered nonce \"%s\" within"
					" %ld s: is the agent attesting?\n", agent, eo->nonce, eo->wait);
			return 1;
		}
		sleep((unsigned)retry);
	}
}

static int ear_simple(int argc, char **argv, const struct ear_opts *eo, enum http_method m,
		      const char *path)
{
	struct online_opts o;
	const char *pos = NULL;
	json_t *ans = NULL;
	char *text;
	int ret;

	if ((ret = online_parse_opts(argc - 1, argv + 1, &o, &pos)))
		return ret;
	if (pos) {
		usage();
		return 2;
	}
	o.json = false;
	if ((ret = online_fetch(&o, m, path, m == HTTP_POST ? "{}" : NULL, &ans)))
		return ret;
	if (m == HTTP_POST) {
		struct api_ear_rotation rot;

		api_ear_rotation_decode(ans, &rot);
		printf("signing key rotated: results are now signed by \"%s\"; \"%s\" stays published"
		       " (--ear-key-keep)\n", show_cstr(rot.kid), show_cstr(rot.retired_kid));
		json_decref(ans);
		return 0;
	}
	text = show_json(ans, JSON_INDENT(2));
	ret = write_out(eo->out, text ? text : "");
	free(text);
	json_decref(ans);
	return ret;
}

int cmd_ear(int argc, char **argv)
{
	struct ear_opts eo;
	int ret;

	if (argc < 2) {
		usage();
		return 2;
	}
	if ((ret = take_opts(&argc, argv, &eo)))
		return ret;
	if (!strcmp(argv[1], "verify"))
		return ear_verify(argc, argv, &eo);
	if (!strcmp(argv[1], "get"))
		return ear_get(argc, argv, &eo);
	if (!strcmp(argv[1], "jwks"))
		return ear_simple(argc, argv, &eo, HTTP_GET, "/v1/jwks");
	if (!strcmp(argv[1], "rotate"))
		return ear_simple(argc, argv, &eo, HTTP_POST, "/v1/ear/keys/rotate");
	usage();
	return 2;
}
