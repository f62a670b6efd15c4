#!/usr/bin/env bash
# The operator web page (/ui/) in a real browser: Debian's chromium driven by chromedriver over
# the W3C WebDriver HTTP protocol with curl + jq (tests/lib/webdriver.bash). The verifier holds
# real agents (swtpm, `attestd --once`, as in attest_flow.sh): two trusted, one untrusted with
# violations whose paths carry HTML and a control character, plus 1,000
# enrolled-but-not-activated agents for paging (bench/loadgen, each with a software EK of its
# own: one TPM is one agent).
# Checks: serving (types, CSP, nosniff, fixed names), the token prompt, the fleet, filtering and
# paging, the agent timeline, the violations queue showing paths as text, approving a violation
# in the page for the one agent (preselected) and for its policy (chosen), the agent's own
# approvals and both histories, a rollback in the page (all seen through the API), and
# screenshots under $BUILD/ui/. Issue 16: the fleet row's last reasons and last seen; a stale
# agent shown stale; a policy's versions with who, when and what changed; a Keylime policy as the
# verifier enforces it (translated excludes, boot_aggregate values not as a path); for a
# digest_mismatch, the digests the policy lists beside the one measured.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/webdriver.bash"

IMAGEN=$B/tools/imagen
LOADGEN=$B/bench/loadgen
ATTESTCTL=$B/attestctl
ATTESTD=$B/attestd
VERIFIER=$B/verifier
# shellcheck disable=SC2034 # shot (tests/lib/webdriver.bash) writes there
SHOTS=$TOP/${BUILD:-build}/ui
need_cmds swtpm swtpm_setup tpm2_pcrextend tpm2_createek curl jq python3 base64
wd_usable || { finish; exit; }
need_built "$IMAGEN" "$LOADGEN" "$ATTESTCTL" "$ATTESTD" "$VERIFIER"

W=$T_TMP
# IMA never records a space (it writes '_'), so the policy refuses to learn EVIL: approving it
# fails with a reason the page must show; SCRIPT is approvable.
EVIL='/usr/bin/<img src=x onerror=alert(1)>'
SCRIPT='/opt/<script>alert(2)</script>'
CTRL_SHOWN='/tmp/red\x1b[31mtext'

# --- a TPM per agent (one TPM is one agent), a policy, a verifier ---------------------------
swtpm_ca_init "$W/ca"
"$IMAGEN" --entries 40 --template ima-ng --hash sha256 --zero-boot-pcrs --seed 7 \
	--out "$W/list40" --tpm2-extend-script "$W/ext40" >/dev/null
declare -A TCTI_OF=()
for a in fleet-a fleet-b fleet-c; do
	swtpm_manufacture "$W/tpm-$a" "$W/ca" || { fail "swtpm_setup for $a"; finish; exit 1; }
	start_swtpm "$W/tpm-$a" || { fail "swtpm start for $a"; finish; exit 1; }
	TCTI_OF[$a]=$TCTI
	# shellcheck disable=SC2046 # one PCR:alg=digest argument per word
	tpm2_pcrextend $(cat "$W/ext40") >/dev/null
done
cat "$W/ca/ca/issuercert.pem" "$W/ca/ca/swtpm-localca-rootca-cert.pem" >"$W/ek-ca.pem"
mkdir -p "$W/lg" && "$LOADGEN" --make-ca "$W/lg" || { fail "loadgen --make-ca"; finish; exit 1; }
"$ATTESTCTL" policy-learn "$W/list40" --out "$W/policy.json" 2>/dev/null
check "policy learned from the clean list" test -s "$W/policy.json"

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/token"
TOKEN=$(cat "$W/token")
check "verifier starts" start_verifier "$W/verifier" --ek-ca "$W/ek-ca.pem" \
	--ek-ca "$W/lg/ek-ca.pem" --policy "$W/policy.json" --operator-token-file "$W/token" --threads 4 \
	--stale-intervals 2
op() { curl -sS --cacert "$CA" -H "Authorization: Bearer $TOKEN" "$URL$1"; }
# Each agent reports an hour between rounds: none goes stale during the test (2 intervals)
# but the one that reports a second (stale, below).
attest() {
	"$ATTESTD" --config /dev/null --once --verifier "$URL" --ca "$CA" --agent-id "$1" --tcti "${TCTI_OF[$1]}" \
		--ima-list "$2" --event-log none --state-dir "$W/state-$1" --interval "${3:-3600}" \
		>"$W/out-$1" 2>>"$W/attestd.log"
}

# --- agents: three real ones, then the list grows by two files outside the policy ----------
for a in fleet-a fleet-b fleet-c; do
	attest "$a" "$W/list40"
	check_eq "$a: enrolled and trusted" 0 $?
