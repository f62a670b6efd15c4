#!/usr/bin/env bash
# EK certificates as TPM makers ship them, enrolled end to end through attestd against a real
# verifier and a TCP swtpm (swtpm_setup makes the EK and its certificate; tpm2_nvdefine and
# tpm2_nvwrite rearrange the NV indices as other makers' TPMs hold them):
#   padded: the RSA EK certificate in an NV index larger than it, the rest 0xFF (STMicro ST33)
#   ca-only: the verifier's --ek-ca holds the maker's CA alone, not its root (an anchor)
#   root-only: --ek-ca holds the root alone and nothing gives the CA between: refused
# Each shape: attestd --once enrolls and attests, or the refusal names the reason.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

IMAGEN=$B/tools/imagen
need_cmds swtpm swtpm_setup tpm2_pcrextend tpm2_nvdefine tpm2_nvwrite tpm2_nvread curl jq openssl
need_built "$IMAGEN" "$B/attestd" "$B/verifier"

W=$T_TMP
swtpm_with_ek_ca "$W" || { finish; exit 1; }
"$IMAGEN" --entries 5 --template ima-ng --hash sha256 --zero-boot-pcrs --seed 3 \
	--out "$W/ima" --tpm2-extend-script "$W/ext" >/dev/null
# shellcheck disable=SC2046 # one PCR:alg=digest argument per word
tpm2_pcrextend $(cat "$W/ext") >/dev/null
ROOT=$W/ca/ca/swtpm-localca-rootca-cert.pem
VENDOR=$W/ca/ca/issuercert.pem

# nv_replace INDEX FILE SIZE: INDEX redefined as SIZE bytes (owner-written, as a maker's
# provisioning leaves it readable), holding FILE then 0xFF fill.
nv_replace() {
	local idx=$1 file=$2 size=$3 n
	n=$(stat -c %s "$file")
	{ cat "$file"; head -c $((size - n)) /dev/zero | tr '\0' '\377'; } >"$W/nv.bin"
	tpm2_nvundefine -C p "$idx" >/dev/null 2>&1 || tpm2_nvundefine -C o "$idx" >/dev/null 2>&1
	tpm2_nvdefine -C o -s "$size" -a "ownerread|ownerwrite|authread|authwrite|no_da" "$idx" \
		>/dev/null && tpm2_nvwrite -C o -i "$W/nv.bin" "$idx" >/dev/null
}

# enroll SHAPE CAFILE: a fresh verifier trusting CAFILE, attestd --once as agent SHAPE.
# Sets OUT (attestd's stderr). True if the round's verdict is trusted.
enroll() {
	local shape=$1 cafile=$2
	start_verifier "$W/v-$shape" --ek-ca "$cafile" || { fail "$shape: verifier starts"; return 1; }
	"$B/attestd" --config /dev/null --verifier "$URL" --ca "$CA" --agent-id "$shape" --tcti "$TCTI" \
		--state-dir "$W/a-$shape" --event-log none --ima-list "$W/ima" --once \
		>"$W/a-$shape.out" 2>"$W/a-$shape.log"
	OUT=$(cat "$W/a-$shape.out" "$W/a-$shape.log")
	stop_pid "$VPID"
	grep -q "verdict trusted" <<<"$OUT"
}

tpm2_nvread -C o 0x01c00002 -o "$W/ek.der" >/dev/null 2>&1 ||
	tpm2_nvread 0x01c00002 -o "$W/ek.der" >/dev/null || fail "read the EK certificate"
check "padded: the EK certificate in a 2048-byte index, 0xFF after it" \
	nv_replace 0x01c00002 "$W/ek.der" 2048
check "padded: enrolled and trusted through attestd" enroll padded "$W/ek-ca.pem"
[[ $OUT == *"verdict trusted"* ]] || echo "$OUT" | tail -n 5
check "ca-only: --ek-ca with the maker's CA alone (no root): enrolled and trusted" \
	enroll ca-only "$VENDOR"
check_fails "root-only: --ek-ca with the root alone, no CA sent: refused" enroll root-only "$ROOT"
check "root-only: the refusal says the certificate is not trusted" \
	grep -q "ek_untrusted\|not trusted" <<<"$OUT"
finish
