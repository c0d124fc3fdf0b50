/* writer.c - the history writer thread and its bounded queue (writer.h) */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "writer.h"
#include "hs.h"

#define HS_WRITER_TURN	1024	/* traces written per hold of the lock */
#define HS_WRITER_NAP_NS 20000000	/* a history not ready is asked again after 20 ms */

/* A queued trace takes the bytes of its hops, not of the most a trace
 * may have: a fixed slot of the longest (896 bytes) left a queue of 8 MB
 * room for 8192 traces, 8 ms of a burst at a million new traces a
 * second, where a trace seen at one switch needs 192. Entries follow one
 * another in a ring of bytes; one that would cross its end goes at its
 * start, after a skip over the rest. */
struct job {
	uint32_t size;		/* bytes of the entry, this header counted */
	uint32_t skip;		/* 1: no trace, the ring's end follows */
	int64_t session;
	struct hs_trace t;	/* hops past t.nhops are not there */
};
#define JOB_HEAD offsetof(struct job, t)
#define JOB_ALIGN 16u	/* every entry, so the rest of the ring fits a header */
_Static_assert(JOB_HEAD == JOB_ALIGN, "a skip is a header, and fits any rest");
_Static_assert((HS_WRITER_BYTES & (HS_WRITER_BYTES - 1)) == 0, "a power of two");

struct hs_writer {
	struct hs_writer_ops ops;
	pthread_t thread;
	pthread_mutex_t mu;	/* the history and what is read with it */
	pthread_cond_t done;	/* a turn of the writer ended */
	bool held;		/* by the loop thread */
	atomic_bool stop, commit;
	/* With nothing to do the writer sleeps until woken: looking again
	 * every few milliseconds cost a capture more CPU than its frames
	 * when the history took few of them. Whoever finds it asleep (and
	 * clears that) wakes it: one wake per sleep, none while it works.
	 * Looking costs a full fence, which waits for the copy of the trace
	 * just queued to leave the core: the loop looks once per turn
	 * (hs_writer_kick()), a put only once per HS_WRITER_WAKE traces. */
	pthread_mutex_t idle_mu;
	pthread_cond_t more;
	atomic_bool asleep;
	/* The loop waits for the lock (hs_writer_hold()): the writer lets it
	 * have it before its next turn. A mutex is not fair: with a backlog
	 * (after a checkpoint) the writer took it back turn after turn, and
	 * a 'capture status' waited the whole backlog, most of a second. */
	atomic_bool wanted;
	pthread_cond_t handed;	/* wanted went false (with idle_mu) */
	/* single producer (the loop), single consumer (the writer): bytes
	 * counted since the start, and the traces among them */
	_Atomic uint64_t head, tail;	/* next to write, next to fill */
	_Atomic uint64_t put, written;
	unsigned char *ring;
};

/* the bytes of the entry of a trace of nhops hops */
static uint32_t job_size(unsigned nhops)
{
	size_t bytes = JOB_HEAD + offsetof(struct hs_trace, hops) + nhops * sizeof(struct hs_hop);

	return (uint32_t)((bytes + JOB_ALIGN - 1) & ~(size_t)(JOB_ALIGN - 1));
}

static struct job *job_at(const struct hs_writer *w, uint64_t pos)
{
	return (struct job *)(w->ring + (pos & (HS_WRITER_BYTES - 1)));
}

static void nap(void)
{
	struct timespec ts = { 0, HS_WRITER_NAP_NS };

	nanosleep(&ts, NULL);
}

static bool has_work(struct hs_writer *w)
{
	return atomic_load(&w->head) != atomic_load(&w->tail) || atomic_load(&w->commit) ||
	       atomic_load(&w->stop);
}

/* until a trace, a commit or a stop is asked for */
static void sleep_idle(struct hs_writer *w)
{
	pthread_mutex_lock(&w->idle_mu);
	atomic_store(&w->asleep, true);
	/* what was asked for before it said so is seen here, the rest wakes it */
	while (atomic_load(&w->asleep) && !has_work(w))
		pthread_cond_wait(&w->more, &w->idle_mu);
	atomic_store(&w->asleep, false);
	pthread_mutex_unlock(&w->idle_mu);
}

static void wake(struct hs_writer *w)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&w->asleep) && atomic_exchange(&w->asleep, false)) {
		pthread_mutex_lock(&w->idle_mu);
		pthread_cond_signal(&w->more);
		pthread_mutex_unlock(&w->idle_mu);
	}
}

static void *writer_main(void *arg)
{
	struct hs_writer *w = arg;

	for (;;) {
		uint64_t head = atomic_load_explicit(&w->head, memory_order_relaxed);
		uint64_t tail = atomic_load_explicit(&w->tail, memory_order_acquire);
		bool commit = atomic_load(&w->commit);

		if (head == tail && !commit) {
			if (atomic_load(&w->stop))
				break;
			sleep_idle(w);
			continue;
		}
		if (atomic_load(&w->wanted)) {
			pthread_mutex_lock(&w->idle_mu);
			while (atomic_load(&w->wanted))
				pthread_cond_wait(&w->handed, &w->idle_mu);
			pthread_mutex_unlock(&w->idle_mu);
		}
		pthread_mutex_lock(&w->mu);
		if (head != tail && !w->ops.ready(w->ops.arg) && !atomic_load(&w->stop)) {
			pthread_mutex_unlock(&w->mu);
			nap();
			continue;
		}
		for (unsigned n = 0; head != tail && n < HS_WRITER_TURN;) {
			struct job *j = job_at(w, head);
			if (!j->skip) {
				w->ops.write(w->ops.arg, j->session, &j->t);
				atomic_fetch_add_explicit(&w->written, 1, memory_order_relaxed);
				n++;
			}
			head += j->size;
			atomic_store_explicit(&w->head, head, memory_order_release);
		}
		if (atomic_exchange(&w->commit, false))
			w->ops.commit(w->ops.arg);
		pthread_cond_broadcast(&w->done);
		pthread_mutex_unlock(&w->mu);
		if (w->ops.after)
			w->ops.after(w->ops.arg);
	}
	return NULL;
}