done
python3 - "$W/list40" "$W/list-evil" "$W/ext-evil" "$EVIL" "$SCRIPT" <<'PY'
import hashlib, struct, sys
src, out, ext, evil, script = sys.argv[1:]
paths = [evil.encode(), b'/tmp/red\x1b[31mtext', script.encode(), b'/bin/bad\xff\xfeutf8']
data = open(src, 'rb').read()
lines = []
for i, p in enumerate(paths):
    d = b'sha256:\0' + hashlib.sha256(b'not in the policy %d' % i).digest()
    n = p + b'\0'
    tdata = struct.pack('<I', len(d)) + d + struct.pack('<I', len(n)) + n
    th = hashlib.sha1(tdata).digest()
    data += struct.pack('<I', 10) + th + struct.pack('<I', 6) + b'ima-ng' + struct.pack('<I', len(tdata)) + tdata
    lines.append('10:sha1=%s,sha256=%s' % (th.hex(), hashlib.sha256(tdata).hexdigest()))
open(out, 'wb').write(data)
open(ext, 'w').write('\n'.join(lines) + '\n')
PY
# shellcheck disable=SC2046 # one PCR:alg=digest argument per word
TPM2TOOLS_TCTI=${TCTI_OF[fleet-b]} tpm2_pcrextend $(cat "$W/ext-evil") >/dev/null
attest fleet-b "$W/list-evil"
check_eq "fleet-b: untrusted after four unknown files (exit 1)" 1 $?
check_eq "four open violations through the API" 4 "$(op '/v1/violations?state=open' | jq '.violations | length')"
EVIL_ID=$(op '/v1/violations?state=open' | jq -r --arg p "$EVIL" '.violations[] | select(.path == $p) | .id')
SCRIPT_ID=$(op '/v1/violations?state=open' | jq -r --arg p "$SCRIPT" '.violations[] | select(.path == $p) | .id')
check "the HTML paths are stored as they are" test -n "$EVIL_ID" -a -n "$SCRIPT_ID"

# 1,000 more agents, enrolled and never activated (pending), each with an EK of its own (a
# software P-256 EK certified by loadgen's CA: one EK may hold only a few pending enrollments).
"$LOADGEN" --url "$URL" --ca "$CA" --ek-ca-dir "$W/lg" --agents 1000 --threads 4 \
	--id-prefix load --pending 1 >"$W/loadgen.out" 2>"$W/loadgen.err"
check_eq "1000 pending agents enrolled" "0 1000" "$? $(op /v1/agents | jq '[.agents[] | select(.state == "pending")] | length')"
check_eq "the API lists 1003 agents" 1003 "$(op /v1/agents | jq '.agents | length')"

# --- serving ---------------------------------------------------------------------------------
hdr() { curl -sS --cacert "$CA" -o /dev/null -D - "$URL$1" | tr -d '\r'; }
h=$(hdr /ui/)
check "GET /ui/: 200 text/html" grep -qi '^content-type: text/html' <<<"$h"
check "GET /ui/: Content-Security-Policy default-src 'self'" \
	grep -qi "^content-security-policy: default-src 'self'" <<<"$h"
check "GET /ui/: X-Content-Type-Options nosniff" grep -qi '^x-content-type-options: nosniff' <<<"$h"
check "GET /ui/app.js: text/javascript" grep -qi '^content-type: text/javascript' <<<"$(hdr /ui/app.js)"
check "GET /ui/style.css: text/css" grep -qi '^content-type: text/css' <<<"$(hdr /ui/style.css)"
check_eq "app.js served byte for byte" "$(sha256sum <"$TOP/verifier/http/ui/app.js")" \
	"$(curl -sS --cacert "$CA" "$URL/ui/app.js" | sha256sum)"
codes=
for p in /ui/index.html /ui/../ui/app.js /ui/%2e%2e/v1/agents /ui/verifier.db /ui/app.js/x; do
	codes+="$(curl -sS --cacert "$CA" --path-as-is -o /dev/null -w '%{http_code}' "$URL$p") "
done
check_eq "only the three fixed names are served" "404 404 404 404 404 " "$codes"
check_eq "the data still needs the token" 401 \
	"$(curl -sS --cacert "$CA" -o /dev/null -w '%{http_code}' "$URL/v1/agents")"

# --- the browser (tests/lib/webdriver.bash) ------------------------------------------------
wd_start "$W" || { finish; exit 1; }

wd POST "$S/url" "$(jq -cn --arg u "$URL/ui/" '{url: $u}')" >/dev/null
check_eq "page title" "attest verifier" "$(wd GET "$S/title" | jq -r .value)"
check "without a token the page asks for one" wait_count '#login:not([hidden])' 1

type_in '#token' 'not-the-token'
click '#login-submit'
check "a wrong token is refused and asked again" wait_text '#login-error' 'refused'
type_in '#token' "$TOKEN"
click '#login-submit'
check "with the token: the fleet shows the first page of 50 agents" wait_count '#fleet-rows tr' 50
check_eq "auto-refresh is on by default" true "$(js "return document.getElementById('auto-refresh').checked")"
click '#auto-refresh' # off while the checks below click the page; on again further down
check "the page says which time zone its times are in" wait_text '#tz' '^times in .+ \(UTC.+[0-9]{2}:[0-9]{2}\)$'
check_eq "token kept in sessionStorage only" "$TOKEN|" \
	"$(js "return sessionStorage.getItem('attest.operator_token') + '|' + (localStorage.getItem('attest.operator_token') || '')")"
