# Shared by tests/e2e/*.sh (not a test itself: the runner only picks *.sh).
# The whole chain as scripts/demo.sh builds it: the patched kernel in QEMU (TCG) with a swtpm,
# attestd started by the guest's init, the real verifier on 127.0.0.1, a policy generated from
# the guest's root tree. Guest-side actions are init hooks on the measured root
# (tests/e2e/guest/S40e2e, S90e2e), chosen per boot with attest.e2e=ACTION.
#
#   e2e_late_kernel             use the late-TPM kernel from here on (before e2e_prepare)
#   e2e_prepare                 kernel, verifier TLS CA, root image, policies, verifier
#   e2e_verifier_start [FILE [--policy-replace]]   (re)start the verifier on $VPORT and
#                               $W/verifier; FILE seeds the default policy, or replaces it
#   e2e_verifier_stop           SIGTERM, wait
#   e2e_boot VM AGENT [ARGS..]  boot a guest in the background; ARGS go to the kernel
#                               command line (attest.e2e=ACTION ...). TPM: $W/tpm-AGENT;
#                               E2E_ROOTFS/E2E_PERSIST choose the disk
#   e2e_stop VM                 stop that guest (by the PIDs vm/boot.sh recorded)
#   e2e_api PATH                operator API GET, JSON on stdout
#   e2e_wait DESC JQ PATH [S]   poll PATH until the jq test holds; diagnostics on timeout
#   e2e_console VM PATTERN [S]  wait for a line on the guest's console
#   e2e_check_wait ...          e2e_wait as one ok/fail test step
# Environment: E2E_WAIT (seconds per API wait, 90), E2E_INTERVAL (attestd's round interval,
# 2), E2E_READY_TIMEOUT (seconds to ATTEST-READY, 120), KEEP_TMP=1 keeps the work directory.
# Each test has its own verifier, port, TPMs (one swtpm CA) and image in $W ($T_TMP).
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$TOP" || exit 1

W=$T_TMP
E2E_GUEST=$TOP/tests/e2e/guest
E2E_WAIT=${E2E_WAIT:-90}
E2E_INTERVAL=${E2E_INTERVAL:-2}
E2E_VMS=()
E2E_LIVE_VM=
# shellcheck disable=SC2034 # start_verifier's (tests/lib.sh), read by the scenarios
VPID=
VPORT=

e2e_cleanup() {
	local rc=$? d
	for d in "${E2E_VMS[@]}"; do
		VM_DIR=$d vm/boot.sh stop >/dev/null 2>&1
	done
	t_cleanup
	exit "$rc"
}
trap e2e_cleanup EXIT

# e2e_abort MESSAGE [FILE...]: one failure, the tails of FILEs, the result line, exit.
e2e_abort() {
	local f
	fail "$1"
	shift
	for f in "$@"; do
		[[ -s $f ]] && { echo "---- $f"; tail -n 25 "$f"; }
	done
	finish
	exit 1
}

# e2e_late_kernel: vm/build-kernel.sh builds (or reuses) the kernel of
# kernel-patches/guest-late.config over guest.config, tpm_tis as a module and the vtpm proxy,
# in its own cache so that the default kernel stays as it is, from the default kernel's tree
# when that is built; e2e_prepare puts its modules on the root image.
e2e_late_kernel() {
	export KERNEL_VARIANT=late
}

