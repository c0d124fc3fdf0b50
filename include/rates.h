/* rates.h - Planck's flow rates and link load from sampled TCP sequence numbers
 *
 * Mirrored packets are a sample of a flow, not every packet. Each closed
 * TCP trace is one sample: the flow's 5-tuple, its sequence number and the
 * capture time of its first hop. Sequence numbers are unwrapped across the
 * 32-bit wrap by serial-number arithmetic. A sample below the highest
 * sequence already seen is a retransmission (or reordering): it is counted
 * and leaves the figures alone; one that repeats it (a pure ACK) is neither.
 *
 * Everything is over a window ending at the newest trace seen ("now"):
 *
 *   a flow's rate = (highest sequence - lowest sequence) / (time between
 *   them), over its samples inside the window, when there are at least
 *   HS_RATE_MIN_SAMPLES of them spread over at least a
 *   1/HS_RATE_MIN_SPAN_DIV of the window. A connection seen only at its SYN
 *   and FIN has no rate, nor has a burst of microseconds: over a window
 *   they are bytes, not a rate.
 *
 *   a flow's bytes in the window: the sequence advance between its samples
 *   inside the window, plus the share of the advance from the sample
 *   before the window that falls inside it (the sequence taken as linear
 *   between two samples) when those two are no further apart than the
 *   window. A flow seen only at SYN and FIN counts what lies between them
 *   inside the window; the bytes of a flow with no two samples near the
 *   window are not seen.
 *
 *   a directed link's load = the bytes in the window of the flows that
 *   cross it / the window; its utilization is load / speed where the
 *   topology gives the link a speed.
 *
 * A figure resting on fewer than HS_RATE_FEW_SAMPLES samples is marked rough.
 *
 * A flow's links are the directed topology links between consecutive hops
 * of its first trace with two or more known switches (looked at again every
 * HS_RATE_PATH_EVERY samples: ECMP keeps a flow on one path).
 *
 * Memory is fixed at creation: a table of flows evicting one not sampled
 * lately (counted; a CLOCK sweep, which approximates least recently used),
 * and per flow a ring of samples at least HS_RATE_SLOT_NS apart (plus the
 * newest), which covers HS_RATE_MAX_WINDOW. Nothing is allocated per sample.
 */
#ifndef HS_RATES_H
#define HS_RATES_H

#include "hs.h"
#include "topo.h"
#include "tracer.h"

#define HS_RATE_SLOTS 64
#define HS_RATE_SLOT_NS (100 * 1000000ULL)		/* spacing of kept samples */
#define HS_RATE_DEFAULT_WINDOW HS_NS_PER_SEC
#define HS_RATE_MIN_WINDOW (10 * 1000000ULL)
#define HS_RATE_MAX_WINDOW (5 * HS_NS_PER_SEC)
#define HS_RATE_MAX_PATH 8				/* links kept per flow */
#define HS_RATE_BIN_NS (50 * 1000000ULL)		/* drop and retransmission counts */
#define HS_RATE_BINS 128				/* 6.4 s of them */
#define HS_RATE_DEFAULT_FLOWS 4096
#define HS_RATE_PATH_EVERY 64	/* a known path is looked at again every N samples */
#define HS_RATE_MIN_SAMPLES 3	/* samples in the window a rate needs */
#define HS_RATE_MIN_SPAN_DIV 10	/* ... spread over at least window / this */
#define HS_RATE_FEW_SAMPLES 10	/* a figure resting on fewer is rough */

struct hs_rsample {
	uint64_t ts;
	int64_t seq;		/* unwrapped */
};

/* what one sample did to its flow */
enum hs_rs_kind { HS_RS_FIRST, HS_RS_ADVANCE, HS_RS_SAME, HS_RS_RETX };

struct hs_rflow {
	struct hs_flowkey key;
	bool used;
	uint64_t last_ts;		/* newest sample of any kind */
	uint32_t last_raw;		/* previous sample's sequence, raw and unwrapped */
	int64_t last_ext;
	struct hs_rsample newest;	/* the highest sequence so far */
	uint8_t head, n;
	uint64_t samples, retx;
	uint32_t newest_n;		/* samples counted (mod 2^32) when newest was taken */
	uint8_t npath;
	int32_t path[HS_RATE_MAX_PATH];	/* directed links: 2 * link + (0 a->b, 1 b->a) */
	/* at the last hs_rates_compute */
	bool has_rate;
	double bps;
	double win_bytes;		/* bytes in the window */
	uint32_t win_samples;		/* samples in the window */
	/* last: a lookup touches only the fields above */
	struct hs_rsample ring[HS_RATE_SLOTS];	/* advancing samples, oldest at head */
	uint32_t ring_n[HS_RATE_SLOTS];		/* the same for each */
};

/* one flow over one window */
struct hs_rwin {
	double bytes;		/* sequence advance inside the window */
	uint32_t samples;	/* samples inside the window (of any kind) */
	bool has_rate;
	double bps;		/* when has_rate */
};

