/* test_writer.c - the history writer: every trace queued is written in
 * order and a commit asked for is done; with nothing to do its thread
 * sleeps until asked, and does not look again every few milliseconds nor
 * wake for each trace; what it does after a turn (a history's checkpoint)
 * keeps the loop from the history no longer; its queue holds traces by
 * their size */
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "writer.h"

struct sink {
	int written, commits;
	uint64_t last_id;
	bool in_order;
};

static bool ready(void *arg)
{
	(void)arg;
	return true;
}

static void write_one(void *arg, int64_t session, const struct hs_trace *t)
{
	struct sink *s = arg;

	if (session != 7 || t->id != s->last_id + 1)
		s->in_order = false;
	s->last_id = t->id;
	s->written++;
}

static void commit(void *arg)
{
	((struct sink *)arg)->commits++;
}

/* the context switches of this process's threads other than this one */
static long others_switches(void)
{
	char path[300], line[128];
	long sum = 0;
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");

	assert_non_null(dir);
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.' || atol(d->d_name) == (long)gettid())
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", d->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "voluntary_ctxt_switches:", 24))
				sum += atol(line + 24);
		fclose(f);
	}
	closedir(dir);
	return sum;
}

/* A thread's start and its first sleep can take longer than any fixed
 * wait on a busy machine: wait until the writer says it sleeps. */
static void until_asleep(struct hs_writer *w)
{
	struct timespec ms = { 0, 1000 * 1000 };

	for (int i = 0; i < 10000 && !hs_writer_asleep(w); i++)
		nanosleep(&ms, NULL);
	assert_true(hs_writer_asleep(w));
}

static void test_writes_and_sleeps(void **state)
{
	struct sink s = { .in_order = true };
	struct hs_writer_ops ops = { .ready = ready, .write = write_one, .commit = commit, .arg = &s };
	struct hs_trace t;
	struct timespec quiet = { 0, 300 * 1000 * 1000 };

	(void)state;
	alarm(20);	/* a writer that is never woken hangs the drain */
	struct hs_writer *w = hs_writer_new(&ops);
	assert_non_null(w);
	until_asleep(w);	/* it starts, and goes to sleep */

	/* idle: it was looking every 2 ms, 150 times in these 0.3 s */
	long before = others_switches();
	nanosleep(&quiet, NULL);
	assert_in_range(others_switches() - before, 0, 5);

	memset(&t, 0, sizeof(t));
	for (int i = 1; i <= 3; i++) {
		t.id = (uint64_t)i;
		assert_true(hs_writer_put(w, 7, &t));
	}
	hs_writer_drain(w);
	assert_int_equal(s.written, 3);
	assert_true(s.in_order);
	assert_int_equal(hs_writer_queued(w), 0);
	hs_writer_release(w);

	hs_writer_commit_soon(w);
	hs_writer_drain(w);
	assert_int_equal(s.commits, 1);
	hs_writer_release(w);

	/* asleep again, and woken by the next trace */
	until_asleep(w);
	t.id = 4;
	assert_true(hs_writer_put(w, 7, &t));
	hs_writer_drain(w);
	assert_int_equal(s.written, 4);
	hs_writer_release(w);

	/* what is queued when it is freed is written first */
	t.id = 5;
	assert_true(hs_writer_put(w, 7, &t));
	hs_writer_free(w);
	assert_int_equal(s.written, 5);
	assert_true(s.in_order);
	alarm(0);
}

/* A trace queued does not wake the writer by itself: waking costs the
 * loop a full fence per trace. The loop wakes it once per turn
 * (hs_writer_kick), and a put once per HS_WRITER_WAKE traces. */
