#!/usr/bin/env bash
# `make deb`: both packages build; their Depends cover every shared library each binary loads
# (and the TCTI ESYS loads with dlopen), and each is satisfied by a real Debian package; both
# install with dpkg into a throwaway root (dpkg --root: its own package database), where each
# binary runs and says its version, each has copyright and changelog.gz (lintian finds no
# error), the configuration files are conffiles, the units verify, and removing the packages
# leaves only the configuration.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

for t in dpkg dpkg-deb dpkg-shlibdeps dpkg-parsechangelog objdump systemd-analyze lintian; do
	command -v $t >/dev/null || { fail "$t missing (make deps: dpkg-dev, binutils, systemd, lintian)"; finish; exit 1; }
done
/usr/bin/python3 -c 'import debian.copyright' 2>/dev/null ||
	{ fail "python3-debian missing (make deps)"; finish; exit 1; }
W=$T_TMP
make -C "$TOP" --no-print-directory deb >"$W/deb.log" 2>&1
check_eq "make deb: exit 0" 0 $?
DEB=$TOP/${BUILD:-build}/deb
VERSION=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")
ARCH=$(dpkg --print-architecture)
VDEB=$DEB/attest-verifier_${VERSION}_$ARCH.deb ADEB=$DEB/attestd_${VERSION}_$ARCH.deb
check "two packages: $(basename "$VDEB"), $(basename "$ADEB")" test -f "$VDEB" -a -f "$ADEB"

# --- Depends ---------------------------------------------------------------------------------
# needed_packages DEB: the package of every library its executables link (NEEDED), one per line.
needed_packages() {
	local x f so path
	x=$W/x-$(basename "$1")
	rm -rf "$x" && dpkg-deb -x "$1" "$x"
	for f in "$x"/usr/bin/* "$x"/usr/sbin/*; do
		[[ -x $f ]] || continue
		objdump -p "$f" | sed -n 's/^ *NEEDED *//p'
	done | sort -u | while read -r so; do
		path=$(ldconfig -p | sed -n "s|^\t$so (libc6,x86-64) => ||p" | sed -n 1p)
		[[ -n $path ]] || { echo "?$so"; continue; }
		# dpkg knows a file by the path its package ships (/lib or /usr/lib, usrmerge).
		{ dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null ||
			echo "?$so"; } | sed -n 1p | cut -d: -f1
	done | sort -u
}
# depends_names DEB: the package names of its Depends, one per line.
depends_names() {
	dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/(.*//; s/ //g' | grep . | sort -u
}
for deb in "$VDEB" "$ADEB"; do
	name=$(dpkg-deb -f "$deb" Package)
	need=$(needed_packages "$deb")
	dep=$(depends_names "$deb")
	missing=$(comm -23 <(echo "$need") <(echo "$dep") | tr '\n' ' ')
	check "$name: linked libraries found ($(echo $need))" test "$(grep -c . <<<"$need")" -ge 4
	check_eq "$name: Depends names the package of every linked library" "" "${missing% }"
	unsat=
	while read -r d; do
		pkg=${d%% *} ver=$(sed -n 's/.*(>= \(.*\))/\1/p' <<<"$d")
		have=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null)
		if [[ -z $have ]] || { [[ -n $ver ]] && ! dpkg --compare-versions "$have" ge "$ver"; }; then
			unsat+="$d; "
		fi
	done < <(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/^ *//')
	check_eq "$name: every Depends is a Debian package this machine satisfies" "" "$unsat"
	check_eq "$name: version $VERSION" "$VERSION" "$(dpkg-deb -f "$deb" Version)"
done
check "attestd: Depends on the TCTI ESYS dlopens (libtss2-tcti-device0)" \
	bash -c "dpkg-deb -f '$ADEB' Depends | grep -q 'libtss2-tcti-device0'"
check "attest-verifier: no TPM library but the marshalling one" \
	bash -c "! dpkg-deb -f '$VDEB' Depends | grep -q 'esys\|tcti'"

# --- lintian ------------------------------------------------------------------------------------
# Debian's own checks on both packages. Allowed: bogus-mail-host (Maintainer and the changelog's
# trailer name attest@invalid: the project has published no contact address yet).
lintian --no-tag-display-limit "$VDEB" "$ADEB" >"$W/lintian.log" 2>&1
check "lintian ran on both packages" grep -q 'bogus-mail-host Maintainer' "$W/lintian.log"
check_eq "lintian: no error or warning but the contact address" "" \
	"$(grep -E '^[EW]: ' "$W/lintian.log" | grep -vE ': bogus-mail-host(-in-debian-changelog)? ')"

# --- into a throwaway root ----------------------------------------------------------------------
R=$W/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/triggers"
: >"$R/var/lib/dpkg/status"
# The root has no libraries, so Depends cannot be met inside it (checked above instead); the
# maintainer scripts run outside a chroot, with DPKG_ROOT set.
dpkg --root="$R" --log=/dev/null --force-depends --force-script-chrootless -i "$VDEB" "$ADEB" \
	>"$W/dpkg.log" 2>&1
check_eq "dpkg --root -i both packages: exit 0" 0 $?
q() { dpkg-query --admindir="$R/var/lib/dpkg" "$@"; }
check_eq "both installed" "attest-verifier install ok installed|attestd install ok installed" \
	"$(q -W -f='${Package} ${Status}|' | sed 's/|$//')"
for bin in usr/sbin/verifier usr/bin/attestctl usr/sbin/attestd; do
	check_eq "$bin --version" "$(basename "$bin") $VERSION" "$("$R/$bin" --version 2>&1)"
done
check "the man pages are there, compressed" test -f "$R/usr/share/man/man8/verifier.8.gz" \
	-a -f "$R/usr/share/man/man5/attestd.conf.5.gz" -a -f "$R/usr/share/man/man1/attestctl.1.gz"
# /usr/share/doc: the documents the man pages and the README point to, in each package.
for f in attest-verifier/README.md attest-verifier/SECURITY.md attest-verifier/openapi.json \
	attest-verifier/policies/README.md attest-verifier/policies/examples/minimal.json \
	attest-verifier/examples/webhook_receiver.py attestd/README.md attestd/SECURITY.md; do
	check "/usr/share/doc/$f" test -s "$R/usr/share/doc/$f"
done
# copyright (machine-readable, format 1.0) and the changelog, the tree's, in each package (native
# packages: changelog.gz).
for name in attest-verifier attestd; do
	doc=$R/usr/share/doc/$name
	check "$name: copyright is packaging/copyright" cmp -s "$TOP/packaging/copyright" "$doc/copyright"
	check "$name: copyright parses as format 1.0 (python3-debian, strict), Files: * with its license" \
		/usr/bin/python3 -c '
import sys
from debian.copyright import Copyright
c = Copyright(open(sys.argv[1], encoding="utf-8"), strict=True)
assert c.header.format == "https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
f = c.find_files_paragraph("usr/sbin/verifier")
assert f is not None and f.copyright and f.license.synopsis and f.license.text
' "$doc/copyright"
	check "$name: changelog.gz is packaging/changelog, compressed without a timestamp" \
		bash -c "gzip -dc '$doc/changelog.gz' | cmp -s - '$TOP/packaging/changelog' &&
			gzip -9nc '$TOP/packaging/changelog' | cmp -s - '$doc/changelog.gz'"
	check_eq "$name: the changelog's newest entry is the package's version" "attest $VERSION" \
		"$(gzip -dc "$doc/changelog.gz" >"$W/changelog" &&
			echo "$(dpkg-parsechangelog -l "$W/changelog" -S Source)" \
				"$(dpkg-parsechangelog -l "$W/changelog" -S Version)")"
	check_eq "$name: copyright and changelog.gz are 0644" "644 644" \
		"$(stat -c %a "$doc/copyright" "$doc/changelog.gz" | tr '\n' ' ' | sed 's/ $//')"
