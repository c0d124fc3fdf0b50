/* tls.h - TLS for consoles attached over TCP (tls.c, OpenSSL)
 *
 * The daemon's side runs over memory BIOs: what its libuv stream reads
 * goes in (hs_tls_in), the handshake advances as bytes come, and what TLS
 * has to send comes out (hs_tls_out) for the stream to write; nothing
 * blocks. The console's side is a socket of its own (attach.c). Who a
 * console is: the name (CN) of a certificate the daemon's CA signed, or,
 * without one, whoever knows the shared secret, which the console sends
 * once TLS is up and the daemon compares in constant time.
 */
#ifndef HS_CONSOLE_TLS_H
#define HS_CONSOLE_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#define HS_SECRET_MAX	1024		/* bytes of a secret, at most */

/* a listener's: its certificate, and how consoles prove who they are */
struct hs_tls_conf {
	SSL_CTX *ctx;
	bool has_ca;			/* consoles' certificates are checked against it */
	bool has_secret;
	unsigned char secret_md[32];	/* the secret's SHA-256 */
};

/* one connection, the daemon's side */
struct hs_tls {
	SSL *ssl;
	BIO *rbio, *wbio;		/* what came from the network; what goes to it */
	bool ready;			/* the handshake is done */
	bool cert;			/* the console showed a certificate the CA signed */
	char cn[64];			/* its name (CN) */
};

/* the secret in FILE (its first line, at least one byte, at most
 * HS_SECRET_MAX) into buf; its length, or -1 with err said */
int hs_tls_read_secret(const char *path, char *buf, size_t len, char *err, size_t errlen);
/* whether FILE (what it is: "secret", "key") is its owner's alone: 0 when
 * no other user may read it (or it is not there: opening it says so), else
 * -1 with msg "secret 'F' may be read by other users (chmod 600 it)" */
int hs_tls_file_private(const char *path, const char *what, char *msg, size_t len);

/* the listener's TLS: 0, or -1 with err ("cannot load certificate 'F': ...") */
int hs_tls_conf_init(struct hs_tls_conf *tc, const char *cert, const char *key, const char *ca,
		     const char *secret, char *err, size_t errlen);
void hs_tls_conf_free(struct hs_tls_conf *tc);
/* the secret a console sent is the listener's (constant time) */
bool hs_tls_secret_ok(const struct hs_tls_conf *tc, const void *p, size_t n);

void hs_tls_init(struct hs_tls *t, struct hs_tls_conf *tc);
void hs_tls_free(struct hs_tls *t);
/* n bytes from the network: the handshake advances; 0, or -1 with err
 * (a failed handshake: what TLS says) */
int hs_tls_in(struct hs_tls *t, const void *data, size_t n, char *err, size_t errlen);
/* plaintext that came: up to len bytes into buf, their count; 0 when none
 * is there yet; -1 when the console ended TLS (err "") or broke it (err) */
long hs_tls_read(struct hs_tls *t, void *buf, size_t len, char *err, size_t errlen);
/* plaintext to send (after the handshake): 0, or -1 */
int hs_tls_write(struct hs_tls *t, const void *data, size_t n);
/* what TLS has to send: a buffer of *n bytes (malloc'd, the caller's), or NULL */
void *hs_tls_out(struct hs_tls *t, size_t *n);

/* the console's side: its context, which checks the daemon's certificate
 * (against ca, else the system's CAs) and shows cert/key when given; NULL
 * with err */
SSL_CTX *hs_tls_client_ctx(const char *ca, const char *cert, const char *key, char *err,
			   size_t errlen);
/* the last TLS error, as text */
void hs_tls_error(char *err, size_t errlen);

#endif
