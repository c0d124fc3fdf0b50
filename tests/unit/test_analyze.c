/* test_analyze.c - drops, loops, latency, ECMP and 007 blame on hand-built traces */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analyze.h"

#define US 1000ULL
#define MS 1000000ULL
#define SEC HS_NS_PER_SEC
#define T0 (1700000040ULL * HS_NS_PER_SEC)	/* a multiple of 60 s */

static const char fabric[] =
	"switch spine1 role spine mirror 10.255.0.1\n"
	"switch spine2 role spine mirror 10.255.0.2\n"
	"switch leaf1 role leaf mirror 10.255.0.3\n"
	"switch leaf2 role leaf mirror 10.255.0.4\n"
	"switch leaf3 role leaf mirror 10.255.0.5\n"
	"link leaf1 s1 spine1 l1\n"
	"link leaf1 s2 spine2 l1\n"
	"link leaf2 s1 spine1 l2\n"
	"link leaf2 s2 spine2 l2\n"
	"link leaf3 s1 spine1 l3\n"
	"link leaf3 s2 spine2 l3\n"
	"subnet leaf1 10.1.1.0/24\n"
	"subnet leaf2 10.1.2.0/24\n"
	"subnet leaf3 10.1.3.0/24\n";

enum { S1, S2, L1, L2, L3, END = -100 };

static struct hs_topo *topo;
static struct hs_trace pool[512];
static const struct hs_trace *ptr[512];
static size_t npool;
static uint64_t next_id;

static int setup(void **state)
{
	char err[256];

	(void)state;
	topo = hs_topo_parse(fabric, "fabric", err, sizeof(err));
	if (!topo)
		fail_msg("%s", err);
	assert_int_equal(topo->nlinks, 6);
	npool = 0;
	next_id = 1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	hs_topo_free(topo);
	topo = NULL;
	return 0;
}

static struct hs_addr A(const char *s)
{
	struct hs_addr a;

	assert_int_equal(hs_addr_parse(s, &a), 0);
	return a;
}

/* a TCP trace of flow src:sport > dst:dport over the switches listed (END
 * ends the list), hops 10us apart on the switch clocks, classified against
 * the topology like the tracer does */
static struct hs_trace *mk(const char *src, uint16_t sport, const char *dst, uint8_t flags,
			   uint32_t seq, uint32_t len, uint64_t ts, ...)
{
	va_list ap;
	struct hs_trace *t;

	assert_true(npool < HS_ARRAY_SIZE(pool));
	t = &pool[npool];
	ptr[npool++] = t;
	memset(t, 0, sizeof(*t));
	t->id = next_id++;
	t->key.src = A(src);
	t->key.dst = A(dst);
	t->key.sport = sport;
	t->key.dport = 5001;
	t->key.proto = 6;
	t->seq = seq;
	t->tcp_flags = flags;
	t->len = len;
	va_start(ap, ts);
	for (int sw = va_arg(ap, int); sw != END; sw = va_arg(ap, int)) {
		struct hs_hop *h = &t->hops[t->nhops];
		h->sw = sw;
		h->addr = topo->sw[sw].mirror;
		h->ts_ns = ts + t->nhops * 10 * US;
		h->hw_ns = h->ts_ns;
		h->ttl = (uint8_t)(64 - t->nhops);
		t->nhops++;
	}
	va_end(ap);
	hs_trace_classify(t, topo);
	return t;
}

#define SYN 0x02
#define ACK 0x10

/* ---- drops ------------------------------------------------------------------ */

static const struct hs_drop_link *find_drop(const struct hs_drops *d, int a, int b)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->links[i].a == a && d->links[i].b == b)
			return &d->links[i];
	return NULL;
}

