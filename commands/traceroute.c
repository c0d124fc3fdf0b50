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

/* "traceroute 10.1.1.11:40000 > 10.1.4.12:5001 tcp", the protocol
 * through protofmt */
static void tr_head(struct hs_out *o, const struct hs_probe_run *r, const char *protofmt)
{
	char a[HS_ADDRSTRLEN];

	out_uint(o, "traceroute", NULL, r->id);
	out_str(o, "src", "traceroute %s:", hs_addr_str(&r->s.src, a, sizeof(a)));
	out_uint(o, "sport", "%" PRIu64 " > ", r->s.sport);
	out_str(o, "dst", "%s:", hs_addr_str(&r->s.dst, a, sizeof(a)));
	out_uint(o, "dport", "%" PRIu64 " ", r->s.dport);
	out_str(o, "proto", protofmt, r->s.proto == 6 ? "tcp" : "udp");
}

static void print_traceroute(struct hs_probe_view *v, const struct hs_probe_run *r)
{
	struct hs_ctx *ctx = v->ctx;
	struct hs_out *o = ctx->out;
	const struct hs_topo *topo = ctx->topo;
	char nb[HS_ADDRSTRLEN];
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
	bool saved = o->json;
	o->json = json;
	out_obj_open(o, NULL);
	tr_head(o, r, "%s\n");
	out_arr_open(o, "hops");
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
		out_obj_open(o, NULL);
		out_uint(o, "ttl", "%3" PRIu64 "  ", i + 1);
		if (name) {
			/* "leaf1  +12.0us (icmp)": from the send to the copy or the reply */
			uint64_t d = ts >= r->slot[i].pk.sent_ns ? ts - r->slot[i].pk.sent_ns : 0;
			out_str(o, "switch", "%-16s ", name);
			out_time(o, "ts_ns", NULL, ts);
			out_dur(o, "at_ns", "+%s", (int64_t)d);
			out_str(o, "from", via[0] == 'i' ? " (%s)" : NULL, via);
		} else {
			out_null(o, "switch");
			out_text(o, "*");
		}
		out_obj_close(o);
		out_nl(o);
	}
	out_arr_close(o);
	out_bool(o, "reached", NULL, reached);
	if (!reached)
		out_text(o, "destination's ToR not reached\n");

	unsigned ntr = 0;
	int fp[HS_TRACE_MAX_HOPS];
	int nfp = flow_path(ctx, &r->s, fp, HS_TRACE_MAX_HOPS, &ntr);
	bool same = nfp == np;
	for (int k = 0; same && k < np; k++)
		same = fp[k] == path[k];
	out_uint(o, "flow_traces", nfp >= 0 ? "traces of this flow (%" PRIu64 ") went" : NULL, ntr);
	if (nfp >= 0) {
		for (int k = 0; k < nfp; k++) {
			struct hs_addr none = { 0 };
			out_text(o, "%s%s", k ? " > " : " ", hs_probe_hop_name(topo, fp[k], &none, nb, sizeof(nb)));
		}
		out_bool(o, "same_path", NULL, same);
		out_text(o, ": %s\n", same ? "same path" : "a different path");
	} else {
		out_null(o, "same_path");
	}
	out_obj_close(o);
	o->json = saved;
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

/* a duration of the table: integer nanoseconds in JSON (null with no
 * sample), milliseconds in text, three decimals while they fit the column */
static void tr_ms(struct hs_out *o, const char *key, bool have, double ns)
{
	char v[32];
	double ms = ns / 1e6;

	if (have)
		out_uint(o, key, NULL, (uint64_t)llround(ns));
	else
		out_null(o, key);
	if (!have)
		snprintf(v, sizeof(v), "-");
	else
		snprintf(v, sizeof(v), "%.*f", ms < 100 ? 3 : ms < 10000 ? 1 : 0, ms);
	out_text(o, " %7s", v);
}

