/* control.c - control [bgp|roce|pfc] [limit N] [since T]: recent BGP,
 * RoCEv2 and PAUSE/PFC messages, newest first, with their counts */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "console.h"
#include "control.h"

#define CONTROL_DEFAULT_LIMIT 50

static void print_json(struct hs_ctx *ctx, const struct hs_ctl_rec *r)
{
	struct hs_out *o = &ctx->out;
	const struct hs_ctl_msg *m = &r->msg;
	char b[64], a[HS_ADDRSTRLEN];
	const char *sw = hs_ctl_switch_name(ctx, r, b, sizeof(b));

	out_obj_open(o, NULL);
	out_time(o, "ts_ns", NULL, r->ts_ns);
	if (sw)
		out_str(o, "switch", NULL, sw);
	else
		out_null(o, "switch");
	out_str(o, "proto", NULL, hs_ctl_proto_name(m->proto));
	if (r->key.src.af) {
		out_str(o, "src", NULL, hs_addr_str(&r->key.src, a, sizeof(a)));
		out_str(o, "dst", NULL, hs_addr_str(&r->key.dst, a, sizeof(a)));
		out_uint(o, "sport", NULL, r->key.sport);
		out_uint(o, "dport", NULL, r->key.dport);
	}
	switch (m->proto) {
	case HS_CTL_BGP: {
		const struct hs_bgp_msg *g = &m->u.bgp;
		out_str(o, "bgp_type", NULL, hs_ctl_kind(m, b, sizeof(b)));
		out_uint(o, "bgp_len", NULL, g->len);
		if (g->type == HS_BGP_OPEN) {
			out_uint(o, "version", NULL, g->version);
			out_uint(o, "as", NULL, g->as);
			if (g->as4)
				out_uint(o, "as4", NULL, g->as4);
			out_uint(o, "hold", NULL, g->hold);
			out_str(o, "bgp_id", NULL, hs_ctl_ipv4_str(g->bgp_id, b, sizeof(b)));
		} else if (g->type == HS_BGP_NOTIFICATION) {
			out_uint(o, "error_code", NULL, g->err_code);
			out_uint(o, "error_subcode", NULL, g->err_subcode);
		} else if (g->type == HS_BGP_UPDATE) {
			out_uint(o, "withdrawn_len", NULL, g->withdrawn_len);
			out_uint(o, "attr_len", NULL, g->attr_len);
			out_uint(o, "nlri_len", NULL, g->nlri_len);
			if (g->counts_ok) {
				out_uint(o, "withdrawn", NULL, g->withdrawn);
				out_uint(o, "nlri", NULL, g->nlri);
			}
		}
		break;
	}
	case HS_CTL_ROCE: {
		const struct hs_roce_pkt *q = &m->u.roce;
		out_uint(o, "roce_opcode", NULL, q->opcode);
		out_str(o, "roce_op", NULL, hs_ctl_kind(m, b, sizeof(b)));
		out_uint(o, "qp", NULL, q->qp);
		out_uint(o, "psn", NULL, q->psn);
		out_uint(o, "pkey", NULL, q->pkey);
		out_bool(o, "ackreq", NULL, q->ackreq);
		out_bool(o, "se", NULL, q->se);
		out_bool(o, "migreq", NULL, q->migreq);
		out_uint(o, "padcnt", NULL, q->padcnt);
		out_uint(o, "tver", NULL, q->tver);
		if (q->aeth) {
			out_uint(o, "syndrome", NULL, q->syndrome);
			out_uint(o, "msn", NULL, q->msn);
			out_str(o, "ack", NULL, hs_roce_ack_name(q->ack));
			if (q->ack == HS_ROCE_NAK) {
				const char *n = hs_roce_nak_name(q->nak_code);
				if (n)
					out_str(o, "nak", NULL, n);
				out_uint(o, "nak_code", NULL, q->nak_code);
			} else if (q->ack == HS_ROCE_RNR_NAK) {
				out_uint(o, "rnr_timer", NULL, q->nak_code);
			}
		}
		break;
	}
	case HS_CTL_PFC: {
		const struct hs_pfc_frame *f = &m->u.pfc;
		bool pfc = f->opcode == HS_MACC_PFC;
		out_uint(o, "pfc_opcode", NULL, f->opcode);
		out_str(o, "pfc_kind", NULL, pfc ? "pfc" : "pause");
		if (pfc)
			out_uint(o, "pfc_class_enable", NULL, f->class_enable);
		out_arr_open(o, "quanta");
		for (int i = 0; i < (pfc ? 8 : 1); i++)
			out_uint(o, NULL, NULL, f->quanta[i]);
		out_arr_close(o);
		break;
	}
	default:
		break;
	}
	out_obj_close(o);
}

/* "10.0.0.1:179 > 10.0.0.2:50000" */
static void endpoints(struct hs_out *o, const struct hs_flowkey *k)
{
	char s[HS_ADDRSTRLEN], d[HS_ADDRSTRLEN];
	bool v6 = k->src.af == 6;

	if (!k->src.af)
		return;
	out_text(o, "%s%s%s:%u > %s%s%s:%u  ", v6 ? "[" : "", hs_addr_str(&k->src, s, sizeof(s)),
		 v6 ? "]" : "", k->sport, v6 ? "[" : "", hs_addr_str(&k->dst, d, sizeof(d)),
		 v6 ? "]" : "", k->dport);
}

static void print_text(struct hs_ctx *ctx, const struct hs_ctl_rec *r)
{
	struct hs_out *o = &ctx->out;
	const struct hs_ctl_msg *m = &r->msg;
	char b[64], ts[40], d[HS_CTL_DETAIL_MAX];
	const char *sw = hs_ctl_switch_name(ctx, r, b, sizeof(b));

	out_text(o, "%-26s  %-16s %-5s ", hs_fmt_time(r->ts_ns, ts, sizeof(ts)), sw ? sw : "-",
		 hs_ctl_proto_name(m->proto));
	endpoints(o, &r->key);
	out_text(o, "%s", hs_ctl_detail(m, d, sizeof(d)));
	out_text(o, "\n");
}

static void print_summary(struct hs_ctx *ctx, const struct hs_control_stats *st, int proto,
			  uint64_t shown, uint64_t matched)
{
	struct hs_out *o = &ctx->out;

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
	struct hs_out *o = &ctx->out;
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
		if (o->json) {
			print_json(ctx, r);
			continue;
		}
		if (!header)
			out_text(o, "%-26s  %-16s %-5s %s\n", "time", "switch", "proto", "message");
		header = true;
		print_text(ctx, r);
	}
	out_arr_close(o);
	out_uint(o, "total", NULL, matched);
	out_obj_close(o);
	if (!o->json)
		print_summary(ctx, st, proto, shown, matched);
	return HS_CMD_OK;
}
