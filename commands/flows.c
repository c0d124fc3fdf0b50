/* flows.c - flows [limit N]: per-flow counters from closed traces */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "console.h"
#include "traces.h"

#define FLOWS_DEFAULT_LIMIT 50

/* newest first; among flows last seen at the same time, the largest */
static int newest_first(const void *x, const void *y)
{
	const struct hs_flow *a = *(const struct hs_flow *const *)x;
	const struct hs_flow *b = *(const struct hs_flow *const *)y;

	if (a->last_ns != b->last_ns)
		return a->last_ns < b->last_ns ? 1 : -1;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static void print_flow(struct hs_ctx *ctx, const struct hs_flow *f)
{
	struct hs_out *o = ctx->out;
	char a[HS_ADDRSTRLEN], p[8], ep[HS_ADDRSTRLEN + 10];
	const struct hs_flowkey *k = &f->key;
	bool v6 = k->src.af == 6;

	out_obj_open(o, NULL);
	if (!o->json) {
		char s[HS_ADDRSTRLEN], d[HS_ADDRSTRLEN], fl[2 * sizeof(ep) + 16];
		hs_addr_str(&k->src, s, sizeof(s));
		hs_addr_str(&k->dst, d, sizeof(d));
		snprintf(ep, sizeof(ep), v6 ? "[%s]:%u" : "%s:%u", s, k->sport);
		int n = snprintf(fl, sizeof(fl), "%s > ", ep);
		snprintf(ep, sizeof(ep), v6 ? "[%s]:%u" : "%s:%u", d, k->dport);
		snprintf(fl + n, sizeof(fl) - (size_t)n, "%s %s", ep,
			 hs_proto_name(k->proto, p, sizeof(p)));
		out_text(o, "%-48s", fl);
	}
	out_str(o, "src", NULL, hs_addr_str(&k->src, a, sizeof(a)));
	out_str(o, "dst", NULL, hs_addr_str(&k->dst, a, sizeof(a)));
	out_str(o, "proto", NULL, hs_proto_name(k->proto, p, sizeof(p)));
	out_uint(o, "sport", NULL, k->sport);
	out_uint(o, "dport", NULL, k->dport);
	out_uint(o, "packets", " %8" PRIu64, f->packets);
	out_uint(o, "bytes", " %11" PRIu64, f->bytes);
	out_time(o, "first_ns", NULL, f->first_ns);
	out_time(o, "last_ns", " %26s", f->last_ns);
	if (!o->json) {
		char sfr[40];
		snprintf(sfr, sizeof(sfr), "%u/%u/%u", f->syn, f->fin, f->rst);
		out_text(o, " %11s", sfr);
	}
	out_uint(o, "syn", NULL, f->syn);
	out_uint(o, "fin", NULL, f->fin);
	out_uint(o, "rst", NULL, f->rst);
	out_uint(o, "dropped", " %7" PRIu64, f->dropped);
	out_uint(o, "looped", " %6" PRIu64, f->looped);
	out_obj_close(o);
	out_nl(o);
}

int cmd_flows(struct hs_ctx *ctx, int argc, char **argv)
{
	uint64_t limit = FLOWS_DEFAULT_LIMIT;
	struct hs_out *o = ctx->out;

	if (hs_limit_args(o, "flows", argc, argv, 100000000, &limit) < 0)
		return HS_CMD_FAIL;
	size_t n = ctx->flows ? hs_flowtab_count(ctx->flows) : 0;
	out_list_open(o, "flows");
	if (n == 0) {
		out_list_close(o);
		return HS_CMD_OK;
	}
	struct hs_flow **all = hs_xcalloc(n, sizeof(*all));
	size_t m = 0;
	struct hs_flow *f;
	while (m < n && (f = hs_flowtab_at(ctx->flows, m)) != NULL)
		all[m++] = f;
	qsort(all, m, sizeof(*all), newest_first);
	out_text(o, "%-48s %8s %11s %26s %11s %7s %6s\n", "flow", "packets", "bytes", "last seen",
		 "syn/fin/rst", "dropped", "looped");
	for (size_t i = 0; i < m && i < limit; i++)
		print_flow(ctx, all[i]);
	out_arr_close(o);
	out_uint(o, "total", NULL, m);
	out_uint(o, "not_counted", NULL, hs_flowtab_overflow(ctx->flows));
	out_obj_close(o);
	hs_limit_note(o, "flows", "flows", m < limit ? m : (size_t)limit, m, false);
	if (!o->json && hs_flowtab_overflow(ctx->flows))
		out_text(o, "(table full at %zu flows: %" PRIu64 " traces of other flows not "
			 "counted)\n", hs_flowtab_max(ctx->flows), hs_flowtab_overflow(ctx->flows));
	free(all);
	return HS_CMD_OK;
}
