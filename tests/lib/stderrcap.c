/* stderrcap.h: fd 2 into a temporary file and back. */
#include "tests/lib/stderrcap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cap_fd = -1, saved_fd = -1;

int stderrcap_begin(void)
{
	char path[] = "/tmp/stderrcap.XXXXXX";

	if (cap_fd >= 0)
		return -1;
	cap_fd = mkstemp(path);
	if (cap_fd < 0)
		return -1;
	unlink(path);
	fflush(stderr);
	saved_fd = dup(STDERR_FILENO);
	if (saved_fd < 0 || dup2(cap_fd, STDERR_FILENO) < 0) {
		if (saved_fd >= 0)
			close(saved_fd);
		close(cap_fd);
		cap_fd = saved_fd = -1;
		return -1;
	}
	return 0;
}

void stderrcap_end(char *out, size_t cap)
{
	ssize_t n = 0;

	if (cap)
		out[0] = '\0';
	if (cap_fd < 0)
		return;
	fflush(stderr);
	dup2(saved_fd, STDERR_FILENO);
	close(saved_fd);
	if (cap)
		n = pread(cap_fd, out, cap - 1, 0);
	if (cap)
		out[n > 0 ? n : 0] = '\0';
	close(cap_fd);
	cap_fd = saved_fd = -1;
}

int stderrcap_count(const char *text, const char *needle)
{
	int n = 0;

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (memmem(line, len, needle, strlen(needle)))
			n++;
		line = end ? end + 1 : NULL;
	}
	return n;
}
