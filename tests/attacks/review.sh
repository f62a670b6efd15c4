#!/usr/bin/env bash
# Attack matrix, review: what a measured machine can send, and what an operator's decision can
# be made to do, so that the verifier says `trusted` while nobody has seen what ran (issue 12,
# findings 1, 2, 4, 5, 7 and 8; 3 and 6 are tests/integration/review_scope.sh). Software agents
# (tests/tools/softagent) against the real verifier; every section's checks failed on the
# verifier before issue 12.
#   1. a flood of one file cannot hide another; past the per-round cap, what is not stored one
#      by one is stored as a count that keeps the agent untrusted
#   2. a file that runs again after its dismissal (or after its approval was withdrawn), later in
#      the boot or after a reboot, opens a new violation
#   4. a reboot does not launder unreviewed violations (unless the policy says so)
#   5. approving a path that is not UTF-8 allows those bytes, not a look-alike
#   7. approving what no policy entry fixes is refused, with what to do instead
#   8. PCR 10 at zero with a non-empty list is named as such
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

start_verifier "$W/v" "${VARGS[@]}" || { fail "verifier starts"; finish; exit 1; }
D3=$(printf '33%.0s' {1..32})
D4=$(printf '44%.0s' {1..32})
D5=$(printf '55%.0s' {1..32})
D6=$(printf '66%.0s' {1..32})

# post PATH [JSON]: an operator POST; prints the body, then the status on its own line.
post() {
	curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -w '\n%{http_code}' \
		-X POST ${2:+--data "$2"} "$URL$1"
}
# open_of AGENT JQ-FILTER: the ids of AGENT's open violations that match a jq select().
open_of() {
	op "/v1/violations?agent=$1&state=open" | jq -r "[.violations[] | select($2) | .id] | join(\",\")"
}
round_says() { printf '%s %s' "$(verdict)" "$(reasons)"; }

# --- 1. a flood hides nothing --------------------------------------------------------------------
agent f || { finish; exit 1; }
sa round "$W/a-f" --flood "100000:/usr/bin/flood:$D3" --append "/usr/bin/hidden:$D4"
check_eq "100,000 entries of one file, then another: untrusted, naming both" \
	"200 untrusted not_in_allowlist,not_in_allowlist" "$R_STATUS $(round_says)"
check "the verdict says how many entries the flood was" grep -q '(100000 entries)' <<<"$R_BODY"
check_eq "two violations: the flood with its count, and the file after it" \
	"/usr/bin/flood 100000|/usr/bin/hidden 1" \
	"$(op '/v1/violations?agent=f&state=open' | jq -r '[.violations[] | "\(.path) \(.count)"] | sort | join("|")')"
post "/v1/violations/$(open_of f '.path == "/usr/bin/flood"')/dismiss" >/dev/null
sa round "$W/a-f"
check_eq "the flood dismissed: the file after it still keeps the agent untrusted" \
	"untrusted open_violations" "$(round_says)"
post "/v1/violations/$(open_of f '.path == "/usr/bin/hidden"')/dismiss" >/dev/null
trusted "both reviewed: trusted" f

agent s || { finish; exit 1; }
sa round "$W/a-s" --spray "100001:/opt/s/"
check "100,001 distinct files in one round: the verdict names violations_unrecorded" \
	grep -q violations_unrecorded <<<"$(reasons)"
check_eq "100,000 stored one by one and the rest as one violation: 100,001 open" 100001 \
	"$(op /v1/agents/s | jq .open_violations)"
check_eq "the last: violations_unrecorded, count 1, open, not approvable" \
	"violations_unrecorded 1 open false" \
	"$(op '/v1/violations?agent=s&limit=1' | jq -r '.violations[0] | "\(.reason) \(.count) \(.state) \(.approvable)"')"
sa round "$W/a-s"
check_eq "a clean round after it stays untrusted" "untrusted open_violations" "$(round_says)"
r=$(post "/v1/violations/$(op '/v1/violations?agent=s&limit=1' | jq .violations[0].id)/approve")
check_eq "approving the unrecorded entries is refused: there is no file to approve" \
	"409 not_approvable" "$(tail -n 1 <<<"$r") $(sed '$d' <<<"$r" | jq -r .error.code)"

