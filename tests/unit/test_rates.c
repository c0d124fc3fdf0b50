/* test_rates.c - Planck's rate estimator, link sums, utilization, the alert
 * condition parser and alert firing on hand-built samples and traces */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "alert.h"
#include "rates.h"

#define MS 1000000ULL
#define SEC HS_NS_PER_SEC
#define T0 (1700000000ULL * HS_NS_PER_SEC)

/* leaf1-spine1 has a speed, leaf1-spine2 has none */
static const char fabric[] =
	"switch spine1 role spine mirror 10.255.0.1\n"
	"switch spine2 role spine mirror 10.255.0.2\n"
	"switch leaf1 role leaf mirror 10.255.0.3\n"
	"switch leaf2 role leaf mirror 10.255.0.4\n"
	"link leaf1 s1 spine1 l1 speed 100M\n"
	"link leaf1 s2 spine2 l1\n"
	"link leaf2 s1 spine1 l2 speed 1G\n"
	"link leaf2 s2 spine2 l2 speed 1gbit\n"
	"subnet leaf1 10.1.1.0/24\n"
	"subnet leaf2 10.1.2.0/24\n";

enum { S1, S2, L1, L2, END = -100 };

static struct hs_topo *topo;

static int setup(void **state)
{
	char err[256];

	(void)state;
	topo = hs_topo_parse(fabric, "fabric", err, sizeof(err));
	if (!topo)
		fail_msg("%s", err);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	hs_topo_free(topo);
	topo = NULL;
	return 0;
}

static struct hs_flowkey key(const char *src, uint16_t sport, const char *dst, uint16_t dport)
{
	struct hs_flowkey k;

	memset(&k, 0, sizeof(k));
	assert_int_equal(hs_addr_parse(src, &k.src), 0);
	assert_int_equal(hs_addr_parse(dst, &k.dst), 0);
	k.sport = sport;
	k.dport = dport;
	k.proto = 6;
	return k;
}

/* a TCP trace of k at ts over the switches listed, END-terminated */
static struct hs_trace trace(const struct hs_flowkey *k, uint32_t seq, uint64_t ts, ...)
{
	struct hs_trace t;
	va_list ap;

	memset(&t, 0, sizeof(t));
	t.key = *k;
	t.seq = seq;
	t.len = 1500;
	va_start(ap, ts);
	for (int sw = va_arg(ap, int); sw != END; sw = va_arg(ap, int)) {
		struct hs_hop *h = &t.hops[t.nhops];
		h->sw = sw;
		h->addr = topo->sw[sw].mirror;
		h->ts_ns = ts + t.nhops * 10000;
		h->ttl = (uint8_t)(64 - t.nhops);
		t.nhops++;
	}
	va_end(ap);
	t.key_hash = hs_flowkey_hash(&t.key);
	hs_trace_classify(&t, topo);
	return t;
}

/* ---- the estimator ----------------------------------------------------------- */

static void test_one_sample_no_rate(void **state)
{
	struct hs_rflow f;
	double bps;

	(void)state;
	hs_rflow_init(&f);
	assert_false(hs_rflow_rate(&f, T0, SEC, &bps));
	assert_int_equal(hs_rflow_sample(&f, 1000, T0), HS_RS_FIRST);
	assert_false(hs_rflow_rate(&f, T0, SEC, &bps));
	/* a pure ACK repeats the sequence: still one point, no rate */
	assert_int_equal(hs_rflow_sample(&f, 1000, T0 + 200 * MS), HS_RS_SAME);
	assert_false(hs_rflow_rate(&f, T0 + 200 * MS, SEC, &bps));
}

static void test_three_samples(void **state)
{
	struct hs_rflow f;
	struct hs_rwin w;
	double bps = 0;

	(void)state;
	hs_rflow_init(&f);
	hs_rflow_sample(&f, 1000, T0);
	assert_int_equal(hs_rflow_sample(&f, 1000 + 62500, T0 + 50 * MS), HS_RS_ADVANCE);
	/* two samples: no rate yet */
	assert_false(hs_rflow_rate(&f, T0 + 50 * MS, SEC, &bps));
	assert_int_equal(hs_rflow_sample(&f, 1000 + 125000, T0 + 100 * MS), HS_RS_ADVANCE);
	/* 125000 bytes in 100 ms: 10 Mbit/s, from three samples: rough */
	hs_rflow_window(&f, T0 + 100 * MS, SEC, &w);
	assert_true(w.has_rate);
	assert_float_equal(w.bps, 10e6, 1);
	assert_int_equal(w.samples, 3);
	assert_true(hs_rate_rough(w.samples));
	assert_float_equal(w.bytes, 125000, 0);
	/* outside the window: no rate, no bytes */
	assert_false(hs_rflow_rate(&f, T0 + 100 * MS + 2 * SEC, SEC, &bps));
	hs_rflow_window(&f, T0 + 100 * MS + 2 * SEC, SEC, &w);
	assert_float_equal(w.bytes, 0, 0);
	assert_int_equal(w.samples, 0);
}

