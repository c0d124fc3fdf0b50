/* capture.c - packet sources on the loop, and the pipeline they feed
 *
 * frame -> hs_decode -> analyzer filter -> tracer; closed traces feed the
 * flow table. Control frames, the copies kept, closed traces and the
 * capture's events are published to whoever subscribed (subs.h): the
 * history writer here, per the history policy, and the analyses and verbs
 * that registered. One capture is one history session. Live interfaces are polled (uv_poll on the selectable
 * fd, plus a timer when libpcap asks for one); files are read in slices of
 * HS_FILE_BATCH frames per loop turn so the prompt stays responsive.
 */
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "follow.h"
#include "probe.h"
#include "freader.h"
#include "subs.h"
#include "writer.h"
#include "workers.h"

#define HS_FLOWS_MAX	262144

#define HS_COMMIT_MS	500
/* a commit costs about half a microsecond a row, on the loop: a batch this
 * big is committed at once rather than at the next tick (which, with
 * 'history all', held the prompt for 100 ms and more) */
#define HS_COMMIT_ROWS	8192
#define HS_FLOW_FLUSH_TICKS 4	/* dirty flows are written every 2 s */
#define HS_HEARTBEAT_TICKS (HS_HEARTBEAT_NS / (HS_COMMIT_MS * 1000000))	/* a heartbeat */
/* ... a bounded number per loop turn, so the prompt never waits for all of
 * them (writing 180k flows at once held the loop for a good part of a second) */
#define HS_FLUSH_CHUNK	1024	/* dirty flows written per loop turn */
#define HS_FLUSH_SCAN	32768	/* flows looked at per loop turn */

struct hs_capture {
	struct hs_ctx *ctx;
	char *source;		/* NULL before the first capture */
	char input[HS_FILE_ID_LEN];	/* a file's identity, "" when it has none */
	int64_t known;		/* the session that already read this file: nothing stored */
	bool is_file, running, failed;
	char end_reason[64];
	pcap_t *pc;		/* a live interface */
	struct hs_freader *reader;	/* a file, a slice per loop turn */
	struct hs_pfile *file;	/* its frames, in their interfaces' link types */
	int dlt;
	bool nano;
	uint64_t ring_asked, ring_got;	/* live: the kernel ring's bytes (got: 0 unknown) */

	uv_poll_t *poll;	/* live: its own allocation, freed by its close callback */
	uv_timer_t select_timer;	/* live, when libpcap needs a timeout */
	uv_timer_t for_timer;	/* --for */
	uv_idle_t flush_idle;	/* a round of dirty-flow writes is under way */
	size_t flush_pos;	/* next flow of the round */
	int open_handles;	/* embedded handles not yet closed (fini) */

	char *filebuf;		/* stdio buffer of the file being read (HS_FILEBUF bytes) */
	struct hs_lane lane;	/* the loop's pipeline (lane.last_ts: newest capture time) */
	uint64_t last_mono;	/* when the newest frame arrived */
	struct hs_workers *workers;	/* a file read by several threads, else NULL */
	unsigned nworkers;	/* of the current or last capture */
	/* why one worker read where more were asked for or are the default
	 * ("not the default 2: why"), "" otherwise */
	char one_why[200];
	struct hs_tracer_stats wts;	/* the workers' tracers' counters (copies, open) */
	struct hs_worker_stats wstats[HS_WORKERS_MAX];	/* each worker's */
	uv_async_t wake;	/* a worker queued traces, or finished */
	struct hs_tracer_stats base;	/* tracer counters when the session began */
	uint64_t stored, unstored;	/* history rows queued / not storable */
	uint64_t queued;	/* of stored: not committed yet */
	uint64_t lost_seen;	/* hs_store_lost() when queued was last settled */
	bool store_warned, warn_due;	/* warn_due: a failed commit not told yet */
	/* the end of a session whose row could not be written (a full disk):
	 * written again at every tick until it is, and at exit */
	int64_t end_session;
	struct hs_session_stats end_ss;
	char *end_input, *end_path;
	uint64_t end_ns;
	/* A live capture's traces go to the history through the writer thread
	 * (writer.h); while it is in use (ctx->store_writer) the history and
	 * the counters above are touched under its lock. A file is read as fast
	 * as its traces can be written: they are written here, in turn. */
	struct hs_writer *writer;
	struct hs_store_ckpt *ckpt;	/* due, taken after the writer's turn */
	uint64_t behind;	/* traces the writer's full queue refused */
	bool flush_again;	/* flows waited for a batch: the next tick */
	uv_prepare_t release_prepare;	/* let the writer have the lock ... */
	uv_check_t release_check;	/* ... twice a loop turn */
	unsigned ticks;
	uint64_t hb_ns, hb_packets;	/* the last heartbeat: when, the packets then */
	uint64_t took_ns;	/* when the history last took every row queued */
	hs_capture_done_cb done;
};

/* ---- history -------------------------------------------------------------- */

static void commit(struct hs_ctx *ctx);
static void read_kernel_stats(struct hs_capture *c);

static void history_trace(void *arg, const struct hs_trace *t);

/* a trace closed while the fabric view is on (follow.h): true when it is
 * done with here */
static __attribute__((noinline)) bool fabric_close(struct hs_ctx *ctx, const struct hs_trace *t)
{
	if (hs_follow_feeding(ctx)) {
		/* from the history: the flows are this analyzer's own copies',
		 * as it stores them, and the history has it */
		hs_publish_trace(&ctx->subs, t);
		return true;
	}
	if (!hs_follow_defers(ctx, t))
		return false;
	/* the fabric view takes it back from the history, joined */
	hs_flowtab_add_trace(ctx->flows, t);
	history_trace(ctx, t);
	hs_tracer_hide(ctx->tracer, t);
	return true;
}

static void on_trace_close(void *arg, const struct hs_trace *t)
{
	struct hs_ctx *ctx = arg;

	if (ctx->following && fabric_close(ctx, t))
		return;
	hs_flowtab_add_trace(ctx->flows, t);
	hs_publish_trace(&ctx->subs, t);
}

/* what a history setting keeps in the history the console writes: on
 * PostgreSQL, the history analyzers share, the default keeps every trace,
 * as all does. The figures of the fabric (drops' crossings of a link,
 * latency, ECMP) are read from it, and a trace whole at one analyzer, not
 * kept, would be a crossing the history never holds. */
static enum hs_policy kept_policy(const struct hs_ctx *ctx, enum hs_policy policy)
{
	if (policy == HS_POLICY_DEFAULT && ctx->set.db_path && hs_store_is_pg(ctx->set.db_path))
		return HS_POLICY_ALL;
	return policy;
}

/* the traces the history keeps, and the only ones its writer is told of:
 * by default the anomalous, probe and filter-matched traces, and a part of
 * a trace (another analyzer may hold the rest) */
