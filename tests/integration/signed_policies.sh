#!/usr/bin/env bash
# Signed policies (verifier(8) SIGNED POLICIES) against the real verifier with software agents
# (tests/tools/softagent). `attestctl policy sign` writes a DSSE envelope (ECDSA P-256, SHA-256,
# Keylime's keyid). With --policy-signers FILE a PUT of an unsigned policy, an envelope signed by
# a key not in FILE (even one claiming a signer's keyid), a tampered payload or a malformed
# envelope is refused with its error code and nothing is stored; a good envelope is stored with
# the keyid of the key that verified it, shown by the versions, `attestctl policy history` and
# the audit record. An unsigned --policy is refused at the start; a signed one seeds. Approvals
# are refused (409 signature_required, the violation still open, nothing written), dismissing
# works. A rollback keeps a version's signature and checks it against the signers of now: a
# version stored unsigned, or signed by a key no longer a signer, is refused; an amendment's
# version 0 (no approval) is allowed. SIGHUP reloads the signers' file. Without the option,
# behaviour is as before: plain policies and approvals work, an envelope's payload is stored
# with its signature kept unchecked.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
command -v openssl >/dev/null || { skip "openssl not installed"; finish; exit 0; }
# code METHOD PATH [BODY-FILE]: "STATUS error-code"
code() {
	curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -X "$1" \
		${3:+--data-binary "@$3"} -o "$W/ans.json" -w '%{http_code}' "$URL$2"
	printf ' %s' "$(jq -r '.error.code // "-"' "$W/ans.json")"
}
versions() { op "/v1/policies/$1/versions" | jq -r '[.versions[] | "\(.version):\(.signer)"] | join(" ")'; }

# Three P-256 signers' keys (s1 and s3 trusted, s2 not) and a P-384 key.
# keyid FILE: Keylime's keyid of a public key (the SHA-256 of its PEM as openssl writes it).
keyid() { openssl pkey -pubin -in "$1" | sha256sum | cut -d' ' -f1; }
for k in s1 s2 s3; do
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$W/$k.pem" 2>/dev/null &&
		openssl pkey -in "$W/$k.pem" -pubout -out "$W/$k.pub" 2>/dev/null ||
		{ fail "openssl makes a P-256 key"; finish; exit 1; }
done
K_s1=$(keyid "$W/s1.pub") K_s2=$(keyid "$W/s2.pub") K_s3=$(keyid "$W/s3.pub")
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$W/p384.pem" 2>/dev/null
cat "$W/s1.pub" "$W/s3.pub" >"$W/signers.pem"

# attestctl policy sign
P2="{\"version\": 1, \"digests\": {\"/usr/bin/app1\": [\"sha256:$D1\"], \"/usr/bin/app2\": [\"sha256:$D2\"], \"/usr/bin/app3\": [\"sha256:$D1\"]}, \"violations\": \"fail\"}"
printf '%s' "$P2" >"$W/p2.json"
check "policy sign --key s1.pem --out: writes the envelope" \
	"$CTL" policy sign --key "$W/s1.pem" "$W/policy.json" --out "$W/policy.dsse"
check_eq "the envelope: our payload type, s1's keyid, the policy's exact bytes" \
	"application/vnd.attest.policy+json $K_s1 same" \
	"$(jq -r '"\(.payloadType) \(.signatures[0].keyid)"' "$W/policy.dsse") $(jq -r .payload "$W/policy.dsse" | base64 -d | cmp -s - "$W/policy.json" && echo same)"
"$CTL" policy sign --key "$W/s1.pem" "$W/p2.json" >"$W/p2-s1.dsse"
check_eq "policy sign without --out: the envelope on stdout" 1 "$(jq '.signatures | length' "$W/p2-s1.dsse")"
"$CTL" policy sign --key "$W/s2.pem" "$W/p2.json" >"$W/p2-s2.dsse"
"$CTL" policy sign --key "$W/s3.pem" "$W/p2.json" >"$W/p2-s3.dsse"
check_fails "policy sign refuses a P-384 key" "$CTL" policy sign --key "$W/p384.pem" "$W/p2.json"
check_fails "policy sign refuses an envelope (sign the policy itself)" \
	"$CTL" policy sign --key "$W/s1.pem" "$W/policy.dsse"
