#!/usr/bin/env bash
# The verifier's REST API against a real process on a free port, with curl --cacert:
# generated TLS (1.1 refused), health, operator auth, enrollment with a real swtpm EK
# certificate and a tpm2-tools AK, activation with tpm2_activatecredential, challenges and
# nonces, body caps, malformed input; every refusal leaves the stored state unchanged.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

VERIFIER=$B/verifier
need_cmds swtpm swtpm_setup tpm2_createek tpm2_activatecredential curl jq xxd
[[ -x $VERIFIER ]] || { fail "missing $VERIFIER (run make)"; finish; exit 1; }

W=$T_TMP
tflush() { tpm2_flushcontext -t >/dev/null 2>&1; tpm2_flushcontext -s >/dev/null 2>&1; true; }

# --- a TPM with an EK certificate from a test CA, EK and AK made by tpm2-tools -------------
swtpm_ca_init "$W/ca"
swtpm_manufacture "$W/tpm" "$W/ca" || { fail "swtpm_setup"; finish; exit 1; }
start_swtpm "$W/tpm" || { fail "swtpm start"; finish; exit 1; }
TPM1_TCTI=$TCTI
tpm2_createek -c "$W/ek.ctx" -G rsa -u "$W/ek.pub" >/dev/null && tflush &&
	tpm2_createak -C "$W/ek.ctx" -G rsa -g sha256 -s rsassa -u "$W/ak.pub" -n "$W/ak.name" \
		-c "$W/ak.ctx" >/dev/null && tflush &&
	tpm2_createak -C "$W/ek.ctx" -G rsa -g sha256 -s rsassa -u "$W/ak2.pub" -n "$W/ak2.name" \
		-c "$W/ak2.ctx" >/dev/null && tflush &&
	tpm2_nvread 0x01c00002 -o "$W/ek.der" 2>/dev/null
check "tpm2-tools made EK, AKs and read the EK certificate" test -s "$W/ek.der"
tflush

# A second CA and TPM: its EK certificate must be refused.
swtpm_ca_init "$W/ca2"
swtpm_manufacture "$W/tpm2" "$W/ca2" || fail "second swtpm_setup"
# A third TPM from the trusted CA: another machine (one TPM is one agent).
swtpm_manufacture "$W/tpm3" "$W/ca" || fail "third swtpm_setup"

# --- the verifier ------------------------------------------------------------------------
S=$W/state
vstart() {
	start_verifier "$S" --threads 2 --nonce-ttl "${TTL:-60}" \
		--ek-ca "$W/ca/ca/swtpm-localca-rootca-cert.pem" --ek-ca "$W/ca/ca/issuercert.pem"
}
check "verifier starts and prints its address" vstart
check_eq "listening line" "listening on $URL" "$(head -n 1 "$VOUT")"
check "ca.pem generated" test -s "$S/ca.pem"
check_eq "server key is 0600" 600 "$(stat -c %a "$S/server-key.pem")"
check_eq "operator token is 0600" 600 "$(stat -c %a "$S/operator-token")"
TOKEN=$(cat "$S/operator-token")

# c ARGS...: curl with our CA; prints the body, then the status on its own line.
c() { curl -sS --cacert "$S/ca.pem" -w '\n%{http_code}' "$@"; }
status() { tail -n 1 <<<"$1"; }
body() { sed '$d' <<<"$1"; }
code() { body "$1" | jq -r '.error.code // empty' 2>/dev/null; }
op() { c -H "Authorization: Bearer $TOKEN" "$@"; }
agents() { op "$URL/v1/agents" | sed '$d'; }

r=$(c "$URL/healthz")
check_eq "healthz 200" 200 "$(status "$r")"
check_eq "healthz body" ok "$(body "$r" | jq -r .status)"
check_fails "TLS 1.1 refused" curl -sS --cacert "$S/ca.pem" --tls-max 1.1 -o /dev/null "$URL/healthz"
check "TLS via localhost name" curl -sS --cacert "$S/ca.pem" -o /dev/null "https://localhost:$VPORT/healthz"
check_fails "unknown CA refused by the client" curl -sS -o /dev/null "$URL/healthz"

