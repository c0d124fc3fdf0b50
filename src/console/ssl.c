/* ssl.c - OpenSSL, loaded when TLS is first asked for (ssl.h) */
#define HS_SSL_LOADER
#include "dl.h"
#include "ssl.h"

struct hs_ssl hs_ssl;

/* libcrypto's functions are found through libssl, which needs it */
static bool take(void *lib)
{
	struct hs_ssl ssl;

#define HS_SSL_SYM(f) HS_DL_SYM(lib, ssl, f);
	HS_SSL_FUNCS(HS_SSL_SYM)
#undef HS_SSL_SYM
	hs_ssl = ssl;
	return true;
}

static struct hs_dl libssl = HS_DL_INIT(HS_SSL_LIBRARY, "HOPSCOPE_TEST_LIBSSL", "the TLS library",
					take);

int hs_ssl_load(char *err, size_t errlen)
{
	return hs_dl_load(&libssl, err, errlen);
}
