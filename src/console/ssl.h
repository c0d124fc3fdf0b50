/* ssl.h - OpenSSL, loaded only when TLS is first asked for
 *
 * Only a daemon listening on TCP and a console attaching over it speak
 * TLS; linked with libssl and libcrypto, every start would load and
 * relocate both. The first listener or attach that needs TLS loads them
 * (hs_ssl_load) and takes the functions tls.c and attach.c use from them;
 * those files include this header after OpenSSL's, and each of their
 * calls goes through hs_ssl (OpenSSL's macros too: SSL_CTX_ctrl is what
 * SSL_CTX_set_min_proto_version calls). A function they start to use is
 * added to HS_SSL_FUNCS and to the list of names below.
 */
#ifndef HS_CONSOLE_SSL_H
#define HS_CONSOLE_SSL_H

#include <stddef.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#define HS_SSL_LIBRARY "libssl.so.3"	/* it brings libcrypto.so.3 */

#define HS_SSL_FUNCS(X) \
	X(BIO_ctrl_pending) X(BIO_new) X(BIO_read) X(BIO_s_mem) X(BIO_write) \
	X(CRYPTO_memcmp) X(ERR_clear_error) X(ERR_get_error) X(ERR_reason_error_string) \
	X(EVP_Digest) X(EVP_sha256) X(OPENSSL_cleanse) X(SSL_connect) X(SSL_ctrl) \
	X(SSL_CTX_check_private_key) X(SSL_CTX_ctrl) X(SSL_CTX_free) \
	X(SSL_CTX_load_verify_locations) X(SSL_CTX_new) X(SSL_CTX_set_default_verify_paths) \
	X(SSL_CTX_set_verify) X(SSL_CTX_use_certificate_chain_file) \
	X(SSL_CTX_use_PrivateKey_file) X(SSL_do_handshake) X(SSL_free) X(SSL_get0_param) \
	X(SSL_get0_peer_certificate) X(SSL_get_error) X(SSL_get_verify_result) X(SSL_new) \
	X(SSL_pending) X(SSL_read) X(SSL_set1_host) X(SSL_set_accept_state) X(SSL_set_bio) \
	X(SSL_set_fd) X(SSL_shutdown) X(SSL_write) X(TLS_client_method) X(TLS_server_method) \
	X(X509_get_subject_name) X(X509_NAME_get_text_by_NID) \
	X(X509_verify_cert_error_string) X(X509_VERIFY_PARAM_set1_ip_asc)

struct hs_ssl {
#define HS_SSL_MEMBER(f) __typeof__(f) *f;
	HS_SSL_FUNCS(HS_SSL_MEMBER)
#undef HS_SSL_MEMBER
};

/* filled by hs_ssl_load; read only after it returned 0 */
extern struct hs_ssl hs_ssl;

/* Load libssl (once; every thread may ask): 0, or -1 with err set to one
 * line naming the library and what failed (it is not installed, or lacks
 * a function). HOPSCOPE_TEST_LIBSSL names another file, for the tests. */
int hs_ssl_load(char *err, size_t errlen);

#ifndef HS_SSL_LOADER
#define BIO_ctrl_pending hs_ssl.BIO_ctrl_pending
#define BIO_new hs_ssl.BIO_new
#define BIO_read hs_ssl.BIO_read
#define BIO_s_mem hs_ssl.BIO_s_mem
#define BIO_write hs_ssl.BIO_write
#define CRYPTO_memcmp hs_ssl.CRYPTO_memcmp
#define ERR_clear_error hs_ssl.ERR_clear_error
#define ERR_get_error hs_ssl.ERR_get_error
#define ERR_reason_error_string hs_ssl.ERR_reason_error_string
#define EVP_Digest hs_ssl.EVP_Digest
#define EVP_sha256 hs_ssl.EVP_sha256
#define OPENSSL_cleanse hs_ssl.OPENSSL_cleanse
#define SSL_connect hs_ssl.SSL_connect
#define SSL_ctrl hs_ssl.SSL_ctrl
#define SSL_CTX_check_private_key hs_ssl.SSL_CTX_check_private_key
#define SSL_CTX_ctrl hs_ssl.SSL_CTX_ctrl
#define SSL_CTX_free hs_ssl.SSL_CTX_free
#define SSL_CTX_load_verify_locations hs_ssl.SSL_CTX_load_verify_locations
#define SSL_CTX_new hs_ssl.SSL_CTX_new
#define SSL_CTX_set_default_verify_paths hs_ssl.SSL_CTX_set_default_verify_paths
#define SSL_CTX_set_verify hs_ssl.SSL_CTX_set_verify
#define SSL_CTX_use_certificate_chain_file hs_ssl.SSL_CTX_use_certificate_chain_file
#define SSL_CTX_use_PrivateKey_file hs_ssl.SSL_CTX_use_PrivateKey_file
#define SSL_do_handshake hs_ssl.SSL_do_handshake
#define SSL_free hs_ssl.SSL_free
#define SSL_get0_param hs_ssl.SSL_get0_param
#define SSL_get0_peer_certificate hs_ssl.SSL_get0_peer_certificate
#define SSL_get_error hs_ssl.SSL_get_error
#define SSL_get_verify_result hs_ssl.SSL_get_verify_result
#define SSL_new hs_ssl.SSL_new
#define SSL_pending hs_ssl.SSL_pending
#define SSL_read hs_ssl.SSL_read
#define SSL_set1_host hs_ssl.SSL_set1_host
#define SSL_set_accept_state hs_ssl.SSL_set_accept_state
#define SSL_set_bio hs_ssl.SSL_set_bio
#define SSL_set_fd hs_ssl.SSL_set_fd
#define SSL_shutdown hs_ssl.SSL_shutdown
#define SSL_write hs_ssl.SSL_write
#define TLS_client_method hs_ssl.TLS_client_method
#define TLS_server_method hs_ssl.TLS_server_method
#define X509_get_subject_name hs_ssl.X509_get_subject_name
#define X509_NAME_get_text_by_NID hs_ssl.X509_NAME_get_text_by_NID
#define X509_verify_cert_error_string hs_ssl.X509_verify_cert_error_string
#define X509_VERIFY_PARAM_set1_ip_asc hs_ssl.X509_VERIFY_PARAM_set1_ip_asc
#endif

#endif
