/*
 * eventlog: the firmware's TCG event log (TCG PC Client Platform Firmware Profile, section 10),
 * as Linux exposes it in /sys/kernel/security/tpm0/binary_bios_measurements.
 *
 * Two layouts, told apart by the first event:
 *   - crypto agile: a SHA-1 style TCG_PCR_EVENT header whose data is the "Spec ID Event03"
 *     (TCG_EfiSpecIdEvent: the banks and their digest sizes), then TCG_PCR_EVENT2 records
 *       u32 pcr | u32 type | u32 count | count x (u16 alg | digest) | u32 size | data
 *   - SHA-1 only (TPM 1.2 style firmware): TCG_PCR_EVENT records throughout
 *       u32 pcr | u32 type | digest[20] | u32 size | data
 * Integers are little-endian. Every length is checked against what remains and against the
 * caps in proto/limits.h, an algorithm must be one of proto/alg's (with the digest size that
 * table gives) and, in an EVENT2 record, one of the header's banks, once; the parser must
 * consume the input exactly. It never truncates: the first problem is reported with the
 * event's index and byte offset and nothing is returned.
 *
 * Replay: every event but EV_NO_ACTION extends its PCR in each bank it carries a digest for,
 * PCR = H(PCR || digest), from zeros; an EV_NO_ACTION "StartupLocality" event sets PCR 0's
 * initial value to the locality (TPM2_Startup from locality 3 or 4).
 *
 * Ownership: events point into the caller's buffer, which must outlive the parsed log;
 * eventlog_release() frees the event array (NULL-safe, idempotent). Decoders only read.
 * Pure: no I/O, no globals.
 */
#ifndef PROTO_EVENTLOG_H
#define PROTO_EVENTLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/alg.h"
#include "proto/limits.h"
#include "proto/pcrs.h"

/* Event types (PC Client PFP 10.4.1), with the spec's names. */
enum eventlog_type {
	EV_PREBOOT_CERT = 0x0,
	EV_POST_CODE = 0x1,
	EV_UNUSED = 0x2,
	EV_NO_ACTION = 0x3,
	EV_SEPARATOR = 0x4,
	EV_ACTION = 0x5,
	EV_EVENT_TAG = 0x6,
	EV_S_CRTM_CONTENTS = 0x7,
	EV_S_CRTM_VERSION = 0x8,
	EV_CPU_MICROCODE = 0x9,
	EV_PLATFORM_CONFIG_FLAGS = 0xa,
	EV_TABLE_OF_DEVICES = 0xb,
	EV_COMPACT_HASH = 0xc,
	EV_IPL = 0xd,
	EV_IPL_PARTITION_DATA = 0xe,
	EV_NONHOST_CODE = 0xf,
	EV_NONHOST_CONFIG = 0x10,
	EV_NONHOST_INFO = 0x11,
	EV_OMIT_BOOT_DEVICE_EVENTS = 0x12,
	EV_POST_CODE2 = 0x13,
	EV_EFI_VARIABLE_DRIVER_CONFIG = 0x80000001,
	EV_EFI_VARIABLE_BOOT = 0x80000002,
	EV_EFI_BOOT_SERVICES_APPLICATION = 0x80000003,
	EV_EFI_BOOT_SERVICES_DRIVER = 0x80000004,
	EV_EFI_RUNTIME_SERVICES_DRIVER = 0x80000005,
	EV_EFI_GPT_EVENT = 0x80000006,
	EV_EFI_ACTION = 0x80000007,
	EV_EFI_PLATFORM_FIRMWARE_BLOB = 0x80000008,
	EV_EFI_HANDOFF_TABLES = 0x80000009,
	EV_EFI_PLATFORM_FIRMWARE_BLOB2 = 0x8000000a,
	EV_EFI_HANDOFF_TABLES2 = 0x8000000b,
	EV_EFI_VARIABLE_BOOT2 = 0x8000000c,
	EV_EFI_GPT_EVENT2 = 0x8000000d,
	EV_EFI_HCRTM_EVENT = 0x80000010,
	EV_EFI_VARIABLE_AUTHORITY = 0x800000e0,
	EV_EFI_SPDM_FIRMWARE_BLOB = 0x800000e1,
	EV_EFI_SPDM_FIRMWARE_CONFIG = 0x800000e2,
};

/* The tagged event the Linux EFI stub logs in PCR 9 for its command line (LoadOptions). */
#define EVENTLOG_TAG_LOAD_OPTIONS 0x8F3B22EDu
/* ... and for the initrd it loads itself (LINUX_EFI_INITRD_MEASUREMENT_TAG_ID). */
#define EVENTLOG_TAG_LINUX_INITRD 0x8F3B22ECu

struct eventlog_digest {
	const struct alg *alg;
	const uint8_t *value; /* alg->size bytes, inside the log */
};

struct eventlog_event {
	uint32_t index;  /* 0 is the first record (the Spec ID header in a crypto-agile log) */
	size_t offset;   /* byte offset of the record in the log */
	uint32_t pcr;    /* < PCR_COUNT */
	uint32_t type;   /* enum eventlog_type, or a value this parser has no name for */
	unsigned ndigests;
	struct eventlog_digest digest[LIMIT_PCR_BANKS];
	const uint8_t *data;
	uint32_t data_len;
};

struct eventlog {
	bool crypto_agile;       /* false: a SHA-1-only log */
	uint8_t spec_major, spec_minor, spec_errata, uintn_size;
	uint32_t platform_class;
	unsigned nalgs;          /* banks the header declares (1 for a SHA-1 log: sha1) */
	const struct alg *algs[LIMIT_PCR_BANKS];
	int startup_locality;    /* -1: no StartupLocality event */
	size_t nevents;
	struct eventlog_event *events; /* owned; the header record is events[0] */
};

