#!/usr/bin/env bash
# Deleting measurement records from kernel memory (attestd/imatrim.h), host side, no VM: a fake
# securityfs directory (binary_runtime_measurements from entry D on, runtime_measurements_count,
# runtime_measurements_deleted) whose kernel this test plays after each `attestd --once`: what
# attestd wrote into runtime_measurements_deleted is carried out on the list. A TCP swtpm's PCR
# 10 follows a synthetic list, a real verifier judges. Scenarios: only acknowledged records are
# deleted, bounded by --ima-keep-records, exported first; a policy change judges the whole boot
# again from the export and the kernel's list (trusted); an edited export fails the replay; a
# missing export is log_records_deleted (untrusted, the replay kept) until it is restored; a
# crash between export and deletion is reconciled at the next start; a verifier that lost its
# state replays from the export, and says log_records_deleted without it.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

IMAGEN=$B/tools/imagen
ATTESTCTL=$B/attestctl
ATTESTD=$B/attestd
need_built "$IMAGEN" "$ATTESTCTL" "$ATTESTD" "$B/verifier"

W=$T_TMP
swtpm_with_ek_ca "$W" || { finish; exit 1; }

# list N: the first N entries of one deterministic list (a longer one extends a shorter one).
list() { "$IMAGEN" --entries "$1" --template ima-ng --hash sha256 --zero-boot-pcrs --seed 11 \
	--out "$W/list$1" --tpm2-extend-script "$W/ext$1" >/dev/null; }
# extend FROM TO: PCR 10 follows entries [FROM, TO) of the list, as the kernel would.
# shellcheck disable=SC2046 # one PCR:alg=digest argument per word
extend() { tpm2_pcrextend $(sed -n "$(($1 + 1)),$2p" "$W/ext$2") >/dev/null; }
bytes() { if (($1 == 0)); then echo 0; else stat -c %s "$W/list$1"; fi; }
for n in 20 30 40 50 60 62 70; do list "$n"; done

S=$W/securityfs
mkdir -p "$S"
MEASURED=0
# kernel N D: N entries measured since boot, D of them deleted: what securityfs shows.
kernel() {
	MEASURED=$1
	tail -c +$(($(bytes "$2") + 1)) "$W/list$1" >"$S/binary_runtime_measurements"
	echo "$1" >"$S/runtime_measurements_count"
	echo "$2" >"$S/runtime_measurements_deleted"
}
# The kernel's side of attestd's write to runtime_measurements_deleted (H: entries < H go).
deleted() { tr -d '\n' <"$S/runtime_measurements_deleted"; }
kernel_follows() { kernel "$MEASURED" "$(deleted)"; }

"$ATTESTCTL" policy-learn "$W/list70" --out "$W/policy.json" 2>/dev/null
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/token"
vstart() {
	start_verifier "$W/$1" --ek-ca "$W/ek-ca.pem" --policy "$W/policy.json" \
		--operator-token-file "$W/token"
}
check "verifier starts" vstart v1

EXPORT=$W/a/ima-exported.bin
# attest: one round (--once) with at most 10 records kept in kernel memory, then the kernel
# carries out the deletion attestd asked for. The verdict line in $W/out, its status returned.
attest() {
	"$ATTESTD" --config /dev/null --once --verifier "$URL" --ca "$CA" --agent-id trim-1 \
		--tcti "$TCTI" --ima-list "$S/binary_runtime_measurements" --ima-keep-records 10 \
		--event-log none --state-dir "$W/a" >"$W/out" 2>"$W/attestd.log"
	local rc=$?
	cat "$W/attestd.log" >>"$W/attestd.all.log"
	kernel_follows
	return $rc
}
put_policy() { # put_policy N: version N+1 of the default policy (one more file it allows)
	jq --arg p "/opt/unused-$1" '.digests[$p] = ["sha256:" + ("ab" * 32)]' "$W/policy.json" |
		curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -X PUT \
			--data-binary @- -o /dev/null -w '%{http_code}' "$URL/v1/policies/default"
}
exported_is() { cmp -s "$EXPORT" <(head -c "$(bytes "$1")" "$W/list70"); }
reasons() { op /v1/agents/trim-1/verdicts | jq -r '[.verdicts[0].reasons[].code] | join(",")'; }

# 1. 40 measured: trusted; next_offset 40 acknowledges 0-39, 10 are kept: 0-29 exported, deleted
kernel 40 0
extend 0 40
attest
check_eq "first round: trusted" 0 $?
check_eq "entries 0-29 deleted (40 acknowledged, 10 kept)" 30 "$(deleted)"
check "the export holds entries 0-29, verbatim" exported_is 30
check "the kernel's list now starts at entry 30" \
	cmp -s "$S/binary_runtime_measurements" <(tail -c +$(($(bytes 30) + 1)) "$W/list40")