done
named=$(cat "$TOP/README.md" "$TOP"/verifier/*.scd "$TOP"/verifier/attestctl/*.scd "$TOP"/attestd/*.scd |
	grep -o '/usr/share/doc/[A-Za-z0-9_./-]*[A-Za-z0-9]' | sort -u)
missing=
for f in $named; do [[ -e $R$f ]] || missing+="$f "; done
check "the README and the man pages name files of /usr/share/doc ($(echo $named))" test -n "$named"
check_eq "every file of /usr/share/doc they name is in the packages" "" "$missing"
check "the example webhook receiver runs from the package" \
	python3 "$R/usr/share/doc/attest-verifier/examples/webhook_receiver.py" --help
check_eq "conffiles" "/etc/attest/verifier.conf /etc/attest/attestd.conf" \
	"$(q -W -f='${Conffiles}\n' attest-verifier attestd | awk '{ print $1 }' | grep . | tr '\n' ' ' | sed 's/ $//')"
# The units' default dependencies come from this machine's units, beside the packages' own, and
# the verifier's ExecReload= runs procps' kill(1) (a Depends, not installed in this root).
cp -an /lib/systemd/system/. "$R/lib/systemd/system/"
mkdir -p "$R/bin" && cp -n /bin/kill "$R/bin/kill"
check "attest-verifier: Depends on procps (/bin/kill of its ExecReload=)" \
	bash -c "dpkg-deb -f '$VDEB' Depends | grep -qw procps"
out=$(cd "$R" && MANPATH=$R/usr/share/man systemd-analyze verify --root="$R" \
	/lib/systemd/system/attest-verifier.service /lib/systemd/system/attestd.service 2>&1)
check_eq "systemd-analyze verify on the packages' units: clean" "" "$out"
check "ExecStart is the packaged binary" grep -qx \
	'ExecStart=/usr/sbin/verifier --config /etc/attest/verifier.conf' \
	"$R/lib/systemd/system/attest-verifier.service"

dpkg --root="$R" --log=/dev/null --force-script-chrootless -r attest-verifier attestd \
	>>"$W/dpkg.log" 2>&1
check_eq "dpkg -r: exit 0" 0 $?
check "removed: binaries gone, configuration kept" bash -c \
	"! test -e '$R/usr/sbin/verifier' && ! test -e '$R/usr/sbin/attestd' && test -f '$R/etc/attest/verifier.conf'"

finish
