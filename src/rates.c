/* rates.c - flow rates from sampled TCP sequence numbers, link load (Planck) */
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "rates.h"

/* ---- one flow ---------------------------------------------------------------- */

void hs_rflow_init(struct hs_rflow *f)
{
	/* the ring is written before it is read (n counts it): left as it is */
	memset(f, 0, offsetof(struct hs_rflow, ring));
}

enum hs_rs_kind hs_rflow_sample(struct hs_rflow *f, uint32_t seq, uint64_t ts)
{
	int64_t ext;

	f->samples++;
	if (ts > f->last_ts)
		f->last_ts = ts;
	if (f->samples == 1) {
		/* start well above 0 so retransmissions below the first stay positive */
		ext = (int64_t)1 << 40;
		f->last_raw = seq;
		f->last_ext = ext;
		f->newest = (struct hs_rsample){ ts, ext };
		f->newest_n = 1;
		f->ring[0] = f->newest;
		f->ring_n[0] = 1;
		f->head = 0;
		f->n = 1;
		return HS_RS_FIRST;
	}
	/* serial-number arithmetic: the nearest way round the 32-bit circle */
	ext = f->last_ext + (int32_t)(seq - f->last_raw);
	f->last_raw = seq;
	f->last_ext = ext;
	if (ext == f->newest.seq)
		return HS_RS_SAME;
	if (ext < f->newest.seq) {
		f->retx++;
		return HS_RS_RETX;
	}
	f->newest = (struct hs_rsample){ ts, ext };
	f->newest_n = (uint32_t)f->samples;
	const struct hs_rsample *last = &f->ring[(f->head + f->n - 1) % HS_RATE_SLOTS];
	if (ts >= last->ts + HS_RATE_SLOT_NS) {
		if (f->n == HS_RATE_SLOTS)
			f->head = (uint8_t)((f->head + 1) % HS_RATE_SLOTS);
		else
			f->n++;
		unsigned i = (f->head + f->n - 1) % HS_RATE_SLOTS;
		f->ring[i] = f->newest;
		f->ring_n[i] = f->newest_n;
	}
	return HS_RS_ADVANCE;
}

/* the kept samples in order: the ring, then the newest when the ring does
 * not end with it */
static unsigned npoints(const struct hs_rflow *f)
{
	if (!f->n)
		return 0;
	return f->n + (f->ring[(f->head + f->n - 1) % HS_RATE_SLOTS].seq != f->newest.seq);
}

static const struct hs_rsample *point(const struct hs_rflow *f, unsigned i, uint32_t *count)
{
	if (i == f->n) {
		*count = f->newest_n;
		return &f->newest;
	}
	unsigned k = (f->head + i) % HS_RATE_SLOTS;
	*count = f->ring_n[k];
	return &f->ring[k];
}

void hs_rflow_window(const struct hs_rflow *f, uint64_t now, uint64_t window, struct hs_rwin *w)
{
	uint64_t since = now > window ? now - window : 0;
	const struct hs_rsample *first = NULL, *last = NULL;
	uint32_t first_n = 0, cn;
	unsigned i = npoints(f);

	memset(w, 0, sizeof(*w));
	if (!i)
		return;
	/* newest first, down to the segment that straddles the window's start:
	 * the sequence is taken as linear between two kept samples */
	const struct hs_rsample *cur = point(f, --i, &cn), *prev;
	for (;;) {
		if (cur->ts >= since && cur->ts <= now) {
			if (!last)
				last = cur;
			first = cur;
			first_n = cn;
		}
		if (!i)
			break;
		prev = point(f, --i, &cn);
		uint64_t t0 = prev->ts, t1 = cur->ts;
		double ds = (double)(cur->seq - prev->seq);
		if (t0 >= since && t1 <= now) {
			w->bytes += ds;
		} else if (t1 > t0 && t1 - t0 <= window) {
			/* partly inside, and near enough to interpolate over */
			uint64_t lo = t0 > since ? t0 : since, hi = t1 < now ? t1 : now;
			if (hi > lo)
				w->bytes += ds * (double)(hi - lo) / (double)(t1 - t0);
		}
		if (t0 < since)
			break;
		cur = prev;
	}
	if (first)
		w->samples = (uint32_t)f->samples - first_n + 1;
	else if (f->last_ts >= since && f->last_ts <= now)
		w->samples = (uint32_t)f->samples - f->newest_n;	/* none advanced */
	if (!first || w->samples < HS_RATE_MIN_SAMPLES || last->ts <= first->ts ||
	    last->seq <= first->seq || last->ts - first->ts < window / HS_RATE_MIN_SPAN_DIV)
		return;
	w->has_rate = true;
	w->bps = (double)(last->seq - first->seq) * 8e9 / (double)(last->ts - first->ts);
}

