#include "verifier/http/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>
#include <openssl/crypto.h>

#include "proto/dynbuf.h"
#include "proto/evidence.h"
#include "common/log.h"
#include "verifier/http/acceptor.h"
#include "verifier/http/http_guard.h"
#include "verifier/http/server_cert.h"

/* GnuTLS priorities: TLS 1.2 and 1.3 only (1.0/1.1 are refused in the handshake). */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:%SERVER_PRECEDENCE"
#define CONNECTION_TIMEOUT_SECONDS 30u
/* What "503 busy" asks a client to wait: about how long a large body takes to arrive and be judged. */
#define BUSY_RETRY_SECONDS 10u

struct http_server {
	struct MHD_Daemon *daemon;
	struct acceptor *acceptor; /* the listening socket: it spreads connections (acceptor.h) */
	struct http_server_config cfg;
	struct http_guard *guard; /* deadlines and the body budget */
};

/* Per-request state, from the first callback to MHD's "completed" notification. */
struct conn_state {
	struct http_request req;
	const struct http_route *route;
	struct timespec t0;
	struct dynbuf body; /* capped at the route's body_cap, then at the Content-Length */
	uint64_t received;
	uint64_t reserved;  /* bytes of the body budget this request holds */
	struct http_guard_conn *guard; /* its connection's deadline */
	bool too_large;
	bool replied;
};

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

void http_reply_json(struct http_response *resp, unsigned status, char *json)
{
	free(resp->body);
	resp->content_type = "application/json";
	if (!json) {
		resp->status = 500;
		resp->body = error_encode(proto_error_info(PROTO_ERR_INTERNAL)->code, "out of memory");
		return;
	}
	resp->status = status;
	resp->body = json;
}

static void __attribute__((format(printf, 4, 0)))
reply_error_v(struct http_response *resp, enum proto_error e, const char *code,
	      const char *fmt, va_list ap)
{
	const struct proto_error_info *info = proto_error_info(e);
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	http_reply_json(resp, info->status, error_encode(code ? code : info->code, msg));
}

void http_reply_error(struct http_response *resp, enum proto_error e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	reply_error_v(resp, e, NULL, fmt, ap);
	va_end(ap);
}

void http_reply_error_named(struct http_response *resp, enum proto_error e, const char *code,
			    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	reply_error_v(resp, e, code, fmt, ap);
	va_end(ap);
}

void http_reply_store_failure(struct http_response *resp)
{
	http_reply_error(resp, PROTO_ERR_STORE_UNAVAILABLE,
			 "the verifier cannot use its store; nothing was recorded, retry later");
}

void http_reply_text(struct http_response *resp, unsigned status, const char *content_type,
		     const char *text)
{
	free(resp->body);
	resp->body = strdup(text);
	resp->status = resp->body ? status : 500;
	resp->content_type = content_type;
}

void http_reply_file(struct http_response *resp, unsigned status, const char *content_type,
		     int fd, uint64_t size)
{
	free(resp->body);
	resp->body = NULL;
	resp->status = status;
	resp->content_type = content_type;
	resp->has_file = true;
	resp->file_fd = fd;
	resp->file_size = size;
}

