#!/usr/bin/env bash
# Cross-check: quotes made by tpm2-tools on a swtpm are accepted by `attestctl check-quote` and by
# tpm2_checkquote; altered copies are rejected by both, ours with the right reason code.
source "$(dirname "$0")/../lib.sh"

A=$B/attestctl
IMAGEN=$B/tools/imagen
for t in swtpm swtpm_setup tpm2_createek tpm2_quote tpm2_checkquote openssl; do
	if ! command -v $t >/dev/null; then skip "$t not installed"; finish; exit; fi
done
if [[ ! -x $A ]]; then fail "no $A (run make)"; finish; exit; fi

W=$T_TMP
# tpm2-tools talks to swtpm without a resource manager: free transient objects and sessions
# after each command or the TPM runs out of object slots.
tflush() { tpm2_flushcontext -t >/dev/null 2>&1; tpm2_flushcontext -s >/dev/null 2>&1; true; }

swtpm_ca_init "$W/ca" && swtpm_manufacture "$W/state" "$W/ca" && start_swtpm "$W/state" ||
	{ fail "swtpm start"; finish; exit; }

check "createek" tpm2_createek -c "$W/ek.ctx" -G rsa -u "$W/ek.pub"
tflush
for s in rsassa rsapss ecdsa; do
	g=rsa; [[ $s == ecdsa ]] && g=ecc
	check "createak $s under the EK" tpm2_createak -C "$W/ek.ctx" -c "$W/ak_$s.ctx" -G $g -g sha256 \
		-s $s -u "$W/ak_$s.pub" -n "$W/ak_$s.name" -r "$W/ak_$s.priv" >/dev/null
	tflush
	tpm2_readpublic -c "$W/ak_$s.ctx" -f pem -o "$W/ak_$s.pem" >/dev/null
	tflush
done

# PCR 10 follows the first 15 entries of a synthetic 20-entry IMA list.
list_ok=0
if [[ -x $IMAGEN ]] && "$IMAGEN" --entries 20 --template ima-ng --seed 7 --out "$W/list" \
	--tpm2-extend-script "$W/extend" >/dev/null 2>&1; then
	list_ok=1
	head -n 15 "$W/extend" | while read -r arg; do tpm2_pcrextend "$arg" || exit 1; done
	check "PCR 10 extended with 15 list entries" test $? -eq 0
	"$IMAGEN" --entries 20 --template ima-ng --seed 8 --out "$W/list_other" >/dev/null 2>&1
else
	tpm2_pcrextend "10:sha1=$(printf 'a%.0s' {1..40}),sha256=$(printf 'b%.0s' {1..64})"
fi

# reason CODE DESCRIPTION ARGS...: attestctl check-quote exits 1 and names CODE on stderr.
reason() {
	local code=$1 d=$2 err rc
	shift 2
	err=$("$A" check-quote "$@" 2>&1 >/dev/null)
	rc=$?
	if [[ $rc -eq 1 && $err == *"invalid: $code"* ]]; then ok "$d"; else fail "$d: exit $rc, '$err'"; fi
}

for s in rsassa rsapss ecdsa; do
	N=$(openssl rand -hex 16)
	q=$W/q_$s
	tpm2_quote -c "$W/ak_$s.ctx" -l sha1:10+sha256:10 -q "$N" -m "$q.msg" -s "$q.sig" -o "$q.pcrs" \
		-g sha256 --scheme $s >/dev/null
	check "tpm2_quote $s" test -s "$q.msg"
	tflush
	args=(--ak "$W/ak_$s.pub" --message "$q.msg" --signature "$q.sig" --nonce "$N" --pcrs "$q.pcrs")
	check "check-quote accepts $s quote" "$A" check-quote "${args[@]}"
	check "check-quote accepts $s quote with the PEM AK" "$A" check-quote --ak "$W/ak_$s.pem" \
		--message "$q.msg" --signature "$q.sig" --nonce "$N" --pcrs "$q.pcrs"
	if [[ $s == rsapss ]]; then
		# tpm2-tools 5.4 tpm2_checkquote fails on RSAPSS quotes (it does not verify PSS);
		# `openssl pkeyutl` checks the same signature instead.
		tail -c 256 "$q.sig" >"$q.rawsig"
		openssl dgst -sha256 -binary "$q.msg" >"$q.dgst"
		check "openssl verifies the $s signature" openssl pkeyutl -verify -pubin -inkey "$W/ak_$s.pem" \
			-in "$q.dgst" -sigfile "$q.rawsig" -pkeyopt rsa_padding_mode:pss -pkeyopt digest:sha256
	else
		check "tpm2_checkquote accepts $s quote" tpm2_checkquote -u "$W/ak_$s.pem" -m "$q.msg" \
			-s "$q.sig" -f "$q.pcrs" -g sha256 -q "$N"
	fi

	# an altered message byte (inside the clock info)
	cp "$q.msg" "$q.bad"
	printf '\x99' | dd of="$q.bad" bs=1 seek=70 conv=notrunc status=none
	reason bad_signature "$s: altered message rejected" --ak "$W/ak_$s.pub" --message "$q.bad" \
		--signature "$q.sig" --nonce "$N" --pcrs "$q.pcrs"
	[[ $s != rsapss ]] && check_fails "tpm2_checkquote rejects altered $s message" \
		tpm2_checkquote -u "$W/ak_$s.pem" -m "$q.bad" -s "$q.sig" -f "$q.pcrs" -g sha256 -q "$N" 2>/dev/null
	# another nonce
	reason nonce_mismatch "$s: another nonce rejected" --ak "$W/ak_$s.pub" --message "$q.msg" \
		--signature "$q.sig" --nonce "$(openssl rand -hex 16)" --pcrs "$q.pcrs"
	# another PCR value: the first byte of the sha1 PCR 10 digest in the tpm2-tools file
	cp "$q.pcrs" "$q.badpcrs"
	printf '\x00' | dd of="$q.badpcrs" bs=1 seek=142 conv=notrunc status=none
	printf '\x01' | dd of="$q.badpcrs" bs=1 seek=143 conv=notrunc status=none
	reason pcr_digest_mismatch "$s: another PCR value rejected" --ak "$W/ak_$s.pub" --message "$q.msg" \
		--signature "$q.sig" --nonce "$N" --pcrs "$q.badpcrs"
	[[ $s != rsapss ]] && check_fails "tpm2_checkquote rejects another $s PCR value" \
		tpm2_checkquote -u "$W/ak_$s.pem" -m "$q.msg" -s "$q.sig" -f "$q.badpcrs" -g sha256 -q "$N" 2>/dev/null
