# shellcheck shell=sh
# Sourced by scenarios: copies the IMA lists and PCR 10 of both banks (as the
# kernel reports it) to $OUT. The PCRs are read before and after the list and the
# pair is retried until they agree, so the saved list replays to the saved PCR.
# pcr10-sha1 and pcr10-sha256 are chip 0's; pcrs has "tpmN BANK HEX" for every chip.
ima=/sys/kernel/security/ima
tpm=/sys/class/tpm/tpm0
pcrs() {
	for chip in /sys/class/tpm/tpm*; do
		[ -d "$chip" ] || continue
		for bank in sha1 sha256; do
			echo "${chip##*/} $bank $(cat "$chip/pcr-$bank/10" 2>/dev/null || echo none)"
		done
	done
}
try=0
while :; do
	before=$(pcrs)
	cat $ima/binary_runtime_measurements >"$OUT/binary_runtime_measurements"
	after=$(pcrs)
	try=$((try + 1))
	[ "$before" = "$after" ] || [ $try -ge 5 ] || continue
	break
done
echo "$after" >"$OUT/pcrs"
for bank in sha1 sha256; do
	[ -r $tpm/pcr-$bank/10 ] && cat $tpm/pcr-$bank/10 >"$OUT/pcr10-$bank"
done
cat $ima/ascii_runtime_measurements >"$OUT/ascii_runtime_measurements"
cat $ima/runtime_measurements_count >"$OUT/count"
cat $ima/violations >"$OUT/violations"
cat /proc/cmdline >"$OUT/cmdline"
ls /sys/class/tpm >"$OUT/tpm-chips" 2>/dev/null
