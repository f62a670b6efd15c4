#!/usr/bin/env bash
# docs/openapi.json as an OpenAPI document: @redocly/cli (pinned, from the npm registry, kept in
# a cache outside the tree) lints it with docs/redocly.yaml, and refuses a broken copy; the
# package installs it, byte for byte, and the verifier's build embeds the same bytes (the
# integration test tests/integration/openapi.sh fetches GET /v1/openapi.json). The route table
# against the document is tests/unit/test_openapi.c.
# Skips only when the npm registry cannot be reached and CI is unset; in CI that fails too.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

REDOCLY_VERSION=2.77.0
DOC=$TOP/docs/openapi.json
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/attest/redocly-$REDOCLY_VERSION
REDOCLY=$CACHE/node_modules/.bin/redocly

command -v npm >/dev/null || { fail "npm missing (make deps: nodejs, which brings npm)"; finish; exit 1; }
if [[ ! -x $REDOCLY ]]; then
	mkdir -p "$CACHE"
	if ! npm install --prefix "$CACHE" --no-audit --no-fund --no-save \
		"@redocly/cli@$REDOCLY_VERSION" >"$T_TMP/npm.log" 2>&1; then
		if [[ -z ${CI:-} ]] && grep -qE 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH|network' "$T_TMP/npm.log"; then
			skip "the npm registry is unreachable: @redocly/cli@$REDOCLY_VERSION not installed ($(grep -m1 -oE 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH' "$T_TMP/npm.log"))"
			finish
			exit 0
		fi
		fail "npm install @redocly/cli@$REDOCLY_VERSION: $(tail -n 3 "$T_TMP/npm.log")"
		finish
		exit 1
	fi
fi
check_eq "redocly is version $REDOCLY_VERSION" "$REDOCLY_VERSION" \
	"$("$REDOCLY" --version 2>/dev/null | grep -oE '^[0-9]+\.[0-9]+\.[0-9]+$' | tail -n 1)"

lint() { "$REDOCLY" lint --config "$TOP/docs/redocly.yaml" "$1" >"$T_TMP/lint.log" 2>&1; }
if lint "$DOC"; then
	ok "redocly lint docs/openapi.json: valid"
else
	fail "redocly lint docs/openapi.json: $(grep -vE '║|╔|╚|^$' "$T_TMP/lint.log" | sed -n 1,15p)"
fi
# The lint can fail: a reference to no schema, a path parameter that is not declared.
jq '.paths["/v1/agents"].get.responses["200"].content["application/json"].schema["$ref"] = "#/components/schemas/NoSuchSchema"' \
	"$DOC" >"$T_TMP/bad-ref.json"
check_fails "redocly refuses a reference to a schema that does not exist" lint "$T_TMP/bad-ref.json"
jq 'del(.paths["/v1/agents/{agent_id}"].get.parameters)' "$DOC" >"$T_TMP/no-param.json"
check_fails "redocly refuses a path parameter the operation does not declare" lint "$T_TMP/no-param.json"

# --- installed with the package --------------------------------------------------------------
make -C "$TOP" --no-print-directory install-verifier DESTDIR="$T_TMP/root" PREFIX=/usr \
	SYSCONFDIR=/etc UNITDIR=/lib/systemd/system >"$T_TMP/install.log" 2>&1
check_eq "make install-verifier: exit 0" 0 $?
check "installed as /usr/share/doc/attest-verifier/openapi.json, the same bytes" \
	cmp -s "$DOC" "$T_TMP/root/usr/share/doc/attest-verifier/openapi.json"
check "the verifier embeds the same bytes (strings of $B/verifier)" \
	grep -qF -- "$(grep -m1 '"description"' "$DOC")" "$B/verifier"
finish
