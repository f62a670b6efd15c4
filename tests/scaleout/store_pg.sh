#!/usr/bin/env bash
# The backend-neutral store tests again, on PostgreSQL: a throwaway cluster, and the same unit
# programs that run on SQLite in the unit layer (tests/lib/teststore.h), each with
# ATTEST_TEST_PG pointing at it so that every store it opens is a database of its own there.
# Their own result lines are summed into this script's.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

PROGS=(test_store test_store_pg test_store_retention test_store_audit test_store_lifecycle test_store_backup test_store_copy test_round test_review test_evidence_record test_policy_sign test_store_admission test_store_labels)
for p in "${PROGS[@]}"; do
	[[ -x $B/tests/$p ]] || { fail "missing $B/tests/$p (run make)"; finish; exit 1; }
done
check "a throwaway PostgreSQL cluster starts" start_pg "$T_TMP/pg" || { finish; exit 1; }

for p in "${PROGS[@]}"; do
	ATTEST_TEST_PG=$PG_URI "$B/tests/$p" >"$T_TMP/$p.out" 2>&1
	rc=$?
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$T_TMP/$p.out" | tail -n 1)
	np=$(awk '{ print $1 }' <<<"$line") nf=$(awk '{ print $3 }' <<<"$line")
	grep -q '^# backend: postgresql$' "$T_TMP/$p.out" || { fail "$p did not run on PostgreSQL"; continue; }
	if [[ -z $line ]]; then
		fail "$p: no result line (exit $rc)"
		tail -n 20 "$T_TMP/$p.out"
		continue
	fi
	grep -E '^(FAIL|ok) ' "$T_TMP/$p.out" | sed "s/^/   $p: /"
	grep -E '^FAIL ' "$T_TMP/$p.out" | sed 's/^/   /'
	T_PASSED=$((T_PASSED + np)) T_FAILED=$((T_FAILED + nf))
	[[ $rc -eq 0 || $nf -gt 0 ]] || fail "$p exited $rc"
	echo "$p on PostgreSQL: $line"
done
finish
