/* export.c - export ndjson|pcap FILE|- [records R] [traces filters]
 *
 * Selects closed traces in memory with the filters 'traces' takes (flow,
 * switch, outcome, since, limit; no limit by default) and writes them oldest
 * first:
 *
 *   ndjson  one JSON object a line: each trace as 'traces --json' prints it
 *           with "type":"trace" first, then one "type":"packet" record per
 *           hop copy (capture time, switch, 5-tuple, length, TCP flags, TTL,
 *           DSCP, trace id, hop index); 'records traces|packets' keeps one
 *           kind. '-' is standard output.
 *   pcap    pcapng, one packet per hop copy: the inner IP packet (link type
 *           raw IP) with a comment naming the trace, hop, switch, time and
 *           TTL. The tracer keeps no packet bytes, so they are read again
 *           from the capture file the traces came from (a slice per turn
 *           of the loop, hs_fwalk; the selection is copied first, as the
 *           ring moves on meanwhile); a live capture cannot be exported
 *           this way.
 *
 * Arguments are checked before anything is written. The file is opened the
 * one way a verb writes a file (outfile.h): never the history or an input,
 * an existing file or a link replaced only with --force, written aside and
 * renamed when whole.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "closed.h"
#include "cmd.h"
#include "console.h"
#include "fwalk.h"
#include "interrupt.h"
#include "outfile.h"
#include "pcapng.h"
#include "traces.h"
#include "window.h"

enum { REC_ALL, REC_TRACES, REC_PACKETS };

static void packet_json(struct hs_out *o, const struct hs_topo *topo, int64_t session,
			const struct hs_trace *t, int idx)
{
	const struct hs_hop *h = &t->hops[idx];
	struct hs_pktrec r;
	char a[HS_ADDRSTRLEN], b[64], p[8];

	hs_pktrec_from_hop(&r, t, h);
	out_obj_open(o, NULL);
	out_str(o, "type", NULL, "packet");
	out_time(o, "ts_ns", NULL, r.ts_ns);
	out_str(o, "switch", NULL, hs_hop_name(topo, h, b, sizeof(b)));
	out_str(o, "addr", NULL, hs_addr_str(&r.sw, a, sizeof(a)));
	out_str(o, "src", NULL, hs_addr_str(&r.key.src, a, sizeof(a)));
	out_str(o, "dst", NULL, hs_addr_str(&r.key.dst, a, sizeof(a)));
	out_str(o, "proto", NULL, hs_proto_name(r.key.proto, p, sizeof(p)));
	out_uint(o, "sport", NULL, r.key.sport);
	out_uint(o, "dport", NULL, r.key.dport);
	out_uint(o, "len", NULL, r.len);
	out_uint(o, "tcp_flags", NULL, r.tcp_flags);
	out_uint(o, "ttl", NULL, r.ttl);
	out_uint(o, "dscp", NULL, r.dscp);
	out_str(o, "trace", NULL, hs_fmt_trace_ref(session, t->id, b, sizeof(b)));
	out_uint(o, "hop", NULL, (uint64_t)idx + 1);
	out_obj_close(o);
}

static void summary(struct hs_ctx *ctx, const char *path, const char *what, uint64_t traces,
		    uint64_t packets)
{
	struct hs_out *o = ctx->out;

	out_obj_open(o, NULL);
	out_str(o, "file", "exported to '%s':", path);
	out_str(o, "format", " %s,", what);
	out_uint(o, "traces", " %" PRIu64 " traces,", traces);
	out_uint(o, "packets", " %" PRIu64 " packets", packets);
	out_obj_close(o);
	out_nl(o);
}

/* open the output the one way a verb writes a file (outfile.h); 0, or -1
 * with the error printed and nothing written */
static int open_out(struct hs_ctx *ctx, struct hs_outfile *of, const char *path, bool force)
{
	struct hs_guard g;
	char err[PATH_MAX + 256];
	int rc;

	hs_guard_init(&g);
	hs_guard_ctx(&g, ctx);
	rc = hs_outfile_open(of, path, force, &g, err, sizeof(err));
	hs_guard_free(&g);
	if (rc < 0)
		return out_err(ctx->out, "export: %s", err);
	return 0;
}

/* finish the output: 0, or -1 with the error printed and what was at its
 * name before left as it was */
static int close_out(struct hs_ctx *ctx, struct hs_outfile *of, bool failed)
{
	char err[PATH_MAX + 256];

	if (hs_outfile_close(of, failed, err, sizeof(err)) < 0)
		return out_err(ctx->out, "export: %s", err);
	return 0;
}

