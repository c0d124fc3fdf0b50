/* traceroute.c - traceroute: the path of one flow, from packets that reuse
 * its 5-tuple with TTL 1, 2, ... (007's path discovery); or, the mtr way,
 * rounds of them toward a host with per-hop loss and latency. The engine
 * sends and matches them (probe.h); this file prints what they found.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "cmd.h"
#include "console.h"
#include "probe.h"
#include "probecmd.h"

/* the flow's own traces, newest first: the switches of the newest one with hops */
static int flow_path(struct hs_ctx *ctx, const struct hs_probe_spec *s, int *path, int max,
		     unsigned *ntraces)
{
	const struct hs_trace *recent[512];
	size_t n = ctx->tracer ? hs_tracer_recent(ctx->tracer, recent, HS_ARRAY_SIZE(recent)) : 0;
	int np = -1;

	*ntraces = 0;
	for (size_t i = 0; i < n; i++) {
		const struct hs_trace *t = recent[i];
		if ((t->flags & HS_TF_PROBE) || t->key.proto != s->proto ||
		    t->key.sport != s->sport || t->key.dport != s->dport ||
		    !hs_addr_eq(&t->key.src, &s->src) || !hs_addr_eq(&t->key.dst, &s->dst))
			continue;
		(*ntraces)++;
		if (np < 0 && t->nhops > 0) {
			np = 0;
			for (int k = 0; k < t->nhops && np < max; k++)
				if (np == 0 || path[np - 1] != t->hops[k].sw)
					path[np++] = t->hops[k].sw;
		}
	}
	return np;
}

static void print_traceroute(struct hs_probe_view *v, const struct hs_probe_run *r)
{
	struct hs_ctx *ctx = v->ctx;
	struct hs_out *o = &ctx->out;
	const struct hs_topo *topo = ctx->topo;
	char nb[HS_ADDRSTRLEN], a1[HS_ADDRSTRLEN], a2[HS_ADDRSTRLEN], db[32];
	int path[HS_TRACEROUTE_MAX_TTL], np = 0;
	bool json = hs_probe_json(v, r), reached = false;
	int leaf = topo ? hs_topo_leaf_for(topo, &r->s.dst) : -1;
	unsigned last = 0;

	/* the hops worth showing: up to the first TTL that reached the destination's
	 * ToR, or the last TTL that told us anything new */
	for (unsigned i = 0; i < r->nsent; i++) {
		const struct hs_probe_result *res = &r->slot[i].r;
		if (res->nhops > 0 || r->icmp[i].have)
			last = i + 1;
		if (res->nhops > 0 && leaf >= 0 && res->hops[res->nhops - 1].sw == leaf) {
			reached = true;
			last = i + 1;
			break;
		}
	}
	if (json) {
		out_obj_open(o, NULL);
		out_uint(o, "traceroute", NULL, r->id);
		out_str(o, "src", NULL, hs_addr_str(&r->s.src, a1, sizeof(a1)));
		out_uint(o, "sport", NULL, r->s.sport);
		out_str(o, "dst", NULL, hs_addr_str(&r->s.dst, a2, sizeof(a2)));
		out_uint(o, "dport", NULL, r->s.dport);
		out_arr_open(o, "hops");
	} else {
		out_text(o, "traceroute %s:%u > %s:%u %s\n", hs_addr_str(&r->s.src, a1, sizeof(a1)),
			 r->s.sport, hs_addr_str(&r->s.dst, a2, sizeof(a2)), r->s.dport,
			 r->s.proto == 6 ? "tcp" : "udp");
	}
	for (unsigned i = 0; i < last; i++) {
		const struct hs_probe_result *res = &r->slot[i].r;
		const char *name = NULL, *via = "mirror";
		uint64_t ts = 0;
		if (res->nhops > 0) {
			const struct hs_probe_hop *h = &res->hops[res->nhops - 1];
			name = hs_probe_hop_name(topo, h->sw, &h->addr, nb, sizeof(nb));
			ts = h->ts_ns;
			if (np < HS_TRACEROUTE_MAX_TTL && (np == 0 || path[np - 1] != h->sw))
				path[np++] = h->sw;
		} else if (r->icmp[i].have) {
			int sw = topo ? hs_topo_switch_by_addr(topo, &r->icmp[i].from) : -1;
			name = hs_probe_hop_name(topo, sw, &r->icmp[i].from, nb, sizeof(nb));
			ts = r->icmp[i].ts_ns;
			via = "icmp";
		}
		if (json) {
			out_obj_open(o, NULL);
			out_uint(o, "ttl", NULL, i + 1);
			if (name) {
				out_str(o, "switch", NULL, name);
				out_time(o, "ts_ns", NULL, ts);
				out_str(o, "from", NULL, via);
			} else {
				out_null(o, "switch");
			}
			out_obj_close(o);
		} else if (name) {
			uint64_t d = ts >= r->slot[i].pk.sent_ns ? ts - r->slot[i].pk.sent_ns : 0;
			out_text(o, "%3u  %-16s +%s%s\n", i + 1, name, hs_fmt_duration(d, db, sizeof(db)),
				 via[0] == 'i' ? " (icmp)" : "");
		} else {
			out_text(o, "%3u  *\n", i + 1);
		}
	}

	unsigned ntr = 0;
	int fp[HS_TRACE_MAX_HOPS];
	int nfp = flow_path(ctx, &r->s, fp, HS_TRACE_MAX_HOPS, &ntr);
	bool same = nfp == np;
	for (int k = 0; same && k < np; k++)
		same = fp[k] == path[k];
	if (json) {
		out_arr_close(o);
		out_bool(o, "reached", NULL, reached);
		out_uint(o, "flow_traces", NULL, ntr);
		if (nfp >= 0)
			out_bool(o, "same_path", NULL, same);
		else
			out_null(o, "same_path");
		out_obj_close(o);
		return;
	}
	if (!reached)
		out_text(o, "destination's ToR not reached\n");
	if (nfp >= 0) {
		out_text(o, "traces of this flow (%u) went", ntr);
		for (int k = 0; k < nfp; k++) {
			struct hs_addr none = { 0 };
			out_text(o, "%s%s", k ? " > " : " ", hs_probe_hop_name(topo, fp[k], &none, nb, sizeof(nb)));
		}
		out_text(o, ": %s\n", same ? "same path" : "a different path");
	}
}