check_eq "summary counts every agent" "1003 agents" "$(text '[data-stat=total]')"
check_eq "summary: 2 trusted" "2 trusted" "$(text '[data-stat=trusted]')"
check_eq "summary: 1 untrusted" "1 untrusted" "$(text '[data-stat=untrusted]')"
check_eq "summary: 4 open violations" "4 open violations" "$(text '[data-stat=open]')"
check_eq "pager range" "1–50 of 1003" "$(text '#fleet-pager .range')"
check_eq "problems first: fleet-b on top" "fleet-b" "$(text '#fleet-rows tr:first-child td.agent')"
check_eq "fleet-b: last verdict untrusted" "untrusted" "$(text '#fleet-rows tr[data-agent=fleet-b] td.verdict')"
check_eq "fleet-b: 4 open violations" "4" "$(text '#fleet-rows tr[data-agent=fleet-b] td.open')"
check_eq "fleet-b: boot 1" "1" "$(text '#fleet-rows tr[data-agent=fleet-b] td.boot')"
check "fleet-b: verdict time shown" wait_text '#fleet-rows tr[data-agent=fleet-b] td.when' 'ago'
REASONS_B=$(op /v1/agents | jq -r '.agents[] | select(.agent_id == "fleet-b") | .last_reasons | join(" ")')
check "the API's fleet list carries fleet-b's last reasons ($REASONS_B)" grep -qw not_in_allowlist <<<"$REASONS_B"
check_eq "fleet-b's row shows its last verdict's reasons" "$REASONS_B" \
	"$(text '#fleet-rows tr[data-agent=fleet-b] td.reasons')"
check_eq "with what each means as its tooltip" "File not in the policy" \
	"$(js "return [...document.querySelectorAll('#fleet-rows tr[data-agent=fleet-b] td.reasons .code')].filter((e) => e.textContent === 'not_in_allowlist').map((e) => e.title).join('|')")"
check "fleet-b: last seen shown" wait_text '#fleet-rows tr[data-agent=fleet-b] td.seen' ' ago$'
check_eq "fleet-b: last seen says the interval it is held to" "expected every 3600 s" \
	"$(js "return document.querySelector('#fleet-rows tr[data-agent=fleet-b] td.seen').title")"
click '#fleet-pager .next'
check_eq "next page" "51–100 of 1003" "$(text '#fleet-pager .range')"
check_eq "next page holds 50 rows" 50 "$(count '#fleet-rows tr')"
check "fleet screenshot written (first page of 1003)" shot fleet-all
type_in '#fleet-filter' 'fleet-'
check "filter: the three real agents" wait_count '#fleet-rows tr' 3
check_eq "filter resets to page 1" "1–3 of 3" "$(text '#fleet-pager .range')"
check_eq "fleet-a: trusted" "trusted" "$(text '#fleet-rows tr[data-agent=fleet-a] td.verdict')"
check_eq "fleet-a: a trusted verdict has no reasons" "" "$(text '#fleet-rows tr[data-agent=fleet-a] td.reasons')"
check_eq "fleet-c: active" "active" "$(text '#fleet-rows tr[data-agent=fleet-c] td.state')"
check "fleet screenshot written (the three real agents)" shot fleet

# the violations queue
click '#nav-violations'
check "queue shows the four open violations" wait_count '#viol-list tr[data-violation]' 4
check_eq "nav shows the open count" "4" "$(text '#open-count')"
check_eq "the HTML path is shown as text, exactly" "$EVIL" \
	"$(text "#viol-list tr[data-violation='$EVIL_ID'] td.path .text")"
check_eq "the script path too" "$SCRIPT" "$(text "#viol-list tr[data-violation='$SCRIPT_ID'] td.path .text")"
check_eq "no element was made from them" 0 "$(count 'img, #viol-list script, #viol-list b')"
check_eq "no alert ran" "no such alert" "$(wd GET "$S/alert/text" | jq -r '.value.error // "alert open"')"
CTRL_ID=$(op '/v1/violations?state=open' | jq -r '.violations[] | select(.path | startswith("/tmp/red")) | .id')
BAD_ID=$(op '/v1/violations?state=open' | jq -r '.violations[] | select(.path | startswith("/bin/bad")) | .id')
check_eq "the control character is shown escaped" "$CTRL_SHOWN" \
	"$(text "#viol-list tr[data-violation='$CTRL_ID'] td.path .text")"
check_eq "bytes that are not UTF-8 are shown as the verifier escaped them" '/bin/bad\xff\xfeutf8' \
	"$(text "#viol-list tr[data-violation='$BAD_ID'] td.path .text")"
check_eq "and marked as escaped" '(not UTF-8)' \
	"$(text "#viol-list tr[data-violation='$BAD_ID'] td.path .hint")"
check_eq "reason shown" "not_in_allowlist" "$(text "#viol-list tr[data-violation='$EVIL_ID'] td.reason")"
check "violations screenshot written" shot violations

# approve in the page: two clicks (approve, confirm); a refusal is shown, nothing changes
row() { echo "#viol-list tr[data-violation='$1']"; }
click "$(row "$EVIL_ID") button.approve"
check "approve asks for confirmation first" wait_count "$(row "$EVIL_ID") button.confirm.approve" 1
check_eq "nothing approved before the confirmation" 0 \
	"$(op '/v1/violations?state=approved' | jq '.violations | length')"
