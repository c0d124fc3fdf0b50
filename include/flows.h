/* flows.h - per-flow counters, fed by closed traces */
#ifndef HS_FLOWS_H
#define HS_FLOWS_H

#include "hs.h"
#include "tracer.h"

struct hs_flow {
	uint64_t id;		/* 1-based, in order of first sight */
	struct hs_flowkey key;
	uint64_t first_ns, last_ns;
	uint64_t packets, bytes;	/* original packets (one per trace) */
	uint32_t syn, fin, rst;
	uint32_t dropped, looped;	/* traces with that outcome */
	bool dirty;		/* changed since last written to history */
	int64_t row;		/* its history row this session, 0 before the first write */
};
#define HS_FLOW_ROW_QUEUED (-1)	/* row: its first write waits in the history's batch */

struct hs_flowtab *hs_flowtab_new(size_t max);
void hs_flowtab_free(struct hs_flowtab *ft);
/* its index backed with memory now (a few flows touch all of it, at
 * random); the flows themselves are backed as the table fills */
void hs_flowtab_populate(struct hs_flowtab *ft);
/* account one closed trace (found by its key_hash); NULL when the table
 * is full (counted) */
struct hs_flow *hs_flowtab_add_trace(struct hs_flowtab *ft, const struct hs_trace *t);
/* Start loading what accounting the traces of the n flows of s (as
 * hs_tracer_cfg.on_soon hands them) will touch: a flow's index entry
 * (soon false), then, once that is in, the flow (soon true) */
void hs_flowtab_prefetch(const struct hs_flowtab *ft, const struct hs_soon *s, unsigned n);
size_t hs_flowtab_count(const struct hs_flowtab *ft);
/* how many flows the table holds, and the traces of flows it could not
 * keep since it filled */
size_t hs_flowtab_max(const struct hs_flowtab *ft);
uint64_t hs_flowtab_overflow(const struct hs_flowtab *ft);
/* iterate in order of first sight; i from 0 */
struct hs_flow *hs_flowtab_at(struct hs_flowtab *ft, size_t i);
void hs_flowtab_clear(struct hs_flowtab *ft);

#endif
