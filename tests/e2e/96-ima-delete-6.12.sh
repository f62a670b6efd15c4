#!/usr/bin/env bash
# tests/e2e/85-ima-delete.sh on the 6.12 series (kernel-patches/6.12/0009) with the TPM's HMAC
# sessions on the kernel's bus (KERNEL_TREE=6.12 KERNEL_VARIANT=hmac): attestd deletes what its
# verifier confirmed while every IMA extend goes through a session, and the rest of that scenario
# (the export served from entry 0, a tampered copy caught, a verifier that lost its state). After
# tests/e2e/95-kernel-6.12.sh, whose kernels tests/run builds in the background.
export KERNEL_TREE=6.12 KERNEL_VARIANT=hmac
exec "$(dirname "$0")/85-ima-delete.sh"
