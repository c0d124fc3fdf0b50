/* ctx.h - the context: what one console works on. Every verb and every
 * engine call that needs more than its own object takes it: the settings,
 * the pipeline's parts (tracer, flows, filters, capture, the history) and
 * the runner's state. Nothing lives in a file's static variable that
 * belongs to one console: it sits here, or in an object held from here.
 * console.h (the REPL, the verbs' runner) includes it; the engine includes
 * only this.
 */
#ifndef HS_CTX_H
#define HS_CTX_H

#include <uv.h>
#include "hs.h"
#include "decode.h"
#include "topo.h"
#include "tracer.h"
#include "flows.h"
#include "store.h"
#include "filter.h"
#include "capture.h"
#include "subs.h"

enum hs_policy {
	HS_POLICY_DEFAULT = 0,	/* flows; anomalous, probe and filter-matched traces */
	HS_POLICY_ALL,		/* every trace in full */
	HS_POLICY_OFF,		/* nothing (benchmarks) */
};

/* where the traces the verbs answer from come from (follow.h) */
enum hs_view {
	HS_VIEW_AUTO = 0,	/* the fabric's, where others share the history */
	HS_VIEW_FABRIC,		/* the fabric's: the history followed */
	HS_VIEW_LOCAL,		/* this console's own capture's */
};

struct hs_settings {
	bool json;
	uint64_t trace_timeout_ns;	/* default 1 s */
	enum hs_policy policy;
	char *db_path;			/* default ./hopscope.db */
	char *analyzer;			/* its rows' name: NULL, the host's (set analyzer) */
	bool no_pager;			/* set pager off */
	unsigned workers;		/* threads reading a file (--workers), 0: one */
	enum hs_view view;		/* set view */
};

/* what the engine has to tell the client that asked: an error, a warning,
 * a line of information (hs_say_err and the others) */
enum hs_say {
	HS_SAY_ERR,
	HS_SAY_WARN,
	HS_SAY_INFO,
};

struct hs_capture;
struct hs_control;
struct hs_follow;
struct hs_probe_run;
struct hs_out;
struct hs_watch;
struct hs_wfeed;
struct hs_writer;
struct hs_cands;
struct hs_con;
struct screen;		/* curses' SCREEN */

struct hs_ctx {
	uv_loop_t *loop;
	struct hs_out *out;		/* where the console prints for the client it
					 * serves (console/out.h): the engine never does */
	struct hs_settings set;

	struct hs_topo *topo;		/* NULL until topo load / --topo */
	struct hs_store *store;		/* NULL until first needed (lazy open) */
	char *store_err, *store_err_path;	/* why root could not open it before the drop */
	bool history_failed;		/* a capture could not write it (a full disk) */
	int64_t session;		/* history session of the running capture, 0 none */
	bool capturing;			/* a capture runs (capture.c): the history it
					 * writes stays open, whatever 'set db' says */
	struct hs_writer *store_writer;	/* the writer thread of a live capture while
					 * its traces go through it (writer.h), else
					 * NULL: hs_ctx_hold_store takes its lock */
	int64_t ring_session;		/* history session of the traces in memory (the
					 * last capture's, running or not), 0 none */
	uint64_t loaded_kept;		/* the traces in memory are 'history load''s, */
	uint64_t loaded_traced;		/* from a history that kept loaded_kept of the
					 * loaded_traced its sessions traced; both 0
					 * when not, or when it kept every one */
	struct hs_tracer *tracer;
	struct hs_flowtab *flows;
	struct hs_filterset *filters;
	struct hs_capture *cap;
	struct hs_subs subs;		/* who the pipeline publishes to (subs.h) */
	struct hs_capture_stats last_stats;	/* of the current/last capture */
	uint64_t derr[HS_DERR__COUNT];	/* decode errors by reason */
	struct hs_control *control;	/* BGP/RoCEv2/PFC log, made on first use (control.c) */
	uv_timer_t commit_timer;	/* commits history batches */

