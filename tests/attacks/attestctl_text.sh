#!/usr/bin/env bash
# attestctl shows what a verifier says escaped: a server (a stand-in over TLS, trusted by --ca)
# answers an error message and agent fields holding a newline, a terminal escape (ESC [),
# a C1 control and a backslash; attestctl prints each as \xNN / \\, so no byte of the answer
# can start a forged line or move the cursor, and the text around them is kept.
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
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/v1/agents/"):
            code, body = 404, {"error": {"code": "unknown_agent", "message": EVIL}}
        else:
            code, body = 200, {"agents": [{"agent_id": "a\x1b[31m", "state": "active",
                                           "policy": EVIL, "last_verdict": "trusted\n"}]}
        data = json.dumps(body).encode()
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
finish
