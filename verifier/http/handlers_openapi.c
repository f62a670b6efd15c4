/*
 * GET /v1/openapi.json: the description of every route (docs/openapi.json), embedded in the
 * binary at build time like the page's files (handlers_ui.c), so the verifier serves the
 * description of the very build that answers. Public: it names routes, not data.
 *
 * The assembler resolves the .incbin path against the top of the tree, where make runs; the
 * Makefile makes this object depend on the document, which -MMD cannot see.
 */
#include <string.h>

#include "common/log.h"
#include "verifier/http/handlers.h"

/* Followed by a NUL so it can be handed to the server as a C string. */
__asm__(".pushsection .rodata\n"
	".globl verifier_openapi_start\n"
	".hidden verifier_openapi_start\n"
	".globl verifier_openapi_end\n"
	".hidden verifier_openapi_end\n"
	"verifier_openapi_start:\n"
	".incbin \"docs/openapi.json\"\n"
	"verifier_openapi_end:\n"
	".byte 0\n"
	".popsection\n");
extern const char verifier_openapi_start[], verifier_openapi_end[];

void handle_openapi(const struct http_request *req, struct http_response *resp)
{
	size_t len = (size_t)(verifier_openapi_end - verifier_openapi_start);

	(void)req;
	/* The server sends a C string: a NUL inside would cut the document short, silently. */
	if (memchr(verifier_openapi_start, '\0', len) != NULL) {
		log_error("openapi: the embedded document contains a NUL byte; rebuild from docs/");
		http_reply_error(resp, PROTO_ERR_INTERNAL, "embedded document is damaged");
		return;
	}
	http_reply_text(resp, 200, "application/json", verifier_openapi_start);
}
