/* The service manager's notification protocol; see sdnotify.h. */
#include "common/sdnotify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int sdnotify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	socklen_t salen;
	size_t len;
	int fd, ret = 0;

	if (!path || !path[0])
		return 0;
	if (path[0] != '/' && path[0] != '@')
		return -EAFNOSUPPORT;
	len = strlen(path);
	if (len >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract: the name is exactly len bytes, no NUL after */
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL | MSG_DONTWAIT, (struct sockaddr *)&sa,
		   salen) < 0)
		ret = -errno;
	close(fd);
	return ret;
}