static void test_woken_per_turn(void **state)
{
	struct sink s = { .in_order = true };
	struct hs_writer_ops ops = { .ready = ready, .write = write_one, .commit = commit, .arg = &s };
	struct hs_trace t;
	struct timespec ms = { 0, 1000 * 1000 };
	uint64_t id = 0;

	(void)state;
	alarm(20);
	struct hs_writer *w = hs_writer_new(&ops);
	assert_non_null(w);
	until_asleep(w);

	/* a trace now and then, as a quiet capture closes them: woken for
	 * each, the writer switched once per trace */
	memset(&t, 0, sizeof(t));
	long before = others_switches();
	for (int i = 0; i < 50; i++) {
		t.id = ++id;
		assert_true(hs_writer_put(w, 7, &t));
		nanosleep(&ms, NULL);
	}
	assert_in_range(others_switches() - before, 0, 5);
	assert_int_equal(hs_writer_queued(w), 50);

	/* the end of the loop's turn wakes it for them */
	hs_writer_kick(w);
	for (int i = 0; i < 2000 && hs_writer_queued(w); i++)
		nanosleep(&ms, NULL);
	assert_int_equal(hs_writer_queued(w), 0);

	/* a turn that queues many: woken without waiting for its end */
	until_asleep(w);
	while (id % HS_WRITER_WAKE) {
		t.id = ++id;
		assert_true(hs_writer_put(w, 7, &t));
	}
	for (int i = 0; i < 2000 && hs_writer_queued(w); i++)
		nanosleep(&ms, NULL);
	assert_int_equal(hs_writer_queued(w), 0);

	hs_writer_drain(w);
	assert_int_equal(s.written, (int)id);
	assert_true(s.in_order);
	hs_writer_free(w);
	alarm(0);
}

struct later {
	struct sink s;		/* first: commit() counts in it */
	atomic_bool in_after, held;
	bool saw_held;
};

static void after(void *arg)
{
	struct later *l = arg;
	struct timespec ms = { 0, 1000 * 1000 };

	if (atomic_load(&l->in_after) || l->s.commits == 0)
		return;
	atomic_store(&l->in_after, true);
	for (int i = 0; i < 5000 && !atomic_load(&l->held); i++)
		nanosleep(&ms, NULL);
	l->saw_held = atomic_load(&l->held);
}

/* after a turn the writer works on with its lock let go: the loop has
 * the history meanwhile (a checkpoint of 64 MiB kept answers waiting) */
static void test_after_unlocked(void **state)
{
	struct later l = { .s = { .in_order = true } };
	struct hs_writer_ops ops = { .ready = ready, .commit = commit, .after = after,
				     .arg = &l };
	struct timespec ms = { 0, 1000 * 1000 };

	(void)state;
	alarm(20);
	struct hs_writer *w = hs_writer_new(&ops);
	assert_non_null(w);
	hs_writer_commit_soon(w);
	for (int i = 0; i < 5000 && !atomic_load(&l.in_after); i++)
		nanosleep(&ms, NULL);
	assert_true(atomic_load(&l.in_after));
	assert_true(hs_writer_try_hold(w));	/* while after() runs */
	atomic_store(&l.held, true);
	hs_writer_release(w);
	hs_writer_free(w);
	assert_int_equal(l.s.commits, 1);
	assert_true(l.saw_held);
	alarm(0);
}

struct slow {
	struct sink s;		/* first: commit() counts in it */
	atomic_int written;
};

static void write_slow(void *arg, int64_t session, const struct hs_trace *t)
{
	struct slow *sl = arg;
	struct timespec t0, now;

	(void)session;
	(void)t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do	/* 40 us a trace: a turn of HS_WRITER_TURN takes 40 ms */
		clock_gettime(CLOCK_MONOTONIC, &now);
	while ((now.tv_sec - t0.tv_sec) * 1000000000L + now.tv_nsec - t0.tv_nsec < 40000);
	atomic_fetch_add(&sl->written, 1);
}

#define QUEUED 8192	/* traces queued at once, 330 ms of write_slow() */

/* The loop asks for the lock while the writer works through a full queue:
 * it has it once the writer's turn in progress ends, not after the whole
 * queue (a mutex is not fair, and the writer took it back turn after turn
 * while 'capture status' waited) */
static void test_hold_not_starved(void **state)
{
	struct slow sl = { .s = { .in_order = true } };
	struct hs_writer_ops ops = { .ready = ready, .write = write_slow, .commit = commit,
				     .arg = &sl };
	struct hs_trace t;
	struct timespec ms = { 0, 1000 * 1000 };

	(void)state;
	alarm(30);
	struct hs_writer *w = hs_writer_new(&ops);
	assert_non_null(w);
	memset(&t, 0, sizeof(t));
	for (int i = 0; i < QUEUED; i++) {
		t.id = (uint64_t)i + 1;
		assert_true(hs_writer_put(w, 7, &t));
	}
	hs_writer_kick(w);
	for (int i = 0; i < 10000 && atomic_load(&sl.written) == 0; i++)
		nanosleep(&ms, NULL);
	hs_writer_hold(w);
	int at = atomic_load(&sl.written);
	hs_writer_release(w);
	hs_writer_drain(w);
	hs_writer_release(w);
	assert_int_equal(atomic_load(&sl.written), QUEUED);
	assert_in_range(at, 1, 2 * 1024);
	hs_writer_free(w);
	alarm(0);
}

