#!/usr/bin/env bash
# attestd's TPM code (attestd/tpm.c, via tests/tools/attestd_tpmtool) against a TCP swtpm,
# checked by tpm2-tools: EK certificate, AK persistence across restarts, quotes accepted by
# tpm2_checkquote, and ActivateCredential of tpm2_makecredential's output.
set -u
source "$(dirname "$0")/../lib.sh"

TOOL=$B/tools/attestd_tpmtool
if [[ ! -x $TOOL ]]; then
	fail "missing $TOOL (run make)"
	finish
	exit 1
fi
# quiet CMD...: runs CMD with its output in the test log only on failure.
quiet() { "$@" >"$W/quiet.out" 2>&1 || { cat "$W/quiet.out"; return 1; }; }

for t in swtpm swtpm_setup tpm2_checkquote tpm2_makecredential tpm2_nvread tpm2_print openssl; do
	command -v "$t" >/dev/null || { fail "missing $t"; finish; exit 1; }
done

W=$T_TMP
swtpm_ca_init "$W/ca"
check "swtpm manufactured with an ek certificate" swtpm_manufacture "$W/tpm" "$W/ca"
check "swtpm started" start_swtpm "$W/tpm"

# --- enroll: EK public + certificate, AK created then reloaded ---------------------------
mkdir -p "$W/out1" "$W/out2" "$W/outecc"
first=$("$TOOL" "$TCTI" enroll "$W/state" "$W/out1" 2>"$W/enroll1.err")
check_eq "first start creates the ak" created "$first"
check "ak blobs saved in the state dir" test -s "$W/state/ak.pub" -a -s "$W/state/ak.priv"
check "no temp files left" bash -c "! ls '$W/state'/*.tmp 2>/dev/null | grep -q ."
second=$("$TOOL" "$TCTI" enroll "$W/state" "$W/out2" 2>"$W/enroll2.err")
check_eq "second start loads the saved ak" loaded "$second"
check_eq "same ak name after a restart" "$(cat "$W/out1/ak.name")" "$(cat "$W/out2/ak.name")"
check "same ak public after a restart" cmp -s "$W/out1/ak.pub" "$W/out2/ak.pub"

tpm2_nvread 0x01c00002 -o "$W/nv.crt" >/dev/null 2>&1
check "ek certificate equals tpm2_nvread 0x01c00002" cmp -s "$W/nv.crt" "$W/out1/ek.crt"
check "ek certificate parses as x509 der" openssl x509 -inform der -in "$W/out1/ek.crt" -noout

# The EK we use is the one the certificate names.
tpm2_print -t TPM2B_PUBLIC -f pem "$W/out1/ek.pub" >"$W/ek.pem" 2>/dev/null
openssl x509 -inform der -in "$W/out1/ek.crt" -pubkey -noout >"$W/ekcert.pem" 2>/dev/null
check "ek public matches the certificate's key" cmp -s "$W/ek.pem" "$W/ekcert.pem"

# AK attributes as the verifier requires them.
attrs=$(tpm2_print -t TPM2B_PUBLIC "$W/out1/ak.pub" 2>/dev/null | grep -A1 '^attributes' | tail -n1)
for a in fixedtpm fixedparent sensitivedataorigin userwithauth restricted sign; do
	check "ak attribute $a" grep -qw "$a" <<<"$attrs"
done
check "ak is rsa" bash -c "tpm2_print -t TPM2B_PUBLIC '$W/out1/ak.pub' | grep -A1 '^type:' | grep -q 'value: rsa'"

# --- quote accepted by tpm2_checkquote -----------------------------------------------------
tpm2_pcrextend "16:sha256=$(printf 'attestd' | sha256sum | cut -c1-64)" >/dev/null 2>&1
tpm2_print -t TPM2B_PUBLIC -f pem "$W/out1/ak.pub" >"$W/ak.pem" 2>/dev/null
NONCE=$(openssl rand -hex 32)
"$TOOL" "$TCTI" quote "$W/state" "$NONCE" "sha1:0,1,2,3,4,5,6,7,8,9,10+sha256:0,1,2,3,4,5,6,7,8,9,10,16" "$W/q" >"$W/q.values" 2>"$W/q.err"
check "quote made" test -s "$W/q.msg" -a -s "$W/q.sig" -a -s "$W/q.pcrs"
check_eq "22 + 1 pcr values reported" 23 "$(wc -l <"$W/q.values")"
check "tpm2_checkquote accepts our quote (pcr file, 23 pcrs)" \
	quiet tpm2_checkquote -u "$W/ak.pem" -m "$W/q.msg" -s "$W/q.sig" -f "$W/q.pcrs" -g sha256 -q "$NONCE"
want16=$(tpm2_pcrread sha256:16 2>/dev/null | awk '$1 == "16:" {print tolower($2)}' | sed 's/^0x//')
check_eq "reported sha256 pcr16 equals tpm2_pcrread" "sha256:16=$want16" "$(grep '^sha256:16=' "$W/q.values")"
check_fails "tpm2_checkquote rejects another nonce" \
	quiet tpm2_checkquote -u "$W/ak.pem" -m "$W/q.msg" -s "$W/q.sig" -f "$W/q.pcrs" -g sha256 -q "$(openssl rand -hex 32)"
cp "$W/q.msg" "$W/bad.msg"
printf '\x01' | dd of="$W/bad.msg" bs=1 seek=40 conv=notrunc status=none
check_fails "tpm2_checkquote rejects an altered attest" \
	quiet tpm2_checkquote -u "$W/ak.pem" -m "$W/bad.msg" -s "$W/q.sig" -f "$W/q.pcrs" -g sha256 -q "$NONCE"
