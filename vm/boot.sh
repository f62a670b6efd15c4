#!/usr/bin/env bash
# Boots the guest: a swtpm per boot (state kept in VM_TPM_DIR), QEMU with TCG, tpm-tis,
# the root image on virtio, optional restricted networking to the verifier, and an
# optional "io disk" that carries a scenario script in and its results out.
#
# Usage: vm/boot.sh              boot (foreground, or background with VM_BACKGROUND=1)
#        vm/boot.sh stop         stop a background VM of VM_DIR (by the PIDs it recorded)
#        vm/boot.sh status       exit 0 when the background VM of VM_DIR runs
# Environment (defaults in brackets):
#   VM_KERNEL      bzImage                                   [build/kernel/bzImage]
#   VM_ROOTFS      root image (booted with snapshot=on, so it is never modified;
#                  VM_ROOT_PERSIST=1 writes to it)            [build/vm/rootfs.img]
#   VM_DIR         instance directory: logs, pids, io disk    [build/vm/run]
#   VM_TPM_DIR     TPM instance: CA, state, certificates      [$VM_DIR/tpm]
#   VM_TPM_FRESH   1: re-manufacture the TPM (new EK) first
#   VM_TPM         0: boot without a TPM
#   VM_ACCEL       tcg, or kvm (opt-in; aborts or hangs on some hosts)   [tcg]
#   VM_FIRMWARE    ovmf (UEFI: measures the kernel into PCR 4 and its command line into
#                  PCR 9, so a verifier can judge the boot), ovmf-secboot (the same with
#                  Secure Boot on: OVMF's secboot build on q35 with SMM and Debian's snakeoil
#                  keys enrolled, so the kernel must be signed with them, e.g. by sbsign), or
#                  seabios (QEMU's BIOS: measures option ROMs only, never the kernel)  [ovmf]
#   VM_OVMF_CODE   OVMF code, attached read-only    [/usr/share/OVMF/OVMF_CODE_4M.fd]
#   VM_OVMF_VARS   OVMF variable store template; each boot gets a writable copy in
#                  VM_DIR, so no boot sees another's variables  [/usr/share/OVMF/OVMF_VARS_4M.fd]
#   VM_MEM VM_SMP  memory in MiB, CPUs                        [256, 1]
#   VM_TIMEOUT     seconds until a foreground VM is killed (exit 124); 0 none. In the
#                  background, a watchdog kills the VM after it if set   [120 / 0]
#   VM_APPEND      extra kernel parameters, e.g. "ima_tpm=7 ima_hash=sha256"
#   VM_IMA_POLICY  the ima_policy= value; none: no ima_policy= at all [tcb]
#   VM_SCENARIO    run /etc/attest/scenarios/NAME in the guest, then power off
#   VM_SCRIPT      host script run in the guest as root (via the io disk), then power off
#   VM_OUT         where the guest's results ($OUT in the guest) are extracted
#                  after a scenario                           [$VM_DIR/out]
#   VM_IO_SIZE     io disk size                               [16M]
#   VERIFIER_PORT  if set: user networking with restrict=on; guest 10.0.2.100:PORT
#                  reaches 127.0.0.1:PORT on the host (one socat per connection), and
#                  the guest gets attest.verifier=https://10.0.2.100:PORT
#   VM_SERIAL_LOG  console log                                [$VM_DIR/serial.log]
#   VM_CONSOLE     1: console also on stdout (foreground; default when stdout is a
#                  terminal); VM_SHELL=1 gives an interactive shell (attest.shell=1)
#   VM_BACKGROUND  1: start, wait for ATTEST-READY (VM_READY_TIMEOUT s, default 60),
#                  print VM_PID=, SWTPM_PID=, VM_SERIAL_LOG=, and return
# Exit status (foreground): with a scenario the guest's scenario status, else QEMU's;
# 124 on timeout.
set -euo pipefail
# shellcheck disable=SC2034 # read by vm_log (vm/lib.sh)
VM_LOG_TAG=boot
. "$(dirname "$0")/lib.sh"
cd "$VM_TOP"

VM_DIR=$(vm_abspath "${VM_DIR:-build/vm/run}")
KERNEL=$(vm_abspath "${VM_KERNEL:-build/kernel/bzImage}")
ROOTFS=$(vm_abspath "${VM_ROOTFS:-build/vm/rootfs.img}")
TPM_DIR=$(vm_abspath "${VM_TPM_DIR:-$VM_DIR/tpm}")
OUT=$(vm_abspath "${VM_OUT:-$VM_DIR/out}")
SERIAL_LOG=$(vm_abspath "${VM_SERIAL_LOG:-$VM_DIR/serial.log}")
ACCEL=${VM_ACCEL:-tcg}
FIRMWARE=${VM_FIRMWARE:-ovmf}
BACKGROUND=${VM_BACKGROUND:-0}
if [[ $BACKGROUND == 1 ]]; then TIMEOUT=${VM_TIMEOUT:-0}; else TIMEOUT=${VM_TIMEOUT:-120}; fi

