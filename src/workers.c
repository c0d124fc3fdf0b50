/* workers.c - a capture file, or an interface, read by several threads at
 * once (workers.h) */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "subs.h"
#include "freader.h"
#include "gate.h"
#include "pfile.h"
#include "workers.h"
#include "writer.h"

#define HS_WORKER_TRACES 4096	/* closed traces queued per worker; a power of two */
/* the bytes of a trace of a fat tree's longest path, five hops: what is
 * asked for ahead of reading or writing one in a queue */
#define HS_TRACE_COMMON (offsetof(struct hs_trace, hops) + 5 * sizeof(struct hs_hop))
/* Packets for the loop's subscribers (control messages, and the packets
 * kept while 'stats' wants them) queued per worker; a power of two. The
 * workers take their frames at their own pace, a few thousand apart, and
 * a packet is handed on only once every worker has read past its frame:
 * the queue holds what comes meanwhile (at 256 a worker waited for the
 * others at every few dozen control messages). */
#define HS_WORKER_CTL	4096
/* a packet's bytes, copied: the frame is gone when the loop reads it. A
 * jumbo frame's fit. They go in a ring of bytes of their own, in the order
 * of the queue. */
#define HS_WORKER_CTL_BYTES 9216
#define HS_WORKER_CTL_RING (1u << 20)

struct ctl_ent {
	uint64_t frame;		/* its frame's number in the file */
	unsigned cls;		/* HS_PK_CONTROL or HS_PK_KEPT */
	uint64_t from;		/* where its bytes begin in the ring, counted
				 * since the start (before a skip to the ring's start) */
	struct hs_pkt p;	/* its l3 (a kept packet's) and l4_payload point into the
				 * ring; its mpls is NULL */
};
/* frames the walk has given a worker and it has not read yet; a power of
 * two. The walk is that far ahead at most, so the frames are still in
 * the cache when the worker reads them. */
#define HS_WORKER_IN	8192
/* the walk hands frames on, and a worker takes them, in runs of this
 * many: the queue's indices are shared once a run, not once a frame */
#define HS_WORKER_RUN	256
/* a worker that has read all it was given walks on until it has this many
 * frames of its own queued: with its share of the frames between them,
 * what it walked is still in its caches when it decodes its own */
#define HS_WORKER_WALK	1024
/* a thread waiting on a gate looks again after this long whatever happens
 * (a stop is seen even if its wake-up is missed) */
#define HS_WORKER_WAIT_NS 20000000
/* a worker asks for the headers of the frame this many ahead of the one
 * it decodes */
#define HS_WORKER_AHEAD	8
/* The file's bytes are read (pread) into a ring of this many, on huge
 * pages, this many at a time: what the walk reads next is in its core's
 * cache, and the same few pages of the ring are used again and again.
 * What is read into its first HS_RING_TAIL bytes is copied past its end
 * too, so that a record across its end is read whole. (On a 2-core virtual
 * machine, a thread walking the records of the bench's capture mapped
 * whole took three times the CPU of one reading it into 256 KB at a time
 * and walking that, the copy counted: every page of the map put in the
 * page table, and its lines read through TLB misses.) The ring holds every
 * frame the workers have queued and not read: a worker is 8192 frames
 * behind the walk at most, 2.4 MB of the bench's capture. Larger frames
 * fill it first: the walk then waits for the worker holding the oldest.
 * (The same ring of small pages, mapped twice in a row for the records
 * across its end, cost two workers a tenth more CPU.)
 * HOPSCOPE_TEST_WORKER_RING makes it smaller (the tests that fill it). */
#define HS_RING		(1u << 23)
#define HS_RING_MIN	(1u << 20)	/* a record longest and room */
#define HS_RING_CHUNK	(1u << 18)
#define HS_RING_TAIL	(16 + 262144)	/* a record, longest (snaplen 262144) */
#define HS_WORKER_FILEBUF (1u << 17)	/* as the loop's own reader (capture.c) */
#define HS_WORKER_NAP_NS 200000	/* a pause, or a stop, is looked at again after 0.2 ms */
/* live: a worker with nothing to read looks again after this long (a stop
 * is seen, quiet traces close), and reads the kernel's counters this often */
#define HS_WORKER_POLL_MS 20
#define HS_WORKER_STATS_NS 100000000ull
/* live: a frame read after its socket's ring was seen empty was stamped no
 * earlier than this long before: it was in a block the kernel had not
 * handed over yet (HS_LIVE_TIMEOUT_MS, rounded up to its timer tick) */
#define HS_WORKER_LATE_NS (10ull * HS_LIVE_TIMEOUT_MS * 1000000)

/* a frame the walk gave a worker: the offset of its record in the map,
 * or one of these */
#define IN_END	0	/* the file's end: no more frames */
#define IN_LEAVE 1	/* libpcap reads on from the next frame (map_leave) */
#define IN_TIME	2	/* the capture moved on to now, frame frames read */
struct in_ent {
	uint64_t off;
	uint64_t frame;		/* its number in the file (at IN_*: frames before) */
	uint64_t now;		/* the newest capture time of the frames before it */
};

/* the walker's view of a worker's queue */
struct room {
	struct worker *w;
	size_t tail;		/* next to fill */
	size_t head;		/* the worker's, as last read: the room is at least this */
	uint64_t now;		/* the capture time it was last given */
};

/* A file read into the ring is walked once, each frame given to its
 * worker: every worker walking every frame to find its own cost each of
 * them the whole walk, the first read of every frame's bytes, which was
 * as much as the work on its own frames. The workers take turns at the
 * walk: one that has read all it was given walks on, unless another is
 * at it, until it has a run of its own queued, or another's queue is
 * full. (A thread of its own for the walk cost, on two cores, as much
 * CPU as a worker: a fourth thread to wake and put to sleep, and every
 * frame's bytes read on one core, then decoded on another.) */
struct walk {
	pthread_mutex_t mu;	/* held by the worker walking */
	struct room q[HS_WORKERS_MAX];
	size_t off;		/* the next record */
	size_t filled;		/* the file's bytes are in the ring up to here */
	size_t eof;		/* what the file gave: its size, or less when a read fails */
	int ring_to;		/* the ring is full: the worker holding the oldest
				 * frame in it reads on first, -1 none */
	uint64_t frames;	/* frames taken so far */
	uint64_t now;		/* the newest capture time of those */
	uint64_t end;		/* IN_END, or IN_LEAVE: a record left to libpcap */
	bool at_end;		/* no more records: the workers are told, end */
	unsigned ended;		/* workers told so far */
	int pend_to;		/* the queue full for pend, -1 none */
	struct in_ent pend;	/* a frame, or the end, taken and not yet queued */
};

struct worker {
	struct hs_workers *ws;
	pthread_t thread;
	bool started;
	struct hs_lane lane;
	pcap_t *pc;		/* live: its socket in the fanout group */
	uint64_t last_mono;	/* live: when its newest frame was read */
	bool in_group;		/* live: its frames are the group's (on_live_frame) */
	struct hs_freader *reader;	/* opened, never started: its file is read here */
	struct hs_pfile *file;	/* reads on where the map is not read (below) */
	char *filebuf;
	bool given;		/* its frames come from the walk (in), else
				 * from libpcap: it reads every frame */
	struct hs_capture_stats st;	/* the lane's, the worker's own */
	uint64_t derr[HS_DERR__COUNT];
	uint64_t frames;	/* read so far (given: the newest one's number) */

	/* Single producer, single consumer queues: each index on a cache line
	 * of its own, so that the side that moves one does not take from
	 * the other, at every move, the line of the index it moves */
	struct in_ent *in;	/* the walk's to the worker */
	_Alignas(64) _Atomic size_t in_head;	/* next to read: every frame before is read */
	_Alignas(64) _Atomic size_t in_tail;	/* next to fill */
	struct hs_trace *traces;	/* the worker's to the loop: its tracer's ring */
	_Alignas(64) _Atomic size_t t_head;	/* next to take */
	_Alignas(64) _Atomic size_t t_tail;	/* next to fill */
	struct ctl_ent *ctl;
	uint8_t *ctl_ring;	/* their bytes */
	uint64_t ctl_next;	/* where the next message's bytes go, since the start */
	uint32_t ctl_need;	/* bytes of the message waiting for room */
	atomic_bool ctl_wait;	/* it waits for room: the others tell the loop as they read on */
	_Alignas(64) _Atomic size_t c_head;
	_Alignas(64) _Atomic size_t c_tail;
	_Alignas(64) _Atomic uint64_t read_through;	/* frames read and handed on, all of
					 * them at the end: no message to come is older */
	/* every trace it queues from now on was last added to by this frame
	 * or a later one (hs_lane_oldest): UINT64_MAX once it has finished */
	_Atomic uint64_t oldest;
	/* given: it read all it was given, and waits for more, its capture
	 * time at parked_ts */
	atomic_bool parked;
	_Atomic uint64_t parked_ts;
	struct hs_gate gate;	/* given: waits here for frames */
	struct hs_gate room;	/* waits here for room in its queues to the loop */

