#!/usr/bin/env bash
# What an operator gets from `make install`, run the way systemd would run it (CI has no systemd
# as PID 1): the tree staged with DESTDIR, the configuration edited in the staged
# SYSCONFDIR/attest, and each unit's own ExecStart= command line, read from the installed unit
# file, started with the environment systemd gives a Type=notify unit with StateDirectory=
# ($STATE_DIRECTORY, $NOTIFY_SOCKET) and the credentials the unit gives (setpriv: an
# unprivileged user for DynamicUser=, the groups, capabilities and no-new-privileges it names;
# the IMA list is a root-only file, as in securityfs). Against a TCP swtpm with an EK
# certificate from a test CA, the agent enrolls and is trusted; both daemons report READY=1,
# the verifier's ExecReload= makes it reload (RELOADING=1, READY=1), and both stop with
# STOPPING=1. Both run under strace: every system call they made must be one their unit's
# SystemCallFilter= allows (expanded by systemd-analyze itself), and every socket they opened
# of a family RestrictAddressFamilies= allows, so the filters cannot break them unseen.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib.bash"

for t in swtpm swtpm_setup tpm2_pcrextend python3 jq strace systemd-analyze setpriv; do
	command -v $t >/dev/null || { fail "$t not installed (make deps)"; finish; exit 1; }
done
W=$T_TMP R=$W/root
# The unit's user must reach the staged tree and the test's files, as any user reaches /usr.
chmod 0711 "$W"
mkdir -p "$W/trace" && chown 65534:65534 "$W/trace"
check "make install DESTDIR=$R" install_staged "$R" || { finish; exit 1; }
VUNIT=$ROOT_UNITDIR/attest-verifier.service AUNIT=$ROOT_UNITDIR/attestd.service
CTL=$(find "$R" -type f -name attestctl -perm -u+x -print -quit)
CONFDIR=$(dirname "$(find "$R" -name verifier.conf -print -quit)")
check "staged attestctl and configuration" test -x "$CTL" -a -f "$CONFDIR/attestd.conf"

# notify_listen NAME: a socket like systemd's for one unit (written to once the listener made it
# writable for everyone); each datagram becomes one line of
# $W/NAME.notify ("READY=1|STATUS=..."). Sets NOTIFY to its path.
notify_listen() {
	NOTIFY=$W/$1.sock
	python3 -u - "$NOTIFY" >"$W/$1.notify" 2>&1 <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)  # as systemd's /run/systemd/notify: any service user may send
while True:
    print(s.recv(4096).decode(errors='replace').replace('\n', '|'), flush=True)
PY
	track_pid $!
	for _ in $(seq 1 50); do [[ -S $NOTIFY && -w $NOTIFY && $(stat -c %a "$NOTIFY") == 777 ]] && return 0; sleep 0.1; done
	return 1
}
# as_unit UNIT NAME CMD...: runs CMD in the background with UNIT's credentials, under strace
# (log $W/trace/NAME.strace). Sets TPID to strace's PID (its exit status is CMD's) and PID to
# CMD's, to signal it directly.
as_unit() {
	local unit=$1 name=$2 creds
	shift 2
	mapfile -t creds < <(unit_creds "$unit")
	setpriv "${creds[@]}" strace -f -qq -o "$W/trace/$name.strace" "$@" \
		>"$W/$name.out" 2>"$W/$name.log" &
	TPID=$!
	track_pid "$TPID"
	# strace forks short-lived children of its own to probe ptrace: the daemon is the child
	# that runs its binary.
	for _ in $(seq 1 100); do
		for PID in $(ps --ppid "$TPID" -o pid=); do
			[[ $(readlink "/proc/$PID/exe") == "$1" ]] && return 0
		done
		sleep 0.1
	done
	PID=
	return 1
}

# --- a TPM with an EK certificate, and a measurement list PCR 10 follows -------------------
start_tpm_with_ek_ca "$W" || { fail "swtpm with an EK certificate"; finish; exit 1; }
"$B/tools/imagen" --entries 30 --template ima-ng --hash sha256 --zero-boot-pcrs --seed 3 \
	--out "$W/ima" --tpm2-extend-script "$W/ext" >/dev/null
