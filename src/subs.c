/* subs.c - the pipeline's subscribers: registering, and publishing events
 */
#include <string.h>

#include "subs.h"

int hs_sub_packets(struct hs_subs *s, unsigned mask, hs_packet_fn fn, void *arg)
{
	if (s->npkt == HS_SUBS_MAX)
		return -1;
	s->pkt[s->npkt++] = (struct hs_sub_packet){ fn, arg, mask };
	s->pkt_mask |= mask;
	return 0;
}

int hs_sub_traces(struct hs_subs *s, struct hs_trace_cond cond, hs_trace_fn fn,
		  hs_soon_fn soon, void *arg)
{
	if (s->ntrace == HS_SUBS_MAX)
		return -1;
	s->trace[s->ntrace++] = (struct hs_sub_trace){ fn, arg, cond };
	if (soon)
		s->soon[s->nsoon++] = (struct hs_sub_soon){ soon, arg, fn };
	return 0;
}

void hs_sub_traces_cond(struct hs_subs *s, hs_trace_fn fn, void *arg, struct hs_trace_cond cond)
{
	for (unsigned i = 0; i < s->ntrace; i++)
		if (s->trace[i].fn == fn && s->trace[i].arg == arg)
			s->trace[i].cond = cond;
}

int hs_sub_events(struct hs_subs *s, hs_event_fn fn, void *arg)
{
	if (s->nevent == HS_SUBS_MAX)
		return -1;
	s->event[s->nevent++] = (struct hs_sub_event){ fn, arg };
	return 0;
}

/* the entries after i move up one, keeping the order of registration */
#define UNSUB(arr, n, i) \
	memmove(&(arr)[i], &(arr)[(i) + 1], ((n) - (i) - 1) * sizeof((arr)[0]))

void hs_unsub_packets(struct hs_subs *s, hs_packet_fn fn, void *arg)
{
	for (unsigned i = 0; i < s->npkt; i++) {
		if (s->pkt[i].fn != fn || s->pkt[i].arg != arg)
			continue;
		UNSUB(s->pkt, s->npkt, i);
		s->npkt--;
		s->pkt_mask = 0;
		for (unsigned k = 0; k < s->npkt; k++)
			s->pkt_mask |= s->pkt[k].mask;
		return;
	}
}

void hs_unsub_traces(struct hs_subs *s, hs_trace_fn fn, void *arg)
{
	for (unsigned i = 0; i < s->ntrace; i++) {
		if (s->trace[i].fn != fn || s->trace[i].arg != arg)
			continue;
		UNSUB(s->trace, s->ntrace, i);
		s->ntrace--;
		for (unsigned k = 0; k < s->nsoon; k++) {
			if (s->soon[k].of != fn || s->soon[k].arg != arg)
				continue;
			UNSUB(s->soon, s->nsoon, k);
			s->nsoon--;
			break;
		}
		return;
	}
}

void hs_unsub_events(struct hs_subs *s, hs_event_fn fn, void *arg)
{
	for (unsigned i = 0; i < s->nevent; i++) {
		if (s->event[i].fn != fn || s->event[i].arg != arg)
			continue;
		UNSUB(s->event, s->nevent, i);
		s->nevent--;
		return;
	}
}

/* to the subscribers of the moment it is published: one that unsubscribes
 * while told is told no more, one registered meanwhile waits for the next */
void hs_publish_event(const struct hs_subs *s, const struct hs_event *ev)
{
	struct hs_sub_event now[HS_SUBS_MAX];
	unsigned n = s->nevent;

	memcpy(now, s->event, n * sizeof(now[0]));
	for (unsigned i = 0; i < n; i++) {
		bool still = false;
		for (unsigned k = 0; k < s->nevent && !still; k++)
			still = s->event[k].fn == now[i].fn && s->event[k].arg == now[i].arg;
		if (still)
			now[i].fn(now[i].arg, ev);
	}
}
