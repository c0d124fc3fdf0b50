/* analyze.c - drops, loops, latency, ECMP and 007 blame over closed traces
 *
 * Everything here is a pure function of the traces and the topology it is
 * given (see analyze.h for the definitions). Work arrays are sized from the
 * input and freed before returning; only the results stay allocated.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"

#define TCP_FIN 0x01
#define TCP_SYN 0x02
/* an IPv4 header without options plus the longest TCP header: a larger
 * packet carries data */
#define HEADER_ONLY_MAX 80

size_t hs_an_closed(const struct hs_tracer *tr, const struct hs_trace ***out)
{
	struct hs_tracer_stats st;
	size_t max = 0;

	if (tr) {
		hs_tracer_get_stats(tr, &st);
		max = st.closed < (1u << 22) ? (size_t)st.closed : (1u << 22);
	}
	*out = hs_xcalloc(max ? max : 1, sizeof(**out));
	return tr ? hs_tracer_recent(tr, *out, max) : 0;
}

uint64_t hs_an_trace_ts(const struct hs_trace *t)
{
	return hs_trace_time(t);
}

static int cmp_addr(const struct hs_addr *x, const struct hs_addr *y)
{
	if (x->af != y->af)
		return x->af < y->af ? -1 : 1;
	return memcmp(x->a, y->a, x->af == 4 ? 4 : 16);
}

int hs_an_flowkey_cmp(const struct hs_flowkey *x, const struct hs_flowkey *y)
{
	int c = cmp_addr(&x->src, &y->src);

	if (c)
		return c;
	if ((c = cmp_addr(&x->dst, &y->dst)) != 0)
		return c;
	if (x->sport != y->sport)
		return x->sport < y->sport ? -1 : 1;
	if (x->dport != y->dport)
		return x->dport < y->dport ? -1 : 1;
	if (x->proto != y->proto)
		return x->proto < y->proto ? -1 : 1;
	return 0;
}

static int cmp_int(int x, int y)
{
	return x < y ? -1 : x > y;
}

static int cmp_u64(uint64_t x, uint64_t y)
{
	return x < y ? -1 : x > y;
}

/* distinct keys of k[0..n-1] (sorted in place) */
static int cmp_key_qsort(const void *x, const void *y)
{
	return hs_an_flowkey_cmp(x, y);
}

static uint32_t count_distinct(struct hs_flowkey *k, size_t n)
{
	uint32_t d = 0;

	qsort(k, n, sizeof(*k), cmp_key_qsort);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || !hs_flowkey_eq(&k[i - 1], &k[i]))
			d++;
	return d;
}

/* ---- which next hop a flow took from a switch --------------------------- */

struct edge {
	struct hs_flowkey key;
	int a, b;
};

static int cmp_edge(const void *x, const void *y)
{
	const struct edge *p = x, *q = y;
	int c = hs_an_flowkey_cmp(&p->key, &q->key);

	if (c)
		return c;
	if ((c = cmp_int(p->a, q->a)) != 0)
		return c;
	return cmp_int(p->b, q->b);
}

/* every switch-to-switch step of every trace, sorted by flow */
static struct edge *build_edges(const struct hs_trace *const *t, size_t n, size_t *nedges)
{
	size_t cap = 0, k = 0;

	for (size_t i = 0; i < n; i++)
		cap += t[i]->nhops ? t[i]->nhops - 1u : 0;
	struct edge *e = hs_xcalloc(cap ? cap : 1, sizeof(*e));
	for (size_t i = 0; i < n; i++) {
		for (unsigned h = 1; h < t[i]->nhops; h++) {
			int a = t[i]->hops[h - 1].sw, b = t[i]->hops[h].sw;
			if (a < 0 || b < 0 || a == b)
				continue;
			e[k].key = t[i]->key;
			e[k].a = a;
			e[k].b = b;
			k++;
		}
	}
	qsort(e, k, sizeof(*e), cmp_edge);
	*nedges = k;
	return e;
}

/* the one candidate next hop the flow was seen taking from a, or -1 */
static int flow_next_hop(const struct edge *e, size_t ne, const struct hs_flowkey *key, int a,
			 const int *cand, int ncand)
{
	size_t lo = 0, hi = ne;
	int found = -1;

	while (lo < hi) {	/* first edge not below (key, a, -inf) */
		size_t mid = lo + (hi - lo) / 2;
		int c = hs_an_flowkey_cmp(&e[mid].key, key);
		if (c == 0)
			c = cmp_int(e[mid].a, a);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < ne && e[i].a == a && hs_flowkey_eq(&e[i].key, key); i++) {
		for (int c = 0; c < ncand; c++) {
			if (e[i].b != cand[c])
				continue;
			if (found >= 0 && found != cand[c])
				return -1;	/* took several: no single answer */
			found = cand[c];
		}
	}
	return found;
}

