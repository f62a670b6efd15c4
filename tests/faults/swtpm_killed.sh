#!/usr/bin/env bash
# swtpm killed under a running attestd (daemon mode, --interval 1, a real verifier): attestd
# logs the TPM error, keeps running, retries with a growing backoff, and recovers by itself
# when the TPM is back. A restarted swtpm is a reboot (PCRs reset, resetCount up): PCR 10 is
# extended again to follow the same list, as the kernel would after booting, and the next
# trusted verdict belongs to a second boot session.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

IMAGEN=$B/tools/imagen
ATTESTCTL=$B/attestctl
ATTESTD=$B/attestd
VERIFIER=$B/verifier
need_cmds swtpm swtpm_setup tpm2_pcrextend curl jq
need_built "$IMAGEN" "$ATTESTCTL" "$ATTESTD" "$VERIFIER"

W=$T_TMP
swtpm_with_ek_ca "$W" || { finish; exit 1; }
TPM_PID=$SWTPM_PID

"$IMAGEN" --entries 40 --template ima-ng --hash sha256 --zero-boot-pcrs --seed 7 \
	--out "$W/ima" --tpm2-extend-script "$W/ext" >/dev/null
# PCR 10 follows the whole list, as after a boot.
# shellcheck disable=SC2046 # one PCR:alg=digest argument per word
extend_all() { tpm2_pcrextend $(cat "$W/ext") >/dev/null; }
extend_all
"$ATTESTCTL" policy-learn "$W/ima" --out "$W/policy.json" 2>/dev/null

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/token"
up=no
start_verifier "$W/verifier" --ek-ca "$W/ek-ca.pem" --policy "$W/policy.json" \
	--operator-token-file "$W/token" && up=yes
check_eq "verifier starts" yes "$up"
[[ $up == yes ]] || { finish; exit 1; }

start_agent host-1 "$W/a1" --ima-list "$W/ima" --interval 1
# wait_log PATTERN FROM SECONDS: PATTERN appears in attestd's log after line FROM.
wait_log() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		# Not `tail | grep -q`: grep leaving early kills tail, and pipefail fails the match.
		grep -q "$1" < <(tail -n +"$(($2 + 1))" "$ALOG") && return 0
		kill -0 "$APID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
loglines() { wc -l <"$ALOG"; }
check "attestd daemon: enrolled and trusted" wait_log 'verdict trusted' 0 30
n0=$(loglines)
check "attestd daemon: attests again a second later" wait_log 'verdict trusted' "$n0" 10

# The TPM dies.
kill -KILL "$TPM_PID"
wait "$TPM_PID" 2>/dev/null
n_kill=$(loglines)
check "attestd logs the TPM error" wait_log 'tpm .*failed\|cannot open tpm tcti' "$n_kill" 15
check "attestd logs the failed round and its retry" wait_log 'round failed.*retrying in' "$n_kill" 15
# Down long enough for three retries: the delays must grow (1 s, 2 s, 4 s, +-20%).
wait_log 'round failed.*retrying in' "$(($(grep -n 'round failed' "$ALOG" | tail -n 1 | cut -d: -f1)))" 10
wait_log 'round failed.*retrying in' "$(($(grep -n 'round failed' "$ALOG" | tail -n 1 | cut -d: -f1)))" 10
delays=$(tail -n +"$((n_kill + 1))" "$ALOG" | grep -o 'retrying in [0-9]* ms' | awk '{ print $3 }' | tr '\n' ' ')
echo "retry delays while the TPM is down: $delays"
check "at least three retries while the TPM is down" test "$(wc -w <<<"$delays")" -ge 3
check "retry delays grow (backoff): $delays" \
	awk -v d="$delays" 'BEGIN { n = split(d, a, " "); for (i = 2; i <= 3; i++) if (a[i] <= a[i-1]) exit 1; exit n < 3 }'
check "no verdict while the TPM is down" bash -c "! tail -n +$((n_kill + 1)) '$ALOG' | grep -q 'verdict trusted'"
check "attestd keeps running without its TPM" kill -0 "$APID"

# The TPM is back: a reboot. PCR 10 follows the list again, then attestd recovers by itself.
check "swtpm restarts on the same state and port" start_swtpm "$W/tpm"
extend_all
n_back=$(loglines)
t_back=$SECONDS
check "attestd recovers by itself: a trusted verdict after the TPM is back" \
	wait_log 'verdict trusted' "$n_back" 40
echo "recovered $((SECONDS - t_back)) s after the TPM came back"
check_eq "the verifier saw a second boot session" 2 "$(op /v1/agents/host-1 | jq -r .boot_number)"
check_eq "the agent's last verdict is trusted" trusted \
	"$(op /v1/agents/host-1/verdicts | jq -r '.verdicts[0] | if .trusted then "trusted" else "untrusted" end')"
check "attestd never exited" kill -0 "$APID"
finish
