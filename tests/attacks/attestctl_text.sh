#!/usr/bin/env bash
# attestctl shows what a verifier says escaped: a server (a stand-in over TLS, trusted by --ca)
# answers an error message and agent fields holding a newline, a terminal escape (ESC [),
# a C1 control and a backslash; attestctl prints each as \xNN / \\, so no byte of the answer
# can start a forged line or move the cursor, and the text around them is kept.
# The same text in every other thing attestctl shows from elsewhere (verifier/attestctl/show.h):
# policy names and actors (policy list, history), a policy's paths (policy get, diff), an
# amendment's paths, violation paths and explanations, reason codes (verdicts), an agent's
# history, registrations, --json answers, the EAR claims and a refused token's header (ear verify); JSON comes
# out as JSON with \u00XX escapes.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

CTL=$B/attestctl
for t in python3 openssl; do command -v $t >/dev/null || { skip "$t not installed"; finish; exit; }; done
[[ -x $CTL ]] || { fail "missing $CTL (run make)"; finish; exit 1; }
W=$T_TMP
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=fake \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$W/key.pem" -out "$W/cert.pem" 2>/dev/null ||
	{ fail "a TLS certificate"; finish; exit 1; }
PORT=$(free_port) || { fail "no free port"; finish; exit 1; }
cat >"$W/fake.py" <<'PY'
import http.server, json, ssl, sys
EVIL = "ok\nattestctl: verdict trusted\x1b[2K\x1b[1A\u009b31m\\end"
D = "sha256:" + "ab" * 32
ROUTES = {
    "/v1/agents": {"agents": [{"agent_id": "a\x1b[31m", "state": "active",
                               "policy": EVIL, "last_verdict": "trusted\n"}]},
    "/v1/agents/a/verdicts": {"verdicts": [{"id": 1, "time": 1, "verdict": EVIL, "boot_number": 1,
                                           "next_offset": 2, "reasons": [{"code": EVIL}],
                                           "judged_by": {"policy": EVIL, "policy_version": 1,
                                                         "amendment_version": 0}}]},
    "/v1/agents/a/history": {"history": [{"time": 1, "event": EVIL, "actor": EVIL,
                                          "detail": EVIL}]},
    "/v1/agents/a/amendment": {"version": 1, "amendment": {"digests": {EVIL: [D, EVIL]},
                                                           "boot": {"kernels": [EVIL]}}},
    "/v1/violations": {"violations": [{"id": 1, "agent_id": EVIL, "state": "open",
                                       "reason": EVIL, "count": 1, "last_seen": 1, "path": EVIL,
                                       "digest": EVIL, "explanation": EVIL}]},
    "/v1/policies": {"policies": [{"name": EVIL, "version": 1, "agents": 0, "time": 1,
                                   "actor": EVIL}]},
    "/v1/policies/p/versions": {"versions": [{"version": 1, "time": 1, "bytes": 1,
                                              "actor": EVIL}]},
    "/v1/policies/p": {"version": 1, "digests": {EVIL: [D]}, "excludes": [EVIL],
                       "violations": EVIL},
    "/v1/registrations": {"registrations": [{"agent_id": EVIL, "ek": EVIL, "ek_sha256": EVIL,
                                             "policy": EVIL, "labels": {"k": EVIL}}]},
}
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path.split("?")[0]
        if path in ROUTES:
            code, body = 200, ROUTES[path]
        else:
            code, body = 404, {"error": {"code": "unknown_agent", "message": EVIL}}
        data = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *a):
        pass
srv = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[2], sys.argv[3])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
PY
python3 "$W/fake.py" "$PORT" "$W/cert.pem" "$W/key.pem" 2>"$W/fake.log" &
track_pid $!
wait_for_port "$PORT" 10 || { fail "the stand-in server listens"; finish; exit 1; }
ctl() { "$CTL" --verifier "https://127.0.0.1:$PORT" --ca "$W/cert.pem" "$@"; }

ctl agent x >"$W/out" 2>"$W/err"
check_eq "the refusal is one line" 1 "$(wc -l <"$W/err")"
check "no ESC, no C1 byte, no forged line in the refusal" \
	python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); sys.exit(any(b in d for b in (b"\x1b", b"\xc2\x9b")) or d.count(b"\n") != 1)' "$W/err"
check "the refusal shows them escaped and keeps the text" \
	grep -qF 'ok\x0aattestctl: verdict trusted\x1b[2K\x1b[1A\xc2\x9b31m\\end' "$W/err"

