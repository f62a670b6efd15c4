/*
 * attestctl boot-policy kernel [--qemu] [--hash ALG|all] BZIMAGE
 * attestctl boot-policy learn LOG [--cmdline TEXT | --cmdline-file FILE] [--require WORD]...
 *                             [--forbid WORD]... [--kernel-name NAME] [--policy POLICY] [--out FILE]
 *
 * kernel: prints `ALG:HEX  FILE` with the Authenticode digest UEFI firmware logs in PCR 4 when it
 * loads the file (default sha256). A kernel that QEMU hands to the firmware (-kernel) is not
 * quite the file: QEMU first writes four fields of the boot protocol's setup header
 * (type_of_loader 0xb0, CAN_USE_HEAP, heap_end_ptr, cmd_line_ptr), and OVMF measures what it got.
 * --qemu computes the digest of the image as QEMU hands it over.
 *
 * learn: makes a boot policy from the event log of a machine known to be good (trust on first
 * use): the last EFI application of PCR 4 as the kernel (those before it as boot applications),
 * every PCR 0 event as firmware, the Secure Boot state and PK/KEK/db/dbx of PCR 7, and, given the
 * machine's command line (its /proc/cmdline), that command line, checked against the digest the
 * EFI stub logged in PCR 9, plus any --require/--forbid rules. With --policy the boot section
 * replaces the one of that policy file (a Keylime policy comes out in the native form); without,
 * the output is a policy with only a boot section. Either way the kernel is {digest, name}.
 * The result is loaded back through the verifier's policy engine before it is written.
 *
 * Exit: 0, 1 for a file that does not parse (log, image, policy) or a command line that is not
 * the logged one, 2 usage or I/O error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <tss2/tss2_tpm2_types.h>

#include "common/file.h"
#include "proto/authenticode.h"
#include "proto/encoding.h"
#include "proto/eventlog.h"
#include "verifier/attestctl/commands.h"
#include "verifier/policy/boot_policy.h"
#include "verifier/policy/policy.h"
#include "verifier/policy/policy_file.h"

static const char usage_text[] =
	"usage: attestctl boot-policy kernel [--qemu] [--hash sha1|sha256|sha384|sha512|all] BZIMAGE\n"
	"       attestctl boot-policy learn LOG [--cmdline TEXT | --cmdline-file FILE] [--require WORD]...\n"
	"                                   [--forbid WORD]... [--kernel-name NAME] [--policy POLICY] [--out FILE]\n";

#define KERNEL_MAX (256u << 20) /* a kernel image read for its digest */

/*
 * QEMU's x86 -kernel loader (hw/i386/x86.c, x86_load_linux) for a boot protocol >= 2.02 kernel
 * loaded high, as an EFI-stub kernel is: the fields it writes into the setup header.
 */
static int qemu_patch(uint8_t *img, size_t len)
{
	const uint32_t real_addr = 0x10000, cmdline_addr = 0x20000;
	uint32_t heap_end = cmdline_addr - real_addr - 0x200;
	uint16_t protocol;

	if (len < 0x250 || memcmp(img + 0x202, "HdrS", 4) != 0)
		return -EINVAL;
	protocol = (uint16_t)(img[0x206] | img[0x207] << 8);
	if (protocol < 0x202 || !(img[0x211] & 0x01))
		return -ENOTSUP; /* QEMU loads such a kernel low, at other addresses */
	img[0x210] = 0xb0;
	img[0x211] |= 0x80;
	img[0x224] = (uint8_t)heap_end;
	img[0x225] = (uint8_t)(heap_end >> 8);
	for (int i = 0; i < 4; i++)
		img[0x228 + i] = (uint8_t)(cmdline_addr >> (8 * i));
	return 0;
}

