#!/usr/bin/env bash
# The operator page's fleet-wide operations in a real browser (tests/lib/webdriver.bash, as in
# ui_browser.sh), against the real verifier with software agents (tests/tools/softagent): each
# agent's labels in the fleet and the fleet filtered by one (a label clicked, or typed); a policy
# assigned to every agent with a label, the count of agents it changes shown and nothing changed
# before the confirmation; the agents it changed shown "rejudging" (never green) until their next
# round, with the versions that judged them and those that judge them now; an agent's labels set
# and removed in its view; the registrations (admission) listed, one added with its EK digest,
# policy and labels, a refused one changing nothing, and one unregistered after a confirmation.
# The named policies listed with the agents each judges, an unused one deleted after a
# confirmation, the fleet filtered by a policy. One file approved for every agent it is open on
# from the queue: the count and the agents shown, nothing decided before the confirmation, all after. Everything is checked through the API too; screenshots under $BUILD/ui/.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"
source "$(dirname "$0")/../lib/webdriver.bash"

# shellcheck disable=SC2034 # shot (tests/lib/webdriver.bash) writes there
SHOTS=$TOP/${BUILD:-build}/ui
wd_usable || { finish; exit; }
TOKEN=$(cat "$W/token")
api() { curl -sS --cacert "$CA" -H "Authorization: Bearer $TOKEN" "$@"; }
labels() { op "/v1/agents/$1" | jq -c '.labels'; }
policies() { op /v1/agents | jq -r '[.agents[] | "\(.agent_id):\(.policy)"] | join(" ")'; }
cat >"$W/strict.json" <<EOT
{"version": 1, "digests": {"/usr/bin/app2": ["sha256:$D2"]}, "violations": "fail"}
EOT

# Rounds an hour apart: no agent goes stale while the page is checked (stale is shown before rejudging).
start_verifier "$W/v" "${VARGS[@]}" --default-interval 3600 || { fail "verifier starts"; finish; exit 1; }
for id in a b c; do agent "$id" || { finish; exit 1; }; done
check_eq "policy strict stored" 200 "$(api -o /dev/null -w '%{http_code}' -X PUT \
	--data-binary @"$W/strict.json" "$URL/v1/policies/strict")"
setl() { api -o /dev/null -w '%{http_code}' -X PUT --data "$2" "$URL/v1/agents/$1/labels"; }
check_eq "labels set through the API" "200 200 200" \
	"$(setl a '{"set":{"site":"lab1","role":"db"}}') $(setl b '{"set":{"site":"lab1"}}') $(setl c '{"set":{"site":"lab2"}}')"

wd_start "$W" || { finish; exit 1; }
go "$URL/ui/"
check "without a token the page asks for one" wait_count '#login:not([hidden])' 1
type_in '#token' "$TOKEN"
click '#login-submit'
check "the fleet: three agents" wait_count '#fleet-rows tr[data-agent]' 3
click '#auto-refresh' # off: the checks below must not race a redraw

# --- labels in the fleet, and the fleet filtered by one --------------------------------------
check_eq "a's row shows its labels, sorted by key" "role=db site=lab1" \
	"$(text '#fleet-rows tr[data-agent=a] td.labels')"
check_eq "c's row shows its one label" "site=lab2" "$(text '#fleet-rows tr[data-agent=c] td.labels')"
type_in '#fleet-label' 'site=lab1'
check "the label filter site=lab1: a and b" wait_count '#fleet-rows tr[data-agent]' 2
check_eq "those two rows are a and b" "a b" \
	"$(js "return [...document.querySelectorAll('#fleet-rows tr[data-agent]')].map((e) => e.dataset.agent).sort().join(' ')")"
js "const f = document.getElementById('fleet-label'); f.value = 'role'; f.dispatchEvent(new Event('input')); return 1" >/dev/null
check "a key alone (role): the agents with any value of it, a" wait_count '#fleet-rows tr[data-agent]' 1
js "const f = document.getElementById('fleet-label'); f.value = ''; f.dispatchEvent(new Event('input')); return 1" >/dev/null
check "no label filter: three again" wait_count '#fleet-rows tr[data-agent]' 3
click '#fleet-rows tr[data-agent=c] td.labels button.label'
check "a label clicked filters by it: c alone" wait_count '#fleet-rows tr[data-agent]' 1
check_eq "the filter field says which" "site=lab2" "$(js "return document.getElementById('fleet-label').value")"
check "labels screenshot written" shot fleet-labels