/* a flow seen at its SYN (at T0) and its FIN, over the window ending at now */
static void syn_fin(uint32_t bytes, uint64_t fin_after, uint64_t now, struct hs_rwin *w)
{
	struct hs_rflow f;

	hs_rflow_init(&f);
	hs_rflow_sample(&f, 5000, T0);
	hs_rflow_sample(&f, 5000 + bytes, T0 + fin_after);
	hs_rflow_window(&f, now, SEC, w);
}

/* a connection mirrored only at its SYN and FIN (the default match) */
static void test_syn_fin_no_rate(void **state)
{
	struct hs_rflow f;
	struct hs_rwin w;

	(void)state;
	/* 1024 bytes between SYN and FIN, 13 us apart: bytes in the window, no rate */
	syn_fin(1025, 13000, T0 + 500 * MS, &w);
	assert_false(w.has_rate);
	assert_int_equal(w.samples, 2);
	assert_float_equal(w.bytes, 1025, 0);
	/* far apart: still two samples, no rate */
	syn_fin(1000000, 800 * MS, T0 + 900 * MS, &w);
	assert_false(w.has_rate);
	assert_float_equal(w.bytes, 1000000, 0);
	/* a SYN long before the window and the FIN in it: one sample in the
	 * window and no bytes (the 60 s between them are not seen) */
	syn_fin(10000000, 60 * SEC, T0 + 60 * SEC, &w);
	assert_false(w.has_rate);
	assert_int_equal(w.samples, 1);
	assert_float_equal(w.bytes, 0, 0);
	/* every packet of a short connection mirrored: a burst of microseconds
	 * is bytes, not a rate */
	hs_rflow_init(&f);
	for (int i = 0; i < 5; i++)
		hs_rflow_sample(&f, (uint32_t)(5000 + 1 + i * 1448), T0 + (uint64_t)i * 3000);
	hs_rflow_window(&f, T0 + 500 * MS, SEC, &w);
	assert_false(w.has_rate);
	assert_int_equal(w.samples, 5);
	assert_float_equal(w.bytes, 4 * 1448, 0);
}

/* a steady flow: the rate within a few % of the truth, and the bytes in the
 * window the sequence advance inside it, interpolated at its start */
static void test_steady_flow(void **state)
{
	struct hs_rflow f;
	struct hs_rwin w;

	(void)state;
	/* 1 Mbit/s (125000 B/s), a sample every 100 ms */
	hs_rflow_init(&f);
	for (int i = 0; i <= 20; i++)
		hs_rflow_sample(&f, (uint32_t)(i * 12500), T0 + (uint64_t)i * 100 * MS);
	/* the window [1.05 s, 2.05 s]: 0.95 s of the flow, its last sample at 2 s */
	hs_rflow_window(&f, T0 + 2050 * MS, SEC, &w);
	assert_true(w.has_rate);
	assert_float_equal(w.bps, 1e6, 1e6 * 0.02);
	assert_float_equal(w.bytes, 0.95 * 125000, 1);
	assert_int_equal(w.samples, 10);
	assert_false(hs_rate_rough(w.samples));
	/* fully mirrored, a packet a millisecond at 12 Mbit/s, with jitter */
	hs_rflow_init(&f);
	uint64_t t = T0;
	for (int i = 0; i < 3000; i++) {
		t = T0 + (uint64_t)i * MS + (uint64_t)((i * 7919) % 400) * 1000;
		hs_rflow_sample(&f, (uint32_t)(1500 * i), t);
	}
	hs_rflow_window(&f, T0 + 3 * SEC, SEC, &w);
	assert_true(w.has_rate);
	assert_float_equal(w.bps, 12e6, 12e6 * 0.03);
	assert_float_equal(w.bytes * 8, 12e6, 12e6 * 0.03);
}

