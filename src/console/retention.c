/* retention.c - the history's retention, enforced in the background (retention.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console.h"
#include "interrupt.h"
#include "retention.h"

#define RETAIN_PERIOD_MS 60000		/* a look at the bounds */
#define RETAIN_STEP_ROWS 20000		/* rows of each kind per step, one loop turn */

static struct {
	uv_timer_t timer;
	bool armed;
	uint64_t period_ms;
	bool in_pass;
	struct hs_prune cur, last;
	uint64_t last_wall;
	bool have_last;
} rt;

/* the session of the running capture (0: none), and whether it is live */
static int64_t current_session(struct hs_ctx *ctx, bool *live)
{
	const char *source, *end_reason;
	uint64_t stored, unstored;
	bool is_file = true;

	*live = false;
	if (!ctx->session || !hs_capture_running(ctx) ||
	    !hs_capture_info(ctx, &source, &is_file, &end_reason, &stored, &unstored))
		return 0;
	*live = !is_file;
	return ctx->session;
}

static bool removed(const struct hs_prune *p)
{
	return p->traces + p->flows + p->sessions + p->probes + p->other > 0;
}

/* one step on the open history: 1 more, 0 done, -1 error (printed) */
static int step(struct hs_ctx *ctx, struct hs_prune *res)
{
	struct hs_store *st = ctx->store;
	bool live;
	int rc;

	hs_ctx_hold_store(ctx);
	int64_t current = current_session(ctx, &live);
	rc = hs_store_prune(st, hs_wall_ns(), current, live ? current : 0, RETAIN_STEP_ROWS, res);
	if (rc < 0)
		hs_async_print(ctx, "warning: retention: %s", hs_store_errmsg(st));
	return rc;
}

static void pass_done(void)
{
	if (removed(&rt.cur)) {
		rt.last = rt.cur;
		rt.last_wall = hs_wall_ns();
		rt.have_last = true;
	}
	memset(&rt.cur, 0, sizeof(rt.cur));
	rt.in_pass = false;
}

static void on_timer(uv_timer_t *h)
{
	struct hs_ctx *ctx = h->data;
	int rc;

	/* a history nobody opened is not opened for this */
	if (!ctx->store) {
		pass_done();
		return;
	}
	rt.in_pass = true;
	rc = step(ctx, &rt.cur);
	if (rc == 1) {
		uv_timer_start(&rt.timer, on_timer, 0, 0);	/* the next step, next turn */
		return;
	}
	pass_done();
	uv_timer_start(&rt.timer, on_timer, rt.period_ms, 0);
}

void hs_retention_start(struct hs_ctx *ctx)
{
	const char *env = getenv("HOPSCOPE_RETENTION_PERIOD");
	uint64_t ns;

	if (rt.armed)
		return;
	rt.period_ms = RETAIN_PERIOD_MS;
	/* tests look more often */
	if (env && hs_parse_duration(env, &ns) == 0 && ns >= 1000000)
		rt.period_ms = ns / 1000000;
	uv_timer_init(ctx->loop, &rt.timer);
	rt.timer.data = ctx;
	uv_unref((uv_handle_t *)&rt.timer);
	uv_timer_start(&rt.timer, on_timer, rt.period_ms, 0);
	rt.armed = true;
}

void hs_retention_stop(struct hs_ctx *ctx)
{
	(void)ctx;
	if (!rt.armed)
		return;
	uv_timer_stop(&rt.timer);
	uv_close((uv_handle_t *)&rt.timer, NULL);
	rt.armed = false;
}

int hs_retention_pass(struct hs_ctx *ctx, struct hs_prune *res)
{
	int rc;

	memset(res, 0, sizeof(*res));
	if (!hs_ctx_store(ctx))
		return -1;
	do {
		if (hs_interrupted())
			return 1;
		rc = step(ctx, res);
	} while (rc == 1);
	if (rc < 0)
		return -1;
	if (removed(res)) {
		rt.last = *res;
		rt.last_wall = hs_wall_ns();
		rt.have_last = true;
	}
	return 0;
}

bool hs_retention_last(struct hs_ctx *ctx, struct hs_prune *res, uint64_t *wall_ns)
{
	(void)ctx;
	if (!rt.have_last)
		return false;
	*res = rt.last;
	*wall_ns = rt.last_wall;
	return true;
}

const char *hs_fmt_age(uint64_t ns, char *buf, size_t len)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "w", 604800 * HS_NS_PER_SEC }, { "d", 86400 * HS_NS_PER_SEC },
		{ "h", 3600 * HS_NS_PER_SEC }, { "m", 60 * HS_NS_PER_SEC },
		{ "s", HS_NS_PER_SEC }, { "ms", 1000000 },
	};

	for (size_t i = 0; i < HS_ARRAY_SIZE(units); i++) {
		if (ns >= units[i].ns && ns % units[i].ns == 0) {
			snprintf(buf, len, "%llu%s", (unsigned long long)(ns / units[i].ns),
				 units[i].unit);
			return buf;
		}
	}
	return hs_fmt_duration(ns, buf, len);
}
