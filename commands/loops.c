/* loops.c - loops [limit N]: traces in which a switch repeats, by cycle */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "closed.h"
#include "cmd.h"
#include "console.h"
#include "traces.h"

#define LOOPS_DEFAULT_LIMIT 20

int cmd_loops(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_out *o = ctx->out;
	uint64_t limit = LOOPS_DEFAULT_LIMIT;

	if (hs_limit_args(o, "loops", argc, argv, 100000, &limit) < 0)
		return HS_CMD_FAIL;

	struct hs_closed cl;
	if (hs_closed_get(ctx, "loops", &cl) < 0)
		return HS_CMD_FAIL;
	const struct hs_trace **all = cl.t;
	size_t n = cl.n;
	struct hs_loops l;
	hs_an_loops(all, n, &l);

	uint32_t looped = 0;
	for (size_t i = 0; i < l.n; i++)
		looped += l.loops[i].traces;
	out_obj_open(o, NULL);
	out_uint(o, "looped", NULL, looped);
	out_uint(o, "traces", NULL, n);
	out_uint(o, "total", NULL, l.n);
	out_text(o, "%" PRIu32 " looped of %zu traces, %zu cycle%s\n", looped, n, l.n,
		 l.n == 1 ? "" : "s");
	out_arr_open(o, "loops");
	for (size_t i = 0; i < l.n && i < limit; i++) {
		const struct hs_loop *x = &l.loops[i];
		char b[64], ref[48];

		out_obj_open(o, NULL);
		/* "cycle leaf3 > spine1 > leaf3": the first switch again to close it */
		out_text(o, "cycle ");
		out_arr_open(o, "switches");
		for (int k = 0; k < x->n; k++)
			out_str(o, NULL, "%s > ", hs_hop_name(ctx->topo, &x->sw[k], b, sizeof(b)));
		out_arr_close(o);
		out_text(o, "%s\n", hs_hop_name(ctx->topo, &x->sw[0], b, sizeof(b)));
		out_uint(o, "traces", "    %" PRIu64 " traces, ", x->traces);
		out_uint(o, "flows", "%" PRIu64 " flows, ", x->flows);
		out_str(o, "example", "e.g. trace %s ",
			hs_closed_ref(&cl, x->trace_id, ref, sizeof(ref)));
		out_str(o, "dst", "to %s, ", hs_addr_str(&x->dst, b, sizeof(b)));
		out_time(o, "first_ns", "from %s ", x->first_ns);
		out_time(o, "last_ns", "to %s\n", x->last_ns);
		out_obj_close(o);
	}
	out_arr_close(o);
	out_obj_close(o);
	hs_loops_free(&l);
	hs_closed_free(&cl);
	return HS_CMD_OK;
}