e2e_prepare() {
	local t0=$SECONDS bin kernel i overlays
	for bin in "$B/verifier" "$B/attestd" "$B/attestctl" "$B/tools/tpm_pcr_extend"; do
		[[ -x $bin ]] || e2e_abort "missing $bin (run make)"
	done
	for bin in qemu-system-x86_64 swtpm swtpm_setup socat jq curl mke2fs; do
		command -v "$bin" >/dev/null || e2e_abort "missing $bin (make deps)"
	done
	kernel=$(guest_kernel "$W/build-kernel.log") || e2e_abort "guest kernel builds" "$W/build-kernel.log"
	export VM_KERNEL=$kernel
	# A kernel with modules: they go on the image (and so into the policy) as /lib/modules.
	overlays=$W/overlay
	[[ -d $(dirname "$kernel")/modules ]] && overlays+=" $(dirname "$kernel")/modules"
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/token"

	# One swtpm CA for every TPM of this test: manufacture a first TPM to create it; each
	# agent's TPM (e2e_tpm) then gets its EK certificate from it, and the verifier trusts it.
	(VM_LOG_TAG=e2e; . vm/lib.sh; vm_swtpm_setup "$W/tpmca" 1) >/dev/null 2>&1 ||
		e2e_abort "swtpm_setup" "$W/tpmca/setup.log"
	cat "$W/tpmca/ca/issuercert.pem" "$W/tpmca/ca/swtpm-localca-rootca-cert.pem" >"$W/ek-ca.pem"

	# The first start makes the verifier's TLS CA, which the guest image must carry. Its port
	# is free_port's (start_verifier, tests/lib.sh): below the ephemeral range (guest
	# connections use that heavily through socat) and reserved for this whole test, because the
	# verifier is stopped and started again on it (here, and in the scenarios); unreserved,
	# another test's free_port could take it in between and the restart would fail with
	# "cannot listen".
	e2e_verifier_start || e2e_abort "verifier starts" "$W/verifier.log"
	e2e_verifier_stop

	cat >"$W/attestd.conf" <<CONF
ca = /etc/attest/ca.pem
state-dir = /var/lib/attestd
interval = $E2E_INTERVAL
CONF
	# Files the hooks touch, all on the measured root and so all in the policy.
	mkdir -p "$W/overlay/etc/init.d" "$W/overlay/etc/e2e/grow"
	cp "$E2E_GUEST/S40e2e" "$E2E_GUEST/S90e2e" "$W/overlay/etc/init.d/"
	chmod 755 "$W/overlay/etc/init.d/"*
	echo "read while a writer appends" >"$W/overlay/etc/e2e/tomtou"
	echo "read while open for write" >"$W/overlay/etc/e2e/openw"
	for ((i = 1; i <= 120; i++)); do echo "grow $i" >"$W/overlay/etc/e2e/grow/$i"; done

	# One try: a failure here is a bug to find (the trace says which command failed), and a
	# second try would hide it, as it hid ldconfig's SIGPIPE in 6% of builds (issue 15).
	ROOTFS_IMG=$W/rootfs.img ROOTFS_CA=$W/verifier/ca.pem ROOTFS_ATTESTD=$B/attestd \
		ROOTFS_ATTESTD_CONF=$W/attestd.conf ROOTFS_EXTRA_BINS=$B/tools/tpm_pcr_extend \
		ROOTFS_OVERLAY=$overlays bash -x vm/build-rootfs.sh >"$W/rootfs.log" 2>"$W/rootfs.trace" ||
		e2e_abort "root image builds" "$W/rootfs.log" "$W/rootfs.trace"
	# After the image: the policy must hash exactly what the guest will read.
	"$B/attestctl" policy-gen "$W/rootfs.img.d" --hash sha256 --exclude '/var/lib/attestd/.*' \
		--out "$W/policy.json" 2>"$W/policy.log" || e2e_abort "policy-gen" "$W/policy.log"
	e2e_verifier_start "$W/policy.json" || e2e_abort "verifier starts with the policy" "$W/verifier.log"
	echo "# prepared in $((SECONDS - t0)) s: kernel $kernel, verifier https://127.0.0.1:$VPORT," \
		"$(jq '.digests | length' "$W/policy.json") paths in the policy"
}

# e2e_verifier_start [POLICY [--policy-replace]]: start_verifier (tests/lib.sh) with state in
# $W/verifier (its output in $W/verifier.out, its log in $W/verifier.log), on the port of its
# first start (VPORT). POLICY seeds the default policy of a new store; to make another file the
# default on a restart, pass --policy-replace (the store keeps its copy otherwise).
e2e_verifier_start() {
	local args=()
	[[ -n ${1:-} ]] && args=(--policy "$1" ${2:+"$2"})
	start_verifier "$W/verifier" --tls-san 10.0.2.100 --ek-ca "$W/ek-ca.pem" \
		--operator-token-file "$W/token" "${args[@]}"
}

e2e_verifier_stop() { stop_verifier; }

# e2e_tpm AGENT: manufactures the agent's TPM once, its EK certificate from the shared CA.
e2e_tpm() {
	local dir=$W/tpm-$1
	[[ -s $dir/state/tpm2-00.permall ]] && return 0
	mkdir -p "$dir"
	cp "$W/tpmca/swtpm_setup.conf" "$dir/"
	(VM_LOG_TAG=e2e; . vm/lib.sh; vm_swtpm_setup "$dir" 1) >/dev/null 2>&1 ||
		e2e_abort "swtpm_setup for $1" "$dir/setup.log"
}

