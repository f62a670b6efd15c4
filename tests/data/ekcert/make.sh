#!/usr/bin/env bash
# Makes the EK certificate fixtures of tests/unit/test_enroll.c (provenance: README.md here).
# Run from this folder; it rewrites every file but itself and README.md. Needs openssl 3 and
# tpm2_print (tpm2-tools).
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ca NAME SUBJECT [ISSUER]: a P-256 CA key and certificate, self-signed without ISSUER.
ca() {
	openssl ecparam -name prime256v1 -genkey -noout -out "$1.key"
	if [[ $# -eq 2 ]]; then
		openssl req -new -x509 -key "$1.key" -subj "$2" -days 36500 -sha256 \
			-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
			-out "$1.pem"
	else
		openssl req -new -key "$1.key" -subj "$2" -out "$tmp/$1.csr"
		printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n' >"$tmp/$1.ext"
		openssl x509 -req -in "$tmp/$1.csr" -CA "$3.pem" -CAkey "$3.key" -set_serial 0x$RANDOM$RANDOM \
			-days 36500 -sha256 -extfile "$tmp/$1.ext" -out "$1.pem"
	fi
}

# ekcert PUB ISSUER OUT: an EK certificate (empty subject, critical SAN of TPM attributes, EK
# EKU 2.23.133.8.1; "x." lets openssl read an OID as the name) for the key of the TPM2B_PUBLIC PUB, as TPM makers issue them.
ekcert() {
	tpm2_print -t TPM2B_PUBLIC -f pem "$1" >"$tmp/ek.pem"
	cat >"$tmp/ek.ext" <<'X'
basicConstraints=critical,CA:FALSE
keyUsage=critical,keyEncipherment
extendedKeyUsage=2.23.133.8.1
subjectAltName=critical,dirName:tpm_attrs
[tpm_attrs]
x.2.23.133.2.1=id:54455354
x.2.23.133.2.2=test-tpm
x.2.23.133.2.3=id:00010002
X
	openssl x509 -new -force_pubkey "$tmp/ek.pem" -subj / -CA "$2.pem" -CAkey "$2.key" \
		-set_serial 0x$RANDOM$RANDOM -days 36500 -sha256 -extfile "$tmp/ek.ext" -outform DER -out "$3"
}

ca root "/CN=Test TPM Root CA"
ca vendor "/CN=Test TPM EK CA/O=Test TPM maker" root
ca other "/CN=Unrelated Root CA"
ekcert ../tpm/ek.pub vendor ek_rsa.der

# Padded as TPMs store it: ST33-style 0xFF fill of an index of 1600 bytes, a zero fill, and a
# fill with one stray byte (refused).
n=$(stat -c %s ek_rsa.der)
{ cat ek_rsa.der; head -c $((1600 - n)) /dev/zero | tr '\0' '\377'; } >ek_rsa_ff.bin
{ cat ek_rsa.der; head -c 64 /dev/zero; } >ek_rsa_00.bin
{ cat ek_rsa.der; printf '\377\377\101\377'; } >ek_rsa_stray.bin

# The chain a TPM keeps in NV 0x01C00100: the vendor CA, DER, followed by 0xFF fill.
openssl x509 -in vendor.pem -outform DER -out vendor.der
{ cat vendor.der; head -c 32 /dev/zero | tr '\0' '\377'; } >chain_ff.bin
rm -f root.key vendor.key other.key