static void test_few_samples_over_window(void **state)
{
	struct hs_rflow f;
	double bps = 0;

	(void)state;
	hs_rflow_init(&f);
	/* 1 Mbit/s for 3 s, a sample every 10 ms (125000 B/s = 1250 B per 10 ms) */
	for (int i = 0; i <= 300; i++)
		hs_rflow_sample(&f, (uint32_t)(i * 1250), T0 + (uint64_t)i * 10 * MS);
	assert_true(hs_rflow_rate(&f, T0 + 3 * SEC, SEC, &bps));
	assert_float_equal(bps, 1e6, 1e3);
	/* a window shorter than the spacing of kept samples still gives a rate */
	assert_true(hs_rflow_rate(&f, T0 + 3 * SEC, 150 * MS, &bps));
	assert_float_equal(bps, 1e6, 1e3);
	/* then twice as fast for a second: the 1 s window sees only that */
	for (int i = 1; i <= 100; i++)
		hs_rflow_sample(&f, (uint32_t)(300 * 1250 + i * 2500), T0 + 3 * SEC + (uint64_t)i * 10 * MS);
	assert_true(hs_rflow_rate(&f, T0 + 4 * SEC, SEC, &bps));
	assert_float_equal(bps, 2e6, 2e4);
	assert_int_equal(f.retx, 0);
}

static void test_seq_wrap(void **state)
{
	struct hs_rflow f;
	double bps = 0;

	(void)state;
	hs_rflow_init(&f);
	/* 4 MB across the 32-bit wrap in 1 s */
	hs_rflow_sample(&f, 0xFFFFFFFFu - 1999999u, T0);
	assert_int_equal(hs_rflow_sample(&f, 0xFFFFF000u, T0 + 300 * MS), HS_RS_ADVANCE);
	assert_int_equal(hs_rflow_sample(&f, 2000000u, T0 + SEC), HS_RS_ADVANCE);
	assert_true(hs_rflow_rate(&f, T0 + SEC, 2 * SEC, &bps));
	assert_float_equal(bps, 4000000.0 * 8, 1);
	assert_int_equal(f.retx, 0);
	/* a retransmission from before the wrap is below the highest */
	assert_int_equal(hs_rflow_sample(&f, 0xFFFFF000u, T0 + SEC + 10 * MS), HS_RS_RETX);
	assert_true(hs_rflow_rate(&f, T0 + SEC + 10 * MS, 2 * SEC, &bps));
	assert_float_equal(bps, 4000000.0 * 8, 1);
}

static void test_retx_and_reorder(void **state)
{
	struct hs_rflow f;
	double bps = 0;

	(void)state;
	hs_rflow_init(&f);
	hs_rflow_sample(&f, 100000, T0);
	hs_rflow_sample(&f, 200000, T0 + 100 * MS);
	hs_rflow_sample(&f, 300000, T0 + 200 * MS);
	/* an old segment again, late: must not make the rate bigger */
	assert_int_equal(hs_rflow_sample(&f, 100000, T0 + 210 * MS), HS_RS_RETX);
	/* a reordered one, just below the highest */
	assert_int_equal(hs_rflow_sample(&f, 250000, T0 + 220 * MS), HS_RS_RETX);
	assert_int_equal(f.retx, 2);
	assert_true(hs_rflow_rate(&f, T0 + 220 * MS, SEC, &bps));
	/* 200000 B in 200 ms */
	assert_float_equal(bps, 8e6, 1);
	/* the sequence advances again from where it was */
	assert_int_equal(hs_rflow_sample(&f, 400000, T0 + 300 * MS), HS_RS_ADVANCE);
	assert_true(hs_rflow_rate(&f, T0 + 300 * MS, SEC, &bps));
	assert_float_equal(bps, 8e6, 1);
}

/* ---- the table, links, utilization --------------------------------------------- */

static void feed(struct hs_rates *r, const struct hs_flowkey *k, uint64_t bps, uint64_t from,
		 uint64_t to, int a, int b, int c)
{
	uint64_t step = 10 * MS;
	for (uint64_t t = from; t <= to; t += step) {
		uint32_t seq = (uint32_t)((double)(t - from) / 1e9 * (double)bps / 8);
		struct hs_trace tr = trace(k, seq, t, a, b, c, END);
		hs_rates_on_trace(r, &tr);
	}
}

