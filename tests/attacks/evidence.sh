#!/usr/bin/env bash
# Attack matrix, evidence: a compromised or impersonated agent sends quotes and IMA lists
# crafted to be believed. Each case expects a refusal (HTTP error code, nothing stored) or an
# untrusted verdict with a named reason (only that verdict stored: boot, expected offset
# unchanged), and an honest round afterwards is trusted again where the attack left no
# violation behind. Agents are tests/tools/softagent; the verifier is the real one.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

start_verifier "$W/v" "${VARGS[@]}" || { fail "verifier starts"; finish; exit 1; }
agent a || { finish; exit 1; }
agent b || { finish; exit 1; }
A3=(--append "$APP1" --append "$APP2" --append "$APP1") # three new, allowed entries

# --- nonces ---------------------------------------------------------------------------------
before=$(state a)
sa round "$W/a-a" --attack replay
check_eq "replayed evidence body: 409 nonce_reused" "409 nonce_reused" "$R_STATUS $(err_code)"
check_eq "replayed body: only the first (trusted) verdict stored" "$(state_plus_one "$before")" "$(state a)"
refused "another agent's nonce" a 400 nonce_unknown --attack foreign-nonce --other-id b
refused "empty nonce" a 400 bad_request --attack nonce-empty
refused "65-byte nonce" a 400 bad_request --attack nonce-65
refused "15-byte nonce" a 400 bad_request --attack nonce-15
untrusted "quote over another nonce than the one sent" a nonce_mismatch --attack quote-nonce
trusted "after the nonce attacks: an honest round is trusted" a

# --- who signed, what was quoted --------------------------------------------------------------
refused "quote signed by a random key" a 400 bad_signature --attack ak-random
refused "evidence for agent a signed by b's enrolled AK" a 400 bad_signature --attack ak-other --other-dir "$W/a-b"
untrusted "PCR selection other than requested (0-11)" a pcr_selection_mismatch --attack pcr-selection
untrusted "PCR selection without PCR 10" a pcr_selection_mismatch --attack pcr-selection-drop10
untrusted "reported PCR 10 differs from pcrDigest" a pcr_digest_mismatch --attack pcr-digest
untrusted "reported PCR 0 differs from pcrDigest" a pcr_digest_mismatch --attack pcr-digest-boot
untrusted "sha1 bank matches the list, sha256 bank does not" a pcr_mismatch "${A3[@]}" --attack bank-split
trusted "after the quote attacks: an honest round is trusted" a

# --- the IMA list -----------------------------------------------------------------------------
list_before=$(state a)
list_before=${list_before% verdicts=*}
untrusted "reordered entries" a pcr_mismatch "${A3[@]}" --attack reorder
untrusted "truncated list (last entry dropped)" a pcr_mismatch "${A3[@]}" --attack truncate
untrusted "middle entries dropped" a pcr_mismatch "${A3[@]}" --attack drop-middle
untrusted "entry edited without fixing its template hash" a log_corrupt "${A3[@]}" --attack edit-raw
untrusted "log_offset beyond what the verifier expects" a log_offset_mismatch --attack offset-ahead
untrusted "log_offset before what the verifier expects" a log_offset_mismatch --attack offset-behind
trusted "after the list attacks: the untouched entries are trusted" a
check_eq "and the verifier took the 12 true entries those rounds appended" \
	$((${list_before#*next=} + 12)) "$(jq .next_offset <<<"$R_BODY")"
untrusted "IMA record with template data length 0xffffffff" a log_corrupt --attack record-len-overflow
untrusted "IMA record with template name length 0xffffffff" a log_corrupt --attack name-len-overflow
untrusted "IMA field length 0xffffffff inside the template data" a log_corrupt --attack field-len-overflow
trusted "after the length attacks: an honest round is trusted" a

# --- the TPM clock ----------------------------------------------------------------------------
# (clock-back first: it steps just below the clock of the last quote the verifier accepted)
untrusted "TPM clock going backwards without a reset" a clock_rollback --attack clock-back
untrusted "resetCount going backwards" a reset_count_rollback --attack reset-back
untrusted "restartCount going backwards" a restart_count_rollback --attack restart-back
trusted "after the clock attacks: an honest round is trusted" a

# --- a reboot ---------------------------------------------------------------------------------
boot_before=$(op /v1/agents/a | jq .boot_number)
"$SA" reboot "$W/a-a"
sa round "$W/a-a" --attack offset-ahead
check_eq "after a reboot, evidence not from entry 0: untrusted (reboot)" "200 untrusted reboot" \
	"$R_STATUS $(verdict) $(reasons | cut -d, -f1)"
sa round "$W/a-a"
check_eq "after a reboot, the new boot from entry 0: trusted" "200 trusted 1" \
	"$R_STATUS $(verdict) $(jq .next_offset <<<"$R_BODY")"
check_eq "a reboot starts one new boot session" $((boot_before + 1)) "$(op /v1/agents/a | jq .boot_number)"

# --- entries the PCR covers, so only the policy can judge them ---------------------------------
agent f && judged "fabricated entry appended, PCR 10 extended to match" f not_in_allowlist 1 --attack fabricate
agent e && untrusted "entry edited and re-hashed (PCR no longer matches)" e digest_mismatch "${A3[@]}" --attack edit
check "the edited entry also makes no prefix match" grep -q pcr_mismatch <<<"$(reasons)"
agent g && judged "a boot_aggregate entry in the middle of the list" g not_in_allowlist 1 --attack boot-aggregate-middle
agent h && judged "a violation entry (ToMToU/open_writers)" h violation_entry 1 --violation /etc/shadow
sa round "$W/a-h"
check_eq "a later clean round stays untrusted while the violation is open" "untrusted open_violations" \
	"$(verdict) $(reasons | cut -d, -f1)"

finish
