#!/usr/bin/env python3
"""The web page's reads against the API's description.

Every member the page (verifier/http/ui/app.js) reads with `x.name` must be one that
docs/openapi.json describes in a schema (a property of any of its schemas, the API's one list of
member names; the codec writes the same ones: tests/unit/test_api_codec holds each resource to
it), or a name of something that is not an API answer: a JavaScript or DOM property, or a member
of a policy document (policies/README.md). Those are listed in NOT_API below, each once; the list
is exact (a name in it the page no longer reads, or one the API does describe, is a failure too),
so that a member the API renames or drops, still read by the page, fails here instead of showing
"undefined". Property reads are taken from the script with its comments and string literals
removed (template literals keep their ${...} expressions).

usage: ui_fields.py APP_JS OPENAPI_JSON   (prints ok/FAIL lines and `N passed, N failed`)
"""
import json
import re
import sys

# Names the page reads from what is not an API answer (each read by the page, none described
# by docs/openapi.json).
NOT_API = {
    # JavaScript
    "DateTimeFormat", "abs", "all", "call", "catch", "ceil", "charCodeAt", "concat", "decode",
    "entries", "filter", "floor", "forEach", "fromCharCode", "get", "has", "indexOf",
    "isArray", "join", "json", "length", "localeCompare", "map", "max", "min", "now", "ok",
    "prototype", "push", "reduce", "replace", "resolve", "resolvedOptions", "round", "size",
    "slice", "some", "sort", "split", "startsWith", "stringify", "subarray", "timeZone",
    "toLowerCase", "toString", "trim", "arrayBuffer", "padStart", "getDate", "getFullYear", "getHours",
    "getMinutes", "getMonth", "getSeconds", "getTimezoneOffset", "statusText",
    # DOM
    "addEventListener", "appendChild", "checked", "classList", "className", "createElement",
    "createTextNode", "dataset", "disabled", "files", "firstChild", "focus", "getElementById",
    "getItem", "hidden", "onchange", "options", "preventDefault", "querySelector",
    "removeChild", "removeItem", "required", "scrollTo", "setAttribute", "setItem", "target",
    "textContent", "value",
    # the page's own state: the fleet's and the queue's pages, a label filter, grouped verdicts
    "items", "key", "limit", "n", "oldest", "page", "policyWanted", "raw", "v",
}

# A policy document's members the page reads (policies/README.md; GET /v1/policies/{policy}
# answers the document as stored, not a schema of docs/openapi.json; .../enforced's "policy" is
# one too). digests is described (a violation's expected) and so is not listed.
POLICY_DOCUMENT = {
    "digests_hex", "digest_only", "boot_aggregate", "excludes", "meta",
    "description", "exact", "forbidden",
}


def strip(js):
    """js without comments and string literals; template literals keep ${...} code."""
    out = []
    code(js, 0, False, out)
    return "".join(out)


def code(js, i, in_template, out):
    """Copies code from i to out; in a template's ${...}, stops after its closing brace."""
    n, depth = len(js), 0
    while i < n:
        c = js[i]
        if js.startswith("//", i):
            j = js.find("\n", i)
            i = n if j < 0 else j
        elif js.startswith("/*", i):
            j = js.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c in "'\"":
            j = i + 1
            while j < n and js[j] != c:
                j += 2 if js[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif c == "/" and re.search(r"(?:[=(,:;!&|?{}\[]|\breturn)\s*$", "".join(out[-20:])):
            j, cls = i + 1, False  # a regular expression literal
            while j < n and (js[j] != "/" or cls):
                if js[j] == "\\":
                    j += 1
                elif js[j] == "[":
                    cls = True
                elif js[j] == "]":
                    cls = False
                j += 1
            out.append("/re/")
            i = j + 1
        elif c == "`":
            i = template(js, i + 1, out)
        elif c == "}" and in_template and depth == 0:
            out.append(")")
            return i + 1
        else:
            depth += (c == "{") - (c == "}")
            out.append(c)
            i += 1
    return n


def template(js, i, out):
    """Skips a template literal's text from i, copying its ${...} code. Returns the end."""
    n = len(js)
    out.append('""+')
    while i < n:
        if js[i] == "\\":
            i += 2
        elif js[i] == "`":
            out.append('""')
            return i + 1
        elif js.startswith("${", i):
            out.append("(")
            i = code(js, i + 2, True, out)
            out.append("+")
        else:
            i += 1
    return n


def reads(code):
    return set(re.findall(r"(?:[\w$)\]])\??\.([A-Za-z_$][\w$]*)", code))


def described(doc):
    names = set()

    def walk(o):
        if isinstance(o, dict):
            if isinstance(o.get("properties"), dict):
                names.update(o["properties"].keys())
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(doc.get("components", {}))
    walk(doc.get("paths", {}))
    walk(doc.get("webhooks", {}))
    return names


def main(argv):
    js = open(argv[1], encoding="utf-8").read()
    doc = json.load(open(argv[2], encoding="utf-8"))
    passed = failed = 0

    def check(cond, what):
        nonlocal passed, failed
        if cond:
            passed += 1
            print("ok - " + what)
        else:
            failed += 1
            print("FAIL - " + what)

    api = described(doc)
    read = reads(strip(js))
    other = NOT_API | POLICY_DOCUMENT
    check(len(read) > 50, f"the page's property reads found ({len(read)})")
    made_up = reads(strip(js + "\nconst q = `${a.no_such_member}`; // b.in_comment\n")) - api - other
    check(made_up == {"no_such_member"}, "a made-up read is caught (in a template), a comment is not")
    unknown = sorted(read - api - other)
    check(not unknown, "every member the page reads is described by docs/openapi.json or listed"
          " as not the API's" + (": not described: " + ", ".join(unknown) if unknown else ""))
    stale = sorted(other - read)
    check(not stale, "every name listed as not the API's is read by the page"
          + (": not read: " + ", ".join(stale) if stale else ""))
    both = sorted(other & api)
    check(not both, "no name listed as not the API's is one docs/openapi.json describes"
          + (": " + ", ".join(both) if both else ""))
    for name in ("stale_after", "open_violations", "path_escaped", "judged_by"):
        check(name in read and name in api, f"the page reads {name}, which the API describes")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
