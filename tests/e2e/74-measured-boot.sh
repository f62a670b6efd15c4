#!/usr/bin/env bash
# Measured boot under OVMF: the firmware measures the kernel (PCR 4, Authenticode) and the EFI
# stub its command line (PCR 9); attestd sends the firmware event log; the verifier replays it
# against the quoted PCR 0-9 and judges it with a boot policy made from the guest's own kernel
# (attestctl boot-policy kernel --qemu, the digest OVMF logs for what QEMU hands it):
#   1. the kernel and command line the policy allows: trusted, and the operator sees the boot;
#   2. the same kernel without ima_policy=tcb: untrusted, the reason names the command line;
#   3. another kernel image (a copy of the bzImage with bytes appended, so its digest differs):
#      untrusted, the reason names PCR 4;
#   4. the guest lies about its boot (an altered copy of its event log bind-mounted where
#      attestd reads it): boot_log_mismatch.
set -uo pipefail
. "$(dirname "$0")/common.bash"
[[ ${VM_FIRMWARE:-ovmf} == ovmf ]] || { skip "measured boot needs OVMF (VM_FIRMWARE=${VM_FIRMWARE})"; finish; exit 0; }
e2e_prepare

kernel=$("$B/attestctl" boot-policy kernel --qemu "$VM_KERNEL" | cut -d' ' -f1)
check "the guest kernel's Authenticode digest" grep -qE '^sha256:[0-9a-f]{64}$' <<<"$kernel"
jq --arg k "$kernel" '.boot = {"kernels": [{"digest": $k, "name": "guest bzImage"}],
	"secure_boot": "off", "cmdline": {"required": ["ima_policy=tcb"], "forbidden": ["ima_appraise=off"]}}' \
	"$W/policy.json" >"$W/policy-boot.json"
e2e_verifier_stop
e2e_verifier_start "$W/policy-boot.json" --policy-replace || e2e_abort "verifier restarts with the boot policy" "$W/verifier.log"

# first_verdict AGENT: the agent's first verdict (oldest), once there is one.
first_verdict() {
	e2e_wait "a verdict for $1" '.verdicts | length > 0' "/v1/agents/$1/verdicts" >/dev/null
	e2e_verdicts "$1" | jq -c '.verdicts[-1]'
}
# detail_of VERDICT CODE: the detail of the verdict's first reason with that code.
detail_of() { jq -r --arg c "$2" '[.reasons[] | select(.code == $c)][0].detail' <<<"$1"; }

# 1. the allowed kernel and command line
e2e_boot good mb-good || e2e_abort "guest boots under OVMF"
first=$(first_verdict mb-good)
check_eq "allowed kernel and command line: trusted" trusted "$(jq -r .verdict <<<"$first")"
boot=$(e2e_api /v1/agents/mb-good | jq -c .boot)
check_eq "the kernel OVMF logged is the digest attestctl computed from the file" "$kernel" \
	"$(jq -r .kernel.digest <<<"$boot")"
check_eq "the boot summary: the log replays, Secure Boot off, kernel allowed" "replays|off|true|guest bzImage" \
	"$(jq -r '[.status, .secure_boot, .kernel.allowed, .kernel.name] | join("|")' <<<"$boot")"
check_eq "the command line the guest booted, verified against PCR 9" "true" "$(jq -r .cmdline_verified <<<"$boot")"
check "the command line has ima_policy=tcb" grep -q 'ima_policy=tcb' <<<"$(jq -r .cmdline <<<"$boot")"
"$B/attestctl" agent mb-good --verifier "https://127.0.0.1:$VPORT" --ca "$W/verifier/ca.pem" \
	--token-file "$W/token" >"$W/agent.txt"
check "attestctl agent shows the firmware" grep -q '^firmware: *UEFI, ' "$W/agent.txt"
e2e_stop good

# 2. the same kernel without ima_policy=tcb: IMA measures nothing after boot_aggregate
VM_IMA_POLICY=none e2e_boot noima mb-noima || e2e_abort "guest boots without ima_policy"
check_fails "the guest booted without ima_policy=" grep -q 'ima_policy=' <<<"$(grep -m1 'Kernel command line' "$W/vm-noima/serial.log")"
first=$(first_verdict mb-noima)
check_eq "no ima_policy=tcb: untrusted" untrusted "$(jq -r .verdict <<<"$first")"
d=$(detail_of "$first" boot_not_in_policy)
check "the reason names the command line and the missing rule" \
	grep -q '^PCR 9: the kernel command line ".*" lacks the required "ima_policy=tcb"$' <<<"$d"
check_eq "stored for review as a command-line finding" "boot:cmdline" \
	"$(e2e_api '/v1/violations?agent=mb-noima' | jq -r '[.violations[] | select(.reason == "boot_not_in_policy")][0].template')"
e2e_stop noima

# 3. another kernel image: the same kernel with bytes appended (Authenticode hashes them)
cp "$VM_KERNEL" "$W/other-bzImage"
printf 'another kernel image for tests/e2e/74-measured-boot.sh\n' >>"$W/other-bzImage"
other=$("$B/attestctl" boot-policy kernel --qemu "$W/other-bzImage" | cut -d' ' -f1)
check_fails "the copy has another digest" test "$other" = "$kernel"
VM_KERNEL=$W/other-bzImage e2e_boot other mb-other || e2e_abort "guest boots the other kernel"
first=$(first_verdict mb-other)
check_eq "another kernel: untrusted" untrusted "$(jq -r .verdict <<<"$first")"
d=$(detail_of "$first" boot_not_in_policy)
check "the reason names PCR 4 and the kernel's digest" \
	grep -q "^PCR 4: EFI application \"kernel\" ([0-9]* bytes) $other is not an allowed kernel\$" <<<"$d"
check_eq "the summary shows the kernel as not allowed" "$other|false" \
	"$(e2e_api /v1/agents/mb-other | jq -r '[.boot.kernel.digest, .boot.kernel.allowed] | join("|")')"
e2e_stop other

# 4. an event log altered by the guest
e2e_boot fake mb-fake attest.e2e=fakelog || e2e_abort "guest boots and fakes its log"
check "the guest bind-mounted an altered log" grep -q 'E2E-ACTION-DONE fakelog' "$W/vm-fake/serial.log"
first=$(first_verdict mb-fake)
check_eq "an altered log: untrusted" untrusted "$(jq -r .verdict <<<"$first")"
d=$(detail_of "$first" boot_log_mismatch)
check "reason boot_log_mismatch names PCR 0" grep -q '^PCR 0 sha' <<<"$d"
check_eq "the IMA list itself still replays (no pcr_mismatch)" 0 \
	"$(jq '[.reasons[] | select(.code == "pcr_mismatch")] | length' <<<"$first")"
e2e_stop fake
finish
