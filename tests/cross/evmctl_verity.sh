#!/usr/bin/env bash
# fs-verity file signatures (IMA signature version 3, kernel 5.19+) made by the real tools and
# judged by `attestctl evaluate`. Debian's fsverity computes each file's fs-verity digest
# (`fsverity digest`, in userspace: no fs-verity filesystem needed); evmctl signs.
#
# Debian 12's evmctl (ima-evm-utils 1.4) predates `sign_hash --veritysig` (1.5), so the test
# does what 1.5's --veritysig does around evmctl's signing: it hashes the kernel's struct
# ima_file_id (u8 6 = IMA_VERITY_DIGSIG || u8 hash_algo || the fs-verity digest, as
# ima_appraise.c calc_file_id_hash does) with openssl, has `evmctl sign_hash` sign that hash,
# and writes the header evmctl 1.5 writes: type 6, version 3 in place of 3, 2. The entries are
# ima-sigv2 lines (d-ngv2 "verity:sha256:...") as the kernel prints them for a rule with
# digest_type=verity, made binary by imaascii.
#
# Entry variants (policy: k1 and k2 trusted, signatures required everywhere):
#   good-k1, good-k2-sha512   signed by a trusted key (RSA sha256; EC sha512): allowed
#   wrong-key                 signed by k3, which the policy does not trust: unknown_signing_key
#   forged-keyid              signed by k3 under k1's key id: bad_file_signature
#   wrong-digest              the file changed after signing (its new fs-verity digest): bad
#   ima-typed                 the good signature on an entry whose digest is typed ima: bad
#   v2-on-verity              a v2 signature (evmctl over the verity digest itself): bad
source "$(dirname "$0")/../lib.sh"
ATTESTCTL=$B/attestctl
IMAASCII=$B/tools/imaascii
for tool in "$ATTESTCTL" "$IMAASCII"; do
	[[ -x $tool ]] || { fail "missing $tool (make all)"; finish; exit; }
done
for t in evmctl fsverity openssl; do
	command -v $t >/dev/null || { fail "missing $t (make deps)"; finish; exit; }
done
W=$T_TMP

openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$W/k1.key" 2>/dev/null &&
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$W/k2.key" 2>/dev/null &&
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$W/k3.key" 2>/dev/null ||
	{ fail "openssl makes keys"; finish; exit; }
for k in k1 k2 k3; do openssl pkey -in "$W/$k.key" -pubout -out "$W/$k.pem"; done

# verity_digest FILE ALG: the hex of fsverity's digest of FILE.
verity_digest() { fsverity digest --hash-alg="$2" "$1" | sed -n "s/^$2:\([0-9a-f]*\) .*/\1/p"; }
# kernel_hash ALG: the kernel's HASH_ALGO_* number (include/uapi/linux/hash_info.h).
kernel_hash() { case $1 in sha256) echo 04 ;; sha384) echo 05 ;; sha512) echo 06 ;; esac; }
# sign_v3 KEY ALG DIGESTHEX: evmctl's v2 signature of H(06 || hash_algo || digest), its
# header made version 3 of type 6 (ima-evm-utils 1.5's sign_hash --veritysig).
sign_v3() {
	local fid sig
	fid=$( { printf '\x06'; printf "\\x$(kernel_hash "$2")"; echo -n "$3" | xxd -r -p; } |
		openssl dgst -"$2" -binary | xxd -p -c 256)
	sig=$(echo "$fid /f" | evmctl sign_hash -a "$2" --key "$1" 2>/dev/null | awk '{ print $3 }')
	[[ $sig == 0302* ]] || return 1
	echo "0603${sig:4}"
}
# sign_v2 KEY ALG DIGESTHEX: evmctl's plain v2 signature of the digest itself.
sign_v2() { echo "$3 /f" | evmctl sign_hash -a "$2" --key "$1" 2>/dev/null | awk '{ print $3 }'; }

for f in good-k1 good-k2-sha512 wrong-key forged-keyid wrong-digest ima-typed v2-on-verity; do
	printf 'the content of %s\n' "$f" >"$W/$f"
done
d() { verity_digest "$W/$1" "${2:-sha256}"; }
declare -A line
s=$(sign_v3 "$W/k1.key" sha256 "$(d good-k1)") || fail "evmctl signs good-k1"
line[good-k1]="verity:sha256:$(d good-k1) $s"
s=$(sign_v3 "$W/k2.key" sha512 "$(d good-k2-sha512 sha512)") || fail "evmctl signs good-k2-sha512"
line[good-k2-sha512]="verity:sha512:$(d good-k2-sha512 sha512) $s"
s=$(sign_v3 "$W/k3.key" sha256 "$(d wrong-key)") || fail "evmctl signs wrong-key"
line[wrong-key]="verity:sha256:$(d wrong-key) $s"
# k1's key id (bytes 3-6 of a k1 signature) on k3's signature.
k1id=$(sign_v3 "$W/k1.key" sha256 "$(d forged-keyid)" | cut -c7-14)
s=$(sign_v3 "$W/k3.key" sha256 "$(d forged-keyid)") || fail "evmctl signs forged-keyid"
line[forged-keyid]="verity:sha256:$(d forged-keyid) ${s:0:6}$k1id${s:14}"
s=$(sign_v3 "$W/k1.key" sha256 "$(d wrong-digest)") || fail "evmctl signs wrong-digest"
echo "changed after signing" >>"$W/wrong-digest"
line[wrong-digest]="verity:sha256:$(d wrong-digest) $s"
s=$(sign_v3 "$W/k1.key" sha256 "$(d ima-typed)") || fail "evmctl signs ima-typed"
line[ima-typed]="ima:sha256:$(d ima-typed) $s"
s=$(sign_v2 "$W/k1.key" sha256 "$(d v2-on-verity)")
line[v2-on-verity]="verity:sha256:$(d v2-on-verity) $s"

