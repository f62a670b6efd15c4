/*
 * docs/openapi.json against the verifier's route table (app_routes in routes.c, the one table):
 * the same paths and methods, each operation's security from the route's access, and each
 * operation's response statuses exactly those http_route_declares() admits for the route (its
 * handler's own, the server's refusals), and each operation's query parameters exactly the ones
 * the route declares (the only ones its handler can read). The document is read from the top of the tree, where
 * tests/run runs. The lint of the document as OpenAPI is tests/install/openapi.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "verifier/http/handlers.h"
#include "verifier/http/server.h"
#include "tests/unit/check.h"

#define DOC_PATH "docs/openapi.json"

/* "/v1/agents/{agent_id}/ear" -> "/v1/agents/ * /ear" (without blanks), the table's form. */
static void template_to_pattern(const char *t, char *out, size_t cap)
{
	size_t n = 0;

	while (*t && n + 1 < cap) {
		if (*t == '{') {
			const char *close = strchr(t, '}');

			if (!close)
				break;
			out[n++] = '*';
			t = close + 1;
			continue;
		}
		out[n++] = *t++;
	}
	out[n] = '\0';
}

static const struct http_route *route_find(const char *method, const char *pattern)
{
	for (size_t i = 0; i < app_nroutes; i++)
		if (!strcasecmp(app_routes[i].method, method) &&
		    !strcmp(app_routes[i].pattern, pattern))
			return &app_routes[i];
	return NULL;
}

static json_t *operation_of(json_t *paths, const struct http_route *rt)
{
	const char *tmpl;
	json_t *item;
	char pattern[256], method[16];

	json_object_foreach(paths, tmpl, item) {
		template_to_pattern(tmpl, pattern, sizeof(pattern));
		if (strcmp(pattern, rt->pattern))
			continue;
		for (size_t i = 0; rt->method[i] && i + 1 < sizeof(method); i++) {
			method[i] = (char)(rt->method[i] | 0x20);
			method[i + 1] = '\0';
		}
		return json_object_get(item, method);
	}
	return NULL;
}

/* Every operation of the document names a route of the table. */
/* The document (DOC_PATH) and its "paths", read once in main(). */
static json_t *openapi_doc, *openapi_paths;

static void test_document_routes_exist(void)
{
	json_t *paths = openapi_paths;
	const char *tmpl, *method;
	json_t *item, *op;
	char pattern[256];
	size_t nops = 0;

	json_object_foreach(paths, tmpl, item) {
		template_to_pattern(tmpl, pattern, sizeof(pattern));
		json_object_foreach(item, method, op) {
			if (!strcmp(method, "parameters") || !strcmp(method, "summary") ||
			    !strcmp(method, "description"))
				continue;
			nops++;
			CHECK(route_find(method, pattern) != NULL,
			      "%s %s is in " DOC_PATH " but in no route of routes.c", method, tmpl);
		}
	}
	CHECK(nops == app_nroutes, DOC_PATH " has %zu operations, routes.c %zu routes", nops,
	      app_nroutes);
}

/* Every route is in the document, with its security and exactly its statuses. */
static void test_routes_documented(void)
{
	json_t *paths = openapi_paths;
	for (size_t i = 0; i < app_nroutes; i++) {
		const struct http_route *rt = &app_routes[i];
		json_t *op = operation_of(paths, rt), *responses, *security;
		bool public_op;

		CHECK(op != NULL, "%s %s (routes.c) is not in " DOC_PATH, rt->method, rt->pattern);
		if (!op)
			continue;
		security = json_object_get(op, "security");
		public_op = json_is_array(security) && json_array_size(security) == 0;
		CHECK(public_op == (rt->access == HTTP_PUBLIC),
		      "%s %s: the document says %s, routes.c %s", rt->method, rt->pattern,
		      public_op ? "public (security: [])" : "a token", rt->access == HTTP_PUBLIC
		      ? "public" : "a token");
		responses = json_object_get(op, "responses");
		CHECK(json_is_object(responses), "%s %s has no responses", rt->method, rt->pattern);
		for (unsigned st = 100; st < 600; st++) {
			char code[4];
			bool documented, declared = http_route_declares(rt, st);

			snprintf(code, sizeof(code), "%u", st);
			documented = json_object_get(responses, code) != NULL;
			CHECK(documented == declared, "%s %s: status %u is %s " DOC_PATH
			      " but %s by routes.c (http_route_declares)", rt->method, rt->pattern,
			      st, documented ? "in" : "not in", declared ? "answered" : "never answered");
		}
	}
}