r=$(c "$URL/v1/agents")
check_eq "operator call without token 401" 401 "$(status "$r")"
check_eq "401 code" unauthorized "$(code "$r")"
r=$(c -H "Authorization: Bearer wrong-token-wrong-token" "$URL/v1/agents")
check_eq "operator call with wrong token 401" 401 "$(status "$r")"
r=$(op "$URL/v1/agents")
check_eq "operator call with token 200" 200 "$(status "$r")"
check_eq "no agents yet" 0 "$(body "$r" | jq '.agents | length')"
r=$(c "$URL/v1/nothing")
check_eq "unknown path 404" 404 "$(status "$r")"
r=$(c -X DELETE "$URL/v1/agents")
check_eq "wrong method 405" 405 "$(status "$r")"

b64() { base64 -w0 "$1"; }
enroll_json() { # ID EKPUB EKCERT AKPUB
	jq -cn --arg id "$1" --arg ek "$(b64 "$2")" --arg c "$(b64 "$3")" --arg ak "$(b64 "$4")" \
		'{agent_id: $id, ek_pub: $ek, ek_cert: $c, ak_pub: $ak}'
}
# state_unchanged DESC: the agents listing equals the snapshot taken before the bad request.
snap() { SNAP=$(agents); }
unchanged() { check_eq "$1: state unchanged" "$SNAP" "$(agents)"; }

# --- bad enrollments -----------------------------------------------------------------------
snap
r=$(c -d '{"agent_id": "web-01", "ek_pub": ' "$URL/v1/agents")
check_eq "malformed JSON 400" 400 "$(status "$r")"
check_eq "malformed JSON code" bad_request "$(code "$r")"
unchanged "malformed JSON"
r=$(c -d '{"agent_id": 5, "ek_pub": "", "ek_cert": "", "ak_pub": ""}' "$URL/v1/agents")
check_eq "wrong types 400" 400 "$(status "$r")"
unchanged "wrong types"
head -c 70000 /dev/zero | tr '\0' 'a' >"$W/big"
r=$(c --data-binary @"$W/big" "$URL/v1/agents")
check_eq "oversized body 413" 413 "$(status "$r")"
check_eq "oversized code" body_too_large "$(code "$r")"
r=$(head -c 70000 /dev/zero | tr '\0' 'a' | c -H 'Transfer-Encoding: chunked' --data-binary @- "$URL/v1/agents")
check_eq "oversized chunked body 413" 413 "$(status "$r")"
head -c 3000000 /dev/zero | tr '\0' 'a' >"$W/huge"
check_fails "far oversized body: connection refused early" curl -sS --cacert "$S/ca.pem" -o /dev/null -f \
	--data-binary @"$W/huge" "$URL/v1/agents"
unchanged "oversized bodies"
enroll_json web-01 "$W/ek.pub" "$W/ek.der" "$W/ek.pub" >"$W/e_badak.json"
r=$(c -d @"$W/e_badak.json" "$URL/v1/agents")
check_eq "EK as AK: 400" 400 "$(status "$r")"
check_eq "EK as AK: bad_ak" bad_ak "$(code "$r")"
# another TPM's EK certificate (other CA) for this EK
# read_ek N: EK public and certificate of TPM N into $W/ekN.pub, $W/ekN.der.
read_ek() {
	local ok=1
	start_swtpm "$W/tpm$1" || return 1
	tpm2_nvread 0x01c00002 -o "$W/ek$1.der" 2>/dev/null &&
		tpm2_createek -c "$W/ek$1.ctx" -G rsa -u "$W/ek$1.pub" >/dev/null 2>&1 &&
		ok=0
	stop_pid "$SWTPM_PID"
	export TPM2TOOLS_TCTI=$TPM1_TCTI
	return $ok
}
read_ek 2
read_ek 3
check "second TPM's EK and certificate read" test -s "$W/ek2.der" -a -s "$W/ek2.pub"
enroll_json web-01 "$W/ek2.pub" "$W/ek2.der" "$W/ak.pub" >"$W/e_otherca.json"
r=$(c -d @"$W/e_otherca.json" "$URL/v1/agents")
check_eq "EK certificate from another CA: 403" 403 "$(status "$r")"
check_eq "EK certificate from another CA: ek_untrusted" ek_untrusted "$(code "$r")"
enroll_json web-01 "$W/ek.pub" "$W/ek2.der" "$W/ak.pub" >"$W/e_mismatch.json"
r=$(c -d @"$W/e_mismatch.json" "$URL/v1/agents")
check_eq "EK certificate of another CA for our EK: 403" 403 "$(status "$r")"
# our CA's certificate but a different EK public key
enroll_json web-01 "$W/ek2.pub" "$W/ek.der" "$W/ak.pub" >"$W/e_mismatch2.json"
r=$(c -d @"$W/e_mismatch2.json" "$URL/v1/agents")
check_eq "EK certificate for another key: ek_mismatch" "403 ek_mismatch" "$(status "$r") $(code "$r")"
unchanged "refused enrollments"

