/* decode.c - decode FILE: one line per frame, nothing traced or stored
 *
 * Streams the file frame by frame (pcap_next_ex), a slice per turn of the
 * loop (hs_fwalk), so its size does not matter and Ctrl-C stops it. A frame
 * the decoder cannot take apart is a line with its reason, not a failure; a
 * damaged file stops with an error after the good frames.
 */
#include <errno.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "console.h"
#include "filter.h"
#include "runner.h"
#include "stats.h"

struct hs_pfile *hs_pcap_open_file(struct hs_out *o, const char *path, const char *what)
{
	char err[PCAP_ERRBUF_SIZE + 512];
	struct hs_pfile *f = hs_pfile_open(path, NULL, 0, err, sizeof(err));

	if (!f)
		out_err(o, "%s%s", what, err);
	return f;
}

void hs_pfile_report(struct hs_out *o, const struct hs_pfile *f, const char *what,
		     const char *path)
{
	uint64_t frames;
	int dlt;

	for (unsigned i = 0; hs_pfile_interface(f, i, &dlt, &frames); i++) {
		if (hs_decode_linktype_ok(dlt))
			continue;
		const char *name = pcap_datalink_val_to_name(dlt);
		out_warn(o, "%s'%s': interface %u has link type %s (%d), which hopscope does "
			 "not decode: %" PRIu64 " frames (unsupported-linktype)", what, path, i,
			 name ? name : "unknown", dlt, frames);
	}
}

uint64_t hs_pcap_ts(const struct pcap_pkthdr *h)
{
	return (uint64_t)h->ts.tv_sec * HS_NS_PER_SEC + (uint64_t)h->ts.tv_usec;
}

/* ---- a capture file, a slice per turn of the loop ---------------------------- */

#define FWALK_SLICE_NS (10 * 1000 * 1000ULL)	/* a slice; output may be slow to drain */

struct fwalk {
	struct hs_ctx *ctx;
	struct hs_pfile *pc;
	uint32_t frames;
	char *what, *path;
	hs_fwalk_frame_cb frame;
	hs_fwalk_end_cb end;
	void *arg;
	uv_idle_t idle;
};

/* one slice: 1 for more, else the end's rc */
static int fwalk_slice(struct fwalk *w)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	struct hs_pkt pkt;
	uint64_t until = hs_mono_ns() + FWALK_SLICE_NS;
	int rc;

	for (unsigned n = 1; (rc = hs_pfile_next(w->pc, &h, &data)) == 1; n++) {
		uint32_t wirelen = h->len < h->caplen ? h->caplen : h->len;
		bool ok = hs_decode(hs_pfile_dlt(w->pc), data, h->caplen, wirelen, hs_pcap_ts(h),
				    &pkt) == 0;

		pkt.frame = ++w->frames;
		if (!w->frame(w->arg, &pkt, ok))
			return 0;
		/* a terminal that reads slowly holds each line: look at the clock
		 * every 64 frames, so Ctrl-C is seen within the slice's time */
		if (n % 64 == 0 && hs_mono_ns() >= until)
			return 1;
	}
	if (rc == PCAP_ERROR) {
		out_err(&w->ctx->out, "%s'%s': %s", w->what, w->path, hs_pfile_geterr(w->pc));
		return PCAP_ERROR;
	}
	return 0;			/* PCAP_ERROR_BREAK: the end of the file */
}

static void fwalk_closed(uv_handle_t *h)
{
	struct fwalk *w = h->data;

	free(w->what);
	free(w->path);
	free(w);
}

static void fwalk_end(struct fwalk *w, int rc)
{
	struct hs_ctx *ctx = w->ctx;

	ctx->pending = NULL;
	ctx->cancel = NULL;
	uv_idle_stop(&w->idle);
	hs_pfile_report(&ctx->out, w->pc, w->what, w->path);
	hs_pfile_close(w->pc);
	int status = w->end(w->arg, rc);
	uv_close((uv_handle_t *)&w->idle, fwalk_closed);
	hs_cmd_finish(ctx, status);
}

static void fwalk_step(uv_idle_t *h)
{
	struct fwalk *w = h->data;
	int rc = fwalk_slice(w);

	if (rc != 1)
		fwalk_end(w, rc);
}

