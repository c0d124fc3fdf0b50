/* gate.h - where a thread with nothing to do sleeps until another gives it
 * something (workers.c)
 *
 * The sleeper says what it waits for (ready); whoever makes that true
 * calls hs_gate_wake() after. Waking costs a fence and a load while
 * nobody sleeps. Several threads may sleep on one gate at once: they are
 * counted, so that one going its way does not leave the others asleep
 * unseen by the next waker. A sleeper also looks again after wait_ns,
 * whatever happens.
 */
#ifndef HS_GATE_H
#define HS_GATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct hs_gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	atomic_uint asleep;	/* threads between the look at ready() and waking */
};

static inline void hs_gate_init(struct hs_gate *g)
{
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	atomic_init(&g->asleep, 0);
}

static inline void hs_gate_fini(struct hs_gate *g)
{
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
}

/* sleep until ready(arg) (looked at once, here), woken, or wait_ns */
static inline void hs_gate_sleep(struct hs_gate *g, bool (*ready)(void *), void *arg,
				 uint64_t wait_ns)
{
	struct timespec until;

	pthread_mutex_lock(&g->mu);
	atomic_fetch_add(&g->asleep, 1);
	/* the count is seen by a waker that changes what ready() reads after
	 * this, or ready() sees the change */
	atomic_thread_fence(memory_order_seq_cst);
	if (!ready(arg)) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += (time_t)(wait_ns / 1000000000u);
		until.tv_nsec += (long)(wait_ns % 1000000000u);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g->cv, &g->mu, &until);
	}
	atomic_fetch_sub(&g->asleep, 1);
	pthread_mutex_unlock(&g->mu);
}

/* after making what a sleeper waits for ready: every sleeper looks again */
static inline void hs_gate_wake(struct hs_gate *g)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load_explicit(&g->asleep, memory_order_relaxed))
		return;
	pthread_mutex_lock(&g->mu);
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

#endif
