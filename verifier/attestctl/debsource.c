/* The command-line source of package versions (debpkg.h: struct deb_source). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/attestctl/debpkg.h"
#include "verifier/policy/policy.h"

int deb_source_option(struct deb_source *s, int argc, char **argv, int *i)
{
	const char *o = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	char err[512];

	if (!strcmp(o, "--all-packages")) {
		s->sel.all = true;
		return 1;
	}
	if (strcmp(o, "--deb") && strcmp(o, "--apt-repo") && strcmp(o, "--keyring") &&
	    strcmp(o, "--dist") && strcmp(o, "--package") && strcmp(o, "--selections") &&
	    strcmp(o, "--hash"))
		return 0;
	if (!v) {
		fprintf(stderr, "attestctl: %s needs a value\n", o);
		return -1;
	}
	(*i)++;
	if (!strcmp(o, "--deb") || !strcmp(o, "--package")) {
		const char ***list = !strcmp(o, "--deb") ? &s->debs : &s->sel.names;
		size_t *n = !strcmp(o, "--deb") ? &s->ndebs : &s->sel.nnames;
		const char **nl = realloc(*list, (*n + 1) * sizeof(*nl));

		if (!nl)
			return -1;
		*list = nl;
		(*list)[(*n)++] = v;
	} else if (!strcmp(o, "--apt-repo")) {
		s->repo = v;
	} else if (!strcmp(o, "--keyring")) {
		s->keyring = v;
	} else if (!strcmp(o, "--dist")) {
		s->dist = v;
	} else if (!strcmp(o, "--selections")) {
		if (s->selections_text) {
			fprintf(stderr, "attestctl: --selections given twice\n");
			return -1;
		}
		if (deb_selections_read(v, &s->selections_text, &s->sel.names, &s->sel.nnames, err,
					sizeof(err))) {
			fprintf(stderr, "attestctl: --selections: %s\n", err);
			return -1;
		}
	} else {
		uint16_t alg = policy_alg_from_name(v, strlen(v));

		if (!alg || s->h.n == sizeof(s->h.alg) / sizeof(s->h.alg[0])) {
			fprintf(stderr, "attestctl: --hash must be sha1, sha256, sha384 or sha512\n");
			return -1;
		}
		for (size_t k = 0; k < s->h.n; k++)
			if (s->h.alg[k] == alg)
				return 1;
		s->h.alg[s->h.n++] = alg;
	}
	return 1;
}

int deb_source_check(struct deb_source *s)
{
	if (!s->h.n)
		s->h.alg[s->h.n++] = policy_alg_from_name("sha256", 6);
	if (s->repo && !s->keyring) {
		fprintf(stderr, "attestctl: --apt-repo needs --keyring FILE: the archive's signing keys (gpg --export, not armored)\n");
		return -1;
	}
	if (!s->repo && (s->keyring || s->dist || s->sel.all || s->sel.nnames)) {
		fprintf(stderr, "attestctl: --keyring, --dist, --package, --selections and --all-packages choose from an --apt-repo\n");
		return -1;
	}
	if (s->repo && !s->sel.all && !s->sel.nnames) {
		fprintf(stderr, "attestctl: --apt-repo: choose packages with --package NAME, --selections FILE or --all-packages\n");
		return -1;
	}
	return 0;
}

int deb_source_read(const struct deb_source *s, json_t *versions, size_t *skipped, char *err,
		    size_t errlen)
{
	for (size_t i = 0; i < s->ndebs; i++) {
		char why[768];
		json_t *v;
		int rc = deb_read(s->debs[i], &s->h, NULL, &v, skipped, why, sizeof(why));

		if (rc) {
			snprintf(err, errlen, "%s: %s", s->debs[i], why);
			return rc;
		}
		json_array_append_new(versions, v);
	}
	if (s->repo)
		return deb_repo_read(s->repo, s->dist, s->keyring, &s->sel, &s->h, versions, skipped,
				     err, errlen);
	return 0;
}

void deb_source_release(struct deb_source *s)
{
	free(s->debs);
	free(s->sel.names);
	free(s->selections_text);
	memset(s, 0, sizeof(*s));
}