static struct hs_trace_cond history_cond(const struct hs_ctx *ctx, enum hs_policy policy)
{
	switch (kept_policy(ctx, policy)) {
	case HS_POLICY_ALL:
		return HS_TRACES_ALL;
	case HS_POLICY_OFF:
		return (struct hs_trace_cond){ 0, 0 };
	default:
		return (struct hs_trace_cond){
			(1u << HS_OUT_DROPPED) | (1u << HS_OUT_LOOPED),
			HS_TF_PROBE | HS_TF_MATCHED | HS_TF_PARTIAL };
	}
}

/* the history writer: a subscriber of the closed traces */
static void history_trace(void *arg, const struct hs_trace *t)
{
	struct hs_ctx *ctx = arg;
	struct hs_capture *c = ctx->cap;

	if (!c || c->known || hs_follow_feeding(ctx))
		return;
	if (ctx->store_writer && ctx->session > 0 && ctx->store) {
		/* never waited for: a history behind is counted, not a copy lost */
		if (!hs_writer_put(c->writer, ctx->session, t))
			c->behind++;
		return;
	}
	hs_capture_row(ctx, ctx->session > 0 && ctx->store &&
			    hs_store_trace(ctx->store, ctx->session, t, ctx->topo) == 0);
}

/* A quiet trace of a live capture closes once the history's writer has
 * room for it (workers.c: worker_may_close) */
static bool history_room(void *arg)
{
	struct hs_ctx *ctx = arg;

	return !ctx->store_writer || hs_writer_fits(ctx->store_writer, 1);
}

/* the writer thread, with its lock: rows wait in its queue while another
 * program holds the file, rather than each waiting for the file's lock */
static bool writer_ready(void *arg)
{
	struct hs_ctx *ctx = arg;

	return !ctx->store || hs_store_begin(ctx->store, true) == 0;
}

static void writer_write(void *arg, int64_t session, const struct hs_trace *t)
{
	struct hs_ctx *ctx = arg;

	hs_capture_row(ctx, ctx->store && hs_store_trace(ctx->store, session, t, ctx->topo) == 0);
}

static void writer_commit(void *arg)
{
	struct hs_ctx *ctx = arg;

	commit(ctx);
	if (ctx->store && !ctx->cap->ckpt)
		ctx->cap->ckpt = hs_store_checkpoint_due(ctx->store);
}

/* the writer thread, the lock let go: the history's checkpoint, which
 * copies and syncs tens of MB, keeps no answer waiting */
static void writer_after(void *arg)
{
	struct hs_ctx *ctx = arg;
	struct hs_capture *c = ctx->cap;

	if (c->ckpt) {
		hs_store_checkpoint_run(c->ckpt);
		c->ckpt = NULL;
	}
}

void hs_capture_pause(struct hs_ctx *ctx)
{
	if (ctx->cap)
		hs_workers_pause(ctx->cap->workers);
}

static void release_writer(struct hs_ctx *ctx)
{
	if (ctx->cap && ctx->cap->writer) {
		hs_writer_release(ctx->cap->writer);
		hs_writer_kick(ctx->cap->writer);	/* the traces of this turn */
	}
	if (ctx->cap)
		hs_workers_resume(ctx->cap->workers);
}

static void on_release_prepare(uv_prepare_t *h)
{
	release_writer(h->data);
}

static void on_release_check(uv_check_t *h)
{
	release_writer(h->data);
}

/* the history of the capture cannot be written: said once, with what was
 * not stored so far; the capture goes on, and the run's status says so
 * (ctx->history_failed) */
static void history_failed(struct hs_ctx *ctx, const char *path, const char *why)
{
	struct hs_capture *c = ctx->cap;

	ctx->history_failed = true;
	if (c->store_warned)
		return;
	c->store_warned = true;
	hs_say_err(ctx, "cannot write history '%s': %s (%" PRIu64 " rows not stored so far; "
		   "the capture goes on, 'capture status' counts them)", path, why,
		   c->unstored + c->behind);
}

/* a commit that failed is told on the loop thread, once */
static void store_warn(struct hs_ctx *ctx)
{
	struct hs_capture *c = ctx->cap;

	if (!c->warn_due)
		return;
	c->warn_due = false;
	if (ctx->store)
		history_failed(ctx, hs_store_name(ctx->store), hs_store_errwhy(ctx->store));
}

/* The analyzer's heartbeat in the history it writes (the store held):
 * what its capture read, how fast, what waits to be written and since
 * when, what could not be. */
static void heartbeat(struct hs_ctx *ctx, int64_t session)
{
	struct hs_capture *c = ctx->cap;
	const struct hs_capture_stats *s = &ctx->last_stats;
	uint64_t now = hs_mono_ns(), wq = ctx->store_writer ? hs_writer_queued(c->writer) : 0;
	struct hs_heartbeat hb = {
		.session = session,
		.seen_ns = hs_wall_ns(),
		.packets = s->packets,
		.kernel_drops = s->kernel_drops,
		.queued = c->queued + (ctx->store ? hs_store_in_flight(ctx->store) : 0) + wq,
		.lost = c->unstored + c->behind,
		.history = hs_capture_policy_name(kept_policy(ctx, ctx->set.policy)),
	};

	if (!ctx->store || !hs_store_analyzer(ctx->store))
		return;
	if (c->hb_ns && now > c->hb_ns && s->packets >= c->hb_packets)
		hb.rate = (double)(s->packets - c->hb_packets) * 1e9 / (double)(now - c->hb_ns);
	if (hb.queued && c->took_ns && now > c->took_ns)
		hb.lag_ns = now - c->took_ns;
	c->hb_ns = now;
	c->hb_packets = s->packets;
	hs_store_heartbeat(ctx->store, &hb);	/* a missed one is followed by the next */
}

/* write the end of the session that ended, if it is still due: false while
 * it cannot be (the history full), true once it is or cannot be any more */
static bool end_due(struct hs_ctx *ctx)
{
	struct hs_capture *c = ctx->cap;

	if (!c->end_session)
		return true;
	if (!ctx->store || strcmp(hs_store_path(ctx->store), c->end_path) != 0)
		return false;
	c->end_ss.input = c->end_input;
	if (hs_store_session_end(ctx->store, c->end_session, &c->end_ss, c->end_ns) < 0)
		return false;
	c->end_session = 0;
	free(c->end_input);
	free(c->end_path);
	c->end_input = c->end_path = NULL;
	return true;
}

/* traces are about to close: load the flow table's entries for their
 * flows, and the subscribers theirs, while the tracer works */
static void on_trace_soon(void *arg, const struct hs_soon *s, unsigned n)
{
	struct hs_ctx *ctx = arg;

	hs_flowtab_prefetch(ctx->flows, s, n);
	hs_publish_soon(&ctx->subs, s, n);
}

