/*
 * Every cap on untrusted sizes and counts, in one place.
 *
 * Parsers reject input past these limits with a reason; they never truncate. Raise a cap here
 * and nowhere else.
 */
#ifndef PROTO_LIMITS_H
#define PROTO_LIMITS_H

/*
 * A cap that a static message spells (a parser's `why` string) is a plain decimal literal, so
 * LIMIT_STR() turns it into text: "at most " LIMIT_STR(LIMIT_EK_CERT) " bytes".
 */
#define LIMIT_STR_(x) #x
#define LIMIT_STR(x) LIMIT_STR_(x)

/* Digests */
#define LIMIT_DIGEST 64 /* largest digest of any algorithm (sha512; see proto/alg) */
#define LIMIT_ALG_NAME 16u /* longest algorithm name in text ("sha512"; an IMA d-ng prefix) */
#define LIMIT_DIGEST_TYPE 7u /* "verity:": an fs-verity digest's type, as text writes it */
/* A digest as text, "[verity:]alg:hex": a policy's, a verdict's, a boot finding's */
#define LIMIT_DIGEST_TEXT (LIMIT_DIGEST_TYPE + LIMIT_ALG_NAME + 1 + 2 * LIMIT_DIGEST)
/* The same when the algorithm's name came from an IMA list and is escaped text (proto/text.h:
 * \xNN at worst for each of its bytes) */
#define LIMIT_DIGEST_TEXT_ESCAPED (LIMIT_DIGEST_TYPE + 4 * LIMIT_ALG_NAME + 1 + 2 * LIMIT_DIGEST)

/* TPM objects */
#define LIMIT_TPM_NAME (2u + LIMIT_DIGEST) /* a key's name: nameAlg (u16) || its digest */

/* IMA measurement list */
#define LIMIT_IMA_TEMPLATE_NAME 32u        /* longest template name accepted ("ima-modsig" is 10) */
#define LIMIT_IMA_TEMPLATE_DATA (1u << 20) /* one entry's template data (ima-buf can carry keys) */
#define LIMIT_IMA_FIELDS 16u               /* fields in one template */
#define LIMIT_IMA_PATH 4096u               /* n-ng names are unbounded in the kernel; PATH_MAX here */
#define LIMIT_IMA_LEGACY_NAME 255          /* IMA_EVENT_NAME_LEN_MAX: template `ima` pads n to 256 */
#define LIMIT_IMA_ENTRIES_PER_ROUND 2000000u
/*
 * Distinct violations (reason, path, digest) one round stores one by one; entries of one file
 * are one violation with a count. Entries of further files are stored as one
 * `violations_unrecorded` violation with their count: bounded, never silent.
 */
#define LIMIT_ROUND_VIOLATIONS 100000u
/* One whole record: u32 pcr | hash[20] | u32 name_len | name | u32 data_len | data */
#define LIMIT_IMA_RECORD (4u + 20u + 4u + LIMIT_IMA_TEMPLATE_NAME + 4u + LIMIT_IMA_TEMPLATE_DATA)

/* TPM */
#define LIMIT_NONCE_BYTES 64    /* TPM2B_DATA extraData holds at most sizeof(TPMT_HA) = 66 */
#define LIMIT_NONCE_MIN_BYTES 16
#define LIMIT_PCR_BANKS 4u      /* sha1, sha256, sha384, sha512 */
#define LIMIT_TPM2B_PUBLIC 1024 /* a marshalled TPM2B_PUBLIC (an EK or an AK) */
#define LIMIT_ID_OBJECT 512     /* MakeCredential's TPM2B_ID_OBJECT */
#define LIMIT_ENC_SECRET 1024   /* MakeCredential's TPM2B_ENCRYPTED_SECRET */
#define LIMIT_ATTEST 1024       /* a marshalled TPMS_ATTEST (sizeof in tss2 is < 1024) */
#define LIMIT_SIGNATURE 1024    /* a marshalled TPMT_SIGNATURE: RSA-4096 is 4+2+512 */

