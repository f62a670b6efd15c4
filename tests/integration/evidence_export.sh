#!/usr/bin/env bash
# Evidence kept for re-verification (verifier(8), EVIDENCE): the untrusted verdicts of attack
# scenarios (tests/attacks: an unknown program, a fabricated entry, an entry edited and re-hashed,
# a violation entry, entries reordered, a quote over another nonce, a PCR value that is not the
# quoted digest, the TPM clock going back) and the open-violations round after them are
# exported with `attestctl evidence get`, and `attestctl verify-evidence` reaches each verdict
# again offline, with the verifier stopped. Tampered copies (an entry, the quote, the
# signature, the AK, the policy, the recorded reasons) are not reproduced (exit 1). A trusted
# verdict keeps none (404); the bytes stored per kept record are reported.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

ACTL=$B/attestctl
[[ -x $ACTL ]] || { fail "missing $ACTL (run make)"; finish; exit 1; }
command -v sqlite3 >/dev/null || { skip "sqlite3 not installed"; finish; exit; }

start_verifier "$W/v" "${VARGS[@]}" || { fail "verifier starts"; finish; exit 1; }
vid() { jq -r .verdict_id <<<"$R_BODY"; }
EVIL=/usr/bin/evil:$(printf '66%.0s' {1..32})

# export NAME: the last round's verdict exported to $W/NAME.json
export_last() {
	local id
	id=$(vid)
	if ctl evidence get "$id" --out "$W/$1.json" >"$W/$1.get" 2>&1; then
		ok "$1: verdict $id exported"
		KEPT+=("$1")
	else
		fail "$1: verdict $id exported ($(cat "$W/$1.get"))"
	fi
}

KEPT=()
agent a || { finish; exit 1; }
check_eq "a trusted verdict keeps no evidence: 404" "404" \
	"$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" \
		"$URL/v1/verdicts/$(vid)/evidence")"
ctl evidence get "$(vid)" --out "$W/none.json" >/dev/null 2>"$W/none.err"
check_eq "attestctl evidence get of it: exit 1, nothing written" "1 no" \
	"$? $([[ -e $W/none.json ]] && echo yes || echo no)"
check "and says the verifier keeps none" grep -q "no evidence is kept" "$W/none.err"
check_eq "a verdict id that is not a number: 400" "400" \
	"$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" \
		"$URL/v1/verdicts/x1/evidence")"

sa round "$W/a-a" --append "$APP1" --append "$EVIL"
check_eq "an unknown program: untrusted" "untrusted not_in_allowlist" "$(verdict) $(reasons | cut -d, -f1)"
export_last unknown
sa round "$W/a-a" --append "$APP2"
check_eq "the next round: open_violations" "untrusted open_violations" "$(verdict) $(reasons | cut -d, -f1)"
export_last open

agent b || { finish; exit 1; }
sa round "$W/a-b" --attack quote-nonce
check_eq "quote over another nonce: untrusted" "untrusted nonce_mismatch" "$(verdict) $(reasons | cut -d, -f1)"
export_last quote_nonce
sa round "$W/a-b" --attack pcr-digest
check_eq "PCR 10 not the quoted digest: untrusted" "untrusted pcr_digest_mismatch" "$(verdict) $(reasons | cut -d, -f1)"
export_last pcr_digest
sa round "$W/a-b" --append "$APP1" --append "$APP2" --append "$APP1" --attack reorder
check_eq "entries reordered: untrusted" "untrusted pcr_mismatch" "$(verdict) $(reasons | cut -d, -f1)"
export_last reorder
sa round "$W/a-b" --attack clock-back
check_eq "TPM clock back: untrusted" "untrusted clock_rollback" "$(verdict) $(reasons | cut -d, -f1)"
export_last clock_back

agent f || { finish; exit 1; }
sa round "$W/a-f" --attack fabricate
check_eq "a fabricated entry: untrusted" "untrusted not_in_allowlist" "$(verdict) $(reasons | cut -d, -f1)"
export_last fabricate
agent e || { finish; exit 1; }
sa round "$W/a-e" --append "$APP1" --append "$APP2" --append "$APP1" --attack edit
check_eq "an entry edited and re-hashed: untrusted" "untrusted digest_mismatch" "$(verdict) $(reasons | cut -d, -f1)"
export_last edit
agent h || { finish; exit 1; }
sa round "$W/a-h" --violation /etc/shadow
check_eq "a violation entry: untrusted" "untrusted violation_entry" "$(verdict) $(reasons | cut -d, -f1)"
export_last violation