# shellcheck disable=SC2046 # one PCR:alg=digest argument per word
tpm2_pcrextend $(cat "$W/ext") >/dev/null
chmod 0440 "$W/ima" # root's, as securityfs has it: attestd reads it with CAP_DAC_READ_SEARCH
"$CTL" policy-learn "$W/ima" --out "$W/policy.json" 2>/dev/null
check "policy learned with the staged attestctl" test -s "$W/policy.json"

# --- the verifier, from its unit -------------------------------------------------------------
PORT=$(free_port)
cat >>"$CONFDIR/verifier.conf" <<CONF
listen = 127.0.0.1:$PORT
ek-ca = $W/ek-ca.pem
policy = $W/policy.json
CONF
# What StateDirectory= makes with DynamicUser=: the directory under private/, and a link to it
# (systemd's, root's) at the name $STATE_DIRECTORY gives.
VSTATE=$W/var/lib/private/attest-verifier
mkdir -p "$W/var/lib/private" && mkdir -m 0700 "$VSTATE" && chown 65534:65534 "$VSTATE"
ln -s private/attest-verifier "$W/var/lib/attest-verifier"
mapfile -t vcmd < <(unit_exec "$R" "$VUNIT")
check "verifier's ExecStart reads the staged configuration" test "${vcmd[2]}" = "$CONFDIR/verifier.conf"
notify_listen verifier || fail "notify socket"
STATE_DIRECTORY=$W/var/lib/attest-verifier NOTIFY_SOCKET=$NOTIFY as_unit "$VUNIT" verifier "${vcmd[@]}" ||
	fail "verifier did not start"
VPID=$PID VTPID=$TPID
echo "verifier: pid $VPID under strace $VTPID"
if wait_line "$W/verifier.notify" '^READY=1\|STATUS=listening on https://127.0.0.1:'"$PORT"'$' 20; then
	ok "verifier: READY=1 once it listens on the configured address"
else
	fail "verifier not ready: $(tail -n 3 "$W/verifier.log")"
fi
check "verifier: state in \$STATE_DIRECTORY, through systemd's link (ca.pem, operator token, store)" \
	test -f "$VSTATE/ca.pem" -a -f "$VSTATE/operator-token" -a -f "$VSTATE/verifier.db"

# --- attestd, from its unit --------------------------------------------------------------------
cp "$VSTATE/ca.pem" "$CONFDIR/ca.pem" # the operator hands the verifier's CA to the machine
cat >>"$CONFDIR/attestd.conf" <<CONF
verifier = https://127.0.0.1:$PORT
ca = $CONFDIR/ca.pem
agent-id = staged-1
tcti = $TCTI
ima-list = $W/ima
interval = 1
# this swtpm did not boot this host: the host's own firmware log would not replay to it
event-log = none
CONF
ASTATE=$W/var/lib/attestd
mkdir -m 0700 "$ASTATE" && chown 65534:65534 "$ASTATE"
mapfile -t acmd < <(unit_exec "$R" "$AUNIT")
notify_listen attestd || fail "notify socket"
STATE_DIRECTORY=$ASTATE NOTIFY_SOCKET=$NOTIFY as_unit "$AUNIT" attestd "${acmd[@]}" ||
	fail "attestd did not start"
APID=$PID ATPID=$TPID
echo "attestd: pid $APID under strace $ATPID"
check "attestd: READY=1 once its TPM answered" wait_line "$W/attestd.notify" '^READY=1$' 30
check "attestd: the unit's status is a trusted verdict" \
	wait_line "$W/attestd.notify" '^STATUS=verdict trusted' 60
check "attestd: its AK in \$STATE_DIRECTORY" test -f "$ASTATE/ak.pub" -a -f "$ASTATE/enrolled"

ctl() { "$CTL" "$@" --verifier "https://127.0.0.1:$PORT" --ca "$VSTATE/ca.pem" \
	--token-file "$VSTATE/operator-token"; }
