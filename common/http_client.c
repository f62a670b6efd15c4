/* The libcurl client; the contract is in http_client.h. */
#include "common/http_client.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "common/curl_setup.h"
#include "proto/limits.h"

struct http_client {
	CURL *curl;
	CURLcode last;
	char errbuf[CURL_ERROR_SIZE];
};

const char *http_method_name(enum http_method m)
{
	switch (m) {
	case HTTP_GET: return "GET";
	case HTTP_POST: return "POST";
	case HTTP_PUT: return "PUT";
	case HTTP_DELETE: return "DELETE";
	}
	return "?";
}

/*
 * Where a response body goes: the caller's dynbuf, or with fd >= 0 a file for the body of a
 * 200 answer (any other answer's body, an error in JSON, still goes to the dynbuf).
 */
struct sink {
	CURL *curl;
	struct dynbuf *buf;
	int fd;
	uint64_t max, written;
	int err; /* why the transfer was stopped: -EFBIG, -errno of write(2) */
};

/* Takes one piece of the body; returning less than n makes libcurl fail the transfer. */
static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct sink *s = userdata;
	size_t n = size * nmemb, done = 0;
	long code = 0;

	if (s->fd >= 0 && curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK &&
	    code == 200) {
		if (n > s->max - s->written) {
			s->err = -EFBIG;
			return 0;
		}
		while (done < n) {
			ssize_t w = write(s->fd, ptr + done, n - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				s->err = w < 0 ? -errno : -EIO;
				return 0;
			}
			done += (size_t)w;
		}
		s->written += n;
		return n;
	}
	if (dynbuf_add(s->buf, ptr, n) < 0) {
		s->err = dynbuf_error(s->buf) == -E2BIG ? -EFBIG : dynbuf_error(s->buf);
		return 0;
	}
	return n;
}

struct http_client *http_client_new(const struct http_client_opts *o)
{
	struct http_client *c;
	CURL *h;

	if (curl_setup_global())
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	h = c->curl = curl_easy_init();
	if (!h)
		goto fail;
	/* Fixed for the life of the handle (curl_setup.h). */
	if (curl_setup_handle(h, o) ||
	    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf) != CURLE_OK)
		goto fail;
	return c;
fail:
	http_client_free(c);
	return NULL;
}

void http_client_free(struct http_client *c)
{
	if (!c)
		return;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c);
}

static int curl_errno(CURLcode cc)
{
	switch (cc) {
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	default:
		return -EIO;
	}
}

/* Frees the header list, wiping each line first: one may carry a bearer token. */
static void headers_free(struct curl_slist *l)
{
	for (struct curl_slist *i = l; i; i = i->next)
		OPENSSL_cleanse(i->data, strlen(i->data));
	curl_slist_free_all(l);
}

static int perform(struct http_client *c, enum http_method method, const char *url,
		   const char *const *headers, size_t nheaders, const char *body, size_t body_len,
		   long *status, struct sink *sink)
{
	bool sends = method == HTTP_POST || method == HTTP_PUT;
	struct curl_slist *hdrs = NULL, *next;
	CURL *h = c->curl;
	CURLcode cc;
	int ret;

	*status = 0;
	c->errbuf[0] = '\0';
	c->last = CURLE_OK;
	sink->curl = h;
	for (size_t i = 0; i < nheaders; i++) {
		if (!headers[i])
			continue;
		if (!(next = curl_slist_append(hdrs, headers[i])))
			goto nomem;
		hdrs = next;
	}
	if (sends) {
		if (!(next = curl_slist_append(hdrs, "Content-Type: application/json")))
			goto nomem;
		hdrs = next;
	}
	/*
	 * A large body waits for the verifier's go-ahead: it decides whether to read one from the
	 * headers (the admission of large evidence, the budget of bodies in flight) and answers a
	 * refusal before the body; sent regardless, the body would meet a closed connection and the client
	 * would see a reset instead of the answer. libcurl asks by itself only past 1 MiB.
	 */
	if (sends && body_len > LIMIT_SMALL_BODY) {
		if (!(next = curl_slist_append(hdrs, "Expect: 100-continue")))
			goto nomem;
		hdrs = next;
	}
	/*
	 * And waits for it as long as the verifier may take to read the headers: libcurl's 1 s
	 * default would send the body anyway when the verifier is slow to decide (busy threads,
	 * a store far away), and the refusal would meet a closed connection again.
	 */
	curl_easy_setopt(h, CURLOPT_EXPECT_100_TIMEOUT_MS, (long)LIMIT_HEADER_SECONDS * 1000L);
	/* A download takes any type for its body; errors still come as JSON. */
	if (!(next = curl_slist_append(hdrs, sink->fd >= 0 ? "Accept: */*"
							  : "Accept: application/json")))
		goto nomem;
	hdrs = next;

	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, sink);
	if (sends) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? body_len : 0));
	} else {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	}
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST,
			 method == HTTP_PUT ? "PUT" : method == HTTP_DELETE ? "DELETE" : NULL);
	cc = curl_easy_perform(h);
	/* The handle outlives the list: it must not keep a pointer to it. */
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	c->last = cc;
	if (cc != CURLE_OK) {
		ret = sink->err ? sink->err : curl_errno(cc);
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	ret = 0;
out:
	headers_free(hdrs);
	return ret;
nomem:
	c->last = CURLE_OUT_OF_MEMORY;
	ret = -ENOMEM;
	goto out;
}

int http_client_request(struct http_client *c, enum http_method method, const char *url,
			const char *header, const char *body, size_t body_len, long *status,
			struct dynbuf *resp)
{
	struct sink sink = { .buf = resp, .fd = -1 };

	return perform(c, method, url, &header, 1, body, body_len, status, &sink);
}

int http_client_request_headers(struct http_client *c, enum http_method method, const char *url,
				const char *const *headers, size_t nheaders, const char *body,
				size_t body_len, long *status, struct dynbuf *resp)
{
	struct sink sink = { .buf = resp, .fd = -1 };

	return perform(c, method, url, headers, nheaders, body, body_len, status, &sink);
}

int http_client_download(struct http_client *c, const char *url, const char *header, int fd,
			 uint64_t max, long *status, uint64_t *written, struct dynbuf *err_body)
{
	struct sink sink = { .buf = err_body, .fd = fd, .max = max };
	int ret = perform(c, HTTP_GET, url, &header, 1, NULL, 0, status, &sink);

	*written = sink.written;
	return ret;
}

const char *http_client_error(const struct http_client *c)
{
	return curl_easy_strerror(c->last);
}

const char *http_client_error_detail(const struct http_client *c)
{
	return c->errbuf;
}
