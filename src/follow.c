/* follow.c - the fabric view: a history other analyzers write, followed
 * (follow.h)
 *
 * Each tick asks the analyzers' heartbeats in the history four small
 * things (the newest trace they stored, the other analyzers, which of
 * them keep every trace, which capture and how far their writing lags),
 * and, when something settled, reads the packets first seen between the
 * watermark and the new one (hs_fabric_load reads their parts a trace
 * timeout either side): one first seen before was handed before, whole;
 * one first seen in between is handed now, whole, since its parts are all
 * stored by then.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "follow.h"
#include "fabric.h"

#define FOLLOW_MS	1000		/* a tick */
#define PROBE_TICKS	5		/* not following: the history asked this seldom */
#define BEFORE_NS	(60 * HS_NS_PER_SEC)	/* the view starts this long before its
						 * capture */

#define CHECK_NS	(5 * HS_NS_PER_SEC)	/* a longer read is counted first */

struct hs_follow {
	struct hs_ctx *ctx;
	uv_timer_t timer;
	unsigned ticks;
	bool on, started, feeding, settled;
	bool rekeep;		/* on: its own traces the view reads again are to go */
	uint64_t mark;		/* traces first at mark or later are still to come */
	uint64_t head;		/* the newest stored trace's first copy */
	uint64_t head_seen;	/* wall clock when it was first seen so */
	uint64_t others, others_all, added;
	uint64_t skipped;	/* traces first seen in ranges too big to read, about */
	uint64_t failed_since;	/* wall clock of the first failed read since one
				 * that did not fail, 0 none */
	char err[512];
};

static const char *const view_names[] = {
	[HS_VIEW_AUTO] = "auto", [HS_VIEW_FABRIC] = "fabric", [HS_VIEW_LOCAL] = "local",
};

const char *hs_view_name(enum hs_view v)
{
	return (unsigned)v < HS_ARRAY_SIZE(view_names) ? view_names[v] : "auto";
}

int hs_view_parse(const char *s, enum hs_view *v)
{
	for (size_t i = 0; i < HS_ARRAY_SIZE(view_names); i++)
		if (strcmp(s, view_names[i]) == 0) {
			*v = (enum hs_view)i;
			return 0;
		}
	return -1;
}

/* the traces a view takes from the history rather than from its own
 * capture: what one analyzer's copies cannot judge alone */
static bool from_history(const struct hs_trace *t, const struct hs_topo *topo)
{
	if (t->flags & HS_TF_PROBE)
		return false;
	return t->outcome == HS_OUT_DROPPED || t->outcome == HS_OUT_LOOPED ||
	       (t->flags & HS_TF_PARTIAL) || hs_trace_partial(t, topo);
}

bool hs_follow_defers(const struct hs_ctx *ctx, const struct hs_trace *t)
{
	const struct hs_follow *f = ctx->follow;

	return f && f->on && !f->feeding && from_history(t, ctx->topo);
}

bool hs_follow_feeding(const struct hs_ctx *ctx)
{
	return ctx->follow && ctx->follow->feeding;
}

void hs_follow_reset(struct hs_ctx *ctx)
{
	struct hs_follow *f = ctx->follow;

	if (!f)
		return;
	f->on = f->started = f->settled = f->rekeep = false;
	ctx->following = false;
	f->mark = f->head = f->added = f->failed_since = f->skipped = 0;
	f->err[0] = '\0';
}

void hs_follow_get(const struct hs_ctx *ctx, struct hs_follow_status *s)
{
	const struct hs_follow *f = ctx->follow;

	memset(s, 0, sizeof(*s));
	if (!f)
		return;
	s->on = f->on;
	s->others = f->others;
	s->others_all = f->others_all;
	s->added = f->added;
	s->skipped = f->skipped;
	s->behind_ns = f->started && f->head >= f->mark ? f->head - f->mark : 0;
	s->read_until = f->started ? f->mark : 0;
	s->settled = f->settled;
	s->err = f->err[0] ? f->err : NULL;
	if (f->err[0] && f->failed_since) {
		uint64_t now = hs_wall_ns();
		s->unread_ns = now > f->failed_since ? now - f->failed_since : 1;
	}
}