/* Ctrl-C: what was read so far counts; the rest is left unread */
static void fwalk_cancel(struct hs_ctx *ctx)
{
	fwalk_end(ctx->pending, 1);
}

int hs_fwalk(struct hs_ctx *ctx, struct hs_pfile *pc, const char *what, const char *path,
	     hs_fwalk_frame_cb frame, hs_fwalk_end_cb end, void *arg)
{
	if (!ctx->loop) {
		hs_pfile_close(pc);
		return out_err(&ctx->out, "%sreading a file needs the console's event loop", what);
	}
	struct fwalk *w = hs_xcalloc(1, sizeof(*w));
	*w = (struct fwalk){ .ctx = ctx, .pc = pc,
			     .what = hs_xstrdup(what), .path = hs_xstrdup(path), .frame = frame,
			     .end = end, .arg = arg };
	uv_idle_init(ctx->loop, &w->idle);
	w->idle.data = w;
	uv_idle_start(&w->idle, fwalk_step);
	ctx->pending = w;
	ctx->cancel = fwalk_cancel;
	return HS_CMD_PENDING;
}

/* ---- decode ------------------------------------------------------------------ */

struct decode_run {
	struct hs_out *o;
	FILE *fp;
	bool json;
	uint32_t frames;		/* read */
	uint64_t shown, count;		/* printed; -c N (0: all) */
	struct hs_filterset *filter;	/* the expression, NULL: every frame */
};

static bool decode_frame(void *arg, struct hs_pkt *p, bool ok)
{
	struct decode_run *d = arg;

	d->frames = p->frame;
	/* with an expression only decoded packets it matches, as tcpdump does;
	 * without one, a frame not decoded is a line with its reason */
	if (d->filter && (!ok || !hs_filter_match(d->filter, p, NULL)))
		return true;
	if (d->json)
		hs_pkt_json(d->fp, p);
	else
		hs_pkt_text(d->fp, p);
	return !d->count || ++d->shown < d->count;
}

static void decode_free(struct decode_run *d)
{
	if (d->filter)
		hs_filterset_free(d->filter);
	free(d);
}

static int decode_end(void *arg, int rc)
{
	struct decode_run *d = arg;

	fflush(d->fp);
	if (rc == 1)
		out_warn(d->o, "decode: interrupted after %" PRIu32 " frames", d->frames);
	decode_free(d);
	return rc == PCAP_ERROR ? HS_CMD_FAIL : HS_CMD_OK;
}

/* decode FILE [EXPR...] [-c N], -c anywhere as tcpdump takes it */
int cmd_decode(struct hs_ctx *ctx, int argc, char **argv)
{
	struct decode_run *d = hs_xcalloc(1, sizeof(*d));
	char *words[HS_MAX_WORDS + 1], *expr = NULL, err[256];
	int n = 0, rc;
	size_t len = 0;

	*d = (struct decode_run){ .o = &ctx->out, .fp = ctx->out.fp, .json = ctx->out.json };
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-c") != 0) {
			words[n++] = argv[i];
			continue;
		}
		if (i + 1 >= argc || hs_parse_dec(argv[i + 1], UINT32_MAX, &d->count) < 0 || !d->count) {
			decode_free(d);
			return out_err(&ctx->out, "decode: -c needs a count of frames (1 or more)");
		}
		i++;
	}
	if (n == 0) {
		decode_free(d);
		return out_err(&ctx->out, "decode needs a capture file");
	}
	for (int i = 1; i < n; i++)
		len += strlen(words[i]) + 1;
	if (len) {
		expr = hs_xcalloc(1, len);
		for (int i = 1; i < n; i++) {
			strcat(expr, words[i]);
			if (i + 1 < n)
				strcat(expr, " ");
		}
		d->filter = hs_filterset_new();
		if (hs_filter_add(d->filter, expr, err, sizeof(err)) < 0) {
			out_err(&ctx->out, "decode: %s", err);
			free(expr);
			decode_free(d);
			return HS_CMD_FAIL;
		}
		free(expr);
	}
	struct hs_pfile *pc = hs_pcap_open_file(&ctx->out, words[0], "");
	if (!pc) {
		decode_free(d);
		return HS_CMD_FAIL;
	}
	rc = hs_fwalk(ctx, pc, "", words[0], decode_frame, decode_end, d);
	if (rc != HS_CMD_PENDING)
		decode_free(d);
	return rc;
}
