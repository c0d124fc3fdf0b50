/* watch.c - the full-screen live view: ncurses panes drawn from the model
 *
 * The REPL hands the terminal over (ctx->con's suspend: the REPL is above
 * the verbs, and the view below the one that opens it), the view reads
 * stdin through its own uv_poll with a non-blocking getch, and a uv_timer
 * refreshes the model from the tracer and redraws at most HS_WATCH_FPS
 * times a second, never per packet. While it is up the view subscribes to
 * the pipeline's closed traces and events (subs.h), like the pipeline's
 * other consumers: the model is read again when something was published
 * (and the links' figures once a second), not on every tick. Capture and every other part of the
 * loop keep running. Everything verbs print while the view is up (':'
 * commands, capture errors) is caught in a memory stream and shown in the
 * events pane. 'q' gives the terminal back with endwin() and ctx->con's
 * resume.
 *
 * Attached to a daemon, the view is the same: only what it reads comes
 * from elsewhere. ctx->watch.feed names the daemon's feed, which brings
 * the closed traces, the status, the topology and the events in frames;
 * the view reads the feed where it would read the pipeline, and its ':'
 * lines go to the daemon.
 */
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <curses.h>
#include <panel.h>

#include "cmd.h"
#include "console.h"
#include "watch.h"
#include "planck.h"
#include "proto.h"

#define HS_WATCH_FPS 20
#define HS_WATCH_TRACES 1000	/* rows the traces pane keeps */
#define HS_WATCH_RECENT 8192	/* closed traces looked at per refresh (links) */
#define HS_WATCH_EVENTS 1000

enum { CP_DELIVERED = 1, CP_DROPPED, CP_LOOPED, CP_PROBE, CP_UNKNOWN, CP_FOCUS, CP_STATUS,
       CP_TITLE };

struct hs_watch {
	struct hs_ctx *ctx;
	struct hs_wmodel *m;
	bool color;
	const struct hs_wfeed *feed;	/* the pipeline's, or a daemon's */
	struct hs_feed_status st;	/* as of the last refresh */

	uv_poll_t poll;		/* stdin while the view is up */
	uv_timer_t timer;	/* refresh + redraw */
	uv_signal_t winch;
	int open_handles;	/* freed when the last one is closed */

	const struct hs_trace **recent;
	const struct hs_topo *topo;	/* the one the model was given */
	int topo_nlinks;
	uint64_t links_at;	/* when the links' figures were last computed, 0 never */

	struct hs_wlayout lay;
	bool fits;
	WINDOW *win[HS_WP__COUNT];
	PANEL *pan[HS_WP__COUNT];
	WINDOW *status;
	PANEL *status_pan;
	WINDOW *help;
	PANEL *help_pan;
	bool show_help;
	int focus;		/* enum hs_wpane */
	bool dirty;
	unsigned ticks;
	bool heard;		/* subscribed to the pipeline */
	bool fresh;		/* it published a trace or an event since the last refresh */

	/* the ':' and '/' line */
	int prompt;		/* 0, ':' or '/' */
	char line[256];
	size_t len;

	/* what verbs print while the view is up */
	FILE *saved_fp, *saved_err;
	FILE *cap;
	char *cap_buf;
	size_t cap_len;

	/* pkt/s over the last second */
	uint64_t rate_pkts, rate_at;
	double rate;

	void (*saved_cancel)(struct hs_ctx *ctx);
	void (*nested_cancel)(struct hs_ctx *ctx);	/* of a pending ':' verb */
	bool leaving;
};

/* the terminal is one resource: one view at a time (ctx->watch). Its
 * curses screen is made once and kept: endwin() hands the terminal back to
 * the prompt and the next doupdate() takes it again, as curses intends for
 * a shell escape */

static void leave(struct hs_watch *w);

/* the terminal back to the console above (ctx->con), as hs_watch_start
 * took it */
static void terminal_back(struct hs_ctx *ctx)
{
	if (ctx->con)
		ctx->con->resume(ctx);
}

bool hs_watch_active(struct hs_ctx *ctx)
{
	return ctx->watch.view && !ctx->watch.view->leaving;
}

static void watch_cancel(struct hs_ctx *ctx);

bool hs_watch_take_finish(struct hs_ctx *ctx, int status)
{
	if (!ctx->watch.nested_pending)
		return false;
	ctx->watch.nested_pending = false;
	if (hs_watch_active(ctx)) {
		char msg[128];
		snprintf(msg, sizeof(msg), "%s: '%s' %s", status == HS_CMD_OK ? "done" : "error",
			 ctx->watch.nested_line, status == HS_CMD_OK ? "finished" : "failed");
		hs_wmodel_event(ctx->watch.view->m, msg);
		ctx->watch.view->nested_cancel = NULL;
		ctx->watch.view->dirty = true;
		ctx->cancel = watch_cancel;
	}
	return true;
}

static void refresh_model(struct hs_watch *w);

void hs_watch_fed(struct hs_ctx *ctx, bool topology)
{
	struct hs_watch *w = ctx->watch.view;

	if (!hs_watch_active(ctx))
		return;
	w->fresh = true;
	if (topology)
		refresh_model(w);	/* the model lets go of the old topology now */
}

void hs_watch_event(struct hs_ctx *ctx, const char *line)
{
	if (!hs_watch_active(ctx))
		return;
	hs_wmodel_event(ctx->watch.view->m, line);
	ctx->watch.view->dirty = true;
}

static void capture_drain(struct hs_watch *w);

