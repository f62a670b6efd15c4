#!/usr/bin/env bash
# A guest booted with ima_tpm=7 (a TPM chip that does not exist): IMA runs in TPM-bypass
# mode, the boot_aggregate is zero and PCR 10 is never extended, while attestd still quotes
# chip 0. The verdict is untrusted with tpm_bypass, and the detail tells the operator why.
set -uo pipefail
. "$(dirname "$0")/common.bash"
e2e_prepare

e2e_boot bypass e2e-bypass ima_tpm=7 || e2e_abort "guest boots"
check "kernel went into TPM-bypass" grep -q 'activating TPM-bypass' "$W/vm-bypass/serial.log"
e2e_check_wait "agent enrolled (chip 0 still works)" '.state == "active"' /v1/agents/e2e-bypass
e2e_check_wait "a verdict" '.verdicts | length > 0' /v1/agents/e2e-bypass/verdicts
first=$(e2e_verdicts e2e-bypass | jq -c '.verdicts[-1]')
check_eq "ima_tpm=7: untrusted" untrusted "$(jq -r .verdict <<<"$first")"
r=$(jq -c '[.reasons[] | select(.code == "tpm_bypass")][0]' <<<"$first")
check_eq "reason tpm_bypass at entry 0" 0 "$(jq .entry <<<"$r")"
check "the detail says what to check (ima_tpm= and the TPM driver)" grep -q 'ima_tpm=' <<<"$(jq -r .detail <<<"$r")"
check_eq "the agent is not trusted" untrusted "$(e2e_api /v1/agents/e2e-bypass | jq -r .last_verdict)"
e2e_stop bypass
finish