const char *http_header(const struct http_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

bool http_route_reads(const struct http_route *route, const char *name, size_t len)
{
	const char *p = route->query;

	while (p && *p) {
		size_t n = strcspn(p, " ");

		if (n == len && !memcmp(p, name, len))
			return true;
		p += n;
		p += strspn(p, " ");
	}
	return false;
}

const char *http_query(const struct http_request *req, const char *name)
{
	if (!req->route || !http_route_reads(req->route, name, strlen(name))) {
		log_error("http: the handler of %s %s reads query parameter \"%s\", which its route"
			  " does not declare (routes.c, docs/openapi.json)",
			  req->route ? req->route->method : "?", req->route ? req->route->pattern : "?",
			  name);
		return NULL;
	}
	return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

struct query_check {
	const struct http_route *route;
	char why[160];
	char seen[8][LIMIT_QUERY_NAME + 1]; /* the declared names met so far */
	unsigned nseen;
};

/* Every query parameter must be one the route declares, and given once. */
static enum MHD_Result query_check_one(void *cls, enum MHD_ValueKind kind, const char *key,
				       const char *value)
{
	struct query_check *q = cls;
	size_t len = strlen(key);

	(void)kind;
	(void)value;
	if (len > LIMIT_QUERY_NAME || !http_route_reads(q->route, key, len)) {
		snprintf(q->why, sizeof(q->why), "query parameter \"%.*s\": %s", LIMIT_QUERY_NAME,
			 key, q->route->query ? "not one this endpoint takes (docs/openapi.json)"
					      : "this endpoint takes none");
		return MHD_NO;
	}
	for (unsigned i = 0; i < q->nseen; i++)
		if (!strcmp(q->seen[i], key)) {
			snprintf(q->why, sizeof(q->why), "query parameter \"%s\" given twice", key);
			return MHD_NO;
		}
	if (q->nseen < sizeof(q->seen) / sizeof(q->seen[0]))
		memcpy(q->seen[q->nseen++], key, len + 1);
	return MHD_YES;
}

/* Matches url against pattern segment by segment, capturing '*' segments into req->arg. */
static bool route_match(const char *pattern, const char *url, struct http_request *req)
{
	const char *p = pattern, *u = url;

	req->narg = 0;
	while (*p && *u) {
		const char *pe = strchr(p, '/'), *ue = strchr(u, '/');
		size_t pl, ul;

		if (*p != '/' || *u != '/')
			return false;
		p++;
		u++;
		pe = strchr(p, '/');
		ue = strchr(u, '/');
		pl = pe ? (size_t)(pe - p) : strlen(p);
		ul = ue ? (size_t)(ue - u) : strlen(u);
		if (pl == 1 && *p == '*') {
			if (ul == 0 || ul > LIMIT_URL_ARG || req->narg >= HTTP_MAX_ARGS)
				return false;
			memcpy(req->arg[req->narg], u, ul);
			req->arg[req->narg][ul] = '\0';
			req->narg++;
		} else if (pl != ul || memcmp(p, u, pl) != 0) {
			return false;
		}
		p += pl;
		u += ul;
	}
	return *p == '\0' && *u == '\0';
}

static enum MHD_Result send_response(struct http_server *srv, struct conn_state *cs,
				     struct http_response *resp)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	/* Read before MHD owns the body: the answer's deadline grows with its length. */
	uint64_t bytes = resp->has_file ? resp->file_size : resp->body ? strlen(resp->body) : 0;

	if (resp->has_file)
		r = MHD_create_response_from_fd64(resp->file_size, resp->file_fd);
	else if (resp->body)
		r = MHD_create_response_from_buffer(strlen(resp->body), resp->body,
						    MHD_RESPMEM_MUST_FREE);
	else
		r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (resp->has_file)
			close(resp->file_fd);
		free(resp->body);
		resp->body = NULL;
		return MHD_NO;
	}
	resp->body = NULL; /* MHD frees it with the response */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				resp->content_type ? resp->content_type : "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	/* For the web page at /ui/, harmless for JSON: only our own files run, nothing is sniffed. */
	MHD_add_response_header(r, "Content-Security-Policy",
				"default-src 'self'; frame-ancestors 'none'");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (resp->status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	/* The answer must leave in time too: a client that reads it slowly loses it. */
	http_guard_phase(srv->guard, cs->guard, HTTP_GUARD_TRANSFER, bytes);
	if (resp->retry_after) {
		char secs[16];

		snprintf(secs, sizeof(secs), "%u", resp->retry_after);
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, secs);
	}
	if (cs->route && !http_route_declares(cs->route, resp->status))
		log_error("http: %s %s answered %u, which its route does not declare (routes.c,"
			  " docs/openapi.json)", cs->route->method, cs->route->pattern, resp->status);
	ret = MHD_queue_response(cs->req.conn, resp->status, r);
	MHD_destroy_response(r);
	cs->replied = true;
	if (srv->cfg.observe)
		srv->cfg.observe(srv->cfg.app, cs->route, resp->status, since(&cs->t0));
	return ret;
}

