/* traceq.h - the closed traces in memory that match the 'traces' filters
 *
 * What 'traces' lists and 'export' writes: flow, switch, outcome, since and
 * limit, over the tracer's ring, newest first.
 */
#ifndef HS_TRACEQ_H
#define HS_TRACEQ_H

#include "hs.h"
#include "topo.h"
#include "tracer.h"

#define HS_TRACES_SCAN_MAX 65536	/* closed traces looked at, at most */

/* flow FLOW, switch SW, outcome O, since T, limit N */
struct hs_trace_query {
	bool by_flow, by_switch, by_outcome, by_since;
	struct hs_addr addr;
	bool has_port;
	uint16_t port;
	int sw;			/* topology index, or -1 with sw_addr */
	struct hs_addr sw_addr;
	int outcome;
	uint64_t since_ns;	/* before the newest trace's last hop */
	uint64_t limit;
	/* filled in by hs_trace_select: every match among the traces scanned,
	 * and whether older closed traces were not scanned (no longer held, or
	 * past HS_TRACES_SCAN_MAX) */
	size_t matched;
	bool scan_cut;
};

/* the closed traces of tr (NULL: none) that match, newest first by their
 * time (hs_trace_cmp_newest), at most
 * q->limit; a switch is also known by its mirror address in topo (may be
 * NULL). *out is allocated (free it), NULL when tr is. */
size_t hs_trace_select(const struct hs_tracer *tr, const struct hs_topo *topo,
		       struct hs_trace_query *q, const struct hs_trace ***out);

#endif