/* the next hop a dropped trace was expected to reach, or -1 */
static int resolve_next(const struct hs_trace *t, const struct edge *e, size_t ne)
{
	if (t->last_sw < 0 || t->n_next <= 0)
		return -1;
	if (t->n_next == 1)
		return t->expected_next[0];
	int nc = t->n_next < HS_TRACE_MAX_NEXT ? t->n_next : HS_TRACE_MAX_NEXT;
	return flow_next_hop(e, ne, &t->key, t->last_sw, t->expected_next, nc);
}

/* topology link index of every pair of switches, -1 where none */
static int *link_matrix(const struct hs_topo *topo)
{
	size_t n = (size_t)topo->nsw;
	int *m = hs_xcalloc(n ? n * n : 1, sizeof(*m));

	for (size_t i = 0; i < n * n; i++)
		m[i] = -1;
	for (int l = topo->nlinks - 1; l >= 0; l--) {	/* the first of parallel links */
		int a = topo->links[l].a, b = topo->links[l].b;
		if (a < 0 || b < 0 || a >= topo->nsw || b >= topo->nsw)
			continue;
		m[(size_t)a * n + (size_t)b] = l;
		m[(size_t)b * n + (size_t)a] = l;
	}
	return m;
}

/* ---- drops ----------------------------------------------------------------- */

struct drec {
	int a, b;
	bool amb;
	int ncand;
	const struct hs_trace *t;
};

/* by link, the certain drops of a link before its ambiguous ones */
static int cmp_drec(const void *x, const void *y)
{
	const struct drec *p = x, *q = y;
	int c = cmp_int(p->a, q->a);

	if (c || (c = cmp_int(p->b, q->b)) != 0)
		return c;
	return cmp_int(p->amb, q->amb);
}

static int cmp_drop_link(const void *x, const void *y)
{
	const struct hs_drop_link *p = x, *q = y;

	if (p->drops != q->drops)
		return p->drops > q->drops ? -1 : 1;
	if (p->ambiguous != q->ambiguous)
		return p->ambiguous > q->ambiguous ? -1 : 1;
	if (p->a != q->a)
		return cmp_int(p->a, q->a);
	return cmp_int(p->b, q->b);
}

double hs_drop_loss(const struct hs_drop_link *l)
{
	double seen = (double)l->drops + (double)l->crossed;

	return seen > 0 ? (double)l->drops / seen : 0;
}

/* one link's records r[0..nr-1], sorted certain first */
static void drop_group(struct hs_drop_link *g, const struct drec *r, size_t nr,
		       const struct edge *e, size_t ne, uint64_t w0, uint64_t w1)
{
	bool bin[HS_DROP_BINS] = { false };
	struct hs_flowkey *keys = hs_xcalloc(nr + ne + 1, sizeof(*keys));

	memset(g, 0, sizeof(*g));
	g->a = r[0].a;
	g->b = r[0].b;
	g->first_ns = UINT64_MAX;
	for (size_t i = 0; i < nr; i++) {
		const struct hs_trace *t = r[i].t;
		if (!r[i].amb) {
			g->drops++;
			continue;
		}
		g->ambiguous++;
		for (int c = 0; c < r[i].ncand; c++) {
			int x = t->expected_next[c];
			bool have = x == g->b;
			for (int k = 0; k < g->nalt && !have; k++)
				have = g->alt[k] == x;
			if (!have && g->nalt < HS_TRACE_MAX_NEXT)
				g->alt[g->nalt++] = x;
		}
	}
	/* the figures below are of the certain drops when there are any */
	size_t ns = g->drops ? g->drops : nr;
	for (size_t i = 0; i < ns; i++) {
		const struct hs_trace *t = r[i].t;
		uint64_t ts = hs_an_trace_ts(t);
		if (ts < g->first_ns)
			g->first_ns = ts;
		if (ts > g->last_ns)
			g->last_ns = ts;
		uint64_t span = w1 > w0 ? w1 - w0 + 1 : 1;
		uint64_t off = ts > w0 ? ts - w0 : 0;
		size_t b = (size_t)((double)off / (double)span * HS_DROP_BINS);
		bin[b < HS_DROP_BINS ? b : HS_DROP_BINS - 1] = true;
		keys[i] = t->key;
	}
	for (int b = 0; b < HS_DROP_BINS; b++)
		g->bins += bin[b];

	/* distinct flows hit, and the one hit most often */
	qsort(keys, ns, sizeof(*keys), cmp_key_qsort);
	size_t best = 0, bestn = 0;
	for (size_t i = 0; i < ns;) {
		size_t j = i;
		while (j < ns && hs_flowkey_eq(&keys[i], &keys[j]))
			j++;
		g->flows++;
		if (j - i > bestn) {
			bestn = j - i;
			best = i;
		}
		i = j;
	}
	g->flow = keys[best];

	/* flows seen crossing a -> b, plus those hit */
	size_t k = ns;
	for (size_t i = 0; i < ne; i++)
		if (e[i].a == g->a && e[i].b == g->b)
			keys[k++] = e[i].key;
	g->flows_crossing = count_distinct(keys, k);
	free(keys);

	g->persistent = g->bins >= 3;
	uint32_t few = g->flows_crossing / 10 > 1 ? g->flows_crossing / 10 : 1;
	g->flow_specific = g->flows <= few && g->flows_crossing > g->flows;
}

