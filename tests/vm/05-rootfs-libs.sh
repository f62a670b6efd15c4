#!/usr/bin/env bash
# The root image's library lookup (vm_lib_path, used by vm/build-rootfs.sh for the TCTI
# library ESYS dlopens) under pipefail, 200 times in a row: it used to be `ldconfig -p | awk
# '... exit'`, where awk leaving at the match killed ldconfig with SIGPIPE and failed the
# image build in about 6% of runs (9 of 200 here). Host only, no guest needed.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

LIB=libtss2-tcti-device.so.0
RUNS=${RUNS:-200}
want=$(vm_lib_path "$LIB")
check "vm_lib_path finds $LIB in the loader cache ($want)" test -e "$want"
bad=0
for ((i = 0; i < RUNS; i++)); do
	got=$(vm_lib_path "$LIB")
	rc=$?
	if [[ $rc -ne 0 || $got != "$want" ]]; then
		bad=$((bad + 1))
		echo "run $i: status $rc, path '$got'"
	fi
done
check_eq "$RUNS lookups under pipefail: none fails" 0 "$bad"
check_eq "an unknown library: no path, no failure" "0 ''" "$(got=$(vm_lib_path libnone-such.so.9); echo "$? '$got'")"
finish
