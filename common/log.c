/* One-line stderr logging; the contract is in log.h. */
#include "common/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>

#define LOG_LINE_MAX 1024

static const char *log_program;
static enum log_level log_level = LOG_LVL_INFO;

void log_init(const char *program, enum log_level lvl)
{
	log_program = program;
	log_level = lvl;
}

void log_set_level(enum log_level lvl)
{
	log_level = lvl;
}

static const char *level_name(enum log_level lvl)
{
	switch (lvl) {
	case LOG_LVL_ERROR: return "error";
	case LOG_LVL_WARN: return "warning";
	case LOG_LVL_INFO: return "info";
	case LOG_LVL_DEBUG: return "debug";
	}
	return "?";
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	va_list ap;
	int n, m;

	if (lvl > log_level)
		return;
	n = snprintf(line, sizeof(line), "%s: %s: ",
		     log_program ? log_program : program_invocation_short_name, level_name(lvl));
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	/* A long line is cut, not dropped: keep room for the newline. */
	if ((size_t)n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* One write per line so that pool threads do not interleave within a line. */
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

void log_openssl(const char *what)
{
	unsigned long e;
	char buf[256];

	while ((e = ERR_get_error()) != 0) {
		ERR_error_string_n(e, buf, sizeof(buf));
		log_warn("%s: openssl error %lu \"%s\"", what, e, buf);
	}
}
