/* follow.h - the fabric view: a history other analyzers write, followed
 *
 * An analyzer whose history other analyzers share sees only its part of
 * the fabric's copies. Once a second it reads what the history gained
 * (hs_fabric_load, from a watermark on), joins the parts of one packet
 * and adds the traces that hold a part another analyzer stored, or that
 * its own parts alone could not judge (dropped, looped, or only part of a
 * path), to its own traces, as if they had closed here: verbs, analyses
 * and watch feeds have them, the history does not take them again. Its
 * own traces of those kinds wait for the history and are not kept here in
 * the meantime, so every packet is one trace; those it closed before the
 * view turned on go as it does, from where the view starts reading, and
 * whoever kept them as they were published is told (HS_EV_TRACES_REPLACED),
 * and whoever counted each, as it goes (HS_EV_TRACE_WITHDRAWN).
 * What a packet may still gain is left for later: while a capture runs
 * anywhere, the view stops two trace timeouts, the writers' commit
 * interval and their lag short of the newest stored trace (as the
 * analyzers' heartbeats tell it), until no heartbeat told of a newer one
 * for that long and a heartbeat's interval.
 *
 * 'set view auto' (the default) follows where the history is PostgreSQL,
 * this console or daemon captured into it and another analyzer's
 * heartbeat is there; 'fabric' follows any history; 'local' never.
 */
#ifndef HS_FOLLOW_H
#define HS_FOLLOW_H

#include "ctx.h"

const char *hs_view_name(enum hs_view v);
/* "auto", "fabric" or "local": 0, else -1 */
int hs_view_parse(const char *s, enum hs_view *v);

struct hs_follow_status {
	bool on;		/* following now */
	uint64_t others;	/* other analyzers in the history */
	uint64_t others_all;	/* of them, those whose heartbeat says they keep
				 * every trace ('set history all') */
	uint64_t added;		/* traces the view took from the history */
	uint64_t skipped;	/* stored traces it did not read, too far behind
				 * to read them at once, about */
	uint64_t behind_ns;	/* newest stored trace - the view's watermark */
	uint64_t read_until;	/* the watermark: the traces first seen before it
				 * are read (0 before the first read) */
	bool settled;		/* no capture runs: the view is all there is */
	const char *err;	/* the last read's error, NULL none */
	uint64_t unread_ns;	/* the history could not be read for this long (wall
				 * clock since the first read that failed), 0 none */
};

/* made with the pipeline, its timer unreferenced (hs_pipeline_init) */
int hs_follow_init(struct hs_ctx *ctx);
void hs_follow_fini(struct hs_ctx *ctx);
void hs_follow_get(const struct hs_ctx *ctx, struct hs_follow_status *s);
/* what the view holds of the other analyzers' traces, said where its
 * traces are counted: what they store, which their history setting
 * decides (their own default keeps the traces that matter and the parts
 * of paths; 'set history all' every trace), as their heartbeats say it */
const char *hs_follow_others(const struct hs_follow_status *s, char *buf, size_t len);
/* the view is to start again from nothing (a new capture, history load) */
void hs_follow_reset(struct hs_ctx *ctx);
/* a trace closed here: the view takes it from the history instead (it is
 * stored, not kept); false when the trace is the view's own */
bool hs_follow_defers(const struct hs_ctx *ctx, const struct hs_trace *t);
/* the trace being handed on came from the history: not to be stored */
bool hs_follow_feeding(const struct hs_ctx *ctx);

#endif
