/* probe.h - guided probes: spec, crafting, signature, results
 *
 * A probe is an IPv4 TCP, UDP or ICMP echo packet with the debug bit set
 * (every switch mirrors it) whose payload begins with a signature:
 *
 *   "HSPB" | probe id (u32) | seq (u32) | send time (u64, ns)   all big endian
 *
 * so any mirrored copy can be tied back to the probe that sent it. Wrapped in
 * IP-in-IP headers addressed to switch loopbacks it is injected anywhere in
 * the fabric: 'from SW' adds one outer header to SW, 'via S1,S2,...' nests
 * them so that the outermost header goes to S1. The probe's own copies come
 * back through capture -> decode -> tracer as traces flagged HS_TF_PROBE,
 * which a running probe subscribes to (subs.h) and matches by its id.
 * The words of the probe and traceroute verbs are the console's
 * (probecmd.h); what a run found goes to it through callbacks.
 */
#ifndef HS_PROBE_H
#define HS_PROBE_H

#include <uv.h>
#include "hs.h"
#include "decode.h"
#include "topo.h"
#include "tracer.h"

struct hs_ctx;
struct libnet_context;		/* libnet_t */

#define HS_PROBE_MAGIC		0x48535042u	/* "HSPB" */
#define HS_PROBE_SIG_LEN	20
#define HS_PROBE_MAX_VIA	8		/* IP-in-IP layers */
#define HS_PROBE_MAX_COUNT	10000
#define HS_PROBE_MTU		1500		/* largest packet put on the wire */
#define HS_TRACEROUTE_MAX_TTL	15
#define HS_TRACEROUTE_ROUNDS	10	/* --report, a runbook, --json: rounds by default */

enum hs_probe_kind {
	HS_PROBE_PLAIN = 0,	/* probe [tcp|udp|icmp] ... */
	HS_PROBE_LINK,		/* probe link A B: A -> B -> A, one clock */
	HS_PROBE_TRACEROUTE,	/* traceroute: TTL 1..15 with a flow's 5-tuple */
};

enum hs_probe_expect {
	HS_EXPECT_NONE = 0,
	HS_EXPECT_DELIVERED,
	HS_EXPECT_LOST,
};

struct hs_probe_spec {
	int kind;		/* enum hs_probe_kind */
	uint8_t proto;		/* 6, 17, or 1 (echo request) */
	struct hs_addr src, dst;	/* IPv4 */
	uint16_t sport, dport;	/* sport 0: chosen from the probe id when sent */
	uint8_t tcp_flags;	/* FIN=1 SYN=2 RST=4 PSH=8 ACK=16 URG=32 ECE=64 CWR=128 */
	uint8_t ttl;
	uint8_t tos;		/* DSCP << 2 | ECN as given; the debug bit is OR-ed in */
	bool have_ip_id;
	uint16_t ip_id;
	uint16_t len;		/* inner IP total length; 0: the smallest that fits */
	int nvia;		/* IP-in-IP layers, outermost first */
	int via[HS_PROBE_MAX_VIA];		/* switch indexes */
	struct hs_addr via_addr[HS_PROBE_MAX_VIA];	/* their loopbacks */
	bool from;		/* given as 'from SW' (nvia == 1) */
	struct hs_addr outer_src;	/* source of the outer headers: the analyzer */
	unsigned count;
	uint64_t interval_ns;
	uint64_t timeout_ns;	/* after the last packet; 0: trace timeout + 2 s */
	bool badsum;		/* wrong L4 checksum: the destination drops it */
	bool json;
	int expect;		/* enum hs_probe_expect */
	int link_a, link_b;	/* HS_PROBE_LINK: switch indexes */
	/* traceroute: rounds of max_ttl packets, TTL 1..max_ttl */
	uint8_t max_ttl;
	unsigned rounds;	/* 0: until stopped */
	uint64_t round_ns;	/* from one round to the next */
	bool table;		/* per-hop loss and latency over the rounds */
	bool report;		/* --report: the table once, at the end */
};

/* smallest and largest inner IP length for a spec */
uint16_t hs_probe_min_len(const struct hs_probe_spec *s);
uint16_t hs_probe_max_len(const struct hs_probe_spec *s);

