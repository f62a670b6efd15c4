/*
 * log: one line per event on stderr, "PROGRAM: LEVEL: message" (verifier, attestd, attestctl).
 *
 * Lowercase, what failed first, then the value in quotes (STYLE.md habit 13). Callers pass no
 * trailing newline. Thread-safe: each line is formatted into a local buffer and written with one
 * write(2), so lines from the verifier's HTTP thread pool never interleave; a line longer than
 * the buffer (1 KiB) is cut, not dropped. log_init() and log_set_level() are for main() before
 * threads start. Until log_init() is called the program name is the executable's base name and
 * the level is LOG_LVL_INFO (info, warnings and errors; no debug).
 */
#ifndef COMMON_LOG_H
#define COMMON_LOG_H

enum log_level {
	LOG_LVL_ERROR = 0,
	LOG_LVL_WARN,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG,
};

/* Names the program in every line ("verifier"; the string must outlive the process's logging). */
void log_init(const char *program, enum log_level lvl);
void log_set_level(enum log_level lvl);
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

/* Logs the OpenSSL error queue (each entry with its code) as warnings after `what`; clears it. */
void log_openssl(const char *what);

#endif
