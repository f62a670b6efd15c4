#!/usr/bin/env bash
# The IMA list trimmed in kernel memory (kernel-patches/0009, attestd --ima-keep-records): a
# guest whose attestd keeps at most 10 entries in the kernel, deleting what its verifier
# confirmed and saving it first, stays trusted while it deletes again and again. Its verifier is
# then asked to judge the boot again from entry 0 (a new policy version): attestd serves the
# deleted entries from its saved copy. A copy tampered with is caught (the replay does not reach
# the quoted PCR 10), and trusted again once restored. A verifier that lost its state (a new
# store) while the copy is gone says so with its own reason, and never trusts the list.
set -uo pipefail
. "$(dirname "$0")/common.bash"
e2e_prepare

agent=e2e-trim
e2e_boot trim "$agent" attest.e2e=trim attest.ima_keep=10 || e2e_abort "guest boots"
e2e_check_wait "trusted before the list is trimmed" '[.verdicts[] | select(.trusted)] | length > 0' \
	"/v1/agents/$agent/verdicts"
check "the guest grew its list while attestd deleted" e2e_console trim 'E2E-TRIM grown ' 180
serial=$W/vm-trim/serial.log
# deleted= and count= of every E2E-TRIM line, in order
trim_field() { sed -n "s/.*E2E-TRIM $1 .*$2=\([0-9]*\).*/\1/p" "$serial"; }
deleted=$(trim_field grow deleted | paste -sd ' ')
counts=$(trim_field grow count | paste -sd ' ')
echo "# deleted while growing: $deleted (entries since boot: $counts)"
check "attestd deleted entries more than once while the list grew ($deleted)" \
	test "$(tr ' ' '\n' <<<"$deleted" | sort -un | grep -vc '^0$')" -ge 2
g_del=$(trim_field grown deleted)
g_cnt=$(trim_field grown count)
check "at most 10 entries plus one round's are left in the kernel ($((g_cnt - g_del)) of $g_cnt)" \
	test $((g_cnt - g_del)) -le 20
check "most of the list is deleted ($g_del of $g_cnt)" test $((g_del * 2)) -gt "$g_cnt"
untrusted=$(e2e_verdicts "$agent" | jq '[.verdicts[] | select(.trusted | not)] | length')
check_eq "no untrusted verdict while deleting" 0 "$untrusted"

# A new policy version: the verifier judges the boot again, from entry 0; attestd's saved
# copy was tampered with by the guest meanwhile.
check "the guest tampered with attestd's saved copy" e2e_console trim 'E2E-TRIM tampered ' 60
rejudge=$(jq '.digests["/e2e/rejudge"] = ["sha256:'"$(printf '%064d' 0)"'"]' "$W/policy.json")
check_eq "a new version of the default policy" 200 "$(curl -sS -o /dev/null -w '%{http_code}' \
	--cacert "$W/verifier/ca.pem" -H "Authorization: Bearer $(cat "$W/token")" -X PUT \
	--data-binary "$rejudge" "https://127.0.0.1:$VPORT/v1/policies/default")"
e2e_check_wait "the tampered copy is caught: untrusted, the replay misses PCR 10" \
	'[.verdicts[] | select((.trusted | not) and ([.reasons[].code] | index("pcr_mismatch")))] | length > 0' \
	"/v1/agents/$agent/verdicts" 120
check "the guest restored the copy" e2e_console trim 'E2E-TRIM restored ' 120
e2e_check_wait "trusted again from the restored copy, judged by the new version" \
	'.verdicts[0].trusted and .verdicts[0].judged_by.policy_version >= 2' \
	"/v1/agents/$agent/verdicts" 120

# The copy removed, and a verifier with a new store (its state lost).
check "the guest removed attestd's saved copy" e2e_console trim 'E2E-TRIM removed ' 120
e2e_verifier_stop
[[ -f $W/verifier/verifier.db ]] || e2e_abort "the verifier's store is at $W/verifier/verifier.db"
mkdir -p "$W/lost" && mv "$W/verifier/verifier.db"* "$W/lost/"
e2e_verifier_start "$W/policy.json" || e2e_abort "a verifier with a new store starts" "$W/verifier.log"
e2e_check_wait "a verifier that lost its state says the entries were deleted, untrusted" \
	'[.verdicts[] | select((.trusted | not) and ([.reasons[].code] | index("log_records_deleted")))] | length > 0' \
	"/v1/agents/$agent/verdicts" 120
detail=$(e2e_verdicts "$agent" | jq -r '[.verdicts[].reasons[] | select(.code == "log_records_deleted")][0].detail')
echo "# its detail: $detail"
check "its detail says what an operator can do (restore the export, or reboot)" \
	grep -q 'reboot' <<<"$detail"
trusted=$(e2e_verdicts "$agent" | jq '[.verdicts[] | select(.trusted)] | length')
check_eq "and never trusts the list it cannot replay" 0 "$trusted"
e2e_stop trim
finish
