#!/usr/bin/env bash
# The passport model: attestd --ear-file writes the verifier's signed EAR of each verdict, so
# local services show it to relying parties without asking the verifier. Real verifier, attestd
# as a daemon (and --once), a TCP swtpm and a synthetic IMA list whose growth PCR 10 follows:
#   the file appears after the first verdict, mode 0644, and verifies (attestctl ear verify and
#   PyJWT) as affirming, naming this agent and the verdict the verifier stored
#   a file the policy does not list: the next file says contraindicated, executables 33
#   the file is replaced, never half written: every read in between verifies
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

IMAGEN=$B/tools/imagen
CTL=$B/attestctl
PY=/usr/bin/python3
need_cmds swtpm swtpm_setup tpm2_pcrextend curl jq
need_built "$IMAGEN" "$CTL" "$B/attestd" "$B/verifier"
$PY -c 'import jwt, cryptography' 2>/dev/null ||
	{ fail "python3-jwt is not installed for $PY (make deps)"; finish; exit 1; }

W=$T_TMP
swtpm_with_ek_ca "$W" || { finish; exit 1; }
list() { "$IMAGEN" --entries "$1" --template ima-ng --hash sha256 --zero-boot-pcrs --seed 11 \
	--out "$W/list$1" --tpm2-extend-script "$W/ext$1" >/dev/null; }
list 40
list 41
"$CTL" policy-learn "$W/list40" --out "$W/policy.json" 2>/dev/null
# grow DIR N: DIR/ima becomes the first N entries and the TPM's PCR 10 follows (attestd paused).
APID=
grow() {
	local have i
	have=$(cat "$1/count" 2>/dev/null || echo 0)
	if [[ -n $APID ]] && ! agent_between_rounds "$APID" "$ALOG"; then
		echo "grow: attestd never finished a round" >&2
		return 1
	fi
	cp "$W/list$2" "$1/ima"
	for ((i = have + 1; i <= $2; i++)); do
		# shellcheck disable=SC2046 # one PCR:alg=digest argument per word
		tpm2_pcrextend $(sed -n "${i}p" "$W/ext$2") >/dev/null
	done
	echo "$2" >"$1/count"
	[[ -z $APID ]] || kill -CONT "$APID"
}

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/token"
check "verifier starts" start_verifier "$W/verifier" --ek-ca "$W/ek-ca.pem" \
	--policy "$W/policy.json" --operator-token-file "$W/token" || { finish; exit 1; }
curl -sS --cacert "$CA" "$URL/v1/jwks" >"$W/jwks"
verify() { "$CTL" ear verify "$1" --jwks "$W/jwks" --json 2>"$W/verify.err"; }
pyjwt() {
	$PY - "$1" "$W/jwks" <<'EOF'
import json, sys, jwt
token = open(sys.argv[1]).read().strip()
keys = {k["kid"]: k for k in json.load(open(sys.argv[2]))["keys"]}
try:
    key = keys[jwt.get_unverified_header(token)["kid"]]
    claims = jwt.decode(token, jwt.algorithms.ECAlgorithm.from_jwk(json.dumps(key)),
                        algorithms=["ES256"], options={"require": ["iat", "exp"]})
except (jwt.exceptions.PyJWTError, KeyError) as e:
    print(type(e).__name__); sys.exit(1)
print(claims["submods"]["tpm-ima"]["ear.status"])
EOF
}
# verdicts_at_least N: the agent has N verdicts or more.
verdicts_at_least() { (($(op /v1/agents/host-1/verdicts | jq '(.verdicts // []) | length') >= $1)); }
# wait_verdicts N SECONDS: until the agent has N verdicts.
wait_verdicts() { wait_until "$2" verdicts_at_least "$1"; }

mkdir -p "$W/a1"
grow "$W/a1" 40
start_agent host-1 "$W/a1" --ima-list "$W/a1/ima" --interval 3 --ear-file "$W/passport/ear.jwt"
mkdir -p "$W/passport"
check "host-1 enrolled and judged" wait_verdicts 1 60
for ((i = 0; i < 50; i++)); do [[ -s $W/passport/ear.jwt ]] && break; sleep 0.1; done
check_eq "the passport file is there, mode 0644" 644 "$(stat -c %a "$W/passport/ear.jwt" 2>&1)"
# One copy, read at once by both verifiers (it stands 9 s: interval 3 s x stale-intervals 3).
cp "$W/passport/ear.jwt" "$W/p1.jwt"
verify "$W/p1.jwt" >"$W/p1.claims"
py1=$(pyjwt "$W/p1.jwt")
check_eq "it verifies: affirming, this agent" "affirming host-1" \
	"$(jq -r '.submods["tpm-ima"] | "\(."ear.status") \(."attest.agent-id")"' "$W/p1.claims")"
check_eq "PyJWT verifies it" affirming "$py1"
check_eq "it stands for the interval x stale-intervals (3 s x 3)" 9 "$(jq '.exp - .iat' "$W/p1.claims")"
check "naming a verdict the verifier stored" grep -qx \
	"$(jq '.submods["tpm-ima"]["attest.verdict-id"]' "$W/p1.claims")" \
	<(op '/v1/agents/host-1/verdicts?limit=100' | jq '.verdicts[].id')

# Every read while attestd replaces it every 3 s is a whole, valid token.
bad=0
for ((i = 0; i < 30; i++)); do
	cp "$W/passport/ear.jwt" "$W/read.jwt"
	r=$(pyjwt "$W/read.jwt")
	[[ $r == affirming ]] || { bad=$((bad + 1)); echo "   read $i: $r" >&2; }
	sleep 0.1
done
check_eq "30 reads while it is replaced: all verify" 0 "$bad"

grow "$W/a1" 41
for ((i = 0; i < 150; i++)); do
	cp "$W/passport/ear.jwt" "$W/p2.jwt"
	[[ $(verify "$W/p2.jwt" | jq -r '.submods["tpm-ima"]["ear.status"]') == contraindicated ]] && break
	sleep 0.1
done
check_eq "a file the policy does not list: the passport says contraindicated, executables 33" \
	"contraindicated 33 not_in_allowlist" \
	"$(verify "$W/p2.jwt" | jq -r '.submods["tpm-ima"] | "\(."ear.status") \(."ear.trustworthiness-vector".executables) \(."attest.reasons"[0])"')"
check_eq "PyJWT reads the same" contraindicated "$(pyjwt "$W/p2.jwt")"
stop_pid "$APID"
APID=
check_fails "attestd logged no failure to write it" grep -q 'cannot write the attestation result' "$ALOG"

finish