static int export_ndjson(struct hs_ctx *ctx, const char *path, bool force, int rec,
			 const struct hs_closed *cl, const struct hs_trace **sel, size_t n)
{
	bool to_stdout = strcmp(path, "-") == 0;
	struct hs_outfile of = { 0 };
	struct hs_out fo;
	uint64_t traces = 0, packets = 0;

	if (!to_stdout && open_out(ctx, &of, path, force) < 0)
		return HS_CMD_FAIL;
	FILE *fp = to_stdout ? ctx->out->fp : of.fp;
	errno = 0;
	out_init(&fo, fp, ctx->out->err, true);
	for (size_t i = n; i-- > 0;) {	/* oldest first */
		/* named as 'traces' shows it: a stored one as the history has it */
		struct hs_trace t;
		int64_t session = hs_closed_named(cl, sel[i], &t);
		if (rec != REC_PACKETS) {
			hs_trace_row(&fo, ctx->topo, session, "trace", &t);
			traces++;
		}
		if (rec != REC_TRACES)
			for (int h = 0; h < t.nhops; h++, packets++)
				packet_json(&fo, ctx->topo, session, &t, h);
	}
	if (to_stdout) {
		if (fflush(fp) != 0 || ferror(fp))
			return out_err(ctx->out, "export: cannot write to standard output: %s",
				       strerror(errno ? errno : EIO));
		return HS_CMD_OK;
	}
	if (close_out(ctx, &of, false) < 0)
		return HS_CMD_FAIL;
	summary(ctx, path, "ndjson", traces, packets);
	return HS_CMD_OK;
}

/* ---- pcap: the hop copies, read again from the capture file ------------------- */

struct want {
	uint64_t h;		/* 0: empty */
	const struct hs_trace *t;
	int hop;
	bool written;
};

static uint64_t copy_hash(uint64_t ts, const struct hs_addr *sw, uint8_t ttl,
			  const struct hs_flowkey *k)
{
	uint64_t h = hs_flowkey_hash(k) ^ (ts * 0x9e3779b97f4a7c15ULL);

	h ^= (uint64_t)ttl << 56;
	for (int i = 0; i < 16; i++)
		h = (h ^ sw->a[i]) * 0x100000001b3ULL;
	return h ? h : 1;
}

static bool copy_is(const struct want *w, const struct hs_pkt *p, const struct hs_addr *sw)
{
	const struct hs_hop *h = &w->t->hops[w->hop];

	return h->ts_ns == p->ts_ns && h->ttl == p->ttl && hs_addr_eq(&h->addr, sw) &&
	       hs_flowkey_eq(&w->t->key, &p->key);
}

/* an export under way: the file is read a slice per turn of the loop */
struct pcap_export {
	struct hs_ctx *ctx;
	char *path, *source;
	struct hs_outfile of;
	struct hs_trace *traces;	/* the selection, copied: the ring moves on */
	size_t n;
	struct want *w;		/* the hop copies wanted, by capture time, switch, TTL, 5-tuple */
	size_t cap, nhops;
	uint64_t written;
	bool failed;		/* a write failed: stop */
};

static bool export_frame(void *arg, struct hs_pkt *p, bool ok)
{
	struct pcap_export *x = arg;
	struct hs_addr none = { 0 };

	if (!ok || !p->l3)
		return true;
	const struct hs_addr *sw = (p->have & HS_HAVE_MIRROR) ? &p->mirror_src : &none;
	uint64_t hv = copy_hash(p->ts_ns, sw, p->ttl, &p->key);
	for (size_t j = hv & (x->cap - 1); x->w[j].h; j = (j + 1) & (x->cap - 1)) {
		struct want *w = &x->w[j];
		if (w->h != hv || w->written || !copy_is(w, p, sw))
			continue;
		const struct hs_trace *t = w->t;
		const struct hs_hop *h = &t->hops[w->hop];
		char c[256], nm[64], tsb[32], ref[48];
		snprintf(c, sizeof(c), "trace %s hop %d/%u switch %s ts %s ttl %u "
			 "outcome %s", hs_fmt_trace_ref(x->ctx->ring_session, t->id, ref, sizeof(ref)),
			 w->hop + 1, t->nhops,
			 hs_hop_name(x->ctx->topo, h, nm, sizeof(nm)),
			 hs_fmt_ts(h->ts_ns, tsb, sizeof(tsb)), h->ttl, hs_outcome_name(t->outcome));
		x->failed = hs_pcapng_packet(x->of.fp, p->ts_ns, p->l3, p->l3_caplen, p->len, c) < 0;
		w->written = true;
		x->written++;
		break;
	}
	return !x->failed;
}

/* the end of the source, a damaged source (its error printed), a failed
 * write or Ctrl-C: a file not written whole is removed */
static int export_end(void *arg, int rc)
{
	struct pcap_export *x = arg;
	struct hs_ctx *ctx = x->ctx;
	int status = HS_CMD_OK;

	if (rc != 0) {
		hs_outfile_abort(&x->of);
		if (rc == 1)
			out_err(ctx->out, "export pcap: interrupted; '%s' not written", x->path);
		status = HS_CMD_FAIL;
	} else if (close_out(ctx, &x->of, x->failed) < 0) {
		status = HS_CMD_FAIL;
	} else {
		if (x->written < x->nhops)
			out_warn(ctx->out, "export pcap: %" PRIu64 " of %zu hop copies were not "
				 "found in '%s' (has it changed?)", (uint64_t)(x->nhops - x->written),
				 x->nhops, x->source);
		summary(ctx, x->path, "pcapng", x->n, x->written);
	}
	free(x->w);
	free(x->traces);
	free(x->path);
	free(x->source);
	free(x);
	return status;
}