click "$(row "$EVIL_ID") button.confirm.approve"
check "a path with spaces cannot be learned: the page says why" wait_text '#status' 'not_approvable'
check "the refused row keeps its buttons" wait_count "$(row "$EVIL_ID") button.dismiss" 1
click "$(row "$EVIL_ID") button.dismiss"
click "$(row "$EVIL_ID") button.confirm.dismiss"
check "dismissed in the page" wait_text "$(row "$EVIL_ID") td.actions" '^dismissed$'
check_eq "the API sees it dismissed" "$EVIL_ID" \
	"$(op '/v1/violations?state=dismissed' | jq -r '[.violations[].id] | join(",")')"
# scoped approval: "this agent only" is preselected; widening the shared policy is chosen
click "$(row "$SCRIPT_ID") button.approve"
check "approve asks for the scope" wait_count "$(row "$SCRIPT_ID") input[type=radio]" 2
check_eq "this agent only is preselected" "agent" \
	"$(js "return document.querySelector(\"$(row "$SCRIPT_ID") input[type=radio]:checked\").value")"
check "the scopes are named" wait_text "$(row "$SCRIPT_ID") td.actions" 'this agent \(fleet-b\) only.*its policy'
click "$(row "$SCRIPT_ID") button.confirm.approve"
check "the row says approved for this agent only, and where it went" \
	wait_text "$(row "$SCRIPT_ID") td.actions" '^approved → this agent only \(amendment v1 over policy default\)$'
check_eq "the API sees it approved (GET /v1/violations?state=approved)" "$SCRIPT_ID" \
	"$(op '/v1/violations?state=approved' | jq -r '[.violations[].id] | join(",")')"
in_policy() { op /v1/policies/default | jq -e --arg p "$1" '.digests[$p] | length == 1' >/dev/null; }
in_amendment() { op "/v1/agents/$1/amendment" | jq -e --arg p "$2" '.amendment.digests[$p] | length == 1' >/dev/null; }
check "the approved path is in fleet-b's amendment" in_amendment fleet-b "$SCRIPT"
check_fails "and not in the shared default policy" in_policy "$SCRIPT"
check_fails "nor in another agent's amendment" in_amendment fleet-a "$SCRIPT"
check_fails "the refused one is nowhere" in_amendment fleet-b "$EVIL"
click "$(row "$CTRL_ID") button.approve"
wait_count "$(row "$CTRL_ID") input[value=policy]" 1 >/dev/null
click "$(row "$CTRL_ID") input[value=policy]"
click "$(row "$CTRL_ID") button.confirm.approve"
check "scope policy: the row names the policy, its new version and how many agents use it" \
	wait_text "$(row "$CTRL_ID") td.actions" '^approved → policy default v2 \(1003 agents\)$'
check "that path is in the default policy now" in_policy "$(printf '/tmp/red\x1b[31mtext')"
check_eq "the non-UTF-8 one stays open" "$BAD_ID" \
	"$(op '/v1/violations?state=open' | jq -r '[.violations[].id] | join(",")')"
check "nav count follows" wait_text '#open-count' '^1$'
js "document.getElementById('viol-state').value = 'approved'; document.getElementById('viol-state').dispatchEvent(new Event('change')); return 1" >/dev/null
check "approved list: two rows" wait_count '#viol-list tr[data-violation]' 2
check_eq "approved list: no buttons" 0 "$(count '#viol-list button')"
check "approvals screenshot written" shot approvals

# one agent: timeline, open violations, policy
wd POST "$S/url" "$(jq -cn --arg u "$URL/ui/#/agent/fleet-b" '{url: $u}')" >/dev/null
check "agent view: two verdicts in the timeline" wait_count '#timeline > li' 2
check_eq "agent id" "fleet-b" "$(text '#agent-id')"
check "newest first: untrusted with not_in_allowlist" \
	wait_text '#timeline > li:first-child' 'untrusted[[:space:]].*not_in_allowlist'
check_eq "oldest: trusted, no reasons" "0" "$(count '#timeline > li:last-child .reasons li')"
check_eq "agent's open violations: the remaining one" 1 "$(count '#agent-violations tr[data-violation]')"
check_eq "policy named" "default" "$(text '#policy-name')"
check_eq "with the agents that use it" "(used by 1003 agents)" "$(text '#policy-agents')"
npaths=$(op /v1/policies/default | jq '.digests | length')
check "policy: the page counts its $npaths paths (the approved one included)" \
	wait_text '#policy .pager .range' " of $npaths\$"
type_in '#policy input[type=search]' 'red'
check "policy: filtering paths finds the approved one" wait_count '#policy table.policy tbody tr' 1
check_eq "policy: shown as text" "$CTRL_SHOWN" "$(text '#policy table.policy tbody td.path')"
check_eq "the agent's own approvals: the script path" "$SCRIPT" \
	"$(text '#amendment table tbody td.path .text')"
