#!/usr/bin/env bash
# README "Running it for real", "Several verifiers", run as written in a temporary directory:
# the database made with the README's commands on a throwaway PostgreSQL that asks for a
# password over TLS; the secrets made and placed as step 2 says (mode 0600 in each verifier's
# state directory); each verifier started on the README's verifier.conf (step 3, taken from
# README.md itself) with only the host names, addresses, ports and directories replaced; HAProxy
# on the README's configuration (step 4, taken from README.md the same way). Then agents enroll
# and attest through HAProxy, attestctl works through it with the operator token on both
# verifiers, and both answer /healthz. Only what a temporary directory cannot be is changed:
# /var/lib/attest-verifier is each verifier's state directory here, /etc/attest a directory
# of the test, db.example.org localhost, 10.0.0.11 and .12 127.0.0.1, and the ports free ones.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

LOADGEN=$B/bench/loadgen
for bin in "$LOADGEN" "$B/verifier" "$B/attestctl"; do
	[[ -x $bin ]] || { fail "missing $bin (run make)"; finish; exit 1; }
done
for t in haproxy runuser openssl; do
	command -v $t >/dev/null || { fail "no $t (make deps)"; finish; exit 1; }
done
[[ $(id -u) -eq 0 ]] || { skip "the README's database commands run as root (runuser)"; finish; exit 0; }
W=$T_TMP
ETC=$W/etc
mkdir -p "$ETC"