const char *hs_follow_others(const struct hs_follow_status *s, char *buf, size_t len)
{
	static const char some[] = "only drops, loops, probes, matches and partial paths";

	if (s->others && s->others_all >= s->others)
		snprintf(buf, len, "every trace of the other analyzer%s: %s 'set history all'",
			 s->others == 1 ? "" : "s", s->others == 1 ? "it keeps" : "they keep");
	else if (!s->others_all)
		snprintf(buf, len, "the other analyzers' traces as they store them: %s (none keeps "
			 "'set history all')", some);
	else
		snprintf(buf, len, "the other analyzers' traces as they store them: every one of "
			 "the %" PRIu64 " that keep%s 'set history all', %s of the %" PRIu64
			 " that do%s not", s->others_all, s->others_all == 1 ? "s" : "", some,
			 s->others - s->others_all, s->others - s->others_all == 1 ? "es" : "");
	return buf;
}

/* the history, if this view may follow it */
static struct hs_store *followed(struct hs_ctx *ctx)
{
	switch (ctx->set.view) {
	case HS_VIEW_LOCAL:
		return NULL;
	case HS_VIEW_FABRIC:	/* never made for it: open, or on a server */
		if (ctx->set.policy == HS_POLICY_OFF)
			return NULL;
		if (ctx->store)
			return ctx->store;
		return ctx->set.db_path && hs_store_is_pg(ctx->set.db_path) ?
		       hs_ctx_store_early(ctx) : NULL;
	default:	/* what this console captured went into a shared history */
		if (ctx->set.policy == HS_POLICY_OFF || !ctx->store || ctx->ring_session <= 0 ||
		    !hs_store_is_pg(hs_store_path(ctx->store)))
			return NULL;
		return ctx->store;
	}
}

/* the stored traces first seen in [from, to) */
static int count(struct hs_ctx *ctx, struct hs_store *st, uint64_t from, uint64_t to,
		 uint64_t *n)
{
	struct hs_store_span sp;
	int rc = hs_store_span(st, from, to, true, &sp, ctx->follow->err,
			       sizeof(ctx->follow->err));

	*n = sp.n;
	return rc;
}

/* what this console's capture closed that the view now takes from the
 * history is hidden: the traces of its kinds first seen from the mark on,
 * which the view reads (an older one it never reads stays as it was);
 * whoever counted it as it was published is told it goes */
static bool own_from_history(void *arg, const struct hs_trace *t)
{
	struct hs_ctx *ctx = arg;

	if (!t->nhops || t->hops[0].ts_ns < ctx->follow->mark || !from_history(t, ctx->topo))
		return false;
	struct hs_event ev = { .kind = HS_EV_TRACE_WITHDRAWN, .trace = t };
	hs_publish_event(&ctx->subs, &ev);
	return true;
}

/* the view's first read is about to start at the mark: the traces it
 * will hand again go, and whoever kept them as they were published (a
 * watch's feed, the rates) is told to read the traces kept again, so
 * each packet is one trace there too */
static void rekeep(struct hs_ctx *ctx)
{
	struct hs_event ev = { .kind = HS_EV_TRACES_REPLACED };

	ctx->follow->rekeep = false;
	hs_tracer_hide_if(ctx->tracer, own_from_history, ctx);
	hs_publish_event(&ctx->subs, &ev);
}

static void take_one(void *arg, const struct hs_trace *t, bool foreign)
{
	struct hs_ctx *ctx = arg;

	if (!foreign && !from_history(t, ctx->topo))
		return;		/* its own, kept when it closed here */
	ctx->follow->added++;
	hs_tracer_adopt(ctx->tracer, t);
}

/* a read of history st failed, why in err: the view stays where it was,
 * and says since when, naming the history */
static void unread(struct hs_follow *f, const struct hs_store *st, const char *err)
{
	snprintf(f->err, sizeof(f->err), "cannot read '%.200s': %.280s", hs_store_name(st), err);
	if (!f->failed_since)
		f->failed_since = hs_wall_ns();
}

