/* runbook.c - command lines: words, verbs, argument counts, runbooks
 *
 * A line is split into words, its verb is looked up in the command table
 * (exact name or unambiguous prefix), its argument count is checked against
 * the table's spec (cmdline.c), and the verb runs, with ctx->con set to what
 * it may ask of the runner and the REPL above it (reply.h). Lines come from sources stacked in
 * the runner (see runner.h); a failed line of a runbook stops it with its
 * FILE:LINE in front of the error, unless --keep-going.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "complete.h"
#include "console.h"
#include "interrupt.h"
#include "pager.h"
#include "runner.h"
#include "watch.h"

/* ---- the runner's state -------------------------------------------------- */

enum src_kind { SRC_FILE, SRC_CMDS, SRC_INPUT };

struct hs_src {
	enum src_kind kind;
	char *name;
	FILE *fp;			/* SRC_FILE */
	char **cmds;			/* SRC_CMDS */
	int ncmds, next;
	char *buf;			/* SRC_INPUT: bytes not yet a line */
	size_t len, cap;
	bool eof;
	bool interactive;
	bool from_verb;			/* pushed by 'source': its end finishes that line */
	bool stop;			/* abandoned: runs no more lines */
	bool failed;
	bool waiting;			/* its current line's verb is pending */
	unsigned lineno;
	unsigned nul_col;		/* its current line has a NUL byte there */
	struct hs_src *next_src;	/* below on the stack, or next in the queue */
};

struct hs_runner {
	struct hs_src *stack;
	int depth;
	struct hs_src *queue;
	bool started, pumping, ended;
	int in_verb;
	bool early_set;
	int early;
	const struct hs_runner_front *front;	/* NULL: the console alone */
};

static void runner_finish(struct hs_ctx *ctx, int status);

/* what the verbs below reach the runner, the table and the terminal by */
static const struct hs_con runner_con = {
	.cmds = hs_cmds,
	.ncmds = &hs_ncmds,
	.lookup = hs_cmd_lookup,
	.suggest_verb = hs_suggest_verb,
	.verbs_prefixed = hs_verbs_prefixed,
	.finish = runner_finish,
	.run_line = hs_run_line,
	.source = hs_runner_source,
	.each_file = hs_runner_each_file,
	.vprint = hs_console_vprint,
	.suspend = hs_console_suspend,
	.resume = hs_console_resume,
};

/* ---- one line ----------------------------------------------------------------- */

static void ambiguity(struct hs_ctx *ctx, const char *word)
{
	char list[512];

	hs_verbs_prefixed(word, list, sizeof(list));
	out_err(ctx->out, "'%s' is ambiguous: %s", word, list);
}

/* "?" alone, or a word such as "stat?": never a quoted query or filter */
static bool asks_next(const char *w)
{
	size_t n = strlen(w);

	if (n == 0 || w[n - 1] != '?')
		return false;
	for (size_t i = 0; i + 1 < n; i++)
		if (!(w[i] >= 'a' && w[i] <= 'z') && w[i] != '-')
			return false;
	return true;
}

/* the words before a final '?' (or with the '?' taken off the last word) */
static int describe_words(struct hs_ctx *ctx, int argc, char **argv)
{
	size_t len = 0;
	char *line;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	line = hs_xcalloc(1, len + 1);
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(line, " ");
		strcat(line, argv[i]);
	}
	/* "traces ?" describes after 'traces '; "traces sh?" completes 'sh' */
	len = strlen(line);
	line[--len] = '\0';
	hs_describe(ctx, ctx->out, line);
	free(line);
	return HS_CMD_OK;
}

/* the verb of a line's words, its argument count and sub-verb checked:
 * the words are moved past 'show' (*argv) and the verb and sub-verb
 * written in full. NULL with the error printed. */
