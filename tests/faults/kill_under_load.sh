#!/usr/bin/env bash
# The verifier killed with SIGKILL under load and restarted on the same state directory.
# bench/loadgen plays AGENTS software agents and logs every verdict it receives (time, agent,
# verdict_id) as it receives it. The verifier is killed KILLS times while rounds are in flight
# and restarted at once. Afterwards every verdict acknowledged to an agent must be in the
# store under that agent (durable before acknowledged), the store passes integrity_check, and
# every agent got verdicts again after the last restart without help (the same loadgen run
# keeps going; nothing is re-enrolled), all of them trusted.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

LOADGEN=$B/bench/loadgen
VERIFIER=$B/verifier
need_built "$LOADGEN" "$VERIFIER"
AGENTS=40 THREADS=4 SECS=26 KILLS=2

W=$T_TMP
"$LOADGEN" --make-ca "$W" || { fail "loadgen --make-ca"; finish; exit 1; }
vstart() {
	start_verifier "$W/state" --ek-ca "$W/ek-ca.pem" --policy "$W/policy.json"
}
now_ms() { date +%s%3N; }
lines() { wc -l <"$W/verdicts" 2>/dev/null || echo 0; }

check "verifier starts" vstart
: >"$W/verdicts"
"$LOADGEN" --url "$URL" --ca "$CA" --ek-ca-dir "$W" \
	--agents "$AGENTS" --threads "$THREADS" --seconds "$SECS" --verdict-log "$W/verdicts" \
	--max-errors 100000 --error-pause-ms 50 >"$W/lg.out" 2>"$W/lg.err" &
LPID=$!
track_pid "$LPID"

: >"$W/kills"
for k in $(seq 1 "$KILLS"); do
	# Under load: at least 150 more verdicts since the last restart, at most 20 s of waiting.
	want=$(($(lines) + 150))
	for _ in $(seq 1 200); do
		(($(lines) >= want)) && break
		kill -0 "$LPID" 2>/dev/null || break
		sleep 0.1
	done
	check "kill $k: under load ($(lines) verdicts so far)" test "$(lines)" -ge "$want"
	kill_ms=$(now_ms)
	kill -KILL "$VPID"
	wait "$VPID" 2>/dev/null
	check "kill $k: verifier restarts on the same state" vstart
	echo "$kill_ms $(now_ms)" >>"$W/kills"
done
wait "$LPID"
echo "loadgen exit $?: $(tr '\n' ' ' <"$W/lg.out")"
kv() { awk -v k="$1" '$1 == k { print $2; exit }' "$W/lg.out"; }

read -r first_kill _ <"$W/kills"
read -r _ last_up <<<"$(tail -n 1 "$W/kills")"
before=$(awk -v t="$first_kill" '$1 < t' "$W/verdicts" | wc -l)
last_second=0
while read -r k _; do
	last_second=$((last_second + $(awk -v t="$k" '$1 < t && $1 >= t - 1000' "$W/verdicts" | wc -l)))
done <"$W/kills"
check "verdicts acknowledged before the first kill ($before)" test "$before" -gt 0
check "verdicts acknowledged within 1 s before a kill ($last_second): the kills hit a busy verifier" \
	test "$last_second" -gt 0
resumed=$(awk -v t="$last_up" '$1 > t { print $2 }' "$W/verdicts" | sort -u | wc -l)
check_eq "every agent got verdicts again after the last restart, by itself" "$AGENTS" "$resumed"
check_eq "no untrusted verdict across the kills" 0 "$(kv untrusted)"
check "the kills were felt: $(kv errors) failed rounds, survived" test "$(kv errors)" -gt 0

stop_pid "$VPID"
python3 - "$W/state/verifier.db" "$W/verdicts" >"$W/dbcheck" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
print("integrity", db.execute("PRAGMA integrity_check").fetchone()[0])
stored = dict(db.execute("SELECT id, agent FROM verdicts"))
acked = missing = wrong = 0
for line in open(sys.argv[2]):
    _, agent, vid = line.split()
    acked += 1
    if int(vid) not in stored:
        missing += 1
    elif stored[int(vid)] != agent:
        wrong += 1
print("acked", acked)
print("missing", missing)
print("wrong_agent", wrong)
print("stored", len(stored))
PY
cat "$W/dbcheck"
dbkv() { awk -v k="$1" '$1 == k { print $2; exit }' "$W/dbcheck"; }
check_eq "store passes integrity_check after the kills" ok "$(dbkv integrity)"
check_eq "every acknowledged verdict is in the store ($(dbkv acked) acknowledged)" 0 "$(dbkv missing)"
check_eq "every acknowledged verdict is stored under its agent" 0 "$(dbkv wrong_agent)"
# Stored but never acknowledged: only rounds in flight at a kill (one per connection per kill).
unacked=$(($(dbkv stored) - $(dbkv acked)))
check "verdicts stored but not acknowledged ($unacked) at most one per connection per kill" \
	test "$unacked" -ge 0 -a "$unacked" -le $((KILLS * THREADS))
finish
