#!/usr/bin/env bash
# Responses on the wire against docs/openapi.json: a verifier with one agent on swtpm, every GET
# route and the operator's writes called, each answer's status, content type and JSON body
# validated against the document (tests/tools/openapi_validate.py, python3-jsonschema); the
# verifier serves the document at GET /v1/openapi.json byte for byte; every query parameter a
# route declares is read by its handler (a bad value refused with its name), one it does not
# declare or one given twice refused (400); the verifier never logs an answer or a parameter
# read its route does not declare; and the validation refuses a body the document forbids.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

IMAGEN=$B/tools/imagen
ATTESTCTL=$B/attestctl
VALIDATE=$TOP/tests/tools/openapi_validate.py
DOC=$TOP/docs/openapi.json
need_cmds swtpm swtpm_setup tpm2_pcrextend curl jq python3
python3 -c 'import jsonschema' 2>/dev/null || { fail "python3-jsonschema missing (make deps)"; finish; exit 1; }
need_built "$IMAGEN" "$ATTESTCTL" "$B/attestd" "$B/verifier"

W=$T_TMP
swtpm_with_ek_ca "$W" || { finish; exit 1; }
"$IMAGEN" --entries 40 --template ima-ng --hash sha256 --zero-boot-pcrs --seed 7 \
	--out "$W/ima" --tpm2-extend-script "$W/ext" >/dev/null
mapfile -t ext <"$W/ext"
tpm2_pcrextend "${ext[@]}" >/dev/null
"$ATTESTCTL" policy-learn "$W/ima" --out "$W/policy.json" 2>/dev/null
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/token"
check "verifier starts" start_verifier "$W/verifier" --ek-ca "$W/ek-ca.pem" \
	--policy "$W/policy.json" --operator-token-file "$W/token" || { finish; exit 1; }
start_agent host-1 "$W/agent" --ima-list "$W/ima" --interval 1

n=0
# call METHOD PATH [TOKEN|-] [BODY]: the answer validated against the document.
call() {
	local method=$1 path=$2 auth=${3:-yes} body=${4:-} status ctype args=()
	n=$((n + 1))
	[[ $auth == yes ]] && args+=(-H "Authorization: Bearer $(cat "$W/token")")
	[[ -n $body ]] && args+=(-H "Content-Type: application/json" --data-binary "$body")
	status=$(curl -sS --cacert "$CA" -X "$method" "${args[@]}" -o "$W/body$n" \
		-D "$W/head$n" -w '%{http_code}' "$URL$path")
	ctype=$(sed -n 's/^[Cc]ontent-[Tt]ype: *//p' "$W/head$n" | tr -d '\r' | tail -n 1)
	if why=$("$VALIDATE" "$DOC" "$method" "$path" "$status" "$ctype" "$W/body$n"); then
		ok "$method $path: $status $ctype fits the document"
	else
		fail "$method $path: $why ($(head -c 300 "$W/body$n" | tr -d "\0"))"
	fi
}

