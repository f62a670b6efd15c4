#!/usr/bin/env bash
# The audit trail (verifier(8), AUDIT TRAIL) on both backends, SQLite and PostgreSQL: software
# agents (bench/loadgen) attest (each first verdict is a change of trust), an operator puts a
# policy and retires an agent; then, offline, `attestctl audit verify` finds the chain intact in
# the store and in a copy of it, and exit 1 for each tampering done with sqlite3 or psql: a
# record edited, deleted, two reordered, the newest deleted (truncation, seen against the head
# signed at stop), and a signature checked with another key. `audit export` writes one JSON line
# per record. The key is made 0600.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

W=$T_TMP
CTL=$B/attestctl LOADGEN=$B/bench/loadgen
need_built "$CTL" "$LOADGEN" "$B/verifier"
command -v sqlite3 >/dev/null || { fail "sqlite3 is needed"; finish; exit 1; }
mkdir -p "$W/lg" && "$LOADGEN" --make-ca "$W/lg" >/dev/null || { fail "loadgen --make-ca"; finish; exit 1; }
head -c 32 /dev/urandom | xxd -p -c 64 >"$W/token"
openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkey -pubout >"$W/other.pem"

verify_rc() { "$CTL" audit verify --store "$@" >"$W/verify.out" 2>&1; echo $?; }

# tampered BACKEND NAME SQL: a copy of the store with SQL run on it; prints the copy's URI.
tampered() {
	local be=$1 name=$2 sql=$3
	if [[ $be == sqlite ]]; then
		cp "$W/sqlite.db" "$W/$name.db" && sqlite3 -batch "$W/$name.db" "$sql" && echo "sqlite:$W/$name.db"
	else
		pg_sql postgres -c "CREATE DATABASE $name TEMPLATE audit" &&
			pg_sql "$name" -c "$sql" >/dev/null && echo "$PG_URI/$name"
	fi
}

run_backend() {
	local be=$1 store n uri out
	if [[ $be == sqlite ]]; then
		store=sqlite:$W/sqlite.db
	else
		check "a throwaway PostgreSQL cluster starts" start_pg "$W/pg" || return
		check "a database for the store" pg_sql postgres -c "CREATE DATABASE audit" || return
		store=$PG_URI/audit
	fi
	start_verifier "$W/v-$be" --store "$store" --ek-ca "$W/lg/ek-ca.pem" \
		--policy "$W/lg/policy.json" --operator-token-file "$W/token" --nonce-ttl 600 ||
		{ fail "$be: the verifier starts"; return; }
	check_eq "$be: the audit key is made 0600" 600 "$(stat -c %a "$W/v-$be/audit-key.pem")"
	out=$("$LOADGEN" --url "$URL" --ca "$CA" --ek-ca-dir "$W/lg" --agents 3 --threads 1 \
		--seconds 1 --id-prefix "a$be" --entries-per-round 1 2>/dev/null)
	check_eq "$be: agents attest" 0 "$(awk '$1 == "errors" { print $2 }' <<<"$out")"
	check "$be: an operator puts a policy" ctl policy put other "$W/lg/policy.json"
	check "$be: and retires an agent" ctl agent retire "a$be-00002"
	op /v1/audit/head >"$W/head-$be.json"
	jq -r .public_key "$W/head-$be.json" >"$W/pub-$be.pem"
	check "$be: GET /v1/audit/head: a signed head and the public key" \
		jq -e '.seq >= 5 and (.signature | length) > 0 and (.hash | length) == 64' "$W/head-$be.json"
	stop_pid "$VPID"

	n=$("$CTL" audit export --store "$store" 2>/dev/null | wc -l)
	check_eq "$be: audit export: a JSON line per record (the default policy seeded, 3 agents trusted, a policy, a retirement)" \
		6 "$n"
	"$CTL" audit export --store "$store" 2>/dev/null |
		jq -s -e '[.[].kind] == ["policy.version","trust","trust","trust","policy.version","agent.retired"]' >/dev/null &&
		ok "$be: the records' kinds in order" || fail "$be: the records' kinds in order"
	check_eq "$be: audit verify: intact" 0 "$(verify_rc "$store")"
	check_eq "$be: and with the verifier's key pinned" 0 "$(verify_rc "$store" --key "$W/pub-$be.pem")"
	check_eq "$be: another key: the signatures do not verify" 1 \
		"$(verify_rc "$store" --key "$W/other.pem")"
	if [[ $be == sqlite ]]; then
		cp "$W/sqlite.db" "$W/backup.db"
		check_eq "sqlite: a copied file verifies" 0 "$(verify_rc "sqlite:$W/backup.db")"
	else
		check "postgresql: copied to SQLite" "$CTL" store copy "$store" "sqlite:$W/frompg.db"
		check_eq "postgresql: the copy verifies" 0 "$(verify_rc "sqlite:$W/frompg.db" --key "$W/pub-$be.pem")"
		sqlite3 -batch "$W/frompg.db" "UPDATE audit_log SET actor = 'nobody' WHERE seq = 4"
		check_eq "postgresql: an edit in the copy is found" 1 "$(verify_rc "sqlite:$W/frompg.db")"
	fi

	uri=$(tampered "$be" "${be}_edit" "UPDATE audit_log SET detail = '{\"policy\":\"x\"}' WHERE seq = 4")
	check_eq "$be: an edited record: exit 1" 1 "$(verify_rc "$uri")"
	grep -q "broken at seq 4" "$W/verify.out" && ok "$be: named at seq 4" || fail "$be: named at seq 4: $(cat "$W/verify.out")"
	uri=$(tampered "$be" "${be}_del" "DELETE FROM audit_log WHERE seq = 2")
	check_eq "$be: a deleted record: exit 1" 1 "$(verify_rc "$uri")"
	uri=$(tampered "$be" "${be}_swap" "UPDATE audit_log SET seq = -2 WHERE seq = 2;
		UPDATE audit_log SET seq = 2 WHERE seq = 3; UPDATE audit_log SET seq = 3 WHERE seq = -2")
	check_eq "$be: two records reordered: exit 1" 1 "$(verify_rc "$uri")"
	uri=$(tampered "$be" "${be}_trunc" "DELETE FROM audit_log WHERE seq = (SELECT max(seq) FROM audit_log)")
	check_eq "$be: the newest record deleted (truncated): exit 1" 1 "$(verify_rc "$uri")"
	grep -q "missing" "$W/verify.out" && ok "$be: says records are missing" || fail "$be: says records are missing: $(cat "$W/verify.out")"
	uri=$(tampered "$be" "${be}_agent" "UPDATE audit_log SET agent = 'someone' WHERE seq = 1")
	check_eq "$be: the first record's agent changed: exit 1" 1 "$(verify_rc "$uri")"
}

check_eq "a store that is not there: exit 2" 2 "$(verify_rc "sqlite:$W/none.db")"
check "and it is not made" [ ! -e "$W/none.db" ]
run_backend sqlite
run_backend postgresql
finish
