/* test_watchmodel.c - the watch view model: rows, order, paths, display
 * filters, selection and scrolling, link counters, layout, events */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "analyze.h"
#include "fabric.h"
#include "watch.h"

static const char fabric[] =
	"switch spine1 role spine mirror 10.255.0.1 loopback 10.254.0.1\n"
	"switch spine2 role spine mirror 10.255.0.2 loopback 10.254.0.2\n"
	"switch leaf1 role leaf mirror 10.255.0.3 loopback 10.254.0.3\n"
	"switch leaf2 role leaf mirror 10.255.0.4 loopback 10.254.0.4\n"
	"link leaf1 e1 spine1 e1\n"
	"link leaf1 e2 spine2 e1\n"
	"link leaf2 e1 spine1 e2\n"
	"link leaf2 e2 spine2 e2\n"
	"subnet leaf1 10.1.1.0/24\n"
	"subnet leaf2 10.1.2.0/24\n";

enum { SPINE1, SPINE2, LEAF1, LEAF2 };

static struct hs_topo *topo;

static int setup(void **state)
{
	char err[256];

	setenv("TZ", "UTC", 1);
	tzset();
	topo = hs_topo_parse(fabric, "t.topo", err, sizeof(err));
	if (!topo)
		fail_msg("%s", err);
	return 0;
}

static int teardown(void **state)
{
	hs_topo_free(topo);
	return 0;
}

static struct hs_addr A(const char *s)
{
	struct hs_addr a;

	assert_int_equal(hs_addr_parse(s, &a), 0);
	return a;
}

/* a TCP trace 10.1.1.5:sport > dst:80 over the switches in sw[], -1 ended,
 * one hop every step_ns from t0, TTL 64 falling by one per hop */
static struct hs_trace mk(uint64_t id, uint16_t sport, const char *dst, const int *sw,
			  uint64_t t0, uint64_t step_ns)
{
	struct hs_trace t;

	memset(&t, 0, sizeof(t));
	t.id = id;
	t.key.src = A("10.1.1.5");
	t.key.dst = A(dst);
	t.key.sport = sport;
	t.key.dport = 80;
	t.key.proto = 6;
	t.tcp_flags = 0x02;
	t.len = 60;
	for (unsigned i = 0; sw[i] >= 0; i++) {
		struct hs_hop *h = &t.hops[t.nhops++];
		h->sw = sw[i];
		h->addr = topo->sw[sw[i]].mirror;
		h->ts_ns = t0 + i * step_ns;
		h->ttl = (uint8_t)(64 - i);
	}
	hs_trace_classify(&t, topo);
	return t;
}

static const int P_OK[] = { LEAF1, SPINE1, LEAF2, -1 };
static const int P_OK2[] = { LEAF1, SPINE2, LEAF2, -1 };
static const int P_DROP_SPINE1[] = { LEAF1, SPINE1, -1 };
static const int P_DROP_LEAF1[] = { LEAF1, -1 };
static const int P_LOOP[] = { LEAF1, SPINE1, LEAF1, -1 };

static void update(struct hs_wmodel *m, struct hs_trace *tr, size_t n)
{
	/* newest first, as hs_tracer_recent gives them */
	const struct hs_trace *p[16];

	assert_true(n <= 16);
	for (size_t i = 0; i < n; i++)
		p[i] = &tr[n - 1 - i];
	hs_wmodel_update(m, p, n);
}

static void test_row_text(void **state)
{
	struct hs_trace t = mk(7, 40000, "10.1.2.7", P_OK, 1000100000ULL, 15000);
	struct hs_wrow r;
	char lat[32];

	assert_int_equal(t.outcome, HS_OUT_DELIVERED);
	hs_wrow_fill(&r, &t, topo, " \xe2\x80\xba ");
	assert_int_equal(r.id, 7);
	assert_string_equal(r.col[HS_WC_PATH], "leaf1 \xe2\x80\xba spine1 \xe2\x80\xba leaf2");
	assert_string_equal(r.col[HS_WC_FLOW], "10.1.1.5:40000 > 10.1.2.7:80 [S]");
	assert_string_equal(r.col[HS_WC_OUTCOME], "delivered");
	assert_string_equal(r.col[HS_WC_TIME], "1970-01-01 00:00:01.000100");
	assert_int_equal(r.lat_ns, 30000);
	assert_string_equal(r.col[HS_WC_LATENCY], hs_fmt_duration(30000, lat, sizeof(lat)));
	assert_int_equal(r.cls, HS_WCL_DELIVERED);

	/* SYN-ACK, a probe, without topology: names are addresses */
	t.tcp_flags = 0x12;
	t.flags |= HS_TF_PROBE;
	hs_wrow_fill(&r, &t, NULL, " > ");
	assert_string_equal(r.col[HS_WC_FLOW], "10.1.1.5:40000 > 10.1.2.7:80 [S.]");
	assert_string_equal(r.col[HS_WC_PATH], "10.255.0.3 > 10.255.0.1 > 10.255.0.4");
	assert_string_equal(r.col[HS_WC_OUTCOME], "probe delivered");
	assert_int_equal(r.cls, HS_WCL_PROBE);
	/* of a shared history: the analyzers that stored its parts follow */
	t.analyzer = hs_fabric_analyzers_id("an1+an2");
	assert_int_not_equal(t.analyzer, 0);
	assert_int_equal(hs_fabric_analyzers_id("an1+an2"), t.analyzer);
	hs_wrow_fill(&r, &t, NULL, " > ");
	assert_string_equal(r.col[HS_WC_OUTCOME], "probe delivered [an1+an2]");
	assert_int_equal(r.cls, HS_WCL_PROBE);
	t.analyzer = 0;

	/* UDP over IPv6, one hop: no latency */
	memset(&t, 0, sizeof(t));
	t.key.src = A("2001:db8::1");
	t.key.dst = A("2001:db8::2");
	t.key.sport = 4791;
	t.key.dport = 4791;
	t.key.proto = 17;
	t.nhops = 1;
	t.hops[0].sw = LEAF1;
	t.extra_hops = 3;
	hs_trace_classify(&t, topo);
	hs_wrow_fill(&r, &t, topo, " > ");
	assert_string_equal(r.col[HS_WC_FLOW], "[2001:db8::1]:4791 > [2001:db8::2]:4791 udp");
	assert_string_equal(r.col[HS_WC_PATH], "leaf1 +3");
	assert_string_equal(r.col[HS_WC_LATENCY], "-");
	assert_int_equal(r.cls, HS_WCL_UNKNOWN);
}

