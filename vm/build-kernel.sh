#!/usr/bin/env bash
# Builds the guest kernel: Debian's linux-source-6.1 + kernel-patches/series +
# kernel-patches/guest.config, or linux-source-6.12 + kernel-patches/6.12/series + the same
# fragment (KERNEL_TREE=6.12), cached by a key over all inputs.
#
# Environment (defaults in brackets; those of the first five come from KERNEL_TREE and
# KERNEL_VARIANT, vm/lib.sh):
#   KERNEL_TREE        6.1 or 6.12               [6.1]
#   KERNEL_SRC_TAR     source tarball            [/usr/src/linux-source-$KERNEL_TREE.tar.xz]
#   KERNEL_PATCH_DIR   series + patches          [kernel-patches; 6.12: kernel-patches/6.12]
#   KERNEL_FRAGMENT    config fragment, or several separated by spaces, merged in order
#                      (an option's last setting wins)   [kernel-patches/guest.config]
#   KERNEL_CACHE       cache directory           [build/kernel; 6.12: build/kernel/6.12]; a
#                      kernel of other fragments needs its own (build/kernel/late): one cache
#                      holds one key
#   KERNEL_SEED        another cache (build/kernel) whose kernel comes from the same source,
#                      recipe and patches: its built tree is copied and rebuilt with this
#                      configuration, so that only the objects that depend on a changed option
#                      are compiled again (kbuild records each object's CONFIG_ dependencies).
#                      Without a matching seed the build starts from the tarball.
#   KERNEL_VARIANT     default, late (the late-TPM kernel) or hmac (6.12 only: the TPM's HMAC
#                      sessions): its fragments, cache and seed as defaults of the three
#                      variables above   [default]
#   KERNEL_JOBS        make -j                   [$(nproc)]
#   KERNEL_KEEP_OLD    1 keeps trees of older keys; default 0 removes them
#   KERNEL_FORCE       1 rebuilds even when the key is cached
#   KERNEL_BUILD_LOCK  lock file that serializes builds  [$KERNEL_CACHE/.lock]; point
#                      several checkouts at one file so that two builds never share the cores
# Output: $KERNEL_CACHE/bzImage (symlink to $KERNEL_CACHE/<key>/bzImage) and
# $KERNEL_CACHE/current (symlink to the key directory, holding the tree and the logs).
# When the configuration has modules, also the modules, installed (stripped) under
# $KERNEL_CACHE/modules/lib/modules/<release>/. Prints the bzImage path on its last line.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
abspath() { case $1 in /*) echo "$1" ;; *) echo "$TOP/$1" ;; esac; }

T0=$SECONDS
say() { printf '[build-kernel +%3ds] %s\n' $((SECONDS - T0)) "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

# shellcheck source=vm/lib.sh
. "$TOP/vm/lib.sh"
vm_kernel_variant
SRC_TAR=$(abspath "$KERNEL_SRC_TAR")
PATCH_DIR=$(abspath "${KERNEL_PATCH_DIR:-kernel-patches}")
read -r -a fragments <<<"$KERNEL_FRAGMENT"
CACHE=$(abspath "${KERNEL_CACHE:-build/kernel}")
JOBS=${KERNEL_JOBS:-$(nproc)}
# Bump when the recipe below changes in a way that changes the output.
RECIPE=2

[[ -r $SRC_TAR ]] || die "no kernel source at $SRC_TAR (apt-get install $(basename "$SRC_TAR" .tar.xz))"
[[ ${#fragments[@]} -gt 0 ]] || die "KERNEL_FRAGMENT names no file"
for i in "${!fragments[@]}"; do
	fragments[i]=$(abspath "${fragments[i]}")
	[[ -r ${fragments[i]} ]] || die "no config fragment at ${fragments[i]}"
done
patches=()
if [[ -r $PATCH_DIR/series ]]; then
	while read -r p; do
		p=${p%%#*}
		p=${p//[[:space:]]/}
		[[ -n $p ]] || continue
		[[ -r $PATCH_DIR/$p ]] || die "series names $p, not found in $PATCH_DIR"
		patches+=("$PATCH_DIR/$p")
	done <"$PATCH_DIR/series"
fi

# Work on a snapshot of the inputs, so that the key always names what is built even
# when a file is edited during the build.
mkdir -p "$CACHE"
snap=$(mktemp -d "$CACHE/.inputs.XXXXXX")
trap 'rm -rf "$snap"' EXIT
mkdir -p "$snap/patches"
snapped=()
for p in ${patches[@]+"${patches[@]}"}; do
	cp "$p" "$snap/patches/"
	snapped+=("$snap/patches/$(basename "$p")")
done
patches=("${snapped[@]}")
# One fragment is used as it is (the key of the default kernel stays what it was); several
# are merged into one, each option at its last setting, so that the check below and
# merge_config.sh see one value per option.
if [[ ${#fragments[@]} -eq 1 ]]; then
	FRAGMENT=$snap/$(basename "${fragments[0]}")
	cp "${fragments[0]}" "$FRAGMENT"
else
	FRAGMENT=$snap/merged.config
	awk '
		/^CONFIG_[A-Za-z0-9_]+=/ { o = $0; sub(/=.*/, "", o) }
		/^# CONFIG_[A-Za-z0-9_]+ is not set$/ { o = $2 }
		o != "" { if (!(o in v)) order[n++] = o; v[o] = $0; o = "" }
		END { for (i = 0; i < n; i++) print v[order[i]] }
	' "${fragments[@]}" >"$FRAGMENT"
