/* console.c - the REPL on the loop: libedit on a terminal, plain lines on a
 * pipe, signals, and messages printed above the prompt
 *
 * libedit runs unbuffered: every time stdin is readable (uv_poll) each
 * call of el_gets() handles one key, as many as are waiting, and a line is
 * complete when it ends in a newline. While a line runs the terminal is
 * back in cooked mode and stdin is not polled; the runner calls
 * hs_console_idle() when it wants the next line, and the prompt comes
 * back.
 */
#include <errno.h>
#include <fcntl.h>
#include <histedit.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "alert.h"
#include "cmd.h"
#include "complete.h"
#include "console.h"
#include "interrupt.h"
#include "runner.h"
#include "watch.h"

#define PROMPT "hopscope> "
#define HISTORY_SIZE 1000

struct console {
	struct hs_ctx *ctx;
	bool started, ended;
	bool batch;		/* -c/-f: stdin is not read */
	bool tty;		/* libedit on stdin */
	bool pipe_input;	/* a pipe or socket read through uv_pipe */
	int pipe_flags;		/* its file flags before uv_pipe_open made it non-blocking */

	EditLine *el;
	History *hist;
	char *hist_path;
	FILE *hist_fp;		/* opened before dropping root (hs_console_keep_history) */
	bool prompting;		/* unbuffered mode on, the prompt is shown */
	bool suspended;

	uv_poll_t poll;		/* stdin, terminal */
	uv_pipe_t pipe;		/* stdin, pipe */
	uv_async_t sig_wake;	/* SIGINT, SIGTERM, SIGHUP (interrupt.h) */
	uv_signal_t sig_winch;
	bool poll_init, pipe_init, sig_init;
	int rows, cols;
};

static struct console con;

/* ---- the line editor -------------------------------------------------------- */

static char *prompt_fn(EditLine *el)
{
	(void)el;
	return (char *)PROMPT;
}

/* the line up to the cursor */
static char *line_to_cursor(EditLine *el)
{
	const LineInfo *li = el_line(el);
	size_t len = (size_t)(li->cursor - li->buffer);
	char *line = hs_xcalloc(1, len + 1);

	memcpy(line, li->buffer, len);
	return line;
}

static void print_cands(const struct hs_cands *c)
{
	for (int i = 0; i < c->n; i++)
		printf("%s%s", i ? "  " : "", c->v[i]);
	if (!c->n && c->hint)
		printf("<%s>", c->hint);
	fputs("\n", stdout);
}

static unsigned char complete(EditLine *el, int ch)
{
	char *line = line_to_cursor(el);
	struct hs_cands c;
	unsigned char rc = CC_ERROR;
	const char *word;
	size_t wlen;

	(void)ch;
	/* the word under the cursor, as typed (unquoted words only) */
	word = line + strlen(line);
	while (word > line && word[-1] != ' ' && word[-1] != '\t')
		word--;
	wlen = strlen(word);
	hs_complete(con.ctx, line, &c);
	if (c.n == 1) {
		if (el_insertstr(el, c.v[0] + wlen) == 0 && (c.no_space || el_insertstr(el, " ") == 0))
			rc = CC_REFRESH;
	} else if (c.n > 1) {
		/* longest common prefix, then the list if it adds nothing */
		size_t common = strlen(c.v[0]);
		for (int i = 1; i < c.n; i++) {
			size_t k = 0;
			while (k < common && c.v[i][k] == c.v[0][k])
				k++;
			common = k;
		}
		if (common > wlen) {
			char *ins = hs_xcalloc(1, common - wlen + 1);
			memcpy(ins, c.v[0] + wlen, common - wlen);
			el_insertstr(el, ins);
			free(ins);
			rc = CC_REFRESH;
		} else {
			fputs("\n", stdout);
			print_cands(&c);
			fflush(stdout);
			rc = CC_REDISPLAY;
		}
	}
	hs_cands_free(&c);
	free(line);
	return rc;
}

/* '?': what may come next here, as switch CLIs answer it; inside quotes a
 * '?' is just a character */
static unsigned char describe(EditLine *el, int ch)
{
	char *line = line_to_cursor(el);
	unsigned char rc = CC_REDISPLAY;
	char quote = 0;

	for (const char *p = line; *p; p++)
		if (!quote && (*p == '\'' || *p == '"'))
			quote = *p;
		else if (*p == quote)
			quote = 0;
	if (quote) {
		char s[2] = { (char)ch, '\0' };
		rc = el_insertstr(el, s) == 0 ? CC_REFRESH : CC_ERROR;
	} else {
		fputs("\n", stdout);
		hs_describe(con.ctx, con.ctx->out, line);
		fflush(stdout);
	}
	free(line);
	return rc;
}