static void test_link_sums_and_util(void **state)
{
	struct hs_rates *r = hs_rates_new(16);
	struct hs_flowkey k1 = key("10.1.1.11", 40001, "10.1.2.11", 5001);
	struct hs_flowkey k2 = key("10.1.1.12", 40002, "10.1.2.12", 5001);
	struct hs_flowkey k3 = key("10.1.1.12", 40003, "10.1.2.12", 5001);

	(void)state;
	hs_rates_set_topo(r, topo);
	feed(r, &k1, 40000000, T0, T0 + SEC, L1, S1, L2);	/* 40M over leaf1-spine1 */
	feed(r, &k2, 20000000, T0, T0 + SEC, L1, S1, L2);	/* 20M over the same */
	feed(r, &k3, 8000000, T0, T0 + SEC, L1, S2, L2);	/* 8M over leaf1-spine2 */
	assert_int_equal(r->nflows, 3);

	struct hs_rate_report rep;
	hs_rates_report(r, SEC, &rep);
	assert_int_equal(rep.nflows, 3);
	assert_float_equal(rep.flows[0].bps, 40e6, 4e5);
	assert_float_equal(rep.flows[1].bps, 20e6, 2e5);
	assert_float_equal(rep.flows[2].bps, 8e6, 1e5);
	/* 4 directed links carry traffic: l1>s1 and s1>l2 (60M), l1>s2 and s2>l2 (8M) */
	assert_int_equal(rep.nlinks, 4);
	const struct hs_rate_link *top = &rep.links[0], *third = &rep.links[2];
	assert_float_equal(top->bps, 60e6, 6e5);
	assert_int_equal(top->flows, 2);
	assert_true(top->has_util);
	bool saw_l1s1 = false, saw_l1s2 = false;
	for (size_t i = 0; i < rep.nlinks; i++) {
		const struct hs_rate_link *l = &rep.links[i];
		if (l->a == L1 && l->b == S1) {
			saw_l1s1 = true;
			assert_float_equal(l->util, 0.6, 0.01);	/* 60M of 100M */
		}
		if (l->a == L1 && l->b == S2) {
			saw_l1s2 = true;
			assert_false(l->has_util);		/* no speed */
			assert_float_equal(l->bps, 8e6, 1e5);
		}
		if (l->a == S1 && l->b == L2)
			assert_float_equal(l->util, 0.06, 0.001);	/* 60M of 1G */
	}
	assert_true(saw_l1s1 && saw_l1s2);
	assert_true(third->bps < top->bps);
	hs_rate_report_free(&rep);

	/* the table's own sums, for alerts and watch */
	hs_rates_compute(r, r->now, SEC, NULL, NULL, NULL);
	int l = hs_topo_link(topo, L1, S1);
	int d = 2 * l + (topo->links[l].a == L1 ? 0 : 1);
	assert_float_equal(r->link_bps[d], 60e6, 6e5);
	assert_float_equal(r->link_bps[d ^ 1], 0, 0);
	double util;
	assert_true(hs_link_util(topo, d, r->link_bps[d], &util));
	assert_false(hs_link_util(topo, 2 * hs_topo_link(topo, L1, S2), 1e6, &util));
	assert_false(hs_link_util(NULL, d, 1e6, &util));

	/* two seconds later with no samples nothing has a rate */
	hs_rates_compute(r, r->now + 2 * SEC, SEC, NULL, NULL, NULL);
	assert_float_equal(r->link_bps[d], 0, 0);
	hs_rates_free(r);
}

/* the lab's default mirroring: short connections seen at SYN and FIN, a long
 * one at its SYN long ago. The link carries what the window saw: the bytes
 * between each SYN and FIN, over the window; no flow has a rate */
static void test_link_syn_fin(void **state)
{
	struct hs_rates *r = hs_rates_new(128);
	struct hs_flowkey lk = key("10.1.1.11", 39999, "10.1.2.11", 5001);

	(void)state;
	hs_rates_set_topo(r, topo);
	struct hs_trace t = trace(&lk, 77, T0 - 30 * SEC, L1, S1, L2, END);
	hs_rates_on_trace(r, &t);
	for (int i = 0; i < 50; i++) {
		struct hs_flowkey k = key("10.1.1.11", (uint16_t)(40000 + i), "10.1.2.11", 5001);
		uint64_t ts = T0 + (uint64_t)i * 20 * MS;
		uint32_t isn = (uint32_t)i * 2654435761u;
		t = trace(&k, isn, ts, L1, S1, L2, END);
		hs_rates_on_trace(r, &t);
		t = trace(&k, isn + 1025, ts + 13000, L1, S1, L2, END);
		hs_rates_on_trace(r, &t);
	}
	t = trace(&lk, 77 + 50000000, T0 + SEC - MS, L1, S1, L2, END);
	hs_rates_on_trace(r, &t);

	struct hs_rate_report rep;
	hs_rates_report(r, SEC, &rep);
	assert_int_equal(rep.nrated, 0);
	assert_int_equal(rep.nflows, 50);
	assert_false(rep.flows[0].has_rate);
	assert_float_equal(rep.flows[0].bytes, 1025, 0);
	int l = hs_topo_link(topo, L1, S1);
	int d = 2 * l + (topo->links[l].a == L1 ? 0 : 1);
	bool seen = false;
	for (size_t i = 0; i < rep.nlinks; i++) {
		if (rep.links[i].link != l || rep.links[i].a != L1)
			continue;
		seen = true;
		assert_float_equal(rep.links[i].bps, 50 * 1025 * 8, 1);
		assert_int_equal(rep.links[i].flows, 50);
		/* the long flow moved no bytes: not counted */
		assert_int_equal(rep.links[i].samples, 100);
		assert_float_equal(rep.links[i].util, 50 * 1025 * 8 / 100e6, 1e-9);
	}
	assert_true(seen);
	hs_rate_report_free(&rep);
	/* the same figures for alerts and watch */
	hs_rates_compute(r, r->now, SEC, NULL, NULL, NULL);
	assert_float_equal(r->link_bps[d], 50 * 1025 * 8, 1);
	hs_rates_free(r);
}

