/* workers.h - a capture file, or an interface, read by several threads at
 * once
 *
 * Every copy of one original packet carries the same inner packet, whatever
 * switch mirrored it and however it was encapsulated: hs_shard() hashes the
 * inner packet's identity (fanout.h), so all the copies of a packet
 * fall to one worker, and each worker joins its share of the copies into
 * traces on a tracer of its own exactly as one tracer joins them all. A
 * classic pcap file is read once, into a ring of its bytes, and walked by
 * the workers in turn (one that has read all it was given walks on),
 * each frame given to its worker with the newest capture time of the
 * frames before it; the worker's tracer moves on to that time before the
 * frame (hs_lane_time), so a trace closes after the same quiet time in
 * capture time whichever worker holds it. Another file (pcapng, or one
 * libpcap reads on from a damaged record) is read whole by every worker:
 * the frames of its share go down the pipeline (decode, filter, tracer),
 * the others only move its capture time on.
 *
 * Live, the kernel shares the frames out: each worker has a socket of its
 * own in one PACKET_FANOUT group whose program hashes the inner packet's
 * identity as hs_shard() does (fanout.h), and reads the frames it is given,
 * all of them, its capture time moving on with the clock between them.
 *
 * The loop thread keeps the one merged view: closed traces come back to it
 * through a bounded queue per worker and are numbered, kept, counted and
 * handed on (flows, history, analyses) by hs_tracer_adopt(), in the order
 * of the frame that last added a copy to each (hs_trace.last_frame), the
 * order in which one tracer reading every frame closes them: a worker's
 * trace waits until no other can close an older one (each tells the
 * oldest it may still close; a walk that waits for room tells a worker it
 * gave no frame the capture time the others reached). Live, the workers'
 * frames have no common count: a frame's number is its capture time (one
 * more than the number before, at least), the order in which one socket
 * receives them, and a worker whose ring is empty tells the loop the clock
 * less HS_WORKER_LATE_NS (a frame still in a block the kernel has not
 * handed over is no older); a worker waiting for room in its queue has its
 * traces handed on out of order rather than wait and let the kernel drop
 * frames. Control messages come back the same way, in the order of their
 * frames. A full queue of a file's worker holds it, never
 * loses a trace; a thread that waits sleeps until woken by the one it
 * waits for. The loop reads the frame counters each worker publishes
 * after every batch.
 */
#ifndef HS_WORKERS_H
#define HS_WORKERS_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "capture.h"
#include "decode.h"
#include "fanout.h"
#include "tracer.h"

#define HS_WORKERS_MAX 64	/* --workers: more than that is a mistake */

/* the worker (0 .. n-1) of a decoded frame: drc is hs_decode's answer; a
 * frame with no inner IP packet goes to worker 0. The hash is the one the
 * kernel's fanout program computes for a live capture (fanout.h). */
static inline unsigned hs_shard(const struct hs_pkt *p, int drc, unsigned n)
{
	if (n <= 1 || drc < 0 || !(p->have & HS_HAVE_IP))
		return 0;
	return hs_ident_hash(p) % n;
}

/* "N" for --workers and 'capture start FILE workers N': 0 or -1 with err */
int hs_workers_parse(const char *s, unsigned *n, char *err, size_t errlen);
/* the workers of a capture none were asked for: one per online core (at
 * most HS_WORKERS_MAX); a source several cannot read takes one
 * (hs_capture_start) */
unsigned hs_workers_default(void);

/* Frames are decoded and filtered as they come, and reach the tracer
 * HS_PIPE frames later: the index entry of a copy's trace is asked for when
 * it is decoded, the trace itself HS_PIPE_SLOT frames later, so both are in
 * the cache when the copy is added (two misses per copy otherwise, which
 * were most of the ingest time). Only the decoded fields wait, not the
 * frame. The queue is emptied at the end of every read. The index entry
 * gets five frames to come in, the trace three: on the bench file that
 * beat four and four, and sixteen frames in all no better. */
#define HS_PIPE		8	/* a power of two */
#define HS_PIPE_SLOT	5

struct hs_ctx;

struct hs_pipe_ent {
	union {
		struct {
			struct hs_pkt pkt;
			struct hs_tracer_prep prep;
			uint64_t now;	/* newest capture time once this frame was in */
			uint32_t probe_id;
			uint8_t flags;
			bool add;	/* to the tracer; else only time moves */
		};
		/* a power of two: an entry's place is a shift, not a
		 * multiply recomputed all over the lane's loop */
		uint8_t size_[256];
	};
};

