/* freader.c - a capture file read on the loop, a slice per turn (freader.h) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "freader.h"

struct hs_freader {
	uv_idle_t idle;
	struct hs_pfile *f;
	char *path;
	struct hs_freader_ops ops;
	uint32_t frames;	/* given decoded */
	bool closed;		/* hs_freader_close: the handle is on its way out */
};

uint64_t hs_pcap_ts(const struct pcap_pkthdr *h)
{
	return (uint64_t)h->ts.tv_sec * HS_NS_PER_SEC + (uint64_t)h->ts.tv_usec;
}

struct hs_freader *hs_freader_open(uv_loop_t *loop, const char *path, char *buf,
				   size_t buflen, char *err, size_t errlen)
{
	struct hs_pfile *f = hs_pfile_open(path, buf, buflen, err, errlen);

	if (!f)
		return NULL;
	struct hs_freader *r = hs_xcalloc(1, sizeof(*r));
	r->f = f;
	r->path = hs_xstrdup(path);
	uv_idle_init(loop, &r->idle);
	r->idle.data = r;
	return r;
}

struct hs_pfile *hs_freader_file(const struct hs_freader *r)
{
	return r->f;
}

/* decoded frames for about slice_ns: 1 for more, 0 at the end or when the
 * owner stopped, PCAP_ERROR for a damaged file */
static int slice_decoded(struct hs_freader *r)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	struct hs_pkt pkt;
	uint64_t until = hs_mono_ns() + r->ops.slice_ns;
	int rc;

	for (unsigned n = 1; (rc = hs_pfile_next(r->f, &h, &data)) == 1; n++) {
		uint32_t wirelen = h->len < h->caplen ? h->caplen : h->len;
		bool ok = hs_decode(hs_pfile_dlt(r->f), data, h->caplen, wirelen, hs_pcap_ts(h),
				    &pkt) == 0;

		pkt.frame = ++r->frames;
		if (!r->ops.pkt(r->ops.arg, &pkt, ok))
			return 0;
		/* an owner that writes each frame may be held by a slow reader of
		 * its output: look at the clock every 64 frames */
		if (n % 64 == 0 && hs_mono_ns() >= until)
			return 1;
	}
	return rc == PCAP_ERROR ? PCAP_ERROR : 0;	/* else PCAP_ERROR_BREAK: the end */
}

static void step(uv_idle_t *h)
{
	struct hs_freader *r = h->data;
	int rc;

	if (r->ops.raw) {
		rc = hs_pfile_dispatch(r->f, (int)r->ops.batch, r->ops.raw, r->ops.arg);
		rc = rc > 0 ? 1 : rc;
	} else {
		rc = slice_decoded(r);
	}
	if (r->ops.slice)
		r->ops.slice(r->ops.arg);
	if (rc == 1 || r->closed)
		return;
	uv_idle_stop(&r->idle);
	if (rc < 0) {
		char err[PCAP_ERRBUF_SIZE + 512];
		snprintf(err, sizeof(err), "'%s': %s", r->path, hs_pfile_geterr(r->f));
		r->ops.end(r->ops.arg, PCAP_ERROR, err);
	} else {
		r->ops.end(r->ops.arg, 0, NULL);
	}
}

void hs_freader_start(struct hs_freader *r, const struct hs_freader_ops *ops)
{
	r->ops = *ops;
	if (!r->ops.batch)
		r->ops.batch = 1;
	uv_idle_start(&r->idle, step);
}

static void closed(uv_handle_t *h)
{
	struct hs_freader *r = h->data;

	free(r->path);
	free(r);
}

void hs_freader_close(struct hs_freader *r)
{
	if (!r || r->closed)
		return;
	r->closed = true;
	uv_idle_stop(&r->idle);
	hs_pfile_close(r->f);
	r->f = NULL;
	uv_close((uv_handle_t *)&r->idle, closed);
}

bool hs_freader_unsupported(const struct hs_freader *r, unsigned *i, char *msg, size_t len)
{
	uint64_t frames;
	int dlt;

	for (; r->f && hs_pfile_interface(r->f, *i, &dlt, &frames); (*i)++) {
		if (hs_decode_linktype_ok(dlt))
			continue;
		const char *name = pcap_datalink_val_to_name(dlt);
		snprintf(msg, len, "'%s': interface %u has link type %s (%d), which hopscope "
			 "does not decode: %" PRIu64 " frames (unsupported-linktype)", r->path,
			 *i, name ? name : "unknown", dlt, frames);
		(*i)++;
		return true;
	}
	return false;
}
