/* console.h - the console: one libuv loop, the REPL or a runbook, and the
 * runner of command lines; what they work on is the context (ctx.h).
 */
#ifndef HS_CONSOLE_H
#define HS_CONSOLE_H

#include <stdarg.h>
#include <uv.h>
#include "cmdline.h"
#include "ctx.h"
#include "out.h"
#include "reply.h"

/* run one command line (split into words, '#' comments); returns HS_CMD_* */
int hs_run_line(struct hs_ctx *ctx, const char *line);
/* render what the engine says (ctx->say): out_err, out_warn, a line of text */
void hs_console_say(struct hs_ctx *ctx, enum hs_say what, const char *msg);
/* hs_async_print's line where the console has the terminal: the full-screen
 * view's events pane, or above the prompt (ctx->con->vprint, reply.h) */
void hs_console_vprint(struct hs_ctx *ctx, const char *fmt, va_list ap);

/* the full-screen view takes the terminal: stop reading stdin with libedit
 * and restore the terminal; then re-init libedit on stdin and redraw the
 * prompt, history intact */
void hs_console_suspend(struct hs_ctx *ctx);
void hs_console_resume(struct hs_ctx *ctx);
/* open the line-history file now, to save it there after root is dropped */
void hs_console_keep_history(void);
/* the history when --db is not given: $HOPSCOPE_DB, else ./hopscope.db */
const char *hs_db_default(void);

#endif
