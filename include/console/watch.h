/* watch.h - the full-screen live view: a model (watchmodel.c, no curses)
 * and the ncurses panes drawn from it (watch.c)
 *
 * The model turns closed traces into rows of text, keeps the display
 * filter, the sort order, selection and scrolling of each pane, the per-link
 * counters and the events log. It knows nothing of terminals, so every rule
 * of the view is testable on its own; the UI only lays out windows, draws
 * the model and turns keys into model calls.
 */
#ifndef HS_WATCH_H
#define HS_WATCH_H

#include "hs.h"
#include "topo.h"
#include "tracer.h"

struct hs_ctx;

/* ---- display filter: the 'traces' verb's words ------------------------------
 *   flow ADDR[:PORT]    either endpoint is ADDR (and PORT, either side)
 *   flow [V6ADDR]:PORT
 *   switch NAME|ADDR    some hop is at the switch (topology name or mirror address)
 *   outcome O           delivered, dropped, looped, unknown or probe
 * Words combine with "and"; an empty text means no filter. */

#define HS_WOUT_PROBE (-2)	/* outcome value meaning "a probe trace" */

struct hs_wfilter {
	bool any;		/* no condition at all */
	bool has_flow, has_port;
	struct hs_addr addr;
	uint16_t port;
	bool has_switch, has_sw_addr;
	char sw[HS_NAME_MAX + 48];
	struct hs_addr sw_addr;	/* when the name is a mirror address */
	bool has_outcome;
	int outcome;		/* enum hs_outcome or HS_WOUT_PROBE */
};

/* 0, or -1 with a message in err (f unchanged) */
int hs_wfilter_parse(const char *text, const struct hs_topo *topo, struct hs_wfilter *f,
		     char *err, size_t errlen);
bool hs_wfilter_match(const struct hs_wfilter *f, const struct hs_trace *t,
		      const struct hs_topo *topo);

/* ---- scrolling list: a cursor and a window of 'height' lines ----------------- */

struct hs_wview {
	size_t count;		/* lines in the list */
	size_t sel;		/* cursor, < count (0 when empty) */
	size_t top;		/* first visible line */
	int height;		/* visible lines, >= 1 */
};

void hs_wview_set(struct hs_wview *v, size_t count, int height);	/* clamps */
void hs_wview_move(struct hs_wview *v, long delta);
void hs_wview_page(struct hs_wview *v, int dir);	/* +1 down, -1 up */
void hs_wview_home(struct hs_wview *v);
void hs_wview_end(struct hs_wview *v);

/* ---- layout ------------------------------------------------------------------ */

#define HS_WATCH_MIN_COLS 60
#define HS_WATCH_MIN_ROWS 15

enum hs_wpane { HS_WP_TRACES, HS_WP_DETAIL, HS_WP_LINKS, HS_WP_EVENTS, HS_WP__COUNT };

struct hs_wrect {
	int y, x, h, w;
};

struct hs_wlayout {
	struct hs_wrect pane[HS_WP__COUNT];	/* boxed: inner size is h-2 by w-2 */
	struct hs_wrect status;			/* last line */
};

/* false when the screen is below the minimum size */
bool hs_wlayout_compute(int cols, int rows, struct hs_wlayout *l);

/* columns of the traces pane for an inner width: fixed ones (time, outcome,
 * latency) keep their width, flow and path share the rest */
enum hs_wcol { HS_WC_TIME, HS_WC_FLOW, HS_WC_PATH, HS_WC_OUTCOME, HS_WC_LATENCY, HS_WC__COUNT };
struct hs_wcolumn {
	const char *title;
	int width;		/* 0: flexible */
	bool right;		/* right-aligned */
};
extern const struct hs_wcolumn hs_wcolumns[HS_WC__COUNT];
/* outcome_cells: the widest outcome of the rows, which that column grows
 * to where there is room (past its usual width, for the names of the
 * analyzers that stored a trace) */
void hs_wcols_layout(int width, int outcome_cells, int widths[HS_WC__COUNT]);

/* copy s into out (size outlen) keeping at most 'cells' display cells,
 * counting one cell per UTF-8 character; returns the cells used */
int hs_wfit(const char *s, int cells, char *out, size_t outlen);
/* the same, ending in ell ("..." or a UTF-8 ellipsis) when s had to be cut */
int hs_wfit_ell(const char *s, int cells, const char *ell, char *out, size_t outlen);
/* an outcome, and the analyzers that stored the trace after it in
 * brackets: cut, the names are cut inside the brackets, the outcome and
 * the closing bracket kept ("dropped [an1+a...]"); else as hs_wfit_ell */
int hs_woutcome_fit(const char *s, int cells, const char *ell, char *out, size_t outlen);
/* a path of names joined by sep in at most 'cells' cells: names left out
 * in the middle for ell, the first and the last kept whole
 * ("leaf1 > spine2 > ... > leaf4"), as many of the others as fit from both
 * ends; cut at the end when even that does not fit */