bool hs_watch_block(struct hs_ctx *ctx, struct hs_wblock *b, const char *text)
{
	if (!hs_watch_active(ctx))
		return false;
	/* what was printed before stays above the block */
	capture_drain(ctx->watch.view);
	hs_wmodel_event_block(ctx->watch.view->m, b, text);
	ctx->watch.view->dirty = true;
	return true;
}

/* ---- output capture ------------------------------------------------------------ */

static int capture_open(struct hs_watch *w)
{
	w->cap_buf = NULL;
	w->cap_len = 0;
	w->cap = open_memstream(&w->cap_buf, &w->cap_len);
	if (!w->cap)
		return -1;
	w->ctx->out->fp = w->cap;
	w->ctx->out->err = w->cap;
	return 0;
}

/* move what was printed into the events pane */
static void capture_drain(struct hs_watch *w)
{
	if (!w->cap)
		return;
	fflush(w->cap);
	if (w->cap_len == 0)
		return;
	fclose(w->cap);
	hs_wmodel_event(w->m, w->cap_buf);
	free(w->cap_buf);
	w->dirty = true;
	if (capture_open(w) < 0) {
		/* no memory for a stream: output goes back to the terminal */
		w->ctx->out->fp = w->saved_fp;
		w->ctx->out->err = w->saved_err;
	}
}

/* give the streams back; text not drained yet is printed there */
static void capture_close(struct hs_watch *w)
{
	if (w->cap) {
		fclose(w->cap);
		if (w->cap_len)
			fwrite(w->cap_buf, 1, w->cap_len, w->saved_fp);
		free(w->cap_buf);
		w->cap = NULL;
		w->cap_buf = NULL;
	}
	w->ctx->out->fp = w->saved_fp;
	w->ctx->out->err = w->saved_err;
}

/* ---- drawing ------------------------------------------------------------------- */

static attr_t class_attr(const struct hs_watch *w, int cls)
{
	static const short pairs[HS_WCL__COUNT] = {
		[HS_WCL_DELIVERED] = CP_DELIVERED, [HS_WCL_DROPPED] = CP_DROPPED,
		[HS_WCL_LOOPED] = CP_LOOPED, [HS_WCL_PROBE] = CP_PROBE,
		[HS_WCL_UNKNOWN] = CP_UNKNOWN,
	};
	static const attr_t mono[HS_WCL__COUNT] = {
		[HS_WCL_DROPPED] = A_BOLD, [HS_WCL_LOOPED] = A_BOLD | A_UNDERLINE,
		[HS_WCL_PROBE] = A_UNDERLINE, [HS_WCL_UNKNOWN] = A_DIM,
	};

	if (cls <= HS_WCL_NONE || cls >= HS_WCL__COUNT)
		return A_NORMAL;
	if (w->color)
		return COLOR_PAIR(pairs[cls]) | (cls == HS_WCL_DROPPED || cls == HS_WCL_LOOPED ?
						 A_BOLD : A_NORMAL);
	return mono[cls];
}

/* s in at most 'cells' cells at y, x; right-aligned when asked */
static void put(WINDOW *win, int y, int x, int cells, const char *s, bool right)
{
	char buf[512];

	if (cells <= 0)
		return;
	int used = hs_wfit(s, cells, buf, sizeof(buf));
	mvwaddstr(win, y, right ? x + cells - used : x, buf);
}

static void pane_frame(struct hs_watch *w, int p, const char *title)
{
	WINDOW *win = w->win[p];
	bool focus = w->focus == p;
	attr_t a = focus ? (w->color ? COLOR_PAIR(CP_FOCUS) | A_BOLD : A_BOLD) : A_NORMAL;

	werase(win);
	wattron(win, a);
	box(win, 0, 0);
	wattroff(win, a);
	wattron(win, focus ? A_BOLD : A_NORMAL);
	put(win, 0, 2, getmaxx(win) - 4, title, false);
	wattroff(win, focus ? A_BOLD : A_NORMAL);
}

/* a line of the list under the cursor: reverse video over the pane's width */
static void cursor_line(WINDOW *win, int y, bool on)
{
	if (on)
		mvwchgat(win, y, 1, getmaxx(win) - 2, A_REVERSE, 0, NULL);
}

static void draw_traces(struct hs_watch *w)
{
	struct hs_wmodel *m = w->m;
	struct hs_wview *v = &m->view[HS_WP_TRACES];
	WINDOW *win = w->win[HS_WP_TRACES];
	int iw = getmaxx(win) - 2, widths[HS_WC__COUNT];
	char title[256];

	snprintf(title, sizeof(title), " Traces %zu%s%s%s, sort %s%s ", v->count,
		 m->filter_text[0] ? " [" : "", m->filter_text, m->filter_text[0] ? "]" : "",
		 hs_wsort_name(m->sort), m->paused ? ", PAUSED" : "");
	pane_frame(w, HS_WP_TRACES, title);
	hs_wcols_layout(iw, m->outcome_cells, widths);

	wattron(win, A_UNDERLINE);
	for (int c = 0, x = 1; c < HS_WC__COUNT; c++) {
		if (!widths[c])
			continue;
		put(win, 1, x, widths[c], hs_wcolumns[c].title, hs_wcolumns[c].right);
		x += widths[c] + 1;
	}
	wattroff(win, A_UNDERLINE);

	if (v->count == 0) {
		put(win, 2, 1, iw, m->ntraces ? "no trace matches the display filter" :
			"no closed traces yet", false);
		return;
	}
	for (int i = 0; i < v->height && v->top + (size_t)i < v->count; i++) {
		const struct hs_wrow *r = &m->rows[v->top + (size_t)i];
		int y = 2 + i;
		for (int c = 0, x = 1; c < HS_WC__COUNT; c++) {
			if (!widths[c])
				continue;
			attr_t a = c == HS_WC_OUTCOME ? class_attr(w, r->cls) : A_NORMAL;
			const char *s = r->col[c];
			char cut[sizeof(r->col[0]) + 8];
			size_t len = strlen(s);
			if (c == HS_WC_TIME && len > (size_t)widths[c])
				s += len - (size_t)widths[c];	/* the time of day */
			else if (c == HS_WC_PATH)
				s = (hs_wpath_fit(s, m->sep, m->ell, widths[c], cut, sizeof(cut)), cut);
			else if (c == HS_WC_OUTCOME)
				s = (hs_woutcome_fit(s, widths[c], m->ell, cut, sizeof(cut)), cut);
			else
				s = (hs_wfit_ell(s, widths[c], m->ell, cut, sizeof(cut)), cut);
			wattron(win, a);
			put(win, y, x, widths[c], s, hs_wcolumns[c].right);
			wattroff(win, a);
			x += widths[c] + 1;
		}
		cursor_line(win, y, v->top + (size_t)i == v->sel);
	}
}

