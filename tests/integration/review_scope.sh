#!/usr/bin/env bash
# Operators' decisions are scoped and durable (issue 12, findings 3 and 6), against the real
# verifier with software agents (tests/tools/softagent) and attestctl:
#   3. approving agent a's violation allows the file for a alone (its amendment) unless the
#      operator asks for the policy: b, running the same file, stays untrusted; the answer (API
#      JSON and attestctl's text) names the scope, the policy, the version written and, for the
#      policy, how many agents use it
#   6. restarting the verifier with the same --policy FILE keeps the store's default policy and
#      every approval in it, and says so; --policy-replace replaces it as a new version; the
#      history lists versions with actor and time, reads one, and rolls back to one (API and
#      attestctl; the page is tests/integration/ui_browser.sh)
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
D7=$(printf '77%.0s' {1..32})
TOOL=/usr/bin/tool:$D7
vstart() { start_verifier "$W/v" "${VARGS[@]}" "$@"; }
round_says() { printf '%s %s' "$(verdict)" "$(reasons)"; }
open_of() { op "/v1/violations?agent=$1&state=open" | jq -r '[.violations[].id] | join(",")'; }

vstart || { fail "verifier starts"; finish; exit 1; }
check "first start: the store had no default policy, --policy seeds it" \
	grep -q 'default policy: seeded from' "$VLOG"

# --- 3. approval is scoped ----------------------------------------------------------------------
for id in a b c; do agent "$id" || { finish; exit 1; }; done
sa round "$W/a-a" --append "$TOOL"
sa round "$W/a-b" --append "$TOOL"
check_eq "a and b both ran /usr/bin/tool: untrusted" "untrusted not_in_allowlist" "$(round_says)"
va=$(open_of a)
ctl approve "$va" >"$W/approve-a.txt"
check_eq "attestctl approve (no --scope) says it allowed the file for agent a only" \
	"violation $va: approved for agent a only: its amendment version 1 (over policy default; the policy is unchanged)" \
	"$(cat "$W/approve-a.txt")"
check_eq "the API kept it in a's amendment, version 1" "[\"sha256:$D7\"] 1" \
	"$(op /v1/agents/a/amendment | jq -c '.amendment.digests["/usr/bin/tool"], .version' | paste -sd ' ')"
check_eq "the default policy did not change (version 1)" 1 \
	"$(op /v1/policies/default/versions | jq '.versions[0].version')"
sa round "$W/a-a" --append "$TOOL"
check_eq "a runs it again: trusted" "trusted " "$(round_says)"
sa round "$W/a-b"
check_eq "b, which runs the same file, stays untrusted" "untrusted open_violations" "$(round_says)"
sa round "$W/a-c" --append "$TOOL"
check_eq "and so does c, which had not run it yet" "untrusted not_in_allowlist" "$(round_says)"
vb=$(open_of b)
r=$(curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -X POST \
	--data '{"scope": "policy"}' "$URL/v1/violations/$vb/approve")
check_eq "scope policy: the answer names the policy, its new version and its agents" \
	"approved policy default 2 3" \
	"$(jq -r '"\(.state) \(.scope) \(.policy) \(.policy_version) \(.policy_agents)"' <<<"$r")"
check_eq "a scope that is neither is refused, nothing changed" "400 2" \
	"$(curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o /dev/null \
		-w '%{http_code}' -X POST --data '{"scope": "fleet"}' "$URL/v1/violations/$(open_of c)/approve") $(op /v1/policies/default/versions | jq '.versions[0].version')"
ctl approve "$(open_of c)" --scope policy >"$W/approve-c.txt"
check_eq "attestctl approve --scope policy names the policy, its version and its agents" \
	"approved into policy default: now version 2, used by 3 agents" \
	"$(sed 's/^violation [0-9]*: //' "$W/approve-c.txt")"
trusted "b: trusted through the policy" b --append "$TOOL"
trusted "c: trusted through the policy" c --append "$TOOL"
check_fails "approve --scope with a bad value is a usage error" ctl approve 1 --scope fleet

# --- 6. a restart with --policy keeps what operators decided ----------------------------------------
stop_verifier
: >"$VLOG"
vstart || fail "verifier restarts with the same --policy"
check_eq "the store's default policy is kept: still version 2" 2 \
	"$(op /v1/policies/default/versions | jq '.versions[0].version')"
check "the log says the store's copy is kept, naming both" \
	grep -q "keeping the store's version 2 (by operator (approve violation $vb of agent b for the policy)" "$VLOG"
