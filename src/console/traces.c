/* traces.c - what the verbs that list traces share (traces.h): the 'traces'
 * filters as typed, a listing's limit, and a trace as a row of text or JSON
 */
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

/* "10.0.0.1:80 > 10.0.0.2:4000 tcp" */
static const char *flow_str(const struct hs_flowkey *k, char *buf, size_t len)
{
	char s[HS_ADDRSTRLEN], d[HS_ADDRSTRLEN], p[8], fk[2 * HS_ADDRSTRLEN + 24];
	bool ports = k->proto == 6 || k->proto == 17 || k->proto == 132;

	if (ports)
		snprintf(buf, len, "%s %s", hs_flowkey_str(k, fk, sizeof(fk)),
			 hs_proto_name(k->proto, p, sizeof(p)));
	else
		snprintf(buf, len, "%s > %s %s", hs_addr_str(&k->src, s, sizeof(s)),
			 hs_addr_str(&k->dst, d, sizeof(d)), hs_proto_name(k->proto, p, sizeof(p)));
	return buf;
}

/* the i-th expected next hop's name */
static const char *next_name(const struct hs_topo *topo, const struct hs_trace *t, int i,
			     char *buf, size_t len)
{
	int sw = t->expected_next[i];

	if (topo && sw >= 0 && sw < topo->nsw)
		return topo->sw[sw].name;
	snprintf(buf, len, "#%d", sw);
	return buf;
}

/* the widest a listed path and its hop latencies get (traces show has them all) */
#define TRACES_PATH_CELLS	48
#define TRACES_LATENCY_CELLS	48

void hs_trace_flow_fields(struct hs_out *o, const struct hs_trace *t, const char *textfmt)
{
	char a[HS_ADDRSTRLEN], p[8], fl[2 * HS_ADDRSTRLEN + 32];

	out_str(o, "src", NULL, hs_addr_str(&t->key.src, a, sizeof(a)));
	out_str(o, "dst", NULL, hs_addr_str(&t->key.dst, a, sizeof(a)));
	out_str(o, "proto", NULL, hs_proto_name(t->key.proto, p, sizeof(p)));
	out_uint(o, "sport", NULL, t->key.sport);
	out_uint(o, "dport", NULL, t->key.dport);
	out_text(o, textfmt, flow_str(&t->key, fl, sizeof(fl)));
}

void hs_trace_dropped_at(struct hs_out *o, const struct hs_topo *topo, const struct hs_trace *t)
{
	char b[64];

	if (t->outcome != HS_OUT_DROPPED || !t->nhops)
		return;
	out_str(o, "last", " after %s", hs_hop_name(topo, &t->hops[t->nhops - 1], b, sizeof(b)));
	if (t->n_next)
		out_text(o, ", expected next: ");
	out_arr_open(o, "expected_next");
	for (int i = 0; i < t->n_next && i < HS_TRACE_MAX_NEXT; i++)
		out_str(o, NULL, i ? "|%s" : "%s", next_name(topo, t, i, b, sizeof(b)));
	out_arr_close(o);
}

void hs_trace_row(struct hs_out *o, const struct hs_topo *topo, int64_t session,
		  const char *type, const struct hs_trace *t)
{
	char a[HS_ADDRSTRLEN], b[64];

	out_obj_open(o, NULL);
	if (type)
		out_str(o, "type", NULL, type);
	out_uint(o, "id", NULL, t->id);
	if (session > 0)
		out_int(o, "session", NULL, session);
	out_str(o, "trace", "%-8s ", hs_fmt_trace_ref(session, t->id, b, sizeof(b)));
	/* the trace's time in text (hs_trace_time, as watch and 'traces show'
	 * give it); in JSON the first hop's capture time, and its switch's
	 * when that is the one shown */
	bool sc = hs_trace_switch_clock(t);
	if (t->nhops)
		out_time(o, "ts_ns", sc ? NULL : "%-26s  ", t->hops[0].ts_ns);
	else
		out_text(o, "%-26s  ", "-");
	if (sc)
		out_time(o, "switch_ts_ns", "%-26s  ", hs_trace_time(t));
	hs_trace_flow_fields(o, t, "%-44s ");
	out_uint(o, "ip_id", NULL, t->ip_id);
	out_str(o, "outcome", "%-9s  ", hs_outcome_name(t->outcome));
	if (t->flags & HS_TF_PROBE)
		out_uint(o, "probe_id", NULL, t->probe_id);
	if (t->flags & HS_TF_MATCHED)
		out_bool(o, "matched", NULL, true);
	/* from a shared history: who stored it */
	if (t->analyzer)
		out_str(o, "analyzer", NULL, hs_fabric_analyzers(t->analyzer));
	out_arr_open(o, "hops");
	for (int i = 0; i < t->nhops; i++) {
		const struct hs_hop *h = &t->hops[i];
		out_obj_open(o, NULL);
		out_str(o, "switch", NULL, hs_hop_name(topo, h, b, sizeof(b)));
		out_str(o, "addr", NULL, hs_addr_str(&h->addr, a, sizeof(a)));
		out_time(o, "ts_ns", NULL, h->ts_ns);
		if (sc)
			out_time(o, "switch_ts_ns", NULL, h->hw_ns);
		out_uint(o, "ttl", NULL, h->ttl);
		if (i > 0)
			out_int(o, "latency_ns", NULL, hs_hop_delta(&t->hops[i - 1], h));
		out_obj_close(o);
	}
	out_arr_close(o);
	if (!o->json) {
		/* the hops again as text: a long (looped) path, and its
		 * latencies, give way in the middle, as in watch */
		char path[HS_TRACE_MAX_HOPS * (HS_NAME_MAX + HS_ADDRSTRLEN + 4)], fit[512];
		size_t n = 0;
		path[0] = '\0';
		for (int i = 0; i < t->nhops && n < sizeof(path); i++)
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%s%s", i ? " > " : "",
					      hs_hop_name(topo, &t->hops[i], b, sizeof(b)));
		hs_wpath_fit(path, " > ", "...", TRACES_PATH_CELLS, fit, sizeof(fit));
		out_text(o, "%s", fit);
	}
	if (t->extra_hops)
		out_uint(o, "extra_hops", " (+%" PRIu64 ")", t->extra_hops);
	if (!o->json && t->nhops > 1) {
		char path[HS_TRACE_MAX_HOPS * 24], fit[512];
		size_t n = 0;
		for (int i = 1; i < t->nhops && n < sizeof(path); i++)
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%s%s", i > 1 ? " " : "",
					      hs_hop_trusted(t, (unsigned)i) ?
					      hs_fmt_delta(hs_hop_delta(&t->hops[i - 1], &t->hops[i]),
							   b, sizeof(b)) : "?");
		hs_wpath_fit(path, " ", "...", TRACES_LATENCY_CELLS, fit, sizeof(fit));
		out_text(o, "  [%s]", fit);
	}
	if (o->json)
		hs_trace_dropped_at(o, topo, t);
	out_obj_close(o);
	out_nl(o);
}

