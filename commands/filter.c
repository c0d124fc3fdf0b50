/* filter.c - filter add|del|list: analyzer-side BPF on the inner packet */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "console.h"

static int filter_add(struct hs_ctx *ctx, int argc, char **argv)
{
	char err[512];
	size_t len = 1;

	if (argc < 1)
		return out_err(ctx->out, "filter add needs an expression (tcpdump syntax)");
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	char *expr = hs_xcalloc(1, len), *p = expr;
	for (int i = 0; i < argc; i++)
		p += sprintf(p, "%s%s", i ? " " : "", argv[i]);

	hs_capture_pause(ctx);	/* a file's workers match packets with them */
	int id = hs_filter_add(ctx->filters, expr, err, sizeof(err));
	if (id < 0) {
		free(expr);
		return out_err(ctx->out, "filter add: %s", err);
	}
	out_obj_open(ctx->out, NULL);
	out_int(ctx->out, "id", "filter %" PRId64, id);
	out_str(ctx->out, "expr", ": %s", expr);
	out_obj_close(ctx->out);
	out_nl(ctx->out);
	if (hs_capture_running(ctx))
		out_warn(ctx->out, "the running capture's history session keeps the filters "
			 "it started with");
	free(expr);
	return HS_CMD_OK;
}

static int filter_del(struct hs_ctx *ctx, int argc, char **argv)
{
	uint64_t id;

	if (argc != 1)
		return out_err(ctx->out, "filter del needs one filter id");
	if (hs_parse_uint(argv[0], INT32_MAX, &id) < 0)
		return out_err(ctx->out, "filter del: bad filter id '%s'", argv[0]);
	hs_capture_pause(ctx);
	if (hs_filter_del(ctx->filters, (int)id) < 0)
		return out_err(ctx->out, "filter del: no filter %s", argv[0]);
	out_obj_open(ctx->out, NULL);
	out_uint(ctx->out, "id", "filter %" PRIu64, id);
	out_bool(ctx->out, "deleted", " deleted", true);
	out_obj_close(ctx->out);
	out_nl(ctx->out);
	return HS_CMD_OK;
}

static int filter_list(struct hs_ctx *ctx, int argc, char **argv)
{
	int id;
	const char *expr;
	uint64_t matches;

	if (argc > 0)
		return out_err(ctx->out, "filter list: unexpected '%s'", argv[0]);
	out_list_open(ctx->out, "filters");
	if (hs_filter_count(ctx->filters) == 0)
		out_text(ctx->out, "no filters: every packet is traced\n");
	else
		out_text(ctx->out, "%-4s %10s  %s\n", "id", "matches", "expression");
	for (size_t i = 0; hs_filter_at(ctx->filters, i, &id, &expr, &matches); i++) {
		out_obj_open(ctx->out, NULL);
		out_int(ctx->out, "id", "%-4" PRId64, id);
		out_uint(ctx->out, "matches", " %10" PRIu64, matches);
		out_str(ctx->out, "expr", "  %s", expr);
		out_obj_close(ctx->out);
		out_nl(ctx->out);
	}
	out_list_close(ctx->out);
	return HS_CMD_OK;
}

int cmd_filter(struct hs_ctx *ctx, int argc, char **argv)
{
	if (argc < 2)
		return filter_list(ctx, 0, NULL);
	if (strcmp(argv[1], "add") == 0)
		return filter_add(ctx, argc - 2, argv + 2);
	if (strcmp(argv[1], "del") == 0)
		return filter_del(ctx, argc - 2, argv + 2);
	if (strcmp(argv[1], "list") == 0)
		return filter_list(ctx, argc - 2, argv + 2);
	return out_err(ctx->out, "unknown filter subcommand '%s' (add, del, list)", argv[1]);
}