/* slot of the directed link a -> b in hs_drops.crossed, or -1 */
static int dir_slot(const struct hs_topo *topo, const int *lm, int a, int b)
{
	if (a < 0 || b < 0 || a >= topo->nsw || b >= topo->nsw)
		return -1;
	int l = lm[(size_t)a * (size_t)topo->nsw + (size_t)b];
	if (l < 0)
		return -1;
	return 2 * l + (topo->links[l].a == a ? 0 : 1);
}

/* A packet mirrored last with a TTL of 1 ran out of it at that switch (a
 * traceroute's, hopscope's or a host's): the switch discarded it as it
 * should, no link lost it. Copies are mirrored as they come in, before the
 * switch lowers the TTL. */
static bool ran_out_of_ttl(const struct hs_trace *t)
{
	return t->nhops && t->hops[t->nhops - 1].ttl <= 1;
}

void hs_an_drops(const struct hs_trace *const *t, size_t n, const struct hs_topo *topo,
		 struct hs_drops *out)
{
	memset(out, 0, sizeof(*out));
	if (!topo)
		return;
	out->crossed = hs_xcalloc(topo->nlinks > 0 ? 2 * (size_t)topo->nlinks : 1,
				  sizeof(*out->crossed));
	if (n == 0)
		return;

	uint64_t w0 = UINT64_MAX, w1 = 0;
	size_t nd = 0;
	for (size_t i = 0; i < n; i++) {
		if (!t[i]->nhops)
			continue;
		uint64_t ts = hs_an_trace_ts(t[i]);
		w0 = ts < w0 ? ts : w0;
		w1 = ts > w1 ? ts : w1;
		if (t[i]->outcome == HS_OUT_DROPPED && !ran_out_of_ttl(t[i]))
			nd += t[i]->n_next > 0 ? (size_t)t[i]->n_next : 1;
	}
	out->window_start = w0 == UINT64_MAX ? 0 : w0;
	out->window_end = w1;

	size_t ne;
	struct edge *e = build_edges(t, n, &ne);
	int *lm = link_matrix(topo);
	for (size_t i = 0; i < ne; i++) {
		int d = dir_slot(topo, lm, e[i].a, e[i].b);
		if (d >= 0)
			out->crossed[d]++;
	}
	struct drec *r = hs_xcalloc(nd ? nd : 1, sizeof(*r));
	size_t nr = 0;
	for (size_t i = 0; i < n; i++) {
		const struct hs_trace *x = t[i];
		if (x->outcome != HS_OUT_DROPPED || !x->nhops)
			continue;
		if (ran_out_of_ttl(x)) {
			out->expired++;
			continue;
		}
		out->dropped++;
		int a = x->hops[x->nhops - 1].sw;
		int nc = x->n_next < HS_TRACE_MAX_NEXT ? x->n_next : HS_TRACE_MAX_NEXT;
		if (a < 0 || a >= topo->nsw || nc <= 0) {
			out->unattributed++;
			continue;
		}
		int b = resolve_next(x, e, ne);
		if (b >= 0) {
			out->certain++;
			r[nr++] = (struct drec){ a, b, false, 1, x };
			continue;
		}
		out->ambiguous++;
		for (int c = 0; c < nc; c++)
			r[nr++] = (struct drec){ a, x->expected_next[c], true, nc, x };
	}
	qsort(r, nr, sizeof(*r), cmp_drec);

	out->links = hs_xcalloc(nr ? nr : 1, sizeof(*out->links));
	for (size_t i = 0; i < nr;) {
		size_t j = i;
		while (j < nr && r[j].a == r[i].a && r[j].b == r[i].b)
			j++;
		struct hs_drop_link *g = &out->links[out->n++];
		drop_group(g, r + i, j - i, e, ne, out->window_start, out->window_end);
		int d = dir_slot(topo, lm, g->a, g->b);
		g->crossed = d >= 0 ? out->crossed[d] : 0;
		i = j;
	}
	qsort(out->links, out->n, sizeof(*out->links), cmp_drop_link);
	free(lm);
	free(r);
	free(e);
}

void hs_drops_free(struct hs_drops *d)
{
	free(d->links);
	free(d->crossed);
	memset(d, 0, sizeof(*d));
}

/* ---- loops ----------------------------------------------------------------- */

/* known switches by index, then unknown ones by address */
static int cmp_node(const struct hs_hop *x, const struct hs_hop *y)
{
	if ((x->sw >= 0) != (y->sw >= 0))
		return x->sw >= 0 ? -1 : 1;
	if (x->sw >= 0)
		return cmp_int(x->sw, y->sw);
	return cmp_addr(&x->addr, &y->addr);
}

static bool same_node(const struct hs_hop *x, const struct hs_hop *y)
{
	return cmp_node(x, y) == 0;
}

