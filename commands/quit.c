/* quit.c - leave the console; capture stops and history is committed on the
 * way out (main.c) */
#include "cmd.h"
#include "console.h"

int cmd_quit(struct hs_ctx *ctx, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	ctx->quit = true;
	return HS_CMD_OK;
}
