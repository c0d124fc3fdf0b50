/* test_window.c - field lists, window boundaries, empty windows, the key cap,
 * flows, drops, late records, and the header rebuilt from a record */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "window.h"

#define MS 1000000ULL
#define SEC HS_NS_PER_SEC
#define T0 (1700000000ULL * SEC)	/* a multiple of 1 s */

struct got {
	uint64_t start;
	struct hs_win_key key;
	bool other;
	uint64_t packets, bytes, flows, drops;
};

static struct got rows[256];
static size_t nrows;

static void collect(void *arg, const struct hs_win_row *r)
{
	(void)arg;
	assert_true(nrows < 256);
	rows[nrows++] = (struct got){ .start = r->window_start, .key = *r->key,
		.other = r->other, .packets = r->packets, .bytes = r->bytes,
		.flows = r->flows, .drops = r->drops };
}

static struct hs_win *mk_flows(uint64_t window, unsigned fields, size_t keys, size_t open,
			       size_t flows)
{
	struct hs_win_cfg cfg = { .window_ns = window, .fields = fields, .max_keys = keys,
				  .max_open = open, .max_flows = flows, .on_row = collect };
	nrows = 0;
	memset(rows, 0, sizeof(rows));
	struct hs_win *w = hs_win_new(&cfg);
	assert_non_null(w);
	return w;
}

static struct hs_win *mk(uint64_t window, unsigned fields, size_t keys, size_t open)
{
	return mk_flows(window, fields, keys, open, 0);
}

/* a copy from switch 10.255.0.<sw> of flow 10.1.1.<src>:<sport> > 10.1.3.12:5001 */
static struct hs_pktrec rec(uint64_t ts, int sw, int src, uint16_t sport, uint32_t len)
{
	struct hs_pktrec r;
	char a[32];

	memset(&r, 0, sizeof(r));
	r.ts_ns = ts;
	snprintf(a, sizeof(a), "10.255.0.%d", sw);
	assert_int_equal(hs_addr_parse(a, &r.sw), 0);
	snprintf(a, sizeof(a), "10.1.1.%d", src);
	assert_int_equal(hs_addr_parse(a, &r.key.src), 0);
	assert_int_equal(hs_addr_parse("10.1.3.12", &r.key.dst), 0);
	r.key.proto = 6;
	r.key.sport = sport;
	r.key.dport = 5001;
	r.len = len;
	r.ttl = 64;
	r.dscp = 10;
	return r;
}

static void add(struct hs_win *w, uint64_t ts, int sw, int src, uint16_t sport, uint32_t len)
{
	struct hs_pktrec r = rec(ts, sw, src, sport, len);
	hs_win_packet(w, &r);
}

/* ---- field lists -------------------------------------------------------------- */