static const struct hs_cmd *resolve(struct hs_ctx *ctx, int *pargc, char ***pargv)
{
	int argc = *pargc, amb, min, max;
	char **argv = *pargv;
	const struct hs_cmd *c;
	char usage[512];
	const char *subs[32];
	int nsubs;

	/* 'show traces', 'sh traces': every switch CLI's habit */
	if (argc > 1 && strlen(argv[0]) >= 2 && strncmp("show", argv[0], strlen(argv[0])) == 0 &&
	    !hs_cmd_lookup(argv[0], NULL)) {
		argv++;
		argc--;
	}
	*pargc = argc;
	*pargv = argv;
	c = hs_cmd_lookup(argv[0], &amb);
	if (!c) {
		if (amb) {
			ambiguity(ctx, argv[0]);
			return NULL;
		}
		const char *near = hs_suggest_verb(argv[0]);
		if (near)
			out_err(ctx->out, "unknown verb '%.64s%s': did you mean '%s'?", argv[0],
				strlen(argv[0]) > 64 ? "..." : "", near);
		else
			out_err(ctx->out, "unknown verb '%.64s%s' (try 'help')", argv[0],
				strlen(argv[0]) > 64 ? "..." : "");
		return NULL;
	}
	hs_cmd_arity(c, &min, &max);
	if (argc - 1 < min) {
		out_err(ctx->out, "too few arguments for '%s' (%s)", c->name,
			hs_cmd_usage(c, usage, sizeof(usage)));
		return NULL;
	}
	if (max >= 0 && argc - 1 > max) {
		out_err(ctx->out, "too many arguments for '%s' (%s)", c->name,
			hs_cmd_usage(c, usage, sizeof(usage)));
		return NULL;
	}
	/* a sub-verb by its prefix, as the verb itself: 'capture stat' */
	nsubs = hs_cmd_subverbs(c, subs, (int)HS_ARRAY_SIZE(subs));
	if (argc > 1 && nsubs > 0) {
		int m;
		const char *sub = hs_cmd_subverb(c, argv[1], &m);
		char list[256];
		if (sub) {
			argv[1] = (char *)sub;
		} else if (m > 1) {
			hs_join_prefixed(argv[1], subs, (size_t)nsubs, list, sizeof(list));
			out_err(ctx->out, "%s: '%s' is ambiguous: %s", c->name, argv[1], list);
			return NULL;
		} else if (c->args[0] != '[') {
			/* a required sub-verb that is none of them */
			const char *near = hs_suggest(argv[1], subs, (size_t)nsubs);
			hs_join_prefixed("", subs, (size_t)nsubs, list, sizeof(list));
			if (near)
				out_err(ctx->out, "unknown %s subcommand '%.64s': did you mean '%s'? (%s)",
					c->name, argv[1], near, list);
			else
				out_err(ctx->out, "unknown %s subcommand '%.64s' (%s)", c->name, argv[1],
					list);
			return NULL;
		}
	}
	argv[0] = (char *)c->name;
	return c;
}

/* --json after the verb renders this verb in JSON: taken out of the words */
static int take_json(int argc, char **argv, bool *json)
{
	int n = 1;

	*json = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			*json = true;
		else
			argv[n++] = argv[i];
	}
	argv[n] = NULL;
	return n;
}

static int run_words(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_runner *r = ctx->runner;
	const struct hs_cmd *c;
	int rc;
	bool json;
	struct hs_pager pager;

	argc = take_json(argc, argv, &json);
	/* '?' as the last word (or at its end): what may come next */
	if (argc > 0 && asks_next(argv[argc - 1]))
		return describe_words(ctx, argc, argv);
	c = resolve(ctx, &argc, &argv);
	if (!c)
		return HS_CMD_FAIL;
	/* a verb run without the runner (a test) still reaches what is above */
	if (!ctx->con)
		ctx->con = &runner_con;
	ctx->out->json = ctx->set.json || json;
	if (r)
		r->in_verb++;
	hs_pager_begin(ctx, c, &pager);
	rc = c->fn(ctx, argc, argv);
	hs_pager_end(ctx, &pager, rc == HS_CMD_PENDING);
	if (r) {
		r->in_verb--;
		/* finished before it even returned */
		if (rc == HS_CMD_PENDING && r->early_set && !r->in_verb) {
			r->early_set = false;
			rc = r->early;
		}
	}
	if (rc != HS_CMD_PENDING) {
		if (out_settle(ctx->out) < 0)
			rc = HS_CMD_FAIL;
		ctx->out->json = ctx->set.json;
	}
	return rc < 0 ? HS_CMD_FAIL : rc;
}

