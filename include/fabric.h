/* fabric.h - one fabric's traces from a history many analyzers write
 *
 * Analyzers splitting a fabric's mirror sessions (by pod or by switch)
 * each see part of a packet's copies, and each closes and stores its part
 * as a trace of its own. Read back, the parts of one packet are joined by
 * the packet's identity (5-tuple, IP ID, sequence number, TCP flags,
 * length) within one trace timeout of each other, their hops put in path
 * order (TTL down, then time) and the whole given its outcome from the
 * topology, as one analyzer seeing every copy would have; two traces one
 * analyzer stored are two packets alike to the byte, each joined with the
 * others' parts in turn. The history is
 * read through the store's read-only query, on either engine.
 */
#ifndef HS_FABRIC_H
#define HS_FABRIC_H

#include "hs.h"
#include "store.h"
#include "tracer.h"
#include "topo.h"

struct hs_fabric_stats {
	uint64_t stored;	/* stored traces (parts) the handed traces are made of */
	uint64_t traces;	/* traces they make, joined */
	uint64_t joined;	/* of those, traces made of more than one stored part */
	bool older;		/* hs_fabric_newest: the history holds packets first
				 * seen before those handed */
};

/* what to read: the packets whose first stored copy is in [since_ns,
 * until_ns) (until_ns 0: no end), their parts joined within window_ns (the
 * trace timeout; parts are read that far either side of the range, and a
 * packet first seen outside it is left to the read of its own range);
 * own names the analyzer reading, whose parts are its own (NULL: none is) */
struct hs_fabric_range {
	uint64_t since_ns, until_ns, window_ns;
	const char *own;
};

/* a joined trace; foreign: at least one of its parts was stored by an
 * analyzer other than range->own, and its analyzer names those that
 * stored its parts (0 when none is foreign) */
typedef void (*hs_fabric_fn)(void *arg, const struct hs_trace *t, bool foreign);

/* Read the stored traces of r, join the parts of one packet and hand each
 * trace to each(), oldest first. 0, or -1 with err set (nothing handed). */
int hs_fabric_load(struct hs_store *st, const struct hs_topo *topo,
		   const struct hs_fabric_range *r, hs_fabric_fn each, void *arg,
		   struct hs_fabric_stats *fs, char *err, size_t errlen);

/* The newest max packets of the history first seen before until_ns (0:
 * no end), joined as hs_fabric_load joins them (window_ns the trace
 * timeout, every part foreign), handed oldest first: the packets first
 * seen from the time of the max-th newest stored part on (further back
 * while joining left fewer than max), so a read
 * takes about max stored traces, found by their time, however many the
 * history holds. A few more than max may be handed (parts first seen at
 * the same instant). Each is handed with the name of its first stored
 * part, SESSION:N ('history show' reads it). 0, or -1 with err set
 * (nothing handed). */
typedef void (*hs_fabric_named_fn)(void *arg, const struct hs_trace *t, int64_t session,
				   uint64_t no);
int hs_fabric_newest(struct hs_store *st, const struct hs_topo *topo, uint64_t max,
		     uint64_t window_ns, uint64_t until_ns, hs_fabric_named_fn each, void *arg,
		     struct hs_fabric_stats *fs, char *err, size_t errlen);

/* the analyzers heard as of wall clock now (hs_store_others, own as it
 * takes it): those whose heartbeat is older than HS_FABRIC_RUNNING_NS run
 * no capture. 0, or -1 with err set */
#define HS_FABRIC_RUNNING_NS HS_STORE_RUNNING_NS
int hs_fabric_others(struct hs_store *st, const char *own, uint64_t now,
		     struct hs_store_others *p, char *err, size_t errlen);

/* how long a packet's later parts may take to be stored after its first,
 * while the analyzers p tells of capture: two trace timeouts (window_ns)
 * open in a tracer, a writer's commit and the longest lag of a writer */
uint64_t hs_fabric_settle_ns(const struct hs_store_others *p, uint64_t window_ns);

/* where the history is whole at wall clock now, the newest stored packet
 * (p->newest) having last changed at moved (wall clock): the packets first
 * seen before the returned time have all their parts stored. p->newest + 1
 * when all of them have (nothing captures, or no newer packet was told of
 * for longer than a settle and a heartbeat), else newest less settle (0:
 * none has). The fabric view passes when it saw the newest change; the
 * store-answered verbs, which look once, the newest's own time
 * (hs_fabric_whole_until) */
uint64_t hs_fabric_whole_end(const struct hs_store_others *p, uint64_t window_ns,
			     uint64_t now, uint64_t moved);
/* hs_fabric_whole_end as a read of the newest packets takes it
 * (hs_fabric_newest's until_ns), the newest stored packet having moved at
 * its own time: 0 for all of them, else at least 1 */
uint64_t hs_fabric_whole_until(const struct hs_store_others *p, uint64_t window_ns,
			       uint64_t now);

/* the traces a read of the history joins at most: a range of time holding
 * this many is one query, well inside a statement timeout, and its joined
 * traces are held at once (100,000; fewer with HOPSCOPE_TEST_LOAD_BATCH,
 * for tests) */
uint64_t hs_fabric_batch(void);

/* The names of the analyzers that stored a trace's parts, "an1" or
 * "an1+an2" (sorted), each kept once for the life of the process under
 * the number a trace carries (hs_trace.analyzer), from the loop's thread
 * only: the number of names, added when new (0 for none or ""; past
 * HS_FABRIC_ANALYZERS_MAX kinds, the number of "?") */
#define HS_FABRIC_ANALYZERS_MAX 4096
uint16_t hs_fabric_analyzers_id(const char *names);
/* the names of a number a trace carries, NULL for 0 */
const char *hs_fabric_analyzers(uint16_t id);

#endif
