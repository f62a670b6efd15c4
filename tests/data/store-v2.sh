#!/usr/bin/env bash
# Makes tests/data/store-v2.db: a verifier database of schema version 2 (paths of violations
# stored as display text, bytes that are not UTF-8 written as the four characters \xNN; one
# row per agent, digest and path whatever its state), for the migration test in
# tests/unit/test_store_migrate.c. Run it with the build directory of such a verifier (commit
# 5f6cd2b, before issue 12):
#
#   git worktree add /tmp/old 5f6cd2b && make -C /tmp/old -j2 all
#   tests/data/store-v2.sh /tmp/old/build/out tests/data/store-v2.db
#
# What the database holds (software agent "alpha", tests/tools/softagent, on the real verifier,
# default policy app1 and app2): one trusted round, then one round with four files outside the
# policy: /usr/bin/evil (left open), /usr/bin/t<0xff>ol (left open; stored as "t\xffol"),
# /usr/bin/worse (approved: policy "default" becomes version 2) and /usr/bin/gone (dismissed).
# Then it prints the rows the test checks.
set -euo pipefail

OLD=${1:?usage: store-v2.sh OLD_BUILD_DIR OUT.db}
OUT=${2:?usage: store-v2.sh OLD_BUILD_DIR OUT.db}
SA=$OLD/tools/softagent
W=$(mktemp -d /tmp/store-v2.XXXXXX)
VPID=
cleanup() {
	if [[ -n $VPID ]] && kill -0 "$VPID" 2>/dev/null; then kill -TERM "$VPID"; fi
	rm -rf "$W"
}
trap cleanup EXIT

D1=$(printf '11%.0s' {1..32})
D2=$(printf '22%.0s' {1..32})
D3=$(printf '33%.0s' {1..32})
D4=$(printf '44%.0s' {1..32})
D5=$(printf '55%.0s' {1..32})
D6=$(printf '66%.0s' {1..32})
"$SA" mkca "$W/ekca" >/dev/null
head -c 32 /dev/urandom | xxd -p -c 64 >"$W/token"
cat >"$W/policy.json" <<POL
{"version": 1, "digests": {"/usr/bin/app1": ["sha256:$D1"], "/usr/bin/app2": ["sha256:$D2"]},
 "violations": "fail"}
POL

port=
for _ in $(seq 1 100); do
	p=$((20000 + RANDOM % 12000))
	if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then port=$p; break; fi
done
[[ -n $port ]] || { echo "no free port" >&2; exit 1; }
"$OLD/verifier" --listen "127.0.0.1:$port" --state-dir "$W/v" --ek-ca "$W/ekca/ca.pem" \
	--policy "$W/policy.json" --operator-token-file "$W/token" >"$W/v.out" 2>"$W/v.err" &
VPID=$!
for _ in $(seq 1 100); do
	grep -q '^listening on' "$W/v.out" && break
	sleep 0.1
done
URL=https://127.0.0.1:$port
CA=$W/v/ca.pem
op() { curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" "$@"; }
round() { "$SA" round "$@" | tail -n 1 | cut -d' ' -f3- | jq -r .verdict; }
id_of() { op "$URL/v1/violations?agent=alpha" | jq -r --arg p "$1" '.violations[] | select(.path == $p) | .id'; }

"$SA" init "$W/alpha" --ca-key "$W/ekca/ca-key.pem" --ca-cert "$W/ekca/ca.pem"
"$SA" enroll "$W/alpha" --verifier "$URL" --cacert "$CA" --id alpha >/dev/null
round "$W/alpha" --append "/usr/bin/app1:$D1"
round "$W/alpha" --append "/usr/bin/evil:$D3" --append '/usr/bin/t\xffol:'"$D4" \
	--append "/usr/bin/worse:$D5" --append "/usr/bin/gone:$D6"
op -X POST -o /dev/null "$URL/v1/violations/$(id_of /usr/bin/worse)/approve"
op -X POST -o /dev/null "$URL/v1/violations/$(id_of /usr/bin/gone)/dismiss"

kill -TERM "$VPID"
wait "$VPID" || true
VPID=
cp "$W/v/verifier.db" "$OUT"
sqlite3 "$OUT" 'PRAGMA user_version; SELECT id, agent, boot_number, entry, hex(path), digest,
	reason, count, state FROM violations ORDER BY id; SELECT name, version, actor FROM policies;'