static void test_fields(void **state)
{
	unsigned f;
	char err[128];

	(void)state;
	assert_int_equal(hs_win_fields_parse("switch", &f, err, sizeof(err)), 0);
	assert_int_equal(f, HS_WF_SWITCH);
	assert_int_equal(hs_win_fields_parse("src,dst,dport", &f, err, sizeof(err)), 0);
	assert_int_equal(f, HS_WF_SRC | HS_WF_DST | HS_WF_DPORT);
	assert_int_equal(hs_win_fields_parse("flow,switch,dscp", &f, err, sizeof(err)), 0);
	assert_int_equal(f, HS_WF_FLOW | HS_WF_SWITCH | HS_WF_DSCP);
	assert_int_equal(hs_win_fields_parse("proto,sport", &f, err, sizeof(err)), 0);
	assert_int_equal(f, HS_WF_PROTO | HS_WF_SPORT);

	f = 77;
	assert_int_equal(hs_win_fields_parse("switch,colour", &f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown field 'colour'"));
	assert_int_equal(f, 77);	/* untouched on error */
	assert_int_equal(hs_win_fields_parse("", &f, err, sizeof(err)), -1);
	assert_int_equal(hs_win_fields_parse("src,", &f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown field ''"));
	assert_int_equal(hs_win_fields_parse(",src", &f, err, sizeof(err)), -1);
	assert_int_equal(hs_win_fields_parse("src,src", &f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "twice"));
	/* flow already holds src */
	assert_int_equal(hs_win_fields_parse("flow,src", &f, err, sizeof(err)), -1);
	assert_int_equal(hs_win_fields_parse("Switch", &f, err, sizeof(err)), -1);
	assert_int_equal(hs_win_fields_parse("switches", &f, err, sizeof(err)), -1);
}

/* ---- windows -------------------------------------------------------------------- */

static void test_boundaries(void **state)
{
	struct hs_win *w = mk(SEC, HS_WF_SWITCH, 0, 0);

	(void)state;
	add(w, T0, 1, 11, 1000, 100);			/* first instant of window 0 */
	add(w, T0 + SEC - 1, 1, 11, 1000, 100);		/* last instant of window 0 */
	add(w, T0 + SEC, 1, 11, 1000, 100);		/* first instant of window 1 */
	hs_win_close_until(w, T0 + SEC - 1);		/* window 0 has not ended */
	assert_int_equal(nrows, 0);
	hs_win_close_until(w, T0 + SEC);		/* now it has */
	assert_int_equal(nrows, 1);
	assert_true(rows[0].start == T0);
	assert_int_equal(rows[0].packets, 2);
	assert_int_equal(rows[0].bytes, 200);
	hs_win_close_until(w, T0 + SEC);		/* emitted once */
	assert_int_equal(nrows, 1);
	hs_win_flush(w);
	assert_int_equal(nrows, 2);
	assert_true(rows[1].start == T0 + SEC);
	assert_int_equal(rows[1].packets, 1);

	/* windows are aligned on multiples of their length, not on the first record */
	hs_win_free(w);
	w = mk(250 * MS, HS_WF_SWITCH, 0, 0);
	add(w, T0 + 300 * MS, 1, 11, 1000, 1);
	add(w, T0 + 499 * MS, 1, 11, 1000, 1);
	add(w, T0 + 500 * MS, 1, 11, 1000, 1);
	hs_win_flush(w);
	assert_int_equal(nrows, 2);
	assert_true(rows[0].start == T0 + 250 * MS);
	assert_int_equal(rows[0].packets, 2);
	assert_true(rows[1].start == T0 + 500 * MS);
	hs_win_free(w);
}

static void test_empty_windows(void **state)
{
	struct hs_win *w = mk(SEC, HS_WF_SWITCH, 0, 0);
	struct hs_win_stats st;

	(void)state;
	/* nothing in, nothing out */
	hs_win_close_until(w, T0 + 10 * SEC);
	hs_win_flush(w);
	assert_int_equal(nrows, 0);
	hs_win_free(w);

	/* a gap of quiet windows prints no rows for them */
	w = mk(SEC, HS_WF_SWITCH, 0, 0);
	add(w, T0 + 100 * MS, 1, 11, 1000, 10);
	add(w, T0 + 5 * SEC + 1, 2, 11, 1000, 10);
	hs_win_close_until(w, T0 + 20 * SEC);
	assert_int_equal(nrows, 2);
	assert_true(rows[0].start == T0);
	assert_true(rows[1].start == T0 + 5 * SEC);
	hs_win_get_stats(w, &st);
	assert_int_equal(st.windows, 2);
	assert_int_equal(st.rows, 2);
	assert_int_equal(st.forced, 0);
	hs_win_free(w);
}

static void test_keys_and_order(void **state)
{
	struct hs_win *w = mk(SEC, HS_WF_SWITCH | HS_WF_SPORT, 0, 0);

	(void)state;
	add(w, T0 + 1, 1, 11, 1000, 100);
	add(w, T0 + 2, 2, 11, 1000, 100);
	add(w, T0 + 3, 2, 11, 1000, 100);
	add(w, T0 + 4, 2, 11, 2000, 100);
	add(w, T0 + 5, 1, 11, 1000, 50);
	hs_win_flush(w);
	assert_int_equal(nrows, 3);
	/* busiest first: (sw2, 1000) 2 packets 200 bytes, (sw1, 1000) 2 packets 150 */
	assert_int_equal(rows[0].key.sw.a[3], 2);
	assert_int_equal(rows[0].key.sport, 1000);
	assert_int_equal(rows[0].packets, 2);
	assert_int_equal(rows[1].key.sw.a[3], 1);
	assert_int_equal(rows[1].bytes, 150);
	assert_int_equal(rows[2].key.sport, 2000);
	/* fields not asked for are not part of the key */
	assert_int_equal(rows[0].key.src.af, 0);
	assert_int_equal(rows[0].key.dport, 0);
	assert_int_equal(rows[0].key.dscp, 0);
	hs_win_free(w);
}

static void test_key_cap(void **state)
{
	struct hs_win *w = mk(SEC, HS_WF_SRC, 3, 0);
	struct hs_win_stats st;

	(void)state;
	for (int src = 1; src <= 5; src++)
		for (int i = 0; i < src; i++)
			add(w, T0 + (uint64_t)(src * 10 + i), 1, src, 1000, 10);
	/* a key already in keeps counting once the window is full */
	add(w, T0 + 100, 1, 1, 1000, 10);
	hs_win_flush(w);
	assert_int_equal(nrows, 4);	/* three keys and "other" */
	uint64_t total = 0, other = 0;
	for (size_t i = 0; i < nrows; i++) {
		total += rows[i].packets;
		if (rows[i].other) {
			assert_int_equal(i, nrows - 1);	/* last */
			other = rows[i].packets;
			assert_int_equal(rows[i].bytes, 90);
			assert_int_equal(rows[i].key.src.af, 0);
		}
	}
	assert_int_equal(total, 16);	/* nothing lost, only lumped */
	assert_int_equal(other, 4 + 5);	/* sources 4 and 5 came after the cap */
	hs_win_get_stats(w, &st);
	assert_int_equal(st.over_keys, 9);
	assert_int_equal(st.packets, 16);

	/* the next window starts empty: the cap is per window */
	add(w, T0 + 2 * SEC, 1, 9, 1000, 10);
	hs_win_flush(w);
	assert_int_equal(nrows, 5);
	assert_false(rows[4].other);
	assert_int_equal(rows[4].key.src.a[3], 9);
	hs_win_free(w);
}

static void test_flows_and_drops(void **state)
{
	struct hs_win *w = mk(SEC, HS_WF_SWITCH, 0, 0);

	(void)state;
	add(w, T0 + 1, 1, 11, 1000, 10);
	add(w, T0 + 2, 1, 11, 1000, 10);	/* same flow */
	add(w, T0 + 3, 1, 11, 1001, 10);	/* another */
	add(w, T0 + 4, 1, 12, 1000, 10);	/* another */
	add(w, T0 + 5, 2, 11, 1000, 10);	/* the first flow, at another switch */
	struct hs_pktrec d = rec(T0 + 6, 1, 11, 1000, 10);
	hs_win_drop(w, &d);
	d = rec(T0 + SEC + 6, 3, 11, 1000, 10);	/* a drop alone in its window and key */
	hs_win_drop(w, &d);
	hs_win_flush(w);
	assert_int_equal(nrows, 3);
	assert_int_equal(rows[0].key.sw.a[3], 1);
	assert_int_equal(rows[0].packets, 4);
	assert_int_equal(rows[0].flows, 3);
	assert_int_equal(rows[0].drops, 1);
	assert_int_equal(rows[1].key.sw.a[3], 2);
	assert_int_equal(rows[1].flows, 1);
	assert_int_equal(rows[1].drops, 0);
	assert_true(rows[2].start == T0 + SEC);
	assert_int_equal(rows[2].packets, 0);
	assert_int_equal(rows[2].drops, 1);
	assert_int_equal(rows[2].flows, 0);
	hs_win_free(w);
}

/* a drop taken back (its trace counted again as another) leaves its
 * window as if it never came, while the window is open; one printed keeps
 * it, and there is nothing to take back below none */
static void test_undrop(void **state)
{
	struct hs_win *w = mk(SEC, HS_WF_SWITCH, 2, 0);
	struct hs_win_stats st;

	(void)state;
	struct hs_pktrec d1 = rec(T0 + 1, 1, 11, 1000, 10), d2 = rec(T0 + 2, 2, 11, 1000, 10),
			 d3 = rec(T0 + 3, 3, 11, 1000, 10);
	hs_win_drop(w, &d1);
	hs_win_drop(w, &d1);
	hs_win_drop(w, &d2);
	hs_win_drop(w, &d3);		/* past the two keys: "other" */
	hs_win_undrop(w, &d1);
	hs_win_undrop(w, &d3);
	hs_win_undrop(w, &d3);		/* no more there */
	hs_win_get_stats(w, &st);
	assert_int_equal(st.drops, 2);
	assert_int_equal(st.over_keys, 0);
	hs_win_close_until(w, T0 + SEC);
	assert_int_equal(nrows, 2);
	assert_int_equal(rows[0].key.sw.a[3], 1);
	assert_int_equal(rows[0].drops, 1);
	assert_int_equal(rows[1].key.sw.a[3], 2);
	assert_int_equal(rows[1].drops, 1);
	hs_win_undrop(w, &d2);		/* printed: as it was */
	hs_win_get_stats(w, &st);
	assert_int_equal(st.drops, 2);
	hs_win_free(w);
}

static void test_late_and_ring(void **state)
{
	struct hs_win *w = mk(SEC, HS_WF_SWITCH, 0, 4);
	struct hs_win_stats st;

	(void)state;
	add(w, T0 + 1, 1, 11, 1000, 10);
	hs_win_close_until(w, T0 + SEC);
	assert_int_equal(nrows, 1);
	/* a packet and a drop for the window already printed: counted as late */
	add(w, T0 + 2, 1, 11, 1000, 10);
	struct hs_pktrec d = rec(T0 + 3, 1, 11, 1000, 10);
	hs_win_drop(w, &d);
	hs_win_get_stats(w, &st);
	assert_int_equal(st.late, 1);
	assert_int_equal(st.late_drops, 1);
	assert_int_equal(nrows, 1);

	/* four windows open at most: a record ten windows ahead prints the old ones */
	add(w, T0 + 1 * SEC, 1, 11, 1000, 10);
	add(w, T0 + 2 * SEC, 1, 11, 1000, 10);
	add(w, T0 + 3 * SEC, 1, 11, 1000, 10);
	assert_int_equal(nrows, 1);
	add(w, T0 + 11 * SEC, 1, 11, 1000, 10);
	assert_int_equal(nrows, 4);
	hs_win_get_stats(w, &st);
	assert_int_equal(st.forced, 3);
	/* a window just inside the ring still opens */
	add(w, T0 + 8 * SEC, 1, 11, 1000, 10);
	hs_win_get_stats(w, &st);
	assert_int_equal(st.late, 1);
	hs_win_flush(w);
	assert_int_equal(nrows, 6);
	assert_true(rows[4].start == T0 + 8 * SEC);	/* oldest first */
	assert_true(rows[5].start == T0 + 11 * SEC);
	hs_win_free(w);
}

static void test_begin(void **state)
{
	struct hs_win *w = mk(SEC, HS_WF_SWITCH, 0, 0);
	struct hs_win_stats st;

	(void)state;
	hs_win_begin(w, T0 + 5 * SEC + 300 * MS);	/* a run that starts mid-window */
	add(w, T0 + 4 * SEC + 999 * MS, 1, 11, 1000, 10);	/* the window before: not kept */
	struct hs_pktrec d = rec(T0 + 4 * SEC, 1, 11, 1000, 10);
	hs_win_drop(w, &d);
	d = rec(T0 + 5 * SEC + 1, 1, 11, 1000, 10);	/* the window it starts in: kept */
	hs_win_drop(w, &d);
	add(w, T0 + 5 * SEC + 400 * MS, 1, 11, 1000, 10);
	hs_win_flush(w);
	hs_win_get_stats(w, &st);
	assert_int_equal(st.before, 2);
	assert_int_equal(st.late + st.late_drops, 0);	/* not reported as late */
	assert_int_equal(nrows, 1);
	assert_true(rows[0].start == T0 + 5 * SEC);
	assert_int_equal(rows[0].packets, 1);
	assert_int_equal(rows[0].drops, 1);
	hs_win_free(w);
}

static void test_flow_set_full(void **state)
{
	/* at most 12 (key, flow) pairs: a set of 16 entries kept 3/4 full */
	struct hs_win *w = mk_flows(SEC, HS_WF_SWITCH, 0, 0, 12);
	struct hs_win_stats st;

	(void)state;
	for (int i = 0; i < 100; i++)
		add(w, T0 + (uint64_t)i, 1, 11, (uint16_t)(1000 + i), 10);
	add(w, T0 + 200, 1, 11, 1000, 10);	/* a flow already in: not untracked */
	hs_win_flush(w);
	hs_win_get_stats(w, &st);
	assert_int_equal(nrows, 1);
	assert_int_equal(rows[0].packets, 101);
	assert_int_equal(rows[0].flows, 12);
	assert_int_equal(st.flows_untracked, 88);
	hs_win_free(w);
}

static void test_flow_set_grows(void **state)
{
	/* many flows under few keys: the set doubles from its first size */
	struct hs_win *w = mk(SEC, HS_WF_SWITCH, 0, 0);
	struct hs_win_stats st;

	(void)state;
	for (int i = 0; i < 20000; i++) {
		add(w, T0 + (uint64_t)i, 1 + i % 2, 1 + (i / 60000), (uint16_t)(1000 + i), 10);
		add(w, T0 + (uint64_t)i, 1 + i % 2, 1 + (i / 60000), (uint16_t)(1000 + i), 10);
	}
	hs_win_flush(w);
	hs_win_get_stats(w, &st);
	assert_int_equal(nrows, 2);
	assert_int_equal(rows[0].flows, 10000);
	assert_int_equal(rows[1].flows, 10000);
	assert_int_equal(rows[0].packets, 20000);
	assert_int_equal(st.flows_untracked, 0);
	/* the next window reuses the grown set, emptied */
	add(w, T0 + 3 * SEC, 1, 11, 1000, 10);
	hs_win_flush(w);
	assert_int_equal(nrows, 3);
	assert_int_equal(rows[2].flows, 1);
	hs_win_free(w);
}

static void test_bad_config(void **state)
{
	struct hs_win_cfg cfg = { .window_ns = 0, .on_row = collect };

	(void)state;
	assert_null(hs_win_new(&cfg));
	cfg.window_ns = SEC;
	cfg.on_row = NULL;
	assert_null(hs_win_new(&cfg));
}

/* ---- records -------------------------------------------------------------------- */

static void test_header(void **state)
{
	struct hs_pktrec r = rec(T0, 1, 11, 40000, 1500);
	uint8_t b[HS_PKTREC_HDR_MAX];

	(void)state;
	r.tcp_flags = 0x12;
	r.ttl = 62;
	assert_int_equal(hs_pktrec_header(&r, b, sizeof(b)), 40);
	assert_int_equal(b[0], 0x45);
	assert_int_equal(b[1], 10 << 2);
	assert_int_equal((b[2] << 8) | b[3], 1500);
	assert_int_equal(b[8], 62);
	assert_int_equal(b[9], 6);
	assert_memory_equal(b + 12, r.key.src.a, 4);
	assert_memory_equal(b + 16, r.key.dst.a, 4);
	assert_int_equal((b[20] << 8) | b[21], 40000);
	assert_int_equal((b[22] << 8) | b[23], 5001);
	assert_int_equal(b[32], 0x50);
	assert_int_equal(b[33], 0x12);
	assert_int_equal(hs_pktrec_header(&r, b, 39), 0);	/* too small */

	r.key.proto = 17;
	assert_int_equal(hs_pktrec_header(&r, b, sizeof(b)), 28);
	assert_int_equal((b[24] << 8) | b[25], 1480);

	assert_int_equal(hs_addr_parse("2001:db8::1", &r.key.src), 0);
	assert_int_equal(hs_addr_parse("2001:db8::2", &r.key.dst), 0);
	r.key.proto = 6;
	assert_int_equal(hs_pktrec_header(&r, b, sizeof(b)), 60);
	assert_int_equal(b[0] >> 4, 6);
	assert_int_equal(b[6], 6);
	assert_int_equal(b[7], 62);
	assert_int_equal((b[4] << 8) | b[5], 1460);
	assert_int_equal(((b[0] & 15) << 4 | b[1] >> 4) >> 2, 10);	/* DSCP back */

	r.key.src.af = 0;
	assert_int_equal(hs_pktrec_header(&r, b, sizeof(b)), 0);
}

static void test_from_pkt_and_hop(void **state)
{
	struct hs_pkt p;
	struct hs_pktrec r;
	struct hs_trace t;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.ts_ns = T0 + 5;
	p.have = HS_HAVE_IP | HS_HAVE_TCP | HS_HAVE_MIRROR;
	assert_int_equal(hs_addr_parse("10.255.0.3", &p.mirror_src), 0);
	assert_int_equal(hs_addr_parse("10.1.1.11", &p.key.src), 0);
	p.key.proto = 6;
	p.len = 60;
	p.ttl = 63;
	p.tos = 0xb8;	/* EF */
	p.tcp_flags = 0x02;
	hs_pktrec_from_pkt(&r, &p);
	assert_true(r.ts_ns == T0 + 5);
	assert_true(hs_addr_eq(&r.sw, &p.mirror_src));
	assert_int_equal(r.dscp, 46);
	assert_int_equal(r.tcp_flags, 2);
	assert_int_equal(r.len, 60);
	/* a plain SPAN copy: no switch */
	p.have &= ~(uint32_t)(HS_HAVE_MIRROR | HS_HAVE_TCP);
	hs_pktrec_from_pkt(&r, &p);
	assert_int_equal(r.sw.af, 0);
	assert_int_equal(r.tcp_flags, 0);

	memset(&t, 0, sizeof(t));
	t.key = p.key;
	t.len = 60;
	t.tcp_flags = 0x10;
	t.nhops = 1;
	t.hops[0].ts_ns = T0 + 9;
	t.hops[0].ttl = 61;
	t.hops[0].tos = 0x28;	/* AF11 */
	assert_int_equal(hs_addr_parse("10.255.0.1", &t.hops[0].addr), 0);
	hs_pktrec_from_hop(&r, &t, &t.hops[0]);
	assert_true(r.ts_ns == T0 + 9);
	assert_int_equal(r.ttl, 61);
	assert_int_equal(r.dscp, 10);
	assert_int_equal(r.tcp_flags, 0x10);
	assert_int_equal(r.sw.a[3], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_boundaries),
		cmocka_unit_test(test_empty_windows),
		cmocka_unit_test(test_keys_and_order),
		cmocka_unit_test(test_key_cap),
		cmocka_unit_test(test_flows_and_drops),
		cmocka_unit_test(test_undrop),
		cmocka_unit_test(test_late_and_ring),
		cmocka_unit_test(test_begin),
		cmocka_unit_test(test_flow_set_full),
		cmocka_unit_test(test_flow_set_grows),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_from_pkt_and_hop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
