/* driverun.c - a verb that waits for the fabric's driver (driverun.h) */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "console.h"
#include "driverun.h"

struct driver_wait {
	struct hs_ctx *ctx;
	hs_driver_done done;
	void *arg;			/* the verb's, copied */
	const char *interrupted;
	struct hs_driver_job *job;
};

static void wait_free(struct driver_wait *w)
{
	free(w->arg);
	free(w);
}

int hs_driver_failed(struct hs_ctx *ctx, const struct hs_driver_result *r, const char *what)
{
	if (r->term_signal)
		return out_err(&ctx->out, "%s '%s' killed by signal %d", what, r->driver,
			       r->term_signal);
	if (r->exit_status == 0)
		return 0;
	if (*r->err)
		return out_err(&ctx->out, "%s", r->err);
	return out_err(&ctx->out, "%s '%s' failed with status %" PRId64, what, r->driver,
		       r->exit_status);
}

static void waited(void *arg, const struct hs_driver_result *r)
{
	struct driver_wait *w = arg;
	struct hs_ctx *ctx = w->ctx;

	if (!r) {			/* the console is closing */
		if (ctx->pending == w) {
			ctx->cancel = NULL;
			ctx->pending = NULL;
		}
		wait_free(w);
		return;
	}
	int st = w->done(ctx, r, w->arg);
	ctx->cancel = NULL;
	ctx->pending = NULL;
	wait_free(w);
	hs_cmd_finish(ctx, st < 0 ? HS_CMD_FAIL : HS_CMD_OK);
}

/* Ctrl-C: stop waiting; the driver finishes (or undoes) its work alone */
static void wait_cancel(struct hs_ctx *ctx)
{
	struct driver_wait *w = ctx->pending;

	ctx->cancel = NULL;
	ctx->pending = NULL;
	if (w) {
		out_warn(&ctx->out, "%s", w->interrupted);
		hs_driver_abandon(w->job);
		wait_free(w);
	}
	hs_cmd_finish(ctx, HS_CMD_FAIL);
}

int hs_driver_run(struct hs_ctx *ctx, char **argv, size_t out_max, hs_driver_done done,
		  const void *arg, size_t arglen, const char *what, const char *interrupted)
{
	struct driver_wait *w = hs_xcalloc(1, sizeof(*w));
	int rc = 0;

	*w = (struct driver_wait){ .ctx = ctx, .done = done, .interrupted = interrupted };
	w->arg = hs_xcalloc(1, arglen ? arglen : 1);
	if (arglen)
		memcpy(w->arg, arg, arglen);
	w->job = hs_driver_spawn(ctx->loop, argv, out_max, waited, w, &rc);
	if (!w->job) {
		wait_free(w);
		return out_err(&ctx->out, "cannot run %s '%s': %s%s", what, argv[0], uv_strerror(rc),
			       hs_driver_hint(-rc));
	}
	ctx->pending = w;
	ctx->cancel = wait_cancel;
	return HS_CMD_PENDING;
}
