#!/usr/bin/env bash
# The flake hunt (issue 15, finding 8): runs each scenario N times in a row and logs one row per
# run, so that a scenario that fails even once is seen (tests/FLAKES.md holds the counts).
# Not a test layer itself (tests/run only picks tests/LAYER/*.sh); it runs no retries.
#
# Usage: tests/flake-loop.sh [-n RUNS] [-s FIRST] [-w LOAD] [-o DIR] SCRIPT...
#        tests/flake-loop.sh -t [-o DIR]   the counts of DIR/runs.tsv as Markdown table rows:
#                                          script, runs, failures, load range, mean seconds
#   SCRIPT   a test program (tests/vm/10-measure.sh, tests/e2e/50-reboot.sh) or scripts/demo.sh
#   RUNS     rounds; a round runs every SCRIPT once, in order (round-robin, so that a loop cut
#            short leaves every script with the same number of runs, give or take one)  [10]
#   FIRST    the number of the first round (to continue a table)                       [1]
#   LOAD     before each run, wait until the 1-minute load average is below LOAD (for a
#            second loop that may only run while the machine has room)            [no wait]
#   DIR      where the table and the logs go                    [build/flakes]
# Creating DIR/stop ends the loop before its next run (the running one finishes and is logged).
# Two loops started with the same SCRIPTs, FIRST and DIR share the work: each takes the next
# (round, script) from the counter DIR/next.FIRST (under flock), so the rounds stay whole; give
# the second one -w so that it only adds a guest while the machine has room.
# DIR/runs.tsv gets one row per run: script, run, status, seconds, the 1-minute load average at
# the start and at the end, the result line (`N passed, N failed, N skipped`; the demo's last
# line). DIR/logs/SCRIPT.RUN.log is each run's output; a failing run also keeps its work
# directory (KEEP_TMP=1) in DIR/keep/SCRIPT.RUN (the demo's build/demo), a passing one loses it.
# Runs in the same DIR from two shells at once are fine (one row is one append).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
runs=10 first=1 maxload='' dir=build/flakes table=0
usage="usage: $0 [-n RUNS] [-s FIRST] [-w LOAD] [-o DIR] SCRIPT... | -t [-o DIR]"
while getopts n:s:w:o:t opt; do
	case $opt in
	t) table=1 ;;
	n) runs=$OPTARG ;;
	s) first=$OPTARG ;;
	w) maxload=$OPTARG ;;
	o) dir=$OPTARG ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case $dir in /*) ;; *) dir=$TOP/$dir ;; esac
if ((table)); then
	[[ -s $dir/runs.tsv ]] || { echo "$0: no $dir/runs.tsv" >&2; exit 2; }
	# load range: the lowest and highest of the loads at the start and the end of its runs
	exec awk -F'\t' '
		NR == 1 { next }
		!($1 in runs) { order[++n] = $1; lo[$1] = 1e9; hi[$1] = 0 }
		{
			runs[$1]++
			if ($3 != "pass") fails[$1]++
			secs[$1] += $4
			for (i = 5; i <= 6; i++) {
				if ($i + 0 < lo[$1]) lo[$1] = $i + 0
				if ($i + 0 > hi[$1]) hi[$1] = $i + 0
			}
		}
		END {
			for (i = 1; i <= n; i++) {
				s = order[i]
				printf "| %s | %d | %d | %.2f..%.2f | %d |\n", s, runs[s], fails[s], lo[s], hi[s], secs[s] / runs[s]
			}
		}' "$dir/runs.tsv"
fi
[[ $runs =~ ^[1-9][0-9]{0,3}$ ]] || { echo "$0: -n takes 1 to 9999" >&2; exit 2; }
[[ $first =~ ^[1-9][0-9]{0,3}$ ]] || { echo "$0: -s takes 1 to 9999" >&2; exit 2; }
[[ -z $maxload || $maxload =~ ^[1-9][0-9]?$ ]] || { echo "$0: -w takes 1 to 99" >&2; exit 2; }
(($# > 0)) || { echo "$usage" >&2; exit 2; }
for s in "$@"; do [[ -x $s ]] || { echo "$0: $s is not an executable script" >&2; exit 2; }; done
mkdir -p "$dir/logs" "$dir/keep" "$dir/tmp"
[[ -s $dir/runs.tsv ]] || printf 'script\trun\tstatus\tseconds\tload_start\tload_end\tresult\n' >"$dir/runs.tsv"
# Port reservations (tests/lib.sh free_port) live in $TMPDIR/attest-test-ports: every run gets
# its own TMPDIR, linked to the one directory all other tests on this machine use.
ports=${TMPDIR:-/tmp}/attest-test-ports
mkdir -p "$ports"

load1() { cut -d' ' -f1 /proc/loadavg; }
# below LIMIT: the 1-minute load average is under the whole number LIMIT
below() { local l; l=$(load1); ((${l%%.*} < $1)); }

scripts=("$@")
queue=$dir/next.$first
# take: sets run and script to the next job of the shared queue; fails when it is empty.
take() {
	local k
	exec {qfd}>>"$queue.lock"
	flock "$qfd"
	k=$(cat "$queue" 2>/dev/null)
	[[ $k =~ ^[0-9]+$ ]] || k=0
	if ((k >= runs * ${#scripts[@]})); then
		exec {qfd}>&-
		return 1
	fi
	echo $((k + 1)) >"$queue"
	exec {qfd}>&-
	run=$((first + k / ${#scripts[@]})) script=${scripts[k % ${#scripts[@]}]}
}

passed=0 failed=0
while :; do
	[[ -e $dir/stop ]] && break
	if [[ -n $maxload ]]; then
		until below "$maxload"; do
			[[ -e $dir/stop ]] && break 2
			sleep 10
		done
	fi
	take || break
	{
		name=$(basename "$script" .sh)
		tag=$name.$run
		log=$dir/logs/$tag.log
		tmp=$dir/tmp/$tag
		rm -rf "$tmp"
		mkdir -p "$tmp"
		ln -s "$ports" "$tmp/attest-test-ports"
		l0=$(load1) t0=$SECONDS
		TMPDIR=$tmp KEEP_TMP=1 "$script" >"$log" 2>&1
		rc=$?
		secs=$((SECONDS - t0)) l1=$(load1)
		if [[ $script == */demo.sh ]]; then
			line=$(grep -aE 'done in [0-9]+s|FAILED' "$log" | tail -n 1 | sed 's/\x1b\[[0-9;]*m//g')
		else
			line=$(grep -aE '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
		fi
		f=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+' || echo 0)
		if [[ $rc -eq 0 && ${f:-0} -eq 0 && -n $line ]]; then
			status=pass
			passed=$((passed + 1))
			rm -rf "$tmp"
		else
			status=FAIL
			failed=$((failed + 1))
			rm -f "$tmp/attest-test-ports"
			mv "$tmp" "$dir/keep/$tag"
			[[ $script == */demo.sh && -d build/demo ]] && cp -a build/demo "$dir/keep/$tag/demo"
		fi
		printf '%s\t%d\t%s\t%d\t%s\t%s\t%s\n' "$script" "$run" "$status" "$secs" "$l0" "$l1" \
			"${line:-no result line (exit $rc)}" >>"$dir/runs.tsv"
		printf '%s run %d: %s in %d s, load %s..%s: %s\n' "$script" "$run" "$status" "$secs" \
			"$l0" "$l1" "${line:-exit $rc}"
	}
done
echo "flake-loop: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
