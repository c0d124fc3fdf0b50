/* runner.h - where command lines come from, and who runs them next
 *
 * The runner keeps a stack of line sources: runbook files (-f, 'source'),
 * the commands of -c, and the console's own input (a terminal or a pipe).
 * Top-level sources run one after the other in the order they were added;
 * 'source FILE' pushes a file above the line that named it. Lines run one
 * at a time: a verb that returns HS_CMD_PENDING holds every source until it
 * calls hs_cmd_finish().
 */
#ifndef HS_RUNNER_H
#define HS_RUNNER_H

#include <stdbool.h>
#include <stddef.h>

#include "cmd.h"
#include "cmdline.h"

struct hs_ctx;

#define HS_SOURCE_DEPTH	16	/* runbooks sourced inside runbooks */
#define HS_MAX_WORDS	256	/* words on one command line */

void hs_runner_init(struct hs_ctx *ctx);
void hs_runner_free(struct hs_ctx *ctx);

/* queue a runbook file (-f); 0, or -1 with the error printed */
int hs_runner_add_file(struct hs_ctx *ctx, const char *path);
/* call fn with the descriptor of each runbook file queued or running
 * (files a verb must not write) */
void hs_runner_each_file(const struct hs_ctx *ctx, void (*fn)(void *arg, int fd), void *arg);
/* queue the commands of -c, separated by ';' outside quotes */
void hs_runner_add_cmds(struct hs_ctx *ctx, const char *cmds);
/* queue the lines of a file read already, run as a runbook called name
 * (errors FILE:LINE: with LINE the line's number, from 1) */
void hs_runner_add_lines(struct hs_ctx *ctx, const char *name, char *const *lines, int n);
/* queue one command given as words (hopscope VERB ARG...) */
void hs_runner_add_words(struct hs_ctx *ctx, int argc, char **argv);
/* queue the console's input: lines arrive with hs_runner_feed(). An
 * interactive source prints errors without stopping; any other one is run
 * like a runbook called name. */
void hs_runner_add_input(struct hs_ctx *ctx, const char *name, bool interactive);
void hs_runner_feed(struct hs_ctx *ctx, const char *data, size_t len);
void hs_runner_feed_eof(struct hs_ctx *ctx);

/* a line queued may write the history (hs_cmd_stores, or any
 * line of a runbook or the console's input, not read yet) */
bool hs_runner_may_store(const struct hs_ctx *ctx);

/* run lines until a verb is pending, input is awaited, or all is done */
void hs_runner_start(struct hs_ctx *ctx);
/* a verb or a runbook is running: the console does not prompt */
bool hs_runner_busy(const struct hs_ctx *ctx);
/* Ctrl-C: cancel the pending verb and abandon runbooks started from the
 * prompt; returns false when the pending verb cannot be interrupted */
bool hs_runner_interrupt(struct hs_ctx *ctx);
/* run lines again after a signal held them (interrupt.h) */
void hs_runner_resume(struct hs_ctx *ctx);

/* 'source FILE': HS_CMD_PENDING until the file has run, or HS_CMD_FAIL */
int hs_runner_source(struct hs_ctx *ctx, const char *path);

/* a front end beside the console (serve.c, attach.c): idle is told when
 * the runner waits for input, exec runs a line instead of hs_run_line
 * (HS_CMD_*; pending lines end with hs_cmd_finish()), finish is told
 * when a verb the front end ran itself with hs_run_line finishes; each
 * may be NULL */
struct hs_runner_front {
	void (*idle)(struct hs_ctx *ctx);
	int (*exec)(struct hs_ctx *ctx, const char *line);
	void (*finish)(struct hs_ctx *ctx, int status);
};
void hs_runner_set_front(struct hs_ctx *ctx, const struct hs_runner_front *front);

/* a line checked as it would run, without running it: its words, verb,
 * argument count and sub-verb; 0 with *verb (NULL for an empty line or a
 * question) and *sub (its sub-verb in full, or NULL), or -1 with the
 * error printed */
int hs_check_line(struct hs_ctx *ctx, const char *line, const struct hs_cmd **verb,
		  const char **sub);

/* console.c: the runner waits for input (prompt), or has no more (leave) */
void hs_console_idle(struct hs_ctx *ctx);
void hs_console_end(struct hs_ctx *ctx);
/* console.c: signals, and stdin unless batch (-c/-f): libedit on a
 * terminal, plain lines otherwise. 0 or -1 with the error printed. */
int hs_console_start(struct hs_ctx *ctx, bool batch);
/* console.c: act on the signal recorded (interrupt.h), if any: Ctrl-C
 * cancels, SIGTERM and SIGHUP end the console */
void hs_console_signal(struct hs_ctx *ctx);
/* close the console's handles and save the line history */
void hs_console_close(struct hs_ctx *ctx);

#endif
