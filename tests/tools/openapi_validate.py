#!/usr/bin/env python3
"""Validates one response seen on the wire against docs/openapi.json.

usage: openapi_validate.py DOC METHOD PATH STATUS CONTENT-TYPE BODY-FILE

The operation is the document's path template that matches PATH (query removed) with METHOD;
STATUS must be one of its responses; a query parameter the operation does not declare must
have been refused (400), and a declared one whose value breaks its schema must not have been
accepted (2xx); the content type must be the one documented; a JSON body
must validate (JSON Schema 2020-12, python3-jsonschema) against the documented schema, whose
references resolve in the document's components. Prints nothing and exits 0 when it fits,
else says why on stdout and exits 1.
"""
import json
import re
import sys
import urllib.parse

import jsonschema


def operation(doc, method, path):
    path = path.split("?", 1)[0]
    for tmpl, item in doc["paths"].items():
        rx = "^" + re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(tmpl)) + "$"
        if re.match(rx, path) and method.lower() in item:
            return tmpl, item[method.lower()]
    return None, None


def query_misfit(doc, op, path, status):
    """A query the answer contradicts: a parameter the operation does not declare that was
    not refused (400), or a declared one whose value breaks its schema that was accepted."""
    declared = {}
    for p in op.get("parameters", []):
        if "$ref" in p:
            p = doc["components"]["parameters"][p["$ref"].rsplit("/", 1)[1]]
        if p.get("in") == "query":
            declared[p["name"]] = p
    query = path.split("?", 1)[1] if "?" in path else ""
    for name, value in urllib.parse.parse_qsl(query, keep_blank_values=True):
        if name not in declared:
            if status != "400":
                return f"?{name}= is not declared, yet the answer was {status}, not 400"
            continue
        if not status.startswith("2"):
            continue
        schema = dict(declared[name].get("schema", {}))
        schema["components"] = doc["components"]
        if schema.get("type") == "integer":
            if not value.isdigit():
                return f"?{name}={value} is not an integer, yet the answer was {status}"
            value = int(value)
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(value))
        if errors:
            return f"?{name}={value} breaks its schema ({errors[0].message[:200]}), yet the answer was {status}"
    return None


def main(argv):
    if len(argv) != 7:
        print(__doc__.strip().splitlines()[2])
        return 2
    doc_file, method, path, status, ctype, body_file = argv[1:]
    with open(doc_file, encoding="utf-8") as f:
        doc = json.load(f)
    tmpl, op = operation(doc, method, path)
    if op is None:
        print(f"{method} {path}: no operation in the document")
        return 1
    resp = op["responses"].get(status)
    if resp is None:
        print(f"{method} {tmpl}: status {status} is not documented")
        return 1
    why = query_misfit(doc, op, path, status)
    if why:
        print(f"{method} {tmpl}: {why}")
        return 1
    if "$ref" in resp:
        resp = doc["components"]["responses"][resp["$ref"].rsplit("/", 1)[1]]
    content = resp.get("content", {})
    media = ctype.split(";", 1)[0].strip()
    documented = {k.split(";", 1)[0].strip(): v for k, v in content.items()}
    if media not in documented:
        print(f"{method} {tmpl} {status}: content type {media!r}, documented {sorted(documented)}")
        return 1
    if media != "application/json":
        return 0
    with open(body_file, "rb") as f:
        try:
            body = json.loads(f.read())
        except ValueError as e:
            print(f"{method} {tmpl} {status}: the body is not JSON: {e}")
            return 1
    schema = dict(documented[media].get("schema", {}))
    schema["components"] = doc["components"]
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top)"
        print(f"{method} {tmpl} {status}: at {where}: {e.message[:300]}"
              f" ({len(errors)} error(s))")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
