/* An active agent for store tests; see storeagent.h. */
#include "tests/lib/storeagent.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

int storeagent_active(struct store *st, const char *id, int64_t now)
{
	uint8_t ek[32], ak[32];
	enum store_enroll_result r;
	struct store_agent a;
	char seed[LIMIT_AGENT_ID + 4];
	int ret;

	snprintf(seed, sizeof(seed), "ek:%s", id);
	EVP_Digest(seed, strlen(seed), ek, NULL, EVP_sha256(), NULL);
	seed[0] = 'a';
	EVP_Digest(seed, strlen(seed), ak, NULL, EVP_sha256(), NULL);
	memset(&a, 0, sizeof(a));
	snprintf(a.id, sizeof(a.id), "%s", id);
	a.ek_pub = ek;
	a.ek_pub_len = sizeof(ek);
	a.ek_cert = (uint8_t *)"cert";
	a.ek_cert_len = 4;
	a.ak_pub = ak;
	a.ak_pub_len = sizeof(ak);
	a.ak_name_len = 34;
	memcpy(a.ak_name, ak, 32);
	memset(a.cred_digest, 0x5a, sizeof(a.cred_digest));
	ret = store_agent_enroll(st, &a, now, &r);
	if (ret)
		return ret;
	if (r == STORE_ENROLL_ALREADY)
		return 0;
	if (r != STORE_ENROLL_NEW && r != STORE_ENROLL_REFRESHED)
		return -EEXIST;
	return store_agent_activate(st, id, a.cred_digest, now);
}
