/* control.c - the control log: a ring of recent BGP, RoCEv2 and PAUSE/PFC
 * messages and their counters, fed by the pipeline for marked frames only
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "ctx.h"
#include "control.h"
#include "store.h"

struct hs_control {
	struct hs_ctl_rec *ring;
	size_t cap, head, n;	/* head: where the next record goes */
	uint64_t epoch;		/* start time of the capture the records are from */
	struct hs_control_stats st;
};

struct hs_control *hs_control_new(size_t ring)
{
	struct hs_control *c = hs_xcalloc(1, sizeof(*c));

	c->cap = ring ? ring : 1;
	c->ring = hs_xcalloc(c->cap, sizeof(*c->ring));
	return c;
}

void hs_control_free(struct hs_control *c)
{
	if (!c)
		return;
	free(c->ring);
	free(c);
}

void hs_control_clear(struct hs_control *c)
{
	c->head = c->n = 0;
	memset(&c->st, 0, sizeof(c->st));
}

static void count(struct hs_control_stats *st, const struct hs_ctl_msg *m)
{
	st->records[m->proto]++;
	switch (m->proto) {
	case HS_CTL_BGP: {
		uint8_t t = m->u.bgp.type;
		st->bgp_type[t < HS_ARRAY_SIZE(st->bgp_type) ? t : 0]++;
		break;
	}
	case HS_CTL_ROCE: {
		const struct hs_roce_pkt *r = &m->u.roce;
		st->roce_ack[r->ack < HS_ARRAY_SIZE(st->roce_ack) ? r->ack : 0]++;
		if (r->ack == HS_ROCE_NAK)
			st->roce_nak[r->nak_code < 5 ? r->nak_code : 5]++;
		if (r->opcode == HS_ROCE_CNP)
			st->roce_cnp++;
		break;
	}
	case HS_CTL_PFC:
		if (m->u.pfc.opcode == HS_MACC_PFC)
			st->pfc++;
		else
			st->pause++;
		break;
	default:
		break;
	}
}

size_t hs_control_frame(struct hs_control *c, const struct hs_pkt *p)
{
	uint32_t off = 0;
	size_t added = 0;
	int err, rc;

	if (p->ctl >= HS_CTL__COUNT || p->ctl == HS_CTL_NONE)
		return 0;
	c->st.frames[p->ctl]++;
	for (;;) {
		struct hs_ctl_rec *r = &c->ring[c->head];

		rc = hs_ctl_decode(p, &off, &r->msg, &err);
		if (rc < 0) {
			c->st.errors[err < HS_CERR__COUNT ? err : HS_CERR_NONE]++;
			break;
		}
		if (rc == 0)
			break;
		r->ts_ns = p->ts_ns;
		if (p->have & HS_HAVE_MIRROR)
			r->sw = p->mirror_src;
		else
			memset(&r->sw, 0, sizeof(r->sw));
		if (p->ctl != HS_CTL_PFC && (p->have & HS_HAVE_IP))
			r->key = p->key;
		else
			memset(&r->key, 0, sizeof(r->key));
		count(&c->st, &r->msg);
		added++;
		c->head = (c->head + 1) % c->cap;
		if (c->n < c->cap)
			c->n++;
		else
			c->st.overwritten++;
	}
	return added;
}

size_t hs_control_count(const struct hs_control *c)
{
	return c ? c->n : 0;
}

const struct hs_ctl_rec *hs_control_at(const struct hs_control *c, size_t i)
{
	if (!c || i >= c->n)
		return NULL;
	return &c->ring[(c->head + c->cap - 1 - i) % c->cap];
}

const struct hs_control_stats *hs_control_stats(const struct hs_control *c)
{
	return &c->st;
}

const char *hs_ctl_switch_name(const struct hs_ctx *ctx, const struct hs_ctl_rec *r, char *buf,
			       size_t len)
{
	if (!r->sw.af)
		return NULL;
	int sw = ctx->topo ? hs_topo_switch_by_addr(ctx->topo, &r->sw) : -1;
	if (sw >= 0) {
		snprintf(buf, len, "%s", ctx->topo->sw[sw].name);
		return buf;
	}
	return hs_addr_str(&r->sw, buf, len);
}

