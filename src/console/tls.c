/* tls.c - TLS for consoles attached over TCP (tls.h): OpenSSL, whose
 * memory BIOs let the daemon's libuv loop drive each handshake */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "console/tls.h"
#include "ssl.h"

void hs_tls_error(char *err, size_t errlen)
{
	unsigned long e = ERR_get_error(), next, sys = 0;
	const char *reason;

	/* the last one queued is the cause the others led to; a system
	 * error (a file that is not there) says it best */
	for (next = e; next; next = ERR_get_error()) {
		e = next;
		if (ERR_GET_LIB(e) == ERR_LIB_SYS && !sys)
			sys = e;
	}
	if (sys) {
		snprintf(err, errlen, "%s", strerror(ERR_GET_REASON(sys)));
		ERR_clear_error();
		return;
	}
	reason = e ? ERR_reason_error_string(e) : NULL;
	snprintf(err, errlen, "%s", reason ? reason : e ? "unknown TLS error" : strerror(errno));
	ERR_clear_error();
}

int hs_tls_read_secret(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "r");
	size_t n;

	if (!fp) {
		snprintf(err, errlen, "cannot open secret '%s': %s", path, strerror(errno));
		return -1;
	}
	if (!fgets(buf, (int)len, fp))
		buf[0] = '\0';
	fclose(fp);
	n = strcspn(buf, "\r\n");
	buf[n] = '\0';
	if (n == 0 || n > HS_SECRET_MAX) {
		snprintf(err, errlen, "secret '%s' is %s (its first line: 1 to %d bytes)", path,
			 n ? "too long" : "empty", HS_SECRET_MAX);
		return -1;
	}
	return (int)n;
}

int hs_tls_file_private(const char *path, const char *what, char *msg, size_t len)
{
	struct stat st;

	if (stat(path, &st) < 0 || !(st.st_mode & 0077))
		return 0;
	snprintf(msg, len, "%s '%s' may be read by other users (chmod 600 it)", what, path);
	return -1;
}

static void sha256(const void *p, size_t n, unsigned char md[32])
{
	unsigned int len = 32;

	if (!EVP_Digest(p, n, md, &len, EVP_sha256(), NULL))
		memset(md, 0, 32);
}

int hs_tls_conf_init(struct hs_tls_conf *tc, const char *cert, const char *key, const char *ca,
		     const char *secret, char *err, size_t errlen)
{
	char tlserr[160], s[HS_SECRET_MAX + 2];
	int n;

	memset(tc, 0, sizeof(*tc));
	if (hs_ssl_load(err, errlen) < 0)
		return -1;
	ERR_clear_error();
	tc->ctx = SSL_CTX_new(TLS_server_method());
	if (!tc->ctx) {
		hs_tls_error(tlserr, sizeof(tlserr));
		snprintf(err, errlen, "cannot set up TLS: %s", tlserr);
		return -1;
	}
	SSL_CTX_set_min_proto_version(tc->ctx, TLS1_2_VERSION);
	if (SSL_CTX_use_certificate_chain_file(tc->ctx, cert) != 1) {
		hs_tls_error(tlserr, sizeof(tlserr));
		snprintf(err, errlen, "cannot load certificate '%s': %s", cert, tlserr);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(tc->ctx, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(tc->ctx) != 1) {
		hs_tls_error(tlserr, sizeof(tlserr));
		snprintf(err, errlen, "cannot load key '%s': %s", key, tlserr);
		goto fail;
	}
	if (ca) {
		if (SSL_CTX_load_verify_locations(tc->ctx, ca, NULL) != 1) {
			hs_tls_error(tlserr, sizeof(tlserr));
			snprintf(err, errlen, "cannot load CA '%s': %s", ca, tlserr);
			goto fail;
		}
		tc->has_ca = true;
		/* with a secret too, a console may come without a certificate */
		SSL_CTX_set_verify(tc->ctx, SSL_VERIFY_PEER |
				   (secret ? 0 : SSL_VERIFY_FAIL_IF_NO_PEER_CERT), NULL);
	}
	if (secret) {
		if ((n = hs_tls_read_secret(secret, s, sizeof(s), err, errlen)) < 0)
			goto fail;
		sha256(s, (size_t)n, tc->secret_md);
		OPENSSL_cleanse(s, sizeof(s));
		tc->has_secret = true;
	}
	return 0;
fail:
	SSL_CTX_free(tc->ctx);
	tc->ctx = NULL;
	return -1;
}

void hs_tls_conf_free(struct hs_tls_conf *tc)
{
	if (!tc->ctx)
		return;		/* none was made: OpenSSL may not be loaded */
	SSL_CTX_free(tc->ctx);
	OPENSSL_cleanse(tc, sizeof(*tc));
}

bool hs_tls_secret_ok(const struct hs_tls_conf *tc, const void *p, size_t n)
{
	unsigned char md[32];

	if (!tc->has_secret)
		return false;
	/* digests of the same length: the time says nothing of either */
	sha256(p, n, md);
	return CRYPTO_memcmp(md, tc->secret_md, sizeof(md)) == 0;
}

void hs_tls_init(struct hs_tls *t, struct hs_tls_conf *tc)
{
	memset(t, 0, sizeof(*t));
	t->ssl = SSL_new(tc->ctx);
	t->rbio = BIO_new(BIO_s_mem());
	t->wbio = BIO_new(BIO_s_mem());
	if (!t->ssl || !t->rbio || !t->wbio)
		abort();
	SSL_set_bio(t->ssl, t->rbio, t->wbio);	/* the SSL owns them now */
	SSL_set_accept_state(t->ssl);
}

void hs_tls_free(struct hs_tls *t)
{
	SSL_free(t->ssl);
	memset(t, 0, sizeof(*t));
}

/* the handshake done: who the console is, if its certificate says */
static void handshake_done(struct hs_tls *t)
{
	X509 *peer = SSL_get0_peer_certificate(t->ssl);

	t->ready = true;
	if (peer && SSL_get_verify_result(t->ssl) == X509_V_OK) {
		int n = X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, t->cn,
						  (int)sizeof(t->cn));
		/* a name a log line and an 'allow' line can hold */
		for (int i = 0; i < n; i++)
			if (t->cn[i] <= 0x20 || t->cn[i] > 0x7e)
				t->cn[i] = '?';
		t->cert = n > 0;
	}
}

