#!/usr/bin/env bash
# Attack matrix, inputs: enrollment with the wrong TPM or key, malformed and hostile bodies,
# agent ids that try to leave their path, an expired nonce, and file names built to break
# whatever displays them (control characters, bytes that are not UTF-8, HTML): those are
# judged, stored and returned by /v1/violations as JSON-escaped text.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

start_verifier "$W/v" "${VARGS[@]}" || { fail "verifier starts"; finish; exit 1; }
agents() { op /v1/agents | jq -c '[.agents[] | [.agent_id, .state]]'; }

# --- enrollment -------------------------------------------------------------------------------
"$SA" mkca "$W/otherca" >/dev/null
"$SA" init "$W/a-x" --ca-key "$W/otherca/ca-key.pem" --ca-cert "$W/otherca/ca.pem"
"$SA" init "$W/a-y" --ca-key "$W/ekca/ca-key.pem" --ca-cert "$W/ekca/ca.pem"
"$SA" init "$W/a-z" --ca-key "$W/ekca/ca-key.pem" --ca-cert "$W/ekca/ca.pem"
before=$(agents)
sa enroll "$W/a-x" --verifier "$URL" --cacert "$CA" --id x
check_eq "EK certificate from an untrusted CA: 403 ek_untrusted" "403 ek_untrusted" "$R_STATUS $(err_code)"
sa enroll "$W/a-y" --verifier "$URL" --cacert "$CA" --id y --attack ek-mismatch --other-dir "$W/a-z"
check_eq "a trusted EK certificate for another EK: 403 ek_mismatch" "403 ek_mismatch" "$R_STATUS $(err_code)"
sa enroll "$W/a-y" --verifier "$URL" --cacert "$CA" --id y --attack ak-unrestricted
check_eq "AK without restricted: 400 bad_ak" "400 bad_ak" "$R_STATUS $(err_code)"
sa enroll "$W/a-y" --verifier "$URL" --cacert "$CA" --id y --attack ak-not-fixedtpm
check_eq "AK without fixedTPM: 400 bad_ak" "400 bad_ak" "$R_STATUS $(err_code)"
for id in ../../etc/passwd ..%2f..%2fx .hidden 'a/b' 'a b' "$(printf 'a\x1b')"; do
	sa enroll "$W/a-y" --verifier "$URL" --cacert "$CA" --id "$id"
	check_eq "agent id '${id:0:20}' refused: 400 bad_request" "400 bad_request" "$R_STATUS $(err_code)"
done
# 129 characters: softagent cannot even encode it, so the body is written here
r=$(jq -cn --arg id "$(printf 'x%.0s' {1..129})" '{agent_id: $id, ek_pub: "AAAA", ek_cert: "AAAA", ak_pub: "AAAA"}' |
	curl -sS --cacert "$CA" --data-binary @- "$URL/v1/agents")
check_eq "agent id of 129 characters refused" "bad_request agent_id" \
	"$(jq -r '"\(.error.code) \(.error.message | split(" ")[0])"' <<<"$r")"
check_eq "refused enrollments: no agent stored" "$before" "$(agents)"
sa enroll "$W/a-y" --verifier "$URL" --cacert "$CA" --id y --wrong-secret
check_eq "wrong credential secret: 403 activation_failed" "403 activation_failed" "$R_STATUS $(err_code)"
check_eq "wrong secret: the agent stays pending" pending "$(op /v1/agents/y | jq -r .state)"
sa round "$W/a-y"
check_eq "a pending agent gets no challenge: 403 not_activated" "403 not_activated" "$R_STATUS $(err_code)"
for path in "/v1/agents/..%2f..%2fetc/challenges" "/v1/agents/%2e%2e/challenges" \
	"/v1/agents/../agents/y/challenges" "/v1/agents/y%00/challenges"; do
	st=$(curl -sS --cacert "$CA" -o /dev/null -w '%{http_code}' -X POST --path-as-is "$URL$path")
	check "traversal in the agent path '$path' refused (4xx, got $st)" test "${st:0:1}" = 4
done
st=$(curl -sS --cacert "$CA" -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$W/token")" \
	--path-as-is "$URL/v1/agents/..%2f..%2fetc%2fpasswd/verdicts")
check_eq "traversal in an operator path: 404" 404 "$st"

# A byte no route allows in the path (an encoded NUL, control byte, blank, non-ASCII) is a 400
# before routing, on every route: decoded in place, a NUL would cut the path, and
# PUT /v1/policies/default%00evil would write policy default.
pversions() { op /v1/policies/default/versions | jq '.versions | length'; }
before=$(pversions)
r=$(curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -X PUT \
	--data-binary @"$W/policy.json" -w '\n%{http_code}' "$URL/v1/policies/default%00evil")
check_eq "PUT /v1/policies/default%00evil: 400 bad_request" "400 bad_request" \
	"$(tail -n 1 <<<"$r") $(head -n 1 <<<"$r" | jq -r .error.code)"
check_eq "and policy default is unchanged" "$before" "$(pversions)"
for path in "/v1/policies/default%00" "/v1/agents/y%00x" "/v1/agents/y%0a" "/v1/agents/y%20x" \
	"/v1/agents/y%7f" "/v1/agents/y%ff" "/healthz%00" "/metrics%00x" "/ui/%00" "/v1/agents/y%2500"; do
	st=$(curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o /dev/null \
		-w '%{http_code}' --path-as-is "$URL$path")
	check_eq "GET $path: 400 before routing" 400 "$st"
