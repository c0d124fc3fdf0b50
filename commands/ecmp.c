/* ecmp.c - ecmp SWITCH [window D] [--threshold X]: how ECMP groups split flows */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "closed.h"
#include "cmd.h"
#include "console.h"

static const char *swname(const struct hs_topo *topo, int sw)
{
	return sw >= 0 && sw < topo->nsw ? topo->sw[sw].name : "?";
}

int cmd_ecmp(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_out *o = ctx->out;
	double threshold = HS_ECMP_DEFAULT_THRESHOLD;
	uint64_t window = 0;

	if (!ctx->topo)
		return out_err(o, "ecmp needs a topology to group next hops by destination "
			       "(topo load FILE)");
	int sw = hs_topo_switch_by_name(ctx->topo, argv[1]);
	if (sw < 0)
		return out_err(o, "ecmp: unknown switch '%s'", argv[1]);
	for (int i = 2; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			return out_err(o, "ecmp: '%s' needs a value", k);
		i++;
		if (strcmp(k, "window") == 0) {
			if (hs_parse_duration(v, &window) < 0 || window == 0)
				return out_err(o, "ecmp: bad window '%s' (e.g. 500ms, 10s, 2m)", v);
		} else if (strcmp(k, "--threshold") == 0) {
			if (hs_parse_share(v, &threshold) < 0)
				return out_err(o, "ecmp: bad threshold '%s' (e.g. 0.25 or 25%%)", v);
		} else {
			return out_err(o, "ecmp: unexpected '%s' (window D, --threshold X)", k);
		}
	}

	struct hs_closed cl;
	if (hs_closed_get(ctx, "ecmp", &cl) < 0)
		return HS_CMD_FAIL;
	const struct hs_trace **all = cl.t;
	size_t n = cl.n;
	uint64_t newest = 0, since = 0;
	for (size_t i = 0; i < n; i++)
		if (hs_an_trace_ts(all[i]) > newest)
			newest = hs_an_trace_ts(all[i]);
	if (window && newest > window)
		since = newest - window;
	struct hs_ecmp e;
	hs_an_ecmp(all, n, ctx->topo, sw, since, threshold, &e);

	out_obj_open(o, NULL);
	out_str(o, "switch", "ECMP groups at %s", swname(ctx->topo, sw));
	out_dur(o, "window_ns", window ? " over the last %s" : NULL, (int64_t)window);
	out_text(o, ": %zu; imbalance = max share / mean share - 1, ", e.n);
	out_double(o, "threshold", "flagged above %.2f\n", threshold);
	out_arr_open(o, "groups");
	for (size_t i = 0; i < e.n; i++) {
		const struct hs_ecmp_group *g = &e.groups[i];
		out_obj_open(o, NULL);
		out_str(o, "switch", "\n%s", swname(ctx->topo, g->sw));
		out_str(o, "toward", " toward %s: ", swname(ctx->topo, g->leaf));
		out_uint(o, "flows", "%" PRIu64 " flows, ", g->flows);
		out_uint(o, "traces", NULL, g->traces);
		out_uint(o, "bytes", "%" PRIu64 " bytes traced, ", g->bytes);
		out_double(o, "imbalance", "imbalance %.2f", g->imbalance);
		out_double(o, "byte_imbalance", " (bytes %.2f)", g->byte_imbalance);
		out_bool(o, "flagged", "  FLAGGED", g->flagged);
		out_nl(o);
		out_text(o, "    %-16s %6s %6s %10s %6s\n", "next hop", "flows", "share", "bytes",
			 "share");
		out_arr_open(o, "next_hops");
		for (int k = 0; k < g->n; k++) {
			out_obj_open(o, NULL);
			out_str(o, "switch", "    %-16s", swname(ctx->topo, g->nh[k].sw));
			out_uint(o, "flows", " %6" PRIu64, g->nh[k].flows);
			out_share(o, "flow_share", " %5.1f%%", g->nh[k].flow_share);
			out_uint(o, "bytes", " %10" PRIu64, g->nh[k].bytes);
			out_share(o, "byte_share", " %5.1f%%", g->nh[k].byte_share);
			out_obj_close(o);
			out_nl(o);
		}
		out_arr_close(o);
		out_obj_close(o);
	}
	out_arr_close(o);
	out_obj_close(o);
	hs_closed_warn(ctx, &cl, "ecmp", "these shares are those of the kept traces alone");
	hs_ecmp_free(&e);
	hs_closed_free(&cl);
	return HS_CMD_OK;
}