static EditLine *editor_new(void)
{
	EditLine *el = el_init("hopscope", stdin, stdout, stderr);

	if (!el)
		return NULL;
	el_set(el, EL_EDITOR, "emacs");
	el_set(el, EL_SIGNAL, 0);
	el_set(el, EL_PROMPT, prompt_fn);
	el_set(el, EL_HIST, history, con.hist);
	/* the wide call: the narrow one leaks its copies of the two strings */
	el_wset(el, EL_ADDFN, L"hs-complete", L"complete a verb, word or file name", complete);
	el_set(el, EL_BIND, "^I", "hs-complete", NULL);
	el_wset(el, EL_ADDFN, L"hs-describe", L"list what may come next", describe);
	el_set(el, EL_BIND, "?", "hs-describe", NULL);
	el_source(el, NULL);	/* the user's ~/.editrc */
	return el;
}

static void history_open(void)
{
	HistEvent ev;
	const char *env = getenv("HOPSCOPE_HISTORY");
	const char *home = getenv("HOME");

	con.hist = history_init();
	if (!con.hist)
		return;
	history(con.hist, &ev, H_SETSIZE, HISTORY_SIZE);
	history(con.hist, &ev, H_SETUNIQUE, 1);
	if (env) {
		if (*env)
			con.hist_path = hs_xstrdup(env);
	} else if (home && *home) {
		size_t n = strlen(home) + sizeof("/.hopscope_history");
		con.hist_path = hs_xcalloc(1, n);
		snprintf(con.hist_path, n, "%s/.hopscope_history", home);
	}
	if (con.hist_path)
		history(con.hist, &ev, H_LOAD, con.hist_path);	/* none yet is fine */
}

static void history_save(void)
{
	HistEvent ev;

	if (con.hist && con.hist_fp) {
		/* libedit's save fchmod()s the file, which only its owner may do:
		 * save to a file of our own, then copy it into the one kept open */
		FILE *t = tmpfile();
		char buf[4096];
		size_t n;

		if (!t)
			return;
		if (history(con.hist, &ev, H_SAVE_FP, t) >= 0 && fflush(t) == 0) {
			rewind(t);
			rewind(con.hist_fp);
			if (ftruncate(fileno(con.hist_fp), 0) == 0)
				while ((n = fread(buf, 1, sizeof(buf), t)) > 0 &&
				       fwrite(buf, 1, n, con.hist_fp) == n)
					;
			fflush(con.hist_fp);
		}
		fclose(t);
	} else if (con.hist && con.hist_path) {
		history(con.hist, &ev, H_SAVE, con.hist_path);
	}
}

const char *hs_db_default(void)
{
	const char *db = getenv("HOPSCOPE_DB");

	return db && *db ? db : "hopscope.db";
}

void hs_console_keep_history(void)
{
	int fd;

	if (!con.hist_path || con.hist_fp)
		return;
	fd = open(con.hist_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0 && !(con.hist_fp = fdopen(fd, "r+")))
		close(fd);
}

/* stop prompting: cooked terminal, stdin not polled */
static void prompt_off(void)
{
	if (con.poll_init)
		uv_poll_stop(&con.poll);
	if (con.prompting && con.el)
		el_set(con.el, EL_UNBUFFERED, 0);
	con.prompting = false;
}

static void line_read(const char *line, size_t n)
{
	HistEvent ev;
	char *copy;

	prompt_off();
	copy = hs_xcalloc(1, n + 2);
	memcpy(copy, line, n);
	while (n > 0 && (copy[n - 1] == '\n' || copy[n - 1] == '\r'))
		copy[--n] = '\0';
	if (n > 0 && con.hist) {
		const char *p = copy;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p)
			history(con.hist, &ev, H_ENTER, copy);
	}
	copy[n] = '\n';
	hs_runner_feed(con.ctx, copy, n + 1);
	free(copy);
}

static void stdin_eof(void)
{
	prompt_off();
	if (con.tty)
		fputs("\n", stdout);
	hs_runner_feed_eof(con.ctx);
}