done
st=$(curl -sS --cacert "$CA" -o /dev/null -w '%{http_code}' -X POST --path-as-is \
	"$URL/v1/agents/y%00/challenges")
check_eq "an agent route without the token too: 400" 400 "$st"
st=$(curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o /dev/null \
	-w '%{http_code}' "$URL/v1/agents/y")
check_eq "the same path without the byte is answered" 200 "$st"
st=$(curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o /dev/null \
	-w '%{http_code}' -X DELETE "$URL/v1/agents/y?purge=1%00x")
check_eq "a NUL in a query value is not cut (purge=1%00x is not purge=1): 400, y kept" "400 pending" \
	"$st $(op /v1/agents/y | jq -r .state)"

# --- hostile bodies (refused by the parser: the nonce stays unused, nothing stored) -------------
agent p || { finish; exit 1; }
agent q || { finish; exit 1; }
# at most 10 unanswered challenges per agent: spread the cases over two agents
refused "deep JSON nesting (100000 levels)" p 400 bad_request --attack deep-json
refused "duplicate JSON key" p 400 bad_request --attack dup-key
refused "invalid base64" p 400 bad_request --attack bad-base64
refused "PCR index 4294967306" p 400 bad_request --attack pcr-index-huge
refused "PCR index 24" p 400 bad_request --attack pcr-index-24
refused "unknown PCR bank" p 400 bad_request --attack unknown-bank
refused "log_offset 2^64-1" q 400 bad_request --attack offset-huge
refused "negative log_offset" q 400 bad_request --attack offset-negative
refused "evidence body over 64 MiB" q 413 body_too_large --attack oversized
trusted "after the hostile bodies: an honest round is trusted" p
st=$(head -c 70000 /dev/zero | tr '\0' '[' | curl -sS --cacert "$CA" -o /dev/null -w '%{http_code}' \
	--data-binary @- "$URL/v1/agents")
check_eq "oversized enroll body: 413" 413 "$st"
st=$( (printf '{"agent_id":"r","ek_pub":'; head -c 20000 /dev/zero | tr '\0' '['; ) |
	curl -sS --cacert "$CA" -o /dev/null -w '%{http_code}' --data-binary @- "$URL/v1/agents")
check_eq "deeply nested enroll body: 400" 400 "$st"

# --- file names built to break a display --------------------------------------------------------
D3=$(printf '33%.0s' {1..32})
HTML_PATH=$(printf '/tmp/<script>alert(1)</script>"q\n\x1b[31m\x7f&amp;')
agent t1 && judged "path with HTML, a quote and control characters" t1 not_in_allowlist 1 \
	--append '/tmp/<script>alert(1)</script>"q\x0a\x1b[31m\x7f&amp;'":$D3"
raw=$(op "/v1/violations?agent=t1")
check "violations answer is JSON" jq -e . <<<"$raw" >/dev/null
check_eq "the path comes back byte for byte" "$HTML_PATH" "$(jq -r '.violations[0].path' <<<"$raw")"
check_fails "no raw control character in the JSON text" grep -q $'\x1b' <<<"$raw"
agent t2 && judged "path that is not UTF-8" t2 not_in_allowlist 1 --append '/tmp/bad\xff\xfe\xe2\x82'":$D3"
check_eq "the bytes that are not UTF-8 come back as \\xNN text" '/tmp/bad\xff\xfe\xe2\x82' \
	"$(op "/v1/violations?agent=t2" | jq -r '.violations[0].path')"
check_eq "and the verdict names them the same way" '/tmp/bad\xff\xfe\xe2\x82' \
	"$(op /v1/agents/t2/verdicts | jq -r '.verdicts[0].reasons[0].detail' | cut -d' ' -f1)"
LONG=/tmp/x$(printf 'é%.0s' {1..300})
agent t3 && judged "long UTF-8 path (the verdict detail is cut)" t3 not_in_allowlist 1 --append "$LONG:$D3"
check_eq "the stored path is whole" "$LONG" "$(op "/v1/violations?agent=t3" | jq -r '.violations[0].path')"
check "the cut verdict detail is still UTF-8" jq -e . <<<"$(op /v1/agents/t3/verdicts)" >/dev/null
agent t4 && judged "unknown template whose name is HTML and not UTF-8" t4 unjudgeable_entry 1 \
	--attack bad-template-name
check_eq "the template name comes back as text" '<b>\xff\xfe' \
	"$(op "/v1/violations?agent=t4" | jq -r '.violations[0].template')"
st=$(curl -sS --cacert "$CA" -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$W/token")" "$URL/v1/violations")
check_eq "the list of every agent's violations still answers" 200 "$st"
check_eq "with all four" 4 "$(op /v1/violations | jq '[.violations[] | select(.agent_id | startswith("t"))] | length')"

# --- an expired nonce (a verifier whose nonces live 1 s) ------------------------------------------
stop_pid "$VPID"
start_verifier "$W/ttl" "${VARGS[@]}" --nonce-ttl 1 || { fail "verifier with --nonce-ttl 1 starts"; finish; exit 1; }
agent n || { finish; exit 1; }
refused "nonce expired (TTL 1 s, answered after 2.2 s)" n 409 nonce_expired --sleep 2.2
trusted "a prompt answer is still trusted" n

finish
