/* Helpers shared by attestctl subcommands (see util.h). */
#include "verifier/attestctl/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int attestctl_map_file(const char *path, const uint8_t **buf, size_t *len)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto cleanup;
	}
	*len = (size_t)st.st_size;
	*buf = NULL;
	if (*len == 0)
		goto cleanup;
	p = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		rc = -errno;
		goto cleanup;
	}
	(void)madvise(p, *len, MADV_SEQUENTIAL);
	*buf = p;
cleanup:
	close(fd);
	return rc;
}

void attestctl_unmap_file(const uint8_t *buf, size_t len)
{
	if (buf && len)
		munmap((void *)buf, len);
}