static void test_order_and_sort(void **state)
{
	struct hs_wmodel *m = hs_wmodel_new(100, 10);
	struct hs_trace tr[4] = {
		mk(1, 1001, "10.1.2.7", P_OK, 1000000000ULL, 10000),		/* 20us */
		mk(2, 1002, "10.1.2.7", P_DROP_SPINE1, 1100000000ULL, 90000),	/* 90us */
		mk(3, 1003, "10.1.2.7", P_OK2, 1200000000ULL, 5000),		/* 10us */
		mk(4, 1004, "10.1.2.7", P_LOOP, 1300000000ULL, 1000),		/* 2us */
	};

	hs_wmodel_set_topo(m, topo);
	update(m, tr, 4);
	assert_int_equal(m->view[HS_WP_TRACES].count, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(m->rows[i].id, 4 - i);
	assert_int_equal(m->outcome_cells, 9);	/* "delivered" */
	struct hs_wmodel *named = hs_wmodel_new(100, 10);
	hs_wmodel_set_topo(named, topo);
	tr[0].analyzer = hs_fabric_analyzers_id("an1+an2");
	update(named, tr, 4);
	assert_int_equal(named->outcome_cells, 19);	/* "delivered [an1+an2]" */
	tr[0].analyzer = 0;
	hs_wmodel_free(named);
	assert_int_equal(m->rows[1].cls, HS_WCL_DELIVERED);
	assert_int_equal(m->rows[2].cls, HS_WCL_DROPPED);
	assert_int_equal(m->rows[0].cls, HS_WCL_LOOPED);

	hs_wmodel_set_sort(m, HS_WSORT_LATENCY);
	assert_int_equal(m->rows[0].id, 2);
	assert_int_equal(m->rows[1].id, 1);
	assert_int_equal(m->rows[2].id, 3);
	assert_int_equal(m->rows[3].id, 4);

	hs_wmodel_set_sort(m, HS_WSORT_OUTCOME);
	assert_int_equal(m->rows[0].id, 4);	/* looped */
	assert_int_equal(m->rows[1].id, 2);	/* dropped */
	assert_int_equal(m->rows[2].id, 3);	/* delivered, newest first */
	assert_int_equal(m->rows[3].id, 1);
	assert_string_equal(hs_wsort_name(HS_WSORT_OUTCOME), "outcome");
	hs_wmodel_free(m);
}

/* Rows are in the order of the time they show, the trace's first hop's on
 * the clock of the detail pane: traces close in the order they go quiet,
 * and with two workers reach the view out of their time order, so neither
 * their ids nor their arrival orders them. */
static void test_time_order(void **state)
{
	struct hs_wmodel *m = hs_wmodel_new(100, 10);
	struct hs_trace tr[5] = {
		mk(1, 1001, "10.1.2.7", P_OK, 3000000000ULL, 10000),
		mk(2, 1002, "10.1.2.7", P_OK, 1000000000ULL, 10000),
		mk(3, 1003, "10.1.2.7", P_OK, 2000000000ULL, 10000),
		/* captured at 5.000100, stamped by its switches 50us before */
		mk(4, 1004, "10.1.2.7", P_OK, 5000100000ULL, 10000),
		/* captured at 5.000080, no switch clock */
		mk(5, 1005, "10.1.2.7", P_OK2, 5000080000ULL, 10000),
	};
	char when[32];

	for (unsigned i = 0; i < tr[3].nhops; i++)
		tr[3].hops[i].hw_ns = tr[3].hops[i].ts_ns - 50000;
	hs_wmodel_set_topo(m, topo);
	update(m, tr, 5);
	assert_int_equal(m->view[HS_WP_TRACES].count, 5);
	static const uint64_t order[5] = { 5, 4, 1, 3, 2 };
	for (int i = 0; i < 5; i++)
		assert_int_equal(m->rows[i].id, order[i]);
	for (int i = 1; i < 5; i++)
		assert_true(m->rows[i - 1].ts_ns >= m->rows[i].ts_ns);

	/* the row's time is the detail's first hop's, the switch's here */
	assert_int_equal(m->rows[1].ts_ns, 5000050000ULL);
	assert_string_equal(m->rows[1].col[HS_WC_TIME],
			    hs_fmt_time(5000050000ULL, when, sizeof(when)));
	hs_wmodel_select(m, 1);
	assert_int_equal(m->detail.id, 4);
	assert_string_equal(m->hops[0].ts, m->rows[1].col[HS_WC_TIME]);
	assert_string_equal(m->hops[1].ts, hs_fmt_time(5000060000ULL, when, sizeof(when)));

	/* following the newest: a trace that arrives later but is older goes
	 * below, the cursor stays on the newest */
	hs_wmodel_select(m, 0);
	struct hs_trace more[6] = { tr[0], tr[1], tr[2], tr[3], tr[4],
				    mk(6, 1006, "10.1.2.7", P_OK, 4000000000ULL, 10000) };
	update(m, more, 6);
	assert_int_equal(m->rows[0].id, 5);
	assert_int_equal(m->rows[2].id, 6);
	assert_int_equal(m->sel_id, 5);

	/* the other orders fall back on it among equals */
	hs_wmodel_set_sort(m, HS_WSORT_OUTCOME);
	for (int i = 0; i < 5; i++)
		assert_int_equal(m->rows[i].id, ((const uint64_t[]){ 5, 4, 6, 1, 3 })[i]);
	hs_wmodel_free(m);
}

static void test_filter_parse(void **state)
{
	struct hs_wfilter f;
	char err[200];

	assert_int_equal(hs_wfilter_parse("", topo, &f, err, sizeof(err)), 0);
	assert_true(f.any);

	assert_int_equal(hs_wfilter_parse("flow 10.1.1.5:40000", topo, &f, err, sizeof(err)), 0);
	assert_false(f.any);
	assert_true(f.has_flow && f.has_port);
	assert_int_equal(f.port, 40000);
	assert_true(hs_addr_eq(&f.addr, &(struct hs_addr){ 0 }) == false);

	assert_int_equal(hs_wfilter_parse("flow 2001:db8::1", topo, &f, err, sizeof(err)), 0);
	assert_true(f.has_flow && !f.has_port);
	assert_int_equal(f.addr.af, 6);
	assert_int_equal(hs_wfilter_parse("flow [2001:db8::1]:53", topo, &f, err, sizeof(err)), 0);
	assert_true(f.has_port);
	assert_int_equal(f.port, 53);

	assert_int_equal(hs_wfilter_parse("switch spine2 and outcome dropped", topo, &f, err,
					  sizeof(err)), 0);
	assert_true(f.has_switch && f.has_outcome);
	assert_string_equal(f.sw, "spine2");
	assert_int_equal(f.outcome, HS_OUT_DROPPED);
	assert_int_equal(hs_wfilter_parse("outcome probe", topo, &f, err, sizeof(err)), 0);
	assert_int_equal(f.outcome, HS_WOUT_PROBE);

	/* errors leave the filter as it was */
	struct { const char *text, *msg; } bad[] = {
		{ "bogus 1", "unknown filter word 'bogus': expected flow, switch or outcome" },
		{ "flow", "'flow' needs a value" },
		{ "flow 10.1.1.999", "bad flow '10.1.1.999': expected ADDR[:PORT]" },
		{ "flow 10.1.1.5:70000", "bad port in flow '10.1.1.5:70000': expected 0-65535" },
		{ "flow [2001:db8::1", "bad flow '[2001:db8::1': expected ADDR[:PORT]" },
		{ "switch nosuch", "unknown switch 'nosuch'" },
		{ "outcome lost", "unknown outcome 'lost': expected delivered, dropped, looped, "
				  "unknown or probe" },
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		assert_int_equal(hs_wfilter_parse(bad[i].text, topo, &f, err, sizeof(err)), -1);
		assert_string_equal(err, bad[i].msg);
		assert_int_equal(f.outcome, HS_WOUT_PROBE);
	}
	/* without topology any switch name is taken */
	assert_int_equal(hs_wfilter_parse("switch nosuch", NULL, &f, err, sizeof(err)), 0);
}

static void test_filter_match(void **state)
{
	struct hs_trace ok = mk(1, 40000, "10.1.2.7", P_OK, 1000, 10);
	struct hs_trace drop = mk(2, 40001, "10.1.2.8", P_DROP_SPINE1, 1000, 10);
	struct hs_wfilter f;
	char err[200];

#define MATCH(text, t) (hs_wfilter_parse(text, topo, &f, err, sizeof(err)) == 0 && \
			hs_wfilter_match(&f, &(t), topo))
	assert_true(MATCH("", ok));
	assert_true(MATCH("flow 10.1.1.5", ok));
	assert_true(MATCH("flow 10.1.2.7", ok));
	assert_false(MATCH("flow 10.1.2.7", drop));
	assert_true(MATCH("flow 10.1.1.5:40000", ok));
	assert_false(MATCH("flow 10.1.1.5:40000", drop));
	assert_true(MATCH("flow 10.1.2.8:80", drop));
	assert_false(MATCH("flow 10.1.2.8:40001", drop));	/* port on the wrong side */
	assert_true(MATCH("switch spine1", ok));
	assert_false(MATCH("switch spine2", ok));
	assert_true(MATCH("switch 10.255.0.1", ok));	/* spine1's mirror address */
	assert_false(MATCH("switch 10.255.0.2", ok));
	assert_true(MATCH("outcome dropped", drop));
	assert_false(MATCH("outcome dropped", ok));
	assert_true(MATCH("outcome delivered switch leaf2", ok));
	assert_false(MATCH("outcome delivered switch leaf2", drop));
	assert_false(MATCH("outcome probe", ok));
	ok.flags |= HS_TF_PROBE;
	assert_true(MATCH("outcome probe", ok));
#undef MATCH
	/* addresses name switches when there is no topology */
	assert_int_equal(hs_wfilter_parse("switch 10.255.0.1", NULL, &f, err, sizeof(err)), 0);
	assert_true(hs_wfilter_match(&f, &drop, NULL));
}

