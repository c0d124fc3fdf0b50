/* stats.c - stats by FIELDS [window D] [where FILTER] [file PATH | for D] [keys N]
 *
 * Tumbling-window aggregates of per-packet records, counted by wstats.h;
 * the verb parses, runs it and prints its windows.
 *
 * Over a file (file PATH) the frames go through the same decoder; the verb
 * returns when the file is read.
 *
 * Over the running capture the verb is pending, its counts subscribed to
 * the pipeline; a window is printed once no trace with a hop in it can
 * still close (its end plus the trace timeout has passed, in capture time,
 * or in wall time on a live interface), above the prompt when interactive.
 * It ends when 'for D' has passed, when the capture ends, or on Ctrl-C,
 * printing the windows still open. On a live interface the fabric view
 * hands the traces of packets seen before the end later, as their parts
 * are stored: past 'for D' no copy is counted, and those drops are waited
 * for, a bounded time.
 *
 * 'where' is a BPF filter on the inner packet, compiled like 'filter add'.
 */
#include <errno.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "console.h"
#include "follow.h"
#include "fwalk.h"
#include "wstats.h"

#define STATS_TICK_MS	100
#define STATS_LIVE_SLACK_NS HS_NS_PER_SEC	/* traces close on the 500 ms commit tick */
#define STATS_WHERE_MAX	1024
#define STATS_VIEW_SLACK_NS (3 * HS_NS_PER_SEC)	/* the view's tick and its read, past
						 * what it waits for */

struct hs_stats {
	struct hs_ctx *ctx;
	struct hs_wstats *w;
	unsigned fields;
	uint64_t timeout_ns, keys;
	bool header_done;		/* a row was printed */
	struct hs_out o;		/* rows go here */

	/* live */
	bool live, ending;
	uv_timer_t *tick;		/* closes due windows; finishes the verb */
	uint64_t deadline_mono;		/* 'for D', 0 = until the capture ends */
	uint64_t end_wall;		/* 'for D' passed then, on a live interface */
	uint64_t wait_mono;		/* ... the fabric view is waited for until then */
	bool view_unread;		/* it had not read up to the end by then */
};

/* ---- rows ----------------------------------------------------------------- */

static const char *sw_name(const struct hs_ctx *ctx, const struct hs_addr *a, char *buf,
			   size_t len)
{
	int sw = ctx->topo && a->af ? hs_topo_switch_by_addr(ctx->topo, a) : -1;

	if (sw >= 0) {
		snprintf(buf, len, "%s", ctx->topo->sw[sw].name);
		return buf;
	}
	return hs_addr_str(a, buf, len);
}

/* the key columns, in the order of the text's: JSON key (the title too)
 * and text width (negative: to the left) */
static const struct {
	unsigned bit;
	const char *key;
	int width;
} key_cols[] = {
	{ HS_WF_SWITCH, "switch", -16 },
	{ HS_WF_SRC, "src", -16 },
	{ HS_WF_DST, "dst", -16 },
	{ HS_WF_PROTO, "proto", -5 },
	{ HS_WF_SPORT, "sport", 5 },
	{ HS_WF_DPORT, "dport", 5 },
	{ HS_WF_DSCP, "dscp", 4 },
};

/* " %-16s" from -16 */
static const char *col_fmt(int width, const char *conv, char *buf, size_t len)
{
	snprintf(buf, len, " %%%d%s", width, conv);
	return buf;
}

static void print_header(struct hs_stats *s)
{
	struct hs_out *o = &s->o;

	out_text(o, "%-26s", "window_start");
	for (size_t i = 0; i < HS_ARRAY_SIZE(key_cols); i++)
		if (s->fields & key_cols[i].bit)
			out_text(o, " %*s", key_cols[i].width, key_cols[i].key);
	out_text(o, " %10s %12s %7s %6s\n", "packets", "bytes", "flows", "drops");
}

