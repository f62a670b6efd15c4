/* The cluster key and its challenges; the format and the contract are in cluster.h. */
#include "verifier/store/cluster.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "common/file.h"
#include "common/log.h"
#include "proto/dynbuf.h"

#define NONCE_VERSION 0x01
#define NONCE_SIGNED 16u /* version, expiry and random: what the tag covers with the agent */
#define TAG_LEN (CLUSTER_NONCE_LEN - NONCE_SIGNED)
#define DOMAIN "attest cluster challenge v1"

struct cluster {
	EVP_MAC_CTX *mac; /* keyed once; each use works on a copy (EVP_MAC_CTX_dup) */
};

void cluster_free(struct cluster *c)
{
	if (!c)
		return;
	EVP_MAC_CTX_free(c->mac); /* OpenSSL wipes the key it holds */
	free(c);
}

int cluster_load(const char *path, struct cluster **out)
{
	OSSL_PARAM params[2];
	struct dynbuf b;
	struct cluster *c = NULL;
	EVP_MAC *hmac = NULL;
	size_t len;
	int ret;

	*out = NULL;
	dynbuf_init(&b, CLUSTER_KEY_MAX);
	ret = file_read(path, &b);
	if (ret) {
		if (ret == -EFBIG)
			log_error("cluster key \"%s\": larger than %u bytes", path, CLUSTER_KEY_MAX);
		else
			log_error("cluster key \"%s\": %s", path, strerror(-ret));
		goto out;
	}
	len = b.len;
	while (len > 0 && (((char *)b.buf)[len - 1] == '\n' || ((char *)b.buf)[len - 1] == '\r'))
		len--;
	if (len < CLUSTER_KEY_MIN) {
		log_error("cluster key \"%s\": %zu bytes; it needs at least %u (make one with"
			  " `openssl rand -hex 32`, and give every verifier the same file)", path, len,
			  CLUSTER_KEY_MIN);
		ret = -EINVAL;
		goto out;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		ret = -ENOMEM;
		goto out;
	}
	hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	c->mac = hmac ? EVP_MAC_CTX_new(hmac) : NULL;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0);
	params[1] = OSSL_PARAM_construct_end();
	if (!c->mac || !EVP_MAC_init(c->mac, (const unsigned char *)b.buf, len, params)) {
		log_openssl("cluster key: HMAC-SHA256");
		ret = -EIO;
		goto out;
	}
	*out = c;
	c = NULL;
	ret = 0;
out:
	cluster_free(c);
	EVP_MAC_free(hmac);
	if (b.buf)
		OPENSSL_cleanse(b.buf, b.len);
	dynbuf_release(&b);
	return ret;
}

/* The tag of nonce[0..NONCE_SIGNED) for agent. */
static int tag_of(const struct cluster *c, const char *agent, const uint8_t *signed_part,
		  uint8_t tag[TAG_LEN])
{
	static const uint8_t zero = 0;
	uint8_t full[EVP_MAX_MD_SIZE];
	EVP_MAC_CTX *m = EVP_MAC_CTX_dup(c->mac);
	size_t n = 0;
	int ok;

	ok = m && EVP_MAC_update(m, (const uint8_t *)DOMAIN, sizeof(DOMAIN)) && /* with its NUL */
	     EVP_MAC_update(m, (const uint8_t *)agent, strlen(agent)) &&
	     EVP_MAC_update(m, &zero, 1) && EVP_MAC_update(m, signed_part, NONCE_SIGNED) &&
	     EVP_MAC_final(m, full, &n, sizeof(full)) && n >= TAG_LEN;
	EVP_MAC_CTX_free(m);
	if (!ok) {
		log_openssl("cluster challenge: HMAC");
		return -EIO;
	}
	memcpy(tag, full, TAG_LEN);
	OPENSSL_cleanse(full, sizeof(full));
	return 0;
}

int cluster_nonce_make(const struct cluster *c, const char *agent, int64_t expires_at,
		       uint8_t out[CLUSTER_NONCE_LEN])
{
	uint64_t e = (uint64_t)expires_at;

	out[0] = NONCE_VERSION;
	for (int i = 0; i < 8; i++)
		out[1 + i] = (uint8_t)(e >> (56 - 8 * i));
	if (RAND_bytes(out + 9, NONCE_SIGNED - 9) != 1) {
		log_openssl("cluster challenge: random bytes");
		return -EIO;
	}
	return tag_of(c, agent, out, out + NONCE_SIGNED);
}

int cluster_nonce_check(const struct cluster *c, const char *agent, const uint8_t *nonce,
			size_t len, int64_t now, int64_t *expires_at)
{
	uint8_t tag[TAG_LEN];
	uint64_t e = 0;

	*expires_at = 0;
	if (len != CLUSTER_NONCE_LEN || nonce[0] != NONCE_VERSION ||
	    tag_of(c, agent, nonce, tag) != 0 ||
	    CRYPTO_memcmp(tag, nonce + NONCE_SIGNED, TAG_LEN) != 0)
		return -ENOENT;
	for (int i = 0; i < 8; i++)
		e = e << 8 | nonce[1 + i];
	*expires_at = (int64_t)e;
	return (int64_t)e >= now ? 0 : -ETIMEDOUT;
}
