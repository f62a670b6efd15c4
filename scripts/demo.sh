#!/usr/bin/env bash
# `make demo`: a machine proves what it ran, and then is caught running something else.
#
# Builds what is missing (the patched guest kernel takes about 5 minutes the first time),
# manufactures a software TPM with an EK certificate, starts the verifier on 127.0.0.1, makes
# a policy from the guest's root tree and a boot policy from its kernel, boots the guest in
# QEMU under UEFI firmware (OVMF) with attestd started by its init, and narrates: enrolled, the
# boot judged (firmware, Secure Boot, kernel, command line), trusted, an unapproved program
# runs, untrusted, what an operator sees, and an approval scoped to this guest after which it
# is trusted again. Everything it starts is stopped by PID at the end (or on Ctrl-C / failure).
#
# Environment: KEEP=1 leaves the verifier and guest running until Ctrl-C;
#              DEMO_DIR (build/demo), B (build/out), DEMO_TIMEOUT seconds per wait (300).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
B=${B:-build/out}
D=$TOP/${DEMO_DIR:-build/demo}
KEEP=${KEEP:-0}
WAIT=${DEMO_TIMEOUT:-300}
# shellcheck disable=SC2034 # read by vm_log (vm/lib.sh)
VM_LOG_TAG=demo
# The services are started as the tests start them (tests/lib.sh, which sources vm/lib.sh);
# the demo keeps its own traps, set below, and its relative B.
demo_b=$B
# shellcheck source=../tests/lib.sh
. tests/lib.sh
B=$demo_b

say() { printf '\033[1m[demo +%3ds]\033[0m %s\n' "$SECONDS" "$*"; }
VPID=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -f $D/vm/qemu.pid ]]; then
		VM_DIR=$D/vm vm/boot.sh stop >/dev/null 2>&1 || true
	fi
	[[ -n $VPID ]] && vm_stop_pid "$VPID"
	t_cleanup
	exit "$rc"
}
trap cleanup EXIT
trap 'echo; say "interrupted; stopping what the demo started"; exit 130' INT TERM

# failed STEP FILE...: says which step failed, shows the relevant log lines, exits (cleanup runs).
failed() {
	local step=$1 f
	shift
	say "FAILED: $step"
	for f in "$@"; do
		[[ -s $f ]] || continue
		echo "---- last lines of $f"
		tail -n 25 "$f"
	done
	exit 1
}

for bin in "$B/verifier" "$B/attestd" "$B/attestctl"; do
	[[ -x $bin ]] || failed "build: $bin is missing (run make)"
done

