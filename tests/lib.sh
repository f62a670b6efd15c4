# shellcheck shell=bash
# The one library of the shell tests (tests/vm/common.bash, tests/e2e/common.bash,
# tests/install/lib.bash, tests/lib/softagent.bash and tests/lib/webdriver.bash build on it):
# results, free ports, waiting for a condition, the services a test starts (swtpm, verifier,
# attestd: start_swtpm, start_verifier, start_agent; PostgreSQL), stopping them by PID, the
# operator's calls to the verifier (op, ctl), and the guest kernel of the VM tests. Source it;
# call `finish` last. Every service started here is stopped on exit.

T_PASSED=0 T_FAILED=0 T_SKIPPED=0
T_PIDS=()
T_PG_PIDS=()
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=${B:-build/out}
case $B in /*) ;; *) B=$TOP/$B ;; esac
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/attest-test.XXXXXX")
# attestctl's defaults from an operator's shell would point a test at a production verifier.
unset ATTEST_VERIFIER ATTEST_CA ATTEST_TOKEN_FILE

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

# need_cmds CMD...: the test is skipped (its result line printed, exit 0) when a command is not
# installed.
need_cmds() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || { skip "$t not installed"; finish; exit; }
	done
}
# need_built FILE...: the test fails (exit 1) when a program of the build is missing.
need_built() {
	local bin
	for bin in "$@"; do
		[[ -x $bin ]] || { fail "missing $bin (run make)"; finish; exit 1; }
	done
}

# free_port: prints an even TCP port P on 127.0.0.1 such that nothing listens on P or P+1 (swtpm
# takes both), and reserves both for this test until it exits. The port is below the ephemeral
# range: a port in that range can be the local end of a client connection, or of one in
# TIME_WAIT, which a probe cannot see (it answers "refused") but which makes the bind fail.
# The reservation is a lock on $T_PORTS/P held by a helper that ends with this test, so tests
# running side by side (`make -j`, other clones) never pick the same port between the probe
# and the bind.
T_PORTS=${TMPDIR:-/tmp}/attest-test-ports
free_port() {
	local p lo fd
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
	((lo > 12000 && lo <= 32768)) || lo=32768
	mkdir -p "$T_PORTS" 2>/dev/null
	for _ in $(seq 1 200); do
		p=$(((10000 + RANDOM % (lo - 10002)) / 2 * 2))
		(exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null && continue
		(exec 3<>/dev/tcp/127.0.0.1/$((p + 1))) 2>/dev/null && continue
		if [[ ! -w $T_PORTS ]]; then # another user's directory: the port goes unreserved
			echo "$p"
			return 0
		fi
		exec {fd}>>"$T_PORTS/$p" || continue
		if ! flock -n "$fd"; then
			exec {fd}>&-
			continue
		fi
		# The helper inherits the locked descriptor and lives as long as this test's shell.
		tail --pid=$$ -f /dev/null </dev/null >/dev/null 2>&1 &
		exec {fd}>&-
		echo "$p"
		return 0
	done
	return 1
}

# track_pid PID: stop it (TERM, then KILL) when the test exits.
track_pid() { T_PIDS+=("$1"); }

# agent_between_rounds PID LOG [TEXT]: SIGSTOPs the attestd PID at a moment the last line of
# its LOG holds TEXT (default "verdict ": a round ended), so that it holds no TPM connection
# (swtpm serves one at a time: a tpm2 tool run while it is stopped in a round would wait
# forever). The caller sends SIGCONT. 1 if no such moment came within 60 s.
agent_between_rounds() {
	local pid=$1 log=$2 text=${3:-verdict } t0=$SECONDS
	while ((SECONDS - t0 < 60)); do
		kill -STOP "$pid"
		[[ $(tail -n 1 "$log") == *"$text"* ]] && return 0
		kill -CONT "$pid"
		sleep 0.05
	done
	return 1
}

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
	# PostgreSQL last: its clients are gone by now.
	for pid in "${T_PG_PIDS[@]}"; do stop_pg_pid "$pid"; done
	[[ -n ${KEEP_TMP:-} ]] || rm -rf "$T_TMP"
}
trap t_cleanup EXIT
trap 'exit 130' INT TERM

# wait_until SECONDS COMMAND...: runs COMMAND up to SECONDS*10 times, 0.1 s apart, until it
# succeeds: 0, or 1 when it never did. The bound counts tries, not wall-clock time, so a slow
# COMMAND on a loaded machine still gets every try.
wait_until() {
	local tries=$(($1 * 10)) i
	shift
	for ((i = 0; i < tries; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# wait_line FILE REGEX SECONDS: until FILE (perhaps not there yet) has a line matching the
# extended regular expression.
wait_line() { wait_until "$3" grep -sqE -- "$2" "$1"; }

port_open() { (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null; }
# wait_for_port PORT [SECONDS]: until something listens on 127.0.0.1:PORT.
wait_for_port() { wait_until "${2:-10}" port_open "$1"; }

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

# start_tpm_with_ek_ca DIR: a swtpm with an EK certificate from a CA private to this test
# (swtpm_ca_init DIR/ca, swtpm_manufacture DIR/tpm), started (start_swtpm); DIR/ek-ca.pem holds
# the CA chain a verifier's --ek-ca needs. Returns non-zero with a message when a step fails.
start_tpm_with_ek_ca() {
	local dir=$1
	swtpm_ca_init "$dir/ca"
	swtpm_manufacture "$dir/tpm" "$dir/ca" || { cat "$dir/tpm/setup.log" >&2; return 1; }
	cat "$dir/ca/ca/issuercert.pem" "$dir/ca/ca/swtpm-localca-rootca-cert.pem" >"$dir/ek-ca.pem"
	start_swtpm "$dir/tpm"
}

# A service keeps its port across restarts: the port is remembered per state directory.
declare -A T_SERVICE_PORT=()

# swtpm_with_ek_ca DIR: a test CA (DIR/ca), a TPM manufactured with an EK certificate from it
# (DIR/tpm), DIR/ek-ca.pem (the chain a verifier's --ek-ca takes), and that swtpm started
# (start_swtpm's variables). Says what failed and returns non-zero then.
swtpm_with_ek_ca() {
	swtpm_ca_init "$1/ca"
	swtpm_manufacture "$1/tpm" "$1/ca" || { fail "swtpm_setup"; cat "$1/tpm/setup.log"; return 1; }
	cat "$1/ca/ca/issuercert.pem" "$1/ca/ca/swtpm-localca-rootca-cert.pem" >"$1/ek-ca.pem"
	start_swtpm "$1/tpm" || { fail "swtpm start"; return 1; }
}

# start_swtpm STATEDIR: starts a TCP swtpm on STATEDIR (port and port+1; the same ports as the
# last start on STATEDIR, else free ones) and waits until it accepts connections; log in
# STATEDIR/swtpm.log. Sets SWTPM_PORT, SWTPM_PID (stopped when the test exits), TCTI and
# TPM2TOOLS_TCTI. A loaded machine starts swtpm slowly: the wait is generous (20 s).
start_swtpm() {
	local state=$1
	SWTPM_PORT=${T_SERVICE_PORT[$state]:-}
	if [[ -z $SWTPM_PORT ]]; then
		SWTPM_PORT=$(free_port) || { echo "start_swtpm: no free port" >&2; return 1; }
		T_SERVICE_PORT[$state]=$SWTPM_PORT
	fi
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
	echo "start_swtpm: no swtpm on port $SWTPM_PORT; $(tail -n 2 "$state/swtpm.log" 2>/dev/null)" >&2
	stop_pid "$SWTPM_PID"
	return 1
}

# tpm_follow_eventlog LOG: extends the PCRs of the TPM at $TPM2TOOLS_TCTI with every measured
# event of the firmware event log LOG (tpm2_pcrextend, all the event's banks), so the TPM holds
# what a machine that booted so would hold. Uses $B/attestctl eventlog to read the log.
tpm_follow_eventlog() {
	local args
	args=$("$B/attestctl" eventlog "$1" | awk '
		/^event / { if (arg != "") print arg; arg = ""; pcr = substr($3, 4);
			    skip = ($4 == "EV_NO_ACTION:"); next }
		/^  [a-z0-9]+ [0-9a-f]+$/ { if (!skip) arg = (arg == "" ? pcr ":" : arg ",") $1 "=" $2 }
		END { if (arg != "") print arg }') || return 1
	# shellcheck disable=SC2086 # one PCR:alg=digest,... argument per event
	tpm2_pcrextend $args >/dev/null
}

# start_verifier STATEDIR [ARGS...]: starts $B/verifier with --state-dir STATEDIR on
# 127.0.0.1 (the port of the last start on STATEDIR, else a free one) and the other ARGS as
# given, and waits until it prints its `listening on` line. Its stdout goes to STATEDIR.out
# (emptied at each start, so a restart is never mistaken for the last one), its stderr is
# appended to STATEDIR.log. Sets VPORT, URL, CA (STATEDIR/ca.pem), VPID (stopped when the test
# exits), VOUT and VLOG. VERIFIER_WRAPPER runs it under a tool, e.g. "valgrind
# --error-exitcode=99 --leak-check=full --log-file=/tmp/vg.%p" (then up to 60 s to start);
# VERIFIER_START_TRIES sets the tries, 0.1 s apart (default 100: 10 s).
start_verifier() {
	local state=$1 tries=${VERIFIER_START_TRIES:-100} wrap i
	shift
	read -ra wrap <<<"${VERIFIER_WRAPPER:-}"
	((${#wrap[@]})) && [[ -z ${VERIFIER_START_TRIES:-} ]] && tries=600
	VPORT=${T_SERVICE_PORT[$state]:-}
	if [[ -z $VPORT ]]; then
		VPORT=$(free_port) || { echo "start_verifier: no free port" >&2; return 1; }
		T_SERVICE_PORT[$state]=$VPORT
	fi
	URL=https://127.0.0.1:$VPORT
	CA=$state/ca.pem
	VOUT=$state.out VLOG=$state.log
	: >"$VOUT"
	"${wrap[@]}" "$B/verifier" --config /dev/null --listen "127.0.0.1:$VPORT" --state-dir "$state" "$@" \
		>>"$VOUT" 2>>"$VLOG" &
	VPID=$!
	track_pid "$VPID"
	for ((i = 0; i < tries; i++)); do
		grep -q "^listening on https://127.0.0.1:$VPORT\$" "$VOUT" 2>/dev/null && return 0
		kill -0 "$VPID" 2>/dev/null || break
		sleep 0.1
	done
	stop_pid "$VPID"
	tail -n 5 "$VLOG" 2>/dev/null | sed 's/^/   verifier: /' >&2
	return 1
}

# The operator's calls to the verifier start_verifier started last (URL, CA), with the
# operator token of the test's token file, $W/token (W: the test's work directory).
# op PATH: an operator GET, body only.
op() { curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" "$URL$1"; }
# ctl ARGS...: attestctl with the verifier, its CA and the token.
ctl() { "$B/attestctl" "$@" --verifier "$URL" --ca "$CA" --token-file "$W/token"; }

# stop_verifier: stops the verifier start_verifier started last (SIGTERM, then SIGKILL; see
# stop_pid) and reaps it; VPID is emptied. A later start_verifier on the same state directory
# takes the same port again.
stop_verifier() {
	[[ -n ${VPID:-} ]] || return 0
	stop_pid "$VPID"
	wait "$VPID" 2>/dev/null
	VPID=
}

# start_agent ID STATEDIR [ARGS...]: starts $B/attestd in daemon mode as agent ID with state
# directory STATEDIR against $URL (trusting $CA) on the TPM at $TCTI, ARGS passed through
# (--ima-list, --interval, ...; the host's own firmware log is never sent: --event-log none,
# which a later --event-log overrides). Its stdout goes to STATEDIR.out, its stderr to STATEDIR.log.
# Sets APID (stopped when the test exits), AOUT and ALOG. It does not wait: attestd logs what
# it does, and tests wait for the lines they expect.
start_agent() {
	local id=$1 state=$2
	shift 2
	AOUT=$state.out ALOG=$state.log
	"$B/attestd" --config /dev/null --verifier "$URL" --ca "$CA" --agent-id "$id" --tcti "$TCTI" \
		--state-dir "$state" --event-log none "$@" >"$AOUT" 2>"$ALOG" &
	APID=$!
	track_pid "$APID"
}

# --- PostgreSQL ---------------------------------------------------------------------------
# A throwaway cluster per test (tests/scaleout, the store tests on PostgreSQL): its own data
# directory in the test's temporary directory, on 127.0.0.1 at a free port, no Unix socket,
# trusting its local connections (reachable from this host only, gone with the test).
# PostgreSQL refuses to run as root: as root, its programs run as the `postgres` user
# (setpriv, which execs: the PID is the server's own; pg_as sets PG_AS to that prefix).

# pg_bin: the newest installed PostgreSQL's programs (Debian keeps them off PATH).
pg_bin() { find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1; }

pg_as() {
	PG_AS=()
	[[ $(id -u) -ne 0 ]] || PG_AS=(setpriv --reuid=postgres --regid=postgres --init-groups --)
}

# start_pg DIR: initdb DIR on its first start, then starts the server (the same port as the
# last start on DIR, else a free one) and waits until it accepts connections; log in DIR.log.
# Sets PG_PORT, PG_PID (stopped when the test exits, fast shutdown) and PG_URI
# (postgresql://postgres@127.0.0.1:PORT: append /DATABASE).
start_pg() {
	local dir=$1 bin i
	bin=$(pg_bin)
	pg_as
	[[ -x $bin/postgres ]] || { echo "start_pg: no PostgreSQL server (apt install postgresql)" >&2; return 1; }
	PG_PORT=${T_SERVICE_PORT[$dir]:-}
	if [[ -z $PG_PORT ]]; then
		PG_PORT=$(free_port) || { echo "start_pg: no free port" >&2; return 1; }
		T_SERVICE_PORT[$dir]=$PG_PORT
	fi
	if [[ ! -s $dir/PG_VERSION ]]; then
		# The server's user must reach its directory through the test's private one.
		chmod 0711 "$T_TMP" "$(dirname "$dir")"
		mkdir -p "$dir"
		[[ $(id -u) -ne 0 ]] || chown postgres:postgres "$dir"
		chmod 0700 "$dir"
		"${PG_AS[@]}" "$bin/initdb" -D "$dir" -U postgres -A trust -E UTF8 --no-sync \
			>"$dir.initdb.log" 2>&1 || { tail -n 5 "$dir.initdb.log" >&2; return 1; }
	fi
	"${PG_AS[@]}" "$bin/postgres" -D "$dir" -p "$PG_PORT" -c listen_addresses=127.0.0.1 \
		-c unix_socket_directories= -c max_connections=200 >>"$dir.log" 2>&1 &
	PG_PID=$!
	T_PG_PIDS+=("$PG_PID")
	# shellcheck disable=SC2034 # for the tests that source this file
	PG_URI=postgresql://postgres@127.0.0.1:$PG_PORT
	for ((i = 0; i < 300; i++)); do
		"$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" && return 0
		kill -0 "$PG_PID" 2>/dev/null || break
		sleep 0.1
	done
	tail -n 5 "$dir.log" >&2
	stop_pg_pid "$PG_PID"
	return 1
}

# stop_pg_pid PID: fast shutdown (SIGINT: clients are disconnected, the data is kept), then
# waits for it. Never SIGKILL: the server's children would outlive it.
stop_pg_pid() {
	local pid=$1
	kill -0 "$pid" 2>/dev/null || return 0
	kill -INT "$pid" 2>/dev/null
	for _ in $(seq 1 300); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
		sleep 0.1
	done
	echo "stop_pg_pid: PostgreSQL $pid still running after 30 s" >&2
	return 1
}

# pg_sql DATABASE SQL...: runs SQL on the cluster started last (psql, unaligned, no header).
pg_sql() {
	local db=$1
	shift
	psql -X -q -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres -d "$db" "$@"
}

# --- the guest (tests/vm, tests/e2e) ------------------------------------------------------
# guest_kernel LOG: builds the guest kernel, or reuses the cached one (vm/build-kernel.sh;
# KERNEL_VARIANT=late picks the late-TPM kernel), and prints its path; 1 when it cannot be
# built, the build's messages in LOG.
guest_kernel() {
	local kernel
	kernel=$("$TOP/vm/build-kernel.sh" 2>"$1" | tail -n 1) && [[ -s $kernel ]] || return 1
	echo "$kernel"
}
