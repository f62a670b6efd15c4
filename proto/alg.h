/*
 * The hash algorithms of the protocol, in one table.
 *
 * Each row is one algorithm: its TPM2_ALG_ID, its name on the wire and in policies ("sha256"),
 * its digest size, its bit in a replay state (enum replay_bank), its OpenSSL digest, its number
 * in the kernel's enum hash_algo (the hash byte of an IMA signature), and the uses that accept
 * it. Every module that maps an algorithm id, a name or a size asks this table; a use that
 * accepts an algorithm says so here (alg_allows()) and nowhere else.
 *
 * The table is read-only data: the pointers returned stay valid for the whole program and are
 * never freed. Rows keep their order (a new algorithm is appended), since the verifier's
 * compiled policy stores a row index (a - alg_table) in one byte.
 */
#ifndef PROTO_ALG_H
#define PROTO_ALG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

/* Where an algorithm may be used; each bit is one decision made today in one module. */
enum alg_use {
	ALG_USE_PCR = 1u << 0,        /* a PCR bank in a selection, quote or evidence (pcrs.c) */
	ALG_USE_QUOTE = 1u << 1,      /* quote signature hash and PCR digest (quote.c, AK scheme) */
	ALG_USE_REPLAY = 1u << 2,     /* a PCR 10 bank replayed from the IMA list (replay.c) */
	ALG_USE_POLICY = 1u << 3,     /* a digest in an allowlist policy (verifier/policy/policy.c) */
	ALG_USE_CREDENTIAL = 1u << 4, /* KDFa/KDFe and the outer wrap of MakeCredential */
	ALG_USE_KEY_NAME = 1u << 5,   /* the nameAlg of an EK or AK (tpmkey.c) */
	ALG_USE_IMA = 1u << 6,        /* an IMA file digest with a TPM id (imalog.c digest_alg) */
	ALG_USE_FILE_SIG = 1u << 7,   /* the hash of an IMA file signature (imasig.c) */
};

struct alg {
	uint16_t id;          /* TPM2_ALG_ID */
	const char *name;     /* lowercase, as in evidence JSON, policies and IMA d-ng fields */
	size_t size;          /* digest bytes, at most LIMIT_DIGEST */
	uint32_t replay_bank; /* enum replay_bank bit */
	uint32_t uses;        /* enum alg_use bits */
	const EVP_MD *(*evp)(void); /* through alg_evp_md() */
	uint8_t kernel_hash;  /* HASH_ALGO_* of include/uapi/linux/hash_info.h */
};

#define ALG_COUNT 4u

/* Every row; iterate with alg_allows() to pick the ones a use accepts. */
extern const struct alg alg_table[ALG_COUNT];

/* The row for a TPM2_ALG_ID, or NULL if the id is not in the table. */
const struct alg *alg_by_id(uint16_t id);
/* The row for an exact name ("sha256", case-sensitive), or NULL. */
const struct alg *alg_by_name(const char *name);
/* Same for a name that is not NUL-terminated. */
const struct alg *alg_by_name_len(const char *name, size_t len);
/* The row for the kernel's HASH_ALGO_* number (an IMA signature's hash byte), or NULL. */
const struct alg *alg_by_kernel_hash(uint8_t kernel_hash);
/* The row for an id if that use accepts it, else NULL. */
const struct alg *alg_for_use(uint16_t id, enum alg_use use);

/* True when a is not NULL and use accepts it. */
bool alg_allows(const struct alg *a, enum alg_use use);

/*
 * out = H_alg(a || b || c) (alg->size bytes; a piece may be NULL with length 0) through
 * OpenSSL's low-level functions: no allocation, no EVP context, for the per-entry digests of
 * the IMA cursor and the replay. 0, or -EINVAL for NULL or an algorithm it has no code for.
 */
int alg_digest3(const struct alg *alg, const void *a, size_t alen, const void *b, size_t blen,
		const void *c, size_t clen, uint8_t *out);

/* OpenSSL's digest for a (a static object: never free it); NULL for NULL. */
const EVP_MD *alg_evp_md(const struct alg *a);

#endif
