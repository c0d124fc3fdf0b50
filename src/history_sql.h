/* history_sql.h - the history's listings and a stored trace read back, in
 * one text for every engine (history.c, store_pg.c). Where their SQL
 * differs, the file that includes this defines first:
 *   SQL_P1            its first parameter: "?1", "$1"
 *   SQL_JOIN(x, sep)  the aggregate joining x with sep, in the order of
 *                     the rows it reads
 *   SQL_HOPS_OF(list) a FROM clause of the hops of a hop_list, list,
 *                     as h, a row a hop, each with its mirror source m
 *   SQL_HOP_ROWS      the rest of a FROM clause expanding traces t's
 *                     hop_list the same way
 *   SQL_HOP_IDX       h's place in the list, from 0
 *   SQL_HOP(n)        h's n-th number
 *   SQL_HOP0(n)       the n-th number of traces t's first hop
 */
#ifndef HS_HISTORY_SQL_H
#define HS_HISTORY_SQL_H

/* a protocol by its name, else its number as text: a column of one type,
 * as PostgreSQL's CASE must be, and the same from both engines */
#define SQL_PROTO(col) "CASE " col " WHEN 6 THEN 'tcp' WHEN 17 THEN 'udp' WHEN 1 THEN 'icmp' " \
	"WHEN 58 THEN 'icmp6' ELSE CAST(" col " AS TEXT) END"

/* a trace is named as everywhere else: SESSION:N, N its tracer's number */
#define SQL_TRACE_REF "t.session || ':' || t.trace_no AS trace"

/* hop h's time: the trace's first copy's, and its own from that */
#define SQL_HOP_TS "coalesce(t.first_ts, 0) + " SQL_HOP(1)

/* trace t's time as every list shows it and sorts by (hs_trace_time): its
 * first hop's switch timestamp when every hop has one on the capture's
 * clock (hs_trace_switch_clock: not after its capture time, less than
 * HS_HW_WALL_SKEW before it), else its first hop's capture time; 0
 * without hops */
#define SQL_HW_WALL_SKEW "100000000"
_Static_assert(HS_HW_WALL_SKEW == 100000000, "SQL_HW_WALL_SKEW is HS_HW_WALL_SKEW");
#define SQL_TRACE_TIME "coalesce(CASE WHEN NOT EXISTS (SELECT 1 FROM " SQL_HOPS_OF("t.hop_list") \
	" WHERE " SQL_HOP(2) " IS NULL OR t.first_hw_ts + " SQL_HOP(2) " > " SQL_HOP_TS \
	" OR " SQL_HOP_TS " - t.first_hw_ts - " SQL_HOP(2) " >= " SQL_HW_WALL_SKEW ")" \
	" THEN t.first_hw_ts + " SQL_HOP0(2) " ELSE coalesce(t.first_ts, 0) + " SQL_HOP0(1) " END, 0)"

/* trace t may be among the n newest by that time: the n-th newest first
 * copy is f, so n traces' times are from f - HS_HW_WALL_SKEW on, and no
 * trace's time is after its last copy. What reads every trace's hops
 * reads only these (a scan of two columns, not of every hop list). */
#define SQL_TRACE_MAYBE_NEWEST(n) "coalesce(t.last_ts, 0) >= coalesce((SELECT first_ts" \
	" FROM traces WHERE first_ts IS NOT NULL ORDER BY first_ts DESC LIMIT 1 OFFSET " n \
	" - 1), 0) - " SQL_HW_WALL_SKEW