	/* published after every batch, under the set's lock */
	struct hs_capture_stats pub;
	uint64_t pub_derr[HS_DERR__COUNT];
	struct hs_tracer_stats pub_ts;
	uint64_t sources_told;	/* the loop's: its mirror sources the merged tracer knows */
	size_t told_t, told_c;	/* live: its queues' tails when it last woke the loop */
	atomic_bool finished;	/* the file read to its end, or failed */
	char err[PCAP_ERRBUF_SIZE + 512];	/* "'PATH': what", "" when it did not fail */
} __attribute__((aligned(64)));

struct hs_workers {
	struct hs_ctx *ctx;
	struct hs_tracer *merged;	/* the loop's: the traces of all the workers */
	const struct hs_subs *subs;	/* the loop's: the packets queued go to them */
	char *path;		/* the file, or the interface */
	bool live;
	int dlt;		/* live: the interface's link type */
	uint64_t t0;		/* live: frames from before the group was whole are not read */
	_Atomic(struct hs_writer *) writer;	/* live: hs_workers_set_writer() */
	uv_async_t *wake;
	unsigned n;
	struct worker *w;
	/* A classic pcap file is read into the ring (HS_RING; through stdio
	 * each worker paid for copying the whole file twice): a frame at
	 * offset off of the file is at ring + off % ring_len, whole (its
	 * HS_RING_TAIL bytes past ring_len are its first ones again). NULL:
	 * each worker reads it with libpcap, every frame of it. */
	uint8_t *ring;
	size_t ring_len;
	int fd;			/* the file, read by the walk */
	size_t flen;		/* its size when it was opened */
	bool swapped;		/* its byte order is not ours */
	bool nano;		/* its timestamps (live: the sockets') are in nanoseconds */
	uint32_t snaplen;	/* larger frames are libpcap's to truncate */
	/* what the threads write, each on lines of its own: away from what
	 * they read at every frame above, and from each other */
	_Alignas(64) struct walk walk;
	atomic_bool walking;	/* a worker holds walk.mu: the others wait for it */
	atomic_bool walked;	/* every frame given, and every worker told the end */
	_Alignas(64) struct hs_gate reader_gate;	/* a walker waits here for room */
	_Alignas(64) _Atomic uint64_t given;	/* frames given out so far */
	/* walkers that wait for room, every worker told the capture time then */
	_Atomic unsigned reader_waiting;
	_Atomic uint64_t reader_now;
	_Atomic uint64_t woken_ns;	/* live: when a worker last woke the loop (hs_mono_ns) */
	_Alignas(64) pthread_mutex_t mu;	/* the published counters */
	pthread_rwlock_t hold;	/* a worker reads a batch with it for reading */
	bool held;		/* by the loop (hs_workers_pause) */
	atomic_bool pausing;	/* the loop waits for it: no batch begins */
	atomic_bool stop;
	atomic_bool kept;	/* the loop's subscribers want the packets kept */
	bool stopped;		/* hs_workers_stop() is done */
	bool draining;		/* the loop hands on what a worker queued */
};

int hs_workers_parse(const char *s, unsigned *n, char *err, size_t errlen)
{
	uint64_t v;

	if (hs_parse_uint(s, UINT32_MAX, &v) < 0 || v == 0 || v > HS_WORKERS_MAX) {
		snprintf(err, errlen, "bad number of workers '%s' (1 to %d)", s, HS_WORKERS_MAX);
		return -1;
	}
	*n = (unsigned)v;
	return 0;
}

unsigned hs_workers_default(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > HS_WORKERS_MAX ? HS_WORKERS_MAX : (unsigned)n;
}

static void nap(void)
{
	struct timespec ts = { 0, HS_WORKER_NAP_NS };

	nanosleep(&ts, NULL);
}

/* a thread with nothing to do sleeps on its gate; whoever gives it
 * something wakes it (gate.h) */
static void gate_sleep(struct hs_gate *g, bool (*ready)(void *), void *arg)
{
	hs_gate_sleep(g, ready, arg, HS_WORKER_WAIT_NS);
}

/* ---- on a worker's thread ------------------------------------------------- */

/* room in a worker's queues of traces and control messages (the loop
 * makes it, and wakes the worker) */
static bool trace_room(void *arg)
{
	struct worker *w = arg;

	return atomic_load_explicit(&w->t_tail, memory_order_relaxed) -
	       atomic_load_explicit(&w->t_head, memory_order_acquire) < HS_WORKER_TRACES;
}

/* where ctl_need bytes go in the ring: they do not wrap round its end */
static uint64_t ctl_place(const struct worker *w)
{
	uint64_t at = w->ctl_next;
	uint64_t in = at % HS_WORKER_CTL_RING;

	return in + w->ctl_need > HS_WORKER_CTL_RING ? at + HS_WORKER_CTL_RING - in : at;
}

static bool ctl_room(void *arg)
{
	struct worker *w = arg;
	size_t tail = atomic_load_explicit(&w->c_tail, memory_order_relaxed);
	size_t head = atomic_load_explicit(&w->c_head, memory_order_acquire);

	if (tail == head)
		return true;
	if (tail - head == HS_WORKER_CTL)
		return false;
	/* the oldest message's bytes are the oldest in use */
	uint64_t oldest = w->ctl[head & (HS_WORKER_CTL - 1)].from;
	return ctl_place(w) + w->ctl_need - oldest <= HS_WORKER_CTL_RING;
}

/* The queue of traces is the worker's tracer's ring (hs_tracer_ring): t
 * was closed into the queue's next slot, which the loop may now read. The
 * tracer asks for the slot after it ahead of the close (prefetch_head) as
 * for any close. (Built in a slot of its own and copied into the queue,
 * each trace cost its bytes written twice, the second time to lines last
 * read on the loop's core.) */
static void worker_on_close(void *arg, const struct hs_trace *t)
{
	struct worker *w = arg;
	size_t tail = atomic_load_explicit(&w->t_tail, memory_order_relaxed);

	(void)t;	/* at w->traces[tail % HS_WORKER_TRACES] */
	atomic_store_explicit(&w->t_tail, tail + 1, memory_order_release);
	/* the next close writes the slot after: with the queue full it is
	 * the oldest the loop has not read, and waits for it to be. A trace
	 * is never lost. */
	while (!trace_room(w)) {
		uv_async_send(w->ws->wake);
		gate_sleep(&w->room, trace_room, w);
	}
}

/* Live, a trace quiet for its timeout closes once the history's writer
 * has room for it and for every trace queued on the way there: at a
 * burst's end its traces all go quiet at once, and the writer's queue
 * refused what it had no room for. They wait open instead (the pool of
 * open traces holds them; one evicted for room closes whatever the
 * writer has), and close as the writer takes the ones before, or a
 * second past their timeout (hs_tracer_cfg.may_close). */
static bool worker_may_close(void *arg)
{
	struct worker *w = arg;
	struct hs_workers *ws = w->ws;
	struct hs_writer *wr = atomic_load_explicit(&ws->writer, memory_order_acquire);
	size_t queued = 0;

	if (!wr || hs_writer_fits(wr, (size_t)ws->n * HS_WORKER_TRACES))
		return true;
	for (unsigned i = 0; i < ws->n; i++)
		queued += atomic_load_explicit(&ws->w[i].t_tail, memory_order_relaxed) -
			  atomic_load_explicit(&ws->w[i].t_head, memory_order_relaxed);
	return hs_writer_fits(wr, queued + 1);
}

/* a packet for the loop's subscribers, with the bytes they read copied
 * (the frame is gone when the loop reads it): a control message's payload,
 * a kept packet's inner packet from its IP header on (filters read it) */
