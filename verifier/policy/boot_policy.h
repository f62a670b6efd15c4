/*
 * boot_policy: the `boot` section of a policy (format: policies/README.md, "Boot policy"). It
 * says which kernels (Authenticode digests, PCR 4), boot applications, firmware events (PCR 0),
 * Secure Boot state and PK/KEK/db/dbx (PCR 7) and command lines (PCR 9) a machine may boot
 * with. Parsing, serialising and teaching live here; judging a log is verifier/decision/boot_check.c.
 *
 * Ownership: boot_policy_parse() returns a policy the caller frees with boot_policy_free()
 * (NULL-safe). It is plain data after parsing: lookups are read-only and thread-safe;
 * boot_policy_teach() writes, so it is for a private copy only (policy.c enforces that).
 */
#ifndef VERIFIER_BOOT_POLICY_H
#define VERIFIER_BOOT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "proto/eventlog.h"
#include "proto/limits.h"
#include "proto/pcrs.h"

#define BOOT_POLICY_LIST_MAX 1024u /* entries in one list (kernels, db, firmware, ...) */
#define BOOT_POLICY_NAME_MAX 256u  /* bytes of a kernel's or firmware's name */

/* What a stored boot finding is about (its template_name column); approval teaches that list. */
#define BOOT_CAT_KERNEL "boot:kernel"
#define BOOT_CAT_FIRMWARE "boot:firmware"
#define BOOT_CAT_PK "boot:pk"
#define BOOT_CAT_KEK "boot:kek"
#define BOOT_CAT_DB "boot:db"
#define BOOT_CAT_DBX "boot:dbx"
#define BOOT_CAT_CMDLINE "boot:cmdline"
#define BOOT_CAT_SECURE_BOOT "boot:secure_boot"
#define BOOT_CAT_EVENT "boot:event"

struct boot_digest {
	const struct alg *alg;
	uint8_t d[LIMIT_DIGEST];
	char *name; /* NULL, or what the operator called it ("bzImage 6.1.0-attest") */
};

struct boot_list {
	bool set; /* the key is present: the list is judged (an empty list allows nothing) */
	size_t n;
	struct boot_digest *v;
};

enum boot_secure {
	BOOT_SECURE_ANY = 0,
	BOOT_SECURE_ON,
	BOOT_SECURE_OFF,
};

struct boot_cmdline_rules {
	bool set;
	size_t nexact, nrequired, nforbidden;
	char **exact;     /* whole command lines that pass as they are */
	char **required;  /* words that must be kernel parameters */
	char **forbidden; /* words (or, without '=', parameter names) that must not be */
};

struct boot_policy {
	struct boot_list kernels, boot_apps, firmware, pk, kek, db, dbx;
	enum boot_secure secure_boot;
	struct boot_cmdline_rules cmdline;
	uint8_t digest[32]; /* SHA-256 of the canonical JSON: which policy a judgement followed */
};

/* Parses the value of "boot". NULL with err set (naming the key) on a bad section. */
struct boot_policy *boot_policy_parse(const json_t *v, char *err, size_t errlen);
/* An empty section: a log is required and must replay; nothing else is judged. */
struct boot_policy *boot_policy_new(void);
void boot_policy_free(struct boot_policy *bp);
/* The section as JSON (new reference), keys sorted on dump; NULL on allocation failure. */
json_t *boot_policy_json(const struct boot_policy *bp);

/*
 * The entry of l that lists one of e's digests, or NULL. With quoted, only digests in banks where
 * quoted covers e's PCR count: a digest in another bank was never compared with a quote, and is
 * the agent's word. NULL: any bank.
 */
const struct boot_digest *boot_list_match(const struct boot_list *l, const struct eventlog_event *e,
					  const struct pcr_set *quoted);

/*
 * The kernel parameters of a command line broken into words the way the kernel does
 * (next_arg(): whitespace outside double quotes separates, quotes are dropped, "--" ends the
 * kernel's part). Calls cb for each word; stops early if cb returns true and returns true.
 */
bool boot_cmdline_words(const char *cmdline, bool (*cb)(const char *word, size_t len, void *arg),
			void *arg);

/*
 * Judges a command line against the rules: NULL if it passes, else a static-or-arg string
 * naming the first rule it breaks, written into why ("lacks the required \"ima_policy=tcb\"").
 */
const char *boot_cmdline_judge(const struct boot_cmdline_rules *r, const char *cmdline, char *why,
			       size_t whylen);
/*
 * The same against the required and forbidden words alone: what an exact command line of an
 * agent's amendment must keep (an amendment adds, it never lifts the policy's words).
 */
const char *boot_cmdline_judge_words(const struct boot_cmdline_rules *r, const char *cmdline,
				     char *why, size_t whylen);

/*
 * Approval of a finding: adds what it was about to the policy. category is a BOOT_CAT_*;
 * digest "alg:hex" for the lists, subject the command line for BOOT_CAT_CMDLINE. 0, -EINVAL
 * (why set) for a finding that teaches nothing (Secure Boot state, an unverifiable event) or
 * a bad digest, -E2BIG past a cap, -ENOMEM.
 */
int boot_policy_teach(struct boot_policy *bp, const char *category, const char *subject,
		      const char *digest, char *why, size_t whylen);

#endif
