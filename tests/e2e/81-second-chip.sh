#!/usr/bin/env bash
# A second TPM chip, made in the guest by swtpm through the vtpm proxy (/dev/tpm1), and
# ima_tpm=1 (the late-TPM kernel, kernel-patches/guest-late.config). Chip 0 (QEMU's tpm-tis,
# tpm_tis loaded by init) registers first and IMA leaves it alone; when chip 1 registers, IMA
# extends it with the list so far (a violation among it) and carries on: PCR 10 of chip 1
# replays from entry 0 in both banks (sha256 hashed again by the kernel, ima_hash is sha1),
# boot_aggregate_late is the sha1 of chip 1's PCR 0-7, and chip 0's PCR 10 stays zero.
# tests/e2e/guest/tpm_lookup_test then asks tpm_chip_lookup() for each number while chips
# come and go. A second boot: without ima_tpm=, IMA does not bind a virtual chip.
set -uo pipefail
. "$(dirname "$0")/common.bash"
e2e_late_kernel

for bin in qemu-system-x86_64 swtpm swtpm_setup; do
	command -v "$bin" >/dev/null || e2e_abort "missing $bin (make deps)"
done
[[ -x $B/attestctl ]] || e2e_abort "missing $B/attestctl (run make)"
kernel=$(guest_kernel "$W/build-kernel.log") || e2e_abort "guest kernel builds" "$W/build-kernel.log"
ko=$(vm/build-module.sh tests/e2e/guest/tpm_lookup_test "$W/lookup" 2>"$W/build-module.log" |
	grep '/tpm_lookup_test\.ko$') || e2e_abort "test module builds" "$W/build-module.log"
mkdir -p "$W/overlay/usr/lib/attest"
cp "$ko" "$W/overlay/usr/lib/attest/"
ROOTFS_IMG=$W/rootfs.img ROOTFS_ATTESTD=none ROOTFS_EXTRA_BINS="/usr/bin/swtpm /usr/bin/true" \
	ROOTFS_OVERLAY="$(dirname "$kernel")/modules $W/overlay" vm/build-rootfs.sh >"$W/rootfs.log" 2>&1 ||
	e2e_abort "root image builds" "$W/rootfs.log"

# The guest's side. swtpm serves a vtpm proxy chip from a tmpfs state directory; the kernel
# registers the chip from a work item, so the script waits for IMA's entry, not the device.
cat >"$W/second.sh" <<'SCRIPT'
ima=/sys/kernel/security/ima
L=/sys/module/tpm_lookup_test/parameters/lookup
wait_for() { i=0; while ! eval "$1" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done; eval "$1"; }
vtpm() { # vtpm NAME: a swtpm behind /dev/vtpmx, its PID in /tmp/NAME.pid
	mkdir -p /tmp/$1
	swtpm chardev --vtpm-proxy --tpm2 --tpmstate dir=/tmp/$1 --seccomp action=none >/tmp/$1.log 2>&1 &
	echo $! >/tmp/$1.pid
}
lookup() { for n in "$@"; do echo "$n" >$L && cat $L; done; }

ls /sys/class/tpm >"$OUT/chips-before"
# measured before chip 1 exists, a ToMToU violation among them
echo one >/root/tomtou
exec 3</root/tomtou
echo two >>/root/tomtou
exec 3<&-
/usr/bin/true
vtpm vtpm1
wait_for "grep -q ' boot_aggregate_late\$' $ima/ascii_runtime_measurements" || echo "SECOND-FAIL no boot_aggregate_late"
# measured after: extended into chip 1 as they come, an open_writers violation among them
cat /etc/hostname >/dev/null
exec 4>>/root/writers
cat /root/writers >/dev/null
exec 4>&-
. /etc/attest/collect.sh

insmod /usr/lib/attest/tpm_lookup_test.ko || echo "SECOND-FAIL insmod tpm_lookup_test"
lookup 0 1 2 -1 99 >"$OUT/lookup-both"
# chip 1 goes away: swtpm exits, the proxy unregisters the chip (its device goes first, then
# its number); IMA still holds it. The lookup must stop finding it (30 s at most).
kill "$(cat /tmp/vtpm1.pid)"
wait_for '[ ! -e /sys/class/tpm/tpm1 ] && [ "$(lookup 1)" = "1 none" ]' || echo "SECOND-FAIL tpm1 still found"
lookup 1 >"$OUT/lookup-removed"
# a new chip: number 1 stays taken while the removed chip lives, so it is tpm2; the lookup
# finds it once it is registered
vtpm vtpm2
wait_for '[ -e /sys/class/tpm/tpm2 ] && [ "$(lookup 2)" != "2 none" ]' || echo "SECOND-FAIL no tpm2"
lookup 1 2 >"$OUT/lookup-new"
kill "$(cat /tmp/vtpm2.pid)"
SCRIPT