/* a line's words into argv (pointing into *buf, a copy to free): argc, or
 * -1 with the error printed */
static int line_words(struct hs_ctx *ctx, const char *line, char **buf, char **argv)
{
	int col, argc;

	*buf = hs_xstrdup(line);
	argc = hs_split_words(*buf, argv, HS_MAX_WORDS, &col);
	if (argc >= 0)
		return argc;
	if (line[col - 1] == '\'' || line[col - 1] == '"')
		out_err(ctx->out, "unterminated quote at column %d", col);
	else
		out_err(ctx->out, "too many words at column %d (at most %d)", col, HS_MAX_WORDS);
	return -1;
}

int hs_run_line(struct hs_ctx *ctx, const char *line)
{
	char *buf, **argv = hs_xcalloc(HS_MAX_WORDS + 1, sizeof(*argv));
	int argc = line_words(ctx, line, &buf, argv);
	int rc = argc < 0 ? HS_CMD_FAIL : argc == 0 ? HS_CMD_OK : run_words(ctx, argc, argv);

	free(argv);
	free(buf);
	return rc;
}

int hs_check_line(struct hs_ctx *ctx, const char *line, const struct hs_cmd **verb,
		  const char **sub)
{
	char *buf, **argv = hs_xcalloc(HS_MAX_WORDS + 1, sizeof(*argv));
	int argc = line_words(ctx, line, &buf, argv), rc = argc < 0 ? -1 : 0;
	bool json;

	*verb = NULL;
	*sub = NULL;
	if (argc > 0) {
		char **words = argv;	/* moved past 'show' */
		argc = take_json(argc, argv, &json);
		if (!asks_next(argv[argc - 1])) {
			*verb = resolve(ctx, &argc, &words);
			rc = *verb ? 0 : -1;
			if (*verb && argc > 1)
				*sub = hs_cmd_subverb(*verb, words[1], NULL);
		}
	}
	free(argv);
	free(buf);
	return rc;
}

/* ---- the runner ------------------------------------------------------------- */

void hs_runner_init(struct hs_ctx *ctx)
{
	ctx->con = &runner_con;
	if (!ctx->runner)
		ctx->runner = hs_xcalloc(1, sizeof(struct hs_runner));
	if (!ctx->say)
		ctx->say = hs_console_say;
}

static void src_free(struct hs_src *s)
{
	if (s->fp && s->fp != stdin)
		fclose(s->fp);
	for (int i = 0; i < s->ncmds; i++)
		free(s->cmds[i]);
	free(s->cmds);
	free(s->buf);
	free(s->name);
	free(s);
}

void hs_runner_free(struct hs_ctx *ctx)
{
	struct hs_runner *r = ctx->runner;

	if (!r)
		return;
	while (r->stack) {
		struct hs_src *s = r->stack;
		r->stack = s->next_src;
		src_free(s);
	}
	while (r->queue) {
		struct hs_src *s = r->queue;
		r->queue = s->next_src;
		src_free(s);
	}
	free(r);
	ctx->runner = NULL;
}

static void enqueue(struct hs_ctx *ctx, struct hs_src *s)
{
	struct hs_src **p;

	hs_runner_init(ctx);
	for (p = &ctx->runner->queue; *p; p = &(*p)->next_src)
		;
	*p = s;
}

