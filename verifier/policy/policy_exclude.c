/*
 * policy_exclude: a policy's exclude patterns (our syntax: POSIX ERE matched against the whole
 * path): bounded before they are compiled, compiled as "^(src)$", matched against a path, and
 * loaded from an "excludes" list (a Keylime list's Python patterns translated first,
 * policy_keylime.c).
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/policy/policy_internal.h"

static bool exclude_too_complex(const char *src)
{
	unsigned quant = 0;
	bool br = false;

	if (strlen(src) > LIMIT_POLICY_EXCLUDE_BYTES)
		return true;
	for (const char *c = src; *c; c++) {
		if (*c == '\\' && c[1]) {
			c++;
		} else if (br) {
			br = *c != ']';
		} else if (*c == '[') {
			br = true;
			if (c[1] == '^')
				c++;
			if (c[1] == ']')
				c++; /* a ']' first in a bracket is literal */
		} else if (*c == '*' || *c == '+' || *c == '?' || *c == '{') {
			quant++;
		}
	}
	return quant > LIMIT_POLICY_EXCLUDE_QUANTIFIERS;
}

/* Compiles our-syntax src (whole-path match) into ex. Returns 0 or a regcomp error code. */
static int exclude_compile(const char *src, regex_t *re, char *why, size_t whylen)
{
	size_t n = strlen(src);
	char *anchored;
	int rc;

	if (exclude_too_complex(src)) {
		snprintf(why, whylen, "pattern longer than %u bytes or with more than %u repeats",
			 LIMIT_POLICY_EXCLUDE_BYTES, LIMIT_POLICY_EXCLUDE_QUANTIFIERS);
		return REG_BADPAT;
	}

	/* Compile alone first: a pattern that compiles by itself has balanced groups, so
	 * wrapping it in ^(...)$ cannot change what its alternatives bind to. */
	rc = regcomp(re, src, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, re, why, whylen);
		regfree(re);
		return rc;
	}
	regfree(re);
	anchored = malloc(n + 5);
	if (!anchored) {
		snprintf(why, whylen, "out of memory");
		return REG_ESPACE;
	}
	memcpy(anchored, "^(", 2);
	memcpy(anchored + 2, src, n);
	memcpy(anchored + 2 + n, ")$", 3);
	rc = regcomp(re, anchored, REG_EXTENDED | REG_NOSUB);
	free(anchored);
	if (rc) {
		regerror(rc, re, why, whylen);
		regfree(re);
	}
	return rc;
}

int exclude_add(struct policy *p, const char *src, char *why, size_t whylen)
{
	struct exclude ne;
	int rc;

	if (p->nex >= LIMIT_POLICY_EXCLUDES) {
		snprintf(why, whylen, "more than LIMIT_POLICY_EXCLUDES (%u) excludes",
			 LIMIT_POLICY_EXCLUDES);
		return -E2BIG;
	}
	ne.src = strdup(src);
	if (!ne.src)
		return -ENOMEM;
	rc = exclude_compile(src, &ne.re, why, whylen);
	if (rc) {
		free(ne.src);
		return rc == REG_ESPACE ? -ENOMEM : -EINVAL;
	}
	/* A compiled regex_t moves like any struct: the array was always grown by realloc. */
	rc = dynbuf_add(&p->ex, &ne, sizeof(ne));
	if (rc) {
		regfree(&ne.re);
		free(ne.src);
		snprintf(why, whylen, "%s", strerror(-rc));
		return rc;
	}
	p->nex++;
	return 0;
}

int policy_add_exclude(struct policy *p, const char *regex)
{
	char why[128];

	if (!p || !regex || !*regex || strlen(regex) > LIMIT_IMA_PATH)
		return -EINVAL;
	if (policy_shared(p))
		return -EBUSY;
	return exclude_add(p, regex, why, sizeof(why));
}

bool path_excluded(const struct policy *p, const char *path, size_t len)
{
	char buf[LIMIT_IMA_PATH + 1];

	/* Longer paths are never excluded (fail closed) and never cost a long regex scan. */
	if (!p->nex || len > LIMIT_IMA_PATH || memchr(path, '\0', len))
		return false;
	/* A counted copy rather than REG_STARTEND: sanitizers' regexec interceptors strlen() the
	 * subject, and paths usually point into a list buffer with no NUL after them. */
	memcpy(buf, path, len);
	buf[len] = '\0';
	for (size_t i = 0; i < p->nex; i++)
		if (regexec(&ex_at(p, i)->re, buf, 0, NULL, 0) == 0)
			return true;
	return false;
}

void excludes_release(struct policy *p)
{
	for (size_t i = 0; i < p->nex; i++) {
		regfree(&ex_at(p, i)->re);
		free(ex_at(p, i)->src);
	}
	dynbuf_release(&p->ex);
}

int load_excludes(struct policy *p, const json_t *list, bool keylime, char *err,
			 size_t errlen)
{
	char whybuf[160];
	json_t *v;
	size_t i;
	int rc;

	if (!json_is_array(list)) {
		seterr(err, errlen, "\"excludes\" must be a list of regular expressions");
		return -EINVAL;
	}
	if (json_array_size(list) > LIMIT_POLICY_EXCLUDES - p->nex) {
		seterr(err, errlen, "\"excludes\": more than LIMIT_POLICY_EXCLUDES (%u)",
		       LIMIT_POLICY_EXCLUDES);
		return -E2BIG;
	}
	json_array_foreach(list, i, v) {
		const char *src, *why = NULL;
		char *conv = NULL;

		if (!json_is_string(v) || json_string_length(v) == 0 ||
		    json_string_length(v) > LIMIT_IMA_PATH ||
		    strlen(json_string_value(v)) != json_string_length(v)) {
			seterr(err, errlen, "excludes[%zu]: must be a non-empty string of at most %u bytes",
			       i, LIMIT_IMA_PATH);
			return -EINVAL;
		}
		src = json_string_value(v);
		if (keylime) {
			conv = keylime_regex(src, &why, whybuf, sizeof(whybuf));
			if (!conv) {
				seterr(err, errlen, "excludes[%zu]: Python pattern \"%.200s\" refused: %s",
				       i, src, why);
				return -EINVAL;
			}
		}
		rc = exclude_add(p, conv ? conv : src, whybuf, sizeof(whybuf));
		free(conv);
		if (rc) {
			seterr(err, errlen, "excludes[%zu]: regcomp refused \"%.200s\": %s", i, src,
			       rc == -ENOMEM ? "out of memory" : whybuf);
			return rc;
		}
	}
	return 0;
}
