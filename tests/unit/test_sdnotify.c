/* common/sdnotify.c: the datagram reaches a path socket and an abstract one, and nothing
 * happens without $NOTIFY_SOCKET. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/sdnotify.h"
#include "tests/unit/check.h"

/* A datagram socket bound to name (a path, or "@..." abstract); -1 on failure. */
static int listen_on(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || len >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, name, len);
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	if (bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The next datagram on fd as a string, "" if none is waiting. */
static const char *next_message(int fd)
{
	static char buf[512];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void test_path_socket(void)
{
	char dir[] = "/tmp/test_sdnotify.XXXXXX", path[128];
	int fd, ret;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/notify", dir);
	fd = listen_on(path);
	CHECK(fd >= 0, "bound %s", path);
	setenv("NOTIFY_SOCKET", path, 1);
	CHECK(sdnotify("READY=1\nSTATUS=listening") == 0, "sent");
	CHECK(!strcmp(next_message(fd), "READY=1\nSTATUS=listening"), "received as sent");
	close(fd);
	unlink(path);
	ret = sdnotify("STOPPING=1");
	CHECK(ret == -ECONNREFUSED || ret == -ENOENT,
	      "a socket that went away is an error, not a crash (%d)", ret);
	rmdir(dir);
}

static void test_abstract_socket(void)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "@attest-test-sdnotify-%d", (int)getpid());
	fd = listen_on(name);
	CHECK(fd >= 0, "bound %s", name);
	setenv("NOTIFY_SOCKET", name, 1);
	CHECK(sdnotify("READY=1") == 0 && !strcmp(next_message(fd), "READY=1"),
	      "abstract namespace ('@')");
	close(fd);
}

static void test_nowhere(void)
{
	char longname[200];

	unsetenv("NOTIFY_SOCKET");
	CHECK(sdnotify("READY=1") == 0, "no $NOTIFY_SOCKET: nothing to do");
	setenv("NOTIFY_SOCKET", "", 1);
	CHECK(sdnotify("READY=1") == 0, "empty $NOTIFY_SOCKET: nothing to do");
	setenv("NOTIFY_SOCKET", "vsock:2:1234", 1);
	CHECK(sdnotify("READY=1") == -EAFNOSUPPORT, "vsock is not supported, and says so");
	memset(longname, 'a', sizeof(longname) - 1);
	longname[0] = '/';
	longname[sizeof(longname) - 1] = '\0';
	setenv("NOTIFY_SOCKET", longname, 1);
	CHECK(sdnotify("READY=1") == -ENAMETOOLONG, "a path longer than sun_path");
	unsetenv("NOTIFY_SOCKET");
}

int main(void)
{
	CASE(test_path_socket);
	CASE(test_abstract_socket);
	CASE(test_nowhere);
	return check_finish();
}
