#!/usr/bin/env bash
# Detection without waiting for the heartbeat: attestd with an hour's interval and --watch 1 sends
# a round as soon as the list grows, so a program the policy does not list is reported in
# seconds, not at the next interval; with --watch 0 the same growth waits for the interval.
# Rounds brought forward are paced by a token bucket: the first comes at once, even right after
# a round; a list that keeps growing brings at most --round-burst at once, then one per
# --round-gap.
# Real verifier, attestd as a daemon, a TCP swtpm and a synthetic IMA list whose growth PCR 10
# follows (tpm2_pcrextend); the policy lists the first 40 entries only.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

IMAGEN=$B/tools/imagen
ATTESTCTL=$B/attestctl
need_cmds swtpm swtpm_setup tpm2_pcrextend curl jq
need_built "$IMAGEN" "$ATTESTCTL" "$B/attestd" "$B/verifier"

W=$T_TMP
swtpm_with_ek_ca "$W" || { finish; exit 1; }

# list N: the first N entries of one deterministic list, and the PCR 10 extensions of each
# entry (line I of extN extends entry I), for tpm2_pcrextend.
list() { "$IMAGEN" --entries "$1" --template ima-ng --hash sha256 --zero-boot-pcrs --seed 11 \
	--out "$W/list$1" --tpm2-extend-script "$W/ext$1" >/dev/null; }
for ((n = 40; n <= 53; n++)); do list $n; done
"$ATTESTCTL" policy-learn "$W/list40" --out "$W/policy.json" 2>/dev/null

# grow DIR N: DIR/ima becomes the first N entries and the TPM's PCR 10 follows; attestd (if
# running) is paused between two rounds meanwhile, so that no quote sees PCR 10 half extended.
APID=
grow() {
	local have i
	have=$(cat "$1/count" 2>/dev/null || echo 0)
	if [[ -n $APID ]] && ! agent_between_rounds "$APID" "$ALOG"; then
		fail "attestd paused between two rounds"
		return 1
	fi
	cp "$W/list$2" "$1/ima"
	for ((i = have + 1; i <= $2; i++)); do
		# shellcheck disable=SC2046 # one PCR:alg=digest argument per word
		tpm2_pcrextend $(sed -n "${i}p" "$W/ext$2") >/dev/null
	done
	echo "$2" >"$1/count"
	[[ -z $APID ]] || kill -CONT "$APID"
}

# A webhook receiver: the report's last step is the operator's event.
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/secret"
RPORT=$(free_port) || { fail "no free port"; finish; exit 1; }
python3 "$TOP/verifier/examples/webhook_receiver.py" --secret-file "$W/secret" \
	--listen "127.0.0.1:$RPORT" --out "$W/events.jsonl" 2>"$W/recv.log" >/dev/null &
track_pid $!
check "webhook receiver listens" wait_for_port "$RPORT" 10

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/token"
check "verifier starts" start_verifier "$W/verifier" --ek-ca "$W/ek-ca.pem" \
	--policy "$W/policy.json" --operator-token-file "$W/token" \
	--webhook "http://127.0.0.1:$RPORT/hook" --webhook-secret-file "$W/secret" || { finish; exit 1; }
verdicts() { op "/v1/agents/$1/verdicts" | jq '(.verdicts // []) | length'; }
hooked() { jq -r --arg a "$1" 'select(.type == "agent.untrusted" and .agent_id == $a) | .type' \
	"$W/events.jsonl" 2>/dev/null | wc -l; }
untrusted() { op "/v1/agents/$1/verdicts" | jq '[(.verdicts // [])[] | select(.verdict == "untrusted")] | length'; }
# since T0: seconds from the $EPOCHREALTIME T0 to now.
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'; }
# wait_count FN AGENT N SECONDS: until FN AGENT reaches N, at most SECONDS of wall-clock time
# (a loaded machine makes each look slow); prints the seconds it took.
wait_count() {
	local t0=$EPOCHREALTIME
	while awk -v s="$(since "$t0")" -v m="$4" 'BEGIN { exit !(s < m) }'; do
		if (($($1 "$2") >= $3)); then
			since "$t0"
			echo
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# --- --watch 1: a new entry is reported at once -------------------------------------------
mkdir -p "$W/a1"
grow "$W/a1" 40
GAP=30 BURST=2
start_agent host-1 "$W/a1" --ima-list "$W/a1/ima" --interval 3600 --watch 1 \
	--round-gap $GAP --round-burst $BURST
check "host-1 enrolled and trusted" wait_count verdicts host-1 1 60 >/dev/null
# Right after the first round: a gap counted from the last round would hold this one back for
# --round-gap (30 s); the bucket holds a token, so it goes at the next look.
grow "$W/a1" 41
t0=$EPOCHREALTIME
took=$(wait_count untrusted host-1 1 20)
check "an entry the policy does not list is reported within 20 s, not at the interval (an hour) nor after --round-gap ($GAP s) (${took:-never} s)" \
	test -n "$took"
check "and its agent.untrusted event reached the receiver" wait_count hooked host-1 1 20 >/dev/null
echo "# detected in ${took:-never} s, the webhook delivered $(since "$t0") s after the list grew" \
	"(each at most one look late: polled)"
check "attestd said why it did not wait" grep -q 'new measurements since the last round; sending a round now' "$ALOG"
check_eq "reported as not in the allowlist" "not_in_allowlist" \
	"$(op /v1/agents/host-1/verdicts | jq -r '[.verdicts[] | select(.verdict == "untrusted")][0].reasons[0].code')"

# A list that keeps growing (an entry every 0.5 s, 12 entries): rounds come forward, but no more
# than the bucket holds (at most --round-burst) plus one per --round-gap of the time watched;
# one per look (--watch 1) would be one a second.
before=$(grep -c 'sending a round now' "$ALOG")
t0=$EPOCHREALTIME
for ((n = 42; n <= 53; n++)); do
	grow "$W/a1" $n
	sleep 0.5
done
sleep 1.5 # the look after the last growth
span=$(since "$t0")
brought=$(($(grep -c 'sending a round now' "$ALOG") - before))
most=$(awk -v s="$span" -v b=$BURST -v g=$GAP 'BEGIN { printf "%d", b + s / g }')
check "a growing list brought rounds forward ($brought)" test "$brought" -ge 1
check "no more than the bucket and its refill ($brought in $span s; burst $BURST, gap $GAP s: at most $most)" \
	test "$brought" -le "$most"
stop_pid "$APID"
APID=

# --- --watch 0: the same growth waits for the interval ------------------------------------
# A second TPM from the same test CA, so that the verifier's --ek-ca trusts its EK too.
swtpm_manufacture "$W/t2" "$W/ca" || { fail "swtpm_setup"; finish; exit 1; }
check "a second swtpm starts" start_swtpm "$W/t2" || { finish; exit 1; }
mkdir -p "$W/a2"
grow "$W/a2" 40
start_agent host-2 "$W/a2" --ima-list "$W/a2/ima" --interval 3600 --watch 0
check "host-2 enrolled and trusted" wait_count verdicts host-2 1 60 >/dev/null
sleep 3.5
grow "$W/a2" 41
check_fails "without --watch the new entry waits for the next interval (nothing within 10 s)" \
	wait_count verdicts host-2 2 10
check_eq "host-2 has one verdict still" 1 "$(verdicts host-2)"
stop_pid "$APID"
finish