printf '{"version": 1, "digests": {"/x": ["nothex"]}}' >"$W/bad.json"
check_fails "policy sign refuses a policy that does not load" \
	"$CTL" policy sign --key "$W/s1.pem" "$W/bad.json"
# A Keylime runtime policy is signed with Keylime's payload type (keylime-policy sign's).
cat >"$W/keylime.json" <<EOF
{"meta": {"version": 1, "generator": 0}, "release": 0, "digests": {"/usr/bin/app1": ["$D1"], "/usr/bin/app2": ["$D2"], "/usr/bin/app4": ["$D1"]},
 "excludes": [], "keyrings": {}, "ima": {"ignored_keyrings": [], "log_hash_alg": "sha1", "dm_policy": null}, "ima-buf": {}, "verification-keys": ""}
EOF
"$CTL" policy sign --key "$W/s3.pem" "$W/keylime.json" --out "$W/keylime.dsse" 2>/dev/null
check_eq "a Keylime policy's envelope has Keylime's payload type" "application/vnd.keylime+json" \
	"$(jq -r .payloadType "$W/keylime.dsse")"
# Tampered: s1's envelope of p2 with another payload; forged: s2's signature claiming s1's keyid.
jq -c --arg p "$(printf '%s' "${P2/app3/app5}" | base64 -w0)" '.payload = $p' "$W/p2-s1.dsse" >"$W/tampered.dsse"
jq -c --arg k "$K_s1" '.signatures[0].keyid = $k' "$W/p2-s2.dsse" >"$W/forged.dsse"
jq -c '.payloadType = "application/vnd.in-toto+json"' "$W/p2-s1.dsse" >"$W/othertype.dsse"
jq -c '.signatures = []' "$W/p2-s1.dsse" >"$W/nosig.dsse"
# Two signatures: s2's (not trusted) first, then s3's.
jq -c --slurpfile b "$W/p2-s3.dsse" '.signatures += $b[0].signatures' "$W/p2-s2.dsse" >"$W/two.dsse"

# --- Without --policy-signers: as before, envelopes kept unchecked -------------------------
V0=(--ek-ca "$W/ekca/ca.pem" --policy "$W/policy.json" --operator-token-file "$W/token")
start_verifier "$W/v" "${V0[@]}" || { fail "the verifier starts without --policy-signers"; finish; exit 1; }
agent a || { finish; exit 1; }
check_eq "off: a plain policy is stored (200)" "200 -" "$(code PUT /v1/policies/measured "$W/p2.json")"
check_eq "off: an envelope by a key nobody configured: its payload stored (200), signed, signer unchecked" \
	"200 - 2 true " \
	"$(code PUT /v1/policies/measured "$W/p2-s2.dsse") $(jq -r '"\(.version) \(.signed) \(.signer)"' "$W/ans.json")"
check_eq "off: the stored text is the payload, byte for byte" "$P2" \
	"$(curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" "$URL/v1/policies/measured/versions/2")"
code PUT /v1/policies/measured "$W/p2-s1.dsse" >/dev/null
printf '{"version": 1, "digests": ' >"$W/notjson.json"
check_eq "off: a body that is not JSON: 400 bad_policy, as before" "400 bad_policy" \
	"$(code PUT /v1/policies/measured "$W/notjson.json")"
check_eq "off: a malformed envelope is still refused: 400 bad_envelope" "400 bad_envelope" \
	"$(code PUT /v1/policies/measured "$W/othertype.dsse")"
check_eq "off: versions 1 plain, 2 and 3 signed (unchecked)" "1:false 2:true 3:true" \
	"$(op /v1/policies/measured/versions | jq -r '[.versions[] | "\(.version):\(.signed)"] | reverse | join(" ")')"
ctl policy history measured >"$W/hist0.txt"
check "off: policy history shows a version signed but unchecked" grep -qE '^3 .* unchecked ' "$W/hist0.txt"
sa round "$W/a-a" --append "/usr/bin/tool:$D2"
vid=$(op '/v1/violations?agent=a&state=open' | jq -r '.violations[0].id')
check_eq "off: an approval works (200)" "200 -" "$(code POST "/v1/violations/$vid/approve")"
stop_pid "$VPID"

# --- With --policy-signers -------------------------------------------------------------------
check_fails "on: an unsigned --policy for a store without a default: the verifier does not start" \
	start_verifier "$W/v1" "${V0[@]}" --policy-signers "$W/signers.pem"
