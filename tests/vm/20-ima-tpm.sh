#!/usr/bin/env bash
# The ima_tpm= parameter of kernel-patches/: ima_tpm=0 behaves like the default (chip 0
# extended, replay matches); ima_tpm=7 names the missing chip, and IMA runs in
# TPM-bypass mode: zero boot_aggregate, PCR 10 stays zero while the list grows.
. "$(dirname "$0")/common.bash"
vmt_prepare

vmt_measure_script "$T_TMP/measure.sh"
if vmt_boot tpm0 "$T_TMP/measure.sh" "ima_tpm=0"; then ok "ima_tpm=0: guest runs the scenario"; else fail "ima_tpm=0: guest runs the scenario"; fi
out=$T_TMP/tpm0/out
check "ima_tpm=0: kernel names the chosen chip" grep -q 'ima: ima_tpm=0: using TPM chip 0' "$T_TMP/tpm0/serial.log"
check_fails "ima_tpm=0: no TPM-bypass" grep -q 'TPM-bypass' "$T_TMP/tpm0/serial.log"
sha1=$(vmt_pcr "$out" sha1)
sha256=$(vmt_pcr "$out" sha256)
check_fails "ima_tpm=0: PCR 10 sha1 is extended" grep -qE '^0*$' <<<"$sha1"
check_fails "ima_tpm=0: boot_aggregate is not zero" grep -q ' ima-ng sha1:0\{40\} boot_aggregate$' "$out/ascii_runtime_measurements"
check "ima_tpm=0: evmctl replay matches both banks" vmt_evmctl_replay "$out/binary_runtime_measurements" "$sha1" "$sha256"
vmt_attestctl_check "ima_tpm=0" "$out/binary_runtime_measurements" "$sha1" "$sha256" "$(cat "$out/count" 2>/dev/null)"

cat >"$T_TMP/bypass.sh" <<'SCRIPT'
cat /sys/kernel/security/ima/runtime_measurements_count >"$OUT/count-before"
for f in /etc/* /etc/attest/*; do [ -f "$f" ] && cat "$f" >/dev/null; done
/usr/bin/true
. /etc/attest/collect.sh
SCRIPT
if vmt_boot tpm7 "$T_TMP/bypass.sh" "ima_tpm=7"; then ok "ima_tpm=7: guest runs the scenario"; else fail "ima_tpm=7: guest runs the scenario"; fi
out=$T_TMP/tpm7/out
log=$T_TMP/tpm7/serial.log
check "ima_tpm=7: kernel says chip 7 is missing" grep -q 'ima: ima_tpm=7: no TPM chip 7 found, activating TPM-bypass!' "$log"
check_eq "ima_tpm=7: exactly one IMA line about the TPM" 1 "$(grep -c 'ima: .*TPM' "$log")"
check "ima_tpm=7: chip 0 still registered" grep -qx tpm0 "$out/tpm-chips"
check_eq "ima_tpm=7: PCR 10 sha1 stays zero" "$(printf '%040d' 0)" "$(vmt_pcr "$out" sha1)"
check_eq "ima_tpm=7: PCR 10 sha256 stays zero" "$(printf '%064d' 0)" "$(vmt_pcr "$out" sha256)"
check "ima_tpm=7: boot_aggregate is zero" grep -q ' ima-ng sha1:0\{40\} boot_aggregate$' "$out/ascii_runtime_measurements"
before=$(cat "$out/count-before" 2>/dev/null)
after=$(cat "$out/count" 2>/dev/null)
check "ima_tpm=7: the list grows ($before -> $after)" test "${after:-0}" -gt "${before:-0}"
check "ima_tpm=7: executables are still measured" grep -q ' /usr/bin/true$' "$out/ascii_runtime_measurements"

# Garbage is treated like a missing chip, never as the default chip.
cat >"$T_TMP/pcr.sh" <<'SCRIPT'
. /etc/attest/collect.sh
SCRIPT
if vmt_boot tpmx "$T_TMP/pcr.sh" "ima_tpm=x"; then ok "ima_tpm=x: guest runs the scenario"; else fail "ima_tpm=x: guest runs the scenario"; fi
check "ima_tpm=x: kernel rejects the value" grep -q 'ima: ima_tpm= takes a TPM device number, activating TPM-bypass!' "$T_TMP/tpmx/serial.log"
check_eq "ima_tpm=x: PCR 10 sha256 stays zero" "$(printf '%064d' 0)" "$(vmt_pcr "$T_TMP/tpmx/out" sha256)"
finish
