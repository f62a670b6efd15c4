#!/usr/bin/env bash
# Retention (verifier(8), RETENTION) on both backends, SQLite and PostgreSQL: software agents
# (bench/loadgen) attest many rounds, and halfway through the default policy loses half its
# files, so that their trust and reasons change. Then:
#   - a verifier with --verdicts-keep K keeps every verdict that changed an agent's trust or
#     reasons (computed here from a copy of the verdicts taken before pruning, not from the
#     store's own mark) and each agent's newest K, and nothing else;
#   - the hourly counters (API and attestctl counters) still count every round;
#   - pruning in the background while agents attest (--prune-interval 1) keeps the rows
#     bounded, with no round failing meanwhile;
#   - violations, policy versions and lifecycle history are never pruned.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

W=$T_TMP
CTL=$B/attestctl LOADGEN=$B/bench/loadgen
KEEP=20 AGENTS=3
need_built "$CTL" "$LOADGEN" "$B/verifier"
command -v sqlite3 >/dev/null || { fail "sqlite3 is needed"; finish; exit 1; }
mkdir -p "$W/lg" && "$LOADGEN" --make-ca "$W/lg" >/dev/null || { fail "loadgen --make-ca"; finish; exit 1; }
head -c 32 /dev/urandom | xxd -p -c 64 >"$W/token"
# Half the files of the loadgen policy: the other half runs outside it.
jq '.digests |= with_entries(select(.key | test("[02468]$")))' "$W/lg/policy.json" >"$W/half.json"


# sql BACKEND QUERY: rows as "a|b|c" lines.
sql() {
	if [[ $1 == sqlite ]]; then sqlite3 -batch "$W/sqlite.db" "$2"
	else pg_sql retention -F '|' -c "$2"; fi
}

# load PREFIX SECONDS: loadgen's agents attest; prints its output (key value lines).
load() {
	"$LOADGEN" --url "$URL" --ca "$CA" --ek-ca-dir "$W/lg" --agents "$AGENTS" --threads 1 \
		--seconds "$2" --id-prefix "$1" --entries-per-round 1 --max-errors 0 2>"$W/lg.err"
}

