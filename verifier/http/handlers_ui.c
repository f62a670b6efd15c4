/*
 * The operator web page at /ui/: three static files from verifier/http/ui/, embedded in the binary at
 * build time (`.incbin`, so the verifier serves them from any working directory and no file
 * system path is ever derived from a URL). The route table names exactly /ui/, /ui/app.js and
 * /ui/style.css; anything else under /ui/ is the server's 404.
 *
 * The page is public (it holds no data); everything it shows comes from the operator API with
 * the bearer token the operator types in. The server adds `Content-Security-Policy` and
 * `X-Content-Type-Options: nosniff` to every response, so the page can run only its own script.
 *
 * The assembler resolves the .incbin paths against the directory make runs in (the top of the
 * tree); the Makefile makes this object depend on the files in verifier/http/ui/, which -MMD
 * cannot see.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/http/handlers.h"
#include "common/log.h"

/* Each file is followed by a NUL so it can be handed to the server as a C string. */
#define UI_EMBED(sym, file)                                                                    \
	__asm__(".pushsection .rodata\n"                                                       \
		".globl " #sym "_start\n"                                                      \
		".hidden " #sym "_start\n"                                                     \
		".globl " #sym "_end\n"                                                        \
		".hidden " #sym "_end\n"                                                       \
		#sym "_start:\n"                                                               \
		".incbin \"" file "\"\n"                                                       \
		#sym "_end:\n"                                                                 \
		".byte 0\n"                                                                    \
		".popsection\n");                                                              \
	extern const char sym##_start[], sym##_end[]

UI_EMBED(verifier_ui_index, "verifier/http/ui/index.html");
UI_EMBED(verifier_ui_js, "verifier/http/ui/app.js");
UI_EMBED(verifier_ui_css, "verifier/http/ui/style.css");

static void reply_asset(struct http_response *resp, const char *name, const char *start,
			const char *end, const char *content_type)
{
	size_t len = (size_t)(end - start);

	/* The server sends a C string: a NUL inside a file would cut it short, silently. */
	if (end < start || memchr(start, '\0', len) != NULL) {
		log_error("ui: embedded file \"%s\" contains a NUL byte; rebuild from verifier/http/ui/",
			  name);
		http_reply_error(resp, PROTO_ERR_INTERNAL, "embedded page is damaged");
		return;
	}
	http_reply_text(resp, 200, content_type, start);
}

void handle_ui_index(const struct http_request *req, struct http_response *resp)
{
	(void)req;
	reply_asset(resp, "index.html", verifier_ui_index_start, verifier_ui_index_end,
		    "text/html; charset=utf-8");
}

void handle_ui_js(const struct http_request *req, struct http_response *resp)
{
	(void)req;
	reply_asset(resp, "app.js", verifier_ui_js_start, verifier_ui_js_end,
		    "text/javascript; charset=utf-8");
}

void handle_ui_css(const struct http_request *req, struct http_response *resp)
{
	(void)req;
	reply_asset(resp, "style.css", verifier_ui_css_start, verifier_ui_css_end,
		    "text/css; charset=utf-8");
}