/* the cycle of a trace into c (rotated); its length, 0 when no switch repeats */
static int trace_cycle(const struct hs_trace *t, struct hs_hop *c)
{
	for (int j = 1; j < t->nhops; j++) {
		for (int i = 0; i < j; i++) {
			if (!same_node(&t->hops[i], &t->hops[j]))
				continue;
			int n = j - i, lo = 0;
			for (int k = 1; k < n; k++)
				if (cmp_node(&t->hops[i + k], &t->hops[i + lo]) < 0)
					lo = k;
			for (int k = 0; k < n; k++) {
				memset(&c[k], 0, sizeof(c[k]));
				c[k].sw = t->hops[i + (lo + k) % n].sw;
				c[k].addr = t->hops[i + (lo + k) % n].addr;
			}
			return n;
		}
	}
	return 0;
}

struct lrec {
	size_t loop;
	struct hs_flowkey key;
};

static int cmp_lrec(const void *x, const void *y)
{
	const struct lrec *p = x, *q = y;

	if (p->loop != q->loop)
		return p->loop < q->loop ? -1 : 1;
	return hs_an_flowkey_cmp(&p->key, &q->key);
}

static int cmp_loop(const void *x, const void *y)
{
	const struct hs_loop *p = x, *q = y;

	if (p->traces != q->traces)
		return p->traces > q->traces ? -1 : 1;
	return cmp_u64(p->first_ns, q->first_ns);
}

void hs_an_loops(const struct hs_trace *const *t, size_t n, struct hs_loops *out)
{
	struct hs_hop c[HS_TRACE_MAX_HOPS];
	size_t cap = 0;
	struct lrec *r = hs_xcalloc(n ? n : 1, sizeof(*r));
	size_t nr = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		int len = trace_cycle(t[i], c);
		if (len == 0)
			continue;
		size_t l;
		for (l = 0; l < out->n; l++) {
			const struct hs_loop *x = &out->loops[l];
			bool eq = x->n == len;
			for (int k = 0; k < len && eq; k++)
				eq = same_node(&x->sw[k], &c[k]);
			if (eq)
				break;
		}
		uint64_t ts = hs_an_trace_ts(t[i]);
		if (l == out->n) {
			if (out->n == cap) {
				cap = cap ? 2 * cap : 8;
				out->loops = realloc(out->loops, cap * sizeof(*out->loops));
				if (!out->loops)
					abort();
			}
			struct hs_loop *x = &out->loops[out->n++];
			memset(x, 0, sizeof(*x));
			x->n = len;
			memcpy(x->sw, c, (size_t)len * sizeof(c[0]));
			x->first_ns = ts;
			x->trace_id = t[i]->id;
			x->dst = t[i]->key.dst;
		}
		struct hs_loop *x = &out->loops[l];
		x->traces++;
		if (ts < x->first_ns) {
			x->first_ns = ts;
			x->trace_id = t[i]->id;
			x->dst = t[i]->key.dst;
		}
		if (ts > x->last_ns)
			x->last_ns = ts;
		r[nr].loop = l;
		r[nr].key = t[i]->key;
		nr++;
	}
	qsort(r, nr, sizeof(*r), cmp_lrec);
	for (size_t i = 0; i < nr; i++)
		if (i == 0 || r[i].loop != r[i - 1].loop || !hs_flowkey_eq(&r[i].key, &r[i - 1].key))
			out->loops[r[i].loop].flows++;
	free(r);
	if (out->n)
		qsort(out->loops, out->n, sizeof(*out->loops), cmp_loop);
}

void hs_loops_free(struct hs_loops *l)
{
	free(l->loops);
	memset(l, 0, sizeof(*l));
}

/* ---- latency --------------------------------------------------------------- */

int64_t hs_an_percentile(const int64_t *v, size_t n, double p)
{
	if (n == 0)
		return 0;
	double r = ceil(p / 100.0 * (double)n);
	size_t k = r < 1 ? 1 : (size_t)r;
	return v[(k > n ? n : k) - 1];
}

struct nodes {
	struct hs_hop *v;
	size_t n, cap;
};

static int node_id(struct nodes *ns, const struct hs_hop *h)
{
	for (size_t i = 0; i < ns->n; i++)
		if (same_node(&ns->v[i], h))
			return (int)i;
	if (ns->n == ns->cap) {
		ns->cap = ns->cap ? 2 * ns->cap : 16;
		ns->v = realloc(ns->v, ns->cap * sizeof(*ns->v));
		if (!ns->v)
			abort();
	}
	memset(&ns->v[ns->n], 0, sizeof(ns->v[0]));
	ns->v[ns->n].sw = h->sw;
	ns->v[ns->n].addr = h->addr;
	return (int)ns->n++;
}

struct lsample {
	int a, b;
	int64_t ns;
	uint64_t trace;
};

static int cmp_lsample(const void *x, const void *y)
{
	const struct lsample *p = x, *q = y;
	int c = cmp_int(p->a, q->a);

	if (c || (c = cmp_int(p->b, q->b)) != 0)
		return c;
	return p->ns < q->ns ? -1 : p->ns > q->ns;
}

