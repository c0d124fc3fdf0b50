/* stats.h - 'stats' on the running capture: the pipeline's hooks
 *
 * When no stats are running ctx->stats is NULL and each hook costs the
 * caller one predictable branch (if (ctx->stats) ...).
 */
#ifndef HS_STATS_H
#define HS_STATS_H

#include "decode.h"
#include "tracer.h"

struct hs_stats;

/* a decoded copy the pipeline keeps (its bytes are still there) */
void hs_stats_packet(struct hs_stats *s, const struct hs_pkt *p);
/* a trace closed */
void hs_stats_trace(struct hs_stats *s, const struct hs_trace *t);
/* the capture stopped, its open traces closed: the last windows go out */
void hs_stats_capture_stopped(struct hs_stats *s);

#endif
