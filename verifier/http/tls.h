/*
 * tls: the verifier's server certificate.
 *
 * Either the operator gives --tls-cert/--tls-key, or on first start the verifier creates a
 * private CA (EC P-256) and a server certificate signed by it in the state directory:
 *   ca.pem          the CA certificate agents and attestctl trust (--cacert / --ca)
 *   ca-key.pem      the CA key (0600), kept to reissue server.pem when the names change
 *   server.pem      server certificate, SAN IP:127.0.0.1, DNS:localhost and every --tls-san
 *   server-key.pem  server key (0600)
 * Later starts reuse them; server.pem is reissued only if it does not cover a requested name
 * or expires within 30 days.
 *
 * Ownership: tls_material_release() frees the PEM text and wipes the key (NULL-safe).
 */
#ifndef VERIFIER_TLS_H
#define VERIFIER_TLS_H

#include <stddef.h>

struct tls_material {
	char *cert_pem;   /* server certificate chain, PEM */
	char *key_pem;    /* server private key, PEM (secret) */
	char *ca_path;    /* ca.pem when generated, NULL with --tls-cert */
	char *cert_path;
	char *key_path;
	int generated;    /* 1: files were created (or reissued) on this start */
};

/*
 * cert_file/key_file: both NULL to use (or create) the generated files in the state directory,
 * open as state_dfd (statedir.h: its files are reached through it, never by its path again),
 * named state_dir in messages and in out's paths.
 * sans: extra names, each an IPv4/IPv6 address or a DNS name. 0 or -errno (logged).
 */
int tls_setup(int state_dfd, const char *state_dir, const char *cert_file, const char *key_file,
	      const char *const *sans, size_t nsans, struct tls_material *out);
void tls_material_release(struct tls_material *m);

/* Where the certificate comes from: tls_setup()'s arguments, as the options give them. */
struct tls_source {
	int state_dfd;
	const char *state_dir;
	const char *cert_file, *key_file; /* --tls-cert, --tls-key; both NULL: generated */
	const char *const *sans;          /* --tls-san */
	size_t nsans;
};

struct http_server;

/* At start: tls_setup() from src, and a log line naming the CA agents trust (when generated)
 * and the files served. 0 or -errno (logged). */
int tls_start(const struct tls_source *src, struct tls_material *out);
/*
 * SIGHUP: the certificate and key from src again, as for a start (reissued if a name or the
 * validity asks for it), for srv's connections made from then on; when they do not load the
 * ones loaded before keep serving and the log says so.
 */
void tls_reload(struct http_server *srv, const struct tls_source *src);

#endif
