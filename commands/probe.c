/* probe.c - probe: craft a packet, inject it anywhere in the fabric and
 * follow its mirrored copies hop by hop (the grammar of its words and its
 * run are shared with traceroute: src/console/probecmd.c)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "cmd.h"
#include "console.h"
#include "probe.h"
#include "probecmd.h"

static void render_result(const struct hs_probe_run *r, struct hs_out *o,
			  const struct hs_probe_result *res)
{
	const struct hs_topo *topo = r->ctx->topo;
	char nb[HS_ADDRSTRLEN];
	int64_t at[HS_TRACE_MAX_HOPS];

	hs_probe_hop_times(res, at);
	out_obj_open(o, NULL);
	out_uint(o, "probe", r->s.kind == HS_PROBE_TRACEROUTE ? "traceroute %" PRIu64 :
		 "probe %" PRIu64, r->id);
	out_uint(o, "seq", " seq %" PRIu64 ": ", res->seq);
	out_str(o, "outcome", "%s", hs_probe_outcome_name(res->outcome));
	if (res->lost_after >= 0) {
		const struct hs_probe_hop *h = &res->hops[res->lost_after];
		out_str(o, "lost_after", " after %s",
			hs_probe_hop_name(topo, h->sw, &h->addr, nb, sizeof(nb)));
	} else {
		out_null(o, "lost_after");
		if (res->outcome == HS_PROBE_LOST)
			out_text(o, " (no copy seen)");
	}
	/* "  leaf1 +0ns > spine2 +5.0us": each copy's time from the send, ? when
	 * it is off the send's clock */
	out_arr_open(o, "hops");
	for (int i = 0; i < res->nhops; i++) {
		const struct hs_probe_hop *h = &res->hops[i];
		out_obj_open(o, NULL);
		out_str(o, "switch", i ? " > %s " : "  %s ",
			hs_probe_hop_name(topo, h->sw, &h->addr, nb, sizeof(nb)));
		out_time(o, "ts_ns", NULL, h->ts_ns);
		if (at[i] >= 0) {
			out_dur(o, "at_ns", "+%s", at[i]);
		} else {
			out_null(o, "at_ns");
			out_text(o, "?");
		}
		out_obj_close(o);
	}
	out_arr_close(o);
	if (res->have_rtt)
		out_dur(o, "rtt_ns", "  rtt %s", (int64_t)res->rtt_ns);
	else
		out_null(o, "rtt_ns");
	out_obj_close(o);
	out_nl(o);
}

/* a packet's fate, as it comes */
static void print_result(void *arg, const struct hs_probe_run *r,
			 const struct hs_probe_result *res)
{
	struct hs_probe_view *v = arg;
	char *buf = NULL;
	size_t len = 0;
	struct hs_out o;
	FILE *fp = hs_probe_mem_open(&buf, &len, &o, hs_probe_json(v, r));

	if (!fp)
		return;
	render_result(r, &o, res);
	hs_probe_mem_print(v->ctx, fp, &buf, &len);
}

/* the run's end: its summary */
static void print_summary(void *arg, const struct hs_probe_run *r)
{
	struct hs_probe_view *v = arg;
	struct hs_out *o = v->ctx->out;
	uint64_t *rtts = hs_xcalloc(r->nsent ? r->nsent : 1, sizeof(*rtts));
	size_t nr = 0;
	unsigned delivered = 0, lost = 0, looped = 0, seen = 0;

	for (unsigned i = 0; i < r->nsent; i++) {
		const struct hs_probe_result *res = &r->slot[i].r;
		switch (res->outcome) {
		case HS_PROBE_DELIVERED: delivered++; break;
		case HS_PROBE_LOOPED: looped++; lost++; break;
		case HS_PROBE_SEEN: seen++; break;
		default: lost++; break;
		}
		if (res->outcome == HS_PROBE_DELIVERED && res->have_rtt)
			rtts[nr++] = res->rtt_ns;
	}
	uint64_t p50 = hs_probe_percentile(rtts, nr, 50), p99 = hs_probe_percentile(rtts, nr, 99);
	free(rtts);
	fflush(o->fp);
	if (r->nsent == 0)
		return;
	bool saved = o->json;
	o->json = hs_probe_json(v, r);
	out_obj_open(o, NULL);
	out_uint(o, "probe", "probe %" PRIu64 ": ", r->id);
	out_uint(o, "sent", "%" PRIu64 " sent, ", r->nsent);
	out_uint(o, "delivered", "%" PRIu64 " delivered, ", delivered);
	out_uint(o, "lost", "%" PRIu64 " lost", lost);
	out_uint(o, "looped", looped ? " (%" PRIu64 " looped)" : NULL, looped);
	if (seen)
		out_uint(o, "seen", ", %" PRIu64 " seen (no topology to judge)", seen);
	if (nr) {
		out_dur(o, "rtt_p50_ns", ", rtt p50 %s", (int64_t)p50);
		out_dur(o, "rtt_p99_ns", " p99 %s", (int64_t)p99);
	} else {
		out_null(o, "rtt_p50_ns");
		out_null(o, "rtt_p99_ns");
	}
	out_obj_close(o);
	out_nl(o);
	o->json = saved;
	fflush(o->fp);
}

/* ---- the verb ----------------------------------------------------------------- */

/* the spec as typed, for the history */
static void join_words(int argc, char **argv, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < argc && used + 1 < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? " " : "", argv[i]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

int cmd_probe(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_probe_spec s;
	char err[256], words[1024];

	if (argc < 2)
		return out_err(ctx->out, "probe needs a destination "
			       "(probe [tcp|udp|icmp] [SRC[:PORT]] > DST[:PORT] ..., or probe link A B)");
	if (hs_probe_parse(argc - 1, argv + 1, ctx->topo, &s, err, sizeof(err)) < 0)
		return out_err(ctx->out, "%s", err);
	join_words(argc, argv, words, sizeof(words));
	struct hs_probe_cbs cb = { .result = print_result, .end = print_summary };
	return hs_probe_verb_run(ctx, &s, words, cb);
}
