#!/usr/bin/env bash
# attestctl policy-gen against coreutils: every generated digest equals sha256sum/sha1sum output,
# the guest path mapping (DIR stripped, --prefix, spaces -> '_') holds, excludes are honoured and
# written, symlinks and special files are skipped, and the result loads (attestctl policy-check).
source "$(dirname "$0")/../lib.sh"

CTL=$B/attestctl
if [[ ! -x $CTL ]] || ! command -v jq >/dev/null; then
	skip "attestctl or jq missing"
	finish
	exit
fi

R=$T_TMP/root
mkdir -p "$R/usr/bin" "$R/usr/share/doc dir" "$R/etc" "$R/tmp/cache" "$R/var/log" "$R/empty"
printf '#!/bin/sh\necho tool\n' >"$R/usr/bin/tool"
printf 'with a space\n' >"$R/usr/share/doc dir/read me.txt"
printf 'k=v\n' >"$R/etc/conf"
: >"$R/etc/empty-file"
head -c 300000 /dev/zero | tr '\0' 'z' >"$R/usr/bin/big"
printf 'cached\n' >"$R/tmp/cache/x"
printf 'log\n' >"$R/var/log/a.log"
printf 'kept\n' >"$R/var/log/a.log.keep"
ln -s /etc/passwd "$R/usr/bin/link"
ln -s tool "$R/usr/bin/tool-link"
mkfifo "$R/usr/bin/fifo"

out=$T_TMP/policy.json
check "policy-gen runs" "$CTL" policy-gen "$R/" --exclude '/tmp/.*' --exclude '/var/log/[^/]+\.log' --out "$out"

# Expected: every regular file outside the excludes, by guest path.
declare -A want
while IFS= read -r -d '' f; do
	rel=${f#"$R"}
	case $rel in /tmp/*) continue ;; esac
	[[ $rel =~ ^/var/log/[^/]+\.log$ ]] && continue
	want["${rel// /_}"]=$f
done < <(find "$R" -type f -print0)

check_eq "one entry per regular, non-excluded file" "${#want[@]}" "$(jq '.digests | length' "$out")"
bad=0
for key in "${!want[@]}"; do
	exp="sha256:$(sha256sum <"${want[$key]}" | cut -d' ' -f1)"
	got=$(jq -r --arg p "$key" '.digests[$p] | if . == null then "missing" else (.[0] + " " + (length|tostring)) end' "$out")
	if [[ $got != "$exp 1" ]]; then
		fail "digest of $key: want '$exp 1', got '$got'"
		bad=1
	fi
done
[[ $bad == 0 ]] && ok "every digest equals sha256sum (${#want[@]} files)"
check_eq "space mapped to '_'" true "$(jq '.digests | has("/usr/share/doc_dir/read_me.txt")' "$out")"
check_eq "excluded /tmp file absent" false "$(jq '.digests | has("/tmp/cache/x")' "$out")"
check_eq "excluded log absent" false "$(jq '.digests | has("/var/log/a.log")' "$out")"
check_eq "exclude is anchored at the end" true "$(jq '.digests | has("/var/log/a.log.keep")' "$out")"
check_eq "symlinks not followed" false "$(jq '.digests | has("/usr/bin/link") or has("/usr/bin/tool-link")' "$out")"
check_eq "fifo skipped" false "$(jq '.digests | has("/usr/bin/fifo")' "$out")"
check_eq "excludes written" '["/tmp/.*","/var/log/[^/]+\\.log"]' "$(jq -c '.excludes' "$out")"
check_eq "boot_aggregate by PCRs" '"any-matching-pcrs"' "$(jq -c '.boot_aggregate' "$out")"
check_eq "version 1, violations fail" '1 "fail"' "$(jq -c '.version, .violations' "$out" | tr '\n' ' ' | sed 's/ $//')"

# The policy loads and judges like the verifier.
tool256=$(sha256sum <"$R/usr/bin/tool" | cut -d' ' -f1)
check "policy-check loads it" "$CTL" policy-check "$out"
check_eq "tool allowed" allowed "$("$CTL" policy-check "$out" /usr/bin/tool "sha256:$tool256")"
check_eq "path with space allowed as IMA records it" allowed \
	"$("$CTL" policy-check "$out" "/usr/share/doc_dir/read_me.txt" "sha256:$(sha256sum <"$R/usr/share/doc dir/read me.txt" | cut -d' ' -f1)")"
check_eq "other digest refused" digest_mismatch "$("$CTL" policy-check "$out" /usr/bin/tool "sha256:$(printf x | sha256sum | cut -d' ' -f1)")"
check_fails "refusal exits non-zero" "$CTL" policy-check "$out" /usr/bin/tool "sha256:$(printf x | sha256sum | cut -d' ' -f1)"
check_eq "sha1 of an sha256 entry refused" digest_mismatch "$("$CTL" policy-check "$out" /usr/bin/tool "sha1:$(sha1sum <"$R/usr/bin/tool" | cut -d' ' -f1)")"
check_eq "excluded path" excluded "$("$CTL" policy-check "$out" /tmp/anything "sha256:$tool256")"
check_eq "unknown path" not_in_allowlist "$("$CTL" policy-check "$out" /usr/bin/other "sha256:$tool256")"

# --hash sha1 and --prefix.
out1=$T_TMP/policy1.json
check "policy-gen --hash sha1 --prefix /usr" "$CTL" policy-gen "$R/usr" --hash sha1 --prefix /usr --out "$out1"
check_eq "sha1 digest equals sha1sum under the prefix" "sha1:$(sha1sum <"$R/usr/bin/tool" | cut -d' ' -f1)" \
	"$(jq -r '.digests["/usr/bin/tool"][0]' "$out1")"
check_eq "only the subtree" 3 "$(jq '.digests | length' "$out1")"
check_eq "stdout equals --out" "$(cat "$out1")" "$("$CTL" policy-gen "$R/usr" --hash sha1 --prefix /usr/ 2>/dev/null)"

# Refusals.
check_fails "bad regex refused" "$CTL" policy-gen "$R" --exclude '/tmp/(' --out "$T_TMP/x.json"
check_fails "unknown hash refused" "$CTL" policy-gen "$R" --hash md5 --out "$T_TMP/x.json"
check_fails "missing dir refused" "$CTL" policy-gen "$R/nonexistent" --out "$T_TMP/x.json"
check_fails "a file is not a tree" "$CTL" policy-gen "$R/etc/conf" --out "$T_TMP/x.json"
check_fails "relative prefix refused" "$CTL" policy-gen "$R" --prefix usr --out "$T_TMP/x.json"
printf '{"version":1,"digests":{"/a b":[]}}' >"$T_TMP/bad.json"
check_fails "policy-check refuses an invalid policy" "$CTL" policy-check "$T_TMP/bad.json"

# Every shipped example loads.
for ex in "$TOP"/policies/examples/*.json; do
	[[ -e $ex ]] || continue
	check "example $(basename "$ex") loads" "$CTL" policy-check "$ex"
done

finish
