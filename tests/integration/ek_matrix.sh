#!/usr/bin/env bash
# The EKs real TPMs carry, each enrolled end to end through attestd against a real verifier and
# a TCP swtpm. swtpm_setup makes the RSA EK (2048: L-1, or 3072: H-6) and swtpm's ECC P-384 EK
# (H-3) with their certificates; the other templates are made with tpm2_createek (L-2) and
# tpm2_createprimary (H-1), their certificates issued by the same test CA with openssl, and
# tpm2_nvdefine/tpm2_nvwrite place them (padded) at the EK Credential Profile's NV indices, with
# the chain of intermediates at 0x01C00100:
#   chain: auto picks L-1; the CA between the EK certificate and the root comes from NV
#   wrong-chain: NV 0x01C00100 holds an unrelated CA: refused as untrusted
#   ek-cert: no certificate in NV; --ek-cert FILE (PEM: the certificate, then the CA)
#   auto-h3: with no L-1 certificate, auto picks H-3 (P-384, sha384 PolicyOR session)
#   l2, h1: --ek-profile L-2 (P-256, low range) and H-1 (RSA-2048, sha256 PolicyOR session)
#   h6: a TPM with an RSA-3072 EK, --ek-profile H-6
# and attestd's own refusals: an unknown profile, an --ek-cert file that is no certificate.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

IMAGEN=$B/tools/imagen
for t in swtpm swtpm_setup tpm2_pcrextend tpm2_nvdefine tpm2_nvwrite tpm2_nvread tpm2_createek \
	tpm2_createprimary tpm2_readpublic tpm2_flushcontext openssl; do
	command -v $t >/dev/null || { skip "$t not installed"; finish; exit; }
done
need_built "$IMAGEN" "$B/attestd" "$B/verifier"

W=$T_TMP
swtpm_with_ek_ca "$W" || { finish; exit 1; }
"$IMAGEN" --entries 5 --template ima-ng --hash sha256 --zero-boot-pcrs --seed 3 \
	--out "$W/ima" --tpm2-extend-script "$W/ext" >/dev/null
# shellcheck disable=SC2046 # one PCR:alg=digest argument per word
tpm2_pcrextend $(cat "$W/ext") >/dev/null
ROOT=$W/ca/ca/swtpm-localca-rootca-cert.pem
VENDOR=$W/ca/ca/issuercert.pem
VENDOR_KEY=$W/ca/ca/signkey.pem
SERIAL=100

# nv_replace INDEX FILE SIZE: INDEX (re)defined as SIZE bytes, owner-written and readable as a
# maker's provisioning leaves it, holding FILE then 0xFF fill.
nv_replace() {
	local idx=$1 file=$2 size=$3 n
	n=$(stat -c %s "$file")
	{ cat "$file"; head -c $((size - n)) /dev/zero | tr '\0' '\377'; } >"$W/nv.bin"
	nv_drop "$idx"
	tpm2_nvdefine -C o -s "$size" -a "ownerread|ownerwrite|authread|authwrite|no_da" "$idx" \
		>/dev/null && tpm2_nvwrite -C o -i "$W/nv.bin" "$idx" >/dev/null
}
nv_drop() {
	tpm2_nvundefine -C p "$1" >/dev/null 2>&1 || tpm2_nvundefine -C o "$1" >/dev/null 2>&1
	true
}

# cert_for CTX OUT: an EK certificate (DER) for the key in the TPM context CTX, issued by the
# test CA (openssl: a throwaway request whose key -force_pubkey replaces with the EK's).
cert_for() {
	tpm2_readpublic -c "$1" -f pem -o "$W/key.pem" >/dev/null &&
		openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
			-keyout "$W/throw.key" -subj "/CN=throwaway" -out "$W/throw.csr" 2>/dev/null &&
		openssl x509 -req -in "$W/throw.csr" -CA "$VENDOR" -CAkey "$VENDOR_KEY" \
			-set_serial $((SERIAL++)) -days 30 -force_pubkey "$W/key.pem" \
			-outform DER -out "$2" 2>/dev/null
}

# enroll SHAPE CAFILE [ATTESTD ARGS...]: a fresh verifier trusting CAFILE, attestd --once as
# agent SHAPE. Sets OUT (attestd's output). True if the round's verdict is trusted.
enroll() {
	local shape=$1 cafile=$2
	shift 2
	start_verifier "$W/v-$shape" --ek-ca "$cafile" || { fail "$shape: verifier starts"; return 1; }
	"$B/attestd" --config /dev/null --verifier "$URL" --ca "$CA" --agent-id "$shape" --tcti "$TCTI" \
		--state-dir "$W/a-$shape" --event-log none --ima-list "$W/ima" --once "$@" \
		>"$W/a-$shape.out" 2>"$W/a-$shape.log"
	OUT=$(cat "$W/a-$shape.out" "$W/a-$shape.log")
	stop_pid "$VPID"
	grep -q "verdict trusted" <<<"$OUT"
}
said() { grep -q -- "$1" <<<"$OUT"; }

tpm2_nvread -C o 0x01c00002 -o "$W/ek.der" >/dev/null 2>&1 ||
	tpm2_nvread 0x01c00002 -o "$W/ek.der" >/dev/null || fail "read the EK certificate"
