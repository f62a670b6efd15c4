#!/usr/bin/env bash
# Soak: SOAK_AGENTS software agents (bench/loadgen) attest against one verifier for SOAK_SECONDS.
# Passes when every round came back trusted with no error, the store holds exactly the verdicts
# the agents received, and the verifier's VmRSS is flat after warm-up: the first sample taken
# at or after SOAK_WARMUP seconds and the last sample differ by less than SOAK_RSS_PCT percent.
# VmRSS is sampled from /proc/PID/status every SOAK_SAMPLE seconds.
#
#   nice -n 10 tests/soak/soak.sh            # 1,000 agents, 10 minutes (not in `make test`)
#   SOAK_SECONDS=60 SOAK_AGENTS=100 tests/soak/soak.sh
#
# Other knobs: SOAK_THREADS (loadgen connections, 8), SOAK_ENTRIES (new IMA entries per round,
# 2), SOAK_REPORT (a markdown summary is written there too). Results of full runs are kept in
# tests/soak/RESULTS.md.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

SECS=${SOAK_SECONDS:-600}
AGENTS=${SOAK_AGENTS:-1000}
WARMUP=${SOAK_WARMUP:-60}
SAMPLE=${SOAK_SAMPLE:-10}
PCT=${SOAK_RSS_PCT:-5}
THREADS=${SOAK_THREADS:-8}
ENTRIES=${SOAK_ENTRIES:-2}
REPORT=${SOAK_REPORT:-$T_TMP/report.md}
LOADGEN=$B/bench/loadgen
VERIFIER=$B/verifier
for bin in "$LOADGEN" "$VERIFIER"; do
	[[ -x $bin ]] || { fail "missing $bin (run make)"; finish; exit 1; }
done
if ((SECS < 1 || SECS > 3600 || WARMUP >= SECS)); then
	fail "SOAK_SECONDS must be 1..3600 and more than SOAK_WARMUP ($SECS, $WARMUP)"
	finish
	exit 1
fi

W=$T_TMP
"$LOADGEN" --make-ca "$W" || { fail "loadgen --make-ca"; finish; exit 1; }
up=no
start_verifier "$W/state" --ek-ca "$W/ek-ca.pem" --policy "$W/policy.json" && up=yes
check_eq "verifier starts" yes "$up"
[[ $up == yes ]] || { finish; exit 1; }

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
started=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
commit=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null)
echo "soak: $AGENTS agents, $THREADS connections, ${SECS}s, $ENTRIES entries per round; RSS every ${SAMPLE}s"
"$LOADGEN" --url "$URL" --ca "$CA" --ek-ca-dir "$W" \
	--agents "$AGENTS" --threads "$THREADS" --seconds "$SECS" --entries-per-round "$ENTRIES" \
	--verifier-pid "$VPID" >"$W/lg.out" 2>"$W/lg.err" &
LPID=$!
track_pid "$LPID"

# Samples from the end of enrollment (loadgen prints enroll_s then): the clock of the soak.
for _ in $(seq 1 6000); do
	grep -q '^enroll_s' "$W/lg.out" 2>/dev/null && break
	kill -0 "$LPID" 2>/dev/null || break
	sleep 0.1
done
: >"$W/rss"
t0=$SECONDS
deadline=$((SECS + 300))
while kill -0 "$LPID" 2>/dev/null && ((SECONDS - t0 <= deadline)); do
	r=$(rss "$VPID")
	[[ -n $r ]] && echo "$((SECONDS - t0)) $r" | tee -a "$W/rss"
	for _ in $(seq 1 $((SAMPLE * 10))); do
		kill -0 "$LPID" 2>/dev/null || break
		sleep 0.1
	done
done
wait "$LPID"
lrc=$?
kv() { awk -v k="$2" '$1 == k { print $2; exit }' "$1"; }
att=$(kv "$W/lg.out" attestations) errs=$(kv "$W/lg.out" errors) untr=$(kv "$W/lg.out" untrusted)
check_eq "loadgen exits 0 (every round trusted, no error)" 0 "$lrc"
[[ $lrc -eq 0 ]] || tail -n 5 "$W/lg.err"
check_eq "no errors" 0 "${errs:-missing}"
check_eq "no untrusted verdicts" 0 "${untr:-missing}"
check "attestations made" test "${att:-0}" -gt 0
check "verifier alive at the end" kill -0 "$VPID"

# RSS: first sample at or after warm-up against the last one.
first=$(awk -v w="$WARMUP" '$1 >= w { print; exit }' "$W/rss")
last=$(tail -n 1 "$W/rss")
nsamples=$(wc -l <"$W/rss")
min=$(sort -k2,2n "$W/rss" | awk 'NR == 1 { print $2 }')
max=$(sort -k2,2n "$W/rss" | tail -n 1 | cut -d' ' -f2)
if [[ -n $first && $first != "$last" ]]; then
	growth=$(awk -v a="${first#* }" -v b="${last#* }" 'BEGIN { printf "%.2f", 100 * (b - a) / a }')
	check "verifier RSS flat after warm-up: ${first#* } KiB at ${first% *}s -> ${last#* } KiB at ${last% *}s ($growth% < $PCT%)" \
		awk -v g="$growth" -v p="$PCT" 'BEGIN { exit !(g < p) }'
else
	growth='?'
	fail "not enough RSS samples after the ${WARMUP}s warm-up ($nsamples samples)"
fi

stop_pid "$VPID"
stored=$(python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
print(db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0])' "$W/state/verifier.db" 2>&1)
check_eq "the store holds every verdict received" "${att:-?}" "$stored"

{
	echo "## Run of $started"
	echo
	echo "- command: \`SOAK_SECONDS=$SECS SOAK_AGENTS=$AGENTS tests/soak/soak.sh\` at niceness $(nice) (B=$B, commit $commit at the start)"
	echo "- $AGENTS agents, $THREADS keep-alive HTTPS connections, $ENTRIES new entries per round, enrollment $(kv "$W/lg.out" enroll_s) s"
	echo "- attestations: $att in $(kv "$W/lg.out" seconds) s ($(kv "$W/lg.out" per_s)/s), p50 $(kv "$W/lg.out" p50_ms) ms, p99 $(kv "$W/lg.out" p99_ms) ms"
	echo "- errors: $errs, untrusted: $untr; verdicts in the store: $stored"
	echo "- verifier CPU $(kv "$W/lg.out" verifier_cpu_pct)% of a core, loadgen CPU $(kv "$W/lg.out" loadgen_cpu_pct)%"
	echo "- VmRSS ($nsamples samples every ${SAMPLE}s): min $min KiB, max $max KiB; after the ${WARMUP}s warm-up ${first#* } KiB (at ${first% *}s), last ${last#* } KiB (at ${last% *}s): growth $growth% (limit $PCT%)"
	echo "- VmRSS samples (s KiB): $(awk '{ printf "%s%ss %s", (NR > 1 ? ", " : ""), $1, $2 }' "$W/rss")"
	echo "- result: $T_PASSED passed, $T_FAILED failed"
} >"$REPORT"
cat "$REPORT"
finish