bool http_route_declares(const struct http_route *route, unsigned status)
{
	const char *p = route->answers;
	bool writes = strcmp(route->method, "GET") != 0;

	switch (status) {
	case 400: case 413: case 500:
		return true;
	case 401:
		if (route->access != HTTP_PUBLIC)
			return true;
		break;
	case 403:
		if (route->access == HTTP_OPERATOR || (route->access == HTTP_TOKEN && writes))
			return true;
		break;
	case 411: case 503:
		if (route->body_cap > LIMIT_SMALL_BODY)
			return true;
		break;
	}
	while (p && *p) {
		char *end;
		unsigned long n = strtoul(p, &end, 10);

		if (end == p)
			return false; /* a malformed column declares nothing past this point */
		if (n == status)
			return true;
		p = end + strspn(end, " ");
	}
	return false;
}

static enum MHD_Result reply_error(struct http_server *srv, struct conn_state *cs,
				   enum proto_error e, const char *msg)
{
	struct http_response resp = { 0 };

	http_reply_error(&resp, e, "%s", msg);
	return send_response(srv, cs, &resp);
}

static const char *transfer_encoding(const struct conn_state *cs)
{
	return MHD_lookup_connection_value(cs->req.conn, MHD_HEADER_KIND,
					   MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

static bool chunked(const struct conn_state *cs)
{
	const char *te = transfer_encoding(cs);

	return te && strcasestr(te, "chunked");
}

/*
 * A body over LIMIT_SMALL_BODY, before a byte of it is read: the route must want it (the
 * evidence of an active agent with a challenge outstanding), and it must fit in the budget of
 * bodies in flight. Either refusal is answered at once and the body never read.
 */
static enum MHD_Result admit_large(struct http_server *srv, struct conn_state *cs, uint64_t n)
{
	struct http_response resp = { 0 };

	if (srv->cfg.admit && !srv->cfg.admit(srv->cfg.app, cs->route, &cs->req, &resp)) {
		if (!resp.status)
			http_reply_error(&resp, PROTO_ERR_BAD_REQUEST, "this body is not accepted");
		return send_response(srv, cs, &resp);
	}
	free(resp.body);
	if (!http_guard_reserve(srv->guard, n * LIMIT_BODY_COST)) {
		resp = (struct http_response){ .retry_after = BUSY_RETRY_SECONDS };
		http_reply_error(&resp, PROTO_ERR_BUSY,
				 "the verifier holds as many large bodies as it reads at once;"
				 " retry later");
		return send_response(srv, cs, &resp);
	}
	cs->reserved = n * LIMIT_BODY_COST;
	/* One allocation of the announced size: no doubling past it while the body arrives. */
	if (dynbuf_grow(&cs->body, (size_t)n))
		dynbuf_setlen(&cs->body, 0);
	http_guard_phase(srv->guard, cs->guard, HTTP_GUARD_TRANSFER, n);
	return MHD_YES;
}

/*
 * Percent-escapes decoded only when what they decode to is visible ASCII (0x21-0x7e): a NUL
 * decoded in place would cut the C string ("/v1/policies/default%00evil" would be the path of
 * policy "default"), and a control byte or a blank means nothing in any route or query value.
 * Such a string is left as it came, with its '%', which no route and no value allows: the path
 * is refused before routing (path_allowed()), a query value by the handler that reads it.
 */
static size_t unescape_visible(void *cls, struct MHD_Connection *conn, char *s)
{
	size_t raw = strlen(s), n;
	char *copy;

	(void)cls;
	(void)conn;
	copy = strdup(s);
	if (!copy)
		return raw; /* left escaped: refused as above, never cut */
	n = MHD_http_unescape(copy);
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)copy[i] < 0x21 || (unsigned char)copy[i] > 0x7e) {
			free(copy);
			return raw;
		}
	}
	memcpy(s, copy, n + 1);
	free(copy);
	return n;
}

/* Whether every byte of a path is one some route allows: visible ASCII, no '%' left. */
static bool path_allowed(const char *url)
{
	if (url[0] != '/')
		return false;
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e || *p == '%')
			return false;
	return true;
}

