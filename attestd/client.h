/*
 * HTTPS calls to the verifier (docs/design.md, Protocol; wire format in proto/evidence.h), on the
 * shared libcurl client (common/http_client.h).
 *
 * One handle is reused so the TLS connection stays up between rounds. TLS 1.2 or newer, peer and
 * host verification always on, trust anchors only from the --ca file. Every call has connect and
 * total timeouts. Response bodies are capped (LIMIT_AGENT_RESPONSE in proto/limits.h).
 *
 * Return values: 0 on a 2xx answer that parsed; -ECONNREFUSED / -ETIMEDOUT / -EHOSTUNREACH /
 * -EIO for transport or TLS failures (retry later); -EPROTO for a non-2xx answer, with
 * err->status and err->code (the verifier's {"error":{"code"}}, or "http_NNN" if the body had
 * none) filled; -EBADMSG when a 2xx body does not parse. Parsed outputs are owned by the caller
 * and released with the proto/evidence.h *_release() functions.
 */
#ifndef ATTESTD_CLIENT_H
#define ATTESTD_CLIENT_H

#include "proto/evidence.h"

#define CLIENT_CONNECT_TIMEOUT 10L /* seconds */
#define CLIENT_TOTAL_TIMEOUT 120L  /* seconds; a first-boot evidence can be tens of MiB */

struct client;

struct client_error {
	long status;       /* HTTP status, 0 if no answer */
	char code[64];     /* machine-readable error code from the verifier */
	char message[256];
};

/* base_url like "https://127.0.0.1:8443" (a trailing '/' is dropped); NULL on failure. */
struct client *client_new(const char *base_url, const char *ca_file);
void client_free(struct client *c);

int client_enroll(struct client *c, const struct enroll_request *req,
		  struct enroll_response *resp, struct client_error *err);
int client_activate(struct client *c, const char *agent_id, const struct activate_request *req,
		    struct client_error *err);
int client_challenge(struct client *c, const char *agent_id, struct challenge *out,
		     struct client_error *err);
/* ear: when not NULL, gets the verdict's "ear" (caller frees; NULL when the verifier sent none). */
int client_evidence(struct client *c, const char *agent_id, const struct evidence *ev,
		    struct verdict_response *out, char **ear, struct client_error *err);

#endif
