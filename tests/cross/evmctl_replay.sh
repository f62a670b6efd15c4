#!/usr/bin/env bash
# Cross-check of our PCR 10 replay: imagen (independent expected values), evmctl
# ima_measurement (ima-evm-utils, the reference) and `attestctl replay` must agree on synthetic
# lists of every template, and attestctl must reject a corrupted list. Recorded guest lists in
# tests/data (NAME.bin with NAME.pcrs) are replayed too.
source "$(dirname "$0")/../lib.sh"
IMAGEN=$B/tools/imagen
ATTESTCTL=$B/attestctl
for tool in "$IMAGEN" "$ATTESTCTL"; do
	[[ -x $tool ]] || { fail "missing $tool (make all)"; finish; exit; }
done
have_evmctl=1
command -v evmctl >/dev/null || have_evmctl=0

# attestctl's `pcr10 BANK HEX` lines reformatted to imagen's `BANK HEX`.
ours() { "$ATTESTCTL" replay "$1" | awk '$1 == "pcr10" { print $2, $3 }'; }

run_case() {
	local name=$1; shift
	local list=$T_TMP/$name.bin
	if ! "$IMAGEN" "$@" --out "$list" --pcrs-out "$T_TMP/$name.pcrs" --evmctl-pcrs "$T_TMP/$name"; then
		fail "$name: imagen"
		return
	fi
	check_eq "$name: attestctl replay equals imagen" "$(cat "$T_TMP/$name.pcrs")" "$(ours "$list")"
	if ((have_evmctl)); then
		local out
		out=$(evmctl ima_measurement --ignore-violations --pcrs sha1,"$T_TMP/$name.sha1" \
			--pcrs sha256,"$T_TMP/$name.sha256" "$list" 2>&1)
		if [[ $? -eq 0 && $out == *"Matched per TPM bank"* ]]; then
			ok "$name: evmctl matches the same PCR values"
		else
			fail "$name: evmctl: $(tail -n 2 <<<"$out")"
		fi
	else
		skip "$name: evmctl not installed"
	fi
}

run_case ng-sha256-viol --entries 2000 --template ima-ng --hash sha256 --violations 17 --seed 3
run_case ima-legacy --entries 1500 --template ima --violations 50 --seed 4 --long-names
run_case ima-sig --entries 1500 --template ima-sig --hash sha1 --seed 5 --spaces
run_case ima-buf --entries 500 --template ima-buf --seed 6
run_case mixed-long --entries 1000 --template mixed --violations 9 --long-names --spaces --seed 7

# Counts line.
check_eq "entry and violation counts" "entries 2000 violations 117" \
	"$("$ATTESTCTL" replay "$T_TMP/ng-sha256-viol.bin" | tail -n 1)"

# A mismatch must also be caught by evmctl (so its "Matched" above means something).
if ((have_evmctl)); then
	sed -i "s/^PCR-10: .*/PCR-10: $(printf '%064d' 0)/" "$T_TMP/ima-sig.sha256"
	# Its whole output first: grep -q in a pipe would stop reading at the match, and evmctl
	# killed by SIGPIPE would make the pipeline fail (pipefail) and this check pass.
	out=$(evmctl ima_measurement --ignore-violations --pcrs sha1,"$T_TMP/ima-sig.sha1" \
		--pcrs sha256,"$T_TMP/ima-sig.sha256" "$T_TMP/ima-sig.bin" 2>&1)
	if grep -q "Matched per TPM bank" <<<"$out"; then
		fail "evmctl accepted a wrong sha256 PCR 10"
	else
		ok "evmctl rejects a wrong sha256 PCR 10"
	fi
fi

# Corruption: one flipped byte inside entry data, a truncated tail, trailing junk.
list=$T_TMP/ng-sha256-viol.bin
cp "$list" "$T_TMP/flip.bin"
printf '\x5a' | dd of="$T_TMP/flip.bin" bs=1 seek=5000 conv=notrunc status=none
"$ATTESTCTL" replay "$T_TMP/flip.bin" >/dev/null 2>"$T_TMP/flip.err"
rc=$?
check_eq "flipped byte: exit 1" 1 "$rc"
check "flipped byte: stderr names the entry" grep -qE 'entry [0-9]+ at offset [0-9]+' "$T_TMP/flip.err"
head -c $(($(stat -c %s "$list") - 7)) "$list" >"$T_TMP/trunc.bin"
"$ATTESTCTL" replay "$T_TMP/trunc.bin" >/dev/null 2>&1
check_eq "truncated list: exit 1" 1 $?
{ cat "$list"; printf 'junk'; } >"$T_TMP/junk.bin"
"$ATTESTCTL" replay "$T_TMP/junk.bin" >/dev/null 2>&1
check_eq "trailing bytes: exit 1" 1 $?
"$ATTESTCTL" replay "$T_TMP/does-not-exist.bin" >/dev/null 2>&1
check_eq "unreadable file: exit 2" 2 $?
"$ATTESTCTL" replay --bank sha7 "$list" >/dev/null 2>&1
check_eq "bad bank: exit 2" 2 $?
check_eq "--bank sha1 prints one bank" "$(sed -n 1p "$T_TMP/ng-sha256-viol.pcrs")" \
	"$("$ATTESTCTL" replay --bank sha1 "$list" | awk '$1 == "pcr10" { print $2, $3 }')"

# Recorded guest lists, if another helper has added them.
for bin in "$TOP"/tests/data/*.bin; do
	[[ -f $bin && -f ${bin%.bin}.pcrs ]] || continue
	want=$(grep -E '^(sha1|sha256) ' "${bin%.bin}.pcrs")
	check_eq "recorded $(basename "$bin")" "$want" "$(ours "$bin" | grep -F -f <(awk '{print $1" "}' <<<"$want"))"
done

finish
