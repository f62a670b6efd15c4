#!/usr/bin/env bash
# Backups of a running verifier and their restore (attestctl backup, GET /v1/backup): three
# software agents attest in a loop while backups are taken; each verdict an agent got an answer
# for before a backup began must be in that backup. A backup restored into a new state
# directory (the static files copied, the backup as verifier.db) starts a verifier that holds
# every acknowledged verdict and goes on attesting the same agents from where they were.
# Also: a backup never overwrites a file, needs the token, and is created mode 0600; a backup
# larger than what 10 s carry, read slowly but steadily, arrives whole.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

SA=$B/tools/softagent
CTL=$B/attestctl
need_built "$SA" "$CTL" "$B/verifier"
command -v jq >/dev/null || { fail "jq missing (make deps)"; finish; exit 1; }

W=$T_TMP
D1=$(printf '11%.0s' {1..32})
"$SA" mkca "$W/ekca" >/dev/null
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$W/token"
cat >"$W/policy.json" <<EOF
{"version": 1, "digests": {"/usr/bin/app1": ["sha256:$D1"]}, "violations": "fail"}
EOF
vstart() { start_verifier "$1" --ek-ca "$W/ekca/ca.pem" --policy "$W/policy.json" \
	--operator-token-file "$W/token"; }
check "verifier starts" vstart "$W/v1"
V1PID=$VPID

AGENTS=(a1 a2 a3)
for a in "${AGENTS[@]}"; do
	"$SA" init "$W/$a" --ca-key "$W/ekca/ca-key.pem" --ca-cert "$W/ekca/ca.pem" >/dev/null
	"$SA" enroll "$W/$a" --verifier "$URL" --cacert "$CA" --id "$a" >/dev/null ||
		fail "enroll $a"
done

# load AGENT: rounds until $W/stop exists; the id of every verdict the agent got an answer for
# is appended to $W/AGENT.acked once the answer is in.
load() {
	local a=$1 line id
	while [[ ! -e $W/stop ]]; do
		line=$("$SA" round "$W/$a" --append "/usr/bin/app1:$D1" 2>>"$W/$a.err" | tail -n 1)
		id=$(cut -d' ' -f3- <<<"$line" | jq -r '.verdict_id // empty' 2>/dev/null)
		[[ $line == "evidence 200 "* && -n $id ]] && echo "$id" >>"$W/$a.acked"
	done
}
LOAD_PIDS=()
for a in "${AGENTS[@]}"; do
	: >"$W/$a.acked"
	load "$a" &
	LOAD_PIDS+=($!)
	track_pid $!
done
acked() { cat "$W"/a?.acked | sort; }
for _ in $(seq 1 100); do [[ $(acked | wc -l) -ge 15 ]] && break; sleep 0.1; done

# --- backups while the agents attest --------------------------------------------------------
for i in 1 2 3; do
	acked >"$W/before$i"
	ctl backup "$W/backup$i.db" >"$W/backup$i.out" 2>&1
	check_eq "backup $i under load: exit 0" 0 $?
	sleep 0.3
done
touch "$W/stop"
wait "${LOAD_PIDS[@]}"
acked >"$W/all-before-final"
ctl backup "$W/final.db" >"$W/final.out" 2>&1
check_eq "final backup: exit 0" 0 $?
check "backup says what it wrote" grep -q "^backup $W/final.db: [0-9]* bytes, schema version [0-9]*, integrity ok$" "$W/final.out"
check_eq "backup file mode 0600" 600 "$(stat -c %a "$W/final.db")"
check "the verifier left no copy behind in its state directory" \
	bash -c "! ls '$W/v1' | grep -q backup"
check "load ran: at least 20 verdicts acknowledged" test "$(wc -l <"$W/all-before-final")" -ge 20
check "verdicts were acknowledged between the backups (they ran under load)" \
	test "$(wc -l <"$W/before3")" -gt "$(wc -l <"$W/before1")"

# --- refusals ---------------------------------------------------------------------------------
cp "$W/final.db" "$W/keep.db"
ctl backup "$W/keep.db" 2>/dev/null
check_eq "an existing file: exit 2" 2 $?
check "an existing file is left as it was" cmp -s "$W/final.db" "$W/keep.db"
echo wrong-token-wrong-token >"$W/bad-token"
"$CTL" backup "$W/nope.db" --verifier "$URL" --ca "$CA" --token-file "$W/bad-token" 2>"$W/nope.err"
check_eq "a wrong token: exit 1 (the verifier refused)" 1 $?
check "a wrong token: nothing written, not even a temporary file" \
	bash -c "! ls '$W'/nope.db* 2>/dev/null | grep -q ."