static void test_model_filter(void **state)
{
	struct hs_wmodel *m = hs_wmodel_new(100, 10);
	struct hs_trace tr[3] = {
		mk(1, 1001, "10.1.2.7", P_OK, 1000, 10),
		mk(2, 1002, "10.1.2.7", P_DROP_SPINE1, 2000, 10),
		mk(3, 1003, "10.1.2.7", P_OK2, 3000, 10),
	};
	char err[200];

	hs_wmodel_set_topo(m, topo);
	update(m, tr, 3);
	assert_int_equal(hs_wmodel_set_filter(m, "outcome dropped", err, sizeof(err)), 0);
	assert_int_equal(m->view[HS_WP_TRACES].count, 1);
	assert_int_equal(m->rows[0].id, 2);
	assert_string_equal(m->filter_text, "outcome dropped");
	assert_int_equal(m->sel_id, 2);
	assert_true(m->have_detail);
	assert_int_equal(m->detail.id, 2);

	assert_int_equal(hs_wmodel_set_filter(m, "outcome nope", err, sizeof(err)), -1);
	assert_int_equal(m->view[HS_WP_TRACES].count, 1);
	assert_string_equal(m->filter_text, "outcome dropped");

	assert_int_equal(hs_wmodel_set_filter(m, "switch spine2", err, sizeof(err)), 0);
	assert_int_equal(m->view[HS_WP_TRACES].count, 1);
	assert_int_equal(m->rows[0].id, 3);

	assert_int_equal(hs_wmodel_set_filter(m, "  ", err, sizeof(err)), 0);
	assert_int_equal(m->view[HS_WP_TRACES].count, 3);
	assert_string_equal(m->filter_text, "");
	hs_wmodel_free(m);
}

