#!/usr/bin/env bash
# Records the guest's firmware event logs with the PCR values the guest kernel reported, as
# test vectors: tests/data/eventlog/guest-<firmware>.bin (binary_bios_measurements), .pcrs
# (`pcrN BANK HEX` for each PCR the log extends, read from /sys/class/tpm/tpm0/pcr-BANK/N
# before attestd or IMA's PCR 10 could matter) and .cmdline (/proc/cmdline). Each log is
# checked against tpm2_eventlog's `pcrs:` section before it is kept.
# Environment: EVENTLOG_DIR [tests/data/eventlog], plus everything vm/boot.sh takes.
set -euo pipefail
# shellcheck disable=SC2034 # read by vm_log (vm/lib.sh)
VM_LOG_TAG=record-eventlogs
. "$(dirname "$0")/lib.sh"
cd "$VM_TOP"
DEST=$(vm_abspath "${EVENTLOG_DIR:-tests/data/eventlog}")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/attest-eventlogs.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
B=${B:-build/out}

export VM_KERNEL
VM_KERNEL=$(vm/build-kernel.sh | tail -n 1)
export VM_ROOTFS=$WORK/rootfs.img
ROOTFS_IMG=$VM_ROOTFS ROOTFS_ATTESTD=/nonexistent vm/build-rootfs.sh >/dev/null
export VM_TPM_DIR=$WORK/tpm VM_CONSOLE=0

cat >"$WORK/dump.sh" <<'SCRIPT'
cat /sys/kernel/security/tpm0/binary_bios_measurements >"$OUT/eventlog.bin"
for bank in sha1 sha256; do
	for i in 0 1 2 3 4 5 6 7 8 9; do
		echo "$i $(cat /sys/class/tpm/tpm0/pcr-$bank/$i)"
	done >"$OUT/pcrs-$bank"
done
cat /proc/cmdline >"$OUT/cmdline"
SCRIPT

mkdir -p "$DEST"
for fw in ovmf seabios; do
	vm_log "recording the $fw log"
	VM_FIRMWARE=$fw VM_DIR=$WORK/$fw VM_SCRIPT=$WORK/dump.sh vm/boot.sh >/dev/null 2>"$WORK/$fw.log" ||
		{ cat "$WORK/$fw.log" >&2; vm_die "boot with $fw failed"; }
	out=$WORK/$fw/out
	# The PCRs the log extends, in tpm2_eventlog's order (bank, then PCR), with the values
	# the guest's TPM holds.
	tpm2_eventlog "$out/eventlog.bin" | awk '
		/^pcrs:/ { on = 1; next }
		on && /^  [a-z0-9]+:$/ { bank = $1; sub(":", "", bank); next }
		on && /^    [0-9]+ *:/ { print bank, $1 }' >"$WORK/$fw.touched"
	[[ -s $WORK/$fw.touched ]] || vm_die "tpm2_eventlog printed no pcrs for the $fw log"
	while read -r bank n; do
		v=$(awk -v n="$n" '$1 == n { print tolower($2) }' "$out/pcrs-$bank")
		[[ -n $v ]] || vm_die "$fw: the guest did not report PCR $n in $bank"
		echo "pcr$n $bank $v"
	done <"$WORK/$fw.touched" >"$WORK/$fw.pcrs"
	tpm2_eventlog "$out/eventlog.bin" | awk '
		/^pcrs:/ { on = 1; next }
		on && /^  [a-z0-9]+:$/ { bank = $1; sub(":", "", bank); next }
		on && /^    [0-9]+ *:/ { v = $3; sub("^0x", "", v); print "pcr" $1, bank, v }' >"$WORK/$fw.tools"
	cmp -s "$WORK/$fw.pcrs" "$WORK/$fw.tools" ||
		{ diff "$WORK/$fw.pcrs" "$WORK/$fw.tools" >&2; vm_die "$fw: tpm2_eventlog's replay differs from the guest's PCRs"; }
	cp "$out/eventlog.bin" "$DEST/guest-$fw.bin"
	cp "$WORK/$fw.pcrs" "$DEST/guest-$fw.pcrs"
	cp "$out/cmdline" "$DEST/guest-$fw.cmdline"
done
vm_log "done: $(ls "$DEST"/guest-* | wc -l) files in $DEST"