void hs_capture_row(struct hs_ctx *ctx, bool queued)
{
	struct hs_capture *c = ctx->cap;

	if (!c || c->known)
		return;
	if (queued) {
		c->stored++;
		c->queued++;
		if (hs_store_pending(ctx->store) >= HS_COMMIT_ROWS)
			commit(ctx);
	} else if (c->running || ctx->store_writer) {
		c->unstored++;
	}
}

/* write the flows changed since the last flush, from flush_pos on: at most
 * max_write of them, looking at at most max_scan; true when all are done */
static bool flush_flows(struct hs_ctx *ctx, size_t max_write, size_t max_scan)
{
	struct hs_capture *c = ctx->cap;
	struct hs_flow *f;
	size_t written = 0, scanned = 0;

	if (ctx->set.policy == HS_POLICY_OFF || c->known)
		return true;
	for (; (f = hs_flowtab_at(ctx->flows, c->flush_pos)) != NULL; c->flush_pos++) {
		if (written >= max_write || scanned++ >= max_scan)
			return false;
		if (!f->dirty)
			continue;
		written++;
		/* a row is counted once: its first write inserts it, the
		 * flushes after (the flow changed meanwhile) update it */
		bool fresh = f->row == 0;
		if (ctx->session > 0 && ctx->store &&
		    hs_store_flow(ctx->store, ctx->session, f) == 0) {
			c->stored += fresh;
			c->queued += fresh;
			f->dirty = false;
			/* in steps, commits stay small; all at once (the capture
			 * stops) commits once, at the end */
			if (max_write != SIZE_MAX && hs_store_pending(ctx->store) >= HS_COMMIT_ROWS)
				commit(ctx);
		} else if (!ctx->session || !ctx->store) {
			c->unstored++;
			f->dirty = false;	/* counted once, not every flush */
		}
	}
	return true;
}

static void commit(struct hs_ctx *ctx)
{
	struct hs_capture *c = ctx->cap;
	int rc = ctx->store ? hs_store_commit(ctx->store) : 0;
	uint64_t lost = ctx->store ? hs_store_lost(ctx->store) : c->lost_seen;

	if (lost != c->lost_seen) {
		/* rows rolled back (disk full, I/O error, refused by the
		 * server), of this batch or of one sent before: not stored */
		c->stored -= lost - c->lost_seen;
		c->unstored += lost - c->lost_seen;
		c->lost_seen = lost;
		c->warn_due = true;	/* maybe on the writer thread: told by store_warn() */
	}
	/* a history server that went away holds the rows: they stay
	 * queued, and are written when it answers */
	if (rc < 0)
		c->warn_due = true;
	if (rc < 0 && hs_store_pending(ctx->store))
		return;
	c->queued = 0;
	c->took_ns = hs_mono_ns();
}

/* ---- the pipeline --------------------------------------------------------- */

void hs_pipeline_frame(struct hs_ctx *ctx, int dlt, const uint8_t *data,
		       uint32_t caplen, uint32_t wirelen, uint64_t ts_ns)
{
	hs_lane_frame(&ctx->cap->lane, dlt, data, caplen, wirelen, ts_ns);
	hs_lane_flush(&ctx->cap->lane);
}

static void flush_step(uv_idle_t *h)
{
	struct hs_ctx *ctx = h->data;
	struct hs_capture *c = ctx->cap;

	/* the writer has the history (a commit, a slow disk), or another
	 * program holds the file: the flows stay dirty, for the next tick */
	if (ctx->store_writer && (!hs_writer_try_hold(c->writer) || !ctx->store ||
			      hs_store_begin(ctx->store, false) < 0)) {
		c->flush_again = true;
		uv_idle_stop(h);
		return;
	}
	if (flush_flows(ctx, HS_FLUSH_CHUNK, HS_FLUSH_SCAN)) {
		uv_idle_stop(h);
		if (ctx->store_writer)
			hs_writer_commit_soon(c->writer);
		else
			commit(ctx);
	}
	store_warn(ctx);
}

/* The heartbeat from the loop goes into the batch, and only when the
 * history's write lock is had at once: while another program holds it,
 * this one is missed (the next follows) rather than waited for, which
 * held the capture for SQLite's busy timeout */
static void beat(struct hs_ctx *ctx)
{
	read_kernel_stats(ctx->cap);
	if (ctx->store && hs_store_begin(ctx->store, false) == 0)
		heartbeat(ctx, ctx->session);
}

static void commit_tick(uv_timer_t *t)
{
	struct hs_ctx *ctx = t->data;
	struct hs_capture *c = ctx->cap;

	/* live capture: time goes on between packets, so quiet traces close */
	if (c->running && !c->is_file && c->lane.last_ts) {
		uint64_t now = c->lane.last_ts + (hs_mono_ns() - c->last_mono);
		hs_tracer_advance(ctx->tracer, now);
	}
	if ((++c->ticks % HS_FLOW_FLUSH_TICKS == 0 || c->flush_again) && c->running &&
	    ctx->set.policy != HS_POLICY_OFF && !uv_is_active((uv_handle_t *)&c->flush_idle)) {
		c->flush_pos = 0;
		c->flush_again = false;
		uv_idle_start(&c->flush_idle, flush_step);
	}
	bool beat_due = c->running && ctx->session > 0 && c->ticks % HS_HEARTBEAT_TICKS == 1 &&
			ctx->set.policy != HS_POLICY_OFF;
	if (!ctx->store_writer) {
		if (beat_due)
			beat(ctx);
		commit(ctx);
		store_warn(ctx);
		end_due(ctx);
	} else {
		if (hs_writer_try_hold(c->writer)) {
			if (beat_due)
				beat(ctx);
			store_warn(ctx);
		}
		hs_writer_commit_soon(c->writer);
	}
}

static void cap_handle_closed(uv_handle_t *h)
{
	struct hs_capture *c = h->data;

	if (--c->open_handles == 0) {
		hs_writer_free(c->writer);
		free(c->source);
		free(c->filebuf);	/* its FILE was closed with the capture */
		free(c);
	}
}

static void on_wake(uv_async_t *h);

