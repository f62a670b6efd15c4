#!/usr/bin/env bash
# The state directory's filesystem full: a size-limited tmpfs (mounted here; needs root) holds
# the verifier's state. Agents (tests/tools/softagent) attest, a file then takes every free
# block, and rounds go on. A verdict that cannot be stored must be answered 503 with a JSON
# error (code storage_unavailable: the agent retries later), never acknowledged; the verifier
# stays up and answers reads; once space is back, rounds are stored again. Afterwards the
# store passes `PRAGMA integrity_check` and holds every verdict acknowledged before, during
# and after.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

SA=$B/tools/softagent
VERIFIER=$B/verifier
need_cmds curl jq python3 mountpoint
need_built "$SA" "$VERIFIER"

W=$T_TMP
MNT=$W/state
mkdir -p "$MNT"
df_cleanup() {
	local pid
	for pid in "${T_PIDS[@]}"; do stop_pid "$pid"; done
	mountpoint -q "$MNT" && umount "$MNT"
	t_cleanup
}
trap df_cleanup EXIT
if [[ $(id -u) -ne 0 ]] || ! mount -t tmpfs -o size=2m,mode=0700 tmpfs "$MNT" 2>"$W/mount.err"; then
	skip "cannot mount a size-limited tmpfs (needs root): $(cat "$W/mount.err" 2>/dev/null)"
	finish
	exit
fi
ok "state directory on a 2 MiB tmpfs"

D1=$(printf '11%.0s' {1..32})
"$SA" mkca "$W/ekca" >/dev/null || { fail "softagent mkca"; finish; exit 1; }
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/token"
echo "{\"version\": 1, \"digests\": {\"/usr/bin/app1\": [\"sha256:$D1\"]}}" >"$W/policy.json"
# The verifier's logs (STATEDIR.out, .log) stay outside the small filesystem.
up=no
start_verifier "$MNT" --ek-ca "$W/ekca/ca.pem" --policy "$W/policy.json" \
	--operator-token-file "$W/token" && up=yes
check_eq "verifier starts on the small filesystem" yes "$up"
[[ $up == yes ]] || { finish; exit 1; }

# sa ARGS...: R_STATUS, R_BODY from softagent's last line (its last HTTP exchange).
sa() {
	local out line
	out=$("$SA" "$@" 2>>"$W/softagent.err")
	line=$(tail -n 1 <<<"$out")
	R_NAME=$(cut -d' ' -f1 <<<"$line")
	R_STATUS=$(cut -d' ' -f2 <<<"$line")
	R_BODY=$(cut -d' ' -f3- <<<"$line")
}
: >"$W/acked" # agent verdict_id, for every verdict acknowledged
# round ID: one round; a verdict received is logged as acknowledged.
round() {
	sa round "$W/a-$1" --append "/usr/bin/app1:$D1"
	if [[ $R_STATUS == 200 ]]; then
		echo "$1 $(jq -r .verdict_id <<<"$R_BODY")" >>"$W/acked"
	fi
}

for id in host-a host-b; do
	"$SA" init "$W/a-$id" --ca-key "$W/ekca/ca-key.pem" --ca-cert "$W/ekca/ca.pem" >/dev/null
	sa enroll "$W/a-$id" --verifier "$URL" --cacert "$CA" --id "$id"
	check_eq "$id enrolls" 200 "$R_STATUS"
	for _ in 1 2 3; do round "$id"; done
	check_eq "$id: three trusted rounds before the disk fills" 3 "$(grep -c "^$id " "$W/acked")"
done
before=$(wc -l <"$W/acked")

# Fill every free block; dd stops at ENOSPC.
dd if=/dev/zero of="$MNT/filler" bs=4k >/dev/null 2>&1
check_eq "filesystem full (0 blocks available)" 0 "$(df --output=avail -B1 "$MNT" | tail -n 1 | tr -d ' ')"

# Rounds until one is refused (the log may still have room in pages it already holds).
refused=""
for i in $(seq 1 200); do
	round host-a
	[[ $R_STATUS == 200 ]] || { refused="$R_NAME $R_STATUS"; break; }
done
echo "first refused round after $i attempts: $R_NAME $R_STATUS $R_BODY"
check "a round that cannot be stored is refused, not acknowledged" test -n "$refused"
check_eq "answer: 503" 503 "$R_STATUS"
check_eq "answer: JSON error storage_unavailable" storage_unavailable \
	"$(jq -r '.error.code // empty' <<<"$R_BODY" 2>/dev/null)"
full_acked=$(wc -l <"$W/acked")
for id in host-a host-b; do
	round "$id"
	check_eq "$id: still refused while full (no crash, no half-stored verdict)" 503 "$R_STATUS"
done
check_eq "nothing acknowledged while full" "$full_acked" "$(wc -l <"$W/acked")"
check "verifier still running" kill -0 "$VPID"
code=$(curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o "$W/v.json" \
	-w '%{http_code}' "$URL/v1/agents/host-b/verdicts")
check_eq "reads answered while full: host-b's verdicts (200)" 200 "$code"
check_eq "host-b's earlier verdicts readable" 3 "$(jq '.verdicts | length' "$W/v.json" 2>/dev/null)"

# Space back: rounds are stored again without a restart.
rm -f "$MNT/filler"
for id in host-a host-b; do
	round "$id"
	check_eq "$id: trusted again once space is back" "200 trusted" "$R_STATUS $(jq -r .verdict <<<"$R_BODY" 2>/dev/null)"
done

stop_pid "$VPID"
check "verifier log reports no corruption" test -z "$(grep -i 'corrupt\|malformed' "$VLOG")"
python3 - "$MNT/verifier.db" "$W/acked" >"$W/dbcheck" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
print("integrity", db.execute("PRAGMA integrity_check").fetchone()[0])
stored = dict(db.execute("SELECT id, agent FROM verdicts"))
missing = sum(1 for line in open(sys.argv[2])
              if stored.get(int(line.split()[1])) != line.split()[0])
print("missing", missing)
print("stored", len(stored))
PY
cat "$W/dbcheck"
dbkv() { awk -v k="$1" '$1 == k { print $2; exit }' "$W/dbcheck"; }
check_eq "store passes integrity_check" ok "$(dbkv integrity)"
check_eq "every acknowledged verdict ($(wc -l <"$W/acked"), $before before the fill) is stored" 0 "$(dbkv missing)"
check_eq "no verdict stored that was not acknowledged" "$(wc -l <"$W/acked")" "$(dbkv stored)"
finish
