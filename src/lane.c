/* lane.c - one pipeline's per-copy path: decode, the analyzer's filter, the
 * probe's signature, the frames queued on their way to the tracer. The
 * loop's capture (capture.c) runs one lane, each worker (workers.c) its own.
 */
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "probe.h"
#include "subs.h"
#include "workers.h"

#define HS_TRACER_OPEN	262144	/* open traces at once (pool memory is touched as used) */

#define HS_SOURCES_MAX	16383	/* mirror sources (address, session) */

/* a bounded table's size: max, or smaller for the tests that fill it
 * (HOPSCOPE_TEST_FLOWS_MAX, HOPSCOPE_TEST_SOURCES_MAX, HOPSCOPE_TEST_OPEN_MAX) */
size_t hs_table_max(const char *env_name, size_t max)
{
	const char *env = getenv(env_name);
	uint64_t n;

	if (env && hs_parse_uint(env, max, &n) == 0 && n > 0)
		return (size_t)n;
	return max;
}

struct hs_tracer_cfg hs_lane_tracer_cfg(struct hs_ctx *ctx, hs_trace_cb on_close, void *arg)
{
	struct hs_tracer_cfg cfg = {
		.timeout_ns = ctx->set.trace_timeout_ns ? ctx->set.trace_timeout_ns
							 : HS_NS_PER_SEC,
		.max_open = hs_table_max("HOPSCOPE_TEST_OPEN_MAX", HS_TRACER_OPEN),
		.ring = HS_TRACER_RING,
		.max_sources = hs_table_max("HOPSCOPE_TEST_SOURCES_MAX", HS_SOURCES_MAX),
		.topo = ctx->topo,
		.partial = ctx->set.policy == HS_POLICY_DEFAULT,	/* history_cond's */
		.on_close = on_close,
		.arg = arg,
	};
	return cfg;
}

struct hs_tracer *hs_lane_tracer_new(struct hs_ctx *ctx, hs_trace_cb on_close,
				     bool (*may_close)(void *arg), void *arg, unsigned n,
				     size_t ring)
{
	struct hs_tracer_cfg cfg = hs_lane_tracer_cfg(ctx, on_close, arg);

	cfg.may_close = may_close;
	/* the n workers hold between them the open traces one tracer holds,
	 * each its share: a trace is evicted at the age one tracer evicts it */
	cfg.max_open = cfg.max_open / n ? cfg.max_open / n : 1;

	cfg.ring = ring;	/* the loop's tracer keeps the closed traces (hs_tracer_adopt) */
	return hs_tracer_new(&cfg);
}

/* the analyzer's own probes, seen leaving on the mirror network, are not a hop */
static bool from_analyzer(const struct hs_ctx *ctx, const struct hs_pkt *p)
{
	const struct hs_addr *an;

	if (!ctx->topo || !(p->have & HS_HAVE_MIRROR))
		return false;
	an = &ctx->topo->analyzer;
	if (!an->af || an->af != p->mirror_src.af)
		return false;
	/* per frame: fixed-size compares, inlined */
	return an->af == 4 ? memcmp(an->a, p->mirror_src.a, 4) == 0
			   : memcmp(an->a, p->mirror_src.a, 16) == 0;
}

/* the oldest queued frame goes to the tracer */
static void pipe_pop(struct hs_lane *l)
{
	struct hs_pipe_ent *e = &l->pipe[l->pipe_head];

	if (e->add)
		hs_tracer_add_prepared(l->tracer, &e->pkt, e->flags, e->probe_id, &e->prep);
	hs_tracer_advance(l->tracer, e->now);
	l->pipe_head = (l->pipe_head + 1) & (HS_PIPE - 1);
	l->pipe_len--;
}

void hs_lane_flush(struct hs_lane *l)
{
	while (l->pipe_len)
		pipe_pop(l);
}

