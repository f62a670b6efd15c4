# shellcheck shell=sh
# Sourced by scenarios: copies the IMA lists and PCR 10 of both banks (as the
# kernel reports it) to $OUT. The PCR is read before and after the list and the
# pair is retried until they agree, so the saved list replays to the saved PCR.
ima=/sys/kernel/security/ima
tpm=/sys/class/tpm/tpm0
pcrs() { for bank in sha1 sha256; do cat $tpm/pcr-$bank/10 2>/dev/null || echo none; done; }
try=0
while :; do
	before=$(pcrs)
	cat $ima/binary_runtime_measurements >"$OUT/binary_runtime_measurements"
	after=$(pcrs)
	try=$((try + 1))
	[ "$before" = "$after" ] || [ $try -ge 5 ] || continue
	break
done
for bank in sha1 sha256; do
	[ -r $tpm/pcr-$bank/10 ] && cat $tpm/pcr-$bank/10 >"$OUT/pcr10-$bank"
done
cat $ima/ascii_runtime_measurements >"$OUT/ascii_runtime_measurements"
cat $ima/runtime_measurements_count >"$OUT/count"
cat $ima/violations >"$OUT/violations"
cat /proc/cmdline >"$OUT/cmdline"
ls /sys/class/tpm >"$OUT/tpm-chips" 2>/dev/null