bool hs_rflow_rate(const struct hs_rflow *f, uint64_t now, uint64_t window, double *bps)
{
	struct hs_rwin w;

	hs_rflow_window(f, now, window, &w);
	if (w.has_rate)
		*bps = w.bps;
	return w.has_rate;
}

/* ---- the table ----------------------------------------------------------------- */

struct hs_rates *hs_rates_new(size_t max_flows)
{
	struct hs_rates *r = hs_xcalloc(1, sizeof(*r));

	r->cap = max_flows ? max_flows : HS_RATE_DEFAULT_FLOWS;
	r->flows = hs_xcalloc_big(r->cap, sizeof(*r->flows));
	size_t n = 16;
	while (n < 2 * r->cap)
		n <<= 1;
	r->index = hs_xcalloc(n, sizeof(*r->index));
	r->index_mask = (uint32_t)(n - 1);
	r->hashes = hs_xcalloc(r->cap, sizeof(*r->hashes));
	r->ref = hs_xcalloc(r->cap, sizeof(*r->ref));
	hs_rates_clear(r);
	return r;
}

void hs_rates_free(struct hs_rates *r)
{
	if (!r)
		return;
	hs_free_big(r->flows, r->cap, sizeof(*r->flows));
	free(r->index);
	free(r->hashes);
	free(r->ref);
	free(r->link_bps);
	free(r->link_flows);
	free(r->link_samples);
	free(r->adj_off);
	free(r->adj_sw);
	free(r->adj_link);
	free(r);
}

void hs_rates_clear(struct hs_rates *r)
{
	memset(r->index, 0, ((size_t)r->index_mask + 1) * sizeof(*r->index));
	/* the slots are handed out in order: those past nused were never
	 * used since the last clear (a new table's were never touched, and
	 * are not now: its megabytes are backed as flows come) */
	for (size_t i = 0; i < r->nused; i++)
		hs_rflow_init(&r->flows[i]);
	r->nused = 0;
	memset(r->ref, 0, r->cap);
	r->hand = 0;
	r->nflows = 0;
	r->now = 0;
	r->samples = r->retx = r->evicted = r->not_tcp = 0;
	r->computed_at = r->computed_window = 0;
	memset(r->bin_id, 0, sizeof(r->bin_id));
	memset(r->bin_drops, 0, sizeof(r->bin_drops));
	memset(r->bin_retx, 0, sizeof(r->bin_retx));
	if (r->link_bps) {
		memset(r->link_bps, 0, 2 * (size_t)r->nlinks * sizeof(*r->link_bps));
		memset(r->link_flows, 0, 2 * (size_t)r->nlinks * sizeof(*r->link_flows));
		memset(r->link_samples, 0, 2 * (size_t)r->nlinks * sizeof(*r->link_samples));
	}
}

void hs_rates_set_topo(struct hs_rates *r, const struct hs_topo *topo)
{
	free(r->link_bps);
	free(r->link_flows);
	free(r->link_samples);
	free(r->adj_off);
	free(r->adj_sw);
	free(r->adj_link);
	r->link_bps = NULL;
	r->link_flows = r->link_samples = NULL;
	r->adj_off = r->adj_sw = r->adj_link = NULL;
	r->topo = topo;
	r->nlinks = topo ? topo->nlinks : 0;
	if (r->nlinks) {
		size_t nd = 2 * (size_t)r->nlinks;
		r->link_bps = hs_xcalloc(nd, sizeof(*r->link_bps));
		r->link_flows = hs_xcalloc(nd, sizeof(*r->link_flows));
		r->link_samples = hs_xcalloc(nd, sizeof(*r->link_samples));
		/* adjacency: a hop-to-hop lookup looks at one switch's links only */
		r->adj_off = hs_xcalloc((size_t)topo->nsw + 1, sizeof(*r->adj_off));
		r->adj_sw = hs_xcalloc(nd, sizeof(*r->adj_sw));
		r->adj_link = hs_xcalloc(nd, sizeof(*r->adj_link));
		for (int l = 0; l < r->nlinks; l++) {
			r->adj_off[topo->links[l].a + 1]++;
			r->adj_off[topo->links[l].b + 1]++;
		}
		for (int s = 0; s < topo->nsw; s++)
			r->adj_off[s + 1] += r->adj_off[s];
		int *fill = hs_xcalloc((size_t)topo->nsw, sizeof(*fill));
		for (int l = 0; l < r->nlinks; l++) {
			int a = topo->links[l].a, b = topo->links[l].b;
			int ia = r->adj_off[a] + fill[a]++, ib = r->adj_off[b] + fill[b]++;
			r->adj_sw[ia] = b;
			r->adj_link[ia] = 2 * l;	/* a -> b */
			r->adj_sw[ib] = a;
			r->adj_link[ib] = 2 * l + 1;	/* b -> a */
		}
		free(fill);
	}
	for (size_t i = 0; i < r->nused; i++)
		r->flows[i].npath = 0;
}