int hs_pipeline_init(struct hs_ctx *ctx)
{
	struct hs_capture *c = hs_xcalloc(1, sizeof(*c));
	struct hs_tracer_cfg cfg = hs_lane_tracer_cfg(ctx, on_trace_close, ctx);

	cfg.on_soon = on_trace_soon;
	cfg.may_close = history_room;
	c->ctx = ctx;
	c->lane.ctx = ctx;
	c->lane.stats = &ctx->last_stats;
	c->lane.derr = ctx->derr;
	c->lane.nshards = 1;
	ctx->tracer = hs_tracer_new(&cfg);
	ctx->flows = hs_flowtab_new(hs_table_max("HOPSCOPE_TEST_FLOWS_MAX", HS_FLOWS_MAX));
	ctx->filters = hs_filterset_new();
	if (!ctx->tracer || !ctx->flows || !ctx->filters) {
		hs_tracer_free(ctx->tracer);
		hs_flowtab_free(ctx->flows);
		hs_filterset_free(ctx->filters);
		ctx->tracer = NULL;
		ctx->flows = NULL;
		ctx->filters = NULL;
		free(c);
		return hs_say_err(ctx, "cannot set up the packet pipeline");
	}
	ctx->cap = c;
	hs_sub_traces(&ctx->subs, history_cond(ctx, ctx->set.policy), history_trace, NULL, ctx);
	c->lane.tracer = ctx->tracer;
	uv_async_init(ctx->loop, &c->wake, on_wake);
	c->wake.data = ctx;
	uv_unref((uv_handle_t *)&c->wake);	/* held while workers read */
	uv_timer_init(ctx->loop, &c->select_timer);
	uv_timer_init(ctx->loop, &c->for_timer);
	uv_idle_init(ctx->loop, &c->flush_idle);
	c->select_timer.data = c->for_timer.data = c->flush_idle.data = ctx;
	uv_prepare_init(ctx->loop, &c->release_prepare);
	uv_check_init(ctx->loop, &c->release_check);
	c->release_prepare.data = c->release_check.data = ctx;
	uv_prepare_start(&c->release_prepare, on_release_prepare);
	uv_check_start(&c->release_check, on_release_check);
	uv_unref((uv_handle_t *)&c->release_prepare);
	uv_unref((uv_handle_t *)&c->release_check);
	uv_timer_init(ctx->loop, &ctx->commit_timer);
	ctx->commit_timer.data = ctx;
	uv_timer_start(&ctx->commit_timer, commit_tick, HS_COMMIT_MS, HS_COMMIT_MS);
	uv_unref((uv_handle_t *)&ctx->commit_timer);
	if (hs_follow_init(ctx) < 0)
		return hs_say_err(ctx, "cannot set up the fabric view");
	return 0;
}

void hs_pipeline_fini(struct hs_ctx *ctx)
{
	struct hs_capture *c = ctx->cap;

	if (!c)
		return;
	hs_capture_stop(ctx, "exit");
	commit(ctx);
	store_warn(ctx);
	end_due(ctx);	/* a session still not ended stays so: incomplete */
	free(c->end_input);
	free(c->end_path);
	uv_timer_stop(&ctx->commit_timer);
	uv_close((uv_handle_t *)&ctx->commit_timer, NULL);
	hs_follow_fini(ctx);
	/* the handles live in c: free it once the loop has closed them all */
	c->open_handles = 6;
	c->wake.data = c;
	uv_close((uv_handle_t *)&c->wake, cap_handle_closed);
	c->select_timer.data = c->for_timer.data = c->flush_idle.data = c;
	c->release_prepare.data = c->release_check.data = c;
	uv_close((uv_handle_t *)&c->release_prepare, cap_handle_closed);
	uv_close((uv_handle_t *)&c->release_check, cap_handle_closed);
	uv_close((uv_handle_t *)&c->select_timer, cap_handle_closed);
	uv_close((uv_handle_t *)&c->for_timer, cap_handle_closed);
	uv_close((uv_handle_t *)&c->flush_idle, cap_handle_closed);
	ctx->cap = NULL;
	hs_unsub_traces(&ctx->subs, history_trace, ctx);
	hs_tracer_free(ctx->tracer);
	hs_flowtab_free(ctx->flows);
	hs_filterset_free(ctx->filters);
	ctx->tracer = NULL;
	ctx->flows = NULL;
	ctx->filters = NULL;
	if (ctx->store) {
		hs_store_close(ctx->store);
		ctx->store = NULL;
	}
	free(ctx->store_err);
	free(ctx->store_err_path);
	ctx->store_err = ctx->store_err_path = NULL;
}

/* ---- capture sources ------------------------------------------------------ */

static uint64_t pkt_ts(const struct hs_capture *c, const struct pcap_pkthdr *h)
{
	uint64_t frac = (uint64_t)h->ts.tv_usec;

	return (uint64_t)h->ts.tv_sec * HS_NS_PER_SEC + (c->nano ? frac : frac * 1000);
}

static void on_packet(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct hs_ctx *ctx = (struct hs_ctx *)user;
	struct hs_capture *c = ctx->cap;
	uint32_t caplen = h->caplen;

	hs_lane_frame(&c->lane, c->dlt, bytes, caplen, h->len < caplen ? caplen : h->len,
		      pkt_ts(c, h));
}

/* a frame of a file that mixes link types: each in its own interface's */
static void on_file_packet(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct hs_ctx *ctx = (struct hs_ctx *)user;
	struct hs_capture *c = ctx->cap;
	uint32_t caplen = h->caplen;

	hs_lane_frame(&c->lane, hs_pfile_dlt(c->file), bytes, caplen,
		      h->len < caplen ? caplen : h->len, pkt_ts(c, h));
}

/* an error while the capture runs: an event, for the console to tell */
static void cap_error(struct hs_ctx *ctx, const char *fmt, const char *a, const char *b)
{
	char msg[PCAP_ERRBUF_SIZE + 512];
	struct hs_event ev = { .kind = HS_EV_ERROR, .source = ctx->cap->source, .text = msg };

	snprintf(msg, sizeof(msg), fmt, a, b);
	hs_publish_event(&ctx->subs, &ev);
}

static void read_kernel_stats(struct hs_capture *c)
{
	struct pcap_stat ps;

	if (c->is_file || !c->pc)
		return;
	if (pcap_stats(c->pc, &ps) == 0) {
		c->ctx->last_stats.kernel_drops = ps.ps_drop;
		c->ctx->last_stats.if_drops = ps.ps_ifdrop;
	}
}

static void poll_closed(uv_handle_t *h)
{
	free(h);
}

/* the capture ended by itself (end of file, --for, an error) */
static void capture_ended(struct hs_ctx *ctx, int status, const char *why)
{
	struct hs_capture *c = ctx->cap;
	hs_capture_done_cb done = c->done;

	c->done = NULL;
	hs_capture_stop(ctx, why);
	c->failed = status < 0;
	struct hs_event ev = {
		.kind = HS_EV_CAPTURE_ENDED, .status = status, .source = c->source, .text = why,
	};
	hs_publish_event(&ctx->subs, &ev);
	if (done)
		done(ctx, status);
}

static void file_slice_done(void *arg)
{
	struct hs_ctx *ctx = arg;

	hs_lane_flush(&ctx->cap->lane);
}

static void file_ended(void *arg, int rc, const char *err)
{
	struct hs_ctx *ctx = arg;
	char msg[PCAP_ERRBUF_SIZE + 512];

	if (rc == 0) {
		for (unsigned i = 0; hs_freader_unsupported(ctx->cap->reader, &i, msg, sizeof(msg));)
			hs_say_warn(ctx, "%s", msg);
		capture_ended(ctx, 0, "end of file");
		return;
	}
	/* the frames before the damage are already in */
	cap_error(ctx, "%s%s", err, "");
	capture_ended(ctx, -1, "read error");
}