static void tr_render(const struct hs_probe_run *r, struct hs_out *o)
{
	const struct hs_tr_stats *ts = r->tr;
	const struct hs_topo *topo = r->ctx->topo;
	char nb[HS_ADDRSTRLEN];
	int nh = tr_nhops(r);

	out_obj_open(o, NULL);
	tr_head(o, r, "%s, ");
	out_uint(o, "rounds", "%" PRIu64 " round", ts->rounds);
	out_text(o, "%s (times in ms)\n", ts->rounds == 1 ? "" : "s");
	out_bool(o, "reached", NULL, ts->reached > 0);
	out_text(o, "%3s  %-16s %6s %5s %7s %7s %7s %7s %7s\n", "hop", "switch", "loss%", "sent",
		 "last", "avg", "best", "worst", "stdev");
	out_arr_open(o, "hops");
	for (int k = 1; k <= nh; k++) {
		const struct hs_tr_hop *th = &ts->hop[k];
		uint64_t sent, recv;
		char names[HS_ARRAY_SIZE(th->sw) * (HS_NAME_MAX + 1)] = "";
		size_t used = 0;
		tr_counts(ts, k, &sent, &recv);
		out_obj_open(o, NULL);
		out_uint(o, "hop", "%3" PRIu64 "  ", (unsigned)k);
		/* the switches seen at this hop (ECMP): "spine1,spine2" in text */
		out_arr_open(o, "switches");
		for (int i = 0; i < th->nsw; i++) {
			const char *n = hs_probe_hop_name(topo, th->sw[i], &th->addr[i], nb, sizeof(nb));
			out_str(o, NULL, NULL, n);
			if (used < sizeof(names)) {
				int w = snprintf(names + used, sizeof(names) - used, "%s%s", i ? "," : "", n);
				if (w > 0)
					used += (size_t)w;
			}
		}
		out_arr_close(o);
		out_text(o, "%-16s", th->nsw ? names : "*");
		out_share(o, "loss", " %5.1f%%", sent ? (double)(sent - recv) / (double)sent : 0.0);
		out_uint(o, "sent", " %5" PRIu64, sent);
		out_uint(o, "received", NULL, recv);
		/* durations: integer nanoseconds (hopscope-json(7)) */
		tr_ms(o, "last_ns", th->n, (double)th->last);
		tr_ms(o, "avg_ns", th->n, th->mean);
		tr_ms(o, "best_ns", th->n, (double)th->best);
		tr_ms(o, "worst_ns", th->n, (double)th->worst);
		tr_ms(o, "stdev_ns", th->n, th->n > 1 ? sqrt(th->m2 / (double)(th->n - 1)) : 0.0);
		out_obj_close(o);
		out_nl(o);
	}
	out_arr_close(o);
	if (!ts->reached && ts->rounds && topo && hs_topo_leaf_for(topo, &r->s.dst) >= 0)
		out_text(o, "destination's ToR not reached\n");
	out_obj_close(o);
}

/* live at a terminal: the table drawn again in place after each round (not
 * where the output is kept, as watch's events pane keeps it) */
static bool tr_live(const struct hs_probe_view *v, const struct hs_probe_run *r)
{
	return v->ctx->interactive && !r->s.report && !hs_probe_json(v, r) && v->ctx->out->fp &&
	       isatty(fileno(v->ctx->out->fp));
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
	FILE *to = v->ctx->out->fp;

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

/* typed at watch's ':' line: the table is a block of the events pane,
 * drawn again there after each round */
static bool tr_in_watch(const struct hs_probe_view *v, const struct hs_probe_run *r)
{
	return hs_watch_active(v->ctx) && !r->s.report && !hs_probe_json(v, r);
}

static void tr_block(struct hs_probe_view *v, const struct hs_probe_run *r)
{
	char *buf = NULL;
	size_t len = 0;
	struct hs_out o;
	FILE *fp = hs_probe_mem_open(&buf, &len, &o, false);

	if (!fp)
		return;
	tr_render(r, &o);
	fclose(fp);
	hs_watch_block(v->ctx, &v->block, buf);
	free(buf);
}

/* a round was sent: the live table drawn again */
static void on_round(void *arg, const struct hs_probe_run *r)
{
	struct hs_probe_view *v = arg;

	if (tr_live(v, r))
		tr_draw(v, r);
	else if (tr_in_watch(v, r))
		tr_block(v, r);
}

/* the run's end: the table of the rounds, or the path */
static void on_end(void *arg, const struct hs_probe_run *r)
{
	struct hs_probe_view *v = arg;
	struct hs_ctx *ctx = v->ctx;

	fflush(ctx->out->fp);
	if (r->tr && tr_live(v, r)) {
		/* Ctrl-C: the console went to a new line below the table */
		if (r->stopped && v->drawn)
			v->drawn++;
		tr_draw(v, r);
	} else if (r->tr && tr_in_watch(v, r)) {
		tr_block(v, r);
	} else if (r->tr) {
		bool saved = ctx->out->json;
		ctx->out->json = hs_probe_json(v, r);
		tr_render(r, ctx->out);
		ctx->out->json = saved;
	} else if (r->nsent > 0) {
		print_traceroute(v, r);
	}
	fflush(ctx->out->fp);
}

int cmd_traceroute(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_probe_spec s;
	char err[256], words[1024];
	size_t used = 0;

	if (hs_traceroute_parse(argc - 1, argv + 1, ctx->topo, &s, err, sizeof(err)) < 0)
		return out_err(ctx->out, "%s", err);
	/* until Ctrl-C only where a person can press it and watch the table */
	if (s.table && s.rounds == 0 && (s.report || s.json || ctx->out->json || !ctx->interactive ||
					 !isatty(fileno(ctx->out->fp)))) {
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
