/* test_subs.c - the pipeline's subscribers: each told what its condition
 * asks for and nothing else, in the order they registered; unsubscribing
 * (also while an event is told) and a full list */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "subs.h"

struct rec {
	int packets, traces, soons, events;
	char name;
	struct hs_subs *subs;	/* to unsubscribe from inside an event */
	bool leave;
};

/* who was told, in turn */
static char order[64];

static void note(char who)
{
	size_t n = strlen(order);

	if (n + 1 < sizeof(order))
		order[n] = who;
}

static void on_packet(void *arg, const struct hs_pkt *p)
{
	struct rec *r = arg;

	(void)p;
	r->packets++;
	note(r->name);
}

static void on_trace(void *arg, const struct hs_trace *t)
{
	struct rec *r = arg;

	(void)t;
	r->traces++;
	note(r->name);
}

/* a second subscription of the same subscriber */
static void on_trace_too(void *arg, const struct hs_trace *t)
{
	(void)arg;
	(void)t;
	note('+');
}

/* counts the flows it is told of */
static void on_soon(void *arg, const struct hs_soon *s, unsigned n)
{
	struct rec *r = arg;

	(void)s;
	r->soons += (int)n;
}

static void on_event(void *arg, const struct hs_event *ev)
{
	struct rec *r = arg;

	(void)ev;
	r->events++;
	note(r->name);
	if (r->leave)
		hs_unsub_events(r->subs, on_event, r);
}

static void reset(void)
{
	memset(order, 0, sizeof(order));
}

static void test_packets_by_class(void **state)
{
	struct hs_subs s;
	struct hs_pkt p;
	struct rec ctl = { .name = 'c' }, kept = { .name = 'k' }, both = { .name = 'b' };

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(&p, 0, sizeof(p));
	reset();
	/* nobody: nothing is called, whatever the class */
	hs_publish_packet(&s, HS_PK_CONTROL | HS_PK_KEPT, &p);
	assert_int_equal(hs_sub_packets(&s, HS_PK_CONTROL, on_packet, &ctl), 0);
	assert_int_equal(hs_sub_packets(&s, HS_PK_KEPT, on_packet, &kept), 0);
	assert_int_equal(hs_sub_packets(&s, HS_PK_CONTROL | HS_PK_KEPT, on_packet, &both), 0);

	hs_publish_packet(&s, HS_PK_KEPT, &p);
	assert_string_equal(order, "kb");
	reset();
	hs_publish_packet(&s, HS_PK_CONTROL, &p);
	assert_string_equal(order, "cb");
	assert_int_equal(ctl.packets, 1);
	assert_int_equal(kept.packets, 1);
	assert_int_equal(both.packets, 2);

	/* the one that leaves is told no more; the others keep their order */
	hs_unsub_packets(&s, on_packet, &kept);
	reset();
	hs_publish_packet(&s, HS_PK_KEPT, &p);
	hs_publish_packet(&s, HS_PK_CONTROL, &p);
	assert_string_equal(order, "bcb");
	assert_int_equal(kept.packets, 1);
	/* no one left for a class: its mask is clear */
	hs_unsub_packets(&s, on_packet, &both);
	assert_int_equal(s.pkt_mask, HS_PK_CONTROL);
}

static void test_traces_by_condition(void **state)
{
	struct hs_subs s;
	struct hs_trace t;
	struct rec all = { .name = 'a' }, probes = { .name = 'p' }, drops = { .name = 'd' };
	struct hs_trace_cond dropped = { .outcomes = 1u << HS_OUT_DROPPED };
	struct hs_trace_cond probe = { .flags = HS_TF_PROBE };

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(&t, 0, sizeof(t));
	reset();
	assert_int_equal(hs_sub_traces(&s, HS_TRACES_ALL, on_trace, on_soon, &all), 0);
	assert_int_equal(hs_sub_traces(&s, probe, on_trace, NULL, &probes), 0);
	assert_int_equal(hs_sub_traces(&s, dropped, on_trace, on_soon, &drops), 0);

	t.outcome = HS_OUT_DELIVERED;
	hs_publish_trace(&s, &t);
	assert_string_equal(order, "a");
	reset();
	t.outcome = HS_OUT_DROPPED;
	hs_publish_trace(&s, &t);
	assert_string_equal(order, "ad");
	reset();
	t.outcome = HS_OUT_DELIVERED;
	t.flags = HS_TF_PROBE | HS_TF_MATCHED;
	hs_publish_trace(&s, &t);
	assert_string_equal(order, "ap");

	/* a prefetch goes to those that gave one, the flows of both traces
	 * next in line in one call */
	const struct hs_soon two[2] = { { 1, 6, true }, { 2, 17, false } };
	hs_publish_soon(&s, two, 2);
	assert_int_equal(all.soons, 2);
	assert_int_equal(probes.soons, 0);
	assert_int_equal(drops.soons, 2);
	/* leaving takes its prefetch along, and only its own */
	hs_unsub_traces(&s, on_trace, &all);
	hs_publish_soon(&s, two, 1);
	assert_int_equal(all.soons, 2);
	assert_int_equal(drops.soons, 3);
	reset();
	t.outcome = HS_OUT_DROPPED;
	hs_publish_trace(&s, &t);
	assert_string_equal(order, "pd");
	/* of two subscriptions of one subscriber, the one that leaves does
	 * not take the other's prefetch */
	assert_int_equal(hs_sub_traces(&s, HS_TRACES_ALL, on_trace_too, NULL, &drops), 0);
	reset();
	hs_publish_trace(&s, &t);
	assert_string_equal(order, "pd+");
	hs_unsub_traces(&s, on_trace_too, &drops);
	hs_publish_soon(&s, two, 1);
	assert_int_equal(drops.soons, 4);
}