static void test_path_kept(void **state)
{
	struct hs_rates *r = hs_rates_new(16);
	struct hs_flowkey k = key("10.1.1.11", 40001, "10.1.2.11", 5001);
	struct hs_flowkey u = key("10.1.1.11", 53, "10.1.2.11", 53);

	(void)state;
	hs_rates_set_topo(r, topo);
	/* the first copy seen only at leaf1: no link yet */
	struct hs_trace t = trace(&k, 1000, T0, L1, END);
	hs_rates_on_trace(r, &t);
	struct hs_rflow *f = hs_rates_find(r, &k);
	assert_non_null(f);
	assert_int_equal(f->npath, 0);
	t = trace(&k, 2000, T0 + 10 * MS, L1, S2, L2, END);
	hs_rates_on_trace(r, &t);
	assert_int_equal(f->npath, 2);
	int l = hs_topo_link(topo, L1, S2);
	assert_int_equal(f->path[0], 2 * l + (topo->links[l].a == L1 ? 0 : 1));
	/* a later trace that stops at leaf1 does not erase it */
	t = trace(&k, 3000, T0 + 20 * MS, L1, END);
	hs_rates_on_trace(r, &t);
	assert_int_equal(f->npath, 2);
	/* a UDP trace moves time but is no sample */
	u.proto = 17;
	t = trace(&u, 0, T0 + 5 * SEC, L1, S1, L2, END);
	hs_rates_on_trace(r, &t);
	assert_int_equal(r->now, T0 + 5 * SEC);
	assert_null(hs_rates_find(r, &u));
	assert_int_equal(r->not_tcp, 1);
	/* probes are not samples */
	t = trace(&k, 9000, T0 + 6 * SEC, L1, S2, L2, END);
	t.flags |= HS_TF_PROBE;
	hs_rates_on_trace(r, &t);
	assert_int_equal(f->samples, 3);
	hs_rates_free(r);
}

static void test_eviction(void **state)
{
	struct hs_rates *r = hs_rates_new(4);

	(void)state;
	for (uint16_t p = 1; p <= 10; p++) {
		struct hs_flowkey k = key("10.1.1.11", p, "10.1.2.11", 5001);
		hs_rates_sample(r, &k, 1, T0 + p * MS, NULL, 0);
		/* the newest flow is always found after eviction */
		assert_non_null(hs_rates_find(r, &k));
	}
	assert_int_equal(r->nflows, 4);
	assert_int_equal(r->evicted, 6);
	struct hs_flowkey old = key("10.1.1.11", 1, "10.1.2.11", 5001);
	struct hs_flowkey kept = key("10.1.1.11", 7, "10.1.2.11", 5001);
	assert_null(hs_rates_find(r, &old));
	assert_non_null(hs_rates_find(r, &kept));
	/* touching flow 7 keeps it over 8 when the next one comes */
	hs_rates_sample(r, &kept, 2, T0 + 20 * MS, NULL, 0);
	struct hs_flowkey k11 = key("10.1.1.11", 11, "10.1.2.11", 5001);
	hs_rates_sample(r, &k11, 1, T0 + 21 * MS, NULL, 0);
	assert_non_null(hs_rates_find(r, &kept));
	struct hs_flowkey k8 = key("10.1.1.11", 8, "10.1.2.11", 5001);
	assert_null(hs_rates_find(r, &k8));
	hs_rates_free(r);
}

/* A small table (8 flows, an index of 16 entries) with many flows through
 * it: runs of several occupied entries, evictions from their middles, whose
 * later entries shift back. After every sample the flows that can be found
 * are exactly as many as the table holds, the newest among them; an entry
 * shifted wrong loses a flow or keeps a ghost. */