check "and how to replace it" grep -q -- '--policy-replace' "$VLOG"
trusted "b is still trusted after the restart" b --append "$TOOL"
trusted "a too" a --append "$TOOL"
stop_verifier
vstart --policy-replace || fail "verifier restarts with --policy-replace"
check_eq "--policy-replace: the file is version 3, by the command line" \
	"3 command line ($W/policy.json)" \
	"$(op /v1/policies/default/versions | jq -r '.versions[0] | "\(.version) \(.actor)"')"
sa round "$W/a-b" --append "$TOOL"
check_eq "b is judged by the file again: untrusted" "untrusted not_in_allowlist" "$(round_says)"
trusted "a keeps its own approval" a --append "$TOOL"

ctl policy history default >"$W/history.txt"
check_eq "attestctl policy history: three versions, newest first" "3 2 1" \
	"$(awk 'NR > 2 { print $1 }' "$W/history.txt" | paste -sd ' ')"
check "with who made each" grep -q 'operator (approve violation' "$W/history.txt"
check "and how many agents use it" grep -q '^policy default: used by 3 agents' "$W/history.txt"
ctl policy get default --version 2 >"$W/v2.json"
check "attestctl policy get --version 2: the approved file is in it" \
	jq -e '.digests["/usr/bin/tool"] | length == 1' "$W/v2.json"
check_eq "GET /v1/policies/default/versions/9: 404 unknown_version" unknown_version \
	"$(op /v1/policies/default/versions/9 | jq -r .error.code)"
ctl policy rollback default 2 >"$W/rollback.txt"
check_eq "attestctl policy rollback: version 2's text is version 4" \
	"policy default rolled back to version 2: now version 4" "$(cat "$W/rollback.txt")"
check_eq "version 4, by the rollback" "4 operator (rollback to version 2)" \
	"$(op /v1/policies/default/versions | jq -r '.versions[0] | "\(.version) \(.actor)"')"
check_eq "its text is version 2's" "$(op /v1/policies/default/versions/2)" \
	"$(op /v1/policies/default/versions/4)"
post_b=$(open_of b)
curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o /dev/null -X POST \
	"$URL/v1/violations/$post_b/dismiss"
trusted "b is trusted again after the rollback" b --append "$TOOL"
check_fails "rolling back to a version that does not exist fails" ctl policy rollback default 99
# bad input: a clear error, nothing changes
code() {
	curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o "$W/err.json" \
		-w '%{http_code}' "$@"
	printf ' %s' "$(jq -r .error.code "$W/err.json")"
}
v_before=$(op /v1/policies/default/versions | jq '.versions[0].version')
check_eq "rollback without a version: 400 bad_request" "400 bad_request" \
	"$(code -X POST --data '{}' "$URL/v1/policies/default/rollback")"
check_eq "rollback to version 0 of a policy: 400 bad_request" "400 bad_request" \
	"$(code -X POST --data '{"version": 0}' "$URL/v1/policies/default/rollback")"
check_eq "rollback to \"2\" (a string): 400 bad_request" "400 bad_request" \
	"$(code -X POST --data '{"version": "2"}' "$URL/v1/policies/default/rollback")"
check_eq "rollback of a policy that does not exist: 404 unknown_policy" "404 unknown_policy" \
	"$(code -X POST --data '{"version": 1}' "$URL/v1/policies/nosuch/rollback")"
check_eq "approve with a body that is not JSON: 400 bad_request" "400 bad_request" \
	"$(code -X POST --data 'scope=policy' "$URL/v1/violations/1/approve")"
check_eq "the amendment of an unknown agent: 404 unknown_agent" "404 unknown_agent" \
	"$(code "$URL/v1/agents/nosuch/amendment")"
check_eq "none of that made a version" "$v_before" \
	"$(op /v1/policies/default/versions | jq '.versions[0].version')"
ctl amendment a >"$W/amend-a.txt"
check "attestctl amendment a lists a's own approval" grep -q "^/usr/bin/tool sha256:$D7" "$W/amend-a.txt"
ctl amendment rollback a 0 >/dev/null
sa round "$W/a-a"
check_eq "a's amendment withdrawn (version 0), but the policy allows the file: still trusted" \
	"trusted " "$(round_says)"
check_eq "a's amendment history: 2 (empty, by the rollback), 1" "2 1" \
	"$(op /v1/agents/a/amendment/versions | jq -r '[.versions[].version] | join(" ")')"

finish