static void worker_on_pkt(void *arg, const struct hs_pkt *p, unsigned cls)
{
	struct worker *w = arg;
	size_t tail = atomic_load_explicit(&w->c_tail, memory_order_relaxed);
	bool inner = cls == HS_PK_KEPT && p->l3;
	const uint8_t *src = inner ? p->l3 : p->l4_payload;

	w->ctl_need = !src ? 0 : inner ? p->l3_caplen : p->l4_payload_caplen;
	if (w->ctl_need > HS_WORKER_CTL_BYTES)
		w->ctl_need = HS_WORKER_CTL_BYTES;
	if (!ctl_room(w)) {
		/* every frame before this one has its messages queued: the
		 * loop may hand them on, and make room */
		if (!w->ws->live)
			atomic_store_explicit(&w->read_through, w->frames - 1,
					      memory_order_release);
		atomic_store(&w->ctl_wait, true);
		while (!ctl_room(w)) {
			uv_async_send(w->ws->wake);
			gate_sleep(&w->room, ctl_room, w);
		}
		atomic_store(&w->ctl_wait, false);
	}
	struct ctl_ent *e = &w->ctl[tail & (HS_WORKER_CTL - 1)];
	/* live, the workers' frames have no common count: the loop hands the
	 * messages queued on in the order of their times */
	e->frame = w->ws->live ? p->ts_ns : w->frames;
	e->cls = cls;
	e->from = w->ctl_next;
	e->p = *p;
	e->p.l3 = e->p.mpls = NULL;
	e->p.l3_caplen = 0;
	if (src) {
		uint64_t at = ctl_place(w);
		uint8_t *bytes = w->ctl_ring + at % HS_WORKER_CTL_RING;
		uint32_t n = w->ctl_need;

		memcpy(bytes, src, n);
		w->ctl_next = at + n;
		if (!inner) {
			e->p.l4_payload = bytes;
			e->p.l4_payload_caplen = n;
		} else {
			size_t l4 = p->l4_payload ? (size_t)(p->l4_payload - p->l3) : SIZE_MAX;
			e->p.l3 = bytes;
			e->p.l3_caplen = n;
			e->p.l4_payload = NULL;
			e->p.l4_payload_caplen = 0;
			if (l4 <= n) {	/* in what was copied */
				uint32_t left = n - (uint32_t)l4;
				e->p.l4_payload = bytes + l4;
				e->p.l4_payload_caplen = p->l4_payload_caplen < left ?
							 p->l4_payload_caplen : left;
			}
		}
	}
	atomic_store_explicit(&w->c_tail, tail + 1, memory_order_release);
}

static void on_frame(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct worker *w = (struct worker *)user;
	uint32_t caplen = h->caplen;

	w->frames++;
	hs_lane_frame(&w->lane, hs_pfile_dlt(w->file), bytes, caplen,
		      h->len < caplen ? caplen : h->len, hs_pcap_ts(h));
}

static uint32_t map_u32(const struct hs_workers *ws, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ws->swapped ? __builtin_bswap32(v) : v;
}

/* From the frame after the last one read from the ring on, libpcap reads
 * the file: a record the walk leaves to it (damaged, or longer than the
 * file's snapshot length) is read, or refused, as one reader would. */
static int map_leave(struct worker *w)
{
	struct pcap_pkthdr *h;
	const u_char *d;

	for (uint64_t i = 0; i < w->frames; i++)
		if (hs_pfile_next(w->file, &h, &d) != 1)
			return PCAP_ERROR;
	return 0;
}

/* the record at offset off of the file, in the ring */
static const uint8_t *ring_at(const struct hs_workers *ws, size_t off)
{
	return ws->ring + off % ws->ring_len;
}

static void ring_record(const struct hs_workers *ws, size_t off, uint32_t *caplen, uint32_t *len,
			uint64_t *ts)
{
	const uint8_t *r = ring_at(ws, off);
	uint64_t frac = map_u32(ws, r + 4);

	*caplen = map_u32(ws, r + 8);
	*len = map_u32(ws, r + 12);
	*ts = map_u32(ws, r) * (uint64_t)HS_NS_PER_SEC + (ws->nano ? frac : frac * 1000);
}

/* ---- the walk: every frame to its worker ---------------------------------- */

/* room in a worker's queue of frames. A walker waiting for it holds a
 * copy of the room as it was (wait_frames): the worker may have taken the
 * walk on since, and read past that tail, which is room as well. */
static bool has_room(void *arg)
{
	struct room *r = arg;

	r->head = atomic_load_explicit(&r->w->in_head, memory_order_acquire);
	return (ptrdiff_t)(r->tail - r->head) < HS_WORKER_IN || atomic_load(&r->w->ws->stop);
}

/* what the walk queued is the workers' to read; a worker waiting for
 * frames is woken once it has a good many (all: whatever it has), not for
 * every few, which had the threads take turns sleeping and waking */
static void reader_hand_on(struct hs_workers *ws, const struct room *q, uint64_t frames, bool all)
{
	for (unsigned i = 0; i < ws->n; i++)
		atomic_store_explicit(&ws->w[i].in_tail, q[i].tail, memory_order_release);
	/* after the tails: a worker whose queue is empty has read all these */
	atomic_store_explicit(&ws->given, frames, memory_order_release);
	for (unsigned i = 0; i < ws->n; i++) {
		struct worker *w = &ws->w[i];
		if (all || q[i].tail - atomic_load_explicit(&w->in_head, memory_order_relaxed) >=
				   HS_WORKER_IN / 4)
			hs_gate_wake(&w->gate);
	}
	/* a walker that waited for room walks on, or reads what it was given */
	hs_gate_wake(&ws->reader_gate);
}

/* Every worker not told the capture time now is told it, where its queue
 * has room: a worker given none of the frames since would otherwise hold
 * its quiet traces open, and the loop the traces of the others that
 * closed after them (drain_all) */
static void reader_tell_time(struct hs_workers *ws, struct room *q, uint64_t frames, uint64_t now)
{
	for (unsigned i = 0; i < ws->n; i++) {
		struct room *r = &q[i];
		if (r->now >= now)
			continue;
		has_room(r);
		if (r->tail - r->head >= HS_WORKER_IN)
			continue;
		r->w->in[r->tail++ & (HS_WORKER_IN - 1)] =
			(struct in_ent){ .off = IN_TIME, .frame = frames, .now = now };
		r->now = now;
	}
}

/* frames given out: those taken, but the one waiting for room */
static uint64_t walk_given(const struct walk *k)
{
	return k->frames - (k->pend_to >= 0 && k->pend.off > IN_TIME);
}

/* e into queue i; when it is full, e waits in pend: false. The worker's
 * index is read only when the room last seen is used up. */
static bool walk_put(struct walk *k, unsigned i, const struct in_ent *e)
{
	struct room *r = &k->q[i];

	if (r->tail - r->head == HS_WORKER_IN) {
		r->head = atomic_load_explicit(&r->w->in_head, memory_order_acquire);
		if (r->tail - r->head == HS_WORKER_IN) {
			k->pend = *e;
			k->pend_to = (int)i;
			return false;
		}
	}
	r->w->in[r->tail++ & (HS_WORKER_IN - 1)] = *e;
	r->now = e->now;
	return true;
}

enum { WALK_ON, WALK_FULL, WALK_DONE };

/* The lowest offset of the file the ring must still hold: the first
 * frame each worker has queued and not read (a telling before it holds
 * none), the frame waiting for room, and the walk's next record. The
 * queues are the walker's to fill: what a queue holds is not overwritten
 * meanwhile. */
static size_t ring_low(const struct hs_workers *ws, const struct walk *k, int *holder)
{
	size_t low = k->pend_to >= 0 && k->pend.off > IN_TIME ? (size_t)k->pend.off : k->off;

	*holder = -1;
	for (unsigned i = 0; i < ws->n; i++) {
		const struct worker *w = &ws->w[i];
		size_t head = atomic_load_explicit(&w->in_head, memory_order_acquire);
		for (; head != k->q[i].tail; head++) {
			uint64_t off = w->in[head & (HS_WORKER_IN - 1)].off;
			if (off <= IN_TIME)
				continue;
			if (off < low) {
				low = (size_t)off;
				*holder = (int)i;
			}
			break;
		}
	}
	return low;
}

/* The file's bytes into the ring up to need, or to its end: false when
 * the ring has no room for them (ring_to: the worker to read on first).
 * A read that fails ends the bytes there: libpcap reads on from the
 * record cut short, and says why as one reader would. */
static bool walk_fill(const struct hs_workers *ws, struct walk *k, size_t need)
{
	while (k->filled < need && k->filled < k->eof) {
		int holder;
		size_t room = ring_low(ws, k, &holder) + ws->ring_len - k->filled;
		size_t n = k->eof - k->filled < HS_RING_CHUNK ? k->eof - k->filled : HS_RING_CHUNK;
		size_t at = k->filled % ws->ring_len;

		if (n > room)
			n = room;
		if (n > ws->ring_len - at)
			n = ws->ring_len - at;
		if (n == 0) {
			k->ring_to = holder;
			return false;
		}
		ssize_t got = pread(ws->fd, ws->ring + at, n, (off_t)k->filled);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			k->eof = k->filled;
			break;
		}
		if (at < HS_RING_TAIL)
			memcpy(ws->ring + ws->ring_len + at, ws->ring + at,
			       (size_t)got < HS_RING_TAIL - at ? (size_t)got : HS_RING_TAIL - at);
		k->filled += (size_t)got;
	}
	return true;
}

