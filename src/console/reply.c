/* reply.c - what a verb asks of the console above it (reply.h) */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "ctx.h"
#include "out.h"
#include "reply.h"

void hs_cmd_finish(struct hs_ctx *ctx, int status)
{
	if (ctx->con && ctx->con->finish) {
		ctx->con->finish(ctx, status);
		return;
	}
	/* no runner above: the verb was called by itself */
	ctx->cancel = NULL;
	out_settle(ctx->out);
	ctx->out->json = ctx->set.json;
}

void hs_print_line(struct hs_ctx *ctx, const char *fmt, va_list ap)
{
	FILE *fp = ctx->out->json ? ctx->out->err : ctx->out->fp;

	if (!fp)
		fp = stdout;
	fflush(ctx->out->fp);
	vfprintf(fp, fmt, ap);
	fputc('\n', fp);
	fflush(fp);
}

void hs_async_print(struct hs_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (ctx->con && ctx->con->vprint)
		ctx->con->vprint(ctx, fmt, ap);
	else
		hs_print_line(ctx, fmt, ap);
	va_end(ap);
}

int hs_console_poll_stdin(uv_loop_t *loop, uv_poll_t *poll)
{
	int flags = fcntl(STDIN_FILENO, F_GETFL);
	int rc = uv_poll_init(loop, poll, STDIN_FILENO);

	if (rc == 0 && flags >= 0)
		fcntl(STDIN_FILENO, F_SETFL, flags);
	return rc;
}
