/* writer.h - the history writer: closed traces of a live capture reach
 * SQLite on a thread of their own
 *
 * The capture hands each closed trace to a bounded queue (a copy, no
 * allocation) and goes on reading; the writer thread takes them in order
 * and hands them to write() with the store's lock held, and calls commit()
 * with it held when asked (every batch tick) or when the batch grew large.
 * A slow disk or another program's long transaction then holds the writer,
 * not the capture: the queue fills, and traces that find it full are
 * refused (hs_writer_put() false) for the caller to count, never waited for.
 *
 * The lock guards the history and everything the writer reads with it (the
 * topology). The loop thread takes it with hs_writer_hold() before it
 * touches the history while the writer may run, and it is let go once per
 * loop turn (hs_writer_release(), from the loop's prepare and check phases),
 * so the writer runs while the loop waits.
 */
#ifndef HS_WRITER_H
#define HS_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "tracer.h"

/* bytes of the queue of closed traces, a power of two: 43,690 traces seen
 * at one switch each, 21,845 at five, 9,198 at sixteen */
#define HS_WRITER_BYTES (8u << 20)
#define HS_WRITER_WAKE	256	/* traces queued between wakes by hs_writer_put(),
				 * a power of two */

struct hs_writer;

struct hs_writer_ops {
	/* on the writer thread, the lock held. ready: whether rows can be
	 * written now (a batch is open, or could be opened); when not, the
	 * traces wait in the queue and ready is asked again a little later */
	bool (*ready)(void *arg);
	void (*write)(void *arg, int64_t session, const struct hs_trace *t);
	void (*commit)(void *arg);
	void *arg;
	/* on the writer thread after each of its turns, the lock let go: work
	 * that must not keep the loop waiting for the history (NULL: none) */
	void (*after)(void *arg);
};

/* the thread starts at once and sleeps while there is nothing to write;
 * NULL when it cannot be started */
struct hs_writer *hs_writer_new(const struct hs_writer_ops *ops);
/* writes what is queued, then stops the thread */
void hs_writer_free(struct hs_writer *w);

/* the loop thread: queue a closed trace; false when the queue is full.
 * The writer is woken for every HS_WRITER_WAKE traces, or by the next
 * hs_writer_kick() */
bool hs_writer_put(struct hs_writer *w, int64_t session, const struct hs_trace *t);
/* the loop thread, once per loop turn: wake the writer when traces wait */
void hs_writer_kick(struct hs_writer *w);
/* the writer commits its batch at its next turn */
void hs_writer_commit_soon(struct hs_writer *w);
/* take the lock for the rest of this loop turn (again: nothing more) */
void hs_writer_hold(struct hs_writer *w);
/* false, without waiting, when the writer has the lock */
bool hs_writer_try_hold(struct hs_writer *w);
void hs_writer_release(struct hs_writer *w);
/* hold, and wait until every queued trace has been written and a commit
 * asked for is done: the writer then has nothing to do */
void hs_writer_drain(struct hs_writer *w);
/* traces queued and not written yet */
size_t hs_writer_queued(const struct hs_writer *w);
/* any thread: whether n more traces of the most hops would be taken now */
bool hs_writer_fits(const struct hs_writer *w, size_t n);
/* the writer sleeps for want of work: the next put or kick must wake it */
bool hs_writer_asleep(const struct hs_writer *w);

#endif
