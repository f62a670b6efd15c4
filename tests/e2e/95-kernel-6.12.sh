#!/usr/bin/env bash
# The series on Debian's linux-source-6.12 (kernel-patches/6.12/series; vm/build-kernel.sh with
# KERNEL_TREE=6.12): tests/e2e/10-boot.sh's clean boot, attestd against the verifier, on the 6.12
# guest kernel, first configured as the 6.1 one (guest.config: no HMAC sessions), then with the
# TPM's HMAC sessions on the kernel's bus (KERNEL_VARIANT=hmac, CONFIG_TCG_TPM2_HMAC=y), where
# each of IMA's PCR 10 extends goes through a session salted with the null primary key
# (tpm2_pcr_extend()). Each: enrolled, the first verdict trusted with no reasons and covering the
# boot's list (the boot_aggregate checked against the quoted PCR 0-9, the list replayed to PCR 10
# in both banks), a later verdict trusted too; the guest says it runs 6.12, and the kernel shows
# the null key's name only with HMAC sessions. Last of the e2e layer: tests/run builds the 6.12
# kernels in the background while the earlier scenarios run.
set -uo pipefail
. "$(dirname "$0")/common.bash"
export KERNEL_TREE=6.12
e2e_prepare
hmac=$(KERNEL_VARIANT=hmac guest_kernel "$W/build-kernel-hmac.log") ||
	e2e_abort "the 6.12 guest kernel with HMAC sessions builds" "$W/build-kernel-hmac.log"
check "the HMAC kernel has CONFIG_TCG_TPM2_HMAC=y" \
	grep -qx 'CONFIG_TCG_TPM2_HMAC=y' "$(dirname "$hmac")/current/config"
check "the default 6.12 kernel has not" \
	grep -qx '# CONFIG_TCG_TPM2_HMAC is not set' "$(dirname "$VM_KERNEL")/current/config"

# boot_trusted VM AGENT yes|no: boots VM_KERNEL as AGENT, checks the kernel and the verdicts.
boot_trusted() {
	local vm=$1 agent=$2 hmac=$3 log first
	e2e_boot "$vm" "$agent" || e2e_abort "the $vm guest boots"
	log=$W/vm-$vm/serial.log
	check "$vm: the guest runs 6.12 ($(grep -o 'E2E-KERNEL release=[^ ]*' "$log"))" \
		grep -qE 'E2E-KERNEL release=6\.12\.' "$log"
	if [[ $hmac == yes ]]; then
		check "$vm: the kernel shows its HMAC sessions' null key name" \
			grep -qE 'E2E-KERNEL .* tpm_null_name=000b[0-9a-f]{64}' "$log"
	else
		check "$vm: no HMAC sessions, no null key name" grep -q 'E2E-KERNEL .* tpm_null_name=none' "$log"
	fi
	check_fails "$vm: IMA had no TPM error" grep -q 'Error Communicating to TPM chip' "$log"
	e2e_check_wait "$vm: agent $agent enrolled and activated" '.state == "active"' "/v1/agents/$agent"
	e2e_wait "$vm: first verdict" '.verdicts | length > 0' "/v1/agents/$agent/verdicts"
	first=$(e2e_verdicts "$agent" | jq -c '.verdicts[-1]')
	check_eq "$vm: first verdict trusted ($(jq -c '[.reasons[].code]' <<<"$first"))" trusted \
		"$(jq -r .verdict <<<"$first")"
	check_eq "$vm: first verdict, no reasons" 0 "$(jq '.reasons | length' <<<"$first")"
	check "$vm: first verdict covers the boot's list (next_offset $(jq .next_offset <<<"$first") > 10)" \
		test "$(jq .next_offset <<<"$first")" -gt 10
	e2e_check_wait "$vm: a second verdict" '.verdicts | length > 1' "/v1/agents/$agent/verdicts"
	check_eq "$vm: every verdict trusted" 0 \
		"$(e2e_verdicts "$agent" | jq '[.verdicts[] | select(.trusted | not)] | length')"
	check_eq "$vm: no violations" 0 \
		"$(e2e_api "/v1/violations?agent=$agent" | jq '.violations | length')"
	e2e_stop "$vm"
}

boot_trusted k612 e2e-6-12 no
VM_KERNEL=$hmac boot_trusted k612hmac e2e-6-12-hmac yes
finish
