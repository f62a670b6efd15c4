/*
 * attestctl policy update NAME --apt-repo DIR --keyring FILE [--dist SUITE]
 *                   [--package NAME... | --selections FILE | --all-packages] [--hash ALG]...
 *                   [--retire-after DAYS] [--dry-run] [--verifier URL] [--ca FILE] [--token-file FILE]
 *
 * Follows a signed archive: reads policy NAME from the verifier, reads the archive as policy-gen
 * --apt-repo does (debpkg.h), and stores what changed as the policy's next version, through the
 * same PUT as any change (history, who and when; the verifier judges agents by it from then on).
 * The packages followed are those the policy holds, plus any chosen here. A version the archive
 * added is added; one it no longer holds is marked "missing_since" (now) and removed once it has
 * been missing for --retire-after days (default 7; 0 removes it at once), so that machines which
 * have not upgraded yet stay trusted for that grace period. A version the archive still has is
 * taken as the archive gives it now. Nothing changed: no new version. Exit 0, 1 the verifier
 * refused, 2 usage, I/O, transport error or an archive that does not verify.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "proto/limits.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/debpkg.h"
#include "verifier/attestctl/online.h"
#include "verifier/api/api_codec.h"
#include "verifier/policy/policy.h"

#define DEFAULT_RETIRE_DAYS 7u
#define MAX_RETIRE_DAYS 3650u

static const char usage_text[] =
	"usage: attestctl policy update NAME --apt-repo DIR --keyring FILE [--dist SUITE]\n"
	"                 [--package NAME... | --selections FILE | --all-packages] [--hash ALG]...\n"
	"                 [--retire-after DAYS] [--dry-run] [--verifier URL] [--ca FILE] [--token-file FILE]\n";

/* "name version arch": one version's identity, into out[cap]. */
static const char *ident(const json_t *v, char *out, size_t cap)
{
	snprintf(out, cap, "%s %s %s", json_string_value(json_object_get(v, "package")),
		 json_string_value(json_object_get(v, "version")),
		 json_string_value(json_object_get(v, "architecture")));
	return out;
}

static json_t *find_version(const json_t *list, const json_t *v)
{
	char a[3 * LIMIT_PACKAGE_FIELD + 4], b[3 * LIMIT_PACKAGE_FIELD + 4];
	json_t *x;
	size_t i;

	ident(v, a, sizeof(a));
	json_array_foreach(list, i, x)
		if (!strcmp(ident(x, b, sizeof(b)), a))
			return x;
	return NULL;
}

/* The algorithms the policy's packages use: the archive is hashed with the same ones. */
static void policy_hashes(const json_t *pkgs, struct deb_hashes *h)
{
	const char *path;
	json_t *v, *list, *d;
	size_t i, k;

	json_array_foreach(pkgs, i, v) {
		json_object_foreach(json_object_get(v, "files"), path, list) {
			json_array_foreach(list, k, d) {
				const char *s = json_string_value(d), *colon = s ? strchr(s, ':') : NULL;
				uint16_t alg = colon ? policy_alg_from_name(s, (size_t)(colon - s)) : 0;
				bool have = false;

				for (size_t j = 0; j < h->n; j++)
					have |= h->alg[j] == alg;
				if (alg && !have && h->n < sizeof(h->alg) / sizeof(h->alg[0]))
					h->alg[h->n++] = alg;
			}
			return; /* every file of a policy-gen policy has the same algorithms */
		}
	}
}