# --- a policy assigned by label: counted first, applied on the second click -------------------
js "const f = document.getElementById('fleet-label'); f.value = 'site=lab1'; f.dispatchEvent(new Event('input')); return 1" >/dev/null
check "filtered by a label, the page offers to assign a policy to it" \
	wait_text '#fleet-assign' 'Assign to every agent labelled site=lab1 the policy'
check "the named policies to choose from" wait_count '#fleet-assign select option[value=strict]' 1
js "const s = document.querySelector('#fleet-assign select'); s.value = 'strict'; return 1" >/dev/null
click '#fleet-assign button.assign'
check "before it is applied: the count of agents it changes, and which" \
	wait_text '#fleet-assign .ask.count' '^2 agents labelled site=lab1 would be assigned policy strict \(2 with the label; the others use it already\): a, b\.$'
check_eq "it asks for the confirmation" 1 "$(count '#fleet-assign button.confirm.assign')"
check_eq "nothing assigned before the confirmation" "a:default b:default c:default" "$(policies)"
click '#fleet-assign button.cancel'
check "cancel: back to the choice" wait_count '#fleet-assign button.assign:not(.confirm)' 1
check_eq "nothing assigned after cancel" "a:default b:default c:default" "$(policies)"
js "const s = document.querySelector('#fleet-assign select'); s.value = 'strict'; return 1" >/dev/null
click '#fleet-assign button.assign'
check "asked again" wait_count '#fleet-assign button.confirm.assign' 1
check "assign screenshot written" shot assign-by-label
click '#fleet-assign button.confirm.assign'
check "the page says what it did" wait_text '#status' 'policy strict assigned to 2 agents labelled site=lab1'
check_eq "the API: a and b use strict, c the default" "a:strict b:strict c:default" "$(policies)"

# --- rejudging: a and b's last verdicts were made under default; never shown green ------------
check_eq "the API: a and b rejudging, c active" "a:rejudging b:rejudging c:active" \
	"$(op /v1/agents | jq -r '[.agents[] | "\(.agent_id):\(.state)"] | join(" ")')"
js "const f = document.getElementById('fleet-label'); f.value = ''; f.dispatchEvent(new Event('input')); return 1" >/dev/null
check "fleet: a's state rejudging" wait_text '#fleet-rows tr[data-agent=a] td.state' '^rejudging$'
check_eq "a's verdict: rejudging, was trusted under the versions that no longer judge it" \
	"rejudging was trusted under policy default v1" "$(text '#fleet-rows tr[data-agent=a] td.verdict')"
check_eq "no green badge in a's or b's row" 0 \
	"$(count '#fleet-rows tr[data-agent=a] .badge.ok, #fleet-rows tr[data-agent=b] .badge.ok')"
check_eq "c, judged by what judges it now, stays green" 1 "$(count '#fleet-rows tr[data-agent=c] .badge.ok')"
check_eq "the summary counts them" "2 rejudging" "$(text '[data-stat=rejudging]')"
check_eq "and does not count them trusted" "1 trusted" "$(text '[data-stat=trusted]')"
js "const s = document.getElementById('fleet-show'); s.value = 'rejudging'; s.dispatchEvent(new Event('change')); return 1" >/dev/null
check "\"rejudging\" shows a and b" wait_count '#fleet-rows tr[data-agent]' 2
js "const s = document.getElementById('fleet-show'); s.value = 'all'; s.dispatchEvent(new Event('change')); return 1" >/dev/null
check "rejudging screenshot written" shot rejudging

# --- the named policies: each with its agents; an unused one deleted after a confirmation -----
check_eq "policy spare stored (no agent uses it)" 200 "$(api -o /dev/null -w '%{http_code}' -X PUT \
	--data-binary @"$W/strict.json" "$URL/v1/policies/spare")"
click '#nav-policies'
check "policies: three rows" wait_count '#pol-list tr[data-policy]' 3
check_eq "each with the agents it judges, as the API counts them" \
	"$(op /v1/policies | jq -r '[.policies[] | "\(.name):\(.agents)"] | join(" ")')" \
	"$(js "return [...document.querySelectorAll('#pol-list tr[data-policy]')].map((e) => e.dataset.policy + ':' + e.querySelector('td.agents').textContent).join(' ')")"