static int cmd_kernel(int argc, char **argv)
{
	const char *path = NULL, *hash = "sha256";
	bool qemu = false;
	struct dynbuf img;
	int rc = 2, r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--qemu"))
			qemu = true;
		else if (!strcmp(argv[i], "--hash") && i + 1 < argc)
			hash = argv[++i];
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else {
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (!path || (strcmp(hash, "all") && !alg_allows(alg_by_name(hash), ALG_USE_PCR))) {
		fputs(usage_text, stderr);
		return 2;
	}
	dynbuf_init(&img, KERNEL_MAX);
	r = file_read(path, &img);
	if (r < 0) {
		fprintf(stderr, "attestctl boot-policy: cannot read \"%s\": %s\n", path, strerror(-r));
		goto out;
	}
	rc = 1;
	if (qemu && (r = qemu_patch((uint8_t *)img.buf, img.len)) < 0) {
		fprintf(stderr, "attestctl boot-policy: \"%s\" is %s\n", path,
			r == -ENOTSUP ? "a kernel QEMU loads low (boot protocol < 2.02 or not LOADED_HIGH): --qemu does not model that"
				      : "not a Linux bzImage (no HdrS setup header)");
		goto out;
	}
	for (unsigned i = 0; i < ALG_COUNT; i++) {
		const struct alg *a = &alg_table[i];
		uint8_t d[LIMIT_DIGEST];
		char hex[2 * LIMIT_DIGEST + 1];
		const char *why;

		if (!alg_allows(a, ALG_USE_PCR) || (strcmp(hash, "all") && strcmp(hash, a->name)))
			continue;
		r = authenticode_digest(a, (const uint8_t *)img.buf, img.len, d, &why);
		if (r < 0) {
			fprintf(stderr, "attestctl boot-policy: \"%s\": %s\n", path, why);
			goto out;
		}
		hex_encode(d, a->size, hex);
		printf("%s:%s  %s\n", a->name, hex, path);
	}
	rc = fflush(stdout) == 0 ? 0 : 2;
out:
	dynbuf_release(&img);
	return rc;
}

/* ---- learn --------------------------------------------------------------------------------- */

struct learn {
	const struct eventlog *log;
	const char *cmdline;
	const char *kernel_name;
	json_t *boot;
	char image_file[BOOT_POLICY_NAME_MAX + 1];
};

/* "alg:hex" of the event: sha256 when the log has it, else its first bank. */
static json_t *event_digest(const struct eventlog_event *e)
{
	const struct eventlog_digest *d = &e->digest[0];
	char buf[LIMIT_DIGEST_TEXT + 1];
	size_t nl;

	for (unsigned i = 0; i < e->ndigests; i++)
		if (e->digest[i].alg->id == TPM2_ALG_SHA256)
			d = &e->digest[i];
	nl = strlen(d->alg->name);
	memcpy(buf, d->alg->name, nl);
	buf[nl] = ':';
	hex_encode(d->value, d->alg->size, buf + nl + 1);
	return json_string(buf);
}

static int append(json_t *boot, const char *key, json_t *v)
{
	json_t *arr = json_object_get(boot, key);

	if (!arr && json_object_set_new(boot, key, arr = json_array()))
		return -ENOMEM;
	return json_array_append_new(arr, v) ? -ENOMEM : 0;
}

static bool verified_marker(const struct eventlog_event *e)
{
	return (e->type == EV_SEPARATOR || e->type == EV_EFI_ACTION || e->type == EV_ACTION) &&
	       eventlog_digests_match(e, e->data, e->data_len);
}

/*
 * A learned kernel is always written {digest, name}, whether or not --kernel-name or --policy
 * was given, so that every learned policy has one form: the name given, else the file the
 * firmware loaded it from (its device path), else "kernel".
 */
static const char *kernel_name(struct learn *l, const struct eventlog_event *e)
{
	struct eventlog_image img;

	if (l->kernel_name)
		return l->kernel_name;
	if (eventlog_decode_image(e, &img) == 0 &&
	    eventlog_device_path_file(img.device_path, img.device_path_len, l->image_file,
				      sizeof(l->image_file)) == 0 &&
	    l->image_file[0])
		return l->image_file;
	return "kernel";
}

static int learn_events(struct learn *l)
{
	const struct eventlog_event *kernel = NULL;
	static const char *const keys[][2] = {{"PK", "pk"}, {"KEK", "kek"}, {"db", "db"}, {"dbx", "dbx"}};

	for (size_t i = 0; i < l->log->nevents; i++) {
		const struct eventlog_event *e = &l->log->events[i];
		struct eventlog_variable v;

		if (e->type == EV_NO_ACTION || verified_marker(e))
			continue;
		if (e->pcr == 0 && append(l->boot, "firmware", event_digest(e)))
			return -ENOMEM;
		if (e->pcr == 4) {
			if (kernel && append(l->boot, "boot_applications", event_digest(kernel)))
				return -ENOMEM;
			kernel = e;
		}
		if (e->pcr != 7 || e->type != EV_EFI_VARIABLE_DRIVER_CONFIG ||
		    !eventlog_digests_match(e, e->data, e->data_len) || eventlog_decode_variable(e, &v) < 0)
			continue;
		if (eventlog_variable_is(&v, eventlog_guid_global, "SecureBoot")) {
			json_object_set_new(l->boot, "secure_boot",
					    json_string(v.data_len == 1 && v.data[0] == 1 ? "on" : "off"));
			continue;
		}
		for (unsigned k = 0; k < 4; k++) {
			const uint8_t *guid = k < 2 ? eventlog_guid_global : eventlog_guid_image_security;

			if (eventlog_variable_is(&v, guid, keys[k][0]) &&
			    append(l->boot, keys[k][1], event_digest(e)))
				return -ENOMEM;
		}
	}
	if (!kernel) {
		fprintf(stderr, "attestctl boot-policy: warning: the log has no PCR 4 image: no kernel learned (a BIOS boot measures none)\n");
		return 0;
	}
	return append(l->boot, "kernels",
		      json_pack("{s:o, s:s}", "digest", event_digest(kernel), "name", kernel_name(l, kernel)));
}

/* The command line must be the one the EFI stub logged in PCR 9 (all its banks). */
static int learn_cmdline(struct learn *l, json_t *required, json_t *forbidden)
{
	json_t *rules = json_object();
	bool found = false, same = false;

	if (!rules || json_object_set_new(l->boot, "cmdline", rules))
		return -ENOMEM;
	for (size_t i = 0; l->cmdline && i < l->log->nevents; i++) {
		const struct eventlog_event *e = &l->log->events[i];
		struct eventlog_tagged t;
		bool all = e->ndigests > 0;

		if (e->pcr != 9 || e->type != EV_EVENT_TAG || eventlog_decode_tagged(e, &t) < 0 ||
		    t.id != EVENTLOG_TAG_LOAD_OPTIONS)
			continue;
		found = true;
		for (unsigned d = 0; d < e->ndigests; d++) {
			uint8_t h[LIMIT_DIGEST];

			all &= eventlog_load_options_digest(e->digest[d].alg, l->cmdline, strlen(l->cmdline), h) == 0 &&
			       !memcmp(h, e->digest[d].value, e->digest[d].alg->size);
		}
		same |= all;
	}
	if (l->cmdline && found && !same) {
		fprintf(stderr, "attestctl boot-policy: the command line given is not the one the log's PCR 9 event measured\n");
		return -EINVAL;
	}
	if (l->cmdline && !found)
		fprintf(stderr, "attestctl boot-policy: warning: the log has no command line event (PCR 9 LoadOptions); the verifier will not be able to judge one\n");
	if (l->cmdline && json_object_set_new(rules, "exact", json_pack("[s]", l->cmdline)))
		return -ENOMEM;
	if (json_array_size(required) && json_object_set(rules, "required", required))
		return -ENOMEM;
	if (json_array_size(forbidden) && json_object_set(rules, "forbidden", forbidden))
		return -ENOMEM;
	if (!json_object_size(rules))
		json_object_del(l->boot, "cmdline");
	return 0;
}

/*
 * The output: POLICY with its boot section replaced, or a policy of only a boot section. POLICY
 * is read as the verifier reads it (its key files inline) and taken through the policy engine
 * first, so that a Keylime runtime policy, which has no boot section of its own, comes out in
 * the native form with the learned one instead of losing it.
 */
static json_t *policy_with(const char *policy_path, json_t *boot)
{
	struct policy *pol = NULL;
	json_error_t jerr;
	json_t *root = NULL;
	char err[256], *text = NULL, *native = NULL;
	size_t len;

	if (!policy_path)
		return json_pack("{s:i, s:O}", "version", 1, "boot", boot);
	if (policy_file_read(policy_path, &text, &len, err, sizeof(err)) < 0) {
		fprintf(stderr, "attestctl boot-policy: %s\n", err);
		goto out;
	}
	pol = policy_load(text, len, err, sizeof(err));
	if (!pol) {
		fprintf(stderr, "attestctl boot-policy: \"%s\" is not a policy: %s\n", policy_path, err);
		goto out;
	}
	native = policy_to_json(pol);
	root = native ? json_loads(native, JSON_REJECT_DUPLICATES, &jerr) : NULL;
	if (!json_is_object(root) || json_object_set(root, "boot", boot)) {
		fprintf(stderr, "attestctl boot-policy: out of memory\n");
		json_decref(root);
		root = NULL;
	}
out:
	policy_free(pol);
	free(native);
	free(text);
	return root;
}

static int cmd_learn(int argc, char **argv)
{
	const char *log_path = NULL, *cmdline_file = NULL, *policy_path = NULL, *out_path = NULL;
	struct learn l = {0};
	struct dynbuf buf, cmd;
	struct eventlog log;
	json_t *required = json_array(), *forbidden = json_array(), *root = NULL;
	struct policy *pol = NULL;
	char *text = NULL, *js = NULL, err[256];
	int rc = 2, r;

	dynbuf_init(&cmd, LIMIT_CMDLINE + 1);
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--cmdline") && v)
			l.cmdline = argv[++i];
		else if (!strcmp(argv[i], "--cmdline-file") && v)
			cmdline_file = argv[++i];
		else if (!strcmp(argv[i], "--require") && v)
			json_array_append_new(required, json_string(argv[++i]));
		else if (!strcmp(argv[i], "--forbid") && v)
			json_array_append_new(forbidden, json_string(argv[++i]));
		else if (!strcmp(argv[i], "--kernel-name") && v)
			l.kernel_name = argv[++i];
		else if (!strcmp(argv[i], "--policy") && v)
			policy_path = argv[++i];
		else if (!strcmp(argv[i], "--out") && v)
			out_path = argv[++i];
		else if (argv[i][0] != '-' && !log_path)
			log_path = argv[i];
		else {
			fputs(usage_text, stderr);
			goto done;
		}
	}
	if (!log_path || (l.cmdline && cmdline_file) || !required || !forbidden) {
		fputs(usage_text, stderr);
		goto done;
	}
	if (cmdline_file) {
		r = file_read(cmdline_file, &cmd);
		if (r < 0) {
			fprintf(stderr, "attestctl boot-policy: cannot read \"%s\": %s\n", cmdline_file, strerror(-r));
			goto done;
		}
		if (cmd.len && cmd.buf[cmd.len - 1] == '\n')
			dynbuf_setlen(&cmd, cmd.len - 1);
		l.cmdline = dynbuf_str(&cmd);
	}
	rc = eventlog_load("boot-policy", log_path, &buf, &log);
	if (rc)
		goto done;
	l.log = &log;
	l.boot = json_object();
	rc = 1;
	if (!l.boot || learn_events(&l) || learn_cmdline(&l, required, forbidden) ||
	    !(root = policy_with(policy_path, l.boot)))
		goto out;
	js = json_dumps(root, JSON_COMPACT);
	pol = js ? policy_load(js, strlen(js), err, sizeof(err)) : NULL;
	if (!pol) {
		fprintf(stderr, "attestctl boot-policy: the learned policy does not load: %s\n", js ? err : "out of memory");
		goto out;
	}
	text = policy_to_json(pol);
	rc = 2;
	if (!text)
		goto out;
	if (out_path) {
		r = file_write_atomic(out_path, text, strlen(text), 0644);
		if (r < 0) {
			fprintf(stderr, "attestctl boot-policy: cannot write \"%s\": %s\n", out_path, strerror(-r));
			goto out;
		}
	} else if (printf("%s\n", text) < 0 || fflush(stdout) != 0) {
		goto out;
	}
	rc = 0;
out:
	eventlog_release(&log);
	dynbuf_release(&buf);
done:
	dynbuf_release(&cmd);
	policy_free(pol);
	free(text);
	free(js);
	json_decref(l.boot);
	json_decref(root);
	json_decref(required);
	json_decref(forbidden);
	return rc;
}

int cmd_boot_policy(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "kernel"))
		return cmd_kernel(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "learn"))
		return cmd_learn(argc - 1, argv + 1);
	fputs(usage_text, stderr);
	return 2;
}