static void tty_readable(uv_poll_t *h, int status, int events)
{
	const char *line;
	int n = 0, avail = 0;

	(void)h;
	if (status < 0 || (events & UV_DISCONNECT) ||
	    (ioctl(STDIN_FILENO, FIONREAD, &avail) == 0 && avail == 0)) {
		stdin_eof();
		return;
	}
	/* every key already typed, in this turn: a line pasted or typed ahead
	 * while a file is read would otherwise wait a slice of it per key.
	 * el_gets() is called only while a byte waits (it would block), and at
	 * most once per byte that waited at first (a call takes one at least) */
	int calls = avail;
	do {
		line = el_gets(con.el, &n);
		if (!line || n <= 0)
			continue;	/* an edit, not a line yet */
		if (n == 1 && line[0] == 0x04) {	/* ^D on an empty line */
			stdin_eof();
			return;
		}
		if (line[n - 1] == '\n') {
			line_read(line, (size_t)n);
			return;
		}
	} while (--calls > 0 && ioctl(STDIN_FILENO, FIONREAD, &avail) == 0 && avail > 0);
}

/* ---- plain lines from a pipe -------------------------------------------------- */

static void pipe_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	static char space[65536];

	(void)h;
	(void)hint;
	buf->base = space;
	buf->len = sizeof(space);
}

static void pipe_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	if (n > 0) {
		hs_runner_feed(con.ctx, buf->base, (size_t)n);
	} else if (n < 0) {
		if (n != UV_EOF)
			out_err(con.ctx->out, "cannot read standard input: %s", uv_strerror((int)n));
		uv_read_stop(s);
		hs_runner_feed_eof(con.ctx);
	}
}

/* ---- signals ------------------------------------------------------------------ */

static void clear_line(void)
{
	const LineInfo *li = el_line(con.el);

	el_cursor(con.el, (int)(li->lastchar - li->cursor));
	li = el_line(con.el);
	el_deletestr(con.el, (int)(li->cursor - li->buffer));
	fputs("^C\r\n", stdout);
	fflush(stdout);
	el_set(con.el, EL_REFRESH);
}

static void on_sigint(struct hs_ctx *ctx)
{
	if (!con.tty) {
		/* a runbook: Ctrl-C ends the run */
		void (*cancel)(struct hs_ctx *) = ctx->cancel;
		ctx->exit_status = 128 + SIGINT;
		ctx->quit = true;
		if (cancel) {
			ctx->cancel = NULL;
			cancel(ctx);
		}
		hs_console_end(ctx);
		return;
	}
	if (con.prompting && con.el) {
		clear_line();
		return;
	}
	fputs("\n", stdout);	/* the terminal echoed ^C itself (cooked mode) */
	/* a verb that saw the signal itself has stopped already: the runner
	 * waits for this turn to take the next line */
	if (!hs_runner_interrupt(ctx))
		hs_async_print(ctx, "this cannot be interrupted; it ends by itself");
	hs_runner_resume(ctx);
}

/* SIGTERM, SIGHUP: end the console; the history's session ends as at quit */
static void on_sigterm(struct hs_ctx *ctx, int sig)
{
	void (*cancel)(struct hs_ctx *) = ctx->cancel;

	/* a run cut short says so, even when the line it cut failed */
	if (!con.tty && hs_runner_busy(ctx))
		ctx->exit_status = 128 + sig;
	ctx->quit = true;
	if (cancel) {
		ctx->cancel = NULL;
		cancel(ctx);
	}
	hs_console_end(ctx);
}

void hs_console_signal(struct hs_ctx *ctx)
{
	int sig = con.started ? hs_interrupt_take() : 0;

	if (sig == SIGINT)
		on_sigint(ctx);
	else if (sig != 0)
		on_sigterm(ctx, sig);
}

static void on_signal(uv_async_t *h)
{
	(void)h;
	hs_console_signal(con.ctx);
}

static void window_size(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		con.rows = ws.ws_row;
		con.cols = ws.ws_col;
	}
}

static void on_sigwinch(uv_signal_t *h, int sig)
{
	(void)h;
	(void)sig;
	window_size();
	if (con.el)
		el_resize(con.el);
}

/* ---- the console ------------------------------------------------------------------ */

/* ---- what the engine tells ------------------------------------------------- */

/* what the engine says to the verb it serves (ctx->say), on that verb's output */
void hs_console_say(struct hs_ctx *ctx, enum hs_say what, const char *msg)
{
	switch (what) {
	case HS_SAY_ERR:
		out_err(ctx->out, "%s", msg);
		break;
	case HS_SAY_WARN:
		out_warn(ctx->out, "%s", msg);
		break;
	case HS_SAY_INFO:
		out_text(ctx->out, "%s\n", msg);
		break;
	}
}