fi

# The key: the source version (the Debian package version when the tarball is the
# package's, else size and mtime), the recipe, the series in order and the fragment.
src_id() {
	local ver pkg
	pkg=$(dpkg-query -S "$SRC_TAR" 2>/dev/null | sed -n '1s/:.*//p') || pkg=
	ver=$([[ -n $pkg ]] && dpkg-query -W -f='${Package} ${Version}' "$pkg" 2>/dev/null) || ver=
	echo "src $ver $(stat -c '%s %Y' "$SRC_TAR") $(basename "$SRC_TAR")"
}
# The tree (source, recipe, patches) is what a seed must share; the fragment is the rest.
tree_id=$({
	src_id
	echo "recipe $RECIPE"
	for p in ${patches[@]+"${patches[@]}"}; do echo "patch $(basename "$p") $(sha256sum <"$p" | cut -d' ' -f1)"; done
})
echo "$tree_id" >"$snap/tree"
key=$({
	echo "$tree_id"
	echo "fragment $(sha256sum <"$FRAGMENT" | cut -d' ' -f1)"
} | sha256sum | cut -c1-16)

mkdir -p "$CACHE"
dir=$CACHE/$key
publish() {
	ln -sfn "$key" "$CACHE/current"
	ln -sfn "$key/bzImage" "$CACHE/bzImage"
	if [[ -d $dir/modules ]]; then ln -sfn "$key/modules" "$CACHE/modules"; else rm -f "$CACHE/modules"; fi
}
if [[ -s $dir/bzImage && ${KERNEL_FORCE:-0} != 1 ]]; then
	publish
	say "cached: key $key is built, nothing to do"
	echo "$CACHE/bzImage"
	exit 0
fi

# One build at a time per cache (tests may start in parallel), or per KERNEL_BUILD_LOCK.
LOCK=$(abspath "${KERNEL_BUILD_LOCK:-$CACHE/.lock}")
exec 9>"$LOCK"
if ! flock -n 9; then
	say "another build holds $LOCK, waiting"
	flock 9
	if [[ -s $dir/bzImage && ${KERNEL_FORCE:-0} != 1 ]]; then
		publish
		say "built meanwhile by the other build: key $key"
		echo "$CACHE/bzImage"
		exit 0
	fi
fi

say "key $key: ${#patches[@]} patches, fragment $(basename "$FRAGMENT") (${#fragments[@]} file(s)), -j$JOBS"
rm -rf "$dir"
mkdir -p "$dir"
seed=
if [[ -n ${KERNEL_SEED:-} ]]; then
	seed=$(abspath "$KERNEL_SEED")/current
	if [[ -s $seed/bzImage && -f $seed/src/Makefile && -f $seed/inputs/tree ]] &&
		[[ $(cat "$seed/inputs/tree") == "$tree_id" ]]; then
		seed=$(readlink -f "$seed")
	else
		say "no seed in $KERNEL_SEED for this source and these patches: building from the tarball"
		seed=
	fi
