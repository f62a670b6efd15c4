/*
 * An EK certificate given to attestd as a file (--ek-cert), for TPMs that keep none in NV:
 * Intel PTT and AMD fTPM machines get theirs from the maker's web service. The file is one
 * DER certificate, or PEM: the EK certificate first, then any intermediates between it and
 * the maker's CA (sent to the verifier as untrusted intermediates, as NV 0x01C00100 holds them).
 *
 * Ownership: struct ekfile owns its buffers and key; ekfile_release() frees them (NULL-safe).
 */
#ifndef ATTESTD_EKFILE_H
#define ATTESTD_EKFILE_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "proto/dynbuf.h"

struct ekfile {
	uint8_t *cert;     /* the EK certificate, DER */
	size_t cert_len;
	struct dynbuf chain; /* the intermediates after it, DER, one after the other */
	unsigned nchain;
	EVP_PKEY *key;     /* the certificate's public key (chooses the EK profile) */
};

/*
 * Reads path into *f (which it initialises; call ekfile_release() even on failure). 0, or
 * -EINVAL (the reason logged: not DER or PEM certificates, more than LIMIT_EK_CHAIN_CERTS
 * intermediates, larger than the protocol's caps), or the -errno of reading the file.
 */
int ekfile_read(const char *path, struct ekfile *f);
void ekfile_release(struct ekfile *f);

#endif
