#!/usr/bin/env bash
# The verifier is stopped (SIGTERM) and started again on the same state directory and port
# while the guest keeps running and its IMA list keeps growing (attest.e2e=grow reads one more
# allowed file per second). Attestation resumes from the stored replay state: the next
# verdicts are trusted, none says reboot or log_offset_mismatch (a full replay from entry 0
# would need one), next_offset grows on from where it was, and the boot session is the same.
set -uo pipefail
. "$(dirname "$0")/common.bash"
e2e_prepare

A=/v1/agents/e2e-vrestart
e2e_boot grow e2e-vrestart attest.e2e=grow || e2e_abort "guest boots"
e2e_check_wait "trusted before the restart" '[.verdicts[] | select(.trusted)] | length > 0' "$A/verdicts"
e2e_console grow 'E2E-ACTION-DONE grow' 60
n=$(e2e_verdicts e2e-vrestart | jq '.verdicts | length')
e2e_wait "two more verdicts" ".verdicts | length >= $((n + 2))" "$A/verdicts"
before=$(e2e_verdicts e2e-vrestart)
last_id=$(jq '.verdicts[0].id' <<<"$before")
n0=$(jq '.verdicts[0].next_offset' <<<"$before")
check_eq "all verdicts before the restart trusted" 0 "$(jq '[.verdicts[] | select(.trusted | not)] | length' <<<"$before")"
check "the list grows while attested (next_offset $(jq -c '[.verdicts[].next_offset] | reverse' <<<"$before"))" \
	test "$n0" -gt "$(jq '.verdicts[-1].next_offset' <<<"$before")"

old_pid=$VPID
stops=$(grep -c 'signal 15: stopping' "$W/verifier.log")
e2e_verifier_stop
check_fails "verifier stopped" kill -0 "$old_pid" 2>/dev/null
check_eq "it stopped on SIGTERM (logged 'signal 15: stopping')" $((stops + 1)) \
	"$(grep -c 'signal 15: stopping' "$W/verifier.log")"
sleep 3 # the agent's rounds fail meanwhile; it backs off and retries
check "verifier starts again on the same state and port" e2e_verifier_start "$W/policy.json"
e2e_check_wait "three verdicts after the restart" "[.verdicts[] | select(.id > $last_id)] | length >= 3" "$A/verdicts" 120
after=$(e2e_verdicts e2e-vrestart)
new=$(jq -c --argjson id "$last_id" '[.verdicts[] | select(.id > $id)] | reverse' <<<"$after")
check_eq "verdicts after the restart are trusted" 0 "$(jq '[.[] | select(.trusted | not)] | length' <<<"$new")"
check_eq "none says reboot or log_offset_mismatch (no full replay)" 0 \
	"$(jq '[.[].reasons[] | select(.code == "reboot" or .code == "log_offset_mismatch")] | length' <<<"$new")"
check_eq "same boot session" '[1]' "$(jq -c '[.[].boot_number] | unique' <<<"$new")"
check_eq "agent still in boot session 1" 1 "$(e2e_api "$A" | jq .boot_number)"
offsets=$(jq -c '[.[].next_offset]' <<<"$new")
check "next_offset resumes from $n0: $offsets" \
	jq -e --argjson n0 "$n0" '.[0] >= $n0 and (. as $o | [range(1; length)] | all($o[.] >= $o[. - 1])) and .[-1] > $n0' \
	<<<"$offsets" >/dev/null
check_eq "history from before the restart kept" "$(jq -c '[.verdicts[].id]' <<<"$before")" \
	"$(jq -c --argjson id "$last_id" '[.verdicts[] | select(.id <= $id) | .id]' <<<"$after")"
e2e_stop grow
finish
