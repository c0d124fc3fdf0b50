/* planck.h - rates and alerts on the pipeline: closed traces feed the
 * estimator, the alerts are evaluated every HS_ALERT_TICK_NS of capture
 * time, and what fires is published as an event (HS_EV_ALERT, for the
 * console to tell) and stored in the history's events table.
 */
#ifndef HS_PLANCK_H
#define HS_PLANCK_H

#include "alert.h"
#include "rates.h"

struct hs_ctx;

struct hs_planck {
	struct hs_rates *rates;
	struct hs_alerts alerts;
	const struct hs_topo *topo;	/* the one rates and alerts were resolved on */
	int topo_nlinks;
	uint64_t next_eval;		/* capture time of the next evaluation */
	uint64_t events, unstored;
};

/* created on first use */
struct hs_planck *hs_planck_get(struct hs_ctx *ctx);
void hs_planck_free(struct hs_ctx *ctx);
/* a new capture session: forget the flows, re-arm the alerts */
void hs_planck_clear(struct hs_ctx *ctx);
/* subscribe to the pipeline (closed traces; a new capture clears): 0, or
 * -1 when it has no room; and stop (frees what was made) */
int hs_planck_subscribe(struct hs_ctx *ctx);
void hs_planck_unsubscribe(struct hs_ctx *ctx);
/* follow a topology change (called before every use) */
void hs_planck_sync(struct hs_ctx *ctx, struct hs_planck *p);
/* the load of topology link l from switch from for watch: "45%" with a
 * speed, "9.8M" without, "~" before it when it rests on few samples, ""
 * when no flow moved bytes over it that way in the window */
void hs_planck_link_load(struct hs_ctx *ctx, int link, int from, char *buf, size_t len);

#endif