struct hs_writer *hs_writer_new(const struct hs_writer_ops *ops)
{
	struct hs_writer *w = hs_xcalloc(1, sizeof(*w));

	w->ops = *ops;
	/* past its end, a trace's full size: one at the end, read whole
	 * (its hops past nhops unset), stays inside */
	w->ring = hs_xcalloc(1, HS_WRITER_BYTES + sizeof(struct hs_trace));
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->done, NULL);
	pthread_mutex_init(&w->idle_mu, NULL);
	pthread_cond_init(&w->more, NULL);
	pthread_cond_init(&w->handed, NULL);
	if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
		pthread_cond_destroy(&w->handed);
		pthread_cond_destroy(&w->more);
		pthread_mutex_destroy(&w->idle_mu);
		pthread_cond_destroy(&w->done);
		pthread_mutex_destroy(&w->mu);
		free(w->ring);
		free(w);
		return NULL;
	}
	return w;
}

void hs_writer_free(struct hs_writer *w)
{
	if (!w)
		return;
	hs_writer_release(w);
	atomic_store(&w->stop, true);
	wake(w);
	pthread_join(w->thread, NULL);	/* it writes what is queued first */
	pthread_cond_destroy(&w->handed);
	pthread_cond_destroy(&w->more);
	pthread_mutex_destroy(&w->idle_mu);
	pthread_cond_destroy(&w->done);
	pthread_mutex_destroy(&w->mu);
	free(w->ring);
	free(w);
}

bool hs_writer_put(struct hs_writer *w, int64_t session, const struct hs_trace *t)
{
	uint64_t tail = atomic_load_explicit(&w->tail, memory_order_relaxed);
	unsigned n = t->nhops > HS_TRACE_MAX_HOPS ? HS_TRACE_MAX_HOPS : t->nhops;
	size_t bytes = offsetof(struct hs_trace, hops) + n * sizeof(t->hops[0]);
	uint32_t size = job_size(n);
	uint32_t rest = (uint32_t)(HS_WRITER_BYTES - (tail & (HS_WRITER_BYTES - 1)));
	uint32_t skip = size > rest ? rest : 0;

	if (HS_WRITER_BYTES - (tail - atomic_load_explicit(&w->head, memory_order_acquire)) <
	    (uint64_t)skip + size)
		return false;
	if (skip) {
		struct job *s = job_at(w, tail);
		s->size = skip;
		s->skip = 1;
		tail += skip;
	}
	struct job *j = job_at(w, tail);
	j->size = size;
	j->skip = 0;
	j->session = session;
	memcpy(&j->t, t, bytes);
	uint64_t put = atomic_load_explicit(&w->put, memory_order_relaxed) + 1;
	atomic_store_explicit(&w->put, put, memory_order_relaxed);
	atomic_store_explicit(&w->tail, tail + size, memory_order_release);
	if ((put & (HS_WRITER_WAKE - 1)) == 0)
		wake(w);
	return true;
}

void hs_writer_kick(struct hs_writer *w)
{
	if (w && atomic_load_explicit(&w->tail, memory_order_relaxed) !=
		 atomic_load_explicit(&w->head, memory_order_relaxed))
		wake(w);
}

void hs_writer_commit_soon(struct hs_writer *w)
{
	atomic_store(&w->commit, true);
	wake(w);
}

void hs_writer_hold(struct hs_writer *w)
{
	if (w && !w->held) {
		atomic_store(&w->wanted, true);
		pthread_mutex_lock(&w->mu);
		pthread_mutex_lock(&w->idle_mu);
		atomic_store(&w->wanted, false);
		pthread_cond_broadcast(&w->handed);
		pthread_mutex_unlock(&w->idle_mu);
		w->held = true;
	}
}

bool hs_writer_try_hold(struct hs_writer *w)
{
	if (w && !w->held) {
		if (pthread_mutex_trylock(&w->mu) != 0)
			return false;
		w->held = true;
	}
	return true;
}

void hs_writer_release(struct hs_writer *w)
{
	if (w && w->held) {
		w->held = false;
		pthread_mutex_unlock(&w->mu);
	}
}

void hs_writer_drain(struct hs_writer *w)
{
	if (!w)
		return;
	hs_writer_kick(w);
	hs_writer_hold(w);
	while (atomic_load_explicit(&w->head, memory_order_acquire) !=
	       atomic_load_explicit(&w->tail, memory_order_relaxed) || atomic_load(&w->commit))
		pthread_cond_wait(&w->done, &w->mu);
}

bool hs_writer_fits(const struct hs_writer *w, size_t n)
{
	struct hs_writer *m = (struct hs_writer *)w;
	uint64_t head = atomic_load_explicit(&m->head, memory_order_acquire);
	uint64_t used = atomic_load_explicit(&m->tail, memory_order_acquire) - head;

	/* and a skip over the ring's end, at most one entry's */
	return HS_WRITER_BYTES - used >= (n + 1) * job_size(HS_TRACE_MAX_HOPS);
}

size_t hs_writer_queued(const struct hs_writer *w)
{
	if (!w)
		return 0;
	/* written first: never more than put, read after */
	uint64_t written = atomic_load(&((struct hs_writer *)w)->written);
	return atomic_load(&((struct hs_writer *)w)->put) - written;
}

bool hs_writer_asleep(const struct hs_writer *w)
{
	return w && atomic_load(&((struct hs_writer *)w)->asleep);
}
