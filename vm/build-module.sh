#!/usr/bin/env bash
# Builds an out-of-tree kernel module against the kernel that vm/build-kernel.sh built in
# KERNEL_CACHE (the tree is kept there), without writing into the source directory.
#
# Usage: vm/build-module.sh SRC-DIR OUT-DIR
#   SRC-DIR   the module's sources and its Kbuild file
#   OUT-DIR   where it is built (recreated); the .ko files end up there
# Environment: KERNEL_CACHE (the kernel's cache, [build/kernel]) or KERNEL_VARIANT (vm/lib.sh),
# KERNEL_JOBS [nproc].
# Prints the paths of the built .ko files, one a line.
set -euo pipefail
# shellcheck disable=SC2034 # read by vm_log (vm/lib.sh)
VM_LOG_TAG=build-module
. "$(dirname "$0")/lib.sh"
cd "$VM_TOP"

[[ $# -eq 2 ]] || vm_die "usage: vm/build-module.sh SRC-DIR OUT-DIR"
SRC=$(vm_abspath "$1")
OUT=$(vm_abspath "$2")
vm_kernel_variant
CACHE=$(vm_abspath "${KERNEL_CACHE:-build/kernel}")
tree=$CACHE/current/src
[[ -f $SRC/Kbuild ]] || vm_die "no Kbuild in $SRC"
[[ -f $tree/Module.symvers ]] || vm_die "no built kernel tree with modules at $tree (vm/build-kernel.sh with CONFIG_MODULES=y)"

rm -rf "$OUT"
mkdir -p "$OUT"
cp -r "$SRC/." "$OUT/"
if ! make -C "$tree" M="$OUT" -j"${KERNEL_JOBS:-$(nproc)}" modules >"$OUT/build.log" 2>&1; then
	tail -n 20 "$OUT/build.log" >&2
	vm_die "module build failed (log: $OUT/build.log)"
fi
find "$OUT" -maxdepth 1 -name '*.ko' | sort
