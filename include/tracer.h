/* tracer.h - join the mirrored copies of one packet into a per-hop trace
 *
 * Copies of one original packet share the inner 5-tuple, IP ID, and (TCP)
 * sequence and ack numbers, flags, payload length, or (other protocols) the
 * first L4 bytes; where the IP ID is missing or 0, the first payload bytes
 * too. Hops are ordered by inner TTL (descending), then time.
 * A trace closes after a quiet timeout measured in capture time, gets an
 * outcome from the topology, and is handed to on_close. Its last activity
 * is the capture's newest time when its last copy came (hs_tracer_prep.now),
 * not that copy's own stamp: the capture's clock never goes back, so the
 * traces fall quiet in the order they were last active, and one frame
 * stamped ahead holds no later trace open behind its own, whichever of
 * several tracers (workers.h) holds each. The steady-state
 * hot path (hs_tracer_add, hs_tracer_advance) allocates nothing: open traces
 * come from a pool sized at creation, closed ones land in a fixed ring.
 */
#ifndef HS_TRACER_H
#define HS_TRACER_H

#include "hs.h"
#include "decode.h"
#include "topo.h"

#define HS_TRACE_MAX_HOPS 16	/* hops kept per trace; more are counted */
#define HS_TRACE_MAX_NEXT 4

enum hs_outcome {
	HS_OUT_OPEN = 0,
	HS_OUT_DELIVERED,	/* last hop is the ToR of the destination */
	HS_OUT_DROPPED,		/* ended before the destination's ToR */
	HS_OUT_LOOPED,		/* a switch appears twice, at a lower TTL the second
				 * time (topology or not) */
	HS_OUT_UNKNOWN,		/* no topology to judge delivery by */
	HS_OUT__COUNT
};

/* The debug bit: the lowest DSCP bit (TOS 0x04). Standard PHBs (CSx, AFxy,
 * EF) only use even DSCP values, so an odd DSCP marks a packet every switch
 * mirrors (probes set it). */
#define HS_DEBUG_TOS_BIT 0x04
#define HS_TOS_IS_DEBUG(tos) (((tos) & HS_DEBUG_TOS_BIT) != 0)

/* hs_trace.flags */
#define HS_TF_PROBE	0x01	/* carries a hopscope probe signature */
#define HS_TF_MATCHED	0x02	/* kept by an explicit analyzer filter */
#define HS_TF_DEBUG	0x04	/* debug DSCP bit set */
#define HS_TF_EVICTED	0x08	/* closed early because the pool was full */
#define HS_TF_PARTIAL	0x10	/* only part of its packet's path: its first copy
				 * is not from the ToR of its source (the topology
				 * knows it), or copies are missing between two of
				 * its hops (TTLs more than one apart); another
				 * analyzer may hold the rest. Judged only when
				 * asked (hs_tracer_cfg.partial); never stored. */
#define HS_TF_HIDDEN	0x20	/* in the ring, not kept (hs_tracer_hide) */

struct hs_hop {
	int sw;			/* topology switch index, -1 when unknown */
	struct hs_addr addr;	/* mirror source address */
	uint64_t ts_ns;		/* capture time of the copy */
	uint64_t hw_ns;		/* switch timestamp (ERSPAN III), 0 if none */
	uint8_t ttl, tos;
	uint32_t session;	/* ERSPAN session, or VXLAN/Geneve VNI; 0 none */
};

struct hs_trace {
	uint64_t id;		/* 1-based, increasing in order of closing */
	uint64_t last_frame;	/* the number of the frame that last added a copy
				 * (hs_tracer_prep.frame): a tracer closes its
				 * traces in the order of it */
	struct hs_flowkey key;
	uint64_t key_hash;	/* hs_flowkey_hash(&key): the tracer hashes each
				 * closed trace's flow once for all who look it up */
	uint16_t ip_id;
	uint32_t seq;
	uint8_t tcp_flags;
	uint32_t len;		/* inner IP length */
	uint8_t outcome;	/* enum hs_outcome */
	uint8_t flags;		/* HS_TF_* */
	uint16_t analyzer;	/* of a trace from a shared history: the analyzers
				 * that stored it (hs_fabric_analyzers), 0 none: this
				 * console's own capture closed it */
	uint32_t probe_id;	/* when HS_TF_PROBE */
	int last_sw;		/* switch of the last hop, -1 if unknown */
	int n_next;		/* expected next hops (dropped, with topology) */
	int expected_next[HS_TRACE_MAX_NEXT];
	uint16_t nhops;		/* hops kept in hops[] */
	uint16_t extra_hops;	/* copies beyond HS_TRACE_MAX_HOPS */
	struct hs_hop hops[HS_TRACE_MAX_HOPS];
};

