#!/usr/bin/env bash
# PCR 0 on platforms that start the TPM at a higher locality (tests/data/eventlog/locality,
# built by its build.py from the recorded OVMF log with an EV_NO_ACTION "StartupLocality"
# event of 3, and of 4 for an H-CRTM): attestctl eventlog --replay equals the PCRs build.py
# computed with hashlib (PCR 0 from 00..0L); PCRs 1-9 and the events equal tpm2_eventlog's.
# tpm2_eventlog's own PCR 0 is compared too where it honours the event: tpm2-tools 5.4
# (Debian 12) extends the event's zero digest into PCR 0 instead, against the PC Client
# spec (EV_NO_ACTION is never extended); that comparison is then reported as skipped.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
CTL=$B/attestctl
[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
command -v tpm2_eventlog >/dev/null || { skip "tpm2_eventlog not installed"; finish; exit 0; }

tools_pcrs() {
	tpm2_eventlog "$1" 2>/dev/null | awk '
		/^pcrs:/ { on = 1; next }
		on && /^  [a-z0-9]+:$/ { bank = $1; sub(":", "", bank); next }
		on && /^    [0-9]+ *:/ { v = $3; sub("^0x", "", v); print "pcr" $1, bank, v }'
}

n=0
for log in "$TOP"/tests/data/eventlog/locality/*.bin; do
	name=${log#"$TOP"/tests/data/eventlog/}
	want=$(cat "${log%.bin}.pcrs")
	loc=$(python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); i=d.index(b"StartupLocality\0"); print(d[i+16])' "$log")
	ours=$("$CTL" eventlog --replay "$log")
	check_eq "$name: attestctl eventlog --replay exits 0" 0 $?
	check_eq "$name: the replay equals build.py's (PCR 0 from 00..0$loc)" "$want" "$ours"
	check_eq "$name: PCRs 1-9 equal tpm2_eventlog's" "$(tools_pcrs "$log" | grep -v '^pcr0 ')" \
		"$(grep -v '^pcr0 ' <<<"$ours")"
	check_eq "$name: the same number of events as tpm2_eventlog" \
		"$(tpm2_eventlog "$log" 2>/dev/null | grep -c 'PCRIndex:')" \
		"$("$CTL" eventlog "$log" | grep -c '^event ')"
	check "$name: attestctl eventlog names the locality" \
		grep -q "startup locality $loc (PCR 0 starts at 00..0$loc" <<<"$("$CTL" eventlog "$log")"
	if [[ $(tools_pcrs "$log" | grep '^pcr0 ') == "$(grep '^pcr0 ' <<<"$ours")" ]]; then
		ok "$name: PCR 0 equals tpm2_eventlog's"
	else
		skip "$name: tpm2_eventlog $(tpm2_eventlog --version 2>&1 | grep -o 'version="[^"]*"') does not start PCR 0 at the locality"
	fi
	n=$((n + 1))
done
check "two logs compared ($n)" test "$n" -eq 2
finish