/* the hops shown: up to the destination's ToR, else one past the deepest
 * hop seen (where the packets stop) */
static int tr_nhops(const struct hs_probe_run *r)
{
	const struct hs_tr_stats *ts = r->tr;

	if (ts->reached)
		return ts->reached;
	return ts->deepest < r->s.max_ttl ? ts->deepest + 1 : ts->deepest;
}

/* hop k's packets: those with TTL k or more, which should all have got there */
static void tr_counts(const struct hs_tr_stats *ts, int k, uint64_t *sent, uint64_t *recv)
{
	*sent = *recv = 0;
	for (int t = k; t <= HS_TRACEROUTE_MAX_TTL; t++) {
		*sent += ts->sent[t];
		*recv += ts->seen[t][k];
	}
}

static void tr_render(const struct hs_probe_run *r, struct hs_out *o)
{
	const struct hs_tr_stats *ts = r->tr;
	const struct hs_topo *topo = r->ctx->topo;
	char a1[HS_ADDRSTRLEN], a2[HS_ADDRSTRLEN], nb[HS_ADDRSTRLEN], v[5][32];
	int nh = tr_nhops(r);

	hs_addr_str(&r->s.src, a1, sizeof(a1));
	hs_addr_str(&r->s.dst, a2, sizeof(a2));
	if (o->json) {
		out_obj_open(o, NULL);
		out_uint(o, "traceroute", NULL, r->id);
		out_str(o, "src", NULL, a1);
		out_uint(o, "sport", NULL, r->s.sport);
		out_str(o, "dst", NULL, a2);
		out_uint(o, "dport", NULL, r->s.dport);
		out_str(o, "proto", NULL, r->s.proto == 6 ? "tcp" : "udp");
		out_uint(o, "rounds", NULL, ts->rounds);
		out_bool(o, "reached", NULL, ts->reached > 0);
		out_arr_open(o, "hops");
	} else {
		out_text(o, "traceroute %s:%u > %s:%u %s, %u round%s (times in ms)\n", a1, r->s.sport,
			 a2, r->s.dport, r->s.proto == 6 ? "tcp" : "udp", ts->rounds,
			 ts->rounds == 1 ? "" : "s");
		out_text(o, "%3s  %-16s %6s %5s %7s %7s %7s %7s %7s\n", "hop", "switch", "loss%",
			 "sent", "last", "avg", "best", "worst", "stdev");
	}
	for (int k = 1; k <= nh; k++) {
		const struct hs_tr_hop *th = &ts->hop[k];
		uint64_t sent, recv;
		char names[HS_ARRAY_SIZE(th->sw) * (HS_NAME_MAX + 1)] = "";
		size_t used = 0;
		tr_counts(ts, k, &sent, &recv);
		double loss = sent ? 100.0 * (double)(sent - recv) / (double)sent : 0.0;
		double stdev = th->n > 1 ? sqrt(th->m2 / (double)(th->n - 1)) : 0.0;
		double f[5] = { (double)th->last, th->mean, (double)th->best, (double)th->worst, stdev };
		if (o->json) {
			out_obj_open(o, NULL);
			out_uint(o, "hop", NULL, (unsigned)k);
			out_arr_open(o, "switches");
			for (int i = 0; i < th->nsw; i++)
				out_str(o, NULL, NULL, hs_probe_hop_name(topo, th->sw[i], &th->addr[i], nb, sizeof(nb)));
			out_arr_close(o);
			out_uint(o, "sent", NULL, sent);
			out_uint(o, "received", NULL, recv);
			out_double(o, "loss", NULL, loss / 100);
			/* durations: integer nanoseconds (hopscope-json(7)) */
			static const char *const keys[] = { "last_ns", "avg_ns", "best_ns", "worst_ns",
							    "stdev_ns" };
			for (int i = 0; i < 5; i++) {
				if (th->n)
					out_uint(o, keys[i], NULL, (uint64_t)llround(f[i]));
				else
					out_null(o, keys[i]);
			}
			out_obj_close(o);
			continue;
		}
		for (int i = 0; i < th->nsw && used < sizeof(names); i++) {
			int n = snprintf(names + used, sizeof(names) - used, "%s%s", i ? "," : "",
					 hs_probe_hop_name(topo, th->sw[i], &th->addr[i], nb, sizeof(nb)));
			if (n < 0)
				break;
			used += (size_t)n;
		}
		out_text(o, "%3d  %-16s %5.1f%% %5" PRIu64, k, th->nsw ? names : "*", loss, sent);
		for (int i = 0; i < 5; i++) {
			double ms = f[i] / 1e6;
			/* three decimals while they fit the column */
			if (!th->n)
				snprintf(v[i], sizeof(v[i]), "-");
			else
				snprintf(v[i], sizeof(v[i]), "%.*f", ms < 100 ? 3 : ms < 10000 ? 1 : 0, ms);
			out_text(o, " %7s", v[i]);
		}
		out_text(o, "\n");
	}
	if (o->json) {
		out_arr_close(o);
		out_obj_close(o);
	} else if (!ts->reached && ts->rounds && topo && hs_topo_leaf_for(topo, &r->s.dst) >= 0) {
		out_text(o, "destination's ToR not reached\n");
	}
}

