#!/usr/bin/env bash
# The kernel's ima/runtime_measurements_deleted (kernel-patches/0009): deleting the oldest
# entries by their index since boot, as attestd does after a verdict. In the guest: the
# interface's answers (an absolute index, repeated writes harmless, past-the-end and garbage
# refused, the count since boot unchanged), deletion while other processes read the list
# files, a reader keeping its place (or failing, never skipping) across a deletion, a deleted
# entry's template hash listed again; on the host: the entries
# saved before each deletion followed by the kernel's remaining list replay to PCR 10 in both
# banks, and a saved copy with one byte changed does not. Then the memory the list holds over a
# long run, with and without deletion (printed as figures: the guest's unreclaimable slab after
# each batch).
. "$(dirname "$0")/common.bash"
vmt_prepare

cat >"$T_TMP/delete.sh" <<'SCRIPT'
ima=/sys/kernel/security/ima
d=$ima/runtime_measurements_deleted
say() { echo "$*" >>"$OUT/result"; }
: >"$OUT/result"
[ -e $d ] && say "has-file" || say "no-file"
say "mode $(stat -c %a $d)"
say "deleted0 $(cat $d)"
# save the list, then delete what was saved: nothing is measured in between (busybox and the
# shell's files are measured already)
save() {
	before=$(cat $ima/runtime_measurements_count)
	cat $ima/binary_runtime_measurements >>"$OUT/saved.bin"
	after=$(cat $ima/runtime_measurements_count)
	[ "$before" = "$after" ] || say "moved $before $after"
	echo "$after"
}
c0=$(save)
say "count0 $c0"
echo "$c0" >$d && say "delete-all ok" || say "delete-all failed"
say "deleted1 $(cat $d)"
say "count1 $(cat $ima/runtime_measurements_count)"
say "listsize1 $(wc -c <$ima/binary_runtime_measurements)"
echo $((c0 - 3)) >$d && say "older ok" || say "older failed"
echo "$c0" >$d && say "same ok" || say "same failed"
say "deleted2 $(cat $d)"
echo $((c0 + 1000)) >$d 2>/dev/null && say "past ok" || say "past refused"
echo abc >$d 2>/dev/null && say "garbage ok" || say "garbage refused"
echo -5 >$d 2>/dev/null && say "negative ok" || say "negative refused"
say "deleted3 $(cat $d)"
# new entries: files written then read as root (the tcb policy)
mkdir -p /root/del
i=0
while [ $i -lt 40 ]; do echo "file $i" >/root/del/$i; cat /root/del/$i >/dev/null; i=$((i + 1)); done
say "count2 $(cat $ima/runtime_measurements_count)"
# readers in the background while the head is deleted in steps
( while [ ! -e /tmp/stop ]; do cat $ima/binary_runtime_measurements $ima/ascii_runtime_measurements >/dev/null; done ) &
r1=$!
( while [ ! -e /tmp/stop ]; do cat $ima/ascii_runtime_measurements >/dev/null; done ) &
r2=$!
c=$(cat $d)
cat $ima/binary_runtime_measurements >/tmp/cur.bin
# delete the 40 new entries ten at a time, saving each slice first from the copy taken above
i=0
ok=1
while [ $i -lt 4 ]; do
	echo $((c + (i + 1) * 10)) >$d || ok=0
	i=$((i + 1))
done
touch /tmp/stop
wait $r1 $r2
cat /tmp/cur.bin >>"$OUT/saved.bin"
say "steps $ok"
say "deleted4 $(cat $d)"
# The hash table skips an entry whose template hash (file digest and name) is listed already: a
# file written again with the same content under the same name (a new inode, so IMA measures
# it) adds nothing while its entry is kept, and is listed again once its entry was deleted.
echo ctl >/root/ctl
cat /root/ctl >/dev/null
n=$(cat $ima/runtime_measurements_count)
rm /root/ctl && echo ctl >/root/ctl && cat /root/ctl >/dev/null
say "kept-again $(( $(cat $ima/runtime_measurements_count) - n ))"
n=$(cat $ima/runtime_measurements_count)
rm /root/del/7 && echo "file 7" >/root/del/7 && cat /root/del/7 >/dev/null
say "remeasured $(( $(cat $ima/runtime_measurements_count) - n ))"
dmesg | grep -E 'BUG|WARNING|Oops|list_del corruption' >"$OUT/dmesg-bad" || true
. /etc/attest/collect.sh
cat $d >"$OUT/deleted"