# block START: the first fenced block of README.md after the line that contains START.
block() {
	awk -v start="$1" '
	index($0, start) { found = 1; next }
	found && /^ *```/ { if (inside) exit; inside = 1; next }
	inside { sub(/^   /, ""); print }' "$TOP/README.md"
}

# --- 1. the database --------------------------------------------------------------------------
check "a throwaway PostgreSQL cluster starts" start_pg "$W/pg" || { finish; exit 1; }
bin=$(pg_bin)
# TLS with a certificate for the database's name (what sslmode=verify-full checks), from a CA
# of the test; a password for the attest role over TLS, nothing else for it.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=db-ca \
	-keyout "$W/db-ca.key" -out "$ETC/db-ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
	-keyout "$W/pg/server.key" -out "$W/db.csr" 2>/dev/null
openssl x509 -req -in "$W/db.csr" -CA "$ETC/db-ca.pem" -CAkey "$W/db-ca.key" -days 1 \
	-extfile <(printf 'subjectAltName=DNS:localhost\n') -out "$W/pg/server.crt" 2>/dev/null
chown postgres:postgres "$W/pg/server.key" "$W/pg/server.crt"
chmod 0600 "$W/pg/server.key"
{
	printf 'hostssl attest attest 127.0.0.1/32 scram-sha-256\nhostssl attest attest ::1/128 scram-sha-256\n'
	printf 'host attest attest all reject\n'
	cat "$W/pg/pg_hba.conf"
} >"$W/pg_hba" && cat "$W/pg_hba" >"$W/pg/pg_hba.conf"
check "PostgreSQL: TLS on, a password for attest" pg_sql postgres -o /dev/null \
	-c "ALTER SYSTEM SET ssl = on" -c "SELECT pg_reload_conf()"
# The README's commands, against this cluster (-h, -p: it has no Unix socket).
check "README: runuser -u postgres -- createuser attest && ... createdb -O attest attest" \
	bash -c "runuser -u postgres -- '$bin/createuser' -h 127.0.0.1 -p $PG_PORT attest &&
		runuser -u postgres -- '$bin/createdb' -h 127.0.0.1 -p $PG_PORT -O attest attest"
PASSWORD=$(openssl rand -hex 16)
pg_sql postgres -c "ALTER ROLE attest PASSWORD '$PASSWORD'" >/dev/null

# --- 2. what every verifier gets, the same on each --------------------------------------------
"$LOADGEN" --make-ca "$W" >/dev/null || { fail "loadgen --make-ca"; finish; exit 1; }
cp "$W/ek-ca.pem" "$ETC/ek-ca.pem" && cp "$W/policy.json" "$ETC/policy.json"
(cd "$W" && openssl rand -hex 32 >cluster.key && openssl rand -hex 32 >operator-token)
# The load balancer's name is the one agents use: one certificate for it, from the fleet's CA.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=fleet \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$W/verifier-key.pem" -out "$ETC/verifier.pem" \
	2>/dev/null
printf 'localhost:%s:attest:attest:%s\n' "$PG_PORT" "$PASSWORD" >"$W/pgpass"
for i in 1 2; do
	install -d -m 0700 "$W/v$i"
	for f in cluster.key verifier-key.pem operator-token pgpass; do
		install -m 0600 "$W/$f" "$W/v$i/$f"
	done
done

# --- 3. verifier.conf, the README's ---------------------------------------------------------
block '**`/etc/attest/verifier.conf`** on each' >"$W/verifier.conf.readme"
check "README: the verifier.conf of \"Several verifiers\" found" grep -q '^store = postgresql:' \
	"$W/verifier.conf.readme"
declare -a VPORTS VPIDS
SERVICE_UID=61934 # in systemd's range of dynamic users (61184-65519), unused here
for i in 1 2; do
	VPORTS[i]=$(free_port)
	{
		sed -e "s|0\.0\.0\.0:8443|127.0.0.1:${VPORTS[i]}|" -e "s|db\.example\.org|localhost:$PG_PORT|" \
			-e "s|/var/lib/attest-verifier|$W/v$i|g" -e "s|/etc/attest|$ETC|g" \
			"$W/verifier.conf.readme"
		echo "state-dir = $W/v$i"
	} >"$W/v$i.conf"
	# Verifier 2 runs as the unit runs it: as a user of its own (DynamicUser=), to whom
	# systemd gave the state directory and the secrets root put there at its first start (a
	# recursive chown), with no home directory of its own (HOME=/, ProtectHome=yes).
	as=()
	if [[ $i -eq 2 ]]; then
		chown -R "$SERVICE_UID:$SERVICE_UID" "$W/v$i"
		as=(setpriv --reuid="$SERVICE_UID" --regid="$SERVICE_UID" --clear-groups env HOME=/)
	fi
	"${as[@]}" "$B/verifier" --config "$W/v$i.conf" >"$W/v$i.out" 2>"$W/v$i.log" &
	VPIDS[i]=$!
	track_pid "${VPIDS[i]}"
done
for i in 1 2; do
	if wait_for_port "${VPORTS[i]}"; then
		ok "verifier $i starts on the README's verifier.conf"
	else
		fail "verifier $i starts on the README's verifier.conf: $(tail -n 3 "$W/v$i.log")"
		finish
		exit 1
	fi
done
check_eq "verifier 2 runs as the service's own user" "$SERVICE_UID" \
	"$(ps -o uid= -p "$(pgrep -P "${VPIDS[2]}" -x verifier || echo "${VPIDS[2]}")" | tr -d ' ')"
check "the database holds the store (agents table)" pg_sql attest -o /dev/null \
	-c "SELECT count(*) FROM agents"
# as_attest PASSFILE: connects as attest the way the README's store URI does (true: it could).
as_attest() {
	PGPASSFILE=$1 psql -X -w -q -o /dev/null -c "SELECT 1" \
		-d "postgresql://attest@localhost:$PG_PORT/attest?sslmode=verify-full&sslrootcert=$ETC/db-ca.pem" \
		2>/dev/null
}
check_fails "the database refuses attest without its password" as_attest /dev/null
check "... and takes it with the pgpass of step 2" as_attest "$W/v1/pgpass"

# --- 4. HAProxy, the README's ---------------------------------------------------------------
block 'e.g. HAProxy in TCP mode' >"$W/haproxy.readme"
check "README: the HAProxy configuration found" grep -q 'balance roundrobin' "$W/haproxy.readme"
HPORT=$(free_port)
sed -e "s|bind :8443|bind 127.0.0.1:$HPORT|" -e "s|10\.0\.0\.11:8443|127.0.0.1:${VPORTS[1]}|" \
	-e "s|10\.0\.0\.12:8443|127.0.0.1:${VPORTS[2]}|" "$W/haproxy.readme" >"$W/haproxy.cfg"
haproxy -c -f "$W/haproxy.cfg" >"$W/haproxy.check" 2>&1
check_eq "haproxy -c: the README's configuration is valid" 0 $?
haproxy -db -f "$W/haproxy.cfg" >"$W/haproxy.log" 2>&1 &
HPID=$!
track_pid "$HPID"
check "HAProxy starts" wait_for_port "$HPORT"

# --- agents and operators through HAProxy --------------------------------------------------
AGENTS=6
"$LOADGEN" --url "https://127.0.0.1:$HPORT" --ca "$ETC/verifier.pem" --ek-ca-dir "$W" \
	--agents $AGENTS --threads 2 --seconds 4 --verdict-log "$W/verdicts" --split-connections 1 \
	>"$W/lg.out" 2>"$W/lg.err"
check_eq "loadgen through HAProxy: exit 0" 0 $?
check_eq "every agent got a verdict" $AGENTS "$(awk '{ print $2 }' "$W/verdicts" | sort -u | wc -l)"
for n in 1 2 3 4; do
	out=$("$B/attestctl" agents --verifier "https://127.0.0.1:$HPORT" --ca "$ETC/verifier.pem" \
		--token-file "$W/operator-token" 2>&1)
	check_eq "attestctl agents through HAProxy with the operator token ($n)" $AGENTS \
		"$(grep -c trusted <<<"$out")"
done
# trusted PORT: how many trusted attestations a verifier answered (its /metrics).
trusted() {
	curl -sS --cacert "$ETC/verifier.pem" "https://127.0.0.1:$1/metrics" |
		awk '$1 == "attest_attestations_total{result=\"trusted\"}" { print $2 }'
}
for i in 1 2; do
	check_eq "verifier $i: /healthz 200" 200 "$(curl -s -o /dev/null -w '%{http_code}' \
		--cacert "$ETC/verifier.pem" "https://127.0.0.1:${VPORTS[i]}/healthz")"
	n=$(trusted "${VPORTS[i]}")
	check "verifier $i answered agents ($n trusted attestations)" test "${n:-0}" -gt 0
done
finish