static void draw_detail(struct hs_watch *w)
{
	struct hs_wmodel *m = w->m;
	struct hs_wview *v = &m->view[HS_WP_DETAIL];
	WINDOW *win = w->win[HS_WP_DETAIL];
	int iw = getmaxx(win) - 2, ih = getmaxy(win) - 2;
	static const struct { const char *t; int w; } cols[] = {
		{ "#", 3 }, { "switch", 14 }, { "time", 26 }, { "delta", 10 }, { "ttl", 4 },
		{ "dscp/ecn", 11 }, { "changes", 0 },
	};

	pane_frame(w, HS_WP_DETAIL, " Detail ");
	if (!m->have_detail) {
		put(win, 1, 1, iw, "select a trace (Enter)", false);
		return;
	}
	put(win, 1, 1, iw, m->detail_head[0], false);
	if (ih < 2)
		return;
	wattron(win, class_attr(w, m->detail_cls));
	put(win, 2, 1, iw, m->detail_head[1], false);
	wattroff(win, class_attr(w, m->detail_cls));
	if (ih < 5)
		return;		/* no room for the hops */
	if (m->detail_head[2][0]) {
		wattron(win, class_attr(w, HS_WCL_DROPPED));
		put(win, 3, 1, iw, m->detail_head[2], false);
		wattroff(win, class_attr(w, HS_WCL_DROPPED));
	}
	wattron(win, A_UNDERLINE);
	for (size_t c = 0, x = 1; c < HS_ARRAY_SIZE(cols) && (int)x < iw; c++) {
		int cw = cols[c].w ? cols[c].w : iw - (int)x + 1;
		put(win, 4, (int)x, cw < iw - (int)x + 1 ? cw : iw - (int)x + 1, cols[c].t, false);
		x += (size_t)cols[c].w + 1;
	}
	wattroff(win, A_UNDERLINE);
	for (int i = 0; i < v->height && 5 + i <= ih && v->top + (size_t)i < v->count; i++) {
		size_t k = v->top + (size_t)i;
		const struct hs_whop *h = &m->hops[k];
		char idx[24];
		const char *vals[] = { idx, h->sw, h->ts, h->delta, h->ttl, h->dscp, h->changes };
		snprintf(idx, sizeof(idx), "%zu", k + 1);
		for (size_t c = 0, x = 1; c < HS_ARRAY_SIZE(cols) && (int)x <= iw; c++) {
			int room = iw - (int)x + 1;
			int cw = cols[c].w && cols[c].w < room ? cols[c].w : room;
			put(win, 5 + i, (int)x, cw, vals[c], false);
			x += (size_t)cols[c].w + 1;
		}
		cursor_line(win, 5 + i, w->focus == HS_WP_DETAIL && k == v->sel);
	}
}