done

# another AK of the same TPM
N=$(openssl rand -hex 16)
reason bad_signature "rsassa quote with the rsapss AK rejected" --ak "$W/ak_rsapss.pub" \
	--message "$W/q_rsassa.msg" --signature "$W/q_rsassa.sig" --nonce "$(xxd -p -s 44 -l 16 "$W/q_rsassa.msg")" \
	--pcrs "$W/q_rsassa.pcrs"
reason bad_signature "rsassa quote with the ecdsa AK rejected" --ak "$W/ak_ecdsa.pub" \
	--message "$W/q_rsassa.msg" --signature "$W/q_rsassa.sig" --nonce "$(xxd -p -s 44 -l 16 "$W/q_rsassa.msg")" \
	--pcrs "$W/q_rsassa.pcrs"
# the EK is not an AK
reason bad_ak "EK as AK rejected" --ak "$W/ek.pub" --message "$W/q_rsassa.msg" \
	--signature "$W/q_rsassa.sig" --nonce "$N" --pcrs "$W/q_rsassa.pcrs"

# sha256:0-10 (two TPML_DIGESTs in the PCR file)
N=$(openssl rand -hex 20)
q=$W/q_all
tpm2_quote -c "$W/ak_rsassa.ctx" -l sha256:0,1,2,3,4,5,6,7,8,9,10 -q "$N" -m "$q.msg" -s "$q.sig" \
	-o "$q.pcrs" -g sha256 >/dev/null
tflush
check "check-quote accepts sha256:0-10" "$A" check-quote --ak "$W/ak_rsassa.pub" --message "$q.msg" \
	--signature "$q.sig" --nonce "$N" --pcrs "$q.pcrs"
check "tpm2_checkquote accepts sha256:0-10" tpm2_checkquote -u "$W/ak_rsassa.pem" -m "$q.msg" \
	-s "$q.sig" -f "$q.pcrs" -g sha256 -q "$N"
reason pcr_selection_mismatch "sha256:0-10 quote with sha1:10+sha256:10 values rejected" \
	--ak "$W/ak_rsassa.pub" --message "$q.msg" --signature "$q.sig" --nonce "$N" --pcrs "$W/q_rsassa.pcrs"

# --list: the quoted PCR 10 equals the replay after 15 of 20 entries in both banks
if [[ $list_ok -eq 1 ]]; then
	q=$W/q_rsassa
	N=$(xxd -p -s 44 -l 16 "$q.msg")
	out=$("$A" check-quote --ak "$W/ak_rsassa.pub" --message "$q.msg" --signature "$q.sig" \
		--nonce "$N" --pcrs "$q.pcrs" --list "$W/list")
	check_eq "list matches at entry 15 of 20" "list matches pcr10 after 15 of 20 entries" \
		"$(grep '^list' <<<"$out")"
	reason pcr_mismatch "another list rejected" --ak "$W/ak_rsassa.pub" --message "$q.msg" \
		--signature "$q.sig" --nonce "$N" --pcrs "$q.pcrs" --list "$W/list_other"
	head -c 400 "$W/list" >"$W/list_short"
	err=$("$A" check-quote --ak "$W/ak_rsassa.pub" --message "$q.msg" --signature "$q.sig" \
		--nonce "$N" --pcrs "$q.pcrs" --list "$W/list_short" 2>&1 >/dev/null)
	rc=$?
	check "list cut inside an entry rejected (exit $rc: $err)" test $rc -eq 1
else
	skip "imagen not built: --list not checked"
fi

# usage and unreadable input: exit 2
"$A" check-quote --ak "$W/ak_rsassa.pub" >/dev/null 2>&1
check_eq "missing arguments exit 2" 2 $?
"$A" check-quote --ak "$W/nonexistent" --message "$W/q_all.msg" --signature "$W/q_all.sig" --nonce 00 >/dev/null 2>&1
check_eq "unreadable AK exit 2" 2 $?
"$A" check-quote --ak "$W/ak_rsassa.pub" --message "$W/q_all.msg" --signature "$W/q_all.sig" --nonce xyz >/dev/null 2>&1
check_eq "bad nonce hex exit 2" 2 $?

finish
