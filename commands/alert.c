/* alert.c - alert add 'COND' | alert list | alert del ID */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "console.h"
#include "planck.h"

static int alert_add(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_out *o = ctx->out;
	char text[512], err[256];
	size_t n = 0;

	if (argc < 3)
		return out_err(o, "alert add needs a condition (e.g. 'link leaf1-spine1 util > 80%%')");
	/* the words after 'add', quoted or not, are one condition */
	text[0] = '\0';
	for (int i = 2; i < argc; i++) {
		int w = snprintf(text + n, sizeof(text) - n, "%s%s", i > 2 ? " " : "", argv[i]);
		if (w < 0 || (size_t)w >= sizeof(text) - n)
			return out_err(o, "alert: condition too long");
		n += (size_t)w;
	}
	struct hs_planck *p = hs_planck_get(ctx);
	int id = hs_alerts_add(&p->alerts, text, ctx->topo, err, sizeof(err));
	if (id < 0)
		return out_err(o, "alert: %s", err);
	const struct hs_alert *a = &p->alerts.a[p->alerts.n - 1];
	out_obj_open(o, NULL);
	out_uint(o, "id", "alert %" PRIu64 " added: ", (uint64_t)id);
	out_str(o, "cond", "%s", a->text);
	out_obj_close(o);
	out_nl(o);
	return HS_CMD_OK;
}

static int alert_list(struct hs_ctx *ctx)
{
	struct hs_out *o = ctx->out;
	struct hs_planck *p = hs_planck_get(ctx);
	char v[32];

	out_list_open(o, "alerts");
	if (!p->alerts.n)
		out_text(o, "no alerts (alert add 'link A-B util > 80%%')\n");
	else
		out_text(o, "%4s %-8s %6s %-10s %s\n", "id", "state", "fired", "now", "condition");
	for (int i = 0; i < p->alerts.n; i++) {
		const struct hs_alert *a = &p->alerts.a[i];
		const char *state = a->armed ? "armed" : "firing";
		out_obj_open(o, NULL);
		out_uint(o, "id", "%4" PRIu64, a->id);
		out_str(o, "state", " %-8s", state);
		out_uint(o, "fired", " %6" PRIu64, a->fired);
		/* text: the measured value in the condition's unit */
		if (a->measured)
			out_double(o, "value", NULL, a->value);
		else
			out_null(o, "value");
		out_text(o, " %-10s", a->measured ? hs_acond_fmt(&a->c, a->value, v, sizeof(v)) : "-");
		out_str(o, "cond", " %s\n", a->text);
		if (a->fired)
			out_time(o, "last_fired_ns", NULL, a->fired_ts);
		else
			out_null(o, "last_fired_ns");
		out_obj_close(o);
	}
	out_list_close(o);
	return HS_CMD_OK;
}

int cmd_alert(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_out *o = ctx->out;

	if (argc < 2)
		return out_err(o, "alert needs add, list or del");
	if (strcmp(argv[1], "add") == 0)
		return alert_add(ctx, argc, argv);
	if (strcmp(argv[1], "list") == 0) {
		if (argc != 2)
			return out_err(o, "alert list: unexpected '%s'", argv[2]);
		return alert_list(ctx);
	}
	if (strcmp(argv[1], "del") == 0) {
		uint64_t id;
		if (argc != 3)
			return out_err(o, "alert del needs one alert id");
		if (hs_parse_uint(argv[2], UINT32_MAX, &id) < 0)
			return out_err(o, "alert: bad id '%s' (expected a number from 'alert list')",
				       argv[2]);
		if (hs_alerts_del(&hs_planck_get(ctx)->alerts, (uint32_t)id) < 0)
			return out_err(o, "alert: no alert %" PRIu64, id);
		out_obj_open(o, NULL);
		out_uint(o, "id", "alert %" PRIu64, id);
		out_bool(o, "deleted", " deleted", true);
		out_obj_close(o);
		out_nl(o);
		return HS_CMD_OK;
	}
	return out_err(o, "unknown alert subcommand '%s' (add, list, del)", argv[1]);
}