static void draw_links(struct hs_watch *w)
{
	struct hs_wmodel *m = w->m;
	struct hs_wview *v = &m->view[HS_WP_LINKS];
	WINDOW *win = w->win[HS_WP_LINKS];
	int iw = getmaxx(win) - 2;
	/* the figures are as wide as they come, the name gets what they leave */
	enum { NCOL = 7, ROWS = 256, W = 24 };
	static const int min[NCOL] = { 0, 6, 5, 6, 5, 5, 5 };
	const char *titles[NCOL] = { "link", "pkts", "drops", "drop%", "ambig", "007",
				     hs_wload_title(m->topo) };
	/* narrow: the later analyses go first, then the rate, then packets */
	static const int drop_order[] = { 6, 5, 3, 1 };
	static char names[ROWS][160], figs[ROWS][NCOL - 1][W];	/* the loop's alone */
	const char *cells[ROWS * NCOL];
	int cw[NCOL], n = 0;

	pane_frame(w, HS_WP_LINKS, " Links (worst first) ");
	if (!m->topo) {
		put(win, 1, 1, iw, "no topology: 'topo load FILE'", false);
		return;
	}
	for (; n < v->height && n < ROWS && v->top + (size_t)n < v->count; n++) {
		int k = (int)(v->top + (size_t)n);
		const struct hs_wlink *l = &m->links[m->order[k]];
		char (*f)[W] = figs[n], load[W];
		hs_wlink_text(m, k, names[n], sizeof(names[n]), f[0], f[1], f[2], f[3], W);
		hs_wlink_votes_text(m, k, f[4], W);
		w->feed->load(w->ctx, l->link, l->a, load, sizeof(load));
		hs_wload_text(m->topo, l->link, load, f[5], W);
		cells[n * NCOL] = names[n];
		for (int c = 1; c < NCOL; c++)
			cells[n * NCOL + c] = f[c - 1];
	}
	hs_wcols_fit(iw, NCOL, titles, cells, n, min, drop_order, (int)HS_ARRAY_SIZE(drop_order),
		     16, cw);
	wattron(win, A_UNDERLINE);
	for (int c = 0, x = 1; c < NCOL; c++) {
		if (!cw[c])
			continue;
		put(win, 1, x, cw[c], titles[c], c > 0);
		x += cw[c] + 1;
	}
	wattroff(win, A_UNDERLINE);
	for (int i = 0; i < n; i++) {
		int k = (int)(v->top + (size_t)i);
		const struct hs_wlink *l = &m->links[m->order[k]];
		for (int c = 0, x = 1; c < NCOL; c++) {
			if (!cw[c])
				continue;
			attr_t a = (l->drops > 0 && (c == 2 || c == 3)) || (l->blamed && c == 5)
					   ? class_attr(w, HS_WCL_DROPPED) : A_NORMAL;
			wattron(win, a);
			put(win, 2 + i, x, cw[c], cells[i * NCOL + c], c > 0);
			wattroff(win, a);
			x += cw[c] + 1;
		}
		cursor_line(win, 2 + i, w->focus == HS_WP_LINKS && (size_t)k == v->sel);
	}
}

static void draw_events(struct hs_watch *w)
{
	struct hs_wmodel *m = w->m;
	struct hs_wview *v = &m->view[HS_WP_EVENTS];
	WINDOW *win = w->win[HS_WP_EVENTS];
	int iw = getmaxx(win) - 2;

	pane_frame(w, HS_WP_EVENTS, " Events ");
	for (int i = 0; i < v->height && v->top + (size_t)i < v->count; i++) {
		size_t k = v->top + (size_t)i;
		const char *e = hs_wmodel_event_at(m, k);
		attr_t a = strncmp(e, "error:", 6) == 0 ? class_attr(w, HS_WCL_DROPPED) :
			   strncmp(e, "> :", 3) == 0 ? A_BOLD : A_NORMAL;
		wattron(win, a);
		put(win, 1 + i, 1, iw, e, false);
		wattroff(win, a);
		cursor_line(win, 1 + i, w->focus == HS_WP_EVENTS && k == v->sel);
	}
}

static void draw_status(struct hs_watch *w)
{
	struct hs_ctx *ctx = w->ctx;
	WINDOW *win = w->status;
	int cols = getmaxx(win);
	char buf[1024];

	werase(win);
	wbkgdset(win, ' ' | (w->color ? COLOR_PAIR(CP_STATUS) : A_REVERSE));
	werase(win);
	if (w->prompt) {
		snprintf(buf, sizeof(buf), "%c%.*s", w->prompt, (int)w->len, w->line);
		/* keep the end of a long line in view */
		const char *s = buf;
		size_t n = strlen(buf);
		if (n >= (size_t)cols)
			s = buf + n - (size_t)cols + 1;
		mvwaddstr(win, 0, 0, s);
		return;
	}
	const struct hs_feed_status *st = &w->st;
	const char *src = st->flags & HS_FS_CAPTURE ? st->source : NULL;
	char shown[48] = "";

	(void)ctx;
	/* a file by its name: the counters matter more than the directory */
	if (src && (st->flags & HS_FS_FILE) && strrchr(src, '/') && strrchr(src, '/')[1])
		src = strrchr(src, '/') + 1;
	/* a console too slow for the daemon's feed is sent fewer traces */
	if (st->not_shown)
		snprintf(shown, sizeof(shown), " | %llu traces not shown",
			 (unsigned long long)st->not_shown);
	snprintf(buf, sizeof(buf),
		 " %s%s%s | %.0f pkt/s | kernel drops %llu | decode errors %llu | not IP %llu | "
		 "open %llu | history %llu%s%s%s%s | ? keys  q back",
		 src ? src : "no capture", src && (st->flags & HS_FS_ENDED) ? " (ended)" : "",
		 w->m->paused ? " PAUSED" : "", w->rate,
		 (unsigned long long)st->kernel_drops, (unsigned long long)st->decode_errors,
		 (unsigned long long)st->not_ip, (unsigned long long)st->open,
		 (unsigned long long)st->stored,
		 w->m->filter_text[0] ? " | filter: " : "", w->m->filter_text,
		 st->unstored ? " (some unstored)" : "", shown);
	put(win, 0, 0, cols, buf, false);
}

static const char *const help_lines[] = {
	"Tab / Shift-Tab   next / previous pane",
	"Up Down PgUp PgDn Home End   scroll the pane",
	"Enter             show the trace under the cursor",
	"/                 display filter: flow ADDR[:PORT]",
	"                  switch NAME, outcome O (empty clears)",
	"s                 sort: newest, latency, outcome",
	"p                 pause the view (capture goes on)",
	":                 run a command, output in Events",
	"Ctrl-L            redraw",
	"?                 this help (any key closes it)",
	"q                 back to the prompt",
};

