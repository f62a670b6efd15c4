/*
 * The audit trail's head, for publication (verifier(8), AUDIT TRAIL):
 *   GET /v1/audit/head   the newest head signed by the verifier's audit key (signed now if the
 *                        trail moved since), with the key: {"seq", "hash", "time", "signature",
 *                        "public_key"}; {"seq": 0} for a trail with no record yet.
 */
#include <errno.h>
#include <stdlib.h>

#include <jansson.h>

#include "proto/encoding.h"
#include "verifier/api/api_codec.h"
#include "verifier/http/handlers.h"
#include "verifier/service/audit_sign.h"
#include "verifier/store/store.h"

/* The newest signed head, as the API shows it. */
struct head_ctx {
	struct api_audit_signed view; /* view.hash NULL: none signed yet */
	char hash[2 * AUDIT_HASH_LEN + 1];
	char *signature;
};

static int head_cb(void *arg, const struct store_audit_signed *s)
{
	struct head_ctx *c = arg;

	c->signature = base64_encode_alloc(s->signature, s->signature_len);
	if (!c->signature)
		return -ENOMEM;
	hex_encode(s->hash, AUDIT_HASH_LEN, c->hash);
	c->view.seq = s->seq;
	c->view.hash = c->hash;
	c->view.time = s->time;
	c->view.signature = c->signature;
	return 1;
}

void handle_audit_head(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct head_ctx c = { .view = { .seq = 0 } };
	int ret;

	if (audit_signer_sign(app->audit) ||
	    ((ret = store_audit_signed_list(app->store, 1, head_cb, &c)) != 0 && ret != 1)) {
		free(c.signature);
		http_reply_store_failure(resp);
		return;
	}
	c.view.public_key = audit_signer_public_pem(app->audit);
	reply_json_value(resp, 200, api_audit_signed_encode(&c.view));
	free(c.signature);
}