/* the workers' frame and tracer counters into the capture's: one view */
static void merge_workers(struct hs_ctx *ctx)
{
	struct hs_capture *c = ctx->cap;
	struct hs_capture_stats s = { 0 }, *ls = &ctx->last_stats;

	memset(ctx->derr, 0, sizeof(ctx->derr));
	hs_workers_stats(c->workers, &s, ctx->derr, &c->wts, c->wstats);
	ls->packets = s.packets;
	if (!c->is_file) {
		ls->kernel_drops = s.kernel_drops;
		ls->if_drops = s.if_drops;
	}
	ls->bytes = s.bytes;
	ls->decode_errors = s.decode_errors;
	ls->not_ip = s.not_ip;
	ls->filtered = s.filtered;
	ls->first_ts = s.first_ts;
	ls->last_ts = s.last_ts;
}

/* a file read by workers: their traces and control messages handed on */
static void on_wake(uv_async_t *h)
{
	struct hs_ctx *ctx = h->data;
	struct hs_capture *c = ctx->cap;
	const char *err;

	if (!c->workers || !c->running)
		return;
	bool done = hs_workers_drain(c->workers, &err);
	merge_workers(ctx);
	if (!done)
		return;
	if (err) {
		/* the frames before the damage are already in; an interface
		 * that went away is said once, whatever the workers it had */
		cap_error(ctx, "%s%s", err, "");
		capture_ended(ctx, -1, c->is_file ? "read error" : "interface error");
		return;
	}
	if (!c->is_file) {
		capture_ended(ctx, 0, "stopped");
		return;
	}
	char msg[PCAP_ERRBUF_SIZE + 512];
	for (unsigned i = 0; hs_workers_unsupported(c->workers, &i, msg, sizeof(msg));)
		hs_say_warn(ctx, "%s", msg);
	capture_ended(ctx, 0, "end of file");
}

static void live_dispatch(struct hs_ctx *ctx)
{
	struct hs_capture *c = ctx->cap;

	if (!c->running)
		return;
	int n = pcap_dispatch(c->pc, HS_CAP_BATCH, on_packet, (u_char *)ctx);
	hs_lane_flush(&c->lane);
	/* once a batch, not per frame: when the newest frame was read */
	if (n > 0)
		c->last_mono = hs_mono_ns();
	if (n == PCAP_ERROR) {
		cap_error(ctx, "capture on '%s' failed: %s", c->source, pcap_geterr(c->pc));
		capture_ended(ctx, -1, "interface error");
	}
}

static void live_readable(uv_poll_t *h, int status, int events)
{
	struct hs_ctx *ctx = h->data;

	(void)events;
	live_dispatch(ctx);
	/* libuv turns POLLERR into EBADF and stops the poll; the socket's own
	 * error (the interface was deleted or went down) is libpcap's to read,
	 * and the dispatch above has reported it and ended the capture */
	if (status < 0 && ctx->cap->running) {
		cap_error(ctx, "capture on '%s' failed: %s", ctx->cap->source,
			  uv_strerror(status));
		capture_ended(ctx, -1, "interface error");
	}
}

static void live_select_timeout(uv_timer_t *t)
{
	live_dispatch(t->data);
}

static void for_elapsed(uv_timer_t *t)
{
	capture_ended(t->data, 0, "time elapsed");
}

static pcap_t *open_live(struct hs_ctx *ctx, const char *ifname, uint64_t ring, bool *nano)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	pcap_t *pc = pcap_create(ifname, errbuf);

	if (!pc) {
		hs_say_err(ctx, "cannot capture on '%s': %s", ifname, errbuf);
		return NULL;
	}
	pcap_set_snaplen(pc, 65535);
	pcap_set_promisc(pc, 0);
	/* not immediate mode: libpcap then gives up TPACKET_V3 for frame-sized
	 * slots, 64 KiB each at this snapshot length, so the whole ring held a
	 * few hundred frames and the loop woke for almost every one. Blocks
	 * handed over when full or after HS_LIVE_TIMEOUT_MS keep a burst
	 * packed in the ring and wake the loop once per block. */
	pcap_set_buffer_size(pc, (int)ring);
	pcap_set_timeout(pc, HS_LIVE_TIMEOUT_MS);
	*nano = pcap_set_tstamp_precision(pc, PCAP_TSTAMP_PRECISION_NANO) == 0;

	int rc = pcap_activate(pc);
	if (rc < 0) {
		const char *why = pcap_geterr(pc);
		switch (rc) {
		case PCAP_ERROR_NO_SUCH_DEVICE:
			hs_say_err(ctx, "cannot capture on '%s': No such device exists",
				   ifname);
			break;
		case PCAP_ERROR_PERM_DENIED:
			hs_say_err(ctx, "cannot capture on '%s': %s (capturing needs root "
				   "or the CAP_NET_RAW capability)", ifname,
				   *why ? why : "permission denied");
			break;
		default:
			hs_say_err(ctx, "cannot capture on '%s': %s", ifname,
				   *why ? why : pcap_statustostr(rc));
		}
		pcap_close(pc);
		return NULL;
	}
	if (rc > 0)
		hs_say_warn(ctx, "capture on '%s': %s", ifname,
			    rc == PCAP_WARNING ? pcap_geterr(pc) : pcap_statustostr(rc));
	if (pcap_setnonblock(pc, 1, errbuf) < 0) {
		hs_say_err(ctx, "cannot capture on '%s': %s", ifname, errbuf);
		pcap_close(pc);
		return NULL;
	}
	if (*nano)
		*nano = pcap_get_tstamp_precision(pc) == PCAP_TSTAMP_PRECISION_NANO;
	return pc;
}

/* the rings of pcs[0..n-1], asked bytes in all */
static void live_ring(struct hs_ctx *ctx, const char *ifname, uint64_t asked, pcap_t *const *pcs,
		      unsigned n)
{
	struct hs_capture *c = ctx->cap;
	char a[32], g[32];

	c->ring_asked = asked;
	/* libpcap asks the kernel for less and less while it refuses memory,
	 * and does not say what it got; the ring is mapped from the socket */
	c->ring_got = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t got = hs_mapped_bytes(pcap_get_selectable_fd(pcs[i]));
		if (!got) {
			c->ring_got = 0;	/* one unknown: the sum is not known */
			break;
		}
		c->ring_got += got;
	}
	/* libpcap rounds the ring down to whole blocks: less than that is the
	 * kernel refusing memory */
	if (c->ring_got && c->ring_got < asked - asked / 16)
		hs_say_warn(ctx, "capture on '%s': the kernel gave a ring of %s, not the %s asked",
			    ifname, hs_fmt_size(c->ring_got, g, sizeof(g)),
			    hs_fmt_size(asked, a, sizeof(a)));
}