/* Firmware event log (proto/eventlog): real logs are 2-100 KiB (a large dbx, many option ROMs) */
#define LIMIT_EVENTLOG_BYTES (4u << 20)
#define LIMIT_EVENTLOG_EVENTS 65536u         /* records in one log */
#define LIMIT_EVENTLOG_EVENT_DATA (1u << 20) /* one record's data */
#define LIMIT_CMDLINE 4096u                  /* kernel command line (x86 COMMAND_LINE_SIZE: 2048) */

/* Protocol */
#define LIMIT_AGENT_ID 128                      /* bytes; [A-Za-z0-9._-] */
#define LIMIT_AGENT_INTERVAL 86400              /* seconds between an agent's rounds (its liveness) */
#define LIMIT_REQUEST_BODY (64u * 1024u * 1024u) /* evidence with a full first-boot list */
#define LIMIT_SMALL_BODY (64u * 1024u)          /* every request other than evidence */
#define LIMIT_JSON_DEPTH 16u
#define LIMIT_URL_ARG 255u                      /* bytes of one {id} in a URL path */
#define LIMIT_QUERY_NAME 32u                    /* bytes of a query parameter's name */
#define LIMIT_LIST_ROWS 10000u                  /* the largest ?limit= of a list call */
#define LIMIT_CONNECTIONS 1000u                 /* the verifier's open connections */
/*
 * What one client may hold (verifier/http/http_guard.h). Connections per client address
 * (--client-connections changes it: agents behind one NAT address share it). Absolute
 * deadlines, not idle timeouts: a request's headers within LIMIT_HEADER_SECONDS of the accept
 * or of the previous request's end; a body, or an answer, within LIMIT_TRANSFER_SECONDS plus
 * its length at LIMIT_TRANSFER_RATE bytes per second (64 MiB: 74 s). Bodies over
 * LIMIT_SMALL_BODY in flight, all connections together: at most LIMIT_BODY_BUDGET bytes
 * (then 503 with Retry-After), reserved from Content-Length before a byte is read, each
 * LIMIT_BODY_COST times over: while it is handled a body is held with its JSON tree and its
 * decoded log (a 60 MiB evidence body raised the peak RSS by 179 MiB).
 */
#define LIMIT_CONNECTIONS_PER_CLIENT 64u
#define LIMIT_HEADER_SECONDS 10u
#define LIMIT_TRANSFER_SECONDS 10u
#define LIMIT_TRANSFER_RATE (1024u * 1024u)
#define LIMIT_BODY_COST 3u
#define LIMIT_BODY_BUDGET (256u * 1024u * 1024u)
/*
 * An oversized body is read and dropped up to this many bytes past the cap before the 413 is
 * sent: answering while the client is still sending makes the kernel reset the connection and
 * the client never sees the answer. Past it, the connection is simply closed.
 */
#define LIMIT_DRAIN_BYTES (1024u * 1024u)
#define LIMIT_EK_CERT 8192
/* The intermediates an agent sends with its EK certificate (ek_chain, from NV 0x01C00100 up). */
#define LIMIT_EK_CHAIN (4u * LIMIT_EK_CERT)
#define LIMIT_EK_CHAIN_CERTS 8u
/*
 * Pending enrollments (not yet activated: made with a public EK certificate alone) of one EK
 * under other agent ids, and in all. A new one past either is refused (429), never evicts one
 * already acknowledged; they expire after the verifier's --pending-ttl.
 */