static void test_drops_resolve_and_rank(void **state)
{
	struct hs_drops d;

	(void)state;
	/* flow 1 was seen leaving leaf1 over spine2: its drop at leaf1 is certain */
	mk("10.1.1.10", 1000, "10.1.2.10", ACK, 1, 1500, T0, L1, S2, L2, END);
	struct hs_trace *d1 = mk("10.1.1.10", 1000, "10.1.2.10", ACK, 2, 1500, T0 + SEC, L1, END);
	assert_int_equal(d1->outcome, HS_OUT_DROPPED);
	assert_int_equal(d1->n_next, 2);
	/* flow 2 never seen beyond leaf1: ambiguous between the spines */
	mk("10.1.1.11", 1001, "10.1.2.10", SYN, 7, 60, T0 + 2 * SEC, L1, END);
	/* one next hop only: spine2 toward leaf3 */
	mk("10.1.2.12", 1002, "10.1.3.10", SYN, 9, 60, T0 + 3 * SEC, L2, S2, END);
	/* delivered traffic is not a drop */
	mk("10.1.3.10", 1003, "10.1.1.10", SYN, 9, 60, T0 + 4 * SEC, L3, S1, L1, END);

	hs_an_drops(ptr, npool, topo, &d);
	assert_int_equal(d.dropped, 3);
	assert_int_equal(d.certain, 2);
	assert_int_equal(d.ambiguous, 1);
	assert_int_equal(d.unattributed, 0);
	assert_int_equal(d.n, 3);
	/* ranked by certain drops, then ambiguous ones */
	assert_int_equal(d.links[0].a, L1);
	assert_int_equal(d.links[0].b, S2);
	assert_int_equal(d.links[0].drops, 1);
	assert_int_equal(d.links[0].ambiguous, 1);
	assert_int_equal(d.links[0].crossed, 1);
	assert_true(fabs(hs_drop_loss(&d.links[0]) - 0.5) < 1e-9);
	/* the figures are of its certain drop: flow 1 */
	assert_int_equal(d.links[0].flows, 1);
	assert_int_equal(d.links[0].flows_crossing, 1);
	assert_int_equal(d.links[0].nalt, 1);
	assert_int_equal(d.links[0].alt[0], S1);
	assert_int_equal(d.links[1].a, S2);
	assert_int_equal(d.links[1].b, L3);
	assert_int_equal(d.links[1].drops, 1);
	/* the ambiguous drop is in no link's drops: not split onto leaf1 > spine1 */
	const struct hs_drop_link *l = find_drop(&d, L1, S1);
	assert_non_null(l);
	assert_int_equal(l->ambiguous, 1);
	assert_int_equal(l->drops, 0);
	assert_true(hs_drop_loss(l) == 0);
	assert_ptr_equal(l, &d.links[2]);
	assert_true(hs_flowkey_eq(&l->flow, &ptr[2]->key));
	/* traces across each directed link: leaf1 > spine2 once, never back */
	int ls = hs_topo_link(topo, L1, S2);
	int fwd = topo->links[ls].a == L1 ? 2 * ls : 2 * ls + 1;
	assert_int_equal(d.crossed[fwd], 1);
	assert_int_equal(d.crossed[fwd ^ 1], 0);
	hs_drops_free(&d);

	/* without a topology there is nothing to attribute */
	hs_an_drops(ptr, npool, NULL, &d);
	assert_int_equal(d.n, 0);
	hs_drops_free(&d);
}

/* a packet that ran out of TTL at its last switch (a traceroute's) was
 * not lost on a link: counted apart, in no link's drops */
static void test_drops_ttl_expired(void **state)
{
	struct hs_drops d;

	(void)state;
	mk("10.1.1.10", 1000, "10.1.2.10", ACK, 1, 1500, T0, L1, S2, L2, END);
	struct hs_trace *t = mk("10.1.1.10", 1000, "10.1.2.10", ACK, 2, 60, T0 + SEC, L1, S2,
				END);
	t->hops[0].ttl = 2;
	t->hops[1].ttl = 1;
	assert_int_equal(t->outcome, HS_OUT_DROPPED);
	/* the same with a TTL to spare is a drop on spine2 > leaf2 */
	mk("10.1.1.10", 1000, "10.1.2.10", ACK, 3, 1500, T0 + 2 * SEC, L1, S2, END);

	hs_an_drops(ptr, npool, topo, &d);
	assert_int_equal(d.expired, 1);
	assert_int_equal(d.dropped, 1);
	assert_int_equal(d.certain, 1);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.links[0].a, S2);
	assert_int_equal(d.links[0].b, L2);
	assert_int_equal(d.links[0].drops, 1);
	hs_drops_free(&d);
}