/* the record at off once its bytes are in the ring: false when the walk
 * leaves it to libpcap (cut short, or longer than the file's snapshot
 * length), or with ring_to set when the ring has no room for it yet */
static bool walk_record(const struct hs_workers *ws, struct walk *k, size_t off, uint32_t *caplen,
			uint32_t *len, uint64_t *ts)
{
	if (!walk_fill(ws, k, off + 16) || k->filled - off < 16)
		return false;
	ring_record(ws, off, caplen, len, ts);
	if (*caplen > ws->snaplen || !walk_fill(ws, k, off + 16 + *caplen))
		return false;
	return k->filled - off - 16 >= *caplen;
}

/* With walk.mu held, by worker self: every frame to its worker, until self
 * has want frames queued (WALK_ON), a queue is full (WALK_FULL: the frame
 * waits in pend), or every worker is told where the frames end
 * (WALK_DONE), or a stop */
static int walk_on(struct hs_workers *ws, unsigned self, size_t want)
{
	struct walk *k = &ws->walk;
	const struct worker *me = &ws->w[self];
	int dlt = hs_pfile_dlt(ws->w[0].file), rc = WALK_ON;
	struct hs_pkt scratch;

	k->ring_to = -1;
	for (;;) {
		if (k->pend_to >= 0) {
			if (!walk_put(k, (unsigned)k->pend_to, &k->pend)) {
				rc = WALK_FULL;
				break;
			}
			if (k->pend.off <= IN_LEAVE)
				k->ended++;
			k->pend_to = -1;
		}
		if (k->at_end) {
			/* every worker is told where the frames end, or from
			 * where libpcap reads them (a record left to it) */
			if (k->ended == ws->n) {
				rc = WALK_DONE;
				break;
			}
			k->pend = (struct in_ent){ .off = k->end, .frame = k->frames, .now = k->now };
			k->pend_to = (int)k->ended;
			continue;
		}
		if (k->q[self].tail - atomic_load_explicit(&me->in_head, memory_order_relaxed) >= want ||
		    atomic_load_explicit(&ws->stop, memory_order_relaxed))
			break;
		for (unsigned run = 0; run < HS_WORKER_RUN; run++) {
			uint32_t caplen = 0, len = 0, hash = 0;
			uint64_t ts = 0;
			size_t off = k->off;

			if (!walk_record(ws, k, off, &caplen, &len, &ts)) {
				if (k->ring_to >= 0)
					break;	/* read on once the ring has room */
				k->at_end = true;
				k->end = off == ws->flen && k->eof == ws->flen ? IN_END : IN_LEAVE;
				break;
			}
			/* the worker hs_shard() gives it, its identity read from
			 * its bytes where it has the common shape */
			const uint8_t *d = ring_at(ws, off) + 16;
			unsigned i;
			if (hs_decode_ident(dlt, d, caplen, &hash)) {
				i = hash % ws->n;
			} else {
				int drc = hs_decode(dlt, d, caplen, len < caplen ? caplen : len, ts,
						    &scratch);
				i = hs_shard(&scratch, drc, ws->n);
			}
			struct in_ent e = { .off = off, .frame = ++k->frames, .now = k->now };
			if (ts > k->now)
				k->now = ts;
			k->off = off + 16 + (size_t)caplen;
			if (!walk_put(k, i, &e))
				break;
		}
		if (k->pend_to >= 0)
			continue;	/* WALK_FULL above, unless it has room now */
		if (k->ring_to >= 0) {
			rc = WALK_FULL;
			break;
		}
		reader_hand_on(ws, k->q, k->frames, false);
	}
	reader_hand_on(ws, k->q, walk_given(k), true);
	return rc;
}

/* ---- on a worker's thread, the frames the walk gave it -------------------- */

/* the loop may hand on the traces of the others up to here (drain_all) */
static void tell_oldest(struct worker *w)
{
	atomic_store_explicit(&w->oldest, hs_lane_oldest(&w->lane), memory_order_release);
}

/* frames to read, or the walk to take on */
static bool has_frames(void *arg)
{
	struct worker *w = arg;

	return atomic_load_explicit(&w->in_head, memory_order_relaxed) !=
	       atomic_load_explicit(&w->in_tail, memory_order_acquire) ||
	       atomic_load(&w->ws->stop) ||
	       (!atomic_load(&w->ws->walking) && !atomic_load(&w->ws->walked));
}

/* The walk, if no other worker is at it, until this one has a run of its
 * own queued; the others are woken after, to read what they were given or
 * to walk on in turn */
static void walk_take(struct worker *w)
{
	struct hs_workers *ws = w->ws;

	if (atomic_load(&ws->walked) || atomic_load_explicit(&ws->walking, memory_order_relaxed) ||
	    pthread_mutex_trylock(&ws->walk.mu) != 0)
		return;
	atomic_store(&ws->walking, true);
	if (walk_on(ws, (unsigned)(w - ws->w), HS_WORKER_WALK) == WALK_DONE)
		atomic_store(&ws->walked, true);
	atomic_store(&ws->walking, false);
	pthread_mutex_unlock(&ws->walk.mu);
	for (unsigned i = 0; i < ws->n; i++)
		hs_gate_wake(&ws->w[i].gate);
}

struct room_wait {
	struct room r;		/* the queue the walk waits for */
	bool ring;		/* not for room in it: for its worker to read on
				 * past r.head, which frees some of the ring */
	struct worker *w;	/* the walker waiting */
};

/* the walk may go on, or the walker was given frames meanwhile (another
 * took the walk on): it waits no longer */
static bool walk_may_go_on(void *arg)
{
	struct room_wait *rw = arg;
	bool room = rw->ring ? atomic_load_explicit(&rw->r.w->in_head, memory_order_acquire) !=
					   rw->r.head || atomic_load(&rw->w->ws->stop)
			     : has_room(&rw->r);

	return room || atomic_load_explicit(&rw->w->in_tail, memory_order_acquire) !=
			       atomic_load_explicit(&rw->w->in_head, memory_order_relaxed);
}

/* It read all it was given. Another walks: it waits for that. The walk
 * waits for room in another's queue, or in the ring for the frames of
 * another: every worker is told the capture time it reached (this one
 * first reads its own telling), and this one waits for the room, as all
 * it was given is read (drain_all may hand on the traces out of order
 * rather than never: merge_stuck). Else it walks on itself. */
static void wait_frames(struct worker *w)
{
	struct hs_workers *ws = w->ws;
	struct walk *k = &ws->walk;
	unsigned self = (unsigned)(w - ws->w);

	atomic_store(&w->parked_ts, w->lane.last_ts);
	if (!atomic_load(&ws->walking) && !atomic_load(&ws->walked) &&
	    pthread_mutex_trylock(&k->mu) == 0) {
		bool ring = k->pend_to < 0;
		int to = ring ? k->ring_to : k->pend_to;
		if (to < 0 || (unsigned)to == self) {
			pthread_mutex_unlock(&k->mu);
			return;	/* nothing stops the walk: it walks on */
		}
		uint64_t given = walk_given(k), now = ring ? k->now : k->pend.now;
		reader_tell_time(ws, k->q, given, now);
		reader_hand_on(ws, k->q, given, true);
		struct room_wait rw = { .r = k->q[to], .ring = ring, .w = w };
		rw.r.head = atomic_load_explicit(&rw.r.w->in_head, memory_order_acquire);
		pthread_mutex_unlock(&k->mu);
		if (atomic_load_explicit(&w->in_tail, memory_order_acquire) !=
		    atomic_load_explicit(&w->in_head, memory_order_relaxed))
			return;	/* its telling first */
		atomic_store(&ws->reader_now, now);
		atomic_fetch_add(&ws->reader_waiting, 1);
		atomic_store(&w->parked, true);
		/* a worker whose queue of traces is full waits for the loop,
		 * which may have to hand them on out of order now (merge_stuck) */
		for (unsigned i = 0; i < ws->n; i++)
			if (!trace_room(&ws->w[i])) {
				uv_async_send(ws->wake);
				break;
			}
		gate_sleep(&ws->reader_gate, walk_may_go_on, &rw);
		atomic_store(&w->parked, false);
		atomic_fetch_sub(&ws->reader_waiting, 1);
		return;
	}
	atomic_store(&w->parked, true);
	gate_sleep(&w->gate, has_frames, w);
	atomic_store(&w->parked, false);
}

/* The frames read so far have their control messages queued: the loop
 * may hand on those of the other workers up to here. One that waits for
 * room to queue one has the loop told, which may now make it room. */
