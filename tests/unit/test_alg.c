/*
 * proto/alg: the one table of hash algorithms. Checks each row against facts stated here
 * independently (TPM ids from the TPM 2.0 spec, sizes, OpenSSL), the lookups, and that every
 * use accepts exactly the set it accepted before the table existed (sha1 everywhere but where
 * a signature, a key name or a credential depends on the hash). The modules that ask the table
 * are checked through their own API, so a module that stops asking it is caught too.
 */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>

#include "proto/alg.h"
#include "proto/credential.h"
#include "proto/limits.h"
#include "proto/pcrs.h"
#include "proto/quote.h"
#include "proto/replay.h"
#include "tests/unit/check.h"
#include "verifier/policy/policy.h"

static const struct {
	uint16_t id; /* TPM 2.0 Part 2, table 9 (TPM_ALG_ID) */
	const char *name;
	const char *evp_name;
	size_t size;
	uint32_t bank;
	bool strong; /* accepted for quotes, key names and credentials */
} want[] = {
	{0x0004, "sha1", "SHA1", 20, REPLAY_SHA1, false},
	{0x000B, "sha256", "SHA256", 32, REPLAY_SHA256, true},
	{0x000C, "sha384", "SHA384", 48, REPLAY_SHA384, true},
	{0x000D, "sha512", "SHA512", 64, REPLAY_SHA512, true},
};
#define NWANT (sizeof(want) / sizeof(want[0]))

static void test_rows(void)
{
	size_t largest = 0;
	uint32_t banks = 0;

	CHECK(ALG_COUNT == NWANT, "ALG_COUNT %u, want %zu", ALG_COUNT, NWANT);
	for (size_t i = 0; i < NWANT && i < ALG_COUNT; i++) {
		const struct alg *a = &alg_table[i];
		const EVP_MD *md = alg_evp_md(a);

		/* Row order is stored by the verifier's policy records: it must not change. */
		CHECK(a->id == want[i].id, "row %zu id 0x%04x", i, a->id);
		CHECK(strcmp(a->name, want[i].name) == 0, "row %zu name %s", i, a->name);
		CHECK(a->size == want[i].size, "row %zu size %zu", i, a->size);
		CHECK(a->replay_bank == want[i].bank, "row %zu bank %u", i, a->replay_bank);
		CHECK(md && EVP_MD_get_size(md) == (int)a->size, "row %zu EVP size", i);
		CHECK(md && EVP_MD_is_a(md, want[i].evp_name), "row %zu EVP is %s", i, want[i].evp_name);
		CHECK(a->size <= LIMIT_DIGEST, "row %zu fits LIMIT_DIGEST", i);
		CHECK(!(banks & a->replay_bank), "row %zu bank bit unique", i);
		banks |= a->replay_bank;
		if (a->size > largest)
			largest = a->size;
	}
	CHECK(largest == LIMIT_DIGEST, "LIMIT_DIGEST %u is the largest digest %zu", LIMIT_DIGEST,
	      largest);
	CHECK(banks == REPLAY_ALL_BANKS, "every replay bank has a row");
	CHECK(alg_evp_md(NULL) == NULL, "no EVP for NULL");
}

static void test_lookup(void)
{
	for (size_t i = 0; i < NWANT; i++) {
		const struct alg *a = alg_by_id(want[i].id);
		size_t n = strlen(want[i].name);
		char longer[16];

		CHECK(a && a == &alg_table[i], "by id 0x%04x", want[i].id);
		CHECK(alg_by_name(want[i].name) == a, "by name %s", want[i].name);
		CHECK(alg_by_name_len(want[i].name, n) == a, "by name_len %s", want[i].name);
		CHECK(alg_by_name_len(want[i].name, n - 1) == NULL, "prefix of %s", want[i].name);
		snprintf(longer, sizeof(longer), "%sx", want[i].name);
		CHECK(alg_by_name_len(longer, n) == a, "name_len stops at %zu", n);
		CHECK(alg_by_name(longer) == NULL, "%s unknown", longer);
	}
	CHECK(alg_by_id(0) == NULL, "id 0");
	CHECK(alg_by_id(0x0012) == NULL, "sm3_256 is not in the table");
	CHECK(alg_by_id(0x0010) == NULL, "TPM_ALG_NULL");
	CHECK(alg_by_name("SHA256") == NULL, "names are lowercase");
	CHECK(alg_by_name("") == NULL, "empty name");
	CHECK(alg_by_name(NULL) == NULL, "NULL name");
	CHECK(alg_by_name("md5") == NULL, "md5");
	CHECK(alg_by_name("sm3") == NULL, "sm3");
}

static void test_uses(void)
{
	const enum alg_use all[] = { ALG_USE_PCR, ALG_USE_REPLAY, ALG_USE_POLICY, ALG_USE_IMA };
	const enum alg_use strong[] = { ALG_USE_QUOTE, ALG_USE_CREDENTIAL, ALG_USE_KEY_NAME,
					ALG_USE_FILE_SIG };

	for (size_t i = 0; i < NWANT; i++) {
		const struct alg *a = alg_by_id(want[i].id);

		for (size_t u = 0; u < sizeof(all) / sizeof(all[0]); u++) {
			CHECK(alg_allows(a, all[u]), "%s allowed for use 0x%x", want[i].name, all[u]);
			CHECK(alg_for_use(want[i].id, all[u]) == a, "%s for use 0x%x", want[i].name,
			      all[u]);
		}
		for (size_t u = 0; u < sizeof(strong) / sizeof(strong[0]); u++) {
			CHECK(alg_allows(a, strong[u]) == want[i].strong, "%s use 0x%x", want[i].name,
			      strong[u]);
			CHECK((alg_for_use(want[i].id, strong[u]) != NULL) == want[i].strong,
			      "%s for use 0x%x", want[i].name, strong[u]);
		}
	}
	CHECK(!alg_allows(NULL, ALG_USE_PCR), "NULL allows nothing");
	CHECK(alg_for_use(0x0012, ALG_USE_PCR) == NULL, "unknown id for a use");
}