static void tick(uv_timer_t *h)
{
	struct hs_ctx *ctx = h->data;
	struct hs_follow *f = ctx->follow;
	struct hs_store *st;
	struct hs_store_others p;

	f->ticks++;
	if (!f->on && ctx->set.view != HS_VIEW_FABRIC && f->ticks % PROBE_TICKS != 1)
		return;
	if (!(st = followed(ctx))) {
		f->on = ctx->following = false;
		return;
	}
	hs_ctx_hold_store(ctx);
	/* what the heartbeats tell of the others, the newest trace stored
	 * with them */
	char why[sizeof(f->err)];
	if (hs_fabric_others(st, hs_ctx_analyzer(ctx), hs_wall_ns(), &p, why, sizeof(why)) < 0) {
		unread(f, st, why);
		return;
	}
	f->err[0] = '\0';
	f->failed_since = 0;
	f->others = p.others;
	f->others_all = p.others_all;
	if (!f->on && ctx->set.view != HS_VIEW_FABRIC && !p.others)
		return;
	if (!p.have_newest)
		return;		/* nothing stored yet */
	uint64_t now = hs_wall_ns();
	if (!f->started || p.newest != f->head)
		f->head_seen = now;
	f->head = p.newest;
	if (!f->started) {
		uint64_t start = ctx->last_stats.first_ts ? ctx->last_stats.first_ts : p.newest;
		f->mark = start > BEFORE_NS ? start - BEFORE_NS : 0;
		f->started = true;
	}
	if (!f->on)
		f->on = f->rekeep = ctx->following = true;

	uint64_t window = ctx->set.trace_timeout_ns ? ctx->set.trace_timeout_ns : HS_NS_PER_SEC;
	/* the packets first seen before to are whole: all of them when
	 * nothing captures, or no heartbeat told of a newer trace for long */
	uint64_t to = hs_fabric_whole_end(&p, window, now, f->head_seen);
	f->settled = p.running == 0;
	if (to <= f->mark)
		return;
	/* far behind (the view turned on late, the history was away): about
	 * a batch of traces (hs_fabric_batch) is read at once, the older part
	 * skipped and counted (the trace set keeps the newest anyway); however
	 * long the time they span, as a capture of minutes whose other parts
	 * are all to be read */
	uint64_t n, batch = hs_fabric_batch();
	if (to - f->mark > CHECK_NS && count(ctx, st, f->mark, to, &n) == 0 && n > batch) {
		f->mark = to - (uint64_t)((double)(to - f->mark) * (double)batch / (double)n);
		f->skipped += n - batch;
	}
	if (f->rekeep)
		rekeep(ctx);

	struct hs_fabric_range r = {
		.since_ns = f->mark, .until_ns = to, .window_ns = window,
		.own = hs_ctx_analyzer(ctx),
	};
	struct hs_fabric_stats fs;
	char err[512];
	f->feeding = true;
	int rc = hs_fabric_load(st, ctx->topo, &r, take_one, ctx, &fs, err, sizeof(err));
	f->feeding = false;
	if (rc < 0) {
		unread(f, st, err);
		return;
	}
	f->err[0] = '\0';
	f->failed_since = 0;
	f->mark = to;
}

int hs_follow_init(struct hs_ctx *ctx)
{
	struct hs_follow *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->ctx = ctx;
	ctx->follow = f;
	uv_timer_init(ctx->loop, &f->timer);
	f->timer.data = ctx;
	uv_timer_start(&f->timer, tick, FOLLOW_MS, FOLLOW_MS);
	uv_unref((uv_handle_t *)&f->timer);
	return 0;
}

static void closed(uv_handle_t *h)
{
	free(h->data);
}

void hs_follow_fini(struct hs_ctx *ctx)
{
	struct hs_follow *f = ctx->follow;

	if (!f)
		return;
	ctx->follow = NULL;
	ctx->following = false;
	uv_timer_stop(&f->timer);
	f->timer.data = f;
	uv_close((uv_handle_t *)&f->timer, closed);
}
