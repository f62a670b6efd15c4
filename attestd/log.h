/*
 * One-line logs to stderr for attestd.
 *
 * Every message is one line, lowercase, "attestd: <level>: what failed first, then the value".
 * Callers pass no trailing newline. log_set_debug(true) enables log_debug(). Not thread-safe
 * beyond what stdio gives (attestd is single-threaded).
 */
#ifndef ATTESTD_LOG_H
#define ATTESTD_LOG_H

#include <stdbool.h>

void log_set_debug(bool on);

__attribute__((format(printf, 1, 2))) void log_info(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void log_warn(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void log_error(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void log_debug(const char *fmt, ...);

#endif
