/* snapshot.h - synchronized counter snapshots (Speedlight style)
 *
 * The driver reads every switch's port counters at one common instant and
 * answers one JSON document (answer.h; share/drivers/README):
 *
 *   {"snapshot_ns":T_NS,"switches":N,"ports":[{"switch":"SW","port":"P",
 *    "read_ns":NS,"rx_packets":N,"rx_bytes":N,"rx_drops":N,"tx_packets":N,
 *    "tx_bytes":N,"tx_drops":N,"backlog_bytes":N|null,
 *    "backlog_packets":N|null},...]}
 *
 * Times are nanoseconds since the epoch, the backlog pair null where a port
 * has no queueing qdisc. The whole answer is checked before anything is
 * kept: one bad port refuses the snapshot, and the error names its switch.
 *
 * A diff of two snapshots gives each port's counter deltas and rates over
 * the interval between its two reads, and, from the topology, each switch's
 * ECMP groups: the ports toward the shortest-path next hops to a destination
 * ToR, when there are two or more. Groups with the same members are one
 * group. Each member's share is of the group's transmitted bytes; the
 * imbalance is hs_an_imbalance() of the shares (max / mean - 1).
 */
#ifndef HS_SNAPSHOT_H
#define HS_SNAPSHOT_H

#include "hs.h"
#include "topo.h"

#define HS_SNAP_PORT_MAX	16		/* interface names, with the NUL */
#define HS_SNAP_MAX_PORTS	65536
#define HS_SNAP_MAX_NH		16
#define HS_SNAP_DEFAULT_THRESHOLD 0.25
/* a group is flagged only when it sent this much per member: a few stray
 * packets on an idle group are not an imbalance */
#define HS_SNAP_MIN_MEMBER_BYTES 16384

enum {
	HS_SNAP_RX_PACKETS,
	HS_SNAP_RX_BYTES,
	HS_SNAP_RX_DROPS,
	HS_SNAP_TX_PACKETS,
	HS_SNAP_TX_BYTES,
	HS_SNAP_TX_DROPS,
	HS_SNAP__NCOUNTERS
};

/* column and JSON names, in the order above */
extern const char *const hs_snap_counter_names[HS_SNAP__NCOUNTERS];

struct hs_snap_port {
	char sw[HS_NAME_MAX];
	char port[HS_SNAP_PORT_MAX];
	uint64_t read_ns;
	uint64_t c[HS_SNAP__NCOUNTERS];
	bool has_backlog;
	uint64_t backlog_bytes, backlog_packets;
};

struct hs_snap {
	int64_t id;			/* 0 until stored */
	uint64_t taken_ns;		/* wall clock when it was asked for */
	uint64_t target_ns;		/* the instant the switches read at */
	uint64_t spread_ns;		/* latest read - earliest read */
	uint32_t nswitches;
	size_t nports;
	int64_t session;		/* capture session running then, 0 none */
	struct hs_snap_port *ports;	/* in the driver's order */
};

/* Read the driver's answer into s (taken_ns and session left 0). 0, or -1
 * with err (one line) and s empty. */
int hs_snap_parse(const char *text, struct hs_snap *s, char *err, size_t errlen);
void hs_snap_free(struct hs_snap *s);
/* add the ports of from (another driver's, read at the same instant) to
 * into, freeing from; -1 with err when the instants differ or a port
 * repeats */
int hs_snap_merge(struct hs_snap *into, struct hs_snap *from, char *err, size_t errlen);

/* kept in the history: hs_store_snapshot() and friends (store.h) */

struct hs_snap_delta {
	const struct hs_snap_port *a, *b;
	uint64_t interval_ns;		/* b->read_ns - a->read_ns */
	uint64_t d[HS_SNAP__NCOUNTERS];
	bool reset;			/* a counter went back: d is the new value */
	double rate[HS_SNAP__NCOUNTERS];	/* d per second */
};

struct hs_snap_member {
	int neighbour;			/* switch index */
	const struct hs_snap_delta *delta;	/* NULL unless the port is in both snapshots */
	char port[HS_NAME_MAX];		/* the topology's port name */
	uint64_t tx_bytes;
	double share;
};

struct hs_snap_group {
	int sw;				/* switch index */
	int n;
	struct hs_snap_member m[HS_SNAP_MAX_NH];
	char toward[256];		/* destination ToRs, comma-separated */
	uint64_t tx_bytes;
	double imbalance;
	bool complete;			/* every member port is in both snapshots */
	bool flagged;			/* complete, busy enough and imbalance > threshold */
};

struct hs_snap_diff {
	uint64_t interval_ns;		/* between the two target instants */
	struct hs_snap_delta *ports;	/* ports of b also in a, b's order */
	size_t nports;
	size_t only_a, only_b;		/* ports in just one of the two */
	struct hs_snap_group *groups;	/* topology order of switches */
	size_t ngroups;
};

/* a must have been taken before b; topo may be NULL (no groups). -1 with err */
int hs_snap_diff(const struct hs_snap *a, const struct hs_snap *b, const struct hs_topo *topo,
		 double threshold, struct hs_snap_diff *out, char *err, size_t errlen);
void hs_snap_diff_free(struct hs_snap_diff *d);

#endif
