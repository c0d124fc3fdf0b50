/* latency.c - latency [limit N]: per hop and per link, percentiles and outliers */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "closed.h"
#include "cmd.h"
#include "console.h"
#include "traces.h"

#define LATENCY_DEFAULT_LIMIT 50

/* count p50 p90 p99 max: the columns of every row, after its name */
static void stat_row(struct hs_out *o, const struct hs_lat_stat *s)
{
	out_uint(o, "count", " %7" PRIu64, s->count);
	out_dur(o, "p50_ns", " %10s", s->p50);
	out_dur(o, "p90_ns", " %10s", s->p90);
	out_dur(o, "p99_ns", " %10s", s->p99);
	out_dur(o, "max_ns", " %10s", s->max);
}

int cmd_latency(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_out *o = ctx->out;
	uint64_t limit = LATENCY_DEFAULT_LIMIT;

	if (hs_limit_args(o, "latency", argc, argv, 100000, &limit) < 0)
		return HS_CMD_FAIL;

	struct hs_closed cl;
	if (hs_closed_get(ctx, "latency", &cl) < 0)
		return HS_CMD_FAIL;
	const struct hs_trace **all = cl.t;
	size_t n = cl.n;
	struct hs_latency l;
	hs_an_latency(all, n, &l);
	char x[64], y[64], name[2 * 64 + 4], ref[48];

	out_obj_open(o, NULL);
	out_arr_open(o, "hops");
	out_text(o, "per hop: from the switch's copy to the next switch's (switch clocks "
		 "when both have one)\n");
	out_text(o, "%-24s %7s %10s %10s %10s %10s\n", "switch", "count", "p50", "p90", "p99",
		 "max");
	for (size_t i = 0; i < l.nhops && i < limit; i++) {
		const struct hs_lat_stat *s = &l.hops[i];
		out_obj_open(o, NULL);
		out_str(o, "kind", NULL, "hop");
		out_str(o, "switch", "%-24s", hs_hop_name(ctx->topo, &s->a, x, sizeof(x)));
		stat_row(o, s);
		out_obj_close(o);
		out_nl(o);
	}
	out_arr_close(o);
	out_arr_open(o, "links");
	out_text(o, "\nper link\n%-24s %7s %10s %10s %10s %10s\n", "link", "count", "p50", "p90",
		 "p99", "max");
	for (size_t i = 0; i < l.nlinks && i < limit; i++) {
		const struct hs_lat_stat *s = &l.links[i];
		out_obj_open(o, NULL);
		out_str(o, "kind", NULL, "link");
		out_str(o, "a", NULL, hs_hop_name(ctx->topo, &s->a, x, sizeof(x)));
		out_str(o, "b", NULL, hs_hop_name(ctx->topo, &s->b, y, sizeof(y)));
		snprintf(name, sizeof(name), "%s > %s", x, y);
		out_text(o, "%-24s", name);
		stat_row(o, s);
		if (s->fence)
			out_int(o, "fence_ns", NULL, s->fence);
		else
			out_null(o, "fence_ns");
		out_obj_close(o);
		out_nl(o);
	}
	if (l.noutliers)
		out_text(o, "\noutliers: %zu samples above their link's fence, the larger of p75 + "
			 "3 x (p75 - p25) and 2 x p50 (links of %d samples or more)\n"
			 "%-8s %-24s %10s %10s %10s\n", l.outliers_total, HS_LAT_MIN_SAMPLES, "trace",
			 "link", "latency", "link p50", "fence");
	else if (l.nlinks)
		out_text(o, "\nno outliers: no sample above its link's fence, the larger of p75 + "
			 "3 x (p75 - p25) and 2 x p50 (links of %d samples or more)\n",
			 HS_LAT_MIN_SAMPLES);
	out_arr_close(o);
	out_uint(o, "outliers_total", NULL, l.outliers_total);
	out_arr_open(o, "outliers");
	for (size_t i = 0; i < l.noutliers; i++) {
		const struct hs_lat_outlier *s = &l.outliers[i];
		out_obj_open(o, NULL);
		out_str(o, "kind", NULL, "outlier");
		out_str(o, "trace", "%-8s ",
			hs_closed_ref(&cl, s->trace_id, ref, sizeof(ref)));
		out_str(o, "a", NULL, hs_hop_name(ctx->topo, &s->a, x, sizeof(x)));
		out_str(o, "b", NULL, hs_hop_name(ctx->topo, &s->b, y, sizeof(y)));
		snprintf(name, sizeof(name), "%s > %s", x, y);
		out_text(o, "%-24s", name);
		out_dur(o, "latency_ns", " %10s", s->ns);
		out_dur(o, "link_p50_ns", " %10s", s->link_p50);
		out_dur(o, "link_fence_ns", " %10s", s->link_fence);
		out_obj_close(o);
		out_nl(o);
	}
	out_arr_close(o);
	out_obj_close(o);
	hs_closed_warn(ctx, &cl, "latency", "these figures are those of the kept traces alone");
	hs_latency_free(&l);
	hs_closed_free(&cl);
	return HS_CMD_OK;
}
