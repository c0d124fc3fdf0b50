/* sleep.c - wait on the loop, so capture, timers and probes keep running */
#include <stdlib.h>

#include "cmd.h"
#include "console.h"

struct sleep_timer {
	uv_timer_t t;		/* first: the handle is freed as the whole */
	uint64_t deadline;	/* hs_mono_ns() to wake at */
};

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

/* whole milliseconds, rounded up, until the deadline */
static uint64_t ms_left(const struct sleep_timer *s, uint64_t now)
{
	return (s->deadline - now + 999999) / 1000000;
}

/* The loop's clock is in whole milliseconds and, on Linux, the coarse
 * monotonic clock, a tick behind: a timer can fire a few milliseconds
 * before the time asked for. Then it waits again for the rest. */
static void sleep_done(uv_timer_t *t)
{
	struct sleep_timer *s = (struct sleep_timer *)t;
	uint64_t now = hs_mono_ns();

	if (now < s->deadline && uv_timer_start(t, sleep_done, ms_left(s, now), 0) == 0)
		return;
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
	struct sleep_timer *s;
	int rc;

	(void)argc;
	if (hs_parse_duration(argv[1], &ns) < 0)
		return out_err(ctx->out, "sleep: bad duration '%s' (e.g. 500ms, 2s, 1m)", argv[1]);
	if (ns == 0)
		return HS_CMD_OK;
	if (!ctx->loop)
		return out_err(ctx->out, "sleep needs the console's event loop");
	s = hs_xcalloc(1, sizeof(*s));
	uv_timer_init(ctx->loop, &s->t);
	s->t.data = ctx;
	/* never wake before the time asked for: count from now rather than
	 * from the loop's cached time (stale after a long verb), round up, and
	 * check the time on waking (sleep_done) */
	uint64_t now = hs_mono_ns();
	s->deadline = now + ns;
	uv_update_time(ctx->loop);
	rc = uv_timer_start(&s->t, sleep_done, ms_left(s, now), 0);
	if (rc < 0) {
		uv_close((uv_handle_t *)&s->t, timer_closed);
		return out_err(ctx->out, "cannot sleep: %s", uv_strerror(rc));
	}
	ctx->pending = &s->t;
	ctx->cancel = sleep_cancel;
	return HS_CMD_PENDING;
}