static void test_view_bounds(void **state)
{
	struct hs_wview v = { 0 };

	hs_wview_set(&v, 0, 10);
	hs_wview_move(&v, 1);
	assert_int_equal(v.sel, 0);
	hs_wview_end(&v);
	assert_int_equal(v.sel, 0);

	hs_wview_set(&v, 100, 10);
	hs_wview_move(&v, -5);
	assert_int_equal(v.sel, 0);
	assert_int_equal(v.top, 0);
	hs_wview_move(&v, 12);
	assert_int_equal(v.sel, 12);
	assert_int_equal(v.top, 3);
	hs_wview_end(&v);
	assert_int_equal(v.sel, 99);
	assert_int_equal(v.top, 90);
	hs_wview_move(&v, 1000);
	assert_int_equal(v.sel, 99);
	hs_wview_page(&v, -1);
	assert_int_equal(v.sel, 90);
	assert_int_equal(v.top, 90);
	hs_wview_page(&v, -1);
	assert_int_equal(v.sel, 81);
	assert_int_equal(v.top, 81);
	hs_wview_page(&v, 1);
	assert_int_equal(v.sel, 90);
	assert_int_equal(v.top, 81);
	hs_wview_home(&v);
	assert_int_equal(v.sel, 0);
	assert_int_equal(v.top, 0);

	/* the list shrinks under the cursor, the window grows past the list */
	hs_wview_end(&v);
	hs_wview_set(&v, 5, 10);
	assert_int_equal(v.sel, 4);
	assert_int_equal(v.top, 0);
	hs_wview_set(&v, 50, 10);
	hs_wview_end(&v);
	hs_wview_set(&v, 50, 20);
	assert_int_equal(v.top, 30);
	hs_wview_set(&v, 50, 0);
	assert_int_equal(v.height, 1);
	assert_int_equal(v.top, 49);
}

static void test_selection(void **state)
{
	struct hs_wmodel *m = hs_wmodel_new(100, 10);
	struct hs_trace tr[4] = {
		mk(1, 1001, "10.1.2.7", P_OK, 1000, 10),
		mk(2, 1002, "10.1.2.7", P_DROP_SPINE1, 2000, 10),
		mk(3, 1003, "10.1.2.7", P_OK2, 3000, 10),
		mk(4, 1004, "10.1.2.7", P_OK, 4000, 10),
	};

	hs_wmodel_set_topo(m, topo);
	m->view[HS_WP_TRACES].height = 2;
	update(m, tr, 2);
	assert_int_equal(m->sel_id, 2);		/* follows the newest */
	hs_wmodel_scroll(m, HS_WP_TRACES, HS_WK_DOWN);
	assert_int_equal(m->sel_id, 1);
	assert_int_equal(m->detail.id, 1);
	assert_false(m->follow);
	/* new traces arrive: the cursor stays on its trace */
	update(m, tr, 4);
	assert_int_equal(m->sel_id, 1);
	assert_int_equal(m->view[HS_WP_TRACES].sel, 3);
	assert_int_equal(m->view[HS_WP_TRACES].top, 2);
	assert_int_equal(m->detail.id, 1);
	hs_wmodel_scroll(m, HS_WP_TRACES, HS_WK_HOME);
	assert_int_equal(m->sel_id, 4);
	assert_true(m->follow);
	hs_wmodel_scroll(m, HS_WP_TRACES, HS_WK_PGDN);
	assert_int_equal(m->view[HS_WP_TRACES].sel, 1);
	hs_wmodel_scroll(m, HS_WP_TRACES, HS_WK_END);
	assert_int_equal(m->sel_id, 1);

	/* paused: rows stay */
	hs_wmodel_scroll(m, HS_WP_TRACES, HS_WK_HOME);
	m->paused = true;
	struct hs_trace more[5] = { tr[0], tr[1], tr[2], tr[3],
				    mk(5, 1005, "10.1.2.7", P_OK, 5000, 10) };
	update(m, more, 5);
	assert_int_equal(m->view[HS_WP_TRACES].count, 4);
	assert_int_equal(m->rows[0].id, 4);
	m->paused = false;
	update(m, more, 5);
	assert_int_equal(m->view[HS_WP_TRACES].count, 5);
	assert_int_equal(m->rows[0].id, 5);
	assert_int_equal(m->sel_id, 5);

	/* the ring was cleared */
	hs_wmodel_update(m, NULL, 0);
	assert_int_equal(m->view[HS_WP_TRACES].count, 0);
	assert_int_equal(m->sel_id, 0);
	hs_wmodel_free(m);
}

