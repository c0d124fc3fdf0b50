/* capture.c - capture start|stop|status: the packet source */
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>


#include "cmd.h"
#include "console.h"
#include "follow.h"
#include "workers.h"

static void print_summary(struct hs_ctx *ctx);

/* interface names have no '/' and no capture-file suffix */
static bool looks_like_path(const char *s)
{
	static const char *const sfx[] = { ".pcap", ".pcapng", ".cap", ".dump" };
	size_t n = strlen(s);

	if (strchr(s, '/'))
		return true;
	for (size_t i = 0; i < HS_ARRAY_SIZE(sfx); i++) {
		size_t m = strlen(sfx[i]);
		if (n > m && strcmp(s + n - m, sfx[i]) == 0)
			return true;
	}
	return false;
}

static void pending_done(struct hs_ctx *ctx, int status)
{
	ctx->cancel = NULL;
	if (status == 0)
		print_summary(ctx);
	hs_cmd_finish(ctx, status < 0 ? HS_CMD_FAIL : HS_CMD_OK);
}

/* Ctrl-C while a runbook waits for the capture: stop it, keep what was seen */
static void pending_cancel(struct hs_ctx *ctx)
{
	ctx->cancel = NULL;
	hs_capture_stop(ctx, "interrupted");
	print_summary(ctx);
	hs_cmd_finish(ctx, HS_CMD_OK);
}

static int capture_start(struct hs_ctx *ctx, int argc, char **argv)
{
	const char *source = NULL;
	uint64_t for_ns = 0, ring = 0;
	unsigned workers = 0;
	bool again = false;
	struct stat sb;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--for") == 0) {
			if (i + 1 >= argc)
				return out_err(ctx->out, "'--for' needs a duration (e.g. 10s)");
			if (hs_parse_duration(argv[++i], &for_ns) < 0 || for_ns == 0)
				return out_err(ctx->out, "bad duration '%s' (e.g. 500ms, 10s, 2m)",
					       argv[i]);
		} else if (strcmp(argv[i], "buffer") == 0) {
			char lo[32], hi[32];
			if (i + 1 >= argc)
				return out_err(ctx->out, "'buffer' needs a size (e.g. 64M)");
			if (hs_parse_size(argv[++i], HS_LIVE_RING_MAX, &ring) < 0 ||
			    ring < HS_LIVE_RING_MIN)
				return out_err(ctx->out, "bad buffer size '%s' (%s to %s, e.g. 64M)",
					       argv[i], hs_fmt_size(HS_LIVE_RING_MIN, lo, sizeof(lo)),
					       hs_fmt_size(HS_LIVE_RING_MAX, hi, sizeof(hi)));
		} else if (strcmp(argv[i], "workers") == 0) {
			char err[128];
			if (i + 1 >= argc)
				return out_err(ctx->out, "'workers' needs a number (e.g. 2)");
			if (hs_workers_parse(argv[++i], &workers, err, sizeof(err)) < 0)
				return out_err(ctx->out, "%s", err);
		} else if (strcmp(argv[i], "again") == 0 && source) {
			again = true;
		} else if (!source) {
			source = argv[i];
		} else {
			return out_err(ctx->out, "capture start: unexpected '%s'", argv[i]);
		}
	}
	if (!source && ctx->topo && ctx->topo->analyzer_iface[0])
		source = ctx->topo->analyzer_iface;
	if (!source)
		return out_err(ctx->out, "capture start needs an interface or a file");

	bool is_file = stat(source, &sb) == 0 && !S_ISDIR(sb.st_mode);
	if (!is_file && looks_like_path(source))
		return out_err(ctx->out, "cannot open '%s': No such file or directory", source);
	if (is_file && ring)
		return out_err(ctx->out, "capture start: 'buffer' is for an interface, "
			       "'%s' is a file", source);
	if (again && !is_file)
		return out_err(ctx->out, "capture start: 'again' is for a file, '%s' is not one",
			       source);
	ctx->read_again = again;
	if (hs_capture_start(ctx, source, is_file, ring, for_ns, workers) < 0)
		return HS_CMD_FAIL;

	/* a runbook waits for a file to be read and for --for to run out;
	 * at the prompt a file is read in the background */
	if (for_ns || (is_file && !ctx->interactive)) {
		hs_capture_on_done(ctx, pending_done);
		ctx->cancel = pending_cancel;
		return HS_CMD_PENDING;
	}
	if (ctx->interactive)
		out_text(ctx->out, "%s '%s'\n", is_file ? "reading" : "capturing on", source);
	return HS_CMD_OK;
}

