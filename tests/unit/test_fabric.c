/* test_fabric.c - where a history many analyzers write is whole: the
 * packets whose parts may still be on their way are left out, by the
 * fabric view and the store-answered verbs alike */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "capture.h"
#include "fabric.h"

#define T0 (1700000000ULL * HS_NS_PER_SEC)
#define S HS_NS_PER_SEC
#define WINDOW S	/* the trace timeout */

/* one analyzer captures; its newest stored packet was first seen at newest */
static struct hs_store_others capturing(uint64_t newest)
{
	return (struct hs_store_others){ .have_newest = true, .newest = newest, .others = 1,
					 .running = 1 };
}

/* Nothing captures: every stored packet is whole, however recent */
static void test_settled(void **state)
{
	struct hs_store_others p = capturing(T0);

	(void)state;
	p.running = 0;
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, T0, T0), T0 + 1);
	assert_int_equal(hs_fabric_whole_until(&p, WINDOW, T0), 0);
}

/* While one captures, the packets first seen within a settle of the
 * newest may have parts to come, until the newest has not changed for a
 * settle and a heartbeat */
static void test_capturing(void **state)
{
	struct hs_store_others p = capturing(T0);
	uint64_t settle = hs_fabric_settle_ns(&p, WINDOW), quiet = settle + HS_HEARTBEAT_NS;

	(void)state;
	assert_true(settle >= 2 * WINDOW);
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, T0 + S, T0), T0 - settle);
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, T0 + quiet, T0), T0 - settle);
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, T0 + quiet + 1, T0), T0 + 1);
	assert_int_equal(hs_fabric_whole_until(&p, WINDOW, T0 + quiet), T0 - settle);
	assert_int_equal(hs_fabric_whole_until(&p, WINDOW, T0 + quiet + 1), 0);

	/* a writer's lag is waited for too */
	p.lag_ns = 30 * S;
	assert_int_equal(hs_fabric_settle_ns(&p, WINDOW), settle + 30 * S);
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, T0 + S, T0), T0 - settle - 30 * S);
}

/* Captures of old files: the newest packet was first seen long ago, and
 * the fabric view saw it change a moment ago: not whole yet for the view,
 * which knows when it changed; whole for a verb that looks once and has
 * only its time */
static void test_moved(void **state)
{
	struct hs_store_others p = capturing(T0);
	uint64_t settle = hs_fabric_settle_ns(&p, WINDOW), now = T0 + 3600 * S;

	(void)state;
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, now, now - S), T0 - settle);
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, now, T0), T0 + 1);
	assert_int_equal(hs_fabric_whole_until(&p, WINDOW, now), 0);
}

/* Packets first seen within a settle of the clock's start: none is whole
 * yet (0), which a read of the newest takes as its least end, 1 (0 there
 * is no end); a history with nothing stored has no end */
static void test_none_whole(void **state)
{
	struct hs_store_others p = capturing(S);
	struct hs_store_others empty = { .others = 1, .running = 1 };

	(void)state;
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, 2 * S, S), 0);
	assert_int_equal(hs_fabric_whole_until(&p, WINDOW, 2 * S), 1);
	assert_int_equal(hs_fabric_whole_until(&empty, WINDOW, T0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settled),
		cmocka_unit_test(test_capturing),
		cmocka_unit_test(test_moved),
		cmocka_unit_test(test_none_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
