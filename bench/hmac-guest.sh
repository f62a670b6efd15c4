#!/bin/sh
# Guest side of bench/hmac-cost.sh (run by init as VM_SCRIPT, as root, ima_policy=tcb): how long
# the boot took to get here and with how many measurements, then how fast IMA measures and
# extends K new files (attest.hmac_k=K, exported by init as ATTEST_HMAC_K; 300 without), alone
# and with a user-space TPM command before each. Writes one line of KEY=VALUE to $OUT/result.
#
# Why both: 6.12's HMAC sessions are flushed lazily. The kernel keeps its session open across its
# own commands (TPM2_SA_CONTINUE_SESSION), so IMA's extends share one session while nothing else
# talks to the TPM; a command from user space (/dev/tpm0, /dev/tpmrm0: an attestation agent's
# quote or PCR read) ends it (tpm_dev_transmit() calls tpm2_end_auth_session()), and the next
# extend starts a new one (TPM2_StartAuthSession with an ECDH exchange, the null key's context
# loaded). The second run makes every extend start one.
K=${ATTEST_HMAC_K:-300}
ml=/sys/kernel/security/ima/ascii_runtime_measurements
pcr=/sys/class/tpm/tpm0/pcr-sha256/10
up() { cut -d' ' -f1 /proc/uptime; }
count() { wc -l <"$ml" | tr -d ' '; }
boot_s=$(up)
boot_entries=$(count)
pcr0=$(cat "$pcr" 2>/dev/null || echo none)

# 2 K distinct files on the ext4 root (tcb does not measure tmpfs), written first: writing is not
# measured, reading each one as root is, once.
mkdir -p /var/hmac
i=0
while [ "$i" -lt $((2 * K)) ]; do
	echo "hmac-cost $i $boot_s" >"/var/hmac/$i"
	i=$((i + 1))
done
sync
# reads FIRST: reads files FIRST..FIRST+K-1; with TPM=1 a TPM2_GetRandom from user space first.
reads() {
	i=$1
	while [ "$i" -lt $(($1 + K)) ]; do
		if [ "$TPM" = 1 ]; then
			# TPM2_GetRandom(8): tag 0x8001, size 12, command code 0x17b
			printf '\200\001\000\000\000\014\000\000\001\173\000\010' >&3
			dd bs=4096 count=1 <&3 >/dev/null 2>&1
		fi
		read -r _ <"/var/hmac/$i"
		i=$((i + 1))
	done
}
exec 3<>/dev/tpm0
TPM=0
n1=$(count) t1=$(up)
reads 0
t2=$(up) n2=$(count)
reads 0
t3=$(up) n3=$(count)
TPM=1
reads "$K"
t4=$(up) n4=$(count)
reads "$K"
t5=$(up) n5=$(count)
exec 3>&-
pcr1=$(cat "$pcr" 2>/dev/null || echo none)
moved=no
[ "$pcr0" != "$pcr1" ] && moved=yes
awk -v b="$boot_s" -v be="$boot_entries" -v t1="$t1" -v t2="$t2" -v t3="$t3" -v t4="$t4" \
	-v t5="$t5" -v n1="$n1" -v n2="$n2" -v n3="$n3" -v n4="$n4" -v n5="$n5" -v moved="$moved" 'BEGIN {
	d = t2 - t1; e = n2 - n1; du = t4 - t3; eu = n4 - n3
	printf "boot_s=%.2f boot_entries=%d extends_s=%.2f extends=%d extends_per_s=%.1f again_s=%.2f again_extends=%d", \
		b, be, d, e, (d > 0 ? e / d : 0), t3 - t2, n3 - n2
	printf " user_extends_s=%.2f user_extends=%d user_extends_per_s=%.1f user_again_s=%.2f user_again_extends=%d", \
		du, eu, (du > 0 ? eu / du : 0), t5 - t4, n5 - n4
	printf " ms_per_extend=%.2f user_ms_per_extend=%.2f pcr10_moved=%s\n", \
		(e > 0 ? 1000 * (d - (t3 - t2)) / e : 0), (eu > 0 ? 1000 * (du - (t5 - t4)) / eu : 0), moved
}' >"$OUT/result"
cat "$OUT/result"
