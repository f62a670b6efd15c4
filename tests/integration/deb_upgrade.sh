#!/usr/bin/env bash
# A Debian fleet that upgrades from its archive stays trusted with nothing to review, against the
# real verifier with a software agent (tests/tools/softagent): a policy made with policy-gen
# --apt-repo from a signed repository holding foo 1.0-1; the archive moves to foo 1.1-1;
# `attestctl policy update` stores that as the policy's next version; a machine that upgraded
# (runs 1.1's /usr/bin/foo) and one that has not yet (1.0's, within the grace period) are both
# trusted, with no violation. A modified /usr/bin/foo is caught, and the violation names the
# package and its versions in the API and in attestctl; a path no package owns says so. After
# the grace period 1.0-1 is retired. A tampered archive changes nothing; an archive that did not
# change makes no version.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
for t in dpkg-deb apt-ftparchive gpg gpgv; do
	command -v $t >/dev/null || { fail "$t not installed (deps.txt)"; finish; exit 1; }
done
export LC_ALL=C GNUPGHOME=$W/gnupg
mkdir -m 700 "$GNUPGHOME"
version_of() { op /v1/policies/default/versions | jq '.versions[0].version'; }

mkdeb() {
	local r=$W/build/$1-$2
	mkdir -p "$r/DEBIAN" "$r/usr/bin" "$r/etc"
	printf 'Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: test\n' \
		"$1" "$2" >"$r/DEBIAN/control"
	printf '#!/bin/sh\necho %s %s\n' "$1" "$2" >"$r/usr/bin/$1"
	chmod 755 "$r/usr/bin/$1"
	dpkg-deb --root-owner-group --build "$r" "$W/debs/${1}_${2}_amd64.deb" >/dev/null
}
sign_repo() {
	( cd "$W/repo" && apt-ftparchive packages . >Packages && apt-ftparchive release . >Release &&
	  rm -f InRelease && gpg --batch --yes --local-user archive@example.org --clearsign -o InRelease Release ) >/dev/null 2>&1
}
mkdir -p "$W/debs" "$W/repo"
mkdeb foo 1.0-1 && mkdeb foo 1.1-1 && mkdeb bar 1-1 || { fail "dpkg-deb"; finish; exit 1; }
gpg --batch --quiet --passphrase '' --quick-gen-key 'archive <archive@example.org>' ed25519 sign never 2>/dev/null &&
	gpg --batch --export >"$W/archive.gpg" || { fail "gpg makes the archive key"; finish; exit 1; }
sha_of() { dpkg-deb --fsys-tarfile "$W/debs/foo_$1_amd64.deb" | tar -xOf - ./usr/bin/foo | sha256sum | cut -d' ' -f1; }
F10=$(sha_of 1.0-1) F11=$(sha_of 1.1-1)
BAD=$(printf 'ab%.0s' {1..32})

cp "$W/debs/foo_1.0-1_amd64.deb" "$W/debs/bar_1-1_amd64.deb" "$W/repo/" && sign_repo
# The policy: the archive's foo and bar, and the digest the software agent's first round runs.
"$CTL" policy-gen --apt-repo "$W/repo" --keyring "$W/archive.gpg" --package foo --package bar \
	--out "$W/gen.json" 2>/dev/null || fail "policy-gen --apt-repo"
jq --arg d "sha256:$D1" '.digests["/usr/bin/app1"] = [$d]' "$W/gen.json" >"$W/pkg.json"

start_verifier "$W/v" "${VARGS[@]}" || { fail "verifier starts"; finish; exit 1; }
check "policy put: the package policy is the default policy" ctl policy put default "$W/pkg.json"
agent a || { finish; exit 1; }
agent b || { finish; exit 1; }
trusted "foo 1.0-1 as packaged: trusted" a --append "/usr/bin/foo:$F10"
trusted "machine b runs foo 1.0-1 too: trusted" b --append "/usr/bin/foo:$F10"
v0=$(version_of)

# --- the archive moves to foo 1.1-1 ------------------------------------------------------------
rm "$W/repo/foo_1.0-1_amd64.deb" && cp "$W/debs/foo_1.1-1_amd64.deb" "$W/repo/" && sign_repo
ctl policy get default >"$W/before.json"
ctl policy update default --apt-repo "$W/repo" --keyring "$W/archive.gpg" >"$W/upd.txt" 2>&1
check_eq "policy update: 1.1-1 added, 1.0-1 kept for its grace period" \
	"policy default: 1 package versions added, 1 kept, 1 no longer in the archive (kept 7 days), 0 retired, 0 back in the archive" \
	"$(head -n 1 "$W/upd.txt")"