/* what varies from one packet of a probe to the next */
struct hs_probe_pkt {
	uint32_t probe_id;	/* nonzero */
	uint32_t seq;
	uint64_t sent_ns;	/* wall clock, goes into the signature */
	uint16_t ip_id;		/* inner IP ID */
	uint32_t tcp_seq;
	uint16_t sport;
	uint8_t ttl;		/* inner TTL */
};

/* fill in a packet's ip_id, tcp_seq, sport and ttl from the spec and seq */
void hs_probe_pkt_init(const struct hs_probe_spec *s, uint32_t probe_id, uint32_t seq,
		       uint64_t sent_ns, struct hs_probe_pkt *pk);

/* Craft one probe packet with libnet (any injection type; LIBNET_NONE only
 * builds) into buf: the IP-in-IP layers, the inner IPv4 header and L4 header
 * with the signature and a payload pattern. Returns its length, or 0 with a
 * message in err. The libnet context's packet is cleared first. */
size_t hs_probe_craft(struct libnet_context *l, const struct hs_probe_spec *s,
		      const struct hs_probe_pkt *pk, uint8_t *buf, size_t cap,
		      char *err, size_t errlen);

/* signature: write HS_PROBE_SIG_LEN bytes; read from n bytes (false if absent) */
void hs_probe_sig_write(uint8_t *b, uint32_t probe_id, uint32_t seq, uint64_t sent_ns);
bool hs_probe_sig_read(const uint8_t *b, size_t n, uint32_t *probe_id, uint32_t *seq,
		       uint64_t *sent_ns);
/* the signature of a decoded copy: TCP/UDP payload or ICMP echo data.
 * Bounds-checked against the captured bytes. */
bool hs_probe_sig_parse(const struct hs_pkt *p, uint32_t *probe_id, uint64_t *sent_ns);
/* the same, with the packet's sequence number */
bool hs_probe_sig_parse_seq(const struct hs_pkt *p, uint32_t *probe_id, uint32_t *seq,
			    uint64_t *sent_ns);

/* ---- results -------------------------------------------------------------- */

enum hs_probe_outcome {
	HS_PROBE_PENDING = 0,	/* no copy seen yet */
	HS_PROBE_DELIVERED,	/* reached the destination's ToR (link: came back to A) */
	HS_PROBE_LOST,		/* last seen at lost_after (or never seen) */
	HS_PROBE_LOOPED,	/* a switch came back where the path did not ask for it */
	HS_PROBE_SEEN,		/* seen, but no topology to judge it by */
};

struct hs_probe_hop {
	int sw;			/* topology index or -1 */
	struct hs_addr addr;	/* mirror source */
	uint64_t ts_ns;		/* capture time */
	uint64_t hw_ns;		/* switch time or 0 */
	uint8_t ttl;
};

struct hs_probe_result {
	uint32_t seq;
	uint64_t sent_ns;
	int outcome;		/* enum hs_probe_outcome */
	int lost_after;		/* hop index of the last switch seen, -1 none */
	bool have_rtt;
	uint64_t rtt_ns;	/* last hop - send time; link: A -> B -> A on A's clock */
	int nhops;
	struct hs_probe_hop hops[HS_TRACE_MAX_HOPS];
};

const char *hs_probe_outcome_name(int outcome);

/* judge one closed probe trace against its spec */
void hs_probe_judge(const struct hs_probe_spec *s, const struct hs_topo *topo,
		    const struct hs_trace *t, uint64_t sent_ns, struct hs_probe_result *r);

/* When each hop of r saw the probe, in ns after it was sent: the switch's
 * timestamp of its arrival, which shares the send's clock when it lies
 * between the send and the copy's capture (the lab's switches do), else the
 * capture time for a copy without one. -1 for a hop whose time cannot be
 * trusted: a stamp off the send's clock, or before the hop before it. */
void hs_probe_hop_times(const struct hs_probe_result *r, int64_t at[HS_TRACE_MAX_HOPS]);

/* p-th percentile (0..100, nearest rank) of n values; sorts v. 0 when n == 0 */
uint64_t hs_probe_percentile(uint64_t *v, size_t n, double p);

/* a switch's name in topo, else its address as text (in buf) */
const char *hs_probe_hop_name(const struct hs_topo *topo, int sw, const struct hs_addr *a,
			      char *buf, size_t len);

