/*
 * debpkg: what attestctl reads from Debian packages and archives to build a package-aware
 * policy (policies/README.md, "Packages"). A .deb is read with libarchive (its ar container,
 * the control and data tarballs and whatever compression they use); an archive's Release is
 * verified with gpgv, and each Packages index and .deb is checked against the SHA-256 the signed
 * Release chain gives before anything in it is used.
 *
 * Every function returns 0 or -errno and, on failure, writes a one-line reason into err.
 * JSON values returned are new references the caller json_decref()s.
 */
#ifndef VERIFIER_ATTESTCTL_DEBPKG_H
#define VERIFIER_ATTESTCTL_DEBPKG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* The algorithms to hash each file with (TPM2_ALG_IDs), as IMA's ima_hash may be set. */
struct deb_hashes {
	uint16_t alg[4];
	size_t n;
};

/* What the signed archive says a .deb is: checked while the .deb is read. NULL: a loose file. */
struct deb_expect {
	const char *package, *version, *architecture;
	uint8_t sha256[32];
	uint64_t size;
};

/*
 * Reads the .deb at `file` into one package version of a policy's "packages" list: {package,
 * version, architecture, files, files_hex, conffiles, conffiles_hex} (policy.h's format). Every
 * regular file of the data archive is hashed under the path dpkg installs it to (spaces as
 * '_', as IMA records them; a hard link gets its target's digests); directories, symlinks and
 * device files are skipped (*skipped counts them). With `expect`, the bytes read must have its
 * size and SHA-256 and the control fields its name, version and architecture, else the whole
 * read fails.
 */
int deb_read(const char *file, const struct deb_hashes *h, const struct deb_expect *expect,
	     json_t **version, size_t *skipped, char *err, size_t errlen);

/* Which packages of an archive to take. */
struct deb_selection {
	bool all;
	const char **names; /* "name" or "name:arch" */
	size_t nnames;
	/* names from this index on may be absent from the archive (a policy's, in an update:
	 * a package the archive dropped is retired, not an error); 0 with has_optional false: none */
	size_t optional_from;
	bool has_optional;
};

/*
 * Adds to names the packages a `dpkg --get-selections` file marks install or hold ("name" or
 * "name:arch" each; deinstall and purge are left out). names is a growing array the caller
 * frees (not its strings, which point into *text, also the caller's to free).
 */
int deb_selections_read(const char *file, char **text, const char ***names, size_t *n,
			char *err, size_t errlen);

/*
 * The package versions of a signed archive: DIR's InRelease (or Release with Release.gpg),
 * verified with `gpgv --keyring KEYRING`; dist NULL for a flat repository (apt-ftparchive in one
 * directory: Release and Packages in DIR), else DIR/dists/DIST (a mirror; .deb paths are relative
 * to DIR). Every Packages index the Release lists and DIR holds is checked against its SHA-256 and
 * size; each chosen .deb is then read by deb_read() with what its Packages entry says. A selected
 * name the archive lacks fails the run. Appends one version object per .deb to `versions`.
 */
int deb_repo_read(const char *dir, const char *dist, const char *keyring,
		  const struct deb_selection *sel, const struct deb_hashes *h, json_t *versions,
		  size_t *skipped, char *err, size_t errlen);

#endif

/*
 * Where package versions come from, as policy-gen and policy update take it on the command
 * line: .deb files, or an archive with its keyring, suite and selection, and the algorithms.
 */
struct deb_source {
	const char **debs;
	size_t ndebs;
	const char *repo, *dist, *keyring;
	struct deb_selection sel;
	char *selections_text; /* the --selections file's text, which sel.names point into */
	struct deb_hashes h;
};

/*
 * Takes argv[*i] (and its value, moving *i) when it is one of --deb FILE, --apt-repo DIR,
 * --keyring FILE, --dist SUITE, --package NAME, --selections FILE, --all-packages, --hash ALG:
 * 1 taken, 0 not an option of these, -1 after a message (a bad value).
 */
int deb_source_option(struct deb_source *s, int argc, char **argv, int *i);
/* Checks the combination (after the options): 0, or -1 after a message. sha256 by default. */
int deb_source_check(struct deb_source *s);
/* Every version the source gives, appended to versions. */
int deb_source_read(const struct deb_source *s, json_t *versions, size_t *skipped, char *err,
		    size_t errlen);
void deb_source_release(struct deb_source *s);
