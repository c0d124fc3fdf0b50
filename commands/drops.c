/* drops.c - drops [limit N]: dropped traces by the directed link after the last hop seen */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "closed.h"
#include "cmd.h"
#include "console.h"
#include "traces.h"

#define DROPS_DEFAULT_LIMIT 20
#define DROPS_PROBE_COUNT 20

static const char *swname(const struct hs_topo *topo, int sw)
{
	return sw >= 0 && sw < topo->nsw ? topo->sw[sw].name : "?";
}

/* the probe that would confirm the drop: the flow's own 5-tuple steered
 * over the last switch and the one expected next */
static void probe_line(const struct hs_topo *topo, const struct hs_drop_link *l, char *buf,
		       size_t len)
{
	char ep[2 * HS_ADDRSTRLEN + 32], p[8];
	const struct hs_flowkey *k = &l->flow;

	if (k->proto == 6 || k->proto == 17)
		snprintf(buf, len, "probe %s %s via %s,%s count %d",
			 hs_proto_name(k->proto, p, sizeof(p)), hs_flowkey_str(k, ep, sizeof(ep)),
			 swname(topo, l->a), swname(topo, l->b), DROPS_PROBE_COUNT);
	else
		snprintf(buf, len, "probe link %s %s count %d", swname(topo, l->a),
			 swname(topo, l->b), DROPS_PROBE_COUNT);
}

int cmd_drops(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_out *o = ctx->out;
	uint64_t limit = DROPS_DEFAULT_LIMIT;

	if (hs_limit_args(o, "drops", argc, argv, 100000, &limit) < 0)
		return HS_CMD_FAIL;
	if (!ctx->topo)
		return out_err(o, "drops needs a topology to know the expected next hops "
			       "(topo load FILE)");

	struct hs_closed cl;
	if (hs_closed_get(ctx, "drops", &cl) < 0)
		return HS_CMD_FAIL;
	const struct hs_trace **all = cl.t;
	size_t n = cl.n;
	struct hs_drops d;
	bool partial = cl.kept < cl.traced;
	hs_an_drops(all, n, ctx->topo, &d);

	out_obj_open(o, NULL);
	out_uint(o, "dropped", "%" PRIu64 " dropped of ", d.dropped);
	out_uint(o, "traces", "%" PRIu64 " traces over ", n);
	out_dur(o, "window_ns", "%s: ", (int64_t)(d.window_end - d.window_start));
	out_uint(o, "certain", "%" PRIu64 " on a known link, ", d.certain);
	out_uint(o, "ambiguous", "%" PRIu64 " ambiguous (the flow was never seen leaving the "
		 "last switch)", d.ambiguous);
	out_uint(o, "unattributed", d.unattributed ? ", %" PRIu64 " with no known last switch "
		 "or next hop" : NULL, d.unattributed);
	out_uint(o, "expired", d.expired ? "; %" PRIu64 " more ran out of TTL at their last "
		 "switch (as a traceroute's do): not drops" : NULL, d.expired);
	out_nl(o);
	if (d.n)
		out_text(o, "%-24s %6s %7s %6s %5s %5s %8s  %-10s %s\n", "link (last > next)",
			 "drops", "crossed", "loss", "ambig", "flows", "crossing", "when",
			 "which flows");
	out_arr_open(o, "links");
	for (size_t i = 0; i < d.n && i < limit; i++) {
		const struct hs_drop_link *l = &d.links[i];
		const char *a = swname(ctx->topo, l->a), *b = swname(ctx->topo, l->b);
		char lk[2 * HS_NAME_MAX + 4], pr[256];

		probe_line(ctx->topo, l, pr, sizeof(pr));
		/* a link with only ambiguous drops: no claim on when or whom */
		const char *when = !l->drops ? "ambiguous" : l->persistent ? "persistent" :
				   "transient";
		const char *scope = !l->drops ? "-" : l->flow_specific ? "5-tuple" : "all-flows";
		out_obj_open(o, NULL);
		out_str(o, "a", NULL, a);
		out_str(o, "b", NULL, b);
		snprintf(lk, sizeof(lk), "%s > %s", a, b);
		out_text(o, "%-24s", lk);
		out_uint(o, "drops", " %6" PRIu64, l->drops);
		out_uint(o, "crossed", " %7" PRIu64, l->crossed);
		/* of a history that kept fewer traces than it traced, the
		 * crossings are not all there: no loss to claim */
		if (partial)
			out_null(o, "loss");
		else
			out_share(o, "loss", l->drops ? " %5.1f%%" : NULL, hs_drop_loss(l));
		if (!l->drops || partial)
			out_text(o, " %6s", "-");
		out_uint(o, "ambiguous", " %5" PRIu64, l->ambiguous);
		out_uint(o, "flows", " %5" PRIu64, l->flows);
		out_uint(o, "flows_crossing", " %8" PRIu64, l->flows_crossing);
		out_time(o, "first_ns", NULL, l->first_ns);
		out_time(o, "last_ns", NULL, l->last_ns);
		out_str(o, "when", "  %-10s", when);
		out_str(o, "scope", " %s\n", scope);
		if (l->nalt)
			out_text(o, "    %" PRIu32 " ambiguous: could as well be ", l->ambiguous);
		out_arr_open(o, "also_possible");
		for (int k = 0; k < l->nalt; k++) {
			out_text(o, "%s%s > ", k ? ", " : "", a);
			out_str(o, NULL, "%s", swname(ctx->topo, l->alt[k]));
		}
		out_arr_close(o);
		if (l->nalt)
			out_text(o, "\n");
		out_str(o, "probe", "    confirm: %s\n", pr);
		out_obj_close(o);
	}
	out_arr_close(o);
	out_uint(o, "total", NULL, d.n);
	out_obj_close(o);
	hs_limit_note(o, "drops", "links", d.n < limit ? d.n : (size_t)limit, d.n, false);
	hs_closed_warn(ctx, &cl, "drops", "a link's crossings are not either and its loss "
		       "is not shown");
	hs_drops_free(&d);
	hs_closed_free(&cl);
	return HS_CMD_OK;
}
