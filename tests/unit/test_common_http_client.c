/*
 * common/http_client against a tiny plain-HTTP server on 127.0.0.1 (one thread per request):
 * methods and headers sent, status and body returned, the body cap, a refused connection, and
 * that a client without allow_http refuses http://. TLS is exercised against a real verifier in
 * the integration and cross layers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/http_client.h"
#include "proto/dynbuf.h"
#include "tests/unit/check.h"

struct server {
	int lfd;
	unsigned short port;
	const char *answer; /* status line and headers, without the blank line */
	size_t body_len;    /* a body of this many 'b' bytes */
	char request[8192]; /* what the client sent */
};

static void *serve_one(void *arg)
{
	struct server *s = arg;
	char hdr[512];
	size_t got = 0, want = 0;
	int fd = accept(s->lfd, NULL, NULL);
	char *end;
	ssize_t n;

	if (fd < 0)
		return NULL;
	/* Headers, then Content-Length bytes of body. */
	while (got < sizeof(s->request) - 1) {
		n = read(fd, s->request + got, sizeof(s->request) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		s->request[got] = '\0';
		end = strstr(s->request, "\r\n\r\n");
		if (end) {
			const char *cl = strstr(s->request, "Content-Length: ");

			want = (size_t)(end + 4 - s->request) + (cl ? strtoul(cl + 16, NULL, 10) : 0);
			if (got >= want)
				break;
		}
	}
	snprintf(hdr, sizeof(hdr), "%s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
		 s->answer, s->body_len);
	if (write(fd, hdr, strlen(hdr)) >= 0) {
		char chunk[4096];
		size_t left = s->body_len;

		memset(chunk, 'b', sizeof(chunk));
		while (left > 0) {
			n = write(fd, chunk, left < sizeof(chunk) ? left : sizeof(chunk));
			if (n <= 0)
				break;
			left -= (size_t)n;
		}
	}
	close(fd);
	return NULL;
}

static int server_open(struct server *s)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	memset(s, 0, sizeof(*s));
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(s->lfd, 4) < 0 || getsockname(s->lfd, (struct sockaddr *)&a, &len) < 0)
		return -1;
	s->port = ntohs(a.sin_port);
	return 0;
}

/* One request through c against s; returns http_client_request()'s result. */
static int one(struct http_client *c, struct server *s, enum http_method m, const char *header,
	       const char *body, long *status, struct dynbuf *resp)
{
	char url[64];
	pthread_t t;
	int ret;

	snprintf(url, sizeof(url), "http://127.0.0.1:%u/v1/x", s->port);
	s->request[0] = '\0';
	if (pthread_create(&t, NULL, serve_one, s) != 0)
		return -EAGAIN;
	ret = http_client_request(c, m, url, header, body, body ? strlen(body) : 0, status, resp);
	pthread_join(t, NULL);
	return ret;
}

/* The server the cases talk to (one request at a time) and the client they share. */
static struct server srv;
static struct http_client *client;

static void test_get_and_post(void)
{
	struct dynbuf b;
	long status = -1;

	dynbuf_init(&b, 1000);
	srv.answer = "HTTP/1.1 200 OK";
	srv.body_len = 5;
	CHECK(one(client, &srv, HTTP_GET, NULL, NULL, &status, &b) == 0, "GET answered");
	CHECK(status == 200 && b.len == 5 && strcmp(dynbuf_str(&b), "bbbbb") == 0,
	      "status and body of a GET (%ld, '%s')", status, dynbuf_str(&b));
	CHECK(strncmp(srv.request, "GET /v1/x HTTP/1.1\r\n", 20) == 0, "GET request line: '%.30s'",
	      srv.request);
	CHECK(strstr(srv.request, "\r\nAccept: application/json\r\n") != NULL, "Accept sent");
	CHECK(strstr(srv.request, "Content-Type:") == NULL, "no Content-Type on a GET");

	dynbuf_release(&b);
	srv.answer = "HTTP/1.1 201 Created";
	srv.body_len = 2;
	CHECK(one(client, &srv, HTTP_POST, "Authorization: Bearer t0ken", "{\"a\":1}", &status,
		  &b) == 0 &&
		      status == 201 && b.len == 2,
	      "POST answered 201 (%ld)", status);
	CHECK(strncmp(srv.request, "POST /v1/x HTTP/1.1\r\n", 21) == 0, "POST request line");
	CHECK(strstr(srv.request, "\r\nAuthorization: Bearer t0ken\r\n") != NULL, "extra header sent");
	CHECK(strstr(srv.request, "\r\nContent-Type: application/json\r\n") != NULL,
	      "Content-Type on a POST");
	CHECK(strstr(srv.request, "\r\n\r\n{\"a\":1}") != NULL, "POST body sent");

	dynbuf_release(&b);
}

