#!/usr/bin/env bash
# Where the verifier's CPU goes, one attestation at a time: a verifier (SQLite) pinned to core 0,
# bench/loadgen's N agents on core 1 for S seconds, the verifier's own CPU per attestation from
# /proc over the timed phase (as `make bench`'s scale rows), and, with PERF=1, a perf profile
# of the verifier (DWARF call graphs) summarized as the share of its CPU under each step.
#
# Usage: bench/profile.sh [N [S]]          (1000 agents, 10 s)
#   PERF=1           record and summarize a profile (perf, Debian's linux-perf)
#   STAT=1           count, per attestation, the verifier's system calls (all, and fdatasync,
#                    pwrite64, futex, setsockopt, epoll_wait), context switches and CPU ms
#                    (perf stat's software events: they need no hardware counters, which a VM
#                    often lacks, and move far less than CPU time on a shared machine)
#   LG_EXTRA="..."   more loadgen options (--fresh-challenges 1: a challenge asked each round)
#   VERIFIER_EXTRA="..."  more verifier options (--threads 4)
#   BB=DIR           the build to use (build/bench/out, from `make bench`; or build/out)
# Not a test and not part of `make bench`: a tool for the next optimization. Output: one line
# `attestations N per_s R us_per_attestation C user_us U challenges_asked K`, a line
# `busy_threads T1,T2,...` (the clock ticks of each verifier thread that ran 50 ms or more in
# the timed phase: how the connections spread over the pool), the counts, then the profile.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source tests/lib.sh
N=${1:-1000} S=${2:-10}
BB=${BB:-build/bench/out}
for bin in verifier bench/loadgen; do
	[[ -x $BB/$bin ]] || { echo "missing $BB/$bin (make bench, or BB=build/out after make)" >&2; exit 2; }
done
W=$T_TMP
mkdir -p "$W/ca"
"$BB/bench/loadgen" --make-ca "$W/ca" >/dev/null || { echo "loadgen --make-ca failed" >&2; exit 1; }
read -ra vx <<<"${VERIFIER_EXTRA:-}"
read -ra lx <<<"${LG_EXTRA:-}"
port=$(free_port)
taskset -c 0 "$BB/verifier" --config /dev/null --listen "127.0.0.1:$port" --state-dir "$W/state" --store "sqlite:$W/v.db" \
	--ek-ca "$W/ca/ek-ca.pem" --policy "$W/ca/policy.json" --nonce-ttl 600 "${vx[@]}" \
	>"$W/v.out" 2>"$W/v.log" &
vpid=$!
track_pid "$vpid"
for _ in $(seq 1 100); do
	grep -q "^listening on" "$W/v.out" 2>/dev/null && break
	sleep 0.1
done
: >"$W/verdicts"
taskset -c 1 "$BB/bench/loadgen" --url "https://127.0.0.1:$port" --ca "$W/state/ca.pem" \
	--ek-ca-dir "$W/ca" --agents "$N" --seconds "$S" --verdict-log "$W/verdicts" \
	--warmup-rounds 1 --verifier-pid "$vpid" "${lx[@]}" >"$W/lg" 2>"$W/lg.err" &
lpid=$!
track_pid "$lpid"
# The timed phase follows enrollment and one round of every agent (loadgen --warmup-rounds).
while ! grep -q '^timed_phase' "$W/lg" 2>/dev/null && kill -0 "$lpid" 2>/dev/null; do sleep 0.05; done
read -r u0 s0 < <(awk '{ print $14, $15 }' "/proc/$vpid/stat")
# thread_ticks: "TID TICKS" of each verifier thread.
thread_ticks() {
	local t
	for t in /proc/"$vpid"/task/*; do echo "${t##*/} $(awk '{ print $14 + $15 }' "$t/stat")"; done | sort
}
thread_ticks >"$W/th0"
if [[ -n ${STAT:-} ]]; then
	ev=raw_syscalls:sys_enter,syscalls:sys_enter_fdatasync,syscalls:sys_enter_pwrite64
	ev+=,syscalls:sys_enter_futex,syscalls:sys_enter_setsockopt,syscalls:sys_enter_epoll_wait
	ev+=,context-switches,task-clock
	perf stat -x, -e "$ev" -p "$vpid" -o "$W/stat" &
	spid=$!
fi
if [[ -n ${PERF:-} ]]; then
	perf record -q -F 999 --call-graph dwarf,16384 -p "$vpid" -o "$W/perf.data" -- sleep $((S > 3 ? S - 2 : 1)) \
		>/dev/null 2>&1
fi
wait "$lpid" || { echo "loadgen failed: $(tail -n 2 "$W/lg.err")" >&2; exit 1; }
read -r u1 s1 < <(awk '{ print $14, $15 }' "/proc/$vpid/stat")
thread_ticks >"$W/th1"
if [[ -n ${STAT:-} ]]; then
	kill -INT "$spid"
	wait "$spid"
fi
hz=$(getconf CLK_TCK)
n=$(awk '$1 == "attestations" { print $2 }' "$W/lg")
awk -v n="$n" -v hz="$hz" -v u="$((u1 - u0))" -v s="$((s1 - s0))" \
	-v r="$(awk '$1 == "per_s" { print $2 }' "$W/lg")" \
	-v k="$(awk '$1 == "challenges" { print $2 }' "$W/lg")" \
	'BEGIN { printf "attestations %d per_s %.0f us_per_attestation %.0f user_us %.0f challenges_asked %d\n",
		n, r, (u + s) / hz * 1e6 / n, u / hz * 1e6 / n, k }'
echo "busy_threads $(join "$W/th0" "$W/th1" | awk '$3 - $2 >= 5 { printf "%s%d", n++ ? "," : "", $3 - $2 }')"
if [[ -n ${STAT:-} ]]; then
	# Per attestation; "syscalls" is every system call, task-clock the CPU in ms.
	awk -F, -v n="$n" '$1 ~ /^[0-9.]+$/ { e = $3; sub(/^.*:(sys_enter_)?/, "", e);
		if (e == "sys_enter") e = "syscalls"; printf "%s%s %.3f", m++ ? " " : "", e, $1 / n }
		END { print "" }' "$W/stat"
fi
if [[ -n ${PERF:-} ]]; then
	# The share of the verifier's samples under each step (inclusive; steps nest).
	perf report -i "$W/perf.data" --children --sort sym --stdio -g none 2>/dev/null |
		awk '$3 == "[.]" { sub(/%/, "", $1); print $1, $4 }' |
		grep -E ' (round_evidence|store_round_commit|store_round_context|attest_evaluate|quote_verify|evidence_parse|verdict_response_encode|next_challenge|handle_challenge|__GI_fdatasync|__GI___setsockopt|epoll_wait|__libc_recv|__libc_sendmsg|gnutls_record_send2|__pthread_cond_wait_common|replay_and_judge|policy_check)$' |
		awk '{ printf "%6.1f%%  %s\n", $1, $2 }'
fi
stop_pid "$vpid"