static void print_summary(struct hs_ctx *ctx)
{
	struct hs_capture_stats *s = &ctx->last_stats;
	struct hs_tracer_stats ts;
	const char *source, *reason;
	bool is_file;
	uint64_t stored, unstored;

	if (!hs_capture_info(ctx, &source, &is_file, &reason, &stored, &unstored))
		return;
	hs_capture_trace_stats(ctx, &ts);
	out_obj_open(ctx->out, NULL);
	/* the names and shapes of 'capture status' for the same figures */
	out_str(ctx->out, "source", "capture of '%s' ", source);
	out_str(ctx->out, "state", "%s", "ended");
	out_str(ctx->out, "end_reason", " (%s): ", reason);
	out_uint(ctx->out, "packets", "%" PRIu64 " packets, ", s->packets);
	out_uint(ctx->out, "decode_errors", "%" PRIu64 " decode errors, ", s->decode_errors);
	out_uint(ctx->out, "not_ip", "%" PRIu64 " not IP, ", s->not_ip);
	out_uint(ctx->out, "traces_closed", "%" PRIu64 " traces", ts.closed);
	out_obj_open(ctx->out, "outcomes");
	out_uint(ctx->out, "delivered", NULL, ts.by_outcome[HS_OUT_DELIVERED]);
	out_uint(ctx->out, "dropped", " (%" PRIu64 " dropped, ", ts.by_outcome[HS_OUT_DROPPED]);
	out_uint(ctx->out, "looped", "%" PRIu64 " looped)", ts.by_outcome[HS_OUT_LOOPED]);
	out_uint(ctx->out, "unknown", NULL, ts.by_outcome[HS_OUT_UNKNOWN]);
	out_obj_close(ctx->out);
	/* what the history could not take (a full disk), said where it ends */
	if (unstored)
		out_uint(ctx->out, "history_unstored", "; %" PRIu64 " history rows not stored",
			 unstored);
	out_obj_close(ctx->out);
	out_nl(ctx->out);
}

/* the frames a worker took a second, over el ns */
static uint64_t worker_rate(const struct hs_worker_stats *w, uint64_t el)
{
	return el ? (uint64_t)((double)w->packets * 1e9 / (double)el) : 0;
}

/* one analyzer's heartbeat row (the analyzers table, in its column order) */
enum { A_NAME, A_SESSION, A_SEEN, A_PACKETS, A_KDROPS, A_RATE, A_QUEUED, A_LAG, A_LOST,
       A_HISTORY, A__N };

static uint64_t uval(const struct hs_value *v)
{
	return v->type == HS_VAL_INT && v->i > 0 ? (uint64_t)v->i : 0;
}

static void analyzer_row(void *arg, const struct hs_value *v, int ncol)
{
	struct hs_out *o = arg;
	uint64_t now = hs_wall_ns(), seen = uval(&v[A_SEEN]);
	char age[32], lag[32];

	if (ncol != A__N)
		return;
	double rate = v[A_RATE].type == HS_VAL_REAL ? v[A_RATE].d :
		      v[A_RATE].type == HS_VAL_INT ? (double)v[A_RATE].i : 0;
	out_obj_open(o, NULL);
	out_str(o, "name", "  %-12s", v[A_NAME].s ? v[A_NAME].s : "?");
	out_time(o, "seen_ns", NULL, seen);
	out_text(o, " seen %s ago", hs_fmt_duration(now > seen ? now - seen : 0, age, sizeof(age)));
	if (v[A_SESSION].type == HS_VAL_INT)
		out_int(o, "session", ", capturing (session %" PRId64 ")", v[A_SESSION].i);
	else
		out_null(o, "session");
	out_uint(o, "packets", ", %" PRIu64 " packets", uval(&v[A_PACKETS]));
	out_uint(o, "packets_per_sec", " (%" PRIu64 "/s)", (uint64_t)(rate + 0.5));
	out_uint(o, "kernel_drops", ", %" PRIu64 " kernel drops", uval(&v[A_KDROPS]));
	out_uint(o, "history_waiting", ", %" PRIu64 " rows waiting", uval(&v[A_QUEUED]));
	out_uint(o, "history_lag_ns", NULL, uval(&v[A_LAG]));
	if (uval(&v[A_LAG]))
		out_text(o, " (for %s)", hs_fmt_duration(uval(&v[A_LAG]), lag, sizeof(lag)));
	out_uint(o, "history_unstored", ", %" PRIu64 " not stored", uval(&v[A_LOST]));
	/* which of its traces it stores: NULL from before heartbeats said */
	if (v[A_HISTORY].type == HS_VAL_TEXT)
		out_str(o, "history", ", history %s", v[A_HISTORY].s);
	else
		out_null(o, "history");
	out_nl(o);
	out_obj_close(o);
}

