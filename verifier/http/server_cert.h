/*
 * server_cert: the certificate chain and key the server's TLS handshakes present, replaceable
 * while the server runs (SIGHUP, verifier(8)).
 *
 * libmicrohttpd keeps the certificate it was started with for its whole life unless GnuTLS asks
 * for one per handshake (MHD_OPTION_HTTPS_CERT_CALLBACK2, GnuTLS's retrieve function): that
 * callback is server_cert_retrieve(). Its signature carries no closure, so the pair is one per
 * process; the verifier runs one server.
 *
 * A pair is checked whole before it is swapped in: the PEM chain and key must import into GnuTLS
 * and the key must be the first certificate's. A pair that fails leaves the current one serving
 * (there is never a moment without a certificate). Each handshake gets its own copy, which GnuTLS
 * frees with its session (GNUTLS_CERT_RETR_DEINIT_ALL): a connection established before a swap
 * keeps what it negotiated, and the old pair is freed at once.
 *
 * Threads: server_cert_set() and server_cert_clear() from one thread (main); the callback from
 * any handshake thread at once.
 */
#ifndef VERIFIER_SERVER_CERT_H
#define VERIFIER_SERVER_CERT_H

#include <stddef.h>

#include <gnutls/abstract.h>

/*
 * Checks the PEM pair and makes it the one new handshakes present. 0, or -EINVAL (why: one line
 * for the log, at most cap bytes), -ENOMEM. The PEM text is not kept.
 */
int server_cert_set(const char *cert_pem, const char *key_pem, char *why, size_t cap);
/* The SHA-256 fingerprint of the current certificate, "AB:CD:..." (96 bytes of room), or "". */
void server_cert_fingerprint(char out[96]);
/* Forgets the pair (after the server stopped). */
void server_cert_clear(void);

gnutls_certificate_retrieve_function3 server_cert_retrieve;

#endif
