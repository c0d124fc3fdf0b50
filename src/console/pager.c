/* pager.c - long interactive output through a pager (pager.h) */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "capture.h"
#include "cmd.h"
#include "console.h"
#include "pager.h"

#define HS_PAGER_DEFAULT "less -FRX"

static bool live_capture(struct hs_ctx *ctx)
{
	const char *src, *why;
	bool is_file = false;
	uint64_t a, b;

	return hs_capture_running(ctx) && hs_capture_info(ctx, &src, &is_file, &why, &a, &b) &&
	       !is_file;
}

void hs_pager_begin(struct hs_ctx *ctx, const struct hs_cmd *c, struct hs_pager *p)
{
	memset(p, 0, sizeof(*p));
	if (!(c->flags & HS_CMDF_PAGE))
		return;
	/* only what goes to the terminal itself (not a watch pane's capture) */
	if (!ctx->interactive || ctx->set.no_pager || ctx->paging || ctx->out->fp != stdout ||
	    !isatty(STDOUT_FILENO) || live_capture(ctx))
		return;
	p->mem = open_memstream(&p->buf, &p->len);
	if (!p->mem)
		return;
	p->saved = ctx->out->fp;
	ctx->out->fp = p->mem;
	ctx->paging = true;
}

static size_t lines(const char *s, size_t len)
{
	size_t n = 0;

	for (const char *e = s + len; (s = memchr(s, '\n', (size_t)(e - s))) != NULL; s++)
		n++;
	return n;
}

static int screen_rows(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
		return ws.ws_row;
	return 24;
}

/* PAGER as a shell would run it; Ctrl-C belongs to the pager meanwhile and
 * a pager quit early is no error (SIGINT, SIGQUIT and SIGPIPE ignored) */
static bool run_pager(const char *text, size_t len)
{
	const char *cmd = getenv("PAGER");
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit, opipe;
	FILE *fp;

	if (!cmd || !*cmd)
		cmd = HS_PAGER_DEFAULT;
	if (strcmp(cmd, "cat") == 0)
		return false;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	sigaction(SIGPIPE, &ign, &opipe);
	/* less as git runs it, unless the user's LESS says otherwise */
	setenv("LESS", "FRX", 0);
	fflush(stdout);
	fp = popen(cmd, "w");
	if (fp) {
		fwrite(text, 1, len, fp);
		pclose(fp);
	}
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	sigaction(SIGPIPE, &opipe, NULL);
	return fp != NULL;
}

void hs_pager_end(struct hs_ctx *ctx, struct hs_pager *p, bool pending)
{
	if (!p->saved)
		return;
	fclose(p->mem);
	ctx->out->fp = p->saved;
	ctx->paging = false;
	if (pending || lines(p->buf, p->len) < (size_t)screen_rows() - 1 ||
	    !run_pager(p->buf, p->len))
		fwrite(p->buf, 1, p->len, ctx->out->fp);
	fflush(ctx->out->fp);
	free(p->buf);
	p->saved = NULL;
}
