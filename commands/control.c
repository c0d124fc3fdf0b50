/* control.c - control [bgp|roce|pfc] [limit N] [since T]: recent BGP,
 * RoCEv2 and PAUSE/PFC messages, newest first, with their counts */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "console.h"
#include "control.h"

#define CONTROL_DEFAULT_LIMIT 50

/* hs_ctl_fields to an hs_out: each field once, for text and JSON */
static void o_uint(void *arg, const char *key, const char *fmt, uint64_t v)
{
	out_uint(arg, key, fmt, v);
}

static void o_str(void *arg, const char *key, const char *fmt, const char *v)
{
	out_str(arg, key, fmt, v);
}

static void o_flag(void *arg, const char *key, const char *fmt, bool v)
{
	out_bool(arg, key, fmt, v);
}

static void o_list(void *arg, const char *key)
{
	if (key)
		out_arr_open(arg, key);
	else
		out_arr_close(arg);
}

static void print_rec(struct hs_ctx *ctx, const struct hs_ctl_rec *r)
{
	struct hs_out *o = ctx->out;
	const struct hs_ctl_msg *m = &r->msg;
	const struct hs_ctl_sink fields = { o_uint, o_str, o_flag, o_list, o };
	char b[64], a[HS_ADDRSTRLEN];
	const char *sw = hs_ctl_switch_name(ctx, r, b, sizeof(b));

	out_obj_open(o, NULL);
	out_time(o, "ts_ns", "%-26s  ", r->ts_ns);
	if (sw)
		out_str(o, "switch", "%-16s ", sw);
	else
		out_null(o, "switch");
	if (!sw)
		out_text(o, "%-16s ", "-");
	out_str(o, "proto", "%-5s ", hs_ctl_proto_name(m->proto));
	/* "10.0.0.1:179 > 10.0.0.2:50000  " */
	if (r->key.src.af) {
		const char *l = r->key.src.af == 6 ? "[" : "", *rb = r->key.src.af == 6 ? "]" : "";
		out_text(o, "%s", l);
		out_str(o, "src", "%s", hs_addr_str(&r->key.src, a, sizeof(a)));
		out_text(o, "%s", rb);
		out_uint(o, "sport", ":%" PRIu64, r->key.sport);
		out_text(o, " > %s", l);
		out_str(o, "dst", "%s", hs_addr_str(&r->key.dst, a, sizeof(a)));
		out_text(o, "%s", rb);
		out_uint(o, "dport", ":%" PRIu64 "  ", r->key.dport);
	}
	hs_ctl_fields(m, &fields);
	out_obj_close(o);
	out_nl(o);
}

static void print_summary(struct hs_ctx *ctx, const struct hs_control_stats *st, int proto,
			  uint64_t shown, uint64_t matched)
{
	struct hs_out *o = ctx->out;

	out_text(o, "%" PRIu64 " of %" PRIu64 " %s%scontrol records shown; seen: bgp %" PRIu64
		 ", roce %" PRIu64 ", pfc %" PRIu64 "\n", shown, matched,
		 proto ? hs_ctl_proto_name(proto) : "", proto ? " " : "",
		 st->records[HS_CTL_BGP], st->records[HS_CTL_ROCE], st->records[HS_CTL_PFC]);
	if (!proto || proto == HS_CTL_BGP)
		out_text(o, "  bgp: open %" PRIu64 ", update %" PRIu64 ", notification %" PRIu64
			 ", keepalive %" PRIu64 ", route-refresh %" PRIu64 ", other %" PRIu64 "\n",
			 st->bgp_type[1], st->bgp_type[2], st->bgp_type[3], st->bgp_type[4],
			 st->bgp_type[5], st->bgp_type[0]);
	if (!proto || proto == HS_CTL_ROCE) {
		out_text(o, "  roce: ack %" PRIu64 ", rnr-nak %" PRIu64 ", nak %" PRIu64,
			 st->roce_ack[HS_ROCE_ACK], st->roce_ack[HS_ROCE_RNR_NAK],
			 st->roce_ack[HS_ROCE_NAK]);
		int shown_codes = 0;
		for (int i = 0; i < 6; i++)
			if (st->roce_nak[i])
				out_text(o, "%s%s %" PRIu64, shown_codes++ ? ", " : " (",
					 i < 5 ? hs_roce_nak_name(i) : "other", st->roce_nak[i]);
		out_text(o, "%s, cnp %" PRIu64 "\n", shown_codes ? ")" : "", st->roce_cnp);
	}
	if (!proto || proto == HS_CTL_PFC)
		out_text(o, "  pfc: pause %" PRIu64 ", pfc %" PRIu64 "\n", st->pause, st->pfc);
	bool any = false;
	for (int e = 1; e < HS_CERR__COUNT; e++) {
		if (!st->errors[e])
			continue;
		out_text(o, "%s%s %" PRIu64, any ? ", " : "  undecoded: ", hs_cerr_name(e),
			 st->errors[e]);
		any = true;
	}
	if (any)
		out_text(o, "\n");
	if (st->overwritten)
		out_text(o, "  (%" PRIu64 " older records no longer kept)\n", st->overwritten);
}

