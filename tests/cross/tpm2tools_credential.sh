#!/usr/bin/env bash
# Cross-check: our software MakeCredential (proto/credential.c via tests/tools/makecred) is
# activated by tpm2_activatecredential on a swtpm and yields the same secret; it fails for an AK
# other than the one named, and for an altered blob. The reverse: tpm2_makecredential --tcti none
# output is read by our parser.
source "$(dirname "$0")/../lib.sh"

MC=$B/tools/makecred
for t in swtpm swtpm_setup tpm2_createek tpm2_activatecredential tpm2_makecredential openssl; do
	if ! command -v $t >/dev/null; then skip "$t not installed"; finish; exit; fi
done
if [[ ! -x $MC ]]; then fail "no $MC (run make)"; finish; exit; fi

W=$T_TMP
tflush() { tpm2_flushcontext -t >/dev/null 2>&1; tpm2_flushcontext -s >/dev/null 2>&1; true; }

swtpm_ca_init "$W/ca" && swtpm_manufacture "$W/state" "$W/ca" && start_swtpm "$W/state" ||
	{ fail "swtpm start"; finish; exit; }

check "createek" tpm2_createek -c "$W/ek.ctx" -G rsa -u "$W/ek.pub"
tflush
tpm2_readpublic -c "$W/ek.ctx" -f pem -o "$W/ek.pem" >/dev/null
tflush
for ak in ak1 ak2; do
	check "createak $ak" tpm2_createak -C "$W/ek.ctx" -c "$W/$ak.ctx" -G rsa -g sha256 -s rsassa \
		-u "$W/$ak.pub" -n "$W/$ak.name" -r "$W/$ak.priv" >/dev/null
	tflush
done

# activate CRED AKCTX OUT: ActivateCredential with the EK authorized by PolicySecret(endorsement).
activate() {
	local rc
	tpm2_startauthsession --policy-session -S "$W/s.ctx" >/dev/null &&
		tpm2_policysecret -S "$W/s.ctx" -c e >/dev/null || return 1
	tpm2_activatecredential -c "$2" -C "$W/ek.ctx" -i "$1" -o "$3" -P "session:$W/s.ctx" >/dev/null 2>&1
	rc=$?
	tpm2_flushcontext "$W/s.ctx" >/dev/null 2>&1
	tflush
	return $rc
}

for len in 32 16 1; do
	openssl rand $len >"$W/secret"
	rm -f "$W/out"
	check "makecred ($len-byte secret)" "$MC" "$W/ek.pub" "$W/ak1.pub" "$W/secret" "$W/cred"
	check "our credential file parses" "$MC" --parse "$W/cred"
	check "tpm2_activatecredential takes our credential ($len bytes)" activate "$W/cred" "$W/ak1.ctx" "$W/out"
	check "activated secret equals ours ($len bytes)" cmp -s "$W/secret" "$W/out"
done

# made for ak1, activated with ak2: the TPM's name check must refuse it
rm -f "$W/out"
check_fails "credential for ak1 refused with ak2" activate "$W/cred" "$W/ak2.ctx" "$W/out"
# made for ak2, activated with ak2
"$MC" "$W/ek.pub" "$W/ak2.pub" "$W/secret" "$W/cred2"
check "credential for ak2 activates with ak2" activate "$W/cred2" "$W/ak2.ctx" "$W/out"
check "ak2 secret equals ours" cmp -s "$W/secret" "$W/out"

# altered blob byte (inside the encrypted identity) and altered encrypted seed
cp "$W/cred" "$W/cred_bad"
printf '\x5a' | dd of="$W/cred_bad" bs=1 seek=50 conv=notrunc status=none
check_fails "altered credential blob refused" activate "$W/cred_bad" "$W/ak1.ctx" "$W/out"
cp "$W/cred" "$W/cred_bad"
printf '\x5a' | dd of="$W/cred_bad" bs=1 seek=100 conv=notrunc status=none
check_fails "altered encrypted seed refused" activate "$W/cred_bad" "$W/ak1.ctx" "$W/out"

# makecred refuses keys that are not an EK
"$MC" "$W/ak2.pub" "$W/ak1.pub" "$W/secret" "$W/cred3" 2>/dev/null
check_eq "makecred with an AK as EK exits 1" 1 $?

# reverse: tpm2_makecredential offline output is parsed by us and activated by the TPM
openssl rand 32 >"$W/secret"
check "tpm2_makecredential --tcti none" tpm2_makecredential --tcti none -u "$W/ek.pem" -G rsa \
	-s "$W/secret" -n "$(xxd -p -c 256 "$W/ak1.name")" -o "$W/tcred"
out=$("$MC" --parse "$W/tcred")
check_eq "tpm2_makecredential file parsed" "blob 68 hmac 32
secret 256" "$out"
"$MC" "$W/ek.pub" "$W/ak1.pub" "$W/secret" "$W/cred"
check_eq "same file size as tpm2_makecredential" "$(stat -c %s "$W/tcred")" "$(stat -c %s "$W/cred")"
check "tpm2_makecredential output activates" activate "$W/tcred" "$W/ak1.ctx" "$W/out"
check "and yields its secret" cmp -s "$W/secret" "$W/out"
head -c 100 "$W/tcred" >"$W/tcred_short"
"$MC" --parse "$W/tcred_short" >/dev/null 2>&1
check_eq "truncated credential file rejected" 1 $?

finish
