/* One-line stderr logging; see log.h. */
#include "attestd/log.h"

#include <stdarg.h>
#include <stdio.h>

static bool log_debug_on;

void log_set_debug(bool on)
{
	log_debug_on = on;
}

static void log_vline(const char *level, const char *fmt, va_list ap)
{
	/* Build the line first so concurrent writers (swtpm, tests) cannot split it. */
	char line[1024];
	int n = snprintf(line, sizeof(line), "attestd: %s: ", level);

	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	fprintf(stderr, "%s\n", line);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline("info", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline("warning", fmt, ap);
	va_end(ap);
}

void log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline("error", fmt, ap);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!log_debug_on)
		return;
	va_start(ap, fmt);
	log_vline("debug", fmt, ap);
	va_end(ap);
}
