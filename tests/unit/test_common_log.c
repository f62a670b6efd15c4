/*
 * common/log: the line format both daemons print ("PROGRAM: LEVEL: message", which tests and
 * operators grep), level filtering, the cut of an over-long line, and the OpenSSL queue drain.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>

#include "common/log.h"
#include "tests/unit/check.h"

static char captured[8192];

/* Runs fn with stderr going to a temporary file; captured gets what it wrote. */
static void capture(void (*fn)(void))
{
	char path[] = "/tmp/test_common_log.XXXXXX";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	ssize_t n;

	captured[0] = '\0';
	if (fd < 0 || saved < 0)
		return;
	unlink(path);
	dup2(fd, STDERR_FILENO);
	fn();
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, captured, sizeof(captured) - 1, 0);
	captured[n > 0 ? n : 0] = '\0';
	close(fd);
}

static void levels_info(void)
{
	log_init("attestd", LOG_LVL_INFO);
	log_info("stopping");
	log_warn("verifier answered %d to '%s'", 409, "/v1/agents");
	log_error("post to '%s' failed: %s", "https://x", "boom");
	log_debug("not shown");
}

static void levels_debug(void)
{
	log_init("verifier", LOG_LVL_INFO);
	log_set_level(LOG_LVL_DEBUG);
	log_debug("shown %u", 1u);
}

static void levels_error(void)
{
	log_init("verifier", LOG_LVL_ERROR);
	log_warn("hidden");
	log_info("hidden");
	log_error("only this");
}

static void long_line(void)
{
	char big[3000];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_init("verifier", LOG_LVL_INFO);
	log_info("%s", big);
}

static void openssl_queue(void)
{
	BIO *b;

	log_init("verifier", LOG_LVL_INFO);
	ERR_clear_error();
	b = BIO_new_file("/nonexistent/test_common_log", "r");
	BIO_free(b);
	log_openssl("tls: certificate check");
}

static void test_levels(void)
{
	capture(levels_info);
	CHECK(strcmp(captured, "attestd: info: stopping\n"
			       "attestd: warning: verifier answered 409 to '/v1/agents'\n"
			       "attestd: error: post to 'https://x' failed: boom\n") == 0,
	      "format and levels at info: '%s'", captured);

	capture(levels_debug);
	CHECK(strcmp(captured, "verifier: debug: shown 1\n") == 0, "debug when asked: '%s'", captured);

	capture(levels_error);
	CHECK(strcmp(captured, "verifier: error: only this\n") == 0, "errors only: '%s'", captured);
}

static void test_long_line(void)
{
	size_t n;

	capture(long_line);
	n = strlen(captured);
	CHECK(n == 1023 && captured[n - 1] == '\n' && strncmp(captured, "verifier: info: aaa", 19) == 0 &&
		      strchr(captured, '\n') == captured + n - 1,
	      "an over-long line is cut to one 1023-byte line (got %zu bytes)", n);
}

static void test_openssl_errors(void)
{
	capture(openssl_queue);
	CHECK(strncmp(captured, "verifier: warning: tls: certificate check: openssl error ", 57) == 0,
	      "openssl errors logged with their code: '%s'", captured);
	CHECK(ERR_peek_error() == 0, "the openssl queue is drained");
}

int main(void)
{
	CASE(test_levels);
	CASE(test_long_line);
	CASE(test_openssl_errors);
	log_init("test_common_log", LOG_LVL_INFO);
	return check_finish();
}