run_backend() {
	local be=$1 store out changed missing over n rounds_db rounds_api rounds_ctl viol hist pv lpid i
	if [[ $be == sqlite ]]; then
		store=sqlite:$W/sqlite.db
	else
		check "a throwaway PostgreSQL cluster starts" start_pg "$W/pg" || return
		check "a database for the store" pg_sql postgres -c "CREATE DATABASE retention" || return
		store=$PG_URI/retention
	fi
	# No pass after the one at start (an empty store) until the verifier restarts.
	start_verifier "$W/v-$be" --store "$store" --ek-ca "$W/lg/ek-ca.pem" \
		--policy "$W/lg/policy.json" --operator-token-file "$W/token" \
		--verdicts-keep "$KEEP" --prune-interval 86400 --nonce-ttl 600 ||
		{ fail "$be: the verifier starts"; return; }
	# Halfway through the run, half the policy (the same agents go on: one loadgen run).
	load "r$be" 6 >"$W/lg-$be.out" &
	lpid=$!
	track_pid "$lpid"
	for ((i = 0; i < 600; i++)); do
		[[ $(sql "$be" "SELECT COUNT(*) FROM verdicts") -gt $((AGENTS * (KEEP + 20))) ]] && break
		sleep 0.05
	done
	check "$be: half the policy put while agents attest" \
		ctl policy put default "$W/half.json" >/dev/null
	wait "$lpid"
	out=$(cat "$W/lg-$be.out")
	check_eq "$be: loadgen's rounds without errors" 0 "$(awk '$1 == "errors" { print $2 }' <<<"$out")"
	check "$be: some of them untrusted" [ "$(awk '$1 == "untrusted" { print $2 }' <<<"$out")" -gt 0 ]

	# The oracle: from every verdict, those that changed their agent's trust or reasons.
	sql "$be" "SELECT id, agent, trusted, reasons FROM verdicts ORDER BY agent, id" >"$W/all-$be"
	awk -F'|' '$2 != a || $3 != t || $4 != r { print $1 } { a = $2; t = $3; r = $4 }' \
		"$W/all-$be" | sort -n >"$W/changed-$be"
	# and each agent's newest KEEP.
	awk -F'|' '{ print $2, $1 }' "$W/all-$be" | sort -k1,1 -k2,2nr |
		awk -v k="$KEEP" '{ if (++c[$1] <= k) print $2 }' | sort -n >"$W/newest-$be"
	n=$(wc -l <"$W/all-$be")
	changed=$(wc -l <"$W/changed-$be")
	check "$be: many rounds ($n) and more changes than agents ($changed)" \
		[ "$n" -gt $((AGENTS * (KEEP + 10))) -a "$changed" -gt "$AGENTS" ]
	sort -un "$W/changed-$be" "$W/newest-$be" >"$W/expect-$be"
	viol=$(sql "$be" "SELECT COUNT(*) FROM violations")
	hist=$(sql "$be" "SELECT COUNT(*) FROM agent_history")
	pv=$(sql "$be" "SELECT COUNT(*) FROM policies")
	rounds_db=$(sql "$be" "SELECT SUM(rounds) FROM verdict_hours")
	check_eq "$be: the hourly counters count every round" "$n" "$rounds_db"

	# A restart runs a pass at once.
	stop_pid "$VPID"
	start_verifier "$W/v-$be" --store "$store" --ek-ca "$W/lg/ek-ca.pem" \
		--policy "$W/lg/policy.json" --operator-token-file "$W/token" \
		--verdicts-keep "$KEEP" --prune-interval 86400 --nonce-ttl 600 ||
		{ fail "$be: the verifier starts again"; return; }
	for ((i = 0; i < 300; i++)); do
		grep -q "retention: pruned" "$VLOG" && break
		sleep 0.1
	done
	check "$be: the verifier logs its pass" grep -q "retention: pruned" "$VLOG"
	sql "$be" "SELECT id FROM verdicts ORDER BY id" >"$W/kept-$be"
	missing=$(comm -23 "$W/changed-$be" "$W/kept-$be" | wc -l)
	check_eq "$be: every verdict that changed trust or reasons survives" 0 "$missing"
	check "$be: exactly those and each agent's newest $KEEP are kept" \
		cmp -s "$W/expect-$be" "$W/kept-$be"
	check_eq "$be: violations are never pruned" "$viol" "$(sql "$be" "SELECT COUNT(*) FROM violations")"
	check_eq "$be: nor lifecycle history" "$hist" "$(sql "$be" "SELECT COUNT(*) FROM agent_history")"
	check_eq "$be: nor policy versions" "$pv" "$(sql "$be" "SELECT COUNT(*) FROM policies")"
	rounds_api=$(op "/v1/agents/r$be-00000/counters" | jq '[.hours[].rounds] | add')
	check_eq "$be: GET .../counters counts every round of an agent after pruning" \
		"$(awk -F'|' -v a="r$be-00000" '$2 == a' "$W/all-$be" | wc -l)" "$rounds_api"
	rounds_ctl=$(ctl counters "r$be-00000" | awk 'NR > 1 { s += $(NF - 2) } END { print s }')
	check_eq "$be: attestctl counters says the same" "$rounds_api" "$rounds_ctl"
	check_eq "$be: attestctl counters of an unknown agent fails" 1 \
		"$(ctl counters nosuch >/dev/null 2>&1; echo $?)"

	# Pruning while agents attest: rows stay bounded, no round fails.
	stop_pid "$VPID"
	start_verifier "$W/v-$be" --store "$store" --ek-ca "$W/lg/ek-ca.pem" \
		--policy "$W/lg/policy.json" --operator-token-file "$W/token" \
		--verdicts-keep "$KEEP" --prune-interval 1 --nonce-ttl 600 ||
		{ fail "$be: the verifier starts a third time"; return; }
	check "$be: the whole policy back" ctl policy put default "$W/lg/policy.json" >/dev/null
	out=$(load "b$be" 6)
	check_eq "$be: rounds during pruning without errors" 0 "$(awk '$1 == "errors" { print $2 }' <<<"$out")"
	n=$(awk '$1 == "attestations" { print $2 }' <<<"$out")
	sleep 2.5 # a pass after the last round
	over=$(sql "$be" "SELECT agent, COUNT(*) FROM verdicts WHERE agent LIKE 'b$be-%' GROUP BY agent" |
		awk -F'|' -v k="$KEEP" '$2 > k + 1 { print }')
	check "$be: $n rounds of $AGENTS agents leave at most $KEEP + 1 verdicts each${over:+ ($over)}" \
		[ -z "$over" -a "${n:-0}" -gt $((AGENTS * KEEP * 2)) ]
	stop_pid "$VPID"
}

run_backend sqlite
run_backend postgresql
finish