ctl agents >"$W/out" 2>"$W/err"
check_eq "attestctl agents: a header and one row" 2 "$(wc -l <"$W/out")"
check "no ESC and no C1 byte in the table" \
	python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); sys.exit(b"\x1b" in d or b"\xc2\x9b" in d)' "$W/out"
check "the agent id shows its escape" grep -qF 'a\x1b[31m' "$W/out"
# clean FILE: no ESC, no C1 (U+009B) and no DEL byte, and no line the answer started.
clean() {
	python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); sys.exit(any(b in d for b in (b"\x1b", b"\xc2\x9b", b"\x7f")) or any(l.startswith(b"attestctl: verdict trusted") for l in d.split(b"\n")))' "$1"
}
SHOWN='ok\x0aattestctl: verdict trusted\x1b[2K\x1b[1A\xc2\x9b31m\\end'
JSHOWN='ok\nattestctl: verdict trusted\u001B[2K\u001B[1A\u009B31m\\end'
# shown DESC WANT CMD...: the output of CMD (both streams) is clean and holds WANT.
shown() {
	local desc=$1 want=$2
	shift 2
	"$@" >"$W/o" 2>&1
	check "$desc: nothing raw, no forged line" clean "$W/o"
	check "$desc: the text kept, escaped" grep -qF -- "$want" "$W/o"
}
shown "policy list: names and actors" "$SHOWN" ctl policy list
shown "policy history: actors" "$SHOWN" ctl policy history p
shown "policy get: the policy as JSON, C1 escaped too" "$JSHOWN" ctl policy get p
printf '{"version": 1, "digests": {}}\n' >"$W/empty.json"
shown "policy diff: paths and settings" "- $SHOWN sha256:" ctl policy diff @p "$W/empty.json"
shown "amendment: paths and digests" "$SHOWN sha256:abab" ctl amendment a
shown "violations: paths, reasons, explanations" "       $SHOWN" ctl violations
shown "verdicts: reason codes and policies" "$SHOWN" ctl verdicts a
shown "agent history: events, actors, details" "$SHOWN" ctl agent history a
shown "registrations: ids, policies and labels" "$SHOWN" ctl registrations
shown "agents --json: the answer with C1 escaped" '\u009B31m' ctl agents --json

# EAR: a result signed by a key of the JWK set whose claims hold the text, and a token whose
# header does (the refusal names its algorithm).
python3 - "$W" <<'PY' || fail "EAR tokens made"
import base64, json, sys, time
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
w = sys.argv[1]
EVIL = "ok\nattestctl: verdict trusted\x1b[2K\x1b[1A\u009b31m\\end"
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
key = ec.generate_private_key(ec.SECP256R1())
n = key.public_key().public_numbers()
jwk = {"kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256", "use": "sig",
       "x": b64(n.x.to_bytes(32, "big")), "y": b64(n.y.to_bytes(32, "big"))}
json.dump({"keys": [jwk]}, open(w + "/jwks.json", "w"))
def token(header, claims):
    signing = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
    r, s = decode_dss_signature(key.sign(signing.encode(), ec.ECDSA(hashes.SHA256())))
    return signing + "." + b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))
claims = {"eat_profile": "tag:github.com,2023:veraison/ear", "iat": int(time.time()),
          "eat_nonce": EVIL, "ear.verifier-id": {"build": "b", "developer": "d"},
          "submods": {EVIL: {"ear.status": "affirming", "attest.agent-id": EVIL,
                             "attest.verdict-id": 1, "attest.verdict": EVIL,
                             "ear.appraisal-policy-id": EVIL}}}
open(w + "/ear.jwt", "w").write(token({"alg": "ES256", "kid": "k1"}, claims))
open(w + "/bad.jwt", "w").write(token({"alg": EVIL, "kid": "k1"}, claims))
PY
shown "ear verify: the claims" "$SHOWN: affirming (agent $SHOWN" "$CTL" ear verify "$W/ear.jwt" --jwks "$W/jwks.json"
shown "ear verify --json: the claims as JSON" "$JSHOWN" "$CTL" ear verify "$W/ear.jwt" --jwks "$W/jwks.json" --json
shown "ear verify: a refused token's header" "algorithm is \"$SHOWN\"" "$CTL" ear verify "$W/bad.jwt" --jwks "$W/jwks.json"
finish
