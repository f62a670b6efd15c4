#!/usr/bin/env bash
# `make check`: static rules of the source tree, each a named check, then `N passed, N failed`.
#   banned     no sprintf strcpy strcat atoi sscanf strtok in any .c/.h (curl's checksrc list:
#              unbounded writes, unchecked numbers, hidden state); use snprintf, memcpy with a
#              checked length, strtoul with an upper bound, strtok_r
#   shell      every shell script of the repository at warning level (a script is a *.sh or
#              *.bash file, or a file whose first line runs sh or bash)
#   proto      proto/ is pure: its files include only proto/ headers and <system> ones
# The fourth rule, fuzz targets built with the project's warnings and -Werror, is the
# Makefile's FUZZ_FLAGS (`make fuzz-build`).
# Files are those git tracks plus new ones not ignored, so build output never counts.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
passed=0 failed=0

ok() { passed=$((passed + 1)); echo "ok - $*"; }
fail() { failed=$((failed + 1)); echo "FAIL - $*"; }

files() { git ls-files --cached --others --exclude-standard "$@"; }

# --- banned functions ---------------------------------------------------------------------
# A call is the name followed by '('; comments that name a function are not calls, so lines
# whose code part starts a comment (` * `, `//`, `/*`) are skipped.
mapfile -t csrc < <(files '*.c' '*.h')
hits=$(grep -nHE '(^|[^A-Za-z0-9_.>])(sprintf|strcpy|strcat|atoi|sscanf|strtok)[[:space:]]*\(' \
	"${csrc[@]}" | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(\*|//|/\*)')
if [[ -z $hits ]]; then
	ok "banned: no sprintf strcpy strcat atoi sscanf strtok in ${#csrc[@]} C files"
else
	fail "banned functions used:"
	sed 's/^/    /' <<<"$hits"
fi

# --- shellcheck ---------------------------------------------------------------------------
scripts=()
while IFS= read -r f; do
	[[ -f $f ]] || continue
	case $f in
	*.sh | *.bash) scripts+=("$f") ;;
	*.*) ;;
	*) head -n 1 "$f" 2>/dev/null | grep -qE '^#!.*[/ ](ba)?sh( |$)' && scripts+=("$f") ;;
	esac
done < <(files)
if ! command -v shellcheck >/dev/null; then
	fail "shellcheck: not installed (make deps)"
elif out=$(shellcheck -S warning -x "${scripts[@]}" 2>&1); then
	ok "shellcheck: ${#scripts[@]} scripts clean at warning level"
else
	fail "shellcheck: warnings:"
	sed 's/^/    /' <<<"$out"
fi

# --- proto includes only proto ------------------------------------------------------------
mapfile -t psrc < <(files 'proto/*.c' 'proto/*.h')
hits=$(grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "${psrc[@]}" |
	grep -vE '#[[:space:]]*include[[:space:]]*"proto/[^"/]+"')
if [[ -z $hits ]]; then
	ok "proto: includes only proto/ and system headers"
else
	fail "proto includes outside proto/:"
	sed 's/^/    /' <<<"$hits"
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