/* where a lookup of hash h starts, and the tag it compares */
static uint32_t home_of(const struct hs_rates *r, uint64_t h)
{
	return (uint32_t)h & r->index_mask;
}

static struct hs_rflow *find_hashed(const struct hs_rates *r, const struct hs_flowkey *k,
				    uint64_t h)
{
	uint64_t e;

	for (uint32_t i = home_of(r, h); (e = r->index[i]) != 0; i = (i + 1) & r->index_mask)
		if ((uint32_t)(e >> 32) == (uint32_t)h &&
		    hs_flowkey_eq(&r->flows[(uint32_t)e - 1].key, k))
			return &r->flows[(uint32_t)e - 1];
	return NULL;
}

void hs_rates_prefetch(const struct hs_rates *r, const struct hs_soon *s, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		if (s[k].proto != 6)
			continue;
		uint64_t h = s[k].key_hash;
		uint32_t i = home_of(r, h);

		if (!s[k].soon) {
			__builtin_prefetch(&r->index[i], 0);
			continue;
		}
		/* asked for earlier, the index line is in the cache: load the
		 * first 128 bytes (the fields a lookup and a sample touch, on
		 * two or three lines) of the first flow with this tag, at its
		 * home or past it */
		uint64_t e = hs_index_first(r->index, r->index_mask, i, (uint32_t)h);
		if (e)
			hs_prefetch_span(&r->flows[(uint32_t)e - 1], 128);
	}
}

struct hs_rflow *hs_rates_find(const struct hs_rates *r, const struct hs_flowkey *k)
{
	return find_hashed(r, k, hs_flowkey_hash(k));
}

static void hand_step(struct hs_rates *r)
{
	if (++r->hand == r->cap)
		r->hand = 0;
}

/* CLOCK: pass over flows sampled since the last pass (clearing their mark)
 * to the first one that was not */
static void sweep(struct hs_rates *r)
{
	while (r->ref[r->hand]) {
		r->ref[r->hand] = 0;
		hand_step(r);
	}
}

/* evict the flow the hand comes to first unsampled; its slot */
static uint32_t evict_one(struct hs_rates *r)
{
	sweep(r);
	uint32_t i = (uint32_t)r->hand;

	hand_step(r);
	/* the next eviction's flow and index entry, found now (what a sample
	 * marks before then the sweep passes again), and started on their way
	 * to the cache */
	sweep(r);
	hs_prefetch_span(&r->flows[r->hand], offsetof(struct hs_rflow, ring));
	__builtin_prefetch(&r->index[home_of(r, r->hashes[r->hand])], 1);
	hs_index_remove(r->index, r->index_mask, (uint64_t)(uint32_t)r->hashes[i] << 32 | (i + 1));
	r->flows[i].used = false;
	r->nflows--;
	r->evicted++;
	return i;
}

static void bin_add(struct hs_rates *r, uint64_t ts, bool drop)
{
	uint64_t id = ts / HS_RATE_BIN_NS + 1;	/* 0 marks an unused bin */
	size_t b = (size_t)(id % HS_RATE_BINS);

	if (r->bin_id[b] != id) {
		r->bin_id[b] = id;
		r->bin_drops[b] = r->bin_retx[b] = 0;
	}
	if (drop)
		r->bin_drops[b]++;
	else
		r->bin_retx[b]++;
}