trusted() { curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" \
	"$URL/v1/agents/host-1" | jq -e '.last_verdict == "trusted"' >/dev/null; }
for ((i = 0; i < 300; i++)); do trusted && break; sleep 0.1; done
check "agent host-1 trusted" trusted

check "GET /v1/openapi.json serves docs/openapi.json byte for byte" \
	cmp -s <(curl -sS --cacert "$CA" "$URL/v1/openapi.json") "$DOC"

call GET /healthz no
call GET /metrics no
call GET /v1/jwks no
call GET /v1/openapi.json no
call GET /ui/ no
call GET /v1/agents
call GET /v1/agents no
call GET /v1/agents/host-1
call GET /v1/agents/nobody
call GET /v1/agents/host-1/verdicts
call GET /v1/agents/host-1/counters
call GET /v1/agents/host-1/history
call GET /v1/agents/host-1/amendment
call GET /v1/agents/host-1/amendment/versions
call GET /v1/agents/host-1/ear
call GET /v1/violations
call GET /v1/policies/default
call GET /v1/policies/default/enforced
call GET /v1/policies/default/versions
call GET /v1/policies/default/versions/1
call GET /v1/policies/nosuch
call GET /v1/policies
call DELETE /v1/policies/nosuch
call PUT /v1/policies/second yes "$(cat "$W/policy.json")"
call PUT /v1/agents/host-1/policy yes '{"policy":"second"}'
call POST /v1/policies/second/rollback yes '{"version":1}'
call POST /v1/violations/999/approve yes '{}'
call POST /v1/ear/keys/rotate yes ''
call POST /v1/agents yes '{"not":"an enrollment"}'
call POST /v1/agents/host-1/challenges no '{}'
call DELETE '/v1/agents/host-1?purge=0'
call POST /v1/agents/host-1/reset yes ''
call PUT /v1/agents/host-1/labels yes '{"set":{"site":"lab1"},"remove":["rack"]}'
call POST /v1/policies/second/assign yes '{"label":"site=lab1"}'
call POST /v1/registrations yes '{"registrations":[{"agent_id":"new-1","ek_sha256":"0000000000000000000000000000000000000000000000000000000000000000","labels":{"site":"lab1"}}]}'
call GET /v1/registrations
call DELETE /v1/registrations/new-1
call GET /v1/backup

# Query parameters: each one a route declares, with a good value (answered, validated above
# against its schema) and a bad one (refused by the handler, which shows that it reads it);
# one no route declares, and one given twice, refused by the server before any handler.
call GET '/v1/agents?state=active&policy=default'
call GET '/v1/agents?label=site%3Dlab1'
call GET '/v1/agents/host-1/verdicts?limit=5'
call GET '/v1/agents/host-1/counters?limit=5'
call GET '/v1/violations?state=open&agent=host-1&limit=5'
call GET '/v1/agents/host-1/ear?nonce=abcdefghijklmnop'
# refused PATH WHY: 400, and the message is the handler's (names the parameter) or the server's.
refused() {
	local code msg
	code=$(curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -X "${3:-GET}" \
		-o "$W/refused" -w '%{http_code}' "$URL$1")
	msg=$(jq -r '.error.message' "$W/refused" 2>/dev/null)
	if [[ $code == 400 && $msg == *"$2"* ]]; then
		ok "${3:-GET} $1: 400 ($msg)"
	else
		fail "${3:-GET} $1: expected 400 saying '$2', got $code '$msg'"
	fi
}
refused '/v1/agents?state=asleep' 'state:'
refused '/v1/agents?policy=a%20b' 'policy:'
refused '/v1/agents?label=site' 'label:'
refused '/v1/agents/host-1/verdicts?limit=0' 'limit:'
refused '/v1/agents/host-1/counters?limit=x' 'limit:'
refused '/v1/violations?state=maybe' 'state must be'
refused '/v1/violations?agent=a%20b' 'agent'
refused '/v1/violations?limit=-1' 'limit:'
refused '/v1/agents/host-1/ear?nonce=short' 'nonce:'
refused '/v1/agents/nobody?purge=yes' 'purge' DELETE
refused '/v1/agents?stat=active' 'query parameter "stat": not one this endpoint takes'
refused '/v1/agents?state=active&state=stale' 'query parameter "state" given twice'
refused '/v1/jwks?x=1' 'query parameter "x": this endpoint takes none'
call GET '/v1/agents?stat=active'

check_fails "the verifier logged no answer its route does not declare" \
	grep -F "which its route does not declare" "$VLOG"

# The validation bites: an error body with a field the document forbids, a status it lacks.
printf '{"error":{"code":"not_found","message":"x","extra":1}}' >"$W/forged"
check_fails "a body with a field the document forbids is refused" \
	"$VALIDATE" "$DOC" GET /v1/agents/x 404 application/json "$W/forged"
printf '{"error":{"code":"not_found","message":"x"}}' >"$W/forged"
check_fails "a status the document lacks is refused" \
	"$VALIDATE" "$DOC" GET /v1/jwks 404 application/json "$W/forged"
check_fails "a content type the document lacks is refused" \
	"$VALIDATE" "$DOC" GET /v1/jwks 200 text/plain "$W/forged"
printf '{"agents":[]}' >"$W/forged"
check_fails "an undeclared query parameter that was answered 200 is refused" \
	"$VALIDATE" "$DOC" GET '/v1/agents?stat=active' 200 application/json "$W/forged"
check_fails "a declared one whose value breaks its schema, answered 200, is refused" \
	"$VALIDATE" "$DOC" GET '/v1/agents?state=asleep' 200 application/json "$W/forged"
finish
