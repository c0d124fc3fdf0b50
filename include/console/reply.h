/* reply.h - what a verb asks of the console above it
 *
 * The console is layered as git keeps its builtins below git.c: the pieces
 * the verbs use (this, the output sink out.h, the file walk, the full-screen
 * view, formatting) below the verbs (commands/), and the command table, the
 * runner, completion and the REPL above them. A verb, or a piece below the
 * verbs, never names what is above: it answers later through
 * hs_cmd_finish, prints above the prompt through hs_async_print, and
 * reaches the table, the runner and the terminal through ctx->con, which
 * the runner sets before a line runs (runbook.c).
 */
#ifndef HS_REPLY_H
#define HS_REPLY_H

#include <stdarg.h>
#include <stddef.h>
#include <uv.h>

struct hs_ctx;
struct hs_cmd;

struct hs_con {
	/* the command table (cmd.h): its verbs, one by its name or prefix
	 * (NULL, *ambiguous set when several match), the closest to a typo,
	 * and the verbs a word prefixes, joined for a message */
	const struct hs_cmd *cmds;
	const unsigned *ncmds;
	const struct hs_cmd *(*lookup)(const char *word, int *ambiguous);
	const char *(*suggest_verb)(const char *word);
	void (*verbs_prefixed)(const char *word, char *buf, size_t len);
	/* the runner (runner.h): a pending verb finished; run one line; push
	 * a runbook above the line that names it ('source'); each runbook
	 * file queued or running */
	void (*finish)(struct hs_ctx *ctx, int status);
	int (*run_line)(struct hs_ctx *ctx, const char *line);
	int (*source)(struct hs_ctx *ctx, const char *path);
	void (*each_file)(const struct hs_ctx *ctx, void (*fn)(void *arg, int fd), void *arg);
	/* the terminal (console.h): a line above the prompt; hand the
	 * terminal over to a full-screen view and take it back */
	void (*vprint)(struct hs_ctx *ctx, const char *fmt, va_list ap);
	void (*suspend)(struct hs_ctx *ctx);
	void (*resume)(struct hs_ctx *ctx);
};

/* a pending verb (HS_CMD_PENDING) reports that it finished */
void hs_cmd_finish(struct hs_ctx *ctx, int status);
/* print an asynchronous message above the prompt without breaking the line */
void hs_async_print(struct hs_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* the same on the client's output, a line, with no prompt to mind */
void hs_print_line(struct hs_ctx *ctx, const char *fmt, va_list ap);
/* watch the terminal on standard input for input, its file left blocking:
 * uv_poll_init makes it non-blocking, and standard output shares that open
 * file, so a long answer to a terminal slow to take it failed with EAGAIN
 * and lost lines. Input is read only when poll says there is some. */
int hs_console_poll_stdin(uv_loop_t *loop, uv_poll_t *poll);

#endif
