#!/usr/bin/env bash
# The patched guest kernel boots, IMA measures with the tcb policy, and PCR 10 in both
# banks equals the host's replay of the guest's binary list (evmctl; attestctl when
# built). A second boot makes violation entries (ToMToU and open_writers).
. "$(dirname "$0")/common.bash"
vmt_prepare

vmt_measure_script "$T_TMP/measure.sh"
if vmt_boot clean "$T_TMP/measure.sh"; then ok "clean: guest boots and runs the scenario"; else fail "clean: guest boots and runs the scenario"; fi
out=$T_TMP/clean/out
list=$out/binary_runtime_measurements
ascii=$out/ascii_runtime_measurements
check "clean: kernel is the patched 6.1" grep -q 'Linux version 6\.1\.' "$T_TMP/clean/serial.log"
check "clean: tpm0 registered" grep -qx tpm0 "$out/tpm-chips"
check "clean: binary list is not empty" test -s "$list"
check "clean: first entry is boot_aggregate" bash -c "head -n 1 '$ascii' | grep -q ' boot_aggregate\$'"
check "clean: template is ima-ng" bash -c "head -n 1 '$ascii' | grep -q ' ima-ng sha1:'"
for path in /sbin/init /bin/busybox /usr/bin/true /lib/x86_64-linux-gnu/libc.so.6 /etc/hostname; do
	check "clean: $path is measured" grep -q " $path\$" "$ascii"
done
count=$(cat "$out/count" 2>/dev/null)
check "clean: more than 40 entries ($count)" test "${count:-0}" -gt 40
check "clean: files written then read as root are measured" grep -q ' /root/files/30$' "$ascii"
check_eq "clean: no violations" 0 "$(cat "$out/violations" 2>/dev/null)"
sha1=$(vmt_pcr "$out" sha1)
sha256=$(vmt_pcr "$out" sha256)
check "clean: PCR 10 sha1 reported by the guest" grep -qE '^[0-9a-f]{40}$' <<<"$sha1"
check "clean: PCR 10 sha256 reported by the guest" grep -qE '^[0-9a-f]{64}$' <<<"$sha256"
check_fails "clean: PCR 10 sha1 is not zero" grep -qE '^0+$' <<<"$sha1"
check "clean: evmctl replay matches PCR 10 in both banks" vmt_evmctl_replay "$list" "$sha1" "$sha256"
check_fails "clean: evmctl rejects a wrong sha256 PCR" vmt_evmctl_replay "$list" "$sha1" "$(printf '%064d' 1)"
vmt_attestctl_check clean "$list" "$sha1" "$sha256" "$count"

# Violations: ToMToU (write while open for read) and open_writers (read while open for write).
cat >"$T_TMP/violate.sh" <<'SCRIPT'
echo one >/root/tomtou.txt
echo one >/root/writers.txt
exec 3</root/tomtou.txt
echo two >>/root/tomtou.txt
exec 3<&-
exec 4>>/root/writers.txt
cat /root/writers.txt >/dev/null
exec 4>&-
. /etc/attest/collect.sh
SCRIPT
if vmt_boot violate "$T_TMP/violate.sh"; then ok "violate: guest runs the scenario"; else fail "violate: guest runs the scenario"; fi
out=$T_TMP/violate/out
list=$out/binary_runtime_measurements
viol=$(cat "$out/violations" 2>/dev/null)
check "violate: kernel counts violations ($viol)" test "${viol:-0}" -ge 2
zeros=$(grep -c '^10 0000000000000000000000000000000000000000 ' "$out/ascii_runtime_measurements")
check "violate: list holds zero-hash entries ($zeros)" test "$zeros" -ge 2
check "violate: ToMToU entry names the file" grep -q '0000000000000000000000000000000000000000 ima-ng sha1:0\{40\} /root/tomtou.txt$' "$out/ascii_runtime_measurements"
check "violate: open_writers entry names the file" grep -q '0000000000000000000000000000000000000000 ima-ng sha1:0\{40\} /root/writers.txt$' "$out/ascii_runtime_measurements"
sha1=$(vmt_pcr "$out" sha1)
sha256=$(vmt_pcr "$out" sha256)
check "violate: evmctl --ignore-violations replay matches both banks" vmt_evmctl_replay "$list" "$sha1" "$sha256"
vmt_attestctl_check violate "$list" "$sha1" "$sha256" "$(cat "$out/count" 2>/dev/null)"
finish