static int cmp_lsample_hop(const void *x, const void *y)
{
	const struct lsample *p = x, *q = y;
	int c = cmp_int(p->a, q->a);

	return c ? c : (p->ns < q->ns ? -1 : p->ns > q->ns);
}

static int cmp_lat_stat(const void *x, const void *y)
{
	const struct hs_lat_stat *p = x, *q = y;

	if (p->p99 != q->p99)
		return p->p99 > q->p99 ? -1 : 1;
	return p->count > q->count ? -1 : p->count < q->count;
}

static int cmp_outlier(const void *x, const void *y)
{
	const struct hs_lat_outlier *p = x, *q = y;

	if (p->ns != q->ns)
		return p->ns > q->ns ? -1 : 1;
	return cmp_u64(p->trace_id, q->trace_id);
}

static void fill_stat(struct hs_lat_stat *st, const struct lsample *s, size_t n, int64_t *buf)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = s[i].ns;
	st->count = (uint32_t)n;
	st->p25 = hs_an_percentile(buf, n, 25);
	st->p50 = hs_an_percentile(buf, n, 50);
	st->p75 = hs_an_percentile(buf, n, 75);
	st->p90 = hs_an_percentile(buf, n, 90);
	st->p99 = hs_an_percentile(buf, n, 99);
	st->max = n ? buf[n - 1] : 0;
	st->fence = 0;
	if (n >= HS_LAT_MIN_SAMPLES) {
		int64_t tukey = st->p75 + 3 * (st->p75 - st->p25);
		st->fence = tukey > 2 * st->p50 ? tukey : 2 * st->p50;
	}
}

void hs_an_latency(const struct hs_trace *const *t, size_t n, struct hs_latency *out)
{
	struct nodes ns = { 0 };
	size_t cap = 0, k = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++)
		cap += t[i]->nhops ? t[i]->nhops - 1u : 0;
	struct lsample *s = hs_xcalloc(cap ? cap : 1, sizeof(*s));
	struct hs_hop c[HS_TRACE_MAX_HOPS];
	for (size_t i = 0; i < n; i++) {
		if (t[i]->nhops < 2 || trace_cycle(t[i], c) > 0)
			continue;
		for (unsigned h = 1; h < t[i]->nhops; h++) {
			s[k].a = node_id(&ns, &t[i]->hops[h - 1]);
			s[k].b = node_id(&ns, &t[i]->hops[h]);
			s[k].ns = hs_hop_delta(&t[i]->hops[h - 1], &t[i]->hops[h]);
			s[k].trace = t[i]->id;
			k++;
		}
	}
	int64_t *buf = hs_xcalloc(k ? k : 1, sizeof(*buf));

	/* per link, and its outliers */
	qsort(s, k, sizeof(*s), cmp_lsample);
	out->links = hs_xcalloc(k ? k : 1, sizeof(*out->links));
	struct hs_lat_outlier *o = hs_xcalloc(k ? k : 1, sizeof(*o));
	size_t no = 0;
	for (size_t i = 0; i < k;) {
		size_t j = i;
		while (j < k && s[j].a == s[i].a && s[j].b == s[i].b)
			j++;
		struct hs_lat_stat *st = &out->links[out->nlinks++];
		st->a = ns.v[s[i].a];
		st->b = ns.v[s[i].b];
		fill_stat(st, s + i, j - i, buf);
		for (size_t m = i; m < j && st->count >= HS_LAT_MIN_SAMPLES; m++) {
			if (s[m].ns <= st->fence)
				continue;
			o[no].trace_id = s[m].trace;
			o[no].a = st->a;
			o[no].b = st->b;
			o[no].ns = s[m].ns;
			o[no].link_p50 = st->p50;
			o[no].link_fence = st->fence;
			no++;
		}
		i = j;
	}
	qsort(o, no, sizeof(*o), cmp_outlier);
	out->outliers_total = no;
	out->noutliers = no < HS_LAT_MAX_OUTLIERS ? no : HS_LAT_MAX_OUTLIERS;
	out->outliers = o;

	/* per hop: everything leaving the switch */
	qsort(s, k, sizeof(*s), cmp_lsample_hop);
	out->hops = hs_xcalloc(ns.n ? ns.n : 1, sizeof(*out->hops));
	for (size_t i = 0; i < k;) {
		size_t j = i;
		while (j < k && s[j].a == s[i].a)
			j++;
		struct hs_lat_stat *st = &out->hops[out->nhops++];
		st->a = ns.v[s[i].a];
		st->b.sw = -1;
		fill_stat(st, s + i, j - i, buf);
		i = j;
	}
	qsort(out->links, out->nlinks, sizeof(*out->links), cmp_lat_stat);
	qsort(out->hops, out->nhops, sizeof(*out->hops), cmp_lat_stat);
	free(buf);
	free(s);
	free(ns.v);
}

void hs_latency_free(struct hs_latency *l)
{
	free(l->hops);
	free(l->links);
	free(l->outliers);
	memset(l, 0, sizeof(*l));
}

/* ---- ECMP ------------------------------------------------------------------ */

