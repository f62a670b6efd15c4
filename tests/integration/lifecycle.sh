#!/usr/bin/env bash
# An agent's lifecycle (issue 16, item 1) against the real verifier with software agents
# (tests/tools/softagent), through the API and attestctl:
#   retire: its evidence and its enrollment are refused with agent_retired, its EK is free for
#     another id, its verdicts and history stay; retiring twice is 409 and changes nothing
#   reset: a reimaged machine (a new EK and AK) under the same id is agent_exists until an
#     operator resets it, then enrolls and attests; the history names the reset and who did it
#   purge: the agent and what was stored for it are gone, the id is free
#   bad input (a purge that is not 0/1, no token) changes nothing
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
code() { curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o /dev/null \
	-w '%{http_code}' "$@"; }
nverdicts() { op "/v1/agents/$1/verdicts?limit=1000" | jq '.verdicts | length'; }

start_verifier "$W/v" "${VARGS[@]}" || { fail "verifier starts"; finish; exit 1; }
for id in a b c; do agent "$id" || { finish; exit 1; }; done

# --- retire ---------------------------------------------------------------------------------
check_eq "a purge that is neither 0 nor 1 is refused" 400 \
	"$(code -X DELETE "$URL/v1/agents/a?purge=yes")"
check_eq "without the token: 401" 401 \
	"$(curl -sS --cacert "$CA" -o /dev/null -w '%{http_code}' -X DELETE "$URL/v1/agents/a")"
check_eq "and a is still active" active "$(op /v1/agents/a | jq -r .state)"
check_eq "attestctl agent retire a" \
	"agent a: retired (its evidence is refused, its EK is free, its history is kept)" \
	"$(ctl agent retire a)"
check_eq "the API says retired, with its time" "retired true" \
	"$(op /v1/agents/a | jq -r '"\(.state) \(.retired_at > 0)"')"
sa round "$W/a-a" --append "$APP1"
check_eq "a retired agent's evidence is refused" "403 agent_retired" "$R_STATUS $(err_code)"
check_eq "its verdicts are kept" 1 "$(nverdicts a)"
sa enroll "$W/a-a" --verifier "$URL" --cacert "$CA" --id a
check_eq "its enrollment is refused too" "409 agent_retired" "$R_STATUS $(err_code)"
check "the refusal names the fix" grep -q 'attestctl agent reset a' <<<"$R_BODY"
check_eq "retiring it again: 409, nothing changed" "409 retired" \
	"$(code -X DELETE "$URL/v1/agents/a") $(op /v1/agents/a | jq -r .state)"
check_fails "attestctl agent retire a again fails" ctl agent retire a
sa enroll "$W/a-a" --verifier "$URL" --cacert "$CA" --id a-new
check_eq "its EK is free: the same TPM enrolls as another id" 200 "$R_STATUS"
# a-a now answers as a-new (softagent keeps the id it enrolled last).
sa round "$W/a-a" --append "$APP1"
check_eq "and attests there" "200 trusted" "$R_STATUS $(verdict)"

# --- reset ----------------------------------------------------------------------------------
"$SA" init "$W/b-reimaged" --ca-key "$W/ekca/ca-key.pem" --ca-cert "$W/ekca/ca.pem" ||
	fail "softagent init (a new TPM for b)"
sa enroll "$W/b-reimaged" --verifier "$URL" --cacert "$CA" --id b
check_eq "b with a new TPM: agent_exists until an operator resets it" "409 agent_exists" \
	"$R_STATUS $(err_code)"
check_eq "attestctl agent reset b" "agent b: reset (its next enrollment may bring a new EK and AK)" \
	"$(ctl agent reset b)"
check_eq "resetting it again: 409 already_reset" 409 "$(code -X POST "$URL/v1/agents/b/reset")"
trusted "b with its old TPM goes on until it enrolls again" b --append "$APP1"
sa enroll "$W/b-reimaged" --verifier "$URL" --cacert "$CA" --id b
check_eq "after the reset the new TPM enrolls as b" 200 "$R_STATUS"
sa round "$W/b-reimaged" --append "$APP1"
check_eq "and attests: a new boot session" "200 trusted" "$R_STATUS $(verdict)"
sa round "$W/a-b" --append "$APP1"
check_eq "the old TPM's AK is not b's any more" "400 bad_signature" "$R_STATUS $(err_code)"
check_eq "b's verdicts are kept across the reset" 3 "$(nverdicts b)"
hist=$(ctl agent history b)
check "attestctl agent history b: the reset, by the operator" grep -Eq ' reset +operator ' <<<"$hist"
check_eq "the API history, newest first" "activated re-enrolled reset activated enrolled" \
	"$(op /v1/agents/b/history | jq -r '[.history[].event] | join(" ")')"

# --- purge ----------------------------------------------------------------------------------
sa round "$W/a-c" --append "/usr/bin/not-allowed:$D2"
check_eq "c has a violation" 1 "$(op '/v1/violations?agent=c' | jq '.violations | length')"
check_eq "attestctl agent retire c --purge" \
	"agent c: purged (it and everything stored for it are deleted; the id is free)" \
	"$(ctl agent retire c --purge)"
check_eq "c is gone: agent, verdicts, violations" "404 404 0" \
	"$(code "$URL/v1/agents/c") $(code "$URL/v1/agents/c/verdicts") $(op '/v1/violations?agent=c' | jq '.violations | length')"
check_eq "purging a retired agent works too" 200 "$(code -X DELETE "$URL/v1/agents/a?purge=1")"
check_eq "an unknown agent: 404" 404 "$(code -X POST "$URL/v1/agents/nobody/reset")"
"$SA" init "$W/c2" --ca-key "$W/ekca/ca-key.pem" --ca-cert "$W/ekca/ca.pem" ||
	fail "softagent init (c2)"
sa enroll "$W/c2" --verifier "$URL" --cacert "$CA" --id c
check_eq "the id c is free again" 200 "$R_STATUS"
check_eq "and b, a-new untouched" "active active" \
	"$(op /v1/agents/b | jq -r .state) $(op /v1/agents/a-new | jq -r .state)"
finish