# A reader of a list file keeps its place across a deletion (positions are indexes since boot).
# Ten new entries; one reader has read the first kept entry (base), another base to base+6; then
# base to base+4 are deleted. The reader behind may still hold the next entry in its buffers
# (busybox's read reads ahead and seeks back; seq_file keeps the record it was in): it must get
# only the entries that followed base, in order, and then an error, never an entry past the
# hole. The reader ahead goes on with base+7.
i=0
while [ $i -lt 10 ]; do echo "pos $i" >/root/del/p$i; cat /root/del/p$i >/dev/null; i=$((i + 1)); done
base=$(cat $d)
cat $ima/ascii_runtime_measurements >/tmp/before
exec 3<$ima/ascii_runtime_measurements 4<$ima/ascii_runtime_measurements
read -r a <&3
j=0
while [ $j -lt 7 ]; do read -r b <&4; j=$((j + 1)); done
echo $((base + 5)) >$d && say "mid-delete ok" || say "mid-delete failed"
cat <&3 >/tmp/behind 2>/dev/null && say "behind-read eof" || say "behind-read failed"
n=$(wc -l </tmp/behind)
if sed -n "2,$((n + 1))p" /tmp/before | cmp -s - /tmp/behind; then
	say "behind-prefix ok $n"
else
	say "behind-prefix wrong $n"
fi
read -r b <&4 && [ "$b" = "$(sed -n 3p $ima/ascii_runtime_measurements)" ] && say "ahead-place ok" ||
	say "ahead-place wrong"
exec 3<&- 4<&-
# a write longer than any number: refused, not cut to its first 66 bytes (66 zeros: 0)
z=$(printf '%066d' 0)
printf '%sjunk\n' "$z" >$d 2>/dev/null && say "long ok" || say "long refused"
dmesg | grep -E 'BUG|WARNING|Oops|list_del corruption' >"$OUT/dmesg-bad2" || true

# memory over a long run: batches of new measurements, with deletion after each batch in the
# second half; the unreclaimable slab (kB; the list is kmalloc'd) after each batch
slab() { awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo; }
mkdir -p /root/mem
run() {
	mode=$1 b=0
	while [ $b -lt $BATCHES ]; do
		j=0
		while [ $j -lt $PER_BATCH ]; do echo "$mode $b $j" >/root/mem/f; cat /root/mem/f >/dev/null; j=$((j + 1)); done
		[ "$mode" = delete ] && cat $ima/runtime_measurements_count >$d
		echo 3 >/proc/sys/vm/drop_caches
		echo "$mode $b $(cat $ima/runtime_measurements_count) $(slab)" >>"$OUT/memory"
		b=$((b + 1))
	done
}
BATCHES=${ATTEST_BATCHES:-4} PER_BATCH=${ATTEST_PER_BATCH:-1500}
cat $ima/runtime_measurements_count >$d
echo "start 0 $(cat $ima/runtime_measurements_count) $(slab)" >"$OUT/memory"
run keep
run delete
SCRIPT

VM_TIMEOUT=${VM_TIMEOUT_DELETE:-600}
if VM_TIMEOUT=$VM_TIMEOUT vmt_boot delete "$T_TMP/delete.sh" "attest.batches=${DELETE_BATCHES:-4} attest.per_batch=${DELETE_PER_BATCH:-1500}"; then
	ok "guest runs the deletion scenario"
else
	fail "guest runs the deletion scenario"