/* one pipeline: the loop's own, or a worker's */
struct hs_lane {
	struct hs_ctx *ctx;
	struct hs_tracer *tracer;
	struct hs_capture_stats *stats;	/* the frames this lane takes */
	uint64_t *derr;			/* HS_DERR__COUNT decode errors by reason */
	unsigned shard, nshards;	/* takes the frames hs_shard() gives shard */
	/* a worker's: a packet for the loop thread's subscribers, of class
	 * HS_PK_CONTROL, or HS_PK_KEPT when kept is set (someone wants them);
	 * NULL: the loop's lane, which publishes them itself */
	void (*on_pkt)(void *arg, const struct hs_pkt *p, unsigned cls);
	void *arg;
	bool kept;
	struct hs_pipe_ent pipe[HS_PIPE];	/* frames on their way to the tracer */
	unsigned pipe_head, pipe_len;	/* oldest entry, entries queued */
	uint64_t last_ts;		/* newest capture time */
	uint64_t frames;		/* a worker's: frames of the capture read so
					 * far, the lane's and (hs_lane_time) the
					 * others'; the loop's lane counts none */
};

/* one frame down a lane, and the lane's queue emptied (lane.c) */
void hs_lane_frame(struct hs_lane *l, int dlt, const uint8_t *data, uint32_t caplen,
		   uint32_t wirelen, uint64_t ts_ns);
void hs_lane_flush(struct hs_lane *l);
/* the capture moved on, by frames that are not the lane's, to capture time
 * ts_ns and frames frames read: the tracer sees the time before the lane's
 * next frame */
void hs_lane_time(struct hs_lane *l, uint64_t ts_ns, uint64_t frames);
/* every trace the lane's tracer closes from now on was last added to by
 * this frame or a later one (hs_tracer_oldest, and the frames queued) */
uint64_t hs_lane_oldest(const struct hs_lane *l);
/* the tracer of a lane of one of n workers, made as the loop's is, with
 * its share of the loop's pool of open traces, and a ring of ring closed
 * traces; may_close as hs_tracer_cfg's (NULL: none) */
struct hs_tracer *hs_lane_tracer_new(struct hs_ctx *ctx, hs_trace_cb on_close,
				     bool (*may_close)(void *arg), void *arg, unsigned n,
				     size_t ring);
/* the configuration of the loop's tracer, closing traces to on_close */
struct hs_tracer_cfg hs_lane_tracer_cfg(struct hs_ctx *ctx, hs_trace_cb on_close, void *arg);
/* a bounded table's size: max, or the smaller one the environment variable
 * env_name gives (the tests that fill it) */
size_t hs_table_max(const char *env_name, size_t max);

struct hs_workers;

/* start n threads reading path, its file opened on loop; wake is sent when
 * there is something to drain, the traces go to merged (hs_tracer_adopt)
 * and the control messages to subs (HS_PK_CONTROL, and the packets kept,
 * HS_PK_KEPT, while subs has someone for them); NULL with err when one
 * cannot start */
struct hs_subs;
struct hs_workers *hs_workers_start(struct hs_ctx *ctx, uv_loop_t *loop, struct hs_tracer *merged,
				    const struct hs_subs *subs, uv_async_t *wake, const char *path,
				    unsigned n, char *err, size_t errlen);
/* the same for a live interface: pcs (its handles, now the set's, closed
 * with it, also when it cannot start), joined in one fanout group
 * (hs_fanout_join) at wall time t0, a worker reads each, from its first
 * frame stamped t0 or later; nano: their timestamps are in nanoseconds */
struct hs_workers *hs_workers_start_live(struct hs_ctx *ctx, struct hs_tracer *merged,
					 const struct hs_subs *subs, uv_async_t *wake,
					 const char *ifname, pcap_t **pcs, unsigned n, bool nano,
					 uint64_t t0, char *err, size_t errlen);
/* on the loop thread: hand on the traces and control messages queued; true
 * once every worker has read the whole file (or failed, *err then says why)
 * and everything it queued is handed on */
bool hs_workers_drain(struct hs_workers *ws, const char **err);
/* stop the threads: what they hold open is closed and handed on, and their
 * counters stay to be read */
void hs_workers_stop(struct hs_workers *ws);
/* stop them if need be, and free */
void hs_workers_free(struct hs_workers *ws);
/* the frame counters and tracer counters of all the workers, and each
 * one's (per: one per worker); on the loop thread: the merged tracer
 * learns the mirror sources they found since (its 'sources') */
void hs_workers_stats(struct hs_workers *ws, struct hs_capture_stats *s, uint64_t *derr,
		      struct hs_tracer_stats *ts, struct hs_worker_stats *per);
/* the loop changes what the workers read (topology, filters): they wait
 * between batches until hs_workers_resume() */
void hs_workers_pause(struct hs_workers *ws);
void hs_workers_resume(struct hs_workers *ws);
void hs_workers_set_topo(struct hs_workers *ws, const struct hs_topo *topo);
void hs_workers_set_timeout(struct hs_workers *ws, uint64_t ns);
void hs_workers_set_partial(struct hs_workers *ws, bool partial);
/* live: the history's writer, which the workers' quiet traces wait to
 * have room in before they close (NULL: none, they close at once) */
struct hs_writer;
void hs_workers_set_writer(struct hs_workers *ws, struct hs_writer *writer);
/* hs_freader_unsupported of the file read (worker 0 read every frame) */
bool hs_workers_unsupported(const struct hs_workers *ws, unsigned *i, char *msg, size_t len);

#endif
