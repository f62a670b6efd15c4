#!/usr/bin/env bash
# The firmware event log on the host, no VM: a TCP swtpm whose PCR 0-9 are extended to follow
# a real OVMF guest log (tests/data/eventlog/guest-ovmf.bin), a synthetic IMA list whose
# boot_aggregate is of those PCRs, and `attestd --once --event-log` against a real verifier.
# Scenarios: the log replays and a boot policy learned from it passes (a learned kernel is
# {digest, name} alone, with --policy, and with a Keylime --policy); the log is sent once and
# then held by the verifier; a PCR extended after boot gives boot_log_mismatch in the next round;
# another kernel digest in the policy gives boot_not_in_policy naming PCR 4, approving it for the
# agent teaches its amendment's boot section (the next round is trusted, the shared policy and
# another agent on it unchanged) and `--scope policy` teaches the policy's; a command-line rule
# the measured command line breaks; a command line that is not the measured one; a corrupt log;
# no log at all.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

ATTESTCTL=$B/attestctl
ATTESTD=$B/attestd
IMAGEN=$B/tools/imagen
need_built "$IMAGEN" "$ATTESTCTL" "$ATTESTD" "$B/verifier"
LOG=$TOP/tests/data/eventlog/guest-ovmf.bin
CMDLINE=$TOP/tests/data/eventlog/guest-ovmf.cmdline

W=$T_TMP
swtpm_ca_init "$W/ca"
cat_ca() { cat "$W/ca/ca/issuercert.pem" "$W/ca/ca/swtpm-localca-rootca-cert.pem" >"$W/ek-ca.pem"; }

# tpm NAME: a fresh swtpm whose PCRs followed the OVMF boot of LOG, with an IMA list whose
# boot_aggregate binds to them (PCR 10 extended to match). Sets TCTI for that TPM.
tpm() {
	swtpm_manufacture "$W/tpm-$1" "$W/ca" || { fail "swtpm_setup $1"; return 1; }
	start_swtpm "$W/tpm-$1" || { fail "swtpm start $1"; return 1; }
	tpm_follow_eventlog "$LOG" || { fail "extend the boot PCRs of $1"; return 1; }
	"$IMAGEN" --entries 30 --template ima-ng --hash sha256 --boot-pcrs "$W/boot.pcrs" --seed 3 \
		--out "$W/ima" --tpm2-extend-script "$W/ext" >/dev/null
	# shellcheck disable=SC2046 # one PCR:alg=digest argument per word
	tpm2_pcrextend $(cat "$W/ext") >/dev/null || { fail "extend PCR 10 of $1"; return 1; }
}

"$ATTESTCTL" eventlog --replay "$LOG" >"$W/boot.pcrs"
check "the recorded OVMF log replays" test -s "$W/boot.pcrs"
tpm one || { finish; exit 1; }
cat_ca
for i in 0 4 7 9; do
	check_eq "swtpm PCR $i (sha256) follows the log" \
		"$(awk -v p="pcr$i" '$1 == p && $2 == "sha256" { print $3 }' "$W/boot.pcrs")" \
		"$(tpm2_pcrread "sha256:$i" | awk '/0x/ { print tolower(substr($3, 3)) }')"
done

"$ATTESTCTL" policy-learn "$W/ima" --out "$W/files.json" 2>/dev/null
"$ATTESTCTL" boot-policy learn "$LOG" --cmdline-file "$CMDLINE" --require ima_policy=tcb \
	--kernel-name "guest bzImage" --policy "$W/files.json" --out "$W/policy.json"
check_eq "boot-policy learn: a policy with a boot section" 1 "$(jq '.boot.kernels | length' "$W/policy.json")"
# One form for a learned kernel, {digest, name}, with or without --kernel-name and --policy;
# a Keylime policy given with --policy keeps the learned boot section (in the native form).
"$ATTESTCTL" boot-policy learn "$LOG" --out "$W/alone.json"
"$ATTESTCTL" boot-policy learn "$LOG" --policy "$W/files.json" --out "$W/merged.json"
check_eq "boot-policy learn alone: the kernel is {digest, name}, named by the log" \
	'"kernel"' "$(jq -c '.boot.kernels[0].name' "$W/alone.json")"