/* every analyzer writing the history, by its last heartbeat: of a shared
 * history (PostgreSQL), or of the one already open */
static void analyzers(struct hs_ctx *ctx)
{
	struct hs_out *o = ctx->out;
	struct hs_store *st = ctx->store;
	struct hs_rows rows = { .row = analyzer_row, .arg = o };
	char err[256];

	if (!st && hs_store_is_pg(ctx->set.db_path))
		st = hs_ctx_store(ctx);
	if (!st)
		return;
	hs_ctx_hold_store(ctx);
	out_text(o, "analyzers      (their last heartbeats, in the history)\n");
	out_arr_open(o, "analyzers");
	if (hs_store_list(st, HS_LIST_ANALYZERS, UINT64_MAX, &rows, err, sizeof(err)) != 0)
		out_warn(o, "cannot read the analyzers of '%s': %s", hs_store_name(st), err);
	out_arr_close(o);
}

/* where the traces come from: said when the fabric view is on or the
 * view was chosen (auto, not following, says nothing) */
static void view_line(struct hs_ctx *ctx)
{
	struct hs_out *o = ctx->out;
	struct hs_follow_status f;
	char dur[32], note[256];

	hs_follow_get(ctx, &f);
	if (!f.on && ctx->set.view == HS_VIEW_AUTO)
		return;
	out_str(o, "view", "view           %s", hs_view_name(ctx->set.view));
	out_bool(o, "view_following", NULL, f.on);
	if (f.on) {
		out_uint(o, "view_from_history", ": %" PRIu64 " traces from the history", f.added);
		out_uint(o, "view_skipped", NULL, f.skipped);
		if (f.skipped)
			out_text(o, " (about %" PRIu64 " older not read: too many at once)",
				 f.skipped);
		out_uint(o, "view_others", " (%" PRIu64, f.others);
		out_text(o, " other analyzer%s)", f.others == 1 ? "" : "s");
		out_uint(o, "view_others_all", NULL, f.others_all);
		out_uint(o, "view_behind_ns", NULL, f.behind_ns);
		out_text(o, ", %s behind", hs_fmt_duration(f.behind_ns, dur, sizeof(dur)));
		out_bool(o, "view_settled", NULL, f.settled);
		out_uint(o, "view_unread_ns", NULL, f.unread_ns);
		/* what it said at its last read holds only while it reads */
		if (f.unread_ns)
			out_text(o, " at its last read (the history unread for %s)",
				 hs_fmt_duration(f.unread_ns, dur, sizeof(dur)));
		else if (f.settled)
			out_text(o, " (no capture runs: all of it)");
	} else if (ctx->set.view == HS_VIEW_FABRIC) {
		out_text(o, " (not following yet)");
	}
	out_nl(o);
	/* what the others' history holds of theirs is what the view has */
	if (f.on)
		out_text(o, "               %s\n", hs_follow_others(&f, note, sizeof(note)));
	if (f.err)
		out_warn(o, "cannot follow the history: %s", f.err);
}