check_eq "amendment history: v1 current, v0 to withdraw it" "v1 v0" \
	"$(js "return [...document.querySelectorAll('#amendment-history tr[data-version] td.version')].map((e) => e.textContent).join(' ')")"
check_eq "policy history: v2 by the approval, v1 from the command line" "2 1" \
	"$(js "return [...document.querySelectorAll('#policy-history tr[data-version]')].map((e) => e.dataset.version).join(' ')")"
check "who made v2" wait_text '#policy-history tr[data-version="2"] td.actor' 'approve violation'
check "agent screenshot written" shot agent
# roll the shared policy back to v1 in the page: two clicks, then a new version 3
click '#policy-history tr[data-version="1"] button.rollback'
check "rollback asks first" wait_count '#policy-history tr[data-version="1"] button.confirm.rollback' 1
check_eq "nothing rolled back before the confirmation" 2 \
	"$(op /v1/policies/default/versions | jq '.versions[0].version')"
click '#policy-history tr[data-version="1"] button.confirm.rollback'
check "the page says what the rollback did" wait_text '#status' 'rolled back to v1: now v3'
check_eq "the API: version 3, by the rollback" "3 operator (rollback to version 1)" \
	"$(op /v1/policies/default/versions | jq -r '.versions[0] | "\(.version) \(.actor)"')"
check_fails "the path approved into the policy is gone again" in_policy "$(printf '/tmp/red\x1b[31mtext')"
check "fleet-b's own approval is untouched" in_amendment fleet-b "$SCRIPT"
check "the history shows v3 current" wait_text '#policy-history tr[data-version="3"] td.actions' '^current$'
check "history screenshot written" shot history
check "an agent without a firmware event log: the boot section says so" \
	wait_text '#agent-boot' 'none: the agent sends no firmware event log'

# the policy's own view (issue 16): the policy as enforced, and its versions, each with who made
# it, when, and what changed from the one before (from the stored texts of the history API)
click '#policy-name a'
check "policy view: default's three versions" wait_count '#pv-versions tr[data-version]' 3
check_eq "policy view: its name" default "$(text '#pv-name')"
check "v3: made by the rollback" wait_text '#pv-versions tr[data-version="3"] td.actor' 'rollback to version 1'
check "v2: made by the approval" wait_text '#pv-versions tr[data-version="2"] td.actor' 'approve violation'
check "v3: what changed: the approved path is gone again" \
	wait_text '#pv-versions tr[data-version="3"] td.changes' '^−1 path \(/tmp/red\\x1b\[31mtext\)$'
check_eq "v2: what changed: the approved path" '+1 path (/tmp/red\x1b[31mtext)' \
	"$(text '#pv-versions tr[data-version="2"] td.changes')"
n1=$(op /v1/policies/default/versions/1 | jq '.digests | length')
check_eq "v1: the first version, with its paths" "first version: $n1 paths" \
	"$(text '#pv-versions tr[data-version="1"] td.changes')"
check "policy view: the paths it enforces" wait_text '#pv-policy .pager .range' " of $n1\$"
check "policy view screenshot written" shot policy-versions

# a Keylime runtime policy, shown as the verifier enforces it: its excludes beside what they
# became, its boot_aggregate values as the boot_aggregate list, not as a path
BA1=$(printf 'aa%.0s' {1..20}) BA2=$(printf 'bb%.0s' {1..32}) KD=$(printf 'cd%.0s' {1..32})
jq -n --arg ba1 "$BA1" --arg ba2 "$BA2" --arg kd "$KD" '{meta: {version: 5}, release: 0,
	digests: {"/usr/bin/keylime tool": [$kd], boot_aggregate: [$ba1, $ba2]},
	excludes: ["/tmp/.*", "^/var/log/(?:app|web)\\d+"], keyrings: {},
	ima: {ignored_keyrings: [], log_hash_alg: "sha1", dm_policy: null}, "ima-buf": {},
	"verification-keys": ""}' >"$W/keylime.json"
check_eq "a Keylime policy stored as \"kl\"" 200 "$(curl -sS --cacert "$CA" -H "Authorization: Bearer $TOKEN" \
	-o /dev/null -w '%{http_code}' -X PUT --data-binary @"$W/keylime.json" "$URL/v1/policies/kl")"
enf=$(op /v1/policies/kl/enforced)
check_eq "the API: kl as enforced: Keylime, two translated excludes, two boot_aggregate values, one path" \
	"keylime 2 2 /usr/bin/keylime_tool" \
	"$(jq -r '"\(.format) \(.policy.excludes | length) \(.policy.boot_aggregate | length) \(.policy.digests | keys | join(","))"' <<<"$enf")"
check_eq "the API: an unknown policy's enforced form: 404 unknown_policy" "404 unknown_policy" \
	"$(curl -sS --cacert "$CA" -H "Authorization: Bearer $TOKEN" -o "$W/nosuch.json" -w '%{http_code}' \
		"$URL/v1/policies/nosuch/enforced") $(jq -r .error.code "$W/nosuch.json")"
check_eq "the API: the enforced form needs the token" 401 \
	"$(curl -sS --cacert "$CA" -o /dev/null -w '%{http_code}' "$URL/v1/policies/kl/enforced")"
