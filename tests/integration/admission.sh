#!/usr/bin/env bash
# Admission against the real verifier: software agents (tests/tools/softagent) and attestd on a
# swtpm, through the API and attestctl.
#   --admission registered: an unknown id and a registered id with another TPM's EK are refused
#     at enrollment (403 not_admitted, logged, nothing stored); a registered one enrolls, and
#     its first verdict is judged by the policy it was registered (or assigned) with, not the
#     default; its labels are stored with it
#   attestctl agent add --from FILE (CSV and JSON): all or nothing; a bad line is named with
#     its line number (or item) whether attestctl or the verifier finds it
#   a registration is an operator's act in the audit trail; an id is registered once
#   --admission open (the default): an unregistered id enrolls as before, a registered id only
#     with its EK
#   attestd --print-ek-sha256 prints what tpm2_readpublic -o writes, hashed, and a TPM
#     registered so enrolls
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
code() { curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o /dev/null \
	-w '%{http_code}' "$@"; }
nagents() { op /v1/agents | jq '.agents | length'; }
nregs() { op /v1/registrations | jq '.registrations | length'; }
first_policy() { op "/v1/agents/$1/verdicts?limit=1000" | jq -r '.verdicts[-1].judged_by.policy'; }
init() { "$SA" init "$W/a-$1" --ca-key "$W/ekca/ca-key.pem" --ca-cert "$W/ekca/ca.pem" ||
	fail "softagent init $1"; }
# A policy that allows app2 only: a round with app1 is untrusted under it, trusted under the
# default.
cat >"$W/strict.json" <<EOT
{"version": 1, "digests": {"/usr/bin/app2": ["sha256:$D2"]}, "violations": "fail"}
EOT

# --- registered ----------------------------------------------------------------------------
start_verifier "$W/reg" "${VARGS[@]}" --admission registered || { fail "verifier starts"; finish; exit 1; }
ctl policy put strict "$W/strict.json" >/dev/null || fail "policy put strict"
for id in n1 n2 n3 n4 n5 n6 n7; do init "$id"; done

sa enroll "$W/a-n1" --verifier "$URL" --cacert "$CA" --id n1
check_eq "an unknown id is refused" "403 not_admitted" "$R_STATUS $(err_code)"
check "the refusal says how to admit it" grep -q 'attestctl agent add' <<<"$R_BODY"
check_eq "nothing stored: no agent" "404 0" "$(code "$URL/v1/agents/n1") $(nagents)"
check "the verifier logged the refusal" grep -q 'agent "n1" refused: not admitted' "$VLOG"

check_eq "attestctl agent add n1 --ek-cert --policy strict --label" "agent n1: registered" \
	"$(ctl agent add n1 --ek-cert "$W/a-n1/ek.der" --policy strict --label site=lab1 --label role=db)"
check_fails "the same id again is refused" ctl agent add n1 --ek-sha256 "$("$SA" ek-sha256 "$W/a-n1")"
check_eq "... with registration_exists, nothing changed" "409 1" \
	"$(code -X POST --data "{\"registrations\":[{\"agent_id\":\"n1\",\"ek_sha256\":\"$("$SA" ek-sha256 "$W/a-n1")\"}]}" "$URL/v1/registrations") $(nregs)"
# n2 is registered with n3's EK: n2's own TPM is another.
ctl agent add n2 --ek-cert "$W/a-n3/ek.der" >/dev/null || fail "register n2"
sa enroll "$W/a-n2" --verifier "$URL" --cacert "$CA" --id n2
check_eq "a registered id with another EK is refused" "403 not_admitted" "$R_STATUS $(err_code)"
check "the refusal says another EK" grep -q 'another EK' <<<"$R_BODY"
check_eq "nothing stored" "404 0" "$(code "$URL/v1/agents/n2") $(nagents)"
check "logged" grep -q 'agent "n2" refused: not admitted (its registration names another EK)' "$VLOG"

sa enroll "$W/a-n1" --verifier "$URL" --cacert "$CA" --id n1
check_eq "the registered TPM enrolls" 200 "$R_STATUS"
check_eq "registered with policy strict" strict "$(op /v1/agents/n1 | jq -r .policy)"
sa round "$W/a-n1" --append "$APP1"
check_eq "its first round is judged by strict (app1 is not in it)" "200 untrusted" \
	"$R_STATUS $(verdict)"
check_eq "the first verdict names strict" strict "$(first_policy n1)"
if command -v sqlite3 >/dev/null; then
	check_eq "its labels are stored" "role=db site=lab1" \
		"$(sqlite3 "$W/reg/verifier.db" "SELECT key || '=' || value FROM agent_labels WHERE agent = 'n1' ORDER BY key" | tr '\n' ' ' | sed 's/ $//')"
else
	skip "sqlite3 not installed: labels not read from the store"
fi

# By the digest of its TPM2B_PUBLIC, then assigned a policy before it enrolled.
ctl agent add n4 --ek-sha256 "$("$SA" ek-sha256 "$W/a-n4")" >/dev/null || fail "register n4"
check_eq "policy assign before enrollment (a registered id)" 0 \
	"$(ctl policy assign n4 strict >/dev/null; echo $?)"
