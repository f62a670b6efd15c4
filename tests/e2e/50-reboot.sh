#!/usr/bin/env bash
# The guest reboots with the same disk (VM_ROOT_PERSIST=1 on a copy of the image) and the same
# TPM state: attestd keeps its AK (no new enrollment), the TPM's resetCount goes up, and the
# verifier starts a new boot session (boot_number 2), replays the new list from entry 0 and
# finds it trusted again; the first boot's verdicts stay in the history. (The first round of
# the new boot is an untrusted `reboot` verdict that sends the agent back to entry 0.)
set -uo pipefail
. "$(dirname "$0")/common.bash"
e2e_prepare

cp "$W/rootfs.img" "$W/persist.img"
export E2E_ROOTFS=$W/persist.img E2E_PERSIST=1

e2e_boot first e2e-reboot attest.e2e=poweroff || e2e_abort "first boot"
e2e_check_wait "boot 1: trusted" '[.verdicts[] | select(.trusted)] | length > 0' /v1/agents/e2e-reboot/verdicts
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
# The agent's first round after the reboot starts where boot 1 ended (the verifier's challenge
# says so: it cannot know of the reboot before it sees the quote); the verifier answers that
# with one untrusted `reboot` verdict ("evidence starts at entry N, expected 0"), and the agent
# resends from entry 0. Nothing else may be wrong with session 2.
early=$(jq -c --argjson id "$(jq .id <<<"$b2")" \
	'[.verdicts[] | select(.boot_number == 2 and .id < $id)]' <<<"$after")
check_eq "boot 2: verdicts before the trusted one say only reboot" '[]' \
	"$(jq -c '[.[].reasons[].code | select(. != "reboot")] | unique' <<<"$early")"
check_eq "boot 2: a reboot verdict asks for entry 0" '[]' \
	"$(jq -c '[.[].reasons[] | select(.detail | endswith("expected 0") | not)]' <<<"$early")"
echo "# session 2 began with $(jq length <<<"$early") reboot verdict(s)"
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