static void on_row(void *arg, const struct hs_win_row *r)
{
	struct hs_stats *s = arg;
	struct hs_out *o = &s->o;
	const struct hs_win_key *k = r->key;
	char a[HS_ADDRSTRLEN], fmt[16];
	bool first = true;

	if (!s->header_done) {
		print_header(s);
		s->header_done = true;
	}
	out_obj_open(o, NULL);
	out_time(o, "window_start_ns", "%-26s", r->window_start);
	/* the row of what went over the key cap: no key in JSON ("other"
	 * says so), "(other)" then "-" in text */
	if (r->other)
		out_bool(o, "other", NULL, true);
	for (size_t i = 0; i < HS_ARRAY_SIZE(key_cols); i++) {
		const char *key = key_cols[i].key, *str = NULL;
		int w = key_cols[i].width;
		uint64_t num = 0;

		switch (s->fields & key_cols[i].bit) {
		case 0: continue;
		case HS_WF_SWITCH: str = sw_name(s->ctx, &k->sw, a, sizeof(a)); break;
		case HS_WF_SRC: str = hs_addr_str(&k->src, a, sizeof(a)); break;
		case HS_WF_DST: str = hs_addr_str(&k->dst, a, sizeof(a)); break;
		case HS_WF_PROTO: str = hs_proto_name(k->proto, a, sizeof(a)); break;
		case HS_WF_SPORT: num = k->sport; break;
		case HS_WF_DPORT: num = k->dport; break;
		default: num = k->dscp; break;
		}
		if (r->other)
			out_str(o, NULL, col_fmt(w, "s", fmt, sizeof(fmt)), first ? "(other)" : "-");
		else if (str)
			out_str(o, key, col_fmt(w, "s", fmt, sizeof(fmt)), str);
		else
			out_uint(o, key, col_fmt(w, PRIu64, fmt, sizeof(fmt)), num);
		first = false;
	}
	out_uint(o, "packets", " %10" PRIu64, r->packets);
	out_uint(o, "bytes", " %12" PRIu64, r->bytes);
	out_uint(o, "flows", " %7" PRIu64, r->flows);
	out_uint(o, "drops", " %6" PRIu64, r->drops);
	out_obj_close(o);
	out_nl(o);
}

/* no row in any window: one line says so, in text; in JSON the empty
 * answer every verb gives, an empty array */
static void print_empty(struct hs_stats *s, FILE *fp)
{
	static const char text[] = "(no rows: no copy was counted in any window)";
	struct hs_out *o = &s->o;

	if (s->header_done)
		return;
	if (!o->json && s->live && s->ctx->interactive) {
		hs_async_print(s->ctx, "%s", text);
		return;
	}
	o->fp = fp;
	out_obj_open(o, NULL);
	out_arr_open(o, "rows");
	out_arr_close(o);
	out_obj_close(o);
	out_text(o, "%s", text);
	out_nl(o);
	fflush(fp);
}

/* what was left out, on stderr: never silently */
static void report_losses(struct hs_stats *s)
{
	struct hs_win_stats st;

	hs_win_get_stats(hs_wstats_win(s->w), &st);
	if (st.over_keys)
		out_warn(s->ctx->out, "stats: %llu records beyond %llu keys in a window were "
			 "summed as 'other'", (unsigned long long)st.over_keys,
			 (unsigned long long)s->keys);
	if (st.late || st.late_drops)
		out_warn(s->ctx->out, "stats: %llu packets and %llu drops came after their "
			 "window was printed and are not counted", (unsigned long long)st.late,
			 (unsigned long long)st.late_drops);
	if (st.forced)
		out_warn(s->ctx->out, "stats: %llu windows were printed early to bound memory",
			 (unsigned long long)st.forced);
	if (st.flows_untracked)
		out_warn(s->ctx->out, "stats: flows undercounted for %llu records (flow set "
			 "full)", (unsigned long long)st.flows_untracked);
}

/* ---- setting up and tearing down -------------------------------------------- */

static void stats_free(struct hs_stats *s)
{
	if (!s)
		return;
	hs_wstats_free(s->w);
	free(s);
}

static void tick_closed(uv_handle_t *h)
{
	free(h);
}

/* ---- over a file ------------------------------------------------------------ */

static bool file_frame(void *arg, struct hs_pkt *p, bool ok)
{
	struct hs_stats *s = arg;

	hs_wstats_file_frame(s->w, p, ok);
	return true;
}

/* the end of the file, a damaged one (after its good frames) or Ctrl-C:
 * the windows read so far go out */
static int file_end(void *arg, int rc)
{
	struct hs_stats *s = arg;

	hs_wstats_file_end(s->w);
	if (rc != PCAP_ERROR) {
		print_empty(s, s->o.fp);
		report_losses(s);
	}
	fflush(s->o.fp);
	if (rc == 1)
		out_warn(s->ctx->out, "stats: interrupted; the windows above cover what was read");
	stats_free(s);
	return rc == PCAP_ERROR ? HS_CMD_FAIL : HS_CMD_OK;
}

/* takes s */
static int stats_file(struct hs_ctx *ctx, struct hs_stats *s, const char *path)
{
	int rc = hs_fwalk(ctx, "", path, file_frame, file_end, s);
	if (rc != HS_CMD_PENDING)
		stats_free(s);
	return rc;
}

/* ---- over the running capture ------------------------------------------------ */

