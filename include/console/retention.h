/* retention.h - the history's retention, enforced in the background
 *
 * The bounds live in the history (hs_store_retention); a timer looks at
 * them every minute while the history is open, and removes what is past
 * them a bounded step per loop turn, so capture and the prompt go on.
 */
#ifndef HS_RETENTION_H
#define HS_RETENTION_H

#include <stdbool.h>
#include <stdint.h>
#include "store.h"

struct hs_ctx;

void hs_retention_start(struct hs_ctx *ctx);	/* arm the timer (unreferenced) */
void hs_retention_stop(struct hs_ctx *ctx);
/* run a whole pass now; Ctrl-C stops it between steps (what went, went).
 * 0, 1 when interrupted, -1 with the error printed */
int hs_retention_pass(struct hs_ctx *ctx, struct hs_prune *res);
/* the last pass that removed something: false when none did yet */
bool hs_retention_last(struct hs_ctx *ctx, struct hs_prune *res, uint64_t *wall_ns);
/* "1w", "36h", "90m", "45s": the age in its largest whole unit (7d is
 * "1w", as 'set retention' shows it) */
const char *hs_fmt_age(uint64_t ns, char *buf, size_t len);

#endif
