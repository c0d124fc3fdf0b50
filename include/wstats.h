/* wstats.h - what a 'stats' run counts, on the pipeline or over a file
 *
 * The records of the copies the analyzer keeps, and one drop for each
 * dropped trace (in the window of its last hop), aggregated in tumbling
 * windows (window.h); with 'where' only those a BPF filter on the inner
 * packet matches (a dropped trace when its last hop matches: on the
 * pipeline the filter runs on a header rebuilt from the hop, so filters on
 * payload bytes never match there). On the running capture it subscribes
 * to the pipeline (subs.h); over a file it is fed frame by frame and joins
 * the copies into traces with a tracer of its own, so drops are known and
 * nothing reaches the pipeline's traces, flows or history. Windows go out
 * through the row callback of cfg.win; showing them is the caller's.
 */
#ifndef HS_WSTATS_H
#define HS_WSTATS_H

#include "window.h"

struct hs_subs;
struct hs_topo;

struct hs_wstats_cfg {
	struct hs_win_cfg win;
	const char *where;		/* NULL or "": every record */
	bool file;			/* fed by hs_wstats_file_frame() */
	uint64_t timeout_ns;		/* a file's trace timeout */
	const struct hs_topo *topo;	/* a file's tracer judges outcomes on it */
};

/* NULL with the filter's error in err */
struct hs_wstats *hs_wstats_new(const struct hs_wstats_cfg *cfg, char *err, size_t errlen);
/* unsubscribes first */
void hs_wstats_free(struct hs_wstats *w);
struct hs_win *hs_wstats_win(struct hs_wstats *w);

/* the running capture: the copies it keeps and its closed traces are
 * counted from now until unsubscribed; 0, or -1 when it has no room */
int hs_wstats_subscribe(struct hs_wstats *w, struct hs_subs *subs);
void hs_wstats_unsubscribe(struct hs_wstats *w);
/* the run ends at capture time until: no more copies are counted, and of
 * the traces still to close (the fabric view's) only the drops before it */
void hs_wstats_end_at(struct hs_wstats *w, uint64_t until);
/* the capture time of the newest record counted */
uint64_t hs_wstats_watermark(const struct hs_wstats *w);

/* over a file: a frame (ok: decoded); the windows that no trace with a hop
 * in them can still close go out. At the end the open traces close and
 * every window goes out. */
void hs_wstats_file_frame(struct hs_wstats *w, const struct hs_pkt *p, bool ok);
void hs_wstats_file_end(struct hs_wstats *w);

#endif
