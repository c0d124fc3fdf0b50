/* traces.h - the 'traces' filters as typed, a listing's limit and traces
 * written as rows (src/console/traces.c), shared by the verbs that take them
 * (traces, export, drops, loops, latency, flows, rates); the selection is
 * the engine's (traceq.h) */
#ifndef HS_TRACES_H
#define HS_TRACES_H

#include "hs.h"
#include "out.h"
#include "topo.h"
#include "traceq.h"
#include "tracer.h"

struct hs_ctx;

/* one "KEY VALUE" filter of verb's; 1 taken, 0 not a filter key, -1 bad
 * value (error printed, naming the verb) */
int hs_trace_query_arg(struct hs_ctx *ctx, const char *verb, struct hs_trace_query *q,
		       const char *k, const char *v);
/* the arguments of a listing whose only word is "limit N" (flows, drops,
 * loops, latency): 0 with *limit set (left as it was without one), or -1
 * with the error printed, naming the verb */
int hs_limit_args(struct hs_out *o, const char *verb, int argc, char **argv, uint64_t max,
		  uint64_t *limit);
/* what a listing cut by its limit left out, in text, after its rows:
 * "(SHOWN of TOTAL WHAT; VERB limit N)", "at least" before TOTAL when more
 * may have been left unread; nothing when nothing was cut */
void hs_limit_note(struct hs_out *o, const char *verb, const char *what, size_t shown,
		   size_t total, bool at_least);
/* the flow's 5-tuple: its fields in JSON, "a:p > b:p tcp" in text (textfmt
 * a format of one %s) */
void hs_trace_flow_fields(struct hs_out *o, const struct hs_trace *t, const char *textfmt);
/* a dropped trace's last switch and the ones expected next:
 * " after leaf1, expected next: spine1|spine2" in text; nothing for another */
void hs_trace_dropped_at(struct hs_out *o, const struct hs_topo *topo, const struct hs_trace *t);
/* one trace as a row of 'traces': its line in text, its object in JSON;
 * with type, a leading "type" key. session is the history session the
 * trace belongs to (0 none): "id" is the trace's number in it, "trace" the
 * number as shown and taken, "S:N". */
void hs_trace_row(struct hs_out *o, const struct hs_topo *topo, int64_t session,
		  const char *type, const struct hs_trace *t);

#endif
