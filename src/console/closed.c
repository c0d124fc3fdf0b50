/* closed.c - the closed traces the analyses answer from (closed.h) */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "capture.h"
#include "closed.h"
#include "console.h"
#include "fabric.h"
#include "out.h"
#include "store.h"

/* the console has traces of its own to answer from */
static bool own_traces(struct hs_ctx *ctx)
{
	struct hs_tracer_stats ts;
	const char *src, *end;
	uint64_t stored, unstored;
	bool file;

	hs_tracer_get_stats(ctx->tracer, &ts);
	return ts.closed || ctx->following ||
	       hs_capture_info(ctx, &src, &file, &end, &stored, &unstored);
}

static void adopt(void *arg, const struct hs_trace *t, int64_t session, uint64_t no)
{
	struct hs_closed *c = arg;

	/* its id there is the number of traces handed so far */
	hs_tracer_adopt(c->tr, t);
	if ((c->nnames & (c->nnames - 1)) == 0) {
		c->names = realloc(c->names, (c->nnames ? 2 * c->nnames : 1) * sizeof(*c->names));
		if (!c->names)
			abort();
	}
	c->names[c->nnames++] = (struct hs_closed_name){ session, no };
}

int hs_closed_get(struct hs_ctx *ctx, const char *verb, struct hs_closed *c)
{
	struct hs_store *st;
	struct hs_fabric_stats fs;
	char err[512];

	memset(c, 0, sizeof(*c));
	if (!ctx->tracer || own_traces(ctx) || !hs_ctx_has_history(ctx)) {
		c->session = ctx->ring_session;
		c->n = hs_an_closed(ctx->tracer, &c->t);
		c->kept = ctx->loaded_kept;
		c->traced = ctx->loaded_traced;
		return 0;
	}
	if (hs_ctx_store_read(ctx, false, &st) < 0)
		return -1;
	hs_closed_kept(st, &c->kept, &c->traced);
	/* while an analyzer captures, the newest packets' later parts may
	 * still be on their way: those are left out */
	uint64_t window = ctx->set.trace_timeout_ns ? ctx->set.trace_timeout_ns : HS_NS_PER_SEC;
	uint64_t now = hs_wall_ns();
	struct hs_store_others p;
	struct hs_tracer_cfg cfg = { .max_open = 1, .ring = HS_TRACER_RING, .topo = ctx->topo };
	if (hs_fabric_others(st, NULL, now, &p, err, sizeof(err)) < 0)
		return out_err(ctx->out, "%s: cannot read history '%s': %s", verb,
			       hs_store_name(st), err);
	c->tr = hs_tracer_new(&cfg);
	if (hs_fabric_newest(st, ctx->topo, HS_TRACER_RING, window,
			     hs_fabric_whole_until(&p, window, now), adopt, c, &fs,
			     err, sizeof(err)) < 0) {
		hs_closed_free(c);
		return out_err(ctx->out, "%s: cannot read history '%s': %s", verb,
			       hs_store_name(st), err);
	}
	c->n = hs_an_closed(c->tr, &c->t);
	c->older = fs.older;
	return 0;
}

void hs_closed_kept(struct hs_store *st, uint64_t *kept, uint64_t *traced)
{
	char err[256];

	if (hs_store_kept(st, kept, traced, err, sizeof(err)) < 0 || *kept >= *traced)
		*kept = *traced = 0;
}

void hs_closed_warn(struct hs_ctx *ctx, const struct hs_closed *c, const char *verb,
		    const char *what)
{
	if (c->kept >= c->traced)
		return;
	out_warn(ctx->out, "%s: the history kept %" PRIu64 " of the %" PRIu64 " traces its "
		 "sessions traced (by default the dropped, looped, probe, filter-matched "
		 "and partial ones): the delivered packets are not all there, so %s "
		 "('set history all' before a capture keeps every trace)", verb, c->kept,
		 c->traced, what);
}

struct hs_closed_name hs_closed_name(const struct hs_closed *c, uint64_t id)
{
	if (!c->tr)
		return (struct hs_closed_name){ c->session, id };
	return id && id <= c->nnames ? c->names[id - 1] : (struct hs_closed_name){ 0, 0 };
}

const char *hs_closed_ref(const struct hs_closed *c, uint64_t id, char *buf, size_t len)
{
	struct hs_closed_name nm = hs_closed_name(c, id);

	return hs_fmt_trace_ref(nm.session, nm.no, buf, len);
}

int64_t hs_closed_named(const struct hs_closed *c, const struct hs_trace *t,
			struct hs_trace *out)
{
	struct hs_closed_name nm = hs_closed_name(c, t->id);

	memcpy(out, t, offsetof(struct hs_trace, hops) + t->nhops * sizeof(t->hops[0]));
	out->id = nm.no;
	return nm.session;
}

void hs_closed_free(struct hs_closed *c)
{
	free(c->t);
	free(c->names);
	if (c->tr)
		hs_tracer_free(c->tr);
	memset(c, 0, sizeof(*c));
}
