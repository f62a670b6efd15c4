/*
 * attestctl evidence get VERDICT-ID --out FILE   GET /v1/verdicts/ID/evidence into FILE (0600,
 *                                                written beside it, then renamed)
 * attestctl verify-evidence FILE [--json]
 *
 * The evidence a verdict was reached from (verifier/decision/evidence_record.h, the exported
 * form), and its re-check offline, with no verifier running: the record's inputs (the quote,
 * its signature, the AK, the IMA entries, the state the round started from, the event log,
 * the policy and amendment versions, the open violations) go through attest_evaluate(), the
 * verifier's own decision, and the verdict reached is compared with the one recorded.
 * verify-evidence prints the verdict, its reasons and whether it was reproduced; with --json,
 * {"reproduced", "authenticated", "verdict": verdict_response, "why"}.
 *
 * Exit: 0 reproduced (get: written), 1 not reproduced, or a record that does not parse (a
 * changed entry, quote, signature or verdict: the first difference is printed; get: the
 * verifier refused), 2 usage, I/O or transport error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "common/file.h"
#include "proto/dynbuf.h"
#include "proto/evidence.h"
#include "verifier/attestctl/commands.h"
#include "verifier/attestctl/online.h"
#include "verifier/attestctl/show.h"
#include "verifier/decision/evidence_record.h"

/* An exported record holds at most a full list, an event log and two policies. */
#define EVIDENCE_FILE_MAX ((size_t)LIMIT_REQUEST_BODY * 2 + 2 * (size_t)LIMIT_POLICY_BYTES)
#define EVIDENCE_TIMEOUT 600L /* seconds for the whole transfer */

static int usage(void)
{
	fprintf(stderr, "usage: attestctl evidence get VERDICT-ID --out FILE [--verifier URL]"
			" [--ca FILE] [--token-file FILE] [--token-name NAME]\n"
			"       attestctl verify-evidence FILE [--json]\n");
	return 2;
}

int cmd_evidence(int argc, char **argv)
{
	struct online_opts o;
	const char *id = NULL, *out = NULL;
	char path[64], tmp[PATH_MAX];
	uint64_t written = 0;
	int n = 1, fd, ret;

	if (argc < 2 || strcmp(argv[1], "get"))
		return usage();
	/* --out is this command's; the rest are the online options (argv[1] stands as argv[0]). */
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--out")) {
			if (i + 1 >= argc)
				return usage();
			out = argv[++i];
			continue;
		}
		argv[n++] = argv[i];
	}
	if ((ret = online_parse_opts(n, argv, &o, &id)))
		return ret;
	if (!id || !out || !id[0] || strspn(id, "0123456789") != strlen(id) || strlen(id) > 18)
		return usage();
	snprintf(path, sizeof(path), "/v1/verdicts/%s/evidence", id);
	if (snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", out) >= (int)sizeof(tmp)) {
		fprintf(stderr, "attestctl: file name too long\n");
		return 2;
	}
	/* Written as it arrives (a record may hold a whole list and large policies), then renamed. */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "attestctl: cannot create \"%s\": %s\n", tmp, strerror(errno));
		return 2;
	}
	(void)fchmod(fd, 0600); /* the machine's list of files run and its policy */
	ret = online_download(&o, path, fd, EVIDENCE_FILE_MAX, EVIDENCE_TIMEOUT, &written);
	if (!ret && fsync(fd) < 0) {
		fprintf(stderr, "attestctl: cannot write \"%s\": %s\n", tmp, strerror(errno));
		ret = 2;
	}
	close(fd);
	if (!ret && rename(tmp, out) < 0) {
		fprintf(stderr, "attestctl: cannot write \"%s\": %s\n", out, strerror(errno));
		ret = 2;
	}
	if (ret) {
		unlink(tmp);
		return ret;
	}
	printf("evidence of verdict %s: %s (%" PRIu64 " bytes)\n", id, out, written);
	return 0;
}

static void print_reason(const struct verdict_reason *r)
{
	const char *code = show_text(r->code, strnlen(r->code, sizeof(r->code)));
	const char *detail = show_text(r->detail, strnlen(r->detail, sizeof(r->detail)));

	if (r->entry >= 0)
		printf("  reason %s entry %lld: %s\n", code, (long long)r->entry, detail);
	else
		printf("  reason %s: %s\n", code, detail);
}

static int print_json(const struct evidence_check *c)
{
	char *v = verdict_response_encode(&c->verdict);
	json_t *o = json_pack("{s:b, s:b, s:o, s:s}", "reproduced", c->reproduced,
			      "authenticated", c->authenticated, "verdict",
			      v ? json_loads(v, 0, NULL) : json_null(), "why", c->why);
	char *s = o ? show_json(o, JSON_COMPACT) : NULL;

	free(v);
	json_decref(o);
	if (!s)
		return 2;
	puts(s);
	free(s);
	return c->reproduced ? 0 : 1;
}

int cmd_verify_evidence(int argc, char **argv)
{
	struct evidence_record rec;
	struct evidence_check c;
	struct dynbuf b;
	const char *file = NULL, *why = NULL;
	char when[32];
	bool json = false;
	struct tm tm;
	time_t t;
	int ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!file && argv[i][0] != '-')
			file = argv[i];
		else
			return usage();
	}
	if (!file)
		return usage();
	dynbuf_init(&b, EVIDENCE_FILE_MAX);
	ret = file_read(file, &b);
	if (ret) {
		fprintf(stderr, "attestctl: cannot read \"%s\": %s\n", file, strerror(-ret));
		dynbuf_release(&b);
		return 2;
	}
	ret = evidence_record_parse(b.buf ? b.buf : "", b.len, &rec, &why);
	dynbuf_release(&b);
	if (ret) {
		fprintf(stderr, "attestctl: \"%s\" is not an evidence record (%s): not reproduced\n",
			file, ret == -ENOMEM ? "out of memory" : why ? show_cstr(why) : "?");
		return ret == -ENOMEM ? 2 : 1;
	}
	ret = evidence_record_check(&rec, &c);
	if (ret == -ENOMEM) {
		fprintf(stderr, "attestctl: out of memory\n");
		evidence_record_release(&rec);
		return 2;
	}
	if (ret) {
		fprintf(stderr, "attestctl: verdict %lld: %s: not reproduced\n",
			(long long)rec.verdict_id, show_cstr(c.why));
		evidence_record_release(&rec);
		return 1;
	}
	if (json) {
		evidence_record_release(&rec);
		return print_json(&c);
	}
	t = (time_t)rec.time;
	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%SZ", &tm);
	else
		snprintf(when, sizeof(when), "%lld", (long long)rec.time);
	printf("verdict %lld of agent %s at %s: recorded %s, reached %s\n",
	       (long long)rec.verdict_id, show_cstr(rec.agent), when,
	       rec.verdict.trusted ? "trusted" : "untrusted",
	       c.verdict.trusted ? "trusted" : "untrusted");
	printf("  quote: %s; entries sent from %llu, the boot's replay reaches entry %llu\n",
	       c.authenticated ? "signed by the record's AK" : "NOT signed by the record's AK",
	       (unsigned long long)rec.ev.log_offset, (unsigned long long)c.verdict.next_offset);
	for (unsigned i = 0; i < c.verdict.nreasons; i++)
		print_reason(&c.verdict.reason[i]);
	if (c.reproduced) {
		printf("reproduced: the same verdict, reasons and entries as recorded\n");
	} else {
		printf("NOT reproduced: %s\n", show_cstr(c.why));
	}
	evidence_record_release(&rec);
	return c.reproduced ? 0 : 1;
}