int cmd_policy_update(int argc, char **argv)
{
	struct deb_source src = {0};
	struct api_policy_stored stored;
	struct online_opts o;
	const char *args[1] = {NULL}, **online_argv = calloc((size_t)argc + 1, sizeof(char *));
	unsigned long retire_days = DEFAULT_RETIRE_DAYS;
	bool dry = false;
	int nargs = 0, ret = 2, on = 0;
	json_t *cur = NULL, *fresh = NULL, *out = NULL, *j = NULL;
	char path[512], err[1024], *text = NULL;
	size_t added = 0, kept = 0, missing = 0, retired = 0, returned = 0, skipped = 0, i;
	time_t now = time(NULL);
	json_t *v;

	if (!online_argv)
		return 2;
	/* The archive's options here, the verifier's to online_parse_words(). */
	online_argv[on++] = argv[0];
	for (int k = 1; k < argc; k++) {
		int taken = deb_source_option(&src, argc, argv, &k);

		if (taken < 0)
			goto out;
		if (taken)
			continue;
		if (!strcmp(argv[k], "--retire-after") && k + 1 < argc) {
			char *end;

			errno = 0;
			retire_days = strtoul(argv[++k], &end, 10);
			if (errno || *end || end == argv[k] || argv[k][0] == '-' ||
			    retire_days > MAX_RETIRE_DAYS) {
				fprintf(stderr, "attestctl: --retire-after: days, 0 to %u\n", MAX_RETIRE_DAYS);
				goto out;
			}
		} else if (!strcmp(argv[k], "--dry-run")) {
			dry = true;
		} else {
			online_argv[on++] = argv[k];
		}
	}
	/* argv[0] is "update": the one word after it is the policy's name. */
	if (online_parse_words(on, (char **)online_argv, &o, args, 1, &nargs) || nargs != 1 ||
	    !src.repo || src.ndebs) {
		fputs(usage_text, stderr);
		goto out;
	}
	o.json = false;
	snprintf(path, sizeof(path), "/v1/policies/%s", args[0]);
	if ((ret = online_fetch(&o, HTTP_GET, path, NULL, &cur)))
		goto out;
	ret = 2;
	if (!json_is_object(cur) || !json_object_get(cur, "version")) {
		fprintf(stderr, "attestctl: policy %s is not in our format (a Keylime policy has no packages)\n", args[0]);
		goto out;
	}
	/* Follow what the policy holds, plus what was chosen now. */
	src.sel.optional_from = src.sel.nnames;
	src.sel.has_optional = true;
	json_array_foreach(json_object_get(cur, "packages"), i, v) {
		const char **nn = realloc(src.sel.names, (src.sel.nnames + 1) * sizeof(*nn));

		if (!nn)
			goto out;
		src.sel.names = nn;
		src.sel.names[src.sel.nnames++] = json_string_value(json_object_get(v, "package"));
	}
	if (!src.h.n)
		policy_hashes(json_object_get(cur, "packages"), &src.h);
	if (!src.sel.all && !src.sel.nnames) {
		fprintf(stderr, "attestctl: policy %s holds no packages: choose some with --package, --selections or --all-packages\n",
			args[0]);
		goto out;
	}
	if (deb_source_check(&src))
		goto out;
	fresh = json_array();
	/* A name the policy holds that the archive dropped altogether is a retirement, not an
	 * error (optional_from); one chosen now must be there. */
	if (!fresh || deb_repo_read(src.repo, src.dist, src.keyring, &src.sel, &src.h, fresh,
				    &skipped, err, sizeof(err))) {
		fprintf(stderr, "attestctl: %s\n", fresh ? err : "out of memory");
		goto out;
	}
	out = json_array();
	if (!out)
		goto out;
	json_array_foreach(json_object_get(cur, "packages"), i, v) {
		json_t *now_v = find_version(fresh, v), *ms = json_object_get(v, "missing_since");

		if (now_v) {
			returned += ms != NULL;
			kept++;
			json_array_append(out, now_v);
		} else if (!ms) {
			json_t *c = json_deep_copy(v);

			json_object_set_new(c, "missing_since", json_integer((json_int_t)now));
			json_array_append_new(out, c);
			missing++;
		} else if ((uint64_t)(now - (time_t)json_integer_value(ms)) >= retire_days * 86400u) {
			retired++;
		} else {
			json_array_append(out, v);
			kept++;
		}
	}
	json_array_foreach(fresh, i, v)
		if (!find_version(json_object_get(cur, "packages"), v)) {
			json_array_append(out, v);
			added++;
		}
	printf("policy %s: %zu package versions added, %zu kept, %zu no longer in the archive (kept %lu days), %zu retired, %zu back in the archive\n",
	       args[0], added, kept, missing, retire_days, retired, returned);
	if (!added && !missing && !retired && !returned) {
		printf("policy %s: no change, no new version\n", args[0]);
		ret = 0;
		goto out;
	}
	json_object_set(cur, "packages", out);
	text = json_dumps(cur, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text)
		goto out;
	if (dry) {
		printf("policy %s: --dry-run, nothing stored\n", args[0]);
		ret = 0;
		goto out;
	}
	if ((ret = online_fetch(&o, HTTP_PUT, path, text, &j)))
		goto out;
	api_policy_stored_decode(j, &stored);
	printf("policy %s version %" PRId64 "\n", args[0], stored.version);
	ret = 0;
out:
	/* The names taken from the policy point into cur: released after them. */
	deb_source_release(&src);
	json_decref(cur);
	json_decref(fresh);
	json_decref(out);
	json_decref(j);
	free(text);
	free(online_argv);
	return ret;
}
