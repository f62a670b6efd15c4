#!/usr/bin/env bash
# Attack matrix, connections (issue 15): a client holds the verifier's connections. From
# another address (127.0.0.2: another client to the verifier on Linux's loopback): 1,100 idle
# TCP connections; 20 requests whose headers never end (slowloris: one header line every 2 s);
# 20 bodies trickled a byte every 2 s. A legitimate agent (127.0.0.1) is served during each
# (a trusted round within 5 s) and the idle ones cost the verifier no CPU while they wait;
# the attacker's connections are limited per address (64) and
# each is closed at its deadline (headers within 10 s, a body within 10 s plus its length at
# 1 MiB/s), not kept while it trickles (an idle timeout would keep them forever).
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

CF=$B/tools/connflood
[[ -x $CF ]] || { fail "missing $CF (run make)"; finish; exit 1; }
# The deadlines with room for a loaded machine (the sweep runs every 250 ms).
HELD_MAX=16

start_verifier "$W/v" "${VARGS[@]}" || { fail "verifier starts"; finish; exit 1; }
agent a || { finish; exit 1; }
ms() { date +%s%3N; }
# served DESC: a trusted round of agent a, in less than 5 s.
served() {
	local t0 dt
	t0=$(ms)
	sa round "$W/a-a" --append "$APP1"
	dt=$(($(ms) - t0))
	check "$1: a legitimate round is trusted in ${dt} ms (< 5000)" \
		test "$R_STATUS $(verdict)" = "200 trusted" -a "$dt" -lt 5000
}
val() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
# CPU time the verifier used so far, in clock ticks (1/100 s): its own, whatever else runs.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$VPID/stat"; }
kib() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$VPID/status"; }
# rss DESC: the verifier's peak RSS so far (SECURITY.md gives these figures), under 64 MiB.
rss() {
	local hwm
	hwm=$(kib VmHWM)
	check_rss "$1: the verifier's peak RSS is $((hwm / 1024)) MiB (< 64 MiB; $((base_kib / 1024)) MiB before)" \
		"$hwm" 65536
}

# --- 1,100 idle connections -------------------------------------------------------------------
base_kib=$(kib VmHWM)
"$CF" idle "127.0.0.1:$VPORT" --from 127.0.0.2 --count 1100 --seconds 15 >"$W/idle.out" &
cf=$!
track_pid "$cf"
check "the attacker opened its connections" wait_line "$W/idle.out" '^opened' 30
# Connections waiting for a TLS ClientHello cost nothing while they wait (libmicrohttpd's
# MHD_USE_TURBO spun on each: 40% of a core for one).
t0=$(cpu_ticks) && sleep 3 && t1=$(cpu_ticks)
check "the verifier idles while the attacker's connections wait ($((t1 - t0)) of 300 ticks in 3 s, < 30)" \
	test $((t1 - t0)) -lt 30
served "during 1,100 idle connections"
wait "$cf"
check_eq "all 1,100 closed by the verifier within 15 s (64 at their header deadline, the others past the per-address limit)" \
	"1100 0" "$(val "$W/idle.out" closed_by_server) $(val "$W/idle.out" still_open)"
rss "1,100 idle connections"

# trickle MODE WHAT DEADLINE: 20 connections of connflood MODE from the other address, a line
# or a byte every 2 s for 30 s; a legitimate round is served meanwhile; every one is closed by
# the verifier at its deadline.
trickle() {
	local mode=$1 what=$2 deadline=$3 cf held
	"$CF" "$mode" "127.0.0.1:$VPORT" --from 127.0.0.2 --count 20 --every 2 --seconds 30 \
		>"$W/$mode.out" &
	cf=$!
	track_pid "$cf"
	sleep 2
	served "during 20 $what"
	wait "$cf"
	check_eq "every one of the $what closed by the verifier" "20 0" \
		"$(val "$W/$mode.out" closed_by_server) $(val "$W/$mode.out" still_open)"
	held=$(val "$W/$mode.out" held_max_s)
	check "none held past its deadline (${held:-?} s, $deadline, < $HELD_MAX)" \
		awk -v h="${held:-99}" -v m="$HELD_MAX" 'BEGIN { exit !(h < m) }'
	rss "$what"
}

# --- slowloris: headers that never end; a body trickled a byte at a time ---------------------
trickle slowloris "slowloris connections" "10 s for headers"
trickle slowbody "trickled bodies" "10 s for a 1,000-byte body"
served "after the attacks"
finish