static void test_drops_persistent_and_scope(void **state)
{
	struct hs_drops d;
	char src[32];

	(void)state;
	/* spine1 > leaf2: five flows dropped all along ten seconds */
	for (int i = 0; i < 10; i++) {
		snprintf(src, sizeof(src), "10.1.3.%d", 20 + i % 5);
		mk(src, (uint16_t)(2000 + i % 5), "10.1.2.10", SYN, 1, 60, T0 + (uint64_t)i * SEC,
		   L3, S1, END);
	}
	/* spine2 > leaf3: one flow, dropped ten times in one burst; twenty other
	 * flows cross that link unharmed all along */
	for (int i = 0; i < 10; i++)
		mk("10.1.1.10", 3000, "10.1.3.10", SYN, 1, 60, T0 + 5 * SEC + (uint64_t)i * MS, L1,
		   S2, END);
	for (int i = 0; i < 20; i++)
		mk("10.1.2.30", (uint16_t)(4000 + i), "10.1.3.30", SYN, 1, 60,
		   T0 + (uint64_t)i * SEC / 2, L2, S2, L3, END);

	hs_an_drops(ptr, npool, topo, &d);
	const struct hs_drop_link *p = find_drop(&d, S1, L2);
	const struct hs_drop_link *b = find_drop(&d, S2, L3);
	assert_non_null(p);
	assert_non_null(b);
	assert_int_equal(p->drops, 10);
	assert_int_equal(p->ambiguous, 0);
	assert_int_equal(p->flows, 5);
	assert_true(p->bins >= 9);
	assert_true(p->persistent);
	assert_false(p->flow_specific);
	assert_int_equal(p->first_ns, T0);
	assert_int_equal(p->last_ns, T0 + 9 * SEC);

	assert_int_equal(b->drops, 10);
	assert_int_equal(b->flows, 1);
	assert_int_equal(b->flows_crossing, 21);
	assert_int_equal(b->bins, 1);
	assert_false(b->persistent);
	assert_true(b->flow_specific);
	/* equal drops: the tie goes to topology order */
	assert_int_equal(d.links[0].a, S1);
	hs_drops_free(&d);
}

/* ---- loops ------------------------------------------------------------------ */

static void test_loops(void **state)
{
	struct hs_loops l;

	(void)state;
	/* entering the spine1/leaf3 loop at spine1 and at leaf3 gives one cycle */
	mk("10.1.1.10", 1, "10.1.3.12", SYN, 1, 60, T0, L1, S1, L3, S1, L3, S1, END);
	mk("10.1.2.10", 2, "10.1.3.12", SYN, 1, 60, T0 + SEC, L2, S2, L3, S1, L3, S1, END);
	mk("10.1.2.10", 2, "10.1.3.12", SYN, 1, 60, T0 + 2 * SEC, L2, S2, L3, S1, L3, END);
	/* a three-switch cycle */
	mk("10.1.2.10", 3, "10.1.1.99", SYN, 1, 60, T0, L2, S1, L1, S2, L2, END);
	/* not a loop */
	mk("10.1.1.10", 4, "10.1.2.10", SYN, 1, 60, T0, L1, S1, L2, END);
	/* unknown switches repeat by address */
	struct hs_trace *u = mk("10.1.1.10", 5, "10.9.9.9", SYN, 1, 60, T0, END);
	const char *addr[] = { "10.200.0.1", "10.200.0.2", "10.200.0.1" };
	for (int i = 0; i < 3; i++) {
		u->hops[i].sw = -1;
		u->hops[i].addr = A(addr[i]);
		u->hops[i].ts_ns = T0 + (uint64_t)i * US;
	}
	u->nhops = 3;

	hs_an_loops(ptr, npool, &l);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.loops[0].n, 2);
	assert_int_equal(l.loops[0].sw[0].sw, S1);
	assert_int_equal(l.loops[0].sw[1].sw, L3);
	assert_int_equal(l.loops[0].traces, 3);
	assert_int_equal(l.loops[0].flows, 2);
	assert_int_equal(l.loops[0].first_ns, T0);
	assert_int_equal(l.loops[0].last_ns, T0 + 2 * SEC);
	assert_int_equal(l.loops[0].trace_id, 1);
	bool three = false, unknown = false;
	for (size_t i = 1; i < l.n; i++) {
		if (l.loops[i].n == 4) {
			three = l.loops[i].sw[0].sw == S1 && l.loops[i].sw[1].sw == L1 &&
				l.loops[i].sw[2].sw == S2 && l.loops[i].sw[3].sw == L2;
		} else if (l.loops[i].n == 2) {
			struct hs_addr a1 = A("10.200.0.1");
			unknown = l.loops[i].sw[0].sw == -1 && hs_addr_eq(&l.loops[i].sw[0].addr, &a1);
		}
	}
	assert_true(three);
	assert_true(unknown);
	hs_loops_free(&l);
}