/* "10.0.0.1", "10.0.0.1:80", "2001:db8::1", "[2001:db8::1]:80" */
static int parse_flow_arg(const char *s, struct hs_trace_query *q)
{
	char buf[HS_ADDRSTRLEN + 16];
	const char *port = NULL;
	uint64_t v;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	if (buf[0] == '[') {
		char *end = strchr(buf, ']');
		if (!end)
			return -1;
		*end = '\0';
		if (end[1] == ':')
			port = end + 2;
		else if (end[1])
			return -1;
		memmove(buf, buf + 1, strlen(buf + 1) + 1);
	} else {
		char *c = strchr(buf, ':');
		if (c && !strchr(c + 1, ':')) {	/* exactly one ':' -> IPv4:port */
			*c = '\0';
			port = c + 1;
		}
	}
	if (hs_addr_parse(buf, &q->addr) < 0)
		return -1;
	if (port) {
		if (hs_parse_uint(port, 65535, &v) < 0)
			return -1;
		q->has_port = true;
		q->port = (uint16_t)v;
	}
	q->by_flow = true;
	return 0;
}

static int outcome_by_name(const char *s)
{
	for (int k = HS_OUT_DELIVERED; k < HS_OUT__COUNT; k++)
		if (strcmp(s, hs_outcome_name(k)) == 0)
			return k;
	return -1;
}

/* one "KEY VALUE" filter of traces; 1 taken, 0 not a filter key, -1 bad
 * value (error printed, naming verb) */
int hs_trace_query_arg(struct hs_ctx *ctx, const char *verb, struct hs_trace_query *q,
		       const char *k, const char *v)
{
	struct hs_out *o = ctx->out;

	if (strcmp(k, "flow") == 0) {
		if (parse_flow_arg(v, q) < 0)
			return out_err(o, "%s: bad flow '%s' (ADDR or ADDR:PORT)", verb, v);
	} else if (strcmp(k, "switch") == 0) {
		q->by_switch = true;
		q->sw = ctx->topo ? hs_topo_switch_by_name(ctx->topo, v) : -1;
		if (q->sw < 0 && hs_addr_parse(v, &q->sw_addr) < 0)
			return out_err(o, "%s: unknown switch '%s'", verb, v);
		if (q->sw < 0 && ctx->topo)
			q->sw = hs_topo_switch_by_addr(ctx->topo, &q->sw_addr);
	} else if (strcmp(k, "outcome") == 0) {
		q->by_outcome = true;
		q->outcome = outcome_by_name(v);
		if (q->outcome < 0)
			return out_err(o, "%s: bad outcome '%s' (delivered, dropped, looped, "
				       "unknown)", verb, v);
	} else if (strcmp(k, "since") == 0) {
		q->by_since = true;
		if (hs_parse_duration(v, &q->since_ns) < 0)
			return out_err(o, "%s: bad duration '%s' (e.g. 500ms, 10s, 2m)", verb, v);
	} else if (strcmp(k, "limit") == 0) {
		if (hs_parse_uint(v, 1000000, &q->limit) < 0 || q->limit == 0)
			return out_err(o, "%s: bad limit '%s' (a number from 1 to 1000000)", verb, v);
	} else {
		return 0;
	}
	return 1;
}

int hs_limit_args(struct hs_out *o, const char *verb, int argc, char **argv, uint64_t max,
		  uint64_t *limit)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "limit") != 0)
			return out_err(o, "%s: unexpected '%s' (limit N)", verb, argv[i]);
		if (++i == argc)
			return out_err(o, "%s: 'limit' needs a value", verb);
		if (hs_parse_uint(argv[i], max, limit) < 0 || *limit == 0)
			return out_err(o, "%s: bad limit '%s' (a number from 1 to %" PRIu64 ")",
				       verb, argv[i], max);
	}
	return 0;
}

void hs_limit_note(struct hs_out *o, const char *verb, const char *what, size_t shown,
		   size_t total, bool at_least)
{
	if (shown < total)
		out_text(o, "(%zu of %s%zu %s; %s limit N)\n", shown, at_least ? "at least " : "",
			 total, what, verb);
}
