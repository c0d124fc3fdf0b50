/* rates.c - rates [limit N] [window D]: flow rates from sampled TCP sequence
 * numbers, and the load of the links they cross (Planck)
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "console.h"
#include "planck.h"

#define RATES_DEFAULT_LIMIT 20

static const char *swname(const struct hs_topo *topo, int sw)
{
	return topo && sw >= 0 && sw < topo->nsw ? topo->sw[sw].name : "?";
}

/* the rate of a flow or the load of a link: "~" before it when it rests on
 * few samples */
static const char *fmt_rough(double bps, uint32_t samples, char *buf, size_t len)
{
	char v[24];

	hs_fmt_bps(bps, v, sizeof(v));
	snprintf(buf, len, "%s%s", hs_rate_rough(samples) ? "~" : "", v);
	return buf;
}

static void print_json(struct hs_out *o, const struct hs_topo *topo, const struct hs_rates *r,
		       const struct hs_rate_report *rep, uint64_t limit)
{
	char a[HS_ADDRSTRLEN];

	out_obj_open(o, NULL);
	out_time(o, "now_ns", NULL, rep->now);
	out_uint(o, "window_ns", NULL, rep->window);
	out_uint(o, "flows_sampled", NULL, r->nflows);
	out_uint(o, "flows_rated", NULL, rep->nrated);
	out_uint(o, "evicted", NULL, r->evicted);
	out_double(o, "drops_per_sec", NULL, hs_rates_drops_per_sec(r, rep->now, rep->window));
	out_double(o, "retx_per_sec", NULL, hs_rates_retx_per_sec(r, rep->now, rep->window));
	out_arr_open(o, "flows");
	for (size_t i = 0; i < rep->nflows && i < limit; i++) {
		const struct hs_rate_flow *rf = &rep->flows[i];
		const struct hs_rflow *f = rf->f;
		out_obj_open(o, NULL);
		out_str(o, "src", NULL, hs_addr_str(&f->key.src, a, sizeof(a)));
		out_str(o, "dst", NULL, hs_addr_str(&f->key.dst, a, sizeof(a)));
		out_uint(o, "sport", NULL, f->key.sport);
		out_uint(o, "dport", NULL, f->key.dport);
		if (rf->has_rate)
			out_double(o, "bps", NULL, rf->bps);
		else
			out_null(o, "bps");
		out_double(o, "bytes", NULL, rf->bytes);
		out_uint(o, "samples", NULL, rf->samples);
		out_bool(o, "rough", NULL, !rf->has_rate || hs_rate_rough(rf->samples));
		out_uint(o, "samples_total", NULL, f->samples);
		out_uint(o, "retx", NULL, f->retx);
		out_arr_open(o, "path");
		for (int k = 0; k < f->npath && topo && f->path[k] / 2 < topo->nlinks; k++) {
			const struct hs_link *l = &topo->links[f->path[k] / 2];
			if (k == 0)
				out_str(o, NULL, NULL, swname(topo, f->path[k] % 2 ? l->b : l->a));
			out_str(o, NULL, NULL, swname(topo, f->path[k] % 2 ? l->a : l->b));
		}
		out_arr_close(o);
		out_obj_close(o);
	}
	out_arr_close(o);
	out_arr_open(o, "links");
	for (size_t i = 0; i < rep->nlinks && i < limit; i++) {
		const struct hs_rate_link *l = &rep->links[i];
		const char *from = hs_link_speed_source(topo, l->link);
		out_obj_open(o, NULL);
		out_str(o, "a", NULL, swname(topo, l->a));
		out_str(o, "b", NULL, swname(topo, l->b));
		out_double(o, "bps", NULL, l->bps);
		out_uint(o, "samples", NULL, l->samples);
		out_bool(o, "rough", NULL, hs_rate_rough(l->samples));
		if (l->has_util)
			out_double(o, "util", NULL, l->util);
		else
			out_null(o, "util");
		if (from) {
			out_double(o, "speed", NULL, topo->links[l->link].speed);
			out_str(o, "speed_source", NULL, from);
		} else {
			out_null(o, "speed");
			out_null(o, "speed_source");
		}
		out_uint(o, "flows", NULL, l->flows);
		out_obj_close(o);
	}
	out_arr_close(o);
	out_obj_close(o);
}