/* ---- the queue holds traces by their size ---------------------------------- */

struct sized {
	atomic_bool open;	/* ready() */
	atomic_uint_least64_t written;
	uint64_t last_id;
	bool intact;		/* every trace in order, its hops as they were put */
};

static bool sized_ready(void *arg)
{
	return atomic_load(&((struct sized *)arg)->open);
}

static unsigned hops_of(uint64_t id)
{
	return (unsigned)(id % (HS_TRACE_MAX_HOPS + 1));
}

static void sized_trace(struct hs_trace *t, uint64_t id, unsigned nhops)
{
	t->id = id;
	t->nhops = (uint16_t)nhops;
	for (unsigned k = 0; k < nhops; k++)
		t->hops[k].ts_ns = id * 100 + k;
}

static void write_sized(void *arg, int64_t session, const struct hs_trace *t)
{
	struct sized *z = arg;

	if (session != 7 || t->id != z->last_id + 1 || t->nhops > HS_TRACE_MAX_HOPS)
		z->intact = false;
	else
		for (unsigned k = 0; k < t->nhops; k++)
			if (t->hops[k].ts_ns != t->id * 100 + k)
				z->intact = false;
	z->last_id = t->id;
	atomic_fetch_add(&z->written, 1);
}

static void sized_commit(void *arg)
{
	(void)arg;
}

/* until a put is refused, with nothing written: how many it took */
static uint64_t fill(struct hs_writer *w, uint64_t *id, unsigned nhops, struct hs_trace *t)
{
	uint64_t n = 0;

	for (;;) {
		sized_trace(t, *id + 1, nhops);
		if (!hs_writer_put(w, 7, t))
			return n;
		++*id;
		n++;
	}
}

/* A trace seen at one switch takes the queue's room of one switch's copy,
 * not of the longest trace: the same bytes hold five times the traces the
 * queue's fixed slots did (8192), the longest as many as before; the
 * queue wraps round its end with every trace whole and in order, also
 * while the writer takes them as they come */
static void test_queue_by_size(void **state)
{
	struct sized z = { .intact = true };
	struct hs_writer_ops ops = { .ready = sized_ready, .write = write_sized,
				     .commit = sized_commit, .arg = &z };
	struct hs_trace *t = calloc(1, sizeof(*t));
	uint64_t id = 0;

	(void)state;
	alarm(60);
	assert_non_null(t);
	struct hs_writer *w = hs_writer_new(&ops);
	assert_non_null(w);

	uint64_t one = fill(w, &id, 1, t);
	assert_true(one >= 5 * 8192);
	assert_int_equal(hs_writer_queued(w), one);
	atomic_store(&z.open, true);
	hs_writer_drain(w);
	hs_writer_release(w);
	assert_int_equal(atomic_load(&z.written), id);
	assert_true(z.intact);

	/* the longest, from where the last ended: across the ring's end */
	atomic_store(&z.open, false);
	uint64_t longest = fill(w, &id, HS_TRACE_MAX_HOPS, t);
	assert_true(longest >= 8192);
	atomic_store(&z.open, true);
	hs_writer_drain(w);
	hs_writer_release(w);
	assert_int_equal(atomic_load(&z.written), id);
	assert_true(z.intact);

	/* every size, put while the writer writes: refused ones are put again */
	uint64_t end = id + 300000;
	while (id < end) {
		sized_trace(t, id + 1, hops_of(id + 1));
		if (hs_writer_put(w, 7, t))
			id++;
		else
			hs_writer_kick(w);
	}
	hs_writer_drain(w);
	hs_writer_release(w);
	assert_int_equal(atomic_load(&z.written), id);
	assert_int_equal(hs_writer_queued(w), 0);
	assert_true(z.intact);
	hs_writer_free(w);
	free(t);
	alarm(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writes_and_sleeps),
		cmocka_unit_test(test_woken_per_turn),
		cmocka_unit_test(test_after_unlocked),
		cmocka_unit_test(test_hold_not_starved),
		cmocka_unit_test(test_queue_by_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