int hs_wpath_fit(const char *path, const char *sep, const char *ell, int cells, char *out,
		 size_t outlen);

/* ---- rows ------------------------------------------------------------------- */

enum hs_wclass { HS_WCL_NONE, HS_WCL_DELIVERED, HS_WCL_DROPPED, HS_WCL_LOOPED,
		 HS_WCL_PROBE, HS_WCL_UNKNOWN, HS_WCL__COUNT };

struct hs_wrow {
	uint64_t id;
	uint64_t ts_ns;		/* the trace's time (hs_trace_time), the rows' order */
	uint64_t lat_ns;	/* first to last hop, 0 with one hop */
	int cls;		/* enum hs_wclass */
	char col[HS_WC__COUNT][200];
};

/* one hop of the detail pane */
struct hs_whop {
	char sw[HS_NAME_MAX + 48];
	char ts[32];
	char delta[24];
	char ttl[8];
	char dscp[24];
	char changes[96];
};

enum hs_wsort { HS_WSORT_NEWEST, HS_WSORT_LATENCY, HS_WSORT_OUTCOME, HS_WSORT__COUNT };

/* per directed topology link: 2 l is links[l].a > links[l].b, 2 l + 1 the
 * other way. The figures are hs_an_drops()'s over the recent traces, the
 * same as the prompt's 'drops'. */
struct hs_wlink {
	int link;		/* index in topo->links */
	int a, b;		/* from switch a to switch b */
	uint32_t packets;	/* traces that crossed a > b */
	uint32_t drops;		/* dropped traces whose next hop was b for certain */
	uint32_t ambiguous;	/* dropped at a, b one of several candidates: not in drops */
	double votes;		/* 007 votes of the link (either way) in the newest epoch */
	bool blamed;		/* above blame's noise threshold in that epoch */
};

#define HS_WEVENT_LEN 240

struct hs_wmodel {
	const struct hs_topo *topo;
	const char *sep;	/* between switch names in a path */
	const char *ell;	/* where a cut column or path leaves something out */
	int64_t session;	/* history session of the traces (0 none): names them S:N */

	/* the traces pane: a snapshot of the tracer's ring, filtered and sorted */
	size_t cap;
	struct hs_trace *traces;	/* cap copies */
	struct hs_wrow *rows;		/* cap rows, [0, view.count) valid */
	int outcome_cells;		/* the widest outcome among them */
	const struct hs_trace **sorted;	/* cap: scratch for filtering and sorting */
	size_t ntraces;
	struct hs_wview view[HS_WP__COUNT];
	uint64_t sel_id;		/* trace under the cursor, 0 none */
	bool follow;			/* cursor stays on the newest row */
	int sort;			/* enum hs_wsort */
	struct hs_wfilter filter;
	char filter_text[128];
	bool paused;

	/* the detail pane */
	struct hs_trace detail;		/* copy of the selected trace */
	bool have_detail;
	int detail_cls;			/* enum hs_wclass */
	char detail_head[3][240];
	struct hs_whop hops[HS_TRACE_MAX_HOPS];

	/* the links pane */
	struct hs_wlink *links;		/* 2 * topo->nlinks, sorted worst first in order[] */
	int nlinks;			/* directed links */
	int *order;

	/* the events pane: a ring of lines, oldest first */
	char (*events)[HS_WEVENT_LEN];
	size_t ev_cap, ev_first, ev_count;
	uint64_t ev_total;
};

/* cap: traces kept in the view (allocated once) */
struct hs_wmodel *hs_wmodel_new(size_t cap, size_t events);
void hs_wmodel_free(struct hs_wmodel *m);
/* a new topology: link counters start over */
void hs_wmodel_set_topo(struct hs_wmodel *m, const struct hs_topo *topo);
/* new closed traces, newest first as hs_tracer_recent() gives them: the
 * rows are rebuilt unless paused */
void hs_wmodel_update(struct hs_wmodel *m, const struct hs_trace *const *recent, size_t n);
/* rebuild rows from the snapshot (after a filter or sort change) */
void hs_wmodel_rebuild(struct hs_wmodel *m);
/* set (text "" clears) the display filter; 0 or -1 with err */
int hs_wmodel_set_filter(struct hs_wmodel *m, const char *text, char *err, size_t errlen);
void hs_wmodel_set_sort(struct hs_wmodel *m, int sort);
const char *hs_wsort_name(int sort);
/* move the traces cursor and refresh the detail */
void hs_wmodel_select(struct hs_wmodel *m, size_t row);
void hs_wmodel_scroll(struct hs_wmodel *m, enum hs_wpane p, int key);

/* one row / detail from a trace (also used by the model itself) */
void hs_wrow_fill(struct hs_wrow *r, const struct hs_trace *t, const struct hs_topo *topo,
		  const char *sep);
/* hop lines of t into hops (nhops of them); returns t->nhops */
int hs_whops_fill(struct hs_whop *hops, const struct hs_trace *t, const struct hs_topo *topo);

