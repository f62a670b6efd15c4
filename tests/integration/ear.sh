#!/usr/bin/env bash
# Attestation results for relying parties: signed EARs (draft-ietf-rats-ear, ES256 JWT) against
# the real verifier and software agents (tests/tools/softagent), checked by attestctl ear verify
# and by an independent JWT library (PyJWT, Debian's python3-jwt, on Debian's python3):
#   the JWK set is public; an unknown agent has no result (404), a retired one neither (409)
#   trusted: affirming, hardware 2, instance-identity 2, executables -2 (no boot policy),
#     configuration not claimed; the verdict id and policy version as our own claims
#   untrusted: contraindicated, executables 33 (a file the policy does not list)
#   stale: a result past its exp (the agent's interval x stale-intervals) is refused by both
#   tampered: a claim changed (contraindicated -> affirming) is refused by both, so is alg none
#   key rotation: the new key signs, the old one stays published and old results verify; the
#     keys survive a restart; after --ear-key-keep the old key leaves the set
#   a relying party's nonce: 202 until a round whose challenge carried it, then the EAR binds
#     it (eat_nonce); a round answered before the nonce arrived never does
#   after a restart no result exists until the agent's next round (404 no_result)
#   webhooks: an agent.untrusted event carries the EAR of its verdict (X-Attest-EAR)
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
# Debian's python3, where python3-jwt (deps.txt) lives, whatever python3 PATH finds first.
PY=/usr/bin/python3
$PY -c 'import jwt, cryptography' 2>/dev/null ||
	{ fail "python3-jwt is not installed for $PY (make deps)"; finish; exit 1; }
code() { curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o /dev/null \
	-w '%{http_code}' "$@"; }
jwks() { curl -sS --cacert "$CA" "$URL/v1/jwks" >"$1"; }
# ear ID FILE [QUERY]: the agent's EAR token into FILE; prints the HTTP status.
ear() {
	curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o "$W/ear.json" \
		-w '%{http_code}' "$URL/v1/agents/$1/ear${3:-}"
	jq -r '.ear // empty' "$W/ear.json" >"$2"
}
# pyjwt TOKEN_FILE JWKS_FILE [NONCE]: PyJWT's verdict: the status of the submod, or the name of
# the exception it raised.
pyjwt() {
	$PY - "$@" <<'EOF'
import json, sys, jwt
token = open(sys.argv[1]).read().strip()
keys = json.load(open(sys.argv[2]))["keys"]
try:
    kid = jwt.get_unverified_header(token)["kid"]
    match = [k for k in keys if k["kid"] == kid]
    if not match:
        print("NoSuchKid"); sys.exit(1)
    pub = jwt.algorithms.ECAlgorithm.from_jwk(json.dumps(match[0]))
    claims = jwt.decode(token, pub, algorithms=["ES256"], options={"require": ["iat", "exp"]})
except jwt.exceptions.PyJWTError as e:
    print(type(e).__name__); sys.exit(1)
if claims.get("eat_profile") != "tag:github.com,2023:veraison/ear":
    print("WrongProfile"); sys.exit(1)
if len(sys.argv) > 3 and claims.get("eat_nonce") != sys.argv[3]:
    print("WrongNonce"); sys.exit(1)
print(claims["submods"]["tpm-ima"]["ear.status"])
EOF
}
vec() { "$CTL" ear verify "$1" --jwks "$2" --json | jq -cS '.submods["tpm-ima"]["ear.trustworthiness-vector"]'; }

# A webhook receiver: events carry the agent's latest EAR in X-Attest-EAR.
head -c 24 /dev/urandom | xxd -p -c 64 >"$W/secret"
RPORT=$(free_port) || { fail "no free port"; finish; exit 1; }
$PY "$TOP/verifier/examples/webhook_receiver.py" --secret-file "$W/secret" \
	--listen "127.0.0.1:$RPORT" --out "$W/events.jsonl" >/dev/null 2>"$W/recv.log" &
track_pid $!
wait_for_port "$RPORT" || { fail "the webhook receiver listens"; finish; exit 1; }
HOOKS=(--webhook "http://127.0.0.1:$RPORT/hook" --webhook-secret-file "$W/secret")
start_verifier "$W/v" "${VARGS[@]}" "${HOOKS[@]}" || { fail "verifier starts"; finish; exit 1; }

