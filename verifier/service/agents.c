/* Enrollment and activation; the contract is in agents.h. */
#include "verifier/service/agents.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "verifier/facts/agentcache.h"

enum agents_status agents_enroll(struct app *app, const struct enroll_request *er,
				 struct agents_enrollment *out)
{
	struct enroll_result *res = &out->result;
	struct store_admission adm;
	enum store_enroll_result sr;
	struct store_agent a;

	memset(out, 0, sizeof(*out));
	pthread_rwlock_rdlock(&app->reload_lock); /* the EK CAs may be reloaded (SIGHUP) */
	out->check = enroll_check(app->trust, er, res);
	pthread_rwlock_unlock(&app->reload_lock);
	if (out->check == ENROLL_INTERNAL)
		return AGENTS_INTERNAL;
	if (out->check != ENROLL_OK)
		return AGENTS_REFUSED;

	memset(&a, 0, sizeof(a));
	snprintf(a.id, sizeof(a.id), "%s", er->agent_id);
	a.state = AGENT_PENDING;
	a.ek_pub = er->ek_pub;
	a.ek_pub_len = er->ek_pub_len;
	a.ek_cert = er->ek_cert;
	a.ek_cert_len = res->ek_cert_len; /* without the NV index's fill */
	a.ak_pub = er->ak_pub;
	a.ak_pub_len = er->ak_pub_len;
	memcpy(a.ak_name, res->ak_name, res->ak_name_len);
	a.ak_name_len = res->ak_name_len;
	memcpy(a.cred_digest, res->secret_digest, sizeof(a.cred_digest));
	memset(&adm, 0, sizeof(adm));
	adm.required = app->admission == ADMISSION_REGISTERED;
	memcpy(adm.ek_pub_sha256, res->ek_pub_sha256, sizeof(adm.ek_pub_sha256));
	memcpy(adm.ek_spki_sha256, res->ek_spki_sha256, sizeof(adm.ek_spki_sha256));
	if (store_agent_enroll_admitted(app->store, &a, &adm, (int64_t)time(NULL), &sr))
		return AGENTS_STORE_FAILED;
	switch (sr) {
	case STORE_ENROLL_NOT_REGISTERED:
		out->unregistered = true;
		log_warn("enroll: agent \"%s\" refused: not admitted (no registration;"
			 " --admission registered)", a.id);
		return AGENTS_NOT_ADMITTED;
	case STORE_ENROLL_EK_NOT_REGISTERED:
		log_warn("enroll: agent \"%s\" refused: not admitted (its registration names"
			 " another EK)", a.id);
		return AGENTS_NOT_ADMITTED;
	case STORE_ENROLL_ALREADY:
		return AGENTS_ALREADY_ACTIVE;
	case STORE_ENROLL_CONFLICT:
		log_warn("enroll: agent \"%s\" refused: id taken by another TPM or AK", a.id);
		return AGENTS_ID_TAKEN;
	case STORE_ENROLL_EK_IN_USE:
		log_warn("enroll: agent \"%s\" refused: its EK is active as another agent", a.id);
		return AGENTS_EK_IN_USE;
	case STORE_ENROLL_EK_PENDING_FULL:
		log_warn("enroll: agent \"%s\" refused: its EK has as many pending enrollments"
			 " under other ids as allowed", a.id);
		return AGENTS_EK_PENDING_FULL;
	case STORE_ENROLL_PENDING_FULL:
		log_warn("enroll: agent \"%s\" refused: as many enrollments are pending as allowed",
			 a.id);
		return AGENTS_PENDING_FULL;
	case STORE_ENROLL_RETIRED:
		log_warn("enroll: agent \"%s\" refused: an operator retired it", a.id);
		return AGENTS_RETIRED;
	case STORE_ENROLL_NEW:
		break;
	case STORE_ENROLL_REPLACED:
		out->replaced = true;
		/* Its old AK must not judge another round, whatever the cache holds. */
		agentcache_invalidate(app->agents, a.id);
		break;
	default:
		out->reenrolled = true;
		break;
	}
	log_info("enroll: agent \"%s\" %s, waiting for activation", a.id,
		 out->replaced ? "enrolled with a new EK and AK after a reset"
		 : out->reenrolled ? "re-enrolled" : "enrolled");
	return AGENTS_OK;
}

enum agents_status agents_activate(struct app *app, const char *id, const uint8_t *secret,
				   size_t secret_len)
{
	enum agents_status st = AGENTS_OK;
	struct store_agent a;
	int ret;

	if (!agent_id_valid(id))
		return AGENTS_UNKNOWN_AGENT;
	ret = store_agent_get(app->store, id, &a);
	if (ret == -ENOENT)
		return AGENTS_UNKNOWN_AGENT;
	if (ret)
		return AGENTS_STORE_FAILED;
	if (!enroll_secret_matches(a.cred_digest, secret, secret_len)) {
		log_warn("activate: agent \"%s\" sent a wrong secret", a.id);
		st = AGENTS_WRONG_SECRET;
		goto out;
	}
	if (a.state == AGENT_PENDING) {
		ret = store_agent_activate(app->store, a.id, a.cred_digest, (int64_t)time(NULL));
		if (ret == -ESTALE) {
			/* Re-enrolled in between: this secret belongs to a dead credential. */
			st = AGENTS_CREDENTIAL_REPLACED;
			goto out;
		}
		if (ret == -ETIMEDOUT) {
			log_warn("activate: agent \"%s\": its enrollment expired", a.id);
			st = AGENTS_EXPIRED;
			goto out;
		}
		if (ret == -EEXIST) {
			log_warn("activate: agent \"%s\" refused: its EK is active as another agent",
				 a.id);
			st = AGENTS_EK_IN_USE;
			goto out;
		}
		if (ret) {
			st = AGENTS_STORE_FAILED;
			goto out;
		}
		log_info("activate: agent \"%s\" active, its AK is trusted", a.id);
	}
out:
	store_agent_release(&a);
	return st;
}