double hs_an_imbalance(const double *share, int n)
{
	double sum = 0, max = 0;

	if (n < 2)
		return 0;
	for (int i = 0; i < n; i++) {
		sum += share[i];
		if (share[i] > max)
			max = share[i];
	}
	if (sum <= 0)
		return 0;
	return max / (sum / n) - 1.0;
}

struct erec {
	int leaf, nh;
	struct hs_flowkey key;
	uint32_t len;
};

static int cmp_erec(const void *x, const void *y)
{
	const struct erec *p = x, *q = y;
	int c = cmp_int(p->leaf, q->leaf);

	if (c || (c = cmp_int(p->nh, q->nh)) != 0)
		return c;
	return hs_an_flowkey_cmp(&p->key, &q->key);
}

static int cmp_group(const void *x, const void *y)
{
	const struct hs_ecmp_group *p = x, *q = y;

	if (p->imbalance != q->imbalance)
		return p->imbalance > q->imbalance ? -1 : 1;
	return cmp_int(p->leaf, q->leaf);
}

static struct hs_ecmp_nh *group_nh(struct hs_ecmp_group *g, int sw)
{
	for (int i = 0; i < g->n; i++)
		if (g->nh[i].sw == sw)
			return &g->nh[i];
	if (g->n == HS_ECMP_MAX_NH)
		return NULL;
	memset(&g->nh[g->n], 0, sizeof(g->nh[0]));
	g->nh[g->n].sw = sw;
	return &g->nh[g->n++];
}

void hs_an_ecmp(const struct hs_trace *const *t, size_t n, const struct hs_topo *topo, int sw,
		uint64_t since_ns, double threshold, struct hs_ecmp *out)
{
	memset(out, 0, sizeof(*out));
	if (!topo || sw < 0 || sw >= topo->nsw || n == 0)
		return;
	struct erec *r = hs_xcalloc(n, sizeof(*r));
	size_t nr = 0;
	for (size_t i = 0; i < n; i++) {
		const struct hs_trace *x = t[i];
		if (!x->nhops || hs_an_trace_ts(x) < since_ns)
			continue;
		int leaf = hs_topo_leaf_for(topo, &x->key.dst);
		if (leaf < 0 || leaf == sw)
			continue;
		for (unsigned h = 0; h + 1 < x->nhops; h++) {
			if (x->hops[h].sw != sw)
				continue;
			int nh = x->hops[h + 1].sw;
			if (nh >= 0 && nh != sw) {
				r[nr].leaf = leaf;
				r[nr].nh = nh;
				r[nr].key = x->key;
				r[nr].len = x->len;
				nr++;
			}
			break;	/* the first visit only */
		}
	}
	qsort(r, nr, sizeof(*r), cmp_erec);

	size_t cap = 0;
	for (size_t i = 0; i < nr;) {
		size_t j = i;
		while (j < nr && r[j].leaf == r[i].leaf)
			j++;
		if (out->n == cap) {
			cap = cap ? 2 * cap : 8;
			out->groups = realloc(out->groups, cap * sizeof(*out->groups));
			if (!out->groups)
				abort();
		}
		struct hs_ecmp_group *g = &out->groups[out->n];
		memset(g, 0, sizeof(*g));
		g->sw = sw;
		g->leaf = r[i].leaf;
		int cand[HS_ECMP_MAX_NH];
		int nc = hs_topo_next_hops(topo, sw, g->leaf, cand, HS_ECMP_MAX_NH);
		for (int c = 0; c < nc; c++)
			group_nh(g, cand[c]);
		for (size_t m = i; m < j; m++) {
			struct hs_ecmp_nh *e = group_nh(g, r[m].nh);
			if (!e)
				continue;
			bool new_flow = m == i || r[m].nh != r[m - 1].nh ||
					!hs_flowkey_eq(&r[m].key, &r[m - 1].key);
			e->flows += new_flow;
			e->traces++;
			e->bytes += r[m].len;
			g->flows += new_flow;
			g->traces++;
			g->bytes += r[m].len;
		}
		i = j;
		if (g->n < 2)
			continue;	/* one way only: not an ECMP group */
		double fs[HS_ECMP_MAX_NH], bs[HS_ECMP_MAX_NH];
		for (int c = 0; c < g->n; c++) {
			g->nh[c].flow_share = g->flows ? (double)g->nh[c].flows / g->flows : 0;
			g->nh[c].byte_share = g->bytes ? (double)g->nh[c].bytes / (double)g->bytes : 0;
			fs[c] = g->nh[c].flow_share;
			bs[c] = g->nh[c].byte_share;
		}
		g->imbalance = hs_an_imbalance(fs, g->n);
		g->byte_imbalance = hs_an_imbalance(bs, g->n);
		/* too few flows to tell a skew from chance: two per next hop at least */
		g->flagged = g->imbalance > threshold && g->flows >= 2u * (unsigned)g->n;
		out->n++;
	}
	free(r);
	if (out->n)
		qsort(out->groups, out->n, sizeof(*out->groups), cmp_group);
}

