/* eventlog_describe(): an event in words (see eventlog.h). Pure; untrusted text is escaped. */
#include "proto/eventlog.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct out {
	char *p;
	size_t cap, len;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->len + 1 >= o->cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	o->len += (size_t)n;
	if (o->len >= o->cap)
		o->len = o->cap - 1;
}

/* Bytes as text: printable ASCII kept, the rest \xNN; stops at a NUL when stop_nul. */
static void put_text(struct out *o, const uint8_t *s, size_t n, bool stop_nul)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == 0 && stop_nul)
			break;
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\')
			put(o, "%c", s[i]);
		else
			put(o, "\\x%02x", s[i]);
	}
}

static void put_utf16(struct out *o, const uint8_t *s, size_t chars)
{
	char buf[512];

	if (eventlog_utf16_to_utf8(s, chars, buf, sizeof(buf)) == 0)
		put_text(o, (const uint8_t *)buf, strlen(buf), true);
	else
		put(o, "(%zu UTF-16 characters, not valid text)", chars);
}

static void describe_variable(struct out *o, const struct eventlog_event *e)
{
	struct eventlog_variable v;

	if (eventlog_decode_variable(e, &v) < 0) {
		put(o, "variable (malformed, %u bytes)", e->data_len);
		return;
	}
	put(o, "variable ");
	put_utf16(o, v.name, v.name_chars);
	if (eventlog_variable_is(&v, eventlog_guid_global, "SecureBoot") && v.data_len == 1)
		put(o, " = %u (%s)", v.data[0], v.data[0] == 1 ? "on" : v.data[0] == 0 ? "off" : "?");
	else
		put(o, " (%zu bytes)", v.data_len);
}

static void describe_image(struct out *o, const struct eventlog_event *e)
{
	struct eventlog_image im;
	char file[256];

	put(o, "EFI %s", e->type == EV_EFI_BOOT_SERVICES_APPLICATION ? "application" : "driver");
	if (eventlog_decode_image(e, &im) < 0) {
		put(o, " (malformed, %u bytes)", e->data_len);
		return;
	}
	if (eventlog_device_path_file(im.device_path, im.device_path_len, file, sizeof(file)) == 0) {
		put(o, " \"");
		put_text(o, (const uint8_t *)file, strlen(file), true);
		put(o, "\"");
	}
	put(o, " (%llu bytes)", (unsigned long long)im.length);
}

static void describe_tagged(struct out *o, const struct eventlog_event *e)
{
	struct eventlog_tagged t;

	if (eventlog_decode_tagged(e, &t) < 0) {
		put(o, "tagged event (malformed, %u bytes)", e->data_len);
		return;
	}
	if (t.id == EVENTLOG_TAG_LOAD_OPTIONS)
		put(o, "kernel command line (LoadOptions, logged by the EFI stub)");
	else if (t.id == EVENTLOG_TAG_LINUX_INITRD)
		put(o, "initrd (logged by the EFI stub)");
	else {
		put(o, "tagged event 0x%08x \"", t.id);
		put_text(o, t.data, t.len, true);
		put(o, "\"");
	}
}

static void describe_blob(struct out *o, const struct eventlog_event *e)
{
	struct eventlog_blob b;

	if (eventlog_decode_blob(e, &b) < 0) {
		put(o, "firmware blob (malformed, %u bytes)", e->data_len);
		return;
	}
	put(o, "firmware volume");
	if (b.desc_len) {
		put(o, " \"");
		put_text(o, b.desc, b.desc_len, true);
		put(o, "\"");
	}
	put(o, " at 0x%llx (%llu bytes)", (unsigned long long)b.base, (unsigned long long)b.length);
}

void eventlog_describe(const struct eventlog_event *e, char *buf, size_t cap)
{
	struct out o = {.p = buf, .cap = cap};

	if (!cap)
		return;
	buf[0] = '\0';
	switch (e->type) {
	case EV_NO_ACTION:
		put(&o, "no action: \"");
		put_text(&o, e->data, e->data_len < 16 ? e->data_len : 16, true);
		put(&o, "\"");
		break;
	case EV_SEPARATOR:
		if (e->data_len == 4 && !memcmp(e->data, "\0\0\0\0", 4))
			put(&o, "separator");
		else if (e->data_len == 4 && !memcmp(e->data, "\xff\xff\xff\xff", 4))
			put(&o, "separator 0xffffffff");
		else
			put(&o, "separator (%u bytes)", e->data_len);
		break;
	case EV_ACTION:
	case EV_EFI_ACTION:
	case EV_IPL:
		put(&o, "%s \"", e->type == EV_IPL ? "IPL" : "action");
		put_text(&o, e->data, e->data_len, false);
		put(&o, "\"");
		break;
	case EV_S_CRTM_VERSION:
		put(&o, "S-CRTM version \"");
		if (e->data_len % 2 == 0)
			put_utf16(&o, e->data, e->data_len / 2);
		put(&o, "\"");
		break;
	case EV_POST_CODE:
		put(&o, "POST code \"");
		put_text(&o, e->data, e->data_len, false);
		put(&o, "\"");
		break;
	case EV_EFI_VARIABLE_DRIVER_CONFIG:
	case EV_EFI_VARIABLE_BOOT:
	case EV_EFI_VARIABLE_BOOT2:
	case EV_EFI_VARIABLE_AUTHORITY:
		describe_variable(&o, e);
		break;
	case EV_EFI_BOOT_SERVICES_APPLICATION:
	case EV_EFI_BOOT_SERVICES_DRIVER:
	case EV_EFI_RUNTIME_SERVICES_DRIVER:
		describe_image(&o, e);
		break;
	case EV_EVENT_TAG:
		describe_tagged(&o, e);
		break;
	case EV_EFI_PLATFORM_FIRMWARE_BLOB:
	case EV_EFI_PLATFORM_FIRMWARE_BLOB2:
		describe_blob(&o, e);
		break;
	default: {
		const char *name = eventlog_type_name(e->type);

		if (name)
			put(&o, "%s (%u bytes)", name, e->data_len);
		else
			put(&o, "event type 0x%08x (%u bytes)", e->type, e->data_len);
	}
	}
}