say "1/7 guest kernel: Debian's linux-source-6.1 with our patch series (cached after the first build)"
vm/build-kernel.sh || failed "kernel build" "$TOP"/build/kernel/*/build.log

rm -rf "$D"
mkdir -p "$D"
say "2/7 software TPM: swtpm with SHA-1 and SHA-256 banks and an EK certificate from a CA private to this demo"
vm_swtpm_setup "$D/tpm" 1 || failed "swtpm_setup" "$D/tpm/setup.log"
cat "$D/tpm/ca/issuercert.pem" "$D/tpm/ca/swtpm-localca-rootca-cert.pem" >"$D/ek-ca.pem"

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$D/operator-token"
chmod 600 "$D/operator-token"

# demo_verifier [ARGS...]: the verifier on 127.0.0.1 (the same port at each start), with its
# state in $D/verifier and its log in $D/verifier.log; sets PORT and VPID.
demo_verifier() {
	start_verifier "$D/verifier" --tls-san 10.0.2.100 --ek-ca "$D/ek-ca.pem" \
		--operator-token-file "$D/operator-token" "$@" 2>/dev/null || return 1
	PORT=$VPORT
}

say "3/7 verifier: first start makes its TLS CA (the guest will trust only that CA)"
demo_verifier || failed "verifier start" "$D/verifier.log"
vm_stop_pid "$VPID"
VPID=

say "4/7 guest root image: busybox, attestd with its libraries, the verifier's CA"
cat >"$D/attestd.conf" <<CONF
# written by make demo; the verifier URL comes from the kernel command line
ca = /etc/attest/ca.pem
state-dir = /var/lib/attestd
interval = 3
CONF
# The guest's part, an init hook on the measured root (so the policy knows it): once attestd
# has its first trusted verdict, run a program that no policy allows.
cat >"$D/S90demo" <<'GUEST'
#!/bin/sh
[ "$1" = start ] || exit 0
wait_verdict() {
	i=0
	while [ $i -lt 900 ]; do
		grep -q "^verdict $1" /var/lib/attestd/last-verdict 2>/dev/null && return 0
		sleep 1
		i=$((i + 1))
	done
	return 1
}
(
	wait_verdict trusted || exit 1
	printf '#!/bin/sh\necho "demo: an unapproved program ran"\n' >/root/unapproved.sh
	chmod +x /root/unapproved.sh
	/root/unapproved.sh >/dev/console
) &
GUEST
chmod +x "$D/S90demo"
ROOTFS_IMG=$D/rootfs.img ROOTFS_FILES="$D/S90demo:/etc/init.d/S90demo" ROOTFS_CA=$D/verifier/ca.pem ROOTFS_ATTESTD=$B/attestd \
	ROOTFS_ATTESTD_CONF=$D/attestd.conf vm/build-rootfs.sh >"$D/rootfs.log" 2>&1 ||
	failed "root image" "$D/rootfs.log"

say "5/7 policy: every file of the guest's root tree, hashed with SHA-256 (attestctl policy-gen)"
"$B/attestctl" policy-gen "$D/rootfs.img.d" --hash sha256 --exclude '/var/lib/attestd/.*' \
	--out "$D/policy.json" 2>"$D/policy.log" || failed "policy-gen" "$D/policy.log"
say "      $(jq '.digests | length' "$D/policy.json") paths allowed; attestd's own state directory excluded"
# The boot policy: the kernel by the Authenticode digest UEFI firmware logs for it (of the
# image as QEMU hands it over), and a command line that keeps IMA measuring.
kernel=$("$B/attestctl" boot-policy kernel --qemu build/kernel/bzImage | cut -d' ' -f1) ||
	failed "boot-policy kernel"
jq --arg k "$kernel" '.boot = {"kernels": [{"digest": $k, "name": "the demo bzImage"}],
	"secure_boot": "off", "cmdline": {"required": ["ima_policy=tcb"]}}' "$D/policy.json" >"$D/policy-boot.json" &&
	mv "$D/policy-boot.json" "$D/policy.json" || failed "boot policy"
say "      boot policy: kernel ${kernel:0:23}... (attestctl boot-policy kernel), Secure Boot off, command line with ima_policy=tcb"
demo_verifier --policy "$D/policy.json" || failed "verifier start" "$D/verifier.log"
say "      verifier listening on https://127.0.0.1:$PORT (state: $D/verifier)"

say "6/7 booting the guest: OVMF (UEFI) then patched Linux 6.1 under QEMU (TCG), IMA with the tcb policy, swtpm as its TPM"
VM_DIR=$D/vm VM_TPM_DIR=$D/tpm VM_ROOTFS=$D/rootfs.img VERIFIER_PORT=$PORT \
	VM_APPEND="ima_hash=sha256" VM_BACKGROUND=1 VM_TIMEOUT=$((WAIT * 3)) \
	vm/boot.sh >"$D/boot.log" 2>&1 || failed "guest boot" "$D/boot.log" "$D/vm/serial.log"
say "      guest up (console: $D/vm/serial.log)"

api() { curl -sS --cacert "$D/verifier/ca.pem" -H "Authorization: Bearer $(cat "$D/operator-token")" "https://127.0.0.1:$PORT$1"; }
# wait_for WHAT JQ-TEST PATH: polls the operator API until the jq test holds.
wait_for() {
	local what=$1 test=$2 path=$3 t0=$SECONDS
	while ((SECONDS - t0 < WAIT)); do
		api "$path" 2>/dev/null | jq -e "$test" >/dev/null 2>&1 && return 0
		VM_DIR=$D/vm vm/boot.sh status >/dev/null 2>&1 || failed "$what: the guest stopped" "$D/vm/serial.log"
		sleep 1
	done
	failed "$what: nothing after $WAIT s" "$D/vm/serial.log" "$D/verifier.log"
}
AGENT=attest-guest
wait_for "enrollment" '.state == "active"' "/v1/agents/$AGENT"
say "      enrolled: the EK certificate chains to the TPM maker's CA, and the TPM decrypted our credential with that EK for this AK"
wait_for "first verdict" '[.verdicts[] | select(.trusted == true)] | length > 0' "/v1/agents/$AGENT/verdicts"
first=$(api "/v1/agents/$AGENT/verdicts" | jq -r '[.verdicts[] | select(.trusted == true)][-1] | "\(.next_offset)"')
boot=$(api "/v1/agents/$AGENT" | jq -c .boot)
say "7/7 first verdict: TRUSTED — the quote is signed by the enrolled AK over our nonce; the firmware's event log ($(jq -r .events <<<"$boot") events) replays to the quoted PCR 0-9 and the boot is one the boot policy allows; $first IMA entries replay to the quoted PCR 10 in SHA-1 and SHA-256, all in the policy"
say "      booted: firmware $(jq -r .firmware <<<"$boot"); Secure Boot $(jq -r .secure_boot <<<"$boot")"
say "      kernel $(jq -r '.kernel.digest[0:23]' <<<"$boot")... (PCR 4, $(jq -r 'if .kernel.allowed then "allowed: " + .kernel.name else "NOT allowed" end' <<<"$boot"))"
say "      command line \"$(jq -r .cmdline <<<"$boot")\" ($(jq -r 'if .cmdline_verified then "verified against PCR 9" else "not verified" end' <<<"$boot"))"
say "      now the guest runs /root/unapproved.sh, a program the policy does not know ..."
wait_for "untrusted verdict" '[.verdicts[] | select(.trusted == false)] | length > 0' "/v1/agents/$AGENT/verdicts"
reasons=$(api "/v1/agents/$AGENT/verdicts" | jq -r '[.verdicts[] | select(.trusted == false)][0].reasons | map(.code) | unique | join(", ")')
say "      next verdict: UNTRUSTED ($reasons)"
say "      what an operator sees (attestctl violations):"
ctl() { "$B/attestctl" "$@" --verifier "https://127.0.0.1:$PORT" --ca "$D/verifier/ca.pem" --token-file "$D/operator-token"; }
ctl violations | sed 's/^/        /'
# The operator decides: approve for this guest only (the default scope). The shared policy
# stays as it was; the guest's own amendment allows the file from now on.
vid=$(api "/v1/violations?agent=$AGENT&state=open" | jq -r '[.violations[] | select(.path == "/root/unapproved.sh")][0].id')
[[ $vid =~ ^[0-9]+$ ]] || failed "the violation of /root/unapproved.sh is not in the queue" "$D/verifier.log"
say "      the operator approves it for this guest only (attestctl approve $vid):"
ctl approve "$vid" | sed 's/^/        /'
seen=$(api "/v1/agents/$AGENT/verdicts?limit=1" | jq '.verdicts[0].id')
wait_for "a verdict after the approval" "[.verdicts[] | select(.id > $seen and .trusted == true)] | length > 0" \
	"/v1/agents/$AGENT/verdicts"
say "      next verdict: TRUSTED — the guest's amendment allows /root/unapproved.sh; policy default is still version $(api /v1/policies/default/versions | jq '.versions[0].version'), it allows nothing new"

if [[ $KEEP == 1 ]]; then
	say "KEEP=1: verifier on https://127.0.0.1:$PORT and the guest keep running; Ctrl-C stops both"
	say "      try: $B/attestctl agents --verifier https://127.0.0.1:$PORT --ca $D/verifier/ca.pem --token-file $D/operator-token"
	while kill -0 "$VPID" 2>/dev/null; do sleep 1; done
	exit 0
fi
say "done in ${SECONDS}s. Logs: $D/verifier.log, $D/vm/serial.log; policy: $D/policy.json."
say "next: 'make test' runs every test layer; README.md explains the parts."
