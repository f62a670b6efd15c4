#!/usr/bin/env bash
# The TPM driver is a module (the late-TPM kernel: kernel-patches/guest-late.config), loaded by
# the guest's init (S05modules, attest.modules=) after IMA started without a TPM. IMA binds chip
# 0 when it registers, extends it with every entry measured so far, in order, appends
# boot_aggregate_late (kernel-patches/0006, 0007) and carries on. The verifier trusts the guest
# from its first verdict, which replays the list from entry 0 (zero boot_aggregate and all)
# to the quoted PCR 10 in both banks, and keeps trusting it while the list grows.
set -uo pipefail
. "$(dirname "$0")/common.bash"
e2e_late_kernel
e2e_prepare

e2e_boot late e2e-late attest.modules=tpm_tis_core,tpm_tis attest.e2e=grow || e2e_abort "guest boots"
log=$W/vm-late/serial.log
line_of() { grep -m 1 -nE "$1" "$log" | cut -d: -f1; }
bypass=$(line_of 'ima: No TPM chip found, activating TPM-bypass!')
loaded=$(line_of 'attest-modules: loaded tpm_tis[[:space:]]*$')
bound=$(line_of 'ima: TPM chip 0 registered, extended with the [0-9]+ earlier measurements')
check "IMA started without a TPM" test -n "$bypass"
check "init loaded tpm_tis after IMA started" test "${loaded:-0}" -gt "${bypass:-999999}"
check "IMA bound chip 0 when tpm_tis registered it (before insmod returned)" \
	test -n "$bound" -a "${bound:-999999}" -lt "${loaded:-0}"
check_fails "no TPM error while extending" grep -q 'Error Communicating to TPM chip' "$log"
earlier=$(sed -n 's/.*ima: TPM chip 0 registered, extended with the \([0-9]*\) earlier measurements.*/\1/p;T;q' "$log")
check "IMA extended it with what it measured before (init, busybox, the modules...: $earlier > 5)" test "${earlier:-0}" -gt 5

e2e_check_wait "agent enrolled on chip 0" '.state == "active"' /v1/agents/e2e-late
e2e_check_wait "a verdict" '.verdicts | length > 0' /v1/agents/e2e-late/verdicts
first=$(e2e_verdicts e2e-late | jq -c '.verdicts[-1]')
check_eq "first verdict trusted ($(jq -c '[.reasons[].code]' <<<"$first"))" true "$(jq .trusted <<<"$first")"
check "first verdict covers the list from entry 0 past boot_aggregate_late (next_offset $(jq .next_offset <<<"$first") > $earlier)" \
	test "$(jq .next_offset <<<"$first")" -gt "${earlier:-999999}"
check_eq "no verdict says tpm_bypass" 0 \
	"$(e2e_verdicts e2e-late | jq '[.verdicts[].reasons[] | select(.code == "tpm_bypass")] | length')"

# After the first trusted verdict the guest reads one more file a second (S90e2e grow): each is
# measured and extended into chip 0 as it comes.
e2e_console late 'E2E-ACTION-DONE grow' 60
grown=$(sed -n 's/.*E2E-ACTION-DONE grow entries=\([0-9]*\).*/\1/p;T;q' "$log")
e2e_check_wait "a trusted verdict covers 5 entries measured after the binding (entry $((${grown:-0} + 5)))" \
	"[.verdicts[] | select(.trusted and .next_offset >= $((${grown:-999999} + 5)))] | length > 0" \
	/v1/agents/e2e-late/verdicts
check_eq "every verdict trusted" 0 "$(e2e_verdicts e2e-late | jq '[.verdicts[] | select(.trusted | not)] | length')"
e2e_stop late
finish