# --- the keys, and who has no result -----------------------------------------------------------
check_eq "GET /v1/jwks needs no token" 200 \
	"$(curl -sS --cacert "$CA" -o "$W/jwks0" -w '%{http_code}' "$URL/v1/jwks")"
check_eq "one P-256 key for ES256" "1 EC P-256 ES256" \
	"$(jq -r '"\(.keys | length) \(.keys[0].kty) \(.keys[0].crv) \(.keys[0].alg)"' "$W/jwks0")"
check_eq "the private key is not published" "null" "$(jq -r '.keys[0].d' "$W/jwks0")"
check_eq "the key lives in the state directory, 0600" 600 "$(stat -c %a "$W/v/ear-key.pem")"
check_eq "an unknown agent: 404 unknown_agent" 404 "$(ear nobody "$W/none")"
check_eq "a result needs a token" 401 \
	"$(curl -sS --cacert "$CA" -o /dev/null -w '%{http_code}' "$URL/v1/agents/nobody/ear")"

# --- trusted -----------------------------------------------------------------------------------
agent a || { finish; exit 1; }
check_eq "a verdict carries no EAR unless the evidence asked (want_ear)" false "$(jq 'has("ear")' <<<"$R_BODY")"
check_eq "a trusted agent: 200" 200 "$(ear a "$W/a1.jwt")"
out=$("$CTL" ear verify "$W/a1.jwt" --jwks "$W/jwks0")
check_eq "attestctl ear verify accepts it" 0 $?
check "and prints the status" grep -q '^tpm-ima: affirming (agent a, verdict [0-9]* trusted, policy:default@1)' <<<"$out"
check "and the vector: hardware 2" grep -Eq '^  hardware +2 +affirming' <<<"$out"
check "configuration is not claimed (the policy judges no boot)" \
	grep -Eq '^  configuration +- +\(no claim\)' <<<"$out"
check_eq "the vector: only what was checked" \
	'{"executables":-2,"hardware":2,"instance-identity":2}' "$(vec "$W/a1.jwt" "$W/jwks0")"
check_eq "PyJWT verifies it: affirming" affirming "$(pyjwt "$W/a1.jwt" "$W/jwks0")"
check_eq "our own claims: agent, verdict id, policy and amendment versions" \
	"a $(op /v1/agents/a/verdicts | jq '.verdicts[0].id') default 1 0" \
	"$("$CTL" ear verify "$W/a1.jwt" --jwks "$W/jwks0" --json | jq -r '.submods["tpm-ima"] |
		"\(."attest.agent-id") \(."attest.verdict-id") \(."attest.policy".name) \(."attest.policy".version) \(."attest.amendment-version")"')"
check_eq "the saved answer {\"ear\": ...} verifies as well" 0 \
	"$("$CTL" ear verify "$W/ear.json" --jwks "$W/jwks0" >/dev/null; echo $?)"
ctl ear get a --out "$W/a1b.jwt" >/dev/null
check_eq "attestctl ear get writes the token" affirming "$(pyjwt "$W/a1b.jwt" "$W/jwks0")"

# --- tampered ------------------------------------------------------------------------------------
sa round "$W/a-a" --append "/usr/bin/evil:$D2"
check_eq "a runs a file the policy does not list" untrusted "$(verdict)"
ear a "$W/a2.jwt" >/dev/null
check_eq "untrusted: PyJWT reads contraindicated" contraindicated "$(pyjwt "$W/a2.jwt" "$W/jwks0")"
check_eq "executables 33: something not recognized ran" 33 \
	"$(vec "$W/a2.jwt" "$W/jwks0" | jq '.executables')"
for ((i = 0; i < 100; i++)); do
	grep -q '"type": "agent.untrusted"' "$W/events.jsonl" 2>/dev/null && break
	sleep 0.1
done
jq -r 'select(.type == "agent.untrusted") | .ear // empty' "$W/events.jsonl" >"$W/hook.jwt"
check_eq "the agent.untrusted webhook carries the EAR of its verdict (X-Attest-EAR)" \
	"$(jq -r 'select(.type == "agent.untrusted") | .event.data.verdict_id' "$W/events.jsonl")" \
	"$("$CTL" ear verify "$W/hook.jwt" --jwks "$W/jwks0" --json 2>&1 | jq -r '.submods["tpm-ima"]["attest.verdict-id"]')"
