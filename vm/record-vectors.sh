#!/usr/bin/env bash
# Records real guest IMA lists with the PCR 10 values the guest kernel reported, as
# test vectors for the proto unit tests: tests/data/guest-<template>-<hash>[-viol].bin
# (binary_runtime_measurements) and .pcrs (`sha1 HEX` and `sha256 HEX` lines), and an
# index tests/data/guest-vectors.txt. Each list is checked with evmctl before it is kept.
# Environment: VECTOR_DIR [tests/data], plus everything vm/boot.sh takes.
set -euo pipefail
# shellcheck disable=SC2034 # read by vm_log (vm/lib.sh)
VM_LOG_TAG=record-vectors
. "$(dirname "$0")/lib.sh"
cd "$VM_TOP"
DEST=$(vm_abspath "${VECTOR_DIR:-tests/data}")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/attest-vectors.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

export VM_KERNEL
VM_KERNEL=$(vm/build-kernel.sh | tail -n 1)
export VM_ROOTFS=$WORK/rootfs.img
ROOTFS_IMG=$VM_ROOTFS ROOTFS_ATTESTD=/nonexistent ROOTFS_EXTRA_BINS=/usr/bin/true vm/build-rootfs.sh >/dev/null
export VM_TPM_DIR=$WORK/tpm VM_CONSOLE=0

cat >"$WORK/plain.sh" <<'SCRIPT'
/usr/bin/true
for f in /etc/* /etc/attest/*; do [ -f "$f" ] && cat "$f" >/dev/null; done
. /etc/attest/collect.sh
SCRIPT
cat >"$WORK/viol.sh" <<'SCRIPT'
/usr/bin/true
echo one >/root/tomtou.txt
exec 3</root/tomtou.txt
echo two >>/root/tomtou.txt
exec 3<&-
exec 4>>/root/writers.txt
cat /root/writers.txt >/dev/null
exec 4>&-
. /etc/attest/collect.sh
SCRIPT

pcr_file() { # BANK HEX FILE
	local i z
	z=$(printf '%0*d' ${#2} 0)
	for ((i = 0; i < 24; i++)); do
		if ((i == 10)); then echo "PCR-10: $2"; else printf 'PCR-%02d: %s\n' $i "$z"; fi
	done >"$3"
}

mkdir -p "$DEST"
index=$DEST/guest-vectors.txt
{
	echo "# Real guest IMA lists (patched linux 6.1, swtpm sha1+sha256, ima_policy=tcb),"
	echo "# recorded by vm/record-vectors.sh. name | kernel parameters | entries | violations"
} >"$index.tmp"
while read -r name script append; do
	vm_log "recording $name ($append)"
	VM_DIR=$WORK/$name VM_SCRIPT=$WORK/$script VM_APPEND=$append vm/boot.sh >/dev/null 2>"$WORK/$name.log" ||
		{ cat "$WORK/$name.log" >&2; vm_die "boot for $name failed"; }
	out=$WORK/$name/out
	sha1=$(tr -d ' \n' <"$out/pcr10-sha1" | tr 'A-F' 'a-f')
	sha256=$(tr -d ' \n' <"$out/pcr10-sha256" | tr 'A-F' 'a-f')
	pcr_file sha1 "$sha1" "$WORK/$name.sha1"
	pcr_file sha256 "$sha256" "$WORK/$name.sha256"
	evmctl ima_measurement --ignore-violations --pcrs sha1,"$WORK/$name.sha1" \
		--pcrs sha256,"$WORK/$name.sha256" "$out/binary_runtime_measurements" >"$WORK/$name.evm" 2>&1 ||
		{ tail "$WORK/$name.evm" >&2; vm_die "$name: evmctl does not match the guest's PCRs"; }
	cp "$out/binary_runtime_measurements" "$DEST/guest-$name.bin"
	printf 'sha1 %s\nsha256 %s\n' "$sha1" "$sha256" >"$DEST/guest-$name.pcrs"
	echo "guest-$name | $append | $(cat "$out/count") | $(cat "$out/violations")" >>"$index.tmp"
done <<'LIST'
ima-sha1 plain.sh ima_template=ima
ima-ng-sha1 plain.sh ima_template=ima-ng
ima-ng-sha256 plain.sh ima_template=ima-ng ima_hash=sha256
ima-sig-sha256 plain.sh ima_template=ima-sig ima_hash=sha256
ima-ng-sha1-viol viol.sh ima_template=ima-ng
LIST
mv "$index.tmp" "$index"
vm_log "done: $(ls "$DEST"/guest-* | wc -l) files, $(du -ch "$DEST"/guest-* | tail -n 1 | cut -f1)"
