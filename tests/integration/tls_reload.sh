#!/usr/bin/env bash
# The TLS certificate replaced without a restart (issue 16, item 4: "SIGHUP reloads tokens, EK
# CAs and the TLS certificate"), against the real verifier started with --tls-cert/--tls-key:
#   the operator replaces both files and sends SIGHUP; a new TLS connection gets the new
#   certificate (openssl s_client's SHA-256 fingerprint), while a keep-alive connection made
#   before goes on with its next request on the same socket, with the certificate it negotiated;
#   a key that is not the certificate's, and a file that is no certificate, are refused on
#   SIGHUP with the reason in the log, and the certificate loaded before keeps serving; with
#   the state directory's own certificate (no --tls-cert), SIGHUP keeps it as it is, and
#   reissues it from the same CA when it is gone, as a start would.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"

for t in openssl python3 curl; do
	command -v $t >/dev/null || { fail "$t not installed (make deps)"; finish; exit 1; }
done
W=$T_TMP

# --- a CA of this test, two server pairs from it, and a third key ------------------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$W/ca-key.pem" \
	-out "$W/ca.pem" -days 2 -subj "/CN=tls_reload test CA" >/dev/null 2>&1
# issue NAME: NAME.pem and NAME-key.pem, for 127.0.0.1 and localhost, signed by the CA.
issue() {
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$W/$1-key.pem" \
		-subj "/CN=verifier $1" -out "$W/$1.csr" >/dev/null 2>&1 &&
		openssl x509 -req -in "$W/$1.csr" -CA "$W/ca.pem" -CAkey "$W/ca-key.pem" -CAcreateserial \
			-days 2 -out "$W/$1.pem" -extfile <(printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n') \
			>/dev/null 2>&1
}
check "test CA and three server pairs" bash -c "$(declare -f issue); W='$W'; issue one && issue two && issue three"
fp_of() { openssl x509 -noout -fingerprint -sha256 -in "$1" | cut -d= -f2; }
FP1=$(fp_of "$W/one.pem") FP2=$(fp_of "$W/two.pem")
# served: the fingerprint of the certificate a new TLS connection gets.
served() {
	openssl s_client -connect "127.0.0.1:$VPORT" -servername localhost </dev/null 2>/dev/null |
		openssl x509 -noout -fingerprint -sha256 2>/dev/null | cut -d= -f2
}
# install_pair CERT KEY: what an operator (or certbot) does: both files replaced by a rename.
install_pair() {
	cp "$1" "$W/cert.pem.new" && cp "$2" "$W/key.pem.new" &&
		mv "$W/cert.pem.new" "$W/cert.pem" && mv "$W/key.pem.new" "$W/key.pem"
}
# hup_and_wait REGEX: SIGHUP, then wait for the N+1-th log line matching REGEX.
hup_and_wait() {
	local before i
	before=$(grep -cE "$1" "$VLOG")
	kill -HUP "$VPID"
	for ((i = 0; i < 100; i++)); do
		(($(grep -cE "$1" "$VLOG") > before)) && return 0
		sleep 0.1
	done
	return 1
}

install_pair "$W/one.pem" "$W/one-key.pem"
start_verifier "$W/v" --tls-cert "$W/cert.pem" --tls-key "$W/key.pem" ||
	{ fail "verifier starts"; finish; exit 1; }
check_eq "at start, new connections get certificate one" "$FP1" "$(served)"

# --- replace the pair; a keep-alive connection made before the SIGHUP ----------------------------
install_pair "$W/two.pem" "$W/two-key.pem"
check_eq "before SIGHUP new connections still get certificate one" "$FP1" "$(served)"
# One request, then (once $W/go exists) a second on the same socket; it prints the fingerprint
# of the certificate its connection negotiated, each answer's status, and whether the socket
# was the same. The second comes right after the reload: a kept-alive connection must send its
# next request within LIMIT_HEADER_SECONDS.
python3 - "$VPORT" "$W/ca.pem" "$W/go" >"$W/ka.out" 2>&1 <<'PY' &
import hashlib, http.client, os, ssl, sys, time
port, ca, go = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ctx = ssl.create_default_context(cafile=ca)
c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=20)
def get():
    c.request("GET", "/healthz")
    r = c.getresponse()
    r.read()
    return r.status