struct eventlog_error {
	uint32_t index; /* the record that failed */
	size_t offset;  /* where it starts */
	char msg[160];  /* what is wrong, naming the field and the value */
};

/*
 * Parses a whole log. 0 with *out filled, -EINVAL (with *err) if it is malformed or past a
 * cap, -ENOMEM. On failure *out is empty (release it anyway, or not: both are fine).
 */
int eventlog_parse(const uint8_t *buf, size_t len, struct eventlog *out, struct eventlog_error *err);
void eventlog_release(struct eventlog *log);

/* "EV_SEPARATOR", ...; NULL for a type this parser has no name for. */
const char *eventlog_type_name(uint32_t type);

/* The event's digest in bank alg (TPM2_ALG_ID), or NULL if it carries none. */
const uint8_t *eventlog_event_digest(const struct eventlog_event *e, uint16_t alg);

/*
 * Replays the log: out gets one bank per bank of the log (in the header's order), each with
 * mask = the PCRs the log extends (or, for PCR 0, sets a locality for) and their values.
 * 0, or -EINVAL for an algorithm proto/alg cannot hash (not reached for a parsed log).
 */
int eventlog_replay(const struct eventlog *log, struct pcr_set *out);

/*
 * True when every digest the event carries equals H_alg(data, len): the event's content (or
 * the part of it the firmware hashed, which the caller names) is what was measured. Events
 * whose content a policy judges must pass this, or an edited content would go unnoticed (the
 * replay only sees digests).
 */
bool eventlog_digests_match(const struct eventlog_event *e, const void *data, size_t len);

/* ---- decoders for the events a policy judges: each must consume the event data exactly ---- */

/* UEFI_VARIABLE_DATA (EV_EFI_VARIABLE_*): the variable's GUID, UTF-16LE name and its data. */
struct eventlog_variable {
	uint8_t guid[16];         /* as stored: the first three fields little-endian */
	const uint8_t *name;      /* UTF-16LE, name_chars code units, no NUL */
	size_t name_chars;
	const uint8_t *data;
	size_t data_len;
};
int eventlog_decode_variable(const struct eventlog_event *e, struct eventlog_variable *out);

/* EFI_GLOBAL_VARIABLE (SecureBoot, PK, KEK, Boot####) and EFI_IMAGE_SECURITY_DATABASE (db, dbx). */
extern const uint8_t eventlog_guid_global[16];
extern const uint8_t eventlog_guid_image_security[16];
/* True when the variable has this GUID and this (ASCII) name. */
bool eventlog_variable_is(const struct eventlog_variable *v, const uint8_t guid[16], const char *name);

/* UEFI_IMAGE_LOAD_EVENT (EV_EFI_BOOT_SERVICES_APPLICATION/DRIVER, RUNTIME_SERVICES_DRIVER). */
struct eventlog_image {
	uint64_t location, length, link_time;
	const uint8_t *device_path;
	size_t device_path_len;
};
int eventlog_decode_image(const struct eventlog_event *e, struct eventlog_image *out);

/*
 * The file an image came from: the text of the device path's last file-path node (media type
 * 4, subtype 4), UTF-8 into out (NUL-terminated). 0, -ENOENT if the path has none, -EINVAL if
 * the path is malformed or the name does not fit cap.
 */
int eventlog_device_path_file(const uint8_t *dp, size_t len, char *out, size_t cap);

/* TCG_PCClientTaggedEvent (EV_EVENT_TAG). */
struct eventlog_tagged {
	uint32_t id;
	const uint8_t *data;
	uint32_t len;
};
int eventlog_decode_tagged(const struct eventlog_event *e, struct eventlog_tagged *out);

/* UEFI_PLATFORM_FIRMWARE_BLOB (EV_EFI_PLATFORM_FIRMWARE_BLOB) or BLOB2 (with a description). */
struct eventlog_blob {
	uint64_t base, length;
	const uint8_t *desc; /* BLOB2 only; desc_len bytes of text, not NUL-terminated */
	size_t desc_len;
};
int eventlog_decode_blob(const struct eventlog_event *e, struct eventlog_blob *out);

/*
 * UTF-16LE (n code units) to UTF-8 into out (NUL-terminated); a NUL code unit ends the text.
 * 0, or -EINVAL for an unpaired surrogate or if the text does not fit cap.
 */
int eventlog_utf16_to_utf8(const uint8_t *in, size_t n, char *out, size_t cap);

/*
 * The digest the Linux EFI stub logs for a command line in PCR 9 (tagged event
 * EVENTLOG_TAG_LOAD_OPTIONS): H_alg over the command line as UTF-16LE with its terminating NUL,
 * which is how the firmware hands LoadOptions to the kernel. cmdline is UTF-8 (len bytes, at
 * most LIMIT_CMDLINE). 0, -EINVAL for text that is not UTF-8 or too long, -ENOMEM.
 */
int eventlog_load_options_digest(const struct alg *alg, const char *cmdline, size_t len,
				 uint8_t *out);

/*
 * One line of words for an event, for people (attestctl, verdict reasons): what was measured
 * ("EFI application \"kernel\" (1954816 bytes)", "variable SecureBoot = 1 (on)", ...). Text
 * from the log is shown with every byte outside printable ASCII as \xNN. Always
 * NUL-terminates out (cap > 0); a description that does not fit is cut.
 */
void eventlog_describe(const struct eventlog_event *e, char *out, size_t cap);

#endif
