#!/usr/bin/env bash
# The Prometheus alerting rules the package ships (verifier/attest-alerts.rules.yml):
# `promtool check rules` accepts them; `promtool test rules` runs
# tests/data/prometheus/attest-alerts.test.yml (each alert fires on its series after its `for:`,
# and not on a healthy fleet), and fails on a copy whose thresholds are wrong; every metric the
# rules and the recorded series name is one a running verifier exports on /metrics; a verifier
# whose PostgreSQL store is stopped still answers /metrics with attest_store_up 0 (what
# AttestStoreUnavailable needs), 1 before; the rules are installed with the package.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

RULES=$TOP/verifier/attest-alerts.rules.yml
RTEST=$TOP/tests/data/prometheus/attest-alerts.test.yml
command -v promtool >/dev/null || { fail "promtool missing (make deps: prometheus)"; finish; exit 1; }
command -v curl >/dev/null || { skip "curl not installed"; finish; exit; }
[[ -x $B/verifier ]] || { fail "missing $B/verifier (run make)"; finish; exit 1; }
W=$T_TMP

out=$(promtool check rules "$RULES" 2>&1)
check "promtool check rules: 4 rules ($(tail -n 1 <<<"$out" | tr -s ' '))" \
	grep -q "SUCCESS: 4 rules found" <<<"$out"
out=$(promtool test rules "$RTEST" 2>&1)
check "promtool test rules $(basename "$RTEST"): SUCCESS" grep -q "SUCCESS" <<<"$out" ||
	echo "$out" | sed -n 1,30p
# The recorded series can fail the rules: a wrong threshold, a dropped `for:`.
mkdir -p "$W/a/b/c" "$W/verifier"
sed 's/(attest_agents_untrusted) > 0/(attest_agents_untrusted) > 1/' "$RULES" >"$W/verifier/attest-alerts.rules.yml"
cp "$RTEST" "$W/a/b/c/t.yml"
check_fails "promtool test rules fails when AttestAgentUntrusted's threshold is wrong" \
	promtool test rules "$W/a/b/c/t.yml" >/dev/null 2>&1
sed '/alert: AttestAgentStale/,/for:/{/for:/d}' "$RULES" >"$W/verifier/attest-alerts.rules.yml"
check_fails "promtool test rules fails when AttestAgentStale fires at once" \
	promtool test rules "$W/a/b/c/t.yml" >/dev/null 2>&1

# --- the names are the verifier's ------------------------------------------------------------
check "verifier starts" start_verifier "$W/v" || { finish; exit 1; }
curl -sS --cacert "$CA" "$URL/metrics" >"$W/metrics"
exported=$(sed -n 's/^# TYPE \([a-z_:]*\) .*/\1/p' "$W/metrics" | sort -u)
named=$(grep -ohE '\battest_[a-z_]+' "$RULES" "$RTEST" | sort -u)
check "the rules and the series name $(wc -l <<<"$named") metrics" test "$(wc -l <<<"$named")" -ge 5
for m in $named; do
	check "$m is exported on /metrics" grep -qxF "$m" <<<"$exported"
done
check_eq "attest_store_up 1 on a readable store" 1 \
	"$(awk '$1 == "attest_store_up" { print $2 }' "$W/metrics")"
stop_pid "$VPID"

# --- the store stopped: /metrics still answers, with attest_store_up 0 -------------------------
if [[ -x $(pg_bin)/postgres ]]; then
	check "a throwaway PostgreSQL cluster starts" start_pg "$W/pg" || { finish; exit 1; }
	pg_sql postgres -c "CREATE DATABASE alerts"
	check "verifier starts on PostgreSQL" start_verifier "$W/vpg" --store "$PG_URI/alerts" ||
		{ finish; exit 1; }
	check_eq "attest_store_up 1 while PostgreSQL runs" 1 \
		"$(curl -sS --cacert "$CA" "$URL/metrics" | awk '$1 == "attest_store_up" { print $2 }')"
	stop_pg_pid "$PG_PID"
	code=$(curl -sS --cacert "$CA" -o "$W/metrics-down" -w '%{http_code}' "$URL/metrics")
	check_eq "/metrics answers 200 with the store stopped" 200 "$code"
	check_eq "attest_store_up 0 with the store stopped" 0 \
		"$(awk '$1 == "attest_store_up" { print $2 }' "$W/metrics-down")"
	check "the counters this process holds are still there" \
		grep -q '^attest_http_requests_total ' "$W/metrics-down"
	check_fails "no store-wide family read from a store that is down" \
		grep -q '^attest_agents{' "$W/metrics-down"
else
	fail "PostgreSQL missing (make deps: postgresql)"
fi

# --- installed with the package ----------------------------------------------------------------
make -C "$TOP" --no-print-directory install-verifier DESTDIR="$W/root" PREFIX=/usr \
	SYSCONFDIR=/etc UNITDIR=/lib/systemd/system >"$W/install.log" 2>&1
check_eq "make install-verifier: exit 0" 0 $?
check "installed as /usr/share/attest-verifier/attest-alerts.rules.yml" \
	cmp -s "$RULES" "$W/root/usr/share/attest-verifier/attest-alerts.rules.yml"
finish