/* print what hs_win emits: above the prompt when interactive */
static void live_close(struct hs_stats *s, uint64_t until, bool all)
{
	struct hs_ctx *ctx = s->ctx;
	char *buf = NULL;
	size_t len = 0;
	FILE *ms = ctx->interactive && !ctx->out->json ? open_memstream(&buf, &len) : NULL;

	s->o.fp = ms ? ms : ctx->out->fp;
	if (all)
		hs_win_flush(hs_wstats_win(s->w));
	else
		hs_win_close_until(hs_wstats_win(s->w), until);
	if (!ms) {
		fflush(s->o.fp);
		return;
	}
	fclose(ms);
	for (char *line = buf, *nl; line && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		hs_async_print(ctx, "%s", line);
		if (!nl)
			break;
	}
	free(buf);
}

static void on_event(void *arg, const struct hs_event *ev);

static void live_end(struct hs_ctx *ctx, int status)
{
	struct hs_stats *s = ctx->stats;

	if (!s)
		return;
	hs_wstats_unsubscribe(s->w);
	hs_unsub_events(&ctx->subs, on_event, s);
	live_close(s, 0, true);
	print_empty(s, ctx->out->fp);
	report_losses(s);
	if (s->view_unread)
		out_warn(ctx->out, "stats: the fabric view had not read the history up to the "
			 "end of the run: drops of packets it has still to read are not counted");
	ctx->stats = NULL;
	ctx->pending = NULL;
	uv_timer_stop(s->tick);
	uv_close((uv_handle_t *)s->tick, tick_closed);
	stats_free(s);
	hs_cmd_finish(ctx, status);
}

/* the fabric view takes the traces of packets first seen before the end
 * of the run from the history, joined, as late as their parts are stored
 * and told of (follow.h): those it has not read yet are still to come */
static bool view_owes(const struct hs_stats *s)
{
	struct hs_follow_status f;

	hs_follow_get(s->ctx, &f);
	return f.on && !f.err && f.behind_ns && f.read_until < s->end_wall;
}

/* 'for D' passed: on a live interface, the copies after now are not
 * counted, and the drops the fabric view still owes the run are waited
 * for, as long as the view takes to read a part stored last; true when
 * the run is to end now */
static bool run_over(struct hs_stats *s, bool live)
{
	uint64_t now = hs_mono_ns();

	if (!live)
		return true;
	if (!s->end_wall) {
		s->end_wall = hs_wall_ns();
		s->wait_mono = now + 2 * s->timeout_ns + HS_HEARTBEAT_NS + STATS_VIEW_SLACK_NS;
		hs_wstats_end_at(s->w, s->end_wall);
	}
	if (!view_owes(s))
		return true;
	s->view_unread = now >= s->wait_mono;
	return s->view_unread;
}

static void live_tick(uv_timer_t *t)
{
	struct hs_stats *s = t->data;
	struct hs_ctx *ctx = s->ctx;
	const char *src, *why;
	bool is_file = true;
	uint64_t a, b;
	bool live = hs_capture_info(ctx, &src, &is_file, &why, &a, &b) && !is_file;

	if (s->ending || (s->deadline_mono && hs_mono_ns() >= s->deadline_mono &&
			  run_over(s, live))) {
		live_end(ctx, HS_CMD_OK);
		return;
	}
	uint64_t now = hs_wstats_watermark(s->w);
	if (live)
		now = hs_wall_ns() > STATS_LIVE_SLACK_NS ? hs_wall_ns() - STATS_LIVE_SLACK_NS : 0;
	if (now > s->timeout_ns)
		live_close(s, now - s->timeout_ns, false);
}

/* the capture stopped, its open traces closed: nothing more is counted,
 * and the last windows go out from the loop, not from inside the stop */
static void on_event(void *arg, const struct hs_event *ev)
{
	struct hs_stats *s = arg;

	if (ev->kind != HS_EV_CAPTURE_STOPPED)
		return;
	hs_wstats_unsubscribe(s->w);
	s->ending = true;
	uv_timer_start(s->tick, live_tick, 0, 0);
}

static void live_cancel(struct hs_ctx *ctx)
{
	live_end(ctx, HS_CMD_OK);
}

static int stats_live(struct hs_ctx *ctx, struct hs_stats *s, uint64_t for_ns)
{
	if (!ctx->loop)
		return out_err(ctx->out, "stats needs the console's event loop");
	if (hs_wstats_subscribe(s->w, &ctx->subs) < 0 ||
	    hs_sub_events(&ctx->subs, on_event, s) < 0) {
		hs_wstats_unsubscribe(s->w);
		return out_err(ctx->out, "stats: cannot hear the packet pipeline: too many "
			       "subscribers");
	}
	s->live = true;
	s->tick = hs_xcalloc(1, sizeof(*s->tick));
	uv_timer_init(ctx->loop, s->tick);
	s->tick->data = s;
	if (for_ns)
		s->deadline_mono = hs_mono_ns() + for_ns;
	/* from the window of now on: drops of traces that ended before are
	 * not this run's (their window started before it, and is partial) */
	const char *src, *why;
	bool is_file = true;
	uint64_t a, b;
	if (hs_capture_info(ctx, &src, &is_file, &why, &a, &b) && !is_file)
		hs_win_begin(hs_wstats_win(s->w), hs_wall_ns());
	else if (ctx->last_stats.last_ts)
		hs_win_begin(hs_wstats_win(s->w), ctx->last_stats.last_ts);
	uv_update_time(ctx->loop);
	uv_timer_start(s->tick, live_tick, STATS_TICK_MS, STATS_TICK_MS);
	ctx->stats = s;
	ctx->pending = s;
	ctx->cancel = live_cancel;
	return HS_CMD_PENDING;
}