/* The kernel's HASH_ALGO_* numbers (include/uapi/linux/hash_info.h), as IMA signatures carry them. */
static void test_kernel_hash(void)
{
	const struct { uint8_t k; const char *name; } rows[] = {
		{2, "sha1"}, {4, "sha256"}, {5, "sha384"}, {6, "sha512"},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct alg *a = alg_by_kernel_hash(rows[i].k);

		CHECK(a && strcmp(a->name, rows[i].name) == 0, "HASH_ALGO %u is %s", rows[i].k,
		      rows[i].name);
	}
	CHECK(alg_by_kernel_hash(0) == NULL, "md4 unknown");
	CHECK(alg_by_kernel_hash(1) == NULL, "md5 unknown");
	CHECK(alg_by_kernel_hash(7) == NULL, "sha224 unknown");
	CHECK(alg_by_kernel_hash(255) == NULL, "255 unknown");
}

/* The low-level digest equals OpenSSL's EVP one over the same three pieces. */
static void test_digest3(void)
{
	static const uint8_t a[] = "first piece ", b[] = "second, longer than one block? no", c[300] = { 7 };
	uint8_t got[LIMIT_DIGEST], want_md[EVP_MAX_MD_SIZE];

	for (size_t i = 0; i < ALG_COUNT; i++) {
		const struct alg *al = &alg_table[i];
		EVP_MD_CTX *ctx = EVP_MD_CTX_new();
		unsigned int n = 0;
		int ok = ctx && EVP_DigestInit_ex(ctx, alg_evp_md(al), NULL) &&
			 EVP_DigestUpdate(ctx, a, sizeof(a)) && EVP_DigestUpdate(ctx, b, sizeof(b)) &&
			 EVP_DigestUpdate(ctx, c, sizeof(c)) && EVP_DigestFinal_ex(ctx, want_md, &n);

		EVP_MD_CTX_free(ctx);
		memset(got, 0, sizeof(got));
		CHECK(ok && n == al->size && alg_digest3(al, a, sizeof(a), b, sizeof(b), c, sizeof(c),
							 got) == 0 && memcmp(got, want_md, n) == 0,
		      "%s: three pieces", al->name);
		ok = EVP_Digest(a, sizeof(a), want_md, &n, alg_evp_md(al), NULL);
		CHECK(ok && alg_digest3(al, a, sizeof(a), NULL, 0, NULL, 0, got) == 0 &&
			      memcmp(got, want_md, n) == 0,
		      "%s: one piece", al->name);
	}
	CHECK(alg_digest3(NULL, a, 1, NULL, 0, NULL, 0, got) == -EINVAL, "NULL alg");
}

/* Each module answers as the table says. */
static void test_modules(void)
{
	struct pcr_set set = { 0 };
	uint8_t out[LIMIT_DIGEST], key[32] = { 1 };
	size_t outlen;

	for (size_t i = 0; i < NWANT; i++) {
		uint16_t id = want[i].id;
		int rc;

		CHECK(pcr_alg_digest_size(id) == want[i].size, "pcr size %s", want[i].name);
		CHECK(pcr_alg_name(id) && strcmp(pcr_alg_name(id), want[i].name) == 0, "pcr name %s",
		      want[i].name);
		CHECK(pcr_alg_from_name(want[i].name) == id, "pcr id %s", want[i].name);
		CHECK(pcr_set_add_bank(&set, id) != NULL, "pcr bank %s", want[i].name);
		CHECK(replay_bank_of_alg(id) == want[i].bank, "replay bank %s", want[i].name);
		CHECK(policy_alg_digest_size(id) == want[i].size, "policy size %s", want[i].name);
		CHECK(policy_alg_from_name(want[i].name, strlen(want[i].name)) == id, "policy id %s",
		      want[i].name);
		CHECK(policy_alg_name(id) && strcmp(policy_alg_name(id), want[i].name) == 0,
		      "policy name %s", want[i].name);
		rc = credential_kdfa(id, key, sizeof(key), "STORAGE", NULL, 0, NULL, 0, 128, out,
				     sizeof(out));
		CHECK((rc == 0) == want[i].strong && (rc == 0 || rc == -EINVAL), "kdfa %s: %d",
		      want[i].name, rc);
		rc = quote_pcr_digest(id, &set, out, &outlen);
		CHECK((rc == 0) == want[i].strong, "quote digest %s: %d", want[i].name, rc);
		CHECK(rc != 0 || outlen == want[i].size, "quote digest size %s", want[i].name);
	}
	CHECK(pcr_alg_digest_size(0x0012) == 0 && pcr_alg_name(0x0012) == NULL &&
		      pcr_alg_from_name("sm3_256") == 0,
	      "pcr: unknown alg");
	CHECK(replay_bank_of_alg(0x0012) == 0, "replay: unknown alg");
	CHECK(policy_alg_digest_size(0x0012) == 0 && policy_alg_from_name("md5", 3) == 0,
	      "policy: unknown alg");
}

int main(void)
{
	CASE(test_rows);
	CASE(test_lookup);
	CASE(test_uses);
	CASE(test_kernel_hash);
	CASE(test_digest3);
	CASE(test_modules);
	return check_finish();
}
