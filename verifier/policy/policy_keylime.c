/*
 * policy_keylime: the import of a Keylime runtime policy (what it enforces, what it only warns
 * about), and its exclude patterns (Python `re`, anchored at the start) rewritten in our syntax.
 */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/policy/policy_internal.h"
#include "verifier/policy/policy_keys.h"

/* A letter or a digit: escaped, it is a class or a backreference, never itself. */
static bool alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/*
 * What a backslash and nx inside [...] of a Python pattern are in a POSIX bracket, or NULL with
 * *why set. lit (3 bytes) holds an answer that is the character itself.
 */
static const char *bracket_escape(char nx, char *lit, const char **why)
{
	switch (nx) {
	case 'd': return "[:digit:]";
	case 'w': return "[:alnum:]_";
	case 's': return "[:space:]";
	case 'n': return "\n";
	case 't': return "\t";
	case '\\': return "\\";
	default:
		/* POSIX brackets have no escapes: a literal punctuation character stands for
		 * itself, except the three with positional meaning. */
		if (nx && nx != ']' && nx != '^' && nx != '-' && !alnum(nx)) {
			lit[0] = nx;
			lit[1] = '\0';
			return lit;
		}
		*why = "unsupported escape inside [...]";
		return NULL;
	}
}

/* What a backslash and nx outside [...] are in an ERE, or NULL with *why set; lit as above. */
static const char *escape(char nx, char *lit, const char **why)
{
	switch (nx) {
	case 'd': return "[0-9]";
	case 'D': return "[^0-9]";
	case 'w': return "[[:alnum:]_]";
	case 'W': return "[^[:alnum:]_]";
	case 's': return "[[:space:]]";
	case 'S': return "[^[:space:]]";
	case 'A': return "^";
	case 'Z': return "$";
	case 'n': return "\n";
	case 't': return "\t";
	default:
		if (nx && strchr(".[]{}()\\*+?|^$", nx)) {
			lit[0] = '\\';
			lit[1] = nx;
			lit[2] = '\0';
			return lit;
		}
		if (nx && !alnum(nx)) {
			lit[0] = nx; /* "\/", "\-": the character itself */
			lit[1] = '\0';
			return lit;
		}
		*why = "unsupported escape (backreference, \\b, \\x, ...)";
		return NULL;
	}
}

/*
 * Rewrites a Python `re` pattern (as Keylime applies it, with re.match: anchored at the start
 * only) into our syntax (POSIX ERE, whole-path match): "(translated).*". Maps the common
 * Python-only spellings; anything whose meaning would change (lookaround, backreferences,
 * inline flags, possessive quantifiers) is refused. Returns NULL with *why set.
 */
char *keylime_regex(const char *py, const char **why, char *whybuf, size_t whylen)
{
	size_t n = strlen(py), o = 0;
	char *out = malloc(n * 16 + 8);
	bool br = false;   /* inside [...] */
	bool quant = false; /* the previous token was *, + or ? */
	size_t br_start = 0;
	regex_t re;
	int rc;

	if (!out) {
		*why = "out of memory";
		return NULL;
	}
	out[o++] = '(';
	for (size_t i = 0; i < n; i++) {
		char c = py[i], nx = i + 1 < n ? py[i + 1] : '\0';
		const char *rep = NULL;
		bool after_quant = quant;
		char lit[3];

		quant = false;
		if (br) {
			if (c == ']' && i > br_start) {
				br = false;
				out[o++] = c;
				continue;
			}
			if (c == '[' && (nx == ':' || nx == '.' || nx == '=')) {
				/* "[[:alpha:]]" is a class in POSIX but literal characters in Python. */
				*why = "\"[:\", \"[.\" or \"[=\" inside [...] (POSIX classes mean otherwise in Python)";
				goto fail;
			}
			if (c != '\\') {
				out[o++] = c;
				continue;
			}
			i++;
			rep = bracket_escape(nx, lit, why);
			if (!rep)
				goto fail;
			memcpy(out + o, rep, strlen(rep));
			o += strlen(rep);
			continue;
		}
		switch (c) {
		case '[':
			br = true;
			out[o++] = c;
			if (nx == '^') {
				out[o++] = '^';
				i++;
			}
			/* A ']' right after '[' or '[^' is literal in both dialects. */
			br_start = i + 1;
			continue;
		case '(':
			if (nx == '?') {
				if (i + 2 < n && py[i + 2] == ':') {
					out[o++] = '(';
					i += 2;
					continue;
				}
				*why = "(?...) construct other than (?:...) (lookaround, flags, names)";
				goto fail;
			}
			out[o++] = c;
			continue;
		case '*':
		case '+':
		case '?':
		case '}':
			/* Python refuses "a**" (multiple repeat); glibc takes it, and compiles a run
			 * of them in superlinear time (fuzz_policy: 23 s for one policy). */
			if (after_quant && c != '}') {
				*why = "multiple repeat (a quantifier right after *, + or ?)";
				goto fail;
			}
			quant = c != '}';
			out[o++] = c;
			if (nx == '?')  /* lazy: under re.match only the match's length differs */
				i++;
			else if (nx == '+') {
				*why = "possessive quantifier";
				goto fail;
			}
			continue;
		case '\\':
			i++;
			rep = escape(nx, lit, why);
			if (!rep)
				goto fail;
			memcpy(out + o, rep, strlen(rep));
			o += strlen(rep);
			continue;
		default:
			out[o++] = c;
		}
	}
	if (br) {
		*why = "unterminated [";
		goto fail;
	}
	/* The translation alone must compile, or its parentheses could pair with ours. */
	out[o] = '\0';
	rc = regcomp(&re, out + 1, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, &re, whybuf, whylen);
		regfree(&re);
		*why = whybuf;
		goto fail;
	}
	regfree(&re);
	memcpy(out + o, ").*", 4);
	return out;
