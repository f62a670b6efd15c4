# shellcheck shell=bash
# Software agents on a real verifier, for the attack matrix (tests/attacks) and the integration
# tests that play agents with tests/tools/softagent: the fixture (an EK CA, an operator token in
# $W/token for tests/lib.sh's op and ctl, a policy of two programs, VARGS for start_verifier),
# the agents (agent, sa), and checks that a round is refused with its code, untrusted with its
# reason, or trusted, and changes no stored state beyond the one recorded verdict. Source after
# tests/lib.sh.

SA=$B/tools/softagent
VERIFIER=$B/verifier
# shellcheck disable=SC2034 # used by the scripts that source this file
CTL=$B/attestctl
need_cmds curl jq xxd
need_built "$SA" "$VERIFIER"

W=$T_TMP
# A sanitizer build (make SAN=1) holds freed memory in quarantine: its RSS says nothing.
SANITIZED=0
grep -qa __asan_init "$VERIFIER" && SANITIZED=1
# check_rss DESC KIB LIMIT_KIB: KIB < LIMIT_KIB, skipped in a sanitizer build.
check_rss() {
	if ((SANITIZED)); then
		skip "$1 (a sanitizer build: RSS is not measured)"
	else
		check "$1" test "$2" -lt "$3"
	fi
}
D1=$(printf '11%.0s' {1..32})
D2=$(printf '22%.0s' {1..32})
APP1=/usr/bin/app1:$D1
# shellcheck disable=SC2034 # used by the scripts that source this file
APP2=/usr/bin/app2:$D2
"$SA" mkca "$W/ekca" >/dev/null || { fail "softagent mkca"; finish; exit 1; }
head -c 32 /dev/urandom | xxd -p -c 64 >"$W/token"
cat >"$W/policy.json" <<EOF
{"version": 1, "digests": {"/usr/bin/app1": ["sha256:$D1"], "/usr/bin/app2": ["sha256:$D2"]},
 "violations": "fail"}
EOF

# The verifier of every attack: `start_verifier "$W/NAME" "${VARGS[@]}" [ARGS...]` (tests/lib.sh)
# starts one with its own state directory and sets URL, CA, VPID.
# shellcheck disable=SC2034 # used by the scripts that source this file
VARGS=(--ek-ca "$W/ekca/ca.pem" --policy "$W/policy.json" --operator-token-file "$W/token")


# state ID: what an attack must not change: boot, expected next entry, number of verdicts.
state() {
	local a v
	a=$(op "/v1/agents/$1") || return 1
	v=$(op "/v1/agents/$1/verdicts?limit=1000" | jq '.verdicts | length')
	printf 'boot=%s next=%s verdicts=%s' "$(jq -r .boot_number <<<"$a")" \
		"$(jq -r .next_entry <<<"$a")" "$v"
}
# state_plus_one STATE: the same state with one more verdict recorded.
state_plus_one() { local v=${1##*verdicts=}; printf '%sverdicts=%s' "${1%verdicts=*}" $((v + 1)); }

# sa ARGS...: runs softagent; R_STATUS and R_BODY from its last line, R_RC its exit status.
sa() {
	local out line
	out=$("$SA" "$@" 2>>"$W/softagent.err")
	# shellcheck disable=SC2034 # for the scripts that source this file
	R_RC=$?
	line=$(tail -n 1 <<<"$out")
	R_STATUS=$(cut -d' ' -f2 <<<"$line")
	R_BODY=$(cut -d' ' -f3- <<<"$line")
}
err_code() { jq -r '.error.code // empty' <<<"$R_BODY" 2>/dev/null; }
verdict() { jq -r '.verdict // empty' <<<"$R_BODY" 2>/dev/null; }
reasons() { jq -r '[.reasons[].code] | join(",")' <<<"$R_BODY" 2>/dev/null; }

# agent ID [CADIR]: a new software TPM, enrolled and activated; one trusted round.
agent() {
	local ca=${2:-$W/ekca}
	"$SA" init "$W/a-$1" --ca-key "$ca/ca-key.pem" --ca-cert "$ca/ca.pem" ||
		{ fail "$1: softagent init"; return 1; }
	sa enroll "$W/a-$1" --verifier "$URL" --cacert "$CA" --id "$1"
	[[ $R_STATUS == 200 ]] || { fail "$1: enroll and activate ($R_STATUS $R_BODY)"; return 1; }
	sa round "$W/a-$1" --append "$APP1"
	[[ $(verdict) == trusted ]] || { fail "$1: first round trusted ($R_STATUS $R_BODY)"; return 1; }
}

# refused DESC ID STATUS CODE ROUND-ARGS...: answered STATUS with error CODE, nothing stored.
refused() {
	local d=$1 id=$2 st=$3 code=$4 before
	shift 4
	before=$(state "$id")
	sa round "$W/a-$id" "$@"
	check_eq "$d: $st $code" "$st $code" "$R_STATUS $(err_code)"
	check_eq "$d: no state change" "$before" "$(state "$id")"
}

# untrusted DESC ID REASON ROUND-ARGS...: an untrusted verdict naming REASON first; the boot
# state and expected offset unchanged, exactly one more verdict.
untrusted() {
	local d=$1 id=$2 reason=$3 before
	shift 3
	before=$(state "$id")
	sa round "$W/a-$id" "$@"
	check_eq "$d: untrusted ($reason)" "200 untrusted $reason" \
		"$R_STATUS $(verdict) $(reasons | cut -d, -f1)"
	check_eq "$d: only the verdict recorded" "$(state_plus_one "$before")" "$(state "$id")"
}

# trusted DESC ID [ROUND-ARGS...]: an honest round is trusted (the attack left nothing behind).
trusted() {
	local d=$1 id=$2
	shift 2
	sa round "$W/a-$id" "$@"
	check_eq "$d" "200 trusted" "$R_STATUS $(verdict)"
}

# judged DESC ID REASON N ROUND-ARGS...: entries the quoted PCR 10 covers but the policy refuses:
# untrusted naming REASON, the verifier moves past the N entries (they are in the PCR for good)
# and records one verdict and the violation.
judged() {
	local d=$1 id=$2 reason=$3 n=$4 before next
	shift 4
	before=$(state "$id")
	sa round "$W/a-$id" "$@"
	check_eq "$d: untrusted ($reason)" "200 untrusted $reason" \
		"$R_STATUS $(verdict) $(reasons | cut -d, -f1)"
	next=${before#*next=}
	next=${next%% *}
	check_eq "$d: $n entries judged, one verdict recorded" \
		"$(state_plus_one "${before/next=$next/next=$((next + n))}")" "$(state "$id")"
	check_eq "$d: the violation is open for review" "open $reason" \
		"$(op "/v1/violations?agent=$id" | jq -r '.violations[0] | "\(.state) \(.reason)"')"
}
