#!/usr/bin/env bash
# Builds the guest root file system: busybox-static, the init in vm/rootfs/sbin/init,
# the vm/rootfs/ overlay (init.d hooks, scenarios), extra binaries with their shared
# libraries, then an ext4 image made without root or loop devices (mke2fs -d).
#
# Usage: vm/build-rootfs.sh [EXTRA_BIN...]
# Environment (defaults in brackets):
#   ROOTFS_IMG          output image                          [build/vm/rootfs.img]
#   ROOTFS_SIZE         image size for mke2fs                 [128M]
#   ROOTFS_STAGE        staging directory (recreated)         [$ROOTFS_IMG.d]
#   ROOTFS_EXTRA_BINS   space-separated host binaries, copied to /usr/bin/ with their
#                       ldd closure (the arguments are added to these)
#   ROOTFS_ATTESTD      attestd binary, included when present [$B/attestd, B=build/out];
#                       brings the tss2 TCTI libraries ESYS dlopens (ROOTFS_TCTI_LIBS)
#   ROOTFS_TCTI_LIBS    libraries copied by name with their closure
#                       [libtss2-tcti-device.so.0]
#   ROOTFS_ATTESTD_CONF file installed as /etc/attest/attestd.conf [none]
#   ROOTFS_CA           file installed as /etc/attest/ca.pem   [none]
#   ROOTFS_OVERLAY      space-separated directories copied over the tree last
#   ROOTFS_FILES        space-separated SRC:DEST pairs copied into the tree last
#   ROOTFS_SIGN         space-separated paths in the tree (/usr/bin/x) that get an IMA
#                       signature in security.ima (`evmctl ima_sign`), which mke2fs -d
#                       copies into the image; a guest booted with ima_template=ima-sig
#                       then logs it. Needs root (security.* xattrs) and ROOTFS_SIGN_KEY,
#                       a private key in PEM (RSA or EC)                       [none]
#   ROOTFS_SIGN_HASH    hash of those signatures                    [sha256]
# Prints the image path on its last line.
set -euo pipefail
# shellcheck disable=SC2034 # read by vm_log (vm/lib.sh)
VM_LOG_TAG=build-rootfs
. "$(dirname "$0")/lib.sh"
cd "$VM_TOP"

IMG=$(vm_abspath "${ROOTFS_IMG:-build/vm/rootfs.img}")
SIZE=${ROOTFS_SIZE:-128M}
STAGE=$(vm_abspath "${ROOTFS_STAGE:-$IMG.d}")
B=${B:-build/out}
ATTESTD=$(vm_abspath "${ROOTFS_ATTESTD:-$B/attestd}") # "none": leave it out
TCTI_LIBS=${ROOTFS_TCTI_LIBS:-libtss2-tcti-device.so.0}
BUSYBOX=${ROOTFS_BUSYBOX:-/bin/busybox}
read -r -a extra_bins <<<"${ROOTFS_EXTRA_BINS:-}"
extra_bins+=("$@")

command -v mke2fs >/dev/null || vm_die "mke2fs missing (apt-get install e2fsprogs)"
file_is_static() { ! ldd "$1" >/dev/null 2>&1; }
[[ -x $BUSYBOX ]] || vm_die "no $BUSYBOX (apt-get install busybox-static)"
file_is_static "$BUSYBOX" || vm_die "$BUSYBOX is not static (need busybox-static)"

rm -rf "$STAGE"
mkdir -p "$STAGE"
cd "$STAGE"
mkdir -p bin sbin usr/bin usr/sbin lib etc/init.d etc/attest/scenarios proc sys dev tmp run \
	root var/log var/lib mnt
chmod 1777 tmp
cp "$BUSYBOX" bin/busybox

# copy_with_libs SRC DEST: copies an executable and every library ldd lists for it,
# libraries at their host path (so the dynamic loader finds them as on the host).
copy_lib_closure() {
	local lib
	for lib in $(ldd "$1" 2>/dev/null | grep -oE '/[^ ]+' || true); do
		[[ -e .$lib ]] && continue
		mkdir -p ".$(dirname "$lib")"
		cp -L --remove-destination "$lib" ".$lib"
	done
}
copy_with_libs() {
	local src=$1 dest=$2
	mkdir -p ".$(dirname "$dest")"
	cp -L --remove-destination "$src" ".$dest"
	copy_lib_closure "$src"
}
# copy_lib_by_name NAME: a library loaded with dlopen (invisible to ldd), found
# through the loader cache, plus its own closure.
copy_lib_by_name() {
	local path
	path=$(vm_lib_path "$1")
	[[ -n $path ]] || vm_die "library $1 not found (ldconfig -p)"
	mkdir -p ".$(dirname "$path")"
	cp -L --remove-destination "$path" ".$path"
	copy_lib_closure "$path"
}