void hs_lane_time(struct hs_lane *l, uint64_t ts_ns, uint64_t frames)
{
	if (frames > l->frames)
		l->frames = frames;
	if (ts_ns <= l->last_ts)
		return;
	l->last_ts = ts_ns;
	/* the newest frame queued moves the tracer on to it once added, as
	 * the frames after it would have; with none queued, at once */
	if (l->pipe_len)
		l->pipe[(l->pipe_head + l->pipe_len - 1) & (HS_PIPE - 1)].now = ts_ns;
	else
		hs_tracer_advance(l->tracer, ts_ns);
}

uint64_t hs_lane_oldest(const struct hs_lane *l)
{
	uint64_t oldest = hs_tracer_oldest(l->tracer);

	for (unsigned i = 0; i < l->pipe_len; i++) {
		const struct hs_pipe_ent *e = &l->pipe[(l->pipe_head + i) & (HS_PIPE - 1)];
		if (e->add)
			return e->prep.frame < oldest ? e->prep.frame : oldest;
	}
	return l->frames + 1 < oldest ? l->frames + 1 : oldest;
}

void hs_lane_frame(struct hs_lane *l, int dlt, const uint8_t *data, uint32_t caplen,
		   uint32_t wirelen, uint64_t ts_ns)
{
	struct hs_ctx *ctx = l->ctx;
	struct hs_capture_stats *s = l->stats;
	bool matched = false;

	if (l->pipe_len == HS_PIPE)
		pipe_pop(l);
	struct hs_pipe_ent *e = &l->pipe[(l->pipe_head + l->pipe_len) & (HS_PIPE - 1)];
	struct hs_pkt *p = &e->pkt;

	e->add = false;
	if (ts_ns > l->last_ts)
		l->last_ts = ts_ns;

	/* another worker's copy: only the capture time moves. One of the
	 * common shape is known for another's from its bytes, not decoded */
	int drc;
	if (l->nshards > 1) {
		drc = hs_decode_share(dlt, data, caplen, wirelen, ts_ns, p, l->shard, l->nshards);
		if (drc > 0 || hs_shard(p, drc, l->nshards) != l->shard)
			goto queued;
	} else {
		drc = hs_decode(dlt, data, caplen, wirelen, ts_ns, p);
	}
	s->packets++;
	s->bytes += wirelen;
	if (!s->first_ts)
		s->first_ts = ts_ns;
	if (ts_ns > s->last_ts)
		s->last_ts = ts_ns;
	if (p->ctl) {	/* BGP, RoCEv2, PAUSE/PFC */
		if (l->on_pkt)
			l->on_pkt(l->arg, p, HS_PK_CONTROL);
		else
			hs_publish_packet(&ctx->subs, HS_PK_CONTROL, p);
	}
	if (drc < 0) {
		if (p->error == HS_DERR_NOT_IP)
			s->not_ip++;
		else
			s->decode_errors++;
		l->derr[p->error < HS_DERR__COUNT ? p->error : HS_DERR_NONE]++;
	} else if (from_analyzer(ctx, p) || !hs_filter_match(ctx->filters, p, &matched)) {
		s->filtered++;
	} else {
		uint64_t sent_ns;

		e->flags = matched ? HS_TF_MATCHED : 0;
		if (!hs_probe_sig_parse(p, &e->probe_id, &sent_ns))
			e->probe_id = 0;
		hs_tracer_prepare(l->tracer, p, &e->prep);
		e->prep.now = l->last_ts;	/* this frame's among them */
		e->add = true;
		if (!l->on_pkt)
			hs_publish_packet(&ctx->subs, HS_PK_KEPT, p);
		else if (l->kept)	/* a worker's: the subscribers are the loop's */
			l->on_pkt(l->arg, p, HS_PK_KEPT);
	}
queued:
	e->now = l->last_ts;
	if (l->on_pkt)		/* a worker's: the merge orders traces by frame */
		e->prep.frame = ++l->frames;
	l->pipe_len++;
	if (l->pipe_len > HS_PIPE_SLOT) {
		struct hs_pipe_ent *ahead =
			&l->pipe[(l->pipe_head + l->pipe_len - 1 - HS_PIPE_SLOT) & (HS_PIPE - 1)];
		if (ahead->add)
			hs_tracer_prefetch(l->tracer, &ahead->prep);
	}
}
