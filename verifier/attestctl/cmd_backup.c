/*
 * attestctl backup FILE [--verifier URL] [--ca FILE] [--token-file FILE]
 *
 * A consistent copy of a running verifier's store (GET /v1/backup, store_backup()) into FILE.
 * The copy is written to a temporary file beside FILE (mode 0600) and synced, checked whole
 * (store_backup_check(): SQLite's integrity check, a schema version), and only then linked to
 * FILE, which is never overwritten: a backup that exists is not replaced by one that failed.
 * Exit: 0 written, 1 the verifier refused or the copy is damaged, 2 usage, I/O or transport
 * error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/online.h"
#include "verifier/store/store.h"

/* Stores are files; this bounds what a confused or hostile answer can write to disk. */
#define BACKUP_MAX_BYTES (1ull << 40)
#define BACKUP_TIMEOUT 3600L /* seconds for the whole transfer */

int cmd_backup(int argc, char **argv)
{
	struct online_opts o;
	const char *out = NULL;
	char tmp[PATH_MAX], uri[PATH_MAX + 8];
	struct stat st;
	uint64_t written = 0;
	int64_t version = 0;
	int fd = -1, ret;

	if ((ret = online_parse_opts(argc, argv, &o, &out)))
		return ret;
	if (!out) {
		fprintf(stderr, "usage: attestctl backup FILE [--verifier URL] [--ca FILE] "
				"[--token-file FILE]\n");
		return 2;
	}
	if (lstat(out, &st) == 0) {
		fprintf(stderr, "attestctl: \"%s\" exists: a backup never replaces a file\n", out);
		return 2;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", out) >= (int)sizeof(tmp)) {
		fprintf(stderr, "attestctl: file name too long\n");
		return 2;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "attestctl: cannot create \"%s\": %s\n", tmp, strerror(errno));
		return 2;
	}
	(void)fchmod(fd, 0600); /* the store holds EK certificates, policies, the fleet's history */
	ret = online_download(&o, "/v1/backup", fd, BACKUP_MAX_BYTES, BACKUP_TIMEOUT, &written);
	if (ret)
		goto fail;
	if (fsync(fd) < 0) {
		fprintf(stderr, "attestctl: cannot write \"%s\": %s\n", tmp, strerror(errno));
		ret = 2;
		goto fail;
	}
	close(fd);
	fd = -1;
	snprintf(uri, sizeof(uri), "sqlite:%s", tmp);
	if (store_backup_check(uri, &version)) {
		fprintf(stderr, "attestctl: the copy the verifier sent is damaged; nothing written\n");
		ret = 1;
		goto fail;
	}
	/* link(2), not rename(2): a file that appeared at out meanwhile is kept. */
	if (link(tmp, out) < 0) {
		fprintf(stderr, "attestctl: cannot create \"%s\": %s\n", out, strerror(errno));
		ret = 2;
		goto fail;
	}
	unlink(tmp);
	if (file_sync_parent(out))
		fprintf(stderr, "attestctl: warning: \"%s\" written but its directory not synced\n",
			out);
	printf("backup %s: %" PRIu64 " bytes, schema version %" PRId64 ", integrity ok\n", out,
	       written, version);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return ret;
}