check_eq "an id neither enrolled nor registered is still unknown" 404 \
	"$(code -X PUT --data '{"policy":"strict"}' "$URL/v1/agents/nobody/policy")"
check_eq "a policy a registration names is in use" 409 \
	"$(code -X DELETE "$URL/v1/policies/strict")"
sa enroll "$W/a-n4" --verifier "$URL" --cacert "$CA" --id n4
check_eq "registered by ek_sha256: enrolls" 200 "$R_STATUS"
sa round "$W/a-n4" --append "$APP1"
check_eq "its first verdict is judged by the policy assigned before it enrolled" \
	"untrusted strict" "$(verdict) $(first_policy n4)"
# n5: registered without a policy: the default judges it.
ctl agent add n5 --ek-sha256 "$("$SA" ek-sha256 "$W/a-n5")" >/dev/null || fail "register n5"
sa enroll "$W/a-n5" --verifier "$URL" --cacert "$CA" --id n5
sa round "$W/a-n5" --append "$APP1"
check_eq "registered without a policy: the default judges it" "200 trusted default" \
	"$R_STATUS $(verdict) $(first_policy n5)"

check_eq "the fleet says which agents are registered" "n1:true n4:true n5:true" \
	"$(op /v1/agents | jq -r '[.agents[] | "\(.agent_id):\(.registered)"] | join(" ")')"
check_eq "every registration listed" "n1 cert strict;n2 cert default;n4 public strict;n5 public default" \
	"$(op /v1/registrations | jq -r '[.registrations[] | "\(.agent_id) \(.ek) \(.policy)"] | join(";")')"
check "attestctl registrations shows n1's labels" grep -Eq '^n1 +cert .*strict +\{"role":"db","site":"lab1"\}' \
	<<<"$(ctl registrations)"
check_eq "attestctl agent unregister n2" 0 "$(ctl agent unregister n2 >/dev/null; echo $?)"
check_eq "unregistered: 404 the second time" 404 "$(code -X DELETE "$URL/v1/registrations/n2")"
if command -v sqlite3 >/dev/null; then
	check_eq "registrations are in the audit trail, by the token's name" \
		"agent.registered:n1 agent.registered:n2 agent.registered:n4 agent.policy:n4 agent.registered:n5 agent.unregistered:n2" \
		"$(sqlite3 "$W/reg/verifier.db" "SELECT kind || ':' || agent FROM audit_log WHERE kind LIKE 'agent.%' ORDER BY seq" | tr '\n' ' ' | sed 's/ $//')"
fi
check "the audit chain verifies" "$CTL" audit verify --store "sqlite:$W/reg/verifier.db"

# --- attestctl agent add --from FILE: all or nothing ----------------------------------------
before=$(nregs)
cp "$W/a-n6/ek.der" "$W/n6.der"
cat >"$W/bad.csv" <<EOT
agent_id,ek_sha256,ek_cert,policy,labels
# a comment
m1,$("$SA" ek-sha256 "$W/a-n7"),,,site=lab2

m2,not-hex,,,
EOT
out=$(ctl agent add --from "$W/bad.csv" 2>&1)
check_eq "a bad line: exit 2" 2 $?
check "the bad line is named with its number" grep -q "bad.csv:5: agent m2: ek_sha256 is not 64 hex digits" <<<"$out"
check_eq "nothing registered" "$before" "$(nregs)"
cat >"$W/badpol.csv" <<EOT
agent_id,ek_cert,policy
m1,n6.der,strict
m3,n6.der,no-such-policy
EOT
out=$(ctl agent add --from "$W/badpol.csv" 2>&1)
check_eq "a line the verifier refuses: exit 1" 1 $?
check "named by its line too" grep -q "badpol.csv:3: verifier refused (404 unknown_policy)" <<<"$out"
check_eq "nothing registered (m1 of line 2 neither)" "$before 404" \
	"$(nregs) $(code -X DELETE "$URL/v1/registrations/m1")"
cat >"$W/dup.csv" <<EOT
agent_id,ek_cert
m1,n6.der
n1,n6.der
EOT
out=$(ctl agent add --from "$W/dup.csv" 2>&1)
check "an id registered already: named by its line, nothing registered" \
	grep -q "dup.csv:3: verifier refused (409 registration_exists)" <<<"$out"
check_eq "... nothing registered" "$before" "$(nregs)"
cat >"$W/good.csv" <<EOT
labels,ek_cert,agent_id,policy
site=lab2;rack=r7,n6.der,n6,strict
EOT
printf '[{"agent_id": "n7", "ek_sha256": "%s", "labels": {"site": "lab3"}}]\n' \
	"$("$SA" ek-sha256 "$W/a-n7")" >"$W/good.json"
printf '[{"agent_id": "m8", "ek_sha256": "%s"}, {"agent_id": "m9", "ek_sha256": "%s", "labels": {"bad key": "x"}}]\n' \
	"$("$SA" ek-sha256 "$W/a-n7")" "$("$SA" ek-sha256 "$W/a-n7")" >"$W/bad.json"
