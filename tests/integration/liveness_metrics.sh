#!/usr/bin/env bash
# Liveness (issue 16, item 2) and the metrics text (item 7) against the real verifier with
# software agents (tests/tools/softagent):
#   an agent silent for --stale-intervals of its interval (the one it reported with its
#   evidence, else --default-interval) is `stale` in the API, attestctl and /metrics; valid
#   evidence makes it active again; an agent with a longer interval is not stale meanwhile
#   /metrics: every sample belongs to a family with HELP and TYPE, counters end in _total,
#   names follow Prometheus' rules, each agent's last verdict time is a gauge in seconds
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
command -v python3 >/dev/null || { skip "python3 not installed"; finish; exit; }
metric() { op /metrics | awk -v k="$1" '$1 == k { print $2 }'; }
field() { op "/v1/agents/$1" | jq -r "$2"; }

# Agents that report no interval are expected every 30 s, stale after 2 of theirs (60 s).
start_verifier "$W/v" "${VARGS[@]}" --default-interval 30 --stale-intervals 2 ||
	{ fail "verifier starts"; finish; exit 1; }
for id in fast slow; do agent "$id" || { finish; exit 1; }; done
# fast reports 4 s, so it is stale 8 s after its verdict: room for the checks below even on a
# loaded machine (with 1 s, the checks between its verdict and "no agent stale yet" could take
# longer than its 2 s and find it stale already).
sa round "$W/a-fast" --interval 4
check_eq "fast reports 4 s: its interval, as reported" "4 true active" \
	"$(field fast '"\(.interval) \(.interval_reported) \(.state)"')"
check_eq "slow reports none: the verifier's default" "30 false active" \
	"$(field slow '"\(.interval) \(.interval_reported) \(.state)"')"
check_eq "last seen is the last verdict" "$(field fast .last_verdict_at)" "$(field fast .last_seen)"
check_eq "stale after 2 intervals" "$(($(field fast .last_seen) + 8))" "$(field fast .stale_after)"
check_eq "metrics: no agent stale yet" 0 "$(metric 'attest_agents{state="stale"}')"
check_eq "metrics: fast's last verdict time in seconds" "$(field fast .last_verdict_at)" \
	"$(metric 'attest_agent_last_verdict_timestamp_seconds{agent="fast"}')"

# fast's attestd stops: past its stale time it is stale; slow (60 s) is not.
stale_at=$(field fast .stale_after)
while (($(date +%s) <= stale_at)); do sleep 0.2; done
check_eq "fast, silent for over 2 intervals: stale in the API" "stale true" \
	"$(op /v1/agents | jq -r '.agents[] | select(.agent_id == "fast") | "\(.state) \(.stale)"')"
check_eq "slow, held to its longer interval, is not" active "$(field slow .state)"
check "attestctl agents shows fast stale" grep -Eq '^fast +stale ' <<<"$(ctl agents)"
check "attestctl agents shows no verdict for stale fast (its last one no longer vouches)" \
	grep -Eq '^fast +stale +[^ ]+ +- ' <<<"$(ctl agents)"
check "attestctl agents shows slow's verdict (active)" grep -Eq '^slow +active +[^ ]+ +trusted ' \
	<<<"$(ctl agents)"
check "attestctl agent fast says when it was last seen and why stale" \
	grep -Eq '^last seen: .*every 4 s, as the agent reported; stale after ' <<<"$(ctl agent fast)"
check_eq "metrics: one stale agent, one active" "1 1" \
	"$(metric 'attest_agents{state="stale"}') $(metric 'attest_agents{state="active"}')"
trusted "fast attests again" fast --interval 4
check_eq "and is active again" active "$(field fast .state)"
check_eq "metrics: none stale" 0 "$(metric 'attest_agents{state="stale"}')"

# --- the metrics text, parsed ---------------------------------------------------------------
op /metrics >"$W/metrics.txt"
python3 - "$W/metrics.txt" >"$W/metrics.check" 2>&1 <<'PY'
import re, sys
name_re = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*$')
sample_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$')
helps, types, problems, samples = {}, {}, [], 0
for line in open(sys.argv[1]):
    line = line.rstrip('\n')
    if not line:
        continue
    if line.startswith('# HELP '):
        name, _, text = line[7:].partition(' ')
        if name in helps or not text:
            problems.append('HELP twice or empty: ' + name)
        helps[name] = text
        continue
    if line.startswith('# TYPE '):
        name, _, kind = line[7:].partition(' ')
        if name not in helps:
            problems.append('TYPE before HELP: ' + name)
        types[name] = kind
        continue
    m = sample_re.match(line)
    if not m:
        problems.append('not a sample: ' + line)
        continue
    samples += 1
    name = m.group(1)
    family = name
    for suffix in ('_bucket', '_sum', '_count'):
        if name.endswith(suffix) and types.get(name[:-len(suffix)]) == 'histogram':
            family = name[:-len(suffix)]
    if family not in helps or family not in types:
        problems.append('no HELP/TYPE before: ' + name)
        continue
    float(m.group(3))
    if not name_re.match(name) or not name.startswith('attest_'):
        problems.append('bad name: ' + name)
for name, kind in types.items():
    if kind not in ('counter', 'gauge', 'histogram'):
        problems.append('unknown type %s of %s' % (kind, name))
    if (kind == 'counter') != name.endswith('_total'):
        problems.append('counter naming (_total for counters alone): ' + name)
    if re.search(r'_(milliseconds|ms|minutes|hours|bytes_kb)$', name):
        problems.append('not a base unit: ' + name)
for p in problems:
    print(p)
print('%d samples, %d families, %d problems' % (samples, len(types), len(problems)))
PY
check_eq "every series has HELP and TYPE, counters end in _total" "" \
	"$(grep -v ' problems$' "$W/metrics.check")"
check "the checker read the whole text" grep -Eq '^[0-9]{2,} samples, [0-9]{2} families, 0 problems$' \
	"$W/metrics.check"

# The per-agent series name the fleet: behind a token (any role) unless --metrics-agents public.
pub() { curl -sS --cacert "$CA" "$URL/metrics"; }
RO=$(head -c 24 /dev/urandom | xxd -p -c 64)
check_eq "without a token: /metrics answers, with the fleet's counts" 1 \
	"$(pub | grep -c '^attest_agents{state="stale"} ')"
check_eq "and names no agent" 0 "$(pub | grep -c 'agent="')"
printf 'ops operator %s\ndash read-only %s\n' "$(cat "$W/token")" "$RO" >"$W/tokens"
stop_pid "$VPID"
check "verifier restarts with named tokens" start_verifier "$W/v" --ek-ca "$W/ekca/ca.pem" \
	--policy "$W/policy.json" --operator-token-file "$W/tokens"
check_eq "a read-only token sees each agent's series" 2 \
	"$(curl -sS --cacert "$CA" -H "Authorization: Bearer $RO" "$URL/metrics" | grep -c '^attest_agent_last_verdict_timestamp_seconds{agent=')"
check_eq "a wrong token sees none (and /metrics still answers)" "0 1" \
	"$(curl -sS --cacert "$CA" -H "Authorization: Bearer not-a-token-0123456789" "$URL/metrics" |
		grep -c 'agent="') $(pub | grep -c '^attest_agents{state="active"} ')"
stop_pid "$VPID"
check "verifier restarts with --metrics-agents public" start_verifier "$W/v" "${VARGS[@]}" \
	--metrics-agents public
check_eq "then everyone sees each agent's series" 2 \
	"$(pub | grep -c '^attest_agent_last_verdict_timestamp_seconds{agent=')"
finish
