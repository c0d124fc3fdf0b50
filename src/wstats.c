/* wstats.c - what a 'stats' run counts: records and drops in windows
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "subs.h"
#include "wstats.h"

#define WSTATS_FILE_OPEN 65536	/* open traces of a file's own tracer */

struct hs_wstats {
	struct hs_win *win;
	struct hs_filterset *where;	/* NULL: every record */
	struct hs_subs *subs;		/* subscribed to, NULL when not */
	uint64_t watermark;		/* newest record's capture time */
	uint64_t until;			/* the run's end, 0 none yet */
	/* over a file */
	struct hs_tracer *ftr;
	uint64_t timeout_ns;
	uint64_t newest;		/* newest capture time read */
};

static bool where_match(struct hs_wstats *w, const struct hs_pkt *p)
{
	return !w->where || hs_filter_match(w->where, p, NULL);
}

/* a dropped trace: one drop in the window of its last hop, keyed by it
 * (taken back: undo) */
static void trace_drop(struct hs_wstats *w, const struct hs_trace *t, bool filter, bool undo)
{
	struct hs_pktrec r;

	if (t->outcome != HS_OUT_DROPPED || !t->nhops)
		return;
	hs_pktrec_from_hop(&r, t, &t->hops[t->nhops - 1]);
	if (w->until && r.ts_ns >= w->until)
		return;		/* after the run */
	if (filter && w->where) {
		uint8_t hdr[HS_PKTREC_HDR_MAX];
		struct hs_pkt p;
		memset(&p, 0, sizeof(p));
		p.have = HS_HAVE_IP;
		p.l3 = hdr;
		p.l3_caplen = (uint32_t)hs_pktrec_header(&r, hdr, sizeof(hdr));
		p.len = r.len;
		if (!p.l3_caplen || !hs_filter_match(w->where, &p, NULL))
			return;
	}
	if (undo)
		hs_win_undrop(w->win, &r);
	else
		hs_win_drop(w->win, &r);
}

static void file_trace_closed(void *arg, const struct hs_trace *t)
{
	trace_drop(arg, t, false, false);	/* its copies were filtered on the way in */
}

struct hs_wstats *hs_wstats_new(const struct hs_wstats_cfg *cfg, char *err, size_t errlen)
{
	struct hs_wstats *w = hs_xcalloc(1, sizeof(*w));

	if (cfg->where && cfg->where[0]) {
		w->where = hs_filterset_new();
		if (!w->where)
			snprintf(err, errlen, "cannot compile filters");
		if (!w->where || hs_filter_add(w->where, cfg->where, err, errlen) < 0) {
			hs_wstats_free(w);
			return NULL;
		}
	}
	w->win = hs_win_new(&cfg->win);
	if (cfg->file) {
		struct hs_tracer_cfg tc = {
			.timeout_ns = cfg->timeout_ns,
			.max_open = WSTATS_FILE_OPEN,
			.ring = 1,
			.topo = cfg->topo,
			.on_close = file_trace_closed,
			.arg = w,
		};
		w->timeout_ns = cfg->timeout_ns;
		w->ftr = hs_tracer_new(&tc);
	}
	return w;
}

void hs_wstats_free(struct hs_wstats *w)
{
	if (!w)
		return;
	hs_wstats_unsubscribe(w);
	hs_tracer_free(w->ftr);
	hs_win_free(w->win);
	hs_filterset_free(w->where);
	free(w);
}

struct hs_win *hs_wstats_win(struct hs_wstats *w)
{
	return w->win;
}

/* ---- on the running capture -------------------------------------------------- */

static void on_packet(void *arg, const struct hs_pkt *p)
{
	struct hs_wstats *w = arg;
	struct hs_pktrec r;

	if (!where_match(w, p))
		return;
	hs_pktrec_from_pkt(&r, p);
	if (r.ts_ns > w->watermark)
		w->watermark = r.ts_ns;
	hs_win_packet(w->win, &r);
}

static void on_trace(void *arg, const struct hs_trace *t)
{
	trace_drop(arg, t, true, false);
}

/* a trace published before is taken back, to come again as another (the
 * fabric view's, joined with the parts other analyzers stored): its drop
 * is not counted twice */
static void on_event(void *arg, const struct hs_event *ev)
{
	if (ev->kind == HS_EV_TRACE_WITHDRAWN && ev->trace)
		trace_drop(arg, ev->trace, true, true);
}

int hs_wstats_subscribe(struct hs_wstats *w, struct hs_subs *subs)
{
	/* only dropped traces count */
	struct hs_trace_cond dropped = { .outcomes = 1u << HS_OUT_DROPPED };

	if (hs_sub_packets(subs, HS_PK_KEPT, on_packet, w) < 0)
		return -1;
	if (hs_sub_traces(subs, dropped, on_trace, NULL, w) < 0) {
		hs_unsub_packets(subs, on_packet, w);
		return -1;
	}
	if (hs_sub_events(subs, on_event, w) < 0) {
		hs_unsub_packets(subs, on_packet, w);
		hs_unsub_traces(subs, on_trace, w);
		return -1;
	}
	w->subs = subs;
	return 0;
}

void hs_wstats_unsubscribe(struct hs_wstats *w)
{
	if (!w->subs)
		return;
	hs_unsub_packets(w->subs, on_packet, w);
	hs_unsub_traces(w->subs, on_trace, w);
	hs_unsub_events(w->subs, on_event, w);
	w->subs = NULL;
}

void hs_wstats_end_at(struct hs_wstats *w, uint64_t until)
{
	if (w->subs)
		hs_unsub_packets(w->subs, on_packet, w);
	w->until = until;
}

uint64_t hs_wstats_watermark(const struct hs_wstats *w)
{
	return w->watermark;
}

/* ---- over a file ----------------------------------------------------------------- */

void hs_wstats_file_frame(struct hs_wstats *w, const struct hs_pkt *p, bool ok)
{
	struct hs_pktrec r;

	if (p->ts_ns > w->newest)
		w->newest = p->ts_ns;
	if (ok && where_match(w, p)) {
		hs_pktrec_from_pkt(&r, p);
		hs_win_packet(w->win, &r);
		hs_tracer_add(w->ftr, p, 0);
	}
	hs_tracer_advance(w->ftr, w->newest);
	if (w->newest > w->timeout_ns)
		hs_win_close_until(w->win, w->newest - w->timeout_ns);
}

void hs_wstats_file_end(struct hs_wstats *w)
{
	hs_tracer_close_all(w->ftr);
	hs_win_flush(w->win);
}
