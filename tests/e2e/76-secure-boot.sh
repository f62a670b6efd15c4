#!/usr/bin/env bash
# Secure Boot: OVMF's secboot build with Debian's snakeoil keys enrolled (VM_FIRMWARE=ovmf-secboot)
# and the guest kernel signed with the snakeoil key (sbsign). A signature does not change a
# kernel's Authenticode digest, so the boot policy names the same kernel, and requires Secure
# Boot on. QEMU's -kernel writes four fields of the setup header before OVMF sees the image,
# which breaks a signature made over the file; OVMF then refuses the image and falls back to
# its legacy Linux loader, which neither verifies nor measures the kernel:
#   1. the kernel signed as a file: Secure Boot is "on", yet nothing verified or measured the
#      kernel: untrusted, the reason says PCR 4 loaded no allowed kernel;
#   2. the kernel signed with QEMU's four fields already written (QEMU writes the same values
#      again, the signature holds): verified, measured, trusted, Secure Boot on.
set -uo pipefail
. "$(dirname "$0")/common.bash"
for f in /usr/share/OVMF/OVMF_CODE_4M.secboot.fd /usr/share/OVMF/OVMF_VARS_4M.snakeoil.fd \
	/usr/share/ovmf/PkKek-1-snakeoil.key /usr/share/ovmf/PkKek-1-snakeoil.pem; do
	[[ -r $f ]] || { skip "no $f (apt-get install ovmf)"; finish; exit 0; }
done
command -v sbsign >/dev/null || { skip "no sbsign (apt-get install sbsigntool)"; finish; exit 0; }
e2e_prepare

# Debian's snakeoil key is protected by the passphrase "snakeoil" (ovmf's README.Debian).
openssl pkey -in /usr/share/ovmf/PkKek-1-snakeoil.key -passin pass:snakeoil -out "$W/snakeoil.key" ||
	e2e_abort "the snakeoil key decrypts"
sign() { # IN OUT
	sbsign --key "$W/snakeoil.key" --cert /usr/share/ovmf/PkKek-1-snakeoil.pem --output "$2" "$1" \
		>"$W/sbsign.log" 2>&1 || e2e_abort "sbsign signs $1" "$W/sbsign.log"
}
sign "$VM_KERNEL" "$W/signed-file"
# The setup header as QEMU's x86 loader leaves it (boot protocol >= 2.02, loaded high), as
# attestctl boot-policy kernel --qemu models it: type_of_loader, CAN_USE_HEAP, heap_end_ptr,
# cmd_line_ptr.
python3 - "$VM_KERNEL" "$W/qemu-bzImage" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
d[0x210] = 0xb0
d[0x211] |= 0x80
struct.pack_into('<H', d, 0x224, 0x20000 - 0x10000 - 0x200)
struct.pack_into('<I', d, 0x228, 0x20000)
open(sys.argv[2], 'wb').write(d)
PY
sign "$W/qemu-bzImage" "$W/signed-qemu"
kernel=$("$B/attestctl" boot-policy kernel --qemu "$VM_KERNEL" | cut -d' ' -f1)
check_eq "a signature leaves the Authenticode digest as it was" \
	"$kernel" "$("$B/attestctl" boot-policy kernel --qemu "$W/signed-file" | cut -d' ' -f1)"
check_eq "and so does writing QEMU's fields ahead of QEMU" \
	"$kernel" "$("$B/attestctl" boot-policy kernel "$W/signed-qemu" | cut -d' ' -f1)"
jq --arg k "$kernel" '.boot = {"kernels": [$k], "secure_boot": "on", "cmdline": {"required": ["ima_policy=tcb"]}}' \
	"$W/policy.json" >"$W/policy-sb.json"
e2e_verifier_stop
e2e_verifier_start "$W/policy-sb.json" --policy-replace || e2e_abort "verifier restarts with the Secure Boot policy" "$W/verifier.log"

first_verdict() {
	e2e_wait "a verdict for $1" '.verdicts | length > 0' "/v1/agents/$1/verdicts" >/dev/null
	e2e_verdicts "$1" | jq -c '.verdicts[-1]'
}

# 1. signed as a file: OVMF's check fails on what QEMU hands it, the legacy loader runs it
VM_FIRMWARE=ovmf-secboot VM_KERNEL=$W/signed-file e2e_boot file sb-file || e2e_abort "the file-signed kernel boots"
first=$(first_verdict sb-file)
echo "# reasons: $(jq -c '[.reasons[].code]' <<<"$first")"
check_eq "Secure Boot on but the kernel never verified: untrusted" untrusted "$(jq -r .verdict <<<"$first")"
check "the reason: PCR 4 loaded no allowed kernel" grep -q '^PCR 4: the firmware loaded no allowed kernel' \
	<<<"$(jq -r '[.reasons[] | select(.code == "boot_unverifiable")][0].detail' <<<"$first")"
boot=$(e2e_api /v1/agents/sb-file | jq -c .boot)
check_eq "the summary: Secure Boot on, no kernel measured, the command line not measured" "on|null|false" \
	"$(jq -r '[.secure_boot, .kernel, .cmdline_verified] | map(tostring) | join("|")' <<<"$boot")"
e2e_stop file

# 2. signed with QEMU's fields written: verified by the firmware, measured, judged
VM_FIRMWARE=ovmf-secboot VM_KERNEL=$W/signed-qemu e2e_boot sb sb-on || e2e_abort "the signed kernel boots under Secure Boot"
check "the kernel says Secure Boot is on" grep -q 'Secure boot enabled' "$W/vm-sb/serial.log"
first=$(first_verdict sb-on)
echo "# reasons: $(jq -c '[.reasons[].code]' <<<"$first")"
check_eq "Secure Boot on, the signed kernel verified and measured: trusted" trusted "$(jq -r .verdict <<<"$first")"
check_eq "the summary: Secure Boot on, the kernel, the command line verified" "on|$kernel|true" \
	"$(e2e_api /v1/agents/sb-on | jq -r '.boot | [.secure_boot, .kernel.digest, .cmdline_verified] | map(tostring) | join("|")')"
e2e_stop sb
finish