void hs_ecmp_free(struct hs_ecmp *e)
{
	free(e->groups);
	memset(e, 0, sizeof(*e));
}

/* ---- 007 blame ------------------------------------------------------------- */

struct brec {
	uint64_t epoch;
	const struct hs_trace *t;
};

static int cmp_brec(const void *x, const void *y)
{
	const struct brec *p = x, *q = y;
	int c = cmp_u64(p->epoch, q->epoch);

	if (c || (c = hs_an_flowkey_cmp(&p->t->key, &q->t->key)) != 0)
		return c;
	if (p->t->seq != q->t->seq)
		return p->t->seq < q->t->seq ? -1 : 1;
	if (p->t->tcp_flags != q->t->tcp_flags)
		return p->t->tcp_flags < q->t->tcp_flags ? -1 : 1;
	if (p->t->len != q->t->len)
		return p->t->len < q->t->len ? -1 : 1;
	return cmp_u64(p->t->id, q->t->id);
}

struct vote {
	uint64_t epoch;
	int link;
	double v;
	struct hs_flowkey key;
};

static int cmp_vote(const void *x, const void *y)
{
	const struct vote *p = x, *q = y;
	int c = cmp_u64(p->epoch, q->epoch);

	if (c || (c = cmp_int(p->link, q->link)) != 0)
		return c;
	return hs_an_flowkey_cmp(&p->key, &q->key);
}

static int cmp_blame_link(const void *x, const void *y)
{
	const struct hs_blame_link *p = x, *q = y;

	if (p->votes != q->votes)
		return p->votes > q->votes ? -1 : 1;
	if (p->flows != q->flows)
		return p->flows > q->flows ? -1 : 1;
	if (p->a != q->a)
		return cmp_int(p->a, q->a);
	return cmp_int(p->b, q->b);
}

static int add_link(const struct hs_topo *topo, const int *lm, int a, int b, int *links, int n)
{
	if (a < 0 || b < 0 || a == b || a >= topo->nsw || b >= topo->nsw)
		return n;
	int l = lm[(size_t)a * (size_t)topo->nsw + (size_t)b];
	if (l < 0)
		return n;
	for (int i = 0; i < n; i++)
		if (links[i] == l)
			return n;
	links[n++] = l;
	return n;
}

#define PATH_MAX_LINKS (HS_TRACE_MAX_HOPS + 1)

/* distinct topology links of a trace's path, the expected next one of a drop included */
static int trace_links(const struct hs_topo *topo, const int *lm, const struct hs_trace *t,
		       const struct edge *e, size_t ne, int *links)
{
	int n = 0;

	for (unsigned h = 1; h < t->nhops; h++)
		n = add_link(topo, lm, t->hops[h - 1].sw, t->hops[h].sw, links, n);
	if (t->outcome == HS_OUT_DROPPED && t->nhops)
		n = add_link(topo, lm, t->hops[t->nhops - 1].sw, resolve_next(t, e, ne), links, n);
	return n;
}

/* the links of the path cfg->path gives for a flow */
static int fallback_links(const struct hs_topo *topo, const int *lm,
			  const struct hs_blame_cfg *cfg, const struct hs_flowkey *key, int *links)
{
	int sw[PATH_MAX_LINKS + 1], n = 0;
	int ns = cfg->path(cfg->path_arg, key, sw, PATH_MAX_LINKS + 1);

	if (ns > PATH_MAX_LINKS + 1)
		ns = PATH_MAX_LINKS + 1;
	for (int h = 1; h < ns; h++)
		n = add_link(topo, lm, sw[h - 1], sw[h], links, n);
	return n;
}

static bool is_retransmission(const struct hs_trace *x, const struct hs_trace *y)
{
	if (x->seq != y->seq || x->tcp_flags != y->tcp_flags || x->len != y->len)
		return false;
	return (x->tcp_flags & (TCP_SYN | TCP_FIN)) || x->len > HEADER_ONLY_MAX;
}