for bin in "${extra_bins[@]}"; do
	[[ -n $bin ]] || continue
	src=$bin
	[[ $src == */* ]] || src=$(command -v "$bin") || vm_die "extra binary $bin not found"
	src=$(vm_abspath "$src")
	[[ -x $src ]] || vm_die "extra binary $src is not executable"
	copy_with_libs "$src" "/usr/bin/$(basename "$src")"
	vm_log "added $(basename "$src")"
done

if [[ -x $ATTESTD ]]; then
	copy_with_libs "$ATTESTD" /usr/bin/attestd
	for lib in $TCTI_LIBS; do copy_lib_by_name "$lib"; done
	vm_log "added attestd from $ATTESTD with $TCTI_LIBS"
else
	vm_log "no attestd at $ATTESTD (skipped)"
fi
# The dynamic loader of the guest needs its cache or a path; copy the host's config.
if [[ -d lib/x86_64-linux-gnu || -d usr/lib/x86_64-linux-gnu ]]; then
	mkdir -p etc/ld.so.conf.d
	printf '/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n' >etc/ld.so.conf.d/x86_64-linux-gnu.conf
	echo 'include /etc/ld.so.conf.d/*.conf' >etc/ld.so.conf
	ldconfig -r . 2>/dev/null || true
fi

# Project overlay: init, init.d hooks, scenarios.
cp -a --remove-destination "$VM_TOP/vm/rootfs/." .
chmod 755 sbin/init etc/init.d/* etc/attest/scenarios/* 2>/dev/null || true

echo attest-guest >etc/hostname
printf 'root:x:0:0:root:/root:/bin/sh\n' >etc/passwd
printf 'root:x:0:\n' >etc/group
printf '127.0.0.1 localhost\n10.0.2.100 verifier\n' >etc/hosts
[[ -n ${ROOTFS_ATTESTD_CONF:-} ]] && mkdir -p etc/attest && cp --remove-destination "$(vm_abspath "$ROOTFS_ATTESTD_CONF")" etc/attest/attestd.conf
[[ -n ${ROOTFS_CA:-} ]] && cp --remove-destination "$(vm_abspath "$ROOTFS_CA")" etc/attest/ca.pem
for dir in ${ROOTFS_OVERLAY:-}; do
	cp -a --remove-destination "$(vm_abspath "$dir")/." .
done
for pair in ${ROOTFS_FILES:-}; do
	src=$(vm_abspath "${pair%%:*}")
	dest=${pair#*:}
	mkdir -p ".$(dirname "$dest")"
	cp -L --remove-destination "$src" ".$dest"
done

# IMA signatures, after every copy (a copy would drop the xattr) and before the applet links.
read -r -a sign_paths <<<"${ROOTFS_SIGN:-}"
if ((${#sign_paths[@]})); then
	command -v evmctl >/dev/null || vm_die "ROOTFS_SIGN needs evmctl (apt-get install ima-evm-utils)"
	key=$(vm_abspath "${ROOTFS_SIGN_KEY:-}")
	[[ -n ${ROOTFS_SIGN_KEY:-} && -r $key ]] || vm_die "ROOTFS_SIGN needs ROOTFS_SIGN_KEY, a readable private key"
	for path in "${sign_paths[@]}"; do
		[[ $path == /* && -f .$path && ! -L .$path ]] || vm_die "ROOTFS_SIGN: $path is not a regular file of the tree"
		evmctl ima_sign -a "${ROOTFS_SIGN_HASH:-sha256}" --key "$key" ".$path" >/dev/null 2>&1 ||
			vm_die "evmctl ima_sign $path failed (security.* xattrs need root and a file system that keeps them)"
	done
	vm_log "signed ${#sign_paths[@]} files with $key (${ROOTFS_SIGN_HASH:-sha256})"
fi

# One symlink per applet where nothing else provides the name. The links are absolute
# (/bin/busybox) and so point into the host while staging: they are made last, and
# every copy uses --remove-destination so that it could never write through one.
for applet in $("$BUSYBOX" --list-full); do
	[[ -e $applet || -L $applet ]] || ln -s /bin/busybox "$applet"
done
rm -f linuxrc

cd "$VM_TOP"
mkdir -p "$(dirname "$IMG")"
rm -f "$IMG.tmp"
mke2fs -q -F -t ext4 -L attest-root -E root_owner=0:0 -d "$STAGE" "$IMG.tmp" "$SIZE" >&2 ||
	vm_die "mke2fs failed"
# mke2fs -d copies xattrs on this e2fsprogs; a silent loss would make every signed file look
# unsigned in the guest, so check each one in the image itself.
for path in "${sign_paths[@]}"; do
	grep -q . < <(debugfs -R "ea_get $path security.ima" "$IMG.tmp" 2>/dev/null) ||
		vm_die "the image lost the security.ima of $path (mke2fs -d copies xattrs from e2fsprogs 1.43)"
done
mv "$IMG.tmp" "$IMG"
vm_log "done: $IMG ($(du -sh "$STAGE" | cut -f1) in $SIZE)"
echo "$IMG"
