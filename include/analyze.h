/* analyze.h - Everflow's trace analyses and 007's democratic blame
 *
 * Pure computations over an array of closed traces and the topology: no
 * console state, no output. The verbs (drops, loops, latency, ecmp, blame),
 * the unit tests and the 007 simulator call the same functions. Results are
 * allocated; free them with the matching *_free(). Traces are taken as
 * given (any order); the time of a trace is its first hop's capture time.
 */
#ifndef HS_ANALYZE_H
#define HS_ANALYZE_H

#include "hs.h"
#include "topo.h"
#include "tracer.h"

/* the closed traces still in the tracer's ring, newest first, in an
 * allocated array (free() it); returns how many */
size_t hs_an_closed(const struct hs_tracer *tr, const struct hs_trace ***out);

/* the time of a trace the analyses window and group by, and show: the
 * one every list of traces shows (hs_trace_time), 0 without hops */
uint64_t hs_an_trace_ts(const struct hs_trace *t);

/* ---- drops --------------------------------------------------------------
 * A dropped trace counts against the directed link from its last switch to
 * the switch expected next. With several expected next hops (ECMP), the one
 * the same flow's other traces took from that switch is used (ECMP hashes a
 * flow onto one path); when none did, the trace is ambiguous: it is counted
 * apart, in the ambiguous count of every candidate link, and never in any
 * link's drops. A link's loss is drops / (drops + crossed). The prompt's
 * 'drops', watch's Links pane and their JSON all come from here. */
#define HS_DROP_BINS 10		/* slices of the window for "persistent" */

struct hs_drop_link {
	int a, b;		/* last switch seen, expected next (topology indexes) */
	uint32_t drops;		/* dropped traces whose next hop is b for certain */
	uint32_t ambiguous;	/* dropped traces with b one of several candidates */
	uint32_t crossed;	/* traces seen going from a to b */
	/* the rest is of the certain drops, or of the ambiguous ones when the
	 * link has no certain drop */
	uint32_t flows;		/* distinct 5-tuples among those traces */
	uint32_t flows_crossing; /* distinct 5-tuples seen on a -> b, dropped or not */
	uint64_t first_ns, last_ns;
	uint32_t bins;		/* slices of HS_DROP_BINS with a drop */
	bool persistent;	/* drops in 3 or more slices, else one burst */
	bool flow_specific;	/* a few flows hit while others cross unharmed */
	int nalt;		/* other candidates of its ambiguous traces */
	int alt[HS_TRACE_MAX_NEXT];
	struct hs_flowkey flow;	/* the flow with the most drops here (for a probe) */
};

struct hs_drops {
	struct hs_drop_link *links;	/* most drops first, then most ambiguous */
	size_t n;
	uint32_t dropped;		/* dropped traces looked at */
	uint32_t expired;		/* "dropped" where the TTL ran out: not counted in dropped */
	uint32_t certain;		/* of which on a known directed link */
	uint32_t ambiguous;		/* of which with several candidate next hops */
	uint32_t unattributed;		/* dropped with no known last switch or next hop */
	/* traces seen crossing each topology link: [2 l] from links[l].a to
	 * links[l].b, [2 l + 1] the other way (2 * topo->nlinks of them) */
	uint32_t *crossed;
	uint64_t window_start, window_end;
};

/* loss of a directed link: drops / (drops + crossed), 0 with neither */
double hs_drop_loss(const struct hs_drop_link *l);
/* topo is required (NULL gives an empty result) */
void hs_an_drops(const struct hs_trace *const *t, size_t n, const struct hs_topo *topo,
		 struct hs_drops *out);
void hs_drops_free(struct hs_drops *d);

/* ---- loops --------------------------------------------------------------
 * A trace loops when a switch repeats (the topology index, or the mirror
 * address when a switch is unknown). The cycle is the hops from the first
 * sighting of the repeated switch up to just before it recurs, rotated to
 * start at its lowest switch, so every entry point gives the same cycle. */
struct hs_loop {
	int n;				/* switches in the cycle */
	struct hs_hop sw[HS_TRACE_MAX_HOPS];	/* sw and addr name each switch */
	uint32_t traces, flows;
	uint64_t first_ns, last_ns;
	uint64_t trace_id;		/* one example */
	struct hs_addr dst;		/* the example's destination */
};

struct hs_loops {
	struct hs_loop *loops;		/* most traces first */
	size_t n;
};

void hs_an_loops(const struct hs_trace *const *t, size_t n, struct hs_loops *out);
void hs_loops_free(struct hs_loops *l);

/* ---- latency ------------------------------------------------------------
 * Samples are hs_hop_delta() between consecutive hops of a trace (switch
 * clocks when both hops carry one, else capture time); looped traces are
 * left out. Per link a -> b: the samples from a to b. Per hop a: every
 * sample leaving a (the time spent in a plus the link to the next switch).
 * Percentiles are nearest-rank. An outlier is a link sample far above that
 * link's own distribution: above its fence, the larger of p75 + 3 (p75 - p25)
 * (Tukey's far-out fence) and twice its median, on a link with at least
 * HS_LAT_MIN_SAMPLES samples. A link's maximum is no outlier by itself. */
#define HS_LAT_MIN_SAMPLES 20
#define HS_LAT_MAX_OUTLIERS 20

struct hs_lat_stat {
	struct hs_hop a, b;		/* sw and addr name them; b unused per hop */
	uint32_t count;
	int64_t p25, p50, p75, p90, p99, max;
	int64_t fence;			/* outliers are above it; 0: too few samples */
};

struct hs_lat_outlier {
	uint64_t trace_id;
	struct hs_hop a, b;
	int64_t ns;
	int64_t link_p50;
	int64_t link_fence;
};