stop_recorded() {
	local f
	for f in "$VM_DIR/qemu.pid" "$VM_DIR/swtpm.pid" "$VM_DIR/watchdog.pid"; do
		[[ -s $f ]] && vm_stop_pid "$(cat "$f")"
		rm -f "$f"
	done
}
case ${1:-} in
stop) stop_recorded; exit 0 ;;
status) [[ -s $VM_DIR/qemu.pid ]] && kill -0 "$(cat "$VM_DIR/qemu.pid")" 2>/dev/null; exit ;;
"") ;;
*) vm_die "unknown command '$1' (boot.sh [stop|status])" ;;
esac

[[ -r $KERNEL ]] || vm_die "no kernel at $KERNEL (run vm/build-kernel.sh)"
[[ -r $ROOTFS ]] || vm_die "no root image at $ROOTFS (run vm/build-rootfs.sh)"
mkdir -p "$VM_DIR"
if [[ -s $VM_DIR/qemu.pid ]] && kill -0 "$(cat "$VM_DIR/qemu.pid")" 2>/dev/null; then
	vm_die "a VM of $VM_DIR runs already (PID $(cat "$VM_DIR/qemu.pid")); vm/boot.sh stop"
fi

QEMU_PID='' SWTPM_PID=''
cleanup() {
	local rc=$?
	if [[ $BACKGROUND != 1 || $rc -ne 0 ]]; then
		vm_stop_pid "$QEMU_PID"
		vm_stop_pid "$SWTPM_PID"
		rm -f "$VM_DIR/qemu.pid" "$VM_DIR/swtpm.pid"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

append="console=ttyS0 root=/dev/vda rw rootfstype=ext4 panic=-1"
[[ ${VM_IMA_POLICY:-tcb} == none ]] || append+=" ima_policy=${VM_IMA_POLICY:-tcb}"
machine=${VM_MACHINE:-pc}
[[ $FIRMWARE == ovmf-secboot ]] && machine=${VM_MACHINE:-q35,smm=on}
qemu=(qemu-system-x86_64 -machine "$machine" -accel "$ACCEL" -m "${VM_MEM:-256}"
	-smp "${VM_SMP:-1}" -nodefaults -display none -no-reboot -kernel "$KERNEL")
case $FIRMWARE in
ovmf | ovmf-secboot)
	ovmf_code=${VM_OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
	ovmf_vars=${VM_OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}
	if [[ $FIRMWARE == ovmf-secboot ]]; then
		ovmf_code=${VM_OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.secboot.fd}
		ovmf_vars=${VM_OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.snakeoil.fd}
		# The secboot build keeps its variables behind SMM: only SMM code may write them.
		qemu+=(-global "driver=cfi.pflash01,property=secure,value=on")
	fi
	[[ -r $ovmf_code && -r $ovmf_vars ]] ||
		vm_die "no OVMF at $ovmf_code / $ovmf_vars (apt-get install ovmf, or VM_FIRMWARE=seabios)"
	# A fresh copy of the variable store per boot: what one boot wrote (boot entries,
	# a changed Secure Boot state) never leaks into the next.
	cp "$ovmf_vars" "$VM_DIR/ovmf-vars.fd"
	chmod u+w "$VM_DIR/ovmf-vars.fd"
	qemu+=(-drive "if=pflash,format=raw,unit=0,file=$ovmf_code,readonly=on"
		-drive "if=pflash,format=raw,unit=1,file=$VM_DIR/ovmf-vars.fd")
	;;
seabios) ;;
*) vm_die "VM_FIRMWARE must be ovmf, ovmf-secboot or seabios, not '$FIRMWARE'" ;;
esac
root_drive="file=$ROOTFS,format=raw,if=virtio"
[[ ${VM_ROOT_PERSIST:-0} == 1 ]] || root_drive+=",snapshot=on"
qemu+=(-drive "$root_drive")

if [[ ${VM_TPM:-1} != 0 ]]; then
	[[ ${VM_TPM_FRESH:-0} == 1 ]] && rm -rf "$TPM_DIR/state"
	vm_swtpm_setup "$TPM_DIR" || vm_die "swtpm_setup failed (log: $TPM_DIR/setup.log)"
	vm_swtpm_start "$TPM_DIR" || vm_die "swtpm failed to start"
	echo "$SWTPM_PID" >"$VM_DIR/swtpm.pid"
	qemu+=(-chardev "socket,id=chrtpm,path=$TPM_DIR/swtpm.sock"
		-tpmdev "emulator,id=tpm0,chardev=chrtpm" -device "tpm-tis,tpmdev=tpm0")
fi