/* libpcap reads files through stdio: glibc's 4 KiB default buffer costs a
 * read() every few frames, which dominated ingest. One buffer, owned by the
 * capture and reused for every file, of 128 KiB: small enough to stay in
 * the core's L2 cache between the kernel's copy into it and libpcap's copy
 * out of it, with the tracer's tables beside it; 1 MiB filled the L2 */
#define HS_FILEBUF (1u << 17)

static struct hs_freader *open_file(struct hs_ctx *ctx, const char *path)
{
	char err[PCAP_ERRBUF_SIZE + 512];
	struct hs_capture *c = ctx->cap;

	if (!c->filebuf)
		c->filebuf = hs_xcalloc(1, HS_FILEBUF);
	struct hs_freader *r = hs_freader_open(ctx->loop, path, c->filebuf, HS_FILEBUF, err,
					       sizeof(err));
	if (!r)
		hs_say_err(ctx, "%s", err);
	return r;
}

int hs_capture_start(struct hs_ctx *ctx, const char *source, bool is_file, uint64_t ring,
		     uint64_t for_ns, unsigned workers)
{
	struct hs_capture *c = ctx->cap;
	bool nano = true;	/* a file's frames come in nanoseconds */
	struct hs_freader *reader = NULL;
	struct hs_pfile *file = NULL;
	struct hs_workers *ws = NULL;
	pcap_t *pc = NULL, *pcs[HS_WORKERS_MAX] = { 0 };

	if (!c)
		return hs_say_err(ctx, "the packet pipeline is not set up");
	if (c->running)
		return hs_say_err(ctx, "a capture of '%s' is already running "
				  "(capture stop first)", c->source);
	if (!ring)
		ring = HS_LIVE_RING;
	/* none asked for: the default, unless the source cannot have it */
	bool asked = workers || ctx->set.workers;
	char why[160] = "", one_why[sizeof(c->one_why)] = "";
	if (!workers)
		workers = ctx->set.workers ? ctx->set.workers : hs_workers_default();
	unsigned dflt = workers;
	if (is_file && (reader = open_file(ctx, source)))
		file = hs_freader_file(reader);
	/* what a FIFO gives one reader is gone for the others */
	if (file && workers > 1 && !hs_pfile_regular(file)) {
		workers = 1;
		snprintf(why, sizeof(why), "not a regular file, what a reader takes is gone "
			 "for the others");
	}
	/* live, each worker has a socket and a ring of its own: the ring asked
	 * is shared among them */
	for (unsigned i = 0; !is_file && i < workers; i++) {
		uint64_t each = ring / workers < HS_LIVE_RING_MIN ? HS_LIVE_RING_MIN : ring / workers;
		if (!(pcs[i] = open_live(ctx, source, each, &nano))) {
			while (i--)
				pcap_close(pcs[i]);
			return -1;
		}
		pc = pcs[0];
		/* a link type the kernel's fanout cannot share out: the
		 * default is one socket, with the whole ring; asked for, it is
		 * refused (hs_workers_start_live) */
		if (i == 0 && workers > 1 && !asked &&
		    !hs_fanout_link_ok(pcap_datalink(pc), why, sizeof(why))) {
			pcap_close(pc);
			pc = pcs[0] = NULL;
			workers = 1;
			i--;	/* opened again */
		}
	}
	if (workers < dflt)
		snprintf(one_why, sizeof(one_why), "not the %s%u%s: %s", asked ? "" : "default ",
			 dflt, asked ? " asked" : "", why);
	if (!pc && !file)
		return -1;
	int dlt = file ? hs_pfile_dlt(file) : pcap_datalink(pc);
	if (!file && !hs_decode_linktype_ok(dlt)) {
		const char *name = pcap_datalink_val_to_name(dlt);
		hs_say_err(ctx, "cannot capture from '%s': unsupported link type %s (%d)",
			   source, name ? name : "unknown", dlt);
		for (unsigned i = 0; i < workers; i++)
			pcap_close(pcs[i]);
		return -1;
	}
	/* The kernel may refuse the group for another reason than the link
	 * type (one that has no fanout, or forbids it): the default is one
	 * socket then too, and says why; asked for, it is refused. The
	 * frames from before the group was whole are not read (workers.c). */
	uint64_t t0 = 0;
	if (!file && workers > 1) {
		if (hs_fanout_join(pcs, workers, dlt, why, sizeof(why)) == 0) {
			t0 = hs_wall_ns();
		} else {
			for (unsigned i = 0; i < workers; i++)
				pcap_close(pcs[i]);
			if (asked)
				return hs_say_err(ctx, "cannot capture on '%s' with %u workers: %s",
						  source, workers, why);
			workers = 1;
			snprintf(one_why, sizeof(one_why), "not the default %u: %s", dflt, why);
			if (!(pc = pcs[0] = open_live(ctx, source, ring, &nano)))
				return -1;
		}
	}
	uint64_t ring_asked = 0, ring_got = 0;
	if (!file) {
		/* the rings, before the workers have the handles */
		live_ring(ctx, source, ring, pcs, workers);
		ring_asked = c->ring_asked;
		ring_got = c->ring_got;
	}
	if (!file && workers > 1) {
		char err[PCAP_ERRBUF_SIZE + 512];
		ws = hs_workers_start_live(ctx, ctx->tracer, &ctx->subs, &c->wake, source, pcs,
					   workers, nano, t0, err, sizeof(err));
		pc = NULL;	/* the workers' now */
		if (!ws)
			return hs_say_err(ctx, "%s", err);
	}

	if (file && workers > 1) {
		char err[PCAP_ERRBUF_SIZE + 512];
		ws = hs_workers_start(ctx, ctx->loop, ctx->tracer, &ctx->subs, &c->wake, source,
				      workers, err, sizeof(err));
		hs_freader_close(reader);	/* each worker reads the file itself */
		reader = NULL;
		file = NULL;
		if (!ws)
			return hs_say_err(ctx, "%s", err);
	}

	uv_poll_t *poll = NULL;
	if (pc) {
		int fd = pcap_get_selectable_fd(pc);
		if (fd < 0 && !pcap_get_required_select_timeout(pc)) {
			hs_say_err(ctx, "cannot capture on '%s': it cannot be polled", source);
			pcap_close(pc);
			return -1;
		}
		if (fd >= 0) {
			poll = hs_xcalloc(1, sizeof(*poll));
			int rc = uv_poll_init(ctx->loop, poll, fd);
			if (rc < 0) {
				free(poll);
				hs_say_err(ctx, "cannot capture on '%s': %s", source,
					   uv_strerror(rc));
				pcap_close(pc);
				return -1;
			}
			poll->data = ctx;
		}
	}

	/* Live, the tracer's tables and the flows' index get their memory
	 * now. A flood fills them within a second (a few flows touch all of
	 * their index), and a fresh page costs the copy that first touches
	 * it: on a virtual machine whose host takes back the guest's free
	 * memory, a fault in the host per page: up to two thirds of the CPU
	 * of a first burst of a million copies, while the ring filled. A
	 * file's tables are backed as it fills them. With workers, each
	 * worker's are (workers.c), and here only the ring the traces they
	 * close are kept in. */
	if (!is_file && !ws)
		hs_tracer_populate(ctx->tracer);
	else if (!is_file)
		hs_tracer_populate_ring(ctx->tracer);
	if (!is_file)
		hs_flowtab_populate(ctx->flows);

	/* a new session: fresh counters, traces and flows */
	free(c->source);
	c->source = hs_xstrdup(source);
	c->is_file = is_file;
	c->pc = pc;
	c->reader = reader;
	c->file = file;
	c->dlt = dlt;
	c->nano = nano;
	c->ring_asked = ring_asked;
	c->ring_got = ring_got;
	c->nworkers = workers;
	memcpy(c->one_why, one_why, sizeof(one_why));
	memset(&c->wts, 0, sizeof(c->wts));
	memset(c->wstats, 0, sizeof(c->wstats));
	c->failed = false;
	c->end_reason[0] = '\0';
	c->lane.last_ts = c->last_mono = 0;
	c->lane.frames = 0;
	c->stored = c->unstored = c->queued = c->behind = 0;
	c->flush_again = false;
	c->store_warned = c->warn_due = false;
	memset(&ctx->last_stats, 0, sizeof(ctx->last_stats));
	memset(ctx->derr, 0, sizeof(ctx->derr));
	ctx->last_stats.started_ns = hs_wall_ns();
	hs_tracer_clear(ctx->tracer);
	hs_flowtab_clear(ctx->flows);
	hs_follow_reset(ctx);
	hs_tracer_get_stats(ctx->tracer, &c->base);
	c->running = ctx->capturing = true;

	ctx->session = ctx->ring_session = 0;
	ctx->loaded_kept = ctx->loaded_traced = 0;
	c->input[0] = '\0';
	c->known = 0;
	if (is_file && hs_file_identity(source, c->input, sizeof(c->input)) < 0)
		c->input[0] = '\0';
	/* opened once here: a history that cannot be had is said once */
	struct hs_store *st = ctx->set.policy != HS_POLICY_OFF ? hs_ctx_store(ctx) : NULL;
	if (st && c->input[0] && !ctx->read_again) {
		/* the history knows this file: read it, name its traces as that
		 * session did, and store nothing twice */
		int64_t known = hs_store_input_session(st, c->input);
		if (known > 0) {
			c->known = known;
			ctx->ring_session = known;
			hs_say_warn(ctx, "'%s' is already in the history (session %lld): read "
				    "again, nothing stored ('capture start FILE again' stores it "
				    "again)", source, (long long)known);
		}
	}
	ctx->read_again = false;
	if (ctx->set.policy != HS_POLICY_OFF && !c->known) {
		/* a file is recorded by its full path: the history outlives the cwd */
		char *full = is_file ? realpath(source, NULL) : NULL;
		if (st) {
			c->lost_seen = hs_store_lost(st);
			ctx->session = hs_store_session_begin(st, full ? full : source,
							      hs_filter_summary(ctx->filters),
							      ctx->last_stats.started_ns);
			if (ctx->session < 0) {
				history_failed(ctx, hs_store_name(st), hs_store_errwhy(st));
				ctx->session = 0;
			} else {
				commit(ctx);
			}
		}
		free(full);
		ctx->ring_session = ctx->session;
		if (!ctx->session) {
			/* asked for and not had: the run fails as when a write
			 * fails later (history_failed), the prompt does not */
			ctx->history_failed = true;
			c->store_warned = true;
			hs_say_warn(ctx, "capturing without history: what would be "
				    "stored is counted only");
		}
	}
	if (!is_file && ctx->session > 0) {
		if (!c->writer) {
			struct hs_writer_ops ops = { .ready = writer_ready, .write = writer_write,
						     .commit = writer_commit, .after = writer_after,
						     .arg = ctx };
			c->writer = hs_writer_new(&ops);	/* NULL: written here */
		}
		ctx->store_writer = c->writer;
		if (c->writer && st)
			hs_store_checkpoint_apart(st, true);
		hs_workers_set_writer(ws, ctx->store_writer);
	}

	if (ws) {
		c->workers = ws;
		uv_ref((uv_handle_t *)&c->wake);
		uv_async_send(&c->wake);	/* a file read before this turn ends */
	} else if (is_file) {
		struct hs_freader_ops ops = {
			.raw = hs_pfile_mixed(file) ? on_file_packet : on_packet,
			.batch = HS_FILE_BATCH,
			.slice = file_slice_done,
			.end = file_ended,
			.arg = ctx,
		};
		hs_freader_start(reader, &ops);
	} else {
		c->poll = poll;
		if (poll)
			uv_poll_start(poll, UV_READABLE, live_readable);
		const struct timeval *tv = pcap_get_required_select_timeout(pc);
		if (tv) {
			uint64_t ms = (uint64_t)tv->tv_sec * 1000 + (uint64_t)tv->tv_usec / 1000;
			uv_timer_start(&c->select_timer, live_select_timeout, ms ? ms : 1,
				       ms ? ms : 1);
		}
	}
	if (for_ns) {
		uint64_t ms = (for_ns + 999999) / 1000000;
		uv_update_time(ctx->loop);	/* from now, not the cached loop time */
		uv_timer_start(&c->for_timer, for_elapsed, ms, 0);
	}
	struct hs_event ev = { .kind = HS_EV_CAPTURE_STARTED, .source = c->source };
	hs_publish_event(&ctx->subs, &ev);
	return 0;
}