# --- enrollment and activation ------------------------------------------------------------
enroll_json web-01 "$W/ek.pub" "$W/ek.der" "$W/ak.pub" >"$W/e.json"
r=$(c -d @"$W/e.json" "$URL/v1/agents")
check_eq "enroll 201" 201 "$(status "$r")"
body "$r" >"$W/enroll.out"
check_eq "agent pending" pending "$(op "$URL/v1/agents/web-01" | sed '$d' | jq -r .state)"

# credfile OUT: tpm2-tools credential file from the enroll response (marshalled TPM2Bs).
credfile() {
	{ printf '\xba\xdc\xc0\xde\x00\x00\x00\x01'
	  jq -r .credential_blob "$W/enroll.out" | base64 -d
	  jq -r .encrypted_secret "$W/enroll.out" | base64 -d; } >"$1"
}
activate_tpm() { # CRED AKCTX OUT
	local rc
	tpm2_startauthsession --policy-session -S "$W/s.ctx" >/dev/null &&
		tpm2_policysecret -S "$W/s.ctx" -c e >/dev/null || return 1
	tpm2_activatecredential -c "$2" -C "$W/ek.ctx" -i "$1" -o "$3" -P "session:$W/s.ctx" >/dev/null 2>&1
	rc=$?
	tpm2_flushcontext "$W/s.ctx" >/dev/null 2>&1
	tflush
	return $rc
}
credfile "$W/cred"
check "tpm2_activatecredential recovers the secret" activate_tpm "$W/cred" "$W/ak.ctx" "$W/secret"
check_fails "the credential does not activate with another AK" activate_tpm "$W/cred" "$W/ak2.ctx" "$W/secret2"

r=$(c -X POST "$URL/v1/agents/web-01/challenges")
check_eq "challenge before activation: 403 not_activated" "403 not_activated" "$(status "$r") $(code "$r")"

snap
r=$(c -d "{\"secret\": \"$(head -c 32 /dev/urandom | base64 -w0)\"}" "$URL/v1/agents/web-01/activate")
check_eq "wrong secret 403 activation_failed" "403 activation_failed" "$(status "$r") $(code "$r")"
unchanged "wrong secret"
r=$(c -d '{"secret": 12}' "$URL/v1/agents/web-01/activate")
check_eq "activate with bad JSON 400" 400 "$(status "$r")"
r=$(c -d "{\"secret\": \"$(b64 "$W/secret")\"}" "$URL/v1/agents/ghost/activate")
check_eq "activate unknown agent 404" "404 unknown_agent" "$(status "$r") $(code "$r")"
unchanged "bad activations"
r=$(c -d "{\"secret\": \"$(b64 "$W/secret")\"}" "$URL/v1/agents/web-01/activate")
check_eq "activate 200" 200 "$(status "$r")"
check_eq "activate answer" active "$(body "$r" | jq -r .state)"
check_eq "agent active" active "$(op "$URL/v1/agents/web-01" | sed '$d' | jq -r .state)"

# --- re-enrollment rules -------------------------------------------------------------------
snap
r=$(c -d @"$W/e.json" "$URL/v1/agents")
check_eq "same EK and AK when active: 409 already_enrolled" "409 already_enrolled" "$(status "$r") $(code "$r")"
enroll_json web-01 "$W/ek.pub" "$W/ek.der" "$W/ak2.pub" >"$W/e_ak2.json"
r=$(c -d @"$W/e_ak2.json" "$URL/v1/agents")
check_eq "other AK for an active id: 409 agent_exists" "409 agent_exists" "$(status "$r") $(code "$r")"
unchanged "re-enrollment refusals"
enroll_json db-01 "$W/ek.pub" "$W/ek.der" "$W/ak2.pub" >"$W/e_db.json"
r=$(c -d @"$W/e_db.json" "$URL/v1/agents")
check_eq "web-01's TPM as a second agent: 409 ek_in_use" "409 ek_in_use" "$(status "$r") $(code "$r")"
unchanged "one TPM, one agent"
# pending re-enrollment with the same EK gets a fresh credential
check "third TPM's EK and certificate read" test -s "$W/ek3.der" -a -s "$W/ek3.pub"
enroll_json db-01 "$W/ek3.pub" "$W/ek3.der" "$W/ak2.pub" >"$W/e_db.json"
r1=$(c -d @"$W/e_db.json" "$URL/v1/agents")
r2=$(c -d @"$W/e_db.json" "$URL/v1/agents")
check_eq "pending re-enroll 201 twice" "201 201" "$(status "$r1") $(status "$r2")"
check "fresh credential each time" test "$(body "$r1" | jq -r .encrypted_secret)" != "$(body "$r2" | jq -r .encrypted_secret)"