static struct hs_rflow *sample_hashed(struct hs_rates *r, const struct hs_flowkey *k, uint64_t h,
				      uint32_t seq, uint64_t ts, const int32_t *path, int npath)
{
	struct hs_rflow *f = find_hashed(r, k, h);

	if (!f) {
		uint32_t i = r->nused < r->cap ? (uint32_t)r->nused++ : evict_one(r);
		uint32_t pos = home_of(r, h);
		while (r->index[pos])
			pos = (pos + 1) & r->index_mask;
		r->index[pos] = (uint64_t)(uint32_t)h << 32 | (i + 1);
		r->hashes[i] = h;
		f = &r->flows[i];
		hs_rflow_init(f);
		f->used = true;
		f->key = *k;
		r->nflows++;
	}
	r->ref[f - r->flows] = 1;
	r->samples++;
	if (ts > r->now)
		r->now = ts;
	if (hs_rflow_sample(f, seq, ts) == HS_RS_RETX) {
		r->retx++;
		bin_add(r, ts, false);
	}
	if (path && npath > 0) {
		if (npath > HS_RATE_MAX_PATH)
			npath = HS_RATE_MAX_PATH;
		memcpy(f->path, path, (size_t)npath * sizeof(*path));
		f->npath = (uint8_t)npath;
	}
	return f;
}

struct hs_rflow *hs_rates_sample(struct hs_rates *r, const struct hs_flowkey *k, uint32_t seq,
				 uint64_t ts, const int32_t *path, int npath)
{
	return sample_hashed(r, k, hs_flowkey_hash(k), seq, ts, path, npath);
}

void hs_rates_drop(struct hs_rates *r, uint64_t ts)
{
	if (ts > r->now)
		r->now = ts;
	bin_add(r, ts, true);
}

int hs_rates_trace_path(const struct hs_rates *r, const struct hs_trace *t, int32_t *path,
			int max)
{
	int n = 0, nsw = r->topo ? r->topo->nsw : 0;

	for (int i = 1; i < t->nhops && n < max && r->adj_off; i++) {
		int a = t->hops[i - 1].sw, b = t->hops[i].sw;
		if (a < 0 || b < 0 || a >= nsw || b >= nsw || a == b)
			continue;
		for (int k = r->adj_off[a]; k < r->adj_off[a + 1]; k++) {
			if (r->adj_sw[k] == b) {
				path[n++] = r->adj_link[k];
				break;
			}
		}
	}
	return n;
}

void hs_rates_on_trace(struct hs_rates *r, const struct hs_trace *t)
{
	uint64_t ts = hs_an_trace_ts(t);

	if (!ts || (t->flags & HS_TF_PROBE))
		return;
	if (ts > r->now)
		r->now = ts;	/* time moves with every trace, TCP or not */
	if (t->outcome == HS_OUT_DROPPED)
		hs_rates_drop(r, ts);
	if (t->key.proto != 6) {
		r->not_tcp++;
		return;
	}
	struct hs_rflow *f = sample_hashed(r, &t->key, t->key_hash, t->seq, ts, NULL, 0);
	/* a flow keeps its path (ECMP hashes the 5-tuple): look again now and then */
	if (r->nlinks && t->nhops > 1 && (!f->npath || f->samples % HS_RATE_PATH_EVERY == 0)) {
		int32_t path[HS_RATE_MAX_PATH];
		int n = hs_rates_trace_path(r, t, path, HS_RATE_MAX_PATH);
		if (n > 0) {
			memcpy(f->path, path, (size_t)n * sizeof(*path));
			f->npath = (uint8_t)n;
		}
	}
}

void hs_rates_compute(struct hs_rates *r, uint64_t now, uint64_t window, double *link_bps,
		      uint32_t *link_flows, uint32_t *link_samples)
{
	if (!link_bps) {
		link_bps = r->link_bps;
		link_flows = r->link_flows;
		link_samples = r->link_samples;
		r->computed_at = now;
		r->computed_window = window;
	}
	if (r->nlinks) {
		memset(link_bps, 0, 2 * (size_t)r->nlinks * sizeof(*link_bps));
		memset(link_flows, 0, 2 * (size_t)r->nlinks * sizeof(*link_flows));
		memset(link_samples, 0, 2 * (size_t)r->nlinks * sizeof(*link_samples));
	}
	for (size_t i = 0; i < r->nused; i++) {
		struct hs_rflow *f = &r->flows[i];
		struct hs_rwin w;
		if (!f->used)
			continue;
		hs_rflow_window(f, now, window, &w);
		f->has_rate = w.has_rate;
		f->bps = w.has_rate ? w.bps : 0;
		f->win_bytes = w.bytes;
		f->win_samples = w.samples;
		if (!(w.bytes > 0))
			continue;
		/* a link carries the bytes its flows moved in the window */
		double bps = w.bytes * 8e9 / (double)window;
		for (int k = 0; k < f->npath; k++) {
			if (f->path[k] < 2 * r->nlinks) {
				link_bps[f->path[k]] += bps;
				link_flows[f->path[k]]++;
				link_samples[f->path[k]] += w.samples;
			}
		}
	}
}

