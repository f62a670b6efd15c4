#!/usr/bin/env bash
# No verifier or attestd that a test starts reads the host's configuration. On a host where the
# packages are installed and configured, SYSCONFDIR/attest/verifier.conf names the production
# store and webhook receiver: a test that read it would write into that store and send it events.
#
# The script runs itself again in a private mount namespace with an overlay on SYSCONFDIR (the
# one this build compiled in, from buildinfo.h) holding a poisoned attest/verifier.conf and
# attest/attestd.conf: lines no daemon accepts, so that any start that reads them fails. The
# real SYSCONFDIR is never written (the overlay's upper layer is a temporary directory, gone
# with the namespace). In there:
#   - the poison is live: a verifier and an attestd started without --config refuse to start
#     and name the poisoned file (this is what would happen to a launcher that forgot it);
#   - --config /dev/null reads nothing: both start;
#   - tests/lib.sh's start_verifier and start_agent, and a whole integration script
#     (attest_flow.sh: verifiers and attestd --once on a swtpm), pass under the poison.
# scripts/check.sh checks statically that every script that starts a daemon passes --config.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)

if [[ ${HOST_CONFIG_INSIDE:-} != 1 ]]; then
	if [[ $(id -u) != 0 ]] || ! command -v unshare >/dev/null; then
		echo "skip - a private mount namespace needs root and unshare"
		echo "0 passed, 0 failed, 1 skipped"
		exit 0
	fi
	HOST_CONFIG_INSIDE=1 exec unshare --mount --propagation private "$0" "$@"
fi

source "$HERE/../lib.sh"
BUILD=${BUILD:-$(dirname "$B")}
SYSCONF=$(sed -n 's/^#define ATTEST_SYSCONFDIR "\(.*\)"$/\1/p' "$BUILD/gen/buildinfo.h" 2>/dev/null)
[[ $SYSCONF == /* ]] || { fail "no SYSCONFDIR in $BUILD/gen/buildinfo.h (run make)"; finish; exit 1; }
need_built "$B/verifier" "$B/attestd"

W=$T_TMP
mkdir -p "$W/upper" "$W/work"
mount -t overlay overlay -o "lowerdir=$SYSCONF,upperdir=$W/upper,workdir=$W/work" "$SYSCONF" ||
	{ fail "an overlay on $SYSCONF in a private mount namespace"; finish; exit 1; }
mkdir -p "$SYSCONF/attest"
for f in verifier.conf attestd.conf; do
	printf '%s\n' '# the host'"'"'s own configuration: no test may read it' \
		'poisoned = read by a scratch daemon' >"$SYSCONF/attest/$f"
done
check "the poison is in place in this namespace only" test -f "$SYSCONF/attest/verifier.conf"

# --- the poison is live ---------------------------------------------------------------------
port=$(free_port)
timeout 10 "$B/verifier" --listen "127.0.0.1:$port" --state-dir "$W/v-noconf" \
	>"$W/noconf.out" 2>"$W/noconf.log" # reads the host configuration on purpose
check "a verifier without --config reads $SYSCONF/attest/verifier.conf and refuses it" \
	grep -q "unknown key in $SYSCONF/attest/verifier.conf:2: 'poisoned'" "$W/noconf.log"
timeout 10 "$B/attestd" --once --verifier https://127.0.0.1:1 --ca /dev/null \
	--state-dir "$W/a-noconf" >"$W/a-noconf.out" 2>"$W/a-noconf.log" # reads the host configuration on purpose
check "an attestd without --config reads $SYSCONF/attest/attestd.conf and refuses it" \
	grep -q "unknown key in $SYSCONF/attest/attestd.conf:2: 'poisoned'" "$W/a-noconf.log"

# --- the empty configuration ----------------------------------------------------------------
check "start_verifier (--config /dev/null) starts under the poison" start_verifier "$W/v"
check "and read no configuration file" bash -c "! grep -q 'poisoned' '$VLOG'"
swtpm_with_ek_ca "$W/tpm" || { finish; exit 1; }
start_agent host-1 "$W/a" --ima-list /dev/null --interval 1
check "start_agent (--config /dev/null) runs under the poison" \
	bash -c "for i in \$(seq 50); do grep -q 'attesting to' '$ALOG' && exit 0; sleep 0.1; done; exit 1"
check "and read no configuration file" bash -c "! grep -q 'poisoned' '$ALOG'"
stop_pid "$APID"

# --- a whole test script under the poison ---------------------------------------------------
out=$("$HERE/attest_flow.sh" 2>&1)
summary=$(tail -n 1 <<<"$out")
check "attest_flow.sh passes under the poisoned configuration ($summary)" \
	grep -Eq '^[1-9][0-9]* passed, 0 failed' <<<"$summary"
check "and no daemon of it read the poisoned file" bash -c "! grep -q poisoned <<<\"\$1\"" _ "$out"
finish