order=(good-k1 good-k2-sha512 wrong-key forged-keyid wrong-digest ima-typed v2-on-verity)
{
	printf '10 %040d ima-ng sha256:%064d boot_aggregate\n' 0 0
	for f in "${order[@]}"; do
		set -- ${line[$f]}
		printf '10 %040d ima-sigv2 %s /verity/%s %s\n' 0 "$1" "$f" "$2"
	done
} >"$W/list.txt"
"$IMAASCII" --rehash <"$W/list.txt" >"$W/list.bin" || { fail "imaascii"; finish; exit; }

printf '{"version": 1, "keys": [{"file": "k1.pem"}, {"file": "k2.pem"}], "require_signatures": ["/"]}\n' \
	>"$W/policy.json"
"$ATTESTCTL" evaluate --policy "$W/policy.json" --offset 1 "$W/list.bin" >"$W/out" 2>"$W/err"
check_eq "attestctl evaluate: some entries refused (exit 1)" 1 $?
verdict() { awk -v p="/verity/$1" '$3 == p { print $5 }' "$W/out"; }
check_eq "good-k1: an fs-verity signature by a trusted RSA key: allowed" "" "$(verdict good-k1)"
check_eq "good-k2-sha512: by a trusted EC key over a sha512 verity digest: allowed" "" \
	"$(verdict good-k2-sha512)"
check_eq "wrong-key: by a key the policy does not trust" unknown_signing_key "$(verdict wrong-key)"
check_eq "forged-keyid: another key under a trusted key's id" bad_file_signature \
	"$(verdict forged-keyid)"
check_eq "wrong-digest: the file changed after it was signed" bad_file_signature \
	"$(verdict wrong-digest)"
check_eq "ima-typed: a verity signature on an ima: digest" bad_file_signature "$(verdict ima-typed)"
check_eq "v2-on-verity: a v2 signature on a verity: digest" bad_file_signature \
	"$(verdict v2-on-verity)"
check "the refusal names the verity digest" grep -q "/verity/wrong-digest verity:sha256:" "$W/out"

# The digest list types digests as the entries do: an ima-ngv2 entry's verity: digest is
# allowed by "verity:sha256:..." and not by the same hex listed as a file hash.
dv=$(d good-k1)
hv=$(sha256sum <"$W/good-k1" | cut -c1-64)
{
	printf '10 %040d ima-ng sha256:%064d boot_aggregate\n' 0 0
	printf '10 %040d ima-ngv2 verity:sha256:%s /verity/typed\n' 0 "$dv"
	printf '10 %040d ima-ngv2 verity:sha256:%s /verity/untyped\n' 0 "$dv"
	printf '10 %040d ima-ngv2 ima:sha256:%s /verity/hash\n' 0 "$hv"
} | "$IMAASCII" --rehash >"$W/list2.bin" || fail "imaascii (ima-ngv2)"
printf '{"version": 1, "digests": {"/verity/typed": ["verity:sha256:%s"], "/verity/untyped": ["sha256:%s"], "/verity/hash": ["ima:sha256:%s"]}}\n' \
	"$dv" "$dv" "$hv" >"$W/policy2.json"
"$ATTESTCTL" evaluate --policy "$W/policy2.json" --offset 1 "$W/list2.bin" >"$W/out2" 2>&1
check_eq "digest list: the policy loads and one entry is refused (exit 1)" 1 $?
verdict2() { awk -v p="/verity/$1" '$3 == p { print $5 }' "$W/out2"; }
check_eq "digest list: listed as verity:sha256: allowed" "" "$(verdict2 typed)"
check_eq "digest list: the same hex listed as a file hash (sha256:): refused" digest_mismatch \
	"$(verdict2 untyped)"
check_eq "digest list: the file's sha256sum as ima:sha256: allows its ima: digest" "" \
	"$(verdict2 hash)"

# openssl, independently: the good signature is k1's over H(ima_file_id), not over the digest.
set -- ${line[good-k1]}
sig=$2 dig=${1#verity:sha256:}
echo -n "${sig:18}" | xxd -r -p >"$W/sig.bin"
{ printf '\x06\x04'; echo -n "$dig" | xxd -r -p; } | openssl dgst -sha256 -binary >"$W/fid.bin"
check "openssl: the signature verifies over H(06 04 digest) with k1" \
	openssl pkeyutl -verify -pubin -inkey "$W/k1.pem" -sigfile "$W/sig.bin" -in "$W/fid.bin" \
	-pkeyopt digest:sha256 -out /dev/null
finish