int cmd_control(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_out *o = ctx->out;
	uint64_t limit = CONTROL_DEFAULT_LIMIT, since = 0;
	bool by_since = false;
	int proto = HS_CTL_NONE;

	for (int i = 1; i < argc; i++) {
		const char *k = argv[i];
		int p = HS_CTL_NONE;
		for (int j = HS_CTL_BGP; j < HS_CTL__COUNT; j++)
			if (strcmp(k, hs_ctl_proto_name(j)) == 0)
				p = j;
		if (p) {
			if (proto)
				return out_err(o, "control: '%s' after '%s' (one of bgp, roce, pfc)",
					       k, hs_ctl_proto_name(proto));
			proto = p;
			continue;
		}
		if (strcmp(k, "limit") != 0 && strcmp(k, "since") != 0)
			return out_err(o, "control: unexpected '%s' (bgp, roce, pfc, limit N, "
				       "since T)", k);
		if (i + 1 >= argc)
			return out_err(o, "control: '%s' needs a value", k);
		const char *v = argv[++i];
		if (strcmp(k, "limit") == 0) {
			if (hs_parse_uint(v, 1000000, &limit) < 0 || limit == 0)
				return out_err(o, "control: bad limit '%s' (a number from 1)", v);
		} else {
			by_since = true;
			if (hs_parse_duration(v, &since) < 0)
				return out_err(o, "control: bad duration '%s' (e.g. 500ms, 10s, 2m)", v);
		}
	}

	static const struct hs_control_stats none;
	const struct hs_control_stats *st = ctx->control ? hs_control_stats(ctx->control) : &none;
	size_t n = hs_control_count(ctx->control);
	const struct hs_ctl_rec *newest = hs_control_at(ctx->control, 0);
	uint64_t shown = 0, matched = 0;
	bool header = false;

	out_list_open(o, "messages");
	for (size_t i = 0; i < n; i++) {
		const struct hs_ctl_rec *r = hs_control_at(ctx->control, i);
		if (proto && r->msg.proto != proto)
			continue;
		/* since T: within T of the newest record (capture time, not wall time) */
		if (by_since && newest->ts_ns > since && r->ts_ns < newest->ts_ns - since)
			continue;
		matched++;
		if (shown >= limit)
			continue;
		shown++;
		if (!header)
			out_text(o, "%-26s  %-16s %-5s %s\n", "time", "switch", "proto", "message");
		header = true;
		print_rec(ctx, r);
	}
	out_arr_close(o);
	out_uint(o, "total", NULL, matched);
	out_obj_close(o);
	print_summary(ctx, st, proto, shown, matched);
	return HS_CMD_OK;
}