check_eq "boot-policy learn --policy: the kernel in the same form as alone" \
	"$(jq -c .boot "$W/alone.json")" "$(jq -c .boot "$W/merged.json")"
check_eq "boot-policy learn --kernel-name: the name given" \
	'"guest bzImage"' "$(jq -c '.boot.kernels[0].name' "$W/policy.json")"
"$ATTESTCTL" boot-policy learn "$LOG" --policy "$TOP/tests/data/keylime/runtime-policy-test.json" \
	--out "$W/keylime.json"
check_eq "boot-policy learn --policy KEYLIME: the boot section is kept" \
	"$(jq -c .boot "$W/alone.json")" "$(jq -c .boot "$W/keylime.json")"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/token"
check "verifier starts with the boot policy" start_verifier "$W/verifier" --ek-ca "$W/ek-ca.pem" \
	--policy "$W/policy.json" --operator-token-file "$W/token"
post() { curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o /dev/null -w '%{http_code}' -X POST "$URL$1"; }
# put_policy NAME FILE; assign AGENT NAME
put_policy() {
	curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o /dev/null -w '%{http_code}' \
		-X PUT --data-binary @"$2" "$URL/v1/policies/$1"
}
assign() {
	curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o /dev/null -w '%{http_code}' \
		-X PUT -d "{\"policy\": \"$2\"}" "$URL/v1/agents/$1/policy"
}

# attest ID STATE [ARGS...]: one round with the recorded log and command line unless ARGS say
# otherwise; the verdict line goes to $W/out.
attest() {
	local id=$1 state=$2
	shift 2
	"$ATTESTD" --config /dev/null --once --verifier "$URL" --ca "$CA" --agent-id "$id" --tcti "$TCTI" \
		--ima-list "$W/ima" --event-log "$LOG" --cmdline "$CMDLINE" --state-dir "$state" "$@" \
		>"$W/out" 2>>"$W/attestd.log"
}

# 1. the log replays to the quote, the boot policy passes, the summary says what booted
attest one "$W/a1"
check_eq "a boot as the policy learned it: trusted (exit 0)" 0 $?
agent=$(op /v1/agents/one)
check_eq "summary: the log replays" replays "$(jq -r .boot.status <<<"$agent")"
check_eq "summary: kernel digest (PCR 4)" \
	sha256:834c9fac477eecef074f8d88cd0a659fa58c978e308290c549731d854127d4bd "$(jq -r .boot.kernel.digest <<<"$agent")"
check_eq "summary: kernel file and name" "kernel|guest bzImage|true" \
	"$(jq -r '[.boot.kernel.file, .boot.kernel.name, .boot.kernel.allowed] | join("|")' <<<"$agent")"
check_eq "summary: Secure Boot off" off "$(jq -r .boot.secure_boot <<<"$agent")"
check_eq "summary: the command line, verified against PCR 9" "$(cat "$CMDLINE")|true" \
	"$(jq -r '[.boot.cmdline, .boot.cmdline_verified] | join("|")' <<<"$agent")"
check "summary: UEFI firmware with its volumes" grep -q '^UEFI, 2 firmware volumes' <<<"$(jq -r .boot.firmware <<<"$agent")"
"$ATTESTCTL" agent one --verifier "$URL" --ca "$CA" --token-file "$W/token" >"$W/agent.txt"
check "attestctl agent shows the kernel" grep -q '^kernel: *sha256:834c9fac.* from "kernel", "guest bzImage" (allowed)' "$W/agent.txt"
check "attestctl agent shows the verified command line" grep -q '^command line: .*ima_policy=tcb (verified against PCR 9)' "$W/agent.txt"
check_eq "summary: the log's SHA-256 and size, then when it arrived, after the summary's members" \
	"$(sha256sum <"$LOG" | cut -c1-64)|$(stat -c %s "$LOG")|log_sha256,log_bytes,received_at|number" \
	"$(jq -r '[.boot.log_sha256, .boot.log_bytes, (.boot | keys_unsorted[-3:] | join(",")),
		(.boot.received_at | type)] | join("|")' <<<"$agent")"
