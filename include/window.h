/* window.h - per-packet records and tumbling-window aggregates over them
 *
 * A per-packet record is one decoded mirrored copy: capture time, the switch
 * that mirrored it (its mirror source address), the inner 5-tuple, length,
 * TCP flags, TTL and DSCP. The aggregator groups records by a key made of a
 * few fields (src, dst, sport, dport, proto, switch, dscp; "flow" is the
 * 5-tuple) into tumbling windows aligned on multiples of the window length,
 * and counts packets, bytes (inner IP length), distinct flows and drops per
 * (window, key).
 *
 * Memory is bounded: at most max_keys keys per window (records of further
 * keys are summed into one "other" row and counted), at most max_open windows
 * open at once (a record too far ahead closes the oldest early), at most
 * max_flows distinct (key, flow) pairs per window in a set that starts small
 * and doubles as needed (flows beyond it are counted, not tracked). A window is
 * emitted once, when hs_win_close_until() passes its end or at hs_win_flush();
 * records for a window already emitted are counted as late. Windows that saw
 * nothing emit nothing. Nothing is allocated per record.
 */
#ifndef HS_WINDOW_H
#define HS_WINDOW_H

#include "hs.h"
#include "decode.h"
#include "tracer.h"

struct hs_pktrec {
	uint64_t ts_ns;		/* capture time */
	struct hs_addr sw;	/* mirror source of the copy; af 0 when none */
	struct hs_flowkey key;
	uint32_t len;		/* inner IP length */
	uint8_t tcp_flags, ttl, dscp;
};

/* the record of a decoded copy, and of one hop of a trace */
void hs_pktrec_from_pkt(struct hs_pktrec *r, const struct hs_pkt *p);
void hs_pktrec_from_hop(struct hs_pktrec *r, const struct hs_trace *t, const struct hs_hop *h);

/* An inner IP and L4 header rebuilt from a record (addresses, ports,
 * protocol, TTL, DSCP, TCP flags, length; no payload), for running a BPF
 * filter on a record whose bytes are gone (the hops of a trace). Returns its
 * length, 0 when buf is too small (HS_PKTREC_HDR_MAX is enough). */
#define HS_PKTREC_HDR_MAX 60
size_t hs_pktrec_header(const struct hs_pktrec *r, uint8_t *buf, size_t len);

/* key fields */
#define HS_WF_SRC	0x01
#define HS_WF_DST	0x02
#define HS_WF_SPORT	0x04
#define HS_WF_DPORT	0x08
#define HS_WF_PROTO	0x10
#define HS_WF_SWITCH	0x20
#define HS_WF_DSCP	0x40
#define HS_WF_FLOW	(HS_WF_SRC | HS_WF_DST | HS_WF_SPORT | HS_WF_DPORT | HS_WF_PROTO)

/* "switch,dport" -> mask; 0 or -1 with a message naming the field in err */
int hs_win_fields_parse(const char *s, unsigned *fields, char *err, size_t errlen);

struct hs_win_key {
	struct hs_addr src, dst, sw;
	uint16_t sport, dport;
	uint8_t proto, dscp;
};

struct hs_win_row {
	uint64_t window_start, window_ns;
	const struct hs_win_key *key;	/* only the fields asked for are set */
	bool other;		/* the keys that did not fit, summed */
	uint64_t packets, bytes, flows, drops;
};

/* rows of one window come one after the other, busiest key first */
typedef void (*hs_win_row_cb)(void *arg, const struct hs_win_row *row);

#define HS_WIN_KEYS_DEFAULT 1024
#define HS_WIN_OPEN_DEFAULT 32
#define HS_WIN_FLOWS_DEFAULT 98304	/* (key, flow) pairs a window tracks: 1 MiB */

struct hs_win_cfg {
	uint64_t window_ns;	/* > 0 */
	unsigned fields;	/* HS_WF_* */
	size_t max_keys;	/* 0: HS_WIN_KEYS_DEFAULT */
	size_t max_open;	/* 0: HS_WIN_OPEN_DEFAULT */
	size_t max_flows;	/* 0: HS_WIN_FLOWS_DEFAULT */
	hs_win_row_cb on_row;
	void *arg;
};

struct hs_win_stats {
	uint64_t packets, drops;	/* records aggregated */
	uint64_t late, late_drops;	/* for windows already emitted: not counted */
	uint64_t before;		/* before the window hs_win_begin() named */
	uint64_t over_keys;		/* records summed into "other" */
	uint64_t flows_untracked;	/* records whose flow the flow set had no room for */
	uint64_t forced;		/* windows emitted early to bound memory */
	uint64_t windows, rows;		/* emitted */
};

struct hs_win *hs_win_new(const struct hs_win_cfg *cfg);
void hs_win_free(struct hs_win *w);
void hs_win_packet(struct hs_win *w, const struct hs_pktrec *r);
/* a dropped trace: one drop in the window of r->ts_ns (its last hop) */
void hs_win_drop(struct hs_win *w, const struct hs_pktrec *r);
/* that drop taken back (its trace is to be counted again as another):
 * from its window while it is open; one emitted already keeps it */
void hs_win_undrop(struct hs_win *w, const struct hs_pktrec *r);
/* records before the window of t are not kept (counted as 'before'):
 * aggregates that start in the middle of a stream begin with t's window */
void hs_win_begin(struct hs_win *w, uint64_t t);
/* emit every window that ends at or before t */
void hs_win_close_until(struct hs_win *w, uint64_t t);
/* emit every open window */
void hs_win_flush(struct hs_win *w);
void hs_win_get_stats(const struct hs_win *w, struct hs_win_stats *st);

#endif
