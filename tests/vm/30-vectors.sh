#!/usr/bin/env bash
# The recorded guest lists in tests/data/ (vm/record-vectors.sh) replay, with evmctl,
# to the PCR 10 values the guest reported; altered copies do not. No VM needed.
. "$(dirname "$0")/common.bash"

n=0
for bin in tests/data/guest-*.bin; do
	[[ -f $bin ]] || continue
	name=$(basename "$bin" .bin)
	pcrs=${bin%.bin}.pcrs
	sha1=$(awk '$1 == "sha1" { print $2 }' "$pcrs")
	sha256=$(awk '$1 == "sha256" { print $2 }' "$pcrs")
	check "$name: evmctl replay matches both banks" vmt_evmctl_replay "$bin" "$sha1" "$sha256"
	# Flip one byte of the last entry's name: the template hash no longer matches it.
	cp "$bin" "$T_TMP/$name.bad"
	size=$(stat -c %s "$bin")
	printf 'X' | dd of="$T_TMP/$name.bad" bs=1 seek=$((size - 2)) conv=notrunc status=none
	check_fails "$name: altered copy does not replay" vmt_evmctl_replay "$T_TMP/$name.bad" "$sha1" "$sha256"
	vmt_attestctl_check "$name" "$bin" "$sha1" "$sha256" \
		"$(awk -F' [|] ' -v n="$name" '$1 == n { print $3 }' tests/data/guest-vectors.txt)"
	n=$((n + 1))
done
check "at least 5 recorded vectors ($n)" test "$n" -ge 5
finish
