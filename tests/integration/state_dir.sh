#!/usr/bin/env bash
# The verifier's state directory is private and its own: started in an existing directory of
# mode 0755 (with a file others can read in it) under umask 022, it makes the directory 0700
# and every file in it 0600, saying so; every file it creates is 0600; a second verifier on the
# same directory is refused while the first runs and serves on; a directory owned by another
# user, or a symbolic link, is refused, and so is one under a directory that others than root
# and the verifier's user can change (unless sticky, as /tmp).
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

VERIFIER=$B/verifier
command -v curl >/dev/null || { skip "curl not installed"; finish; exit; }
[[ -x $VERIFIER ]] || { fail "missing $VERIFIER (run make)"; finish; exit 1; }
W=$T_TMP
umask 022

# modes DIR: "MODE NAME" for the directory and each file in it, sorted.
modes() { (cd "$1" && stat -c '%a %n' . ./* | sort -k2); }
# refused STATE: a verifier on STATE exits with status 1 within 10 s without listening; its
# stderr in $W/refused.log.
refused() {
	local port
	port=$(free_port) || return 1
	timeout 10 "$VERIFIER" --config /dev/null --listen "127.0.0.1:$port" --state-dir "$1" \
		>"$W/refused.out" 2>"$W/refused.log"
	[[ $? -eq 1 && ! -s $W/refused.out ]]
}

S=$W/state
mkdir -m 0755 "$S"
echo "left by hand" >"$S/notes.txt"
chmod 0644 "$S/notes.txt"
check "verifier starts in a 0755 directory" start_verifier "$S"
check "it says it made the directory 0700" grep -q "was mode 0755, others could enter it; made it 0700" "$VLOG"
check "it says it made notes.txt 0600" grep -q "notes.txt\" was mode 0644, others could read it; made it 0600" "$VLOG"
check "the store is written (a round trip through the API)" \
	curl -sSf --cacert "$S/ca.pem" -o /dev/null "$URL/healthz"
bad=$(modes "$S" | grep -vE '^(700 \.|600 \./.*)$')
check_eq "directory 0700, every file 0600 ($(modes "$S" | wc -l) entries)" "" "$bad"
for f in verifier.db verifier.db-wal verifier.db-shm ca.pem ca-key.pem server.pem server-key.pem \
	operator-token verifier.lock; do
	check_eq "$f is 0600" 600 "$(stat -c %a "$S/$f" 2>&1)"
done

check "a second verifier on the same directory is refused" refused "$S"
check "it names the first one's pid" grep -q "another verifier (pid $VPID) uses \"$S\"" "$W/refused.log"
check "the first one still serves" curl -sSf --cacert "$S/ca.pem" -o /dev/null "$URL/healthz"
check_eq "the refused one changed nothing" "" "$(modes "$S" | grep -vE '^(700 \.|600 \./.*)$')"

stop_pid "$VPID"
check "after it stopped, a verifier starts on the directory again" start_verifier "$S"
stop_pid "$VPID"

ln -s "$S" "$W/link"
check "a state directory that is a symbolic link is refused" refused "$W/link"
check "it says why" grep -q 'is not a directory (or is a symbolic link)' "$W/refused.log"
# Whoever can write a directory above it could put another directory at its path once it was
# checked (with their own token, keys or store in it): refused before anything is created.
mkdir "$W/open"
chmod 0777 "$W/open"
check "a state directory under a directory anyone can write is refused" refused "$W/open/state"
check "it names that directory and says why" \
	grep -q "\"$(realpath "$W/open")\" (uid $(id -u), mode 0777) can be changed by others" "$W/refused.log"
check_eq "and creates nothing in it" "" "$(ls -A "$W/open")"
chmod 0775 "$W/open"
check "one its group can write is refused too" refused "$W/open/state"
chmod 1777 "$W/open"
check "under a sticky one (as /tmp, where others cannot rename it), the verifier starts" \
	start_verifier "$W/open/state"
stop_pid "$VPID"
if [[ $(id -u) -eq 0 ]] && id nobody >/dev/null 2>&1; then
	mkdir -m 0755 "$W/above"
	chown nobody "$W/above"
	check "a state directory under another user's directory is refused" refused "$W/above/state"
	check "it says whose it is" grep -q "(uid $(id -u nobody), mode 0755) can be changed by others" "$W/refused.log"
	mkdir -m 0700 "$W/theirs"
	chown nobody "$W/theirs"
	check "a state directory owned by another user is refused" refused "$W/theirs"
	check "it says whose it is" grep -q "belongs to uid $(id -u nobody), not to the verifier's user" "$W/refused.log"
	check_eq "and leaves it empty" "" "$(ls -A "$W/theirs")"
else
	skip "a directory owned by another user (needs root and a user nobody)"
fi
finish
