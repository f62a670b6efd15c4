/*
 * A signed apt archive into package versions (debpkg.h: deb_repo_read, deb_selections_read).
 * The chain of trust is apt's: the Release text gpgv verified with the operator's keyring ->
 * the SHA-256 and size of each Packages index it lists -> the SHA-256 and size of each .deb
 * such an index lists -> the files in that .deb. Each file is read into memory (or hashed while
 * read) and checked there, so what is verified is what is used; any mismatch fails the run.
 */
#include "verifier/attestctl/debpkg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <archive.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "proto/dynbuf.h"
#include "proto/encoding.h"
#include "proto/limits.h"
#include "verifier/attestctl/deb822.h"

#define GPGV "gpgv"

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* A whole file into b (capped by b's maximum). -ENOENT when it does not exist. */
static int read_file(const char *path, struct dynbuf *b)
{
	char buf[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), rc = 0;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if ((rc = dynbuf_add(b, buf, (size_t)n)))
			break;
	}
	close(fd);
	return rc;
}

static int memfd_with(const char *name, const void *data, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < len) {
		ssize_t n = write(fd, (const char *)data + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/*
 * gpgv --keyring KEYRING [--output -] [SIGFILE] - : the signed text comes on stdin (the bytes in
 * memory, not the file again); with want_output, what gpgv prints (the text an inline signature
 * covers) goes into out. 0 when gpgv says the signature is good, else -EBADMSG with gpgv's words.
 */
static int gpgv_verify(const char *keyring, const char *sigfile, const struct dynbuf *signed_text,
		       struct dynbuf *out, char *err, size_t errlen)
{
	int in = memfd_with("signed", signed_text->buf, signed_text->len);
	int o = memfd_create("gpgv-out", MFD_CLOEXEC), e = memfd_create("gpgv-err", MFD_CLOEXEC);
	char msg[512] = "";
	int status = 0, rc = -EIO;
	pid_t pid;
	ssize_t n;

	if (in < 0 || o < 0 || e < 0) {
		seterr(err, errlen, "memfd_create failed: %s", strerror(errno));
		goto done;
	}
	pid = fork();
	if (pid < 0) {
		seterr(err, errlen, "fork failed: %s", strerror(errno));
		goto done;
	}
	if (pid == 0) {
		char *argv[10];
		int k = 0;

		if (dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(127);
		argv[k++] = (char *)GPGV;
		argv[k++] = (char *)"--keyring";
		argv[k++] = (char *)keyring;
		if (out) {
			argv[k++] = (char *)"--output";
			argv[k++] = (char *)"-";
		}
		argv[k++] = (char *)"--";
		if (sigfile)
			argv[k++] = (char *)sigfile;
		argv[k++] = (char *)"-";
		argv[k] = NULL;
		execvp(GPGV, argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	lseek(e, 0, SEEK_SET);
	n = read(e, msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = '\0';
	for (char *c = msg; *c; c++)
		if (*c == '\n')
			*c = ' ';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		seterr(err, errlen, "gpgv refused the signature%s%s",
		       WIFEXITED(status) && WEXITSTATUS(status) == 127 ? " (is gpgv installed?)" : ": ",
		       msg);
		rc = -EBADMSG;
		goto done;
	}
	rc = 0;
	if (out) {
		char buf[65536];

		lseek(o, 0, SEEK_SET);
		while ((n = read(o, buf, sizeof(buf))) > 0)
			if ((rc = dynbuf_add(out, buf, (size_t)n)))
				break;
	}
done:
	if (in >= 0)
		close(in);
	if (o >= 0)
		close(o);
	if (e >= 0)
		close(e);
	return rc;
}

/* The verified Release text of base (DIR or DIR/dists/DIST) into rel. */
static int release_verified(const char *base, const char *keyring, struct dynbuf *rel, char *err,
			    size_t errlen)
{
	char path[4200], sig[4200];
	struct dynbuf text;
	int rc;

	dynbuf_init(&text, LIMIT_DEB_INDEX_BYTES);
	snprintf(path, sizeof(path), "%s/InRelease", base);
	rc = read_file(path, &text);
	if (rc == 0) {
		rc = gpgv_verify(keyring, NULL, &text, rel, err, errlen);
		if (rc)
			seterr(err + strlen(err), errlen - strlen(err), " (%s)", path);
		goto out;
	}
	if (rc != -ENOENT) {
		seterr(err, errlen, "cannot read %s: %s", path, strerror(-rc));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/Release", base);
	snprintf(sig, sizeof(sig), "%s/Release.gpg", base);
	rc = read_file(path, rel);
	if (rc) {
		seterr(err, errlen, "neither %s/InRelease nor a readable %s (%s)", base, path,
		       strerror(-rc));
		goto out;
	}
	if (access(sig, R_OK)) {
		seterr(err, errlen, "%s has no signature: neither InRelease nor Release.gpg", base);
		rc = -EBADMSG;
		goto out;
	}
	rc = gpgv_verify(keyring, sig, rel, NULL, err, errlen);
	if (rc)
		seterr(err + strlen(err), errlen - strlen(err), " (%s with %s)", path, sig);
out:
	dynbuf_release(&text);
	return rc;
}

/*
 * A signed Release that says until when it is valid (Valid-Until, as Debian's do) is refused
 * after that, as apt refuses it: else whoever serves the mirror could replay an old signed
 * archive forever (no new versions, retired ones kept). RFC 2822 dates in UTC, as apt writes them.
 */
static int release_current(const char *rel, size_t len, const char *base, char *err,
			   size_t errlen)
{
	char *v = deb822_field(rel, len, "Valid-Until");
	struct tm tm = {0};
	const char *end;
	time_t until;
	int rc = 0;

	if (!v)
		return 0;
	end = strptime(v, "%a, %d %b %Y %H:%M:%S", &tm);
	if (!end || (strcmp(end, " UTC") && strcmp(end, " GMT") && strcmp(end, " +0000") && *end)) {
		seterr(err, errlen, "%s: the signed Release's Valid-Until \"%.64s\" is not a date in UTC", base, v);
		rc = -EINVAL;
	} else if ((until = timegm(&tm)) < time(NULL)) {
		seterr(err, errlen, "%s: the signed Release expired (Valid-Until %s): the mirror is stale or replays an old archive", base, v);
		rc = -ESTALE;
	}
	free(v);
	return rc;
}

/* "HEX SIZE PATH" lines of Release's SHA256 field. */
struct indexed {
	char *path;
	uint8_t sha256[32];
	uint64_t size;
};

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s || *end || s[0] == '-' ? -EINVAL : 0;
}

/* " HEX SIZE PATH" into its three words (hex[65], file[cap]); -EINVAL when it is not that. */
static int split_sum_line(const char *line, char *hex, unsigned long long *size, char *file,
			  size_t cap)
{
	char num[24];
	const char *w[3];
	size_t wl[3];
	uint64_t v;

	for (int i = 0; i < 3; i++) {
		line += strspn(line, " \t");
		w[i] = line;
		wl[i] = strcspn(line, " \t\r");
		line += wl[i];
	}
	if (*line && strspn(line, " \t\r") != strlen(line))
		return -EINVAL;
	if (wl[0] != 64 || !wl[1] || wl[1] >= sizeof(num) || !wl[2] || wl[2] >= cap)
		return -EINVAL;
	memcpy(hex, w[0], 64);
	hex[64] = '\0';
	memcpy(num, w[1], wl[1]);
	num[wl[1]] = '\0';
	if (parse_u64(num, &v))
		return -EINVAL;
	*size = v;
	memcpy(file, w[2], wl[2]);
	file[wl[2]] = '\0';
	return 0;
}

/* The name of a Packages index, its compression stripped; NULL when path is not one. */
static bool is_packages_index(const char *path, size_t *stem)
{
	const char *base = strrchr(path, '/');
	static const char *const forms[] = {"Packages", "Packages.gz", "Packages.xz"};

	base = base ? base + 1 : path;
	for (size_t i = 0; i < 3; i++)
		if (!strcmp(base, forms[i])) {
			*stem = (size_t)(base - path) + 8;
			return true;
		}
	return false;
}

/* Decompresses (gz, xz or none) an index held in memory. */
static int decompress(const struct dynbuf *in, struct dynbuf *out, char *err, size_t errlen)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	char buf[65536];
	la_ssize_t n;
	int rc = -EINVAL;

	if (!a)
		return -ENOMEM;
	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	archive_read_support_format_empty(a);
	if (archive_read_open_memory(a, in->buf, in->len) != ARCHIVE_OK) {
		seterr(err, errlen, "%s", archive_error_string(a));
		goto out;
	}
	n = archive_read_next_header(a, &e);
	if (n == ARCHIVE_EOF) {
		rc = 0;
		goto out;
	}
	if (n != ARCHIVE_OK) {
		seterr(err, errlen, "%s", archive_error_string(a));
		goto out;
	}
	while ((n = archive_read_data(a, buf, sizeof(buf))) > 0)
		if ((rc = dynbuf_add(out, buf, (size_t)n))) {
			seterr(err, errlen, "larger than %u bytes", LIMIT_DEB_INDEX_BYTES);
			goto out;
		}
	if (n < 0) {
		seterr(err, errlen, "%s", archive_error_string(a));
		rc = -EINVAL;
		goto out;
	}
	rc = 0;
out:
	archive_read_free(a);
	return rc;
}

/* A .deb an index lists. */
struct candidate {
	char *package, *version, *arch, *filename;
	uint8_t sha256[32];
	uint64_t size;
};

struct repo {
	struct candidate *c;
	size_t n, cap;
};

static void candidate_free(struct candidate *c)
{
	free(c->package);
	free(c->version);
	free(c->arch);
	free(c->filename);
}

static bool selected(const struct deb_selection *sel, const char *name, const char *arch,
		     bool *hit)
{
	if (sel->all)
		return true;
	for (size_t i = 0; i < sel->nnames; i++) {
		const char *s = sel->names[i], *colon = strchr(s, ':');
		size_t n = colon ? (size_t)(colon - s) : strlen(s);

		if (strlen(name) == n && !strncmp(s, name, n) &&
		    (!colon || !strcmp(colon + 1, arch) || !strcmp(arch, "all"))) {
			hit[i] = true;
			return true;
		}
	}
	return false;
}

/* A path inside the archive (Filename, an index's path): relative, never climbing out. */
static bool inside(const char *p)
{
	return p[0] && p[0] != '/' && strncmp(p, "../", 3) && !strstr(p, "/../") &&
	       strcmp(p, "..") && (strlen(p) < 3 || strcmp(p + strlen(p) - 3, "/.."));
}

static int add_candidates(struct repo *r, const struct dynbuf *idx, const char *where,
			  const struct deb_selection *sel, bool *hit, char *err, size_t errlen)
{
	const char *cur = idx->buf, *end = idx->buf + idx->len, *st;
	size_t len;

	while ((st = deb822_next(&cur, end, &len))) {
		struct candidate c = {0};
		char *size = NULL, *sha = NULL;
		bool dup = false;
		int rc = -EINVAL;

		c.package = deb822_field(st, len, "Package");
		c.version = deb822_field(st, len, "Version");
		c.arch = deb822_field(st, len, "Architecture");
		c.filename = deb822_field(st, len, "Filename");
		size = deb822_field(st, len, "Size");
		sha = deb822_field(st, len, "SHA256");
		if (!c.package || !c.version || !c.arch || !c.filename || !size || !sha ||
		    strlen(sha) != 64 || hex_decode(sha, 64, c.sha256, 32) != 32 ||
		    parse_u64(size, &c.size) || !inside(c.filename)) {
			seterr(err, errlen, "%s: a stanza (\"%.100s\") lacks Package, Version, Architecture, a relative Filename, Size or a SHA256",
			       where, c.package ? c.package : "?");
			goto next;
		}
		rc = 0;
		if (!selected(sel, c.package, c.arch, hit))
			goto next;
		/* The same version in several indices (Architecture: all in each binary-ARCH). */
		for (size_t i = 0; i < r->n; i++)
			if (!strcmp(r->c[i].package, c.package) && !strcmp(r->c[i].version, c.version) &&
			    !strcmp(r->c[i].arch, c.arch)) {
				dup = true;
				if (CRYPTO_memcmp(r->c[i].sha256, c.sha256, 32)) {
					seterr(err, errlen, "%s: %s %s %s is listed with two different SHA256",
					       where, c.package, c.version, c.arch);
					rc = -EINVAL;
				}
				break;
			}
		if (dup)
			goto next;
		if (r->n == r->cap) {
			size_t ncap = r->cap ? 2 * r->cap : 64;
			struct candidate *nc = ncap <= LIMIT_POLICY_PACKAGES
				? realloc(r->c, ncap * sizeof(*nc)) : NULL;

			if (!nc) {
				seterr(err, errlen, "more than %u package versions", LIMIT_POLICY_PACKAGES);
				rc = -E2BIG;
				goto next;
			}
			r->c = nc;
			r->cap = ncap;
		}
		r->c[r->n++] = c;
		memset(&c, 0, sizeof(c));
next:
		candidate_free(&c);
		free(size);
		free(sha);
		if (rc)
			return rc;
	}
	return 0;
}

int deb_repo_read(const char *dir, const char *dist, const char *keyring,
		  const struct deb_selection *sel, const struct deb_hashes *h, json_t *versions,
		  size_t *skipped, char *err, size_t errlen)
{
	char base[4096], path[8192], sub[512];
	char *key = realpath(keyring, NULL), *sums = NULL;
	struct dynbuf rel, raw, idx;
	struct repo r = {0};
	bool *hit = calloc(sel->nnames + 1, sizeof(bool));
	char *done_stems = NULL;
	size_t ndone = 0, nindices = 0;
	int rc = -EINVAL;

	dynbuf_init(&rel, LIMIT_DEB_INDEX_BYTES);
	dynbuf_init(&raw, LIMIT_DEB_INDEX_BYTES);
	dynbuf_init(&idx, LIMIT_DEB_INDEX_BYTES);
	if (!hit) {
		rc = -ENOMEM;
		goto out;
	}
	if (!key) {
		seterr(err, errlen, "keyring \"%s\": %s", keyring, strerror(errno));
		goto out;
	}
	if (dist && (!inside(dist) || strchr(dist, '/'))) {
		seterr(err, errlen, "--dist \"%s\": a suite or codename, not a path", dist);
		goto out;
	}
	snprintf(base, sizeof(base), dist ? "%s/dists/%s" : "%s", dir, dist);
	rc = release_verified(base, key, &rel, err, errlen);
	if (rc)
		goto out;
	rc = -EINVAL;
	rc = release_current(rel.buf, rel.len, base, err, errlen);
	if (rc)
		goto out;
	rc = -EINVAL;
	sums = deb822_field(rel.buf, rel.len, "SHA256");
	if (!sums) {
		seterr(err, errlen, "%s: the signed Release lists no SHA256 sums", base);
		goto out;
	}
	/* Every index the Release lists and the directory holds: checked, then read once. */
	for (char *line = sums, *next; line && *line; line = next) {
		char hex[65], file[512];
		unsigned long long size;
		struct indexed ix;
		size_t stem, n;
		bool seen = false;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strspn(line, " \t") == strlen(line))
			continue;
		if (split_sum_line(line, hex, &size, file, sizeof(file)) ||
		    hex_decode(hex, 64, ix.sha256, 32) != 32) {
			seterr(err, errlen, "%s: Release: bad SHA256 line \"%.200s\"", base, line);
			goto out;
		}
		if (!is_packages_index(file, &stem))
			continue;
		if (!inside(file)) {
			seterr(err, errlen, "%s: Release lists \"%.200s\", outside the archive", base, file);
			goto out;
		}
		snprintf(path, sizeof(path), "%s/%s", base, file);
		dynbuf_reset(&raw);
		rc = read_file(path, &raw);
		if (rc == -ENOENT) {
			rc = -EINVAL;
			continue; /* a mirror need not hold every compression of an index */
		}
		if (rc) {
			seterr(err, errlen, "cannot read %s: %s", path, strerror(-rc));
			goto out;
		}
		rc = -EINVAL;
		{
			uint8_t got[32];

			SHA256((const uint8_t *)raw.buf, raw.len, got);
			if (raw.len != size || CRYPTO_memcmp(got, ix.sha256, 32)) {
				seterr(err, errlen, "%s does not match the signed Release (%zu bytes, %llu expected; SHA-256 %s): refusing the archive",
				       path, raw.len, size,
				       CRYPTO_memcmp(got, ix.sha256, 32) ? "differs" : "matches");
				rc = -EBADMSG;
				goto out;
			}
		}
		nindices++;
		/* Read one form of each index (Packages, .gz and .xz hold the same text). */
		n = stem < sizeof(sub) ? stem : sizeof(sub) - 1;
		memcpy(sub, file, n);
		sub[n] = '\0';
		for (size_t i = 0, off = 0; i < ndone; i++, off += strlen(done_stems + off) + 1)
			seen |= !strcmp(done_stems + off, sub);
		if (seen)
			continue;
		{
			size_t have = 0;

			for (size_t i = 0; i < ndone; i++)
				have += strlen(done_stems + have) + 1;
			char *ns = realloc(done_stems, have + n + 1);

			if (!ns) {
				rc = -ENOMEM;
				goto out;
			}
			done_stems = ns;
			memcpy(done_stems + have, sub, n + 1);
			ndone++;
		}
		dynbuf_reset(&idx);
		rc = decompress(&raw, &idx, err, errlen);
		if (!rc)
			rc = add_candidates(&r, &idx, path, sel, hit, err, errlen);
		if (rc)
			goto out;
		rc = -EINVAL;
	}
	if (!nindices) {
		seterr(err, errlen, "%s: the signed Release lists no Packages index that is there", base);
		goto out;
	}
	for (size_t i = 0; i < sel->nnames; i++)
		if (!hit[i] && !(sel->has_optional && i >= sel->optional_from)) {
			seterr(err, errlen, "package \"%s\" is not in the archive", sel->names[i]);
			goto out;
		}
	for (size_t i = 0; i < r.n; i++) {
		struct deb_expect x = {.package = r.c[i].package, .version = r.c[i].version,
				       .architecture = r.c[i].arch, .size = r.c[i].size};
		char why[768];
		json_t *v;

		memcpy(x.sha256, r.c[i].sha256, 32);
		snprintf(path, sizeof(path), "%s/%s", dir, r.c[i].filename);
		rc = deb_read(path, h, &x, &v, skipped, why, sizeof(why));
		if (rc) {
			seterr(err, errlen, "%s (%s %s %s): %s: refusing the archive", path,
			       r.c[i].package, r.c[i].version, r.c[i].arch, why);
			goto out;
		}
		json_array_append_new(versions, v);
	}
	rc = 0;
out:
	for (size_t i = 0; i < r.n; i++)
		candidate_free(&r.c[i]);
	free(r.c);
	free(hit);
	free(key);
	free(sums);
	free(done_stems);
	dynbuf_release(&rel);
	dynbuf_release(&raw);
	dynbuf_release(&idx);
	return rc;
}

int deb_selections_read(const char *file, char **text, const char ***names, size_t *n,
			char *err, size_t errlen)
{
	struct dynbuf b;
	char *save = NULL;
	int rc;

	dynbuf_init(&b, LIMIT_DEB_INDEX_BYTES);
	rc = read_file(file, &b);
	if (rc || dynbuf_add(&b, "", 1)) {
		seterr(err, errlen, "cannot read \"%s\": %s", file, strerror(rc ? -rc : ENOMEM));
		dynbuf_release(&b);
		return rc ? rc : -ENOMEM;
	}
	*text = dynbuf_take(&b, NULL);
	for (char *line = strtok_r(*text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *name = line + strspn(line, " \t"), *state, *rest;
		const char **nn;

		if (!*name || *name == '#')
			continue;
		state = name + strcspn(name, " \t");
		if (!*state) {
			seterr(err, errlen, "\"%s\": \"%.100s\" is not \"NAME STATE\"", file, name);
			return -EINVAL;
		}
		*state++ = '\0';
		state += strspn(state, " \t");
		rest = state + strcspn(state, " \t\r");
		*rest = '\0';
		if (strcmp(state, "install") && strcmp(state, "hold") && strcmp(state, "deinstall") &&
		    strcmp(state, "purge")) {
			seterr(err, errlen, "\"%s\": %s: unknown state \"%.40s\" (install, hold, deinstall, purge)",
			       file, name, state);
			return -EINVAL;
		}
		if (strcmp(state, "install") && strcmp(state, "hold"))
			continue;
		nn = realloc(*names, (*n + 1) * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		*names = nn;
		(*names)[(*n)++] = name;
	}
	return 0;
}
