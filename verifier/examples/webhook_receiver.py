#!/usr/bin/env python3
"""A webhook receiver for the attest verifier, with python3's standard library alone.

It checks each delivery as verifier(8) (WEBHOOKS) describes: X-Attest-Signature is
"sha256=" + hex(HMAC-SHA256(secret, X-Attest-Timestamp + "." + body)), compared in constant
time, and the timestamp is at most --max-age seconds old (a delivery recorded and replayed
later is refused). Delivery is at least once: an event can arrive again (after a lost answer
or a verifier restart) with the same id, so the receiver acts once per id and answers 200 to a
repeat.

    webhook_receiver.py --secret-file FILE [--listen 127.0.0.1:9000] [--out events.jsonl]

Each accepted delivery is printed (and appended to --out) as one JSON line:
{"id", "type", "agent_id", "time", "received": when it arrived (Unix seconds, fractional),
"duplicate": bool, "event": the body, "ear": the X-Attest-EAR header or null, "audit_head": the
verifier's audit trail head the event carries (seq, hash, and the newest signed head): keeping
these lines publishes the head outside the verifier (verifier(8), AUDIT TRAIL)}. That header is the agent's latest attestation result, a JWT
signed by the verifier's own key (verify it with the keys of GET /v1/jwks, e.g. `attestctl ear
verify`); the HMAC covers the body only.
--refuse-first answers 503 to the first delivery of each event after recording it, to watch
the verifier deliver it again (a test aid).
"""
import argparse
import hashlib
import hmac
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BODY_MAX = 1 << 20


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--secret-file', required=True)
    ap.add_argument('--listen', default='127.0.0.1:9000')
    ap.add_argument('--out')
    ap.add_argument('--max-age', type=int, default=300)
    ap.add_argument('--refuse-first', action='store_true')
    args = ap.parse_args()
    with open(args.secret_file, 'rb') as f:
        secret = f.read().rstrip(b'\r\n ')
    host, _, port = args.listen.rpartition(':')
    seen = set()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def answer(self, status, text):
            data = (text + '\n').encode()
            self.send_response(status)
            self.send_header('Content-Type', 'text/plain')
            self.send_header('Content-Length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            try:
                length = int(self.headers.get('Content-Length', ''))
            except ValueError:
                return self.answer(411, 'length required')
            if length < 0 or length > BODY_MAX:
                return self.answer(413, 'too large')
            body = self.rfile.read(length)
            ts = self.headers.get('X-Attest-Timestamp', '')
            sig = self.headers.get('X-Attest-Signature', '')
            if not ts.isdigit() or not sig.startswith('sha256='):
                return self.answer(401, 'unsigned')
            want = hmac.new(secret, ts.encode() + b'.' + body, hashlib.sha256).hexdigest()
            if not hmac.compare_digest(want, sig[len('sha256='):]):
                return self.answer(401, 'bad signature')
            if abs(time.time() - int(ts)) > args.max_age:
                return self.answer(401, 'too old: a replay?')
            try:
                event = json.loads(body)
                eid = event['id']
            except (ValueError, KeyError, TypeError):
                return self.answer(400, 'not an event')
            if eid != self.headers.get('X-Attest-Event-Id'):
                return self.answer(400, 'id header and body differ')
            with lock:
                duplicate = eid in seen
                seen.add(eid)
                line = json.dumps({'id': eid, 'type': event.get('type'),
                                   'agent_id': event.get('agent_id'), 'time': event.get('time'),
                                   'received': round(time.time(), 3), 'duplicate': duplicate, 'event': event,
                                   'ear': self.headers.get('X-Attest-EAR'),
                                   'audit_head': event.get('audit_head')}, sort_keys=True)
                print(line, flush=True)
                if args.out:
                    with open(args.out, 'a') as f:
                        f.write(line + '\n')
            if args.refuse_first and not duplicate:
                return self.answer(503, 'recorded; send it again')
            return self.answer(200, 'duplicate' if duplicate else 'ok')

        def log_message(self, fmt, *a):
            pass

    srv = ThreadingHTTPServer((host, int(port)), Handler)
    print('listening on http://%s:%d' % (host, srv.server_address[1]), file=sys.stderr, flush=True)
    srv.serve_forever()


if __name__ == '__main__':
    main()
