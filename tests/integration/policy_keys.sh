#!/usr/bin/env bash
# Policies with signing keys against a real verifier: key files travel inline (attestctl policy
# put, verifier --policy), a file reference sent to the API is refused, a Keylime policy's
# import warnings come back in the PUT's answer and on attestctl's stderr, and a refused policy
# changes nothing.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

for t in curl jq openssl; do
	command -v $t >/dev/null || { fail "$t not installed (make deps)"; finish; exit; }
done
for bin in "$B/verifier" "$B/attestctl"; do
	[[ -x $bin ]] || { fail "missing $bin (make all)"; finish; exit; }
done
W=$T_TMP
D=$TOP/tests/data/keylime

mkdir -p "$W/pol/keys"
cp "$D/rsa2048pub.pem" "$W/pol/keys/release.pem"
openssl pkey -pubin -in "$D/secp256k1pub.pem" -outform DER -out "$W/pol/keys/ec.der"
cat >"$W/pol/signed.json" <<'EOF'
{"version": 1,
 "keys": [{"file": "keys/release.pem"}, {"file": "keys/ec.der", "keyid": "531f4025"}],
 "require_signatures": ["/usr/"],
 "digests": {"/bin/busybox": ["sha256:0263829989b6fd954f72baaf2fc64bc2e2f01d692d4de72986ea808f6e99813f"]}}
EOF

# --- the verifier's own --policy reads the key files ------------------------------------
start_verifier "$W/state" --policy "$W/pol/signed.json" || { fail "verifier starts with a policy naming key files"; finish; exit; }
ok "verifier starts with a policy naming key files"
TOKEN=$W/state/operator-token
op() { curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$TOKEN")" "$@"; }
ctl() { "$B/attestctl" "$@" --verifier "$URL" --ca "$CA" --token-file "$TOKEN"; }
jqt() { jq -e "$1" >/dev/null; } # jqt TEST <<<JSON: the jq test holds

def=$(op "$URL/v1/policies/default")
check_eq "default policy: both keys stored inline" 2 "$(jq '[.keys[] | select(.pem or .der)] | length' <<<"$def")"
check_eq "default policy: no file reference stored" 0 "$(jq '[.keys[] | select(.file)] | length' <<<"$def")"
check_eq "default policy: the PEM file became \"pem\"" true "$(jq '.keys[0].pem | startswith("-----BEGIN PUBLIC KEY-----")' <<<"$def")"
check_eq "default policy: the DER file became base64 \"der\", key id kept" "531f4025" "$(jq -r '.keys[1].keyid' <<<"$def")"

# --- attestctl policy put does the same ----------------------------------------------------
out=$(ctl policy put signed "$W/pol/signed.json" 2>"$W/put.err")
check_eq "attestctl policy put signed: version 1" "policy signed version 1" "$out"
check_eq "no warnings for our format" "" "$(cat "$W/put.err")"
check_eq "GET returns the keys inline" 2 "$(op "$URL/v1/policies/signed" | jq '[.keys[] | select(.pem or .der)] | length')"
"$B/attestctl" policy-check "$W/pol/signed.json" >"$W/check.out" 2>&1
check "policy-check counts keys and prefixes" grep -q '2 signing keys, 1 signed prefixes' "$W/check.out"

# policy diff: the file (its key files read as put reads them) equals what put stored; a key
# dropped is a change a reviewer sees.
ctl policy diff "$W/pol/signed.json" @signed >"$W/diff0"
check_eq "policy diff of the file and what put stored: same (exit 0)" 0 $?
jq '.keys |= .[:1]' "$W/pol/signed.json" >"$W/pol/one-key.json"
ctl policy diff @signed "$W/pol/one-key.json" >"$W/diff1"
check_eq "policy diff with a key dropped: exit 1" 1 $?
check "the dropped key is shown" grep -q '^-keys {.*"der":' "$W/diff1"

# A reference the verifier cannot read is refused, naming the way to send it.
code=$(op -o "$W/file.json" -w '%{http_code}' -X PUT --data-binary @"$W/pol/signed.json" "$URL/v1/policies/raw")
check_eq "PUT with a key file reference: 400" 400 "$code"
check "the error says attestctl puts keys inline" grep -q 'attestctl' "$W/file.json"
check_eq "nothing stored under that name" 404 "$(op -o /dev/null -w '%{http_code}' "$URL/v1/policies/raw")"
echo '{"version": 1, "keys": [{"file": "keys/missing.pem"}]}' >"$W/pol/missing.json"
ctl policy put broken "$W/pol/missing.json" >/dev/null 2>"$W/missing.err"
check_eq "attestctl policy put with a missing key file: exit 2" 2 $?
check "the error names the key file" grep -q 'keys/missing.pem' "$W/missing.err"
echo '{"version": 1, "keys": [{"der": "aGVsbG8="}]}' >"$W/pol/notakey.json"
ctl policy put signed "$W/pol/notakey.json" >/dev/null 2>"$W/notakey.err"
check_eq "a key that is not a key: refused (exit 1)" 1 $?
check_eq "the stored policy still has its two keys" 2 "$(op "$URL/v1/policies/signed" | jq '.keys | length')"

# --- a Keylime policy: what is not enforced comes back as warnings --------------------------
jq --rawfile vk "$D/verification-keys-both.txt" \
	'.["verification-keys"] = ($vk | rtrimstr("\n")) | .ima.log_hash_alg = "sha256" | .release = 3 | .hashes = {}' \
	"$D/runtime-policy-test.json" >"$W/keylime.json"
ans=$(op -X PUT --data-binary @"$W/keylime.json" "$URL/v1/policies/kl")
check_eq "PUT of a Keylime policy: stored" 1 "$(jq .version <<<"$ans")"
check_eq "the answer lists 3 warnings" 3 "$(jq '.warnings | length' <<<"$ans")"
check "a warning names ima.log_hash_alg" jqt '[.warnings[] | select(startswith("ima.log_hash_alg"))] | length == 1' <<<"$ans"
check "a warning names the unknown key \"hashes\"" jqt '[.warnings[] | select(startswith("hashes: unknown key"))] | length == 1' <<<"$ans"
check "a warning explains keyrings" jqt '[.warnings[] | select(startswith("keyrings:"))] | length == 1' <<<"$ans"
ctl policy put kl "$W/keylime.json" >"$W/kl.out" 2>"$W/kl.err"
check_eq "attestctl policy put of the Keylime policy: exit 0" 0 $?
check_eq "attestctl prints each warning on stderr" 3 "$(grep -c '^attestctl: warning: policy kl: ' "$W/kl.err")"
check "GET serves the policy as sent, verification keys included" \
	jqt '.["verification-keys"] | fromjson | .pubkeys | length == 2' <<<"$(op "$URL/v1/policies/kl")"
check_eq "a policy in our format: the answer's warnings are empty" 0 \
	"$(op -X PUT --data-binary "$def" "$URL/v1/policies/inline" | jq '.warnings | length')"
finish