wd POST "$S/url" "$(jq -cn --arg u "$URL/ui/#/policy/kl" '{url: $u}')" >/dev/null
check "kl: the page says it was a Keylime policy" wait_text '#pv-policy p.keylime' 'Keylime runtime policy'
check_eq "kl: each exclude as written" '/tmp/.* ^/var/log/(?:app|web)\d+' \
	"$(js "return [...document.querySelectorAll('#pv-policy table.excludes td.source')].map((e) => e.textContent).join(' ')")"
check_eq "kl: beside the pattern the verifier enforces" "$(jq -r '.policy.excludes | join(" ")' <<<"$enf")" \
	"$(js "return [...document.querySelectorAll('#pv-policy table.excludes td.enforced')].map((e) => e.textContent).join(' ')")"
check_fails "kl: the translation is not the text as written" \
	test "$(jq -r '.policy.excludes[1]' <<<"$enf")" = '^/var/log/(?:app|web)\d+'
check "kl: boot_aggregate: its two values" wait_text '#pv-policy .boot-aggregate' '^2 values: sha1:aaaa.* sha256:bbbb'
check_eq "kl: one path (the space as IMA records it), boot_aggregate is not one" "/usr/bin/keylime_tool" \
	"$(js "return [...document.querySelectorAll('#pv-policy table.policy tbody td.path')].map((e) => e.textContent).join(' ')")"
check "keylime policy screenshot written" shot policy-keylime

# a digest_mismatch: a file the policy lists, with other content; the page shows the digests
# the agent's policy lists for that path (the API's .expected, looked up in the policy the
# verifier judges the agent by) beside the one measured
MPATH=$(jq -r '.digests | keys[0]' "$W/policy.json")
python3 - "$W/list40" "$W/list-mm" "$W/ext-mm" "$MPATH" <<'PY'
import hashlib, struct, sys
src, out, ext, path = sys.argv[1:]
d = b'sha256:\0' + hashlib.sha256(b'other content').digest()
n = path.encode() + b'\0'
tdata = struct.pack('<I', len(d)) + d + struct.pack('<I', len(n)) + n
th = hashlib.sha1(tdata).digest()
entry = struct.pack('<I', 10) + th + struct.pack('<I', 6) + b'ima-ng' + struct.pack('<I', len(tdata)) + tdata
open(out, 'wb').write(open(src, 'rb').read() + entry)
open(ext, 'w').write('10:sha1=%s,sha256=%s\n' % (th.hex(), hashlib.sha256(tdata).hexdigest()))
PY
if swtpm_manufacture "$W/tpm-mm" "$W/ca" && start_swtpm "$W/tpm-mm"; then
	TCTI_OF[mm]=$TCTI
	# shellcheck disable=SC2046 # one PCR:alg=digest argument per word
	tpm2_pcrextend $(cat "$W/ext40") $(cat "$W/ext-mm") >/dev/null
	attest mm "$W/list-mm"
	check_eq "mm: untrusted, one file with content the policy does not list (exit 1)" 1 $?
	want=$(op /v1/policies/default/enforced | jq -r --arg p "$MPATH" '"default \(.version) \(.policy.digests[$p] | join(","))"')
	check_eq "the API: the violation's expected digests are its policy's for $MPATH" "digest_mismatch $want" \
		"$(op '/v1/violations?state=open&agent=mm' | jq -r '.violations[0] | "\(.reason) \(.expected.policy) \(.expected.policy_version) \(.expected.digests | join(","))"')"
	wd POST "$S/url" "$(jq -cn --arg u "$URL/ui/#/agent/mm" '{url: $u}')" >/dev/null
	check "mm: its open violation" wait_count '#agent-violations tr[data-violation]' 1
	check_eq "the digest measured" "sha256:$(printf 'other content' | sha256sum | cut -c1-12)…" \
		"$(text '#agent-violations td.digest .measured')"
	exp=$(op /v1/policies/default/enforced | jq -r --arg p "$MPATH" '.policy.digests[$p][0]')
	check_eq "under it, the digest the policy expects, and from which version" \
		"expected ${exp:0:19}… (policy default v$(op /v1/policies/default/enforced | jq .version))" \
		"$(text '#agent-violations td.digest .expected')"
	check "digest_mismatch screenshot written" shot digest-mismatch
else
	fail "a TPM for the agent with a digest_mismatch"
fi