static double per_sec(const struct hs_rates *r, uint64_t now, uint64_t window, bool drops)
{
	uint64_t hi = now / HS_RATE_BIN_NS + 1, lo;
	uint64_t bins = (window + HS_RATE_BIN_NS - 1) / HS_RATE_BIN_NS;
	uint64_t sum = 0;

	if (bins < 1)
		bins = 1;
	if (bins > HS_RATE_BINS)
		bins = HS_RATE_BINS;
	lo = hi >= bins ? hi - bins + 1 : 1;
	for (uint64_t id = lo; id <= hi; id++) {
		size_t b = (size_t)(id % HS_RATE_BINS);
		if (r->bin_id[b] == id)
			sum += drops ? r->bin_drops[b] : r->bin_retx[b];
	}
	return (double)sum * 1e9 / (double)(bins * HS_RATE_BIN_NS);
}

double hs_rates_drops_per_sec(const struct hs_rates *r, uint64_t now, uint64_t window)
{
	return per_sec(r, now, window, true);
}

double hs_rates_retx_per_sec(const struct hs_rates *r, uint64_t now, uint64_t window)
{
	return per_sec(r, now, window, false);
}

bool hs_link_util(const struct hs_topo *topo, int dlink, double bps, double *util)
{
	if (!topo || dlink < 0 || dlink / 2 >= topo->nlinks || !(topo->links[dlink / 2].speed > 0))
		return false;
	*util = bps / topo->links[dlink / 2].speed;
	return true;
}

const char *hs_link_speed_source(const struct hs_topo *topo, int link)
{
	/* the topology is the one source so far: a driver's port speed would
	 * be another */
	if (!topo || link < 0 || link >= topo->nlinks || !(topo->links[link].speed > 0))
		return NULL;
	return "topology";
}

/* ---- the report ------------------------------------------------------------------ */

static int flow_cmp(const void *x, const void *y)
{
	const struct hs_rate_flow *a = x, *b = y;

	if (a->has_rate != b->has_rate)
		return a->has_rate ? -1 : 1;
	if (a->bps != b->bps)
		return a->bps > b->bps ? -1 : 1;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return hs_an_flowkey_cmp(&a->f->key, &b->f->key);
}

static int link_cmp(const void *x, const void *y)
{
	const struct hs_rate_link *a = x, *b = y;

	if (a->bps != b->bps)
		return a->bps > b->bps ? -1 : 1;
	return a->link != b->link ? a->link - b->link : a->a - b->a;
}

void hs_rates_report(struct hs_rates *r, uint64_t window, struct hs_rate_report *out)
{
	size_t nd = 2 * (size_t)r->nlinks;
	double *lb = nd ? hs_xcalloc(nd, sizeof(*lb)) : NULL;
	uint32_t *lf = nd ? hs_xcalloc(nd, sizeof(*lf)) : NULL;
	uint32_t *ls = nd ? hs_xcalloc(nd, sizeof(*ls)) : NULL;

	memset(out, 0, sizeof(*out));
	out->now = r->now;
	out->window = window;
	hs_rates_compute(r, r->now, window, lb, lf, ls);
	out->flows = hs_xcalloc(r->nflows ? r->nflows : 1, sizeof(*out->flows));
	for (size_t i = 0; i < r->nused; i++) {
		const struct hs_rflow *f = &r->flows[i];
		if (!f->used || !(f->has_rate || f->win_bytes > 0))
			continue;
		out->flows[out->nflows++] = (struct hs_rate_flow){ f, f->has_rate, f->bps,
								  f->win_bytes, f->win_samples };
		out->nrated += f->has_rate;
	}
	qsort(out->flows, out->nflows, sizeof(*out->flows), flow_cmp);
	out->links = hs_xcalloc(nd ? nd : 1, sizeof(*out->links));
	for (size_t d = 0; d < nd; d++) {
		if (!lf[d])
			continue;
		const struct hs_link *l = &r->topo->links[d / 2];
		struct hs_rate_link *o = &out->links[out->nlinks++];
		o->link = (int)(d / 2);
		o->a = d % 2 ? l->b : l->a;
		o->b = d % 2 ? l->a : l->b;
		o->bps = lb[d];
		o->flows = lf[d];
		o->samples = ls[d];
		o->has_util = hs_link_util(r->topo, (int)d, lb[d], &o->util);
	}
	qsort(out->links, out->nlinks, sizeof(*out->links), link_cmp);
	free(lb);
	free(lf);
	free(ls);
}

void hs_rate_report_free(struct hs_rate_report *rep)
{
	free(rep->flows);
	free(rep->links);
	memset(rep, 0, sizeof(*rep));
}
