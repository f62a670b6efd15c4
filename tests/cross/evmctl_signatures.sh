#!/usr/bin/env bash
# Cross-check of our file-signature verdicts against evmctl (ima-evm-utils), entry by entry.
# A list of ima-sig entries is signed by evmctl itself (`evmctl sign_hash`): RSA-2048 and
# P-256 keys the policy trusts, sha256 and sha512, a key it does not trust, signatures over a
# digest the entry no longer has (a file changed after signing), and unsigned entries. Then
# `evmctl ima_measurement --verify-sig --key CERTS` and `attestctl evaluate` (a policy trusting
# the same keys and requiring signatures everywhere) must agree on every signed entry: evmctl's
# "verification is OK" exactly where we allow it. Keylime's public vectors go through both too.
source "$(dirname "$0")/../lib.sh"
ATTESTCTL=$B/attestctl
IMAASCII=$B/tools/imaascii
D=$TOP/tests/data/keylime
for tool in "$ATTESTCTL" "$IMAASCII"; do
	[[ -x $tool ]] || { fail "missing $tool (make all)"; finish; exit; }
done
for t in evmctl openssl jq; do
	command -v $t >/dev/null || { fail "missing $t (make deps)"; finish; exit; }
done
W=$T_TMP
N=${EVMCTL_SIG_ENTRIES:-120}

# Keys: k1 RSA, k2 EC (trusted), k3 RSA (not trusted). evmctl takes DER certificates.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$W/k1.key" 2>/dev/null &&
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$W/k2.key" 2>/dev/null &&
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$W/k3.key" 2>/dev/null ||
	{ fail "openssl makes keys"; finish; exit; }
for k in k1 k2; do
	openssl pkey -in "$W/$k.key" -pubout -out "$W/$k.pem" &&
		openssl req -new -x509 -key "$W/$k.key" -subj "/CN=$k" -days 30 -outform DER \
			-out "$W/$k.der" 2>/dev/null || fail "certificate for $k"
done

# Entry i has path /cross/f$i and variant i % 6:
#   0 unsigned   1 k1 sha256   2 k2 sha256   3 k1 over a digest the entry does not carry
#   4 k3 (untrusted) sha256    5 k2 sha512
: >"$W/k1-sha256.in"; : >"$W/k2-sha256.in"; : >"$W/k3-sha256.in"; : >"$W/k2-sha512.in"
for ((i = 1; i <= N; i++)); do
	v=$((i % 6))
	case $v in
	5) alg=sha512 ;;
	*) alg=sha256 ;;
	esac
	d=$(printf 'cross entry %d\n' "$i" | "${alg}sum" | cut -d' ' -f1)
	case $v in
	1 | 3) key=k1 ;;
	2 | 5) key=k2 ;;
	4) key=k3 ;;
	*) key= ;;
	esac
	[[ -n $key ]] && printf '%s  /cross/f%d\n' "$d" "$i" >>"$W/$key-$alg.in"
	# Variant 3: the file changed after it was signed; its entry carries the new digest.
	((v == 3)) && d=$(printf 'changed entry %d\n' "$i" | "${alg}sum" | cut -d' ' -f1)
	printf '%s %s %s\n' "$i" "$alg" "$d" >>"$W/entries"
done
for f in k1-sha256 k2-sha256 k3-sha256 k2-sha512; do
	evmctl sign_hash -a "${f#*-}" --key "$W/${f%-*}.key" <"$W/$f.in" 2>/dev/null |
		awk '{ print $2, $3 }' >>"$W/sigs"
done
check_eq "evmctl signed every signed entry" "$((N - N / 6))" "$(wc -l <"$W/sigs")"

# The ascii list, then the binary one (made-up lines: imaascii computes the template hashes).
declare -A sig ours theirs
while read -r path s; do sig[$path]=$s; done <"$W/sigs"
while read -r i alg d; do
	printf '10 %040d ima-sig %s:%s /cross/f%d %s\n' 0 "$alg" "$d" "$i" "${sig[/cross/f$i]:-}"
