/* The `boot` section of a policy: parse, serialise, teach. The contract is in boot_policy.h. */
#include "verifier/policy/boot_policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "verifier/policy/policy_digest.h"
#include "verifier/policy/policy_json.h"

#define seterr policy_seterr

static void list_release(struct boot_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void boot_policy_free(struct boot_policy *bp)
{
	if (!bp)
		return;
	list_release(&bp->kernels);
	list_release(&bp->boot_apps);
	list_release(&bp->firmware);
	list_release(&bp->pk);
	list_release(&bp->kek);
	list_release(&bp->db);
	list_release(&bp->dbx);
	strv_free(bp->cmdline.exact, bp->cmdline.nexact);
	strv_free(bp->cmdline.required, bp->cmdline.nrequired);
	strv_free(bp->cmdline.forbidden, bp->cmdline.nforbidden);
	free(bp);
}

/* ---- serialising (and the digest of the canonical form) ---------------------------------- */

static int add_list(json_t *obj, const char *key, const struct boot_list *l)
{
	json_t *arr;

	if (!l->set)
		return 0;
	arr = json_array();
	if (json_object_set_new(obj, key, arr))
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		json_t *v = policy_json_digest_string(l->v[i].alg->id, l->v[i].d);

		if (v && l->v[i].name)
			v = json_pack("{s:o, s:s}", "digest", v, "name", l->v[i].name);
		if (json_array_append_new(arr, v))
			return -ENOMEM;
	}
	return 0;
}

static int add_strv(json_t *obj, const char *key, char **v, size_t n)
{
	json_t *arr = json_array();

	if (json_object_set_new(obj, key, arr))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(arr, json_string(v[i])))
			return -ENOMEM;
	return 0;
}

json_t *boot_policy_json(const struct boot_policy *bp)
{
	static const char *const secure[] = {"any", "on", "off"};
	json_t *o = json_object(), *c;

	if (!o)
		return NULL;
	if (add_list(o, "kernels", &bp->kernels) || add_list(o, "boot_applications", &bp->boot_apps) ||
	    add_list(o, "firmware", &bp->firmware) || add_list(o, "pk", &bp->pk) ||
	    add_list(o, "kek", &bp->kek) || add_list(o, "db", &bp->db) || add_list(o, "dbx", &bp->dbx))
		goto fail;
	if (bp->secure_boot != BOOT_SECURE_ANY &&
	    json_object_set_new(o, "secure_boot", json_string(secure[bp->secure_boot])))
		goto fail;
	if (bp->cmdline.set) {
		c = json_object();
		if (json_object_set_new(o, "cmdline", c))
			goto fail;
		if ((bp->cmdline.nexact && add_strv(c, "exact", bp->cmdline.exact, bp->cmdline.nexact)) ||
		    (bp->cmdline.nrequired &&
		     add_strv(c, "required", bp->cmdline.required, bp->cmdline.nrequired)) ||
		    (bp->cmdline.nforbidden &&
		     add_strv(c, "forbidden", bp->cmdline.forbidden, bp->cmdline.nforbidden)))
			goto fail;
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

static int update_digest(struct boot_policy *bp)
{
	json_t *o = boot_policy_json(bp);
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	unsigned int n = 0;
	int ret = s && EVP_Digest(s, strlen(s), bp->digest, &n, EVP_sha256(), NULL) == 1 ? 0 : -ENOMEM;

	free(s);
	json_decref(o);
	return ret;
}

struct boot_policy *boot_policy_new(void)
{
	struct boot_policy *bp = calloc(1, sizeof(*bp));

	if (bp && update_digest(bp)) {
		free(bp);
		return NULL;
	}
	return bp;
}

/* ---- parsing ------------------------------------------------------------------------------ */

static int list_add(struct boot_list *l, const struct alg *a, const uint8_t *d, const char *name)
{
	struct boot_digest *v;

	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].alg == a && memcmp(l->v[i].d, d, a->size) == 0)
			return 0;
	if (l->n >= BOOT_POLICY_LIST_MAX)
		return -E2BIG;
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->v = v;
	memset(&v[l->n], 0, sizeof(v[0]));
	v[l->n].alg = a;
	memcpy(v[l->n].d, d, a->size);
	if (name && !(v[l->n].name = strdup(name)))
		return -ENOMEM;
	l->n++;
	l->set = true;
	return 0;
}

