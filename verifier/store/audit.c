/* The audit trail's canonical encoding and chain check; see audit.h. */
#include "verifier/store/audit.h"

#include <errno.h>
#include <string.h>

#include <openssl/evp.h>

#include "common/log.h"

static bool put_u64(EVP_MD_CTX *md, uint64_t v)
{
	uint8_t b[8];

	for (int i = 7; i >= 0; i--, v >>= 8)
		b[i] = (uint8_t)v;
	return EVP_DigestUpdate(md, b, sizeof(b)) == 1;
}

static bool put_text(EVP_MD_CTX *md, const char *s)
{
	size_t len = s ? strlen(s) : 0;
	uint8_t b[4] = { (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
			 (uint8_t)len };

	if (len > UINT32_MAX)
		return false;
	return EVP_DigestUpdate(md, b, sizeof(b)) == 1 &&
	       (!len || EVP_DigestUpdate(md, s, len) == 1);
}

int audit_record_hash(const struct audit_record *r, uint8_t out[AUDIT_HASH_LEN])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned int n = 0;
	bool ok;

	ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 &&
	     EVP_DigestUpdate(md, AUDIT_DOMAIN, sizeof(AUDIT_DOMAIN)) == 1 &&
	     put_u64(md, (uint64_t)r->seq) && put_u64(md, (uint64_t)r->time) &&
	     put_text(md, r->kind) && put_text(md, r->actor) && put_text(md, r->agent) &&
	     put_text(md, r->detail) && EVP_DigestUpdate(md, r->prev_hash, AUDIT_HASH_LEN) == 1 &&
	     EVP_DigestFinal_ex(md, out, &n) == 1 && n == AUDIT_HASH_LEN;
	EVP_MD_CTX_free(md);
	if (!ok) {
		log_error("audit: SHA-256 failed");
		return -EIO;
	}
	return 0;
}

void audit_check_init(struct audit_check *c)
{
	memset(c, 0, sizeof(*c));
	c->next_seq = 1;
}

static bool broken(struct audit_check *c, int64_t seq, const char *why)
{
	c->failed = true;
	c->failed_seq = seq;
	c->why = why;
	return false;
}

bool audit_check_next(struct audit_check *c, const struct audit_record *r)
{
	uint8_t h[AUDIT_HASH_LEN];

	if (c->failed)
		return false;
	if (r->seq != c->next_seq)
		return broken(c, c->next_seq, r->seq > c->next_seq ? "missing (a gap in seq)"
								   : "out of order");
	if (memcmp(r->prev_hash, c->prev_hash, AUDIT_HASH_LEN) != 0)
		return broken(c, r->seq, "does not follow the record before it (prev_hash)");
	if (audit_record_hash(r, h))
		return broken(c, r->seq, "cannot be hashed");
	if (memcmp(h, r->hash, AUDIT_HASH_LEN) != 0)
		return broken(c, r->seq, "was changed (its hash does not match its content)");
	memcpy(c->prev_hash, r->hash, AUDIT_HASH_LEN);
	c->next_seq++;
	return true;
}

static void be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

void audit_head_message(int64_t seq, const uint8_t hash[AUDIT_HASH_LEN], int64_t time,
			uint8_t out[AUDIT_HEAD_MSG_LEN])
{
	memcpy(out, AUDIT_HEAD_DOMAIN, sizeof(AUDIT_HEAD_DOMAIN));
	be64(out + sizeof(AUDIT_HEAD_DOMAIN), (uint64_t)seq);
	memcpy(out + sizeof(AUDIT_HEAD_DOMAIN) + 8, hash, AUDIT_HASH_LEN);
	be64(out + sizeof(AUDIT_HEAD_DOMAIN) + 8 + AUDIT_HASH_LEN, (uint64_t)time);
}
