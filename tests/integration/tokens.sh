#!/usr/bin/env bash
# Named and read-only operator tokens, rotated with SIGHUP (issue 16, item 4), against the real
# verifier with software agents (tests/tools/softagent) and attestctl:
#   the token's name is the actor in an agent's history and in policy versions; a read-only
#   token reads and is refused any change (403 read_only, nothing changed); a missing and a wrong
#   token get different messages naming the fix; after the file is edited and SIGHUP sent the
#   old token stops working and the new one works, without a restart; a file that does not load
#   on SIGHUP keeps the tokens loaded before. attestctl (item 5): global options before the
#   command, --token VALUE refused without printing it, a wrong CA names STATE_DIR/ca.pem.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
tok() { head -c 24 /dev/urandom | xxd -p -c 64; }
A1=$(tok) A2=$(tok) R1=$(tok)
printf '# NAME ROLE TOKEN\nalice operator %s\ndash read-only %s\n' "$A1" "$R1" >"$W/tokens"
as() { curl -sS --cacert "$CA" -H "Authorization: Bearer $1" "${@:2}"; }
code_as() { as "$1" -o /dev/null -w '%{http_code}' "${@:2}"; }
start_verifier "$W/v" --ek-ca "$W/ekca/ca.pem" --policy "$W/policy.json" \
	--operator-token-file "$W/tokens" || { fail "verifier starts"; finish; exit 1; }
check "the log counts the tokens" grep -q 'operator tokens: 2 from' "$VLOG"
# agent() and op() of tests/lib/softagent.bash use $W/token: alice's.
echo "$A1" >"$W/token"
agent a || { finish; exit 1; }
agent b || { finish; exit 1; }

# --- names and roles ---------------------------------------------------------------------------
check_eq "alice retires b: 200" 200 "$(code_as "$A1" -X DELETE "$URL/v1/agents/b")"
check_eq "the history names alice" alice \
	"$(op /v1/agents/b/history | jq -r '.history[0] | select(.event == "retired") | .actor')"
check_eq "alice stores a policy: its version names alice" alice \
	"$(as "$A1" -X PUT --data-binary @"$W/policy.json" "$URL/v1/policies/web" >/dev/null
	   op /v1/policies/web/versions | jq -r '.versions[0].actor')"
check_eq "dash (read-only) reads the fleet" 200 "$(code_as "$R1" "$URL/v1/agents")"
r=$(as "$R1" -X DELETE "$URL/v1/agents/a")
check_eq "dash may not retire: 403 read_only" "read_only" "$(jq -r .error.code <<<"$r")"
check "the refusal names the token and why" grep -q 'token "dash" is read-only' <<<"$(jq -r .error.message <<<"$r")"
check_eq "nothing changed" active "$(op /v1/agents/a | jq -r .state)"
check_eq "dash may not store a policy either" 403 \
	"$(code_as "$R1" -X PUT --data-binary @"$W/policy.json" "$URL/v1/policies/web2")"
check_eq "/metrics needs no token" 200 \
	"$(curl -sS --cacert "$CA" -o /dev/null -w '%{http_code}' "$URL/metrics")"

r=$(as "$R1" -w '\n%{http_code}' "$URL/v1/backup")
check_eq "dash (read-only) may not download the whole store: 403 read_only" "403 read_only" \
	"$(tail -n 1 <<<"$r") $(head -n 1 <<<"$r" | jq -r .error.code 2>/dev/null)"
check "the refusal says an operator token is needed" grep -q 'needs an operator token' <<<"$r"
check_eq "alice (operator) may: 200" 200 "$(code_as "$A1" -o /dev/null "$URL/v1/backup")"

# --- missing and wrong tokens: different messages, each naming the fix ---------------------------
out=$("$CTL" agents --verifier "$URL" --ca "$CA" 2>&1)
check "no token: attestctl says one is needed and where it is" \
	grep -q 'needs an operator token.*--token-file FILE.*STATE_DIR/operator-token' <<<"$out"
echo "not-a-token-of-this-verifier" >"$W/wrong"
out=$("$CTL" agents --verifier "$URL" --ca "$CA" --token-file "$W/wrong" 2>&1)
check "a wrong token: attestctl says it is not known (rotated?)" \
	grep -q 'not one this verifier knows (rotated or mistyped' <<<"$out"
check_fails "and the wrong token is never printed" grep -q 'not-a-token-of-this' <<<"$out"