static void read_on(struct worker *w)
{
	struct hs_workers *ws = w->ws;

	atomic_store_explicit(&w->read_through, w->frames, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	for (unsigned i = 0; i < ws->n; i++)
		if (atomic_load_explicit(&ws->w[i].ctl_wait, memory_order_relaxed)) {
			uv_async_send(ws->wake);
			break;
		}
}

/* up to cnt frames of the queue down the lane: how many (the end counts
 * for none, a leave for one), 0 at the end, PCAP_ERROR when libpcap
 * cannot read on; *empty when there were none to read */
static int given_dispatch(struct worker *w, int cnt, bool *empty)
{
	struct hs_workers *ws = w->ws;
	size_t head = atomic_load_explicit(&w->in_head, memory_order_relaxed);
	size_t tail = atomic_load_explicit(&w->in_tail, memory_order_acquire);
	int dlt = hs_pfile_dlt(w->file), n = 0;

	*empty = head == tail;
	while (n < cnt && head != tail) {
		const struct in_ent *e = &w->in[head & (HS_WORKER_IN - 1)];
		uint32_t caplen = 0, len = 0;
		uint64_t ts = 0;

		/* the walk may have read it on another core: its headers are asked
		 * for some frames ahead */
		if (tail - head > HS_WORKER_AHEAD) {
			const struct in_ent *a = &w->in[(head + HS_WORKER_AHEAD) & (HS_WORKER_IN - 1)];
			if (a->off > IN_LEAVE) {
				const uint8_t *r = ring_at(ws, (size_t)a->off);
				__builtin_prefetch(r, 0);
				__builtin_prefetch(r + 64, 0);
				__builtin_prefetch(r + 128, 0);
			}
		}

		hs_lane_time(&w->lane, e->now, e->off > IN_TIME ? e->frame - 1 : e->frame);
		w->frames = e->frame;
		if (e->off == IN_TIME) {
			head++;
			n++;
			continue;
		}
		if (e->off == IN_END || e->off == IN_LEAVE) {
			bool end = e->off == IN_END;
			atomic_store_explicit(&w->in_head, head + 1, memory_order_release);
			hs_gate_wake(&ws->reader_gate);
			if (end)
				return 0;
			/* every worker reads every frame from here on */
			w->given = false;
			w->lane.nshards = ws->n;
			return map_leave(w) < 0 ? PCAP_ERROR : n + 1;
		}
		ring_record(ws, (size_t)e->off, &caplen, &len, &ts);
		hs_lane_frame(&w->lane, dlt, ring_at(ws, (size_t)e->off) + 16, caplen,
			      len < caplen ? caplen : len, ts);
		n++;
		/* room for the walk now and then, not once a frame; a
		 * walker waiting for room is woken once there is a good deal */
		if (++head % HS_WORKER_RUN == 0) {
			atomic_store_explicit(&w->in_head, head, memory_order_release);
			if (tail - head <= HS_WORKER_IN / 2 ||
			    atomic_load_explicit(&ws->reader_waiting, memory_order_relaxed))
				hs_gate_wake(&ws->reader_gate);
			read_on(w);
			tell_oldest(w);
		}
	}
	atomic_store_explicit(&w->in_head, head, memory_order_release);
	if (head == tail)
		hs_gate_wake(&ws->reader_gate);
	return n;
}

/* a classic pcap file whose frames hopscope decodes: read into the ring */
static void ring_file(struct hs_workers *ws, const char *path, int dlt)
{
	struct stat sb;
	uint8_t hdr[24];
	uint32_t magic;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size < 24 ||
	    pread(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) || !hs_decode_linktype_ok(dlt)) {
		close(fd);
		return;
	}
	memcpy(&magic, hdr, 4);
	ws->swapped = magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1;
	ws->nano = magic == 0xa1b23c4d || magic == 0x4d3cb2a1;
	ws->snaplen = map_u32(ws, hdr + 16);
	size_t len = hs_table_max("HOPSCOPE_TEST_WORKER_RING", HS_RING);
	if (len < HS_RING_MIN)
		len = HS_RING_MIN;
	if ((magic != 0xa1b2c3d4 && !ws->swapped && !ws->nano) || ws->snaplen == 0 ||
	    ws->snaplen > 262144) {
		close(fd);
		return;
	}
	ws->ring = hs_xcalloc_big(len + HS_RING_TAIL, 1);
	ws->ring_len = len;
	ws->fd = fd;
	ws->flen = (size_t)sb.st_size;
	ws->walk.eof = ws->flen;
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
}

static void publish_stats(struct worker *w)
{
	struct hs_workers *ws = w->ws;

	pthread_mutex_lock(&ws->mu);
	w->pub = w->st;
	memcpy(w->pub_derr, w->derr, sizeof(w->derr));
	hs_tracer_get_stats(w->lane.tracer, &w->pub_ts);
	pthread_mutex_unlock(&ws->mu);
}

static void publish(struct worker *w)
{
	publish_stats(w);
	uv_async_send(w->ws->wake);
}

/* Live, after a batch: the loop is woken to hand on what this worker
 * queued (traces, control messages), unless any worker woke it less than
 * a block's timeout ago (HS_LIVE_TIMEOUT_MS), and for the counters every
 * HS_WORKER_STATS_NS. Woken by every worker after every batch, the loop
 * woke twice a block per worker, each a switch of threads that cost more
 * than the block's frames. What waits then goes with the next wake-up,
 * whichever worker asks for it: a flood's next block, or this worker's
 * look after HS_WORKER_POLL_MS without frames. (A worker that came back
 * for it once the timeout had passed woke, on two cores, about once a
 * block more than its frames asked, each time to find its ring empty.) */
static void live_wake(struct worker *w, uint64_t now)
{
	struct hs_workers *ws = w->ws;
	size_t t = atomic_load_explicit(&w->t_tail, memory_order_relaxed);
	size_t c = atomic_load_explicit(&w->c_tail, memory_order_relaxed);
	bool news = t != w->told_t || c != w->told_c;
	uint64_t since = now - atomic_load_explicit(&ws->woken_ns, memory_order_relaxed);

	publish_stats(w);
	if ((news && since >= (uint64_t)HS_LIVE_TIMEOUT_MS * 1000000) ||
	    since >= HS_WORKER_STATS_NS) {
		atomic_store_explicit(&ws->woken_ns, now, memory_order_relaxed);
		w->told_t = t;
		w->told_c = c;
		uv_async_send(ws->wake);
	}
}

static void on_live_frame(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct worker *w = (struct worker *)user;
	uint32_t caplen = h->caplen;
	uint64_t frac = (uint64_t)h->ts.tv_usec;
	uint64_t ts = (uint64_t)h->ts.tv_sec * HS_NS_PER_SEC + (w->ws->nano ? frac : frac * 1000);

	/* The socket's frames from before the group was whole came to every
	 * socket, or to one the program did not choose: they are in its ring
	 * ahead of the rest. From the first one after, every frame is read,
	 * whatever the clock does later. */
	if (!w->in_group) {
		if (ts < w->ws->t0)
			return;
		w->in_group = true;
	}
	w->frames++;
	/* the workers' frames have no common count: a frame's number is its
	 * capture time (one more than the number before, at least), which
	 * the loop orders the workers' traces by, as one socket's arrival */
	if (ts > w->lane.frames)
		w->lane.frames = ts;
	hs_lane_frame(&w->lane, w->ws->dlt, bytes, caplen, h->len < caplen ? caplen : h->len, ts);
}

static void live_kernel_stats(struct worker *w)
{
	struct pcap_stat ps;

	if (pcap_stats(w->pc, &ps) == 0) {
		w->st.kernel_drops = ps.ps_drop;
		w->st.if_drops = ps.ps_ifdrop;
	}
}

/* A live worker reads the blocks the kernel hands its socket, as the loop
 * reads one interface (capture.c), and between them waits on the socket;
 * quiet traces close as time goes on without frames. */