# an agent whose TPM booted as a recorded OVMF guest did, sending that firmware event log
BOOTLOG=$TOP/tests/data/eventlog/guest-ovmf.bin
if swtpm_manufacture "$W/tpm-boot" "$W/ca" && start_swtpm "$W/tpm-boot" && tpm_follow_eventlog "$BOOTLOG"; then
	"$ATTESTCTL" eventlog --replay "$BOOTLOG" >"$W/boot.pcrs"
	"$IMAGEN" --entries 40 --template ima-ng --hash sha256 --boot-pcrs "$W/boot.pcrs" --seed 7 \
		--out "$W/boot40" --tpm2-extend-script "$W/bootext" >/dev/null
	# shellcheck disable=SC2046 # one PCR:alg=digest argument per word
	tpm2_pcrextend $(cat "$W/bootext") >/dev/null
	"$ATTESTD" --config /dev/null --once --verifier "$URL" --ca "$CA" --agent-id boot-1 --tcti "$TCTI" --ima-list "$W/boot40" \
		--interval 3600 \
		--event-log "$BOOTLOG" --cmdline "$TOP/tests/data/eventlog/guest-ovmf.cmdline" \
		--state-dir "$W/state-boot-1" >"$W/out-boot-1" 2>>"$W/attestd.log"
	check_eq "the agent with a boot log: trusted" 0 $?
	wd POST "$S/url" "$(jq -cn --arg u "$URL/ui/#/agent/boot-1" '{url: $u}')" >/dev/null
	check "boot: the kernel's digest (PCR 4) and the file it came from" \
		wait_text '#agent-boot' 'kernel[[:space:]]+sha256:834c9fac477e.* from "kernel"'
	check "boot: the command line, verified against PCR 9" \
		wait_text '#agent-boot' 'ima_policy=tcb verified against PCR 9'
	check "boot: firmware and Secure Boot" wait_text '#agent-boot' 'UEFI, 2 firmware volumes.*Secure Boot[[:space:]]+off'
	check "boot screenshot written" shot boot
else
	fail "a second TPM following the recorded OVMF log"
fi
# an agent's lifecycle in the page (issue 16): retire and reset, each confirmed by a second click
wd POST "$S/url" "$(jq -cn --arg u "$URL/ui/#/agent/fleet-c" '{url: $u}')" >/dev/null
check "lifecycle: fleet-c's buttons" wait_count '#agent-lifecycle[data-agent=fleet-c] button.retire' 1
check "lifecycle: fleet-c's page loaded whole (nothing moves any more)" wait_text '#status' 'agent loaded'
check "lifecycle: the agent's history lists its activation" \
	wait_count '#agent-history tr[data-event=activated]' 1
e=$(elem '#agent-lifecycle button.retire')
r=$(wd POST "$S/element/$e/click" '{}')
check_eq "retire: the click lands on the button" null "$(jq -c '.value' <<<"$r")"
check "retire asks first" wait_count '#agent-lifecycle button.confirm.retire' 1
# fleet-c is active; its state may read "rejudging" (its policy changed above and it has sent
# no round since): what must not have happened yet is the retirement.
check_eq "nothing retired before the confirmation" "not retired" \
	"$(op /v1/agents/fleet-c | jq -r 'if .state != "retired" and .retired_at == 0 then "not retired" else .state end')"
click '#agent-lifecycle button.confirm.retire'
check "the page says it retired fleet-c" wait_text '#status' 'fleet-c: retire done'
check_eq "the API: retired" retired "$(op /v1/agents/fleet-c | jq -r .state)"
check "the history shows the retirement, by the operator" \
	wait_text '#agent-history tr[data-event=retired] td.actor' '^operator$'
check_eq "the state fact says retired" 0 "$(count '#agent-lifecycle button.retire')"
click '#agent-lifecycle button.reset'
check "reset asks first" wait_count '#agent-lifecycle button.confirm.reset' 1
click '#agent-lifecycle button.confirm.reset'
check "the page says it reset fleet-c" wait_text '#status' 'fleet-c: reset done'
check "reset: the page says its next enrollment may bring a new TPM" \
	wait_text '#agent-lifecycle p.reset' 'new EK and AK'
check_eq "the API: reset" true "$(op /v1/agents/fleet-c | jq '.reset_at > 0')"
check "lifecycle screenshot written" shot lifecycle

# identical consecutive verdicts are one line with their count (issue 16); judged by other
# versions they are not identical: fleet-a's first verdict was judged by default v1, the policy
# changed since (the approval, the rollback), so its next two are a line of their own
for i in 1 2; do
	attest fleet-a "$W/list40"
	check_eq "fleet-a attests again ($i): trusted" "0 verdict trusted" "$? $(grep -m1 -o '^verdict [a-z]*' "$W/out-fleet-a")"
done
wd POST "$S/url" "$(jq -cn --arg u "$URL/ui/#/agent/fleet-a" '{url: $u}')" >/dev/null
groups=$(op /v1/agents/fleet-a/verdicts | jq -c 'reduce .verdicts[] as $x ([];
	if length > 0 and .[-1].j == $x.judged_by then .[-1].n += 1 else . + [{j: $x.judged_by, n: 1}] end)
	| map(.n)')
check_eq "the API: fleet-a's trusted verdicts, by the versions that judged them (newest first)" "[2,1]" "$groups"
check "timeline: one line for each" wait_count '#timeline > li' 2
check_eq "the newest line says how many" "× 2" "$(text '#timeline > li:first-child .count')"
check_eq "and by which versions" "; judged by $(op /v1/agents/fleet-a/verdicts | jq -r '.verdicts[0].judged_by | "policy \(.policy) v\(.policy_version)"')" \
	"$(text '#timeline > li:first-child .judged')"

