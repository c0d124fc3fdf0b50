/* console.h - the console: one libuv loop, the REPL or a runbook, and the
 * state every verb works on.
 */
#ifndef HS_CONSOLE_H
#define HS_CONSOLE_H

#include <uv.h>
#include "hs.h"
#include "out.h"
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

struct hs_settings {
	bool json;
	uint64_t trace_timeout_ns;	/* default 1 s */
	enum hs_policy policy;
	char *db_path;			/* default ./hopscope.db */
	bool no_pager;			/* set pager off */
	unsigned workers;		/* threads reading a file (--workers), 0: one */
};

struct hs_capture;
struct hs_control;

struct hs_ctx {
	uv_loop_t *loop;
	struct hs_out out;
	struct hs_settings set;

	struct hs_topo *topo;		/* NULL until topo load / --topo */
	struct hs_store *store;		/* NULL until first needed (lazy open) */
	char *store_err, *store_err_path;	/* why root could not open it before the drop */
	bool history_failed;		/* a capture could not write it (a full disk) */
	int64_t session;		/* history session of the running capture, 0 none */
	int64_t ring_session;		/* history session of the traces in memory (the
					 * last capture's, running or not), 0 none */
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
	char *lab_state;		/* --lab state directory, NULL otherwise */
	struct hs_stats *stats;		/* 'stats' running on the live capture, else NULL */
	struct hs_planck *planck;	/* rates and alerts (planck.h), NULL until used */
};

/* process one decoded-or-not frame: count, filter, trace (capture.c) */
void hs_pipeline_frame(struct hs_ctx *ctx, int dlt, const uint8_t *data,
		       uint32_t caplen, uint32_t wirelen, uint64_t ts_ns);

/* open the history on first use; NULL with the error printed */
struct hs_store *hs_ctx_store(struct hs_ctx *ctx);
/* the same without printing why not, before root is dropped: the verb that
 * needs the history later says why it has none */
struct hs_store *hs_ctx_store_early(struct hs_ctx *ctx);
/* the history for a verb that only reads it: none is made for a read. 1 with
 * *st, -1 with the error printed, 0 when there is none at the path and the
 * verb lists (list): its answer is empty. Any other verb gets the error "no
 * history at 'PATH'". */
int hs_ctx_store_read(struct hs_ctx *ctx, bool list, struct hs_store **st);

/* run one command line (split into words, '#' comments); returns HS_CMD_* */
int hs_run_line(struct hs_ctx *ctx, const char *line);
/* a pending verb reports that it finished */
void hs_cmd_finish(struct hs_ctx *ctx, int status);
/* print an asynchronous message above the prompt without breaking the line */
void hs_async_print(struct hs_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* the full-screen view takes the terminal: stop reading stdin with libedit
 * and restore the terminal; then re-init libedit on stdin and redraw the
 * prompt, history intact */
void hs_console_suspend(struct hs_ctx *ctx);
void hs_console_resume(struct hs_ctx *ctx);
/* watch the terminal on standard input for input, its file left blocking:
 * uv_poll_init makes it non-blocking, and standard output shares that open
 * file, so a long answer to a terminal slow to take it failed with EAGAIN
 * and lost lines. Input is read only when poll says there is some. */
int hs_console_poll_stdin(uv_loop_t *loop, uv_poll_t *poll);
/* open the line-history file now, to save it there after root is dropped */
void hs_console_keep_history(void);

/* split a line into words: blanks separate, '...' and "..." quote, # starts a
 * comment outside quotes. Returns argc or -1 (unterminated quote) with the
 * column in *errcol. argv points into buf (modified). */
int hs_split_words(char *buf, char **argv, int max, int *errcol);

#endif