/* ---- latency ---------------------------------------------------------------- */

static void test_percentile(void **state)
{
	int64_t v[100];

	(void)state;
	for (int i = 0; i < 100; i++)
		v[i] = (i + 1) * 10;
	assert_int_equal(hs_an_percentile(v, 100, 50), 500);
	assert_int_equal(hs_an_percentile(v, 100, 90), 900);
	assert_int_equal(hs_an_percentile(v, 100, 99), 990);
	assert_int_equal(hs_an_percentile(v, 100, 100), 1000);
	assert_int_equal(hs_an_percentile(v, 1, 99), 10);
	assert_int_equal(hs_an_percentile(v, 3, 50), 20);
	assert_int_equal(hs_an_percentile(v, 0, 50), 0);
}

static void test_latency(void **state)
{
	struct hs_latency l;

	(void)state;
	/* leaf1 > spine1 takes 10us, 20us, ... 1ms by the switch clocks while
	 * capture times say otherwise */
	for (int i = 0; i < 100; i++) {
		struct hs_trace *t = mk("10.1.1.10", (uint16_t)i, "10.1.2.10", SYN, 1, 60,
					T0 + (uint64_t)i * MS, L1, S1, L2, END);
		t->hops[1].hw_ns = t->hops[0].hw_ns + (uint64_t)(i + 1) * 10 * US;
		t->hops[1].ts_ns = t->hops[0].ts_ns + 5 * US;
		t->hops[2].hw_ns = t->hops[1].hw_ns + 3 * US;
	}
	/* leaf1 > spine2 once, with no switch time at spine2: capture time */
	struct hs_trace *c = mk("10.1.1.10", 999, "10.1.2.10", SYN, 1, 60, T0, L1, S2, END);
	c->hops[1].hw_ns = 0;
	c->hops[1].ts_ns = c->hops[0].ts_ns + 7 * US;
	/* a looped trace is left out */
	mk("10.1.1.10", 1, "10.1.3.12", SYN, 1, 60, T0, L1, S1, L3, S1, L3, END);

	hs_an_latency(ptr, npool, &l);
	assert_int_equal(l.nlinks, 3);
	const struct hs_lat_stat *l1s1 = NULL, *s1l2 = NULL, *l1s2 = NULL, *h1 = NULL;
	for (size_t i = 0; i < l.nlinks; i++) {
		const struct hs_lat_stat *s = &l.links[i];
		if (s->a.sw == L1 && s->b.sw == S1)
			l1s1 = s;
		if (s->a.sw == S1 && s->b.sw == L2)
			s1l2 = s;
		if (s->a.sw == L1 && s->b.sw == S2)
			l1s2 = s;
	}
	assert_non_null(l1s1);
	assert_non_null(s1l2);
	assert_non_null(l1s2);
	assert_ptr_equal(l1s1, &l.links[0]);	/* highest p99 first */
	assert_int_equal(l1s1->count, 100);
	assert_int_equal(l1s1->p50, 500 * US);
	assert_int_equal(l1s1->p90, 900 * US);
	assert_int_equal(l1s1->p99, 990 * US);
	assert_int_equal(l1s1->max, 1000 * US);
	assert_int_equal(s1l2->count, 100);
	assert_int_equal(s1l2->p99, 3 * US);
	assert_int_equal(l1s2->count, 1);
	assert_int_equal(l1s2->p50, 7 * US);

	/* per hop: everything leaving leaf1 (both links) */
	for (size_t i = 0; i < l.nhops; i++)
		if (l.hops[i].a.sw == L1)
			h1 = &l.hops[i];
	assert_non_null(h1);
	assert_int_equal(h1->count, 101);
	assert_int_equal(h1->max, 1000 * US);

	/* an even spread has no outlier: its maximum is no outlier by itself */
	assert_int_equal(l1s1->p25, 250 * US);
	assert_int_equal(l1s1->p75, 750 * US);
	assert_int_equal(l1s1->fence, (750 + 3 * 500) * US);
	assert_int_equal(l.outliers_total, 0);
	assert_int_equal(l.noutliers, 0);
	/* one sample is too few to judge */
	assert_int_equal(l1s2->fence, 0);
	hs_latency_free(&l);
}