static void draw_help(struct hs_watch *w)
{
	WINDOW *win = w->help;

	werase(win);
	box(win, 0, 0);
	put(win, 0, 2, getmaxx(win) - 4, " keys ", false);
	for (size_t i = 0; i < HS_ARRAY_SIZE(help_lines) && (int)i + 1 < getmaxy(win) - 1; i++)
		put(win, 1 + (int)i, 2, getmaxx(win) - 4, help_lines[i], false);
}

static void windows_free(struct hs_watch *w)
{
	for (int i = 0; i < HS_WP__COUNT; i++) {
		if (w->pan[i])
			del_panel(w->pan[i]);
		if (w->win[i])
			delwin(w->win[i]);
		w->pan[i] = NULL;
		w->win[i] = NULL;
	}
	if (w->status_pan)
		del_panel(w->status_pan);
	if (w->status)
		delwin(w->status);
	if (w->help_pan)
		del_panel(w->help_pan);
	if (w->help)
		delwin(w->help);
	w->status_pan = w->help_pan = NULL;
	w->status = w->help = NULL;
}

/* windows for the current screen size */
static void relayout(struct hs_watch *w)
{
	static const int head[HS_WP__COUNT] = {
		[HS_WP_TRACES] = 1, [HS_WP_DETAIL] = 4, [HS_WP_LINKS] = 1, [HS_WP_EVENTS] = 0,
	};

	windows_free(w);
	w->fits = hs_wlayout_compute(COLS, LINES, &w->lay);
	clearok(curscr, TRUE);
	if (!w->fits)
		return;
	for (int i = 0; i < HS_WP__COUNT; i++) {
		const struct hs_wrect *r = &w->lay.pane[i];
		w->win[i] = newwin(r->h, r->w, r->y, r->x);
		if (!w->win[i])
			continue;
		w->pan[i] = new_panel(w->win[i]);
		struct hs_wview *v = &w->m->view[i];
		hs_wview_set(v, v->count, r->h - 2 - head[i]);
	}
	w->status = newwin(1, COLS, LINES - 1, 0);
	if (w->status)
		w->status_pan = new_panel(w->status);
	int hh = (int)HS_ARRAY_SIZE(help_lines) + 2, hw = 60;
	if (hh > LINES - 2)
		hh = LINES - 2;
	w->help = newwin(hh, hw, (LINES - hh) / 2, (COLS - hw) / 2);
	if (w->help) {
		w->help_pan = new_panel(w->help);
		if (!w->show_help)
			hide_panel(w->help_pan);
	}
	/* the model's follow rule needs the new heights */
	hs_wmodel_select(w->m, w->m->view[HS_WP_TRACES].sel);
}

static void redraw(struct hs_watch *w)
{
	w->dirty = false;
	if (!w->fits || !w->win[0] || !w->status) {
		char msg[160];
		werase(stdscr);
		snprintf(msg, sizeof(msg), "terminal too small (%dx%d)", COLS, LINES);
		mvwaddnstr(stdscr, 0, 0, msg, COLS);
		snprintf(msg, sizeof(msg), "watch needs at least %dx%d", HS_WATCH_MIN_COLS,
			 HS_WATCH_MIN_ROWS);
		mvwaddnstr(stdscr, 1, 0, msg, COLS);
		mvwaddnstr(stdscr, 2, 0, "q returns to the prompt", COLS);
		wnoutrefresh(stdscr);
		doupdate();
		return;
	}
	draw_traces(w);
	draw_detail(w);
	draw_links(w);
	draw_events(w);
	draw_status(w);
	if (w->help_pan) {
		if (w->show_help) {
			draw_help(w);
			show_panel(w->help_pan);
			top_panel(w->help_pan);
		} else {
			hide_panel(w->help_pan);
		}
	}
	update_panels();
	if (w->prompt) {
		int x = 1 + (int)w->len;
		if (x >= COLS)
			x = COLS - 1;
		wmove(w->status, 0, x);
		wnoutrefresh(w->status);
		curs_set(1);
	} else {
		curs_set(0);
	}
	doupdate();
}

/* ---- model refresh ------------------------------------------------------------- */

/* what the pipeline publishes while the view is up: read at the next tick */
static void on_trace(void *arg, const struct hs_trace *t)
{
	struct hs_watch *w = arg;

	(void)t;
	w->fresh = true;
}

/* a capture started (its traces replace the last one's), stopped or ended */
static void on_event(void *arg, const struct hs_event *ev)
{
	struct hs_watch *w = arg;

	(void)ev;
	w->fresh = true;
	w->dirty = true;	/* the status line */
}

/* ---- the pipeline's own feed -------------------------------------------------------- */

static size_t local_recent(struct hs_ctx *ctx, const struct hs_trace **out, size_t max)
{
	return ctx->tracer ? hs_tracer_recent(ctx->tracer, out, max) : 0;
}

void hs_watch_status(struct hs_ctx *ctx, struct hs_feed_status *st)
{
	const char *src = NULL, *why = "";
	bool is_file = false;
	struct hs_tracer_stats ts = { 0 };

	memset(st, 0, sizeof(*st));
	if (hs_capture_info(ctx, &src, &is_file, &why, &st->stored, &st->unstored) && src) {
		st->flags = HS_FS_CAPTURE | (is_file ? HS_FS_FILE : 0) |
			    (why && why[0] ? HS_FS_ENDED : 0);
		snprintf(st->source, sizeof(st->source), "%s", src);
	}
	if (ctx->tracer)
		hs_tracer_get_stats(ctx->tracer, &ts);
	st->open = ts.open;
	st->packets = ctx->last_stats.packets;
	st->kernel_drops = ctx->last_stats.kernel_drops;
	st->decode_errors = ctx->last_stats.decode_errors;
	st->not_ip = ctx->last_stats.not_ip;
	st->session = ctx->ring_session;
}

