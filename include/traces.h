/* traces.h - selecting closed traces and writing them as JSON, shared by the
 * verbs that take the 'traces' filters (traces, export) */
#ifndef HS_TRACES_H
#define HS_TRACES_H

#include "hs.h"
#include "out.h"
#include "topo.h"
#include "tracer.h"

#define HS_TRACES_SCAN_MAX 65536	/* closed traces looked at, at most */

struct hs_ctx;

/* flow FLOW, switch SW, outcome O, since T, limit N */
struct hs_trace_query {
	bool by_flow, by_switch, by_outcome, by_since;
	struct hs_addr addr;
	bool has_port;
	uint16_t port;
	int sw;			/* topology index, or -1 with sw_addr */
	struct hs_addr sw_addr;
	int outcome;
	uint64_t since_ns;
	uint64_t limit;
	/* filled in by hs_trace_select: every match among the traces scanned,
	 * and whether older closed traces were not scanned (no longer held, or
	 * past HS_TRACES_SCAN_MAX) */
	size_t matched;
	bool scan_cut;
};

/* one "KEY VALUE" filter; 1 taken, 0 not a filter key, -1 bad value (error printed) */
int hs_trace_query_arg(struct hs_ctx *ctx, struct hs_trace_query *q, const char *k,
		       const char *v);
/* the closed traces in memory that match, newest first, at most q->limit;
 * *out is allocated (free it) */
size_t hs_trace_select(struct hs_ctx *ctx, struct hs_trace_query *q,
		       const struct hs_trace ***out);
/* the 'traces --json' object of one trace; with type, a leading "type" key.
 * session is the history session the trace belongs to (0 none): "id" is the
 * trace's number in it, "trace" the number as shown and taken, "S:N". */
void hs_trace_json(struct hs_out *o, const struct hs_topo *topo, int64_t session,
		   const char *type, const struct hs_trace *t);

#endif
