/*
 * attestctl eventlog [--replay] FILE
 *
 * Reads a firmware TCG event log (a copy of /sys/kernel/security/tpm0/binary_bios_measurements,
 * or that file itself) and prints its events in words, one block per event:
 *
 *   event 10 pcr4 EV_EFI_BOOT_SERVICES_APPLICATION: EFI application "kernel" (1954816 bytes)
 *     sha1 3dc6...
 *     sha256 834c...
 *
 * With --replay it prints instead one line `pcrN BANK HEX` (lowercase) for every PCR the log
 * extends, bank by bank in the log's order (what tpm2_eventlog's `pcrs:` section says).
 * Exit: 0, 1 for a log that does not parse (one stderr line: event, byte offset, reason), 2 usage
 * or I/O error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/file.h"
#include "proto/encoding.h"
#include "proto/eventlog.h"
#include "verifier/attestctl/commands.h"

static const char usage_text[] = "usage: attestctl eventlog [--replay] FILE\n";

/* Reads and parses FILE for the eventlog and boot-policy commands; see commands.h. */
int eventlog_load(const char *cmd, const char *path, struct dynbuf *buf, struct eventlog *log)
{
	struct eventlog_error err;
	int r;

	dynbuf_init(buf, LIMIT_EVENTLOG_BYTES);
	r = file_read(path, buf);
	if (r < 0) {
		fprintf(stderr, "attestctl %s: cannot read \"%s\": %s\n", cmd, path,
			r == -EFBIG ? "larger than " LIMIT_STR(LIMIT_EVENTLOG_BYTES) " bytes" : strerror(-r));
		return 2;
	}
	r = eventlog_parse((const uint8_t *)buf->buf, buf->len, log, &err);
	if (r == -ENOMEM) {
		fprintf(stderr, "attestctl %s: out of memory\n", cmd);
		dynbuf_release(buf);
		return 2;
	}
	if (r < 0) {
		fprintf(stderr, "attestctl %s: \"%s\" is not a valid event log: event %u at byte %zu: %s\n",
			cmd, path, err.index, err.offset, err.msg);
		dynbuf_release(buf);
		return 1;
	}
	return 0;
}

static void print_events(const struct eventlog *log)
{
	char text[512], hex[2 * LIMIT_DIGEST + 1];

	printf("# %s log, %zu events, banks", log->crypto_agile ? "crypto-agile" : "SHA-1", log->nevents);
	for (unsigned i = 0; i < log->nalgs; i++)
		printf(" %s", log->algs[i]->name);
	if (log->crypto_agile)
		printf(", spec %u.%u errata %u", log->spec_major, log->spec_minor, log->spec_errata);
	/* A StartupLocality event changes where PCR 0 starts: say so before the events. */
	if (log->startup_locality >= 0)
		printf(", startup locality %d (PCR 0 starts at 00..%02x%s)", log->startup_locality,
		       (unsigned)log->startup_locality, log->startup_locality == 4 ? ", an H-CRTM" : "");
	printf("\n");
	for (size_t i = 0; i < log->nevents; i++) {
		const struct eventlog_event *e = &log->events[i];
		const char *name = eventlog_type_name(e->type);

		eventlog_describe(e, text, sizeof(text));
		if (name)
			printf("event %u pcr%u %s: %s\n", e->index, e->pcr, name, text);
		else
			printf("event %u pcr%u 0x%08x: %s\n", e->index, e->pcr, e->type, text);
		for (unsigned d = 0; d < e->ndigests; d++) {
			hex_encode(e->digest[d].value, e->digest[d].alg->size, hex);
			printf("  %s %s\n", e->digest[d].alg->name, hex);
		}
	}
}

static int print_replay(const struct eventlog *log)
{
	struct pcr_set pcrs;
	char hex[2 * LIMIT_DIGEST + 1];

	if (eventlog_replay(log, &pcrs) < 0) {
		fprintf(stderr, "attestctl eventlog: replay failed\n");
		return 2;
	}
	for (unsigned b = 0; b < pcrs.nbanks; b++) {
		const struct pcr_bank *bank = &pcrs.bank[b];

		for (unsigned n = 0; n < PCR_COUNT; n++) {
			if (!(bank->mask & (1u << n)))
				continue;
			hex_encode(bank->value[n], pcr_alg_digest_size(bank->alg), hex);
			printf("pcr%u %s %s\n", n, pcr_alg_name(bank->alg), hex);
		}
	}
	return 0;
}

int cmd_eventlog(int argc, char **argv)
{
	const char *path = NULL;
	bool replay = false;
	struct dynbuf buf;
	struct eventlog log;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--replay")) {
			replay = true;
		} else if (argv[i][0] == '-' || path) {
			fputs(usage_text, stderr);
			return 2;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		fputs(usage_text, stderr);
		return 2;
	}
	rc = eventlog_load("eventlog", path, &buf, &log);
	if (rc)
		return rc;
	if (replay)
		rc = print_replay(&log);
	else
		print_events(&log);
	if (!rc && fflush(stdout) != 0)
		rc = 2;
	eventlog_release(&log);
	dynbuf_release(&buf);
	return rc;
}
