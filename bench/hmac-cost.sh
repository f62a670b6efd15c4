#!/usr/bin/env bash
# What the TPM's HMAC sessions on the kernel's bus (CONFIG_TCG_TPM2_HMAC, 6.12) cost IMA's
# extends: the 6.12 guest kernel without them (KERNEL_TREE=6.12) against the same tree with them
# (KERNEL_VARIANT=hmac: the same configuration but that option), and that kernel again with
# tpm.disable_pcr_integrity=1 (no session for PCR extends, as upstream's answer to this cost),
# booted in turn, each HMAC_RUNS times, under QEMU (TCG) with swtpm and ima_policy=tcb, attestd
# off. Per boot the guest
# (bench/hmac-guest.sh) reports:
#   boot      seconds from kernel start to the guest's script (init done: every S* hook), and
#             the measurements IMA took by then, each one a PCR 10 extend
#   extends   HMAC_K files of the measured ext4 root, each read once by root (tcb measures them
#             all: FILE_CHECK, uid=0): seconds, measurements added, so extends per second
#   again     the same reads once more: already measured, no extend; what the loop costs alone,
#             so ms_per_extend = (extends - again) / measurements
#   user_*    the same with a TPM2_GetRandom from user space (/dev/tpm0) before each read: 6.12
#             flushes its HMAC session lazily, when user space talks to the TPM, so that each
#             extend then starts a session of its own (user_ms_per_extend)
#   pcr10     that the TPM's PCR 10 moved (sysfs pcr-sha256/10)
# and the console's printk times of the TPM's probe and IMA's start. Prints one line per boot,
# then the median, min and max of each figure per configuration (off, on, on-nopcr).
#
# Usage: bench/hmac-cost.sh      (builds or reuses both kernels and build/vm/rootfs.img)
# Environment: HMAC_RUNS boots per kernel [5], HMAC_K files [300], HMAC_OUT results directory
# [build/bench/hmac], KERNEL_BUILD_LOCK / KERNEL_JOBS as vm/build-kernel.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${HMAC_RUNS:-5}
K=${HMAC_K:-300}
OUT=$(realpath -m "${HMAC_OUT:-build/bench/hmac}")
mkdir -p "$OUT"

off=$(KERNEL_TREE=6.12 vm/build-kernel.sh | tail -n 1)
on=$(KERNEL_TREE=6.12 KERNEL_VARIANT=hmac vm/build-kernel.sh | tail -n 1)
grep -qx 'CONFIG_TCG_TPM2_HMAC=y' "$(dirname "$on")/current/config" ||
	{ echo "hmac-cost: $on has no CONFIG_TCG_TPM2_HMAC=y" >&2; exit 1; }
grep -qx '# CONFIG_TCG_TPM2_HMAC is not set' "$(dirname "$off")/current/config" ||
	{ echo "hmac-cost: $off has CONFIG_TCG_TPM2_HMAC" >&2; exit 1; }
[[ -s build/vm/rootfs.img ]] || vm/build-rootfs.sh >"$OUT/rootfs.log" 2>&1

results=$OUT/results.txt
: >"$results"
for ((run = 1; run <= RUNS; run++)); do
	for kernel in off on on-nopcr; do
		dir=$OUT/$kernel-$run
		rm -rf "$dir"
		mkdir -p "$dir"
		bz=$on extra=
		[[ $kernel == off ]] && bz=$off
		[[ $kernel == on-nopcr ]] && extra=tpm.disable_pcr_integrity=1
		# A fresh TPM per boot: the same state for both kernels.
		VM_KERNEL=$bz VM_DIR=$dir VM_TPM_DIR=$dir/tpm VM_TPM_FRESH=1 VM_SCRIPT=bench/hmac-guest.sh \
			VM_OUT=$dir/out VM_TIMEOUT=600 VM_APPEND="attest.attestd=0 attest.hmac_k=$K printk.time=1 $extra" \
			VM_CONSOLE=0 vm/boot.sh >"$dir/boot.log" 2>&1 ||
			{ echo "hmac-cost: boot $kernel-$run failed (log: $dir/boot.log)" >&2; exit 1; }
		[[ -s $dir/out/result ]] || { echo "hmac-cost: no result from $kernel-$run" >&2; exit 1; }
		tpm=$(sed -n 's/^\[ *\([0-9.]*\)\] tpm_tis.*2\.0 TPM.*/\1/p' "$dir/serial.log" | sed -n 1p)
		ima=$(sed -n 's/^\[ *\([0-9.]*\)\] ima: Allocated hash algorithm.*/\1/p' "$dir/serial.log" | sed -n 1p)
		echo "kernel=$kernel run=$run tpm_probe_s=${tpm:-?} ima_init_s=${ima:-?} $(cat "$dir/out/result")" |
			tee -a "$results"
	done
done

# One figure per column: median, min and max over the runs of each kernel.
echo
echo "HMAC_K=$K files, $RUNS boots each (median [min-max]):"
for kernel in off on on-nopcr; do
	line="$kernel:"
	for f in tpm_probe_s ima_init_s boot_s boot_entries extends_per_s ms_per_extend \
		user_extends_per_s user_ms_per_extend; do
		vals=$(grep "^kernel=$kernel " "$results" | grep -oE " $f=-?[0-9.]+" | cut -d= -f2 | sort -n)
		n=$(wc -l <<<"$vals")
		med=$(sed -n "$(((n + 1) / 2))p" <<<"$vals")
		line+=" $f=$med [$(head -n 1 <<<"$vals")-$(tail -n 1 <<<"$vals")]"
	done
	echo "$line"
done | tee "$OUT/summary.txt"
