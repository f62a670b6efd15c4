/* The listening socket and its accepting thread; the contract is in acceptor.h. */
#include "verifier/http/acceptor.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/log.h"

struct acceptor {
	int fd;
	struct MHD_Daemon *daemon;
	pthread_t thread;
	bool started;
	int stopping; /* atomic: acceptor_stop() was called */
};

int acceptor_open(const struct sockaddr *addr, socklen_t addrlen, struct acceptor **out,
		  uint16_t *port_out)
{
	struct sockaddr_storage bound;
	socklen_t bl = sizeof(bound);
	struct acceptor *a;
	int on = 1, ret;

	*out = NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (a->fd < 0) {
		ret = -errno;
		free(a);
		return ret;
	}
	if (setsockopt(a->fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ||
	    (addr->sa_family == AF_INET6 &&
	     setsockopt(a->fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on))) ||
	    bind(a->fd, addr, addrlen) || listen(a->fd, SOMAXCONN) ||
	    getsockname(a->fd, (struct sockaddr *)&bound, &bl)) {
		ret = -errno;
		close(a->fd);
		free(a);
		return ret;
	}
	*port_out = ntohs(bound.ss_family == AF_INET6
				  ? ((struct sockaddr_in6 *)&bound)->sin6_port
				  : ((struct sockaddr_in *)&bound)->sin_port);
	*out = a;
	return 0;
}

static void pause_ms(long ms)
{
	struct timespec t = { .tv_sec = 0, .tv_nsec = ms * 1000000L };

	nanosleep(&t, NULL);
}

static void *accept_loop(void *arg)
{
	struct acceptor *a = arg;

	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(a->fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);

		if (__atomic_load_n(&a->stopping, __ATOMIC_ACQUIRE)) {
			if (fd >= 0)
				close(fd);
			break;
		}
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			/* Out of descriptors or memory: the connections wait in the backlog. */
			log_warn("http: accept failed: %s; trying again", strerror(errno));
			pause_ms(100);
			continue;
		}
		/* The daemon owns the descriptor from here, and closes one it refuses. */
		MHD_add_connection(a->daemon, fd, (struct sockaddr *)&ss, sl);
	}
	return NULL;
}

int acceptor_start(struct acceptor *a, struct MHD_Daemon *daemon)
{
	int ret;

	a->daemon = daemon;
	ret = pthread_create(&a->thread, NULL, accept_loop, a);
	if (ret)
		return -ret;
	a->started = true;
	return 0;
}

void acceptor_stop(struct acceptor *a)
{
	if (!a)
		return;
	__atomic_store_n(&a->stopping, 1, __ATOMIC_RELEASE);
	/* Wakes the thread blocked in accept(): a listening socket shut down fails it. */
	shutdown(a->fd, SHUT_RDWR);
	if (a->started)
		pthread_join(a->thread, NULL);
	close(a->fd);
	free(a);
}
