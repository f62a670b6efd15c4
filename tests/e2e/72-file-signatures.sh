#!/usr/bin/env bash
# IMA file signatures end to end. /usr/bin/e2e-signed is signed with `evmctl ima_sign` while
# the root image is built (security.ima, copied by mke2fs -d), the guest boots with
# ima_template=ima-sig so IMA logs the signature, and the policy trusts the signing key but
# leaves the program out of its digest list:
#   1. the signed program runs: trusted, by the key alone;
#   2. an unsigned program nobody knows runs: untrusted, not_in_allowlist;
#   3. the signed program is changed and runs again: untrusted, bad_file_signature (its old
#      signature does not match the new content), recorded as a violation.
set -uo pipefail
. "$(dirname "$0")/common.bash"

# The signing key and the program, in the image before e2e_prepare builds it.
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$W/sign.key" 2>/dev/null &&
	openssl pkey -in "$W/sign.key" -pubout -out "$W/sign.pem" || e2e_abort "signing key"
mkdir -p "$W/overlay/usr/bin"
printf '#!/bin/sh\necho "e2e: the signed program ran"\n' >"$W/overlay/usr/bin/e2e-signed"
chmod 755 "$W/overlay/usr/bin/e2e-signed"
export ROOTFS_SIGN=/usr/bin/e2e-signed ROOTFS_SIGN_KEY=$W/sign.key
e2e_prepare
check "the image carries the signature (debugfs)" \
	bash -c "debugfs -R 'ea_get /usr/bin/e2e-signed security.ima' '$W/rootfs.img' 2>/dev/null | grep -q '^security.ima'"

# The policy: the generated digest list without the program, and the key.
jq --rawfile pem "$W/sign.pem" 'del(.digests["/usr/bin/e2e-signed"]) | .keys = [{"pem": $pem}]' \
	"$W/policy.json" >"$W/policy-signed.json"
check_eq "the program is not in the policy's digest list" null \
	"$(jq '.digests["/usr/bin/e2e-signed"]' "$W/policy-signed.json")"
e2e_verifier_stop
e2e_verifier_start "$W/policy-signed.json" --policy-replace || e2e_abort "verifier restarts with the signing key" "$W/verifier.log"

e2e_boot sig e2e-sig attest.e2e=signatures ima_template=ima-sig || e2e_abort "guest boots"
e2e_console sig 'E2E-STEP signed ' 180 || e2e_abort "the guest ran the signed program" "$W/vm-sig/serial.log"
log=$W/vm-sig/serial.log
entry=$(sed -n 's/.*E2E-SIGNED-ENTRY //p' "$log" | sed -n 1p | tr -d '\r')
check "IMA logged it with template ima-sig and an evmctl v2 signature (type 3, version 2)" \
	grep -qE '^10 [0-9a-f]{40} ima-sig sha256:[0-9a-f]{64} /usr/bin/e2e-signed 0302[0-9a-f]+$' <<<"$entry"
want=$(sha256sum "$W/overlay/usr/bin/e2e-signed" | cut -d' ' -f1)
check "the logged digest is the signed content" grep -q "sha256:$want " <<<"$entry"
check "1. the verdict covering the signed program: trusted (by the key)" \
	grep -q 'E2E-STEP signed entries=[0-9]* verdict=trusted' "$log"
step_entries() { sed -n "s/.*E2E-STEP $1 entries=\([0-9]*\).*/\1/p" "$log" | sed -n 1p; }
n1=$(step_entries signed)
check_eq "every verdict up to it trusted" 0 \
	"$(e2e_verdicts e2e-sig | jq --argjson n "${n1:-0}" '[.verdicts[] | select(.next_offset <= $n and (.trusted | not))] | length')"

e2e_console sig 'E2E-ACTION-DONE signatures' 240 || e2e_abort "the guest finished" "$log"
check "2. the verdict covering the unknown program: untrusted" \
	grep -q 'E2E-STEP unknown entries=[0-9]* verdict=untrusted' "$log"
n3=$(step_entries modified)
e2e_check_wait "3. a verdict covers the changed program (entry ${n3:-?})" \
	"[.verdicts[] | select(.next_offset >= ${n3:-999999})] | length > 0" /v1/agents/e2e-sig/verdicts
reasons=$(e2e_verdicts e2e-sig | jq -c '[.verdicts[].reasons[]]')
check_eq "not_in_allowlist names the unsigned program" 1 \
	"$(jq '[.[] | select(.code == "not_in_allowlist" and (.detail | startswith("/root/e2e-unknown.sh ")))] | length' <<<"$reasons")"
check_eq "bad_file_signature names the changed program" 1 \
	"$(jq '[.[] | select(.code == "bad_file_signature" and (.detail | startswith("/usr/bin/e2e-signed ")))] | length' <<<"$reasons")"
check_eq "the signed program is named by no other reason" 1 \
	"$(jq '[.[] | select(.detail | startswith("/usr/bin/e2e-signed "))] | length' <<<"$reasons")"
viol=$(e2e_api '/v1/violations?agent=e2e-sig')
one=$(jq -c '[.violations[] | select(.path == "/usr/bin/e2e-signed")][0]' <<<"$viol")
check_eq "GET /v1/violations: bad_file_signature, open for review" "bad_file_signature open" \
	"$(jq -r '"\(.reason) \(.state)"' <<<"$one")"
changed=$({ cat "$W/overlay/usr/bin/e2e-signed"; echo 'echo "e2e: changed after signing"'; } | sha256sum | cut -d' ' -f1)
check_eq "its digest is the changed content's" "sha256:$changed" "$(jq -r .digest <<<"$one")"
check_eq "its template is ima-sig" ima-sig "$(jq -r .template <<<"$one")"
e2e_stop sig
finish
