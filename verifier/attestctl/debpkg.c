/*
 * One .deb into a package version of a policy (debpkg.h). libarchive reads the ar container and,
 * member by member, the control and data tarballs inside it (gzip, xz, zstd or none), streamed:
 * no temporary files, nothing unpacked to disk. The file's own bytes are hashed as they are
 * read, so what is checked against the archive's SHA-256 is exactly what was read.
 */
#include "verifier/attestctl/debpkg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "proto/alg.h"
#include "proto/encoding.h"
#include "proto/limits.h"
#include "proto/text.h"
#include "verifier/attestctl/deb822.h"
#include "verifier/policy/policy.h"
#include "verifier/policy/policy_json.h"

#define DEB_BLOCK 65536u
/* A control tarball's member (control, conffiles) is a few KB; md5sums of a large package MBs. */
#define DEB_CONTROL_MEMBER_MAX (4u * 1024u * 1024u)

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

/* The .deb file, read through this so that its bytes are hashed as libarchive takes them. */
struct deb_file {
	int fd;
	EVP_MD_CTX *sha256;
	uint64_t size;
	uint8_t buf[DEB_BLOCK];
};

static la_ssize_t file_read(struct archive *a, void *arg, const void **out)
{
	struct deb_file *f = arg;
	ssize_t n;

	do
		n = read(f->fd, f->buf, sizeof(f->buf));
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		archive_set_error(a, errno, "read failed");
		return -1;
	}
	if (n && EVP_DigestUpdate(f->sha256, f->buf, (size_t)n) != 1) {
		archive_set_error(a, EIO, "sha256 failed");
		return -1;
	}
	f->size += (uint64_t)n;
	*out = f->buf;
	return n;
}

/* An inner tarball read from the outer archive's current member. */
struct member {
	struct archive *outer;
	uint8_t buf[DEB_BLOCK];
};

static la_ssize_t member_read(struct archive *a, void *arg, const void **out)
{
	struct member *m = arg;
	la_ssize_t n = archive_read_data(m->outer, m->buf, sizeof(m->buf));

	if (n < 0)
		archive_set_error(a, EIO, "%s", archive_error_string(m->outer));
	*out = m->buf;
	return n;
}

static struct archive *member_open(struct member *m)
{
	struct archive *in = archive_read_new();

	if (!in)
		return NULL;
	archive_read_support_filter_all(in);
	archive_read_support_format_tar(in);
	archive_read_support_format_gnutar(in);
	if (archive_read_open(in, m, NULL, member_read, NULL) != ARCHIVE_OK) {
		archive_read_free(in);
		return NULL;
	}
	return in;
}

/* The path a tar member installs to: "./usr/bin/x" -> "/usr/bin/x"; spaces as IMA writes them. */
static int installed_path(const char *name, char *out, size_t cap, size_t *len)
{
	size_t n;

	if (name[0] == '.' && name[1] == '/')
		name++;
	else if (name[0] == '.' && name[1] == '\0')
		name = "/";
	n = strlen(name);
	if (n + 2 > cap || n == 0)
		return -ENAMETOOLONG;
	if (name[0] != '/')
		*out++ = '/', cap--;
	memcpy(out, name, n + 1);
	for (size_t i = 0; i < n; i++)
		if (out[i] == ' ')
			out[i] = '_';
	*len = n + (name[0] != '/');
	/* A name that climbs out of the root is not something dpkg installs. */
	if (strstr(out, "/../") || (n >= 3 && !strcmp(out + strlen(out) - 3, "/..")))
		return -EINVAL;
	return 0;
}

/* json key in files (UTF-8) or files_hex (hex of the bytes), as the policy format says. */
static json_t *files_table(json_t *version, const char *path, size_t len, char *key, bool *hex)
{
	*hex = !text_is_utf8(path, len);
	if (*hex) {
		json_t *t = json_object_get(version, "files_hex");

		hex_encode((const uint8_t *)path, len, key);
		if (!t) {
			t = json_object();
			json_object_set_new(version, "files_hex", t);
		}
		return t;
	}
	memcpy(key, path, len + 1);
	return json_object_get(version, "files");
}

