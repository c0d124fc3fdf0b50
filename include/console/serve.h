/* serve.h - hopscope serve (serve.c) and consoles attached to it (attach.c) */
#ifndef HS_SERVE_H
#define HS_SERVE_H

#include <stdbool.h>
#include <stddef.h>

struct hs_ctx;

#define HS_SERVE_CONFIG	"/etc/hopscope/hopscope.conf"
#define HS_SERVE_SOCKET	"/run/hopscope/hopscope.sock"

/* the daemon's socket unless told another: $HOPSCOPE_SOCKET, else
 * HS_SERVE_SOCKET */
const char *hs_serve_socket(void);

/* hopscope serve ARG...: argv[0] is "serve"; the exit status */
int hs_serve_main(int argc, char **argv);

/* over TCP: how the console checks the daemon, and proves who it is */
struct hs_attach_tls {
	const char *ca;			/* the daemon's certificate's CA; NULL: the system's */
	const char *cert, *key;		/* the console's certificate, or NULL */
	const char *secret;		/* a file whose first line is the secret, or NULL */
};

/* where is HOST:PORT rather than a socket's path (no '/', a ':') */
bool hs_attach_is_tcp(const char *where);
/* attach to the daemon at where (a socket's path, or HOST:PORT with TLS
 * as tls says): connect, agree on versions, and run the runner's lines
 * there from now on; 0, or -1 with the error printed */
int hs_attach_open(struct hs_ctx *ctx, const char *where, const struct hs_attach_tls *tls);
/* the connection closed (at the end of main) */
void hs_attach_close(struct hs_ctx *ctx);
/* a daemon's socket is at path (a socket, whether one answers or not) */
bool hs_attach_socket_there(const char *path);

#endif