# a stale agent (issue 16): it reported a round every second and then fell silent; past 2 of
# its intervals the fleet shows it stale, never with a green verdict
if swtpm_manufacture "$W/tpm-quiet" "$W/ca" && start_swtpm "$W/tpm-quiet"; then
	TCTI_OF[quiet]=$TCTI
	# shellcheck disable=SC2046 # one PCR:alg=digest argument per word
	tpm2_pcrextend $(cat "$W/ext40") >/dev/null
	attest quiet "$W/list40" 1
	check_eq "quiet: trusted, reporting 1 s" "0 1" "$? $(op /v1/agents/quiet | jq .interval)"
	stale_at=$(op /v1/agents/quiet | jq .stale_after)
	while (($(date +%s) <= stale_at)); do sleep 0.2; done
	check_eq "the API: quiet is stale" stale "$(op /v1/agents/quiet | jq -r .state)"
	wd POST "$S/url" "$(jq -cn --arg u "$URL/ui/#/fleet" '{url: $u}')" >/dev/null
	check "fleet: loaded" wait_text '#status' 'agents, loaded'
	# the text filter typed above ("fleet-") stays in the page: cleared, then "stale" chosen
	js "const f = document.getElementById('fleet-filter'); f.value = ''; f.dispatchEvent(new Event('input')); const s = document.getElementById('fleet-show'); s.value = 'stale'; s.dispatchEvent(new Event('change')); return 1" >/dev/null
	check "fleet: \"stale\" shows quiet alone" wait_count '#fleet-rows tr[data-agent]' 1
	check_eq "that row is quiet's" quiet "$(text '#fleet-rows tr td.agent')"
	check_eq "its state is stale" stale "$(text '#fleet-rows tr[data-agent=quiet] td.state')"
	check_eq "its verdict: stale, not green (was trusted)" "stale was trusted" \
		"$(text '#fleet-rows tr[data-agent=quiet] td.verdict')"
	check_eq "no green badge in its row" 0 "$(count '#fleet-rows tr[data-agent=quiet] .badge.ok')"
	check_eq "the summary counts it" "1 stale" "$(text '[data-stat=stale]')"
	check "stale screenshot written" shot stale
	js "const f = document.getElementById('fleet-filter'); f.value = 'fleet-'; f.dispatchEvent(new Event('input')); const s = document.getElementById('fleet-show'); s.value = 'all'; s.dispatchEvent(new Event('change')); return 1" >/dev/null
else
	fail "a TPM for the agent that goes stale"
fi

# auto-refresh: the fleet shows a change made elsewhere without a click
wd POST "$S/url" "$(jq -cn --arg u "$URL/ui/#/fleet" '{url: $u}')" >/dev/null
check "fleet: fleet-a active" wait_text '#fleet-rows tr[data-agent=fleet-a] td.state' '^active$'
click '#auto-refresh'
check_eq "auto-refresh on again" true "$(js "return document.getElementById('auto-refresh').checked")"
check_eq "fleet-a retired through the API" 200 "$(curl -sS --cacert "$CA" -H "Authorization: Bearer $TOKEN" \
	-o /dev/null -w '%{http_code}' -X DELETE "$URL/v1/agents/fleet-a")"
for ((i = 0; i < 150; i++)); do
	[[ $(text '#fleet-rows tr[data-agent=fleet-a] td.state') == retired ]] && break
	sleep 0.1
done
check_eq "the page shows it within its refresh period, without a click" retired \
	"$(text '#fleet-rows tr[data-agent=fleet-a] td.state')"
click '#auto-refresh'

# A signed version in the history: the default policy's text signed anew (this verifier has no
# policy signers, so the page shows it signed, unchecked).
SIGNED_V=$(
	op /v1/policies/default >"$W/default.json" &&
		openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$W/signer.pem" 2>/dev/null &&
		"$ATTESTCTL" policy sign --key "$W/signer.pem" "$W/default.json" --out "$W/default.dsse" 2>/dev/null &&
		curl -sS --cacert "$CA" -H "Authorization: Bearer $TOKEN" -X PUT --data-binary "@$W/default.dsse" \
			"$URL/v1/policies/default" | jq -r .version
)
wd POST "$S/url" "$(jq -cn --arg u "$URL/ui/#/agent/fleet-b" '{url: $u}')" >/dev/null
check "policy history: version $SIGNED_V shown signed (unchecked)" \
	wait_text "#policy-history tr[data-version=\"$SIGNED_V\"] td.actor .signer" 'signed \(unchecked\)'

# The browser's console: no script error, no CSP refusal (expected: the wrong token's
# 401, the refused approval's 409, the missing favicon).
wd POST "$S/se/log" '{"type":"browser"}' >"$W/console.json"
check "the browser console was read" jq -e '.value | type == "array"' "$W/console.json" >/dev/null
check_eq "no errors in the browser console" "" \
	"$(jq -r '.value[] | select(.level == "SEVERE") | .message | select(test("401|/approve - .* 409|favicon") | not)' "$W/console.json")"
click '#logout'
check "after forgetting the token the page asks again" wait_count '#login:not([hidden])' 1
check_eq "token removed" "null" "$(js "return String(sessionStorage.getItem('attest.operator_token'))")"

wd_end
finish
