/* control.c - the control log: a ring of recent BGP, RoCEv2 and PAUSE/PFC
 * messages and their counters, fed by the pipeline for marked frames only
 */
#include <stdlib.h>
#include <string.h>

#include "console.h"
#include "control.h"

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

void hs_control_frame(struct hs_control *c, const struct hs_pkt *p)
{
	uint32_t off = 0;
	int err, rc;

	if (p->ctl >= HS_CTL__COUNT || p->ctl == HS_CTL_NONE)
		return;
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
		c->head = (c->head + 1) % c->cap;
		if (c->n < c->cap)
			c->n++;
		else
			c->st.overwritten++;
	}
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

void hs_control_on_frame(struct hs_ctx *ctx, const struct hs_pkt *p)
{
	if (!ctx->control)
		ctx->control = hs_control_new(HS_CONTROL_RING);
	if (ctx->control->epoch != ctx->last_stats.started_ns) {
		hs_control_clear(ctx->control);	/* a new capture, a new log */
		ctx->control->epoch = ctx->last_stats.started_ns;
	}
	hs_control_frame(ctx->control, p);
}