# verdict_ids URL CA: every verdict id the verifier holds for the three agents.
verdict_ids() {
	local a
	for a in "${AGENTS[@]}"; do
		curl -sS --cacert "$2" -H "Authorization: Bearer $(cat "$W/token")" \
			"$1/v1/agents/$a/verdicts?limit=10000" | jq -r '.verdicts[].id'
	done | sort
}
# restore BACKUP DIR: a new state directory from the static files and the backup.
restore() {
	mkdir -m 0700 "$2"
	cp "$W/v1/ca.pem" "$W/v1/ca-key.pem" "$W/v1/server.pem" "$W/v1/server-key.pem" "$2/"
	cp "$1" "$2/verifier.db"
}

# --- each mid-load backup holds what was acknowledged before it began -----------------------
for i in 1 2 3; do
	restore "$W/backup$i.db" "$W/r$i"
	if vstart "$W/r$i"; then
		missing=$(comm -23 "$W/before$i" <(verdict_ids "$URL" "$CA") | wc -l)
		check_eq "restored backup $i: every verdict acknowledged before it began ($(wc -l <"$W/before$i"))" 0 "$missing"
		if [[ $i == 1 ]]; then
			# The agent is rounds ahead of this copy: it resends from where the copy is.
			echo "$URL" >"$W/a1/url"
			out=$("$SA" round "$W/a1" --append "/usr/bin/app1:$D1" | tail -n 1)
			check_eq "an agent ahead of an older backup: trusted, from the backup's offset" \
				trusted "$(cut -d' ' -f3- <<<"$out" | jq -r .verdict)"
		fi
		stop_pid "$VPID"
	else
		fail "a verifier starts from backup $i"
	fi
done

# --- the final backup: everything, and the agents go on where they were ---------------------
stop_pid "$V1PID"
restore "$W/final.db" "$W/r"
check "a verifier starts from the final backup in a new state directory" vstart "$W/r"
missing=$(comm -23 "$W/all-before-final" <(verdict_ids "$URL" "$CA") | wc -l)
check_eq "every acknowledged verdict is in the restored verifier" 0 "$missing"
for a in "${AGENTS[@]}"; do
	echo "$URL" >"$W/$a/url"
	out=$("$SA" round "$W/$a" --append "/usr/bin/app1:$D1" | tail -n 1)
	check_eq "$a attests against the restored verifier: trusted, the replay goes on" trusted \
		"$(cut -d' ' -f3- <<<"$out" | jq -r .verdict)"
done

# --- a large store, downloaded slowly but steadily ------------------------------------------
# An answer has 10 s plus its length at 1 MiB/s to leave (issue 15's transfer deadline); a
# backup is an answer from a file, so its deadline counts the file's size. 40 policy versions
# of 1 MiB make a store of more than 32 MiB, read here at 2 MiB/s: about 17 s, more than the 10
# s a deadline without the length allows even with the sockets' buffers full (then the
# download stops near 26 MiB).
for i in $(seq 1 40); do
	python3 -c 'import json, sys
n = int(sys.argv[1])
d = {"/usr/bin/f%06d-%02d" % (k, n): ["sha256:" + "%064x" % (k * 131 + n)] for k in range(9000)}
print(json.dumps({"version": 1, "digests": d}))' "$i" >"$W/big.json"
	code=$(curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" -o /dev/null \
		-w '%{http_code}' -X PUT --data-binary @"$W/big.json" "$URL/v1/policies/big")
	[[ $code == 200 ]] || { fail "PUT version $i of a 1 MiB policy: $code"; break; }
done
t0=$SECONDS
curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" --limit-rate 2M \
	-o "$W/slow.db" -D "$W/slow.hdr" "$URL/v1/backup"
rc=$?
dt=$((SECONDS - t0))
size=$(stat -c %s "$W/slow.db" 2>/dev/null || echo 0)
want=$(sed -n 's/^[Cc]ontent-[Ll]ength: *\([0-9]*\).*/\1/p' "$W/slow.hdr")
check "a store of ${want:-?} bytes (over 32 MiB)" test "${want:-0}" -gt $((32 << 20))
check_eq "read at 2 MiB/s for ${dt} s: the whole backup arrives" "0 $want" "$rc $size"
check "and it is a store: integrity ok" bash -c "sqlite3 '$W/slow.db' 'PRAGMA integrity_check' | grep -qx ok"

finish
