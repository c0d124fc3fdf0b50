/* traces.h - the 'traces' filters as typed and traces written as JSON,
 * shared by the verbs that take them (traces, export); the selection is the
 * engine's (traceq.h) */
#ifndef HS_TRACES_H
#define HS_TRACES_H

#include "hs.h"
#include "out.h"
#include "topo.h"
#include "traceq.h"
#include "tracer.h"

struct hs_ctx;

/* one "KEY VALUE" filter; 1 taken, 0 not a filter key, -1 bad value (error printed) */
int hs_trace_query_arg(struct hs_ctx *ctx, struct hs_trace_query *q, const char *k,
		       const char *v);
/* one trace as a row of 'traces': its line in text, its object in JSON;
 * with type, a leading "type" key. session is the history session the
 * trace belongs to (0 none): "id" is the trace's number in it, "trace" the
 * number as shown and taken, "S:N". */
void hs_trace_row(struct hs_out *o, const struct hs_topo *topo, int64_t session,
		  const char *type, const struct hs_trace *t);

#endif
