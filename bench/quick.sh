#!/usr/bin/env bash
# The `bench` layer of `make test`: every benchmark at small sizes (QUICK=1), under 2 minutes.
QUICK=1 exec "$(dirname "$0")/run.sh" "$@"
