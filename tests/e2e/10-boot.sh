#!/usr/bin/env bash
# After boot: attestd enrolls and the first verdict is trusted, which includes the
# boot_aggregate check: the verifier recomputes it from the quoted PCR 0-9 (default policy,
# "any-matching-pcrs"). Negatives that prove the binding is checked:
#   - boot PCR 9 extended from user space before attestd starts: the kernel's boot_aggregate
#     no longer matches the quoted PCR 0-9 -> boot_aggregate_mismatch (the PCR 10 replay
#     itself still matches: no pcr_mismatch);
#   - a policy that pins boot_aggregate to a value this boot does not have (LIST mode)
#     -> boot_aggregate_not_allowed, and the operator sees the real value in /v1/violations.
# The pinning boots use SeaBIOS: the point is that another machine with the same boot chain has
# the same boot_aggregate, and under OVMF the command line, which carries the agent id, is
# measured into PCR 9 (so two agents never share one). With OVMF, PCR 9 extended from user
# space also makes the firmware event log stop replaying (boot_log_mismatch, checked in
# tests/e2e/74-measured-boot.sh); this test looks at IMA's side.
set -uo pipefail
. "$(dirname "$0")/common.bash"
e2e_prepare

# 1. a clean boot
e2e_boot clean boot-clean || e2e_abort "clean guest boots"
e2e_check_wait "agent boot-clean enrolled and activated" '.state == "active"' /v1/agents/boot-clean
e2e_wait "first verdict" '.verdicts | length > 0' /v1/agents/boot-clean/verdicts
v=$(e2e_verdicts boot-clean)
first=$(jq -c '.verdicts[-1]' <<<"$v")
check_eq "first verdict after boot: trusted" trusted "$(jq -r .verdict <<<"$first")"
check_eq "first verdict: no reasons" 0 "$(jq '.reasons | length' <<<"$first")"
check_eq "first verdict: boot session 1" 1 "$(jq .boot_number <<<"$first")"
check "first verdict covers the boot's list (boot_aggregate and more, next_offset > 10)" \
	test "$(jq .next_offset <<<"$first")" -gt 10
e2e_wait "a second verdict" '.verdicts | length > 1' /v1/agents/boot-clean/verdicts
check_eq "every verdict of the clean boot is trusted" 0 \
	"$(e2e_verdicts boot-clean | jq '[.verdicts[] | select(.trusted | not)] | length')"
check_eq "no violations for the clean boot" 0 \
	"$(e2e_api '/v1/violations?agent=boot-clean' | jq '.violations | length')"
e2e_stop clean

# 2. PCR 9 moved before the first quote: the boot_aggregate does not bind to the quoted PCRs
e2e_boot pcr9 boot-pcr9 attest.e2e=extend9 || e2e_abort "guest with PCR 9 extended boots"
check "guest extended PCR 9 before attestd started" grep -q 'E2E-ACTION-DONE extend9' "$W/vm-pcr9/serial.log"
e2e_wait "first verdict" '.verdicts | length > 0' /v1/agents/boot-pcr9/verdicts
first=$(e2e_verdicts boot-pcr9 | jq -c '.verdicts[-1]')
check_eq "PCR 9 extended: first verdict untrusted" untrusted "$(jq -r .verdict <<<"$first")"
check_eq "reason boot_aggregate_mismatch at entry 0" 1 \
	"$(jq '[.reasons[] | select(.code == "boot_aggregate_mismatch" and .entry == 0)] | length' <<<"$first")"
check_eq "only the boot_aggregate is wrong: no pcr_mismatch" 0 \
	"$(jq '[.reasons[] | select(.code == "pcr_mismatch")] | length' <<<"$first")"
check_eq "violation listed for boot_aggregate" boot_aggregate_mismatch \
	"$(e2e_api '/v1/violations?agent=boot-pcr9' | jq -r '[.violations[] | select(.path == "boot_aggregate")][0].reason')"
e2e_stop pcr9

# 3. a policy pinning boot_aggregate to a value this machine does not have
jq --arg d "sha256:$(printf 'ab%.0s' {1..32})" '.boot_aggregate = [$d]' "$W/policy.json" >"$W/policy-pinned.json"
e2e_verifier_stop
e2e_verifier_start "$W/policy-pinned.json" --policy-replace || e2e_abort "verifier restarts with a pinned boot_aggregate" "$W/verifier.log"
VM_FIRMWARE=seabios e2e_boot pinned boot-pinned || e2e_abort "guest for the pinned policy boots"
e2e_wait "first verdict" '.verdicts | length > 0' /v1/agents/boot-pinned/verdicts
first=$(e2e_verdicts boot-pinned | jq -c '.verdicts[-1]')
check_eq "pinned to another boot_aggregate: untrusted" untrusted "$(jq -r .verdict <<<"$first")"
check_eq "reason boot_aggregate_not_allowed" 1 \
	"$(jq '[.reasons[] | select(.code == "boot_aggregate_not_allowed" and .entry == 0)] | length' <<<"$first")"
real=$(e2e_api '/v1/violations?agent=boot-pinned' | jq -r '[.violations[] | select(.path == "boot_aggregate")][0].digest')
check "operator sees the machine's real boot_aggregate (sha256, not the pinned one)" \
	grep -qE '^sha256:[0-9a-f]{64}$' <<<"$real"
check_fails "the real value differs from the pinned one" test "$real" = "sha256:$(printf 'ab%.0s' {1..32})"
e2e_stop pinned

# 4. the same pin, now with the real value: trusted (the pin is honoured, not just refused).
#    A new machine with the same firmware, kernel and TPM make has the same boot PCRs.
jq --arg d "$real" '.boot_aggregate = [$d]' "$W/policy.json" >"$W/policy-real.json"
e2e_verifier_stop
e2e_verifier_start "$W/policy-real.json" --policy-replace || e2e_abort "verifier restarts with the real boot_aggregate" "$W/verifier.log"
VM_FIRMWARE=seabios e2e_boot pinned2 boot-pinned2 || e2e_abort "a second guest for the real pin boots"
e2e_wait "first verdict" '.verdicts | length > 0' /v1/agents/boot-pinned2/verdicts
first=$(e2e_verdicts boot-pinned2 | jq -c '.verdicts[-1]')
check_eq "pinned to the real boot_aggregate: trusted" trusted "$(jq -r .verdict <<<"$first")"
e2e_stop pinned2
finish