# --- 2. a decision is not a pass for what runs later ------------------------------------------------
agent r || { finish; exit 1; }
sa round "$W/a-r" --append "/usr/bin/x:$D5"
x1=$(open_of r '.path == "/usr/bin/x"')
post "/v1/violations/$x1/dismiss" >/dev/null
trusted "dismissed: trusted" r
sa round "$W/a-r" --append "/usr/bin/x:$D5"
check_eq "it runs again later in the boot: untrusted" "untrusted not_in_allowlist" "$(round_says)"
x2=$(open_of r '.path == "/usr/bin/x"')
check_eq "a new open violation that recurs after the dismissed one" "$x1" \
	"$(op "/v1/violations?agent=r&state=open" | jq ".violations[] | select(.id == ${x2:-0}) | .recurs")"
check_eq "the dismissed one keeps its decision" "dismissed dismissed" \
	"$(op "/v1/violations?agent=r" | jq -r ".violations[] | select(.id == $x1) | \"\(.state) \(.decision)\"")"
sa round "$W/a-r"
check_eq "and the agent stays untrusted until it is reviewed" "untrusted open_violations" "$(round_says)"
post "/v1/violations/$x2/dismiss" >/dev/null
trusted "reviewed again: trusted" r
"$SA" reboot "$W/a-r"
sa round "$W/a-r" --append "/usr/bin/x:$D5"
x3=$(open_of r '.path == "/usr/bin/x"')
check_eq "after a reboot it runs again: untrusted, open again, recurring after the last decision" \
	"untrusted not_in_allowlist $x2" \
	"$(round_says) $(op "/v1/violations?agent=r&state=open" | jq ".violations[] | select(.id == ${x3:-0}) | .recurs")"
post "/v1/violations/$x3/approve" >/dev/null
trusted "approved: trusted" r
post /v1/agents/r/amendment/rollback '{"version": 0}' >/dev/null
sa round "$W/a-r" --append "/usr/bin/x:$D5"
x4=$(open_of r '.path == "/usr/bin/x"')
check_eq "the approval withdrawn, it runs again: open again, recurring after the approved one" \
	"untrusted not_in_allowlist $x3" \
	"$(round_says) $(op "/v1/violations?agent=r&state=open" | jq ".violations[] | select(.id == ${x4:-0}) | .recurs")"
r=$(post "/v1/violations/$x1/approve")
check_eq "a decided violation cannot be decided again (409 already_decided)" "409 already_decided" \
	"$(tail -n 1 <<<"$r") $(sed '$d' <<<"$r" | jq -r .error.code)"

# --- 4. a reboot does not launder ----------------------------------------------------------------
agent b || { finish; exit 1; }
sa round "$W/a-b" --append "/usr/bin/y:$D6"
"$SA" reboot "$W/a-b"
sa round "$W/a-b"
check_eq "after a reboot, the unreviewed violation of the old boot keeps the agent untrusted" \
	"untrusted open_violations" "$(round_says)"
check "the verdict says it is of an earlier boot" grep -q '1 of earlier boots' <<<"$R_BODY"
jq '. + {"reboot_clears_open_violations": true}' "$W/policy.json" >"$W/forget.json"
curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -X PUT \
	--data-binary @"$W/forget.json" -o /dev/null "$URL/v1/policies/forgetful"
curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -X PUT \
	--data '{"policy": "forgetful"}' -o /dev/null "$URL/v1/agents/b/policy"
trusted "a policy with reboot_clears_open_violations counts the current boot only" b
check_eq "the violation itself stays open for review" open \
	"$(op '/v1/violations?agent=b' | jq -r '.violations[0].state')"