static const char *const listing_sql[] = {
	[HS_LIST_SESSIONS] =
		"SELECT id, started, ended, source, "
		"filter, packets, bytes, decode_errors, kernel_drops, traces "
		"FROM sessions ORDER BY id DESC LIMIT " SQL_P1,
	[HS_LIST_FLOWS] =
		"SELECT session, src, sport, dst, dport, " SQL_PROTO("proto") " AS proto, packets, "
		"bytes, syn, fin, rst, dropped, looped, last_ts "
		"FROM flows ORDER BY session DESC, last_ts DESC, bytes DESC LIMIT " SQL_P1,
	/* each trace's path from its own row's hops, as q_hops reads them:
	 * through the hops view each listed trace was looked up again; newest
	 * first by the time every list of traces shows (hs_trace_cmp_newest) */
	[HS_LIST_TRACES] =
		"SELECT " SQL_TRACE_REF ", " SQL_TRACE_TIME " AS ts, t.src, t.sport, t.dst, t.dport, "
		SQL_PROTO("t.proto") " AS proto, t.outcome, "
		"(SELECT " SQL_JOIN("name", "' > '") " FROM (SELECT coalesce(m.switch, m.addr) AS name "
		"FROM " SQL_HOPS_OF("t.hop_list") " ORDER BY " SQL_HOP_IDX ") AS p) AS path, "
		"t.expected_next FROM traces t WHERE " SQL_TRACE_MAYBE_NEWEST(SQL_P1)
		" ORDER BY ts DESC, t.session DESC, t.trace_no DESC LIMIT " SQL_P1,
	/* a probe's rows share its kind and spec; analyzers number their
	 * probes each on its own, so a probe is its analyzer's number */
	[HS_LIST_PROBES] =
		"SELECT probe_id, analyzer, min(kind) AS kind, min(spec) AS spec, min(sent) AS sent, "
		"count(*) AS packets, "
		"sum(CASE WHEN outcome = 'delivered' THEN 1 ELSE 0 END) AS delivered, "
		"sum(CASE WHEN outcome IN ('lost', 'looped') THEN 1 ELSE 0 END) AS lost, "
		"CAST(round(avg(rtt)) AS BIGINT) AS rtt "
		"FROM probes GROUP BY analyzer, probe_id ORDER BY sent DESC, probe_id DESC, "
		"analyzer LIMIT " SQL_P1,
	[HS_LIST_EVENTS] =
		"SELECT id, session, ts, alert, cond, value "
		"FROM events ORDER BY ts DESC, id DESC LIMIT " SQL_P1,
	[HS_LIST_CONTROL] =
		"SELECT id, session, ts, switch, proto, kind, src, sport, dst, dport, "
		"detail FROM control ORDER BY session DESC, ts DESC, id DESC LIMIT " SQL_P1,
	/* each analyzer's running capture, by its last heartbeat */
	[HS_LIST_RUNNING] =
		"SELECT session, seen FROM analyzers WHERE session IS NOT NULL "
		"ORDER BY seen DESC LIMIT " SQL_P1,
	/* every analyzer's last heartbeat */
	[HS_LIST_ANALYZERS] =
		"SELECT name, session, seen, packets, kernel_drops, rate, queued, lag, lost, "
		"history FROM analyzers ORDER BY name LIMIT " SQL_P1,
};

/* Stored traces (parts of packets), one row a hop, as fabric.c joins
 * them: sorted by the packet's identity, then time, then hop. Each
 * trace's hops come from its own row, not through the hops view, which
 * would read every trace of the history to find them. The bounds given
 * to printf are numbers, never text from the user. */
#define SQL_PARTS_ROWS \
	"SELECT t.id, t.src, t.dst, t.proto, t.sport, t.dport, t.ip_id, t.seq, t.tcp_flags," \
	" t.len, t.flags, t.probe_id, t.first_ts, m.switch, m.addr," \
	" " SQL_HOP_TS ", t.first_hw_ts + " SQL_HOP(2) "," \
	" " SQL_HOP(3) ", " SQL_HOP(4) ", " SQL_HOP(5) ", t.analyzer, t.session, t.trace_no" \
	" FROM traces t" SQL_HOP_ROWS
/* the order of the stored traces: a packet's parts next to each other */
#define SQL_PARTS_KEY \
	" ORDER BY t.src, t.dst, t.proto, t.sport, t.dport, t.ip_id, t.seq, t.tcp_flags," \
	" t.len, t.first_ts, t.id"
