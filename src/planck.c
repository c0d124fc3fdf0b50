/* planck.c - rates and alerts in the console: fed by closed traces,
 * evaluated on capture time, events to the screen and the history
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "console.h"
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

void hs_planck_sync(struct hs_ctx *ctx, struct hs_planck *p)
{
	int n = ctx->topo ? ctx->topo->nlinks : 0;

	if (p->topo == ctx->topo && p->topo_nlinks == n)
		return;
	p->topo = ctx->topo;
	p->topo_nlinks = n;
	hs_rates_set_topo(p->rates, ctx->topo);
	hs_alerts_resolve(&p->alerts, ctx->topo);
}

static void store_event(struct hs_ctx *ctx, const struct hs_alert *a, double v, uint64_t ts)
{
	struct hs_planck *p = ctx->planck;
	sqlite3_stmt *s = NULL;

	hs_capture_hold_store(ctx);
	struct hs_store *st = ctx->store;

	if (!st) {
		p->unstored++;
		return;
	}
	sqlite3 *db = hs_store_db(st);
	if (sqlite3_prepare_v2(db,
		"INSERT INTO events(session, ts, alert, cond, value, wall)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &s, NULL) != SQLITE_OK) {
		p->unstored++;
		return;
	}
	if (ctx->session > 0)
		sqlite3_bind_int64(s, 1, ctx->session);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)ts);
	sqlite3_bind_int64(s, 3, a->id);
	sqlite3_bind_text(s, 4, a->text, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(s, 5, v);
	sqlite3_bind_int64(s, 6, (sqlite3_int64)hs_wall_ns());
	if (sqlite3_step(s) != SQLITE_DONE)
		p->unstored++;
	sqlite3_finalize(s);
}

static void on_fire(void *arg, const struct hs_alert *a, double v, uint64_t ts)
{
	struct hs_ctx *ctx = arg;
	char val[32], when[HS_TIMESTRLEN];

	ctx->planck->events++;
	if (ctx->out.json && !ctx->interactive) {
		/* a runbook with --json: a JSON line among the verb's output, with
		 * the events table's names */
		struct hs_out o;

		out_init(&o, ctx->out.fp, ctx->out.err, true);
		out_obj_open(&o, NULL);
		out_str(&o, "event", NULL, "alert");
		out_uint(&o, "alert", NULL, a->id);
		out_str(&o, "cond", NULL, a->text);
		out_double(&o, "value", NULL, v);
		out_raw(&o, "ts", NULL, hs_fmt_ts(ts, when, sizeof(when)));
		out_obj_close(&o);
		fflush(ctx->out.fp);
	} else {
		hs_async_print(ctx, "alert %u: %s (%s) at %s", a->id, a->text,
			       hs_acond_fmt(&a->c, v, val, sizeof(val)),
			       hs_fmt_time(ts, when, sizeof(when)));
	}
	store_event(ctx, a, v, ts);
}

void hs_planck_on_trace(struct hs_ctx *ctx, const struct hs_trace *t)
{
	struct hs_planck *p = hs_planck_get(ctx);
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