check_eq "strict: 2 agents, in use, no delete" "2 in use 0" \
	"$(text '#pol-list tr[data-policy=strict] td.agents') $(text '#pol-list tr[data-policy=strict] td.actions') $(count '#pol-list tr[data-policy=strict] button')"
check_eq "default is never deleted" 0 "$(count '#pol-list tr[data-policy=default] button')"
click '#pol-list tr[data-policy=spare] button.delete'
check "delete asks first" wait_count '#pol-list tr[data-policy=spare] button.confirm.delete' 1
check_eq "nothing deleted before the confirmation" 200 \
	"$(api -o /dev/null -w '%{http_code}' "$URL/v1/policies/spare")"
check "policies screenshot written" shot policies
click '#pol-list tr[data-policy=spare] button.confirm.delete'
check "the page says it deleted spare" wait_text '#status' '^policy spare deleted$'
check_eq "the API: spare is gone" 404 "$(api -o /dev/null -w '%{http_code}' "$URL/v1/policies/spare")"
check_eq "the page: two rows left" 2 "$(count '#pol-list tr[data-policy]')"
click '#pol-list tr[data-policy=strict] td.agents a'
check "strict's agent count opens the fleet filtered by it: a and b" wait_count '#fleet-rows tr[data-agent]' 2
check_eq "the fleet's policy filter says strict" strict "$(js "return document.getElementById('fleet-policy').value")"
check_eq "those rows are a and b" "a b" \
	"$(js "return [...document.querySelectorAll('#fleet-rows tr[data-agent]')].map((e) => e.dataset.agent).sort().join(' ')")"
go "$URL/ui/#/agent/a"
check "agent a: its last verdict shown rejudging" wait_text '#agent-facts' 'rejudging'
check_eq "agent a: no green badge" 0 "$(count '#agent-facts .badge.ok')"
check "agent a: judged by default v1, now strict v1" \
	wait_text '#agent-facts .judged' '^policy default v1; now policy strict v1: its next round judges its whole boot again$'
sa round "$W/a-a" --append "$APP1"
check_eq "a's next round: judged by strict (app1 is not in it)" "untrusted active" \
	"$(verdict) $(op /v1/agents/a | jq -r .state)"
click '#refresh'
check "agent a after its round: judged by strict v1, not rejudging" wait_text '#agent-facts .judged' '^policy strict v1$'
check_eq "its timeline: each verdict names the versions that judged it, newest first" \
	"; judged by policy strict v1|; judged by policy default v1" \
	"$(js "return [...document.querySelectorAll('#timeline > li .judged')].map((e) => e.textContent).join('|')")"
check_eq "the API agrees" "strict 1 default 1" \
	"$(op /v1/agents/a/verdicts | jq -r '[.verdicts[].judged_by | "\(.policy) \(.policy_version)"] | join(" ")')"

# --- an agent's labels set and removed in its view --------------------------------------------
check_eq "agent a: its two labels" "role=db site=lab1" \
	"$(js "return [...document.querySelectorAll('#agent-labels li .label')].map((e) => e.textContent).join(' ')")"
click '#agent-labels li[data-key=role] button.remove'
check "remove: the page shows one label left" wait_count '#agent-labels li[data-key]' 1
check_eq "the API: role removed" '{"site":"lab1"}' "$(labels a)"
type_in '#agent-labels input.label-set' 'rack=r1 site=lab3'
click '#agent-labels button.label-set'
check "set: the page shows rack and site" wait_text '#agent-labels ul.labels' 'rack=r1.*site=lab3'
check_eq "the API: rack set, site changed" '{"rack":"r1","site":"lab3"}' "$(labels a)"
type_in '#agent-labels input.label-set' 'bad key=x'
click '#agent-labels button.label-set'
check "a word that is not KEY=VALUE: the page says so" wait_text '#status' 'KEY=VALUE'
js "document.querySelector('#agent-labels input.label-set').value = ''; return 1" >/dev/null
type_in '#agent-labels input.label-set' 'site=x<y>'
click '#agent-labels button.label-set'
check "a label the verifier refuses: its answer shown" wait_text '#status' '^bad_request: '
check_eq "the API: nothing changed" '{"rack":"r1","site":"lab3"}' "$(labels a)"
check "agent labels screenshot written" shot agent-labels