/* the flow of a trace about to close (hs_tracer_cfg.on_soon) */
struct hs_soon {
	uint64_t key_hash;	/* hs_flowkey_hash */
	uint8_t proto;
	bool soon;		/* the next to close; false: the one after it */
};

typedef void (*hs_trace_cb)(void *arg, const struct hs_trace *t);

struct hs_tracer_cfg {
	uint64_t timeout_ns;	/* quiet time before a trace closes (capture time) */
	size_t max_open;	/* pool size; the oldest open trace is evicted beyond it */
	size_t ring;		/* closed traces kept for 'traces' */
	size_t max_sources;	/* mirror sources (address, session) told apart;
				 * 0 or more than 16,383: 16,383 */
	const struct hs_topo *topo;	/* may be NULL */
	bool partial;		/* judge HS_TF_PARTIAL: a lookup of the source's ToR per trace */
	hs_trace_cb on_close;
	/* optional: the flows of the traces about to close, so that on_close
	 * finds what it needs in the cache. As each trace closes it is called
	 * once, with the next one to close (soon true; it was second in line
	 * at the close before, if nothing moved it) and then, if there is
	 * one, the trace second in line (soon false): n is 1 or 2. */
	void (*on_soon)(void *arg, const struct hs_soon *s, unsigned n);
	/* optional: asked before each trace that closes for being quiet
	 * (hs_tracer_advance); false leaves it, and those quiet after it,
	 * open until an advance finds it true, or the trace has been quiet
	 * a second past its timeout: whoever takes the closed traces (the
	 * history's writer) has no room for one now. Traces evicted for
	 * room, and hs_tracer_close_all(), do not ask. */
	bool (*may_close)(void *arg);
	void *arg;
};

struct hs_tracer_stats {
	uint64_t copies;	/* mirrored copies added */
	uint64_t open;		/* open now */
	uint64_t closed;
	uint64_t evicted;
	uint64_t by_outcome[HS_OUT__COUNT];
	uint64_t duplicates;	/* same copy twice (same mirror source and TTL) */
	uint64_t sources;	/* mirror sources told apart */
	uint64_t sources_max;	/* the table's size: a source beyond is not kept */
	uint64_t sources_full;	/* copies from sources not kept: their hop names no source */
};

struct hs_tracer *hs_tracer_new(const struct hs_tracer_cfg *cfg);
void hs_tracer_free(struct hs_tracer *tr);
/* its tables (open traces, their index, closed traces) backed with memory
 * now: otherwise each page is, on the copy that first touches it */
void hs_tracer_populate(struct hs_tracer *tr);
/* only its ring of closed traces: traces close elsewhere (hs_tracer_adopt) */
void hs_tracer_populate_ring(struct hs_tracer *tr);
/* its ring of closed traces (hs_tracer_cfg.ring of them): the n-th trace
 * it closes is written at slot (n - 1) % ring, before on_close is called
 * with it. An owner that hands the traces on from there (workers.c) sees
 * to it that the slot of the next one has been read. */
struct hs_trace *hs_tracer_ring(struct hs_tracer *tr);
void hs_tracer_set_topo(struct hs_tracer *tr, const struct hs_topo *topo);
void hs_tracer_set_timeout(struct hs_tracer *tr, uint64_t timeout_ns);
void hs_tracer_set_partial(struct hs_tracer *tr, bool partial);

/* one decoded copy (pkt->have & HS_HAVE_IP); flags are HS_TF_* to OR in */
void hs_tracer_add(struct hs_tracer *tr, const struct hs_pkt *pkt, uint8_t flags);
/* the same for a copy of a probe: sets HS_TF_PROBE and the trace's probe_id */
void hs_tracer_add_probe(struct hs_tracer *tr, const struct hs_pkt *pkt, uint8_t flags,
			 uint32_t probe_id);
/* The same in two steps, for a caller that decodes a few copies ahead:
 * hs_tracer_prepare computes the copy's identity and starts loading what
 * adding it will touch; hs_tracer_add_prepared adds it later, reading only
 * pkt's fields (its frame bytes may be gone by then). In between,
 * hs_tracer_prefetch may be called to load the open trace itself and the
 * copy's mirror source; the trace it found is then tried first. */
struct hs_tracer_prep {
	uint64_t ident;		/* what tells the packet from others of its flow */
	uint64_t frame;		/* the copy's frame's number in the capture, 0
				 * unknown: the caller's to set after prepare */
	uint64_t now;		/* the capture's newest time with the copy in
				 * (at least its own): its trace's last activity;
				 * prepare sets the copy's own, the caller may
				 * set a later one after */
	uint32_t hash;		/* of the packet's identity: its index tag */
	uint32_t msrc_hash;	/* of the copy's mirror source and session */
	uint32_t cand;		/* pool slot + 1 of the open trace hs_tracer_prefetch
				 * found by hash, 0 none */
	bool traceable;		/* an IP packet the tracer takes */
};
void hs_tracer_prepare(struct hs_tracer *tr, const struct hs_pkt *pkt,
		       struct hs_tracer_prep *prep);
