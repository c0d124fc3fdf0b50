/* engine.c - the pipeline and the analyses that always run on it, and what
 * the engine tells the client that asked
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture.h"
#include "control.h"
#include "ctx.h"
#include "engine.h"
#include "planck.h"

int hs_engine_init(struct hs_ctx *ctx, char *err, size_t errlen)
{
	err[0] = '\0';
	if (hs_pipeline_init(ctx) < 0)
		return -1;
	if (hs_control_subscribe(ctx) < 0 || hs_planck_subscribe(ctx) < 0) {
		hs_engine_fini(ctx);
		snprintf(err, errlen, "cannot set up the packet pipeline: too many subscribers");
		return -1;
	}
	return 0;
}

void hs_engine_fini(struct hs_ctx *ctx)
{
	hs_pipeline_fini(ctx);
	hs_planck_unsubscribe(ctx);
	hs_control_unsubscribe(ctx);
}

/* ---- what the engine says ------------------------------------------------------ */

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