check "on: its log says why" grep -q 'takes only signed policies' "$W/v1.log"
printf 'not a key\n' >"$W/nokeys.pem"
check_fails "on: a signers' file without a key: the verifier does not start" \
	start_verifier "$W/v2" "${V0[@]/policy.json/policy.dsse}" --policy-signers "$W/nokeys.pem"

V1=(--ek-ca "$W/ekca/ca.pem" --policy "$W/policy.dsse" --operator-token-file "$W/token"
	--policy-signers "$W/signers.pem")
start_verifier "$W/v3" "${V1[@]}" || { fail "on: the verifier starts with a signed --policy"; finish; exit 1; }
check_eq "on: the signed --policy seeds the default, signer s1" "1:$K_s1" "$(versions default)"
agent b || { finish; exit 1; }
check_eq "on: an unsigned policy: 403 policy_unsigned" "403 policy_unsigned" \
	"$(code PUT /v1/policies/measured "$W/p2.json")"
check "on: the refusal says how to sign" grep -q 'attestctl policy sign' "$W/ans.json"
check_eq "on: signed by a key not a signer: 403 policy_bad_signature" "403 policy_bad_signature" \
	"$(code PUT /v1/policies/measured "$W/p2-s2.dsse")"
check_eq "on: that key's signature claiming a signer's keyid: 403 policy_bad_signature" \
	"403 policy_bad_signature" "$(code PUT /v1/policies/measured "$W/forged.dsse")"
check_eq "on: a payload changed after signing: 403 policy_bad_signature" "403 policy_bad_signature" \
	"$(code PUT /v1/policies/measured "$W/tampered.dsse")"
check_eq "on: another payload type: 400 bad_envelope" "400 bad_envelope" \
	"$(code PUT /v1/policies/measured "$W/othertype.dsse")"
check_eq "on: no signature: 400 bad_envelope" "400 bad_envelope" \
	"$(code PUT /v1/policies/measured "$W/nosig.dsse")"
check_eq "on: none of them stored anything" "404" \
	"$(code GET /v1/policies/measured/versions | cut -d' ' -f1)"
check_fails "on: attestctl policy put of an unsigned policy fails" ctl policy put measured "$W/p2.json"
check_eq "on: attestctl policy put ENVELOPE: stored, signed by s1" \
	"policy measured version 1, signed by $K_s1" "$(ctl policy put measured "$W/p2-s1.dsse")"
check_eq "on: the stored text is the payload, byte for byte" "$P2" \
	"$(curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" "$URL/v1/policies/measured/versions/1")"
check_eq "on: two signatures, the first by an unknown key: the signer is the one that verified (s3)" \
	"200 $K_s3" "$(code PUT /v1/policies/measured "$W/two.dsse" | cut -d' ' -f1) $(jq -r .signer "$W/ans.json")"
check_eq "on: a Keylime policy in Keylime's envelope, signed by s3" "200 $K_s3" \
	"$(code PUT /v1/policies/kl "$W/keylime.dsse" | cut -d' ' -f1) $(jq -r .signer "$W/ans.json")"
check_eq "on: versions name their signers" "2:$K_s3 1:$K_s1" "$(versions measured)"
ctl policy history measured >"$W/hist1.txt"
check "on: attestctl policy history shows each signer" \
	grep -qE "^1 .* ${K_s1:0:16}  " "$W/hist1.txt"
ctl policy assign b measured >/dev/null
trusted "on: b judged by the signed policy: app3 allowed" b --append "/usr/bin/app3:$D1"

# Approvals: refused, nothing written, the violation stays open; dismissing works.
sa round "$W/a-b" --append "/usr/bin/tool:$D2"
vid=$(op '/v1/violations?agent=b&state=open' | jq -r '.violations[0].id')
check_eq "on: approving (agent scope): 409 signature_required" "409 signature_required" \
	"$(code POST "/v1/violations/$vid/approve")"
check "on: the refusal says a signer must sign the policy" grep -q 'sign it' "$W/ans.json"
printf '{"scope": "policy"}' >"$W/scope.json"
check_eq "on: approving into the policy: 409 signature_required" "409 signature_required" \
	"$(code POST "/v1/violations/$vid/approve" "$W/scope.json")"