/* live at a terminal: the table drawn again in place after each round (not
 * where the output is kept, as watch's events pane keeps it) */
static bool tr_live(const struct hs_probe_view *v, const struct hs_probe_run *r)
{
	return v->ctx->interactive && !r->s.report && !hs_probe_json(v, r) && v->ctx->out.fp &&
	       isatty(fileno(v->ctx->out.fp));
}

/* the terminal rows TEXT takes, its long lines wrapped */
static int text_rows(const char *text, size_t len, int cols)
{
	int rows = 0;
	size_t col = 0;

	for (size_t i = 0; i < len; i++) {
		if (text[i] != '\n') {
			col++;
			continue;
		}
		rows += col == 0 ? 1 : (int)((col + (size_t)cols - 1) / (size_t)cols);
		col = 0;
	}
	return rows;
}

static void tr_draw(struct hs_probe_view *v, const struct hs_probe_run *r)
{
	char *buf = NULL;
	size_t len = 0;
	struct hs_out o;
	FILE *fp = hs_probe_mem_open(&buf, &len, &o, false);
	FILE *to = v->ctx->out.fp;

	if (!fp)
		return;
	tr_render(r, &o);
	fclose(fp);
	if (v->drawn > 0)
		fprintf(to, "\033[%dA\r\033[J", v->drawn);
	fwrite(buf, 1, len, to);
	fflush(to);
	struct winsize ws;
	int cols = ioctl(fileno(to), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
	v->drawn = text_rows(buf, len, cols);
	free(buf);
}

/* a round was sent: the live table drawn again */
static void on_round(void *arg, const struct hs_probe_run *r)
{
	struct hs_probe_view *v = arg;

	if (tr_live(v, r))
		tr_draw(v, r);
}

/* the run's end: the table of the rounds, or the path */
static void on_end(void *arg, const struct hs_probe_run *r)
{
	struct hs_probe_view *v = arg;
	struct hs_ctx *ctx = v->ctx;

	fflush(ctx->out.fp);
	if (r->tr && tr_live(v, r)) {
		/* Ctrl-C: the console went to a new line below the table */
		if (r->stopped && v->drawn)
			v->drawn++;
		tr_draw(v, r);
	} else if (r->tr) {
		bool saved = ctx->out.json;
		ctx->out.json = hs_probe_json(v, r);
		tr_render(r, &ctx->out);
		ctx->out.json = saved;
	} else if (r->nsent > 0) {
		print_traceroute(v, r);
	}
	fflush(ctx->out.fp);
}

int cmd_traceroute(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_probe_spec s;
	char err[256], words[1024];
	size_t used = 0;

	if (hs_traceroute_parse(argc - 1, argv + 1, ctx->topo, &s, err, sizeof(err)) < 0)
		return out_err(&ctx->out, "%s", err);
	/* until Ctrl-C only where a person can press it and watch the table */
	if (s.table && s.rounds == 0 && (s.report || s.json || ctx->out.json || !ctx->interactive ||
					 !isatty(fileno(ctx->out.fp)))) {
		s.rounds = HS_TRACEROUTE_ROUNDS;
		s.count = s.rounds * s.max_ttl;
	}
	words[0] = '\0';
	for (int i = 0; i < argc && used + 1 < sizeof(words); i++) {
		int n = snprintf(words + used, sizeof(words) - used, "%s%s", i ? " " : "", argv[i]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	struct hs_probe_cbs cb = { .round = on_round, .end = on_end };
	return hs_probe_verb_run(ctx, &s, words, cb);
}