/* text of the i-th directed link in worst-first order: "leaf1 > spine2",
 * traces across, certain drops, their share of drops + traces across, and
 * the ambiguous drops that could be on it */
void hs_wlink_text(const struct hs_wmodel *m, int i, char *name, size_t nlen, char *pkts,
		   char *drops, char *rate, char *ambig, size_t vlen);

/* drops (hs_an_drops) and 007 (hs_an_blame) over the recent traces (newest
 * first, as hs_tracer_recent() gives them) into the links: each directed
 * link's traces across, drops and ambiguous drops, and its link's votes in
 * the newest epoch; called about once a second, never per trace */
void hs_wmodel_links(struct hs_wmodel *m, const struct hs_trace *const *recent, size_t n);
/* the votes of the i-th link in worst-first order: "-" when it has none,
 * a '!' after the figure when blame reports the link */
void hs_wlink_votes_text(const struct hs_wmodel *m, int i, char *buf, size_t len);

/* the title of the Links pane's load column: "util" when every link of
 * the topology has a speed (each figure then a percentage), "bit/s" when
 * none has (each a rate), else "load" */
const char *hs_wload_title(const struct hs_topo *topo);
/* a load figure as hs_planck_link_load gives it ("45%", "~57.4k") shown
 * under that title for topology link l: under "load" a rate says its unit
 * ("~57.4kb/s"); "" stays "" */
void hs_wload_text(const struct hs_topo *topo, int link, const char *fig, char *out, size_t len);
/* the widths of a pane's ncol columns over nrows rows of texts (row r's in
 * cells[r * ncol ...]): each column after the first as wide as its title
 * and its widest text, and min[c] at least, so that no figure is ever cut;
 * the first gets what they leave of the inner width, and while that is
 * under first_min the columns of drop[] go (width 0), in that order */
void hs_wcols_fit(int inner, int ncol, const char *const *titles, const char *const *cells,
		  int nrows, const int *min, const int *drop, int ndrop, int first_min, int *cw);

/* append a line (newlines split it; tabs become blanks) to the events */
void hs_wmodel_event(struct hs_wmodel *m, const char *line);
const char *hs_wmodel_event_at(const struct hs_wmodel *m, size_t i);	/* 0 = oldest */
/* a block of lines drawn again in place (a live table): text replaces the
 * block b's last call appended while those are still the newest lines, and
 * is appended after whatever came since otherwise; b starts zeroed */
struct hs_wblock {
	uint64_t end;		/* ev_total after the block */
	size_t lines;		/* its lines, 0 none yet */
};
void hs_wmodel_event_block(struct hs_wmodel *m, struct hs_wblock *b, const char *text);

/* keys a pane understands, as hs_wmodel_scroll's key */
enum { HS_WK_UP = 1, HS_WK_DOWN, HS_WK_PGUP, HS_WK_PGDN, HS_WK_HOME, HS_WK_END };

/* ---- the UI (watch.c) ---------------------------------------------------------- */

/* Where the view's traces and status come from: the pipeline of this
 * process when ctx->watch.feed is NULL, else a daemon's feed (attach.c),
 * which the view starts as it comes up and stops as it leaves; what the
 * feed brings is told with hs_watch_fed(). ':' lines run through run. */
struct hs_feed_status;
struct hs_wfeed {
	void (*start)(struct hs_ctx *ctx);
	void (*stop)(struct hs_ctx *ctx);
	/* closed traces, newest first, as hs_tracer_recent() gives them */
	size_t (*recent)(struct hs_ctx *ctx, const struct hs_trace **out, size_t max);
	void (*status)(struct hs_ctx *ctx, struct hs_feed_status *st);
	/* the Links pane's load of a link from a switch (hs_planck_link_load) */
	void (*load)(struct hs_ctx *ctx, int link, int from, char *buf, size_t len);
	int (*run)(struct hs_ctx *ctx, const char *line);	/* HS_CMD_* */
};
/* traces or a status came (the model is read at the next tick), or the
 * topology changed (now: the old one is freed after this returns) */
void hs_watch_fed(struct hs_ctx *ctx, bool topology);

/* the status line's figures of this process's pipeline (what a daemon
 * sends its fed consoles) */
void hs_watch_status(struct hs_ctx *ctx, struct hs_feed_status *st);

/* enter the full-screen view; HS_CMD_PENDING while it runs, or -1 */
int hs_watch_start(struct hs_ctx *ctx);
bool hs_watch_active(struct hs_ctx *ctx);
/* an asynchronous message while the view is active goes to the events pane */
void hs_watch_event(struct hs_ctx *ctx, const char *line);
/* a block of the events pane drawn again in place (hs_wmodel_event_block):
 * false when the view is not active */
bool hs_watch_block(struct hs_ctx *ctx, struct hs_wblock *b, const char *text);
/* A verb run at the view's ':' line that returned HS_CMD_PENDING finishes
 * inside the view, not as the runner's pending verb (the view is that):
 * hs_cmd_finish() asks this first and returns when it says true. */
bool hs_watch_take_finish(struct hs_ctx *ctx, int status);

#endif