static int export_pcap(struct hs_ctx *ctx, const char *path, bool force,
		       const struct hs_trace **sel, size_t n)
{
	const char *source, *why;
	bool is_file = false;
	uint64_t a, b;

	if (!hs_capture_info(ctx, &source, &is_file, &why, &a, &b))
		return out_err(ctx->out, "export pcap: no capture to take packets from "
			       "(capture start FILE first)");
	if (!is_file)
		return out_err(ctx->out, "export pcap: the packets of live capture '%s' are not "
			       "kept (export pcap reads them again from a capture file)", source);
	if (strcmp(path, "-") == 0)
		return out_err(ctx->out, "export pcap: '-' is for ndjson; give a file name");
	struct hs_outfile of;
	if (open_out(ctx, &of, path, force) < 0)
		return HS_CMD_FAIL;

	struct pcap_export *x = hs_xcalloc(1, sizeof(*x));
	*x = (struct pcap_export){ .ctx = ctx, .path = hs_xstrdup(path),
				   .source = hs_xstrdup(source), .of = of, .n = n, .cap = 16 };
	x->traces = hs_xcalloc(n ? n : 1, sizeof(*x->traces));
	for (size_t i = 0; i < n; i++) {
		x->traces[i] = *sel[i];
		x->nhops += sel[i]->nhops;
	}
	while (x->cap < 2 * x->nhops)
		x->cap <<= 1;
	x->w = hs_xcalloc(x->cap, sizeof(*x->w));
	for (size_t i = 0; i < n; i++) {
		const struct hs_trace *t = &x->traces[i];
		for (int k = 0; k < t->nhops; k++) {
			const struct hs_hop *h = &t->hops[k];
			uint64_t hv = copy_hash(h->ts_ns, &h->addr, h->ttl, &t->key);
			size_t j = hv & (x->cap - 1);
			while (x->w[j].h)
				j = (j + 1) & (x->cap - 1);
			x->w[j] = (struct want){ .h = hv, .t = t, .hop = k };
		}
	}
	errno = 0;
	x->failed = hs_pcapng_begin(x->of.fp, "hopscope " PACKAGE_VERSION, HS_LINKTYPE_RAW, 65535) < 0;
	if (x->failed)
		return export_end(x, 0);
	int rc = hs_fwalk(ctx, "export pcap: ", x->source, export_frame, export_end, x);
	if (rc != HS_CMD_PENDING)
		export_end(x, PCAP_ERROR);	/* not read: its error printed, no file left */
	return rc;
}

int cmd_export(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_out *o = ctx->out;
	struct hs_trace_query q = { .limit = HS_TRACES_SCAN_MAX, .sw = -1 };
	int rec = REC_ALL;
	bool pcap, force = false;

	if (strcmp(argv[1], "ndjson") == 0)
		pcap = false;
	else if (strcmp(argv[1], "pcap") == 0)
		pcap = true;
	else
		return out_err(o, "export: unknown format '%s' (ndjson, pcap)", argv[1]);
	const char *path = argv[2];
	if (!*path)
		return out_err(o, "export: empty file name");
	for (int i = 3; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(k, "--force") == 0) {
			force = true;
			continue;
		}
		if (!v)
			return out_err(o, "export: '%s' needs a value", k);
		i++;
		if (strcmp(k, "records") == 0 && !pcap) {
			if (strcmp(v, "all") == 0)
				rec = REC_ALL;
			else if (strcmp(v, "traces") == 0)
				rec = REC_TRACES;
			else if (strcmp(v, "packets") == 0)
				rec = REC_PACKETS;
			else
				return out_err(o, "export: bad records '%s' (all, traces, packets)", v);
			continue;
		}
		int rc = hs_trace_query_arg(ctx, "export", &q, k, v);
		if (rc < 0)
			return HS_CMD_FAIL;
		if (rc == 0)
			return out_err(o, "export: unknown option '%s' (%sflow, switch, outcome, "
				       "since, limit)", k, pcap ? "" : "records, ");
	}

	/* ndjson: a console with no traces of its own writes the history's
	 * newest, as 'traces' lists them; pcap reads the packets again from
	 * the capture file, which only a console's own traces have */
	struct hs_closed cl = { .session = ctx->ring_session };
	if (!pcap && hs_closed_get(ctx, "export", &cl) < 0)
		return HS_CMD_FAIL;
	const struct hs_trace **sel;
	size_t n = hs_trace_select(cl.tr ? cl.tr : ctx->tracer, ctx->topo, &q, &sel);
	int rc = pcap ? export_pcap(ctx, path, force, sel, n) :
			export_ndjson(ctx, path, force, rec, &cl, sel, n);
	free(sel);
	hs_closed_free(&cl);
	return rc;
}