static void test_detail(void **state)
{
	struct hs_wmodel *m = hs_wmodel_new(10, 10);
	struct hs_trace t = mk(9, 1001, "10.1.2.7", P_DROP_SPINE1, 1000000000ULL, 2500);

	t.hops[1].tos = (10 << 2) | 3;		/* AF11, CE */
	t.hops[1].ttl = 61;			/* 64 -> 61: a hop unseen */
	hs_wmodel_set_topo(m, topo);
	update(m, &t, 1);
	assert_true(m->have_detail);
	assert_int_equal(m->view[HS_WP_DETAIL].count, 2);
	assert_string_equal(m->hops[0].sw, "leaf1");
	assert_string_equal(m->hops[0].delta, "-");
	assert_string_equal(m->hops[0].changes, "");
	assert_string_equal(m->hops[0].dscp, "0/not-ect");
	assert_string_equal(m->hops[1].sw, "spine1");
	assert_string_equal(m->hops[1].ts, "1970-01-01 00:00:01.000002");
	assert_string_equal(m->hops[1].ttl, "61");
	assert_string_equal(m->hops[1].dscp, "10/ce");
	assert_string_equal(m->hops[1].changes, "TTL -3, DSCP 0->10, ECN not-ect->ce");
	assert_non_null(strstr(m->hops[1].delta, "+"));
	assert_non_null(strstr(m->detail_head[0], "trace 9"));
	assert_non_null(strstr(m->detail_head[1], "dropped"));
	assert_string_equal(m->detail_head[2], "dropped after spine1, expected next leaf2");
	hs_wmodel_free(m);
}

static const int P_OK_S2[] = { LEAF1, SPINE2, LEAF2, -1 };

/* the links pane's rows are directed links with the figures of 'drops':
 * a drop is on the link its flow was seen taking, an ambiguous one is
 * counted apart on every candidate and in no link's drops */
static void test_links(void **state)
{
	struct hs_wmodel *m = hs_wmodel_new(10, 10);
	struct hs_trace tr[5] = {
		mk(5, 1002, "10.1.2.7", P_DROP_SPINE1, 5000, 10),	/* spine1 > leaf2 */
		mk(4, 1004, "10.1.2.7", P_OK, 4000, 10),
		mk(3, 1003, "10.1.2.7", P_DROP_LEAF1, 3000, 10),	/* ambiguous */
		mk(2, 1001, "10.1.2.7", P_DROP_LEAF1, 2000, 10),	/* its flow: spine2 */
		mk(1, 1001, "10.1.2.7", P_OK_S2, 1000, 10),
	};
	const struct hs_trace *recent[5] = { &tr[0], &tr[1], &tr[2], &tr[3], &tr[4] };
	char name[128], pk[16], dr[16], rate[16], amb[16];
	(void)state;

	hs_wmodel_set_topo(m, topo);
	assert_int_equal(m->nlinks, 8);
	hs_wmodel_links(m, recent, 5);
	hs_wmodel_links(m, recent, 5);	/* looked at twice, counted once */

	hs_wlink_text(m, 0, name, sizeof(name), pk, dr, rate, amb, sizeof(pk));
	assert_string_equal(name, "leaf1 > spine2");
	assert_string_equal(pk, "1");
	assert_string_equal(dr, "1");
	assert_string_equal(rate, "50.0%");
	assert_string_equal(amb, "1");
	hs_wlink_text(m, 1, name, sizeof(name), pk, dr, rate, amb, sizeof(pk));
	assert_string_equal(name, "spine1 > leaf2");
	assert_string_equal(dr, "1");
	assert_string_equal(amb, "-");
	/* the ambiguous drop is not split onto the healthy link */
	hs_wlink_text(m, 2, name, sizeof(name), pk, dr, rate, amb, sizeof(pk));
	assert_string_equal(name, "leaf1 > spine1");
	assert_string_equal(pk, "2");
	assert_string_equal(dr, "0");
	assert_string_equal(rate, "0.0%");
	assert_string_equal(amb, "1");
	/* the other way of the lossy link is clean */
	for (int i = 0; i < m->nlinks; i++) {
		const struct hs_wlink *l = &m->links[i];
		if (l->a == SPINE2 && l->b == LEAF1)
			assert_int_equal(l->drops + l->ambiguous + l->packets, 0);
	}
	hs_wlink_text(m, 7, name, sizeof(name), pk, dr, rate, amb, sizeof(pk));
	assert_string_equal(pk, "0");
	assert_string_equal(rate, "-");

	/* the same figures as 'drops' */
	struct hs_drops d;
	hs_an_drops(recent, 5, topo, &d);
	assert_int_equal(d.dropped, 3);
	assert_int_equal(d.certain, 2);
	assert_int_equal(d.ambiguous, 1);
	assert_int_equal(d.links[0].a, LEAF1);
	assert_int_equal(d.links[0].b, SPINE2);
	assert_int_equal(d.links[0].drops, m->links[m->order[0]].drops);
	assert_int_equal(d.links[0].crossed, m->links[m->order[0]].packets);
	hs_drops_free(&d);

	/* a new topology starts over */
	hs_wmodel_set_topo(m, NULL);
	assert_int_equal(m->nlinks, 0);
	hs_wlink_text(m, 0, name, sizeof(name), pk, dr, rate, amb, sizeof(pk));
	assert_string_equal(name, "");
	hs_wmodel_free(m);
}

