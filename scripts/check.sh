#!/usr/bin/env bash
# `make check`: static rules of the source tree, each a named check, then `N passed, N failed`.
#   banned     no sprintf strcpy strcat atoi sscanf strtok in any .c/.h (curl's checksrc list:
#              unbounded writes, unchecked numbers, hidden state); use snprintf, memcpy with a
#              checked length, strtoul with an upper bound, strtok_r
#   shell      every shell script of the repository at warning level (a script is a *.sh or
#              *.bash file, or a file whose first line runs sh or bash)
#   pipes      no pipeline into a reader that exits before its input ends (SIGPIPE, pipefail)
#   proto      proto/ is pure: its files include only proto/ headers and <system> ones
#   layers     the verifier's layers (VERIFIER_LAYERS in the Makefile, top to bottom): a file in
#              verifier/LAYER/ includes headers of its own layer or lower ones, never verifier/*.h
#              (main, options) or attestctl; attestd/ and common/ include no verifier/ header.
#              The rule is first run on a made-up violation, so that a scan that finds nothing
#              cannot pass for one that works.
# The sixth rule, fuzz targets built with the project's warnings and -Werror, is the
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
	*)
		first=
		{ IFS= read -r first || true; } <"$f" 2>/dev/null
		[[ $first =~ ^#!.*[/\ ](ba)?sh(\ |$) ]] && scripts+=("$f")
		;;
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

# --- no pipe into a reader that leaves early ----------------------------------------------
# `WRITER | head` (or grep -q, grep -m, grep -l, awk ... exit): the reader exits before the
# writer is done, the writer dies of SIGPIPE, and under pipefail the pipeline fails now and
# then (1 run in 16 of the image build did). Let the reader read everything (awk without exit,
# sed -n 1p), capture the output first, or use `grep -q RE < <(WRITER)`. Lines are joined
# across `|`, `\`, `&&` and `||` continuations; a `|` inside single quotes is not a pipe, and
# what follows `bash -c` runs in a child shell without pipefail.
pipes_scan() {
	awk '
	function check(line, file, lineno,    i, c, q, seg, n, segs) {
		sub(/bash -c.*/, "", line)
		n = 0; seg = ""; q = 0
		for (i = 1; i <= length(line); i++) {
			c = substr(line, i, 1)
			if (c == "\047") q = !q
			if (!q && c == "|" && substr(line, i + 1, 1) != "|" && substr(line, i - 1, 1) != "|") {
				segs[++n] = seg; seg = ""; continue
			}
			seg = seg c
		}
		segs[++n] = seg
		for (i = 2; i <= n; i++) {
			seg = segs[i]
			sub(/^[[:space:]!(]+/, "", seg)
			if (seg ~ /^head([[:space:]]|$)/ ||
			    seg ~ /^grep[[:space:]]([^;&]*[[:space:]])?-[A-Za-z]*[qmlL]/ ||
			    seg ~ /^grep[[:space:]].*--(quiet|silent|max-count|files-with)/ ||
			    seg ~ /^awk[[:space:]].*[^A-Za-z_]exit([^A-Za-z_]|$)/) {
				printf "%s:%d: %s\n", file, lineno, line
				return
			}
		}
	}
	FNR == 1 { joined = ""; start = 0 }
	{
		text = $0
		if (joined == "" && text ~ /^[[:space:]]*#/) next
		if (joined == "") start = FNR
		joined = joined " " text
		if (text ~ /(\||\\|&&)[[:space:]]*$/) next
		check(joined, FILENAME, start)
		joined = ""
	}' "$@"
}
hits=$(pipes_scan "${scripts[@]}")
if [[ -z $hits ]]; then
	ok "pipes: no pipeline ends in a reader that exits before its writer (${#scripts[@]} scripts)"
else
	fail "pipes into head, grep -q/-m/-l or awk exit (SIGPIPE under pipefail):"
	sed 's/^/    /' <<<"$hits"
fi

# --- no scratch daemon reads the host's configuration --------------------------------------
# A verifier or attestd started by a test, the demo or a benchmark passes --config (the empty
# one, /dev/null, or a file of its own): without it the daemon reads SYSCONFDIR/attest/*.conf,
# and on a host where the packages are configured a test would write into the production
# store and send webhook events to the production receiver. A start is a command line (joined
# across `\` continuations) that runs $B/verifier, $BB/attestd, $VERIFIER, $ATTESTD ... with
# options; --version and --help read no file. A test that means to read it says so at the end
# of the command: `# reads the host configuration on purpose`.
daemon_starts_scan() {
	awk '
	FNR == 1 { joined = "" }
	{
		text = $0
		if (joined == "" && text ~ /^[[:space:]]*#/) next
		if (joined == "") start = FNR
		joined = joined " " text
		if (text ~ /\\[[:space:]]*$/) next
		line = joined; joined = ""
		if (!match(line, /\$\{?(B|BB)\}?\/(verifier|attestd)["\047]?[[:space:]]+--|\$\{?(VERIFIER|ATTESTD)\}?"?[[:space:]]+--/))
			next
		rest = substr(line, RSTART)
		if (rest ~ /^[^[:space:]]+[[:space:]]+--(version|help)/ || rest ~ /--config[[:space:]=]/ ||
		    rest ~ /# reads the host configuration on purpose$/)
			next
		printf "%s:%d: %s\n", FILENAME, start, line
	}' "$@"
}
hits=$(daemon_starts_scan "${scripts[@]}")
if [[ -z $hits ]]; then
	ok "host configuration: every verifier and attestd a script starts gets --config"
else
	fail "a script starts a daemon without --config (it would read the host's /etc/attest):"
	sed 's/^/    /' <<<"$hits"
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

# --- the verifier's layers ----------------------------------------------------------------
# layer_violations LAYERS... -- FILES...: prints `file:line: include` for each include that
# reaches above the including file's layer (or names a verifier/ folder that is no layer).
layer_violations() {
	local layers=() files=()
	while [[ $# -gt 0 && $1 != -- ]]; do layers+=("$1"); shift; done
	shift
	files=("$@")
	[[ ${#files[@]} -gt 0 ]] || return 0
	grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"verifier/' "${files[@]}" |
		awk -v order="${layers[*]}" '
		BEGIN { n = split(order, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
		{
			split($0, a, ":"); file = a[1]
			inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
			# the includer: a layer file, or attestd/ common/ (below every verifier layer)
			if (file ~ /^verifier\/[^\/]+\/[^\/]+$/) {
				split(file, f, "/"); from = f[2]
				if (!(from in rank)) { if (from == "attestctl") next; print $0 " (verifier/" from "/ is no layer)"; next }
				fr = rank[from]
			} else if (file ~ /^(attestd|common)\//) {
				fr = n + 1
			} else next
			if (inc ~ /^verifier\/[^\/]+$/) { print $0 " (above every layer)"; next }
			split(inc, g, "/"); to = g[2]
			if (!(to in rank)) { print $0 " (verifier/" to "/ is no layer)"; next }
			if (rank[to] < fr) print $0 " (" to " is above " (fr > n ? "every layer" : from) ")"
		}'
}
mapfile -t layers < <(sed -n 's/^VERIFIER_LAYERS := //p' Makefile | tr ' ' '\n' | sed '/^$/d')
mapfile -t lsrc < <(files 'verifier/*.c' 'verifier/*.h' 'attestd/*.c' 'attestd/*.h' 'common/*.c' 'common/*.h')
selftest=$(mktemp -d)
mkdir -p "$selftest/verifier/store"
printf '#include "verifier/http/server.h"\n' >"$selftest/verifier/store/x.c"
caught=$(cd "$selftest" && layer_violations "${layers[@]}" -- verifier/store/x.c)
rm -rf "$selftest"
hits=$(layer_violations "${layers[@]}" -- "${lsrc[@]}")
if [[ ${#layers[@]} -lt 2 ]]; then
	fail "layers: VERIFIER_LAYERS not found in the Makefile"
elif [[ -z $caught ]]; then
	fail "layers: the scan missed a made-up store -> http include"
elif [[ -z $hits ]]; then
	ok "layers: ${#lsrc[@]} files include only their own or lower layers (${layers[*]})"
else
	fail "layers: includes that reach upwards:"
	sed 's/^/    /' <<<"$hits"
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