void hs_capture_stop(struct hs_ctx *ctx, const char *why)
{
	struct hs_capture *c = ctx->cap;
	struct hs_tracer_stats ts;

	if (!c || !c->running)
		return;
	/* the writer writes what it has; the rest is written here */
	if (ctx->store_writer) {
		hs_workers_set_writer(c->workers, NULL);
		hs_writer_drain(c->writer);
		ctx->store_writer = NULL;
		if (ctx->store)
			hs_store_checkpoint_apart(ctx->store, false);
	}
	c->done = NULL;
	uv_timer_stop(&c->select_timer);
	uv_timer_stop(&c->for_timer);
	if (c->poll) {
		uv_poll_stop(c->poll);
		uv_close((uv_handle_t *)c->poll, poll_closed);
		c->poll = NULL;
	}
	read_kernel_stats(c);
	if (c->pc)
		pcap_close(c->pc);
	if (c->workers) {
		hs_workers_stop(c->workers);	/* hands on what they held open */
		merge_workers(ctx);
		hs_workers_free(c->workers);
		c->workers = NULL;
		uv_unref((uv_handle_t *)&c->wake);
	}
	hs_freader_close(c->reader);
	c->pc = NULL;
	c->reader = NULL;
	c->file = NULL;

	/* what is still open is over: classify, account, store */
	hs_tracer_close_all(ctx->tracer);
	struct hs_event ev = { .kind = HS_EV_CAPTURE_STOPPED, .source = c->source,
			       .text = why ? why : "stopped" };
	hs_publish_event(&ctx->subs, &ev);
	uv_idle_stop(&c->flush_idle);
	c->flush_pos = 0;
	flush_flows(ctx, SIZE_MAX, SIZE_MAX);
	c->running = ctx->capturing = false;
	ctx->last_stats.ended_ns = hs_wall_ns();
	snprintf(c->end_reason, sizeof(c->end_reason), "%s", why ? why : "stopped");

	hs_capture_trace_stats(ctx, &ts);
	/* the rows first, the session's end in a transaction of its own: a
	 * batch that does not fit (a full disk) does not take the end with it */
	commit(ctx);
	store_warn(ctx);
	if (ctx->session > 0 && ctx->store) {
		end_due(ctx);	/* an earlier session's, if it is still due */
		c->end_ss = (struct hs_session_stats){
			.packets = ctx->last_stats.packets,
			.bytes = ctx->last_stats.bytes,
			.decode_errors = ctx->last_stats.decode_errors,
			.kernel_drops = ctx->last_stats.kernel_drops,
			.traces = ts.closed,
		};
		free(c->end_input);
		free(c->end_path);
		/* only a file read to its end is known to the history */
		c->end_input = c->is_file && c->input[0] && why && strcmp(why, "end of file") == 0 ?
			       hs_xstrdup(c->input) : NULL;
		c->end_path = hs_xstrdup(hs_store_path(ctx->store));
		c->end_session = ctx->session;
		c->end_ns = ctx->last_stats.ended_ns;
		if (!end_due(ctx)) {
			commit(ctx);
			history_failed(ctx, hs_store_name(ctx->store), hs_store_errwhy(ctx->store));
		}
		/* the last, its capture over: after the session's end, which
		 * waited for the rows sent before it (a history server's batch
		 * in flight), so that it does not count them as waiting */
		heartbeat(ctx, 0);
	}
	ctx->session = 0;
}