# --- 5. a path that is not UTF-8 ---------------------------------------------------------------
agent u || { finish; exit 1; }
sa round "$W/a-u" --append '/usr/bin/t\xffol:'"$D3"
u1=$(open_of u '.path == "/usr/bin/t\\xffol"')
check_eq "shown escaped, said so, with its raw bytes" '/usr/bin/t\xffol true' \
	"$(op '/v1/violations?agent=u' | jq -r ".violations[] | select(.id == ${u1:-0}) | \"\(.path) \(.path_escaped)\"")"
r=$(post "/v1/violations/$u1/approve")
check_eq "approved for the agent" "200 approved agent" \
	"$(tail -n 1 <<<"$r") $(sed '$d' <<<"$r" | jq -r '"\(.state) \(.scope)"')"
check_eq "the amendment holds the raw bytes, as hex" "[\"sha256:$D3\"] null" \
	"$(op /v1/agents/u/amendment | jq -c '.amendment | .digests_hex["2f7573722f62696e2f74ff6f6c"], .digests["/usr/bin/t\\xffol"]' | paste -sd ' ')"
sa round "$W/a-u" --append '/usr/bin/t\xffol:'"$D3"
check_eq "the approved file runs again: trusted" "trusted " "$(round_says)"
sa round "$W/a-u" --append '/usr/bin/t\x5cxffol:'"$D3"
check_eq "a file named with a real backslash is another file: not allowed" \
	"untrusted not_in_allowlist" "$(round_says)"
check_eq "and it is shown as it is (UTF-8, not escaped)" '/usr/bin/t\xffol false' \
	"$(op '/v1/violations?agent=u&state=open' | jq -r '.violations[0] | "\(.path) \(.path_escaped)"')"

# --- 7. approve refuses what no policy entry fixes -------------------------------------------------
agent v || { finish; exit 1; }
sa round "$W/a-v" --violation /etc/shadow
v1=$(open_of v '.reason == "violation_entry"')
r=$(post "/v1/violations/$v1/approve")
check_eq "approving a violation entry: 409 not_approvable" "409 not_approvable" \
	"$(tail -n 1 <<<"$r") $(sed '$d' <<<"$r" | jq -r .error.code)"
check "the refusal says what to do instead" grep -q '"violations\\": \\"ignore\\"' <<<"$r"
check_eq "nothing changed: still open, no amendment" "open 0" \
	"$(op '/v1/violations?agent=v' | jq -r '.violations[0].state') $(op /v1/agents/v/amendment | jq .version)"
r=$(post "/v1/violations/$v1/dismiss")
check_eq "dismissing it works" "200 dismissed" "$(tail -n 1 <<<"$r") $(sed '$d' <<<"$r" | jq -r .state)"
agent w || { finish; exit 1; }
"$SA" reboot "$W/a-w"
sa round "$W/a-w" --attack firmware-changed
check_eq "PCR 0 other than the boot_aggregate's: boot_aggregate_mismatch" \
	"untrusted boot_aggregate_mismatch" "$(round_says)"
r=$(post "/v1/violations/$(open_of w '.reason == "boot_aggregate_mismatch"')/approve")
check_eq "approving it: 409 not_approvable, naming what to do" "409 not_approvable true" \
	"$(tail -n 1 <<<"$r") $(sed '$d' <<<"$r" | jq -r '.error.code, (.error.message | test("pin their boot_aggregate"))' | paste -sd ' ')"

# --- 8. PCR 10 that never followed the list -----------------------------------------------------------
"$SA" init "$W/a-z" --ca-key "$W/ekca/ca-key.pem" --ca-cert "$W/ekca/ca.pem"
sa enroll "$W/a-z" --verifier "$URL" --cacert "$CA" --id z
sa round "$W/a-z" --append "$APP1" --attack pcr10-zero
check_eq "PCR 10 zero with two entries: untrusted, ima_pcr_not_extended" \
	"untrusted ima_pcr_not_extended" "$(verdict) $(reasons | tr , '\n' | grep -x ima_pcr_not_extended)"
check_eq "nothing of the list is taken as covered" 0 "$(jq .next_offset <<<"$R_BODY")"

finish
