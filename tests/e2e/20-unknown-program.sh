#!/usr/bin/env bash
# An unknown program executed in an attested guest: the next verdict is untrusted with
# not_in_allowlist naming it, and the operator's violation list shows its path and digest.
set -uo pipefail
. "$(dirname "$0")/common.bash"
e2e_prepare

e2e_boot unknown e2e-unknown attest.e2e=unknown || e2e_abort "guest boots"
e2e_check_wait "trusted before the guest misbehaves" '[.verdicts[] | select(.trusted)] | length > 0' \
	/v1/agents/e2e-unknown/verdicts
e2e_check_wait "an untrusted verdict follows" '[.verdicts[] | select(.trusted | not)] | length > 0' \
	/v1/agents/e2e-unknown/verdicts
check "the guest ran the unknown program" grep -q 'e2e: an unknown program ran' "$W/vm-unknown/serial.log"
v=$(e2e_verdicts e2e-unknown)
bad=$(jq -c '[.verdicts[] | select(.trusted | not)][-1]' <<<"$v")
check_eq "the verdict before it was trusted" true \
	"$(jq --argjson id "$(jq .id <<<"$bad")" '[.verdicts[] | select(.id < $id)] | all(.trusted)' <<<"$v")"
check_eq "reason not_in_allowlist names /root/e2e-unknown.sh" 1 \
	"$(jq '[.reasons[] | select(.code == "not_in_allowlist" and (.detail | startswith("/root/e2e-unknown.sh ")))] | length' <<<"$bad")"
check_eq "no other reason (quote and replay fine)" '["not_in_allowlist"]' \
	"$(jq -c '[.reasons[].code] | unique' <<<"$bad")"
viol=$(e2e_api '/v1/violations?agent=e2e-unknown')
one=$(jq -c '[.violations[] | select(.path == "/root/e2e-unknown.sh")][0]' <<<"$viol")
check_eq "GET /v1/violations lists the program" not_in_allowlist "$(jq -r .reason <<<"$one")"
check_eq "violation is open for review" open "$(jq -r .state <<<"$one")"
check "violation carries the sha256 the guest measured" grep -qE '^sha256:[0-9a-f]{64}$' <<<"$(jq -r .digest <<<"$one")"
want=$(printf '#!/bin/sh\necho "e2e: an unknown program ran"\n' | sha256sum | cut -d' ' -f1)
check_eq "that digest is the program's content" "sha256:$want" "$(jq -r .digest <<<"$one")"
check_eq "violation points at the verdict's entry" "$(jq '[.reasons[] | select(.code == "not_in_allowlist")][0].entry' <<<"$bad")" \
	"$(jq .entry <<<"$one")"
check_eq "agent shows one open violation" 1 "$(e2e_api /v1/agents/e2e-unknown | jq .open_violations)"
check "attestctl violations shows it" bash -c "'$B/attestctl' violations --verifier https://127.0.0.1:$VPORT \
	--ca '$W/verifier/ca.pem' --token-file '$W/token' | grep -q '/root/e2e-unknown.sh'"
e2e_stop unknown
finish
