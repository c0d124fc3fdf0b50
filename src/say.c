/* say.c - what the engine tells the client that asked: through the
 * context's say callback, or on stdout and stderr when it has none
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ctx.h"

static void vsay(struct hs_ctx *ctx, enum hs_say what, const char *fmt, va_list ap)
{
	static const char *const prefix[] = { "error: ", "warning: ", "" };
	char *msg = NULL;

	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	if (ctx->say) {
		ctx->say(ctx, what, msg ? msg : fmt);
	} else {
		fflush(stdout);
		fprintf(what == HS_SAY_INFO ? stdout : stderr, "%s%s\n", prefix[what],
			msg ? msg : fmt);
	}
	free(msg);
}

int hs_say_err(struct hs_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(ctx, HS_SAY_ERR, fmt, ap);
	va_end(ap);
	return -1;
}

void hs_say_warn(struct hs_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(ctx, HS_SAY_WARN, fmt, ap);
	va_end(ap);
}

void hs_say_info(struct hs_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(ctx, HS_SAY_INFO, fmt, ap);
	va_end(ap);
}