fail:
	free(out);
	return NULL;
}

/*
 * The "ima" object of a Keylime policy: ignored_keyrings is policy_keys.c's; the others change
 * nothing here, which the importer says rather than drops.
 */
static int keylime_ima(struct policy *p, const json_t *ima, char *err, size_t errlen)
{
	const char *key;
	json_t *v;

	if (!ima)
		return 0;
	if (!json_is_object(ima)) {
		seterr(err, errlen, "keylime \"ima\" must be an object");
		return -EINVAL;
	}
	json_object_foreach((json_t *)ima, key, v) {
		if (!strcmp(key, "ignored_keyrings"))
			continue;
		if (!strcmp(key, "log_hash_alg")) {
			if (!json_is_string(v) || strcmp(json_string_value(v), "sha1") != 0)
				policy_warn(&p->warnings, "ima.log_hash_alg: not used; the verifier checks the SHA-1 template hash of the binary list (Linux 6.1) and replays every quoted PCR 10 bank");
		} else if (!strcmp(key, "dm_policy")) {
			if (!json_is_null(v))
				policy_warn(&p->warnings, "ima.dm_policy: device-mapper measurements are not checked against it; their ima-buf entries are judged by name against \"digests\" and fail unless listed");
		} else {
			policy_warn(&p->warnings, "ima.%.64s: unknown key, not used", key);
		}
	}
	return 0;
}

/*
 * Keylime runtime policy. digests, excludes, keyrings, ima.ignored_keyrings and
 * verification-keys are enforced; ima-buf digests join the digest table (an ima-buf entry that
 * is not a key is judged by its name there); meta and release are metadata. Anything else is
 * named in a warning (policy_warnings()): nothing is dropped silently.
 */
int load_keylime(struct policy *p, const json_t *root, char *err, size_t errlen)
{
	static const char *const known[] = {"meta", "release", "digests", "excludes", "keyrings",
					    "ima", "ima-buf", "verification-keys"};
	const json_t *meta = json_object_get(root, "meta"), *v;
	const char *key;
	int rc;

	p->keylime = true;
	if (!json_is_object(meta)) {
		seterr(err, errlen, "keylime \"meta\" must be an object");
		return -EINVAL;
	}
	v = json_object_get(meta, "version");
	if (v && !json_is_integer(v)) {
		seterr(err, errlen, "keylime \"meta.version\" must be an integer");
		return -EINVAL;
	}
	v = json_object_get(root, "digests");
	if (v) {
		rc = load_digests(p, v, DIGESTS_KEYLIME, err, errlen);
		if (rc)
			return rc;
	}
	v = json_object_get(root, "excludes");
	if (v) {
		rc = load_excludes(p, v, true, err, errlen);
		if (rc)
			return rc;
	}
	v = json_object_get(root, "ima-buf");
	if (v) {
		rc = load_digests(p, v, DIGESTS_KEYLIME, err, errlen);
		if (rc)
			return rc;
	}
	rc = keylime_ima(p, json_object_get(root, "ima"), err, errlen);
	if (!rc)
		rc = policy_keys_load_keylime(p->keys, root, &p->warnings, err, errlen);
	if (rc)
		return rc;
	json_object_foreach((json_t *)root, key, v) {
		size_t i = 0;

		while (i < sizeof(known) / sizeof(known[0]) && strcmp(key, known[i]))
			i++;
		if (i == sizeof(known) / sizeof(known[0]))
			policy_warn(&p->warnings, "%.64s: unknown key, not used", key);
	}
	return 0;
}
