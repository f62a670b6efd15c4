#!/usr/bin/env bash
# Runs every libFuzzer target in FUZZ_DIR for SECONDS each, starting from its seed corpus
# tests/fuzz/corpus/<target>/ (copied to a scratch dir so new inputs do not land in git), with
# the dictionary tests/fuzz/<target>.dict when there is one.
# Usage: tests/fuzz/run.sh FUZZ_DIR SECONDS. Prints `N passed, N failed` (one per target).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
dir=${1:?usage: run.sh FUZZ_DIR SECONDS}
secs=${2:?usage: run.sh FUZZ_DIR SECONDS}
passed=0 failed=0
work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-run.XXXXXX")
trap 'rm -rf "$work"' EXIT
for bin in "$dir"/fuzz_*; do
	[[ -x $bin ]] || continue
	name=$(basename "$bin")
	mkdir -p "$work/$name"
	[[ -d tests/fuzz/corpus/$name ]] && cp -r tests/fuzz/corpus/"$name"/. "$work/$name"/
	dict=()
	[[ -f tests/fuzz/$name.dict ]] && dict=(-dict="tests/fuzz/$name.dict")
	echo "== $name for ${secs}s"
	if "$bin" -max_total_time="$secs" "${dict[@]}" -artifact_prefix="$work/$name-" "$work/$name" \
		>"$work/$name.log" 2>&1; then
		passed=$((passed + 1))
		echo "ok - $name"
	else
		failed=$((failed + 1))
		mkdir -p "$dir/crashes"
		cp "$work/$name"-* "$dir/crashes/" 2>/dev/null
		tail -n 30 "$work/$name.log"
		echo "FAIL - $name (crash inputs in $dir/crashes/)"
	fi
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