/* First callback of a request: route, authorize, and check the announced body size. */
static enum MHD_Result start_request(struct http_server *srv, struct conn_state *cs)
{
	const struct http_route *rt = NULL;
	bool path_known = false;
	const char *cl;

	if (!path_allowed(cs->req.url))
		return reply_error(srv, cs, PROTO_ERR_BAD_REQUEST,
				   "the path holds a byte no route allows (a control byte, a blank,"
				   " a NUL or another escape that is not visible ASCII)");

	for (size_t i = 0; i < srv->cfg.nroutes; i++) {
		if (!route_match(srv->cfg.routes[i].pattern, cs->req.url, &cs->req))
			continue;
		path_known = true;
		if (!strcmp(srv->cfg.routes[i].method, cs->req.method)) {
			rt = &srv->cfg.routes[i];
			break;
		}
	}
	if (!rt) {
		cs->req.narg = 0;
		return path_known ? reply_error(srv, cs, PROTO_ERR_METHOD_NOT_ALLOWED,
						"method not allowed for this path")
				  : reply_error(srv, cs, PROTO_ERR_NOT_FOUND, "no such endpoint");
	}
	cs->route = rt;
	cs->req.route = rt;
	dynbuf_init(&cs->body, rt->body_cap);
	if (rt->access != HTTP_PUBLIC) {
		char why[256] = "operator calls need Authorization: Bearer TOKEN";
		unsigned st = srv->cfg.authorize
				      ? srv->cfg.authorize(srv->cfg.app, &cs->req, rt->access, why,
							     sizeof(why))
				      : 401;

		if (st)
			return reply_error(srv, cs,
					   st == 403 ? PROTO_ERR_READ_ONLY : PROTO_ERR_UNAUTHORIZED, why);
	}
	{
		struct query_check q = { .route = rt };

		if (MHD_get_connection_values(cs->req.conn, MHD_GET_ARGUMENT_KIND, query_check_one,
					      &q) < 0 || q.why[0])
			return reply_error(srv, cs, PROTO_ERR_BAD_REQUEST,
					   q.why[0] ? q.why : "the query does not parse");
	}
	cl = MHD_lookup_connection_value(cs->req.conn, MHD_HEADER_KIND,
					 MHD_HTTP_HEADER_CONTENT_LENGTH);
	/*
	 * Both: the body is framed by Transfer-Encoding and the length says nothing about it
	 * (RFC 9112 6.1), so every bound below, taken from that length, would be skipped (10 bytes
	 * announced, 64 MiB read past the admission and the budget). RFC 9112 6.3 calls such a
	 * message suspect: refused unread.
	 */
	if (cl && transfer_encoding(cs))
		return reply_error(srv, cs, PROTO_ERR_BAD_REQUEST,
				   "Content-Length and Transfer-Encoding together: send one");
	if (cl) {
		char *end;
		unsigned long long n;

		errno = 0;
		n = strtoull(cl, &end, 10);
		if (errno || end == cl || *end)
			return reply_error(srv, cs, PROTO_ERR_BAD_REQUEST, "bad Content-Length");
		if (n > (unsigned long long)rt->body_cap + LIMIT_DRAIN_BYTES)
			return reply_error(srv, cs, PROTO_ERR_BODY_TOO_LARGE,
					   "request body exceeds the limit for this endpoint");
		if (n > rt->body_cap)
			cs->too_large = true; /* drained, then answered 413 */
		else
			dynbuf_init(&cs->body, (size_t)n); /* no byte past the length announced */
		if (!cs->too_large && n > LIMIT_SMALL_BODY)
			return admit_large(srv, cs, (uint64_t)n);
		http_guard_phase(srv->guard, cs->guard, HTTP_GUARD_TRANSFER, n);
	} else if (rt->body_cap > LIMIT_SMALL_BODY && chunked(cs)) {
		/* A large body is admitted by the length it announces: no length, no admission. */
		return reply_error(srv, cs, PROTO_ERR_LENGTH_REQUIRED,
				   "a body for this endpoint needs a Content-Length");
	} else {
		/* A chunked body here is at most the route's (small) cap. */
		http_guard_phase(srv->guard, cs->guard, HTTP_GUARD_TRANSFER,
				 chunked(cs) ? rt->body_cap : 0);
	}
	return MHD_YES;
}

