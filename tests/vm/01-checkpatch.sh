#!/usr/bin/env bash
# Both kernel series stay clean under their own tree's scripts/checkpatch.pl --strict: each patch
# of kernel-patches/series against linux-source-6.1, each of kernel-patches/6.12/series against
# linux-source-6.12 (that they apply with patch -p1 --fuzz=0 and build, vm/build-kernel.sh checks
# for every build). No VM: what checkpatch reads of each tree (scripts/, include/ for its CamelCase
# list, LICENSES/, MAINTAINERS and the top-level files it looks for) is unpacked from Debian's
# tarball, and LICENSES is committed to git there so that checkpatch also checks SPDX lines with
# scripts/spdxcheck.py (python3-ply, python3-git: Debian's python3, as another python first on
# PATH may lack them, and checkpatch then skips or breaks that check without failing).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
trap t_cleanup EXIT

for tree in 6.1 6.12; do
	dir="kernel-patches"
	[[ $tree == 6.12 ]] && dir="kernel-patches/6.12"
	tar=/usr/src/linux-source-$tree.tar.xz
	t=$T_TMP/linux-source-$tree
	if [[ ! -r $tar ]]; then
		fail "$tree: no $tar (make deps)"
		continue
	fi
	members=()
	for f in COPYING CREDITS Kbuild MAINTAINERS Makefile README scripts include LICENSES; do
		members+=("linux-source-$tree/$f")
	done
	if ! tar -xJf "$tar" -C "$T_TMP" "${members[@]}" 2>"$T_TMP/tar-$tree.log"; then
		fail "$tree: unpack what checkpatch reads from $tar"
		tail -n 5 "$T_TMP/tar-$tree.log"
		continue
	fi
	mkdir -p "$t/Documentation" "$t/arch" "$t/drivers" "$t/fs" "$t/init" "$t/ipc" "$t/kernel" "$t/lib"
	(cd "$t" && git init -q && git add LICENSES &&
		git -c user.name=t -c user.email=t@t.invalid commit -qm licenses) ||
		{ fail "$tree: a git tree for spdxcheck"; continue; }
	n=0
	while read -r p; do
		p=${p%%#*}
		p=${p//[[:space:]]/}
		[[ -n $p ]] || continue
		n=$((n + 1))
		out=$(cd "$t" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --strict -q "$TOP/$dir/$p" 2>&1)
		rc=$?
		if [[ $rc -eq 0 && -z $out ]]; then
			ok "$tree: checkpatch --strict clean: $p"
		else
			fail "$tree: checkpatch --strict: $p (exit $rc)"
			sed 's/^/    /' <<<"$out"
		fi
	done <"$dir/series"
	check "$tree: the series names patches ($n)" test "$n" -ge 8
done

# The two trees carry one series: the same patches, by subject, in the same order (a patch added
# to kernel-patches/ and not carried to 6.12/ shows here; what each patch does on its tree is the
# cover letters' and the guests' business).
subjects() {
	local dir=$1 p
	while read -r p; do
		p=${p%%#*}
		p=${p//[[:space:]]/}
		[[ -n $p ]] || continue
		sed -n 's/^Subject: \[PATCH [0-9]*\/[0-9]*\] //p' "$dir/$p"
	done <"$dir/series"
}
check_eq "both trees carry the same patches in the same order" \
	"$(subjects kernel-patches | tr '\n' '|')" "$(subjects kernel-patches/6.12 | tr '\n' '|')"
check "the series has subjects" test "$(subjects kernel-patches | wc -l)" -ge 8

# The check can fail: the same patch with trailing blanks on one of its lines is reported.
bad=$T_TMP/bad.patch
sed 's/^+struct tpm_chip \*tpm_chip_lookup(int chip_num)$/&  /' kernel-patches/6.12/0001-*.patch >"$bad"
check "the spoiled patch differs" test -n "$(diff kernel-patches/6.12/0001-*.patch "$bad")"
# And the SPDX check runs: a licence that LICENSES/ does not know is reported (by spdxcheck.py
# alone: without it, or without its python modules, this passes unnoticed).
spdx=$T_TMP/spdx.patch
sed 's|^+// SPDX-License-Identifier: GPL-2.0-only$|+// SPDX-License-Identifier: GPL-2.0-attest|' \
	kernel-patches/6.12/0006-*.patch >"$spdx"
check "the patch with an unknown licence differs" test -n "$(diff kernel-patches/6.12/0006-*.patch "$spdx")"
if [[ -d $T_TMP/linux-source-6.12 ]]; then
	check "a spoiled patch is not clean" \
		test -n "$(cd "$T_TMP/linux-source-6.12" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --strict -q "$bad" 2>&1)"
	out=$(cd "$T_TMP/linux-source-6.12" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --strict -q "$spdx" 2>&1)
	check "spdxcheck runs: an unknown licence is reported" grep -q "GPL-2.0-attest' is not supported in LICENSES" <<<"$out"
	check_fails "spdxcheck runs: no Python error" grep -q Traceback <<<"$out"
fi
finish