static void test_latency_outlier_median(void **state)
{
	struct hs_latency l;

	(void)state;
	/* 200 samples of 10us and one of 200us: above the fence, 2 x the median */
	for (int i = 0; i < 201; i++) {
		struct hs_trace *t = mk("10.1.1.10", (uint16_t)i, "10.1.2.10", SYN, 1, 60, T0,
					L1, S1, END);
		t->hops[1].hw_ns = t->hops[0].hw_ns + (i == 77 ? 200 : 10) * US;
	}
	/* leaf2 > spine1: 19 samples, one of them 1ms: too few to call it one */
	for (int i = 0; i < HS_LAT_MIN_SAMPLES - 1; i++) {
		struct hs_trace *t = mk("10.1.2.10", (uint16_t)i, "10.1.3.10", SYN, 1, 60, T0,
					L2, S1, END);
		t->hops[1].hw_ns = t->hops[0].hw_ns + (i == 3 ? 1000 : 10) * US;
	}
	hs_an_latency(ptr, npool, &l);
	assert_int_equal(l.nlinks, 2);
	const struct hs_lat_stat *l1s1 = l.links[0].a.sw == L1 ? &l.links[0] : &l.links[1];
	assert_int_equal(l1s1->p99, 10 * US);
	assert_int_equal(l1s1->fence, 20 * US);
	assert_int_equal(l.outliers_total, 1);
	assert_int_equal(l.outliers[0].trace_id, 78);
	assert_int_equal(l.outliers[0].link_p50, 10 * US);
	assert_int_equal(l.outliers[0].link_fence, 20 * US);
	hs_latency_free(&l);
}

/* ---- ECMP ------------------------------------------------------------------- */

static void test_imbalance(void **state)
{
	double even[] = { 0.5, 0.5 }, skew[] = { 0.75, 0.25 }, all[] = { 1, 0, 0 };

	(void)state;
	assert_true(fabs(hs_an_imbalance(even, 2)) < 1e-9);
	assert_true(fabs(hs_an_imbalance(skew, 2) - 0.5) < 1e-9);
	assert_true(fabs(hs_an_imbalance(all, 3) - 2.0) < 1e-9);
	assert_true(hs_an_imbalance(all, 1) == 0);
}