/* A list of "alg:hex" or {"digest": "alg:hex", "name": "..."}. */
static int parse_list(const json_t *arr, const char *key, struct boot_list *l, char *err, size_t errlen)
{
	const json_t *v;
	size_t i;

	if (!json_is_array(arr) || json_array_size(arr) > BOOT_POLICY_LIST_MAX) {
		seterr(err, errlen, "\"boot.%s\" must be a list of at most %u \"alg:hex\" digests", key,
		       BOOT_POLICY_LIST_MAX);
		return -EINVAL;
	}
	l->set = true;
	json_array_foreach(arr, i, v) {
		const json_t *d = v, *name = NULL;
		const char *why = "must be \"alg:hex\" or {\"digest\": \"alg:hex\", \"name\": \"...\"}";
		uint8_t buf[LIMIT_DIGEST];
		const struct alg *a = NULL;
		int rc;

		if (json_is_object(v)) {
			const char *k;
			const json_t *x;

			d = json_object_get(v, "digest");
			name = json_object_get(v, "name");
			json_object_foreach((json_t *)v, k, x)
				if (strcmp(k, "digest") && strcmp(k, "name"))
					d = NULL; /* an unknown key: refused below */
			if (name && (!json_is_string(name) || json_string_length(name) == 0 ||
				     json_string_length(name) > BOOT_POLICY_NAME_MAX ||
				     strlen(json_string_value(name)) != json_string_length(name)))
				d = NULL;
		}
		if (json_is_string(d))
			a = policy_digest_parse(json_string_value(d), json_string_length(d), buf, &why);
		if (!a) {
			seterr(err, errlen, "\"boot.%s\"[%zu]: %s", key, i, why);
			return -EINVAL;
		}
		rc = list_add(l, a, buf, name ? json_string_value(name) : NULL);
		if (rc) {
			seterr(err, errlen, "\"boot.%s\"[%zu]: %s", key, i, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static bool word_ok(const char *s, size_t len)
{
	if (len == 0 || len > LIMIT_CMDLINE)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '"' || s[i] == '\0')
			return false;
	return true;
}

static int parse_strv(const json_t *arr, const char *key, bool words, char ***out, size_t *n,
		      char *err, size_t errlen)
{
	const json_t *v;
	size_t i;

	if (!json_is_array(arr) || json_array_size(arr) > BOOT_POLICY_LIST_MAX) {
		seterr(err, errlen, "\"boot.cmdline.%s\" must be a list of at most %u strings", key,
		       BOOT_POLICY_LIST_MAX);
		return -EINVAL;
	}
	*out = calloc(json_array_size(arr) + 1, sizeof(char *));
	if (!*out)
		return -ENOMEM;
	json_array_foreach(arr, i, v) {
		const char *s = json_string_value(v);
		size_t len = json_string_length(v);

		if (!s || strlen(s) != len || len > LIMIT_CMDLINE || (words && !word_ok(s, len))) {
			seterr(err, errlen, "\"boot.cmdline.%s\"[%zu] must be %s", key, i,
			       words ? "one kernel parameter: no space, no quote"
				     : "a command line of at most " LIMIT_STR(LIMIT_CMDLINE) " bytes");
			return -EINVAL;
		}
		(*out)[i] = strdup(s);
		if (!(*out)[i])
			return -ENOMEM;
		(*n)++;
	}
	return 0;
}

static int parse_cmdline(const json_t *v, struct boot_cmdline_rules *r, char *err, size_t errlen)
{
	const char *k;
	const json_t *x;
	int rc = 0;

	if (!json_is_object(v)) {
		seterr(err, errlen, "\"boot.cmdline\" must be an object (exact, required, forbidden)");
		return -EINVAL;
	}
	r->set = true;
	json_object_foreach((json_t *)v, k, x) {
		if (!strcmp(k, "exact") && !r->exact)
			rc = parse_strv(x, k, false, &r->exact, &r->nexact, err, errlen);
		else if (!strcmp(k, "required") && !r->required)
			rc = parse_strv(x, k, true, &r->required, &r->nrequired, err, errlen);
		else if (!strcmp(k, "forbidden") && !r->forbidden)
			rc = parse_strv(x, k, true, &r->forbidden, &r->nforbidden, err, errlen);
		else {
			seterr(err, errlen, "unknown key \"boot.cmdline.%.64s\"", k);
			rc = -EINVAL;
		}
		if (rc)
			return rc;
	}
	return 0;
}

struct boot_policy *boot_policy_parse(const json_t *v, char *err, size_t errlen)
{
	struct boot_policy *bp;
	const char *k;
	const json_t *x;
	int rc = 0;

	if (!json_is_object(v)) {
		seterr(err, errlen, "\"boot\" must be an object");
		return NULL;
	}
	bp = calloc(1, sizeof(*bp));
	if (!bp) {
		seterr(err, errlen, "out of memory");
		return NULL;
	}
	json_object_foreach((json_t *)v, k, x) {
		if (!strcmp(k, "kernels"))
			rc = parse_list(x, k, &bp->kernels, err, errlen);
		else if (!strcmp(k, "boot_applications"))
			rc = parse_list(x, k, &bp->boot_apps, err, errlen);
		else if (!strcmp(k, "firmware"))
			rc = parse_list(x, k, &bp->firmware, err, errlen);
		else if (!strcmp(k, "pk"))
			rc = parse_list(x, k, &bp->pk, err, errlen);
		else if (!strcmp(k, "kek"))
			rc = parse_list(x, k, &bp->kek, err, errlen);
		else if (!strcmp(k, "db"))
			rc = parse_list(x, k, &bp->db, err, errlen);
		else if (!strcmp(k, "dbx"))
			rc = parse_list(x, k, &bp->dbx, err, errlen);
		else if (!strcmp(k, "cmdline"))
			rc = parse_cmdline(x, &bp->cmdline, err, errlen);
		else if (!strcmp(k, "secure_boot")) {
			const char *s = json_string_value(x);

			if (s && !strcmp(s, "on"))
				bp->secure_boot = BOOT_SECURE_ON;
			else if (s && !strcmp(s, "off"))
				bp->secure_boot = BOOT_SECURE_OFF;
			else if (s && !strcmp(s, "any"))
				bp->secure_boot = BOOT_SECURE_ANY;
			else {
				seterr(err, errlen, "\"boot.secure_boot\" must be \"on\", \"off\" or \"any\"");
				rc = -EINVAL;
			}
		} else {
			seterr(err, errlen, "unknown key \"boot.%.64s\"", k);
			rc = -EINVAL;
		}
		if (rc)
			break;
	}
	if (!rc && update_digest(bp)) {
		seterr(err, errlen, "out of memory");
		rc = -ENOMEM;
	}
	if (rc) {
		if (rc == -ENOMEM)
			seterr(err, errlen, "out of memory");
		boot_policy_free(bp);
		return NULL;
	}
	return bp;
}

/* ---- lookups -------------------------------------------------------------------------------- */

const struct boot_digest *boot_list_match(const struct boot_list *l, const struct eventlog_event *e,
					  const struct pcr_set *quoted)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct pcr_bank *b = quoted ? pcr_set_bank_const(quoted, l->v[i].alg->id) : NULL;
		const uint8_t *d = eventlog_event_digest(e, l->v[i].alg->id);

		if (quoted && !(b && (b->mask & (1u << e->pcr))))
			continue;
		if (d && memcmp(d, l->v[i].d, l->v[i].alg->size) == 0)
			return &l->v[i];
	}
	return NULL;
}

bool boot_cmdline_words(const char *s, bool (*cb)(const char *word, size_t len, void *arg), void *arg)
{
	char word[LIMIT_CMDLINE + 1];

	while (*s) {
		bool quote = false;
		size_t n = 0;

		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		for (; *s && (quote || (*s != ' ' && *s != '\t' && *s != '\n')); s++) {
			if (*s == '"')
				quote = !quote;
			else if (n < LIMIT_CMDLINE)
				word[n++] = *s;
		}
		word[n] = '\0';
		if (n == 2 && !memcmp(word, "--", 2))
			break; /* the rest goes to init, not to the kernel */
		if (cb(word, n, arg))
			return true;
	}
	return false;
}

/* "-" and "_" are the same in a parameter name for the kernel's module parameters (parameqn). */
static bool key_eq(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char x = a[i] == '-' ? '_' : a[i], y = b[i] == '-' ? '_' : b[i];

		if (x != y)
			return false;
	}
	return true;
}