static void test_eviction_clusters(void **state)
{
	struct hs_rates *r = hs_rates_new(8);
	const int n = 600;

	(void)state;
	for (int p = 1; p <= n; p++) {
		struct hs_flowkey k = key("10.1.1.11", (uint16_t)p, "10.1.2.11", 5001);
		hs_rates_sample(r, &k, 1, T0 + (uint64_t)p * MS, NULL, 0);
		/* older flows sampled again outlive newer ones (the sweep passes
		 * over them), so evictions come from the starts and middles of
		 * runs as well as their ends */
		for (int q = p - 7; q < p; q += 3) {
			struct hs_flowkey kq = key("10.1.1.11", (uint16_t)q, "10.1.2.11", 5001);
			if (q > 0 && hs_rates_find(r, &kq))
				hs_rates_sample(r, &kq, 2, T0 + (uint64_t)p * MS + 1, NULL, 0);
		}
		assert_non_null(hs_rates_find(r, &k));
		size_t found = 0;
		for (int q = 1; q <= p; q++) {
			struct hs_flowkey kq = key("10.1.1.11", (uint16_t)q, "10.1.2.11", 5001);
			const struct hs_rflow *f = hs_rates_find(r, &kq);
			if (f) {
				assert_true(hs_flowkey_eq(&f->key, &kq));
				assert_true(f->used);
				found++;
			}
		}
		assert_int_equal(found, r->nflows);
		assert_int_equal(r->nflows + r->evicted, (size_t)p);
	}
	assert_int_equal(r->nflows, 8);
	hs_rates_free(r);
}

static void test_drops_per_sec(void **state)
{
	struct hs_rates *r = hs_rates_new(4);

	(void)state;
	for (int i = 0; i < 20; i++)
		hs_rates_drop(r, T0 + (uint64_t)i * 50 * MS);	/* 20 in 1 s */
	assert_float_equal(hs_rates_drops_per_sec(r, T0 + 950 * MS, SEC), 20.0, 0.01);
	assert_float_equal(hs_rates_drops_per_sec(r, T0 + 5 * SEC, SEC), 0.0, 0.0);
	hs_rates_free(r);
}

/* ---- conditions ------------------------------------------------------------------ */