#define SQL_PARTS_ORDER SQL_PARTS_KEY ", " SQL_HOP_IDX
/* those first seen from SINCE on, and of those first seen from FROM on
 * the ones whose addresses and IP ID a trace first seen before TO has (a
 * part of the same packet may be among them): FROM, SINCE, SINCE, TO */
#define SQL_PARTS_NEWEST \
	" WHERE t.first_ts >= %" PRIu64 " AND (t.first_ts >= %" PRIu64 \
	" OR (t.src, t.dst, coalesce(t.ip_id, -1)) IN (SELECT src, dst, coalesce(ip_id, -1)" \
	" FROM traces WHERE first_ts >= %" PRIu64 " AND first_ts < %" PRIu64 "))"
/* those first seen from FROM up to TO: FROM, TO */
#define SQL_PARTS_SPAN " WHERE t.first_ts >= %" PRIu64 " AND t.first_ts < %" PRIu64
#define SQL_PARTS SQL_PARTS_ROWS SQL_PARTS_NEWEST SQL_PARTS_ORDER
#define SQL_PARTS_RANGE SQL_PARTS_ROWS SQL_PARTS_SPAN SQL_PARTS_ORDER

/* the trace of row id SQL_P1, then its hops */
static const char q_show[] =
	"SELECT " SQL_TRACE_REF ", " SQL_TRACE_TIME " AS ts, t.src, t.sport, "
	"t.dst, t.dport, " SQL_PROTO("t.proto") " AS proto, t.ip_id, t.len, t.outcome, "
	"t.last_switch, t.expected_next, t.nhops, t.probe_id FROM traces t WHERE t.id = " SQL_P1;

/* (read from the trace's own row, as SQL_PARTS_ROWS reads them); a hop's
 * latency is from the hop before by the switches' clock where both have
 * a timestamp, by the capture's otherwise, as 'traces show' gives it
 * (hs_hop_delta) */
#define SQL_HOP_HW "t.first_hw_ts + " SQL_HOP(2)
#define SQL_HOP_LAG(x) "(" x " - lag(" x ") OVER (ORDER BY " SQL_HOP_IDX "))"
static const char q_hops[] =
	"SELECT row_number() OVER (ORDER BY " SQL_HOP_IDX ") AS idx, "
	"coalesce(m.switch, '-') AS switch, m.addr, " SQL_HOP_TS " AS ts, "
	"coalesce(" SQL_HOP_LAG(SQL_HOP_HW) ", " SQL_HOP_LAG(SQL_HOP_TS) ") AS latency, "
	SQL_HOP(3) " AS ttl, " SQL_HOP(4) " AS tos, " SQL_HOP(5) " AS session "
	"FROM traces t" SQL_HOP_ROWS " WHERE t.id = " SQL_P1 " ORDER BY " SQL_HOP_IDX;

/* the row of stored trace SESSION:N: ?1/$1 its session (0: any), $2 its
 * number, $3 the session preferred when several have it */
#define SQL_TRACE_FIND(p1, p2, p3) "SELECT id FROM traces WHERE trace_no = " p2 \
	" AND (" p1 " = 0 OR session = " p1 ")" \
	" ORDER BY session = " p3 " DESC, session DESC LIMIT 1"

/* 007's fallback path of a flow (src, dst, proto, sport, dport): the
 * switch that last saw each TTL of its newest stored traceroute, in TTL
 * order */
#define SQL_TRACEROUTE_PATH(src, dst, proto, sport, dport) \
	"SELECT h.switch FROM probe_hops h" \
	" JOIN (SELECT analyzer, probe_id FROM probes WHERE kind = 'traceroute' AND src = " src \
	"       AND dst = " dst " AND proto = " proto " AND sport = " sport \
	"       AND dport = " dport " ORDER BY sent DESC LIMIT 1) p" \
	"   ON h.analyzer = p.analyzer AND h.probe_id = p.probe_id" \
	" WHERE h.idx = (SELECT max(idx) FROM probe_hops g WHERE g.analyzer = h.analyzer" \
	"                AND g.probe_id = h.probe_id AND g.seq = h.seq)" \
	" ORDER BY h.seq"

#endif
