#!/usr/bin/env bash
# Labels on agents against the real verifier with software agents (tests/tools/softagent),
# through the API and attestctl: set and removed (attestctl agent label, PUT
# /v1/agents/ID/labels), given at admission (attestctl agent add --label) and changed on a
# registered id before it enrolls; the fleet listed by label (GET /v1/agents?label=K=V,
# attestctl agents --label); a policy assigned to every agent with a label (attestctl policy
# assign --label K=V NAME) counted first and applied only with --yes, audited per agent, and
# the agents' next rounds judged by it; bad labels refused with nothing changed.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
code() { curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o "$W/ans" \
	-w '%{http_code}' "$@"; }
ids() { op "/v1/agents$1" | jq -r '[.agents[].agent_id] | join(" ")'; }
labels() { op "/v1/agents/$1" | jq -c '.labels'; }
judged() { op "/v1/agents/$1/verdicts?limit=1" | jq -r '.verdicts[0].judged_by.policy'; }
cat >"$W/strict.json" <<EOT
{"version": 1, "digests": {"/usr/bin/app2": ["sha256:$D2"]}, "violations": "fail"}
EOT

start_verifier "$W/v" "${VARGS[@]}" || { fail "verifier starts"; finish; exit 1; }
for id in a b c; do agent "$id" || { finish; exit 1; }; done
ctl policy put strict "$W/strict.json" >/dev/null || fail "policy put strict"

check_eq "attestctl agent label a site=lab1 role=db" "agent a: labels role=db site=lab1" \
	"$(ctl agent label a site=lab1 role=db)"
ctl agent label b site=lab1 >/dev/null || fail "label b"
ctl agent label c site=lab2 >/dev/null || fail "label c"
check_eq "the agent shows its labels" '{"role":"db","site":"lab1"}' "$(labels a)"
check "attestctl agent a shows them" grep -q '^labels: *role=db site=lab1$' <<<"$(ctl agent a)"
check_eq "agent label --remove" "agent a: labels site=lab1" "$(ctl agent label a --remove role)"
check_eq "GET /v1/agents?label=site=lab1" "a b" "$(ids '?label=site%3Dlab1')"
check_eq "with another filter" "c" "$(ids '?state=active&label=site%3Dlab2')"
check_eq "every agent listed with its labels" '{"site":"lab1"} {"site":"lab1"} {"site":"lab2"}' \
	"$(op /v1/agents | jq -c -r '[.agents[].labels | tojson] | join(" ")')"
out=$(ctl agents --label site=lab1)
check "attestctl agents --label site=lab1: a and b" \
	test "$(awk 'NR > 1 { print $1 }' <<<"$out" | tr '\n' ' ')" = "a b "
check_eq "a bad label filter: 400" 400 "$(code "$URL/v1/agents?label=site")"
check_fails "attestctl agent label with a bad label fails" ctl agent label a 'bad key=x'
check_eq "a bad label in the body: 400, nothing changed" '400 {"site":"lab1"}' \
	"$(code -X PUT --data '{"set":{"site":"x y"}}' "$URL/v1/agents/a/labels") $(labels a)"
check_eq "an unknown agent: 404" 404 \
	"$(code -X PUT --data '{"set":{"site":"x"}}' "$URL/v1/agents/nobody/labels")"
body=$(jq -cn '{set: ([range(33)] | map({key: "k\(.)", value: "v"}) | from_entries)}')
check_eq "more than 32 labels: 400, nothing changed" '400 {"site":"lab1"}' \
	"$(code -X PUT --data "$body" "$URL/v1/agents/a/labels") $(labels a)"

# --- a policy by label --------------------------------------------------------------------------
out=$(ctl policy assign --label site=lab1 strict)
check_eq "policy assign --label without --yes: exit 1" 1 $?
check "it shows the count it would change" \
	grep -q '^2 agents labelled site=lab1 would be assigned policy strict' <<<"$out"
check_eq "and changes nothing" "default default default" \
	"$(op /v1/agents | jq -r '[.agents[].policy] | join(" ")')"
out=$(ctl policy assign --label site=lab1 strict --yes)
check_eq "with --yes: exit 0" 0 $?
check "it says what it did" grep -q '^2 agents labelled site=lab1 assigned policy strict' <<<"$out"
check_eq "a and b use strict, c the default" "strict strict default" \
	"$(op /v1/agents | jq -r '[.agents[].policy] | join(" ")')"
check_eq "again: nothing left to change" "0 agents labelled site=lab1 would be assigned policy strict (2 have the label; the others use it already)" \
	"$(ctl policy assign --label site=lab1 strict)"
check_eq "an unknown policy: 404" 404 \
	"$(code -X POST --data '{"label":"site=lab1","apply":true}' "$URL/v1/policies/nope/assign")"
sa round "$W/a-a" --append "$APP1"
check_eq "a's next round is judged by strict" "untrusted strict" "$(verdict) $(judged a)"
sa round "$W/a-c" --append "$APP1"
check_eq "c's by the default" "trusted default" "$(verdict) $(judged c)"
if command -v sqlite3 >/dev/null; then
	check_eq "each assignment audited with the label" \
		'a:{"label":"site=lab1","policy":"strict"} b:{"label":"site=lab1","policy":"strict"}' \
		"$(sqlite3 "$W/v/verifier.db" "SELECT agent || ':' || detail FROM audit_log WHERE kind = 'agent.policy' ORDER BY seq" | tr '\n' ' ' | sed 's/ $//')"
	check_eq "label changes audited (the refused ones not)" 4 \
		"$(sqlite3 "$W/v/verifier.db" "SELECT COUNT(*) FROM audit_log WHERE kind = 'agent.labels'")"
fi

# --- labels at admission ------------------------------------------------------------------------
"$SA" init "$W/a-d" --ca-key "$W/ekca/ca-key.pem" --ca-cert "$W/ekca/ca.pem" || fail "init d"
ctl agent add d --ek-sha256 "$("$SA" ek-sha256 "$W/a-d")" --label site=lab1 --label role=web \
	>/dev/null || fail "register d"
check_eq "a registered id's labels changed before it enrolls" "agent d: labels rack=r1 site=lab1" \
	"$(ctl agent label d rack=r1 --remove role)"
sa enroll "$W/a-d" --verifier "$URL" --cacert "$CA" --id d
check_eq "d enrolls with its registration's labels" '200 {"rack":"r1","site":"lab1"}' \
	"$R_STATUS $(labels d)"
check_eq "and is listed by them" "a b d" "$(ids '?label=site%3Dlab1')"
finish
