#!/usr/bin/env bash
# The documentation against the code: every man page renders with `man -l` without a warning;
# the options each daemon's --help prints (its option table) are exactly the ones its man page
# documents, and exactly the keys of the example configuration file plus --config, --help and
# --version; attestctl's --help and its man page name the same commands and options.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

MAN=$B/man
for bin in verifier attestd attestctl; do
	[[ -x $B/$bin ]] || { fail "missing $B/$bin (run make)"; finish; exit 1; }
done
command -v man >/dev/null || { fail "man not installed (make deps: man-db)"; finish; exit 1; }

# --- every page renders, without a warning from groff (--warnings=w: all of them) ------------
pages=("$MAN"/*.[158])
check_eq "five man pages built" 5 "${#pages[@]}"
for page in "${pages[@]}"; do
	name=$(basename "$page")
	out=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings=w -E UTF-8 -l "$page" 2>"$T_TMP/err")
	rc=$?
	if [[ $rc -eq 0 && ! -s $T_TMP/err && $(wc -l <<<"$out") -gt 10 ]]; then
		ok "man -l $name renders without warnings"
	else
		fail "man -l $name: exit $rc, $(wc -l <<<"$out") lines, warnings: $(head -n 3 "$T_TMP/err")"
	fi
	if grep -q '@[A-Z]*@' "$page"; then
		fail "$name: a placeholder was left: $(grep -o '@[A-Z]*@' "$page" | sed -n 1p)"
	else
		ok "$name: no placeholder left"
	fi
done

# --- daemons: --help (the table) = man page = example configuration + command-line-only -----
help_options() { "$B/$1" --help | sed -n 's/^  --\([a-z0-9-]*\).*/\1/p' | sort; }
man_options() { "$TOP/scripts/manopts.py" options "$1" | sort; }
conf_keys() { sed -n 's/^#\{0,1\}\([a-z0-9-]*\) = .*/\1/p' "$1" | sort; }
only_cli='config help version'

for d in verifier:verifier/verifier.8.scd attestd:attestd/attestd.8.scd; do
	prog=${d%%:*} scd=$TOP/${d#*:}
	help=$(help_options "$prog")
	manp=$(man_options "$scd")
	conf=$(conf_keys "$B/etc/$prog.conf")
	want_conf=$(grep -vxF -f <(tr ' ' '\n' <<<"$only_cli") <<<"$help")
	check "$prog: --help lists options" test "$(wc -l <<<"$help")" -gt 5
	if [[ $help == "$manp" ]]; then
		ok "$prog: --help and $prog(8) name the same $(wc -l <<<"$help") options"
	else
		fail "$prog: --help and $prog(8) differ (< code, > man page): $(diff <(echo "$help") <(echo "$manp") | grep '^[<>]' | tr '\n' ' ')"
	fi
	if [[ $want_conf == "$conf" ]]; then
		ok "$prog: the example $prog.conf has a key for every option but $only_cli"
	else
		fail "$prog: example $prog.conf keys differ (< code, > example): $(diff <(echo "$want_conf") <(echo "$conf") | grep '^[<>]' | tr '\n' ' ')"
	fi
	for key in $only_cli; do
		check "$prog(8): --$key is marked command line only" \
			bash -c "grep -A4 -F -- '*--$key*' '$scd' | grep -q 'Command line only'"
	done
done

# --- attestctl: the commands and options of --help are the man page's, and vice versa -------
help=$("$B/attestctl" --help)
# policy-gen DIR: the --hash choices of --help are the man page's (they disagreed once).
h=$(grep -o 'policy-gen DIR [^|]*--hash [a-z0-9|]*' <<<"$help" | grep -o -- '--hash [a-z0-9|]*')
m=$(tr -d '*_' <"$TOP/verifier/attestctl/attestctl.1.scd" | grep -o -- '--hash sha1|sha256[a-z0-9|]*' | sort -u)
check_eq "attestctl policy-gen DIR: --help and attestctl(1) name the same --hash choices" "$m" "$h"
check "attestctl(1) says policy-gen --exclude matches the whole path" \
	grep -q 'must match the whole' "$TOP/verifier/attestctl/attestctl.1.scd"
cmds_help=$(sed -n 's/^  \([a-z][a-z-]*\).*/\1/p' <<<"$help" | sort -u)
cmds_man=$(sed -n 's/^## \([a-z][a-z-]*\)$/\1/p' "$TOP/verifier/attestctl/attestctl.1.scd" | sort -u)
if [[ $cmds_help == "$cmds_man" ]]; then
	ok "attestctl: --help and attestctl(1) name the same $(wc -l <<<"$cmds_help") commands"
else
	fail "attestctl: commands differ (< --help, > man page): $(diff <(echo "$cmds_help") <(echo "$cmds_man") | grep '^[<>]' | tr '\n' ' ')"
fi
opts_help=$(grep -o -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u)
opts_man=$(grep -o -- '\*--[a-z][a-z0-9-]*\*' "$TOP/verifier/attestctl/attestctl.1.scd" | tr -d '*' | sort -u)
if [[ $opts_help == "$opts_man" ]]; then
	ok "attestctl: --help and attestctl(1) name the same $(wc -l <<<"$opts_help") options"
else
	fail "attestctl: options differ (< --help, > man page): $(diff <(echo "$opts_help") <(echo "$opts_man") | grep '^[<>]' | tr '\n' ' ')"
fi
# --- verifier(8) on a reload: what the unit does, and what SIGHUP reads again -----------------
# main.c's log line names what a reload reads; the page's SIGHUP entry names each, and the unit's
# ExecReload= is the SIGHUP it documents.
page=$(MANWIDTH=200 LC_ALL=C.UTF-8 man -E UTF-8 -l "$MAN/verifier.8" 2>/dev/null)
sighup=$(sed -n '/^ *SIGHUP$/,/^ *[A-Z][A-Z]*$/p' <<<"$page" | tr -s ' \n' ' ')
reloads=$(sed -n 's/.*"SIGHUP: reloading \(.*\)");$/\1/p' "$TOP/verifier/main.c")
check_eq "main.c: a reload reads the tokens, the EK CAs, the policy signers and the TLS certificate" \
	"the operator tokens, the EK CAs, the policy signers and the TLS certificate" "$reloads"
for what in "token file" "--ek-ca" "--policy-signers" "TLS certificate and key" "--tls-cert" \
	"fingerprint" "loaded before"; do
	check "verifier(8), SIGNALS, SIGHUP: names \"$what\"" grep -qF -- "$what" <<<"$sighup"
done
check "verifier(8) says systemctl reload, as the unit's ExecReload= sends SIGHUP" bash -c \
	"grep -qF 'systemctl reload attest-verifier' <<<\"\$1\" &&
	 grep -qx 'ExecReload=/bin/kill -HUP \$MAINPID' '$TOP/verifier/attest-verifier.service.in'" _ "$page"
check_fails "verifier(8) no longer says the certificate is read at start only" \
	grep -q 'read at start only' <<<"$page"

check "--version of each binary is 'NAME VERSION'" bash -c \
	"'$B/verifier' --version | grep -qx 'verifier [0-9][0-9.]*' &&
	 '$B/attestd' --version | grep -qx 'attestd [0-9][0-9.]*' &&
	 '$B/attestctl' --version | grep -qx 'attestctl [0-9][0-9.]*'"

# --- the README's commands run on a minimal Debian, which has no sudo ------------------------
check_eq "README.md: no command uses sudo (a minimal Debian lacks it; say \"as root\")" "" \
	"$(grep -nw sudo "$TOP/README.md" | grep -v 'no `sudo`\|`sudo` is not' | tr '\n' ' ')"

# --- the page's login: bookmarkable views, the token never in an address -------------------
check "verifier(8), THE WEB PAGE: bookmarks and the password manager, never the token in an address" \
	bash -c "sed -n '/^# THE WEB PAGE/,/^# /p' '$TOP/verifier/verifier.8.scd' | tr '\n' ' ' |
		grep -q 'bookmarked.*never part of an address.*password manager'"
check "the page's token field is one a password manager may fill (autocomplete current-password)" \
	grep -q 'id="token"[^>]*autocomplete="current-password"' "$TOP/verifier/http/ui/index.html"

# --- the README against the packaged unit ---------------------------------------------------
# The verifier's unit runs as a user systemd makes (DynamicUser=): a secret it reads cannot be
# a file of root's in /etc/attest (mode 0600), and a verifier run by hand beside the unit is
# refused (its default state directory is the unit's, a link systemd made).
check "the unit runs the verifier as a dynamic user" grep -qx 'DynamicUser=yes' \
	"$TOP/verifier/attest-verifier.service.in"
check_eq "README.md: no secret the verifier reads is a file in /etc/attest" "" \
	"$(grep -nE '(cluster-key|tls-key|operator-token-file|webhook-secret-file)[ =]+/etc/attest|passfile=/etc/attest' "$TOP/README.md" | tr '\n' ' ')"
check_eq "README.md: no verifier started by hand with --policy-replace" "" \
	"$(grep -n '`verifier --config[^`]*--policy-replace' "$TOP/README.md" | tr '\n' ' ')"
# The backup section names every file a verifier keeps in its state directory beside the store.
state=$T_TMP/state
port=$(free_port) || port=
if [[ -n $port ]]; then
	"$B/verifier" --config /dev/null --state-dir "$state" --listen "127.0.0.1:$port" \
		>"$T_TMP/v.out" 2>&1 &
	vpid=$!
	track_pid "$vpid"
	for _ in $(seq 1 100); do [[ -s $state/operator-token ]] && break; sleep 0.1; done
	sleep 0.5
	kill "$vpid" 2>/dev/null
	wait "$vpid" 2>/dev/null
fi
made=$(find "$state" -maxdepth 1 -type f -printf '%f\n' 2>/dev/null | grep -vE '^verifier\.(db|db-wal|db-shm|lock)$' | sort)
backup=$(sed -n '/^### Backups and restore/,/^### Upgrades/p' "$TOP/README.md" | tr '\n' ' ')
check "a verifier made its state directory's files ($(echo $made))" test "$(grep -c . <<<"$made")" -ge 5
missing=
for f in $made; do grep -qF "\`$f\`" <<<"$backup" || missing+="$f "; done
check_eq "README.md, Backups and restore: names every file of the state directory to copy" "" "$missing"
finish
