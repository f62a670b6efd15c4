#!/usr/bin/env bash
# Time to detect in a guest: attestd runs with a 60 s interval (the heartbeat) and its default
# --watch 1, so the round that reports an unknown program is sent when the kernel measured it,
# not at the next interval. The clock runs on the host from the moment the program's output
# reaches the guest's console to the moment the verifier's API shows the untrusted verdict.
set -uo pipefail
export E2E_INTERVAL=60
. "$(dirname "$0")/common.bash"
e2e_prepare

e2e_boot detect e2e-detect attest.e2e=unknown || e2e_abort "guest boots"
e2e_check_wait "trusted before the guest misbehaves" '[.verdicts[] | select(.trusted)] | length > 0' \
	/v1/agents/e2e-detect/verdicts
check "the guest ran the unknown program" e2e_console detect 'e2e: an unknown program ran' 120
t0=$EPOCHREALTIME
took=
for ((i = 0; i < 600; i++)); do
	if [[ $(e2e_verdicts e2e-detect | jq '[.verdicts[] | select(.trusted | not)] | length') -gt 0 ]]; then
		took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
		break
	fi
	sleep 0.1
done
echo "# time to detect in the guest: ${took:-none} s (interval 60 s)"
check "the unknown program is reported within 20 s, not at the 60 s interval (${took:-never} s)" \
	test -n "$took"
bad=$(e2e_verdicts e2e-detect | jq -c '[.verdicts[] | select(.trusted | not)][-1]')
check_eq "its reason names /root/e2e-unknown.sh" 1 \
	"$(jq '[.reasons[] | select(.code == "not_in_allowlist" and (.detail | startswith("/root/e2e-unknown.sh ")))] | length' <<<"$bad")"
e2e_stop detect
finish