static void test_ecmp(void **state)
{
	struct hs_ecmp e;
	char src[32];

	(void)state;
	/* toward leaf2: six flows over spine1, two over spine2 */
	for (int i = 0; i < 8; i++) {
		snprintf(src, sizeof(src), "10.1.1.%d", 10 + i);
		mk(src, 100, "10.1.2.10", SYN, 1, 100, T0 + SEC, L1, i < 6 ? S1 : S2, L2, END);
	}
	/* the same flow again: bytes, not flows */
	mk("10.1.1.16", 100, "10.1.2.10", ACK, 2, 1000, T0 + SEC, L1, S2, L2, END);
	/* toward leaf3: two and two */
	for (int i = 0; i < 4; i++) {
		snprintf(src, sizeof(src), "10.1.1.%d", 30 + i);
		mk(src, 100, "10.1.3.10", SYN, 1, 100, T0 + SEC, L1, i < 2 ? S1 : S2, L3, END);
	}
	/* before the window: all over spine2 toward leaf3 */
	for (int i = 0; i < 10; i++) {
		snprintf(src, sizeof(src), "10.1.1.%d", 60 + i);
		mk(src, 100, "10.1.3.10", SYN, 1, 100, T0, L1, S2, L3, END);
	}
	/* traffic toward leaf1 itself is not an ECMP group of leaf1 */
	mk("10.1.2.10", 100, "10.1.1.10", SYN, 1, 100, T0 + SEC, L2, S1, L1, END);

	hs_an_ecmp(ptr, npool, topo, L1, T0 + SEC / 2, 0.25, &e);
	assert_int_equal(e.n, 2);
	const struct hs_ecmp_group *g = &e.groups[0];
	assert_int_equal(g->leaf, L2);
	assert_int_equal(g->n, 2);
	assert_int_equal(g->flows, 8);
	assert_int_equal(g->traces, 9);
	assert_int_equal(g->bytes, 1800);
	assert_true(fabs(g->imbalance - 0.5) < 1e-9);
	assert_true(g->flagged);
	for (int k = 0; k < g->n; k++) {
		if (g->nh[k].sw == S1) {
			assert_int_equal(g->nh[k].flows, 6);
			assert_true(fabs(g->nh[k].flow_share - 0.75) < 1e-9);
			assert_int_equal(g->nh[k].bytes, 600);
		} else {
			assert_int_equal(g->nh[k].sw, S2);
			assert_int_equal(g->nh[k].flows, 2);
			assert_int_equal(g->nh[k].bytes, 1200);
			assert_true(fabs(g->nh[k].byte_share - 1200.0 / 1800) < 1e-9);
		}
	}
	assert_int_equal(e.groups[1].leaf, L3);
	assert_true(fabs(e.groups[1].imbalance) < 1e-9);
	assert_false(e.groups[1].flagged);
	hs_ecmp_free(&e);

	/* the whole capture: leaf3's group leans to spine2 (12 of 14) */
	hs_an_ecmp(ptr, npool, topo, L1, 0, 0.25, &e);
	assert_int_equal(e.n, 2);
	assert_int_equal(e.groups[0].leaf, L3);
	assert_true(fabs(e.groups[0].imbalance - (12.0 / 14) / 0.5 + 1) < 1e-9);
	hs_ecmp_free(&e);

	/* a next hop that is never taken still counts: spine1 unused toward leaf3
	 * from leaf2, but too few flows to flag */
	npool = 0;
	mk("10.1.2.10", 1, "10.1.3.10", SYN, 1, 100, T0, L2, S2, L3, END);
	hs_an_ecmp(ptr, npool, topo, L2, 0, 0.25, &e);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.groups[0].n, 2);
	assert_true(fabs(e.groups[0].imbalance - 1.0) < 1e-9);
	assert_false(e.groups[0].flagged);
	hs_ecmp_free(&e);
}

/* ---- 007 blame --------------------------------------------------------------- */

static const struct hs_blame_link *find_blame(const struct hs_blame *b,
					      const struct hs_blame_epoch *ep, int x, int y)
{
	for (size_t i = 0; i < ep->nlinks; i++) {
		const struct hs_blame_link *l = &b->links[ep->link_off + i];
		if (l->a == (x < y ? x : y) && l->b == (x < y ? y : x))
			return l;
	}
	return NULL;
}

