#!/usr/bin/env bash
# A first round larger than one request (attestd sends at most IMALIST_ROUND_MAX, 16 MiB, of
# entries a round): 160,000 entries (17.7 MB) that a TCP swtpm's PCR 10 follows, attestd
# --once against a real verifier. The first round sends entries 0-N with "log_more" and the
# verifier keeps them unconfirmed (log_incomplete, next_offset N+1); the second sends the rest
# and the quote confirms the whole chain: trusted. Before, every round was pcr_mismatch and the
# next one started again from entry 0: such a machine never attested. The daemon sends the
# rest at once, not after its interval. About 35 s (the extends).
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

IMAGEN=$B/tools/imagen
EXTEND=$B/tools/tpm_pcr_extend
ATTESTD=$B/attestd
need_built "$IMAGEN" "$EXTEND" "$ATTESTD" "$B/attestctl" "$B/verifier"

W=$T_TMP
N=160000
swtpm_with_ek_ca "$W" || { finish; exit 1; }
"$IMAGEN" --entries "$N" --template ima-ng --hash sha256 --zero-boot-pcrs --seed 5 \
	--out "$W/ima" --tpm2-extend-script "$W/ext" >/dev/null
check "a list larger than one request (16 MiB)" test "$(stat -c %s "$W/ima")" -gt $((16 * 1024 * 1024))
check "the TPM's PCR 10 follows it" bash -c "'$EXTEND' --tcti '$TCTI' --script '$W/ext' >/dev/null"
"$B/attestctl" policy-learn "$W/ima" --out "$W/policy.json" 2>/dev/null
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/token"
check "verifier starts" start_verifier "$W/v" --ek-ca "$W/ek-ca.pem" --policy "$W/policy.json" \
	--operator-token-file "$W/token"

attest() {
	"$ATTESTD" --config /dev/null --once --verifier "$URL" --ca "$CA" --agent-id big-1 \
		--tcti "$TCTI" --ima-list "$W/ima" --event-log none --state-dir "$W/a" \
		>"$W/out" 2>"$W/attestd.log"
}

attest
check_eq "the first part: untrusted (exit 1)" 1 $?
check "its reason is log_incomplete, not pcr_mismatch" grep -q 'reasons=log_incomplete$' "$W/out"
check "attestd said more follows" grep -q 'more next round' "$W/attestd.log"
first=$(sed -n 's/.* next_offset=\([0-9]*\).*/\1/p' "$W/out")
check "the verifier kept the part: next_offset past entry 0 and before the end ($first)" \
	test "${first:-0}" -gt 0 -a "${first:-0}" -lt "$N"
check "the evidence said log_more" jq -e >/dev/null '.log_more == true and .log_offset == 0' "$W/a/last-evidence.json"
attest
check_eq "the rest: the quote confirms the whole chain, trusted (exit 0)" 0 $?
check "entries $first-$((N - 1)) were sent" grep -q "sent entries $first-$((N - 1)) log_offset=$first" "$W/attestd.log"
check_eq "the verifier expects entry $N next" "$N" "$(op /v1/agents/big-1 | jq -r .next_entry)"
attest
check_eq "the next round: trusted" 0 $?

# The daemon sends the rest at once, not after its interval (60 s here): a new verifier (one
# TPM is one agent), so its first round starts from entry 0 again.
stop_pid "$VPID"
check "a second verifier starts" start_verifier "$W/v2" --ek-ca "$W/ek-ca.pem" \
	--policy "$W/policy.json" --operator-token-file "$W/token"
start_agent big-1 "$W/a2" --ima-list "$W/ima" --interval 60 --watch 0
for ((i = 0; i < 300; i++)); do
	grep -q 'verdict trusted' "$ALOG" && break
	sleep 0.1
done
check "the daemon: the rest sent at once" grep -q 'sending the rest now' "$ALOG"
check "the daemon: trusted within 30 s, not after its 60 s interval" grep -q 'verdict trusted' "$ALOG"
stop_pid "$APID"

finish
