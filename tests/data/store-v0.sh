#!/usr/bin/env bash
# Makes a verifier database for the migration test (tests/unit/test_store_migrate.c) with the
# verifier of an older build, the same agents and rounds every time:
#
#   tests/data/store-v0.db  before schema versions (PRAGMA user_version 0, boot state as a raw
#                           struct copy), made with 3e5119a before agent "omega" was added
#                           here: it holds alpha, beta and gamma
#   tests/data/store-v2.db  schema version 2, made with 5f6cd2b (the first release with
#                           `make install`, the last before issue 12 changed how violations
#                           are stored): every agent below
#   tests/data/store-v5.db  schema version 5, made with d41773c (the last before issue 16
#                           added retired agents, their history and the webhook outbox):
#                           every agent below; its approvals went into agents' amendments
#
# Run it with the build directory of such a verifier, e.g.
#
#   mkdir /tmp/old && git archive 5f6cd2b | tar -x -C /tmp/old
#   make -C /tmp/old -j2 build/out/verifier build/out/attestctl build/out/tools/softagent
#   tests/data/store-v0.sh /tmp/old/build/out tests/data/store-v2.db
#
# A schema change adds its own fixture the same way, made with the last build before it.
# What the database holds (software agents, tests/tools/softagent, on the real verifier):
#   agent "alpha": enrolled, active, 3 rounds trusted (2 entries appended), then a round with
#     /usr/bin/evil and /usr/bin/worse outside the policy (untrusted, 2 violations), then a
#     clean round (untrusted, open_violations); violation of /usr/bin/worse approved (policy
#     "default" becomes version 2), /usr/bin/evil left open; a last clean round (still untrusted:
#     the open violation).
#   agent "beta": enrolled with a wrong credential secret: stays pending, no boot state.
#   agent "gamma": active, assigned policy "strict" (uploaded: version 1), one trusted round,
#     a reboot and one trusted round of its second boot.
#   agent "omega" (what issue 12's migration converts): active, assigned policy "omega" (a copy
#     of the default, version 1), one trusted round, then one round with four files outside it:
#     /usr/bin/evil (left open), /usr/bin/t<0xff>ol (left open; schema 2 stores the byte as the
#     text "\xff"), /usr/bin/worse (approved: policy "omega" becomes version 2) and
#     /usr/bin/gone (dismissed).
# Then it prints the facts the test checks (clock files, list lengths, PCR 10 per agent).
set -euo pipefail

OLD=${1:?usage: store-v0.sh OLD_BUILD_DIR OUT.db}
OUT=${2:?usage: store-v0.sh OLD_BUILD_DIR OUT.db}
SA=$OLD/tools/softagent
CTL=$OLD/attestctl
W=$(mktemp -d /tmp/store-v0.XXXXXX)
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
cat >"$W/policy.json" <<EOF
{"version": 1, "digests": {"/usr/bin/app1": ["sha256:$D1"], "/usr/bin/app2": ["sha256:$D2"]},
 "violations": "fail"}
EOF
cat >"$W/strict.json" <<EOF
{"version": 1, "digests": {"/usr/bin/app1": ["sha256:$D1"]}, "violations": "fail"}
EOF

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
ctl() { "$CTL" "$@" --verifier "$URL" --ca "$CA" --token-file "$W/token"; }
op() { curl -sS --cacert "$CA" -H "Authorization: Bearer $(cat "$W/token")" "$@"; }
# round DIR ARGS...: one round; prints the verdict.
round() { "$SA" round "$@" | tail -n 1 | cut -d' ' -f3- | jq -r .verdict; }
init() { "$SA" init "$W/$1" --ca-key "$W/ekca/ca-key.pem" --ca-cert "$W/ekca/ca.pem"; }

init alpha
"$SA" enroll "$W/alpha" --verifier "$URL" --cacert "$CA" --id alpha >/dev/null
round "$W/alpha"
round "$W/alpha" --append "/usr/bin/app1:$D1"
round "$W/alpha" --append "/usr/bin/app2:$D2"
round "$W/alpha" --append "/usr/bin/evil:$D3" --append "/usr/bin/worse:$D4"
round "$W/alpha"
worse=$(op "$URL/v1/violations?agent=alpha" | jq -r '.violations[] | select(.path == "/usr/bin/worse") | .id')
op -X POST -o /dev/null "$URL/v1/violations/$worse/approve"
round "$W/alpha"

init beta
"$SA" enroll "$W/beta" --verifier "$URL" --cacert "$CA" --id beta --wrong-secret >/dev/null || true

init gamma
"$SA" enroll "$W/gamma" --verifier "$URL" --cacert "$CA" --id gamma >/dev/null
ctl policy put strict "$W/strict.json"
ctl policy assign gamma strict
round "$W/gamma" --append "/usr/bin/app1:$D1"
"$SA" reboot "$W/gamma"
round "$W/gamma" --append "/usr/bin/app1:$D1"

init omega
"$SA" enroll "$W/omega" --verifier "$URL" --cacert "$CA" --id omega >/dev/null
ctl policy put omega "$W/policy.json"
ctl policy assign omega omega
round "$W/omega" --append "/usr/bin/app1:$D1"
round "$W/omega" --append "/usr/bin/evil:$D3" --append '/usr/bin/t\xffol:'"$D4" \
	--append "/usr/bin/worse:$D5" --append "/usr/bin/gone:$D6"
oid() { op "$URL/v1/violations?agent=omega" | jq -r --arg p "$1" '.violations[] | select(.path == $p) | .id'; }
op -X POST -o /dev/null "$URL/v1/violations/$(oid /usr/bin/worse)/approve"
op -X POST -o /dev/null "$URL/v1/violations/$(oid /usr/bin/gone)/dismiss"

kill -TERM "$VPID"
wait "$VPID" || true
VPID=
cp "$W/v/verifier.db" "$OUT"
for a in alpha gamma omega; do
	echo "$a: clock $(cat "$W/$a/clock")"
	"$CTL" replay --bank all "$W/$a/list.bin"
done
sqlite3 "$OUT" 'PRAGMA user_version; SELECT agent, length(state), reset_count,
	restart_count, boot_number, next_entry FROM boot_state;
	SELECT id, state, policy FROM agents; SELECT agent, trusted, reasons FROM verdicts;
	SELECT id, agent, hex(path), state, count FROM violations; SELECT name, version FROM policies;'