/* Appends an upload chunk, growing up to the cap start_request() set. */
static void append_body(struct conn_state *cs, const char *data, size_t n)
{
	if (cs->too_large)
		return;
	if (dynbuf_add(&cs->body, data, n)) {
		/* Past the cap, or out of memory: refused, nothing half-read is used. */
		cs->too_large = true;
		dynbuf_release(&cs->body);
	}
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct http_server *srv = cls;
	struct conn_state *cs = *con_cls;
	struct http_response resp = { 0 };

	(void)version;
	if (!cs) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

		cs = calloc(1, sizeof(*cs));
		if (!cs)
			return MHD_NO;
		*con_cls = cs;
		cs->guard = ci ? ci->socket_context : NULL;
		dynbuf_init(&cs->body, 0); /* nothing is accepted before a route is chosen */
		clock_gettime(CLOCK_MONOTONIC, &cs->t0);
		cs->req.conn = conn;
		cs->req.method = method;
		cs->req.url = url;
		cs->req.app = srv->cfg.app;
		return start_request(srv, cs);
	}
	if (*upload_data_size) {
		cs->received += *upload_data_size;
		if (!cs->replied)
			append_body(cs, upload_data, *upload_data_size);
		*upload_data_size = 0;
		/* A chunked body that will not end: stop reading and drop the connection. */
		if (cs->too_large && cs->received > (uint64_t)cs->route->body_cap + LIMIT_DRAIN_BYTES)
			return MHD_NO;
		return MHD_YES;
	}
	if (cs->replied)
		return MHD_YES;
	if (cs->too_large)
		return reply_error(srv, cs, PROTO_ERR_BODY_TOO_LARGE,
				   "request body exceeds the limit for this endpoint");
	cs->req.body = dynbuf_str(&cs->body);
	cs->req.body_len = cs->body.len;
	http_guard_phase(srv->guard, cs->guard, HTTP_GUARD_HANDLER, 0);
	cs->route->fn(&cs->req, &resp);
	if (!resp.status) {
		free(resp.body);
		resp.body = NULL;
		http_reply_error(&resp, PROTO_ERR_INTERNAL, "handler gave no answer");
	}
	return send_response(srv, cs, &resp);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_server *srv = cls;
	struct conn_state *cs = *con_cls;

	(void)conn;
	(void)toe;
	if (!cs)
		return;
	http_guard_release(srv->guard, cs->reserved);
	/* A kept-alive connection must bring its next request's headers in time. */
	http_guard_phase(srv->guard, cs->guard, HTTP_GUARD_HEADERS, 0);
	/* Bodies carry enrollment secrets (activate): wipe before free. */
	if (cs->body.buf)
		OPENSSL_cleanse(cs->body.buf, cs->body.cap);
	dynbuf_release(&cs->body);
	free(cs);
	*con_cls = NULL;
}