# --- attestctl reads the verifier's named-token file ----------------------------------------------
out=$("$CTL" agents --verifier "$URL" --ca "$CA" --token-file "$W/tokens" 2>&1)
check_eq "a file of two named tokens without --token-name: exit 2" 2 \
	"$("$CTL" agents --verifier "$URL" --ca "$CA" --token-file "$W/tokens" >/dev/null 2>&1; echo $?)"
check "and attestctl names the file, the names and the fix, not the verifier" \
	grep -q "token file \"$W/tokens\" holds 2 tokens (alice, dash): choose one with --token-name" <<<"$out"
check_fails "and prints no token" grep -qe "$A1" -e "$R1" <<<"$out"
out=$("$CTL" agents --verifier "$URL" --ca "$CA" --token-file "$W/tokens" --token-name alice --json 2>&1)
check_eq "--token-name alice: alice's token from the named file" 2 "$(jq '.agents | length' <<<"$out" 2>/dev/null)"
out=$(ATTEST_TOKEN_NAME=dash "$CTL" agent retire a --verifier "$URL" --ca "$CA" --token-file "$W/tokens" 2>&1)
check "ATTEST_TOKEN_NAME=dash: dash's token (the verifier refuses a change: read-only)" \
	grep -q 'token "dash" is read-only' <<<"$out"
printf 'alice operator %s\n' "$A1" >"$W/alice-only"
out=$("$CTL" agents --verifier "$URL" --ca "$CA" --token-file "$W/alice-only" --json 2>&1)
check_eq "a file with one 'alice operator TOKEN' line (as the README recommends)" 2 \
	"$(jq '.agents | length' <<<"$out" 2>/dev/null)"
out=$("$CTL" agents --verifier "$URL" --ca "$CA" --token-file "$W/tokens" --token-name bob 2>&1)
check "--token-name of a name the file lacks: attestctl says so" \
	grep -q "token file \"$W/tokens\" has no token named \"bob\"" <<<"$out"
printf 'alice admin %s\n' "$A1" >"$W/bad-role"
out=$("$CTL" agents --verifier "$URL" --ca "$CA" --token-file "$W/bad-role" 2>&1)
check "a malformed line: attestctl names the file and the line, not the token" \
	grep -q "token file \"$W/bad-role\": line 1: want NAME operator|read-only TOKEN" <<<"$out"
check_fails "and prints no token" grep -qe "$A1" <<<"$out"

# --- attestctl's conventions (item 5) ----------------------------------------------------------
out=$("$CTL" --verifier "$URL" --ca "$CA" --token-file "$W/token" --json agents 2>&1)
check_eq "global options before the command" 2 "$(jq '.agents | length' <<<"$out" 2>/dev/null)"
out=$("$CTL" --token "$A1" agents --verifier "$URL" --ca "$CA" 2>&1)
check_eq "--token VALUE is refused (exit 2)" 2 $?
check "and names the fix" grep -q -- '--token-file FILE' <<<"$out"
check_fails "without printing the token" grep -q "$A1" <<<"$out"
out=$("$CTL" agents --verifier "$URL" --ca "$CA" --token="$A1" 2>&1)
check_fails "--token=VALUE: not printed either" grep -q "$A1" <<<"$out"
out=$("$CTL" agents --verifier "$URL" --ca "$W/ekca/ca.pem" --token-file "$W/token" 2>&1)
check "a wrong CA: attestctl names the file to give" grep -q 'give --ca STATE_DIR/ca.pem' <<<"$out"

# --- rotation with SIGHUP ----------------------------------------------------------------------
printf 'alice operator %s\ndash read-only %s\n' "$A2" "$R1" >"$W/tokens"
check_eq "before SIGHUP the old token still works" 200 "$(code_as "$A1" "$URL/v1/agents")"
kill -HUP "$VPID"
for ((i = 0; i < 50; i++)); do
	[[ $(grep -c 'operator tokens: 2 from' "$VLOG") == 2 ]] && break
	sleep 0.1
done
check_eq "after SIGHUP alice's old token stops working" 401 "$(code_as "$A1" "$URL/v1/agents")"
check_eq "her new one works" 200 "$(code_as "$A2" "$URL/v1/agents")"
check "the same process (no restart)" kill -0 "$VPID"
echo "garbage with spaces in it" >"$W/tokens"
kill -HUP "$VPID"
for ((i = 0; i < 50; i++)); do
	grep -q 'keeping the operator tokens loaded before' "$VLOG" && break
	sleep 0.1
done
check "a token file that does not load on SIGHUP: the log says so" \
	grep -q 'keeping the operator tokens loaded before' "$VLOG"
check_eq "and the tokens loaded before still work" 200 "$(code_as "$A2" "$URL/v1/agents")"
check "the verifier is still up" kill -0 "$VPID"
finish