/* the pipeline's events, told to this console's client: above the prompt
 * (or in watch's events pane) when interactive, else on the output of the
 * runbook that is running */
static void on_event(void *arg, const struct hs_event *ev)
{
	struct hs_ctx *ctx = arg;
	char val[32], when[HS_TIMESTRLEN], dur[32];

	switch (ev->kind) {
	case HS_EV_ERROR:
		if (ctx->interactive)
			hs_async_print(ctx, "error: %s", ev->text);
		else
			out_err(ctx->out, "%s", ev->text);
		break;
	case HS_EV_CAPTURE_ENDED: {
		const struct hs_capture_stats *s = &ctx->last_stats;
		struct hs_tracer_stats ts;

		if (!ctx->interactive || ev->status != 0)
			break;
		hs_capture_trace_stats(ctx, &ts);
		hs_async_print(ctx,
			       "capture of '%s' ended (%s): %llu packets, %llu traces "
			       "(%llu dropped, %llu looped), %llu decode errors, %llu not IP in %s",
			       ev->source, ev->text, (unsigned long long)s->packets,
			       (unsigned long long)ts.closed,
			       (unsigned long long)ts.by_outcome[HS_OUT_DROPPED],
			       (unsigned long long)ts.by_outcome[HS_OUT_LOOPED],
			       (unsigned long long)s->decode_errors, (unsigned long long)s->not_ip,
			       hs_fmt_duration(s->ended_ns - s->started_ns, dur, sizeof(dur)));
		break;
	}
	case HS_EV_ALERT: {
		const struct hs_alert *a = ev->alert;

		if (ctx->out->json && !ctx->interactive) {
			/* a runbook with --json: a JSON line among the verb's output,
			 * with the events table's names */
			struct hs_out o;

			out_init(&o, ctx->out->fp, ctx->out->err, true);
			out_obj_open(&o, NULL);
			out_str(&o, "event", NULL, "alert");
			out_uint(&o, "alert", NULL, a->id);
			out_str(&o, "cond", NULL, a->text);
			out_double(&o, "value", NULL, ev->value);
			out_time(&o, "ts_ns", NULL, ev->ts);
			out_obj_close(&o);
			fflush(ctx->out->fp);
		} else {
			hs_async_print(ctx, "alert %u: %s (%s) at %s", a->id, a->text,
				       hs_acond_fmt(&a->c, ev->value, val, sizeof(val)),
				       hs_fmt_time(ev->ts, when, sizeof(when)));
		}
		break;
	}
	case HS_EV_CAPTURE_STARTED:
	case HS_EV_CAPTURE_STOPPED:
	case HS_EV_TRACES_REPLACED:
	case HS_EV_TRACE_WITHDRAWN:
		break;
	}
}

int hs_console_start(struct hs_ctx *ctx, bool batch)
{
	memset(&con, 0, sizeof(con));
	if (hs_sub_events(&ctx->subs, on_event, ctx) < 0)
		return out_err(ctx->out, "cannot hear the packet pipeline: too many subscribers");
	con.ctx = ctx;
	con.batch = batch;
	con.started = true;

	uv_async_init(ctx->loop, &con.sig_wake, on_signal);
	uv_signal_init(ctx->loop, &con.sig_winch);
	con.sig_init = true;
	hs_interrupt_init(&con.sig_wake);
	uv_signal_start(&con.sig_winch, on_sigwinch, SIGWINCH);
	uv_unref((uv_handle_t *)&con.sig_wake);
	uv_unref((uv_handle_t *)&con.sig_winch);
	window_size();

	if (batch)
		return 0;
	if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
		int rc;
		history_open();
		con.el = editor_new();
		if (!con.el)
			return out_err(ctx->out, "cannot set up line editing on the terminal");
		rc = hs_console_poll_stdin(ctx->loop, &con.poll);
		if (rc < 0)
			return out_err(ctx->out, "cannot watch standard input: %s", uv_strerror(rc));
		con.poll_init = true;
		con.tty = true;
		hs_runner_add_input(ctx, "stdin", true);
		return 0;
	}
	/* not a terminal: its lines are a runbook (typed lines without line
	 * editing when only the output is redirected) */
	hs_runner_add_input(ctx, "stdin", isatty(STDIN_FILENO));
	uv_handle_type t = uv_guess_handle(STDIN_FILENO);
	if (t == UV_NAMED_PIPE || t == UV_TCP || t == UV_TTY) {
		int rc = uv_pipe_init(ctx->loop, &con.pipe, 0);
		/* uv_pipe reads until EAGAIN, so the file stays non-blocking
		 * while the console reads it; put back at the end (a terminal
		 * left non-blocking troubles the shell after) */
		con.pipe_flags = fcntl(STDIN_FILENO, F_GETFL);
		if (rc == 0)
			rc = uv_pipe_open(&con.pipe, STDIN_FILENO);
		if (rc == 0) {
			con.pipe_init = true;
			con.pipe_input = true;
			uv_read_start((uv_stream_t *)&con.pipe, pipe_alloc, pipe_read);
			return 0;
		}
		if (con.pipe.type)
			uv_close((uv_handle_t *)&con.pipe, NULL);
	}
	/* a file or a device: read it as it comes, it never blocks for long */
	{
		char buf[65536];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
			hs_runner_feed(ctx, buf, n);
		hs_runner_feed_eof(ctx);
	}
	return 0;
}