check_eq "PyJWT verifies the webhook's EAR" contraindicated "$(pyjwt "$W/hook.jwt" "$W/jwks0")"
# The claims of a2 with the status of a1: a forger's wish.
IFS=. read -r h c s <"$W/a2.jwt"
forged=$(printf '%s' "$c" | tr '_-' '/+' | base64 -d 2>/dev/null |
	jq -c '.submods["tpm-ima"]["ear.status"] = "affirming"' | base64 -w0 | tr '/+' '_-' | tr -d '=')
printf '%s.%s.%s\n' "$h" "$forged" "$s" >"$W/forged.jwt"
check_eq "a tampered token: attestctl refuses it (exit 1)" 1 \
	"$("$CTL" ear verify "$W/forged.jwt" --jwks "$W/jwks0" 2>"$W/forged.err"; echo $?)"
check "and says the signature does not verify" grep -q 'signature does not verify' "$W/forged.err"
check_eq "PyJWT refuses it too" InvalidSignatureError "$(pyjwt "$W/forged.jwt" "$W/jwks0")"
none=$(printf '{"alg":"none","typ":"JWT"}' | base64 -w0 | tr '/+' '_-' | tr -d '=')
printf '%s.%s.\n' "$none" "$forged" >"$W/none.jwt"
check_eq "alg none: attestctl refuses it" 1 \
	"$("$CTL" ear verify "$W/none.jwt" --jwks "$W/jwks0" 2>/dev/null; echo $?)"

# --- a relying party's nonce -------------------------------------------------------------------
N=rp-nonce-$(head -c 12 /dev/urandom | xxd -p)
check_eq "a nonce that is not base64url: 400" 400 "$(ear a "$W/x" '?nonce=not%20base64url')"
check_eq "a new nonce: 202, it waits for a round" "202 pending" \
	"$(ear a "$W/n.jwt" "?nonce=$N") $(jq -r .status "$W/ear.json")"
check_eq "no round yet: still 202" 202 "$(ear a "$W/n.jwt" "?nonce=$N")"
sa round "$W/a-a" --append "$APP1"
check_eq "the agent's next round answered the challenge that carried it: 200" 200 \
	"$(ear a "$W/n.jwt" "?nonce=$N")"
check_eq "attestctl ear verify --nonce accepts it" 0 \
	"$("$CTL" ear verify "$W/n.jwt" --jwks "$W/jwks0" --nonce "$N" >/dev/null; echo $?)"
check_eq "PyJWT reads the nonce" contraindicated "$(pyjwt "$W/n.jwt" "$W/jwks0" "$N")"
check_eq "another relying party's nonce is refused" 1 \
	"$("$CTL" ear verify "$W/n.jwt" --jwks "$W/jwks0" --nonce other-nonce-123 2>/dev/null; echo $?)"
check_eq "the latest result binds no nonce: refused where one is expected" 1 \
	"$("$CTL" ear verify "$W/a2.jwt" --jwks "$W/jwks0" --nonce "$N" 2>/dev/null; echo $?)"
N2=rp-nonce-two-$(head -c 6 /dev/urandom | xxd -p)
check_eq "a second nonce after that round: 202, the round before it does not answer it" 202 \
	"$(ear a "$W/n2.jwt" "?nonce=$N2")"
(sleep 1; ctl ear get a --nonce "$N2" --wait 60 --out "$W/n2.jwt" >/dev/null 2>"$W/n2.err") &
getter=$!
sleep 0.5
sa round "$W/a-a" --append "$APP1"
wait "$getter"
check_eq "attestctl ear get --nonce waits for it" 0 $?
check_eq "and the EAR binds it" "$N2" \
	"$("$CTL" ear verify "$W/n2.jwt" --jwks "$W/jwks0" --nonce "$N2" --json | jq -r .eat_nonce)"

# --- key rotation ------------------------------------------------------------------------------
sa round "$W/a-a" --append "$APP1"
ear a "$W/old.jwt" >/dev/null
old_kid=$(jq -r '.keys[0].kid' "$W/jwks0")
out=$(ctl ear rotate)
check "attestctl ear rotate names the new key and the one kept" grep -q "now signed by" <<<"$out"
jwks "$W/jwks1"
new_kid=$(jq -r '.keys[0].kid' "$W/jwks1")
check_eq "the set holds the new key first, and the old one" "2 $old_kid" \
	"$(jq -r '"\(.keys | length) \(.keys[1].kid)"' "$W/jwks1")"
