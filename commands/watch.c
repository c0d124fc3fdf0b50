/* watch.c - the 'watch' verb: full-screen live view until 'q' */
#include "cmd.h"
#include "console.h"
#include "watch.h"

int cmd_watch(struct hs_ctx *ctx, int argc, char **argv)
{
	return hs_watch_start(ctx);
}