static int hash_data(struct archive *in, const struct deb_hashes *h, json_t **list)
{
	EVP_MD_CTX *ctx[4] = {0};
	uint8_t buf[DEB_BLOCK], d[EVP_MAX_MD_SIZE];
	unsigned int dlen;
	la_ssize_t n;
	int rc = -EIO;

	*list = json_array();
	if (!*list)
		return -ENOMEM;
	for (size_t i = 0; i < h->n; i++) {
		ctx[i] = EVP_MD_CTX_new();
		if (!ctx[i] || EVP_DigestInit_ex(ctx[i], alg_evp_md(alg_by_id(h->alg[i])), NULL) != 1)
			goto out;
	}
	while ((n = archive_read_data(in, buf, sizeof(buf))) > 0)
		for (size_t i = 0; i < h->n; i++)
			if (EVP_DigestUpdate(ctx[i], buf, (size_t)n) != 1)
				goto out;
	if (n < 0)
		goto out;
	for (size_t i = 0; i < h->n; i++) {
		if (EVP_DigestFinal_ex(ctx[i], d, &dlen) != 1 ||
		    json_array_append_new(*list, policy_json_digest_string(h->alg[i], d)))
			goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; i < h->n; i++)
		EVP_MD_CTX_free(ctx[i]);
	if (rc) {
		json_decref(*list);
		*list = NULL;
	}
	return rc;
}

/* The data tarball: each regular file hashed into the version's files. */
static int read_data(struct archive *in, json_t *version, const struct deb_hashes *h,
		     size_t *skipped, char *err, size_t errlen)
{
	char path[LIMIT_IMA_PATH + 2], key[2 * LIMIT_IMA_PATH + 2], target[LIMIT_IMA_PATH + 2];
	char tkey[2 * LIMIT_IMA_PATH + 2];
	struct archive_entry *e;
	size_t len, tlen;
	bool hex, thex;
	int r;

	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e), *link = archive_entry_hardlink(e);
		json_t *list = NULL, *tab;

		if (!name || installed_path(name, path, sizeof(path), &len) || len > LIMIT_IMA_PATH) {
			seterr(err, errlen, "data archive member \"%.200s\": not a path dpkg installs",
			       name ? name : "(none)");
			return -EINVAL;
		}
		if (link) {
			/* A hard link holds its target's content: IMA measures it under its own name. */
			json_t *tt;

			if (installed_path(link, target, sizeof(target), &tlen) || tlen > LIMIT_IMA_PATH) {
				seterr(err, errlen, "hard link \"%.200s\": bad target", name);
				return -EINVAL;
			}
			tt = files_table(version, target, tlen, tkey, &thex);
			list = tt ? json_object_get(tt, tkey) : NULL;
			if (!list) {
				/* A link to a directory or symlink is no file either. */
				(*skipped)++;
				continue;
			}
			tab = files_table(version, path, len, key, &hex);
			if (json_object_set_new(tab, key, json_deep_copy(list)))
				return -ENOMEM;
			continue;
		}
		if (archive_entry_filetype(e) != AE_IFREG) {
			(*skipped)++;
			continue;
		}
		r = hash_data(in, h, &list);
		if (r) {
			seterr(err, errlen, "reading \"%.200s\" from the data archive failed: %s", name,
			       archive_error_string(in) ? archive_error_string(in) : strerror(-r));
			return r;
		}
		tab = files_table(version, path, len, key, &hex);
		if (!tab || json_object_set_new(tab, key, list))
			return -ENOMEM;
	}
	if (r != ARCHIVE_EOF) {
		seterr(err, errlen, "data archive: %s", archive_error_string(in));
		return -EINVAL;
	}
	return 0;
}

