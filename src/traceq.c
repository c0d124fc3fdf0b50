/* traceq.c - the closed traces that match the 'traces' filters (traceq.h) */
#include <stdlib.h>

#include "traceq.h"

static bool trace_matches(const struct hs_topo *topo, const struct hs_trace_query *q,
			  const struct hs_trace *t, uint64_t newest)
{
	if (q->by_outcome && t->outcome != q->outcome)
		return false;
	if (q->by_flow) {
		bool src = hs_addr_eq(&t->key.src, &q->addr) &&
			   (!q->has_port || t->key.sport == q->port);
		bool dst = hs_addr_eq(&t->key.dst, &q->addr) &&
			   (!q->has_port || t->key.dport == q->port);
		if (!src && !dst)
			return false;
	}
	if (q->by_switch) {
		bool on = false;
		for (int i = 0; i < t->nhops && !on; i++) {
			const struct hs_hop *h = &t->hops[i];
			on = q->sw >= 0 ? (h->sw == q->sw || (topo &&
				hs_addr_eq(&h->addr, &topo->sw[q->sw].mirror)))
					: hs_addr_eq(&h->addr, &q->sw_addr);
		}
		if (!on)
			return false;
	}
	if (q->by_since) {
		uint64_t ts = t->nhops ? t->hops[t->nhops - 1].ts_ns : 0;
		if (newest > q->since_ns && ts < newest - q->since_ns)
			return false;
	}
	return true;
}

static int newest_first(const void *x, const void *y)
{
	return hs_trace_cmp_newest(*(const struct hs_trace *const *)x,
				   *(const struct hs_trace *const *)y);
}

size_t hs_trace_select(const struct hs_tracer *tr, const struct hs_topo *topo,
		       struct hs_trace_query *q, const struct hs_trace ***out)
{
	struct hs_tracer_stats st;

	*out = NULL;
	if (!tr)
		return 0;
	hs_tracer_get_stats(tr, &st);
	size_t max = st.closed < HS_TRACES_SCAN_MAX ? (size_t)st.closed : HS_TRACES_SCAN_MAX;
	const struct hs_trace **all = hs_xcalloc(max ? max : 1, sizeof(*all));
	size_t n = hs_tracer_recent(tr, all, max);
	uint64_t newest = 0;
	for (size_t i = 0; i < n; i++)
		if (all[i]->nhops && all[i]->hops[all[i]->nhops - 1].ts_ns > newest)
			newest = all[i]->hops[all[i]->nhops - 1].ts_ns;

	q->matched = 0;
	q->scan_cut = n < st.closed;
	for (size_t i = 0; i < n; i++)
		if (trace_matches(topo, q, all[i], newest))
			all[q->matched++] = all[i];
	/* the newest by their time, which is not the order they closed in */
	qsort(all, q->matched, sizeof(*all), newest_first);
	*out = all;
	return q->matched < q->limit ? q->matched : (size_t)q->limit;
}