/* a subscription's condition changed in place: told by the new one, in
 * the same turn, and no other subscription's changes */
static void test_trace_condition_changed(void **state)
{
	struct hs_subs s;
	struct hs_trace t;
	struct rec a = { .name = 'a' }, b = { .name = 'b' };
	struct hs_trace_cond none = { 0, 0 }, dropped = { .outcomes = 1u << HS_OUT_DROPPED };

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(&t, 0, sizeof(t));
	assert_int_equal(hs_sub_traces(&s, HS_TRACES_ALL, on_trace, NULL, &a), 0);
	assert_int_equal(hs_sub_traces(&s, HS_TRACES_ALL, on_trace, NULL, &b), 0);
	hs_sub_traces_cond(&s, on_trace, &a, none);
	reset();
	t.outcome = HS_OUT_DROPPED;
	hs_publish_trace(&s, &t);
	assert_string_equal(order, "b");
	hs_sub_traces_cond(&s, on_trace, &a, dropped);
	reset();
	hs_publish_trace(&s, &t);
	assert_string_equal(order, "ab");
	reset();
	t.outcome = HS_OUT_DELIVERED;
	hs_publish_trace(&s, &t);
	assert_string_equal(order, "b");
	/* one not subscribed changes nothing */
	hs_sub_traces_cond(&s, on_trace_too, &a, HS_TRACES_ALL);
	reset();
	hs_publish_trace(&s, &t);
	assert_string_equal(order, "b");
}

static void test_events_leave_while_told(void **state)
{
	struct hs_subs s;
	struct hs_event ev = { .kind = HS_EV_CAPTURE_STOPPED };
	struct rec a = { .name = 'a' }, b = { .name = 'b' }, c = { .name = 'c' };

	(void)state;
	memset(&s, 0, sizeof(s));
	reset();
	b.subs = &s;
	b.leave = true;
	assert_int_equal(hs_sub_events(&s, on_event, &a), 0);
	assert_int_equal(hs_sub_events(&s, on_event, &b), 0);
	assert_int_equal(hs_sub_events(&s, on_event, &c), 0);
	/* b leaves while told: c, after it, is still told this one */
	hs_publish_event(&s, &ev);
	assert_string_equal(order, "abc");
	reset();
	hs_publish_event(&s, &ev);
	assert_string_equal(order, "ac");
	assert_int_equal(b.events, 1);
}

static void test_full(void **state)
{
	struct hs_subs s;
	struct rec r[HS_SUBS_MAX + 1];
	struct hs_pkt p;

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(r, 0, sizeof(r));
	memset(&p, 0, sizeof(p));
	for (int i = 0; i < HS_SUBS_MAX; i++) {
		r[i].name = 'x';
		assert_int_equal(hs_sub_packets(&s, HS_PK_KEPT, on_packet, &r[i]), 0);
		assert_int_equal(hs_sub_traces(&s, HS_TRACES_ALL, on_trace, on_soon, &r[i]), 0);
		assert_int_equal(hs_sub_events(&s, on_event, &r[i]), 0);
	}
	/* one too many: refused, and nothing of it is told */
	assert_int_equal(hs_sub_packets(&s, HS_PK_KEPT, on_packet, &r[HS_SUBS_MAX]), -1);
	assert_int_equal(hs_sub_traces(&s, HS_TRACES_ALL, on_trace, on_soon, &r[HS_SUBS_MAX]), -1);
	assert_int_equal(hs_sub_events(&s, on_event, &r[HS_SUBS_MAX]), -1);
	hs_publish_packet(&s, HS_PK_KEPT, &p);
	hs_publish_soon(&s, &(struct hs_soon){ 1, 6, false }, 1);
	assert_int_equal(r[0].packets, 1);
	assert_int_equal(r[HS_SUBS_MAX - 1].packets, 1);
	assert_int_equal(r[HS_SUBS_MAX - 1].soons, 1);
	assert_int_equal(r[HS_SUBS_MAX].packets, 0);
	assert_int_equal(r[HS_SUBS_MAX].soons, 0);
	/* a place freed is taken again */
	hs_unsub_packets(&s, on_packet, &r[3]);
	assert_int_equal(hs_sub_packets(&s, HS_PK_KEPT, on_packet, &r[HS_SUBS_MAX]), 0);
	hs_publish_packet(&s, HS_PK_KEPT, &p);
	assert_int_equal(r[3].packets, 1);
	assert_int_equal(r[HS_SUBS_MAX].packets, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_packets_by_class),
		cmocka_unit_test(test_traces_by_condition),
		cmocka_unit_test(test_trace_condition_changed),
		cmocka_unit_test(test_events_leave_while_told),
		cmocka_unit_test(test_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
