#!/usr/bin/env bash
# Replays the seed corpus tests/fuzz/corpus/<target>/ of every target tests/fuzz/<target>.c
# through $BUILD/fuzz/<target> once (no mutation, -runs=0): one pass per target whose corpus
# runs without a crash, a leak or a failed check. A target without a corpus or without its
# binary counts as a failure, unless no fuzz binary was built at all (then the layer is
# skipped: 0 passed, 0 failed). Crash inputs go to $BUILD/fuzz/crashes/, not into the tree.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
dir=$BUILD/fuzz
passed=0 failed=0
if ! compgen -G "$dir/fuzz_*" >/dev/null; then
	echo "no fuzz binaries in $dir (make fuzz-build); skipping"
	echo "0 passed, 0 failed"
	exit 0
fi
mkdir -p "$dir/crashes"
for src in tests/fuzz/fuzz_*.c; do
	name=$(basename "$src" .c)
	corpus=tests/fuzz/corpus/$name
	bin=$dir/$name
	if [[ ! -d $corpus ]] || ! compgen -G "$corpus/*" >/dev/null; then
		failed=$((failed + 1))
		echo "FAIL - $name: no seed corpus in $corpus/"
		continue
	fi
	if [[ ! -x $bin ]]; then
		failed=$((failed + 1))
		echo "FAIL - $name: no binary $bin"
		continue
	fi
	if log=$("$bin" -runs=0 -artifact_prefix="$dir/crashes/$name-" "$corpus" 2>&1); then
		passed=$((passed + 1))
		echo "ok - $name ($(ls "$corpus" | wc -l) inputs)"
	else
		failed=$((failed + 1))
		echo "$log" | tail -n 30
		echo "FAIL - $name (inputs in $dir/crashes/)"
	fi
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