out=$(ctl agent add --from "$W/bad.json" 2>&1)
check "JSON: a bad item named" grep -q 'bad.json: item 2: label "bad key=x" is not KEY=VALUE' <<<"$out"
check_eq "... nothing registered" "$before" "$(nregs)"
check_eq "a good CSV (columns in any order, a certificate beside it)" \
	"1 agents registered from $W/good.csv" "$(ctl agent add --from "$W/good.csv")"
check_eq "a good JSON file" "1 agents registered from $W/good.json" \
	"$(ctl agent add --from "$W/good.json")"
check_eq "both registered with their policy and labels" \
	'n6 strict {"rack":"r7","site":"lab2"};n7 default {"site":"lab3"}' \
	"$(op /v1/registrations | jq -c -r '[.registrations[] | select(.agent_id == "n6" or .agent_id == "n7") | "\(.agent_id) \(.policy) \(.labels | tojson)"] | join(";")')"
sa enroll "$W/a-n6" --verifier "$URL" --cacert "$CA" --id n6
sa round "$W/a-n6" --append "$APP1"
check_eq "an agent of the file enrolls, judged by its policy" "200 untrusted strict" \
	"$R_STATUS $(verdict) $(first_policy n6)"

# --- open (the default) ---------------------------------------------------------------------
start_verifier "$W/open" "${VARGS[@]}" || { fail "verifier (open) starts"; finish; exit 1; }
init o1
init o2
sa enroll "$W/a-o1" --verifier "$URL" --cacert "$CA" --id o1
check_eq "open: an unregistered id enrolls as before" 200 "$R_STATUS"
sa round "$W/a-o1" --append "$APP1"
check_eq "open: and is judged by the default" "trusted default" "$(verdict) $(first_policy o1)"
check_eq "open: it is not registered" false "$(op /v1/agents/o1 | jq -r .registered)"
ctl agent add o2 --ek-cert "$W/a-o1/ek.der" >/dev/null || fail "register o2 (open)"
sa enroll "$W/a-o2" --verifier "$URL" --cacert "$CA" --id o2
check_eq "open: a registered id still enrolls only with its EK" "403 not_admitted" \
	"$R_STATUS $(err_code)"
check_eq "a bad --admission is refused" 2 \
	"$("$B/verifier" --config /dev/null --admission closed --state-dir "$W/x" >/dev/null 2>&1; echo $?)"

# --- attestd on a swtpm ---------------------------------------------------------------------
if ! command -v swtpm >/dev/null || ! command -v tpm2_readpublic >/dev/null; then
	skip "swtpm or tpm2-tools not installed: attestd --print-ek-sha256 not checked"
	finish
	exit
fi
swtpm_with_ek_ca "$W/tpm" || { finish; exit 1; }
printed=$("$B/attestd" --config /dev/null --tcti "$TCTI" --print-ek-sha256 2>>"$W/attestd.log")
check_eq "attestd --print-ek-sha256: exit 0" 0 $?
tpm2_createek -c "$W/ek.ctx" -G rsa -u "$W/ek.pub" >/dev/null 2>&1 &&
	tpm2_readpublic -c "$W/ek.ctx" -o "$W/ek.readpublic" >/dev/null 2>&1 &&
	tpm2_flushcontext -t >/dev/null 2>&1 || fail "tpm2_createek / tpm2_readpublic"
check_eq "it is the SHA-256 of what tpm2_readpublic -o writes" \
	"$(sha256sum "$W/ek.readpublic" | cut -d' ' -f1)" "$printed"
"$B/tools/imagen" --entries 5 --template ima-ng --hash sha256 --zero-boot-pcrs --seed 3 \
	--out "$W/ima" --tpm2-extend-script "$W/ext" >/dev/null || fail "a list"
# shellcheck disable=SC2046 # one PCR:alg=digest argument per word
tpm2_pcrextend $(cat "$W/ext") >/dev/null || fail "PCR 10 follows the list"
start_verifier "$W/reg2" --ek-ca "$W/tpm/ek-ca.pem" --policy "$W/policy.json" \
	--operator-token-file "$W/token" --admission registered || fail "verifier (attestd) starts"
attest() { "$B/attestd" --config /dev/null --once --verifier "$URL" --ca "$CA" --agent-id "$1" \
	--tcti "$TCTI" --ima-list "$W/ima" --event-log none --state-dir "$W/ad-$1" >"$W/ad.out" 2>>"$W/attestd.log"; }
mkdir -p "$W/ad-host-1" "$W/ad-host-2"
attest host-2
check_eq "attestd, not registered: exit 2 and nothing stored" "2 404" "$? $(code "$URL/v1/agents/host-2")"
check "attestd says why" grep -q 'not_admitted' "$W/attestd.log"
ctl agent add host-1 --ek-sha256 "$printed" >/dev/null || fail "register host-1"
attest host-1
check_eq "attestd registered by its printed digest: enrolls (active)" active \
	"$(op /v1/agents/host-1 | jq -r .state)"
finish