agent=$(ctl agent staged-1 --json)
check_eq "the verifier: staged-1 enrolled and active" active "$(jq -r .state <<<"$agent")"
check_eq "the verifier: its last verdict is trusted" trusted "$(jq -r .last_verdict <<<"$agent")"
check_eq "the verifier: all 30 entries attested" 30 "$(jq -r .next_entry <<<"$agent")"

# --- systemctl reload: the unit's ExecReload=, with $MAINPID the verifier's ---------------------
reload=$(unit_value "$VUNIT" ExecReload)
read -ra rcmd <<<"${reload//\$MAINPID/$VPID}"
check "verifier: ExecReload= ($reload) runs" "${rcmd[@]}"
after_reloading() { sed -n '/^RELOADING=1$/,$p' "$W/verifier.notify"; }
for ((i = 0; i < 100; i++)); do
	[[ $(after_reloading | wc -l) -ge 2 ]] && break
	sleep 0.1
done
check_eq "verifier: RELOADING=1, then READY=1 again" "RELOADING=1 READY=1" "$(after_reloading | tr '\n' ' ' | sed 's/ $//')"
check "verifier: the reload read the tokens, the EK CAs and the TLS certificate again" \
	grep -q 'reload: TLS certificate "' "$W/verifier.log"
check_eq "verifier: still serves after the reload" staged-1 "$(ctl agents --json | jq -r '.agents[0].agent_id')"

# --- both stop on SIGTERM, telling the service manager ---------------------------------------
kill -TERM "$APID" "$VPID"
wait "$ATPID"
check_eq "attestd exits 0 on SIGTERM" 0 $?
wait "$VTPID"
check_eq "verifier exits 0 on SIGTERM" 0 $?
check "attestd: STOPPING=1" grep -qx 'STOPPING=1' "$W/attestd.notify"
check "verifier: STOPPING=1" grep -qx 'STOPPING=1' "$W/verifier.notify"

# --- what the units' filters allow, against what the daemons did -----------------------------
# expand SET...: the system calls of systemd's sets (@name) and names, one per line.
expand() {
	local x
	for x in "$@"; do
		if [[ $x == @* ]]; then
			# shellcheck disable=SC2046 # one set or name per word
			expand $(systemd-analyze syscall-filter "$x" | sed -n '2,$s/^ *\([@a-z0-9_-]*\)$/\1/p')
		else
			echo "$x"
		fi
	done
}
# filter_allows UNIT: the unit's allow list minus its deny lists ("~..."), sorted.
filter_allows() {
	local allow=() deny=() v
	while read -r v; do
		if [[ $v == "~"* ]]; then
			read -ra w <<<"${v#"~"}"
			deny+=("${w[@]}")
		else
			read -ra w <<<"$v"
			allow+=("${w[@]}")
		fi
	done < <(sed -n 's/^SystemCallFilter=//p' "$1")
	comm -23 <(expand "${allow[@]}" | sort -u) <(expand "${deny[@]}" | sort -u)
}
for d in verifier:$VUNIT attestd:$AUNIT; do
	name=${d%%:*} unit=${d#*:}
	made=$(sed -nE 's/^[0-9]+ +([a-z0-9_]+)\(.*/\1/p; s/^[0-9]+ +<\.\.\. ([a-z0-9_]+) resumed>.*/\1/p' \
		"$W/trace/$name.strace" | sort -u)
	denied=$(comm -23 <(echo "$made") <(filter_allows "$unit"))
	check "$name: made $(wc -l <<<"$made") kinds of system call" test "$(wc -l <<<"$made")" -gt 20
	check_eq "$name: every one allowed by its unit's SystemCallFilter=" "" "$(echo $denied)"
	families=$(sed -nE 's/^[0-9]+ +socket\((AF_[A-Z0-9]+),.*/\1/p' "$W/trace/$name.strace" | sort -u)
	allowed=$(unit_value "$unit" RestrictAddressFamilies)
	stray=$(grep -vxF -f <(tr ' ' '\n' <<<"$allowed") <<<"$families")
	check_eq "$name: sockets of $(echo $families) only, all in RestrictAddressFamilies=" "" "$stray"
done

finish
