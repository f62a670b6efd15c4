#!/usr/bin/env bash
# attestd's cost per round against the length of its IMA list: for each N given, a list of N
# entries (tools/imagen, ima-ng, sha256) that a fresh swtpm's PCR 10 follows (tpm_pcr_extend
# --script), a verifier whose policy lists them all, and attestd as a daemon with --ima-list,
# --interval 1 and --watch 0. Once its first verdict covers the whole list, ROUNDS heartbeat
# rounds (nothing new measured) are timed: attestd's CPU per round (its own, from
# /proc/PID/schedstat, in nanoseconds) and its memory (VmRSS, VmHWM).
#
#   bench/agent_cost.sh N...      (environment: B, the build's out directory; ROUNDS [30])
#
# Prints `key value` lines per N: agent_N_extend_s, agent_N_first_round_s,
# agent_N_cpu_us_per_round, agent_N_rss_kib, agent_N_hwm_kib; exit 1 when a step fails.
# The guest's own list is not measured here: the kernel's file is walked from its head on
# every read (seq_file), a cost this host list does not have.
set -uo pipefail
# shellcheck source=../tests/lib.sh
source "$(dirname "$0")/../tests/lib.sh"
ROUNDS=${ROUNDS:-30}
W=$T_TMP
for t in swtpm swtpm_setup; do
	command -v $t >/dev/null || { echo "agent_cost: $t not installed" >&2; exit 1; }
done
swtpm_ca_init "$W/ca"

# cpu_ns PID: the CPU time the process's main thread ran, in nanoseconds.
cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }
status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
# verdicts_at FILE OFFSET: the trusted verdicts that covered the list up to OFFSET entries.
verdicts_at() { grep -c "verdict trusted id=[0-9]* next_offset=$2\$" "$1"; }

rc=0
for n in "$@"; do
	d=$W/n$n
	mkdir -p "$d"
	"$B/tools/imagen" --entries "$n" --template ima-ng --hash sha256 --zero-boot-pcrs --seed 7 \
		--out "$d/list" --tpm2-extend-script "$d/ext" >/dev/null || { rc=1; continue; }
	total=$(wc -l <"$d/ext")
	swtpm_manufacture "$d/tpm" "$W/ca" || { echo "agent_cost: swtpm_setup" >&2; rc=1; continue; }
	cat "$W/ca/ca/issuercert.pem" "$W/ca/ca/swtpm-localca-rootca-cert.pem" >"$d/ek-ca.pem"
	start_swtpm "$d/tpm" || { rc=1; continue; }
	t0=$EPOCHREALTIME
	"$B/tools/tpm_pcr_extend" --tcti "$TCTI" --script "$d/ext" >/dev/null || { rc=1; continue; }
	echo "agent_${n}_extend_s $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')"
	"$B/attestctl" policy-learn "$d/list" --out "$d/policy.json" 2>/dev/null || { rc=1; continue; }
	# a policy of N digests: loading 1,000,000 takes longer than the default 10 s to listen
	VERIFIER_START_TRIES=1200 start_verifier "$d/verifier" --ek-ca "$d/ek-ca.pem" --policy "$d/policy.json" || { rc=1; continue; }
	t0=$EPOCHREALTIME
	start_agent bench-agent "$d/agent" --ima-list "$d/list" --interval 1 --watch 0
	for ((i = 0; i < 6000; i++)); do
		(($(verdicts_at "$ALOG" "$total") >= 1)) && break
		kill -0 "$APID" 2>/dev/null || break
		sleep 0.1
	done
	if (($(verdicts_at "$ALOG" "$total") < 1)); then
		echo "agent_cost: $n entries: no trusted verdict over the whole list: $(tail -n 2 "$ALOG")" >&2
		rc=1
		stop_pid "$APID"
		stop_pid "$VPID"
		stop_pid "$SWTPM_PID"
		continue
	fi
	echo "agent_${n}_first_round_s $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')"
	v0=$(verdicts_at "$ALOG" "$total") c0=$(cpu_ns "$APID")
	for ((i = 0; i < ROUNDS * 30; i++)); do
		(($(verdicts_at "$ALOG" "$total") >= v0 + ROUNDS)) && break
		sleep 0.1
	done
	c1=$(cpu_ns "$APID") v1=$(verdicts_at "$ALOG" "$total")
	if ((v1 - v0 < ROUNDS)); then
		echo "agent_cost: $n entries: $((v1 - v0)) of $ROUNDS rounds: $(tail -n 2 "$ALOG")" >&2
		rc=1
	else
		echo "agent_${n}_cpu_us_per_round $(awk -v a="$c0" -v b="$c1" -v r=$((v1 - v0)) 'BEGIN { printf "%.0f", (b - a) / r / 1000 }')"
		echo "agent_${n}_rss_kib $(status_kib "$APID" VmRSS)"
		echo "agent_${n}_hwm_kib $(status_kib "$APID" VmHWM)"
	fi
	stop_pid "$APID"
	stop_pid "$VPID"
	stop_pid "$SWTPM_PID"
done
rm -rf "$T_TMP"
exit $rc
