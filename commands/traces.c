/* traces.c - traces [filters] | traces show ID: closed traces, newest first */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "closed.h"
#include "cmd.h"
#include "console.h"
#include "fabric.h"
#include "follow.h"
#include "traces.h"
#include "watch.h"

#define TRACES_DEFAULT_LIMIT 50

static int traces_show(struct hs_ctx *ctx, const char *idstr)
{
	struct hs_out *o = ctx->out;
	uint64_t id, session;
	char a[HS_ADDRSTRLEN], b[64], ref[48];

	if (hs_parse_trace_ref(idstr, &session, &id) < 0)
		return out_err(o, "traces show: bad trace id '%s' (N, or SESSION:N)", idstr);
	if (session && (int64_t)session != ctx->ring_session)
		return out_err(o, "trace %s is not in memory: the traces in memory are %s; "
			       "'history show %s' reads the history", idstr,
			       ctx->ring_session > 0 ? "the last capture's" : "of no history session",
			       idstr);
	const struct hs_trace *t = ctx->tracer ? hs_tracer_find(ctx->tracer, id) : NULL;
	if (!t)
		return out_err(o, "no trace %s (closed traces are kept while they are recent; "
			       "see 'history traces')", idstr);
	out_obj_open(o, NULL);
	out_uint(o, "id", NULL, t->id);
	if (ctx->ring_session > 0)
		out_int(o, "session", NULL, ctx->ring_session);
	out_str(o, "trace", "trace %s: ", hs_fmt_trace_ref(ctx->ring_session, t->id, ref,
							   sizeof(ref)));
	hs_trace_flow_fields(o, t, "%s");
	out_uint(o, "ip_id", ", ip id %" PRIu64, t->ip_id);
	out_uint(o, "len", ", %" PRIu64 " bytes", t->len);
	if (t->flags & HS_TF_PROBE)
		out_uint(o, "probe_id", NULL, t->probe_id);
	out_text(o, "%s", t->flags & HS_TF_PROBE ? ", probe" : "");
	if (t->flags & HS_TF_MATCHED)
		out_bool(o, "matched", ", matched", true);
	if (t->analyzer)
		out_str(o, "analyzer", ", stored by %s", hs_fabric_analyzers(t->analyzer));
	out_nl(o);
	bool sc = hs_trace_switch_clock(t);
	if (t->nhops)
		out_time(o, "ts_ns", NULL, t->hops[0].ts_ns);
	if (sc)
		out_time(o, "switch_ts_ns", NULL, hs_trace_time(t));
	out_text(o, "%-3s %-16s %-16s %-26s %10s %4s %4s %7s\n", "idx", "switch", "addr", "time",
		 "delta", "ttl", "tos", "session");
	out_arr_open(o, "hops");
	for (int i = 0; i < t->nhops; i++) {
		const struct hs_hop *h = &t->hops[i];
		out_obj_open(o, NULL);
		out_text(o, "%-3d ", i + 1);
		out_str(o, "switch", "%-16s ", hs_hop_name(ctx->topo, h, b, sizeof(b)));
		out_str(o, "addr", "%-16s ", hs_addr_str(&h->addr, a, sizeof(a)));
		/* the time shown is the switch's clock when the trace has one
		 * (hs_hop_time), beside the capture's */
		out_time(o, "ts_ns", sc ? NULL : "%-26s ", h->ts_ns);
		if (sc)
			out_time(o, "switch_ts_ns", "%-26s ", h->hw_ns);
		if (i > 0)
			out_dur(o, "latency_ns", hs_hop_trusted(t, (unsigned)i) ? "%10s " : NULL,
				hs_hop_delta(&t->hops[i - 1], h));
		if (!i || !hs_hop_trusted(t, (unsigned)i))
			out_text(o, "%10s ", !i ? "-" : "?");
		out_uint(o, "ttl", "%4" PRIu64 " ", h->ttl);
		out_uint(o, "tos", "0x%02" PRIx64 " ", h->tos);
		out_uint(o, "mirror_session", "%7" PRIu64, h->session);
		out_obj_close(o);
		out_nl(o);
	}
	out_arr_close(o);
	if (t->extra_hops)
		out_uint(o, "extra_hops", "(%" PRIu64 " more copies not kept)\n", t->extra_hops);
	out_str(o, "outcome", "outcome: %s", hs_outcome_name(t->outcome));
	hs_trace_dropped_at(o, ctx->topo, t);
	out_obj_close(o);
	out_nl(o);
	return HS_CMD_OK;
}

int cmd_traces(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_trace_query q = { .limit = TRACES_DEFAULT_LIMIT, .sw = -1 };
	struct hs_out *o = ctx->out;

	for (int i = 1; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			return out_err(o, "traces: '%s' needs a value", k);
		i++;
		if (strcmp(k, "show") == 0) {
			if (argc != 3)
				return out_err(o, "traces show takes only a trace id");
			return traces_show(ctx, v);
		}
		int rc = hs_trace_query_arg(ctx, "traces", &q, k, v);
		if (rc < 0)
			return HS_CMD_FAIL;
		if (rc == 0)
			return out_err(o, "traces: unknown filter '%s' (flow, switch, outcome, "
				       "since, limit, show)", k);
	}
	struct hs_closed cl;
	if (hs_closed_get(ctx, "traces", &cl) < 0)
		return HS_CMD_FAIL;
	const struct hs_trace **sel;
	size_t n = hs_trace_select(cl.tr ? cl.tr : ctx->tracer, ctx->topo, &q, &sel);
	q.scan_cut |= cl.older;
	if (n)
		out_text(o, "%-8s %-26s  %-44s %-9s  %s\n", "id", "time", "flow", "outcome",
			 "path  [hop latency]");
	out_list_open(o, "traces");
	for (size_t i = 0; i < n; i++) {
		/* named as shown and taken back: a stored one as the history has it */
		struct hs_trace t;
		int64_t session = hs_closed_named(&cl, sel[i], &t);
		hs_trace_row(o, ctx->topo, session, NULL, &t);
	}
	out_arr_close(o);
	out_uint(o, "total", NULL, q.matched);
	out_bool(o, "scan_cut", NULL, q.scan_cut);
	out_obj_close(o);
	hs_limit_note(o, "traces", "traces", n, q.matched, q.scan_cut);
	if (ctx->following) {
		struct hs_follow_status f;
		char note[256];

		hs_follow_get(ctx, &f);
		out_text(o, "(the fabric view: %s)\n", hs_follow_others(&f, note, sizeof(note)));
	}
	/* as 'history load' says it: the stored outcome is not the joined packet's */
	if (cl.tr && cl.n && !ctx->topo)
		out_warn(o, "no topology: the history's traces are judged without one, their "
			 "outcomes unknown (topo load FILE)");
	free(sel);
	hs_closed_free(&cl);
	return HS_CMD_OK;
}
