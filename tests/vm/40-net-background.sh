#!/usr/bin/env bash
# Restricted guest networking: the guest reaches the "verifier" port on the host's
# 127.0.0.1 through guestfwd and nothing else. Background mode: boot.sh returns when
# the guest is ready, reports the PIDs, and `boot.sh stop` ends QEMU and swtpm.
. "$(dirname "$0")/common.bash"
vmt_prepare

port=$(free_port)
other=$(free_port)
socat TCP-LISTEN:"$port",bind=127.0.0.1,reuseaddr,fork SYSTEM:'read l; echo "verifier got $l"' &
track_pid $!
socat TCP-LISTEN:"$other",bind=127.0.0.1,reuseaddr,fork SYSTEM:'echo other' &
track_pid $!
wait_for_port "$port" 5 || fail "host echo service starts"

cat >"$T_TMP/net.sh" <<SCRIPT
ip addr show eth0 >"\$OUT/ip" 2>&1
echo ping | nc -w 5 10.0.2.100 $port >"\$OUT/verifier" 2>&1
echo ping | nc -w 3 10.0.2.2 $other >"\$OUT/host-alias" 2>&1
echo ping | nc -w 3 10.0.2.100 $other >"\$OUT/other-port" 2>&1
echo "\$ATTEST_VERIFIER" >"\$OUT/verifier-url"
true
SCRIPT
VERIFIER_PORT=$port vmt_boot net "$T_TMP/net.sh" && ok "net: guest runs the scenario" || fail "net: guest runs the scenario"
out=$T_TMP/net/out
check "net: eth0 has 10.0.2.15/24" grep -q 'inet 10.0.2.15/24' "$out/ip"
check_eq "net: guest reaches the verifier port" "verifier got ping" "$(cat "$out/verifier" 2>/dev/null)"
check_fails "net: restrict=on blocks the host alias" grep -q other "$out/host-alias"
check_fails "net: other host ports are not forwarded" grep -q other "$out/other-port"
check_eq "net: guest learns the verifier URL" "https://10.0.2.100:$port" "$(cat "$out/verifier-url" 2>/dev/null)"

# Background mode
bg=$T_TMP/bg
VM_DIR=$bg VM_BACKGROUND=1 VM_TIMEOUT=120 vm/boot.sh >"$T_TMP/bg.out" 2>"$T_TMP/bg.err"
rc=$?
check_eq "background: boot.sh returns 0 when ready" 0 "$rc"
# how close to VM_READY_TIMEOUT (60 s) the boot came, for the flake hunt's logs
sed -n 's/.*guest ready after \([0-9]*\) s.*/# background: ready after \1 s/p' "$T_TMP/bg.err"
vm_pid=$(sed -n 's/^VM_PID=//p' "$T_TMP/bg.out")
tpm_pid=$(sed -n 's/^SWTPM_PID=//p' "$T_TMP/bg.out")
[[ -n $vm_pid ]] && track_pid "$vm_pid"
[[ -n $tpm_pid ]] && track_pid "$tpm_pid"
check "background: QEMU runs (PID $vm_pid)" kill -0 "${vm_pid:-0}"
check "background: swtpm runs (PID $tpm_pid)" kill -0 "${tpm_pid:-0}"
check "background: guest printed ATTEST-READY" grep -q '^ATTEST-READY' "$bg/serial.log"
check "background: status says running" env VM_DIR="$bg" vm/boot.sh status
check_fails "background: a second boot of the same VM_DIR is refused" env VM_DIR="$bg" VM_TIMEOUT=5 vm/boot.sh
VM_DIR=$bg vm/boot.sh stop
sleep 0.5
check_fails "background: QEMU stopped" kill -0 "${vm_pid:-0}" 2>/dev/null
check_fails "background: swtpm stopped" kill -0 "${tpm_pid:-0}" 2>/dev/null
check_fails "background: status says stopped" env VM_DIR="$bg" vm/boot.sh status

# A foreground boot that is terminated stops QEMU and swtpm (the trap in boot.sh).
fg=$T_TMP/fg
VM_DIR=$fg VM_TIMEOUT=120 VM_CONSOLE=0 vm/boot.sh >"$T_TMP/fg.log" 2>&1 &
boot_pid=$!
track_pid "$boot_pid"
t0=$SECONDS
for _ in $(seq 1 600); do
	grep -q '^ATTEST-READY' "$fg/serial.log" 2>/dev/null && break
	sleep 0.1
done
echo "# terminate: ready after $((SECONDS - t0)) s"
check "terminate: guest got ready" grep -q '^ATTEST-READY' "$fg/serial.log"
vm_pid=$(cat "$fg/qemu.pid" 2>/dev/null)
tpm_pid=$(cat "$fg/swtpm.pid" 2>/dev/null)
kill -TERM "$boot_pid"
wait "$boot_pid"
check_eq "terminate: boot.sh exits with 143" 143 "$?"
check_fails "terminate: QEMU stopped" kill -0 "${vm_pid:-0}" 2>/dev/null
check_fails "terminate: swtpm stopped" kill -0 "${tpm_pid:-0}" 2>/dev/null
finish
