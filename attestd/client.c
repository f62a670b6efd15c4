/* HTTPS client for the verifier on the shared libcurl client; see client.h. */
#include "attestd/client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "common/http_client.h"
#include "common/log.h"
#include "proto/dynbuf.h"
#include "proto/limits.h"
#include "proto/text.h"

struct client {
	struct http_client *http;
	char *base;
};

struct client *client_new(const char *base_url, const char *ca_file)
{
	const struct http_client_opts opts = {
		.ca_file = ca_file,
		.ca_only = true,
		.connect_timeout = CLIENT_CONNECT_TIMEOUT,
		.total_timeout = CLIENT_TOTAL_TIMEOUT,
		.user_agent = "attestd/1",
	};
	struct client *c;
	size_t len;

	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->base = strdup(base_url);
	if (!c->base)
		goto fail;
	len = strlen(c->base);
	while (len > 0 && c->base[len - 1] == '/')
		c->base[--len] = '\0';
	c->http = http_client_new(&opts);
	if (!c->http) {
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
	http_client_free(c->http);
	free(c->base);
	free(c);
}

/*
 * POSTs json (may be NULL for an empty body) to base + path. On 2xx *resp gets the body
 * (caller frees). Fills err on every failure.
 */
static int post(struct client *c, const char *path, const char *json, char **resp,
		size_t *resp_len, struct client_error *err)
{
	struct dynbuf b;
	char *url = NULL;
	size_t url_len = strlen(c->base) + strlen(path) + 1;
	long status = 0;
	int ret;

	memset(err, 0, sizeof(*err));
	*resp = NULL;
	dynbuf_init(&b, LIMIT_AGENT_RESPONSE);
	url = malloc(url_len);
	if (!url)
		return -ENOMEM;
	snprintf(url, url_len, "%s%s", c->base, path);
	ret = http_client_request(c->http, HTTP_POST, url, NULL, json, json ? strlen(json) : 0,
				  &status, &b);
	if (ret < 0) {
		const char *detail = http_client_error_detail(c->http);

		if (ret == -EFBIG) {
			log_error("answer from '%s' larger than %u bytes", url, LIMIT_AGENT_RESPONSE);
			ret = -EBADMSG;
		} else {
			log_error("post to '%s' failed: %s%s%s", url, http_client_error(c->http),
				  detail[0] ? ": " : "", detail);
		}
		snprintf(err->code, sizeof(err->code), "transport");
		snprintf(err->message, sizeof(err->message), "%s", http_client_error(c->http));
		goto out;
	}
	err->status = status;
	if (status < 200 || status > 299) {
		if (!b.len || error_parse(dynbuf_str(&b), b.len, err->code, sizeof(err->code),
					  err->message, sizeof(err->message)) < 0) {
			snprintf(err->code, sizeof(err->code), "http_%ld", status);
			err->message[0] = '\0';
		}
		/* The message is the verifier's text: one line, escaped, wherever it is shown. */
		{
			char raw[sizeof(err->message)];

			memcpy(raw, err->message, sizeof(raw));
			text_render_line(raw, strlen(raw), err->message, sizeof(err->message));
		}
		log_warn("verifier answered %ld to '%s': code '%s' message '%s'", status, path,
			 err->code, err->message);
		ret = -EPROTO;
		goto out;
	}
	*resp = dynbuf_take(&b, resp_len);
	ret = *resp ? 0 : -ENOMEM;
out:
	dynbuf_release(&b);
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
		    struct verdict_response *out, char **ear, struct client_error *err)
{
	char path[LIMIT_AGENT_ID + 32];
	char *json, *body = NULL;
	const char *why = NULL;
	size_t len;
	int ret;

	memset(out, 0, sizeof(*out));
	if (ear)
		*ear = NULL;
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
	else if (ear)
		*ear = verdict_response_ear(body, len);
	free(body);
	return ret;
}