static void test_blame(void **state)
{
	struct hs_blame b;
	struct hs_blame_cfg cfg = { .epoch_ns = 30 * SEC, .min_share = -1, .k = -1 };
	char src[32];

	(void)state;
	/* six flows over leaf1 > spine2 retry their SYN: three to leaf2, three
	 * to leaf3; the first try of each was lost after leaf1 */
	for (int i = 0; i < 6; i++) {
		snprintf(src, sizeof(src), "10.1.1.%d", 10 + i);
		const char *dst = i < 3 ? "10.1.2.10" : "10.1.3.10";
		mk(src, 100, dst, SYN, 1000, 60, T0 + (uint64_t)i * SEC, L1, END);
		mk(src, 100, dst, SYN, 1000, 60, T0 + (uint64_t)i * SEC + SEC / 2, L1, S2,
		   i < 3 ? L2 : L3, END);
	}
	/* healthy flows over spine1, seen twice with different sequence numbers */
	for (int i = 0; i < 6; i++) {
		snprintf(src, sizeof(src), "10.1.2.%d", 40 + i);
		mk(src, 200, "10.1.3.10", SYN, 5, 60, T0 + SEC, L2, S1, L3, END);
		mk(src, 200, "10.1.3.10", ACK | 0x01, 6, 52, T0 + 2 * SEC, L2, S1, L3, END);
	}
	/* a repeated pure ACK is not a retransmission */
	mk("10.1.3.77", 300, "10.1.2.77", ACK, 9, 52, T0 + SEC, L3, S1, L2, END);
	mk("10.1.3.77", 300, "10.1.2.77", ACK, 9, 52, T0 + 2 * SEC, L3, S1, L2, END);
	/* a retransmitted data segment in the next epoch, over leaf3 > spine1 > leaf2 */
	mk("10.1.3.78", 301, "10.1.2.78", ACK, 9, 1500, T0 + 31 * SEC, L3, S1, L2, END);
	mk("10.1.3.78", 301, "10.1.2.78", ACK, 9, 1500, T0 + 32 * SEC, L3, S1, L2, END);

	hs_an_blame(ptr, npool, topo, &cfg, &b);
	assert_int_equal(b.nepochs, 2);
	const struct hs_blame_epoch *e0 = &b.epochs[0], *e1 = &b.epochs[1];
	assert_int_equal(e0->start, T0);
	assert_int_equal(e1->start, T0 + 30 * SEC);
	assert_int_equal(e0->flows, 13);
	assert_int_equal(e0->retx_flows, 6);
	assert_true(fabs(e0->total - 6.0) < 1e-9);
	assert_int_equal(e0->nlinks, 3);

	const struct hs_blame_link *top = &b.links[e0->link_off];
	assert_int_equal(top->a, S2);	/* a < b by topology index */
	assert_int_equal(top->b, L1);
	assert_true(fabs(top->votes - 3.0) < 1e-9);
	assert_int_equal(top->flows, 6);
	assert_true(top->reported);
	for (uint32_t i = 0; i < top->flows; i++)
		assert_int_equal(b.flows[top->flow_off + i].sport, 100);
	const struct hs_blame_link *s2l2 = find_blame(&b, e0, S2, L2);
	assert_non_null(s2l2);
	assert_true(fabs(s2l2->votes - 1.5) < 1e-9);
	assert_int_equal(s2l2->flows, 3);
	assert_false(s2l2->reported);
	/* what it had to exceed: the other five links' mean 0.9 plus 3 x 1.2 */
	assert_true(fabs(s2l2->fence - 4.5) < 1e-9);
	assert_true(top->votes > top->fence);
	assert_int_equal(e0->no_path, 0);
	assert_int_equal(e0->retx_looped, 0);
	assert_null(find_blame(&b, e0, S1, L2));	/* the pure ACKs cast nothing */

	assert_int_equal(e1->retx_flows, 1);
	assert_int_equal(e1->nlinks, 2);
	assert_true(fabs(b.links[e1->link_off].votes - 0.5) < 1e-9);
	hs_blame_free(&b);

	/* one epoch of a minute holds both */
	cfg.epoch_ns = 60 * SEC;
	hs_an_blame(ptr, npool, topo, &cfg, &b);
	assert_int_equal(b.nepochs, 1);
	assert_int_equal(b.epochs[0].retx_flows, 7);
	hs_blame_free(&b);
}

