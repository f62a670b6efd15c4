#!/usr/bin/env bash
# The web page reads only members docs/openapi.json describes (tests/tools/ui_fields.py says
# how, and lists the names it reads that are not the API's).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
exec python3 tests/tools/ui_fields.py verifier/http/ui/app.js docs/openapi.json