fi
out=$T_TMP/delete/out
res=$out/result
val() { awk -v k="$1" '$1 == k { print $2 }' "$res" 2>/dev/null; }
check "the kernel has ima/runtime_measurements_deleted" grep -qx has-file "$res"
check_eq "it is root's, read and write, group read" 640 "$(val mode)"
check_eq "nothing deleted at boot" 0 "$(val deleted0)"
c0=$(val count0)
check "the boot's list has entries ($c0)" test "${c0:-0}" -ge 5
check "saving the list did not race a measurement" bash -c "! grep -q '^moved' '$res'"
check "writing the count deletes every entry" grep -qx 'delete-all ok' "$res"
check_eq "deleted counts them" "$c0" "$(val deleted1)"
check_eq "the count since boot is unchanged" "$c0" "$(val count1)"
check_eq "the binary list is empty" 0 "$(val listsize1)"
check "an older index is a harmless no-op" grep -qx 'older ok' "$res"
check "the same index again is a harmless no-op" grep -qx 'same ok' "$res"
check_eq "neither deleted more" "$c0" "$(val deleted2)"
check "an index past the last entry is refused" grep -qx 'past refused' "$res"
check "a non-number is refused" grep -qx 'garbage refused' "$res"
check "a negative index is refused" grep -qx 'negative refused' "$res"
check_eq "refusals deleted nothing" "$c0" "$(val deleted3)"
check_eq "40 files read as root add 40 entries" $((c0 + 40)) "$(val count2)"
check_eq "deleting in steps while others read the list succeeds" 1 "$(val steps)"
check_eq "the steps deleted the 40 new entries" $((c0 + 40)) "$(val deleted4)"
check_eq "a file written again as it was adds nothing while its entry is kept" 0 "$(val kept-again)"
check_eq "and is listed again once its entry was deleted" 1 "$(val remeasured)"
check "no kernel warning" test ! -s "$out/dmesg-bad"
check_eq "collect ran after the deletions" $((c0 + 40)) "$(cat "$out/deleted" 2>/dev/null)"
check "deleting while two readers hold the ascii list open" grep -qx 'mid-delete ok' "$res"
check "a reader whose next entry was deleted gets an error, not a list with a hole" \
	grep -qx 'behind-read failed' "$res"
check "before it, only the entries that followed its place, in order (those it held already)" \
	grep -qE '^behind-prefix ok [0-9]+$' "$res"
check "a reader past the deleted entries keeps its place" grep -qx 'ahead-place ok' "$res"
check "a write longer than a number is refused, not cut" grep -qx 'long refused' "$res"
check "no kernel warning after them" test ! -s "$out/dmesg-bad2"

# The saved entries and what the kernel kept replay to PCR 10, as the whole list would.
cat "$out/saved.bin" "$out/binary_runtime_measurements" >"$T_TMP/whole.bin"
sha1=$(vmt_pcr "$out" sha1)
sha256=$(vmt_pcr "$out" sha256)
check "saved + kept replay to PCR 10 in both banks (evmctl)" vmt_evmctl_replay "$T_TMP/whole.bin" "$sha1" "$sha256"
check_fails "the kept list alone does not" vmt_evmctl_replay "$out/binary_runtime_measurements" "$sha1" "$sha256"
vmt_attestctl_check delete "$T_TMP/whole.bin" "$sha1" "$sha256" "$(cat "$out/count" 2>/dev/null)"
# One byte of a saved entry's template hash changed: the replay no longer matches.
cp "$T_TMP/whole.bin" "$T_TMP/tampered.bin"
printf '\x5a' | dd of="$T_TMP/tampered.bin" bs=1 seek=10 conv=notrunc status=none
check_fails "a saved copy with one byte changed does not replay" vmt_evmctl_replay "$T_TMP/tampered.bin" "$sha1" "$sha256"

# Memory: Slab after each batch, keeping and deleting.
if [[ -s $out/memory ]]; then
	echo "memory (mode batch entries-since-boot slab-kB):"
	sed 's/^/  /' "$out/memory"
	keep_first=$(awk '$1 == "keep" && $2 == 0 { print $4 }' "$out/memory")
	keep_last=$(awk '$1 == "keep" { v = $4 } END { print v }' "$out/memory")
	del_first=$(awk '$1 == "delete" && $2 == 0 { print $4 }' "$out/memory")
	del_last=$(awk '$1 == "delete" { v = $4 } END { print v }' "$out/memory")
	echo "slab growth keeping: $((keep_last - keep_first)) kB; deleting: $((del_last - del_first)) kB"
	check "keeping the list grows Slab over the batches ($keep_first -> $keep_last kB)" test $((keep_last - keep_first)) -gt 200
	check "deleting after each batch keeps Slab flat, within a quarter of the growth ($del_first -> $del_last kB)" \
		test $(((del_last - del_first) * 4)) -lt $((keep_last - keep_first))
else
	fail "the guest wrote its memory figures"
fi
finish