void hs_console_idle(struct hs_ctx *ctx)
{
	(void)ctx;
	if (!con.started || con.ended || !con.tty || con.suspended || !con.el)
		return;
	if (!con.prompting) {
		fflush(stdout);
		el_set(con.el, EL_UNBUFFERED, 1);	/* prints the prompt */
		con.prompting = true;
	}
	if (con.poll_init)
		uv_poll_start(&con.poll, UV_READABLE | UV_DISCONNECT, tty_readable);
}

void hs_console_end(struct hs_ctx *ctx)
{
	ctx->quit = true;
	if (!con.started || con.ended)
		return;
	con.ended = true;
	prompt_off();
	if (con.pipe_init)
		uv_read_stop((uv_stream_t *)&con.pipe);
	fflush(stdout);
	uv_stop(ctx->loop);
}

void hs_console_close(struct hs_ctx *ctx)
{
	hs_unsub_events(&ctx->subs, on_event, ctx);
	if (!con.started)
		return;
	hs_console_end(ctx);
	if (con.el) {
		el_end(con.el);
		con.el = NULL;
	}
	history_save();
	if (con.hist)
		history_end(con.hist);
	con.hist = NULL;
	free(con.hist_path);
	con.hist_path = NULL;
	if (con.hist_fp)
		fclose(con.hist_fp);
	con.hist_fp = NULL;
	if (con.poll_init)
		uv_close((uv_handle_t *)&con.poll, NULL);
	if (con.pipe_init) {
		uv_close((uv_handle_t *)&con.pipe, NULL);
		if (con.pipe_flags >= 0)
			fcntl(STDIN_FILENO, F_SETFL, con.pipe_flags);
	}
	if (con.sig_init) {
		/* a signal from here on is recorded for main's exit status */
		hs_interrupt_init(NULL);
		uv_close((uv_handle_t *)&con.sig_wake, NULL);
		uv_close((uv_handle_t *)&con.sig_winch, NULL);
	}
	con.poll_init = con.pipe_init = con.sig_init = false;
	con.started = false;
}

void hs_console_vprint(struct hs_ctx *ctx, const char *fmt, va_list ap)
{
	if (hs_watch_active(ctx)) {
		/* the full-screen view has the terminal: its events pane */
		char msg[1024];
		vsnprintf(msg, sizeof(msg), fmt, ap);
		hs_watch_event(ctx, msg);
		return;
	}
	if (con.started && con.prompting && con.el) {
		/* above the prompt: clear it, print, draw it again with the line */
		fputs("\r\033[K", stdout);
		vfprintf(stdout, fmt, ap);
		fputs("\r\n", stdout);
		fflush(stdout);
		el_set(con.el, EL_REFRESH);
	} else {
		hs_print_line(ctx, fmt, ap);
	}
}

void hs_console_suspend(struct hs_ctx *ctx)
{
	(void)ctx;
	if (!con.started || !con.tty || con.suspended)
		return;
	prompt_off();
	if (con.el) {
		el_end(con.el);
		con.el = NULL;
	}
	con.suspended = true;
}

void hs_console_resume(struct hs_ctx *ctx)
{
	if (!con.started || !con.tty || !con.suspended)
		return;
	con.suspended = false;
	con.el = editor_new();
	window_size();
	if (!con.el) {
		out_err(ctx->out, "cannot set up line editing on the terminal");
		hs_console_end(ctx);
		return;
	}
	if (!hs_runner_busy(ctx))
		hs_console_idle(ctx);
}