static void live_main(struct worker *w)
{
	struct hs_workers *ws = w->ws;
	struct pollfd pfd = { .fd = pcap_get_selectable_fd(w->pc), .events = POLLIN };
	uint64_t stats_at = 0;
	int n = 0;

	while (!atomic_load(&ws->stop)) {
		while (atomic_load(&ws->pausing))
			nap();
		pthread_rwlock_rdlock(&ws->hold);
		w->lane.kept = atomic_load_explicit(&ws->kept, memory_order_relaxed);
		n = pcap_dispatch(w->pc, HS_CAP_BATCH, on_live_frame, (u_char *)w);
		hs_lane_flush(&w->lane);
		uint64_t now = hs_mono_ns();
		if (n > 0)
			w->last_mono = now;
		else if (n == 0 && w->lane.last_ts)
			hs_tracer_advance(w->lane.tracer, w->lane.last_ts + (now - w->last_mono));
		/* Less than a batch: libpcap stopped at a block the kernel
		 * has not handed over, its ring is empty. Read again at once,
		 * it finds it so again and costs a poll() of its own: the
		 * worker waits for the next block here instead. */
		bool empty = n >= 0 && n < HS_CAP_BATCH;
		if (empty) {
			/* a frame to come was stamped after now, or just before */
			uint64_t t = hs_wall_ns() - HS_WORKER_LATE_NS;
			if (t > w->lane.frames)
				w->lane.frames = t;
		}
		tell_oldest(w);
		pthread_rwlock_unlock(&ws->hold);
		if (n < 0)
			break;
		if (now - stats_at >= HS_WORKER_STATS_NS) {
			live_kernel_stats(w);
			stats_at = now;
		}
		live_wake(w, now);
		if (empty && pfd.fd >= 0)
			poll(&pfd, 1, HS_WORKER_POLL_MS);
		else if (empty)
			nap();
	}
	pthread_rwlock_rdlock(&ws->hold);
	hs_lane_flush(&w->lane);
	hs_tracer_close_all(w->lane.tracer);	/* what is open is over */
	pthread_rwlock_unlock(&ws->hold);
	atomic_store_explicit(&w->oldest, UINT64_MAX, memory_order_release);
	if (n < 0 && !atomic_load(&ws->stop))
		snprintf(w->err, sizeof(w->err), "capture on '%s' failed: %s", ws->path,
			 pcap_geterr(w->pc));
	publish(w);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct hs_workers *ws = w->ws;
	int n;

	if (ws->live) {
		live_main(w);
		atomic_store(&w->finished, true);
		uv_async_send(ws->wake);
		return NULL;
	}

	do {
		bool empty = false;

		while (atomic_load(&ws->pausing))
			nap();
		pthread_rwlock_rdlock(&ws->hold);
		w->lane.kept = atomic_load_explicit(&ws->kept, memory_order_relaxed);
		if (w->given && atomic_load_explicit(&w->in_tail, memory_order_acquire) -
				atomic_load_explicit(&w->in_head, memory_order_relaxed) <
				HS_WORKER_WALK)
			walk_take(w);
		n = atomic_load(&ws->stop) ? 0 :
		    w->given ? given_dispatch(w, HS_FILE_BATCH, &empty) :
			       hs_pfile_dispatch(w->file, HS_FILE_BATCH, on_frame, (u_char *)w);
		if (empty) {	/* nothing given: wait, or walk on */
			hs_lane_flush(&w->lane);
			tell_oldest(w);
			pthread_rwlock_unlock(&ws->hold);
			publish(w);
			wait_frames(w);
			n = 1;
			continue;
		}
		hs_lane_flush(&w->lane);
		if (n <= 0)	/* the end, a stop, or damage: what is open is over */
			hs_tracer_close_all(w->lane.tracer);
		tell_oldest(w);
		pthread_rwlock_unlock(&ws->hold);
		atomic_store_explicit(&w->read_through, n > 0 ? w->frames : UINT64_MAX,
				      memory_order_release);
		publish(w);
	} while (n > 0);
	if (n < 0 && !atomic_load(&ws->stop))
		snprintf(w->err, sizeof(w->err), "'%s': %s", ws->path, hs_pfile_geterr(w->file));
	atomic_store_explicit(&w->oldest, UINT64_MAX, memory_order_release);
	atomic_store(&w->finished, true);
	uv_async_send(ws->wake);
	return NULL;
}

/* ---- on the loop thread --------------------------------------------------- */

static void worker_free(struct worker *w)
{
	hs_tracer_free(w->lane.tracer);
	hs_freader_close(w->reader);
	if (w->pc)
		pcap_close(w->pc);
	free(w->filebuf);
	hs_free_big(w->ctl, HS_WORKER_CTL, sizeof(*w->ctl));
	hs_free_big(w->ctl_ring, HS_WORKER_CTL_RING, 1);
	if (w->in)
		hs_free_big(w->in, HS_WORKER_IN, sizeof(*w->in));
	hs_gate_fini(&w->gate);
	hs_gate_fini(&w->room);
}

/* the set and its workers' queues and tracers; NULL when a tracer cannot
 * be had */
static struct hs_workers *workers_new(struct hs_ctx *ctx, struct hs_tracer *merged,
				      const struct hs_subs *subs, uv_async_t *wake,
				      const char *path, unsigned n)
{
	struct hs_workers *ws = hs_xcalloc_big(1, sizeof(*ws));	/* on whole lines */

	ws->ctx = ctx;
	ws->merged = merged;
	ws->subs = subs;
	ws->path = hs_xstrdup(path);
	ws->wake = wake;
	ws->n = n;
	/* on whole cache lines (the queues' indices are aligned in it) */
	ws->w = hs_xcalloc_big(n, sizeof(*ws->w));
	pthread_mutex_init(&ws->mu, NULL);
	pthread_rwlock_init(&ws->hold, NULL);
	hs_gate_init(&ws->reader_gate);
	pthread_mutex_init(&ws->walk.mu, NULL);
	ws->walk.off = 24;	/* past the file's header */
	ws->walk.pend_to = -1;
	for (unsigned i = 0; i < n; i++)
		ws->walk.q[i].w = &ws->w[i];
	for (unsigned i = 0; i < n; i++) {
		hs_gate_init(&ws->w[i].gate);
		hs_gate_init(&ws->w[i].room);
	}
	for (unsigned i = 0; i < n; i++) {
		struct worker *w = &ws->w[i];

		w->ws = ws;
		w->ctl = hs_xcalloc_big(HS_WORKER_CTL, sizeof(*w->ctl));
		w->ctl_ring = hs_xcalloc_big(HS_WORKER_CTL_RING, 1);
		w->lane.ctx = ctx;
		w->lane.tracer = hs_lane_tracer_new(ctx, worker_on_close, worker_may_close, w, n,
						    HS_WORKER_TRACES);
		w->lane.stats = &w->st;
		w->lane.derr = w->derr;
		w->lane.shard = i;
		w->lane.nshards = n;
		w->lane.on_pkt = worker_on_pkt;
		w->lane.arg = w;
		if (!w->lane.tracer) {
			hs_workers_free(ws);
			return NULL;
		}
		w->traces = hs_tracer_ring(w->lane.tracer);
	}
	return ws;
}

static bool workers_run(struct hs_workers *ws, char *err, size_t errlen)
{
	for (unsigned i = 0; i < ws->n; i++) {
		int rc = pthread_create(&ws->w[i].thread, NULL, worker_main, &ws->w[i]);
		if (rc != 0) {
			snprintf(err, errlen, "cannot read '%s' with %u workers: %s", ws->path,
				 ws->n, strerror(rc));
			return false;
		}
		ws->w[i].started = true;
	}
	return true;
}

struct hs_workers *hs_workers_start(struct hs_ctx *ctx, uv_loop_t *loop, struct hs_tracer *merged,
				    const struct hs_subs *subs, uv_async_t *wake, const char *path,
				    unsigned n, char *err, size_t errlen)
{
	struct hs_workers *ws = workers_new(ctx, merged, subs, wake, path, n);

	if (!ws) {
		snprintf(err, errlen, "cannot read '%s' with %u workers: out of memory", path, n);
		return NULL;
	}
	for (unsigned i = 0; i < n; i++) {
		struct worker *w = &ws->w[i];

		w->filebuf = hs_xcalloc(1, HS_WORKER_FILEBUF);
		w->reader = hs_freader_open(loop, path, w->filebuf, HS_WORKER_FILEBUF, err,
					    errlen);
		w->file = w->reader ? hs_freader_file(w->reader) : NULL;
		if (!w->file) {
			hs_workers_free(ws);
			return NULL;
		}
	}
	ring_file(ws, path, hs_pfile_dlt(ws->w[0].file));
	for (unsigned i = 0; ws->ring && i < n; i++) {
		struct worker *w = &ws->w[i];

		w->in = hs_xcalloc_big(HS_WORKER_IN, sizeof(*w->in));
		w->given = true;
		w->lane.nshards = 1;	/* the walk chose its frames */
	}
	if (!workers_run(ws, err, errlen)) {
		hs_workers_free(ws);
		return NULL;
	}
	return ws;
}

