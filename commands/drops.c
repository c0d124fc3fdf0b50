/* drops.c - drops [limit N]: dropped traces by the directed link after the last hop seen */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "cmd.h"
#include "console.h"

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
	struct hs_out *o = &ctx->out;
	uint64_t limit = DROPS_DEFAULT_LIMIT;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "limit") == 0 && i + 1 < argc) {
			if (hs_parse_uint(argv[++i], 100000, &limit) < 0 || limit == 0)
				return out_err(o, "bad limit '%s'", argv[i]);
		} else {
			return out_err(o, "drops: unexpected '%s' (limit N)", argv[i]);
		}
	}
	if (!ctx->topo)
		return out_err(o, "drops needs a topology to know the expected next hops "
			       "(topo load FILE)");

	const struct hs_trace **all;
	size_t n = hs_an_closed(ctx->tracer, &all);
	struct hs_drops d;
	hs_an_drops(all, n, ctx->topo, &d);

	out_obj_open(o, NULL);
	out_uint(o, "dropped", NULL, d.dropped);
	out_uint(o, "traces", NULL, n);
	out_uint(o, "window_ns", NULL, d.window_end - d.window_start);
	out_uint(o, "certain", NULL, d.certain);
	out_uint(o, "ambiguous", NULL, d.ambiguous);
	out_uint(o, "unattributed", NULL, d.unattributed);
	out_uint(o, "expired", NULL, d.expired);
	out_arr_open(o, "links");
	if (!o->json) {
		char w[32];
		out_text(o, "%" PRIu32 " dropped of %zu traces over %s: %" PRIu32 " on a known link, %"
			 PRIu32 " ambiguous (the flow was never seen leaving the last switch)",
			 d.dropped, n, hs_fmt_duration(d.window_end - d.window_start, w, sizeof(w)),
			 d.certain, d.ambiguous);
		if (d.unattributed)
			out_text(o, ", %" PRIu32 " with no known last switch or next hop",
				 d.unattributed);
		if (d.expired)
			out_text(o, "; %" PRIu32 " more ran out of TTL at their last switch "
				 "(traceroute packets): not drops", d.expired);
		out_text(o, "\n");
		if (d.n)
			out_text(o, "%-24s %6s %7s %6s %5s %5s %8s  %-10s %s\n", "link (last > next)",
				 "drops", "crossed", "loss", "ambig", "flows", "crossing", "when",
				 "which flows");
	}
	for (size_t i = 0; i < d.n && i < limit; i++) {
		const struct hs_drop_link *l = &d.links[i];
		char lk[2 * HS_NAME_MAX + 4], pr[256], loss[16];

		probe_line(ctx->topo, l, pr, sizeof(pr));
		/* a link with only ambiguous drops: no claim on when or whom */
		const char *when = !l->drops ? "ambiguous" : l->persistent ? "persistent" :
				   "transient";
		const char *scope = !l->drops ? "-" : l->flow_specific ? "5-tuple" : "all-flows";
		if (o->json) {
			out_obj_open(o, NULL);
			out_str(o, "a", NULL, swname(ctx->topo, l->a));
			out_str(o, "b", NULL, swname(ctx->topo, l->b));
			out_uint(o, "drops", NULL, l->drops);
			out_uint(o, "crossed", NULL, l->crossed);
			out_double(o, "loss", NULL, hs_drop_loss(l));
			out_uint(o, "ambiguous", NULL, l->ambiguous);
			out_uint(o, "flows", NULL, l->flows);
			out_uint(o, "flows_crossing", NULL, l->flows_crossing);
			out_time(o, "first_ns", NULL, l->first_ns);
			out_time(o, "last_ns", NULL, l->last_ns);
			out_str(o, "when", NULL, when);
			out_str(o, "scope", NULL, scope);
			out_arr_open(o, "also_possible");
			for (int k = 0; k < l->nalt; k++)
				out_str(o, NULL, NULL, swname(ctx->topo, l->alt[k]));
			out_arr_close(o);
			out_str(o, "probe", NULL, pr);
			out_obj_close(o);
			continue;
		}
		snprintf(lk, sizeof(lk), "%s > %s", swname(ctx->topo, l->a), swname(ctx->topo, l->b));
		if (l->drops)
			snprintf(loss, sizeof(loss), "%.1f%%", 100 * hs_drop_loss(l));
		else
			snprintf(loss, sizeof(loss), "-");
		out_text(o, "%-24s %6" PRIu32 " %7" PRIu32 " %6s %5" PRIu32 " %5" PRIu32 " %8" PRIu32
			 "  %-10s %s\n", lk, l->drops, l->crossed, loss, l->ambiguous, l->flows,
			 l->flows_crossing, when, scope);
		if (l->nalt) {
			out_text(o, "    %" PRIu32 " ambiguous: could as well be ", l->ambiguous);
			for (int k = 0; k < l->nalt; k++)
				out_text(o, "%s%s > %s", k ? ", " : "", swname(ctx->topo, l->a),
					 swname(ctx->topo, l->alt[k]));
			out_text(o, "\n");
		}
		out_text(o, "    confirm: %s\n", pr);
	}
	out_arr_close(o);
	out_uint(o, "total", NULL, d.n);
	out_obj_close(o);
	if (!o->json && d.n > limit)
		out_text(o, "(%zu more links; drops limit N)\n", d.n - (size_t)limit);
	hs_drops_free(&d);
	free(all);
	return HS_CMD_OK;
}
