/*
 * attestctl policy-gen DIR [--exclude REGEX]... [--hash ALG] [--prefix /] [--out FILE]
 *
 * Hashes every regular file under DIR (a guest root tree; symlinks are not followed, other file
 * types are skipped) into a policy in our format, keyed by the path the guest will see: DIR
 * replaced by --prefix, spaces written as '_' because IMA records them so. Each --exclude is an
 * ERE matched against that whole path: matching files are not hashed and the pattern goes into
 * the policy's excludes, so the verifier accepts whatever they hold at run time. boot_aggregate is
 * left to the quoted PCRs. Exit 0, 2 for usage or I/O errors (a file that cannot be read fails the
 * run: a policy silently missing a binary would fail attestation later, far from the cause).
 *
 * attestctl policy-gen --deb FILE.deb... | --apt-repo DIR --keyring FILE [--dist SUITE]
 *                      (--package NAME... | --selections FILE | --all-packages)
 *                      [--hash ALG]... [--conffiles packaged|any] [--exclude REGEX]... [--out FILE]
 *
 * The same from Debian packages (debpkg.h): each package version with the digests of the files
 * it installs, read from the .deb without installing it, from a signed archive when --apt-repo.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "proto/alg.h"
#include "proto/limits.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/debpkg.h"
#include "verifier/policy/policy.h"

static const char usage_text[] =
	"usage: attestctl policy-gen DIR [--exclude REGEX]... [--hash sha1|sha256|sha384|sha512]\n"
	"                            [--prefix /] [--out FILE]\n"
	"       attestctl policy-gen (--deb FILE.deb... | --apt-repo DIR --keyring FILE [--dist SUITE]\n"
	"                            (--package NAME... | --selections FILE | --all-packages))\n"
	"                            [--hash ALG]... [--conffiles packaged|any] [--exclude REGEX]...\n"
	"                            [--out FILE]\n";

/* nftw() passes no user pointer: the walk's state lives here for the one walk in progress. */
static struct gen {
	struct policy *pol;
	const EVP_MD *md;
	uint16_t alg;
	size_t strip;        /* bytes of DIR to drop from each walked path */
	const char *prefix;  /* guest prefix without a trailing '/' ("" for "/") */
	size_t files, skipped;
	int failed;
} gen;

static int hash_file(const char *fpath, uint8_t *out, unsigned int *outlen)
{
	EVP_MD_CTX *ctx = NULL;
	struct stat st;
	uint8_t buf[65536];
	ssize_t n;
	int fd, rc = -EIO;

	/* O_NOFOLLOW and fstat: the file is still the regular file nftw saw, not a swapped link. */
	fd = open(fpath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto out;
	}
	ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestInit_ex(ctx, gen.md, NULL) != 1)
		goto out;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1)
			goto out;
	}
	if (EVP_DigestFinal_ex(ctx, out, outlen) != 1)
		goto out;
	rc = 0;
out:
	EVP_MD_CTX_free(ctx);
	close(fd);
	return rc;
}

static int visit(const char *fpath, const struct stat *sb, int type, struct FTW *ftw)
{
	char path[LIMIT_IMA_PATH + 1];
	uint8_t d[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;
	const char *rel;
	int n, r;

	if (type == FTW_DNR || type == FTW_NS) {
		fprintf(stderr, "attestctl: cannot read \"%s\"\n", fpath);
		gen.failed = 1;
		return 0;
	}
	if (type != FTW_F || !S_ISREG(sb->st_mode)) {
		if (type == FTW_F)
			gen.skipped++;
		return 0;
	}
	rel = fpath + gen.strip;
	n = snprintf(path, sizeof(path), "%s%s%s", gen.prefix, rel[0] == '/' ? "" : "/", rel);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		fprintf(stderr, "attestctl: path longer than %u bytes: \"%s\"\n", LIMIT_IMA_PATH,
			fpath);
		gen.failed = 1;
		return 0;
	}
	for (char *c = path; *c; c++)
		if (*c == ' ')
			*c = '_';
	/* Not in the table yet, so the policy answers EXCLUDED exactly when a pattern matches. */
	if (policy_check(gen.pol, path, (size_t)n, 0, NULL, 0) == POLICY_EXCLUDED) {
		gen.skipped++;
		return 0;
	}
	r = hash_file(fpath, d, &dlen);
	if (r == 0)
		r = policy_add_digest(gen.pol, path, gen.alg, d, dlen);
	if (r < 0) {
		fprintf(stderr, "attestctl: cannot add \"%s\" as \"%s\": %s\n", fpath, path,
			r == -EINVAL ? "not a regular file, or a path that is not UTF-8"
				     : strerror(-r));
		gen.failed = 1;
		return 0;
	}
	gen.files++;
	return 0;
}

/* The policy of package versions: built as JSON, then loaded and written back by the engine, so
 * what is written is what the verifier will read (and a format error fails here). */