# --- registrations (admission) --------------------------------------------------------------------
for id in d e f g; do
	"$SA" init "$W/a-$id" --ca-key "$W/ekca/ca-key.pem" --ca-cert "$W/ekca/ca.pem" || fail "softagent init $id"
done
EK_D=$("$SA" ek-sha256 "$W/a-d")
EK_E=$("$SA" ek-sha256 "$W/a-e")
click '#nav-registrations'
check "registrations: none yet" wait_text '#reg-list' 'No agent is registered'
check "the form offers the named policies" wait_count '#reg-policy option[value=strict]' 1
type_in '#reg-id' d
type_in '#reg-ek' "$EK_D"
js "document.getElementById('reg-policy').value = 'strict'; return 1" >/dev/null
type_in '#reg-labels' 'site=lab1 role=web'
click '#reg-add'
check "d registered: its row" wait_count '#reg-list tr[data-agent=d]' 1
check_eq "the API: d, its EK digest, policy and labels" \
	"d $EK_D strict {\"role\":\"web\",\"site\":\"lab1\"} operator" \
	"$(op /v1/registrations | jq -r '.registrations[] | "\(.agent_id) \(.ek_sha256) \(.policy) \(.labels | tojson) \(.actor)"')"
check_eq "its row: the EK, policy, labels, not enrolled yet, by the operator" \
	"public sha256:${EK_D:0:12}… strict role=web site=lab1 not yet operator" \
	"$(js "return [...document.querySelectorAll('#reg-list tr[data-agent=d] td')].slice(1, 6).map((e) => e.textContent).join(' ')")"
type_in '#reg-id' e
type_in '#reg-ek' 'not-hex'
click '#reg-add'
check "a refused registration: the verifier's answer shown" wait_text '#status' '^bad_request: '
check_eq "the API: only d registered" d "$(op /v1/registrations | jq -r '[.registrations[].agent_id] | join(" ")')"
js "document.getElementById('reg-ek').value = ''; return 1" >/dev/null
type_in '#reg-ek' "$EK_E"
click '#reg-add'
check "e registered (default policy, no labels)" wait_count '#reg-list tr[data-agent=e]' 1
check_eq "e's policy is the default" default "$(text '#reg-list tr[data-agent=e] td.policy')"
# by its EK certificate, DER (f) or PEM (g): named by the SHA-256 of the certificate's public key
spki() { openssl x509 -inform der -in "$1" -pubkey -noout | openssl pkey -pubin -outform der | sha256sum | cut -c1-64; }
openssl x509 -inform der -in "$W/a-g/ek.der" -out "$W/g-ek.pem" || fail "g's EK certificate as PEM"
type_in '#reg-id' f
type_in '#reg-ek' "$EK_E"
type_in '#reg-ek-cert' "$W/a-f/ek.der"
click '#reg-add'
check "both the digest and a certificate: the page asks for one" wait_text '#status' 'one of them'
js "document.getElementById('reg-ek').value = ''; return 1" >/dev/null
click '#reg-add'
check "f registered by its DER certificate" wait_count '#reg-list tr[data-agent=f]' 1
type_in '#reg-id' g
type_in '#reg-ek-cert' "$W/g-ek.pem"
click '#reg-add'
check "g registered by its PEM certificate" wait_count '#reg-list tr[data-agent=g]' 1
check_eq "the API: f and g by certificate, named by their public keys' SHA-256" \
	"f cert $(spki "$W/a-f/ek.der") g cert $(spki "$W/a-g/ek.der")" \
	"$(op /v1/registrations | jq -r '[.registrations[] | select(.agent_id == "f" or .agent_id == "g") | "\(.agent_id) \(.ek) \(.ek_sha256)"] | join(" ")')"
check_eq "f's row says certificate" "certificate sha256:$(spki "$W/a-f/ek.der" | cut -c1-12)…" \
	"$(text '#reg-list tr[data-agent=f] td.ek')"
