#!/usr/bin/env bash
# One exchange per round (proto/evidence.h): attestd as a daemon (--interval 1) against a real
# verifier, a TCP swtpm and a synthetic IMA list. Each verdict carries the next round's
# challenge and attestd answers it without asking: after the first round the verifier issues
# challenges only with verdicts. The list grows meanwhile and the given challenges follow it.
# The verifier SIGKILLed and restarted (its challenges lived in memory): attestd's answer to
# the old challenge is refused as nonce_unknown, it asks for one in the same round, and
# carries on trusted, one exchange per round again. A round over 64 KiB needs a challenge
# asked for (the admission of large bodies): attestd asks for it when the given one is refused.
# The agent purged: attestd's answer is 404 unknown_agent and it enrolls again at once.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

IMAGEN=$B/tools/imagen
ATTESTCTL=$B/attestctl
need_cmds swtpm swtpm_setup tpm2_pcrextend curl jq
need_built "$IMAGEN" "$ATTESTCTL" "$B/attestd" "$B/verifier"

W=$T_TMP
swtpm_with_ek_ca "$W" || { finish; exit 1; }

# list N: the first N entries of one deterministic list; extend FROM TO: PCR 10 follows them.
list() { "$IMAGEN" --entries "$1" --template ima-ng --hash sha256 --zero-boot-pcrs --seed 7 \
	--out "$W/list$1" --tpm2-extend-script "$W/ext$1" >/dev/null; }
# shellcheck disable=SC2046 # one PCR:alg=digest argument per word
extend() { tpm2_pcrextend $(sed -n "$(($1 + 1)),$2p" "$W/ext$2") >/dev/null; }
list 40
list 60
list 1500
extend 0 40
cp "$W/list40" "$W/ima"
"$ATTESTCTL" policy-learn "$W/list1500" --out "$W/policy.json" 2>/dev/null

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/token"
vstart() {
	start_verifier "$W/verifier" --ek-ca "$W/ek-ca.pem" --policy "$W/policy.json" \
		--operator-token-file "$W/token"
}
check "verifier starts" vstart || { finish; exit 1; }
metric() { op /metrics | awk -v k="$1" '$1 == k { print $2 }'; }
# trusted_verdicts: how many trusted verdicts the store holds for host-1.
trusted_verdicts() { op /v1/agents/host-1/verdicts | jq '[(.verdicts // [])[] | select(.verdict == "trusted")] | length'; }
# wait_trusted N SECONDS: until the store holds N trusted verdicts (attestd still running).
wait_trusted() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		(($(trusted_verdicts) >= $1)) && return 0
		kill -0 "$APID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# grow FROM TO SECONDS: the list grows from FROM to TO entries and PCR 10 follows, while attestd
# is paused (so that no quote catches PCR 10 half extended); then two more trusted verdicts.
grow() {
	local n
	check "attestd paused between two rounds" agent_between_rounds "$APID" "$ALOG" "verdict trusted"
	n=$(trusted_verdicts)
	cp "$W/list$2" "$W/ima"
	extend "$1" "$2"
	kill -CONT "$APID"
	check "the list of $2 entries is trusted" wait_trusted $((n + 2)) "$3"
}
next_offset() { op /v1/agents/host-1/verdicts | jq -r '.verdicts[0].next_offset'; }

start_agent host-1 "$W/a1" --ima-list "$W/ima" --interval 1
check "enrolled, then four trusted rounds" wait_trusted 4 60
check_eq "one challenge asked for: the first round's" 1 "$(metric attest_challenges_total)"
check "the others came with verdicts" \
	test "$(metric attest_challenges_given_total)" -ge 3

# The list grows: the next given challenge names where the store's replay stopped.
grow 40 60 30
check_eq "the verifier expects entry 60" 60 "$(next_offset)"
check "only the 20 new entries were sent" grep -q 'sent entries 40-59' "$ALOG"
check_eq "still no challenge asked for" 1 "$(metric attest_challenges_total)"
check "nothing untrusted" test "$(op /v1/agents/host-1/verdicts | jq '[.verdicts[] | select(.verdict != "trusted")] | length')" -eq 0

# A large round (1440 new entries, over 64 KiB): read only for a challenge asked for, so the
# given one is refused unread (409 no_challenge) and attestd asks in the same round.
grow 60 1500 60
check_eq "the verifier expects entry 1500" 1500 "$(next_offset)"
check "its body was over 64 KiB" grep -Eq 'sent entries 60-1499 log_offset=60 \([0-9]{5,} bytes' "$ALOG"
check_eq "the given challenge was refused unread (no_challenge)" 1 \
	"$(grep -c "code 'no_challenge'" "$ALOG")"
check_eq "a challenge asked for it, for nothing else" 2 "$(metric attest_challenges_total)"
check_eq "attestd said why" 1 "$(grep -c 'does not take the challenge it gave' "$ALOG")"

# The verifier dies between two rounds (attestd stopped right after a verdict, so that no
# request is in flight): the challenge attestd holds is gone with it.
check "attestd paused between two rounds" agent_between_rounds "$APID" "$ALOG" "verdict trusted"
kill -KILL "$VPID"
wait "$VPID" 2>/dev/null
check "verifier restarts on the same state and port" vstart
kill -CONT "$APID"
n=$(trusted_verdicts)
check "attestd carries on trusted" wait_trusted $((n + 3)) 60
check_eq "its old challenge refused as unknown, it said why and asked" 2 \
	"$(grep -c 'does not take the challenge it gave' "$ALOG")"
check_eq "the restarted verifier was asked once, then gave them with verdicts" 1 \
	"$(metric attest_challenges_total)"

# An operator purges the agent while attestd runs: its answer to the challenge it holds is
# 404 unknown_agent, and attestd enrolls again at once, as when it asks for a challenge.
check "attestd paused between two rounds" agent_between_rounds "$APID" "$ALOG" "verdict trusted"
check_eq "the agent purged" 200 "$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$CA" -X DELETE \
	-H "Authorization: Bearer $(cat "$W/token")" "$URL/v1/agents/host-1?purge=1")"
kill -CONT "$APID"
check "enrolled again and trusted" wait_trusted 2 60
check "attestd said why it enrolled again" grep -q "does not know agent 'host-1' as active (unknown_agent); enrolling again" "$ALOG"
check "attestd kept running" kill -0 "$APID"
check "no round failed" bash -c "! grep -q 'round failed' '$ALOG'"

# An operator retires the agent, then resets it (the machine comes back): attestd is refused
# while retired, and after the reset it enrolls again by itself, with its same TPM.
check_eq "the agent retired" 200 "$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$CA" -X DELETE \
	-H "Authorization: Bearer $(cat "$W/token")" "$URL/v1/agents/host-1")"
check "attestd is refused while retired" wait_line "$ALOG" "code 'agent_retired'" 30
# Counted once refused: a round in flight when the agent was retired may still have committed a
# trusted verdict, and counting before the retirement let that verdict pass for the one after
# the reset.
n=$(trusted_verdicts)
check_eq "attestd reset" "agent host-1: reset (its next enrollment may bring a new EK and AK)" \
	"$("$ATTESTCTL" agent reset host-1 --verifier "$URL" --ca "$CA" --token-file "$W/token")"
check "after the reset it enrolls again by itself and is trusted" wait_trusted $((n + 1)) 90
check "attestd said why it enrolled again" grep -q "as active (agent_reset); enrolling again" "$ALOG"
check_eq "the agent is active again" active "$(op /v1/agents/host-1 | jq -r .state)"
check "attestd kept running" kill -0 "$APID"
stop_pid "$APID"
finish
