/* test_gate.c - a thread asleep on a gate is woken by the next waker,
 * also after another sleeper on the same gate went its way; one whose
 * wait is ready does not sleep; one never woken looks again after its
 * wait */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <time.h>
#include <cmocka.h>

#include "gate.h"

#define LONG_NS (3ull * 1000000000)	/* a sleeper's wait no test waits out */

struct sleeper {
	struct hs_gate *g;
	atomic_bool ready;
	uint64_t wait_ns;
	atomic_bool asleep;	/* in the call: set before it, cleared after */
	uint64_t took_ns;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static bool is_ready(void *arg)
{
	struct sleeper *s = arg;

	return atomic_load(&s->ready);
}

/* sleeps once, as a worker waits for its frames */
static void *sleep_once(void *arg)
{
	struct sleeper *s = arg;
	uint64_t t0 = mono_ns();

	atomic_store(&s->asleep, true);
	hs_gate_sleep(s->g, is_ready, s, s->wait_ns);
	s->took_ns = mono_ns() - t0;
	atomic_store(&s->asleep, false);
	return NULL;
}

/* what two sleepers share: B sleeps; A sleeps beside it and leaves at its
 * own wait's end; B's wait is made ready and the gate woken: B wakes
 * then, not at the end of its own long wait */
static void test_second_sleeper_woken(void **state)
{
	(void)state;
	struct hs_gate g;
	struct sleeper a = { .g = &g, .wait_ns = 50000000 }, b = { .g = &g, .wait_ns = LONG_NS };
	pthread_t ta, tb;

	hs_gate_init(&g);
	assert_int_equal(pthread_create(&tb, NULL, sleep_once, &b), 0);
	nap_ms(100);
	assert_int_equal(pthread_create(&ta, NULL, sleep_once, &a), 0);
	assert_int_equal(pthread_join(ta, NULL), 0);
	assert_true(a.took_ns >= 50000000);	/* its wait ended it: nobody woke it */
	assert_true(atomic_load(&b.asleep));
	atomic_store(&b.ready, true);
	uint64_t woke = mono_ns();
	hs_gate_wake(&g);
	assert_int_equal(pthread_join(tb, NULL), 0);
	assert_true(mono_ns() - woke < LONG_NS / 3);
	hs_gate_fini(&g);
}

/* ready already: the call returns at once, whatever the wait */
static void test_ready_does_not_sleep(void **state)
{
	(void)state;
	struct hs_gate g;
	struct sleeper s = { .g = &g, .wait_ns = LONG_NS };

	hs_gate_init(&g);
	atomic_store(&s.ready, true);
	sleep_once(&s);
	assert_true(s.took_ns < LONG_NS / 3);
	hs_gate_fini(&g);
}

/* never woken: it looks again after its wait */
static void test_wait_ends(void **state)
{
	(void)state;
	struct hs_gate g;
	struct sleeper s = { .g = &g, .wait_ns = 30000000 };

	hs_gate_init(&g);
	sleep_once(&s);
	assert_true(s.took_ns >= 30000000);
	assert_true(s.took_ns < LONG_NS / 3);
	hs_gate_fini(&g);
}

/* a wake with nobody asleep is lost on nobody: the next sleeper whose
 * wait is ready returns */
static void test_wake_nobody(void **state)
{
	(void)state;
	struct hs_gate g;
	struct sleeper s = { .g = &g, .wait_ns = LONG_NS };

	hs_gate_init(&g);
	hs_gate_wake(&g);
	atomic_store(&s.ready, true);
	sleep_once(&s);
	assert_true(s.took_ns < LONG_NS / 3);
	hs_gate_fini(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_second_sleeper_woken),
		cmocka_unit_test(test_ready_does_not_sleep),
		cmocka_unit_test(test_wait_ends),
		cmocka_unit_test(test_wake_nobody),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
