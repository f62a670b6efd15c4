#!/usr/bin/env bash
# What reading the kernel's IMA list costs as it grows, in the guest (the part of attestd's
# round that bench/agent_cost.sh, on a host file, cannot see): the kernel's
# binary_runtime_measurements is a seq_file, and a read at a byte offset walks and formats every
# record from the list's head up to it. attestd reads from the entry its verifier needs (a
# pread near the end of the list each round), so this cost grows with the list, unless the
# list is trimmed (kernel-patches/0009, attestd --ima-keep-records).
#
# The guest grows its list to each N given (files written and read as root, one process), then
# times REPS reads of the list's last 4 KiB (dd with skip: an lseek, as attestd's pread), and
# finally deletes every entry but the newest and times the same read again.
#
#   bench/guest_list_read.sh [N...]     (default 1000 10000 30000; environment: REPS [20])
#
# Prints `key value` lines: guest_list_N_tail_read_ms, and guest_list_trimmed_tail_read_ms with
# the entries it kept. Boots one guest (TCG, minutes for 30,000 TPM extends).
set -uo pipefail
. "$(dirname "$0")/../tests/vm/common.bash"
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(1000 10000 30000)
REPS=${REPS:-20}
vmt_prepare

cat >"$T_TMP/read.sh" <<SCRIPT
sizes="${sizes[*]}"
reps=$REPS
SCRIPT
cat >>"$T_TMP/read.sh" <<'SCRIPT'
ima=/sys/kernel/security/ima
list=$ima/binary_runtime_measurements
ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }
# the mean time of one read of the list's last 4 KiB, over $reps reads (10 ms clock)
tail_read() {
	size=$(wc -c <$list)
	skip=$((size / 4096 - 1))
	[ $skip -lt 0 ] && skip=0
	t0=$(ms)
	r=0
	while [ $r -lt $reps ]; do
		dd if=$list of=/dev/null bs=4096 skip=$skip count=1 2>/dev/null
		r=$((r + 1))
	done
	awk -v a="$t0" -v b="$(ms)" -v n="$reps" 'BEGIN { printf "%.1f", (b - a) / n }'
}
for n in $sizes; do
	d=/root/g$n
	mkdir -p $d
	i=$(cat $ima/runtime_measurements_count)
	j=0
	while [ $i -lt $n ]; do echo "$n $j" >$d/$j; i=$((i + 1)); j=$((j + 1)); done
	[ $j -gt 0 ] && cat $d/* >/dev/null
	c=$(cat $ima/runtime_measurements_count)
	echo "guest_list_${n}_entries $c" >>"$OUT/figures"
	echo "guest_list_${n}_tail_read_ms $(tail_read)" >>"$OUT/figures"
done
c=$(cat $ima/runtime_measurements_count)
echo $((c - 100)) >$ima/runtime_measurements_deleted
echo "guest_list_trimmed_kept $((c - $(cat $ima/runtime_measurements_deleted)))" >>"$OUT/figures"
echo "guest_list_trimmed_tail_read_ms $(tail_read)" >>"$OUT/figures"
SCRIPT

VM_TIMEOUT=${VM_TIMEOUT_READ:-1800} vmt_boot read "$T_TMP/read.sh" || { cat "$T_TMP/read/out/figures" 2>/dev/null; exit 1; }
cat "$T_TMP/read/out/figures"