	/* command runner */
	bool interactive;		/* a terminal REPL */
	bool paging;			/* a verb's output is held for the pager (pager.h) */
	bool read_again;		/* the next file read is stored even if the history has it */
	bool keep_going;
	bool quit;			/* 'quit' or end of input */
	int exit_status;
	void (*cancel)(struct hs_ctx *ctx);	/* set by a pending verb: Ctrl-C calls it */
	void *pending;			/* runner state of the pending verb */
	struct hs_runner *runner;	/* sources of command lines (runbook.c) */
	const struct hs_con *con;	/* what a verb asks of the console above it
					 * (console/reply.h), set by the runner */
	struct hs_probe_run *probe;	/* the probe or traceroute running, one at a time (probe.c) */
	uint32_t next_probe_id;		/* 0: not drawn yet (probe.c) */
	struct {			/* the full-screen view (watch.c) */
		struct hs_watch *view;	/* up, NULL none: one at a time */
		struct screen *screen;	/* curses', made once and kept */
		bool nested_pending;	/* a ':' verb is pending: its hs_cmd_finish is ours */
		char nested_line[64];	/* ... that verb */
		const struct hs_wfeed *feed;	/* what it shows: NULL the pipeline's
						 * own, else a daemon's (watch.h) */
	} watch;
	char *lab_state;		/* --lab state directory, NULL otherwise */
	/* how the front end renders what the engine says (one line, no
	 * "error: " and no newline); NULL: standard error */
	void (*say)(struct hs_ctx *ctx, enum hs_say what, const char *msg);
	/* the trace names TAB offers when they are another process's (an
	 * attached console asks its daemon: attach.c); NULL: this one's own
	 * (hs_complete_traces) */
	void (*names)(struct hs_ctx *ctx, bool stored, const char *word, struct hs_cands *c);
	struct hs_stats *stats;		/* 'stats' running on the live capture, else NULL */
	struct hs_planck *planck;	/* rates and alerts (planck.h), NULL until used */
	struct hs_follow *follow;	/* the fabric view (follow.h) */
	bool following;			/* ... is on: a closed trace is its business */
};

/* process one decoded-or-not frame: count, filter, trace (capture.c) */
void hs_pipeline_frame(struct hs_ctx *ctx, int dlt, const uint8_t *data,
		       uint32_t caplen, uint32_t wirelen, uint64_t ts_ns);

/* tell the client what happened (ctx->say); hs_say_err returns -1 */
int hs_say_err(struct hs_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hs_say_warn(struct hs_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hs_say_info(struct hs_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* the context's history and analyzer's name (ctx.c) */

/* the analyzer's name its rows carry: 'set analyzer', else the host's
 * (its first label), NULL when that is no name (hs_analyzer_name_ok) */
const char *hs_ctx_analyzer(struct hs_ctx *ctx);
/* before touching ctx->store or what the history reads with it (ctx->topo)
 * outside hs_ctx_store(): while a live capture's writer thread may be
 * writing, take its lock for the rest of this loop turn (writer.h) */
void hs_ctx_hold_store(struct hs_ctx *ctx);
/* open the history on first use; NULL with the error told (hs_say_err) */
struct hs_store *hs_ctx_store(struct hs_ctx *ctx);
/* the same without printing why not, before root is dropped: the verb that
 * needs the history later says why it has none */
struct hs_store *hs_ctx_store_early(struct hs_ctx *ctx);
/* the history for a verb that only reads it: none is made for a read. 1 with
 * *st, -1 with the error printed, 0 when there is none at the path and the
 * verb lists (list): its answer is empty. Any other verb gets the error "no
 * history at 'PATH'". */
int hs_ctx_store_read(struct hs_ctx *ctx, bool list, struct hs_store **st);
/* a history is there to read (none is made for asking) */
bool hs_ctx_has_history(struct hs_ctx *ctx);

#endif
