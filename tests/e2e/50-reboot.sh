#!/usr/bin/env bash
# The guest reboots with the same disk (VM_ROOT_PERSIST=1 on a copy of the image) and the same
# TPM state: attestd keeps its AK (no new enrollment), the TPM's resetCount goes up, and the
# verifier starts a new boot session (boot_number 2), replays the new list from entry 0 and
# finds it trusted again; the first boot's verdicts stay in the history. (The first round of
# the new boot would be an untrusted `reboot` verdict if attestd did not notice the reboot.)
set -uo pipefail
. "$(dirname "$0")/common.bash"
e2e_prepare

cp "$W/rootfs.img" "$W/persist.img"
export E2E_ROOTFS=$W/persist.img E2E_PERSIST=1

e2e_boot first e2e-reboot attest.e2e=poweroff || e2e_abort "first boot"
e2e_check_wait "boot 1: trusted" '[.verdicts[] | select(.trusted)] | length > 0' /v1/agents/e2e-reboot/verdicts
# shellcheck disable=SC2034 # read by e2e_diag (common.bash): no VM is live now
E2E_LIVE_VM=
for _ in $(seq 1 120); do e2e_running first || break; sleep 0.5; done
check_fails "boot 1: the guest powered itself off (attestd stopped, root read-only)" e2e_running first
check "boot 1: the hook ran before the power-off" grep -q 'E2E-ACTION-DONE poweroff' "$W/vm-first/serial.log"
e2e_stop first
before=$(e2e_verdicts e2e-reboot)
agent1=$(e2e_api /v1/agents/e2e-reboot)
n1=$(jq '.verdicts | length' <<<"$before")
check_eq "boot 1: agent in boot session 1" 1 "$(jq .boot_number <<<"$agent1")"
check_eq "boot 1: all verdicts trusted" 0 "$(jq '[.verdicts[] | select(.trusted | not)] | length' <<<"$before")"

e2e_boot second e2e-reboot || e2e_abort "second boot on the same disk and TPM"
e2e_check_wait "boot 2: a new boot session (boot_number 2)" '.boot_number == 2' /v1/agents/e2e-reboot
e2e_check_wait "boot 2: a trusted verdict of session 2" \
	'[.verdicts[] | select(.boot_number == 2 and .trusted)] | length > 0' /v1/agents/e2e-reboot/verdicts
after=$(e2e_verdicts e2e-reboot)
b2=$(jq -c '[.verdicts[] | select(.boot_number == 2 and .trusted)][-1]' <<<"$after")
# attestd notices the new boot_id and sends the new list from entry 0 in its first round, so
# the new session is trusted at once: no verdict of session 2 comes before the trusted one.
early=$(jq -c --argjson id "$(jq .id <<<"$b2")" \
	'[.verdicts[] | select(.boot_number == 2 and .id < $id)]' <<<"$after")
check_eq "boot 2: the first verdict of the new session is trusted (no reboot round)" '[]' "$early"
check "boot 2: replayed from entry 0 (it covers the new boot's list: next_offset > 10)" \
	test "$(jq .next_offset <<<"$b2")" -gt 10
check_eq "history kept: boot 1's verdicts still listed" "$n1" \
	"$(jq '[.verdicts[] | select(.boot_number == 1)] | length' <<<"$after")"
check_eq "history kept: the same verdict ids" "$(jq -c '[.verdicts[].id]' <<<"$before")" \
	"$(jq -c '[.verdicts[] | select(.boot_number == 1) | .id]' <<<"$after")"
agent2=$(e2e_api /v1/agents/e2e-reboot)
check_eq "same AK after the reboot (kept on disk, no new enrollment)" "$(jq -r .ak_name <<<"$agent1")" \
	"$(jq -r .ak_name <<<"$agent2")"
check_eq "enrollment unchanged" "$(jq .activated_at <<<"$agent1")" "$(jq .activated_at <<<"$agent2")"
check_eq "agent trusted" trusted "$(jq -r .last_verdict <<<"$agent2")"
e2e_stop second
finish
