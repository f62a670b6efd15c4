/*
 * ekcert: EK certificates as TPMs store them. An NV index holding an EK certificate may be
 * larger than the certificate: STMicro ST33 TPMs, among others, fill the rest with 0xFF (some
 * with 0x00), and readers such as Keylime and go-attestation cut it off. The certificate's own
 * DER header gives its length; only fill bytes may follow it. The intermediate certificates a
 * TPM keeps in NV 0x01C00100 and up are concatenated DER certificates, filled the same way.
 *
 * Input bytes are untrusted: every length is taken from the DER header and checked against
 * what remains. Nothing is allocated; results are offsets into the caller's buffer.
 */
#ifndef PROTO_EKCERT_H
#define PROTO_EKCERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Length of the DER SEQUENCE (a certificate's outer structure) that starts buf: its header
 * plus the length the header states, definite form only. 0 and *der_len, or -EINVAL if buf
 * does not start with a SEQUENCE that fits in len bytes.
 */
int ekcert_der_length(const uint8_t *buf, size_t len, size_t *der_len);

/* True if every byte is fill: 0xFF (erased NV) or 0x00. An empty range is fill. */
bool ekcert_is_fill(const uint8_t *buf, size_t len);

/*
 * An EK certificate as an NV index holds it: one DER SEQUENCE, then only fill. 0 and
 * *cert_len (the certificate without the fill), or -EINVAL. Whether the SEQUENCE is a valid
 * certificate is the caller's check (d2i_X509 over exactly *cert_len bytes).
 */
int ekcert_trim(const uint8_t *buf, size_t len, size_t *cert_len);

/*
 * Walks concatenated DER certificates: the one at *off, 0 and *cert_len, *off advanced past
 * it; 1 at the end of the certificates (nothing or only fill left: *off is then len); -EINVAL
 * for bytes that are neither a certificate's SEQUENCE nor fill.
 */
int ekcert_next(const uint8_t *buf, size_t len, size_t *off, size_t *cert_len);

#endif