static FILE *open_runbook(struct hs_ctx *ctx, const char *path)
{
	FILE *fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	struct stat st;

	if (!fp) {
		out_err(ctx->out, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	/* a directory opens, and fails only at its first read */
	if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
		out_err(ctx->out, "cannot read runbook '%s': %s", path, strerror(EISDIR));
		if (fp != stdin)
			fclose(fp);
		return NULL;
	}
	return fp;
}

void hs_runner_each_file(const struct hs_ctx *ctx, void (*fn)(void *arg, int fd), void *arg)
{
	const struct hs_runner *r = ctx->runner;

	for (int list = 0; r && list < 2; list++)
		for (const struct hs_src *s = list ? r->queue : r->stack; s; s = s->next_src)
			if (s->kind == SRC_FILE && s->fp)
				fn(arg, fileno(s->fp));
}

int hs_runner_add_file(struct hs_ctx *ctx, const char *path)
{
	FILE *fp = open_runbook(ctx, path);
	struct hs_src *s;

	if (!fp)
		return -1;
	s = hs_xcalloc(1, sizeof(*s));
	s->kind = SRC_FILE;
	s->fp = fp;
	s->name = hs_xstrdup(strcmp(path, "-") == 0 ? "stdin" : path);
	enqueue(ctx, s);
	return 0;
}

void hs_runner_add_cmds(struct hs_ctx *ctx, const char *cmds)
{
	struct hs_src *s = hs_xcalloc(1, sizeof(*s));

	s->kind = SRC_CMDS;
	s->name = hs_xstrdup("-c");
	s->ncmds = hs_split_commands(cmds, &s->cmds);
	enqueue(ctx, s);
}

void hs_runner_add_lines(struct hs_ctx *ctx, const char *name, char *const *lines, int n)
{
	struct hs_src *s = hs_xcalloc(1, sizeof(*s));

	s->kind = SRC_CMDS;
	s->name = hs_xstrdup(name);
	s->cmds = hs_xcalloc((size_t)n + 1, sizeof(*s->cmds));
	for (int i = 0; i < n; i++)
		s->cmds[i] = hs_xstrdup(lines[i]);
	s->ncmds = n;
	enqueue(ctx, s);
}

void hs_runner_add_words(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_src *s = hs_xcalloc(1, sizeof(*s));
	size_t len = 1;
	char *line, *w;

	/* quote every word so the line splits back into the same words: a
	 * single quote is closed, given in double quotes, and reopened */
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) * 5 + 3;
	line = w = hs_xcalloc(1, len);
	for (int i = 0; i < argc; i++) {
		if (i)
			*w++ = ' ';
		*w++ = '\'';
		for (const char *p = argv[i]; *p; p++) {
			if (*p == '\'') {
				memcpy(w, "'\"'\"'", 5);
				w += 5;
			} else {
				*w++ = *p;
			}
		}
		*w++ = '\'';
	}
	*w = '\0';
	s->kind = SRC_CMDS;
	s->name = hs_xstrdup("");	/* errors need no place: the line is the command */
	s->cmds = hs_xcalloc(1, sizeof(*s->cmds));
	s->cmds[0] = line;
	s->ncmds = 1;
	enqueue(ctx, s);
}

static bool line_stores(const char *line)
{
	char *buf = hs_xstrdup(line), *words[HS_MAX_WORDS];
	int errcol, n = hs_split_words(buf, words, HS_MAX_WORDS, &errcol);
	const struct hs_cmd *c = n > 0 ? hs_cmd_lookup(words[0], NULL) : NULL;
	bool w = false;

	for (unsigned i = 0; c && i < hs_ncmd_stores && !w; i++) {
		const struct hs_cmd_store *e = &hs_cmd_stores[i];
		w = strcmp(e->verb, c->name) == 0 &&
		    (!e->sub || (n > 1 && strcmp(e->sub, words[1]) == 0));
	}
	free(buf);
	return w;
}