check "the new key is another" test "$new_kid" != "$old_kid"
ear a "$W/new.jwt" >/dev/null
check_eq "a result now carries the new kid" "$new_kid" \
	"$(cut -d. -f1 "$W/new.jwt" | tr '_-' '/+' | base64 -d 2>/dev/null | jq -r .kid)"
check_eq "a result signed before the rotation still verifies: attestctl" 0 \
	"$("$CTL" ear verify "$W/old.jwt" --jwks "$W/jwks1" >/dev/null; echo $?)"
check_eq "and PyJWT (the open violation keeps a untrusted)" contraindicated \
	"$(pyjwt "$W/old.jwt" "$W/jwks1")"
jq '{keys: [.keys[0]]}' "$W/jwks1" >"$W/jwks-newonly"
check_eq "against the new key alone, an old result is refused: attestctl" 1 \
	"$("$CTL" ear verify "$W/old.jwt" --jwks "$W/jwks-newonly" 2>"$W/kid.err"; echo $?)"
check "naming the missing key" grep -q "no key \"$old_kid\"" "$W/kid.err"
check_eq "and PyJWT" NoSuchKid "$(pyjwt "$W/old.jwt" "$W/jwks-newonly")"
check_eq "a read-only rotation is refused without the token" 401 \
	"$(curl -sS --cacert "$CA" -o /dev/null -w '%{http_code}' -X POST "$URL/v1/ear/keys/rotate")"

# --- restart: the keys stay, the results do not --------------------------------------------------
stop_pid "$VPID"
start_verifier "$W/v" "${VARGS[@]}" "${HOOKS[@]}" || { fail "verifier restarts"; finish; exit 1; }
jwks "$W/jwks2"
check_eq "after a restart the same keys" "$new_kid $old_kid" \
	"$(jq -r '[.keys[].kid] | join(" ")' "$W/jwks2")"
check_eq "no result until the agent's next round: 404 no_result" "404 no_result" \
	"$(ear a "$W/x") $(jq -r .error.code "$W/ear.json")"
sa round "$W/a-a" --append "$APP1"
check_eq "then one, signed with the key in use" "200 $new_kid" \
	"$(ear a "$W/r.jwt") $(cut -d. -f1 "$W/r.jwt" | tr '_-' '/+' | base64 -d 2>/dev/null | jq -r .kid)"
stop_pid "$VPID"
start_verifier "$W/v" "${VARGS[@]}" "${HOOKS[@]}" --ear-key-keep 1 || { fail "verifier restarts"; finish; exit 1; }
sleep 1.1
jwks "$W/jwks3"
check_eq "past --ear-key-keep the old key leaves the set" "$new_kid" \
	"$(jq -r '[.keys[].kid] | join(" ")' "$W/jwks3")"

# --- stale ---------------------------------------------------------------------------------------
sa round "$W/a-a" --append "$APP1" --interval 1
check_eq "a round reporting a 1 s interval" 200 "$R_STATUS"
ear a "$W/stale.jwt" >/dev/null
check_eq "its result stands for interval x stale-intervals (3 s)" 3 \
	"$("$CTL" ear verify "$W/stale.jwt" --jwks "$W/jwks3" --json | jq '.exp - .iat')"
check_eq "with --max-age 0 (no limit) it is accepted while fresh" 0 \
	"$("$CTL" ear verify "$W/stale.jwt" --jwks "$W/jwks3" --max-age 0 >/dev/null; echo $?)"
sleep 4
check_eq "once the agent went silent past it: attestctl refuses it" 1 \
	"$("$CTL" ear verify "$W/stale.jwt" --jwks "$W/jwks3" 2>"$W/stale.err"; echo $?)"
check "saying it expired" grep -q 'expired' "$W/stale.err"
check_eq "PyJWT refuses it too" ExpiredSignatureError "$(pyjwt "$W/stale.jwt" "$W/jwks3")"

# --- retired -------------------------------------------------------------------------------------
check_eq "a retired agent has no result: 409" "200 409" \
	"$(code -X DELETE "$URL/v1/agents/a") $(ear a "$W/x")"
finish