if [[ -n ${VERIFIER_PORT:-} ]]; then
	[[ $VERIFIER_PORT =~ ^[0-9]+$ ]] || vm_die "VERIFIER_PORT must be a port number"
	command -v socat >/dev/null || vm_die "socat missing (apt-get install socat)"
	qemu+=(-netdev "user,id=n0,restrict=on,guestfwd=tcp:10.0.2.100:$VERIFIER_PORT-cmd:socat - TCP:127.0.0.1:$VERIFIER_PORT"
		-device "virtio-net-pci,netdev=n0")
	append+=" attest.verifier=https://10.0.2.100:$VERIFIER_PORT"
fi

io=
if [[ -n ${VM_SCENARIO:-} || -n ${VM_SCRIPT:-} || ${VM_IO:-0} == 1 ]]; then
	io=$VM_DIR/io.img
	rm -f "$io"
	if [[ -n ${VM_SCRIPT:-} ]]; then
		tmp=$(mktemp -d)
		cp "$(vm_abspath "$VM_SCRIPT")" "$tmp/scenario.sh"
		tar -cf "$io" -C "$tmp" scenario.sh
		rm -rf "$tmp"
	fi
	truncate -s "${VM_IO_SIZE:-16M}" "$io"
	qemu+=(-drive "file=$io,format=raw,if=virtio")
	[[ -n ${VM_SCENARIO:-} ]] && append+=" attest.scenario=$VM_SCENARIO"
	rm -rf "$OUT"
fi
[[ ${VM_SHELL:-0} == 1 ]] && append+=" attest.shell=1"
[[ -n ${VM_APPEND:-} ]] && append+=" $VM_APPEND"
qemu+=(-append "$append")

: >"$SERIAL_LOG"
console=${VM_CONSOLE:-}
[[ -z $console && -t 1 && $BACKGROUND != 1 ]] && console=1
if [[ $console == 1 && $BACKGROUND != 1 ]]; then
	qemu+=(-chardev "stdio,id=con,mux=on,logfile=$SERIAL_LOG,signal=off" -serial chardev:con)
else
	qemu+=(-serial "file:$SERIAL_LOG")
fi

vm_log "kernel $KERNEL, firmware $FIRMWARE, accel $ACCEL, append: $append"
printf '%q ' "${qemu[@]}" >"$VM_DIR/qemu.cmd"
if [[ $console == 1 && $BACKGROUND != 1 ]]; then
	"${qemu[@]}" &
else
	"${qemu[@]}" </dev/null >"$VM_DIR/qemu.out" 2>&1 &
fi
QEMU_PID=$!
echo "$QEMU_PID" >"$VM_DIR/qemu.pid"

if [[ $BACKGROUND == 1 ]]; then
	if [[ $TIMEOUT != 0 ]]; then
		(
			sleep "$TIMEOUT"
			kill -TERM "$QEMU_PID" 2>/dev/null
		) </dev/null >/dev/null 2>&1 &
		echo $! >"$VM_DIR/watchdog.pid"
	fi
	for ((i = 0; i < ${VM_READY_TIMEOUT:-60} * 10; i++)); do
		grep -q '^ATTEST-READY' "$SERIAL_LOG" 2>/dev/null && break
		kill -0 "$QEMU_PID" 2>/dev/null || vm_die "QEMU exited (log: $SERIAL_LOG, $VM_DIR/qemu.out)"
		sleep 0.1
	done
	grep -q '^ATTEST-READY' "$SERIAL_LOG" || vm_die "guest not ready after ${VM_READY_TIMEOUT:-60} s (log: $SERIAL_LOG)"
	vm_log "guest ready after $((SECONDS - VM_T0)) s"
	echo "VM_PID=$QEMU_PID"
	echo "SWTPM_PID=$SWTPM_PID"
	echo "VM_SERIAL_LOG=$SERIAL_LOG"
	echo "VM_TPM_CA=$TPM_DIR/ca/swtpm-localca-rootca-cert.pem"
	exit 0
fi

rc=0
timed_out=0
if [[ $TIMEOUT != 0 ]]; then
	for ((i = 0; i < TIMEOUT * 10; i++)); do
		kill -0 "$QEMU_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$QEMU_PID" 2>/dev/null; then
		vm_log "timeout after $TIMEOUT s, stopping QEMU"
		timed_out=1
		vm_stop_pid "$QEMU_PID"
	fi
fi
wait "$QEMU_PID" || rc=$?
QEMU_PID=
rm -f "$VM_DIR/qemu.pid"
vm_log "QEMU exited with $rc after $((SECONDS - VM_T0)) s (console: $SERIAL_LOG)"
[[ $timed_out == 1 ]] && exit 124
[[ $rc -eq 0 ]] || { tail -n 5 "$VM_DIR/qemu.out" >&2 2>/dev/null; exit "$rc"; }

if [[ -n $io ]]; then
	mkdir -p "$OUT"
	tar -xf "$io" -C "$OUT" 2>/dev/null || true
	if [[ ! -f $OUT/rc ]]; then
		vm_log "the guest wrote no results (console: $SERIAL_LOG)"
		exit 1
	fi
	rc=$(cat "$OUT/rc")
	vm_log "scenario finished with $rc, results in $OUT"
	exit "$rc"
fi
exit 0
