#!/usr/bin/env bash
# Webhooks (issue 16, item 3) against the real verifier, software agents
# (tests/tools/softagent) and the receiver example (verifier/examples/webhook_receiver.py):
#   every kind of event (enrolled, untrusted, violation opened, retired, reset, stale) is written
#   to the durable outbox while the receiver is down; the verifier retries with a capped backoff,
#   is then SIGKILLed with all of them undelivered; after its restart every event arrives, none
#   lost, each signed (HMAC-SHA256 over timestamp and body, checked by the receiver); a
#   delivery the receiver did not acknowledge arrives again with the same id and body (at least
#   once: duplicates recognisable by id); a forged, a tampered and a replayed delivery are refused
#   by the receiver; a verifier without the secret file refuses to start.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

RECV=$TOP/verifier/examples/webhook_receiver.py
command -v python3 >/dev/null || { skip "python3 not installed"; finish; exit; }
metric() { op /metrics | awk -v k="$1" '$1 == k { print $2 }'; }
head -c 24 /dev/urandom | xxd -p -c 64 >"$W/secret"
RPORT=$(free_port) || { fail "no free port"; finish; exit 1; }
HOOK=http://127.0.0.1:$RPORT/hook
WARGS=(--webhook "$HOOK" --webhook-secret-file "$W/secret" --webhook-max-backoff 2
	--default-interval 3600 --stale-intervals 2)

check_fails "--webhook without a secret file: the verifier refuses to start" \
	start_verifier "$W/nosecret" "${VARGS[@]}" --webhook "$HOOK"
check "and says why" grep -q 'needs --webhook-secret-file' "$W/nosecret.log"

# --- events while the receiver is down --------------------------------------------------------
start_verifier "$W/v" "${VARGS[@]}" "${WARGS[@]}" || { fail "verifier starts"; finish; exit 1; }
for id in a b; do agent "$id" || { finish; exit 1; }; done    # 2 x agent.enrolled
# agent.untrusted, violation.opened; then a goes silent: agent.stale
sa round "$W/a-a" --append "/usr/bin/evil:$D2" --interval 1
check_eq "a: untrusted" untrusted "$(verdict)"
op_post() { curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o /dev/null \
	-w '%{http_code}' "$@"; }
check_eq "b retired, then reset" "200 200" \
	"$(op_post -X DELETE "$URL/v1/agents/b") $(op_post -X POST "$URL/v1/agents/b/reset")"
check_eq "a reported 1 s" 1 "$(op /v1/agents/a | jq .interval)"
EXPECT="agent.enrolled agent.enrolled agent.reset agent.retired agent.stale agent.untrusted violation.opened"
for ((i = 0; i < 200; i++)); do
	[[ $(metric attest_webhook_deliveries_pending) == 7 ]] && break
	sleep 0.1
done
check_eq "7 deliveries wait in the outbox (metrics)" 7 "$(metric attest_webhook_deliveries_pending)"
check "the verifier said the receiver does not answer" grep -q "webhook: \"$HOOK\": .*retried" "$VLOG"
check_eq "said once, not at every retry" 1 "$(grep -c "webhook: \"$HOOK\": " "$VLOG")"
check "failed attempts counted (attest_webhook_deliveries_total{result=\"failed\"} > 0)" \
	test "$(metric 'attest_webhook_deliveries_total{result="failed"}')" -gt 0
check_eq "a, untrusted and still active, counted (attest_agents_untrusted)" 1 \
	"$(metric attest_agents_untrusted)"
sleep 2 # a few attempts: the backoff is capped at 2 s, so they go on
check_eq "a was marked stale once" 1 "$(grep -c 'agent "a" is stale' "$VLOG")"
kill -KILL "$VPID"
wait "$VPID" 2>/dev/null
ok "verifier SIGKILLed with 7 undelivered events"

# --- the receiver comes up, the verifier restarts ---------------------------------------------
python3 "$RECV" --secret-file "$W/secret" --listen "127.0.0.1:$RPORT" --out "$W/events.jsonl" \
	--refuse-first 2>"$W/recv.log" >/dev/null &
RPID=$!
track_pid "$RPID"
wait_for_port "$RPORT" 10 || fail "receiver listens"
start_verifier "$W/v" "${VARGS[@]}" "${WARGS[@]}" || { fail "verifier restarts"; finish; exit 1; }
got() { jq -r 'select(.duplicate | not) | .type' "$W/events.jsonl" 2>/dev/null | sort | paste -sd ' '; }
for ((i = 0; i < 300; i++)); do
	[[ $(metric attest_webhook_deliveries_pending) == 0 ]] && break
	sleep 0.1
