/* blame.c - blame [--epoch DURATION] [--all]: 007's vote of retransmitting flows
 * on the links of their paths (from their traces, else from the flow's
 * newest traceroute in the history), per epoch; reported links are kept in
 * the history (table blame) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "closed.h"
#include "cmd.h"
#include "console.h"

#define BLAME_FLOWS_SHOWN 5
#define BLAME_FEW_FLOWS 3	/* fewer voters cannot outvote the noise of their own paths */

static const char *swname(const struct hs_topo *topo, int sw)
{
	return sw >= 0 && sw < topo->nsw ? topo->sw[sw].name : "?";
}

/* replace the stored rows of each epoch by its reported links */
static int store_blame(struct hs_ctx *ctx, const struct hs_blame *b)
{
	struct hs_store *st = hs_ctx_store(ctx);
	char err[512];

	if (!st)
		return -1;
	if (hs_store_blame(st, b, ctx->topo, err, sizeof(err)) < 0)
		return out_err(ctx->out, "cannot store blame in '%s': %s", hs_store_name(st), err);
	return 0;
}

/* 007's fallback: the path of the flow's newest stored traceroute */
static int traceroute_path(void *arg, const struct hs_flowkey *k, int *sw, int max)
{
	return hs_store_traceroute_path(arg, k, sw, max);
}

static struct hs_store_paths *traceroute_paths_open(struct hs_ctx *ctx)
{
	struct hs_store *st = ctx->set.policy != HS_POLICY_OFF ? hs_ctx_store(ctx) : NULL;

	return st ? hs_store_paths_open(st, ctx->topo) : NULL;
}

static void print_link(struct hs_ctx *ctx, const struct hs_blame *b,
		       const struct hs_blame_epoch *ep, const struct hs_blame_link *l)
{
	struct hs_out *o = ctx->out;
	char fl[2 * HS_ADDRSTRLEN + 32], lk[2 * HS_NAME_MAX + 4];
	uint32_t shown = l->flows < BLAME_FLOWS_SHOWN ? l->flows : BLAME_FLOWS_SHOWN;

	out_obj_open(o, NULL);
	out_str(o, "a", NULL, swname(ctx->topo, l->a));
	out_str(o, "b", NULL, swname(ctx->topo, l->b));
	snprintf(lk, sizeof(lk), "%s - %s", swname(ctx->topo, l->a), swname(ctx->topo, l->b));
	out_text(o, "  %-22s", lk);
	out_double(o, "votes", " %8.2f", l->votes);
	out_share(o, "share", " %5.1f%%", ep->total > 0 ? l->votes / ep->total : 0);
	out_uint(o, "flows", " %6" PRIu64, l->flows);
	out_bool(o, "reported", NULL, l->reported);
	out_text(o, "%s", l->reported ? "" : "  (noise)");
	out_arr_open(o, "flow_list");
	for (uint32_t i = 0; i < shown; i++)
		out_str(o, NULL, i ? ", %s" : "  %s",
			hs_flowkey_str(&b->flows[l->flow_off + i], fl, sizeof(fl)));
	out_arr_close(o);
	if (l->flows > shown)
		out_text(o, ", ...");
	out_obj_close(o);
	out_nl(o);
}

/* why an epoch reports no link, in one sentence */
static void why_none(const struct hs_ctx *ctx, const struct hs_blame *b,
		     const struct hs_blame_epoch *ep, char *buf, size_t len)
{
	if (ep->retx_flows == 0) {
		snprintf(buf, len, "no vote: none of the %" PRIu32 " TCP flows retransmitted",
			 ep->flows);
		return;
	}
	if (ep->nlinks == 0) {
		snprintf(buf, len, "no vote: none of the %" PRIu32 " retransmitting flows has a "
			 "known path (no trace of theirs crosses a topology link, no traceroute "
			 "of theirs is in the history)", ep->retx_flows);
		return;
	}
	const struct hs_blame_link *top = &b->links[ep->link_off];
	uint32_t voters = ep->retx_flows - ep->no_path;
	int n = snprintf(buf, len, "%s: %" PRIu32 " retransmitting flow%s spread %.2f votes over "
			 "%zu links; the most voted, %s - %s, has %.2f from %" PRIu32 " flow%s and "
			 "needed more than %.2f (the other links' mean plus %g standard deviations)",
			 voters < BLAME_FEW_FLOWS ? "too few retransmitting flows to single out a link"
						  : "no link above the noise",
			 voters, voters == 1 ? "" : "s", ep->total, ep->nlinks,
			 swname(ctx->topo, top->a), swname(ctx->topo, top->b), top->votes,
			 top->flows, top->flows == 1 ? "" : "s", top->fence, HS_BLAME_DEFAULT_K);
	if (ep->no_path && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "; %" PRIu32 " more had no known path",
			      ep->no_path);
	if (ep->retx_looped && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "; %" PRIu32 " of the %" PRIu32 " looped, and "
			 "vote for the links of their cycle ('loops')", ep->retx_looped,
			 ep->retx_flows);
}