done <"$W/entries" >"$W/list.txt"
"$IMAASCII" --rehash <"$W/list.txt" >"$W/list.bin" || { fail "imaascii"; finish; exit; }

# Ours: every path requires a signature by k1 or k2.
printf '{"version": 1, "keys": [{"file": "k1.pem"}, {"file": "k2.pem"}], "require_signatures": ["/"]}\n' \
	>"$W/policy.json"
"$ATTESTCTL" evaluate --policy "$W/policy.json" --offset 1 "$W/list.bin" >"$W/ours" 2>"$W/ours.err"
check_eq "attestctl evaluate: some entries refused (exit 1)" 1 $?
# evmctl's: "PATH: verification is OK" or "PATH: verification failed: ...", signed entries only.
evmctl -v ima_measurement --verify-sig --key "$W/k1.der,$W/k2.der" "$W/list.bin" 2>&1 |
	grep -E '^/cross/f[0-9]+: verification ' >"$W/theirs"

# Our line: `entry N PATH ALG:HEX REASON ...`; evmctl's: `PATH: verification ...`.
while read -r _ _ path _ reason _; do ours[$path]=$reason; done <"$W/ours"
while IFS= read -r line; do theirs[${line%%: *}]=${line#*: }; done <"$W/theirs"
bad=0 agree=0
while read -r i _ _; do
	path=/cross/f$i o=${ours[/cross/f$i]:-} t=${theirs[/cross/f$i]:-}
	if ((i % 6 == 0)); then
		[[ $o == missing_file_signature && -z $t ]] && continue
	elif [[ -z $o && $t == "verification is OK" ]] || [[ -n $o && $t == "verification failed"* ]]; then
		agree=$((agree + 1))
		continue
	fi
	bad=$((bad + 1))
	echo "# $path: ours '${o:-allowed}', evmctl '$t'"
done <"$W/entries"
check_eq "every signed entry: our verdict is evmctl's ($agree agree)" 0 "$bad"
check_eq "trusted signatures accepted: k1, k2 and k2 over sha512" "$((N / 6 * 3))" \
	"$(grep -c 'verification is OK' "$W/theirs")"
check "a signature over another digest: bad_file_signature, evmctl says bad signature" \
	bash -c "grep -q '^entry 3 /cross/f3 .* bad_file_signature' '$W/ours' && grep -q '^/cross/f3: verification failed.*bad signature' '$W/theirs'"
check "an untrusted key: unknown_signing_key, evmctl says unknown keyid" \
	bash -c "grep -q '^entry 4 /cross/f4 .* unknown_signing_key' '$W/ours' && grep -q '^/cross/f4: verification failed: unknown keyid' '$W/theirs'"

# Keylime's public vectors through both (certificates around Keylime's public keys).
openssl req -new -key "$W/k1.key" -subj /CN=kl -out "$W/kl.csr" 2>/dev/null
for k in rsa2048pub secp256k1pub; do
	openssl x509 -req -in "$W/kl.csr" -signkey "$W/k1.key" -force_pubkey "$D/$k.pem" -days 30 \
		-outform DER -out "$W/kl-$k.der" 2>/dev/null || fail "certificate around Keylime's $k"
done
"$IMAASCII" <"$D/signatures.txt" >"$W/kl.bin"
check_eq "evmctl verifies both Keylime signatures" 2 \
	"$(evmctl -v ima_measurement --verify-sig --key "$W/kl-rsa2048pub.der,$W/kl-secp256k1pub.der" "$W/kl.bin" 2>&1 | grep -c 'verification is OK')"
printf '{"version": 1, "keys": [{"file": "%s"}, {"file": "%s"}], "require_signatures": ["/"]}\n' \
	"$D/rsa2048pub.pem" "$D/secp256k1pub.pem" >"$W/kl-policy.json"
"$ATTESTCTL" evaluate --policy "$W/kl-policy.json" --offset 1 "$W/kl.bin" >"$W/kl.out" 2>&1
check_eq "so do we (exit 0)" 0 $?
finish
