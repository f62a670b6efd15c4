#!/usr/bin/env bash
# One attestd per state directory: a second daemon, or attestd --once, on the same directory is
# refused at once (exit 2, naming the first one's pid) and changes nothing; the first keeps
# running; once it is stopped (or killed: the kernel drops the lock) a new one starts on that
# directory.
# Nothing here needs a TPM or a verifier: the lock is taken before either is used, and the first
# attestd just keeps retrying an unreachable one.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

[[ -x $B/attestd ]] || { fail "missing $B/attestd (run make)"; finish; exit 1; }
W=$T_TMP
PORT=$(free_port) || { fail "no free port"; finish; exit 1; }
: >"$W/ima"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=none \
	-keyout "$W/ca.key" -out "$W/ca.pem" 2>/dev/null || { fail "a CA file"; finish; exit 1; }
# a TLS port where nothing listens, a TPM simulator port where nothing listens; exec, so that
# $! of `run &` is attestd itself
run() {
	exec "$B/attestd" --config /dev/null --verifier "https://127.0.0.1:$PORT" --ca "$W/ca.pem" \
		--agent-id lock-test \
		--tcti "swtpm:host=127.0.0.1,port=$PORT" --state-dir "$W/state" --event-log none \
		--ima-list "$W/ima"
}
run >"$W/a.out" 2>"$W/a.log" &
A=$!
track_pid "$A"
for ((i = 0; i < 100; i++)); do [[ -s $W/state/lock ]] && break; sleep 0.1; done
check_eq "the first attestd holds STATE_DIR/lock with its pid" "$A" "$(cat "$W/state/lock" 2>/dev/null)"
timeout 20 "$B/attestd" --config /dev/null --verifier "https://127.0.0.1:$PORT" --ca "$W/ca.pem" --agent-id other \
	--tcti "swtpm:host=127.0.0.1,port=$PORT" --state-dir "$W/state" --event-log none --ima-list "$W/ima" \
	>"$W/b.out" 2>"$W/b.log"
check_eq "a second attestd on the same state directory exits 2" 2 $?
check "it says which attestd holds it and what to do" \
	grep -q "another attestd (pid $A) uses state directory \"$W/state\": stop it, or give this one its own --state-dir" "$W/b.log"
check "the first keeps running" kill -0 "$A"
# attestd --once takes the lock too: refused at once, before the TPM or the verifier, naming
# the daemon, with no verdict printed.
t0=$SECONDS
timeout 20 "$B/attestd" --config /dev/null --once --verifier "https://127.0.0.1:$PORT" --ca "$W/ca.pem" \
	--agent-id lock-test --tcti "swtpm:host=127.0.0.1,port=$PORT" --state-dir "$W/state" \
	--event-log none --ima-list "$W/ima" >"$W/once.out" 2>"$W/once.log"
check_eq "attestd --once on the same state directory exits 2" 2 $?
check "--once says which attestd holds it" \
	grep -q "another attestd (pid $A) uses state directory \"$W/state\": stop it, or give this one its own --state-dir" "$W/once.log"
check "--once was refused at once (within 5 s)" test $((SECONDS - t0)) -lt 5
check_eq "--once printed no verdict" "" "$(cat "$W/once.out")"
check "the first still runs after the --once" kill -0 "$A"
check_eq "the lock still names the first" "$A" "$(cat "$W/state/lock")"
kill -KILL "$A"
wait "$A" 2>/dev/null
run >"$W/c.out" 2>"$W/c.log" &
C=$!
track_pid "$C"
for ((i = 0; i < 100; i++)); do [[ $(cat "$W/state/lock" 2>/dev/null) == "$C" ]] && break; sleep 0.1; done
check_eq "after the first was killed, a new one takes the directory" "$C" "$(cat "$W/state/lock")"
check "and runs" kill -0 "$C"
finish