bool hs_runner_may_store(const struct hs_ctx *ctx)
{
	const struct hs_runner *r = ctx->runner;

	for (int list = 0; r && list < 2; list++)
		for (const struct hs_src *s = list ? r->queue : r->stack; s; s = s->next_src) {
			if (s->kind != SRC_CMDS)
				return true;
			for (int i = s->next; i < s->ncmds; i++)
				if (line_stores(s->cmds[i]))
					return true;
		}
	return false;
}

void hs_runner_add_input(struct hs_ctx *ctx, const char *name, bool interactive)
{
	struct hs_src *s = hs_xcalloc(1, sizeof(*s));

	s->kind = SRC_INPUT;
	s->name = hs_xstrdup(name);
	s->interactive = interactive;
	enqueue(ctx, s);
}

static struct hs_src *input_src(struct hs_runner *r)
{
	for (struct hs_src *s = r->stack; s; s = s->next_src)
		if (s->kind == SRC_INPUT)
			return s;
	for (struct hs_src *s = r->queue; s; s = s->next_src)
		if (s->kind == SRC_INPUT)
			return s;
	return NULL;
}

static void pump(struct hs_ctx *ctx);

void hs_runner_feed(struct hs_ctx *ctx, const char *data, size_t len)
{
	struct hs_src *s = ctx->runner ? input_src(ctx->runner) : NULL;

	if (!s || s->eof)
		return;
	if (s->len + len + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 256;
		while (cap < s->len + len + 1)
			cap *= 2;
		char *nb = realloc(s->buf, cap);
		if (!nb) {
			out_err(ctx->out, "out of memory reading input");
			return;
		}
		s->buf = nb;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, data, len);
	s->len += len;
	pump(ctx);
}

void hs_runner_feed_eof(struct hs_ctx *ctx)
{
	struct hs_src *s = ctx->runner ? input_src(ctx->runner) : NULL;

	if (s)
		s->eof = true;
	pump(ctx);
}

/* the stack was started from the prompt: its failures are only printed */
static bool under_prompt(const struct hs_runner *r)
{
	const struct hs_src *s = r->stack;

	while (s && s->next_src)
		s = s->next_src;
	return s && s->interactive;
}

/* the column of the first NUL byte in a line of n bytes, 0 for none: the
 * line would end there unseen */
static unsigned nul_col(const char *l, size_t n)
{
	const char *z = memchr(l, '\0', n);

	return z ? (unsigned)(z - l) + 1 : 0;
}

/* 1: a line in *line (free it), 0: the source is done, -1: wait for input */
static int next_line(struct hs_ctx *ctx, struct hs_src *s, char **line)
{
	if (s->stop)
		return 0;
	switch (s->kind) {
	case SRC_FILE: {
		char *l = NULL;
		size_t cap = 0;
		ssize_t n;

		errno = 0;
		n = getline(&l, &cap, s->fp);
		if (n < 0) {
			free(l);
			if (ferror(s->fp)) {
				out_err(ctx->out, "cannot read '%s': %s", s->name,
					strerror(errno ? errno : EIO));
				s->failed = true;
				if (ctx->exit_status == 0 && !under_prompt(ctx->runner))
					ctx->exit_status = 1;
			}
			return 0;
		}
		while (n > 0 && (l[n - 1] == '\n' || l[n - 1] == '\r'))
			l[--n] = '\0';
		s->lineno++;
		s->nul_col = nul_col(l, (size_t)n);
		*line = l;
		return 1;
	}
	case SRC_CMDS:
		if (s->next >= s->ncmds)
			return 0;
		*line = hs_xstrdup(s->cmds[s->next++]);
		s->lineno = (unsigned)s->next;
		return 1;
	case SRC_INPUT: {
		char *nl = s->len ? memchr(s->buf, '\n', s->len) : NULL;
		size_t n;

		if (!nl && !(s->eof && s->len > 0))
			return s->eof ? 0 : -1;
		n = nl ? (size_t)(nl - s->buf) : s->len;
		*line = hs_xcalloc(1, n + 1);
		memcpy(*line, s->buf, n);
		s->nul_col = nul_col(*line, n);
		if (n > 0 && (*line)[n - 1] == '\r')
			(*line)[n - 1] = '\0';
		if (nl)
			n++;
		memmove(s->buf, s->buf + n, s->len - n);
		s->len -= n;
		s->lineno++;
		return 1;
	}
	}
	return 0;
}

