/* driverun.c - a verb that waits for the fabric's drivers (driverun.h) */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "cmd.h"
#include "console.h"
#include "driverun.h"
#include "privsep.h"

struct driver_group;

/* one driver of the group: its job while it runs, then a copy of its result */
struct driver_slot {
	struct driver_group *g;
	struct hs_driver_job *job;	/* NULL once it answered */
	struct hs_driver_result r;
	char driver[4096];
	char *err;
};

/* one verb's drivers, run at once; done() when every one has answered */
struct driver_group {
	struct hs_ctx *ctx;
	hs_driver_done_all done;
	void *arg;			/* the verb's, copied */
	const char *interrupted;
	int n, left;			/* drivers, drivers not answered */
	bool closing;			/* the broker closed: the console ends */
	struct driver_slot slot[HS_DRIVER_MAX];
};

static void group_free(struct driver_group *g)
{
	for (int i = 0; i < g->n; i++) {
		free(g->slot[i].r.out);
		free(g->slot[i].err);
	}
	free(g->arg);
	free(g);
}

int hs_driver_failed(struct hs_ctx *ctx, const struct hs_driver_result *r, const char *what)
{
	if (r->term_signal)
		return out_err(ctx->out, "%s '%s' killed by signal %d", what, r->driver,
			       r->term_signal);
	if (r->exit_status == 0)
		return 0;
	if (*r->err)
		return out_err(ctx->out, "%s", r->err);
	return out_err(ctx->out, "%s '%s' failed with status %" PRId64, what, r->driver,
		       r->exit_status);
}

int hs_driver_bad_answer(struct hs_ctx *ctx, const struct hs_driver_result *r, const char *kind,
			 const char *what, const char *why)
{
	char sw[512];

	hs_driver_served(ctx->topo, kind, sw, sizeof(sw));
	if (r->out_cut)
		return out_err(ctx->out, "%s: the answer of '%s' (switches %s) is longer than %u "
			       "bytes", what, r->driver, sw, HS_ANSWER_MAX);
	if (r->out_nul)
		why = "a NUL byte in the answer";
	return out_err(ctx->out, "%s: bad answer from '%s' (switches %s): %s", what, r->driver, sw,
		       why);
}

static void group_report(struct driver_group *g)
{
	struct hs_ctx *ctx = g->ctx;
	struct hs_driver_result r[HS_DRIVER_MAX];
	int st;

	if (ctx->pending == g) {
		ctx->cancel = NULL;
		ctx->pending = NULL;
	}
	if (g->closing) {
		group_free(g);
		return;
	}
	for (int i = 0; i < g->n; i++)
		r[i] = g->slot[i].r;
	st = g->done(ctx, r, g->n, g->arg);
	group_free(g);
	if (st != HS_CMD_PENDING)	/* else done() started the verb's next step */
		hs_cmd_finish(ctx, st < 0 ? HS_CMD_FAIL : HS_CMD_OK);
}

/* one driver answered (r NULL: the console is closing); the result is
 * the job's until this returns, so it is copied */
static void slot_done(void *arg, const struct hs_driver_result *r)
{
	struct driver_slot *s = arg;
	struct driver_group *g = s->g;

	s->job = NULL;
	if (r) {
		s->r = *r;
		s->r.driver = s->driver;
		s->r.out = hs_xcalloc(1, r->outlen + 1);
		memcpy(s->r.out, r->out, r->outlen);
		s->err = hs_xstrdup(r->err);
		s->r.err = s->err;
	} else {
		g->closing = true;
	}
	if (--g->left == 0)
		group_report(g);
}

/* Ctrl-C: stop waiting; the drivers finish (or undo) their work alone */
static void group_cancel(struct hs_ctx *ctx)
{
	struct driver_group *g = ctx->pending;

	ctx->cancel = NULL;
	ctx->pending = NULL;
	if (g) {
		out_warn(ctx->out, "%s", g->interrupted);
		for (int i = 0; i < g->n; i++)
			hs_driver_abandon(g->slot[i].job);
		group_free(g);
	}
	hs_cmd_finish(ctx, HS_CMD_FAIL);
}

int hs_driver_run_all(struct hs_ctx *ctx, int n, char **const *argvs, size_t out_max,
		      hs_driver_done_all done, const void *arg, size_t arglen, const char *what,
		      const char *interrupted)
{
	struct driver_group *g;

	if (n < 1 || n > HS_DRIVER_MAX)
		return out_err(ctx->out, "cannot run %d %ss at once", n, what);
	g = hs_xcalloc(1, sizeof(*g));
	*g = (struct driver_group){ .ctx = ctx, .done = done, .interrupted = interrupted,
				    .n = n, .left = n };
	g->arg = hs_xcalloc(1, arglen ? arglen : 1);
	if (arglen)
		memcpy(g->arg, arg, arglen);
	for (int i = 0; i < n; i++) {
		struct driver_slot *s = &g->slot[i];
		int rc = 0;

		s->g = g;
		snprintf(s->driver, sizeof(s->driver), "%s", argvs[i][0]);
		s->job = hs_driver_spawn(ctx->loop, argvs[i], out_max, slot_done, s, &rc);
		if (!s->job) {
			/* the ones started finish alone; nobody waits for them */
			for (int k = 0; k < i; k++)
				hs_driver_abandon(g->slot[k].job);
			group_free(g);
			return out_err(ctx->out, "cannot run %s '%s': %s%s", what, argvs[i][0],
				       uv_strerror(rc), hs_driver_hint(-rc));
		}
	}
	ctx->pending = g;
	ctx->cancel = group_cancel;
	return HS_CMD_PENDING;
}
