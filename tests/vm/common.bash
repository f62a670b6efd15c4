# Shared by tests/vm/*.sh (not a test itself: the runner only picks *.sh).
# Builds (or reuses) the kernel and a root image, boots scenarios, replays lists.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$TOP" || exit 1

# vmt_prepare: kernel (cached), a root image with a dynamic test binary, a TPM instance.
# Exits the test (one failure) when the kernel cannot be built.
vmt_prepare() {
	local t0=$SECONDS
	if ! KERNEL=$(guest_kernel "$T_TMP/build-kernel.log"); then
		tail -n 30 "$T_TMP/build-kernel.log"
		fail "guest kernel builds"
		finish
		exit 1
	fi
	echo "kernel: $KERNEL ($((SECONDS - t0)) s)"
	export VM_KERNEL=$KERNEL
	export VM_ROOTFS=$T_TMP/rootfs.img ROOTFS_IMG=$T_TMP/rootfs.img
	ROOTFS_ATTESTD=/nonexistent ROOTFS_EXTRA_BINS=/usr/bin/true vm/build-rootfs.sh >"$T_TMP/build-rootfs.log" 2>&1 ||
		{ cat "$T_TMP/build-rootfs.log"; fail "root image builds"; finish; exit 1; }
	export VM_TPM_DIR=$T_TMP/tpm
	export VM_TIMEOUT=${VM_TIMEOUT:-90}
}

# vmt_boot NAME SCRIPT [APPEND]: boots with SCRIPT as the guest scenario; results in
# $T_TMP/NAME/out, console in $T_TMP/NAME/serial.log. Returns boot.sh's status.
vmt_boot() {
	local name=$1 script=$2 append=${3:-} t0=$SECONDS rc=0
	VM_DIR=$T_TMP/$name VM_SCRIPT=$script VM_APPEND=$append VM_CONSOLE=0 \
		vm/boot.sh >"$T_TMP/$name.boot.log" 2>&1 || rc=$?
	echo "boot $name: status $rc in $((SECONDS - t0)) s"
	[[ $rc -eq 0 ]] || { tail -n 20 "$T_TMP/$name.boot.log"; tail -n 30 "$T_TMP/$name/serial.log"; }
	return $rc
}

# vmt_pcr_file BANK HEX FILE: a 24-line `PCR-NN: <hex>` file for evmctl, PCR 10 = HEX.
vmt_pcr_file() {
	local hex=$2 file=$3 i zero
	zero=$(printf '%0*d' ${#hex} 0)
	: >"$file"
	for ((i = 0; i < 24; i++)); do
		if ((i == 10)); then
			printf 'PCR-%02d: %s\n' "$i" "$hex" >>"$file"
		else
			printf 'PCR-%02d: %s\n' "$i" "$zero" >>"$file"
		fi
	done
}

# vmt_pcr OUTDIR BANK: PCR 10 as the guest kernel reported it, lowercase hex.
vmt_pcr() { tr -d ' \n' <"$1/pcr10-$2" 2>/dev/null | tr 'A-F' 'a-f'; }

# vmt_evmctl_replay LIST SHA1HEX SHA256HEX: evmctl replays LIST against both values.
vmt_evmctl_replay() {
	local list=$1 d
	d=$(mktemp -d "$T_TMP/evm.XXXX")
	vmt_pcr_file sha1 "$2" "$d/sha1"
	vmt_pcr_file sha256 "$3" "$d/sha256"
	evmctl ima_measurement --ignore-violations --pcrs sha1,"$d/sha1" --pcrs sha256,"$d/sha256" \
		"$list" >"$d/log" 2>&1
	local rc=$?
	[[ $rc -eq 0 ]] || tail -n 5 "$d/log"
	return $rc
}

# vmt_attestctl_check NAME LIST SHA1HEX SHA256HEX ENTRIES: attestctl replay agrees with the
# guest's PCRs and entry count (skipped when attestctl is not built yet).
vmt_attestctl_check() {
	local name=$1 list=$2 out
	if [[ ! -x $B/attestctl ]]; then
		skip "$name: attestctl replay (no $B/attestctl yet)"
		return 0
	fi
	if ! out=$("$B/attestctl" replay --bank all "$list" 2>&1); then
		fail "$name: attestctl replay runs: $out"
		return 0
	fi
	check_eq "$name: attestctl pcr10 sha1" "pcr10 sha1 $3" "$(grep '^pcr10 sha1 ' <<<"$out" | tr 'A-F' 'a-f')"
	check_eq "$name: attestctl pcr10 sha256" "pcr10 sha256 $4" "$(grep '^pcr10 sha256 ' <<<"$out" | tr 'A-F' 'a-f')"
	check_eq "$name: attestctl entry count" "$5" "$(grep -oE '^entries [0-9]+' <<<"$out" | cut -d' ' -f2)"
}

# A scenario that runs a dynamic executable, reads files as root, saves list + PCRs.
vmt_measure_script() {
	cat >"$1" <<'SCRIPT'
/usr/bin/true || exit 3
for f in /etc/* /etc/attest/*; do [ -f "$f" ] && cat "$f" >/dev/null; done
mkdir -p /root/files
for i in $(seq 1 30); do
	echo "file $i" >/root/files/$i
	cat /root/files/$i >/dev/null
done
. /etc/attest/collect.sh
SCRIPT
}