static void test_blame_dropped_path(void **state)
{
	struct hs_blame b;

	(void)state;
	/* a flow whose SYN-ACK is lost after leaf2 each time; its one delivered
	 * ACK shows it goes over spine1 */
	mk("10.1.2.10", 7, "10.1.3.10", ACK, 1, 52, T0, L2, S1, L3, END);
	mk("10.1.2.10", 7, "10.1.3.10", SYN | ACK, 5, 60, T0 + SEC, L2, END);
	mk("10.1.2.10", 7, "10.1.3.10", SYN | ACK, 5, 60, T0 + 2 * SEC, L2, END);
	/* a flow lost after spine2 toward leaf1 (one way): path leaf3 > spine2 > leaf1 */
	mk("10.1.3.11", 8, "10.1.1.10", SYN, 5, 60, T0, L3, S2, END);
	mk("10.1.3.11", 8, "10.1.1.10", SYN, 5, 60, T0 + SEC, L3, S2, END);

	hs_an_blame(ptr, npool, topo, NULL, &b);
	assert_int_equal(b.nepochs, 1);
	assert_int_equal(b.epochs[0].retx_flows, 2);
	/* the first flow's longest path is its delivered ACK's: two links */
	const struct hs_blame_link *l = find_blame(&b, &b.epochs[0], L2, S1);
	assert_non_null(l);
	assert_true(fabs(l->votes - 0.5) < 1e-9);
	/* the second: leaf3 - spine2 and the expected spine2 - leaf1 */
	l = find_blame(&b, &b.epochs[0], S2, L1);
	assert_non_null(l);
	assert_true(fabs(l->votes - 0.5) < 1e-9);
	assert_non_null(find_blame(&b, &b.epochs[0], L3, S2));
	hs_blame_free(&b);
}

/* 007's fallback: a flow seen at one switch only takes a traceroute's path */
struct fake_paths {
	int calls;
	struct hs_flowkey asked;
};

static int fake_traceroute(void *arg, const struct hs_flowkey *k, int *sw, int max)
{
	struct fake_paths *p = arg;
	static const int path[] = { L1, S2, L3 };

	p->calls++;
	p->asked = *k;
	assert_true(max >= 3);
	memcpy(sw, path, sizeof(path));
	return 3;
}

static void test_blame_traceroute_path(void **state)
{
	struct hs_blame b;
	struct fake_paths fp = { 0 };
	struct hs_blame_cfg cfg = { .min_share = -1, .k = -1, .path = fake_traceroute,
				    .path_arg = &fp };

	(void)state;
	/* a SYN retried twice, mirrored at leaf1 only: no link from its traces */
	mk("10.1.1.10", 9, "10.1.3.10", SYN, 5, 60, T0, L1, END);
	mk("10.1.1.10", 9, "10.1.3.10", SYN, 5, 60, T0 + SEC, L1, END);
	/* a flow with a path of its own does not ask */
	mk("10.1.2.10", 7, "10.1.3.10", SYN, 5, 60, T0, L2, S1, L3, END);
	mk("10.1.2.10", 7, "10.1.3.10", SYN, 5, 60, T0 + SEC, L2, S1, L3, END);

	hs_an_blame(ptr, npool, topo, NULL, &b);
	assert_int_equal(b.epochs[0].retx_flows, 2);
	assert_null(find_blame(&b, &b.epochs[0], L1, S2));	/* traces only: no path */
	assert_int_equal(b.epochs[0].no_path, 1);
	hs_blame_free(&b);

	hs_an_blame(ptr, npool, topo, &cfg, &b);
	assert_int_equal(b.epochs[0].no_path, 0);
	assert_int_equal(fp.calls, 1);
	assert_int_equal(fp.asked.sport, 9);
	const struct hs_blame_link *l = find_blame(&b, &b.epochs[0], L1, S2);
	assert_non_null(l);
	assert_true(fabs(l->votes - 0.5) < 1e-9);
	l = find_blame(&b, &b.epochs[0], S2, L3);
	assert_non_null(l);
	assert_true(fabs(l->votes - 0.5) < 1e-9);
	/* the other flow still votes on its own path */
	l = find_blame(&b, &b.epochs[0], L2, S1);
	assert_non_null(l);
	assert_true(fabs(l->votes - 0.5) < 1e-9);
	hs_blame_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_drops_resolve_and_rank, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drops_ttl_expired, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drops_persistent_and_scope, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loops, setup, teardown),
		cmocka_unit_test(test_percentile),
		cmocka_unit_test_setup_teardown(test_latency, setup, teardown),
		cmocka_unit_test_setup_teardown(test_latency_outlier_median, setup, teardown),
		cmocka_unit_test(test_imbalance),
		cmocka_unit_test_setup_teardown(test_ecmp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blame, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blame_dropped_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blame_traceroute_path, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
