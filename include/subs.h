/* subs.h - what the pipeline publishes, and to whom
 *
 * The pipeline names none of its consumers. A consumer registers a
 * function and its argument for packets, closed traces or events, with a
 * cheap condition the pipeline tests before calling it (a mask of packet
 * classes; a mask of outcomes and trace flags), and the pipeline publishes
 * each to its subscribers in the order they registered. Registering
 * allocates nothing; publishing a packet nobody wants costs one test of a
 * mask, and one somebody wants a loop over a short array.
 *
 * Subscribe and unsubscribe from the loop, never from inside the call of
 * a packet or a trace; an event's subscriber may unsubscribe (itself or
 * its other subscriptions) while it is being told.
 */
#ifndef HS_SUBS_H
#define HS_SUBS_H

#include "hs.h"
#include "decode.h"
#include "tracer.h"

#define HS_SUBS_MAX 16	/* subscriptions of each kind */

/* packet classes, a subscriber's mask */
#define HS_PK_CONTROL	0x01	/* a frame the decoder marked as control (BGP, RoCEv2,
				 * PAUSE/PFC), decoded or not, before the filters */
#define HS_PK_KEPT	0x02	/* a decoded copy the analyzer filters kept, on its
				 * way to the tracer (its bytes are still there) */

/* a closed trace is published to a subscriber when its outcome is in
 * outcomes (bit 1 << HS_OUT_*) or it has one of flags (HS_TF_*) */
struct hs_trace_cond {
	uint32_t outcomes;
	uint32_t flags;
};
#define HS_TRACES_ALL ((struct hs_trace_cond){ UINT32_MAX, 0 })

enum hs_event_kind {
	HS_EV_CAPTURE_STARTED,	/* a new capture (session) began: source */
	HS_EV_CAPTURE_STOPPED,	/* its open traces are closed and published: source, text
				 * says why */
	HS_EV_CAPTURE_ENDED,	/* it ended by itself, after STOPPED (end of file, time
				 * elapsed, an error: status -1): source, text says why */
	HS_EV_ALERT,		/* an alert fired: alert, value, ts */
	HS_EV_ERROR,		/* something running failed: text */
	HS_EV_TRACES_REPLACED,	/* the traces kept changed other than by closing (the
				 * fabric view took some back from the history, a
				 * history load): a subscriber that keeps what it was
				 * published reads them again from the tracer */
	HS_EV_TRACE_WITHDRAWN,	/* trace, published before, is taken back to come
				 * again as another (the fabric view's, joined): a
				 * subscriber that counted it uncounts it; before
				 * TRACES_REPLACED */
};

struct hs_alert;

struct hs_event {
	enum hs_event_kind kind;
	int status;			/* CAPTURE_ENDED: 0, or -1 when an error ended it */
	const char *source;		/* capture events: the interface or file */
	const char *text;		/* ERROR: the message (one line); CAPTURE_*: why */
	const struct hs_alert *alert;	/* ALERT */
	double value;			/* ALERT: what was measured */
	uint64_t ts;			/* ALERT: capture time */
	const struct hs_trace *trace;	/* TRACE_WITHDRAWN */
};

typedef void (*hs_packet_fn)(void *arg, const struct hs_pkt *p);
typedef void (*hs_trace_fn)(void *arg, const struct hs_trace *t);
/* the n traces of s are about to close (soon) or next in line after that
 * (hs_tracer_cfg.on_soon): load what the subscriber keeps for their flows
 * while the tracer works (prefetches, nothing more) */
typedef void (*hs_soon_fn)(void *arg, const struct hs_soon *s, unsigned n);
typedef void (*hs_event_fn)(void *arg, const struct hs_event *ev);

struct hs_sub_packet {
	hs_packet_fn fn;
	void *arg;
	unsigned mask;
};

struct hs_sub_trace {
	hs_trace_fn fn;
	void *arg;
	struct hs_trace_cond cond;
};

struct hs_sub_soon {
	hs_soon_fn fn;
	void *arg;
	hs_trace_fn of;		/* the trace subscription it came with */
};

struct hs_sub_event {
	hs_event_fn fn;
	void *arg;
};

struct hs_subs {
	struct hs_sub_packet pkt[HS_SUBS_MAX];
	struct hs_sub_trace trace[HS_SUBS_MAX];
	struct hs_sub_soon soon[HS_SUBS_MAX];	/* of the trace subscribers that have one */
	struct hs_sub_event event[HS_SUBS_MAX];
	unsigned npkt, ntrace, nsoon, nevent;
	unsigned pkt_mask;	/* the union of the packet subscribers' masks */
};

/* 0, or -1 when HS_SUBS_MAX subscriptions of the kind are taken */
int hs_sub_packets(struct hs_subs *s, unsigned mask, hs_packet_fn fn, void *arg);
int hs_sub_traces(struct hs_subs *s, struct hs_trace_cond cond, hs_trace_fn fn,
		  hs_soon_fn soon, void *arg);
int hs_sub_events(struct hs_subs *s, hs_event_fn fn, void *arg);
/* the trace subscription of (fn, arg), if there is one, is published the
 * traces that meet cond from now on */
void hs_sub_traces_cond(struct hs_subs *s, hs_trace_fn fn, void *arg, struct hs_trace_cond cond);
/* the subscription of (fn, arg), if there is one, ends */
void hs_unsub_packets(struct hs_subs *s, hs_packet_fn fn, void *arg);
void hs_unsub_traces(struct hs_subs *s, hs_trace_fn fn, void *arg);
void hs_unsub_events(struct hs_subs *s, hs_event_fn fn, void *arg);

/* per packet: inline, and nothing at all when no subscriber wants its class */
static inline void hs_publish_packet(const struct hs_subs *s, unsigned cls,
				     const struct hs_pkt *p)
{
	if (!(s->pkt_mask & cls))
		return;
	for (unsigned i = 0; i < s->npkt; i++)
		if (s->pkt[i].mask & cls)
			s->pkt[i].fn(s->pkt[i].arg, p);
}

static inline bool hs_trace_cond_match(const struct hs_trace_cond *c, const struct hs_trace *t)
{
	return ((c->outcomes >> t->outcome) & 1) || (t->flags & c->flags);
}

static inline void hs_publish_trace(const struct hs_subs *s, const struct hs_trace *t)
{
	for (unsigned i = 0; i < s->ntrace; i++)
		if (hs_trace_cond_match(&s->trace[i].cond, t))
			s->trace[i].fn(s->trace[i].arg, t);
}

static inline void hs_publish_soon(const struct hs_subs *s, const struct hs_soon *soon,
				   unsigned n)
{
	for (unsigned i = 0; i < s->nsoon; i++)
		s->soon[i].fn(s->soon[i].arg, soon, n);
}

void hs_publish_event(const struct hs_subs *s, const struct hs_event *ev);

#endif