fi
src=
if [[ -n $seed ]]; then
	say "copying the built tree of $seed"
	src=$dir/$(readlink "$seed/src")
	if cp -a "$(readlink -f "$seed/src")" "$src"; then
		# objtool's build (tools/) records absolute paths: point them at the copy and keep
		# the times, or objtool is built again, and every object that it checks with it.
		old=$(readlink -f "$seed/src")
		grep -rlF "$old" "$src/tools" --include='.*.cmd' --include='.*.d' 2>/dev/null |
			while IFS= read -r f; do
				t=$(stat -c %y "$f")
				sed -i "s|$old|$src|g" "$f"
				touch -d "$t" "$f"
			done
	else
		say "copying the seed failed: building from the tarball"
		rm -rf "$src"
		src=
	fi
fi
if [[ -z $src ]]; then
	say "unpacking $SRC_TAR"
	tar -xJf "$SRC_TAR" -C "$dir"
	src=$(find "$dir" -mindepth 1 -maxdepth 1 -type d -print -quit)
	[[ -f $src/Makefile ]] || die "no kernel tree in $SRC_TAR"
	for p in ${patches[@]+"${patches[@]}"}; do
		say "applying $(basename "$p")"
		patch -d "$src" -p1 --fuzz=0 --no-backup-if-mismatch -s <"$p" ||
			die "$(basename "$p") does not apply cleanly"
	done
fi
ln -sfn "$(basename "$src")" "$dir/src"

log=$dir/build.log
say "configuring: tinyconfig + fragment + olddefconfig"
{
	make -C "$src" tinyconfig &&
		(cd "$src" && scripts/kconfig/merge_config.sh -m .config "$FRAGMENT") &&
		make -C "$src" olddefconfig
} >"$dir/config.log" 2>&1 || { tail -n 30 "$dir/config.log" >&2; die "configuration failed (log: $dir/config.log)"; }

# Every option of the fragment must survive olddefconfig unchanged.
missing=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*)
		grep -qxF -- "$line" "$src/.config" || {
			say "fragment option lost: $line (have: $(grep -E "^(# )?${line%%=*}[= ]" "$src/.config" || echo unset))"
			missing=$((missing + 1))
		}
		;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }
		opt=${opt%% *}
		if grep -qE "^$opt=" "$src/.config"; then
			say "fragment option lost: $line"
			missing=$((missing + 1))
		fi
		;;
	esac
done <"$FRAGMENT"
[[ $missing -eq 0 ]] || die "olddefconfig dropped $missing option(s) of $FRAGMENT"
cp "$src/.config" "$dir/config"
cp -r "$snap" "$dir/inputs"

say "building bzImage (log: $log)"
if ! make -C "$src" -j"$JOBS" bzImage >"$log" 2>&1; then
	grep -m 20 -E 'error|Error' "$log" >&2 || true
	tail -n 20 "$log" >&2
	die "kernel build failed (log: $log)"
fi
if grep -qE '^CONFIG_[A-Za-z0-9_]+=m$' "$src/.config"; then
	say "building and installing the modules"
	rm -rf "$dir/modules"
	# No depmod on the host: the guest loads modules by path (vm/rootfs/etc/init.d/S05modules).
	if ! { make -C "$src" -j"$JOBS" modules &&
		make -C "$src" modules_install INSTALL_MOD_PATH="$dir/modules" INSTALL_MOD_STRIP=1 DEPMOD=true; } >>"$log" 2>&1; then
		tail -n 20 "$log" >&2
		die "module build failed (log: $log)"
	fi
fi
cp "$src/arch/x86/boot/bzImage" "$dir/bzImage.tmp"
mv "$dir/bzImage.tmp" "$dir/bzImage"
publish

if [[ ${KERNEL_KEEP_OLD:-0} != 1 ]]; then
	for old in "$CACHE"/*/; do
		old=${old%/}
		[[ $(basename "$old") == "$key" ]] && continue
		[[ $(basename "$old") =~ ^[0-9a-f]{16}$ ]] || continue
		say "removing old build $(basename "$old")"
		rm -rf "$old"
	done
fi
say "done: $CACHE/bzImage ($(stat -c %s "$dir/bzImage") bytes)"
echo "$CACHE/bzImage"