int hs_tls_in(struct hs_tls *t, const void *data, size_t n, char *err, size_t errlen)
{
	int rc;

	if (n > 0 && BIO_write(t->rbio, data, (int)n) != (int)n) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (t->ready)
		return 0;
	ERR_clear_error();
	rc = SSL_do_handshake(t->ssl);
	if (rc == 1) {
		handshake_done(t);
		return 0;
	}
	switch (SSL_get_error(t->ssl, rc)) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		return 0;
	default:
		hs_tls_error(err, errlen);
		return -1;
	}
}

long hs_tls_read(struct hs_tls *t, void *buf, size_t len, char *err, size_t errlen)
{
	int rc;

	if (!t->ready)
		return 0;
	ERR_clear_error();
	rc = SSL_read(t->ssl, buf, (int)len);
	if (rc > 0)
		return rc;
	switch (SSL_get_error(t->ssl, rc)) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		return 0;
	case SSL_ERROR_ZERO_RETURN:
		err[0] = '\0';		/* a goodbye: no error */
		return -1;
	default:
		hs_tls_error(err, errlen);
		return -1;
	}
}

int hs_tls_write(struct hs_tls *t, const void *data, size_t n)
{
	/* into a memory BIO: all of it, or a failure */
	return t->ready && SSL_write(t->ssl, data, (int)n) == (int)n ? 0 : -1;
}

void *hs_tls_out(struct hs_tls *t, size_t *n)
{
	size_t pending = BIO_ctrl_pending(t->wbio);
	void *buf;
	int got;

	*n = 0;
	if (pending == 0)
		return NULL;
	buf = malloc(pending);
	if (!buf)
		abort();
	got = BIO_read(t->wbio, buf, (int)pending);
	if (got <= 0) {
		free(buf);
		return NULL;
	}
	*n = (size_t)got;
	return buf;
}

SSL_CTX *hs_tls_client_ctx(const char *ca, const char *cert, const char *key, char *err,
			   size_t errlen)
{
	SSL_CTX *ctx;
	char tlserr[160];

	if (hs_ssl_load(err, errlen) < 0)
		return NULL;
	ERR_clear_error();
	ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx) {
		hs_tls_error(tlserr, sizeof(tlserr));
		snprintf(err, errlen, "cannot set up TLS: %s", tlserr);
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if (ca ? SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1
	       : SSL_CTX_set_default_verify_paths(ctx) != 1) {
		hs_tls_error(tlserr, sizeof(tlserr));
		snprintf(err, errlen, "cannot load CA '%s': %s", ca ? ca : "(the system's)", tlserr);
		goto fail;
	}
	if (cert && SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		hs_tls_error(tlserr, sizeof(tlserr));
		snprintf(err, errlen, "cannot load certificate '%s': %s", cert, tlserr);
		goto fail;
	}
	if (key && (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
		    SSL_CTX_check_private_key(ctx) != 1)) {
		hs_tls_error(tlserr, sizeof(tlserr));
		snprintf(err, errlen, "cannot load key '%s': %s", key, tlserr);
		goto fail;
	}
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}
