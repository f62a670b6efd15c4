#!/usr/bin/env bash
# Package-aware policies from Debian packages and a signed archive (attestctl policy-gen --deb,
# --apt-repo; policies/README.md "Packages"): packages built here with dpkg-deb (two versions, a
# conffile, a symlink, a setuid file, a name that is not UTF-8), a flat repository made with
# apt-ftparchive and signed with a key made here (gpg --batch). Checked: every digest against
# `dpkg-deb -x` and sha256sum; links and directories left out; conffiles marked; a tampered .deb,
# Packages or Release (or a Release past its Valid-Until) refused with a clear error and no
# policy written; selections by name, by a
# `dpkg --get-selections` file and all; a modified binary named with its package and versions;
# and the digests of two real Debian packages (apt-get download: said, not passed, when it cannot).
# The upgrade against a running verifier is tests/integration/deb_upgrade.sh.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

CTL=$B/attestctl
[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
for t in dpkg-deb apt-ftparchive gpg gpgv sha256sum jq; do
	command -v $t >/dev/null || { fail "$t not installed (deps.txt)"; finish; exit 1; }
done
W=$T_TMP
# Bytes, not characters: a name that is not UTF-8 goes through sed and sort as it is.
export LC_ALL=C
export GNUPGHOME=$W/gnupg
mkdir -m 700 "$GNUPGHOME"

# mkdeb NAME VERSION CONTENT: a package with a binary, a setuid helper, a conffile, a symlink,
# a hard link, a file whose name is not UTF-8 and one with a space.
mkdeb() {
	local name=$1 ver=$2 content=$3 r=$W/build/$1-$2
	mkdir -p "$r/DEBIAN" "$r/usr/bin" "$r/usr/lib/$name" "$r/etc" "$r/usr/share/doc/$name"
	printf 'Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: test\n' \
		"$name" "$ver" >"$r/DEBIAN/control"
	echo /etc/$name.conf >"$r/DEBIAN/conffiles"
	printf '#!/bin/sh\necho %s\n' "$content" >"$r/usr/bin/$name"
	chmod 755 "$r/usr/bin/$name"
	printf 'helper %s\n' "$content" >"$r/usr/lib/$name/helper"
	chmod 4755 "$r/usr/lib/$name/helper"
	echo "setting=$content" >"$r/etc/$name.conf"
	ln -s "../lib/$name/helper" "$r/usr/bin/$name-link"
	ln "$r/usr/bin/$name" "$r/usr/lib/$name/hardlink"
	printf 'latin-1 %s\n' "$content" >"$r/usr/lib/$name/caf$(printf '\xe9')"
	printf 'spaced %s\n' "$content" >"$r/usr/share/doc/$name/read me"
	dpkg-deb --root-owner-group -Zxz --build "$r" "$W/repo/${name}_${ver}_amd64.deb" >/dev/null
}
mkdir -p "$W/repo" "$W/build"
mkdeb foo 1.0-1 one && mkdeb foo 1.1-1 two && mkdeb bar 2.0-1 bar ||
	{ fail "dpkg-deb builds the test packages"; finish; exit 1; }

# --- 1. one .deb: every digest against dpkg-deb -x and sha256sum --------------------------------
check "policy-gen --deb writes a policy" "$CTL" policy-gen --deb "$W/repo/foo_1.0-1_amd64.deb" \
	--hash sha256 --hash sha1 --out "$W/foo.json"
mkdir -p "$W/x" && dpkg-deb -x "$W/repo/foo_1.0-1_amd64.deb" "$W/x"
expect=$( cd "$W/x" && find . -type f -print0 | sort -z | xargs -0 sha256sum |
	sed -E 's#^([0-9a-f]+)  \./#\1 /#' | while read -r d p; do printf '%s %s\n' "${p// /_}" "$d"; done |
	LC_ALL=C sort)
got=$(jq -r '.packages[0] | (.files | to_entries[] | "\(.key) \(.value[] | select(startswith("sha256:")) | .[7:])"),
	(.files_hex // {} | to_entries[] | "HEX:\(.key) \(.value[] | select(startswith("sha256:")) | .[7:])")' "$W/foo.json" |
	while read -r p d; do
		if [[ $p == HEX:* ]]; then p=$(xxd -r -p <<<"${p#HEX:}"); fi
		printf '%s %s\n' "$p" "$d"
	done | LC_ALL=C sort)
check_eq "sha256 of every regular file equals sha256sum of dpkg-deb -x (hard link, setuid file, non-UTF-8 and spaced names included)" \
	"$expect" "$got"
check_eq "the file count is dpkg-deb -x's (6 regular files; the symlink and directories left out)" \
	"6 6" "$(find "$W/x" -type f | wc -l) $(jq '[.packages[0].files, (.packages[0].files_hex // {})] | map(length) | add' "$W/foo.json")"
check_eq "the symlink is not a file of the policy" "null" \
	"$(jq '.packages[0].files["/usr/bin/foo-link"]' "$W/foo.json")"
check_eq "sha1 too, as asked: sha1sum of /usr/bin/foo" "sha1:$(sha1sum <"$W/x/usr/bin/foo" | cut -d' ' -f1)" \
	"$(jq -r '.packages[0].files["/usr/bin/foo"][] | select(startswith("sha1:"))' "$W/foo.json")"
check_eq "name, version and architecture are kept" "foo 1.0-1 amd64" \
	"$(jq -r '.packages[0] | "\(.package) \(.version) \(.architecture)"' "$W/foo.json")"
check_eq "the conffile is marked" '["/etc/foo.conf"]' "$(jq -c '.packages[0].conffiles' "$W/foo.json")"
check_eq "the name that is not UTF-8 is kept as hex of its bytes" \
	"$(printf '/usr/lib/foo/caf\xe9' | xxd -p | tr -d '\n')" \
	"$(jq -r '.packages[0].files_hex | keys[0]' "$W/foo.json")"
check_eq "a space is written as IMA records it" "true" \
	"$(jq '.packages[0].files | has("/usr/share/doc/foo/read_me")' "$W/foo.json")"
check_eq "nothing is repeated under digests" "{}" "$(jq -c .digests "$W/foo.json")"
check "policy-check accepts it" "$CTL" policy-check "$W/foo.json"
foo1=$(jq -r '.packages[0].files["/usr/bin/foo"][] | select(startswith("sha256:"))' "$W/foo.json")
check "policy-check: /usr/bin/foo with its packaged content is allowed" \
	"$CTL" policy-check "$W/foo.json" /usr/bin/foo "$foo1"
printf 'not a deb' >"$W/junk.deb"
check_fails "a file that is not a .deb fails the run" "$CTL" policy-gen --deb "$W/junk.deb" --out "$W/junk.json"
check_eq "and writes nothing" "no" "$([[ -e $W/junk.json ]] && echo yes || echo no)"

# --- 2. a signed repository -------------------------------------------------------------------
gpg --batch --quiet --passphrase '' --quick-gen-key 'attest test archive <archive@example.org>' \
	ed25519 sign never 2>/dev/null || { fail "gpg makes a key"; finish; exit 1; }
gpg --batch --export >"$W/archive.gpg"
gpg --batch --quiet --passphrase '' --quick-gen-key 'someone else <other@example.org>' ed25519 sign never 2>/dev/null
gpg --batch --export other@example.org >"$W/other.gpg"
sign_repo() {
	( cd "$1" && apt-ftparchive packages . >Packages && gzip -9nkf Packages &&
	  apt-ftparchive release . >Release && rm -f InRelease Release.gpg &&
	  gpg --batch --yes --local-user archive@example.org --clearsign -o InRelease Release ) >/dev/null 2>&1
}
mkdir -p "$W/r1" && cp "$W/repo/foo_1.0-1_amd64.deb" "$W/repo/bar_2.0-1_amd64.deb" "$W/r1/"
sign_repo "$W/r1" || { fail "apt-ftparchive and gpg sign the repository"; finish; exit 1; }
gen_repo() { "$CTL" policy-gen --apt-repo "$1" --keyring "$W/archive.gpg" "${@:2}"; }
check "policy-gen --apt-repo --package foo" gen_repo "$W/r1" --package foo --out "$W/r1.json"
check_eq "only foo, the package asked for" "foo 1.0-1" \
	"$(jq -r '[.packages[] | "\(.package) \(.version)"] | join(",")' "$W/r1.json")"
check_eq "its digests are those of the .deb read alone" \
	"$(jq -cS '.packages' "$W/foo.json" | sha256sum)" \
	"$("$CTL" policy-gen --apt-repo "$W/r1" --keyring "$W/archive.gpg" --package foo --hash sha256 --hash sha1 | jq -cS .packages | sha256sum)"
check "--all-packages" gen_repo "$W/r1" --all-packages --out "$W/all.json"
check_eq "--all-packages takes both" "bar,foo" "$(jq -r '[.packages[].package] | sort | join(",")' "$W/all.json")"
printf 'bar\t\t\t\t\tinstall\nfoo\t\t\t\t\tdeinstall\n' >"$W/selections"
check "--selections (dpkg --get-selections)" gen_repo "$W/r1" --selections "$W/selections" --out "$W/sel.json"
check_eq "--selections takes what is installed, not what is deinstalled" "bar" \
	"$(jq -r '[.packages[].package] | join(",")' "$W/sel.json")"
gen_repo "$W/r1" --package nosuch >/dev/null 2>"$W/err" ; rc=$?
check_eq "a package the archive lacks fails the run, naming it" "2 yes" \
	"$rc $(grep -q 'package "nosuch" is not in the archive' "$W/err" && echo yes)"
check_fails "without --keyring: refused" "$CTL" policy-gen --apt-repo "$W/r1" --package foo
gen_repo "$W/r1" --package foo --keyring "$W/other.gpg" >/dev/null 2>"$W/err"; rc=$?
check_eq "signed by a key not in the keyring: refused by gpgv" "2 yes" \
	"$rc $(grep -q 'gpgv refused the signature' "$W/err" && echo yes)"

# tamper DESC SETUP-COMMAND EXPECTED-ERROR: a copy of r1 changed by SETUP is refused
tamper() {
	local d=$1 setup=$2 want=$3 t=$W/t$RANDOM
	cp -a "$W/r1" "$t"
	( cd "$t" && eval "$setup" )
	rm -f "$W/t.json"
	gen_repo "$t" --all-packages --out "$W/t.json" 2>"$W/err" >/dev/null; local rc=$?
	check_eq "$d: refused (exit 2), no policy written" "2 no" "$rc $([[ -e $W/t.json ]] && echo yes || echo no)"
	check "$d: the error says why ($want)" grep -q -- "$want" "$W/err"
	sed 's/^/    # /' "$W/err"
}
tamper "a .deb changed after signing" \
	"printf 'x' >>foo_1.0-1_amd64.deb" "does not match the signed Packages index"
tamper "a .deb swapped for another signed package" \
	"cp foo_1.0-1_amd64.deb f && mv bar_2.0-1_amd64.deb foo_1.0-1_amd64.deb && mv f bar_2.0-1_amd64.deb" \
	"does not match the signed Packages index"
tamper "Packages changed after signing" \
	"sed -i 's/^Version: 1.0-1/Version: 9.9-9/' Packages" "Packages does not match the signed Release"
tamper "Packages.gz changed after signing" \
	"printf 'x' >>Packages.gz" "Packages.gz does not match the signed Release"
tamper "Release changed after signing (InRelease)" \
	"sed -i 's/^Date: .*/Date: Thu, 01 Jan 2099 00:00:00 UTC/' InRelease" "gpgv refused the signature"
tamper "InRelease removed, Release unsigned" "rm InRelease" "has no signature"
tamper "a signed Release past its Valid-Until (a replayed archive)" \
	"printf 'Valid-Until: Wed, 01 Jan 2020 00:00:00 UTC\n' >>Release && rm InRelease && gpg --batch --local-user archive@example.org --clearsign -o InRelease Release 2>/dev/null" \
	"the signed Release expired"
tamper "Release + Release.gpg with Release changed" \
	"rm InRelease && gpg --batch --local-user archive@example.org -abs -o Release.gpg Release 2>/dev/null && sed -i 's/^Date: .*/Date: x/' Release" \
	"gpgv refused the signature"
t=$W/detached && cp -a "$W/r1" "$t" && rm "$t/InRelease" &&
	gpg --batch --local-user archive@example.org -abs -o "$t/Release.gpg" "$t/Release" 2>/dev/null
check "Release + Release.gpg (a detached signature) is accepted" gen_repo "$t" --package foo --out "$W/det.json"
t=$W/valid && cp -a "$W/r1" "$t" && rm "$t/InRelease" &&
	printf 'Valid-Until: %s\n' "$(LC_ALL=C date -u -d '+7 days' '+%a, %d %b %Y %H:%M:%S UTC')" >>"$t/Release" &&
	gpg --batch --local-user archive@example.org --clearsign -o "$t/InRelease" "$t/Release" 2>/dev/null
check "a Release valid for 7 more days is accepted" gen_repo "$t" --package foo --out "$W/valid.json"

# --- 3. what a violation says ---------------------------------------------------------------------
mkdir -p "$W/r2" && cp "$W/repo/"*.deb "$W/r2/" && sign_repo "$W/r2"
check "both versions of foo in one policy" gen_repo "$W/r2" --package foo --out "$W/both.json"
check_eq "foo 1.0-1 and 1.1-1" "1.0-1,1.1-1" "$(jq -r '[.packages[].version] | sort | join(",")' "$W/both.json")"
foo2=$(jq -r '.packages[] | select(.version == "1.1-1") | .files["/usr/bin/foo"][0]' "$W/both.json")
check "1.0's /usr/bin/foo passes" "$CTL" policy-check "$W/both.json" /usr/bin/foo "$foo1"
check "1.1's /usr/bin/foo passes" "$CTL" policy-check "$W/both.json" /usr/bin/foo "$foo2"
bad=sha256:$(printf '%064d' 7)
"$CTL" policy-check "$W/both.json" /usr/bin/foo "$bad" >"$W/out" 2>&1
check_eq "a modified binary: digest_mismatch naming the package and its versions" \
	"/usr/bin/foo: not the content of any known version of foo 1.0-1, 1.1-1; the file was changed after installation or comes from elsewhere" \
	"$(grep -o '/usr/bin/foo: not the content.*' "$W/out")"
"$CTL" policy-check "$W/both.json" /usr/bin/evil "$bad" >"$W/out" 2>&1
check "a path no package owns says so" grep -q '/usr/bin/evil: no package owns this path' "$W/out"
"$CTL" policy-check "$W/both.json" /etc/foo.conf "$bad" >"$W/out" 2>&1
check "an edited conffile: digest_mismatch, said to be a conffile" grep -q 'digest_mismatch' "$W/out"
jq '.conffiles = "any"' "$W/both.json" >"$W/any.json"
check "with \"conffiles\": \"any\" an edited conffile passes" \
	"$CTL" policy-check "$W/any.json" /etc/foo.conf "$bad"
check_fails "and a binary still does not" "$CTL" policy-check "$W/any.json" /usr/bin/foo "$bad"

# --- 4. two real Debian packages --------------------------------------------------------------
mkdir -p "$W/real"
if (cd "$W/real" && apt-get download hello base-files >"$W/apt.log" 2>&1); then
	for deb in "$W"/real/*.deb; do
		n=$(basename "$deb")
		"$CTL" policy-gen --deb "$deb" --out "$W/real.json" 2>/dev/null
		rm -rf "$W/rx" && mkdir "$W/rx" && dpkg-deb -x "$deb" "$W/rx"
		want=$(cd "$W/rx" && find . -type f -print0 | xargs -0 -r sha256sum | sed -E 's#  \./#  /#' |
			awk '{d=$1; $1=""; sub(/^ +/, ""); gsub(/ /, "_"); print $0 " " d}' | LC_ALL=C sort)
		have=$(jq -r '.packages[0].files | to_entries[] | "\(.key) \(.value[0][7:])"' "$W/real.json" | LC_ALL=C sort)
		check_eq "$n: every digest equals sha256sum after dpkg-deb -x ($(wc -l <<<"$want") files)" "$want" "$have"
	done
	check_eq "two real packages were checked" 2 "$(ls "$W"/real/*.deb | wc -l)"
else
	fail "apt-get download hello base-files failed, so the real packages were NOT checked: $(tail -n 1 "$W/apt.log")"
fi
finish