# Every exported record against docs/openapi.json's EvidenceRecord (closed: a member the document
# does not name fails), with python3-jsonschema as tests/tools/openapi_validate.py.
files=()
for n in "${KEPT[@]}"; do files+=("$W/$n.json"); done
check "every exported record (${#files[@]}) fits docs/openapi.json's EvidenceRecord" python3 -c '
import json, sys
import jsonschema
doc = json.load(open(sys.argv[1]))
v = jsonschema.Draft202012Validator(dict(doc, **{"$ref": "#/components/schemas/EvidenceRecord"}))
for f in sys.argv[2:]:
    v.validate(json.load(open(f)))
sys.exit(0 if len(sys.argv) > 3 else 1)
' "$TOP/docs/openapi.json" "${files[@]}"

# What one kept record costs the store: the record and its AK (the policy is kept once).
bytes=$(sqlite3 "$W/v/verifier.db" \
	"SELECT length(CAST(record AS BLOB)) + length(ak_pub) FROM verdict_evidence ORDER BY verdict_id LIMIT 2" | tr '\n' ' ')
policies=$(sqlite3 "$W/v/verifier.db" "SELECT COUNT(*) FROM evidence_policies")
echo "# bytes stored per kept record (unknown program, open violations): $bytes; policy copies: $policies"
check "the policy is kept once for all records" test "$policies" -eq 1

# Offline: the verifier is gone.
stop_pid "$VPID"
for n in "${KEPT[@]}"; do
	out=$("$ACTL" verify-evidence "$W/$n.json" 2>&1)
	rc=$?
	check_eq "$n: verify-evidence reproduces the verdict offline (exit 0)" "0" "$rc"
	grep -q '^reproduced' <<<"$out" || printf '   %s\n' "$out"
done
json=$("$ACTL" verify-evidence "$W/unknown.json" --json)
check_eq "--json: reproduced, authenticated, untrusted" "true true untrusted" \
	"$(jq -r '"\(.reproduced) \(.authenticated) \(.verdict.verdict)"' <<<"$json")"
check_eq "the record names its verdict" "$(jq .verdict_id "$W/unknown.json")" \
	"$(jq .verdict.verdict_id "$W/unknown.json")"

# tamper NAME JQ-PATH OFFSET: a copy of record NAME with one byte of the base64 field at JQ-PATH
# flipped at OFFSET (negative: from the end).
tamper() {
	local hex n at
	hex=$(jq -r "$2" "$W/$1.json" | base64 -d | xxd -p | tr -d '\n')
	n=$((${#hex} / 2))
	at=$3
	((at < 0)) && at=$((n + at))
	local byte=${hex:$((2 * at)):2}
	printf -v byte '%02x' $((0x$byte ^ 1))
	hex=${hex:0:$((2 * at))}$byte${hex:$((2 * at + 2))}
	jq --arg v "$(xxd -r -p <<<"$hex" | base64 -w0)" "$2 = \$v" "$W/$1.json" >"$W/t.json"
}
# refuted DESC: verify-evidence on $W/t.json exits 1 and says why.
refuted() {
	local out rc
	out=$("$ACTL" verify-evidence "$W/t.json" 2>&1)
	rc=$?
	check_eq "$1: not reproduced (exit 1)" "1" "$rc"
	check "$1: says why" grep -qE 'NOT reproduced|not reproduced' <<<"$out"
}
tamper unknown .evidence.log -3
refuted "the unknown program's entry changed"
tamper unknown .evidence.log -15
refuted "its digest changed"
tamper unknown .evidence.attest -5
refuted "the quote changed"
tamper unknown .evidence.signature -2
refuted "the signature changed"
tamper unknown .ak_pub -2
refuted "the AK changed"
jq '.verdict.reasons[0].code = "open_violations"' "$W/unknown.json" >"$W/t.json"
refuted "the recorded reason changed"
jq '.verdict.verdict = "trusted" | .verdict.reasons = []' "$W/unknown.json" >"$W/t.json"
refuted "the recorded verdict made trusted"
jq --arg d "sha256:$(printf '66%.0s' {1..32})" \
	'.policy.text |= (fromjson | .digests["/usr/bin/evil"] = [$d] | tojson)' "$W/unknown.json" >"$W/t.json"
refuted "a policy that allows the program"
jq '.open_violations = 0 | .open_violations_in_boot = 0' "$W/open.json" >"$W/t.json"
refuted "the open violations of the next round taken away"
echo '{"format": 1}' >"$W/t.json"
refuted "a file that is no evidence record"
check_eq "a file that cannot be read: exit 2" "2" "$("$ACTL" verify-evidence "$W/missing.json" >/dev/null 2>&1; echo $?)"
finish
