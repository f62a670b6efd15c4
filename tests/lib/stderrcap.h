/*
 * stderrcap: what a piece of code writes on stderr (the log module's lines), for tests that
 * check a log line. stderrcap_begin() sends fd 2 to an unlinked temporary file;
 * stderrcap_end() puts fd 2 back and copies what was written, NUL-terminated and cut to cap,
 * into out. One capture at a time; not for threads that log after stderrcap_end().
 */
#ifndef TESTS_LIB_STDERRCAP_H
#define TESTS_LIB_STDERRCAP_H

#include <stddef.h>

/* 0, or -1 (nothing redirected). */
int stderrcap_begin(void);
/* The bytes written since stderrcap_begin() (out[0] = '\0' if it failed). */
void stderrcap_end(char *out, size_t cap);

/* How many lines of text contain needle. */
int stderrcap_count(const char *text, const char *needle);

#endif
