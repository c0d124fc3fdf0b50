/* console.h - the console: one libuv loop, the REPL or a runbook, and the
 * runner of command lines; what they work on is the context (ctx.h).
 */
#ifndef HS_CONSOLE_H
#define HS_CONSOLE_H

#include <uv.h>
#include "ctx.h"
#include "out.h"

/* run one command line (split into words, '#' comments); returns HS_CMD_* */
int hs_run_line(struct hs_ctx *ctx, const char *line);
/* a pending verb reports that it finished */
void hs_cmd_finish(struct hs_ctx *ctx, int status);
/* render what the engine says (ctx->say): out_err, out_warn, a line of text */
void hs_console_say(struct hs_ctx *ctx, enum hs_say what, const char *msg);
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
/* the history when --db is not given: $HOPSCOPE_DB, else ./hopscope.db */
const char *hs_db_default(void);

/* split a line into words: blanks separate, '...' and "..." quote, # starts a
 * comment outside quotes. Returns argc or -1 (unterminated quote) with the
 * column in *errcol. argv points into buf (modified). */
int hs_split_words(char *buf, char **argv, int max, int *errcol);

#endif