struct word_find {
	const char *item;
	size_t len;
	bool by_key; /* item has no '=': match the word "item" and any "item=..." */
	bool loose;  /* - and _ alike (for forbidden words: the stricter reading) */
};

static bool word_matches(const char *w, size_t n, void *arg)
{
	const struct word_find *f = arg;

	if (f->by_key) {
		size_t klen = strcspn(w, "=");

		return klen == f->len && (f->loose ? key_eq(w, f->item, klen) : !memcmp(w, f->item, klen));
	}
	if (n != f->len)
		return false;
	if (f->loose) {
		size_t klen = strcspn(w, "=");

		return key_eq(w, f->item, klen) && !strcmp(w + klen, f->item + klen);
	}
	return !memcmp(w, f->item, n);
}

static bool has_word(const char *cmdline, const char *item, bool loose)
{
	struct word_find f = {.item = item, .len = strlen(item), .by_key = !strchr(item, '='),
			      .loose = loose};

	return boot_cmdline_words(cmdline, word_matches, &f);
}

const char *boot_cmdline_judge(const struct boot_cmdline_rules *r, const char *cmdline, char *why,
			       size_t whylen)
{
	for (size_t i = 0; i < r->nexact; i++)
		if (!strcmp(r->exact[i], cmdline))
			return NULL;
	if (r->nexact && !r->nrequired && !r->nforbidden) {
		snprintf(why, whylen, "is none of the %zu command lines the policy allows", r->nexact);
		return why;
	}
	return boot_cmdline_judge_words(r, cmdline, why, whylen);
}