/* ---- the verb -------------------------------------------------------------------- */

static bool is_keyword(const char *w)
{
	static const char *const kw[] = { "by", "window", "where", "file", "for", "keys" };

	for (size_t i = 0; i < HS_ARRAY_SIZE(kw); i++)
		if (strcmp(w, kw[i]) == 0)
			return true;
	return false;
}

int cmd_stats(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_out *o = ctx->out;
	const char *by = NULL, *file = NULL;
	char where[STATS_WHERE_MAX] = "";
	uint64_t window_ns = HS_NS_PER_SEC, for_ns = 0, keys = HS_WIN_KEYS_DEFAULT;
	bool has_for = false, has_where = false;
	char err[PCAP_ERRBUF_SIZE + 256];
	unsigned fields;

	for (int i = 1; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!is_keyword(k))
			return out_err(o, "stats: unexpected '%s' (by, window, where, file, for, "
				       "keys)", k);
		if (!v)
			return out_err(o, "stats: '%s' needs a value", k);
		i++;
		if (strcmp(k, "by") == 0) {
			by = v;
		} else if (strcmp(k, "window") == 0) {
			if (hs_parse_duration(v, &window_ns) < 0 || window_ns == 0)
				return out_err(o, "stats: bad window '%s' (a duration above zero, "
					       "e.g. 100ms, 1s, 1m)", v);
		} else if (strcmp(k, "where") == 0) {
			/* the filter runs to the next keyword */
			size_t n = 0;
			has_where = true;
			for (; i < argc && !is_keyword(argv[i]); i++) {
				int w = snprintf(where + n, sizeof(where) - n, "%s%s", n ? " " : "",
						 argv[i]);
				if (w < 0 || (size_t)w >= sizeof(where) - n)
					return out_err(o, "stats: filter too long");
				n += (size_t)w;
			}
			i--;
		} else if (strcmp(k, "file") == 0) {
			file = v;
		} else if (strcmp(k, "for") == 0) {
			if (hs_parse_duration(v, &for_ns) < 0 || for_ns == 0)
				return out_err(o, "stats: bad duration '%s' (e.g. 500ms, 10s, 2m)", v);
			has_for = true;
		} else {
			if (hs_parse_uint(v, 1000000, &keys) < 0 || keys == 0)
				return out_err(o, "stats: bad key cap '%s' (1 to 1000000)", v);
		}
	}
	if (!by)
		return out_err(o, "stats: 'by FIELDS' is needed (src, dst, sport, dport, proto, "
			       "switch, flow, dscp)");
	if (hs_win_fields_parse(by, &fields, err, sizeof(err)) < 0)
		return out_err(o, "stats: %s", err);
	if (file && has_for)
		return out_err(o, "stats: 'file' and 'for' do not go together (a file is read "
			       "to its end)");
	if (has_where && !where[0])
		return out_err(o, "stats: 'where' needs a filter expression");

	struct hs_stats *s = hs_xcalloc(1, sizeof(*s));
	s->ctx = ctx;
	s->fields = fields;
	s->keys = keys;
	out_init(&s->o, o->fp, o->err, o->json);
	struct hs_wstats_cfg cfg = {
		.win = {
			.window_ns = window_ns,
			.fields = fields,
			.max_keys = (size_t)keys,
			.on_row = on_row,
			.arg = s,
		},
		.where = where,
		.file = file != NULL,
		.timeout_ns = ctx->set.trace_timeout_ns ? ctx->set.trace_timeout_ns : HS_NS_PER_SEC,
		.topo = ctx->topo,
	};
	s->timeout_ns = cfg.timeout_ns;
	s->w = hs_wstats_new(&cfg, err, sizeof(err));
	if (!s->w) {
		stats_free(s);
		return out_err(o, "stats: %s", err);
	}
	/* the arguments are sound: now what they run on */
	if (!file && (!hs_capture_running(ctx) || ctx->stats)) {
		stats_free(s);
		if (ctx->stats)
			return out_err(o, "stats: already running on the capture");
		return out_err(o, "stats: no capture is running (capture start, or stats ... "
			       "file PATH)");
	}
	if (file)
		return stats_file(ctx, s, file);
	int rc = stats_live(ctx, s, for_ns);
	if (rc < 0)
		stats_free(s);
	return rc;
}