/* a ':' line, run by the runner above (ctx->con) */
static int run_line(struct hs_ctx *ctx, const char *line)
{
	return ctx->con->run_line(ctx, line);
}

static const struct hs_wfeed local_feed = {
	.recent = local_recent,
	.status = hs_watch_status,
	.load = hs_planck_link_load,
	.run = run_line,
};

static void refresh_model(struct hs_watch *w)
{
	struct hs_ctx *ctx = w->ctx;
	struct hs_wmodel *m = w->m;
	uint64_t before_id = m->ntraces ? m->traces[0].id : 0;
	size_t before_n = m->ntraces;

	if (ctx->topo != w->topo || (ctx->topo && ctx->topo->nlinks != w->topo_nlinks)) {
		w->topo = ctx->topo;
		w->topo_nlinks = ctx->topo ? ctx->topo->nlinks : 0;
		hs_wmodel_set_topo(m, ctx->topo);
		w->links_at = 0;
		hs_wmodel_rebuild(m);
		w->dirty = true;
	}
	uint64_t now = hs_mono_ns();
	w->feed->status(ctx, &w->st);
	if (!w->rate_at) {
		w->rate_pkts = w->st.packets;
		w->rate_at = now;
	} else if (now - w->rate_at >= HS_NS_PER_SEC) {
		uint64_t p = w->st.packets;
		w->rate = p >= w->rate_pkts ? (double)(p - w->rate_pkts) * 1e9 / (double)(now - w->rate_at)
					   : 0;
		w->rate_pkts = p;
		w->rate_at = now;
	}
	bool links_due = !w->links_at || now - w->links_at >= HS_NS_PER_SEC;
	if (!w->fresh && w->heard && !links_due)
		return;		/* nothing published, nothing due */
	w->fresh = false;
	size_t n = w->feed->recent(ctx, w->recent, HS_WATCH_RECENT);
	m->session = w->st.session;
	hs_wmodel_update(m, w->recent, n);
	if (m->ntraces != before_n || (m->ntraces && m->traces[0].id != before_id))
		w->dirty = true;
	/* the links' figures: at once on entering, then once a second */
	if (links_due) {
		hs_wmodel_links(m, w->recent, n);
		w->links_at = now;
		w->dirty = true;
	}
}

static void on_tick(uv_timer_t *t)
{
	struct hs_watch *w = t->data;

	if (w->leaving)
		return;
	refresh_model(w);
	capture_drain(w);
	/* 'quit' typed at ':' ends the view too */
	if (w->ctx->quit) {
		leave(w);
		return;
	}
	if (++w->ticks % (HS_WATCH_FPS / 2) == 0)
		w->dirty = true;	/* status counters */
	if (w->dirty)
		redraw(w);
}

/* ---- keys ------------------------------------------------------------------------ */

static void run_command(struct hs_watch *w, const char *line)
{
	struct hs_ctx *ctx = w->ctx;
	char echo[300];

	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line)
		return;
	snprintf(echo, sizeof(echo), "> :%s", line);
	hs_wmodel_event(w->m, echo);
	if (strncmp(line, "watch", 5) == 0 && (line[5] == '\0' || line[5] == ' ')) {
		hs_wmodel_event(w->m, "error: watch: already active");
		return;
	}
	if (ctx->watch.nested_pending) {
		snprintf(echo, sizeof(echo), "error: '%s' is still running", ctx->watch.nested_line);
		hs_wmodel_event(w->m, echo);
		return;
	}
	/* the view stays the runner's pending verb; one that finishes later
	 * reports to hs_watch_take_finish */
	ctx->cancel = NULL;
	ctx->watch.nested_pending = true;
	snprintf(ctx->watch.nested_line, sizeof(ctx->watch.nested_line), "%.*s",
		 (int)sizeof(ctx->watch.nested_line) - 1, line);
	int rc = w->feed->run(ctx, line);
	if (rc == HS_CMD_PENDING && ctx->watch.nested_pending) {
		w->nested_cancel = ctx->cancel;
	} else {
		ctx->watch.nested_pending = false;
		w->nested_cancel = NULL;
	}
	ctx->cancel = watch_cancel;
	capture_drain(w);
	w->dirty = true;
}

static void prompt_key(struct hs_watch *w, int ch)
{
	switch (ch) {
	case 27:		/* Esc */
		w->prompt = 0;
		break;
	case '\n':
	case '\r':
	case KEY_ENTER: {
		int kind = w->prompt;
		w->line[w->len] = '\0';
		w->prompt = 0;
		if (kind == '/') {
			char err[256];
			if (hs_wmodel_set_filter(w->m, w->line, err, sizeof(err)) < 0) {
				char msg[300];
				snprintf(msg, sizeof(msg), "error: %s", err);
				hs_wmodel_event(w->m, msg);
			}
		} else {
			run_command(w, w->line);
		}
		break;
	}
	case KEY_BACKSPACE:
	case 127:
	case 8:
		if (w->len == 0) {
			w->prompt = 0;
			break;
		}
		/* a whole UTF-8 character */
		do
			w->len--;
		while (w->len > 0 && ((unsigned char)w->line[w->len] & 0xc0) == 0x80);
		break;
	case 21:		/* Ctrl-U */
		w->len = 0;
		break;
	default:
		if (ch >= 32 && ch < 256 && ch != 127 && w->len + 1 < sizeof(w->line))
			w->line[w->len++] = (char)ch;
		break;
	}
}