const char *boot_cmdline_judge_words(const struct boot_cmdline_rules *r, const char *cmdline,
				     char *why, size_t whylen)
{
	for (size_t i = 0; i < r->nrequired; i++) {
		if (!has_word(cmdline, r->required[i], false)) {
			snprintf(why, whylen, "lacks the required \"%s\"", r->required[i]);
			return why;
		}
	}
	for (size_t i = 0; i < r->nforbidden; i++) {
		if (has_word(cmdline, r->forbidden[i], true)) {
			snprintf(why, whylen, "has the forbidden \"%s\"", r->forbidden[i]);
			return why;
		}
	}
	return NULL;
}

/* ---- teaching ------------------------------------------------------------------------------- */

static struct boot_list *list_of(struct boot_policy *bp, const char *category)
{
	if (!strcmp(category, BOOT_CAT_KERNEL))
		return &bp->kernels;
	if (!strcmp(category, BOOT_CAT_FIRMWARE))
		return &bp->firmware;
	if (!strcmp(category, BOOT_CAT_PK))
		return &bp->pk;
	if (!strcmp(category, BOOT_CAT_KEK))
		return &bp->kek;
	if (!strcmp(category, BOOT_CAT_DB))
		return &bp->db;
	if (!strcmp(category, BOOT_CAT_DBX))
		return &bp->dbx;
	return NULL;
}

int boot_policy_teach(struct boot_policy *bp, const char *category, const char *subject,
		      const char *digest, char *why, size_t whylen)
{
	struct boot_list *l = list_of(bp, category);
	int rc;

	if (l) {
		uint8_t d[LIMIT_DIGEST];
		const char *w = "no digest";
		const struct alg *a = digest ? policy_digest_parse(digest, strlen(digest), d, &w) : NULL;

		if (!a) {
			seterr(why, whylen, "the finding's digest \"%.100s\" is unusable: %s",
			       digest ? digest : "", w);
			return -EINVAL;
		}
		rc = list_add(l, a, d, NULL);
	} else if (!strcmp(category, BOOT_CAT_CMDLINE)) {
		struct boot_cmdline_rules *r = &bp->cmdline;
		char **v;

		if (!subject || strlen(subject) > LIMIT_CMDLINE) {
			seterr(why, whylen, "the finding carries no command line");
			return -EINVAL;
		}
		for (size_t i = 0; i < r->nexact; i++)
			if (!strcmp(r->exact[i], subject))
				return update_digest(bp);
		if (r->nexact >= BOOT_POLICY_LIST_MAX)
			return -E2BIG;
		v = realloc(r->exact, (r->nexact + 2) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->exact = v;
		v[r->nexact] = strdup(subject);
		if (!v[r->nexact])
			return -ENOMEM;
		r->nexact++;
		r->set = true;
		rc = 0;
	} else {
		seterr(why, whylen, "a %s finding teaches the policy nothing; approving only closes it",
		       category);
		return -EINVAL;
	}
	if (rc == 0)
		rc = update_digest(bp);
	if (rc)
		seterr(why, whylen, "%s", strerror(-rc));
	return rc;
}