void hs_tracer_prefetch(const struct hs_tracer *tr, struct hs_tracer_prep *prep);
void hs_tracer_add_prepared(struct hs_tracer *tr, const struct hs_pkt *pkt, uint8_t flags,
			    uint32_t probe_id, const struct hs_tracer_prep *prep);
/* close traces quiet since before now_ns - timeout (capture time) */
void hs_tracer_advance(struct hs_tracer *tr, uint64_t now_ns);
/* Traces close oldest activity first, so in the order of the frame that
 * last added a copy to them (hs_trace.last_frame): every trace this tracer
 * closes from now on has a last_frame at least this; UINT64_MAX with none
 * open */
uint64_t hs_tracer_oldest(const struct hs_tracer *tr);
/* close every open trace (end of a file, capture stop) */
void hs_tracer_close_all(struct hs_tracer *tr);
/* a trace another tracer closed (a worker's, workers.h): numbered, kept,
 * counted and handed to on_close as if it had closed here; its hops'
 * mirror sources are told by hs_tracer_learn_sources */
void hs_tracer_adopt(struct hs_tracer *tr, const struct hs_trace *t);
/* the mirror sources first + 1 .. last of another tracer (a worker's,
 * whose sources up to last are all in: its stats said so) are this
 * tracer's too, each counted once ('sources'); nothing once this one's
 * table is full */
void hs_tracer_learn_sources(struct hs_tracer *tr, const struct hs_tracer *from, uint64_t first,
			     uint64_t last);
/* t is to be adopted soon: what its close touches is asked for ahead, as
 * for a trace about to close here (on_soon). ahead 0: its flow's index
 * entries; ahead k > 0, k traces are adopted before it: its flow's
 * records and its ring slot (on_soon, soon true) */
void hs_tracer_adopt_soon(struct hs_tracer *tr, const struct hs_trace *t, unsigned ahead);
/* a closed trace still kept (the one on_close was just handed, or one
 * find or recent gave) is not kept after all: no longer counted, find and
 * recent pass it by; its id stays taken */
void hs_tracer_hide(struct hs_tracer *tr, const struct hs_trace *t);
/* hide every kept trace pred() says true of */
void hs_tracer_hide_if(struct hs_tracer *tr, bool (*pred)(void *arg, const struct hs_trace *t),
		       void *arg);
void hs_tracer_get_stats(const struct hs_tracer *tr, struct hs_tracer_stats *st);

/* closed traces still in the ring: by id, or the newest first */
const struct hs_trace *hs_tracer_find(const struct hs_tracer *tr, uint64_t id);
size_t hs_tracer_recent(const struct hs_tracer *tr, const struct hs_trace **out, size_t max);
/* forget closed traces (new capture session); ids keep increasing */
void hs_tracer_clear(struct hs_tracer *tr);

/* what HS_TF_PARTIAL says, judged on a classified trace (the tracer's
 * own judging caches the source's ToR; this looks it up) */
bool hs_trace_partial(const struct hs_trace *t, const struct hs_topo *topo);
/* outcome and expected next hops from hops and topology (used on close) */
void hs_trace_classify(struct hs_trace *t, const struct hs_topo *topo);
const char *hs_outcome_name(int outcome);	/* "delivered", ... */
/* signed time from hop a to hop b: the switches' clocks when both have a
 * timestamp (the lab's come from one clock), else capture time */
int64_t hs_hop_delta(const struct hs_hop *a, const struct hs_hop *b);
/* Every hop of t has a switch timestamp on the capture's clock: not after
 * its capture time, and less than HS_HW_WALL_SKEW before it */
#define HS_HW_WALL_SKEW (HS_NS_PER_SEC / 10)
bool hs_trace_switch_clock(const struct hs_trace *t);
/* the time of hop i on the trace's one clock: the switch's timestamp when
 * hs_trace_switch_clock(t), else the capture time */
uint64_t hs_hop_time(const struct hs_trace *t, unsigned i);
/* the trace's time, which the lists show and sort by: its first hop's on
 * the trace's one clock (hs_hop_time), 0 without hops */
uint64_t hs_trace_time(const struct hs_trace *t);
/* the order of every list of traces: newest first by hs_trace_time, the
 * higher id first among equals (ids are the order traces close in, not
 * their time order) */
int hs_trace_cmp_newest(const struct hs_trace *a, const struct hs_trace *b);
/* hop i is in path order with the hop before it (hs_hop_delta not
 * negative); a hop that is not has a time that cannot be trusted */
bool hs_hop_trusted(const struct hs_trace *t, unsigned i);
/* switch name of a hop: topology name or the address */
const char *hs_hop_name(const struct hs_topo *topo, const struct hs_hop *h, char *buf, size_t len);

#endif