check_eq "a new version of the policy, through the history" "$((v0 + 1))" "$(version_of)"
check_eq "the new version holds foo 1.0-1 (missing since now) and 1.1-1" "1.0-1:true 1.1-1:false" \
	"$(op /v1/policies/default | jq -r '[.packages[] | select(.package == "foo") | "\(.version):\(has("missing_since"))"] | sort | join(" ")')"
ctl policy diff "$W/before.json" @default >"$W/diff.txt"
check_eq "policy diff shows what the update changed, package by package" \
	"~package foo 1.0-1 amd64|+package foo 1.1-1 amd64 (1 files)" "$(paste -sd '|' "$W/diff.txt")"
trusted "machine a upgrades to foo 1.1-1: trusted" a --append "/usr/bin/foo:$F11"
trusted "machine b has not upgraded yet (1.0-1 in its grace period): trusted" b --append "/usr/bin/foo:$F10"
check_eq "nothing to review: no violation at all" "0" "$(op /v1/violations | jq '.violations | length')"

# --- a modified binary, and a file no package owns -------------------------------------------
sa round "$W/a-a" --append "/usr/bin/foo:$BAD"
check_eq "a modified /usr/bin/foo: untrusted, digest_mismatch" "untrusted digest_mismatch" "$(verdict) $(reasons)"
check_eq "the API's violation names the package and its versions" \
	"/usr/bin/foo: not the content of any known version of foo 1.0-1, 1.1-1; the file was changed after installation or comes from elsewhere" \
	"$(op '/v1/violations?agent=a' | jq -r '.violations[] | select(.reason == "digest_mismatch") | .explanation')"
ctl violations --agent a >"$W/viol.txt"
check "attestctl violations shows it" grep -q '  /usr/bin/foo: not the content of any known version of foo 1.0-1, 1.1-1;' "$W/viol.txt"
sa round "$W/a-b" --append "/usr/bin/evil:$BAD"
check_eq "a file no package lists: not_in_allowlist" "untrusted not_in_allowlist" "$(verdict) $(reasons)"
check_eq "and its violation says no package owns the path" "/usr/bin/evil: no package owns this path" \
	"$(op '/v1/violations?agent=b' | jq -r '.violations[] | select(.reason == "not_in_allowlist") | .explanation')"

# --- what changes nothing -----------------------------------------------------------------------
v1=$(version_of)
ctl policy update default --apt-repo "$W/repo" --keyring "$W/archive.gpg" >"$W/upd.txt" 2>&1
check "an archive that did not change: no new version" grep -q 'no change, no new version' "$W/upd.txt"
check_eq "the version stays" "$v1" "$(version_of)"
cp -a "$W/repo" "$W/bad" && printf 'x' >>"$W/bad/foo_1.1-1_amd64.deb"
ctl policy update default --apt-repo "$W/bad" --keyring "$W/archive.gpg" >"$W/upd.txt" 2>&1; rc=$?
check_eq "a tampered archive: refused (exit 2), naming the .deb" "2 yes" \
	"$rc $(grep -q 'foo_1.1-1_amd64.deb.*does not match the signed Packages index' "$W/upd.txt" && echo yes)"
check_eq "and nothing stored" "$v1" "$(version_of)"

# --- after the grace period -------------------------------------------------------------------
ctl policy update default --apt-repo "$W/repo" --keyring "$W/archive.gpg" --retire-after 0 >"$W/upd.txt" 2>&1
check_eq "--retire-after 0: foo 1.0-1 retired" \
	"policy default: 0 package versions added, 2 kept, 0 no longer in the archive (kept 0 days), 1 retired, 0 back in the archive" \
	"$(head -n 1 "$W/upd.txt")"
check_eq "a new version" "$((v1 + 1))" "$(version_of)"
sa round "$W/a-b" --append "/usr/bin/foo:$F10"
check_eq "a machine still on foo 1.0-1 after that: digest_mismatch" "untrusted digest_mismatch" "$(verdict) $(reasons | cut -d, -f1)"
check "its violation lists the one version left" grep -q 'known version of foo 1.1-1;' \
	<(op '/v1/violations?agent=b' | jq -r '.violations[] | select(.reason == "digest_mismatch") | .explanation')
finish
