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

/* attach to the daemon at path: connect, agree on versions, and run the
 * runner's lines there from now on; 0, or -1 with the error printed */
int hs_attach_open(struct hs_ctx *ctx, const char *path);
/* the connection closed (at the end of main) */
void hs_attach_close(struct hs_ctx *ctx);
/* a daemon's socket is at path (a socket, whether one answers or not) */
bool hs_attach_socket_there(const char *path);

#endif
