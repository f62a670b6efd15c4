#!/usr/bin/env bash
# attestctl eventlog against tpm2_eventlog (tpm2-tools), offline, on every recorded log:
# the guest's own logs (tests/data/eventlog: OVMF and SeaBIOS, with the PCRs the guest's TPM
# reported) and public ones rebuilt from tpm2-tools' fixtures (tests/data/eventlog/public: a
# 4-bank log, a Fedora guest under systemd-boot, a SHA-1-only laptop log, a Spec ID event with
# vendor data; provenance in build.py). `eventlog --replay` must equal tpm2_eventlog's `pcrs:`
# section and the recorded PCRs, event for event the same count. Then logs tpm2_eventlog gives
# up on: a variable event whose own lengths are wrong (it stops at that event; we replay the log
# and name the event), and a cut log (both refuse; ours says which event and byte).
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
CTL=$B/attestctl
[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
command -v tpm2_eventlog >/dev/null || { skip "tpm2_eventlog not installed"; finish; exit 0; }

# tools_pcrs LOG: tpm2_eventlog's pcrs section as `pcrN BANK HEX` lines.
tools_pcrs() {
	tpm2_eventlog "$1" 2>/dev/null | awk '
		/^pcrs:/ { on = 1; next }
		on && /^  [a-z0-9]+:$/ { bank = $1; sub(":", "", bank); next }
		on && /^    [0-9]+ *:/ { v = $3; sub("^0x", "", v); print "pcr" $1, bank, v }'
}

n=0
for log in "$TOP"/tests/data/eventlog/*.bin "$TOP"/tests/data/eventlog/public/*.bin; do
	name=${log#"$TOP"/tests/data/eventlog/}
	ours=$("$CTL" eventlog --replay "$log")
	check_eq "$name: attestctl eventlog --replay exits 0" 0 $?
	check_eq "$name: the replay equals tpm2_eventlog's pcrs" "$(tools_pcrs "$log")" "$ours"
	check_eq "$name: the replay equals the recorded PCRs" "$(cat "${log%.bin}.pcrs")" "$ours"
	check_eq "$name: the same number of events as tpm2_eventlog" \
		"$(tpm2_eventlog "$log" 2>/dev/null | grep -c 'PCRIndex:')" \
		"$("$CTL" eventlog "$log" | grep -c '^event ')"
	n=$((n + 1))
done
check "at least 6 logs compared ($n)" test "$n" -ge 6

# A SecureBoot variable whose UnicodeNameLength (inside the event's data) says 200: the
# record's own sizes are right, the variable's are not. tpm2_eventlog stops there; the replay
# does not read event data, so ours is the unedited log's, and the event is named as malformed.
ovmf=$TOP/tests/data/eventlog/guest-ovmf.bin
off=$(python3 - "$ovmf" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
off = 32 + struct.unpack_from('<I', d, 28)[0]  # after the Spec ID record
head = 12 + (2 + 20) + (2 + 32)                # pcr, type, count, sha1 and sha256 digests
for _ in range(3):                             # events 1-3
    off += head + 4 + struct.unpack_from('<I', d, off + head)[0]
# event 4's data: GUID (16 bytes), then UnicodeNameLength
print(off + head + 4 + 16)
PY
)
python3 - "$ovmf" "$T_TMP/badvar.bin" "$off" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
struct.pack_into('<Q', d, int(sys.argv[3]), 200)
open(sys.argv[2], 'wb').write(d)
PY
tpm2_eventlog "$T_TMP/badvar.bin" >/dev/null 2>"$T_TMP/tools.err"
check_fails "a variable with a wrong name length: tpm2_eventlog gives up" test $? -eq 0
check_eq "attestctl replays it all the same (event data is not in the PCRs)" \
	"$(cat "${ovmf%.bin}.pcrs")" "$("$CTL" eventlog --replay "$T_TMP/badvar.bin")"
check "and names that event as a malformed variable" \
	grep -q '^event 4 pcr7 EV_EFI_VARIABLE_DRIVER_CONFIG: variable (malformed, 53 bytes)$' \
	<<<"$("$CTL" eventlog "$T_TMP/badvar.bin")"

# A log cut inside an event: both refuse; ours names the event and the byte.
head -c 1500 "$ovmf" >"$T_TMP/cut.bin"
tpm2_eventlog "$T_TMP/cut.bin" >/dev/null 2>&1
check_fails "a cut log: tpm2_eventlog refuses" test $? -eq 0
"$CTL" eventlog --replay "$T_TMP/cut.bin" >/dev/null 2>"$T_TMP/ours.err"
check_eq "a cut log: attestctl exits 1" 1 $?
check "and says which event, at which byte, and what is wrong" \
	grep -qE '^attestctl eventlog: ".*cut.bin" is not a valid event log: event [0-9]+ at byte [0-9]+: ' "$T_TMP/ours.err"
finish