struct hs_workers *hs_workers_start_live(struct hs_ctx *ctx, struct hs_tracer *merged,
					 const struct hs_subs *subs, uv_async_t *wake,
					 const char *ifname, pcap_t **pcs, unsigned n, bool nano,
					 uint64_t t0, char *err, size_t errlen)
{
	struct hs_workers *ws = workers_new(ctx, merged, subs, wake, ifname, n);

	if (!ws) {
		for (unsigned i = 0; i < n; i++)
			pcap_close(pcs[i]);
		snprintf(err, errlen, "cannot capture on '%s' with %u workers: out of memory",
			 ifname, n);
		return NULL;
	}
	ws->live = true;
	ws->dlt = pcap_datalink(pcs[0]);
	ws->nano = nano;
	for (unsigned i = 0; i < n; i++) {
		struct worker *w = &ws->w[i];

		/* as one worker's (capture.c), its queue of traces (the ring)
		 * with them; and its other queues to the loop: a flood fills
		 * them at once */
		hs_tracer_populate(w->lane.tracer);
		hs_populate_big(w->ctl, HS_WORKER_CTL, sizeof(*w->ctl));
		hs_populate_big(w->ctl_ring, HS_WORKER_CTL_RING, 1);
		w->pc = pcs[i];
		w->lane.nshards = 1;	/* the kernel chose its frames */
		atomic_store(&w->read_through, UINT64_MAX);
	}
	/* a frame of before: it came to every socket, or to one the
	 * program did not choose */
	ws->t0 = t0;
	if (!workers_run(ws, err, errlen)) {
		hs_workers_free(ws);
		return NULL;
	}
	return ws;
}

/* Hand on control messages in the order of their frames, as one reader
 * would: a worker's queue is in frame order, and a message is handed on
 * once every worker has read past its frame (none can queue an earlier one) */
static bool drain_ctl(struct hs_workers *ws)
{
	uint64_t safe = UINT64_MAX;
	bool any = false;

	/* before the queues' ends: what was given by then is in them */
	uint64_t given = atomic_load_explicit(&ws->given, memory_order_acquire);
	for (unsigned i = 0; i < ws->n; i++) {
		struct worker *w = &ws->w[i];
		uint64_t r = atomic_load_explicit(&w->read_through, memory_order_acquire);
		/* a worker waiting for the walk has read all it was given
		 * (in_head moves on once the frames before are read) */
		if (w->in && r < given &&
		    atomic_load_explicit(&w->in_head, memory_order_acquire) ==
			    atomic_load_explicit(&w->in_tail, memory_order_acquire))
			r = given;
		if (r < safe)
			safe = r;
	}
	for (;;) {
		struct worker *best = NULL;
		struct ctl_ent *e = NULL;
		size_t at = 0;

		for (unsigned i = 0; i < ws->n; i++) {
			struct worker *w = &ws->w[i];
			size_t head = atomic_load_explicit(&w->c_head, memory_order_relaxed);
			if (head == atomic_load_explicit(&w->c_tail, memory_order_acquire))
				continue;
			struct ctl_ent *c = &w->ctl[head & (HS_WORKER_CTL - 1)];
			if (c->frame <= safe && (!e || c->frame < e->frame)) {
				best = w;
				e = c;
				at = head;
			}
		}
		if (!best)
			return any;
		hs_publish_packet(ws->subs, e->cls, &e->p);
		atomic_store_explicit(&best->c_head, at + 1, memory_order_release);
		any = true;
	}
}

/* The traces queued, as the loop picks them: each worker closes its
 * traces in the order of their last frames (hs_tracer_oldest), and the
 * loop hands them on in that order across the workers, so they are
 * numbered as one tracer reading every frame numbers them. */
struct merge {
	size_t head[HS_WORKERS_MAX];	/* the next to pick */
	size_t tail[HS_WORKERS_MAX];
	uint64_t oldest[HS_WORKERS_MAX];	/* what it may queue from now on */
	/* The run being taken: the traces of worker run come next in turn
	 * while their last frames are below bound, what the others have
	 * queued or may queue, so that each trace is picked with one
	 * comparison, not a look at every worker (only run's head moves
	 * meanwhile). -1: none; force: bound was set for a forced pick. */
	int run;
	bool run_force;
	uint64_t bound;
};

#define HS_MERGE_AHEAD	24	/* traces of a queue asked for ahead of their pick */

static void prefetch_trace(const struct hs_trace *t)
{
	for (size_t off = 0; off < HS_TRACE_COMMON; off += 64)
		__builtin_prefetch((const char *)t + off, 0);
}

static uint64_t head_frame(const struct worker *w, size_t head)
{
	return w->traces[head & (HS_WORKER_TRACES - 1)].last_frame;
}

/* the worker whose queued trace is next, -1 while another worker may still
 * queue an older one (force: the oldest queued, whatever the others do) */
static int merge_pick(const struct hs_workers *ws, struct merge *m, bool force)
{
	int best = m->run;
	uint64_t frame = 0, bound = UINT64_MAX;

	if (best >= 0 && force == m->run_force && m->head[best] != m->tail[best] &&
	    head_frame(&ws->w[best], m->head[best]) < m->bound)
		return best;
	best = m->run = -1;
	for (unsigned i = 0; i < ws->n; i++) {
		if (m->head[i] == m->tail[i])
			continue;
		uint64_t f = head_frame(&ws->w[i], m->head[i]);
		if (best < 0 || f < frame) {
			if (best >= 0)
				bound = frame;
			best = (int)i;
			frame = f;
		} else if (f < bound) {
			bound = f;
		}
	}
	for (unsigned i = 0; best >= 0 && !force && i < ws->n; i++) {
		if (m->head[i] != m->tail[i])
			continue;
		if (m->oldest[i] <= frame)
			return -1;
		if (m->oldest[i] < bound)
			bound = m->oldest[i];
	}
	m->run = best;
	m->run_force = force;
	m->bound = bound;
	return best;
}

/* No worker can go on before the loop hands on a trace out of order: one
 * waits for room in its queue of traces, a walker for room in its queue
 * of frames, and every other has read all it was given, up to the capture
 * time the walk has reached, and still holds open a trace older than
 * those queued (the capture's times go back) */
static bool merge_stuck(struct hs_workers *ws, const struct merge *m, const size_t *done)
{
	bool full = false;

	/* live, a worker that waits for room stops reading its socket: the
	 * kernel would drop what comes meanwhile */
	for (unsigned i = 0; ws->live && i < ws->n; i++)
		if (m->tail[i] - done[i] == HS_WORKER_TRACES)
			return true;
	if (!atomic_load(&ws->reader_waiting))
		return false;
	uint64_t now = atomic_load(&ws->reader_now);
	for (unsigned i = 0; i < ws->n; i++) {
		struct worker *w = &ws->w[i];
		if (m->tail[i] - done[i] == HS_WORKER_TRACES) {
			full = true;
			continue;
		}
		if (atomic_load(&w->finished))
			continue;
		if (atomic_load(&w->in_head) != atomic_load(&w->in_tail) ||
		    !atomic_load(&w->parked) || atomic_load(&w->parked_ts) < now)
			return false;
	}
	return full;
}

/* The traces picked ahead of the one handed on, and how far ahead of it
 * their flows' records are asked for: a trace's flow index entries are
 * asked for as it is picked, its flow's records (through them) once it is
 * HS_MERGE_SOON from its turn, and its own lines at HS_MERGE_AHEAD from
 * its pick. Each stage reads only what the one before asked for some
 * traces earlier. (Picked three ahead, their records asked for one ahead,
 * each flow's update stalled on memory as a near-cache miss: the flow
 * table cost the loop four times what it costs one reader.) */
#define HS_MERGE_PICKED 16	/* a power of two */
#define HS_MERGE_SOON	6

