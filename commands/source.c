/* source.c - run the commands of a runbook file, then carry on */
#include "cmd.h"
#include "console.h"

int cmd_source(struct hs_ctx *ctx, int argc, char **argv)
{
	(void)argc;
	return ctx->con->source(ctx, argv[1]);
}
