# shellcheck shell=bash
# Shared helpers for the vm/ scripts: sourced, not run. Defines TOP (the repository),
# vm_log, vm_die, vm_abspath, vm_lib_path and the swtpm functions.
VM_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VM_T0=${VM_T0:-$SECONDS}

vm_log() { printf '[%s +%3ds] %s\n' "${VM_LOG_TAG:-vm}" $((SECONDS - VM_T0)) "$*" >&2; }
vm_die() { vm_log "ERROR: $*"; exit 1; }
vm_abspath() { case $1 in /*) echo "$1" ;; *) echo "$VM_TOP/$1" ;; esac; }

# vm_kernel_variant: sets the defaults of KERNEL_SRC_TAR, KERNEL_PATCH_DIR, KERNEL_CACHE,
# KERNEL_FRAGMENT and KERNEL_SEED for KERNEL_TREE and KERNEL_VARIANT. What the caller set stays.
# Read by vm/build-kernel.sh and vm/build-module.sh, so that both find the same kernel.
#   KERNEL_TREE     6.1: Debian's linux-source-6.1, the series in kernel-patches/, cached in
#                   build/kernel; or 6.12: linux-source-6.12, the series in kernel-patches/6.12/,
#                   cached in build/kernel/6.12. Both take kernel-patches/guest.config.  [6.1]
#   KERNEL_VARIANT  default; late: the late-TPM kernel of tests/e2e/80 and 81 (tpm_tis as a module
#                   and the vtpm proxy: guest-late.config over guest.config); or hmac, 6.12 only:
#                   the TPM's HMAC sessions on the kernel's bus (6.12/guest-hmac.config over
#                   guest.config, CONFIG_TCG_TPM2_HMAC=y). A variant has its own cache under the
#                   tree's (build/kernel/late, build/kernel/6.12/hmac), so that the tree's default
#                   kernel and its key stay as they are, and is seeded from the tree's default
#                   kernel.  [default]
vm_kernel_variant() {
	local tree_cache patches=kernel-patches
	case ${KERNEL_TREE:-6.1} in
	6.1) tree_cache=build/kernel ;;
	6.12)
		tree_cache=build/kernel/6.12
		KERNEL_PATCH_DIR=${KERNEL_PATCH_DIR:-$patches/6.12}
		;;
	*) vm_die "KERNEL_TREE is 6.1 or 6.12, not '$KERNEL_TREE'" ;;
	esac
	KERNEL_SRC_TAR=${KERNEL_SRC_TAR:-/usr/src/linux-source-${KERNEL_TREE:-6.1}.tar.xz}
	case ${KERNEL_VARIANT:-default} in
	default)
		KERNEL_CACHE=${KERNEL_CACHE:-$tree_cache}
		KERNEL_FRAGMENT=${KERNEL_FRAGMENT:-$patches/guest.config}
		;;
	late)
		KERNEL_CACHE=${KERNEL_CACHE:-$tree_cache/late}
		KERNEL_FRAGMENT=${KERNEL_FRAGMENT:-$patches/guest.config $patches/guest-late.config}
		KERNEL_SEED=${KERNEL_SEED:-$tree_cache}
		;;
	hmac)
		[[ ${KERNEL_TREE:-6.1} != 6.1 ]] ||
			vm_die "KERNEL_VARIANT=hmac needs KERNEL_TREE=6.12: 6.1 has no CONFIG_TCG_TPM2_HMAC"
		KERNEL_CACHE=${KERNEL_CACHE:-$tree_cache/hmac}
		KERNEL_FRAGMENT=${KERNEL_FRAGMENT:-$patches/guest.config $patches/6.12/guest-hmac.config}
		KERNEL_SEED=${KERNEL_SEED:-$tree_cache}
		;;
	*) vm_die "KERNEL_VARIANT is default, late or hmac, not '$KERNEL_VARIANT'" ;;
	esac
}

# vm_lib_path NAME: the path of the x86-64 library NAME in the host's loader cache (the first
# one `ldconfig -p` lists), or nothing. awk reads ldconfig's whole output instead of exiting at
# the match: a reader that stops early kills the writer with SIGPIPE, and under pipefail the
# pipeline then fails (about 6% of image builds did, depending on where the match falls).
vm_lib_path() {
	ldconfig -p | awk -v n="$1" '$1 == n && /x86-64/ && path == "" { path = $NF } END { print path }'
}

# vm_stop_pid PID: TERM, wait up to 5 s, then KILL. Only ever a PID we started.
vm_stop_pid() {
	local pid=$1 i
	[[ -n $pid ]] || return 0
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
}

# vm_swtpm_ca_init DIR: a swtpm local CA private to this TPM instance. Writes
# DIR/swtpm_setup.conf, DIR/swtpm-localca.conf, DIR/swtpm-localca.options; the root
# certificate the verifier trusts is DIR/ca/swtpm-localca-rootca-cert.pem (made by the
# first swtpm_setup).
vm_swtpm_ca_init() {
	local dir=$1
	mkdir -p "$dir/ca"
	cat >"$dir/swtpm-localca.conf" <<CONF
statedir = $dir/ca
signingkey = $dir/ca/signkey.pem
issuercert = $dir/ca/issuercert.pem
certserial = $dir/ca/certserial
CONF
	cat >"$dir/swtpm-localca.options" <<CONF
--platform-manufacturer Attest-Guest
--platform-version 2.1
--platform-model QEMU
CONF
	cat >"$dir/swtpm_setup.conf" <<CONF
create_certs_tool = /usr/bin/swtpm_localca
create_certs_tool_config = $dir/swtpm-localca.conf
create_certs_tool_options = $dir/swtpm-localca.options
active_pcr_banks = sha1,sha256
CONF
}

# vm_swtpm_setup TPMDIR [force]: manufactures the TPM in TPMDIR/state (sha1+sha256
# banks, EK and platform certificates from the CA in TPMDIR) unless it exists already.
# The EK certificate is also written to TPMDIR/ek-rsa2048.crt.
vm_swtpm_setup() {
	local dir=$1 force=${2:-0}
	if [[ $force != 1 && -s $dir/state/tpm2-00.permall ]]; then
		return 0
	fi
	[[ -f $dir/swtpm_setup.conf ]] || vm_swtpm_ca_init "$dir"
	rm -rf "$dir/state"
	mkdir -p "$dir/state" "$dir/certs"
	swtpm_setup --tpm2 --tpmstate "$dir/state" --config "$dir/swtpm_setup.conf" \
		--pcr-banks sha1,sha256 --create-ek-cert --create-platform-cert \
		--write-ek-cert-files "$dir/certs" --overwrite >"$dir/setup.log" 2>&1 ||
		{ cat "$dir/setup.log" >&2; return 1; }
	vm_log "swtpm manufactured in $dir/state (CA: $dir/ca/swtpm-localca-rootca-cert.pem)"
}

# vm_swtpm_start TPMDIR: starts `swtpm socket` for one QEMU boot on the unix socket
# TPMDIR/swtpm.sock; sets SWTPM_PID. swtpm exits by itself when QEMU disconnects.
vm_swtpm_start() {
	local dir=$1 i
	rm -f "$dir/swtpm.sock" "$dir/swtpm.pid"
	swtpm socket --tpm2 --tpmstate dir="$dir/state" \
		--ctrl type=unixio,path="$dir/swtpm.sock" \
		--pid file="$dir/swtpm.pid" --log file="$dir/swtpm.log",level=1 \
		--terminate &
	SWTPM_PID=$!
	for ((i = 0; i < 100; i++)); do
		[[ -S $dir/swtpm.sock ]] && return 0
		kill -0 "$SWTPM_PID" 2>/dev/null || break
		sleep 0.05
	done
	vm_log "swtpm did not come up (log: $dir/swtpm.log)"
	return 1
}