/* the 007 column: a flow that sent the same SYN twice votes for its path */
static void test_links_blame(void **state)
{
	struct hs_wmodel *m = hs_wmodel_new(10, 10);
	struct hs_trace tr[3] = {
		mk(3, 1002, "10.1.2.7", P_OK, 3000, 10),	/* another flow, once */
		mk(2, 1001, "10.1.2.7", P_OK, 2000, 10),	/* the retransmission */
		mk(1, 1001, "10.1.2.7", P_OK, 1000, 10),
	};
	const struct hs_trace *recent[3] = { &tr[0], &tr[1], &tr[2] };
	char votes[16];
	(void)state;

	hs_wmodel_set_topo(m, topo);
	update(m, tr, 3);
	hs_wmodel_links(m, recent, 3);
	int l1s1 = hs_topo_link(topo, LEAF1, SPINE1), l2s1 = hs_topo_link(topo, LEAF2, SPINE1);
	int l1s2 = hs_topo_link(topo, LEAF1, SPINE2);
	/* 1/h of a vote, h = 2 links, on both ways of each link */
	assert_true(m->links[2 * l1s1].votes == 0.5);
	assert_true(m->links[2 * l1s1 + 1].votes == 0.5);
	assert_true(m->links[2 * l2s1].votes == 0.5);
	assert_true(m->links[2 * l1s2].votes == 0.0);
	/* with no drops, votes rank the links */
	assert_true(m->links[m->order[0]].link == l1s1 || m->links[m->order[0]].link == l2s1);
	hs_wlink_votes_text(m, 0, votes, sizeof(votes));
	assert_string_equal(votes, m->links[m->order[0]].blamed ? "0.5!" : "0.5");
	hs_wlink_votes_text(m, 7, votes, sizeof(votes));
	assert_string_equal(votes, "-");

	/* without the retransmission nobody is blamed */
	hs_wmodel_links(m, recent, 2);
	assert_true(m->links[2 * l1s1].votes == 0.0);
	hs_wlink_votes_text(m, 0, votes, sizeof(votes));
	assert_string_equal(votes, "-");
	hs_wmodel_free(m);
}

