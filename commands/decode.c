/* decode.c - decode FILE: one line per frame, nothing traced or stored
 *
 * Streams the file frame by frame, a slice per turn of the loop (hs_fwalk),
 * so its size does not matter and Ctrl-C stops it. A frame the decoder
 * cannot take apart is a line with its reason, not a failure; a damaged
 * file stops with an error after the good frames.
 */
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "console.h"
#include "filter.h"
#include "fwalk.h"
#include "runner.h"

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

	*d = (struct decode_run){ .o = ctx->out, .fp = ctx->out->fp, .json = ctx->out->json };
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-c") != 0) {
			words[n++] = argv[i];
			continue;
		}
		if (i + 1 >= argc || hs_parse_dec(argv[i + 1], UINT32_MAX, &d->count) < 0 || !d->count) {
			decode_free(d);
			return out_err(ctx->out, "decode: -c needs a count of frames (1 or more)");
		}
		i++;
	}
	if (n == 0) {
		decode_free(d);
		return out_err(ctx->out, "decode needs a capture file");
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
			out_err(ctx->out, "decode: %s", err);
			free(expr);
			decode_free(d);
			return HS_CMD_FAIL;
		}
		free(expr);
	}
	rc = hs_fwalk(ctx, "", words[0], decode_frame, decode_end, d);
	if (rc != HS_CMD_PENDING)
		decode_free(d);
	return rc;
}