static char *packages_policy(const struct deb_source *src, const struct policy *excl,
			     const char *conffiles, size_t *nversions, size_t *skipped)
{
	json_t *root = json_pack("{s:i, s:[], s:s, s:s}", "version", 1, "packages", "violations",
				 "fail", "boot_aggregate", "any-matching-pcrs");
	char err[1024], *text = NULL, *out = NULL, *ex = NULL;
	struct policy *p = NULL;
	json_t *exj = NULL;

	if (!root)
		return NULL;
	if (deb_source_read(src, json_object_get(root, "packages"), skipped, err, sizeof(err))) {
		fprintf(stderr, "attestctl: %s\n", err);
		goto out;
	}
	*nversions = json_array_size(json_object_get(root, "packages"));
	/* The --exclude patterns as the engine keeps them. */
	ex = policy_to_json(excl);
	exj = ex ? json_loads(ex, 0, NULL) : NULL;
	if (!exj || json_object_set(root, "excludes", json_object_get(exj, "excludes")) ||
	    (conffiles && json_object_set_new(root, "conffiles", json_string(conffiles))))
		goto out;
	text = json_dumps(root, JSON_COMPACT);
	p = text ? policy_load(text, strlen(text), err, sizeof(err)) : NULL;
	if (!p) {
		fprintf(stderr, "attestctl: the packages make no valid policy: %s\n", text ? err : "out of memory");
		goto out;
	}
	out = policy_to_json(p);
out:
	policy_free(p);
	free(text);
	free(ex);
	json_decref(exj);
	json_decref(root);
	return out;
}

int cmd_policy_gen(int argc, char **argv)
{
	const char *dir = NULL, *out_path = NULL, *hash = "sha256", *prefix = "/", *conffiles = NULL;
	struct deb_source src = {0};
	size_t nversions = 0;
	char *root = NULL, *pfx = NULL, *json = NULL;
	struct stat st;
	FILE *f = NULL;
	size_t len;
	int rc = 2, r;

	memset(&gen, 0, sizeof(gen));
	gen.pol = policy_new();
	if (!gen.pol) {
		fprintf(stderr, "attestctl: out of memory\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		int taken = deb_source_option(&src, argc, argv, &i);

		if (taken < 0)
			goto out;
		if (taken)
			continue;
		if (!strcmp(argv[i], "--conffiles") && i + 1 < argc) {
			conffiles = argv[++i];
			if (strcmp(conffiles, "packaged") && strcmp(conffiles, "any")) {
				fprintf(stderr, "attestctl: --conffiles must be packaged or any\n");
				goto out;
			}
		} else if (!strcmp(argv[i], "--exclude") && i + 1 < argc) {
			r = policy_add_exclude(gen.pol, argv[++i]);
			if (r < 0) {
				fprintf(stderr, "attestctl: bad --exclude \"%s\": %s\n", argv[i],
					r == -EINVAL ? "not a POSIX extended regex" : strerror(-r));
				goto out;
			}
		} else if (!strcmp(argv[i], "--prefix") && i + 1 < argc) {
			prefix = argv[++i];
		} else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
			out_path = argv[++i];
		} else if (argv[i][0] != '-' && !dir) {
			dir = argv[i];
		} else {
			fputs(usage_text, stderr);
			goto out;
		}
	}
	if (src.ndebs || src.repo) {
		if (dir || strcmp(prefix, "/")) {
			fprintf(stderr, "attestctl: a DIR or --prefix does not go with --deb or --apt-repo\n");
			goto out;
		}
		if (deb_source_check(&src))
			goto out;
		json = packages_policy(&src, gen.pol, conffiles, &nversions, &gen.skipped);
		if (!json)
			goto out;
		goto write;
	}
	if (!dir || conffiles || deb_source_check(&src) || src.h.n > 1) {
		if (src.h.n > 1)
			fprintf(stderr, "attestctl: one --hash for a DIR\n");
		fputs(usage_text, stderr);
		goto out;
	}
	hash = policy_alg_name(src.h.alg[0]);
	gen.alg = policy_alg_from_name(hash, strlen(hash));
	gen.md = alg_evp_md(alg_by_id(gen.alg));
	if (!gen.md) {
		fprintf(stderr, "attestctl: --hash must be sha1, sha256, sha384 or sha512\n");
		goto out;
	}
	if (prefix[0] != '/') {
		fprintf(stderr, "attestctl: --prefix must start with '/'\n");
		goto out;
	}
	pfx = strdup(prefix);
	root = strdup(dir);
	if (!pfx || !root)
		goto out;
	for (len = strlen(pfx); len > 0 && pfx[len - 1] == '/'; len--)
		pfx[len - 1] = '\0';
	gen.prefix = pfx;
	for (len = strlen(root); len > 1 && root[len - 1] == '/'; len--)
		root[len - 1] = '\0';
	gen.strip = strcmp(root, "/") == 0 ? 0 : len;
	if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "attestctl: \"%s\" is not a directory\n", dir);
		goto out;
	}
	if (nftw(root, visit, 64, FTW_PHYS) != 0) {
		fprintf(stderr, "attestctl: walking \"%s\" failed: %s\n", dir, strerror(errno));
		goto out;
	}
	if (gen.failed)
		goto out;
	json = policy_to_json(gen.pol);
	if (!json) {
		fprintf(stderr, "attestctl: out of memory\n");
		goto out;
	}
write:
	f = out_path ? fopen(out_path, "w") : stdout;
	if (!f) {
		fprintf(stderr, "attestctl: cannot write \"%s\": %s\n", out_path, strerror(errno));
		goto out;
	}
	fputs(json, f);
	fputc('\n', f);
	r = out_path ? fclose(f) : fflush(f);
	if (r != 0) {
		fprintf(stderr, "attestctl: writing the policy failed: %s\n", strerror(errno));
		goto out;
	}
	if (src.ndebs || src.repo)
		fprintf(stderr, "%zu package versions, skipped %zu members (directories, links, devices)\n",
			nversions, gen.skipped);
	else
		fprintf(stderr, "hashed %zu files, skipped %zu (excluded or not regular)\n", gen.files,
			gen.skipped);
	rc = 0;
out:
	free(json);
	free(root);
	free(pfx);
	policy_free(gen.pol);
	gen.pol = NULL;
	deb_source_release(&src);
	return rc;
}
