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
#include "verifier/http/handlers.h"
#include "verifier/service/audit_sign.h"
#include "verifier/store/store.h"

static int head_cb(void *arg, const struct store_audit_signed *s)
{
	char hex[2 * AUDIT_HASH_LEN + 1];
	char *sig = base64_encode_alloc(s->signature, s->signature_len);
	json_t **out = arg;

	hex_encode(s->hash, AUDIT_HASH_LEN, hex);
	*out = sig ? json_pack("{s:I, s:s, s:I, s:s}", "seq", (json_int_t)s->seq, "hash", hex,
			       "time", (json_int_t)s->time, "signature", sig)
		   : NULL;
	free(sig);
	return *out ? 1 : -ENOMEM;
}

void handle_audit_head(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	json_t *o = NULL;
	int ret;

	if (audit_signer_sign(app->audit) ||
	    ((ret = store_audit_signed_list(app->store, 1, head_cb, &o)) != 0 && ret != 1)) {
		json_decref(o);
		http_reply_store_failure(resp);
		return;
	}
	if (!o)
		o = json_pack("{s:i}", "seq", 0);
	if (o)
		json_object_set_new(o, "public_key", json_string(audit_signer_public_pem(app->audit)));
	reply_json_value(resp, 200, o);
}
