/*
 * log: one line per event on stderr, "verifier: LEVEL: message".
 *
 * Lowercase, what failed first, then the value in quotes (STYLE.md habit 13). Thread-safe: each
 * line is formatted into a local buffer and written with one write(2), so lines from the HTTP
 * thread pool never interleave. log_set_level() is meant for main() before threads start.
 */
#ifndef VERIFIER_LOG_H
#define VERIFIER_LOG_H

enum log_level {
	LOG_LVL_ERROR = 0,
	LOG_LVL_WARN,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG,
};

void log_set_level(enum log_level lvl);
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

/* Logs the OpenSSL error queue (each entry with its code) after `what`, then clears it. */
void log_openssl(const char *what);

#endif