void hs_an_blame(const struct hs_trace *const *t, size_t n, const struct hs_topo *topo,
		 const struct hs_blame_cfg *cfg, struct hs_blame *out)
{
	uint64_t epoch_ns = cfg && cfg->epoch_ns ? cfg->epoch_ns : HS_BLAME_DEFAULT_EPOCH;
	double min_share = cfg && cfg->min_share >= 0 ? cfg->min_share : HS_BLAME_DEFAULT_MIN_SHARE;
	double k = cfg && cfg->k >= 0 ? cfg->k : HS_BLAME_DEFAULT_K;

	memset(out, 0, sizeof(*out));
	out->epoch_ns = epoch_ns;
	if (!topo || n == 0)
		return;

	struct brec *r = hs_xcalloc(n, sizeof(*r));
	size_t nr = 0;
	for (size_t i = 0; i < n; i++) {
		if (t[i]->key.proto != 6 || !t[i]->nhops || (t[i]->flags & HS_TF_PROBE))
			continue;
		r[nr].epoch = hs_an_trace_ts(t[i]) / epoch_ns;
		r[nr].t = t[i];
		nr++;
	}
	qsort(r, nr, sizeof(*r), cmp_brec);
	size_t ne;
	struct edge *e = build_edges(t, n, &ne);
	int *lm = link_matrix(topo);

	size_t vcap = 64, nv = 0, ecap = 0;
	struct vote *v = hs_xcalloc(vcap, sizeof(*v));
	for (size_t i = 0; i < nr;) {
		size_t j = i;
		while (j < nr && r[j].epoch == r[i].epoch &&
		       hs_flowkey_eq(&r[j].t->key, &r[i].t->key))
			j++;
		/* a new epoch */
		if (out->nepochs == 0 || out->epochs[out->nepochs - 1].start != r[i].epoch * epoch_ns) {
			if (out->nepochs == ecap) {
				ecap = ecap ? 2 * ecap : 4;
				out->epochs = realloc(out->epochs, ecap * sizeof(*out->epochs));
				if (!out->epochs)
					abort();
			}
			memset(&out->epochs[out->nepochs], 0, sizeof(out->epochs[0]));
			out->epochs[out->nepochs++].start = r[i].epoch * epoch_ns;
		}
		struct hs_blame_epoch *ep = &out->epochs[out->nepochs - 1];
		ep->flows++;
		bool retx = false;
		for (size_t m = i + 1; m < j && !retx; m++)
			retx = is_retransmission(r[m - 1].t, r[m].t);
		if (retx) {
			ep->retx_flows++;
			int best[PATH_MAX_LINKS], cur[PATH_MAX_LINKS], nb = 0;
			for (size_t m = i; m < j; m++) {
				int nc = trace_links(topo, lm, r[m].t, e, ne, cur);
				if (nc > nb) {
					nb = nc;
					memcpy(best, cur, (size_t)nc * sizeof(int));
				}
			}
			if (nb == 0 && cfg && cfg->path)
				nb = fallback_links(topo, lm, cfg, &r[i].t->key, best);
			if (nb == 0)
				ep->no_path++;
			for (size_t m = i; m < j; m++)
				if (r[m].t->outcome == HS_OUT_LOOPED) {
					ep->retx_looped++;
					break;
				}
			for (int l = 0; l < nb; l++) {
				if (nv == vcap) {
					vcap *= 2;
					v = realloc(v, vcap * sizeof(*v));
					if (!v)
						abort();
				}
				v[nv++] = (struct vote){ r[i].epoch, best[l], 1.0 / nb, r[i].t->key };
			}
		}
		i = j;
	}
	free(lm);
	free(e);
	free(r);

	qsort(v, nv, sizeof(*v), cmp_vote);
	out->links = hs_xcalloc(nv ? nv : 1, sizeof(*out->links));
	out->flows = hs_xcalloc(nv ? nv : 1, sizeof(*out->flows));
	size_t ei = 0;
	for (size_t i = 0; i < nv;) {
		while (out->epochs[ei].start != v[i].epoch * epoch_ns)
			ei++;
		struct hs_blame_epoch *ep = &out->epochs[ei];
		ep->link_off = out->nlinks;
		size_t j = i;
		for (; j < nv && v[j].epoch == v[i].epoch;) {
			size_t m = j;
			struct hs_blame_link *bl = &out->links[out->nlinks++];
			const struct hs_link *tl = &topo->links[v[j].link];
			bl->a = tl->a < tl->b ? tl->a : tl->b;
			bl->b = tl->a < tl->b ? tl->b : tl->a;
			bl->flow_off = out->nflows;
			while (m < nv && v[m].epoch == v[j].epoch && v[m].link == v[j].link) {
				bl->votes += v[m].v;
				bl->flows++;
				out->flows[out->nflows++] = v[m].key;
				m++;
			}
			ep->total += bl->votes;
			ep->nlinks++;
			j = m;
		}
		/* noise: every other topology link's votes, zeros included */
		double s = 0, q = 0;
		struct hs_blame_link *bl = out->links + ep->link_off;
		for (size_t m = 0; m < ep->nlinks; m++) {
			s += bl[m].votes;
			q += bl[m].votes * bl[m].votes;
		}
		for (size_t m = 0; m < ep->nlinks; m++) {
			double x = bl[m].votes;
			bool ok = x >= min_share * s && x > 0;
			bl[m].fence = min_share * s;
			if (topo->nlinks > 1) {
				double L = topo->nlinks - 1;
				double mean = (s - x) / L;
				double var = (q - x * x) / L - mean * mean;
				double noise = mean + k * sqrt(var > 0 ? var : 0);
				ok = ok && x > noise;
				if (noise > bl[m].fence)
					bl[m].fence = noise;
			}
			bl[m].reported = ok;
		}
		qsort(bl, ep->nlinks, sizeof(*bl), cmp_blame_link);
		i = j;
	}
	free(v);
}

void hs_blame_free(struct hs_blame *b)
{
	free(b->epochs);
	free(b->links);
	free(b->flows);
	memset(b, 0, sizeof(*b));
}