static void print_text(struct hs_out *o, const struct hs_topo *topo, const struct hs_rates *r,
		       const struct hs_rate_report *rep, uint64_t limit)
{
	char ts[HS_TIMESTRLEN], w[32], b[32];
	bool marked = false;	/* an n/a or ~ was printed */

	out_text(o, "rates over %s to %s: %zu flows with a rate, %zu with bytes only, of %zu "
		 "sampled", hs_fmt_duration(rep->window, w, sizeof(w)),
		 hs_fmt_time(rep->now, ts, sizeof(ts)), rep->nrated, rep->nflows - rep->nrated,
		 r->nflows);
	if (r->evicted)
		out_text(o, " (%" PRIu64 " evicted)", r->evicted);
	out_text(o, "; drops %.1f/s, retransmissions %.1f/s\n",
		 hs_rates_drops_per_sec(r, rep->now, rep->window),
		 hs_rates_retx_per_sec(r, rep->now, rep->window));
	if (rep->nflows) {
		out_text(o, "\n%-46s %8s %8s %8s %6s\n", "flow", "bps", "bytes", "samples", "retx");
		for (size_t i = 0; i < rep->nflows && i < limit; i++) {
			const struct hs_rate_flow *rf = &rep->flows[i];
			char ep[2 * HS_ADDRSTRLEN + 32], by[32];
			snprintf(by, sizeof(by), "%.0f", rf->bytes);
			marked |= !rf->has_rate || hs_rate_rough(rf->samples);
			const char *bps = "n/a";
			if (rf->has_rate)
				bps = fmt_rough(rf->bps, rf->samples, b, sizeof(b));
			out_text(o, "%-46s %8s %8s %8" PRIu32 " %6" PRIu64 "\n",
				 hs_flowkey_str(&rf->f->key, ep, sizeof(ep)), bps, by, rf->samples,
				 rf->f->retx);
		}
		if (rep->nflows > limit)
			out_text(o, "(%zu more flows; rates limit N)\n", rep->nflows - (size_t)limit);
	}
	if (rep->nlinks) {
		out_text(o, "\n%-32s %8s %7s %8s %-8s %5s %7s\n", "link (direction)", "bps", "util",
			 "speed", "from", "flows", "samples");
		for (size_t i = 0; i < rep->nlinks && i < limit; i++) {
			const struct hs_rate_link *l = &rep->links[i];
			const char *from = hs_link_speed_source(topo, l->link);
			char name[2 * HS_NAME_MAX + 4], u[16], sp[32] = "-";
			snprintf(name, sizeof(name), "%s > %s", swname(topo, l->a), swname(topo, l->b));
			bool rough = hs_rate_rough(l->samples);
			if (l->has_util)
				snprintf(u, sizeof(u), "%s%.1f%%", rough ? "~" : "", 100 * l->util);
			else
				snprintf(u, sizeof(u), "-");
			if (from)
				hs_fmt_bps(topo->links[l->link].speed, sp, sizeof(sp));
			out_text(o, "%-32s %8s %7s %8s %-8s %5" PRIu32 " %7" PRIu32 "\n", name,
				 fmt_rough(l->bps, l->samples, b, sizeof(b)), u, sp,
				 from ? from : "-", l->flows, l->samples);
			marked |= rough;
		}
		if (rep->nlinks > limit)
			out_text(o, "(%zu more links; rates limit N)\n", rep->nlinks - (size_t)limit);
	} else if (rep->nflows && !topo) {
		out_text(o, "\nno link load without a topology (topo load FILE)\n");
	}
	if (marked)
		out_text(o, "\nn/a: fewer than %d samples of the flow in the window, or spread "
			 "over less than a tenth of it; ~: fewer than %d samples\n",
			 HS_RATE_MIN_SAMPLES, HS_RATE_FEW_SAMPLES);
	if (rep->nlinks && rep->nrated < rep->nflows)
		out_text(o, "link load: the bytes between samples inside the window; a flow "
			 "mirrored only at SYN and FIN counts for less than it sent (mirror add "
			 "flow ... mirrors every packet of a flow)\n");
}

int cmd_rates(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_out *o = &ctx->out;
	uint64_t limit = RATES_DEFAULT_LIMIT, window = HS_RATE_DEFAULT_WINDOW;
	char a[32], b[32];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "limit") == 0 && i + 1 < argc) {
			if (hs_parse_uint(argv[++i], 100000, &limit) < 0 || limit == 0)
				return out_err(o, "rates: bad limit '%s' (expected 1 to 100000)",
					       argv[i]);
		} else if (strcmp(argv[i], "window") == 0 && i + 1 < argc) {
			if (hs_parse_duration(argv[++i], &window) < 0 || window < HS_RATE_MIN_WINDOW ||
			    window > HS_RATE_MAX_WINDOW)
				return out_err(o, "rates: bad window '%s' (expected a duration from %s "
					       "to %s)", argv[i],
					       hs_fmt_duration(HS_RATE_MIN_WINDOW, a, sizeof(a)),
					       hs_fmt_duration(HS_RATE_MAX_WINDOW, b, sizeof(b)));
		} else {
			return out_err(o, "rates: unexpected '%s' (limit N, window D)", argv[i]);
		}
	}
	struct hs_planck *p = hs_planck_get(ctx);
	struct hs_rate_report rep;
	hs_rates_report(p->rates, window, &rep);
	if (o->json)
		print_json(o, ctx->topo, p->rates, &rep, limit);
	else if (!p->rates->samples)
		out_text(o, "no TCP samples yet: rates come from the sequence numbers of mirrored "
			 "TCP packets (capture start, mirror add ... flow ...)\n");
	else
		print_text(o, ctx->topo, p->rates, &rep, limit);
	hs_rate_report_free(&rep);
	return HS_CMD_OK;
}
