/* fabric.h - one fabric's traces from a history many analyzers write
 *
 * Analyzers splitting a fabric's mirror sessions (by pod or by switch)
 * each see part of a packet's copies, and each closes and stores its part
 * as a trace of its own. Read back, the parts of one packet are joined by
 * the packet's identity (5-tuple, IP ID, sequence number, TCP flags,
 * length) within one trace timeout of each other, their hops put in path
 * order (TTL down, then time) and the whole given its outcome from the
 * topology, as one analyzer seeing every copy would have. The history is
 * read through the store's read-only query, on either engine.
 */
#ifndef HS_FABRIC_H
#define HS_FABRIC_H

#include "hs.h"
#include "store.h"
#include "tracer.h"
#include "topo.h"

struct hs_fabric_stats {
	uint64_t stored;	/* stored traces read (with hops) */
	uint64_t traces;	/* traces they make, joined */
	uint64_t joined;	/* of those, traces made of more than one stored part */
};

/* Read the stored traces whose first copy is at since_ns or later, join
 * the parts of one packet (window_ns: the trace timeout) and hand each
 * trace to each(), oldest first. 0, or -1 with err set (nothing handed). */
int hs_fabric_load(struct hs_store *st, const struct hs_topo *topo, uint64_t since_ns,
		   uint64_t window_ns, void (*each)(void *arg, const struct hs_trace *t),
		   void *arg, struct hs_fabric_stats *fs, char *err, size_t errlen);

#endif
