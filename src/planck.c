/* planck.c - rates and alerts on the pipeline: fed by closed traces,
 * evaluated on capture time; what fires is published as an event and
 * stored in the history
 */
#include <stdio.h>
#include <stdlib.h>

#include "ctx.h"
#include "planck.h"

struct hs_planck *hs_planck_get(struct hs_ctx *ctx)
{
	if (!ctx->planck) {
		struct hs_planck *p = hs_xcalloc(1, sizeof(*p));
		p->rates = hs_rates_new(HS_RATE_DEFAULT_FLOWS);
		hs_alerts_init(&p->alerts);
		ctx->planck = p;
	}
	hs_planck_sync(ctx, ctx->planck);
	return ctx->planck;
}

void hs_planck_free(struct hs_ctx *ctx)
{
	if (!ctx->planck)
		return;
	hs_rates_free(ctx->planck->rates);
	free(ctx->planck);
	ctx->planck = NULL;
}

void hs_planck_clear(struct hs_ctx *ctx)
{
	struct hs_planck *p = ctx->planck;

	if (!p)
		return;
	hs_rates_clear(p->rates);
	p->next_eval = 0;
	for (int i = 0; i < p->alerts.n; i++) {
		p->alerts.a[i].armed = true;
		p->alerts.a[i].measured = false;
	}
}

/* rates and alerts are resolved on the context's topology as it is now */
static inline bool synced(const struct hs_ctx *ctx, const struct hs_planck *p)
{
	return p->topo == ctx->topo && p->topo_nlinks == (ctx->topo ? ctx->topo->nlinks : 0);
}

void hs_planck_sync(struct hs_ctx *ctx, struct hs_planck *p)
{
	if (synced(ctx, p))
		return;
	p->topo = ctx->topo;
	p->topo_nlinks = ctx->topo ? ctx->topo->nlinks : 0;
	hs_rates_set_topo(p->rates, ctx->topo);
	hs_alerts_resolve(&p->alerts, ctx->topo);
}

static void store_event(struct hs_ctx *ctx, const struct hs_alert *a, double v, uint64_t ts)
{
	struct hs_planck *p = ctx->planck;

	hs_ctx_hold_store(ctx);
	if (!ctx->store || hs_store_event(ctx->store, ctx->session, ts, a->id, a->text, v,
					  hs_wall_ns()) < 0)
		p->unstored++;
}

static void on_fire(void *arg, const struct hs_alert *a, double v, uint64_t ts)
{
	struct hs_ctx *ctx = arg;
	struct hs_event ev = { .kind = HS_EV_ALERT, .alert = a, .value = v, .ts = ts };

	ctx->planck->events++;
	hs_publish_event(&ctx->subs, &ev);
	store_event(ctx, a, v, ts);
}

/* a closed trace: the estimator, made and synced, taken without a call
 * once it is */
static void on_trace(void *arg, const struct hs_trace *t)
{
	struct hs_ctx *ctx = arg;
	struct hs_planck *p = ctx->planck && synced(ctx, ctx->planck) ? ctx->planck
								       : hs_planck_get(ctx);
	struct hs_rates *r = p->rates;

	hs_rates_on_trace(r, t);
	/* the estimates are recomputed for the alerts; watch's load column and
	 * 'rates' compute them when they are shown */
	if (r->now < p->next_eval || !p->alerts.n)
		return;
	p->next_eval = r->now - r->now % HS_ALERT_TICK_NS + HS_ALERT_TICK_NS;
	hs_rates_compute(r, r->now, HS_RATE_DEFAULT_WINDOW, NULL, NULL, NULL);
	if (p->alerts.n)
		hs_alerts_eval(&p->alerts, r, r->now, HS_RATE_DEFAULT_WINDOW, on_fire, ctx);
}

/* traces of TCP flows are about to close: their estimator entries come in */
static void on_soon(void *arg, const struct hs_soon *s, unsigned n)
{
	struct hs_ctx *ctx = arg;

	if (ctx->planck)
		hs_rates_prefetch(ctx->planck->rates, s, n);
}

/* the traces kept were replaced (the fabric view, history load): the
 * rates are those of the traces kept, each packet once, read again from
 * the tracer oldest first (the alerts are not judged on them again) */
static void rekept(struct hs_ctx *ctx)
{
	enum { MAX = 65536 };	/* at most the tracer keeps */
	const struct hs_trace **t;
	size_t n;

	hs_planck_clear(ctx);
	if (!ctx->planck || !ctx->tracer)
		return;
	t = malloc(MAX * sizeof(*t));
	if (!t)
		return;
	n = hs_tracer_recent(ctx->tracer, t, MAX);
	while (n-- > 0)
		hs_rates_on_trace(ctx->planck->rates, t[n]);
	free(t);
}

static void on_event(void *arg, const struct hs_event *ev)
{
	if (ev->kind == HS_EV_CAPTURE_STARTED)
		hs_planck_clear(arg);
	else if (ev->kind == HS_EV_TRACES_REPLACED)
		rekept(arg);
}

int hs_planck_subscribe(struct hs_ctx *ctx)
{
	if (hs_sub_traces(&ctx->subs, HS_TRACES_ALL, on_trace, on_soon, ctx) < 0)
		return -1;
	if (hs_sub_events(&ctx->subs, on_event, ctx) < 0) {
		hs_unsub_traces(&ctx->subs, on_trace, ctx);
		return -1;
	}
	return 0;
}

void hs_planck_unsubscribe(struct hs_ctx *ctx)
{
	hs_unsub_traces(&ctx->subs, on_trace, ctx);
	hs_unsub_events(&ctx->subs, on_event, ctx);	hs_planck_free(ctx);
}

void hs_planck_link_load(struct hs_ctx *ctx, int link, int from, char *buf, size_t len)
{
	struct hs_planck *p = ctx->planck;

	buf[0] = '\0';
	if (!p || p->topo != ctx->topo || link < 0 || link >= p->rates->nlinks)
		return;
	struct hs_rates *r = p->rates;
	/* samples came in since the estimates were last computed */
	if (r->computed_at != r->now || r->computed_window != HS_RATE_DEFAULT_WINDOW)
		hs_rates_compute(r, r->now, HS_RATE_DEFAULT_WINDOW, NULL, NULL, NULL);
	int d = 2 * link + (r->topo->links[link].a == from ? 0 : 1);
	double util;
	char v[24];
	if (!r->link_flows[d])
		return;
	if (hs_link_util(r->topo, d, r->link_bps[d], &util))
		snprintf(v, sizeof(v), util < 0.1 ? "%.1f%%" : "%.0f%%", 100 * util);
	else
		hs_fmt_bps(r->link_bps[d], v, sizeof(v));
	snprintf(buf, len, "%s%s", hs_rate_rough(r->link_samples[d]) ? "~" : "", v);
}