# 2. 20 more: sent from entry 40 (file position 10), trusted; 40-49 exported and deleted
kernel 60 30
extend 40 60
attest
check_eq "grown list read past the deletion: trusted" 0 $?
check "entries 40-59 were sent" grep -q 'sent entries 40-59 log_offset=40' "$W/attestd.log"
# log_deleted only when the list starts after the entry asked for (the export lacks it): a
# verifier judges evidence that carries it even while a policy change waits for entry 0
check "sent from entry 40 as asked: no log_deleted" \
	test true = "$(jq '.log_offset == 40 and (has("log_deleted") | not)' "$W/a/last-evidence.json")"
check_eq "entries 0-49 deleted" 50 "$(deleted)"
check "the export holds entries 0-49" exported_is 50
attest
check_eq "nothing new: trusted, nothing more deleted (10 kept)" "0 50" "$? $(deleted)"

# 3. a policy change judges the whole boot again from entry 0: export + kernel, trusted
check_eq "a new version of the default policy" 200 "$(put_policy 1)"
attest
check_eq "rejudgement from entry 0, 0-49 from the export: trusted" 0 $?
check "entries 0-59 were sent" grep -q 'sent entries 0-59 log_offset=0' "$W/attestd.log"

# 4. an edited export: the replay fails against PCR 10
cp "$EXPORT" "$W/export.good"
printf 'X' | dd of="$EXPORT" bs=1 seek=$(($(bytes 20) - 3)) conv=notrunc status=none
check_eq "another new version of the policy" 200 "$(put_policy 2)"
attest
check_eq "an edited export: untrusted" 1 $?
check "the replay fails: pcr_mismatch" grep -q 'pcr_mismatch' <<<"$(reasons)"
cp "$W/export.good" "$EXPORT"
attest
check_eq "the export restored: trusted again" 0 $?

# 5. the export lost: log_records_deleted, untrusted, replay kept, nothing more deleted
mv "$EXPORT" "$W/export.saved"
check_eq "another new version of the policy" 200 "$(put_policy 3)"
attest
check_eq "the export lost and entry 0 asked for: untrusted" 1 $?
check_eq "the reason is log_records_deleted" log_records_deleted "$(reasons)"
check "the evidence starts at entry 50 and says 50 were deleted" \
	test true = "$(jq '.log_offset == 50 and .log_deleted == 50' "$W/a/last-evidence.json")"
check "the detail says what the operator can do" grep -q "Restore attestd's export file" \
	<<<"$(op /v1/agents/trim-1/verdicts | jq -r '.verdicts[0].reasons[0].detail')"
check "attestd says the export lacks them" grep -q 'lacks them' "$W/attestd.log"
kernel 70 50
extend 60 70
attest
check_eq "10 more measured, still without the export: untrusted, nothing deleted" \
	"1 log_records_deleted 50" "$? $(reasons) $(deleted)"
mv "$W/export.saved" "$EXPORT"
attest
check_eq "the export restored: the boot judged again from entry 0, trusted" 0 $?
check "entries 0-69 were sent" grep -q 'sent entries 0-69 log_offset=0' "$W/attestd.log"
check_eq "and deletion goes on: 0-59 deleted" 60 "$(deleted)"
check "the export holds entries 0-59" exported_is 60

# 6. a crash between an export and its deletion: the next start cuts the export back
tail -c +$(($(bytes 60) + 1)) "$W/list62" >>"$EXPORT" # entries 60-61 exported, not deleted
attest
check_eq "after a crash between export and deletion: trusted" 0 $?
check "the export was cut back to the kernel's deleted count (60)" exported_is 60
check "attestd said so" grep -q 'cutting them off' "$W/attestd.log"

# 7. a verifier that lost its state: a new one replays from the export; without it, refuses
stop_pid "$VPID"
check "a new verifier, empty state" vstart v2
attest
check_eq "the new verifier replays entries 0-69 from the export and the kernel: trusted" 0 $?
check "entries 0-69 were sent" grep -q 'sent entries 0-69 log_offset=0' "$W/attestd.log"
mv "$EXPORT" "$W/export.saved"
stop_pid "$VPID"
check "another new verifier, empty state" vstart v3
attest
check_eq "a new verifier and no export: untrusted" 1 $?
check_eq "the reason is log_records_deleted" log_records_deleted "$(reasons)"
check "the detail says this verifier holds no replay of this boot" grep -q 'no replay of this boot' \
	<<<"$(op /v1/agents/trim-1/verdicts | jq -r '.verdicts[0].reasons[0].detail')"
mv "$W/export.saved" "$EXPORT"
attest
check_eq "the export restored: trusted" 0 $?

finish
