/*
 * A verdict's kept evidence (verdict_evidence.h), for an auditor:
 *   GET /v1/verdicts/{id}/evidence   the exported record (evidence_record.h): 200, 400 for an
 *                                    id that is not a positive number, 404 when none is kept
 *                                    for it (never kept, or pruned with its verdict).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/http/handlers.h"
#include "verifier/service/verdict_evidence.h"

void handle_verdict_evidence(const struct http_request *req, struct http_response *resp)
{
	char *end, *json = NULL;
	long long id;

	errno = 0;
	id = strtoll(req->arg[0], &end, 10);
	if (errno || end == req->arg[0] || *end || id <= 0 ||
	    strspn(req->arg[0], "0123456789") != strlen(req->arg[0])) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "a verdict id is a positive number");
		return;
	}
	switch (verdict_evidence_export(req->app, id, &json)) {
	case VERDICT_EVIDENCE_OK:
		http_reply_json(resp, 200, json);
		return;
	case VERDICT_EVIDENCE_UNKNOWN:
		http_reply_error(resp, PROTO_ERR_NOT_FOUND,
				 "no evidence is kept for verdict %lld (its round kept none:"
				 " --evidence-keep; or the verdict was pruned)", id);
		return;
	case VERDICT_EVIDENCE_STORE_FAILED:
		http_reply_store_failure(resp);
		return;
	case VERDICT_EVIDENCE_INTERNAL:
		break;
	}
	http_reply_error(resp, PROTO_ERR_INTERNAL, "the evidence could not be exported");
}
