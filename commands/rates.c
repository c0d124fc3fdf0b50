/* rates.c - rates [limit N] [window D]: flow rates from sampled TCP sequence
 * numbers, and the load of the links they cross (Planck)
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "console.h"
#include "traces.h"
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

static void print_rates(struct hs_out *o, const struct hs_topo *topo, const struct hs_rates *r,
			const struct hs_rate_report *rep, uint64_t limit)
{
	char a[HS_ADDRSTRLEN], b[32];
	bool marked = false;	/* an n/a or ~ was printed */

	out_obj_open(o, NULL);
	out_dur(o, "window_ns", "rates over %s ", (int64_t)rep->window);
	out_time(o, "now_ns", "to %s: ", rep->now);
	out_uint(o, "flows_rated", "%" PRIu64 " flows with a rate, ", rep->nrated);
	out_text(o, "%zu with bytes only, ", rep->nflows - rep->nrated);
	out_uint(o, "flows_sampled", "of %" PRIu64 " sampled", r->nflows);
	out_uint(o, "evicted", r->evicted ? " (%" PRIu64 " evicted)" : NULL, r->evicted);
	out_double(o, "drops_per_sec", "; drops %.1f/s, ",
		   hs_rates_drops_per_sec(r, rep->now, rep->window));
	out_double(o, "retx_per_sec", "retransmissions %.1f/s\n",
		   hs_rates_retx_per_sec(r, rep->now, rep->window));
	if (rep->nflows)
		out_text(o, "\n%-46s %8s %8s %8s %6s\n", "flow", "bps", "bytes", "samples", "retx");
	out_arr_open(o, "flows");
	for (size_t i = 0; i < rep->nflows && i < limit; i++) {
		const struct hs_rate_flow *rf = &rep->flows[i];
		const struct hs_rflow *f = rf->f;
		char ep[2 * HS_ADDRSTRLEN + 32];
		bool rough = !rf->has_rate || hs_rate_rough(rf->samples);
		out_obj_open(o, NULL);
		out_str(o, "src", NULL, hs_addr_str(&f->key.src, a, sizeof(a)));
		out_str(o, "dst", NULL, hs_addr_str(&f->key.dst, a, sizeof(a)));
		out_uint(o, "sport", NULL, f->key.sport);
		out_uint(o, "dport", NULL, f->key.dport);
		out_text(o, "%-46s", hs_flowkey_str(&f->key, ep, sizeof(ep)));
		/* text: "~" before a rate on few samples, n/a without one */
		if (rf->has_rate)
			out_double(o, "bps", NULL, rf->bps);
		else
			out_null(o, "bps");
		out_text(o, " %8s", rf->has_rate ? fmt_rough(rf->bps, rf->samples, b, sizeof(b)) :
			 "n/a");
		out_double(o, "bytes", " %8.0f", rf->bytes);
		out_uint(o, "samples", " %8" PRIu64, rf->samples);
		out_bool(o, "rough", NULL, rough);
		out_uint(o, "samples_total", NULL, f->samples);
		out_uint(o, "retx", " %6" PRIu64 "\n", f->retx);
		out_arr_open(o, "path");
		for (int k = 0; k < f->npath && topo && f->path[k] / 2 < topo->nlinks; k++) {
			const struct hs_link *l = &topo->links[f->path[k] / 2];
			if (k == 0)
				out_str(o, NULL, NULL, swname(topo, f->path[k] % 2 ? l->b : l->a));
			out_str(o, NULL, NULL, swname(topo, f->path[k] % 2 ? l->a : l->b));
		}
		out_arr_close(o);
		out_obj_close(o);
		marked |= rough;
	}
	out_arr_close(o);
	out_uint(o, "flows_total", NULL, rep->nflows);
	hs_limit_note(o, "rates", "flows", rep->nflows < limit ? rep->nflows : (size_t)limit,
		      rep->nflows, false);
	if (rep->nlinks)
		out_text(o, "\n%-32s %8s %7s %8s %-8s %5s %7s\n", "link (direction)", "bps", "util",
			 "speed", "from", "flows", "samples");
	else if (rep->nflows && !topo)
		out_text(o, "\nno link load without a topology (topo load FILE)\n");
	out_arr_open(o, "links");
	for (size_t i = 0; i < rep->nlinks && i < limit; i++) {
		const struct hs_rate_link *l = &rep->links[i];
		const char *from = hs_link_speed_source(topo, l->link);
		char name[2 * HS_NAME_MAX + 4], u[16];
		bool rough = hs_rate_rough(l->samples);
		out_obj_open(o, NULL);
		out_str(o, "a", NULL, swname(topo, l->a));
		out_str(o, "b", NULL, swname(topo, l->b));
		snprintf(name, sizeof(name), "%s > %s", swname(topo, l->a), swname(topo, l->b));
		out_text(o, "%-32s", name);
		out_double(o, "bps", NULL, l->bps);
		out_text(o, " %8s", fmt_rough(l->bps, l->samples, b, sizeof(b)));
		out_bool(o, "rough", NULL, rough);
		if (l->has_util)
			out_double(o, "util", NULL, l->util);
		else
			out_null(o, "util");
		if (l->has_util)
			snprintf(u, sizeof(u), "%s%.1f%%", rough ? "~" : "", 100 * l->util);
		else
			snprintf(u, sizeof(u), "-");
		out_text(o, " %7s", u);
		if (from) {
			out_double(o, "speed", NULL, topo->links[l->link].speed);
			out_text(o, " %8s", hs_fmt_bps(topo->links[l->link].speed, b, sizeof(b)));
			out_str(o, "speed_source", " %-8s", from);
		} else {
			out_null(o, "speed");
			out_null(o, "speed_source");
			out_text(o, " %8s %-8s", "-", "-");
		}
		out_uint(o, "flows", " %5" PRIu64, l->flows);
		out_uint(o, "samples", " %7" PRIu64 "\n", l->samples);
		out_obj_close(o);
		marked |= rough;
	}
	out_arr_close(o);
	out_uint(o, "links_total", NULL, rep->nlinks);
	hs_limit_note(o, "rates", "links", rep->nlinks < limit ? rep->nlinks : (size_t)limit,
		      rep->nlinks, false);
	out_obj_close(o);
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
	struct hs_out *o = ctx->out;
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
	/* nothing to show yet: text says why, JSON gives its document of nothing */
	if (!p->rates->samples && !o->json)
		out_text(o, "no TCP samples yet: rates come from the sequence numbers of mirrored "
			 "TCP packets (capture start, mirror add ... flow ...)\n");
	else
		print_rates(o, ctx->topo, p->rates, &rep, limit);
	hs_rate_report_free(&rep);
	return HS_CMD_OK;
}