struct hs_rates {
	size_t cap, nflows;
	struct hs_rflow *flows;
	/* the index, apart from the flows (1.4 KB each): open addressing,
	 * entries (uint32_t)hash << 32 | slot + 1, 0 empty, at most half full.
	 * A lookup reads one line of it and then only the flow it names */
	uint64_t *index;
	uint32_t index_mask;
	uint64_t *hashes;		/* cap: hs_flowkey_hash of each used slot's flow */
	size_t nused;			/* slots handed out since the table was cleared,
					 * in order: none past them is in use */
	uint8_t *ref;			/* cap: sampled since the sweep last passed */
	size_t hand;			/* the sweep's position */
	uint64_t now;			/* newest sample time */
	uint64_t samples, retx, evicted, not_tcp;

	/* directed links of the topology the paths refer to */
	const struct hs_topo *topo;
	int nlinks;
	int *adj_off, *adj_sw, *adj_link;	/* each switch's links: [adj_off[s], adj_off[s+1]) */
	double *link_bps;		/* 2 * nlinks, at the last hs_rates_compute */
	uint32_t *link_flows, *link_samples;
	uint64_t computed_at, computed_window;

	/* dropped traces and retransmitted samples per bin of capture time */
	uint64_t bin_id[HS_RATE_BINS];
	uint32_t bin_drops[HS_RATE_BINS], bin_retx[HS_RATE_BINS];
};

struct hs_rates *hs_rates_new(size_t max_flows);
void hs_rates_free(struct hs_rates *r);
void hs_rates_clear(struct hs_rates *r);
/* the topology paths refer to; a new one forgets the flows' paths */
void hs_rates_set_topo(struct hs_rates *r, const struct hs_topo *topo);

/* ---- one flow (pure, what the table is made of) ---- */
void hs_rflow_init(struct hs_rflow *f);
enum hs_rs_kind hs_rflow_sample(struct hs_rflow *f, uint32_t seq, uint64_t ts);
/* the flow over the window ending at now */
void hs_rflow_window(const struct hs_rflow *f, uint64_t now, uint64_t window, struct hs_rwin *w);
/* its rate alone; false when there is none */
bool hs_rflow_rate(const struct hs_rflow *f, uint64_t now, uint64_t window, double *bps);

/* ---- the table ---- */
/* one sample; path: directed links (may be NULL / 0: keep the known path) */
struct hs_rflow *hs_rates_sample(struct hs_rates *r, const struct hs_flowkey *k, uint32_t seq,
				 uint64_t ts, const int32_t *path, int npath);
/* a closed trace (found by its key_hash): a sample when it is TCP and not
 * a probe, a drop when dropped */
void hs_rates_on_trace(struct hs_rates *r, const struct hs_trace *t);
void hs_rates_drop(struct hs_rates *r, uint64_t ts);
/* directed links between consecutive known hops of t (of the table's
 * topology); returns how many */
int hs_rates_trace_path(const struct hs_rates *r, const struct hs_trace *t, int32_t *path,
			int max);
/* as hs_flowtab_prefetch, for a sample of each TCP flow of s */
void hs_rates_prefetch(const struct hs_rates *r, const struct hs_soon *s, unsigned n);
struct hs_rflow *hs_rates_find(const struct hs_rates *r, const struct hs_flowkey *k);

/* every flow over the window ending at now, and per directed link the load,
 * the flows with bytes in the window and their samples into link_bps,
 * link_flows and link_samples (2 * nlinks each; NULL: the table's own) */
void hs_rates_compute(struct hs_rates *r, uint64_t now, uint64_t window, double *link_bps,
		      uint32_t *link_flows, uint32_t *link_samples);
/* dropped traces and retransmitted samples per second over the window */
double hs_rates_drops_per_sec(const struct hs_rates *r, uint64_t now, uint64_t window);
double hs_rates_retx_per_sec(const struct hs_rates *r, uint64_t now, uint64_t window);

/* load of a directed link from link_bps; utilization (0..1) when the
 * topology gives it a speed */
bool hs_link_util(const struct hs_topo *topo, int dlink, double bps, double *util);
/* a figure resting on this many samples is rough */
static inline bool hs_rate_rough(uint32_t samples)
{
	return samples < HS_RATE_FEW_SAMPLES;
}
/* where link l's speed comes from ("topology"), NULL when it has none */
const char *hs_link_speed_source(const struct hs_topo *topo, int link);

/* ---- the report of the 'rates' verb ---- */
struct hs_rate_flow {
	const struct hs_rflow *f;
	bool has_rate;
	double bps;		/* when has_rate */
	double bytes;		/* in the window */
	uint32_t samples;	/* in the window */
};
struct hs_rate_link {
	int a, b;		/* switch indexes, in the direction of the traffic */
	int link;		/* topology link */
	double bps;
	uint32_t flows;
	uint32_t samples;	/* of those flows, in the window */
	bool has_util;
	double util;		/* 0..1 */
};
struct hs_rate_report {
	uint64_t now, window;
	struct hs_rate_flow *flows;	/* flows with bytes in the window: highest rate
					 * first, then those without a rate by bytes */
	size_t nflows, nrated;
	struct hs_rate_link *links;	/* highest load first, links with bytes in the window */
	size_t nlinks;
};
void hs_rates_report(struct hs_rates *r, uint64_t window, struct hs_rate_report *out);
void hs_rate_report_free(struct hs_rate_report *rep);

#endif