sa enroll "$W/a-g" --verifier "$URL" --cacert "$CA" --id g
check_eq "g enrolls with the TPM its certificate names" 200 "$R_STATUS"
sa enroll "$W/a-d" --verifier "$URL" --cacert "$CA" --id d
check_eq "d enrolls with its registration's policy and labels" '200 strict {"role":"web","site":"lab1"}' \
	"$R_STATUS $(op /v1/agents/d | jq -r .policy) $(labels d)"
click '#refresh'
check "d's row: enrolled, linked to its view" wait_text '#reg-list tr[data-agent=d] td.enrolled' '^enrolled$'
check_eq "e's row: not yet" "not yet" "$(text '#reg-list tr[data-agent=e] td.enrolled')"
check_eq "d's id links to the agent" 1 "$(count '#reg-list tr[data-agent=d] td.agent a[href="#/agent/d"]')"
check "registrations screenshot written" shot registrations
click '#reg-list tr[data-agent=e] button.unregister'
check "unregister asks first" wait_count '#reg-list tr[data-agent=e] button.confirm.unregister' 1
check_eq "nothing deleted before the confirmation" "d e f g" \
	"$(op /v1/registrations | jq -r '[.registrations[].agent_id] | join(" ")')"
click '#reg-list tr[data-agent=e] button.confirm.unregister'
check "the page says it deleted e's registration" wait_text '#status' 'registration of e deleted'
check_eq "the API: e unregistered" "d f g" "$(op /v1/registrations | jq -r '[.registrations[].agent_id] | join(" ")')"
check_eq "the page: e's row gone" 0 "$(count '#reg-list tr[data-agent=e]')"

# --- one file decided for every agent: counted and named first, decided on the second click --------
openof() { op '/v1/violations?state=open&limit=100' | jq -r '[.violations[] | select(.path == "/usr/bin/app1") | .agent_id] | sort | join(" ")'; }
sa round "$W/a-b" --append "$APP1"
sa round "$W/a-d" --append "$APP1"
check_eq "the API: app1 open on a, b and d (strict lists app2 only)" "a b d" "$(openof)"
VA=$(op '/v1/violations?state=open&agent=a' | jq -r '[.violations[] | select(.path == "/usr/bin/app1")][0].id')
go "$URL/ui/#/violations"
check "the queue shows a's violation of app1" wait_count "#viol-list tr[data-violation=\"$VA\"]" 1
click "#viol-list tr[data-violation=\"$VA\"] button.bulk"
check "before it is decided: the count of agents and which" \
	wait_text "#viol-list tr[data-violation=\"$VA\"] .bulk-plan .count" '^3 open violations of this file: [abd] \(#[0-9]+\), [abd] \(#[0-9]+\), [abd] \(#[0-9]+\)\.$'
check_eq "it asks for the confirmation, naming the count" "Confirm: approve for 3 agents" \
	"$(text "#viol-list tr[data-violation=\"$VA\"] button.confirm.bulk")"
check_eq "nothing decided before the confirmation" "a b d" "$(openof)"
click "#viol-list tr[data-violation=\"$VA\"] input.only-policy"
check "only agents of its policy (strict): the same three" \
	wait_text "#viol-list tr[data-violation=\"$VA\"] .bulk-plan" '^3 open violations of this file on agents of policy strict: '
check_eq "still nothing decided" "a b d" "$(openof)"
check "bulk review screenshot written" shot bulk-review
click "#viol-list tr[data-violation=\"$VA\"] button.confirm.bulk"
check "the page says how many were decided" wait_text "#viol-list tr[data-violation=\"$VA\"] .result.bulk" '^approve: 3 of 3 decided$'
check_eq "the API: none of them open" "" "$(openof)"
check_eq "the API: all three approved" "approved approved approved" \
	"$(op '/v1/violations?state=approved&limit=100' | jq -r '[.violations[] | select(.path == "/usr/bin/app1") | .state] | join(" ")')"
# --- the page's own rules ---------------------------------------------------------------------
check_eq "no errors in the browser console (but the refusals asked for: 400)" "" \
	"$(console_errors "$W/console.json" '/labels - .* 400|/registrations - .* 400|favicon')"
check_fails "app.js writes no markup" grep -nE '\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write\(' \
	"$TOP/verifier/http/ui/app.js"
wd_end
finish