static void test_put_and_the_handle_reused(void)
{
	struct dynbuf b;
	long status = -1;

	dynbuf_init(&b, 1000);
	srv.answer = "HTTP/1.1 404 Not Found";
	srv.body_len = 3;
	CHECK(one(client, &srv, HTTP_PUT, NULL, "{}", &status, &b) == 0 && status == 404 &&
		      b.len == 3,
	      "a 404 is an answer, not a failure (%ld)", status);
	CHECK(strncmp(srv.request, "PUT /v1/x HTTP/1.1\r\n", 20) == 0, "PUT request line");

	/* After a PUT the reused handle must go back to GET. */
	dynbuf_release(&b);
	srv.answer = "HTTP/1.1 200 OK";
	srv.body_len = 0;
	CHECK(one(client, &srv, HTTP_GET, NULL, NULL, &status, &b) == 0 &&
		      strncmp(srv.request, "GET /v1/x HTTP/1.1\r\n", 20) == 0 &&
		      strstr(srv.request, "Authorization:") == NULL,
	      "GET after PUT on the same handle, no stale header: '%.30s'", srv.request);
	dynbuf_release(&b);
}

static void test_body_cap(void)
{
	struct dynbuf b;
	long status = -1;

	dynbuf_init(&b, 1000);
	srv.answer = "HTTP/1.1 200 OK";
	srv.body_len = 1001;
	CHECK(one(client, &srv, HTTP_GET, NULL, NULL, &status, &b) == -EFBIG,
	      "body past the cap: -EFBIG");
	CHECK(http_client_error(client)[0] != '\0', "the failure has a text");
	dynbuf_release(&b);
	srv.body_len = 1000;
	CHECK(one(client, &srv, HTTP_GET, NULL, NULL, &status, &b) == 0 && b.len == 1000,
	      "body of exactly the cap is kept");
	dynbuf_release(&b);
}

/* Last: it closes the server's socket. */
static void test_refusals(void)
{
	const struct http_client_opts https_only = { .total_timeout = 10 };
	struct http_client *strict;
	char url[64];
	struct dynbuf b;
	long status = -1;

	dynbuf_init(&b, 1000);
	strict = http_client_new(&https_only);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/v1/x", srv.port);
	CHECK(strict &&
		      http_client_request(strict, HTTP_GET, url, NULL, NULL, 0, &status, &b) == -EIO,
	      "https-only client refuses http://");
	http_client_free(strict);

	close(srv.lfd);
	CHECK(http_client_request(client, HTTP_GET, url, NULL, NULL, 0, &status, &b) ==
		      -ECONNREFUSED,
	      "closed port: -ECONNREFUSED (%s)", http_client_error(client));
	CHECK(status == 0, "no status without an answer");
	dynbuf_release(&b);
}

int main(void)
{
	const struct http_client_opts plain = { .allow_http = true, .total_timeout = 10 };

	if (server_open(&srv) < 0)
		return 2;
	client = http_client_new(&plain);
	CHECK(client != NULL, "client created");
	if (!client)
		return check_finish();
	CASE(test_get_and_post);
	CASE(test_put_and_the_handle_reused);
	CASE(test_body_cap);
	CASE(test_refusals);
	http_client_free(client);
	return check_finish();
}
