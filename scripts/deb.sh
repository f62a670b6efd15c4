#!/usr/bin/env bash
# `make deb`: two Debian packages from trees `make install` staged (no debhelper):
#   attest-verifier  verifier, attestctl (the web page is inside the verifier), their man pages,
#                    attest-verifier.service, /etc/attest/verifier.conf
#   attestd          attestd, its man pages, attestd.service, /etc/attest/attestd.conf
# Depends= comes from dpkg-shlibdeps (the libraries the binaries link), plus what no linker sees:
# ESYS loads the TPM device TCTI (libtss2-tcti-device0) with dlopen(3); the verifier's unit
# reloads it with /bin/kill (procps).
#
# Each package's /usr/share/doc/PACKAGE has copyright (packaging/copyright, the machine-readable
# format 1.0) and the changelog (packaging/changelog, gzip -9n: the same bytes every build),
# whose newest entry must be VERSION. The packages are native (built by upstream from its own
# tree, VERSION has no Debian revision), so Debian policy names it changelog.gz, not
# changelog.Debian.gz. The binaries are stripped, as Debian's are (lintian:
# unstripped-binary-or-object); the build tree keeps the unstripped ones.
#
#   scripts/deb.sh VERSION DIR
# DIR/debian/PACKAGE holds each staged tree (`make install DESTDIR=...` with PREFIX=/usr, as the
# Makefile's deb target does); the packages are written to DIR/PACKAGE_VERSION_ARCH.deb.
set -euo pipefail

VERSION=${1:?usage: deb.sh VERSION DIR}
DIR=${2:?usage: deb.sh VERSION DIR}
ARCH=$(dpkg --print-architecture)
MAINTAINER="attest developers <attest@invalid>"
PACKAGING=$(cd "$(dirname "$0")/../packaging" && pwd)
newest=$(dpkg-parsechangelog -l "$PACKAGING/changelog" -S Version)
if [[ $newest != "$VERSION" ]]; then
	echo "deb.sh: packaging/changelog's newest entry is $newest, not $VERSION: add one" >&2
	exit 1
fi
cd "$DIR"

# dpkg-shlibdeps reads debian/control; the packages' own control files are written below.
printf 'Source: attest\n\nPackage: attest-verifier\nArchitecture: any\n\nPackage: attestd\nArchitecture: any\n' \
	>debian/control

# package NAME EXTRA_DEPENDS SUMMARY DESCRIPTION: DEBIAN/ of one staged tree, then the .deb.
package() {
	local name=$1 extra=$2 summary=$3 desc=$4 root=debian/$1 bins shlibs depends
	[[ -d $root ]] || { echo "deb.sh: $root is not staged" >&2; return 1; }
	# Debian policy: man pages compressed, documentation of the package in /usr/share/doc.
	find "$root/usr/share/man" -type f -name '*.[0-9]' -exec gzip -9nf {} +
	install -d "$root/usr/share/doc/$name"
	install -m 0644 "$PACKAGING/copyright" "$root/usr/share/doc/$name/copyright"
	gzip -9nc "$PACKAGING/changelog" >"$root/usr/share/doc/$name/changelog.gz"
	chmod 0644 "$root/usr/share/doc/$name/changelog.gz"
	mapfile -t bins < <(find "$root/usr/bin" "$root/usr/sbin" -type f -perm -u+x 2>/dev/null | sort)
	strip --strip-unneeded --remove-section=.comment --remove-section=.note "${bins[@]}"
	shlibs=$(dpkg-shlibdeps -O "${bins[@]/#/-e}" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
	[[ -n $shlibs ]] || { echo "deb.sh: dpkg-shlibdeps found no libraries for $name" >&2; return 1; }
	depends=$shlibs${extra:+, $extra}
	mkdir -p "$root/DEBIAN"
	cat >"$root/DEBIAN/control" <<CONTROL
Package: $name
Version: $VERSION
Architecture: $ARCH
Maintainer: $MAINTAINER
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Recommends: systemd
Section: admin
Priority: optional
Description: $summary
$(fold -s -w 78 <<<"$desc" | sed 's/ *$//; s/^/ /')
CONTROL
	(cd "$root" && find etc -type f | sed 's|^|/|' | sort) >"$root/DEBIAN/conffiles"
	# The unit is new or changed: tell a running systemd (not inside a dpkg --root install).
	cat >"$root/DEBIAN/postinst" <<'SCRIPT'
#!/bin/sh
set -e
if [ "$1" = configure ] && [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null || true
fi
exit 0
SCRIPT
	cp "$root/DEBIAN/postinst" "$root/DEBIAN/postrm"
	sed -i 's/\[ "$1" = configure \]/[ "$1" = remove ]/' "$root/DEBIAN/postrm"
	chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/postrm"
	(cd "$root" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | sort |
		xargs md5sum) >"$root/DEBIAN/md5sums"
	dpkg-deb --root-owner-group -Zxz --build "$root" "${name}_${VERSION}_${ARCH}.deb" >/dev/null
	echo "deb: $DIR/${name}_${VERSION}_${ARCH}.deb"
}

package attest-verifier "procps" \
	"remote attestation verifier for machines with IMA and a TPM 2.0" \
	"The verifier enrolls the TPMs of the machines it watches (EK certificate chain, credential activation), checks their quotes, replays their IMA measurement lists against the quoted PCR 10 and judges every entry against an allowlist policy; verdicts, violations and policies are kept in SQLite. attestctl and a web page let operators review them. Runs as the systemd unit attest-verifier.service."
package attestd "libtss2-tcti-device0" \
	"remote attestation agent: IMA measurements quoted by the TPM" \
	"attestd enrolls the machine's TPM with an attestation verifier and, in rounds, sends the verifier a TPM quote over a fresh nonce with the IMA measurements that are new since the last round. Runs as the systemd unit attestd.service and needs a TPM 2.0 (/dev/tpmrm0) and IMA."
