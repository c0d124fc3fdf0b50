/* test_wstats.c - a live stats run's end: the drops of traces that close
 * after it (the fabric view's, read from the history later) count when
 * their last hop was before it, not when it was after; copies after it
 * do not count */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "subs.h"
#include "wstats.h"

static uint64_t drops, packets;

static void on_row(void *arg, const struct hs_win_row *r)
{
	(void)arg;
	drops += r->drops;
	packets += r->packets;
}

static void dropped_at(struct hs_subs *s, uint64_t ts)
{
	static struct hs_trace t;

	memset(&t, 0, sizeof(t));
	t.outcome = HS_OUT_DROPPED;
	t.nhops = 1;
	t.len = 100;
	t.hops[0].sw = -1;
	t.hops[0].addr.af = 4;
	t.hops[0].ts_ns = ts;
	hs_publish_trace(s, &t);
}

static void packet_at(struct hs_subs *s, uint64_t ts)
{
	struct hs_pkt p;

	memset(&p, 0, sizeof(p));
	p.have = HS_HAVE_IP;
	p.len = 100;
	p.ts_ns = ts;
	hs_publish_packet(s, HS_PK_KEPT, &p);
}

static void test_end_at(void **state)
{
	const uint64_t s1 = 1000000000ull;
	struct hs_subs subs;
	char err[256];
	struct hs_wstats_cfg cfg = {
		.win = { .window_ns = 60 * s1, .fields = HS_WF_SWITCH, .on_row = on_row },
		.timeout_ns = s1,
	};

	(void)state;
	memset(&subs, 0, sizeof(subs));
	drops = packets = 0;
	struct hs_wstats *w = hs_wstats_new(&cfg, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(hs_wstats_subscribe(w, &subs), 0);
	packet_at(&subs, 10 * s1);
	dropped_at(&subs, 10 * s1);
	hs_wstats_end_at(w, 20 * s1);
	/* closed after the end: its last hop before it counts, after not */
	dropped_at(&subs, 19 * s1);
	dropped_at(&subs, 20 * s1);
	dropped_at(&subs, 21 * s1);
	packet_at(&subs, 19 * s1);
	hs_win_flush(hs_wstats_win(w));
	assert_int_equal(drops, 2);
	assert_int_equal(packets, 1);
	hs_wstats_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_end_at),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
