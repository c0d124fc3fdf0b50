/* latency.c - latency [limit N]: per hop and per link, percentiles and outliers */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "cmd.h"
#include "console.h"

#define LATENCY_DEFAULT_LIMIT 50

static const char *dur(int64_t d, char *buf, size_t len)
{
	if (d < 0) {
		buf[0] = '-';
		hs_fmt_duration((uint64_t)-d, buf + 1, len - 1);
	} else {
		hs_fmt_duration((uint64_t)d, buf, len);
	}
	return buf;
}

static void stat_json(struct hs_out *o, const struct hs_lat_stat *s)
{
	out_uint(o, "count", NULL, s->count);
	out_int(o, "p50_ns", NULL, s->p50);
	out_int(o, "p90_ns", NULL, s->p90);
	out_int(o, "p99_ns", NULL, s->p99);
	out_int(o, "max_ns", NULL, s->max);
}

static void stat_text(struct hs_out *o, const char *name, const struct hs_lat_stat *s)
{
	char a[32], b[32], c[32], d[32];

	out_text(o, "%-24s %7" PRIu32 " %10s %10s %10s %10s\n", name, s->count,
		 dur(s->p50, a, sizeof(a)), dur(s->p90, b, sizeof(b)), dur(s->p99, c, sizeof(c)),
		 dur(s->max, d, sizeof(d)));
}

int cmd_latency(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_out *o = &ctx->out;
	uint64_t limit = LATENCY_DEFAULT_LIMIT;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "limit") == 0 && i + 1 < argc) {
			if (hs_parse_uint(argv[++i], 100000, &limit) < 0 || limit == 0)
				return out_err(o, "bad limit '%s'", argv[i]);
		} else {
			return out_err(o, "latency: unexpected '%s' (limit N)", argv[i]);
		}
	}

	const struct hs_trace **all;
	size_t n = hs_an_closed(ctx->tracer, &all);
	struct hs_latency l;
	hs_an_latency(all, n, &l);
	char x[64], y[64], name[2 * 64 + 4], d1[32], d2[32], d3[32], ref[48];

	out_obj_open(o, NULL);
	out_arr_open(o, "hops");
	if (!o->json) {
		out_text(o, "per hop: from the switch's copy to the next switch's (switch clocks "
			 "when both have one)\n");
		out_text(o, "%-24s %7s %10s %10s %10s %10s\n", "switch", "count", "p50", "p90",
			 "p99", "max");
	}
	for (size_t i = 0; i < l.nhops && i < limit; i++) {
		const struct hs_lat_stat *s = &l.hops[i];
		hs_hop_name(ctx->topo, &s->a, x, sizeof(x));
		if (o->json) {
			out_obj_open(o, NULL);
			out_str(o, "kind", NULL, "hop");
			out_str(o, "switch", NULL, x);
			stat_json(o, s);
			out_obj_close(o);
		} else {
			stat_text(o, x, s);
		}
	}
	out_arr_close(o);
	out_arr_open(o, "links");
	if (!o->json)
		out_text(o, "\nper link\n%-24s %7s %10s %10s %10s %10s\n", "link", "count", "p50",
			 "p90", "p99", "max");
	for (size_t i = 0; i < l.nlinks && i < limit; i++) {
		const struct hs_lat_stat *s = &l.links[i];
		hs_hop_name(ctx->topo, &s->a, x, sizeof(x));
		hs_hop_name(ctx->topo, &s->b, y, sizeof(y));
		if (o->json) {
			out_obj_open(o, NULL);
			out_str(o, "kind", NULL, "link");
			out_str(o, "a", NULL, x);
			out_str(o, "b", NULL, y);
			stat_json(o, s);
			if (s->fence)
				out_int(o, "fence_ns", NULL, s->fence);
			else
				out_null(o, "fence_ns");
			out_obj_close(o);
		} else {
			snprintf(name, sizeof(name), "%s > %s", x, y);
			stat_text(o, name, s);
		}
	}
	if (!o->json && l.noutliers)
		out_text(o, "\noutliers: %zu samples above their link's fence, the larger of p75 + "
			 "3 x (p75 - p25) and 2 x p50 (links of %d samples or more)\n"
			 "%-8s %-24s %10s %10s %10s\n", l.outliers_total, HS_LAT_MIN_SAMPLES, "trace",
			 "link", "latency", "link p50", "fence");
	else if (!o->json && l.nlinks)
		out_text(o, "\nno outliers: no sample above its link's fence, the larger of p75 + "
			 "3 x (p75 - p25) and 2 x p50 (links of %d samples or more)\n",
			 HS_LAT_MIN_SAMPLES);
	out_arr_close(o);
	out_uint(o, "outliers_total", NULL, l.outliers_total);
	out_arr_open(o, "outliers");
	for (size_t i = 0; i < l.noutliers; i++) {
		const struct hs_lat_outlier *s = &l.outliers[i];
		hs_hop_name(ctx->topo, &s->a, x, sizeof(x));
		hs_hop_name(ctx->topo, &s->b, y, sizeof(y));
		if (o->json) {
			out_obj_open(o, NULL);
			out_str(o, "kind", NULL, "outlier");
			out_str(o, "trace", NULL,
				hs_fmt_trace_ref(ctx->ring_session, s->trace_id, d1, sizeof(d1)));
			out_str(o, "a", NULL, x);
			out_str(o, "b", NULL, y);
			out_int(o, "latency_ns", NULL, s->ns);
			out_int(o, "link_p50_ns", NULL, s->link_p50);
			out_int(o, "link_fence_ns", NULL, s->link_fence);
			out_obj_close(o);
		} else {
			snprintf(name, sizeof(name), "%s > %s", x, y);
			out_text(o, "%-8s %-24s %10s %10s %10s\n",
				 hs_fmt_trace_ref(ctx->ring_session, s->trace_id, ref, sizeof(ref)), name,
				 dur(s->ns, d1, sizeof(d1)), dur(s->link_p50, d2, sizeof(d2)),
				 dur(s->link_fence, d3, sizeof(d3)));
		}
	}
	out_arr_close(o);
	out_obj_close(o);
	hs_latency_free(&l);
	free(all);
	return HS_CMD_OK;
}
