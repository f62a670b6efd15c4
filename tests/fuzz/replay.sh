#!/usr/bin/env bash
# Replays every seed corpus tests/fuzz/corpus/<target>/ through $BUILD/fuzz/<target> once
# (no mutation, -runs=0): one pass per target whose corpus runs without a crash. A corpus
# whose binary is missing counts as a failure, unless no fuzz binary was built at all (then
# the layer is skipped: 0 passed, 0 failed).
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
dir=$BUILD/fuzz
passed=0 failed=0
if ! compgen -G "$dir/fuzz_*" >/dev/null; then
	echo "no fuzz binaries in $dir (make fuzz-build); skipping"
	echo "0 passed, 0 failed"
	exit 0
fi
for corpus in tests/fuzz/corpus/*/; do
	name=$(basename "$corpus")
	bin=$dir/$name
	if [[ ! -x $bin ]]; then
		failed=$((failed + 1))
		echo "FAIL - $name: no binary $bin"
		continue
	fi
	if log=$("$bin" -runs=0 "$corpus" 2>&1); then
		passed=$((passed + 1))
		echo "ok - $name ($(ls "$corpus" | wc -l) inputs)"
	else
		failed=$((failed + 1))
		echo "$log" | tail -n 30
		echo "FAIL - $name"
	fi
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
