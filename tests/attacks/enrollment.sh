#!/usr/bin/env bash
# Attack matrix, enrollment (issue 15): one TPM enrolled as several agents, a flood of
# enrollments from one EK that are never activated, and pending enrollments left to expire.
# An EK belongs to one active agent at most (409 ek_in_use, at enrollment and at activation);
# pending enrollments are capped per EK (429 too_many_pending, nothing stored) and expire
# after --pending-ttl (409 enrollment_expired when activated later). The overall cap is the
# unit test's (tests/unit/test_store.c, "enrollment limits").
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

start_verifier "$W/v" "${VARGS[@]}" || { fail "verifier starts"; finish; exit 1; }
# ids PREFIX: "id:state ..." of the agents whose id starts with PREFIX ("API-ERROR" if the
# listing fails: an empty answer must mean no such agent, never a failed call).
ids() {
	local j
	j=$(op /v1/agents) && jq -e .agents >/dev/null <<<"$j" || { echo API-ERROR; return; }
	jq -r --arg p "$1" '[.agents[] | select(.agent_id | startswith($p)) | "\(.agent_id):\(.state)"] | join(" ")' <<<"$j"
}
init() { "$SA" init "$W/a-$1" --ca-key "$W/ekca/ca-key.pem" --ca-cert "$W/ekca/ca.pem"; }

# --- one TPM, one agent ---------------------------------------------------------------------
agent web-01 || { finish; exit 1; }
sa enroll "$W/a-web-01" --verifier "$URL" --cacert "$CA" --id db-01
check_eq "the same EK and AK enrolled as a second id: 409 ek_in_use" "409 ek_in_use" "$R_STATUS $(err_code)"
check_eq "db-01 is not stored" "" "$(ids db-)"
trusted "web-01 is still trusted" web-01

# Two pending ids of one TPM, both activating: exactly one becomes active, the other is
# refused at enrollment or at activation, whichever it reaches after the winner's activation.
init s || { fail "softagent init"; finish; exit 1; }
"$SA" enroll "$W/a-s" --verifier "$URL" --cacert "$CA" --id s-1 --sleep 1 >"$W/s1.out" 2>>"$W/softagent.err" &
s1=$!
for _ in $(seq 1 100); do [[ -n $(ids s-1) ]] && break; sleep 0.05; done
check "s-1 is enrolled ($(ids s-1)) before s-2 enrolls" grep -qE '^s-1:(pending|active)$' <<<"$(ids s-1)"
sa enroll "$W/a-s" --verifier "$URL" --cacert "$CA" --id s-2
wait "$s1"
line1=$(tail -n 1 "$W/s1.out")
got="s-2 $R_STATUS $(err_code) / s-1 $(cut -d' ' -f2 <<<"$line1") $(cut -d' ' -f3- <<<"$line1" | jq -r '.error.code // empty')"
case "$(ids s-)" in
"s-1:active s-2:pending" | "s-1:active") verdict_s="s-1" ;;
"s-1:pending s-2:active" | "s-2:active") verdict_s="s-2" ;;
*) verdict_s="neither or both: $(ids s-)" ;;
esac
check "exactly one of s-1, s-2 is active ($verdict_s; $got)" grep -qxE 's-[12]' <<<"$verdict_s"
check "the other was refused with 409 ek_in_use ($got)" grep -q '409 ek_in_use' <<<"$got"

# --- a flood of pending enrollments from one EK -------------------------------------------------
# (The issue's reproduction used 150 ids; 40 show the cap as well in a third of the time.)
FLOOD=40
init f || { fail "softagent init"; finish; exit 1; }
: >"$W/flood"
for i in $(seq 1 $FLOOD); do
	sa enroll "$W/a-f" --verifier "$URL" --cacert "$CA" --id "flood-$i" --wrong-secret
	echo "$R_STATUS $(err_code)" >>"$W/flood"
	[[ $R_STATUS == 429 ]] && refusal=$R_BODY
done
check_eq "$FLOOD enrollments of one EK never activated: 4 kept pending" 4 "$(ids flood- | wc -w)"
hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$VPID/status")
check_rss "the verifier's peak RSS after the flood is $((hwm / 1024)) MiB (< 64 MiB)" "$hwm" 65536
check_eq "the first 4 were enrolled (their activation with a wrong secret failed)" \
	"4 403 activation_failed" "$(head -n 4 "$W/flood" | sort | uniq -c | awk '{ print $1, $2, $3 }')"
check_eq "the $((FLOOD - 4)) others: 429 too_many_pending" "$((FLOOD - 4)) 429 too_many_pending" \
	"$(tail -n +5 "$W/flood" | sort | uniq -c | awk '{ print $1, $2, $3 }')"
check "the refusal says to activate one or wait for the expiry" \
	grep -q 'activate one or let them expire (600 s)' <<<"$(jq -r .error.message <<<"${refusal:-{\}}")"
sa enroll "$W/a-f" --verifier "$URL" --cacert "$CA" --id flood-2
check_eq "a pending id of that EK may still enroll again and activate" "200" "$R_STATUS"
check_eq "which takes the EK: the other pending ids cannot activate it" \
	"flood-1:pending flood-2:active flood-3:pending flood-4:pending" "$(ids flood-)"

# --- pending enrollments expire ---------------------------------------------------------------
# 4 s to live: an enrollment and its activation take a fraction of that even on a loaded machine.
start_verifier "$W/v2" "${VARGS[@]}" --pending-ttl 4 || { fail "verifier with --pending-ttl 4 starts"; finish; exit 1; }
init e || { fail "softagent init"; finish; exit 1; }
sa enroll "$W/a-e" --verifier "$URL" --cacert "$CA" --id late --sleep 6
check_eq "activated 6 s after enrolling, with a 4 s time to live: 409 enrollment_expired" \
	"409 enrollment_expired" "$R_STATUS $(err_code)"
check_eq "it stays pending (expired)" "late:pending" "$(ids late)"
init g || { fail "softagent init"; finish; exit 1; }
sa enroll "$W/a-g" --verifier "$URL" --cacert "$CA" --id next
check_eq "the next enrollment is served" 200 "$R_STATUS"
check_eq "and deleted the expired one" "" "$(ids late)"
sa enroll "$W/a-e" --verifier "$URL" --cacert "$CA" --id late
check_eq "enrolling again in time works" "200 late:active" "$R_STATUS $(ids late)"
finish