check_eq "on: nothing written: no amendment, measured still version 2, the violation open" \
	"0 2 open" \
	"$(op /v1/agents/b/amendment | jq .version) $(op /v1/policies/measured/versions | jq '.versions[0].version') $(op '/v1/violations?agent=b' | jq -r --argjson id "$vid" '.violations[] | select(.id == $id) | .state')"
check_fails "on: attestctl approve fails" ctl approve "$vid"
check_eq "on: dismissing works (200)" "200 -" "$(code POST "/v1/violations/$vid/dismiss")"

# Rollbacks keep and check signatures.
printf '{"version": 1}' >"$W/rb1.json"
check_eq "on: rollback to a signed version: 200, signed by s1 again" "200 3 $K_s1" \
	"$(code POST /v1/policies/measured/rollback "$W/rb1.json" | cut -d' ' -f1) $(jq -r '"\(.version) \(.signer)"' "$W/ans.json")"
check_eq "on: version 3 keeps version 1's signature" "3:$K_s1 2:$K_s3 1:$K_s1" "$(versions measured)"
printf '{"version": 0}' >"$W/rb0.json"
check_eq "on: an agent's amendment rolled back to 0 (no approval): allowed" "200 -" \
	"$(code POST /v1/agents/b/amendment/rollback "$W/rb0.json")"
check_eq "on: the default rolled back to its signed version 1: allowed" "200 -" \
	"$(code POST /v1/policies/default/rollback "$W/rb1.json")"
stop_pid "$VPID"

# The store of the first verifier (versions stored unsigned and unchecked), now with signers.
start_verifier "$W/v" "${V1[@]}" || { fail "on: the first store with --policy-signers"; finish; exit 1; }
check_eq "on: rollback to a version stored unsigned: 409 policy_unsigned" "409 policy_unsigned" \
	"$(code POST /v1/policies/measured/rollback "$W/rb1.json")"
printf '{"version": 2}' >"$W/rb2.json"
check_eq "on: rollback to a version signed by a key not a signer: 409 policy_bad_signature" \
	"409 policy_bad_signature" "$(code POST /v1/policies/measured/rollback "$W/rb2.json")"
printf '{"version": 3}' >"$W/rb3.json"
check_eq "on: rollback to a version kept unchecked, whose signer is one now: 200, signer s1" \
	"200 $K_s1" "$(code POST /v1/policies/measured/rollback "$W/rb3.json" | cut -d' ' -f1) $(jq -r .signer "$W/ans.json")"
check_eq "on: an amendment rollback to an unsigned approval: 409 policy_unsigned" \
	"409 policy_unsigned" "$(code POST /v1/agents/a/amendment/rollback "$W/rb1.json")"
check_eq "on: the store's unsigned default stays as it was (signing applies to what is written)" "1:" \
	"$(versions default)"

# SIGHUP reloads the signers' file: s2 in, s1 and s3 out.
cp "$W/s2.pub" "$W/signers.pem"
kill -HUP "$VPID"
for _ in $(seq 50); do grep -q 'reload: 1 policy signers' "$W/v.log" && break; sleep 0.1; done
check_eq "SIGHUP: s2's envelope is taken now" "200 $K_s2" \
	"$(code PUT /v1/policies/measured "$W/p2-s2.dsse" | cut -d' ' -f1) $(jq -r .signer "$W/ans.json")"
check_eq "SIGHUP: s1's is refused now" "403 policy_bad_signature" \
	"$(code PUT /v1/policies/other "$W/p2-s1.dsse")"
printf 'garbage\n' >"$W/signers.pem"
kill -HUP "$VPID"
for _ in $(seq 50); do grep -q 'keeping the policy signers loaded before' "$W/v.log" && break; sleep 0.1; done
check_eq "SIGHUP with a broken file: the signers loaded before stay (s2 still taken)" "200" \
	"$(code PUT /v1/policies/other "$W/p2-s2.dsse" | cut -d' ' -f1)"
stop_pid "$VPID"

# The audit record names the signer.
"$CTL" audit export --store "sqlite:$W/v3/verifier.db" >"$W/audit.jsonl" 2>/dev/null
check_eq "the audit record of a signed version names its signer" "$K_s3" \
	"$(jq -r 'select(.kind == "policy.version" and .detail.policy == "kl") | .detail.signer' "$W/audit.jsonl")"
finish
