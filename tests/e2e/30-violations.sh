#!/usr/bin/env bash
# Measured files opened for write while measured: ToMToU (/etc/e2e/tomtou appended to while
# open for read) and open_writers (/etc/e2e/openw read while open for write) put violation
# entries (zero template hash) in the IMA list. With the default policy ("violations":
# "fail") the verdict is untrusted with violation_entry naming both files; with
# "violations": "ignore" the same guest actions stay trusted.
set -uo pipefail
. "$(dirname "$0")/common.bash"
e2e_prepare

# done_counts VM: "ENTRIES VIOLATIONS" from the hook's E2E-ACTION-DONE line.
done_counts() {
	sed -n 's/.*E2E-ACTION-DONE violations entries=\([0-9]*\) violations=\([0-9]*\).*/\1 \2/;T;p;q' \
		"$W/vm-$1/serial.log"
}

# 1. default policy: violations fail
e2e_boot strict viol-strict attest.e2e=violations || e2e_abort "guest boots"
e2e_check_wait "strict: trusted before the violations" '[.verdicts[] | select(.trusted)] | length > 0' \
	/v1/agents/viol-strict/verdicts
e2e_console strict 'E2E-ACTION-DONE violations' 60
read -r entries nviol <<<"$(done_counts strict)"
check "strict: the kernel counted 2 violations or more (${nviol:-none})" test "${nviol:-0}" -ge 2
e2e_check_wait "strict: an untrusted verdict follows" '[.verdicts[] | select(.trusted | not)] | length > 0' \
	/v1/agents/viol-strict/verdicts
bad=$(e2e_verdicts viol-strict | jq -c '[.verdicts[] | select(.trusted | not)][-1]')
check_eq "strict: reasons are violation_entry only" '["violation_entry"]' "$(jq -c '[.reasons[].code] | unique' <<<"$bad")"
check_eq "strict: the ToMToU file is named" 1 \
	"$(jq '[.reasons[] | select(.code == "violation_entry" and (.detail | startswith("/etc/e2e/tomtou ")))] | length' <<<"$bad")"
check_eq "strict: the open_writers file is named" 1 \
	"$(jq '[.reasons[] | select(.code == "violation_entry" and (.detail | startswith("/etc/e2e/openw ")))] | length' <<<"$bad")"
check_eq "strict: /v1/violations lists both" '["/etc/e2e/openw","/etc/e2e/tomtou"]' \
	"$(e2e_api '/v1/violations?agent=viol-strict' | jq -c '[.violations[] | select(.reason == "violation_entry") | .path] | unique')"
check_eq "strict: no pcr_mismatch (violations replay as 0xff...)" 0 \
	"$(jq '[.reasons[] | select(.code == "pcr_mismatch")] | length' <<<"$bad")"
e2e_stop strict

# 2. "violations": "ignore": the same actions, trusted throughout
jq '.violations = "ignore"' "$W/policy.json" >"$W/policy-ignore.json"
e2e_verifier_stop
e2e_verifier_start "$W/policy-ignore.json" --policy-replace || e2e_abort "verifier restarts with violations ignored" "$W/verifier.log"
e2e_boot ignore viol-ignore attest.e2e=violations || e2e_abort "guest boots"
e2e_check_wait "ignore: trusted before the violations" '[.verdicts[] | select(.trusted)] | length > 0' \
	/v1/agents/viol-ignore/verdicts
e2e_console ignore 'E2E-ACTION-DONE violations' 60
read -r entries nviol <<<"$(done_counts ignore)"
check "ignore: the kernel counted 2 violations or more (${nviol:-none})" test "${nviol:-0}" -ge 2
e2e_check_wait "ignore: a verdict covers the list past the violations (entry ${entries:-?})" \
	"[.verdicts[] | select(.next_offset >= ${entries:-999999})] | length > 0" /v1/agents/viol-ignore/verdicts
check_eq "ignore: every verdict trusted" 0 \
	"$(e2e_verdicts viol-ignore | jq '[.verdicts[] | select(.trusted | not)] | length')"
check_eq "ignore: no violations recorded" 0 \
	"$(e2e_api '/v1/violations?agent=viol-ignore' | jq '.violations | length')"
e2e_stop ignore
finish