static bool overlap(const struct hs_wrect *a, const struct hs_wrect *b)
{
	return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

static void test_layout(void **state)
{
	struct hs_wlayout l;
	int sizes[][2] = { { 60, 15 }, { 80, 24 }, { 160, 45 }, { 61, 16 }, { 300, 100 } };

	assert_false(hs_wlayout_compute(59, 40, &l));
	assert_false(hs_wlayout_compute(200, 14, &l));
	assert_false(hs_wlayout_compute(0, 0, &l));
	for (size_t s = 0; s < HS_ARRAY_SIZE(sizes); s++) {
		int cols = sizes[s][0], rows = sizes[s][1];
		long area = cols;	/* the status line */

		assert_true(hs_wlayout_compute(cols, rows, &l));
		assert_int_equal(l.status.y, rows - 1);
		assert_int_equal(l.status.w, cols);
		for (int i = 0; i < HS_WP__COUNT; i++) {
			const struct hs_wrect *p = &l.pane[i];
			/* room for a border and at least two lines inside */
			assert_true(p->h >= 4);
			assert_true(p->w >= 20);
			assert_true(p->x >= 0 && p->y >= 0);
			assert_true(p->x + p->w <= cols && p->y + p->h <= rows - 1);
			for (int j = 0; j < i; j++)
				assert_false(overlap(p, &l.pane[j]));
			area += (long)p->w * p->h;
		}
		assert_int_equal(area, (long)cols * rows);	/* no gaps */
	}

	int w[HS_WC__COUNT];
	int widths[] = { 56, 78, 158, 300 };
	for (size_t s = 0; s < HS_ARRAY_SIZE(widths); s++) {
		int sum = HS_WC__COUNT - 1;
		hs_wcols_layout(widths[s], 0, w);
		for (int i = 0; i < HS_WC__COUNT; i++)
			sum += w[i] ? w[i] : -1;	/* a column left out has no gap */
		assert_true(sum <= widths[s]);
		assert_true(w[HS_WC_FLOW] >= 8 && w[HS_WC_PATH] >= 8);
	}
	hs_wcols_layout(158, 0, w);
	assert_int_equal(w[HS_WC_TIME], 26);
	hs_wcols_layout(56, 0, w);
	assert_int_equal(w[HS_WC_TIME], 0);
	/* 80 columns: the time gives way, a flow and a three-switch path fit whole */
	hs_wcols_layout(78, 0, w);
	assert_int_equal(w[HS_WC_TIME], 0);
	assert_int_equal(w[HS_WC_LATENCY], 9);
	assert_true(w[HS_WC_FLOW] >= 33);
	assert_true(w[HS_WC_PATH] >= 22);
	/* a little more: the time of day before the date */
	hs_wcols_layout(96, 0, w);
	assert_int_equal(w[HS_WC_TIME], 15);
	hs_wcols_layout(198, 0, w);
	assert_int_equal(w[HS_WC_TIME], 26);
	assert_int_equal(w[HS_WC_OUTCOME], 15);
	/* outcomes naming the analyzers that stored them: shown whole where
	 * there is room, the path keeping its least where there is not */
	hs_wcols_layout(198, 31, w);
	assert_int_equal(w[HS_WC_OUTCOME], 31);
	hs_wcols_layout(130, 31, w);
	assert_int_equal(w[HS_WC_OUTCOME], 27);
	assert_int_equal(w[HS_WC_PATH], 22);
	int sum = HS_WC__COUNT - 1;
	for (int i = 0; i < HS_WC__COUNT; i++)
		sum += w[i] ? w[i] : -1;
	assert_true(sum <= 130);
}

static void test_path_fit(void **state)
{
	char out[128];
	const char *loop = "leaf1 > spine2 > leaf3 > spine1 > leaf1 > spine2 > leaf3 > spine1 > leaf4";

	(void)state;
	/* fits: as it is */
	hs_wpath_fit("leaf1 > spine2 > leaf4", " > ", "...", 22, out, sizeof(out));
	assert_string_equal(out, "leaf1 > spine2 > leaf4");
	/* too long: the middle gives way, the first and last switch stay whole */
	assert_true(hs_wpath_fit(loop, " > ", "...", 40, out, sizeof(out)) <= 40);
	assert_string_equal(out, "leaf1 > spine2 > ... > spine1 > leaf4");
	hs_wpath_fit(loop, " > ", "...", 21, out, sizeof(out));
	assert_string_equal(out, "leaf1 > ... > leaf4");
	/* UTF-8 separator and ellipsis count one cell a character */
	hs_wpath_fit("a \xe2\x80\xba bb \xe2\x80\xba c \xe2\x80\xba d", " \xe2\x80\xba ",
		     "\xe2\x80\xa6", 13, out, sizeof(out));
	assert_string_equal(out, "a \xe2\x80\xba \xe2\x80\xa6 \xe2\x80\xba c \xe2\x80\xba d");
	/* not even the ends fit: cut with the ellipsis */
	hs_wpath_fit(loop, " > ", "...", 10, out, sizeof(out));
	assert_string_equal(out, "leaf1 >...");
	assert_int_equal(hs_wfit_ell("10.1.1.11:40123 > 10.1.4.12:5001 [S]", 20, "...", out,
				     sizeof(out)), 20);
	assert_string_equal(out, "10.1.1.11:40123 >...");
	hs_wfit_ell("short", 20, "...", out, sizeof(out));
	assert_string_equal(out, "short");
}

static void test_fit(void **state)
{
	char out[32];

	assert_int_equal(hs_wfit("a \xe2\x80\xba b", 3, out, sizeof(out)), 3);
	assert_string_equal(out, "a \xe2\x80\xba");
	assert_int_equal(hs_wfit("abc", 10, out, sizeof(out)), 3);
	assert_string_equal(out, "abc");
	assert_int_equal(hs_wfit("abcdef", 10, out, 4), 3);	/* the buffer bounds it */
	assert_string_equal(out, "abc");
	assert_int_equal(hs_wfit("x\xe2\x80", 5, out, sizeof(out)), 2);	/* cut sequence */
	assert_int_equal(strlen(out), 3);
	assert_int_equal(hs_wfit("", 5, out, sizeof(out)), 0);
	assert_string_equal(out, "");

	/* an outcome cut: the analyzers' names inside their brackets, the
	 * outcome and the closing bracket kept */
	assert_int_equal(hs_woutcome_fit("dropped [an1+an2]", 15, "\xe2\x80\xa6", out,
					 sizeof(out)), 15);
	assert_string_equal(out, "dropped [an1+\xe2\x80\xa6]");
	assert_int_equal(hs_woutcome_fit("dropped [an1+an2]", 15, "...", out, sizeof(out)), 15);
	assert_string_equal(out, "dropped [an...]");
	assert_int_equal(hs_woutcome_fit("dropped [an1+an2]", 17, "...", out, sizeof(out)), 17);
	assert_string_equal(out, "dropped [an1+an2]");
	/* no room for a name: cut as any other column */
	assert_int_equal(hs_woutcome_fit("probe delivered [an1]", 15, "...", out, sizeof(out)), 15);
	assert_string_equal(out, "probe delive...");
	assert_int_equal(hs_woutcome_fit("delivered", 5, "...", out, sizeof(out)), 5);
	assert_string_equal(out, "de...");
}

static void test_events(void **state)
{
	struct hs_wmodel *m = hs_wmodel_new(1, 3);

	hs_wmodel_event(m, "one");
	hs_wmodel_event(m, "two\nthree\n");
	assert_int_equal(m->ev_count, 3);
	assert_string_equal(hs_wmodel_event_at(m, 0), "one");
	assert_string_equal(hs_wmodel_event_at(m, 2), "three");
	assert_int_equal(m->view[HS_WP_EVENTS].sel, 2);	/* follows the newest */
	hs_wmodel_event(m, "fo\tur\x1b[2J");
	assert_int_equal(m->ev_count, 3);
	assert_string_equal(hs_wmodel_event_at(m, 0), "two");
	assert_string_equal(hs_wmodel_event_at(m, 2), "fo ur?[2J");
	assert_null(hs_wmodel_event_at(m, 3));

	/* scrolled back: the cursor keeps its line */
	hs_wmodel_scroll(m, HS_WP_EVENTS, HS_WK_HOME);
	hs_wmodel_event(m, "five");
	assert_int_equal(m->view[HS_WP_EVENTS].sel, 0);
	assert_string_equal(hs_wmodel_event_at(m, 0), "three");

	char big[600];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	hs_wmodel_event(m, big);
	assert_int_equal(strlen(hs_wmodel_event_at(m, 2)), HS_WEVENT_LEN - 1);
	assert_int_equal(m->ev_total, 6);
	hs_wmodel_free(m);
}

/* a live table: each round replaces its block while nothing came after it */
static void test_event_block(void **state)
{
	struct hs_wmodel *m = hs_wmodel_new(1, 8);
	struct hs_wblock b = { 0 };

	hs_wmodel_event(m, "> :traceroute h8");
	hs_wmodel_event_block(m, &b, "1 round\n  1  leaf1\n");
	hs_wmodel_event_block(m, &b, "2 rounds\n  1  leaf1\n  2  spine1\n");
	assert_int_equal(m->ev_count, 4);
	assert_string_equal(hs_wmodel_event_at(m, 1), "2 rounds");
	assert_string_equal(hs_wmodel_event_at(m, 3), "  2  spine1");
	assert_int_equal(m->view[HS_WP_EVENTS].sel, 3);	/* still on the newest */
	/* a shorter table leaves no line of the longer one behind */
	hs_wmodel_event_block(m, &b, "3 rounds\n");
	assert_int_equal(m->ev_count, 2);
	assert_string_equal(hs_wmodel_event_at(m, 1), "3 rounds");
	assert_int_equal(m->view[HS_WP_EVENTS].sel, 1);

	/* something else printed since: the table starts again below it */
	hs_wmodel_event(m, "alert: loss");
	hs_wmodel_event_block(m, &b, "4 rounds\n");
	assert_int_equal(m->ev_count, 4);
	assert_string_equal(hs_wmodel_event_at(m, 1), "3 rounds");
	assert_string_equal(hs_wmodel_event_at(m, 2), "alert: loss");
	assert_string_equal(hs_wmodel_event_at(m, 3), "4 rounds");
	hs_wmodel_event_block(m, &b, "5 rounds\n");
	assert_int_equal(m->ev_count, 4);
	assert_string_equal(hs_wmodel_event_at(m, 3), "5 rounds");

	/* another block of its own is appended, the first one left as it was */
	struct hs_wblock b2 = { 0 };
	hs_wmodel_event_block(m, &b2, "other\n");
	hs_wmodel_event_block(m, &b, "6 rounds\n");
	assert_int_equal(m->ev_count, 6);
	assert_string_equal(hs_wmodel_event_at(m, 3), "5 rounds");
	assert_string_equal(hs_wmodel_event_at(m, 4), "other");
	assert_string_equal(hs_wmodel_event_at(m, 5), "6 rounds");
	hs_wmodel_free(m);
}

/* the Links pane: no figure is cut to its column (a rough "~16.4k" in a
 * column of five showed as "~16.4", a thousandth of the rate), and the
 * load column's title says what its figures are */
static void test_links_columns(void **state)
{
	enum { NCOL = 7 };
	static const int min[NCOL] = { 0, 6, 5, 6, 5, 5, 5 };
	static const int drop[] = { 6, 5, 3, 1 };
	const char *titles[NCOL] = { "link", "pkts", "drops", "drop%", "ambig", "007", "bit/s" };
	const char *cells[2 * NCOL] = {
		"leaf1 > spine2", "1234567", "13", "16.7%", "14", "1.5!", "57.4k",
		"spine2 > leaf1", "9", "0", "0.0%", "-", "-", "~16.4k",
	};
	int cw[NCOL];
	char out[32];
	(void)state;

	hs_wcols_fit(80, NCOL, titles, cells, 2, min, drop, 4, 16, cw);
	for (int r = 0; r < 2; r++)
		for (int c = 1; c < NCOL; c++) {
			hs_wfit(cells[r * NCOL + c], cw[c], out, sizeof(out));
			assert_string_equal(out, cells[r * NCOL + c]);
		}
	assert_int_equal(cw[1], 7);
	assert_int_equal(cw[6], 6);
	assert_int_equal(cw[2], 5);	/* no wider than it needs */
	int used = cw[0];
	for (int c = 1; c < NCOL; c++)
		used += cw[c] + 1;
	assert_int_equal(used, 80);
	/* narrow: whole columns go, the load first; what stays is whole */
	hs_wcols_fit(40, NCOL, titles, cells, 2, min, drop, 4, 16, cw);
	assert_int_equal(cw[6], 0);
	assert_true(cw[0] >= 16);
	assert_int_equal(cw[1], 7);
	hs_wcols_fit(20, NCOL, titles, cells, 2, min, drop, 4, 16, cw);
	assert_int_equal(cw[1] + cw[3] + cw[5] + cw[6], 0);
	/* no rows: the titles and the usual widths */
	hs_wcols_fit(80, NCOL, titles, cells, 0, min, drop, 4, 16, cw);
	assert_int_equal(cw[1], 6);
	assert_int_equal(cw[6], 5);

	/* the load's title: the test fabric's links have no speed */
	assert_string_equal(hs_wload_title(topo), "bit/s");
	hs_wload_text(topo, 0, "~16.4k", out, sizeof(out));
	assert_string_equal(out, "~16.4k");
	topo->links[0].speed = 1e9;
	assert_string_equal(hs_wload_title(topo), "load");
	hs_wload_text(topo, 0, "~5.0%", out, sizeof(out));
	assert_string_equal(out, "~5.0%");
	hs_wload_text(topo, 1, "~16.4k", out, sizeof(out));
	assert_string_equal(out, "~16.4kb/s");
	hs_wload_text(topo, 1, "", out, sizeof(out));
	assert_string_equal(out, "");
	for (int l = 0; l < topo->nlinks; l++)
		topo->links[l].speed = 1e9;
	assert_string_equal(hs_wload_title(topo), "util");
	for (int l = 0; l < topo->nlinks; l++)
		topo->links[l].speed = 0;
	assert_string_equal(hs_wload_title(NULL), "load");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_row_text),
		cmocka_unit_test(test_order_and_sort),
		cmocka_unit_test(test_time_order),
		cmocka_unit_test(test_filter_parse),
		cmocka_unit_test(test_filter_match),
		cmocka_unit_test(test_model_filter),
		cmocka_unit_test(test_view_bounds),
		cmocka_unit_test(test_selection),
		cmocka_unit_test(test_detail),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_links_blame),
		cmocka_unit_test(test_links_columns),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_path_fit),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_event_block),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
