#!/usr/bin/env bash
# Connections opened together are served by different pool threads (verifier/http/acceptor.h):
# bench/loadgen's 8 keep-alive connections, opened at once, against a verifier with 8 pool
# threads, then every thread's CPU time (/proc/PID/task). libmicrohttpd's own accepting gave
# such connections to whichever pool thread woke first, up to ten in a row: 1 to 3 threads
# served all 8 connections, their requests one after another, and each round committed alone.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

LG=$B/bench/loadgen
need_built "$LG" "$B/verifier"
W=$T_TMP
mkdir -p "$W/ca"
"$LG" --make-ca "$W/ca" >/dev/null || { fail "loadgen --make-ca"; finish; exit 1; }
check "verifier starts with 8 pool threads" \
	start_verifier "$W/v" --ek-ca "$W/ca/ek-ca.pem" --policy "$W/ca/policy.json" --threads 8 ||
	{ finish; exit 1; }
check "8 agents attest over 8 connections for 3 s" \
	"$LG" --url "$URL" --ca "$CA" --ek-ca-dir "$W/ca" --agents 8 --threads 8 --seconds 3 \
	>"$W/lg" 2>"$W/lg.err"
# busy: the pool threads that ran for 50 ms or more (5 clock ticks at 100 Hz).
busy=0 pool=0
for t in /proc/"$VPID"/task/*; do
	[[ $(cat "$t/comm" 2>/dev/null) == MHD-worker* ]] || continue
	pool=$((pool + 1))
	(($(awk '{ print $14 + $15 }' "$t/stat") >= 5)) && busy=$((busy + 1))
done
check_eq "the pool has 8 threads" 8 "$pool"
# The thread of a connection is its descriptor modulo 8 (MHD_add_connection()): descriptors the
# verifier opens in between may put two connections on one thread, not most of them.
check "at least 6 of the 8 pool threads served the 8 connections (busy: $busy)" test "$busy" -ge 6
finish
