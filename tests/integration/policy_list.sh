#!/usr/bin/env bash
# The fleet's policies as a list, and deleting one no agent uses, against the real verifier with
# software agents (tests/tools/softagent), on SQLite and on PostgreSQL: GET /v1/policies and
# `attestctl policy list` name every policy with its newest version, who wrote it and how many
# agents use it (amendments are not policies of the list); DELETE /v1/policies/NAME and
# `attestctl policy delete` remove an unused one with its history, and refuse one in use and the
# default with a clear error, nothing changed. A policy written again after its deletion goes on
# from the version it had (a (name, version) never names two texts). Agents listed by the state
# they are shown in and by policy (GET /v1/agents?state=S&policy=P, attestctl agents --state
# --policy).
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
BASE=$W
put() {
	curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$BASE/token")" -X PUT \
		--data "$2" -o "$W/put.json" -w '%{http_code}' "$URL/v1/policies/$1"
}
code() { # code METHOD PATH [BODY]: "STATUS error-code"
	curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$BASE/token")" -X "$1" \
		${3:+--data "$3"} -o "$W/ans.json" -w '%{http_code}' "$URL$2"
	printf ' %s' "$(jq -r '.error.code // "-"' "$W/ans.json")"
}
list() { op /v1/policies | jq -r '[.policies[] | "\(.name):\(.version):\(.agents)"] | join(" ")'; }
P2="{\"version\": 1, \"digests\": {\"/usr/bin/app2\": [\"sha256:$D2\"]}, \"violations\": \"fail\"}"

# suite NAME [VERIFIER-ARGS...]: every check against one verifier and its store.
suite() {
	local name=$1
	shift
	W=$BASE/$name
	mkdir -p "$W" && cp "$BASE/token" "$W/token" # op() reads $W/token
	start_verifier "$W/v" "${VARGS[@]}" "$@" || { fail "$name: verifier starts"; return 1; }
	for id in a b; do agent "$id" "$BASE/ekca" || return 1; done
	check_eq "$name: GET /v1/policies: the default, version 1, used by both agents" \
		"default:1:2" "$(list)"
	put measured "$P2" >/dev/null
	put measured "$P2 " >/dev/null
	put spare "$P2" >/dev/null
	ctl policy assign b measured >/dev/null
	check_eq "$name: three policies by name, newest versions, agents using each" \
		"default:1:1 measured:2:1 spare:1:0" "$(list)"
	check_eq "$name: agents by policy: measured b, default a" "b|a" \
		"$(op '/v1/agents?policy=measured' | jq -r '[.agents[].agent_id] | join(" ")')|$(op '/v1/agents?policy=default' | jq -r '[.agents[].agent_id] | join(" ")')"
	check_eq "$name: agents by state: active a, rejudging b (its policy changed)" "a|b" \
		"$(op '/v1/agents?state=active' | jq -r '[.agents[].agent_id] | join(" ")')|$(op '/v1/agents?state=rejudging&policy=measured' | jq -r '[.agents[].agent_id] | join(" ")')"
	check_eq "$name: attestctl agents --state rejudging --policy measured" "b" \
		"$(ctl agents --state rejudging --policy measured | awk 'NR > 1 { print $1 }' | paste -sd ' ')"
	check_eq "$name: no agent in a state: an empty list" "0" \
		"$(op '/v1/agents?state=retired' | jq '.agents | length')"
	check_eq "$name: a state that is none: 400 bad_request" "400 bad_request" \
		"$(code GET '/v1/agents?state=trusted')"
	sa round "$W/a-a" --append "/usr/bin/tool:$(printf '77%.0s' {1..32})"
	ctl approve "$(op '/v1/violations?agent=a&state=open' | jq -r '.violations[0].id')" >/dev/null
	check_eq "$name: an agent's amendment is no policy of the list" \
		"default:1:1 measured:2:1 spare:1:0" "$(list)"
	ctl policy list >"$W/list.txt"
	check_eq "$name: attestctl policy list: one line per policy" \
		"default 1 1|measured 2 1|spare 1 0" \
		"$(awk 'NR > 1 { print $1, $2, $3 }' "$W/list.txt" | paste -sd '|')"
	check "$name: with who wrote the newest version" grep -qE '^measured .*operator' "$W/list.txt"

	check_eq "$name: deleting a policy an agent uses: 409 policy_in_use" "409 policy_in_use" \
		"$(code DELETE /v1/policies/measured)"
	check_eq "$name: deleting the default: 409 policy_in_use" "409 policy_in_use" \
		"$(code DELETE /v1/policies/default)"
	check_eq "$name: deleting a policy that does not exist: 404 unknown_policy" \
		"404 unknown_policy" "$(code DELETE /v1/policies/nosuch)"
	check_eq "$name: an amendment is not deleted as a policy (agent/a: 404)" "404 1" \
		"$(code DELETE /v1/policies/agent%2Fa | cut -d' ' -f1) $(op /v1/agents/a/amendment | jq .version)"
	check_eq "$name: none of that changed anything" "default:1:1 measured:2:1 spare:1:0" "$(list)"
	check_eq "$name: attestctl policy delete spare" "policy spare deleted with its history" \
		"$(ctl policy delete spare)"
	check_eq "$name: spare is gone, with its versions" "default:1:1 measured:2:1 404" \
		"$(list) $(code GET /v1/policies/spare/versions/1 | cut -d' ' -f1)"
	check_eq "$name: a deleted policy is not assigned: 404 unknown_policy, b keeps measured" \
		"404 unknown_policy measured" \
		"$(code PUT /v1/agents/b/policy '{"policy": "spare"}') $(op /v1/agents/b | jq -r .policy)"
	check_fails "$name: attestctl policy delete measured (in use) fails" ctl policy delete measured
	ctl policy assign b default >/dev/null
	check "$name: once b is assigned another, measured can go" ctl policy delete measured
	check_eq "$name: the default remains" "default:1:2" "$(list)"
	check_eq "$name: spare written again goes on from version 1: version 2" "200 2" \
		"$(put spare "$P2") $(jq .version "$W/put.json")"
	trusted "$name: a is still judged (its amendment kept)" a
	stop_pid "$VPID"
}

suite sqlite
if start_pg "$BASE/pg"; then
	pg_sql postgres -c "CREATE DATABASE attest" >/dev/null || fail "a PostgreSQL database"
	suite postgresql --store "$PG_URI/attest"
else
	skip "PostgreSQL is not installed: the checks on PostgreSQL"
fi
finish