static int capture_status(struct hs_ctx *ctx)
{
	struct hs_capture_stats *s = &ctx->last_stats;
	struct hs_tracer_stats ts;
	const char *source, *reason;
	bool is_file;
	uint64_t stored, unstored;
	struct hs_out *o = ctx->out;
	char buf[64];

	out_obj_open(o, NULL);
	if (!hs_capture_info(ctx, &source, &is_file, &reason, &stored, &unstored)) {
		out_null(o, "source");
		out_str(o, "state", "no capture yet\n", "none");
		view_line(ctx);
		analyzers(ctx);
		out_obj_close(o);
		return HS_CMD_OK;
	}
	bool running = hs_capture_running(ctx);
	hs_capture_trace_stats(ctx, &ts);

	out_str(o, "source", "source         %s", source);
	out_str(o, "kind", " (%s)\n", is_file ? "file" : "interface");
	out_str(o, "state", "state          %s", running ? "running" : "ended");
	if (!running)
		out_str(o, "end_reason", " (%s)", reason);
	out_nl(o);
	uint64_t wall_end = running ? hs_wall_ns() : s->ended_ns;
	out_text(o, "elapsed        %s\n", hs_fmt_duration(wall_end - s->started_ns, buf,
							    sizeof(buf)));
	out_uint(o, "elapsed_ns", NULL, wall_end - s->started_ns);
	out_uint(o, "packets", "packets        %" PRIu64 "\n", s->packets);
	const struct hs_worker_stats *per;
	const char *one_why;
	unsigned nw = hs_capture_workers(ctx, &per, &one_why);
	if (one_why[0])
		out_str(o, "one_worker", "workers        1, %s\n", one_why);
	if (nw > 1) {
		uint64_t el = wall_end - s->started_ns;
		out_text(o, "workers        %u:", nw);
		out_arr_open(o, "workers");
		for (unsigned i = 0; i < nw; i++) {
			out_obj_open(o, NULL);
			out_uint(o, "packets", i ? " + %" PRIu64 : " %" PRIu64, per[i].packets);
			if (!is_file) {
				out_uint(o, "kernel_drops", NULL, per[i].kernel_drops);
				out_uint(o, "packets_per_sec", NULL, worker_rate(&per[i], el));
			}
			out_obj_close(o);
		}
		out_arr_close(o);
		out_text(o, " packets\n");
		/* live: each socket's own drops, and what each worker took a
		 * second since the capture began */
		for (unsigned i = 0; !is_file && i < nw; i++)
			out_text(o, "  worker %-4u  %" PRIu64 " packets, %" PRIu64 " kernel drops, "
				 "%" PRIu64 " packets/s\n", i, per[i].packets, per[i].kernel_drops,
				 worker_rate(&per[i], el));
	}
	out_uint(o, "bytes", "bytes          %" PRIu64 "\n", s->bytes);
	out_uint(o, "decode_errors", "decode errors  %" PRIu64, s->decode_errors);
	out_obj_open(o, "decode_errors_by_reason");
	bool first = true;
	for (int r = 1; r < HS_DERR__COUNT; r++) {
		if (!ctx->derr[r] || r == HS_DERR_NOT_IP)
			continue;
		snprintf(buf, sizeof(buf), "%s%s %%" PRIu64, first ? " (" : ", ", hs_derr_name(r));
		out_uint(o, hs_derr_name(r), buf, ctx->derr[r]);
		first = false;
	}
	out_obj_close(o);
	out_text(o, "%s\n", first ? "" : ")");
	out_uint(o, "not_ip", "not IP         %" PRIu64 " (ARP, LLDP and other frames with no IP "
		 "packet: not errors)\n", s->not_ip);
	if (!is_file) {
		out_uint(o, "kernel_drops", "kernel drops   %" PRIu64, s->kernel_drops);
		out_uint(o, "if_drops", " (interface %" PRIu64 ")\n", s->if_drops);
		uint64_t asked, got;
		hs_capture_ring(ctx, &asked, &got);
		out_uint(o, "ring_bytes", NULL, got);	/* 0: the kernel's figure is unknown */
		out_uint(o, "ring_asked_bytes", NULL, asked);
		out_text(o, "ring           %s", got ? hs_fmt_size(got, buf, sizeof(buf)) : "unknown");
		out_text(o, " (%s asked)\n", hs_fmt_size(asked, buf, sizeof(buf)));
	}
	out_uint(o, "filtered", "filtered       %" PRIu64 "\n", s->filtered);
	out_uint(o, "copies", "copies         %" PRIu64 " traced", ts.copies);
	out_uint(o, "duplicates", ", %" PRIu64 " duplicates\n", ts.duplicates);
	out_uint(o, "traces_open", "traces         %" PRIu64 " open, ", ts.open);
	out_uint(o, "traces_closed", "%" PRIu64 " closed", ts.closed);
	out_obj_open(o, "outcomes");
	for (int k = HS_OUT_DELIVERED; k < HS_OUT__COUNT; k++) {
		snprintf(buf, sizeof(buf), "%s%s %%" PRIu64,
			 k == HS_OUT_DELIVERED ? " (" : ", ", hs_outcome_name(k));
		out_uint(o, hs_outcome_name(k), buf, ts.by_outcome[k]);
	}
	out_obj_close(o);
	out_text(o, ")\n");
	out_uint(o, "evicted", "evicted        %" PRIu64 "\n", ts.evicted);
	/* the tables are bounded: what they could not keep is counted, never silent */
	out_uint(o, "sources", "sources        %" PRIu64, ts.sources);
	out_uint(o, "sources_max", NULL, ts.sources_max);
	out_uint(o, "copies_without_source", NULL, ts.sources_full);
	if (ts.sources_full)
		out_text(o, " (table full at %" PRIu64 ": %" PRIu64 " copies from other mirror "
			 "sources not told apart)", ts.sources_max, ts.sources_full);
	out_nl(o);
	uint64_t lost = hs_flowtab_overflow(ctx->flows);
	out_uint(o, "flows", "flows          %" PRIu64, (uint64_t)hs_flowtab_count(ctx->flows));
	out_uint(o, "flows_max", NULL, (uint64_t)hs_flowtab_max(ctx->flows));
	out_uint(o, "traces_without_flow", NULL, lost);
	if (lost)
		out_text(o, " (table full at %zu: %" PRIu64 " traces of other flows not counted)",
			 hs_flowtab_max(ctx->flows), lost);
	out_nl(o);
	out_uint(o, "history_writes", "history        %" PRIu64 " rows written", stored);
	out_uint(o, "history_unstored", ", %" PRIu64 " not stored", unstored);
	uint64_t wq, behind;
	hs_capture_writer(ctx, &wq, &behind);
	out_uint(o, "history_queued", NULL, wq);
	out_uint(o, "history_behind", NULL, behind);
	if (behind)
		out_text(o, " (%" PRIu64 " while the writer was behind)", behind);
	uint64_t waiting = hs_capture_waiting(ctx);
	out_uint(o, "history_waiting", NULL, waiting);
	if (waiting)
		out_text(o, ", %" PRIu64 " waiting to be written", waiting);
	if (ctx->session > 0)
		out_int(o, "session", " (session %" PRId64 ")", ctx->session);
	out_nl(o);
	/* SQLite's page cache is the largest bounded part of the console's memory */
	out_uint(o, "history_memory", "history memory %" PRIu64 " KiB\n",
		 hs_store_memory() / 1024);
	view_line(ctx);
	analyzers(ctx);
	out_obj_close(o);
	return HS_CMD_OK;
}

int cmd_capture(struct hs_ctx *ctx, int argc, char **argv)
{
	if (argc < 2)
		return out_err(ctx->out, "capture needs start, stop or status");
	const char *sub = argv[1];
	if (strcmp(sub, "start") == 0)
		return capture_start(ctx, argc - 2, argv + 2);
	if (strcmp(sub, "stop") == 0) {
		if (argc > 2)
			return out_err(ctx->out, "capture stop: unexpected '%s'", argv[2]);
		if (!hs_capture_running(ctx))
			return out_err(ctx->out, "no capture is running");
		hs_capture_stop(ctx, "stopped");
		print_summary(ctx);
		return HS_CMD_OK;
	}
	if (strcmp(sub, "status") == 0) {
		if (argc > 2)
			return out_err(ctx->out, "capture status: unexpected '%s'", argv[2]);
		return capture_status(ctx);
	}
	return out_err(ctx->out, "unknown capture subcommand '%s' (start, stop, status)", sub);
}