static void set_where(struct hs_ctx *ctx, const struct hs_src *s)
{
	if (!s || s->interactive || !s->name[0])
		ctx->out->where[0] = '\0';
	else
		snprintf(ctx->out->where, sizeof(ctx->out->where), "%s:%u: ", s->name, s->lineno);
}

static void abandon_all(struct hs_runner *r)
{
	for (struct hs_src *s = r->stack; s; s = s->next_src)
		s->stop = true;
	while (r->queue) {
		struct hs_src *s = r->queue;
		r->queue = s->next_src;
		src_free(s);
	}
}

/* a line of s finished with status rc */
static void line_done(struct hs_ctx *ctx, struct hs_src *s, int rc)
{
	if (rc != HS_CMD_FAIL || s->interactive)
		return;
	if (ctx->exit_status == 0 && !under_prompt(ctx->runner))
		ctx->exit_status = 1;
	s->failed = true;
	if (ctx->keep_going)
		return;
	s->stop = true;
	if (!s->from_verb)
		abandon_all(ctx->runner);	/* a failed top-level runbook ends the run */
}

/* the top source is done: pop it, and finish the 'source' line below it */
static void pop(struct hs_ctx *ctx)
{
	struct hs_runner *r = ctx->runner;
	struct hs_src *s = r->stack;
	struct hs_src *up = s->next_src;
	bool from_verb = s->from_verb, failed = s->failed;

	r->stack = up;
	r->depth--;
	src_free(s);
	if (from_verb && up && up->waiting) {
		up->waiting = false;
		set_where(ctx, up);
		ctx->out->json = ctx->set.json;
		line_done(ctx, up, failed ? HS_CMD_FAIL : HS_CMD_OK);
	}
}

static void pump(struct hs_ctx *ctx)
{
	struct hs_runner *r = ctx->runner;

	if (!r || !r->started || r->pumping || r->ended)
		return;
	r->pumping = true;
	for (;;) {
		struct hs_src *s = r->stack;
		char *line;
		int rc;

		if (ctx->quit) {
			abandon_all(r);
			break;
		}
		if (hs_interrupted()) {
			/* no line after a signal before the console has acted
			 * on it: now, rather than when the loop turns (it may
			 * not turn again) */
			r->pumping = false;
			hs_console_signal(ctx);
			return;
		}
		if (!s) {
			if (!r->queue)
				break;
			s = r->queue;
			r->queue = s->next_src;
			s->next_src = NULL;
			r->stack = s;
			r->depth = 1;
			continue;
		}
		if (s->waiting) {
			r->pumping = false;
			return;
		}
		rc = next_line(ctx, s, &line);
		if (rc < 0) {
			set_where(ctx, NULL);
			r->pumping = false;
			hs_console_idle(ctx);
			if (r->front && r->front->idle)
				r->front->idle(ctx);
			return;
		}
		if (rc == 0) {
			pop(ctx);
			continue;
		}
		set_where(ctx, s);
		if (s->nul_col) {
			rc = out_err(ctx->out, "a NUL byte at column %u: a command line is text",
				     s->nul_col);
			s->nul_col = 0;
		} else if (r->front && r->front->exec) {
			rc = r->front->exec(ctx, line);
		} else {
			rc = hs_run_line(ctx, line);
		}
		free(line);
		if (rc == HS_CMD_PENDING)
			s->waiting = true;
		else
			line_done(ctx, s, rc);
	}
	r->pumping = false;
	r->ended = true;
	set_where(ctx, NULL);
	hs_console_end(ctx);
}