struct hs_latency {
	struct hs_lat_stat *hops;	/* per switch, highest p99 first */
	size_t nhops;
	struct hs_lat_stat *links;	/* per link, highest p99 first */
	size_t nlinks;
	struct hs_lat_outlier *outliers;	/* largest first, at most HS_LAT_MAX_OUTLIERS */
	size_t noutliers;
	size_t outliers_total;		/* before the cap */
};

void hs_an_latency(const struct hs_trace *const *t, size_t n, struct hs_latency *out);
void hs_latency_free(struct hs_latency *l);
/* nearest-rank percentile (0 < p <= 100) of sorted v[0..n-1]; 0 when n is 0 */
int64_t hs_an_percentile(const int64_t *sorted, size_t n, double p);

/* ---- ECMP ---------------------------------------------------------------
 * An ECMP group is one switch and one destination ToR: the traces that
 * passed the switch toward hosts behind that ToR and were seen at a next
 * switch. The group's next hops are the topology's shortest-path
 * neighbours toward the ToR plus any other seen. Shares are of distinct
 * flows (ECMP hashes flows) and of traced bytes. The imbalance figure is
 * max share / mean share - 1 over the flow shares: 0 for an even split,
 * (k - 1) when one of k next hops takes everything. */
#define HS_ECMP_MAX_NH 16
#define HS_ECMP_DEFAULT_THRESHOLD 0.25

struct hs_ecmp_nh {
	int sw;
	uint32_t flows, traces;
	uint64_t bytes;
	double flow_share, byte_share;
};

struct hs_ecmp_group {
	int sw, leaf;			/* the switch, the destination ToR */
	int n;
	struct hs_ecmp_nh nh[HS_ECMP_MAX_NH];
	uint32_t flows, traces;
	uint64_t bytes;
	double imbalance, byte_imbalance;
	bool flagged;			/* imbalance > threshold */
};

struct hs_ecmp {
	struct hs_ecmp_group *groups;	/* most imbalanced first */
	size_t n;
};

/* groups at switch sw from traces at or after since_ns; topo required */
void hs_an_ecmp(const struct hs_trace *const *t, size_t n, const struct hs_topo *topo, int sw,
		uint64_t since_ns, double threshold, struct hs_ecmp *out);
void hs_ecmp_free(struct hs_ecmp *e);
/* max / mean - 1 of n shares (0 when n < 2 or they sum to 0) */
double hs_an_imbalance(const double *share, int n);

/* ---- 007 blame ----------------------------------------------------------
 * Per epoch of capture time, a TCP flow retransmitted when two of its
 * traces carry the same sequence number, TCP flags and length, and the
 * packet was a SYN or FIN or carried data (IP length above 80 bytes, more
 * than any header-only segment): a repeated pure ACK is not a retransmission.
 * Its path is the longest among its traces (distinct topology links between
 * consecutive hops); a dropped trace's path ends with the link to the switch
 * expected next, when that is known (one candidate, or the one the flow
 * took elsewhere). When its traces give no link, cfg->path may give one
 * (a traceroute of the flow). Each of the h links gets 1/h of a vote.
 *
 * Noise: a link is reported when its votes are at least min_share of the
 * epoch's votes and above mean + k * stddev of the votes of every other
 * topology link in the epoch (zeros included). */
#define HS_BLAME_DEFAULT_EPOCH (30 * HS_NS_PER_SEC)
#define HS_BLAME_DEFAULT_MIN_SHARE 0.01
#define HS_BLAME_DEFAULT_K 3.0

/* A retransmitting flow whose traces give no link (one hop seen, or hops
 * the topology does not join) takes its path from here, as 007 takes it from
 * a traceroute: the switches in order (topology indexes) into sw, at most
 * max of them; returns how many, 0 when there is none. */
typedef int (*hs_blame_path_fn)(void *arg, const struct hs_flowkey *flow, int *sw, int max);

struct hs_blame_cfg {
	uint64_t epoch_ns;		/* 0: default */
	double min_share;		/* < 0: default */
	double k;			/* < 0: default */
	hs_blame_path_fn path;		/* NULL: traces only */
	void *path_arg;
};

struct hs_blame_link {
	int a, b;			/* switch indexes, a < b */
	double votes;
	uint32_t flows;			/* flows that voted for it */
	bool reported;			/* above the noise threshold */
	double fence;			/* the votes it had to exceed to be reported */
	size_t flow_off;		/* its flows: hs_blame.flows[flow_off .. + flows] */
};

struct hs_blame_epoch {
	uint64_t start;			/* epoch_ns multiple, capture time */
	uint32_t flows;			/* distinct TCP flows traced */
	uint32_t retx_flows;		/* of which retransmitted */
	uint32_t no_path;		/* retransmitted, but no link known to vote for */
	uint32_t retx_looped;		/* retransmitted, with a looped trace */
	double total;			/* votes cast */
	size_t link_off, nlinks;	/* its links in hs_blame.links, most votes first */
};

struct hs_blame {
	uint64_t epoch_ns;
	struct hs_blame_epoch *epochs;	/* oldest first */
	size_t nepochs;
	struct hs_blame_link *links;
	size_t nlinks;
	struct hs_flowkey *flows;
	size_t nflows;
};

void hs_an_blame(const struct hs_trace *const *t, size_t n, const struct hs_topo *topo,
		 const struct hs_blame_cfg *cfg, struct hs_blame *out);
void hs_blame_free(struct hs_blame *b);

/* flow keys in a total order (for sorting and distinct counts) */
int hs_an_flowkey_cmp(const struct hs_flowkey *x, const struct hs_flowkey *y);

#endif