/* A parameter object, or the one a {"$ref": "#/components/parameters/X"} names. */
static json_t *parameter_deref(json_t *doc, json_t *p)
{
	const char *ref = json_string_value(json_object_get(p, "$ref"));
	const char *prefix = "#/components/parameters/";

	if (!ref)
		return p;
	if (strncmp(ref, prefix, strlen(prefix)))
		return NULL;
	return json_object_get(json_object_get(json_object_get(doc, "components"), "parameters"),
			       ref + strlen(prefix));
}

/*
 * Every route's query parameters in the document (the operation's, "in": "query") are exactly
 * the names its row declares (routes.c, `query`), which are the only ones http_query() answers
 * a handler and the only ones the server lets through.
 */
static void test_query_parameters(void)
{
	json_t *doc = openapi_doc;
	json_t *paths = openapi_paths;
	for (size_t i = 0; i < app_nroutes; i++) {
		const struct http_route *rt = &app_routes[i];
		json_t *op = operation_of(paths, rt), *p;
		size_t k, ndoc = 0, ndecl = 0;

		if (!op)
			continue; /* test_routes_documented says so */
		json_array_foreach(json_object_get(op, "parameters"), k, p) {
			json_t *param = parameter_deref(doc, p);
			const char *in = json_string_value(json_object_get(param, "in"));
			const char *name = json_string_value(json_object_get(param, "name"));

			CHECK(param && in && name, "%s %s: parameter %zu is not a parameter object",
			      rt->method, rt->pattern, k);
			if (!in || strcmp(in, "query") || !name)
				continue;
			ndoc++;
			CHECK(http_route_reads(rt, name, strlen(name)),
			      "%s %s: " DOC_PATH " declares ?%s=, which routes.c does not (its handler"
			      " never reads it)", rt->method, rt->pattern, name);
			CHECK(json_is_false(json_object_get(param, "required")),
			      "%s %s: ?%s= is optional (required: false)", rt->method, rt->pattern, name);
		}
		for (const char *q = rt->query; q && *q; ndecl++) {
			q += strcspn(q, " ");
			q += strspn(q, " ");
		}
		CHECK(ndoc == ndecl, "%s %s: routes.c declares %zu query parameters (\"%s\"), "
		      DOC_PATH " %zu", rt->method, rt->pattern, ndecl, rt->query ? rt->query : "",
		      ndoc);
	}
}

/* A handler that reads a parameter its route does not declare gets nothing. */
static void test_undeclared_read(void)
{
	const struct http_route *rt = NULL;
	struct http_request req = { 0 };

	for (size_t i = 0; i < app_nroutes; i++)
		if (app_routes[i].fn == handle_violations_list)
			rt = &app_routes[i];
	CHECK(rt && http_route_reads(rt, "state", 5) && http_route_reads(rt, "limit", 5) &&
		      !http_route_reads(rt, "stat", 4) && !http_route_reads(rt, "states", 6),
	      "GET /v1/violations reads state and limit, nothing like them");
	req.route = rt;
	CHECK(http_query(&req, "bogus") == NULL, "http_query() of an undeclared name is NULL");
}

/* The checks above must be able to fail: a status and a route the table does not have. */
static void test_comparison_bites(void)
{
	const struct http_route *rt = route_find("GET", "/v1/jwks");

	CHECK(rt != NULL, "GET /v1/jwks is in the table");
	CHECK(rt && !http_route_declares(rt, 404), "GET /v1/jwks never answers 404");
	CHECK(rt && !http_route_declares(rt, 401), "a public route never answers 401");
	CHECK(route_find("GET", "/v1/nothing") == NULL, "no route for /v1/nothing");
	rt = route_find("GET", "/v1/backup");
	CHECK(rt && http_route_declares(rt, 403), "a read-only token gets 403 on /v1/backup");
	rt = route_find("GET", "/v1/agents");
	CHECK(rt && !http_route_declares(rt, 403), "a read-only token may list agents");
}

int main(void)
{
	json_error_t err;

	openapi_doc = json_load_file(DOC_PATH, JSON_REJECT_DUPLICATES, &err);
	CHECK(openapi_doc != NULL,
	      "cannot read " DOC_PATH " (run from the top of the tree): %s line %d",
	      err.text, err.line);
	if (!openapi_doc)
		return check_finish();
	CHECK(!strncmp(json_string_value(json_object_get(openapi_doc, "openapi")) ?: "", "3.", 2),
	      DOC_PATH " is not OpenAPI 3");
	openapi_paths = json_object_get(openapi_doc, "paths");
	CASE(test_document_routes_exist);
	CASE(test_routes_documented);
	CASE(test_query_parameters);
	CASE(test_undeclared_read);
	CASE(test_comparison_bites);
	json_decref(openapi_doc);
	return check_finish();
}