int cmd_blame(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_out *o = ctx->out;
	struct hs_blame_cfg cfg = { .epoch_ns = HS_BLAME_DEFAULT_EPOCH, .min_share = -1, .k = -1 };
	bool all = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--epoch") == 0 && i + 1 < argc) {
			if (hs_parse_duration(argv[++i], &cfg.epoch_ns) < 0 || cfg.epoch_ns == 0)
				return out_err(o, "blame: bad epoch '%s' (e.g. 30s, 1m)", argv[i]);
		} else if (strcmp(argv[i], "--all") == 0) {
			all = true;
		} else {
			return out_err(o, "blame: unexpected '%s' (--epoch DURATION, --all)", argv[i]);
		}
	}
	if (!ctx->topo)
		return out_err(o, "blame needs a topology to name the links of paths "
			       "(topo load FILE)");

	struct hs_closed cl;
	if (hs_closed_get(ctx, "blame", &cl) < 0)
		return HS_CMD_FAIL;
	const struct hs_trace **tr = cl.t;
	size_t n = cl.n;
	struct hs_blame b;
	struct hs_store_paths *paths = traceroute_paths_open(ctx);
	cfg.path = traceroute_path;
	cfg.path_arg = paths;
	hs_an_blame(tr, n, ctx->topo, &cfg, &b);
	hs_store_paths_close(paths);

	out_obj_open(o, NULL);
	out_uint(o, "epoch_len_ns", NULL, b.epoch_ns);
	out_arr_open(o, "epochs");
	for (size_t e = 0; e < b.nepochs; e++) {
		const struct hs_blame_epoch *ep = &b.epochs[e];
		size_t reported = 0;
		char d[32];
		for (size_t i = 0; i < ep->nlinks; i++)
			reported += b.links[ep->link_off + i].reported;
		out_obj_open(o, NULL);
		out_time(o, "epoch_ns", "epoch %s ", ep->start);
		out_text(o, "(+%s): ", hs_fmt_duration(b.epoch_ns, d, sizeof(d)));
		out_uint(o, "retx_flows", "%" PRIu64 " of ", ep->retx_flows);
		out_uint(o, "flows", "%" PRIu64 " TCP flows retransmitted, ", ep->flows);
		out_uint(o, "no_path", NULL, ep->no_path);
		out_uint(o, "looped", NULL, ep->retx_looped);
		out_double(o, "votes_cast", "%.2f votes on ", ep->total);
		out_uint(o, "voted_links", "%" PRIu64 " links, ", ep->nlinks);
		out_uint(o, "reported_links", "%" PRIu64 " above the noise\n", reported);
		if (reported || (all && ep->nlinks))
			out_text(o, "  %-22s %8s %6s %6s  %s\n", "link", "votes", "share", "flows",
				 "flows behind it");
		out_arr_open(o, "links");
		for (size_t i = 0; i < ep->nlinks; i++) {
			const struct hs_blame_link *l = &b.links[ep->link_off + i];
			if (l->reported || all)
				print_link(ctx, &b, ep, l);
		}
		out_arr_close(o);
		if (reported) {
			out_null(o, "why");
			out_obj_close(o);
			continue;
		}
		char why[512];
		why_none(ctx, &b, ep, why, sizeof(why));
		out_str(o, "why", "  %s\n", why);
		out_obj_close(o);
	}
	out_arr_close(o);
	out_obj_close(o);
	if (b.nepochs == 0)
		out_text(o, "no TCP traces to judge by\n");

	hs_closed_warn(ctx, &cl, "blame", "the flows counted are those of the kept traces "
		       "alone");
	int rc = HS_CMD_OK;
	if (b.nepochs && ctx->set.policy != HS_POLICY_OFF && store_blame(ctx, &b) < 0)
		rc = HS_CMD_FAIL;
	hs_blame_free(&b);
	hs_closed_free(&cl);
	return rc;
}
