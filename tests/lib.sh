# Shared helpers for shell tests: results, free ports, and services stopped by PID.
# Source it; call `finish` last. Every service started here is stopped on exit.

T_PASSED=0 T_FAILED=0 T_SKIPPED=0
T_PIDS=()
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=${B:-build/out}
case $B in /*) ;; *) B=$TOP/$B ;; esac
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/attest-test.XXXXXX")

ok() { T_PASSED=$((T_PASSED + 1)); echo "ok - $*"; }
fail() { T_FAILED=$((T_FAILED + 1)); echo "FAIL - $*"; }
skip() { T_SKIPPED=$((T_SKIPPED + 1)); echo "skip - $*"; }
# check DESCRIPTION COMMAND...: passes when COMMAND exits 0.
check() { local d=$1; shift; if "$@"; then ok "$d"; else fail "$d"; fi; }
# check_fails DESCRIPTION COMMAND...: passes when COMMAND exits non-zero.
check_fails() { local d=$1; shift; if "$@"; then fail "$d"; else ok "$d"; fi; }
# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
	if [[ "$2" == "$3" ]]; then ok "$1"; else fail "$1: expected '$2', got '$3'"; fi
}

finish() {
	echo "$T_PASSED passed, $T_FAILED failed, $T_SKIPPED skipped"
	[[ $T_FAILED -eq 0 ]]
}

# free_port: prints a TCP port on 127.0.0.1 that nothing listens on (and, for swtpm, port+1 too).
free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$((20000 + RANDOM % 30000))
		if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null &&
			! (exec 3<>/dev/tcp/127.0.0.1/$((p + 1))) 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# track_pid PID: stop it (TERM, then KILL) when the test exits.
track_pid() { T_PIDS+=("$1"); }

stop_pid() {
	local pid=$1
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null || true
}

t_cleanup() {
	local pid
	for pid in "${T_PIDS[@]}"; do stop_pid "$pid"; done
	[[ -n ${KEEP_TMP:-} ]] || rm -rf "$T_TMP"
}
trap t_cleanup EXIT
trap 'exit 130' INT TERM

# wait_for_port PORT [SECONDS]
wait_for_port() {
	local port=$1 limit=${2:-10} i
	for ((i = 0; i < limit * 10; i++)); do
		(exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# swtpm_ca_init DIR: a swtpm local CA private to this test (never the machine's global one);
# the same as the VM's (vm/lib.sh). The CA's root certificate ends up in
# DIR/ca/swtpm-localca-rootca-cert.pem after the first swtpm_setup.
# shellcheck source=../vm/lib.sh
. "$TOP/vm/lib.sh"
swtpm_ca_init() { vm_swtpm_ca_init "$1"; }

# swtpm_manufacture STATEDIR CADIR: a TPM with sha1+sha256 banks and an EK certificate.
swtpm_manufacture() {
	local state=$1 ca=$2
	mkdir -p "$state"
	swtpm_setup --tpm2 --tpmstate "$state" --config "$ca/swtpm_setup.conf" \
		--pcr-banks sha1,sha256 --create-ek-cert --create-platform-cert \
		--overwrite >"$state/setup.log" 2>&1
}

# swtpm_start STATEDIR: starts a TCP swtpm on free ports; sets SWTPM_PORT, SWTPM_PID, TCTI.
# A port found free can be taken before swtpm binds it (other tests run alongside), and a
# loaded machine starts swtpm slowly: try a few ports, each with a generous wait.
swtpm_start() {
	local state=$1 attempt
	for attempt in 1 2 3 4 5; do
		SWTPM_PORT=$(free_port) || return 1
		swtpm socket --tpm2 --tpmstate dir="$state" \
			--server type=tcp,port="$SWTPM_PORT",bindaddr=127.0.0.1 \
			--ctrl type=tcp,port=$((SWTPM_PORT + 1)),bindaddr=127.0.0.1 \
			--flags not-need-init,startup-clear --pid file="$state/swtpm.pid" \
			--log file="$state/swtpm.log" &
		SWTPM_PID=$!
		track_pid "$SWTPM_PID"
		if wait_for_port "$SWTPM_PORT" 20 && kill -0 "$SWTPM_PID" 2>/dev/null; then
			TCTI="swtpm:host=127.0.0.1,port=$SWTPM_PORT"
			export TPM2TOOLS_TCTI=$TCTI
			return 0
		fi
		echo "swtpm_start: attempt $attempt on port $SWTPM_PORT failed; $(tail -n 2 "$state/swtpm.log" 2>/dev/null)" >&2
		stop_pid "$SWTPM_PID"
	done
	return 1
}