# Without ima_tpm=: no chip at boot (no tpm-tis), then a vtpm proxy chip, which becomes tpm0.
cat >"$W/virtual.sh" <<'SCRIPT'
ima=/sys/kernel/security/ima
mkdir -p /tmp/vtpm
swtpm chardev --vtpm-proxy --tpm2 --tpmstate dir=/tmp/vtpm --seccomp action=none >/tmp/vtpm.log 2>&1 &
i=0
while [ ! -e /dev/tpm0 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
sleep 2
/usr/bin/true
. /etc/attest/collect.sh
SCRIPT

boot() { # boot NAME SCRIPT APPEND [ENV...]
	local name=$1 script=$2 append=$3 t0=$SECONDS rc=0
	shift 3
	env "$@" VM_KERNEL="$kernel" VM_ROOTFS="$W/rootfs.img" VM_DIR="$W/$name" VM_TPM_DIR="$W/tpm" \
		VM_SCRIPT="$script" VM_APPEND="$append" VM_CONSOLE=0 VM_TIMEOUT=180 \
		vm/boot.sh >"$W/$name.boot.log" 2>&1 || rc=$?
	echo "# boot $name ($append): status $rc in $((SECONDS - t0)) s"
	[[ $rc -eq 0 ]] || { tail -n 5 "$W/$name.boot.log"; tail -n 30 "$W/$name/serial.log"; }
	return $rc
}
pcr() { awk -v c="$2" -v b="$3" '$1 == c && $2 == b { print tolower($3) }' "$1"; }

if boot second "$W/second.sh" "ima_tpm=1 attest.modules=tpm_tis_core,tpm_tis"; then
	ok "ima_tpm=1: guest runs the scenario"
else
	fail "ima_tpm=1: guest runs the scenario"
fi
out=$W/second/out
log=$W/second/serial.log
check "IMA started without chip 1" grep -q 'ima: ima_tpm=1: no TPM chip 1 found, activating TPM-bypass!' "$log"
check_eq "chip 0 registered before chip 1" tpm0 "$(cat "$out/chips-before" 2>/dev/null)"
check_fails "IMA left chip 0 alone" grep -q 'ima: TPM chip 0 registered' "$log"
check "IMA bound chip 1 when it registered" grep -qE 'ima: TPM chip 1 registered, extended with the [0-9]+ earlier measurements' "$log"
check_fails "the guest saw no failure ($(grep -o 'SECOND-FAIL.*' "$log" | tr -d '\r' | paste -sd,))" grep -q SECOND-FAIL "$log"
zero40=$(printf '%040d' 0)
zero64=$(printf '%064d' 0)
check_eq "chip 0: PCR 10 sha1 untouched" "$zero40" "$(pcr "$out/pcrs" tpm0 sha1)"
check_eq "chip 0: PCR 10 sha256 untouched" "$zero64" "$(pcr "$out/pcrs" tpm0 sha256)"
ascii=$out/ascii_runtime_measurements
check "entry 0 is a zero boot_aggregate" test "$(head -n 1 "$ascii" | cut -d' ' -f3-)" = "ima-ng sha1:$zero40 boot_aggregate"
# A fresh swtpm has PCR 0-7 zero: boot_aggregate_late (sha1 bank, ima_hash=sha1) is their sha1.
want=$(head -c 160 /dev/zero | sha1sum | cut -d' ' -f1)
check "boot_aggregate_late is sha1 over chip 1's PCR 0-7 ($want)" grep -q " ima-ng sha1:$want boot_aggregate_late\$" "$ascii"
late_at=$(grep -m 1 -n ' boot_aggregate_late$' "$ascii" | cut -d: -f1)
viol=$(awk -v z="$zero40" '$2 == z { print NR }' "$ascii")
check "a violation before boot_aggregate_late and one after ($(echo "$viol" | tr '\n' ' ')at ${late_at:-?})" \
	test -n "$late_at" -a "$(head -n 1 <<<"$viol")" -lt "${late_at:-0}" -a "$(tail -n 1 <<<"$viol")" -gt "${late_at:-0}"
if replay=$("$B/attestctl" replay --bank all "$out/binary_runtime_measurements" 2>&1); then
	check_eq "chip 1: PCR 10 sha1 is the replay of the list from entry 0" \
		"$(awk '$1 == "pcr10" && $2 == "sha1" { print tolower($3) }' <<<"$replay")" "$(pcr "$out/pcrs" tpm1 sha1)"
	check_eq "chip 1: PCR 10 sha256 is the replay of the list from entry 0" \
		"$(awk '$1 == "pcr10" && $2 == "sha256" { print tolower($3) }' <<<"$replay")" "$(pcr "$out/pcrs" tpm1 sha256)"
else
	fail "attestctl replays the list: $replay"
fi
check_fails "chip 1: PCR 10 is not zero" test "$(pcr "$out/pcrs" tpm1 sha1)" = "$zero40"

check_eq "tpm_chip_lookup: 0, 1, 2, -1, 99" \
	"0 tpm0 dev_num=0 ops=yes|1 tpm1 dev_num=1 ops=yes|2 none|-1 none|99 none" \
	"$(paste -sd'|' "$out/lookup-both" 2>/dev/null)"
check_eq "tpm_chip_lookup: chip 1 removed (IMA still holds it): none" "1 none" "$(cat "$out/lookup-removed" 2>/dev/null)"
check_eq "tpm_chip_lookup: the new chip is 2, number 1 still none" "1 none|2 tpm2 dev_num=2 ops=yes" \
	"$(paste -sd'|' "$out/lookup-new" 2>/dev/null)"

if boot virtual "$W/virtual.sh" "" VM_TPM=0; then
	ok "no ima_tpm=: guest runs the scenario"
else
	fail "no ima_tpm=: guest runs the scenario"
fi
out=$W/virtual/out
check_eq "no ima_tpm=: the vtpm proxy chip is tpm0" tpm0 "$(cat "$out/tpm-chips" 2>/dev/null)"
check_fails "no ima_tpm=: IMA does not bind a virtual chip" grep -q 'ima: TPM chip 0 registered' "$W/virtual/serial.log"
check_eq "no ima_tpm=: its PCR 10 stays zero" "$zero64" "$(pcr "$out/pcrs" tpm0 sha256)"
check_fails "no ima_tpm=: no boot_aggregate_late" grep -q ' boot_aggregate_late$' "$out/ascii_runtime_measurements"
finish