s1 = get()
sock = c.sock
fp = hashlib.sha256(sock.getpeercert(binary_form=True)).hexdigest()
print("first", s1, fp, flush=True)
for _ in range(1200):  # 30 s: the test touches it right after the reload
    if os.path.exists(go):
        break
    time.sleep(0.025)
s2 = get()
print("second", s2, "same-socket" if c.sock is sock else "new-socket",
      hashlib.sha256(c.sock.getpeercert(binary_form=True)).hexdigest(), flush=True)
PY
KPID=$!
track_pid "$KPID"
for ((i = 0; i < 400; i++)); do grep -q '^first ' "$W/ka.out" && break; sleep 0.05; done
hex() { tr -d ':' <<<"$1" | tr 'A-F' 'a-f'; }
check_eq "the keep-alive connection: first answer 200, with certificate one" \
	"first 200 $(hex "$FP1")" "$(grep '^first ' "$W/ka.out")"

# --- SIGHUP ------------------------------------------------------------------------------------
check "SIGHUP: the log names the new certificate" hup_and_wait 'reload: TLS certificate "'
touch "$W/go"
wait "$KPID"
check "and its fingerprint" grep -q "fingerprint $FP2" "$VLOG"
check_eq "after SIGHUP a new connection gets certificate two" "$FP2" "$(served)"
check_eq "and a client trusting the CA is answered" 200 \
	"$(curl -sS --cacert "$W/ca.pem" -o /dev/null -w '%{http_code}' "$URL/healthz")"
check_eq "the keep-alive connection made before: its next request answered on the same socket, certificate one" \
	"second 200 same-socket $(hex "$FP1")" "$(grep '^second ' "$W/ka.out")"
check "the same process (no restart)" kill -0 "$VPID"

# --- a broken pair is refused; the one loaded before keeps serving -----------------------------
install_pair "$W/three.pem" "$W/two-key.pem"
check "a key that is not the certificate's: refused on SIGHUP" \
	hup_and_wait 'keeping the TLS certificate loaded before'
check "the log says why" grep -q 'not a PEM certificate and its key\|key is not the certificate' "$VLOG"
check_eq "certificate two still served" "$FP2" "$(served)"
echo "not a certificate" >"$W/cert.pem"
cp "$W/two-key.pem" "$W/key.pem"
check "a file that is no certificate: refused on SIGHUP" \
	hup_and_wait 'keeping the TLS certificate loaded before'
check_eq "certificate two still served" "$FP2" "$(served)"
rm -f "$W/key.pem"
check "a key file that is gone: refused on SIGHUP" \
	hup_and_wait 'keeping the TLS certificate loaded before'
check_eq "certificate two still served" "$FP2" "$(served)"
check "the verifier is still up" kill -0 "$VPID"
stop_pid "$VPID"

# --- the state directory's certificate: reissued on SIGHUP for a new name ----------------------
start_verifier "$W/g" || { fail "verifier with its own certificate starts"; finish; exit 1; }
G1=$(served)
check_eq "its own certificate is the state directory's server.pem" "$(fp_of "$W/g/server.pem")" "$G1"
check "SIGHUP with nothing changed: the same certificate again" \
	hup_and_wait 'reload: TLS certificate "'
check_eq "still served" "$G1" "$(served)"
rm "$W/g/server.pem"
check "server.pem removed: SIGHUP reissues it" hup_and_wait 'reload: TLS certificate "'
G2=$(served)
check "a new certificate is served, the new server.pem" \
	test -n "$G2" -a "$G2" != "$G1" -a "$G2" = "$(fp_of "$W/g/server.pem")"
check_eq "from the same CA: a client trusting ca.pem is answered" 200 \
	"$(curl -sS --cacert "$W/g/ca.pem" -o /dev/null -w '%{http_code}' "$URL/healthz")"
finish