# e2e_boot VM AGENT [KERNEL-ARGS...]: boots in the background until ATTEST-READY.
e2e_boot() {
	local vm=$1 agent=$2 dir=$W/vm-$1 t0=$SECONDS rc=0 pid
	shift 2
	e2e_tpm "$agent"
	E2E_VMS+=("$dir")
	VM_DIR=$dir VM_TPM_DIR=$W/tpm-$agent VM_ROOTFS=${E2E_ROOTFS:-$W/rootfs.img} \
		VM_ROOT_PERSIST=${E2E_PERSIST:-0} VERIFIER_PORT=$VPORT VM_BACKGROUND=1 VM_TIMEOUT=600 \
		VM_READY_TIMEOUT=${E2E_READY_TIMEOUT:-120} \
		VM_CONSOLE=0 VM_APPEND="ima_hash=sha256 attest.agent_id=$agent $*" \
		vm/boot.sh >"$dir.boot.log" 2>&1 || rc=$?
	for pid in $(sed -n 's/^\(VM_PID\|SWTPM_PID\)=//p' "$dir.boot.log") \
		$(cat "$dir/watchdog.pid" 2>/dev/null); do
		track_pid "$pid"
	done
	if [[ $rc -ne 0 ]]; then
		echo "# boot $vm failed ($rc)"
		tail -n 10 "$dir.boot.log"
		tail -n 30 "$dir/serial.log" 2>/dev/null
		return 1
	fi
	E2E_LIVE_VM=$dir
	echo "# boot $vm (agent $agent, $*): ready in $((SECONDS - t0)) s"
}

e2e_stop() {
	[[ $E2E_LIVE_VM == "$W/vm-$1" ]] && E2E_LIVE_VM=
	VM_DIR=$W/vm-$1 vm/boot.sh stop >/dev/null 2>&1
}

e2e_running() { VM_DIR=$W/vm-$1 vm/boot.sh status >/dev/null 2>&1; }

e2e_api() {
	curl -sS --max-time 10 --cacert "$W/verifier/ca.pem" \
		-H "Authorization: Bearer $(cat "$W/token")" "https://127.0.0.1:$VPORT$1"
}

# e2e_diag: what a reader needs when a wait fails.
e2e_diag() {
	if [[ -n $E2E_LIVE_VM && -s $E2E_LIVE_VM/serial.log ]]; then
		echo "---- console ($E2E_LIVE_VM/serial.log)"
		tail -n 20 "$E2E_LIVE_VM/serial.log"
	fi
	echo "---- verifier.log"
	tail -n 15 "$W/verifier.log"
	echo "---- agents"
	local agents
	agents=$(e2e_api /v1/agents 2>&1)
	echo "${agents:0:2000}"
}

# e2e_wait DESC JQ-TEST PATH [SECONDS]: polls the operator API until the jq test holds.
# Gives up early when the live guest stops.
e2e_wait() {
	local desc=$1 test=$2 path=$3 limit=${4:-$E2E_WAIT} t0=$SECONDS
	while ((SECONDS - t0 < limit)); do
		e2e_api "$path" 2>/dev/null | jq -e "$test" >/dev/null 2>&1 && return 0
		if [[ -n $E2E_LIVE_VM ]] && ! VM_DIR=$E2E_LIVE_VM vm/boot.sh status >/dev/null 2>&1; then
			echo "# waiting for $desc: the guest stopped"
			e2e_diag
			return 1
		fi
		sleep 0.5
	done
	echo "# waiting for $desc: nothing after $limit s"
	e2e_diag
	return 1
}

# e2e_console VM PATTERN [SECONDS]: waits for an extended regex on the guest's console.
e2e_console() {
	local log=$W/vm-$1/serial.log limit=${3:-$E2E_WAIT}
	wait_line "$log" "$2" "$limit" && return 0
	echo "# console of $1: no '$2' after $limit s"
	tail -n 20 "$log"
	return 1
}

# e2e_verdicts AGENT: the agent's verdicts, newest first.
e2e_verdicts() { e2e_api "/v1/agents/$1/verdicts?limit=1000"; }

# e2e_check_wait DESC JQ-TEST PATH [SECONDS]: e2e_wait as a test step.
e2e_check_wait() {
	if e2e_wait "$@"; then ok "$1"; else fail "$1"; fi
}