/* ---- a run: sending, matching, timing ---------------------------------------
 *
 * One run at a time per context (ctx->probe). hs_probe_open checks that one
 * can start and opens its raw socket; hs_probe_start sends the first packet
 * and returns; the rest happens on the loop and is told through the
 * callbacks. A front end reads the run's first fields while it renders. */

struct hs_probe_slot {		/* one packet of the run */
	struct hs_probe_pkt pk;
	bool sent;
	bool settled;		/* traceroute rounds: counted in the stats */
	struct hs_probe_result r;
};

/* traceroute rounds: what the packets saw at each hop of the path (hop k is
 * the k-th switch of a packet's own per-hop trace) */
struct hs_tr_hop {
	int sw[4];		/* the switches seen at this hop */
	struct hs_addr addr[4];
	int nsw;
	uint64_t n;		/* latency samples */
	int64_t last, best, worst;
	double mean, m2;	/* running mean and sum of squared deviations */
};

struct hs_tr_stats {
	uint64_t sent[HS_TRACEROUTE_MAX_TTL + 1];	/* settled packets by TTL */
	uint64_t seen[HS_TRACEROUTE_MAX_TTL + 1][HS_TRACEROUTE_MAX_TTL + 1];	/* [ttl][hop] */
	struct hs_tr_hop hop[HS_TRACEROUTE_MAX_TTL + 1];
	int reached;		/* the hop of the destination's ToR, 0 not yet */
	int deepest;		/* the deepest hop any packet was seen at */
	unsigned rounds;	/* rounds sent */
};

struct hs_probe_icmp {		/* an ICMP error about a traceroute packet */
	bool have;
	struct hs_addr from;
	uint64_t ts_ns;
	uint8_t type;
};

struct hs_probe_run;

struct hs_probe_cbs {
	/* a packet's fate is known: its trace closed, or it is lost (not for
	 * traceroute) */
	void (*result)(void *arg, const struct hs_probe_run *r, const struct hs_probe_result *res);
	/* traceroute rounds: a round was sent */
	void (*round)(void *arg, const struct hs_probe_run *r);
	/* the run ends: every packet's fate is known, or it was stopped; then
	 * it is kept in the history */
	void (*end)(void *arg, const struct hs_probe_run *r);
	/* a packet could not be made or sent: one line, "VERB: ..." */
	void (*error)(void *arg, const char *msg);
	/* the run is over and gone: 0, or -1 when a send failed or the
	 * outcome was not the one expected (--expect) */
	void (*done)(void *arg, int status);
	void *arg;
};

struct hs_probe_run {
	/* what a front end reads */
	struct hs_ctx *ctx;
	struct hs_probe_spec s;
	uint32_t id;
	unsigned nsent;			/* packets sent */
	bool stopped;			/* hs_probe_stop ended it */
	struct hs_probe_slot *slot;	/* packet seq's: slot[seq % nslots] */
	unsigned nslots;
	struct hs_tr_stats *tr;		/* traceroute rounds, else NULL */
	struct hs_probe_icmp icmp[HS_TRACEROUTE_MAX_TTL];	/* traceroute: by TTL - 1 */
	/* the engine's */
	struct hs_probe_cbs cb;
	char *words;
	struct libnet_context *l;
	uv_timer_t send_timer, end_timer;
	int open_handles;
	unsigned ndone;
	bool finished, send_failed;
	int icmp_fd;
	uv_poll_t icmp_poll;
	bool icmp_polling;
};

/* a run of spec s, not started: NULL with the message in err when one is
 * running or the raw socket cannot be opened */
struct hs_probe_run *hs_probe_open(struct hs_ctx *ctx, const struct hs_probe_spec *s,
				   char *err, size_t errlen);
/* send the first packet and wait for the copies: 0, or -1 with the run gone
 * (and a message in err, or "" when cb->error told it). words is the spec
 * as typed, kept in the history. */
int hs_probe_start(struct hs_probe_run *r, const char *words, const struct hs_probe_cbs *cb,
		   char *err, size_t errlen);
/* a run opened and not started, given up: its socket closed, it freed */
void hs_probe_close(struct hs_probe_run *r);
/* stop the context's run now: what is still awaited is unknown, not lost */
void hs_probe_stop(struct hs_ctx *ctx);

#endif
