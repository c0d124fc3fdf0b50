/* fwalk.c - a verb pending on a capture file read by the engine (fwalk.h) */
#include <stdlib.h>

#include "cmd.h"
#include "console.h"
#include "freader.h"
#include "fwalk.h"

#define FWALK_SLICE_NS (10 * 1000 * 1000ULL)	/* a slice; output may be slow to drain */

struct fwalk {
	struct hs_ctx *ctx;
	struct hs_freader *r;
	char *what;
	hs_fwalk_frame_cb frame;
	hs_fwalk_end_cb end;
	void *arg;
};

static void fwalk_finish(struct fwalk *w, int rc)
{
	struct hs_ctx *ctx = w->ctx;
	char msg[PCAP_ERRBUF_SIZE + 512];

	ctx->pending = NULL;
	ctx->cancel = NULL;
	for (unsigned i = 0; hs_freader_unsupported(w->r, &i, msg, sizeof(msg));)
		out_warn(ctx->out, "%s%s", w->what, msg);
	hs_freader_close(w->r);
	int status = w->end(w->arg, rc);
	free(w->what);
	free(w);
	hs_cmd_finish(ctx, status);
}

static bool fwalk_pkt(void *arg, struct hs_pkt *p, bool ok)
{
	struct fwalk *w = arg;

	return w->frame(w->arg, p, ok);
}

static void fwalk_end(void *arg, int rc, const char *err)
{
	struct fwalk *w = arg;

	if (rc == PCAP_ERROR)
		out_err(w->ctx->out, "%s%s", w->what, err);
	fwalk_finish(w, rc);
}

/* Ctrl-C: what was read so far counts; the rest is left unread */
static void fwalk_cancel(struct hs_ctx *ctx)
{
	fwalk_finish(ctx->pending, 1);
}

int hs_fwalk(struct hs_ctx *ctx, const char *what, const char *path, hs_fwalk_frame_cb frame,
	     hs_fwalk_end_cb end, void *arg)
{
	char err[PCAP_ERRBUF_SIZE + 512];

	if (!ctx->loop)
		return out_err(ctx->out, "%sreading a file needs the console's event loop", what);
	struct hs_freader *r = hs_freader_open(ctx->loop, path, NULL, 0, err, sizeof(err));
	if (!r)
		return out_err(ctx->out, "%s%s", what, err);
	struct fwalk *w = hs_xcalloc(1, sizeof(*w));
	*w = (struct fwalk){ .ctx = ctx, .r = r, .what = hs_xstrdup(what), .frame = frame,
			     .end = end, .arg = arg };
	struct hs_freader_ops ops = { .pkt = fwalk_pkt, .slice_ns = FWALK_SLICE_NS,
				      .end = fwalk_end, .arg = w };
	hs_freader_start(r, &ops);
	ctx->pending = w;
	ctx->cancel = fwalk_cancel;
	return HS_CMD_PENDING;
}