/* Every connection is guarded from its accept to its close (http_guard.h). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *srv = cls;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		*socket_context = ci ? http_guard_conn_open(srv->guard, ci->connect_fd) : NULL;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		http_guard_conn_close(srv->guard, *socket_context);
		*socket_context = NULL;
	}
}

__attribute__((format(printf, 2, 0)))
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char buf[512];
	size_t n;

	(void)cls;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	log_debug("http: %s", buf);
}

static int parse_listen(const char *listen, struct sockaddr_storage *ss, socklen_t *sl)
{
	char host[64];
	const char *colon, *h = listen;
	size_t hl;
	char *end;
	unsigned long port;

	if (listen[0] == '[') {
		const char *rb = strchr(listen, ']');

		if (!rb || rb[1] != ':')
			return -EINVAL;
		h = listen + 1;
		hl = (size_t)(rb - h);
		colon = rb + 1;
	} else {
		colon = strrchr(listen, ':');
		if (!colon)
			return -EINVAL;
		hl = (size_t)(colon - listen);
	}
	if (hl == 0 || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || port > 65535)
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	{
		struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
			in4->sin_family = AF_INET;
			in4->sin_port = htons((uint16_t)port);
			*sl = sizeof(*in4);
		} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons((uint16_t)port);
			*sl = sizeof(*in6);
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

struct http_server *http_server_start(const struct http_server_config *cfg, uint16_t *port_out)
{
	struct http_server *srv;
	struct sockaddr_storage ss;
	socklen_t sl;
	/*
	 * epoll per pool thread instead of select (whose cost grows with the descriptors). Not
	 * MHD_USE_TURBO (no TCP corking around responses, ~9% in a profile): with TLS,
	 * libmicrohttpd 0.9.75 then spins on every connection still waiting for its TLS
	 * ClientHello (epoll_wait with timeout 0, recv EAGAIN, again): one idle connection cost
	 * 40% of a core, and an attacker's 64 stalled every agent (tests/attacks/connections.sh).
	 */
	unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_TLS | MHD_USE_ERROR_LOG |
			 MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC;
	int ret;

	if (parse_listen(cfg->listen, &ss, &sl)) {
		log_error("http: bad listen address \"%s\" (want ADDR:PORT)", cfg->listen);
		return NULL;
	}
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return NULL;
	srv->cfg = *cfg;
	ret = acceptor_open((struct sockaddr *)&ss, sl, &srv->acceptor, port_out);
	if (ret) {
		log_error("http: cannot listen on \"%s\": %s", cfg->listen, strerror(-ret));
		free(srv);
		return NULL;
	}
	if (http_server_set_cert(srv, cfg->cert_pem, cfg->key_pem)) {
		acceptor_stop(srv->acceptor);
		free(srv);
		return NULL;
	}
	srv->guard = http_guard_new();
	if (!srv->guard) {
		acceptor_stop(srv->acceptor);
		server_cert_clear();
		free(srv);
		return NULL;
	}
	srv->daemon = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, srv,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)(cfg->threads ? cfg->threads : 4),
		/* Asked for in each handshake, so that a reload reaches new connections. */
		MHD_OPTION_HTTPS_CERT_CALLBACK2, server_cert_retrieve,
		MHD_OPTION_HTTPS_PRIORITIES, TLS_PRIORITIES,
		MHD_OPTION_CONNECTION_TIMEOUT, CONNECTION_TIMEOUT_SECONDS,
		MHD_OPTION_CONNECTION_LIMIT, LIMIT_CONNECTIONS,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		(unsigned)(cfg->client_connections ? cfg->client_connections
						   : LIMIT_CONNECTIONS_PER_CLIENT),
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
		MHD_OPTION_UNESCAPE_CALLBACK, unescape_visible, NULL,
		MHD_OPTION_END);
	if (!srv->daemon || (ret = acceptor_start(srv->acceptor, srv->daemon))) {
		log_error("http: cannot serve on \"%s\" (bad TLS material, or out of threads?)",
			  cfg->listen);
		acceptor_stop(srv->acceptor);
		if (srv->daemon)
			MHD_stop_daemon(srv->daemon);
		http_guard_free(srv->guard);
		server_cert_clear();
		free(srv);
		return NULL;
	}
	return srv;
}

void http_server_stop(struct http_server *srv)
{
	if (!srv)
		return;
	acceptor_stop(srv->acceptor); /* first: it hands connections to the daemon */
	if (srv->daemon)
		MHD_stop_daemon(srv->daemon);
	http_guard_free(srv->guard); /* after the daemon: every connection is closed */
	server_cert_clear();
	free(srv);
}

int http_server_set_cert(struct http_server *srv, const char *cert_pem, const char *key_pem)
{
	char why[256] = "", fp[96];
	int ret;

	(void)srv; /* one per process (server_cert.h) */
	ret = server_cert_set(cert_pem, key_pem, why, sizeof(why));
	if (ret) {
		log_error("tls: %s", why);
		return ret;
	}
	server_cert_fingerprint(fp);
	log_info("tls: new connections get the certificate with SHA-256 fingerprint %s", fp);
	return 0;
}