const char *hs_ctl_kind(const struct hs_ctl_msg *m, char *buf, size_t len)
{
	const char *n = NULL;

	switch (m->proto) {
	case HS_CTL_BGP:
		if (!(n = hs_bgp_type_name(m->u.bgp.type)))
			snprintf(buf, len, "type-%u", m->u.bgp.type);
		break;
	case HS_CTL_ROCE:
		if (!(n = hs_roce_opcode_name(m->u.roce.opcode)))
			snprintf(buf, len, "opcode-0x%02x", m->u.roce.opcode);
		break;
	case HS_CTL_PFC:
		n = m->u.pfc.opcode == HS_MACC_PFC ? "pfc" : "pause";
		break;
	default:
		n = "";
		break;
	}
	return n ? n : buf;
}

const char *hs_ctl_ipv4_str(uint32_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u.%u", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
	return buf;
}

/* append to buf, which holds *n characters; truncates at len */
static void cat(char *buf, size_t len, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void cat(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;

	if (*n >= len)
		return;
	va_start(ap, fmt);
	int w = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	if (w > 0)
		*n = *n + (size_t)w < len ? *n + (size_t)w : len - 1;
}

void hs_ctl_fields(const struct hs_ctl_msg *m, const struct hs_ctl_sink *k)
{
	char b[64];
	void *a = k->arg;

	switch (m->proto) {
	case HS_CTL_BGP: {
		const struct hs_bgp_msg *g = &m->u.bgp;
		k->str(a, "bgp_type", "%s", hs_ctl_kind(m, b, sizeof(b)));
		k->uint(a, "bgp_len", " len %" PRIu64, g->len);
		if (g->type == HS_BGP_OPEN) {
			k->uint(a, "version", " v%" PRIu64, g->version);
			k->uint(a, "as", " as %" PRIu64, g->as);
			if (g->as4)
				k->uint(a, "as4", " as4 %" PRIu64, g->as4);
			k->uint(a, "hold", " hold %" PRIu64, g->hold);
			k->str(a, "bgp_id", " id %s", hs_ctl_ipv4_str(g->bgp_id, b, sizeof(b)));
		} else if (g->type == HS_BGP_NOTIFICATION) {
			k->uint(a, "error_code", " error %" PRIu64, g->err_code);
			k->uint(a, "error_subcode", "/%" PRIu64, g->err_subcode);
		} else if (g->type == HS_BGP_UPDATE) {
			if (g->counts_ok) {
				k->uint(a, "withdrawn", " withdrawn %" PRIu64, g->withdrawn);
				k->uint(a, "nlri", " nlri %" PRIu64, g->nlri);
			}
			k->uint(a, "withdrawn_len", " (lengths %" PRIu64, g->withdrawn_len);
			k->uint(a, "attr_len", "/%" PRIu64, g->attr_len);
			k->uint(a, "nlri_len", "/%" PRIu64 ")", g->nlri_len);
		}
		break;
	}
	case HS_CTL_ROCE: {
		const struct hs_roce_pkt *q = &m->u.roce;
		k->uint(a, "roce_opcode", NULL, q->opcode);
		k->str(a, "roce_op", "%s", hs_ctl_kind(m, b, sizeof(b)));
		k->uint(a, "qp", " qp 0x%06" PRIx64, q->qp);
		k->uint(a, "psn", " psn %" PRIu64, q->psn);
		k->uint(a, "pkey", NULL, q->pkey);
		k->flag(a, "ackreq", " ackreq", q->ackreq);
		k->flag(a, "se", NULL, q->se);
		k->flag(a, "migreq", NULL, q->migreq);
		k->uint(a, "padcnt", NULL, q->padcnt);
		k->uint(a, "tver", NULL, q->tver);
		if (q->aeth) {
			k->str(a, "ack", " %s", hs_roce_ack_name(q->ack));
			if (q->ack == HS_ROCE_NAK) {
				const char *nn = hs_roce_nak_name(q->nak_code);
				if (nn)
					k->str(a, "nak", " %s", nn);
				k->uint(a, "nak_code", nn ? NULL : " code %" PRIu64, q->nak_code);
			} else if (q->ack == HS_ROCE_RNR_NAK) {
				k->uint(a, "rnr_timer", " timer %" PRIu64, q->nak_code);
			}
			k->uint(a, "msn", " msn %" PRIu64, q->msn);
			k->uint(a, "syndrome", " (syndrome 0x%02" PRIx64 ")", q->syndrome);
		}
		break;
	}
	case HS_CTL_PFC: {
		const struct hs_pfc_frame *f = &m->u.pfc;
		bool pfc = f->opcode == HS_MACC_PFC;
		k->uint(a, "pfc_opcode", NULL, f->opcode);
		k->str(a, "pfc_kind", "%s", pfc ? "pfc" : "pause");
		if (pfc)
			k->uint(a, "pfc_class_enable", " enable 0x%02" PRIx64, f->class_enable);
		k->str(a, NULL, "%s", " quanta");
		k->list(a, "quanta");
		for (int i = 0; i < (pfc ? 8 : 1); i++)
			k->uint(a, NULL, i ? ",%" PRIu64 : " %" PRIu64, f->quanta[i]);
		k->list(a, NULL);
		break;
	}
	default:
		break;
	}
}

/* hs_ctl_detail's sink: the fields' text into a buffer */
struct detail {
	char *buf;
	size_t len, n;
};

static void d_uint(void *arg, const char *key, const char *fmt, uint64_t v)
{
	struct detail *d = arg;

	if (fmt)
		cat(d->buf, d->len, &d->n, fmt, v);
}

static void d_str(void *arg, const char *key, const char *fmt, const char *v)
{
	struct detail *d = arg;

	if (fmt)
		cat(d->buf, d->len, &d->n, fmt, v);
}

static void d_flag(void *arg, const char *key, const char *fmt, bool v)
{
	struct detail *d = arg;

	if (fmt && v)
		cat(d->buf, d->len, &d->n, "%s", fmt);
}

static void d_list(void *arg, const char *key)
{
}

const char *hs_ctl_detail(const struct hs_ctl_msg *m, char *buf, size_t len)
{
	struct detail d = { buf, len, 0 };
	const struct hs_ctl_sink k = { d_uint, d_str, d_flag, d_list, &d };

	buf[0] = '\0';
	hs_ctl_fields(m, &k);
	return buf;
}

/* queue the newest added records into the history batch, oldest first */
static void store_records(struct hs_ctx *ctx, size_t added)
{
	char sw[64 + HS_ADDRSTRLEN], kind[32], detail[HS_CTL_DETAIL_MAX];

	hs_ctx_hold_store(ctx);
	for (size_t i = added; i-- > 0;) {
		const struct hs_ctl_rec *r = hs_control_at(ctx->control, i);
		if (!r)
			continue;
		bool ok = ctx->session > 0 && ctx->store &&
			  hs_store_control(ctx->store, ctx->session, r->ts_ns,
					   hs_ctl_switch_name(ctx, r, sw, sizeof(sw)),
					   hs_ctl_proto_name(r->msg.proto),
					   hs_ctl_kind(&r->msg, kind, sizeof(kind)), &r->key,
					   hs_ctl_detail(&r->msg, detail, sizeof(detail))) == 0;
		hs_capture_row(ctx, ok);
	}
}

/* a control frame the pipeline published */
static void on_frame(void *arg, const struct hs_pkt *p)
{
	struct hs_ctx *ctx = arg;

	if (!ctx->control)
		ctx->control = hs_control_new(HS_CONTROL_RING);
	if (ctx->control->epoch != ctx->last_stats.started_ns) {
		hs_control_clear(ctx->control);	/* a new capture, a new log */
		ctx->control->epoch = ctx->last_stats.started_ns;
	}
	size_t added = hs_control_frame(ctx->control, p);
	/* the history keeps every control message under 'all' and the default policy */
	if (added && ctx->cap && ctx->set.policy != HS_POLICY_OFF)
		store_records(ctx, added);
}

int hs_control_subscribe(struct hs_ctx *ctx)
{
	return hs_sub_packets(&ctx->subs, HS_PK_CONTROL, on_frame, ctx);
}

void hs_control_unsubscribe(struct hs_ctx *ctx)
{
	hs_unsub_packets(&ctx->subs, on_frame, ctx);
	hs_control_free(ctx->control);
	ctx->control = NULL;
}