void hs_runner_start(struct hs_ctx *ctx)
{
	hs_runner_init(ctx);
	ctx->runner->started = true;
	pump(ctx);
}

/* a pending verb finished (hs_cmd_finish, through ctx->con) */
static void runner_finish(struct hs_ctx *ctx, int status)
{
	struct hs_runner *r = ctx->runner;
	struct hs_src *s;

	/* a verb started from the full-screen view's ':' line finishes there */
	if (hs_watch_take_finish(ctx, status))
		return;
	ctx->cancel = NULL;
	if (!r) {
		out_settle(ctx->out);
		ctx->out->json = ctx->set.json;
		return;
	}
	if (r->in_verb) {
		r->early_set = true;
		r->early = status;
		return;
	}
	if (out_settle(ctx->out) < 0)
		status = HS_CMD_FAIL;
	ctx->out->json = ctx->set.json;
	s = r->stack;
	if (!s || !s->waiting) {
		/* a line the front end ran itself */
		if (r->front && r->front->finish)
			r->front->finish(ctx, status < 0 ? HS_CMD_FAIL : HS_CMD_OK);
		return;
	}
	s->waiting = false;
	line_done(ctx, s, status < 0 ? HS_CMD_FAIL : HS_CMD_OK);
	pump(ctx);
}

void hs_runner_set_front(struct hs_ctx *ctx, const struct hs_runner_front *front)
{
	hs_runner_init(ctx);
	ctx->runner->front = front;
}

bool hs_runner_busy(const struct hs_ctx *ctx)
{
	const struct hs_runner *r = ctx->runner;
	const struct hs_src *s;

	if (!r || !r->started || r->ended)
		return true;
	s = r->stack;
	return !s || s->waiting || s->kind != SRC_INPUT || r->pumping;
}

bool hs_runner_interrupt(struct hs_ctx *ctx)
{
	struct hs_runner *r = ctx->runner;
	bool did = false;
	void (*cancel)(struct hs_ctx *) = ctx->cancel;

	if (!r)
		return false;
	/* runbooks started from the prompt stop where they are */
	for (struct hs_src *s = r->stack; s && !s->interactive; s = s->next_src) {
		if (s->kind != SRC_INPUT && !s->stop) {
			if (!did)
				out_err(ctx->out, "interrupted");	/* where: the line */
			s->stop = true;
			s->failed = true;
			did = true;
		}
	}
	if (r->stack && r->stack->waiting && cancel) {
		ctx->cancel = NULL;
		cancel(ctx);
		did = true;
	}
	/* nothing pending: a verb that saw the signal has stopped already */
	return did || !r->stack || !r->stack->waiting;
}

void hs_runner_resume(struct hs_ctx *ctx)
{
	pump(ctx);
}

int hs_runner_source(struct hs_ctx *ctx, const char *path)
{
	struct hs_runner *r;
	struct hs_src *s;
	FILE *fp;

	hs_runner_init(ctx);
	r = ctx->runner;
	if (!r->started || !r->stack) {
		/* not run by the runner (a test, the watch command line): run it here */
		return out_err(ctx->out, "'source' runs only from the console or a runbook");
	}
	if (r->depth >= HS_SOURCE_DEPTH)
		return out_err(ctx->out, "cannot source '%s': runbooks nest deeper than %d",
			       path, HS_SOURCE_DEPTH);
	fp = open_runbook(ctx, path);
	if (!fp)
		return HS_CMD_FAIL;
	s = hs_xcalloc(1, sizeof(*s));
	s->kind = SRC_FILE;
	s->fp = fp;
	s->name = hs_xstrdup(strcmp(path, "-") == 0 ? "stdin" : path);
	s->from_verb = true;
	s->next_src = r->stack;
	r->stack = s;
	r->depth++;
	return HS_CMD_PENDING;
}