# --- challenges and nonces -----------------------------------------------------------------
r=$(c -X POST "$URL/v1/agents/web-01/challenges")
check_eq "challenge 201" 201 "$(status "$r")"
CH=$(body "$r")
check_eq "nonce is 32 bytes hex" 64 "$(jq -r .nonce <<<"$CH" | tr -d '\n' | wc -c)"
check_eq "log_offset 0 before any evidence" 0 "$(jq -r .log_offset <<<"$CH")"
check_eq "selection sha1 0-10" "0,1,2,3,4,5,6,7,8,9,10" "$(jq -r '.pcr_selection.sha1 | map(tostring) | join(",")' <<<"$CH")"
check_eq "selection sha256 0-10" 11 "$(jq -r '.pcr_selection.sha256 | length' <<<"$CH")"
exp=$(jq -r .expires_at <<<"$CH")
check "expiry about 60 s ahead" test $((exp - $(date +%s))) -ge 55 -a $((exp - $(date +%s))) -le 61
r=$(c -X POST "$URL/v1/agents/ghost/challenges")
check_eq "challenge unknown agent 404" "404 unknown_agent" "$(status "$r") $(code "$r")"

# evidence with a well-formed body but a made-up quote: the nonce decides first.
NONCE=$(jq -r .nonce <<<"$CH")
evidence() { # NONCE
	jq -cn --arg n "$1" --arg a "$(printf 'not a quote' | base64 -w0)" --arg s "$(printf 'sig' | base64 -w0)" \
		'{nonce: $n, attest: $a, signature: $s, pcrs: {sha256: {"10": ("00" * 32)}}, log_offset: 0, log: ""}'
}
snap
r=$(c -d "$(evidence "$(head -c 32 /dev/urandom | xxd -p -c 64)")" "$URL/v1/agents/web-01/evidence")
check_eq "unknown nonce 400 nonce_unknown" "400 nonce_unknown" "$(status "$r") $(code "$r")"
unchanged "unknown nonce"
r=$(c -d "$(evidence "$NONCE")" "$URL/v1/agents/db-01/evidence")
check_eq "evidence from a pending agent 403" "403 not_activated" "$(status "$r") $(code "$r")"
r=$(c -d '{"nonce": "zz"}' "$URL/v1/agents/web-01/evidence")
check_eq "malformed evidence 400" "400 bad_request" "$(status "$r") $(code "$r")"
r=$(c -d "$(evidence "$NONCE")" "$URL/v1/agents/web-01/evidence")
first=$(status "$r")
check "first use of the nonce is judged (200) or refused by the parser (400)" test "$first" = 200 -o "$first" = 400
if [[ $first == 200 ]]; then
	check_eq "made-up quote is untrusted" untrusted "$(body "$r" | jq -r .verdict)"
	snap
	r=$(c -d "$(evidence "$NONCE")" "$URL/v1/agents/web-01/evidence")
	check_eq "reused nonce 409 nonce_reused" "409 nonce_reused" "$(status "$r") $(code "$r")"
	unchanged "reused nonce"
	r=$(op "$URL/v1/agents/web-01/verdicts")
	check_eq "one verdict stored" 1 "$(body "$r" | jq '.verdicts | length')"
fi

# Expired nonce: a verifier with a 1 s TTL.
stop_pid "$VPID"
TTL=1
check "verifier restarts on the same state" vstart
check_eq "agents survive a restart" active "$(op "$URL/v1/agents/web-01" | sed '$d' | jq -r .state)"
r=$(c -X POST "$URL/v1/agents/web-01/challenges")
N2=$(body "$r" | jq -r .nonce)
sleep 2.2
r=$(c -d "$(evidence "$N2")" "$URL/v1/agents/web-01/evidence")
check_eq "expired nonce 409 nonce_expired" "409 nonce_expired" "$(status "$r") $(code "$r")"

