/* sleep.c - wait on the loop, so capture, timers and probes keep running */
#include <stdlib.h>

#include "cmd.h"
#include "console.h"

static void timer_closed(uv_handle_t *h)
{
	free(h);
}

static void sleep_end(struct hs_ctx *ctx, int status)
{
	uv_timer_t *t = ctx->pending;

	ctx->pending = NULL;
	if (t) {
		uv_timer_stop(t);
		uv_close((uv_handle_t *)t, timer_closed);
	}
	hs_cmd_finish(ctx, status);
}

static void sleep_done(uv_timer_t *t)
{
	sleep_end(t->data, HS_CMD_OK);
}

/* Ctrl-C: the wait ends early; that is not a failure */
static void sleep_cancel(struct hs_ctx *ctx)
{
	sleep_end(ctx, HS_CMD_OK);
}

int cmd_sleep(struct hs_ctx *ctx, int argc, char **argv)
{
	uint64_t ns;
	uv_timer_t *t;
	int rc;

	(void)argc;
	if (hs_parse_duration(argv[1], &ns) < 0)
		return out_err(&ctx->out, "bad duration '%s' (e.g. 500ms, 2s, 1m)", argv[1]);
	if (ns == 0)
		return HS_CMD_OK;
	if (!ctx->loop)
		return out_err(&ctx->out, "sleep needs the console's event loop");
	t = hs_xcalloc(1, sizeof(*t));
	uv_timer_init(ctx->loop, t);
	t->data = ctx;
	/* round up, and count from now rather than from the loop's cached time
	 * (stale after a long verb): never wake before the time asked for */
	uv_update_time(ctx->loop);
	rc = uv_timer_start(t, sleep_done, (ns + 999999) / 1000000, 0);
	if (rc < 0) {
		uv_close((uv_handle_t *)t, timer_closed);
		return out_err(&ctx->out, "cannot sleep: %s", uv_strerror(rc));
	}
	ctx->pending = t;
	ctx->cancel = sleep_cancel;
	return HS_CMD_PENDING;
}