bool hs_capture_running(const struct hs_ctx *ctx)
{
	return ctx->cap && ctx->cap->running;
}

void hs_capture_on_done(struct hs_ctx *ctx, hs_capture_done_cb cb)
{
	if (ctx->cap)
		ctx->cap->done = cb;
}

/* ---- for 'capture status' --------------------------------------------------- */

/* source, whether it is a file, and how it ended; false before any capture */
bool hs_capture_info(struct hs_ctx *ctx, const char **source, bool *is_file,
		     const char **end_reason, uint64_t *stored, uint64_t *unstored)
{
	struct hs_capture *c = ctx->cap;

	if (!c || !c->source)
		return false;
	if (c->running)
		read_kernel_stats(c);
	hs_ctx_hold_store(ctx);	/* the counters the writer keeps */
	*source = c->source;
	*is_file = c->is_file;
	*end_reason = c->end_reason;
	/* committed (and, on a history server, taken by it) */
	*stored = c->stored - c->queued - (ctx->store ? hs_store_in_flight(ctx->store) : 0);
	*unstored = c->unstored + c->behind;
	return true;
}

uint64_t hs_capture_waiting(struct hs_ctx *ctx)
{
	struct hs_capture *c = ctx->cap;

	hs_ctx_hold_store(ctx);
	return c ? c->queued + (ctx->store ? hs_store_in_flight(ctx->store) : 0) : 0;
}

void hs_capture_writer(struct hs_ctx *ctx, uint64_t *queued, uint64_t *behind)
{
	struct hs_capture *c = ctx->cap;

	*queued = c && ctx->store_writer ? hs_writer_queued(c->writer) : 0;
	*behind = c ? c->behind : 0;
}

void hs_capture_set_topo(struct hs_ctx *ctx, const struct hs_topo *t)
{
	hs_capture_pause(ctx);
	if (ctx->tracer)
		hs_tracer_set_topo(ctx->tracer, t);
	if (ctx->cap)
		hs_workers_set_topo(ctx->cap->workers, t);
}

void hs_capture_set_timeout(struct hs_ctx *ctx, uint64_t ns)
{
	hs_capture_pause(ctx);
	if (ctx->tracer)
		hs_tracer_set_timeout(ctx->tracer, ns);
	if (ctx->cap)
		hs_workers_set_timeout(ctx->cap->workers, ns);
}

static const char *const policy_names[] = {
	[HS_POLICY_DEFAULT] = "default",
	[HS_POLICY_ALL] = "all",
	[HS_POLICY_OFF] = "off",
};

const char *hs_capture_policy_name(int policy)
{
	return policy >= 0 && (size_t)policy < HS_ARRAY_SIZE(policy_names) ? policy_names[policy]
									     : NULL;
}

void hs_capture_set_policy(struct hs_ctx *ctx, int policy)
{
	ctx->set.policy = (enum hs_policy)policy;
	hs_sub_traces_cond(&ctx->subs, history_trace, ctx, history_cond(ctx, policy));
	hs_capture_pause(ctx);
	if (ctx->tracer)
		hs_tracer_set_partial(ctx->tracer, policy == HS_POLICY_DEFAULT);
	if (ctx->cap)
		hs_workers_set_partial(ctx->cap->workers, policy == HS_POLICY_DEFAULT);
}

unsigned hs_capture_workers(struct hs_ctx *ctx, const struct hs_worker_stats **per,
			    const char **one_why)
{
	struct hs_capture *c = ctx->cap;

	*per = c ? c->wstats : NULL;
	*one_why = c ? c->one_why : "";
	return c && c->nworkers ? c->nworkers : 1;
}

void hs_capture_ring(struct hs_ctx *ctx, uint64_t *asked, uint64_t *got)
{
	struct hs_capture *c = ctx->cap;

	*asked = c ? c->ring_asked : 0;
	*got = c ? c->ring_got : 0;
}

void hs_capture_trace_stats(struct hs_ctx *ctx, struct hs_tracer_stats *st)
{
	struct hs_capture *c = ctx->cap;

	hs_tracer_get_stats(ctx->tracer, st);
	if (!c)
		return;
	st->copies -= c->base.copies;
	st->closed -= c->base.closed;
	st->evicted -= c->base.evicted;
	st->duplicates -= c->base.duplicates;
	st->sources_full -= c->base.sources_full;
	for (int i = 0; i < HS_OUT__COUNT; i++)
		st->by_outcome[i] -= c->base.by_outcome[i];
	/* a file read by workers: they added the copies, the traces came here */
	st->copies += c->wts.copies;
	st->duplicates += c->wts.duplicates;
	st->open += c->wts.open;
	st->sources_full += c->wts.sources_full;
}