# Rate limit: at most 10 unanswered challenges.
stop_pid "$VPID"
TTL=60
vstart || fail "restart"
codes=""
for _ in $(seq 1 11); do codes+="$(status "$(c -X POST "$URL/v1/agents/web-01/challenges")") "; done
check "11th challenge rate limited (429)" grep -q '429 $' <<<"$codes"

# --- operator views ------------------------------------------------------------------------
r=$(op "$URL/v1/violations?state=open")
check_eq "violations list 200" 200 "$(status "$r")"
r=$(op "$URL/v1/violations?state=bogus")
check_eq "violations bad state 400" 400 "$(status "$r")"
r=$(op "$URL/v1/agents/ghost/verdicts")
check_eq "verdicts of unknown agent 404" 404 "$(status "$r")"
r=$(c "$URL/metrics")
check_eq "metrics 200" 200 "$(status "$r")"
check "metrics count active agents" grep -q '^attest_agents{state="active"} 1$' <<<"$(body "$r")"
check "metrics histogram" grep -q '^attest_evidence_seconds_count ' <<<"$(body "$r")"

# --- attestctl ------------------------------------------------------------------------------
CTL=$B/attestctl
if [[ -x $CTL ]]; then
	copt=(--verifier "$URL" --ca "$S/ca.pem" --token-file "$S/operator-token")
	out=$("$CTL" agents "${copt[@]}")
	check "attestctl agents table lists web-01 as active" grep -qE '^web-01 +active' <<<"$out"
	check_eq "attestctl agents --json" "db-01 web-01" "$("$CTL" agents "${copt[@]}" --json | jq -r '[.agents[].agent_id] | join(" ")')"
	check "attestctl agent ID" grep -q '^state: *active' <<<"$("$CTL" agent web-01 "${copt[@]}")"
	check_eq "attestctl verdicts --json" "$(op "$URL/v1/agents/web-01/verdicts" | sed '$d' | jq '.verdicts | length')" \
		"$("$CTL" verdicts web-01 "${copt[@]}" --json | jq '.verdicts | length')"
	check "attestctl violations --open" "$CTL" violations --open "${copt[@]}"
	echo "wrong-token-wrong-token" >"$W/bad-token"
	"$CTL" agents --verifier "$URL" --ca "$S/ca.pem" --token-file "$W/bad-token" >/dev/null 2>&1
	check_eq "attestctl with a wrong token exits 1" 1 $?
	"$CTL" agents --verifier "$URL" --token-file "$S/operator-token" >/dev/null 2>&1
	check_eq "attestctl without the CA exits 2 (TLS)" 2 $?
	"$CTL" agent ghost "${copt[@]}" >/dev/null 2>&1
	check_eq "attestctl agent unknown exits 1" 1 $?
else
	skip "no attestctl"
fi

# --- clean stop ----------------------------------------------------------------------------
# ?limit= is a whole number from 1, or the call is refused: never silently the default.
for q in 1x 0 -1 abc "" %2B5 5.0; do
	r=$(op "$URL/v1/violations?limit=$q")
	check_eq "GET /v1/violations?limit=$q: 400 bad_request" "400 bad_request" "$(status "$r") $(code "$r")"
done
r=$(op "$URL/v1/agents/web-01/verdicts?limit=1x")
check_eq "GET /v1/agents/web-01/verdicts?limit=1x: 400 bad_request" "400 bad_request" \
	"$(status "$r") $(code "$r")"
check "the refusal says what limit takes" grep -q 'limit: a whole number' <<<"$(body "$r")"
r=$(op "$URL/v1/agents/web-01/counters?limit=x")
check_eq "GET /v1/agents/web-01/counters?limit=x: 400" 400 "$(status "$r")"
r=$(op "$URL/v1/violations?limit=5")
check_eq "GET /v1/violations?limit=5: 200" 200 "$(status "$r")"
r=$(op "$URL/v1/agents/web-01/verdicts?limit=99999999999999999999999")
check_eq "a limit past the cap is the cap: 200" 200 "$(status "$r")"

kill -TERM "$VPID"
rc=0
wait "$VPID" || rc=$?
check_eq "SIGTERM exits 0" 0 "$rc"
check "generated certificate reused across restarts" grep -q 'tls: agents trust' "$VLOG"

finish