#define LIMIT_PENDING_PER_EK 4u
#define LIMIT_PENDING_ENROLLMENTS 10000u
#define LIMIT_REGISTRATIONS 100000u             /* agents registered in one request */
#define LIMIT_LABELS 32u                        /* labels of one agent */
#define LIMIT_LABEL_KEY 63u                     /* bytes of a label's key; proto/labels.h */
#define LIMIT_LABEL_VALUE 63u                   /* bytes of a label's value */
#define LIMIT_VERDICT_REASONS 64                /* reasons in one verdict */
#define LIMIT_VERDICT_DETAIL 512u               /* bytes of one reason's detail, NUL included */
#define LIMIT_AGENT_RESPONSE (1024u * 1024u)            /* a verifier answer read by attestd */
#define LIMIT_OPERATOR_RESPONSE (64u * 1024u * 1024u)  /* a verifier answer read by attestctl */

/* Policy */
#define LIMIT_POLICY_BYTES (512u * 1024u * 1024u)
#define LIMIT_POLICY_DIGESTS_PER_PATH 256u
#define LIMIT_POLICY_NAME 64u                    /* bytes of a policy's name; [A-Za-z0-9._-] */
/*
 * glibc's regcomp takes seconds to minutes on stacked or nested repeats ("a**...", "(a*)*"
 * repeated), which the fuzzer found. Real excludes use a handful of quantifiers, so bound
 * their number (outside [...], unescaped) and the pattern's length before compiling.
 */
#define LIMIT_POLICY_EXCLUDE_BYTES 1024u
#define LIMIT_POLICY_EXCLUDE_QUANTIFIERS 16u

/*
 * Growable buffers: the cap of each. A policy entry (a path
 * or a digest_only digest) takes at least 40 bytes of JSON (a SHA-1 digest in hex), so no
 * policy within LIMIT_POLICY_BYTES reaches LIMIT_POLICY_ENTRIES; excludes are run one after
 * another on every unknown path, and real policies have tens of them.
 */
#define LIMIT_POLICY_ENTRIES (LIMIT_POLICY_BYTES / 32u) /* per table: paths, digest_only */
#define LIMIT_POLICY_EXCLUDES 4096u

/*
 * File signatures: the keys a policy trusts and what else its signature section
 * holds. A key is checked once per signed entry that names its id, so neither the count nor an
 * RSA key's size may grow without bound.
 */
#define LIMIT_POLICY_KEYS 1024           /* trusted signing keys in one policy */
#define LIMIT_POLICY_KEY_BYTES 16384     /* one key: a certificate or public key, DER or PEM */
#define LIMIT_IMASIG_RSA_BITS 16384      /* the largest RSA key accepted (verify cost) */
#define LIMIT_POLICY_KEYRINGS 256u       /* keyrings named in a policy */
#define LIMIT_POLICY_SIG_PREFIXES 1024u  /* paths that must carry a signature */
#define LIMIT_POLICY_WARNINGS 64         /* import warnings kept with a policy (the last says more) */

/*
 * Signed policies (proto/dsse.h): an envelope's signatures and their fields, and the keys a
 * verifier trusts to sign policies (--policy-signers). Each signature is checked against each
 * key, so both counts stay small. A P-256 DER signature is at most 72 bytes.
 */
#define LIMIT_DSSE_SIGNATURES 8
#define LIMIT_DSSE_SIG 256                        /* decoded bytes of one signature */
#define LIMIT_DSSE_KEYID 256                      /* bytes of one keyid */
#define LIMIT_POLICY_SIGNERS 64                   /* keys in --policy-signers */
#define LIMIT_POLICY_SIGNERS_BYTES (1024u * 1024u) /* the --policy-signers file */

/*
 * Package-aware policies: a version's name, version and architecture are short words in
 * Debian (policy 5.6.1, 5.6.12); a whole release holds some 70,000 package versions per
 * architecture, and an archive that keeps old versions a few times that.
 */
#define LIMIT_PACKAGE_FIELD 256u            /* bytes of a package name, version or architecture */
#define LIMIT_POLICY_PACKAGES 1000000u      /* package versions in one policy */
/* A Debian index or control text read by attestctl: a Packages file of a release is ~100 MB. */
#define LIMIT_DEB_INDEX_BYTES (1024u * 1024u * 1024u)

#endif