static void bad(const char *text, const char *want)
{
	struct hs_acond c;
	char err[256];

	assert_int_equal(hs_acond_parse(text, topo, &c, err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("'%s': got '%s', want '%s'", text, err, want);
}

static void test_parse(void **state)
{
	struct hs_acond c;
	char err[256];

	(void)state;
	assert_int_equal(hs_acond_parse("link leaf1-spine1 util > 80%", topo, &c, err, sizeof(err)), 0);
	assert_int_equal(c.kind, HS_AK_LINK);
	assert_int_equal(c.metric, HS_AM_UTIL);
	assert_true(c.above);
	assert_float_equal(c.threshold, 80, 0);
	assert_int_equal(c.link, hs_topo_link(topo, L1, S1));
	assert_int_equal(hs_acond_parse("link spine1-leaf1 bps < 5M", topo, &c, err, sizeof(err)), 0);
	assert_false(c.above);
	assert_float_equal(c.threshold, 5e6, 0);
	assert_int_equal(c.link, hs_topo_link(topo, L1, S1));
	assert_int_equal(hs_acond_parse("  drops   >  10/s ", NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(c.kind, HS_AK_DROPS);
	assert_float_equal(c.threshold, 10, 0);
	assert_int_equal(hs_acond_parse("retx > 2.5", NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(c.kind, HS_AK_RETX);
	assert_int_equal(hs_acond_parse("flow 10.1.1.11 > 10.1.2.11:5001 bps > 1.5G", NULL, &c, err,
					sizeof(err)), 0);
	assert_int_equal(c.kind, HS_AK_FLOW);
	assert_int_equal(c.sport, -1);
	assert_int_equal(c.dport, 5001);
	assert_float_equal(c.threshold, 1.5e9, 0);
	assert_int_equal(hs_acond_parse("flow [fd00::1]:80 > fd00::2 bps > 1k", NULL, &c, err,
					sizeof(err)), 0);
	assert_int_equal(c.sport, 80);
	assert_int_equal(c.src.af, 6);

	bad("", "expected link, flow, drops or retx at column 1");
	bad("links leaf1-spine1 util > 80%", "expected link, flow, drops or retx at column 1, got 'links'");
	bad("link leaf1-spine1 util > 80x", "bad threshold '80x' at column 26");
	bad("link leaf1-spine1 util >= 80%", "expected '>' or '<' at column 24, got '>='");
	bad("link leaf1-spine1 load > 80%", "expected util or bps at column 19, got 'load'");
	bad("link leaf1-leaf2 util > 80%", "no link between 'leaf1' and 'leaf2' at column 6");
	bad("link leaf9-spine1 util > 80%", "unknown switch in 'leaf9-spine1' at column 6");
	bad("link leaf1spine1 util > 80%", "bad link 'leaf1spine1' at column 6");
	bad("link leaf1-spine1 util > 80% now", "expected end of condition at column 30, got 'now'");
	bad("link leaf1-spine1 util >", "expected a threshold at column 25 (end of condition)");
	bad("link leaf1-spine1 bps > fast", "bad threshold 'fast' at column 25");
	bad("drops > -1/s", "bad threshold '-1/s' at column 9");
	bad("drops > 10/m", "bad threshold '10/m' at column 9");
	bad("flow 10.1.1.11 10.1.2.11 bps > 1M", "expected '>' between the endpoints at column 16");
	bad("flow 10.1.1.x > 10.1.2.11 bps > 1M", "bad endpoint '10.1.1.x' at column 6");
	bad("flow 10.1.1.1:99999 > 10.1.2.11 bps > 1M", "bad port '99999' at column 6");
	bad("flow 10.1.1.1 > 10.1.2.11 util > 1M", "expected bps at column 27, got 'util'");
	/* without a topology a link condition says what it needs */
	assert_int_equal(hs_acond_parse("link leaf1-spine1 util > 80%", NULL, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "needs a topology"));
}

/* ---- firing and re-arming ----------------------------------------------------------- */

struct fired {
	int n;
	uint32_t id[8];
	double value[8];
	uint64_t ts[8];
};

static void on_fire(void *arg, const struct hs_alert *a, double v, uint64_t ts)
{
	struct fired *f = arg;

	if (f->n < 8) {
		f->id[f->n] = a->id;
		f->value[f->n] = v;
		f->ts[f->n] = ts;
	}
	f->n++;
}

static void test_fire_rearm(void **state)
{
	struct hs_rates *r = hs_rates_new(16);
	struct hs_alerts as;
	struct fired f = { 0 };
	char err[256];
	struct hs_flowkey k = key("10.1.1.11", 40001, "10.1.2.11", 5001);

	(void)state;
	hs_rates_set_topo(r, topo);
	hs_alerts_init(&as);
	int util = hs_alerts_add(&as, "link leaf1-spine1 util > 50%", topo, err, sizeof(err));
	/* utilization only against a known speed: refused, nothing kept */
	int nospeed = hs_alerts_add(&as, "link leaf1-spine2 util > 1%", topo, err, sizeof(err));
	assert_int_equal(nospeed, -1);
	assert_string_equal(err, "no speed for 'util' at column 19: link leaf1-spine2 has none in "
			    "the topology (give its link line 'speed RATE', or use bps)");
	int bps = hs_alerts_add(&as, "link spine1-leaf2 bps > 30M", topo, err, sizeof(err));
	assert_int_equal(util, 1);
	assert_int_equal(bps, 2);
	assert_int_equal(hs_alerts_add(&as, "link leaf1-spine1 util > 50", NULL, err, sizeof(err)), -1);
	assert_int_equal(as.n, 2);

	/* 80 Mbit/s over leaf1 > spine1 > leaf2 for 2 s, evaluated every 50 ms */
	uint64_t seq = 0, t;
	for (t = T0; t <= T0 + 2 * SEC; t += 10 * MS) {
		struct hs_trace tr = trace(&k, (uint32_t)seq, t, L1, S1, L2, END);
		hs_rates_on_trace(r, &tr);
		seq += 100000;		/* 100000 B per 10 ms */
		if ((t - T0) % (50 * MS) == 0) {
			hs_rates_compute(r, r->now, SEC, NULL, NULL, NULL);
			hs_alerts_eval(&as, r, r->now, SEC, on_fire, &f);
		}
	}
	/* once each, not at every evaluation, as the window fills: the load is
	 * the bytes of the last second, 30M after 375 ms, 50% after 625 ms */
	assert_int_equal(f.n, 2);
	assert_int_equal(f.id[0], 2);
	assert_true(f.value[0] > 30e6 && f.value[0] < 35e6);
	assert_true(f.ts[0] >= T0 + 375 * MS && f.ts[0] <= T0 + 450 * MS);
	assert_int_equal(f.id[1], 1);
	assert_true(f.value[1] > 50.0 && f.value[1] < 55.0);
	assert_true(f.ts[1] >= T0 + 625 * MS && f.ts[1] <= T0 + 700 * MS);
	assert_false(as.a[0].armed);
	assert_float_equal(as.a[0].value, 80.0, 1.0);
	assert_float_equal(as.a[1].value, 80e6, 1e6);

	/* quiet for 2 s: the condition is false, the alerts re-arm */
	uint64_t quiet = t + 2 * SEC;
	struct hs_flowkey other = key("10.1.2.11", 1, "10.1.1.11", 2);
	hs_rates_sample(r, &other, 1, quiet, NULL, 0);
	hs_rates_compute(r, r->now, SEC, NULL, NULL, NULL);
	hs_alerts_eval(&as, r, r->now, SEC, on_fire, &f);
	assert_int_equal(f.n, 2);
	assert_true(as.a[0].armed);
	assert_true(as.a[1].armed);

	/* the flow comes back: each fires once more */
	for (t = quiet; t <= quiet + SEC; t += 10 * MS) {
		struct hs_trace tr = trace(&k, (uint32_t)seq, t, L1, S1, L2, END);
		hs_rates_on_trace(r, &tr);
		seq += 100000;
		hs_rates_compute(r, r->now, SEC, NULL, NULL, NULL);
		hs_alerts_eval(&as, r, r->now, SEC, on_fire, &f);
	}
	assert_int_equal(f.n, 4);
	assert_int_equal(as.a[0].fired, 2);

	/* deleted alerts are gone; ids are not reused */
	assert_int_equal(hs_alerts_del(&as, 1), 0);
	assert_int_equal(hs_alerts_del(&as, 1), -1);
	assert_int_equal(hs_alerts_add(&as, "drops > 1/s", topo, err, sizeof(err)), 3);
	assert_string_equal(as.a[as.n - 1].text, "drops > 1/s");
	hs_rates_free(r);
}

static void test_fire_drops(void **state)
{
	struct hs_rates *r = hs_rates_new(16);
	struct hs_alerts as;
	struct fired f = { 0 };
	char err[256];
	struct hs_flowkey k = key("10.1.1.11", 40001, "10.1.2.11", 5001);

	(void)state;
	hs_rates_set_topo(r, topo);
	hs_alerts_init(&as);
	assert_int_equal(hs_alerts_add(&as, "drops > 10/s", topo, err, sizeof(err)), 1);
	/* dropped after spine1: 20 per second */
	for (int i = 0; i < 40; i++) {
		struct hs_trace tr = trace(&k, (uint32_t)i, T0 + (uint64_t)i * 50 * MS, L1, S1, END);
		assert_int_equal(tr.outcome, HS_OUT_DROPPED);
		hs_rates_on_trace(r, &tr);
		hs_alerts_eval(&as, r, r->now, SEC, on_fire, &f);
	}
	assert_int_equal(f.n, 1);
	assert_true(f.value[0] > 10);
	hs_rates_free(r);
}

static void test_bps_parse(void **state)
{
	double v;
	char buf[32];

	(void)state;
	assert_int_equal(hs_parse_bps("5M", &v), 0);
	assert_float_equal(v, 5e6, 0);
	assert_int_equal(hs_parse_bps("10gbit", &v), 0);
	assert_float_equal(v, 10e9, 0);
	assert_int_equal(hs_parse_bps("1.5Gbps", &v), 0);
	assert_float_equal(v, 1.5e9, 0);
	assert_int_equal(hs_parse_bps("800", &v), 0);
	assert_float_equal(v, 800, 0);
	assert_int_equal(hs_parse_bps("5X", &v), -1);
	assert_int_equal(hs_parse_bps("-5M", &v), -1);
	assert_int_equal(hs_parse_bps("", &v), -1);
	assert_int_equal(hs_parse_bps("M", &v), -1);
	assert_string_equal(hs_fmt_bps(9.8e6, buf, sizeof(buf)), "9.80M");
	assert_string_equal(hs_fmt_bps(1e9, buf, sizeof(buf)), "1.00G");
	assert_string_equal(hs_fmt_bps(120e3, buf, sizeof(buf)), "120k");
	assert_string_equal(hs_fmt_bps(0, buf, sizeof(buf)), "0");
	struct hs_flowkey k = key("10.1.1.11", 40000, "10.1.2.11", 5001);
	char ep[128];
	assert_string_equal(hs_flowkey_str(&k, ep, sizeof(ep)), "10.1.1.11:40000 > 10.1.2.11:5001");
	k = key("fd00::1", 1, "fd00::2", 2);
	assert_string_equal(hs_flowkey_str(&k, ep, sizeof(ep)), "[fd00::1]:1 > [fd00::2]:2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_sample_no_rate),
		cmocka_unit_test(test_three_samples),
		cmocka_unit_test(test_syn_fin_no_rate),
		cmocka_unit_test(test_steady_flow),
		cmocka_unit_test(test_few_samples_over_window),
		cmocka_unit_test(test_seq_wrap),
		cmocka_unit_test(test_retx_and_reorder),
		cmocka_unit_test_setup_teardown(test_link_sums_and_util, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_syn_fin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_kept, setup, teardown),
		cmocka_unit_test(test_eviction),
		cmocka_unit_test(test_eviction_clusters),
		cmocka_unit_test(test_drops_per_sec),
		cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fire_rearm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fire_drops, setup, teardown),
		cmocka_unit_test(test_bps_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