/* hand on what the workers queued; false when there was nothing */
static bool drain_all(struct hs_workers *ws)
{
	struct merge m;
	size_t done[HS_WORKERS_MAX], ctl_was[HS_WORKERS_MAX];
	/* the picked, in order from first: each in its worker's queue (which
	 * the worker fills no further than t_head, moved on below), its
	 * worker, and whether its flow's records were asked for */
	const struct hs_trace *picked[HS_MERGE_PICKED];
	unsigned next[HS_MERGE_PICKED];
	bool warm[HS_MERGE_PICKED];
	unsigned first = 0, nnext = 0;
	unsigned forced = 0;
	bool any;

	if (ws->draining)
		return false;	/* what is handed on below asked for a drain */
	ws->draining = true;
	for (unsigned i = 0; i < ws->n; i++)
		ctl_was[i] = atomic_load_explicit(&ws->w[i].c_head, memory_order_relaxed);
	any = drain_ctl(ws);
	/* what each may queue from now on, before what it has queued */
	for (unsigned i = 0; i < ws->n; i++)
		m.oldest[i] = atomic_load_explicit(&ws->w[i].oldest, memory_order_acquire);
	m.run = -1;
	m.run_force = false;
	m.bound = 0;
	for (unsigned i = 0; i < ws->n; i++) {
		struct worker *w = &ws->w[i];
		m.head[i] = done[i] = atomic_load_explicit(&w->t_head, memory_order_relaxed);
		m.tail[i] = atomic_load_explicit(&w->t_tail, memory_order_acquire);
	}
	for (;;) {
		int i;

		while (nnext < HS_MERGE_PICKED &&
		       (i = merge_pick(ws, &m, forced > 0 || atomic_load(&ws->pausing))) >= 0) {
			const struct hs_trace *t =
				&ws->w[i].traces[m.head[i]++ & (HS_WORKER_TRACES - 1)];
			/* written on another core: the traces further on in its
			 * queue are asked for while these are handed on */
			if (m.tail[i] - m.head[i] > HS_MERGE_AHEAD)
				prefetch_trace(&ws->w[i].traces[(m.head[i] + HS_MERGE_AHEAD) &
								(HS_WORKER_TRACES - 1)]);
			hs_tracer_adopt_soon(ws->merged, t, 0);
			unsigned at = (first + nnext++) & (HS_MERGE_PICKED - 1);
			picked[at] = t;
			next[at] = (unsigned)i;
			warm[at] = false;
			if (forced && !--forced)
				break;
		}
		if (nnext == 0) {
			/* out of order rather than never: half the queue */
			if (!forced && merge_stuck(ws, &m, done)) {
				forced = HS_WORKER_TRACES / 2;
				continue;
			}
			break;
		}
		/* the one HS_MERGE_SOON from its turn, or the last picked */
		unsigned k = nnext > HS_MERGE_SOON ? HS_MERGE_SOON : nnext - 1;
		unsigned ka = (first + k) & (HS_MERGE_PICKED - 1);
		if (k && !warm[ka]) {
			hs_tracer_adopt_soon(ws->merged, picked[ka], k);
			warm[ka] = true;
		}
		done[next[first]]++;
		hs_tracer_adopt(ws->merged, picked[first]);
		any = true;
		first = (first + 1) & (HS_MERGE_PICKED - 1);
		nnext--;
	}
	/* one that waits for room in either queue is woken once it has
	 * some: woken for none, it asked again at once, and the two threads
	 * took turns at nothing */
	for (unsigned i = 0; i < ws->n; i++) {
		struct worker *w = &ws->w[i];
		if (done[i] == atomic_load_explicit(&w->t_head, memory_order_relaxed) &&
		    ctl_was[i] == atomic_load_explicit(&w->c_head, memory_order_relaxed))
			continue;
		atomic_store_explicit(&w->t_head, done[i], memory_order_release);
		hs_gate_wake(&w->room);
	}
	ws->draining = false;
	return any;
}

bool hs_workers_drain(struct hs_workers *ws, const char **err)
{
	bool done = true;

	*err = NULL;
	/* the workers queue the packets kept from their next batch on while
	 * someone wants them ('stats'), and none otherwise */
	atomic_store_explicit(&ws->kept, (ws->subs->pkt_mask & HS_PK_KEPT) != 0,
			      memory_order_relaxed);
	/* finished first: what they queued before is then all there */
	for (unsigned i = 0; i < ws->n; i++)
		if (!atomic_load(&ws->w[i].finished))
			done = false;
	drain_all(ws);
	for (unsigned i = 0; done && i < ws->n; i++)
		if (ws->w[i].err[0] && !*err)
			*err = ws->w[i].err;
	return done;
}

void hs_workers_stop(struct hs_workers *ws)
{
	const char *err;

	if (!ws || ws->stopped)
		return;
	ws->stopped = true;
	if (ws->held)
		hs_workers_resume(ws);
	atomic_store(&ws->stop, true);
	hs_gate_wake(&ws->reader_gate);
	for (unsigned i = 0; i < ws->n; i++) {
		hs_gate_wake(&ws->w[i].gate);
		hs_gate_wake(&ws->w[i].room);
	}
	for (unsigned i = 0; i < ws->n; i++) {
		struct worker *w = &ws->w[i];
		if (!w->started)
			continue;
		/* what it closes on the way out is handed on here */
		while (!atomic_load(&w->finished))
			if (!drain_all(ws))
				nap();
		pthread_join(w->thread, NULL);
		if (w->pc) {	/* the thread is gone: its handle is the loop's */
			live_kernel_stats(w);
			pthread_mutex_lock(&ws->mu);
			w->pub.kernel_drops = w->st.kernel_drops;
			w->pub.if_drops = w->st.if_drops;
			pthread_mutex_unlock(&ws->mu);
		}
	}
	hs_workers_drain(ws, &err);
}

void hs_workers_free(struct hs_workers *ws)
{
	if (!ws)
		return;
	hs_workers_stop(ws);
	for (unsigned i = 0; i < ws->n; i++)
		worker_free(&ws->w[i]);
	if (ws->ring) {
		hs_free_big(ws->ring, ws->ring_len + HS_RING_TAIL, 1);
		close(ws->fd);
	}
	pthread_rwlock_destroy(&ws->hold);
	pthread_mutex_destroy(&ws->mu);
	pthread_mutex_destroy(&ws->walk.mu);
	hs_gate_fini(&ws->reader_gate);
	hs_free_big(ws->w, ws->n, sizeof(*ws->w));
	free(ws->path);
	hs_free_big(ws, 1, sizeof(*ws));
}

void hs_workers_stats(struct hs_workers *ws, struct hs_capture_stats *s, uint64_t *derr,
		      struct hs_tracer_stats *ts, struct hs_worker_stats *per)
{
	uint64_t sources[HS_WORKERS_MAX];

	memset(ts, 0, sizeof(*ts));
	pthread_mutex_lock(&ws->mu);
	for (unsigned i = 0; i < ws->n; i++) {
		const struct worker *w = &ws->w[i];

		per[i].packets = w->pub.packets;
		per[i].kernel_drops = w->pub.kernel_drops;
		s->kernel_drops += w->pub.kernel_drops;
		/* the interface's own count, the same seen from every socket */
		if (w->pub.if_drops > s->if_drops)
			s->if_drops = w->pub.if_drops;
		s->packets += w->pub.packets;
		s->bytes += w->pub.bytes;
		s->decode_errors += w->pub.decode_errors;
		s->not_ip += w->pub.not_ip;
		s->filtered += w->pub.filtered;
		if (w->pub.first_ts && (!s->first_ts || w->pub.first_ts < s->first_ts))
			s->first_ts = w->pub.first_ts;
		if (w->pub.last_ts > s->last_ts)
			s->last_ts = w->pub.last_ts;
		for (int j = 0; j < HS_DERR__COUNT; j++)
			derr[j] += w->pub_derr[j];
		ts->copies += w->pub_ts.copies;
		ts->open += w->pub_ts.open;
		ts->duplicates += w->pub_ts.duplicates;
		ts->sources_full += w->pub_ts.sources_full;
		sources[i] = w->pub_ts.sources;
	}
	pthread_mutex_unlock(&ws->mu);
	/* the mirror sources each has published are all in its table: the
	 * merged view counts each source once, however many workers saw it
	 * (once per source here, not once per hop of every trace handed on) */
	for (unsigned i = 0; i < ws->n; i++) {
		struct worker *w = &ws->w[i];
		if (sources[i] > w->sources_told) {
			hs_tracer_learn_sources(ws->merged, w->lane.tracer, w->sources_told,
						sources[i]);
			w->sources_told = sources[i];
		}
	}
}

void hs_workers_pause(struct hs_workers *ws)
{
	if (!ws || ws->held || atomic_load(&ws->pausing))
		return;	/* held, or on the way: what is drained below may ask again */
	/* a worker may wait for room in its queue before its batch ends */
	atomic_store(&ws->pausing, true);
	while (pthread_rwlock_trywrlock(&ws->hold) != 0) {
		if (!drain_all(ws))
			nap();
	}
	atomic_store(&ws->pausing, false);
	ws->held = true;
}

void hs_workers_resume(struct hs_workers *ws)
{
	if (ws && ws->held) {
		ws->held = false;
		pthread_rwlock_unlock(&ws->hold);
	}
}

void hs_workers_set_topo(struct hs_workers *ws, const struct hs_topo *topo)
{
	for (unsigned i = 0; ws && i < ws->n; i++)
		hs_tracer_set_topo(ws->w[i].lane.tracer, topo);
}

void hs_workers_set_timeout(struct hs_workers *ws, uint64_t ns)
{
	for (unsigned i = 0; ws && i < ws->n; i++)
		hs_tracer_set_timeout(ws->w[i].lane.tracer, ns);
}

void hs_workers_set_writer(struct hs_workers *ws, struct hs_writer *writer)
{
	if (ws)
		atomic_store_explicit(&ws->writer, writer, memory_order_release);
}

void hs_workers_set_partial(struct hs_workers *ws, bool partial)
{
	for (unsigned i = 0; ws && i < ws->n; i++)
		hs_tracer_set_partial(ws->w[i].lane.tracer, partial);
}

bool hs_workers_unsupported(const struct hs_workers *ws, unsigned *i, char *msg, size_t len)
{
	return hs_freader_unsupported(ws->w[0].reader, i, msg, len);
}
