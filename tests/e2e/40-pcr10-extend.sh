#!/usr/bin/env bash
# PCR 10 extended from guest user space (tests/tools/tpm_pcr_extend through /dev/tpmrm0, as
# root could): the IMA list no longer replays to the quoted PCR 10 -> pcr_mismatch, and it
# stays so on every later round (the PCR cannot be rolled back).
set -uo pipefail
. "$(dirname "$0")/common.bash"
e2e_prepare

e2e_boot pcr10 e2e-pcr10 attest.e2e=pcr10 || e2e_abort "guest boots"
e2e_check_wait "trusted before the extend" '[.verdicts[] | select(.trusted)] | length > 0' \
	/v1/agents/e2e-pcr10/verdicts
e2e_console pcr10 'E2E-ACTION-DONE pcr10' 60
check "the guest extended PCR 10 from user space" grep -q '^extended pcr 10' "$W/vm-pcr10/serial.log"
e2e_check_wait "an untrusted verdict follows" '[.verdicts[] | select(.trusted | not)] | length > 0' \
	/v1/agents/e2e-pcr10/verdicts
bad=$(e2e_verdicts e2e-pcr10 | jq -c '[.verdicts[] | select(.trusted | not)][-1]')
check_eq "reason pcr_mismatch" 1 "$(jq '[.reasons[] | select(.code == "pcr_mismatch")] | length' <<<"$bad")"
check_eq "not blamed on the policy: no entry outside it" 0 \
	"$(jq '[.reasons[] | select(.code == "not_in_allowlist" or .code == "digest_mismatch")] | length' <<<"$bad")"
n=$(e2e_verdicts e2e-pcr10 | jq '.verdicts | length')
e2e_wait "two more verdicts" ".verdicts | length >= $((n + 2))" /v1/agents/e2e-pcr10/verdicts
check_eq "later rounds stay untrusted with pcr_mismatch" 0 \
	"$(e2e_verdicts e2e-pcr10 | jq --argjson id "$(jq .id <<<"$bad")" \
		'[.verdicts[] | select(.id > $id) | select(.trusted or ([.reasons[].code] | index("pcr_mismatch") | not))] | length')"
check_eq "agent's last verdict: untrusted" untrusted "$(e2e_api /v1/agents/e2e-pcr10 | jq -r .last_verdict)"
e2e_stop pcr10
finish