/* A member of the control tarball into a new NUL-terminated string. */
static char *read_text(struct archive *in, size_t *len)
{
	char *s = NULL;
	size_t cap = 0, n = 0;
	la_ssize_t r;

	for (;;) {
		if (n + DEB_BLOCK + 1 > cap) {
			char *ns;

			if (cap >= DEB_CONTROL_MEMBER_MAX) {
				free(s);
				return NULL;
			}
			cap = cap ? 2 * cap : DEB_BLOCK + 1;
			ns = realloc(s, cap);
			if (!ns) {
				free(s);
				return NULL;
			}
			s = ns;
		}
		r = archive_read_data(in, s + n, DEB_BLOCK);
		if (r < 0) {
			free(s);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	s[n] = '\0';
	*len = n;
	return s;
}

/* The control tarball: the fields that name the version, and the conffiles list. */
static int read_control(struct archive *in, json_t *version, char **conffiles, char *err,
			size_t errlen)
{
	static const char *const fields[][2] = {{"Package", "package"}, {"Version", "version"},
						 {"Architecture", "architecture"}};
	struct archive_entry *e;
	bool have_control = false;
	int r;

	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		size_t len;
		char *text;

		if (!name)
			continue;
		if (name[0] == '.' && name[1] == '/')
			name += 2;
		if (strcmp(name, "control") && strcmp(name, "conffiles"))
			continue;
		text = read_text(in, &len);
		if (!text) {
			seterr(err, errlen, "control archive: \"%s\" unreadable or too large", name);
			return -EINVAL;
		}
		if (!strcmp(name, "conffiles")) {
			free(*conffiles);
			*conffiles = text;
			continue;
		}
		have_control = true;
		for (size_t i = 0; i < 3; i++) {
			char *v = deb822_field(text, len, fields[i][0]);

			if (!v || !*v || strchr(v, '\n')) {
				seterr(err, errlen, "control file: no single-line \"%s\" field", fields[i][0]);
				free(v);
				free(text);
				return -EINVAL;
			}
			json_object_set_new(version, fields[i][1], json_string(v));
			free(v);
		}
		free(text);
	}
	if (r != ARCHIVE_EOF || !have_control) {
		seterr(err, errlen, "control archive: %s",
		       r != ARCHIVE_EOF ? archive_error_string(in) : "no control file");
		return -EINVAL;
	}
	return 0;
}

/*
 * conffiles lines: "/etc/foo.conf", or since dpkg 1.20 a flag first ("remove-on-upgrade
 * /etc/foo.conf"). Each must be among the files: dpkg refuses a conffile the package lacks.
 */
static int mark_conffiles(json_t *version, const char *text, char *err, size_t errlen)
{
	char path[LIMIT_IMA_PATH + 2], key[2 * LIMIT_IMA_PATH + 2];
	const char *p = text;

	while (*p) {
		size_t n = strcspn(p, "\n"), len;
		char line[LIMIT_IMA_PATH + 64];
		const char *f = line;
		json_t *tab, *list;
		bool hex;

		if (n >= sizeof(line)) {
			seterr(err, errlen, "conffiles: a line longer than %zu bytes", sizeof(line));
			return -EINVAL;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (p[n] == '\n');
		while (n && (line[n - 1] == ' ' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (!n)
			continue;
		if (line[0] != '/') {
			f = strchr(line, ' ');
			if (!f || f[1] != '/') {
				seterr(err, errlen, "conffiles: \"%.200s\" is not a path", line);
				return -EINVAL;
			}
			f++;
		}
		if (installed_path(f, path, sizeof(path), &len)) {
			seterr(err, errlen, "conffiles: \"%.200s\" is not a path", f);
			return -EINVAL;
		}
		tab = files_table(version, path, len, key, &hex);
		list = json_object_get(version, hex ? "conffiles_hex" : "conffiles");
		if (!tab || !json_object_get(tab, key)) {
			seterr(err, errlen, "conffiles: \"%.200s\" is not a file of the package", f);
			return -EINVAL;
		}
		if (!list) {
			list = json_array();
			json_object_set_new(version, hex ? "conffiles_hex" : "conffiles", list);
		}
		json_array_append_new(list, json_string(key));
	}
	return 0;
}

static int check_expected(const json_t *version, const struct deb_expect *x, char *err,
			  size_t errlen)
{
	const char *want[3] = {x->package, x->version, x->architecture};
	static const char *const key[3] = {"package", "version", "architecture"};

	for (int i = 0; i < 3; i++) {
		const char *got = json_string_value(json_object_get(version, key[i]));

		if (!got || strcmp(got, want[i])) {
			seterr(err, errlen, "its control file says %s \"%.100s\", the signed Packages index \"%.100s\"",
			       key[i], got ? got : "", want[i]);
			return -EINVAL;
		}
	}
	return 0;
}

int deb_read(const char *file, const struct deb_hashes *h, const struct deb_expect *expect,
	     json_t **version, size_t *skipped, char *err, size_t errlen)
{
	struct deb_file *f = calloc(1, sizeof(*f));
	struct member *m = calloc(1, sizeof(*m));
	struct archive *outer = NULL;
	struct archive_entry *e;
	char *conffiles = NULL, member_err[256] = "";
	uint8_t got[32];
	unsigned int glen = 0;
	bool control = false, data = false;
	json_t *v = json_pack("{s:{}}", "files");
	int rc = -EINVAL, r;

	*version = NULL;
	if (!f || !m || !v) {
		seterr(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	f->fd = -1;
	f->fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (f->fd < 0) {
		rc = -errno;
		seterr(err, errlen, "cannot open: %s", strerror(errno));
		goto out;
	}
	f->sha256 = EVP_MD_CTX_new();
	outer = archive_read_new();
	if (!f->sha256 || EVP_DigestInit_ex(f->sha256, EVP_sha256(), NULL) != 1 || !outer) {
		seterr(err, errlen, "out of memory");
		goto out;
	}
	archive_read_support_format_ar(outer);
	if (archive_read_open(outer, f, NULL, file_read, NULL) != ARCHIVE_OK) {
		seterr(err, errlen, "not a Debian package: %s", archive_error_string(outer));
		goto out;
	}
	m->outer = outer;
	while ((r = archive_read_next_header(outer, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		bool is_control = name && !strncmp(name, "control.tar", 11);
		bool is_data = name && !strncmp(name, "data.tar", 8);
		struct archive *in;

		if (!is_control && !is_data)
			continue;
		/* dpkg's order is debian-binary, control, data: the conffiles are known first. */
		if ((is_control && (control || data)) || (is_data && (data || !control))) {
			seterr(err, errlen, "members out of order or repeated (\"%s\")", name);
			goto out;
		}
		in = member_open(m);
		if (!in) {
			seterr(err, errlen, "\"%s\": not a tar archive libarchive reads", name);
			goto out;
		}
		rc = is_control ? read_control(in, v, &conffiles, member_err, sizeof(member_err))
				: read_data(in, v, h, skipped, member_err, sizeof(member_err));
		archive_read_free(in);
		if (rc) {
			seterr(err, errlen, "%s", member_err);
			goto out;
		}
		rc = -EINVAL;
		control |= is_control;
		data |= is_data;
	}
	if (r != ARCHIVE_EOF || !data) {
		seterr(err, errlen, "not a Debian package: %s",
		       r != ARCHIVE_EOF ? archive_error_string(outer) : "no data archive");
		goto out;
	}
	if (conffiles && (rc = mark_conffiles(v, conffiles, err, errlen)))
		goto out;
	rc = -EINVAL;
	if (expect && (rc = check_expected(v, expect, err, errlen)))
		goto out;
	*version = v;
	v = NULL;
	rc = 0;
out:
	/* Against the signed index, whatever else went wrong: the hash covers the whole file, so
	 * read what libarchive left, and a file that is not the one signed says so first. */
	if (expect && f && f->sha256 && outer) {
		const void *rest;

		while (file_read(outer, f, &rest) > 0)
			;
		if (EVP_DigestFinal_ex(f->sha256, got, &glen) != 1 || f->size != expect->size ||
		    CRYPTO_memcmp(got, expect->sha256, 32)) {
			seterr(err, errlen, "does not match the signed Packages index (%llu bytes, %llu expected; SHA-256 %s)",
			       (unsigned long long)f->size, (unsigned long long)expect->size,
			       glen == 32 && !CRYPTO_memcmp(got, expect->sha256, 32) ? "matches" : "differs");
			json_decref(*version);
			*version = NULL;
			rc = -EBADMSG;
		}
	}
	if (outer)
		archive_read_free(outer);
	if (f) {
		if (f->fd >= 0)
			close(f->fd);
		EVP_MD_CTX_free(f->sha256);
	}
	free(f);
	free(m);
	free(conffiles);
	json_decref(v);
	return rc;
}
