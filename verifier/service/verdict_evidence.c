/* A verdict's kept evidence, exported whole (verdict_evidence.h). */
#include "verifier/service/verdict_evidence.h"

#include <errno.h>
#include <stdlib.h>

#include "common/log.h"
#include "verifier/decision/evidence_record.h"
#include "verifier/store/store.h"

/* A kept policy copy, or NULL (logged) when it is missing or cannot be read. */
static char *kept_policy(struct app *app, int64_t verdict_id, const char *name, int64_t version,
			 int *err)
{
	char *json = NULL;
	int ret = store_evidence_policy(app->store, name, version, &json);

	if (ret == -ENOENT)
		log_warn("evidence: verdict %lld names \"%s\" version %lld, of which no copy is"
			 " kept; exported without it", (long long)verdict_id, name,
			 (long long)version);
	else if (ret)
		*err = ret;
	return json;
}

enum verdict_evidence_status verdict_evidence_export(struct app *app, int64_t verdict_id,
						     char **json)
{
	char amendment[STORE_AMENDMENT_NAME_MAX + 1];
	char *policy_text = NULL, *amendment_text = NULL;
	struct store_evidence e;
	struct evidence_refs refs;
	int err = 0, ret;
	enum verdict_evidence_status st = VERDICT_EVIDENCE_INTERNAL;

	*json = NULL;
	ret = store_evidence_get(app->store, verdict_id, &e);
	if (ret == -ENOENT)
		return VERDICT_EVIDENCE_UNKNOWN;
	if (ret)
		return ret == -ENOMEM ? VERDICT_EVIDENCE_INTERNAL : VERDICT_EVIDENCE_STORE_FAILED;
	if (evidence_record_refs(e.record, &refs)) {
		log_error("evidence: the stored record of verdict %lld does not parse",
			  (long long)verdict_id);
		goto out;
	}
	if (refs.has_policy && refs.policy_version > 0)
		policy_text = kept_policy(app, verdict_id, refs.policy, refs.policy_version, &err);
	if (refs.amendment_version > 0) {
		store_amendment_name(refs.agent, amendment);
		amendment_text = kept_policy(app, verdict_id, amendment, refs.amendment_version,
					     &err);
	}
	if (err) {
		st = err == -ENOMEM ? VERDICT_EVIDENCE_INTERNAL : VERDICT_EVIDENCE_STORE_FAILED;
		goto out;
	}
	if (refs.has_boot_log && !e.boot_log)
		log_warn("evidence: verdict %lld names an event log of which no copy is kept;"
			 " exported without it", (long long)verdict_id);
	*json = evidence_record_export(e.record, verdict_id, e.ak_pub, e.ak_pub_len, policy_text,
				       amendment_text, e.boot_log, e.boot_log_len);
	st = *json ? VERDICT_EVIDENCE_OK : VERDICT_EVIDENCE_INTERNAL;
out:
	free(policy_text);
	free(amendment_text);
	store_evidence_release(&e);
	return st;
}
