/* topo.c - topo load FILE | topo show: the fabric the traces are judged by */
#include <inttypes.h>
#include <string.h>

#include "cmd.h"
#include "console.h"

static const char *sw_name(const struct hs_topo *t, int i)
{
	return i >= 0 && i < t->nsw ? t->sw[i].name : "-";
}

static int topo_load(struct hs_ctx *ctx, const char *path)
{
	char err[512];
	struct hs_topo *t = hs_topo_load(path, err, sizeof(err));

	if (!t)
		return out_err(ctx->out, "%s", err);
	hs_ctx_hold_store(ctx);	/* the history writer names hops by it */
	hs_capture_set_topo(ctx, t);
	struct hs_topo *old = ctx->topo;
	ctx->topo = t;
	hs_topo_free(old);
	out_obj_open(ctx->out, NULL);
	out_str(ctx->out, "loaded", "loaded '%s': ", path);
	out_int(ctx->out, "switches", "%" PRId64 " switches, ", t->nsw);
	out_int(ctx->out, "links", "%" PRId64 " links, ", t->nlinks);
	out_int(ctx->out, "hosts", "%" PRId64 " hosts, ", t->nhosts);
	out_int(ctx->out, "subnets", "%" PRId64 " subnets", t->nsubnets);
	out_obj_close(ctx->out);
	out_nl(ctx->out);
	return HS_CMD_OK;
}

/* topo show: the tables of the file, one object with an array of each */
static void show(struct hs_ctx *ctx, const struct hs_topo *t)
{
	struct hs_out *o = ctx->out;
	char a[HS_ADDRSTRLEN], p[HS_ADDRSTRLEN + 8], sp[24];

	out_obj_open(o, NULL);
	if (t->path)
		out_str(o, "file", "topology '%s'\n", t->path);
	out_text(o, "\n%-16s %-6s %-18s %s\n", "switch", "role", "mirror", "loopback");
	out_arr_open(o, "switches");
	for (int i = 0; i < t->nsw; i++) {
		out_obj_open(o, NULL);
		out_str(o, "name", "%-16s ", t->sw[i].name);
		out_str(o, "role", "%-6s ", t->sw[i].role);
		out_str(o, "mirror", "%-18s ", hs_addr_str(&t->sw[i].mirror, a, sizeof(a)));
		out_str(o, "loopback", "%s\n", hs_addr_str(&t->sw[i].loopback, a, sizeof(a)));
		out_obj_close(o);
	}
	out_arr_close(o);
	if (t->nlinks)
		out_text(o, "\n%-16s %-10s %-16s %-10s %s\n", "link a", "port", "link b", "port",
			 "speed");
	out_arr_open(o, "links");
	for (int i = 0; i < t->nlinks; i++) {
		const struct hs_link *l = &t->links[i];

		out_obj_open(o, NULL);
		out_str(o, "a", "%-16s ", sw_name(t, l->a));
		out_str(o, "a_port", "%-10s ", l->a_port);
		out_str(o, "b", "%-16s ", sw_name(t, l->b));
		out_str(o, "b_port", "%-10s ", l->b_port);
		/* bits per second in JSON, with a unit in text */
		if (l->speed > 0)
			out_double(o, "speed", NULL, l->speed);
		else
			out_null(o, "speed");
		out_text(o, "%s\n", l->speed > 0 ? hs_fmt_bps(l->speed, sp, sizeof(sp)) : "-");
		out_obj_close(o);
	}
	out_arr_close(o);
	if (t->nhosts)
		out_text(o, "\n%-16s %-18s %s\n", "host", "addr", "leaf");
	out_arr_open(o, "hosts");
	for (int i = 0; i < t->nhosts; i++) {
		out_obj_open(o, NULL);
		out_str(o, "name", "%-16s ", t->hosts[i].name);
		out_str(o, "addr", "%-18s ", hs_addr_str(&t->hosts[i].addr, a, sizeof(a)));
		out_str(o, "leaf", "%s\n", sw_name(t, t->hosts[i].leaf));
		out_obj_close(o);
	}
	out_arr_close(o);
	if (t->nsubnets)
		out_text(o, "\n%-24s %s\n", "subnet", "leaf");
	out_arr_open(o, "subnets");
	for (int i = 0; i < t->nsubnets; i++) {
		snprintf(p, sizeof(p), "%s/%d", hs_addr_str(&t->subnets[i].net, a, sizeof(a)),
			 t->subnets[i].plen);
		out_obj_open(o, NULL);
		out_str(o, "prefix", "%-24s ", p);
		out_str(o, "leaf", "%s\n", sw_name(t, t->subnets[i].leaf));
		out_obj_close(o);
	}
	out_arr_close(o);
	if (t->analyzer.af) {
		out_obj_open(o, "analyzer");
		out_str(o, "addr", "\nanalyzer %s", hs_addr_str(&t->analyzer, a, sizeof(a)));
		if (t->analyzer_iface[0])
			out_str(o, "iface", " iface %s", t->analyzer_iface);
		out_nl(o);
		out_obj_close(o);
	}
	out_obj_close(o);
}

int cmd_topo(struct hs_ctx *ctx, int argc, char **argv)
{
	if (argc < 2)
		return out_err(ctx->out, "topo needs load FILE or show");
	if (strcmp(argv[1], "load") == 0) {
		if (argc != 3)
			return out_err(ctx->out, "topo load needs one file");
		return topo_load(ctx, argv[2]);
	}
	if (strcmp(argv[1], "show") == 0) {
		if (argc != 2)
			return out_err(ctx->out, "topo show: unexpected '%s'", argv[2]);
		if (!ctx->topo)
			return out_err(ctx->out, "no topology loaded (topo load FILE)");
		show(ctx, ctx->topo);
		return HS_CMD_OK;
	}
	return out_err(ctx->out, "unknown topo subcommand '%s' (load, show)", argv[1]);
}