done
check_eq "after the restart every event arrived, none lost" "$EXPECT" "$(got)"
check_eq "the outbox is empty" 0 "$(metric attest_webhook_deliveries_pending)"
check "each delivery counted (attest_webhook_deliveries_total{result=\"delivered\"} >= 7)" \
	test "$(metric 'attest_webhook_deliveries_total{result="delivered"}')" -ge 7
check_eq "7 distinct event ids" 7 "$(jq -r .id "$W/events.jsonl" | sort -u | wc -l)"
check_eq "each refused first delivery came again: same id, same body, marked duplicate" "7" \
	"$(jq -s 'group_by(.id) | map(select(length >= 2 and (map(.event) | unique | length) == 1 and .[1].duplicate)) | length' "$W/events.jsonl")"
check_eq "the events name their agents" "a a a a b b b" \
	"$(jq -r 'select(.duplicate | not) | .agent_id' "$W/events.jsonl" | sort | paste -sd ' ')"
check_eq "retired and reset name the actor" "operator operator" \
	"$(jq -r 'select((.duplicate | not) and (.type == "agent.retired" or .type == "agent.reset")) | .event.data.actor' "$W/events.jsonl" | paste -sd ' ')"
check_eq "the violation names the file" "/usr/bin/evil not_in_allowlist" \
	"$(jq -r 'select((.duplicate | not) and .type == "violation.opened") | "\(.event.data.path) \(.event.data.reason)"' "$W/events.jsonl")"
check_eq "stale says the interval" 1 \
	"$(jq -r 'select((.duplicate | not) and .type == "agent.stale") | .event.data.interval' "$W/events.jsonl")"
check_eq "every event has an id and a time" 0 \
	"$(jq -s 'map(select((.id | test("^evt-[0-9a-f]{32}$") | not) or .time < 1)) | length' "$W/events.jsonl")"
check_eq "every event carries the audit head (seq, hash), the receiver records it" 0 \
	"$(jq -s 'map(select((.audit_head.seq | type) != "number" or (.audit_head.hash | test("^[0-9a-f]{64}$") | not) or .audit_head != .event.audit_head)) | length' "$W/events.jsonl")"
# Every body as delivered, against the WebhookEvent schema of docs/openapi.json (closed: a member
# the document does not name fails), with python3-jsonschema as tests/tools/openapi_validate.py.
check "every delivered event fits docs/openapi.json's WebhookEvent" python3 -c '
import json, sys
import jsonschema
doc = json.load(open(sys.argv[1]))
schema = dict(doc, **{"$ref": "#/components/schemas/WebhookEvent"})
v = jsonschema.Draft202012Validator(schema)
n = 0
for line in open(sys.argv[2]):
    ev = json.loads(line)["event"]
    v.validate(ev)
    n += 1
sys.exit(0 if n >= 7 else 1)
' "$TOP/docs/openapi.json" "$W/events.jsonl"
check "the last events' head is past the trust changes before them" \
	test "$(jq -s 'map(select(.duplicate | not)) | max_by(.audit_head.seq) | .audit_head.seq' "$W/events.jsonl")" -ge 2
check "the receiver said it did not acknowledge, the verifier logged retries" \
	grep -q 'answered 503' "$VLOG"

# --- the receiver refuses what the verifier did not sign ---------------------------------------
body='{"id":"evt-00000000000000000000000000000000","type":"agent.retired","time":1,"agent_id":"x","data":{}}'
now=$(date +%s)
sig=$(printf '%s.%s' "$now" "$body" | openssl dgst -sha256 -hmac "$(cat "$W/secret")" -r | cut -d' ' -f1)
post() { curl -sS -o /dev/null -w '%{http_code}' -H "X-Attest-Event-Id: evt-00000000000000000000000000000000" \
	-H "X-Attest-Timestamp: $1" -H "X-Attest-Signature: sha256=$2" --data-binary "$3" "$HOOK"; }
check_eq "a delivery signed as documented (openssl dgst) is accepted" 503 "$(post "$now" "$sig" "$body")"
check_eq "a tampered body: 401" 401 "$(post "$now" "$sig" "${body/retired/reset}")"
check_eq "a wrong key: 401" 401 "$(post "$now" "$(printf '%064d' 0)" "$body")"
old=$((now - 3600))
oldsig=$(printf '%s.%s' "$old" "$body" | openssl dgst -sha256 -hmac "$(cat "$W/secret")" -r | cut -d' ' -f1)
check_eq "an old delivery replayed: 401" 401 "$(post "$old" "$oldsig" "$body")"
finish
