#!/usr/bin/env bash
# The guest's firmware event log, live: booted under OVMF and under SeaBIOS, the log the guest
# kernel exposes (securityfs) replays with `attestctl eventlog --replay` to the PCR 0-9 the
# guest's TPM reports, and agrees with tpm2_eventlog's `pcrs:` section; under OVMF the kernel's
# PCR 4 event carries the Authenticode digest attestctl computes from the bzImage (as QEMU hands
# it to the firmware) and PCR 9 the digest of the command line the guest booted with.
. "$(dirname "$0")/common.bash"
vmt_prepare
ATTESTCTL=$B/attestctl
[[ -x $ATTESTCTL ]] || { fail "missing $ATTESTCTL (run make)"; finish; exit 1; }

cat >"$T_TMP/log.sh" <<'SCRIPT'
cat /sys/kernel/security/tpm0/binary_bios_measurements >"$OUT/eventlog.bin"
for bank in sha1 sha256; do
	for i in 0 1 2 3 4 5 6 7 8 9; do echo "$i $(cat /sys/class/tpm/tpm0/pcr-$bank/$i)"; done >"$OUT/pcrs-$bank"
done
cat /proc/cmdline >"$OUT/cmdline"
SCRIPT

# tools_pcrs LOG: tpm2_eventlog's pcrs section as `pcrN BANK HEX` lines.
tools_pcrs() {
	tpm2_eventlog "$1" | awk '
		/^pcrs:/ { on = 1; next }
		on && /^  [a-z0-9]+:$/ { bank = $1; sub(":", "", bank); next }
		on && /^    [0-9]+ *:/ { v = $3; sub("^0x", "", v); print "pcr" $1, bank, v }'
}
# guest_pcrs OUT: our replay's lines with the value the guest's TPM holds for each.
guest_pcrs() {
	local pcr bank v
	while read -r pcr bank _; do
		v=$(awk -v n="${pcr#pcr}" '$1 == n { print tolower($2) }' "$1/pcrs-$bank")
		echo "$pcr $bank $v"
	done <"$1/replay"
}

for fw in ovmf seabios; do
	if VM_FIRMWARE=$fw vmt_boot "$fw" "$T_TMP/log.sh"; then ok "$fw: guest boots"; else fail "$fw: guest boots"; continue; fi
	out=$T_TMP/$fw/out
	check "$fw: the guest has an event log" test -s "$out/eventlog.bin"
	"$ATTESTCTL" eventlog --replay "$out/eventlog.bin" >"$out/replay"
	check_eq "$fw: attestctl eventlog --replay exits 0" 0 $?
	check "$fw: the log extends PCR 0-7 in both banks" test "$(grep -cE '^pcr[0-7] (sha1|sha256) ' "$out/replay")" -eq 16
	check_eq "$fw: the replay equals the guest's PCRs" "$(cat "$out/replay")" "$(guest_pcrs "$out")"
	check_eq "$fw: the replay equals tpm2_eventlog's pcrs" "$(cat "$out/replay")" "$(tools_pcrs "$out/eventlog.bin")"
	ours=$("$ATTESTCTL" eventlog "$out/eventlog.bin" | grep -c '^event ')
	theirs=$(tpm2_eventlog "$out/eventlog.bin" | grep -c '^- EventNum:')
	check_eq "$fw: attestctl eventlog prints every event" "$theirs" "$ours"
done

out=$T_TMP/ovmf/out
if [[ -s $out/eventlog.bin ]]; then
	want=$("$ATTESTCTL" boot-policy kernel --qemu "$VM_KERNEL" | cut -d' ' -f1)
	logged=$("$ATTESTCTL" eventlog "$out/eventlog.bin" | awk '
		/^event / { app = ($3 == "pcr4" && $4 == "EV_EFI_BOOT_SERVICES_APPLICATION:") }
		app && $1 == "sha256" { print "sha256:" $2; app = 0 }')
	check_eq "ovmf: the kernel's PCR 4 digest is attestctl's Authenticode digest of the bzImage" "$want" "$logged"
	check_fails "ovmf: the file's own digest differs (QEMU edits the setup header)" test \
		"$("$ATTESTCTL" boot-policy kernel "$VM_KERNEL" | cut -d' ' -f1)" = "$logged"
	"$ATTESTCTL" boot-policy learn "$out/eventlog.bin" --cmdline-file "$out/cmdline" >"$T_TMP/learned.json"
	check_eq "ovmf: the guest's command line is the one measured in PCR 9 (boot-policy learn accepts it)" 0 $?
	check_eq "ovmf: the learned kernel is the bzImage" "$want" "$(jq -r '.boot.kernels[0].digest' "$T_TMP/learned.json")"
fi
finish