static void key(struct hs_watch *w, int ch)
{
	struct hs_wmodel *m = w->m;

	w->dirty = true;
	if (ch == KEY_RESIZE) {
		relayout(w);
		return;
	}
	if (w->prompt) {
		prompt_key(w, ch);
		return;
	}
	if (w->show_help) {
		w->show_help = false;
		if (ch != 'q' && ch != 3)
			return;
	}
	switch (ch) {
	case 'q':
	case 'Q':
	case 3:			/* Ctrl-C */
		leave(w);
		return;
	case '\t':
		w->focus = (w->focus + 1) % HS_WP__COUNT;
		break;
	case KEY_BTAB:
		w->focus = (w->focus + HS_WP__COUNT - 1) % HS_WP__COUNT;
		break;
	case KEY_UP: case 'k':
		hs_wmodel_scroll(m, w->focus, HS_WK_UP);
		break;
	case KEY_DOWN: case 'j':
		hs_wmodel_scroll(m, w->focus, HS_WK_DOWN);
		break;
	case KEY_PPAGE:
		hs_wmodel_scroll(m, w->focus, HS_WK_PGUP);
		break;
	case KEY_NPAGE: case ' ':
		hs_wmodel_scroll(m, w->focus, HS_WK_PGDN);
		break;
	case KEY_HOME: case 'g':
		hs_wmodel_scroll(m, w->focus, HS_WK_HOME);
		break;
	case KEY_END: case 'G':
		hs_wmodel_scroll(m, w->focus, HS_WK_END);
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (w->focus == HS_WP_TRACES) {
			hs_wmodel_select(m, m->view[HS_WP_TRACES].sel);
			w->focus = HS_WP_DETAIL;
		} else if (w->focus == HS_WP_LINKS && m->topo && m->nlinks) {
			/* the traces that crossed the link's first switch */
			const struct hs_wlink *l = &m->links[m->order[m->view[HS_WP_LINKS].sel]];
			char f[HS_NAME_MAX + 16], err[128];
			snprintf(f, sizeof(f), "switch %s", m->topo->sw[l->a].name);
			hs_wmodel_set_filter(m, f, err, sizeof(err));
			w->focus = HS_WP_TRACES;
		}
		break;
	case '/':
		w->prompt = '/';
		w->len = strlen(m->filter_text);
		memcpy(w->line, m->filter_text, w->len);
		break;
	case ':':
		w->prompt = ':';
		w->len = 0;
		break;
	case 'p':
	case 'P':
		m->paused = !m->paused;
		hs_wmodel_event(m, m->paused ? "view paused (capture goes on); p resumes" :
				"view resumed");
		if (!m->paused) {
			w->fresh = true;	/* what was published while paused */
			refresh_model(w);
		}
		break;
	case 's':
		hs_wmodel_set_sort(m, (m->sort + 1) % HS_WSORT__COUNT);
		break;
	case '?':
	case 'h':
		w->show_help = true;
		break;
	case 12:		/* Ctrl-L */
		clearok(curscr, TRUE);
		break;
	default:
		w->dirty = false;
		break;
	}
}

static void on_stdin(uv_poll_t *p, int status, int events)
{
	struct hs_watch *w = p->data;
	int ch;

	if (status < 0) {
		hs_wmodel_event(w->m, "error: cannot read the terminal");
		leave(w);
		return;
	}
	while (!w->leaving && (ch = wgetch(stdscr)) != ERR)
		key(w, ch);
	if (!w->leaving && w->dirty)
		redraw(w);
}

static void on_winch(uv_signal_t *s, int signum)
{
	struct hs_watch *w = s->data;
	struct winsize ws;

	if (w->leaving)
		return;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
	relayout(w);
	redraw(w);
}

/* ---- start and leave ------------------------------------------------------------- */

static void handle_closed(uv_handle_t *h)
{
	struct hs_watch *w = h->data;

	if (--w->open_handles > 0)
		return;
	hs_wmodel_free(w->m);
	free(w->recent);
	free(w);
}

static void watch_cancel(struct hs_ctx *ctx)
{
	if (ctx->watch.view)
		leave(ctx->watch.view);
}

static void leave(struct hs_watch *w)
{
	struct hs_ctx *ctx = w->ctx;

	if (w->leaving)
		return;
	/* a pending ':' verb is cancelled with the view */
	if (ctx->watch.nested_pending && w->nested_cancel) {
		void (*c)(struct hs_ctx *) = w->nested_cancel;
		w->nested_cancel = NULL;
		ctx->cancel = c;
		c(ctx);
		capture_drain(w);
	}
	w->leaving = true;
	hs_unsub_traces(&ctx->subs, on_trace, w);
	hs_unsub_events(&ctx->subs, on_event, w);
	if (w->feed->stop)
		w->feed->stop(ctx);
	uv_poll_stop(&w->poll);
	uv_timer_stop(&w->timer);
	uv_signal_stop(&w->winch);
	uv_close((uv_handle_t *)&w->poll, handle_closed);
	uv_close((uv_handle_t *)&w->timer, handle_closed);
	uv_close((uv_handle_t *)&w->winch, handle_closed);

	windows_free(w);
	werase(stdscr);
	wnoutrefresh(stdscr);
	doupdate();
	curs_set(1);
	endwin();
	capture_close(w);
	if (ctx->watch.view == w)
		ctx->watch.view = NULL;
	ctx->cancel = w->saved_cancel;
	terminal_back(ctx);
	/* what a verb prints from now on goes to the terminal again */
	hs_cmd_finish(ctx, HS_CMD_OK);
}