openssl x509 -in "$VENDOR" -outform DER -out "$W/vendor.der"

# The chain from NV: the verifier trusts the root alone; the CA comes from 0x01C00100.
check "chain: the CA in NV 0x01c00100, padded" nv_replace 0x01c00100 "$W/vendor.der" 1536
check "chain: enrolled and trusted with --ek-ca the root alone" enroll chain "$ROOT"
check "chain: auto chose L-1" said "ek profile L-1 RSA-2048"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$W/other.key" \
	-subj "/CN=unrelated CA" -days 30 -outform DER -out "$W/other.der" 2>/dev/null
nv_replace 0x01c00100 "$W/other.der" 1024
check_fails "wrong-chain: an unrelated CA in NV 0x01c00100: refused" enroll wrong-chain "$ROOT"
check "wrong-chain: the refusal says the certificate is not trusted" said "ek_untrusted\|not trusted"
nv_drop 0x01c00100

# No certificate in NV: --ek-cert FILE, PEM with the CA after the certificate.
nv_drop 0x01c00002
{ openssl x509 -inform DER -in "$W/ek.der"; cat "$VENDOR"; } >"$W/ek-and-ca.pem"
check "ek-cert: --ek-cert FILE (certificate and CA) with no certificate in NV: trusted" \
	enroll ek-cert "$ROOT" --ek-cert "$W/ek-and-ca.pem"
check "ek-cert: the certificate's RSA-2048 key chose L-1" said "ek profile L-1 RSA-2048"
echo "not a certificate" >"$W/junk.pem"
check_fails "ek-cert: a file that is no certificate: refused by attestd" \
	enroll ek-cert-junk "$ROOT" --ek-cert "$W/junk.pem"
check "ek-cert: attestd says why" said "is not one der certificate nor pem"

# No L-1 certificate: auto finds swtpm's P-384 EK's at 0x01c00016.
check "auto-h3: trusted with no L-1 certificate" enroll auto-h3 "$W/ek-ca.pem"
check "auto-h3: auto chose H-3" said "ek profile H-3 ECC P-384"

# L-2, the low-range P-256 EK, as tpm2_createek makes it.
tpm2_createek -G ecc -c "$W/l2.ctx" >/dev/null && cert_for "$W/l2.ctx" "$W/l2.der" &&
	nv_replace 0x01c0000a "$W/l2.der" 1024 || fail "l2: EK and certificate at 0x01c0000a"
tpm2_flushcontext -t >/dev/null 2>&1
check "l2: --ek-profile L-2: trusted" enroll l2 "$W/ek-ca.pem" --ek-profile L-2
check "l2: the P-256 EK was used" said "ek profile L-2 ECC P-256"

# H-1, the high-range RSA-2048 EK: userWithAuth, PolicyB (sha256), an empty unique.
printf '\xca\x3d\x0a\x99\xa2\xb9\x39\x06\xf7\xa3\x34\x24\x14\xef\xcf\xb3\xa3\x85\xd4\x4c\xd1\xfd\x45\x90\x89\xd1\x9b\x50\x71\xc0\xb7\xa0' \
	>"$W/policy-b-sha256"
tpm2_createprimary -C e -g sha256 -G rsa2048:null:aes128cfb -L "$W/policy-b-sha256" \
	-a "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|adminwithpolicy|restricted|decrypt" \
	-c "$W/h1.ctx" >/dev/null && cert_for "$W/h1.ctx" "$W/h1.der" &&
	nv_replace 0x01c00012 "$W/h1.der" 1024 || fail "h1: EK and certificate at 0x01c00012"
tpm2_flushcontext -t >/dev/null 2>&1
check "h1: --ek-profile H-1: trusted" enroll h1 "$W/ek-ca.pem" --ek-profile H-1
check "h1: the high-range RSA-2048 EK was used" said "ek profile H-1 RSA-2048"

check_fails "an unknown --ek-profile is refused" enroll bad-profile "$W/ek-ca.pem" --ek-profile H-5
check "the refusal lists the profiles" said "unknown --ek-profile 'H-5'; one of: auto, L-1"

# A TPM whose RSA EK is 3072 bits (H-6, sha384 PolicyOR session).
mkdir -p "$W/tpm3072"
if swtpm_setup --tpm2 --tpmstate "$W/tpm3072" --config "$W/ca/swtpm_setup.conf" \
	--pcr-banks sha1,sha256 --create-ek-cert --rsa-keysize 3072 --overwrite \
	>"$W/tpm3072/setup.log" 2>&1 && start_swtpm "$W/tpm3072"; then
	# shellcheck disable=SC2046
	tpm2_pcrextend $(cat "$W/ext") >/dev/null
	check "h6: --ek-profile H-6 (RSA-3072): trusted" enroll h6 "$W/ek-ca.pem" --ek-profile H-6
	check "h6: the RSA-3072 EK was used" said "ek profile H-6 RSA-3072"
else
	fail "h6: swtpm_setup --rsa-keysize 3072"
	cat "$W/tpm3072/setup.log"
fi
finish