cp "$W/q.pcrs" "$W/bad.pcrs"
size=$(stat -c %s "$W/bad.pcrs")
printf '\x5a' | dd of="$W/bad.pcrs" bs=1 seek=$((132 + 4 + 4 + 2 + 3)) conv=notrunc status=none
check_fails "tpm2_checkquote rejects altered pcr values" \
	quiet tpm2_checkquote -u "$W/ak.pem" -m "$W/q.msg" -s "$W/q.sig" -f "$W/bad.pcrs" -g sha256 -q "$NONCE"
check_eq "pcr file in tpm2-tools layout (132 + 4 + 3 x 532)" $((132 + 4 + 3 * 532)) "$size"

# --- ActivateCredential of tpm2_makecredential's output --------------------------------------
SECRET=$(openssl rand -hex 32)
printf '%s' "$SECRET" | xxd -r -p >"$W/secret.bin"
tpm2_makecredential --tcti none -u "$W/ek.pem" -G rsa -s "$W/secret.bin" -n "$(cat "$W/out1/ak.name")" \
	-o "$W/cred.out" >/dev/null 2>&1
check "tpm2_makecredential made a credential" test -s "$W/cred.out"
got=$("$TOOL" "$TCTI" activate "$W/state" "$W/cred.out" 2>"$W/act.err")
check_eq "activatecredential recovers the secret" "$SECRET" "$got"

# A credential bound to another AK name must not activate.
other="000b$(openssl rand -hex 32)"
tpm2_makecredential --tcti none -u "$W/ek.pem" -G rsa -s "$W/secret.bin" -n "$other" \
	-o "$W/cred2.out" >/dev/null 2>&1
check_fails "credential for another ak name is refused" \
	"$TOOL" "$TCTI" activate "$W/state" "$W/cred2.out"
check "the refusal is logged with a decoded tpm rc" \
	bash -c "'$TOOL' '$TCTI' activate '$W/state' '$W/cred2.out' 2>&1 | grep -q 'activatecredential.*failed: .*(0x'"

# --- ECC AK ---------------------------------------------------------------------------------
first=$("$TOOL" "$TCTI" enroll "$W/state-ecc" "$W/outecc" ecc 2>"$W/ecc.err")
check_eq "ecc ak created" created "$first"
check "ak is ecc p-256" bash -c "tpm2_print -t TPM2B_PUBLIC '$W/outecc/ak.pub' | grep -A1 '^curve-id:' | grep -q 'NIST p256'"
tpm2_print -t TPM2B_PUBLIC -f pem "$W/outecc/ak.pub" >"$W/akecc.pem" 2>/dev/null
NONCE=$(openssl rand -hex 20)
"$TOOL" "$TCTI" quote "$W/state-ecc" "$NONCE" "sha256:10" "$W/qe" >/dev/null 2>"$W/qe.err"
check "tpm2_checkquote accepts our ecdsa quote" \
	quiet tpm2_checkquote -u "$W/akecc.pem" -m "$W/qe.msg" -s "$W/qe.sig" -f "$W/qe.pcrs" -g sha256 -q "$NONCE"

# --- the AK survives a TPM restart (swtpm keeps its state) -----------------------------------
stop_pid "$SWTPM_PID"
check "swtpm restarted" start_swtpm "$W/tpm"
again=$("$TOOL" "$TCTI" enroll "$W/state" "$W/out2" 2>"$W/enroll3.err")
check_eq "ak loaded after a tpm restart" loaded "$again"
check_eq "same ak name after a tpm restart" "$(cat "$W/out1/ak.name")" "$(cat "$W/out2/ak.name")"

# --- daemon mode: verifier unreachable -> retries with backoff; SIGTERM ends it promptly -----
if [[ -x $B/attestd ]]; then
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/v.key" -out "$W/v.crt" -days 1 \
		-subj /CN=127.0.0.1 >/dev/null 2>&1
	VPORT=$(free_port) # nothing listens there: the verifier is down
	# shellcheck disable=SC2034 # read by start_agent (tests/lib.sh)
	URL=https://127.0.0.1:$VPORT CA=$W/v.crt
	start_agent daemon-1 "$W/state" --foreground --ima-list /dev/null --interval 1
	DPID=$APID
	sleep 3.5
	check "daemon still running while the verifier is down" kill -0 "$DPID"
	n=$(grep -c 'retrying in' "$ALOG")
	check "daemon retried with backoff (2..3 tries in 3.5 s, got $n)" test "$n" -ge 2 -a "$n" -le 3
	d1=$(grep -o 'retrying in [0-9]*' "$ALOG" | sed -n 1p | grep -o '[0-9]*$')
	d2=$(grep -o 'retrying in [0-9]*' "$ALOG" | sed -n 2p | grep -o '[0-9]*$')
	check "backoff grows ($d1 ms then $d2 ms)" test "${d2:-0}" -gt "${d1:-0}"
	check "failure names the connection problem" grep -q "post to 'https://127.0.0.1:$VPORT/v1/agents' failed" "$ALOG"
	kill -TERM "$DPID"
	t0=$(date +%s%N)
	wait "$DPID"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	check_eq "sigterm: clean exit status" 0 "$rc"
	check "sigterm: stopped within 1 s ($ms ms)" test "$ms" -lt 1000
	check "sigterm: logged stopping" grep -q 'attestd: info: stopping' "$ALOG"
else
	skip "daemon mode (no $B/attestd)"
fi

# --- errors ---------------------------------------------------------------------------------
check_fails "unreachable tcti fails cleanly" "$TOOL" "swtpm:host=127.0.0.1,port=$(free_port)" enroll "$W/s3" "$W/out2"

finish