check "attestctl agent shows the log's events, size and arrival" grep -qE \
	"^boot log: +$(jq -r .boot.events <<<"$agent") events, $(stat -c %s "$LOG") bytes, received [0-9]{4}-" "$W/agent.txt"

# 2. the verifier holds the log: the next round does not carry it, and is still checked
n_sent=$(grep -c 'sending the firmware event log' "$W/attestd.log")
attest one "$W/a1"
check_eq "second round: trusted" 0 $?
check_eq "second round: the log was not sent again" "$n_sent" "$(grep -c 'sending the firmware event log' "$W/attestd.log")"
check_eq "second round's evidence has no boot_log" null "$(jq -r .boot_log "$W/a1/last-evidence.json")"

# 3. PCR 9 extended after boot: the stored log no longer replays to the quote
tpm2_pcrextend "9:sha256=$(printf 'late' | sha256sum | cut -c1-64),sha1=$(printf 'late' | sha1sum | cut -c1-40)" >/dev/null
attest one "$W/a1"
check_eq "PCR 9 extended after boot: untrusted (exit 1)" 1 $?
check "reason boot_log_mismatch" grep -q 'reasons=.*boot_log_mismatch' "$W/out"
check "the reason names PCR 9" bash -c "op() { curl -sS --cacert '$CA' -H 'Authorization: Bearer $(cat "$W/token")' '$URL'\$1; }; op /v1/agents/one/verdicts | jq -r '.verdicts[0].reasons[] | select(.code == \"boot_log_mismatch\") | .detail' | grep -q '^PCR 9 '"
check_eq "summary: mismatch" mismatch "$(op /v1/agents/one | jq -r .boot.status)"

# 4. another kernel in the policy: boot_not_in_policy naming PCR 4; approving teaches it
jq '.boot.kernels = ["sha256:'"$(printf 'another kernel' | sha256sum | cut -c1-64)"'"]' "$W/policy.json" >"$W/other-kernel.json"
check_eq "PUT a policy allowing another kernel" 200 "$(put_policy kern "$W/other-kernel.json")"
tpm two || { finish; exit 1; }
attest two "$W/a2"
check_eq "agent two enrolls, trusted under the learned policy" 0 $?
check_eq "assign it the policy with another kernel" 200 "$(assign two kern)"
attest two "$W/a2"
check_eq "another boot policy judges the same boot again: untrusted" 1 $?
check "reason boot_not_in_policy" grep -q 'reasons=.*boot_not_in_policy' "$W/out"
v=$(op '/v1/violations?agent=two' | jq -c '[.violations[] | select(.reason == "boot_not_in_policy")]')
check_eq "one stored violation, about the kernel" "boot:kernel" "$(jq -r '.[0].template' <<<"$v")"
check "its detail names PCR 4 and the image in words" bash -c "op() { curl -sS --cacert '$CA' -H 'Authorization: Bearer $(cat "$W/token")' '$URL'\$1; }; op /v1/agents/two/verdicts | jq -r '.verdicts[0].reasons[].detail' | grep -q '^PCR 4: EFI application \"kernel\" (1954816 bytes) sha256:834c9fac.* is not an allowed kernel'"
attest two "$W/a2"
check "the next round: judged once, still untrusted while it awaits review (open_violations)" \
	grep -q 'reasons=open_violations$' "$W/out"
KERNEL=sha256:834c9fac477eecef074f8d88cd0a659fa58c978e308290c549731d854127d4bd
# lists_kernel URL_PATH JQ_PATH: the policy document at URL_PATH lists the guest's kernel there
lists_kernel() { op "$1" | jq -e --arg k "$KERNEL" "$2 | index(\$k)" >/dev/null; }
kern_version() { op /v1/policies/kern/versions | jq '.versions[0].version'; }
kv=$(kern_version)
check_eq "approve the kernel (the default scope: this agent only)" 200 \
	"$(post "/v1/violations/$(jq -r '.[0].id' <<<"$v")/approve")"
check "the kernel is in agent two's amendment's boot section" \
	lists_kernel /v1/agents/two/amendment .amendment.boot.kernels
