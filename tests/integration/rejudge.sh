#!/usr/bin/env bash
# A policy change re-judges what already ran, against the real verifier with software agents
# (tests/tools/softagent): whenever the policy or amendment version that judges an agent changes
# (a put, a rollback, an assignment, an approval withdrawn) the agent is shown as "rejudging" at
# once, never as trusted under the old version, and its next round judges its whole boot again
# from entry 0 without new entries; evidence that does not start at entry 0 then is refused
# (409 rejudgement, nothing stored); every verdict names the policy and versions that judged it.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
D7=$(printf '77%.0s' {1..32})
TOOL=/usr/bin/tool:$D7
says() { printf '%s %s' "$(verdict)" "$(reasons)"; }
put() { # put NAME JSON: a new version of policy NAME
	curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -X PUT \
		--data "$2" -o /dev/null -w '%{http_code}' "$URL/v1/policies/$1"
}
field() { op "/v1/agents/$1" | jq -r "$2"; }
P1="{\"version\": 1, \"digests\": {\"/usr/bin/app1\": [\"sha256:$D1\"]}, \"violations\": \"fail\"}"
P12="{\"version\": 1, \"digests\": {\"/usr/bin/app1\": [\"sha256:$D1\"], \"/usr/bin/app2\": [\"sha256:$D2\"]}, \"violations\": \"fail\"}"

start_verifier "$W/v" "${VARGS[@]}" || { fail "verifier starts"; finish; exit 1; }

# --- tightening by a put: a trusted agent whose file the new version drops ------------------------
for id in a b c d e; do agent "$id" || { finish; exit 1; }; done
check_eq "a is trusted, judged by default version 1" "active default 1 0" \
	"$(field a '"\(.state) \(.judged_by.policy) \(.judged_by.policy_version) \(.judged_by.amendment_version)"')"
check_eq "a verdict names the policy and versions that judged it" "default 1 0" \
	"$(op /v1/agents/a/verdicts | jq -r '.verdicts[0].judged_by | "\(.policy) \(.policy_version) \(.amendment_version)"')"
check_eq "put default version 2 without /usr/bin/app1" 200 \
	"$(put default "{\"version\": 1, \"digests\": {\"/usr/bin/app2\": [\"sha256:$D2\"]}, \"violations\": \"fail\"}")"
check_eq "at once, a is shown rejudging (not trusted under version 1)" "rejudging true 2" \
	"$(field a '"\(.state) \(.rejudging) \(.policy_version)"')"
ctl agents >"$W/agents.txt"
check "attestctl agents shows it rejudging" grep -qE '^a +rejudging' "$W/agents.txt"
sa round "$W/a-a"
check_eq "a's next round, with no new entry, judges its whole boot again: untrusted" \
	"untrusted not_in_allowlist" "$(says)"
check "the reason names /usr/bin/app1" grep -q /usr/bin/app1 <<<"$R_BODY"
check_eq "that verdict names default version 2" "default 2" \
	"$(op /v1/agents/a/verdicts | jq -r '.verdicts[0].judged_by | "\(.policy) \(.policy_version)"')"
check_eq "a is no longer rejudging: judged by version 2" "active false" \
	"$(field a '"\(.state) \(.rejudging)"')"

# --- a rollback to a version without the file -------------------------------------------------
check_eq "default version 3 allows app1 and app2 again" 200 "$(put default "$P12")"
sa round "$W/a-b" --append "$APP2"
check_eq "b runs app2 under version 3: trusted" "trusted " "$(says)"
ctl policy rollback default 2 >/dev/null
sa round "$W/a-b"
check_eq "default rolled back to version 2 (no app1): b, which ran app1, is untrusted" \
	"untrusted not_in_allowlist" "$(says)"
ctl policy rollback default 3 >/dev/null

# --- an assignment -----------------------------------------------------------------------------
check_eq "policy measured (app2 only)" 200 \
	"$(put measured "{\"version\": 1, \"digests\": {\"/usr/bin/app2\": [\"sha256:$D2\"]}, \"violations\": \"fail\"}")"
trusted "c trusted under default" c
ctl policy assign c measured >/dev/null
check_eq "c assigned measured: rejudging at once" rejudging "$(field c .state)"
sa round "$W/a-c"
check_eq "c's boot judged by measured: app1 is not in it" "untrusted not_in_allowlist" "$(says)"
check_eq "the verdict names measured version 1" "measured 1" \
	"$(op /v1/agents/c/verdicts | jq -r '.verdicts[0].judged_by | "\(.policy) \(.policy_version)"')"

# --- an approval withdrawn -------------------------------------------------------------------
sa round "$W/a-d" --append "$TOOL"
check_eq "d runs a tool no policy lists" "untrusted not_in_allowlist" "$(says)"
vd=$(op "/v1/violations?agent=d&state=open" | jq -r '.violations[0].id')
ctl approve "$vd" >/dev/null
sa round "$W/a-d"
check_eq "approved for d alone: its boot judged again with amendment version 1: trusted" \
	"trusted " "$(says)"
ctl amendment rollback d 0 >/dev/null
check_eq "the approval withdrawn (amendment version 2, empty): d rejudging" rejudging \
	"$(field d .state)"
sa round "$W/a-d"
check_eq "d's next round: the tool it ran is judged again, untrusted" \
	"untrusted not_in_allowlist" "$(says)"

# --- evidence from a challenge issued before the change -------------------------------------------
trusted "e trusted" e
( sa round "$W/a-e" --sleep 3; printf '%s\n%s\n' "$R_STATUS" "$R_BODY" >"$W/e.out" ) &
sleep 1
put default "$P1" >/dev/null
wait $!
check_eq "e answered a challenge issued before the change, from its old offset: 409 rejudgement" \
	"409 rejudgement" "$(head -n 1 "$W/e.out") $(sed -n 2p "$W/e.out" | jq -r .error.code)"
check_eq "nothing stored for it: still rejudging" rejudging "$(field e .state)"
sa round "$W/a-e"
check_eq "e asks for a challenge: entry 0, judged whole under the new version: trusted" \
	"trusted " "$(says)"
check_eq "e judged by the newest default" "active $(op /v1/policies/default/versions | jq '.versions[0].version')" \
	"$(field e '"\(.state) \(.judged_by.policy_version)"')"

# --- widening: what was refused is allowed, the operator's open review stays ----------------------
sa round "$W/a-e" --append "$TOOL"
check_eq "e runs the tool: untrusted" "untrusted not_in_allowlist" "$(says)"
put default "{\"version\": 1, \"digests\": {\"/usr/bin/app1\": [\"sha256:$D1\"], \"/usr/bin/tool\": [\"sha256:$D7\"]}, \"violations\": \"fail\"}" >/dev/null
sa round "$W/a-e"
check_eq "the policy widened to allow it: the boot judged again finds nothing, the open violation stays for review" \
	"untrusted open_violations" "$(says)"
curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o /dev/null -X POST \
	"$URL/v1/violations/$(op "/v1/violations?agent=e&state=open" | jq -r '.violations[0].id')/dismiss"
trusted "dismissed: trusted" e

finish
