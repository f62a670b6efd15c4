#!/usr/bin/env bash
# One file decided for many agents in one command, against the real verifier with software
# agents, on SQLite and on PostgreSQL: `attestctl approve|dismiss --path P --digest D` lists and
# counts every open violation of that file (on the agents of --policy, or of --agent), decides
# nothing without --yes, and with --yes decides each for its own agent and counts what it did.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
BASE=$W
D7=$(printf '77%.0s' {1..32})
TOOL=/usr/bin/tool:$D7
open_of() { op "/v1/violations?state=open${1:+&agent=$1}" | jq '.violations | length'; }

suite() {
	local name=$1 rc out
	shift
	W=$BASE/$name
	mkdir -p "$W" && cp "$BASE/token" "$W/token" # op() reads $W/token
	start_verifier "$W/v" "${VARGS[@]}" "$@" || { fail "$name: verifier starts"; return 1; }
	for id in a b c; do agent "$id" "$BASE/ekca" || return 1; done
	curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$BASE/token")" -X PUT -o /dev/null \
		--data-binary @"$BASE/policy.json" "$URL/v1/policies/measured"
	ctl policy assign b measured >/dev/null && ctl policy assign c measured >/dev/null
	for id in a b c; do sa round "$W/a-$id" --append "$TOOL"; done
	check_eq "$name: the tool ran on a, b and c: three open violations" "3" "$(open_of)"

	out=$(ctl approve --path /usr/bin/tool --digest "sha256:$D7" --policy measured)
	rc=$?
	check_eq "$name: counted first: two on the agents of policy measured, exit 1" \
		"1|2 open violations of /usr/bin/tool sha256:$D7 on agents of policy measured" \
		"$rc|$(grep 'open violations of' <<<"$out")"
	check_eq "$name: listed by agent" "b c" \
		"$(awk '$1 ~ /^[0-9]+$/ && !/open violations of/ { print $2 }' <<<"$out" | sort | paste -sd ' ')"
	check_eq "$name: nothing decided without --yes" "3" "$(open_of)"
	out=$(ctl approve --path /usr/bin/tool --digest "sha256:$D7" --policy measured --yes)
	rc=$?
	check_eq "$name: with --yes: 2 of 2 approved, exit 0" "0|2 of 2 decided (approve), 0 refused" \
		"$rc|$(tail -n 1 <<<"$out")"
	check_eq "$name: each for its own agent (amendments), a's still open" "1 1 1 0 0" \
		"$(open_of a) $(op /v1/agents/b/amendment | jq .version) $(op /v1/agents/c/amendment | jq .version) $(open_of b) $(open_of c)"
	trusted "$name: b's next round is trusted" b --append "$TOOL"
	sa round "$W/a-a" --append "$TOOL"
	check_eq "$name: a still runs it unapproved" "untrusted not_in_allowlist" \
		"$(verdict) $(reasons)"
	check_eq "$name: dismiss --agent a --yes: 1 of 1" "1 of 1 decided (dismiss), 0 refused|0" \
		"$(ctl dismiss --path /usr/bin/tool --digest "sha256:$D7" --agent a --yes | tail -n 1)|$(open_of)"
	out=$(ctl dismiss --path /usr/bin/tool --digest "sha256:$D7")
	check_eq "$name: none left: 0 counted, exit 0" \
		"0|0 open violations of /usr/bin/tool sha256:$D7" "$?|$out"
	check_fails "$name: --scope policy is one approval, not a bulk one (usage)" \
		ctl approve --path /usr/bin/tool --digest "sha256:$D7" --scope policy --yes
	check_fails "$name: --agent and --policy together (usage)" \
		ctl approve --path /usr/bin/tool --digest "sha256:$D7" --agent a --policy measured
	check_fails "$name: --path without --digest (usage)" ctl dismiss --path /usr/bin/tool --yes
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
