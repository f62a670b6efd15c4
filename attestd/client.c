/* HTTPS client for the verifier on libcurl; see client.h. */
#include "attestd/client.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "common/log.h"

struct client {
	CURL *curl;
	struct curl_slist *headers;
	char *base;
	char errbuf[CURL_ERROR_SIZE];
};

struct body {
	char *buf;
	size_t len, cap;
	bool too_big;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct body *b = userdata;
	size_t n = size * nmemb;

	if (n > CLIENT_RESPONSE_MAX - b->len) {
		b->too_big = true;
		return 0; /* makes curl fail the transfer */
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *nb;

		while (cap < b->len + n + 1)
			cap *= 2;
		nb = realloc(b->buf, cap);
		if (!nb)
			return 0;
		b->buf = nb;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, ptr, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return n;
}

struct client *client_new(const char *base_url, const char *ca_file)
{
	static bool global_done;
	struct client *c;
	size_t len;

	if (!global_done) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return NULL;
		global_done = true;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->base = strdup(base_url);
	c->curl = curl_easy_init();
	c->headers = curl_slist_append(NULL, "Content-Type: application/json");
	if (c->headers)
		c->headers = curl_slist_append(c->headers, "Accept: application/json");
	if (!c->base || !c->curl || !c->headers)
		goto fail;
	len = strlen(c->base);
	while (len > 0 && c->base[len - 1] == '/')
		c->base[--len] = '\0';

	/* Fixed for the life of the handle; verification is not configurable on purpose. */
	if (curl_easy_setopt(c->curl, CURLOPT_CAINFO, ca_file) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_CAPATH, NULL) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2) !=
		    CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "https") != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_REDIR_PROTOCOLS_STR, "https") != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, CLIENT_CONNECT_TIMEOUT) !=
		    CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, CLIENT_TOTAL_TIMEOUT) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, c->errbuf) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_USERAGENT, "attestd/1") != CURLE_OK) {
		log_error("cannot configure libcurl (https with tls 1.2 needed)");
		goto fail;
	}
	return c;
fail:
	client_free(c);
	return NULL;
}

void client_free(struct client *c)
{
	if (!c)
		return;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	curl_slist_free_all(c->headers);
	free(c->base);
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

/*
 * POSTs json (may be NULL for an empty body) to base + path. On 2xx *resp gets the body
 * (caller frees). Fills err on every failure.
 */
static int post(struct client *c, const char *path, const char *json, char **resp,
		size_t *resp_len, struct client_error *err)
{
	struct body b = { 0 };
	char *url = NULL;
	size_t url_len = strlen(c->base) + strlen(path) + 1;
	long status = 0;
	CURLcode cc;
	int ret;

	memset(err, 0, sizeof(*err));
	*resp = NULL;
	url = malloc(url_len);
	if (!url)
		return -ENOMEM;
	snprintf(url, url_len, "%s%s", c->base, path);
	c->errbuf[0] = '\0';
	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, json ? json : "");
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)(json ? strlen(json) : 0));
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &b);
	cc = curl_easy_perform(c->curl);
	if (cc != CURLE_OK) {
		if (b.too_big) {
			log_error("answer from '%s' larger than %u bytes", url,
				  CLIENT_RESPONSE_MAX);
			ret = -EBADMSG;
		} else {
			log_error("post to '%s' failed: %s%s%s", url, curl_easy_strerror(cc),
				  c->errbuf[0] ? ": " : "", c->errbuf);
			ret = curl_errno(cc);
		}
		snprintf(err->code, sizeof(err->code), "transport");
		snprintf(err->message, sizeof(err->message), "%s", curl_easy_strerror(cc));
		goto out;
	}
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	err->status = status;
	if (status < 200 || status > 299) {
		if (!b.buf || error_parse(b.buf, b.len, err->code, sizeof(err->code), err->message,
					  sizeof(err->message)) < 0) {
			snprintf(err->code, sizeof(err->code), "http_%ld", status);
			err->message[0] = '\0';
		}
		log_warn("verifier answered %ld to '%s': code '%s' message '%s'", status, path,
			 err->code, err->message);
		ret = -EPROTO;
		goto out;
	}
	*resp = b.buf ? b.buf : strdup("");
	*resp_len = b.len;
	b.buf = NULL;
	ret = *resp ? 0 : -ENOMEM;
out:
	free(b.buf);
	free(url);
	return ret;
}

static int bad_answer(const char *what, const char *why, struct client_error *err)
{
	log_error("cannot parse the verifier's %s answer: %s", what, why ? why : "?");
	snprintf(err->code, sizeof(err->code), "bad_answer");
	snprintf(err->message, sizeof(err->message), "%s", why ? why : "");
	return -EBADMSG;
}

int client_enroll(struct client *c, const struct enroll_request *req,
		  struct enroll_response *resp, struct client_error *err)
{
	char *json = enroll_request_encode(req), *body = NULL;
	const char *why = NULL;
	size_t len;
	int ret;

	memset(resp, 0, sizeof(*resp));
	if (!json)
		return -ENOMEM;
	ret = post(c, "/v1/agents", json, &body, &len, err);
	free(json);
	if (ret < 0)
		return ret;
	if (enroll_response_parse(body, len, resp, &why) < 0)
		ret = bad_answer("enroll", why, err);
	free(body);
	return ret;
}

int client_activate(struct client *c, const char *agent_id, const struct activate_request *req,
		    struct client_error *err)
{
	char path[LIMIT_AGENT_ID + 32];
	char *json, *body = NULL;
	size_t len;
	int ret;

	snprintf(path, sizeof(path), "/v1/agents/%s/activate", agent_id);
	json = activate_request_encode(req);
	if (!json)
		return -ENOMEM;
	ret = post(c, path, json, &body, &len, err);
	/* The JSON carries the credential: wipe it. */
	OPENSSL_cleanse(json, strlen(json));
	free(json);
	free(body);
	return ret;
}

int client_challenge(struct client *c, const char *agent_id, struct challenge *out,
		     struct client_error *err)
{
	char path[LIMIT_AGENT_ID + 32];
	char *body = NULL;
	const char *why = NULL;
	size_t len;
	int ret;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/v1/agents/%s/challenges", agent_id);
	ret = post(c, path, NULL, &body, &len, err);
	if (ret < 0)
		return ret;
	if (challenge_parse(body, len, out, &why) < 0)
		ret = bad_answer("challenge", why, err);
	free(body);
	return ret;
}

int client_evidence(struct client *c, const char *agent_id, const struct evidence *ev,
		    struct verdict_response *out, struct client_error *err)
{
	char path[LIMIT_AGENT_ID + 32];
	char *json, *body = NULL;
	const char *why = NULL;
	size_t len;
	int ret;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/v1/agents/%s/evidence", agent_id);
	json = evidence_encode(ev);
	if (!json)
		return -ENOMEM;
	ret = post(c, path, json, &body, &len, err);
	free(json);
	if (ret < 0)
		return ret;
	if (verdict_response_parse(body, len, out, &why) < 0)
		ret = bad_answer("evidence", why, err);
	free(body);
	return ret;
}