static void colors_init(struct hs_watch *w)
{
	const char *nc = getenv("NO_COLOR");

	static bool started;

	w->color = has_colors() && !(nc && nc[0]);
	if (!w->color)
		return;
	if (!started && start_color() == ERR) {
		w->color = false;
		return;
	}
	started = true;
	short bg = COLOR_BLACK;
	if (use_default_colors() == OK)
		bg = -1;
	init_pair(CP_DELIVERED, COLOR_GREEN, bg);
	init_pair(CP_DROPPED, COLOR_RED, bg);
	init_pair(CP_LOOPED, COLOR_MAGENTA, bg);
	init_pair(CP_PROBE, COLOR_CYAN, bg);
	init_pair(CP_UNKNOWN, COLOR_YELLOW, bg);
	init_pair(CP_FOCUS, COLOR_CYAN, bg);
	init_pair(CP_STATUS, COLOR_BLACK, COLOR_CYAN);
	init_pair(CP_TITLE, COLOR_WHITE, bg);
}

/* leaving the program with the view up must not leave the terminal in it */
static void watch_atexit(void)
{
	if (!isendwin())
		endwin();
}

int hs_watch_start(struct hs_ctx *ctx)
{
	struct hs_watch *w;
	int rc;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return out_err(ctx->out, "watch: needs a terminal");
	if (ctx->watch.view)
		return out_err(ctx->out, "watch: already active");

	/* ncursesw draws UTF-8 only under a UTF-8 locale */
	const char *cur = setlocale(LC_CTYPE, NULL);
	if (!cur || strcmp(cur, "C") == 0 || strcmp(cur, "POSIX") == 0)
		setlocale(LC_CTYPE, "");
	bool utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;

	fflush(ctx->out->fp);
	fflush(ctx->out->err);
	if (ctx->con)
		ctx->con->suspend(ctx);
	if (!ctx->watch.screen) {
		atexit(watch_atexit);
		ctx->watch.screen = newterm(NULL, stdout, stdin);
		if (!ctx->watch.screen) {
			terminal_back(ctx);
			const char *term = getenv("TERM");
			return out_err(ctx->out, "watch: cannot use terminal type '%s'",
				       term ? term : "");
		}
	} else {
		/* back from endwin(): the terminal may have changed size meanwhile */
		struct winsize ws;
		set_term(ctx->watch.screen);
		if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
			resizeterm(ws.ws_row, ws.ws_col);
	}

	w = hs_xcalloc(1, sizeof(*w));
	w->ctx = ctx;
	w->m = hs_wmodel_new(HS_WATCH_TRACES, HS_WATCH_EVENTS);
	w->m->sep = utf8 ? " \xe2\x80\xba " : " > ";
	w->m->ell = utf8 ? "\xe2\x80\xa6" : "...";
	w->recent = hs_xcalloc(HS_WATCH_RECENT, sizeof(*w->recent));
	w->saved_fp = ctx->out->fp;
	w->saved_err = ctx->out->err;
	w->feed = ctx->watch.feed ? ctx->watch.feed : &local_feed;

	set_term(ctx->watch.screen);
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	colors_init(w);

	rc = hs_console_poll_stdin(ctx->loop, &w->poll);
	if (rc == 0) {
		w->open_handles++;
		w->poll.data = w;
		rc = uv_poll_start(&w->poll, UV_READABLE, on_stdin);
	}
	if (rc < 0) {
		char msg[200];
		endwin();
		if (w->open_handles) {
			uv_close((uv_handle_t *)&w->poll, handle_closed);
		} else {
			hs_wmodel_free(w->m);
			free(w->recent);
			free(w);
		}
		terminal_back(ctx);
		snprintf(msg, sizeof(msg), "%s", uv_strerror(rc));
		return out_err(ctx->out, "watch: cannot poll the terminal: %s", msg);
	}
	uv_timer_init(ctx->loop, &w->timer);
	w->timer.data = w;
	w->open_handles++;
	uv_signal_init(ctx->loop, &w->winch);
	w->winch.data = w;
	w->open_handles++;
	uv_timer_start(&w->timer, on_tick, 1000 / HS_WATCH_FPS, 1000 / HS_WATCH_FPS);
	uv_signal_start(&w->winch, on_winch, SIGWINCH);
	if (w->feed != &local_feed) {
		/* what the daemon sends is told (hs_watch_fed) */
		w->heard = true;
	} else {
		/* a full list of subscribers: the model is read on every tick instead */
		w->heard = hs_sub_traces(&ctx->subs, HS_TRACES_ALL, on_trace, NULL, w) == 0;
		if (w->heard && hs_sub_events(&ctx->subs, on_event, w) < 0) {
			hs_unsub_traces(&ctx->subs, on_trace, w);
			w->heard = false;
		}
	}

	ctx->watch.view = w;
	if (w->feed->start)
		w->feed->start(ctx);
	if (capture_open(w) < 0) {
		w->ctx->out->fp = w->saved_fp;
		w->ctx->out->err = w->saved_err;
	}
	w->saved_cancel = ctx->cancel;
	ctx->cancel = watch_cancel;
	hs_wmodel_event(w->m, "watch: Tab moves between panes, / filters, : runs a command, "
			"p pauses, ? shows the keys, q returns to the prompt");
	refresh_model(w);
	relayout(w);
	redraw(w);
	return HS_CMD_PENDING;
}