check_fails "and not in the shared boot policy" lists_kernel /v1/policies/kern .boot.kernels
check_eq "policy kern has no new version" "$kv" "$(kern_version)"
attest two "$W/a2"
check_eq "after approval: trusted, by its amendment" 0 $?
"$ATTESTCTL" amendment two --verifier "$URL" --ca "$CA" --token-file "$W/token" >"$W/amend.txt"
check "attestctl amendment shows the boot addition" \
	grep -q "^boot, allowed in addition to the policy's: .*834c9fac" "$W/amend.txt"

# 4b. another agent on the same policy is not covered by two's amendment; scope policy is
tpm seven || { finish; exit 1; }
attest seven "$W/a7"
check_eq "assign agent seven the policy with another kernel" 200 "$(assign seven kern)"
attest seven "$W/a7"
check_eq "agent seven, same kernel, same policy: untrusted (two's approval is two's alone)" 1 $?
check "reason boot_not_in_policy for seven" grep -q 'reasons=.*boot_not_in_policy' "$W/out"
v7=$(op '/v1/violations?agent=seven&state=open' | jq -r '[.violations[] | select(.reason == "boot_not_in_policy")][0].id')
"$ATTESTCTL" approve "$v7" --scope policy --verifier "$URL" --ca "$CA" --token-file "$W/token" >"$W/approve7.txt"
check_eq "approve --scope policy" 0 $?
check "the answer names policy kern and its new version" \
	grep -q "approved into policy kern: now version $((kv + 1))" "$W/approve7.txt"
check "the kernel is in the shared boot policy now" lists_kernel /v1/policies/kern .boot.kernels
attest seven "$W/a7"
check_eq "agent seven after the policy learned the kernel: trusted" 0 $?

# 5. a command-line rule the measured command line breaks
jq '.boot.cmdline = {"required": ["ima_policy=appraise_tcb"], "forbidden": ["panic"]}' "$W/policy.json" >"$W/rules.json"
check_eq "PUT a policy with command-line rules only" 200 "$(put_policy rules "$W/rules.json")"
tpm three || { finish; exit 1; }
attest three "$W/a3"
check_eq "assign agent three the rules" 200 "$(assign three rules)"
attest three "$W/a3"
check_eq "a command line the rules refuse: untrusted" 1 $?
check "the reason quotes the command line and the rule" bash -c "op() { curl -sS --cacert '$CA' -H 'Authorization: Bearer $(cat "$W/token")' '$URL'\$1; }; op /v1/agents/three/verdicts | jq -r '.verdicts[0].reasons[].detail' | grep -q 'PCR 9: the kernel command line \"console=ttyS0 .*\" lacks the required \"ima_policy=appraise_tcb\"'"

# 6. a command line that is not the measured one cannot be judged
echo "console=ttyS0 root=/dev/vda rw ima_policy=appraise_tcb" >"$W/lie"
tpm four || { finish; exit 1; }
attest four "$W/a4" --cmdline "$W/lie"
check_eq "a wrong command line passes a policy that lists the measured one (by digest)" 0 $?
check_eq "assign agent four the rules" 200 "$(assign four rules)"
attest four "$W/a4" --cmdline "$W/lie"
check_eq "a reported command line that is not the measured one: untrusted" 1 $?
check "reason boot_unverifiable" grep -q 'reasons=.*boot_unverifiable' "$W/out"
check_eq "summary: not verified" false "$(op /v1/agents/four | jq -r .boot.cmdline_verified)"

# 7. a corrupt log, and no log at all, under a boot policy
head -c 1000 "$LOG" >"$W/cut.bin"
tpm five || { finish; exit 1; }
attest five "$W/a5" --event-log "$W/cut.bin"
check_eq "a cut log: untrusted" 1 $?
check "reason boot_log_corrupt" grep -q 'reasons=.*boot_log_corrupt' "$W/out"
tpm six || { finish; exit 1; }
attest six "$W/a6" --event-log none
check_eq "no log under a boot policy: untrusted" 1 $?
check "reason boot_log_missing" grep -q 'reasons=.*boot_log_missing' "$W/out"
check_eq "no boot summary without a log" null "$(op /v1/agents/six | jq -r .boot)"
finish
