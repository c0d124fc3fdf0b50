/* store.c - the SQLite history
 *
 * Times are INTEGER nanoseconds since the Unix epoch (capture time for
 * flows, traces and hops; wall time for sessions). Addresses are text.
 *
 * Opening checks, before writing anything, that the file is SQLite, carries
 * our application_id (or is empty), has a schema we know and that no other
 * writer holds it; only then is it switched to WAL and migrated. Rows are
 * queued in an open transaction and committed by hs_store_commit().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sqlite3.h>

#include "interrupt.h"
#include "store_int.h"

#define BUSY_TIMEOUT_MS 200

enum {
	S_SESSION_BEGIN,
	S_SESSION_END,
	S_FLOW_UPDATE,
	S_CONTROL,
	S_SOURCE_FIND,
	S_SOURCE_ADD,
	S_TRACES_QUEUED,
	S__COUNT
};

/* the trace rows queued for the next INSERT, as SQLite reads them
 * (flush_traces()), and the columns of traces they fill */
#define QT_TABLE "hs_queued_traces"
#define QT_COLS "analyzer, session, trace_no, src, dst, proto, sport, dport, ip_id, seq," \
	" tcp_flags, len, first_ts, last_ts, outcome, last_switch, expected_next, nhops," \
	" flags, probe_id, hop_list, first_hw_ts"

static const char *const stmt_sql[S__COUNT] = {
	[S_SESSION_BEGIN] =
		"INSERT INTO sessions(started, source, filter, analyzer) VALUES (?1, ?2, ?3, ?4)",
	[S_SESSION_END] =
		"UPDATE sessions SET ended = ?2, packets = ?3, bytes = ?4, decode_errors = ?5,"
		" kernel_drops = ?6, traces = ?7, input = ?8 WHERE id = ?1",
	/* the row written before, found by rowid; the key is checked too, so a
	 * row gone with a rolled-back batch (its rowid maybe reused) is never
	 * overwritten: nothing changes and the flow is inserted again */
	[S_FLOW_UPDATE] =
		"UPDATE flows SET first_ts = ?7, last_ts = ?8, packets = ?9, bytes = ?10,"
		" syn = ?11, fin = ?12, rst = ?13, dropped = ?14, looped = ?15"
		" WHERE rowid = ?16 AND session = ?1 AND src = ?2 AND dst = ?3 AND proto = ?4"
		" AND sport = ?5 AND dport = ?6",
	[S_CONTROL] =
		"INSERT INTO control(session, ts, switch, proto, kind, src, dst, sport, dport,"
		" detail, analyzer) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[S_SOURCE_FIND] = "SELECT id FROM mirror_sources WHERE addr = ?1 AND switch IS ?2",
	[S_SOURCE_ADD] = "INSERT INTO mirror_sources(addr, switch) VALUES (?1, ?2)",
	/* the queued trace rows (flush_traces()) */
	[S_TRACES_QUEUED] = "INSERT INTO traces(" QT_COLS ") SELECT " QT_COLS " FROM " QT_TABLE,
};

/* the columns of sessions and traces as version 1 made them (later
 * versions add to them) */
#define SESSIONS_V1_COLS \
	" id INTEGER PRIMARY KEY," \
	" started INTEGER NOT NULL,"		/* wall clock, ns */ \
	" ended INTEGER," \
	" source TEXT," \
	" filter TEXT," \
	" packets INTEGER NOT NULL DEFAULT 0," \
	" bytes INTEGER NOT NULL DEFAULT 0," \
	" decode_errors INTEGER NOT NULL DEFAULT 0," \
	" kernel_drops INTEGER NOT NULL DEFAULT 0," \
	" traces INTEGER NOT NULL DEFAULT 0"
#define TRACES_V1_COLS \
	" id INTEGER PRIMARY KEY," \
	" session INTEGER NOT NULL REFERENCES sessions(id)," \
	" trace_no INTEGER NOT NULL,"		/* the tracer's id within the session */ \
	" src TEXT NOT NULL, dst TEXT NOT NULL, proto INTEGER NOT NULL," \
	" sport INTEGER, dport INTEGER, ip_id INTEGER, seq INTEGER, tcp_flags INTEGER," \
	" len INTEGER," \
	" first_ts INTEGER, last_ts INTEGER,"	/* capture time, ns */ \
	" outcome TEXT NOT NULL,"		/* delivered, dropped, looped, unknown */ \
	" last_switch TEXT," \
	" expected_next TEXT,"			/* switch names joined by '|' */ \
	" nhops INTEGER NOT NULL," \
	" flags INTEGER NOT NULL," \
	" probe_id INTEGER"

/* schema version 1 */
static const char schema_v1[] =
	"CREATE TABLE sessions (" SESSIONS_V1_COLS ");"
	"CREATE TABLE flows ("
	" session INTEGER NOT NULL REFERENCES sessions(id),"
	" src TEXT NOT NULL, dst TEXT NOT NULL, proto INTEGER NOT NULL,"
	" sport INTEGER NOT NULL, dport INTEGER NOT NULL,"
	" first_ts INTEGER, last_ts INTEGER,"	/* capture time, ns */
	" packets INTEGER NOT NULL, bytes INTEGER NOT NULL,"
	" syn INTEGER NOT NULL, fin INTEGER NOT NULL, rst INTEGER NOT NULL,"
	" dropped INTEGER NOT NULL, looped INTEGER NOT NULL,"
	" UNIQUE (session, src, dst, proto, sport, dport));"
	"CREATE TABLE traces (" TRACES_V1_COLS ");"
	"CREATE INDEX traces_by_session ON traces(session, trace_no);"
	"CREATE INDEX traces_by_outcome ON traces(outcome);"
	"CREATE TABLE hops ("
	" trace INTEGER NOT NULL REFERENCES traces(id),"
	" idx INTEGER NOT NULL,"		/* 0-based, in path order */
	" switch TEXT,"				/* topology name, NULL when unknown */
	" addr TEXT NOT NULL,"			/* mirror source address */
	" ts INTEGER NOT NULL,"			/* capture time, ns */
	" hw_ts INTEGER,"			/* switch time (ERSPAN III), ns */
	" ttl INTEGER, tos INTEGER,"
	" session INTEGER,"			/* ERSPAN session id */
	" PRIMARY KEY (trace, idx));";

/* version 2: guided probes, one row per probe packet, and the hops it was seen at */
static const char schema_v2[] =
	"CREATE TABLE probes ("
	" probe_id INTEGER NOT NULL,"
	" seq INTEGER NOT NULL,"
	" session INTEGER,"
	" kind TEXT NOT NULL,"		/* probe, link, traceroute */
	" spec TEXT,"			/* as typed */
	" src TEXT, dst TEXT, proto INTEGER, sport INTEGER, dport INTEGER,"
	" ttl INTEGER,"
	" sent INTEGER NOT NULL,"	/* wall clock, ns */
	" outcome TEXT NOT NULL,"	/* delivered, lost, looped, seen */
	" lost_after TEXT,"		/* switch */
	" rtt INTEGER,"			/* ns */
	" PRIMARY KEY (probe_id, seq));"
	"CREATE TABLE probe_hops ("
	" probe_id INTEGER NOT NULL,"
	" seq INTEGER NOT NULL,"
	" idx INTEGER NOT NULL,"
	" switch TEXT, addr TEXT,"
	" ts INTEGER,"			/* capture time, ns */
	" hw_ts INTEGER,"		/* switch time, ns */
	" ttl INTEGER,"
	" PRIMARY KEY (probe_id, seq, idx));";

/* version 3: 007 blame, the links reported per epoch (votes are 1/h shares) */
static const char schema_v3[] =
	"CREATE TABLE blame ("
	" epoch_start INTEGER NOT NULL,"	/* capture time, ns */
	" a TEXT NOT NULL, b TEXT NOT NULL,"	/* switch names, a < b by topology index */
	" votes REAL NOT NULL,"
	" flows INTEGER NOT NULL,"
	" PRIMARY KEY (epoch_start, a, b));";

/* version 4: alert events, one row each time an alert fires */
#define EVENTS_V4_COLS \
	" id INTEGER PRIMARY KEY," \
	" session INTEGER," \
	" ts INTEGER NOT NULL,"		/* capture time of the sample that fired it, ns */ \
	" alert INTEGER NOT NULL,"	/* the alert's id in its console */ \
	" cond TEXT NOT NULL,"		/* the condition as typed */ \
	" value REAL NOT NULL,"		/* measured: bps, percent or per second */ \
	" wall INTEGER"		/* wall clock when it fired, ns */

static const char schema_v4[] =
	"CREATE TABLE events (" EVENTS_V4_COLS ");"
	"CREATE INDEX events_by_ts ON events(ts);";
/* version 5: synchronized counter snapshots and each port's counters in them */
static const char schema_v5[] =
	"CREATE TABLE snapshots ("
	" id INTEGER PRIMARY KEY,"
	" taken INTEGER NOT NULL,"		/* wall clock when asked, ns */
	" target INTEGER NOT NULL,"		/* the common read instant, ns */
	" spread INTEGER NOT NULL,"		/* latest - earliest read, ns */
	" switches INTEGER NOT NULL,"
	" ports INTEGER NOT NULL,"
	" session INTEGER);"			/* capture session running then */
	"CREATE TABLE snapshot_counters ("
	" snapshot INTEGER NOT NULL REFERENCES snapshots(id),"
	" switch TEXT NOT NULL, port TEXT NOT NULL,"
	" read_ts INTEGER NOT NULL,"		/* when the switch read, ns */
	" rx_packets INTEGER NOT NULL, rx_bytes INTEGER NOT NULL, rx_drops INTEGER NOT NULL,"
	" tx_packets INTEGER NOT NULL, tx_bytes INTEGER NOT NULL, tx_drops INTEGER NOT NULL,"
	" backlog_bytes INTEGER, backlog_packets INTEGER,"	/* NULL: no queueing qdisc */
	" PRIMARY KEY (snapshot, switch, port));";
/* version 6: decoded BGP, RoCEv2 and PAUSE/PFC messages, one row each */
#define CONTROL_V6_COLS \
	" id INTEGER PRIMARY KEY," \
	" session INTEGER," \
	" ts INTEGER NOT NULL,"		/* capture time, ns */ \
	" switch TEXT,"			/* mirroring switch or its address; NULL: plain SPAN */ \
	" proto TEXT NOT NULL,"		/* 'bgp', 'roce', 'pfc' */ \
	" kind TEXT NOT NULL,"		/* BGP type, RoCEv2 opcode name, 'pause' or 'pfc' */ \
	" src TEXT, dst TEXT, sport INTEGER, dport INTEGER,"	/* NULL for MAC control */ \
	" detail TEXT NOT NULL"	/* the message's fields, as 'control' prints them */

static const char schema_v6[] =
	"CREATE TABLE control (" CONTROL_V6_COLS ");"
	"CREATE INDEX control_by_ts ON control(ts);";

/* version 7: a flow's row is found by its rowid, which the console keeps
 * (one console writes a history, and its flow table holds each flow of a
 * session once); the unique index on the text of the 5-tuple, searched by
 * an upsert for every flow written, cost most of what the default history
 * policy cost at ingest. The table is rebuilt without it. */
/* the flows table's columns, as version 7 made them and version 15 again */
#define FLOWS_V7_COLS \
	" session INTEGER NOT NULL REFERENCES sessions(id)," \
	" src TEXT NOT NULL, dst TEXT NOT NULL, proto INTEGER NOT NULL," \
	" sport INTEGER NOT NULL, dport INTEGER NOT NULL," \
	" first_ts INTEGER, last_ts INTEGER," \
	" packets INTEGER NOT NULL, bytes INTEGER NOT NULL," \
	" syn INTEGER NOT NULL, fin INTEGER NOT NULL, rst INTEGER NOT NULL," \
	" dropped INTEGER NOT NULL, looped INTEGER NOT NULL);"

static const char schema_v7[] =
	"CREATE TABLE flows_v7 (" FLOWS_V7_COLS
	"INSERT INTO flows_v7 SELECT session, src, dst, proto, sport, dport, first_ts, last_ts,"
	" packets, bytes, syn, fin, rst, dropped, looped FROM flows ORDER BY rowid;"
	"DROP TABLE flows;"
	"ALTER TABLE flows_v7 RENAME TO flows;"
	"CREATE INDEX flows_by_session ON flows(session);";

/* version 8: a trace's hops are one column of its row, a JSON array with
 * one array per hop, [switch, addr, ts - first_ts, hw_ts, ttl, tos,
 * session], and 'hops' is a view that spreads them into rows as before.
 * With 'history all', a row per hop (five per trace, each also in the
 * primary key's index) was most of what storing cost; the index on outcome
 * (unused by the console, an insert into the middle of a large index for
 * every trace) goes too. */
static const char schema_v8[] =
	"ALTER TABLE traces ADD COLUMN hop_list TEXT;";

/* filled a range of trace ids at a time (?1 < id <= ?2), with progress */
static const char schema_v8_fill[] =
	"UPDATE traces SET hop_list = (SELECT json_group_array(json_array(switch, addr,"
	" ts - coalesce(traces.first_ts, 0), hw_ts, ttl, tos, session))"
	" FROM (SELECT * FROM hops WHERE hops.trace = traces.id ORDER BY idx))"
	" WHERE id > ?1 AND id <= ?2";

static const char schema_v8_after[] =
	"DROP TABLE hops;"
	"DROP INDEX traces_by_outcome;"
	"CREATE VIEW hops(trace, idx, switch, addr, ts, hw_ts, ttl, tos, session) AS"
	" SELECT t.id, h.key, json_extract(h.value, '$[0]'), json_extract(h.value, '$[1]'),"
	" coalesce(t.first_ts, 0) + json_extract(h.value, '$[2]'), json_extract(h.value, '$[3]'),"
	" json_extract(h.value, '$[4]'), json_extract(h.value, '$[5]'),"
	" json_extract(h.value, '$[6]') FROM traces t, json_each(t.hop_list) h;";

/* version 9: a hop names its mirror source, the (switch, address) pair it
 * was seen from, by its row in mirror_sources, and its switch timestamp
 * from the trace's earliest (first_hw_ts): [source, ts - first_ts,
 * hw_ts - first_hw_ts, ttl, tos, session]. With 'history all', every byte
 * of a trace is written three times (to the log, out of it, into the
 * file); the switch name, the address and a full timestamp were more than
 * a third of a row. The index on (session, trace_no) goes too: nothing of
 * the console's reads by it, and keeping it was a tenth of what storing a
 * trace cost. A session's traces have consecutive ids (one console writes
 * a file at a time, a session after another). */
#define MIRROR_SOURCES_V9 \
	"CREATE TABLE mirror_sources (" \
	" id INTEGER PRIMARY KEY," \
	" switch TEXT,"				/* topology name, NULL when unknown */ \
	" addr TEXT NOT NULL);"			/* mirror source address */ \
	"CREATE INDEX mirror_sources_by_addr ON mirror_sources(addr);"

static const char schema_v9[] =
	MIRROR_SOURCES_V9
	"ALTER TABLE traces ADD COLUMN first_hw_ts INTEGER;"
	"DROP INDEX traces_by_session;"
	"DROP VIEW hops;";

static const char schema_v9_fill[] =
	"INSERT INTO mirror_sources(switch, addr)"
	" SELECT DISTINCT json_extract(h.value, '$[0]'), json_extract(h.value, '$[1]')"
	" FROM traces t, json_each(t.hop_list) h WHERE t.id > ?1 AND t.id <= ?2"
	" AND NOT EXISTS (SELECT 1 FROM mirror_sources m WHERE m.addr = json_extract(h.value, '$[1]')"
	" AND m.switch IS json_extract(h.value, '$[0]'));"
	"UPDATE traces SET first_hw_ts ="
	" (SELECT min(json_extract(h.value, '$[3]')) FROM json_each(traces.hop_list) h)"
	" WHERE id > ?1 AND id <= ?2;"
	"UPDATE traces SET hop_list = (SELECT json_group_array(json_array("
	"  (SELECT m.id FROM mirror_sources m WHERE m.addr = json_extract(h.value, '$[1]')"
	"   AND m.switch IS json_extract(h.value, '$[0]')),"
	"  json_extract(h.value, '$[2]'), json_extract(h.value, '$[3]') - traces.first_hw_ts,"
	"  json_extract(h.value, '$[4]'), json_extract(h.value, '$[5]'), json_extract(h.value, '$[6]')))"
	"  FROM (SELECT value FROM json_each(traces.hop_list) ORDER BY key) h)"
	" WHERE id > ?1 AND id <= ?2";

static const char schema_v9_after[] =
	"CREATE VIEW hops(trace, idx, switch, addr, ts, hw_ts, ttl, tos, session) AS"
	" SELECT t.id, h.key, m.switch, m.addr,"
	" coalesce(t.first_ts, 0) + json_extract(h.value, '$[1]'),"
	" t.first_hw_ts + json_extract(h.value, '$[2]'),"
	" json_extract(h.value, '$[3]'), json_extract(h.value, '$[4]'),"
	" json_extract(h.value, '$[5]') FROM traces t, json_each(t.hop_list) h"
	" LEFT JOIN mirror_sources m ON m.id = json_extract(h.value, '$[0]');";

/* the history knows what it has read: a session that read a capture file to
 * its end keeps the file's identity (size, hashes of its head and its
 * tail), so the same file read again adds nothing */
static const char schema_v10[] =
	"ALTER TABLE sessions ADD COLUMN input TEXT;"
	"CREATE INDEX sessions_by_input ON sessions(input) WHERE input IS NOT NULL;";

/* version 11: the history's own settings (its retention), one row each,
 * so every console and analyzer writing the file keeps the same policy;
 * and the session index that retention looks events and control up by */
static const char schema_v11[] =
	"CREATE TABLE settings ("
	" name TEXT PRIMARY KEY,"
	" value INTEGER NOT NULL);"
	"CREATE INDEX events_by_session ON events(session);"
	"CREATE INDEX control_by_session ON control(session);";

/* version 12: many analyzers write one history, each row saying which
 * (its name: 'set analyzer', --name, else the host name; NULL in rows
 * written before), and each analyzer's health is one row of analyzers,
 * written again every few seconds (its heartbeat) */
#define ANALYZERS_V12_COLS \
	" name TEXT PRIMARY KEY," \
	" session INTEGER,"			/* its running capture's, NULL: none */ \
	" seen INTEGER NOT NULL,"		/* wall clock of the heartbeat, ns */ \
	" packets INTEGER NOT NULL,"		/* read by its capture */ \
	" kernel_drops INTEGER NOT NULL," \
	" rate REAL NOT NULL,"			/* packets a second since the last one */ \
	" queued INTEGER NOT NULL,"		/* rows not yet written: its history lag */ \
	" lag INTEGER,"				/* age of the oldest of them, ns */ \
	" lost INTEGER NOT NULL"		/* rows it could not store */
#define ANALYZERS_V12 "CREATE TABLE analyzers (" ANALYZERS_V12_COLS ");"
#define HOPS_V12_VIEW \
	"CREATE VIEW hops(trace, idx, switch, addr, ts, hw_ts, ttl, tos, session, analyzer) AS" \
	" SELECT t.id, h.key, m.switch, m.addr," \
	" coalesce(t.first_ts, 0) + json_extract(h.value, '$[1]')," \
	" t.first_hw_ts + json_extract(h.value, '$[2]')," \
	" json_extract(h.value, '$[3]'), json_extract(h.value, '$[4]')," \
	" json_extract(h.value, '$[5]'), t.analyzer FROM traces t, json_each(t.hop_list) h" \
	" LEFT JOIN mirror_sources m ON m.id = json_extract(h.value, '$[0]');"

static const char schema_v12[] =
	"ALTER TABLE sessions ADD COLUMN analyzer TEXT;"
	"ALTER TABLE traces ADD COLUMN analyzer TEXT;"
	"ALTER TABLE flows ADD COLUMN analyzer TEXT;"
	"ALTER TABLE probes ADD COLUMN analyzer TEXT;"
	"ALTER TABLE events ADD COLUMN analyzer TEXT;"
	"ALTER TABLE control ADD COLUMN analyzer TEXT;"
	ANALYZERS_V12
	"DROP VIEW hops;"
	HOPS_V12_VIEW;

/* version 13: PostgreSQL's traces are kept a day a table (store_pg.c);
 * nothing changes here, where traces keep no index so that they are
 * written fast (version 9) */
static const char schema_v13[] = "";

/* version 14: PostgreSQL's traces of a session are found by a block range
 * index (store_pg.c); nothing changes here either */
static const char schema_v14[] = "";

/* version 15: an analyzer writes a session, and the session's row names
 * it: a flow's row no longer does (a query joins sessions for it). With
 * the default history, SQLite's work of storing the name again in every
 * flow row was most of what the history cost at ingest over not keeping
 * one. Probes are numbered by each analyzer on its own (from its clock and
 * process id), so a probe is known by its analyzer and its number: the
 * key of probes and of probe_hops is (analyzer, probe_id, seq[, idx]),
 * '' the analyzer of a probe written without a name. The three tables are
 * made anew, their rows kept aside in temporary tables meanwhile: an ALTER
 * TABLE reads and checks the whole schema again, which made this step,
 * with its renames, cost more than all the others together in making a
 * new file. */
#define FLOWS_PROBES_V15 \
	"CREATE TABLE flows (" FLOWS_V7_COLS \
	"CREATE INDEX flows_by_session ON flows(session);" \
	"CREATE TABLE probes (" \
	" probe_id INTEGER NOT NULL, seq INTEGER NOT NULL, session INTEGER," \
	" kind TEXT NOT NULL, spec TEXT, src TEXT, dst TEXT, proto INTEGER, sport INTEGER," \
	" dport INTEGER, ttl INTEGER, sent INTEGER NOT NULL, outcome TEXT NOT NULL," \
	" lost_after TEXT, rtt INTEGER," \
	" analyzer TEXT NOT NULL DEFAULT ''," \
	" PRIMARY KEY (analyzer, probe_id, seq));" \
	"CREATE TABLE probe_hops (" \
	" probe_id INTEGER NOT NULL, seq INTEGER NOT NULL, idx INTEGER NOT NULL," \
	" switch TEXT, addr TEXT, ts INTEGER, hw_ts INTEGER, ttl INTEGER," \
	" analyzer TEXT NOT NULL DEFAULT ''," \
	" PRIMARY KEY (analyzer, probe_id, seq, idx));"

static const char schema_v15[] =
	"CREATE TEMP TABLE flows_v14 AS SELECT rowid AS r, * FROM flows;"
	"CREATE TEMP TABLE probes_v14 AS SELECT * FROM probes;"
	"CREATE TEMP TABLE probe_hops_v14 AS SELECT h.*, coalesce((SELECT p.analyzer"
	" FROM probes p WHERE p.probe_id = h.probe_id AND p.seq = h.seq), '') AS analyzer"
	" FROM probe_hops h;"
	"DROP TABLE flows;"
	"DROP TABLE probes;"
	"DROP TABLE probe_hops;"
	FLOWS_PROBES_V15
	"INSERT INTO flows(rowid, session, src, dst, proto, sport, dport, first_ts, last_ts,"
	" packets, bytes, syn, fin, rst, dropped, looped) SELECT r, session, src, dst, proto,"
	" sport, dport, first_ts, last_ts, packets, bytes, syn, fin, rst, dropped, looped"
	" FROM temp.flows_v14 ORDER BY r;"
	"INSERT INTO probes SELECT probe_id, seq, session, kind, spec, src, dst, proto, sport,"
	" dport, ttl, sent, outcome, lost_after, rtt, coalesce(analyzer, '') FROM temp.probes_v14;"
	"INSERT INTO probe_hops SELECT * FROM temp.probe_hops_v14;"
	"DROP TABLE temp.flows_v14;"
	"DROP TABLE temp.probes_v14;"
	"DROP TABLE temp.probe_hops_v14;";

/* version 16: PostgreSQL's trace ids are taken by the writer a block at
 * a time (store_pg.c); nothing changes here */
static const char schema_v16[] = "";

/* version 17: an analyzer's heartbeat says the first copy's time of the
 * newest trace it stored (NULL: none yet), which a fabric view asks for
 * where it read every trace's (a scan of them all each second), and the
 * history it keeps (default, all or off: which of its traces the view can
 * have; NULL, not told). A heartbeat written before takes what its
 * analyzer's traces say. */
#define ANALYZERS_V17_COLS ", newest INTEGER, history TEXT"
static const char schema_v17[] =
	"ALTER TABLE analyzers ADD COLUMN newest INTEGER;"
	"ALTER TABLE analyzers ADD COLUMN history TEXT;"
	"UPDATE analyzers SET newest = (SELECT max(first_ts) FROM traces t"
	" WHERE t.analyzer = analyzers.name);";

/* version 18: PostgreSQL finds the newest traces by their time, through
 * an index (store_pg.c); nothing changes here, where traces keep no index
 * so that they are written fast (version 9) */
static const char schema_v18[] = "";

/* A new file (no tables yet) is made at the latest version at once, as
 * the migrations would leave it (the same tables, columns in the same
 * order, indexes and view; test_store checks): each of their ALTER TABLEs
 * reads and checks the whole schema again, and going through them all
 * cost more than a capture of 50,000 packets wrote with the default
 * history. The statements that are each a version's whole step are run
 * as they are after this. */
static const char schema_new[] =
	"CREATE TABLE sessions (" SESSIONS_V1_COLS ", input TEXT, analyzer TEXT);"
	"CREATE INDEX sessions_by_input ON sessions(input) WHERE input IS NOT NULL;"
	"CREATE TABLE traces (" TRACES_V1_COLS ", hop_list TEXT, first_hw_ts INTEGER,"
	" analyzer TEXT);"
	"CREATE TABLE events (" EVENTS_V4_COLS ", analyzer TEXT);"
	"CREATE INDEX events_by_ts ON events(ts);"
	"CREATE TABLE control (" CONTROL_V6_COLS ", analyzer TEXT);"
	"CREATE INDEX control_by_ts ON control(ts);"
	MIRROR_SOURCES_V9
	"CREATE TABLE analyzers (" ANALYZERS_V12_COLS ANALYZERS_V17_COLS ");"
	HOPS_V12_VIEW
	FLOWS_PROBES_V15;

static const char *const schema_new_steps[] = { schema_new, schema_v3, schema_v5, schema_v11 };

/* migrations[i] takes the schema from version i to i + 1: its sql, then
 * its fill over every trace (if any), then its after (if any) */
static const struct migration {
	const char *sql, *fill, *after;
} migrations[] = {
	{ schema_v1, NULL, NULL }, { schema_v2, NULL, NULL }, { schema_v3, NULL, NULL },
	{ schema_v4, NULL, NULL }, { schema_v5, NULL, NULL }, { schema_v6, NULL, NULL },
	{ schema_v7, NULL, NULL }, { schema_v8, schema_v8_fill, schema_v8_after },
	{ schema_v9, schema_v9_fill, schema_v9_after }, { schema_v10, NULL, NULL },
	{ schema_v11, NULL, NULL }, { schema_v12, NULL, NULL }, { schema_v13, NULL, NULL },
	{ schema_v14, NULL, NULL }, { schema_v15, NULL, NULL }, { schema_v16, NULL, NULL },
	{ schema_v17, NULL, NULL }, { schema_v18, NULL, NULL },
};

#define FILL_IDS 65536		/* trace ids per step of a fill */
#define FILL_STMTS 4		/* statements in a fill, at most */
#define FILL_REPORT_NS HS_NS_PER_SEC	/* progress at most this often */

_Static_assert(HS_ARRAY_SIZE(migrations) == HS_STORE_SCHEMA,
	       "one migration per schema version");

#define TRACE_COLS 22
#define FLOW_COLS 15
#define BATCH_BITS 7
#define BATCH_ROWS (1u << (BATCH_BITS - 1))	/* flow rows per INSERT, 64 */
#define TRACE_BATCH 256		/* trace rows per INSERT */

/* The log is copied into the file (a checkpoint) once it holds CKPT_PAGES
 * pages, 64 MiB, not every 4 MiB: each checkpoint syncs, and writes once
 * the pages that every commit rewrites (the right edge of each table);
 * with 'history all' SQLite's default took a quarter of the run. A live
 * capture's writer thread takes it on a connection of its own after it
 * has let go of the history (hs_store_checkpoint_due()): taken by the
 * commit that crossed the mark, it copied and synced 64 MiB while the
 * console's next answer waited for the history. */
#define CKPT_PAGES 16384

struct hs_store_ckpt {
	atomic_int refs;	/* the store's, and a thread's about to run it */
	pthread_mutex_t mu;	/* one checkpoint at a time on db */
	sqlite3 *db;
};

struct sq_store {
	struct hs_store base;	/* first: the handle store.h's callers hold */
	sqlite3 *db;
	/* the connection checkpoints are taken on apart, opened with the
	 * history (a console that drops its privileges may not reach the
	 * file's folder later); NULL where it could not be */
	struct hs_store_ckpt *ckpt;
	bool apart, ckpt_due;
	int ckpt_pages;		/* CKPT_PAGES (HOPSCOPE_TEST_CKPT_PAGES) */
	char *path;
	int lock_fd;		/* flock()ed while open: one console per file */
	sqlite3_stmt *stmt[S__COUNT];
	/* Trace rows go in TRACE_BATCH at a time, one INSERT that takes them
	 * all (flush_traces()): with 'history all', stepping a statement per
	 * trace cost more than the rows. Queued rows are inserted before a
	 * commit and before the history is read. */
	struct hs_store_row trows[TRACE_BATCH];
	unsigned ntrows;
	/* New flows likewise (most flows are written once), INSERTs of up to
	 * BATCH_ROWS rows: flow_stmt[i] inserts 1 << i rows, so fewer rows go
	 * in as few INSERTs as their number has bits, and a statement of every
	 * size up to BATCH_ROWS is never kept. Their values are bound when
	 * the INSERT runs, and their rows learnt from it: a queued flow's row
	 * is HS_FLOW_ROW_QUEUED until then. */
	struct flow_row {
		int64_t session;
		struct hs_flow *f;
	} frows[BATCH_ROWS];
	unsigned nfrows;
	sqlite3_stmt *flow_stmt[BATCH_BITS];
	/* The mirror sources (rows of mirror_sources) hops were written with,
	 * found by address: a hop finds its row here, not by asking SQLite.
	 * Emptied when a batch is rolled back (it may have added some). */
	struct hs_sources src;
	bool in_tx;
	bool batch_lost;	/* SQLite rolled the batch back: the next commit fails */
	size_t pending;
	uint64_t written, lost;
	/* the first copy's time of the newest trace committed, and of those
	 * in the batch (0: none): the heartbeat's newest */
	uint64_t newest, newest_batch;
	char errmsg[512];
};

static int set_err(struct sq_store *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int set_err(struct sq_store *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->errmsg, sizeof(st->errmsg), fmt, ap);
	va_end(ap);
	return -1;
}

/* SQLite's message, with the system's reason when it had one: "unable to
 * open database file" alone does not say EACCES from EROFS from ENOENT */
static const char *db_why(sqlite3 *db, char *buf, size_t len)
{
	int code = db ? sqlite3_errcode(db) & 0xff : 0;
	int e = code == SQLITE_CANTOPEN || code == SQLITE_IOERR || code == SQLITE_FULL ||
		code == SQLITE_READONLY || code == SQLITE_PERM ? sqlite3_system_errno(db) : 0;

	if (!db)
		snprintf(buf, len, "out of memory");
	else if (e)
		snprintf(buf, len, "%s (%s)", sqlite3_errmsg(db), strerror(e));
	else
		snprintf(buf, len, "%s", sqlite3_errmsg(db));
	return buf;
}

static int db_err(struct sq_store *st, const char *what)
{
	char why[256];

	return set_err(st, "%s '%s': %s", what, st->path, db_why(st->db, why, sizeof(why)));
}

/* what a file that is not a regular one is, for the error that refuses it */
static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a FIFO" :
	       S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* a single integer from a query, -1 on error */
static int query_int(sqlite3 *db, const char *sql, int64_t *out)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);

	if (rc != SQLITE_OK)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* the first bytes say whether this is SQLite at all (an empty file is fine) */
static int check_header(const char *path, char *err, size_t errlen, bool *exists)
{
	static const char magic[16] = "SQLite format 3";
	char buf[16];
	FILE *fp = fopen(path, "rb");

	*exists = false;
	if (!fp) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	*exists = true;
	size_t n = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	if (n == 0)
		return 0;
	if (n < sizeof(buf) || memcmp(buf, magic, sizeof(magic)) != 0) {
		snprintf(err, errlen, "'%s' is not a hopscope history (file is not a database)", path);
		return -1;
	}
	return 0;
}

/* run a migration's fill over every trace, FILL_IDS ids a step, each of
 * its statements in turn, with a notice on how far it got at most once a
 * second */
static int migrate_fill(struct sq_store *st, const char *sql,
			void (*notice)(void *arg, const char *msg), void *arg)
{
	sqlite3_stmt *s[FILL_STMTS] = { NULL };
	int64_t max_id = 0, ntraces = 0;
	uint64_t last = hs_mono_ns();
	int ns = 0, rc = -1;

	if (query_int(st->db, "SELECT coalesce(max(id), 0) FROM traces", &max_id) < 0 ||
	    query_int(st->db, "SELECT count(*) FROM traces", &ntraces) < 0)
		return -1;
	for (const char *tail = sql; *tail; ns++)
		if (ns == FILL_STMTS ||
		    sqlite3_prepare_v2(st->db, tail, -1, &s[ns], &tail) != SQLITE_OK || !s[ns])
			goto out;
	for (int64_t lo = 0; lo < max_id; lo += FILL_IDS) {
		for (int i = 0; i < ns; i++) {
			sqlite3_bind_int64(s[i], 1, lo);
			sqlite3_bind_int64(s[i], 2, lo + FILL_IDS);
			if (sqlite3_step(s[i]) != SQLITE_DONE)
				goto out;
			sqlite3_reset(s[i]);
		}
		if (notice && lo + FILL_IDS < max_id && hs_mono_ns() - last >= FILL_REPORT_NS) {
			char msg[160];

			last = hs_mono_ns();
			snprintf(msg, sizeof(msg), "upgrading history: %d%% of %lld traces",
				 (int)((lo + FILL_IDS) * 100 / max_id), (long long)ntraces);
			notice(arg, msg);
		}
	}
	rc = 0;
out:
	for (int i = 0; i < FILL_STMTS; i++)
		sqlite3_finalize(s[i]);
	return rc;
}

static int migrate(struct sq_store *st, int64_t from,
		   void (*notice)(void *arg, const char *msg), void *arg)
{
	char sql[96];

	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_err(st, "cannot set up");
	/* a signal stops an upgrade (a large one takes a while), which is
	 * rolled back whole */
	sqlite3_progress_handler(st->db, 1000, hs_interrupt_sqlite, NULL);
	for (size_t i = 0; from == 0 && i < HS_ARRAY_SIZE(schema_new_steps); i++)
		if (hs_interrupted() ||
		    sqlite3_exec(st->db, schema_new_steps[i], NULL, NULL, NULL) != SQLITE_OK)
			goto fail;
	for (int64_t v = from ? from : HS_STORE_SCHEMA; v < HS_STORE_SCHEMA; v++) {
		const struct migration *m = &migrations[v];

		if (hs_interrupted() || sqlite3_exec(st->db, m->sql, NULL, NULL, NULL) != SQLITE_OK ||
		    (m->fill && migrate_fill(st, m->fill, notice, arg) < 0) ||
		    (m->after && sqlite3_exec(st->db, m->after, NULL, NULL, NULL) != SQLITE_OK))
			goto fail;
	}
	snprintf(sql, sizeof(sql), "PRAGMA application_id = %d; PRAGMA user_version = %d",
		 HS_STORE_APP_ID, HS_STORE_SCHEMA);
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_progress_handler(st->db, 0, NULL, NULL);
	return 0;
fail:
	if (hs_interrupted())
		set_err(st, "upgrade of '%s' interrupted: the history is left as it was", st->path);
	else
		db_err(st, "cannot set up");
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_progress_handler(st->db, 0, NULL, NULL);
	return -1;
}

/* ---- the queued trace rows, read by SQLite as a table -------------------------
 *
 * With 'history all', binding a row's 22 values cost a third of writing
 * it (each bind takes the statement's mutex and releases the value it
 * replaces), more than SQLite's record and B-tree work. The queued rows are
 * a virtual table instead, QT_TABLE, with the columns of a trace's row but
 * its id: one INSERT ... SELECT takes them all, and SQLite asks for each
 * value as it builds the record, from the row hs_store_row_fill() left. */

enum {
	QT_ANALYZER, QT_SESSION, QT_TRACE_NO, QT_SRC, QT_DST, QT_PROTO, QT_SPORT, QT_DPORT,
	QT_IP_ID, QT_SEQ, QT_TCP_FLAGS, QT_LEN, QT_FIRST_TS, QT_LAST_TS, QT_OUTCOME,
	QT_LAST_SWITCH, QT_EXPECTED_NEXT, QT_NHOPS, QT_FLAGS, QT_PROBE_ID, QT_HOP_LIST,
	QT_FIRST_HW_TS, QT__COUNT
};
_Static_assert(QT__COUNT == TRACE_COLS, "a queued trace has every column of its row");

struct qt_table {
	sqlite3_vtab base;	/* first: what SQLite holds */
	struct sq_store *st;
};

struct qt_cursor {
	sqlite3_vtab_cursor base;	/* first: what SQLite holds */
	unsigned i;
};

static int qt_connect(sqlite3 *db, void *st, int argc, const char *const *argv,
		      sqlite3_vtab **out, char **why)
{
	struct qt_table *t;
	int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(" QT_COLS ")");

	(void)argc;
	(void)argv;
	(void)why;
	if (rc != SQLITE_OK)
		return rc;
	if (!(t = sqlite3_malloc(sizeof(*t))))
		return SQLITE_NOMEM;
	memset(t, 0, sizeof(*t));
	t->st = st;
	*out = &t->base;
	return SQLITE_OK;
}

static int qt_disconnect(sqlite3_vtab *t)
{
	sqlite3_free(t);
	return SQLITE_OK;
}

static int qt_best_index(sqlite3_vtab *t, sqlite3_index_info *info)
{
	(void)t;
	info->estimatedCost = TRACE_BATCH;
	info->estimatedRows = TRACE_BATCH;
	return SQLITE_OK;
}

static int qt_open(sqlite3_vtab *t, sqlite3_vtab_cursor **out)
{
	struct qt_cursor *c = sqlite3_malloc(sizeof(*c));

	(void)t;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int qt_close(sqlite3_vtab_cursor *c)
{
	sqlite3_free(c);
	return SQLITE_OK;
}

static int qt_filter(sqlite3_vtab_cursor *c, int idx, const char *idx_str, int argc,
		     sqlite3_value **argv)
{
	(void)idx;
	(void)idx_str;
	(void)argc;
	(void)argv;
	((struct qt_cursor *)c)->i = 0;
	return SQLITE_OK;
}

static int qt_next(sqlite3_vtab_cursor *c)
{
	((struct qt_cursor *)c)->i++;
	return SQLITE_OK;
}

static struct sq_store *qt_store(sqlite3_vtab_cursor *c)
{
	return ((struct qt_table *)c->pVtab)->st;
}

static int qt_eof(sqlite3_vtab_cursor *c)
{
	return ((struct qt_cursor *)c)->i >= qt_store(c)->ntrows;
}

static int qt_rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *id)
{
	*id = ((struct qt_cursor *)c)->i;
	return SQLITE_OK;
}

static void result_u64(sqlite3_context *cx, uint64_t v)
{
	sqlite3_result_int64(cx, v > INT64_MAX ? INT64_MAX : (sqlite3_int64)v);
}

/* text that outlives the statement's step (SQLITE_STATIC), as the row
 * has it; NULL for none */
static void result_text(sqlite3_context *cx, const char *v)
{
	if (v)
		sqlite3_result_text(cx, v, -1, SQLITE_STATIC);
}

/* the same, NULL when empty too */
static void result_text_or_null(sqlite3_context *cx, const char *v)
{
	result_text(cx, v && v[0] ? v : NULL);
}

static int qt_column(sqlite3_vtab_cursor *c, sqlite3_context *cx, int col)
{
	struct sq_store *st = qt_store(c);
	const struct hs_store_row *r = &st->trows[((struct qt_cursor *)c)->i];

	switch (col) {
	case QT_ANALYZER: result_text(cx, hs_store_an(&st->base)); break;
	case QT_SESSION: sqlite3_result_int64(cx, r->session); break;
	case QT_TRACE_NO: result_u64(cx, r->id); break;
	case QT_SRC: result_text(cx, r->src); break;
	case QT_DST: result_text(cx, r->dst); break;
	case QT_PROTO: sqlite3_result_int(cx, r->proto); break;
	case QT_SPORT: sqlite3_result_int(cx, r->sport); break;
	case QT_DPORT: sqlite3_result_int(cx, r->dport); break;
	case QT_IP_ID: sqlite3_result_int(cx, r->ip_id); break;
	case QT_SEQ: result_u64(cx, r->seq); break;
	case QT_TCP_FLAGS: sqlite3_result_int(cx, r->tcp_flags); break;
	case QT_LEN: result_u64(cx, r->len); break;
	case QT_FIRST_TS:
	case QT_LAST_TS:
		if (r->have_ts)
			result_u64(cx, col == QT_FIRST_TS ? r->first : r->last);
		break;		/* a column given no value is NULL */
	case QT_OUTCOME: result_text(cx, r->outcome); break;
	case QT_LAST_SWITCH: result_text_or_null(cx, r->last_sw); break;
	case QT_EXPECTED_NEXT: result_text_or_null(cx, r->next); break;
	case QT_NHOPS: sqlite3_result_int(cx, r->nhops); break;
	case QT_FLAGS: sqlite3_result_int(cx, r->flags); break;
	case QT_PROBE_ID:
		if (r->have_probe)
			result_u64(cx, r->probe_id);
		break;
	case QT_HOP_LIST: sqlite3_result_text(cx, r->hops, r->hops_len, SQLITE_STATIC); break;
	case QT_FIRST_HW_TS:
		if (r->have_hw)
			result_u64(cx, r->first_hw);
		break;
	default: break;
	}
	return SQLITE_OK;
}

/* eponymous only (no xCreate): it exists in every connection it is made for,
 * and CREATE VIRTUAL TABLE cannot make another */
static const sqlite3_module qt_module = {
	.xConnect = qt_connect,
	.xBestIndex = qt_best_index,
	.xDisconnect = qt_disconnect,
	.xOpen = qt_open,
	.xClose = qt_close,
	.xFilter = qt_filter,
	.xNext = qt_next,
	.xEof = qt_eof,
	.xColumn = qt_column,
	.xRowid = qt_rowid,
};

static void ckpt_put(struct hs_store_ckpt *k)
{
	if (!k || atomic_fetch_sub(&k->refs, 1) != 1)
		return;
	sqlite3_close_v2(k->db);
	pthread_mutex_destroy(&k->mu);
	free(k);
}

/* after each commit: at the mark, the checkpoint is taken now, or marked
 * due for the writer thread */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
	struct sq_store *st = arg;

	if (pages < st->ckpt_pages)
		return SQLITE_OK;
	if (st->apart && st->ckpt)
		st->ckpt_due = true;
	else
		sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	return SQLITE_OK;
}

/* the second connection, beside the store's own: NULL where it cannot
 * be had (a checkpoint is then taken by the commit, as SQLite's own) */
static struct hs_store_ckpt *ckpt_open(const char *path)
{
	struct hs_store_ckpt *k;

	if (strcmp(path, ":memory:") == 0)
		return NULL;
	k = hs_xcalloc(1, sizeof(*k));
	atomic_init(&k->refs, 1);
	pthread_mutex_init(&k->mu, NULL);
	if (sqlite3_open_v2(path, &k->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
		    SQLITE_OK ||
	    /* a read, so that the new connection knows the file is in WAL mode */
	    sqlite3_exec(k->db, "PRAGMA user_version", NULL, NULL, NULL) != SQLITE_OK) {
		ckpt_put(k);
		return NULL;
	}
	return k;
}

void sq_checkpoint_apart(struct sq_store *st, bool apart)
{
	st->apart = apart && st->ckpt;
	st->ckpt_due = false;	/* off: the next commit past the mark takes it */
}

struct hs_store_ckpt *sq_checkpoint_due(struct sq_store *st)
{
	if (!st->apart || !st->ckpt_due)
		return NULL;
	st->ckpt_due = false;
	atomic_fetch_add(&st->ckpt->refs, 1);
	return st->ckpt;
}

void hs_store_checkpoint_run(struct hs_store_ckpt *k)
{
	if (!k)
		return;
	/* PASSIVE: copies what no reader still needs, waiting for nobody;
	 * the writer goes on appending to the log meanwhile */
	pthread_mutex_lock(&k->mu);
	sqlite3_wal_checkpoint_v2(k->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	pthread_mutex_unlock(&k->mu);
	ckpt_put(k);
}

static void store_destroy(struct sq_store *st)
{
	ckpt_put(st->ckpt);
	for (int i = 0; i < S__COUNT; i++)
		sqlite3_finalize(st->stmt[i]);
	for (int i = 0; i < BATCH_BITS; i++)
		sqlite3_finalize(st->flow_stmt[i]);
	sqlite3_close_v2(st->db);
	hs_sources_free(&st->src);
	/* only now: closing another descriptor of the file while SQLite has it
	 * open would drop SQLite's own POSIX locks */
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	free(st->path);
	free(st);
}

struct sq_store *sq_open_notice(const char *path, char *err, size_t errlen,
				      void (*notice)(void *arg, const char *msg), void *arg)
{
	struct sq_store *st;
	bool exists;
	int64_t app_id = 0, version = 0, ntables = 0;
	char why[256];

	if (errlen)
		err[0] = '\0';
	/* a history is one regular file: SQLite would make PATH-journal beside
	 * a device (/dev/null-journal), and opening a FIFO waits for a writer */
	struct stat sb;
	if (strcmp(path, ":memory:") != 0 && stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "'%s' is %s, not a history (a history is one SQLite file)",
			 path, file_kind(sb.st_mode));
		return NULL;
	}
	if (check_header(path, err, errlen, &exists) < 0)
		return NULL;
	/* the side files SQLite makes beside a new file: one that could not be
	 * made as a history leaves none of them behind (a full disk left an
	 * empty PATH-wal), but only those it made */
	static const char *const side[] = { "-wal", "-shm", "-journal" };
	bool side_made[HS_ARRAY_SIZE(side)] = { false };
	for (size_t i = 0; !exists && i < HS_ARRAY_SIZE(side); i++) {
		char f[PATH_MAX + 16];
		snprintf(f, sizeof(f), "%s%s", path, side[i]);
		side_made[i] = lstat(f, &sb) < 0 && errno == ENOENT;
	}
	/* a file we may not write is refused as it is, not opened half read-only */
	if (exists && access(path, W_OK) < 0) {
		snprintf(err, errlen, "cannot write to '%s': %s", path, strerror(errno));
		return NULL;
	}
	st = hs_xcalloc(1, sizeof(*st));
	st->base.engine = HS_ENGINE_SQLITE;
	st->path = hs_xstrdup(path);
	st->lock_fd = -1;
	/* one thread uses the handle: no mutexes */
	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot open '%s': %s", path, db_why(st->db, why, sizeof(why)));
		goto fail;
	}
	/* SQLite lets two writers take turns between batches: a second console
	 * would interleave with the first and make its commits wait or fail */
	if (strcmp(path, ":memory:") != 0) {
		st->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (st->lock_fd < 0) {
			snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
			goto fail;
		}
		if (flock(st->lock_fd, LOCK_EX | LOCK_NB) < 0) {
			if (errno == EWOULDBLOCK)
				snprintf(err, errlen, "'%s' is locked by another writer "
					 "(another hopscope has it open)", path);
			else
				snprintf(err, errlen, "cannot lock '%s': %s", path, strerror(errno));
			goto fail;
		}
	}
	sqlite3_extended_result_codes(st->db, 0);
	sqlite3_busy_timeout(st->db, BUSY_TIMEOUT_MS);
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);

	if (query_int(st->db, "PRAGMA application_id", &app_id) < 0 ||
	    query_int(st->db, "PRAGMA user_version", &version) < 0 ||
	    query_int(st->db, "SELECT count(*) FROM sqlite_master", &ntables) < 0) {
		int code = sqlite3_errcode(st->db);
		if (code == SQLITE_NOTADB)
			snprintf(err, errlen, "'%s' is not a hopscope history (%s)", path,
				 sqlite3_errmsg(st->db));
		else if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
			snprintf(err, errlen, "'%s' is locked by another writer (%s)", path,
				 sqlite3_errmsg(st->db));
		else
			snprintf(err, errlen, "cannot read '%s': %s", path,
				 db_why(st->db, why, sizeof(why)));
		goto fail;
	}
	if (app_id != HS_STORE_APP_ID && (app_id != 0 || ntables != 0)) {
		snprintf(err, errlen,
			 "'%s' is not a hopscope history (application_id 0x%08llx, %lld tables)",
			 path, (unsigned long long)(uint32_t)app_id, (long long)ntables);
		goto fail;
	}
	if (version > HS_STORE_SCHEMA) {
		snprintf(err, errlen,
			 "'%s' is from a newer hopscope (schema version %lld, this one knows %d)",
			 path, (long long)version, HS_STORE_SCHEMA);
		goto fail;
	}
	/* versions name a row of migrations[]: anything else is no history of ours
	 * (0 is a new file, which has no tables yet) */
	if (version < 0 || (version == 0 && ntables != 0)) {
		snprintf(err, errlen, "'%s' has a bad schema version %lld (a hopscope history has "
			 "1 to %d)", path, (long long)version, HS_STORE_SCHEMA);
		goto fail;
	}
	/* a new file gives back the pages retention frees (an older one reuses
	 * them: it stops growing, but does not shrink); set before anything is
	 * written, or it does not take */
	if (ntables == 0 &&
	    sqlite3_exec(st->db, "PRAGMA auto_vacuum = INCREMENTAL", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot set up '%s': %s", path, sqlite3_errmsg(st->db));
		goto fail;
	}
	/* take the write lock once before changing anything: a busy file is refused */
	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "'%s' is locked by another writer (%s)", path,
			 sqlite3_errmsg(st->db));
		goto fail;
	}
	sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);

	if (sqlite3_exec(st->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(st->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK ||
	    /* 8 MiB: a batch larger than the cache goes to the log as it is
	     * written, each page once either way, in pages used again. A
	     * cache that held a whole batch (64 MiB) cost a capture with
	     * 'history all' a page fault and an allocation for each of its
	     * first 16,384 pages, a fifth of its writing; sorts (the sorter
	     * takes the cache's size as its run) went no faster with it. */
	    sqlite3_exec(st->db, "PRAGMA cache_size = -8192", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot set up '%s': %s", path,
			 db_why(st->db, why, sizeof(why)));
		goto fail;
	}
	uint64_t pages;
	const char *env = getenv("HOPSCOPE_TEST_CKPT_PAGES");
	st->ckpt_pages = env && hs_parse_uint(env, CKPT_PAGES, &pages) == 0 && pages > 0
				 ? (int)pages : CKPT_PAGES;
	sqlite3_wal_hook(st->db, wal_hook, st);	/* in place of wal_autocheckpoint */
	if (version > 0 && version < HS_STORE_SCHEMA && notice) {
		char msg[1024];
		snprintf(msg, sizeof(msg), "upgrading history '%s' from schema %lld to %d (a large "
			 "one takes a while; older hopscopes will not open it after)", path,
			 (long long)version, HS_STORE_SCHEMA);
		notice(arg, msg);
	}
	if (version < HS_STORE_SCHEMA && migrate(st, version, notice, arg) < 0) {
		snprintf(err, errlen, "%s", st->errmsg);
		goto fail;
	}
	if (sqlite3_create_module(st->db, QT_TABLE, &qt_module, st) != SQLITE_OK) {
		snprintf(err, errlen, "cannot use '%s': %s", path, db_why(st->db, why, sizeof(why)));
		goto fail;
	}
	for (int i = 0; i < S__COUNT; i++) {
		if (sqlite3_prepare_v3(st->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
				       &st->stmt[i], NULL) != SQLITE_OK) {
			snprintf(err, errlen, "cannot use '%s': %s", path,
				 db_why(st->db, why, sizeof(why)));
			goto fail;
		}
	}
	st->ckpt = ckpt_open(path);
	return st;
fail:
	store_destroy(st);
	if (!exists) {
		unlink(path);
		for (size_t i = 0; i < HS_ARRAY_SIZE(side); i++) {
			char f[PATH_MAX + 16];
			snprintf(f, sizeof(f), "%s%s", path, side[i]);
			if (side_made[i])
				unlink(f);
		}
	}
	return NULL;
}

void sq_close(struct sq_store *st)
{
	if (!st)
		return;
	if (st->in_tx)
		sq_commit(st);
	store_destroy(st);
}

const char *sq_path(const struct sq_store *st)
{
	return st->path;
}

static int flush_rows(struct sq_store *st);

sqlite3 *sq_db(struct sq_store *st)
{
	flush_rows(st);	/* a reader sees every row written so far */
	return st->db;
}

const char *sq_errmsg(struct sq_store *st)
{
	return st->errmsg;
}

/* a failed write may have made SQLite roll the whole batch back: its rows
 * are lost, those still queued with them */
static void check_rollback(struct sq_store *st)
{
	if (st->in_tx && sqlite3_get_autocommit(st->db)) {
		st->in_tx = false;
		st->batch_lost = true;
		st->lost += st->pending;
		st->pending = 0;
		st->newest_batch = 0;
		st->ntrows = 0;
		for (unsigned j = 0; j < st->nfrows; j++)
			st->frows[j].f->row = 0;	/* its next write inserts it */
		st->nfrows = 0;
		hs_sources_clear(&st->src);
	}
}

static int begin(struct sq_store *st)
{
	if (st->in_tx)
		return 0;
	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_err(st, "cannot write to");
	st->in_tx = true;
	return 0;
}

/* step a cached statement to completion and reset it */
static int run(struct sq_store *st, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	if (rc != SQLITE_DONE)
		db_err(st, "cannot write to");
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE) {
		check_rollback(st);
		return -1;
	}
	return 0;
}

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

static void bind_u64(sqlite3_stmt *s, int i, uint64_t v)
{
	sqlite3_bind_int64(s, i, v > INT64_MAX ? INT64_MAX : (sqlite3_int64)v);
}

/* The per-trace, per-hop and per-flow writes: every parameter is bound for
 * every row (NULL where absent), so the statement's bindings need no
 * clearing, and text is bound without a copy (SQLITE_STATIC): each buffer
 * outlives the step, and the parameter is bound again before the next. */
static int run_bound(struct sq_store *st, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	if (rc != SQLITE_DONE)
		db_err(st, "cannot write to");
	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		check_rollback(st);
		return -1;
	}
	return 0;
}

static void bind_static(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

int64_t sq_session_begin(struct sq_store *st, const char *source, const char *filter,
			       uint64_t wall_ns)
{
	sqlite3_stmt *s = st->stmt[S_SESSION_BEGIN];

	if (begin(st) < 0)
		return -1;
	bind_u64(s, 1, wall_ns);
	bind_text(s, 2, source);
	bind_text(s, 3, filter);
	bind_text(s, 4, hs_store_an(&st->base));
	if (run(st, s) < 0)
		return -1;
	int64_t id = sqlite3_last_insert_rowid(st->db);
	st->pending++;
	if (sq_commit(st) < 0)
		return -1;
	return id;
}

int sq_session_end(struct sq_store *st, int64_t session,
			 const struct hs_session_stats *stats, uint64_t wall_ns)
{
	sqlite3_stmt *s = st->stmt[S_SESSION_END];

	if (begin(st) < 0)
		return -1;
	sqlite3_bind_int64(s, 1, session);
	bind_u64(s, 2, wall_ns);
	bind_u64(s, 3, stats->packets);
	bind_u64(s, 4, stats->bytes);
	bind_u64(s, 5, stats->decode_errors);
	bind_u64(s, 6, stats->kernel_drops);
	bind_u64(s, 7, stats->traces);
	bind_text(s, 8, stats->input);
	if (run(st, s) < 0)
		return -1;
	st->pending++;
	return sq_commit(st) < 0 ? -1 : 0;
}

int64_t sq_input_session(struct sq_store *st, const char *input)
{
	sqlite3_stmt *s;
	int64_t id = 0;
	int rc;

	if (sqlite3_prepare_v2(st->db, "SELECT min(id) FROM sessions WHERE input = ?1", -1, &s,
			       NULL) != SQLITE_OK)
		return db_err(st, "cannot read sessions");
	sqlite3_bind_text(s, 1, input, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		id = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? id : db_err(st, "cannot read sessions");
}

/* the row of mirror_sources for a hop seen from address a of the switch
 * named name (NULL: unknown), added if there is none; -1 on error (the
 * batch may be lost) */
static int64_t source_id(struct sq_store *st, const struct hs_addr *a, const char *name)
{
	char text[HS_ADDRSTRLEN];
	sqlite3_stmt *s;
	int64_t id = hs_sources_get(&st->src, a, name);
	int rc;

	if (id)
		return id;
	hs_addr_str(a, text, sizeof(text));
	s = st->stmt[S_SOURCE_FIND];
	bind_static(s, 1, text);
	bind_static(s, 2, name);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		id = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		db_err(st, "cannot read");
		return -1;
	}
	if (!id) {
		s = st->stmt[S_SOURCE_ADD];
		bind_static(s, 1, text);
		bind_static(s, 2, name);
		if (run(st, s) < 0)
			return -1;
		id = sqlite3_last_insert_rowid(st->db);
	}
	hs_sources_put(&st->src, a, name, id);
	return id;
}

/* "INSERT INTO table(cols) VALUES " and n rows of ncols columns (n a power
 * of two), prepared once for each n and kept in cache[log2 n]. With shared,
 * the first column, the same in every row (the analyzer), is parameter 1
 * of every row, bound once per INSERT, and row j's other columns are
 * parameters 2 + j * (ncols - 1) on; without, row j's columns are
 * parameters 1 + j * ncols on (a bare '?' numbers one past the largest
 * before it). */
static sqlite3_stmt *batch_stmt(struct sq_store *st, sqlite3_stmt **cache, const char *head,
				unsigned ncols, bool shared, unsigned n)
{
	size_t hlen = strlen(head), len = hlen, row = 2 * ncols + 2;
	sqlite3_stmt **kept = &cache[__builtin_ctz(n)];
	char *sql;

	if (*kept)
		return *kept;
	sql = hs_xcalloc(1, hlen + n * (row + 1) + 1);
	memcpy(sql, head, hlen);
	for (unsigned i = 0; i < n; i++) {
		if (i)
			sql[len++] = ',';
		memcpy(sql + len, shared ? "(?1" : "(?", shared ? 3 : 2);
		len += shared ? 3 : 2;
		for (unsigned c = 1; c < ncols; c++) {
			sql[len++] = ',';
			sql[len++] = '?';
		}
		sql[len++] = ')';
	}
	sql[len] = '\0';
	if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, kept, NULL) !=
	    SQLITE_OK) {
		db_err(st, "cannot write to");
		*kept = NULL;
	}
	free(sql);
	return *kept;
}

/* the rows of the next INSERT of n queued: the most a statement takes */
static unsigned batch_take(unsigned n)
{
	return 1u << (31 - __builtin_clz(n));
}

/* queued rows that cannot be inserted are lost with the rest of the batch */
static void drop_batch(struct sq_store *st)
{
	if (st->in_tx) {
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		check_rollback(st);
	}
}

/* insert the queued trace rows. On failure they are lost with the rest of
 * the batch, which is rolled back and reported by the next commit. */
static int flush_traces(struct sq_store *st)
{
	sqlite3_stmt *s = st->stmt[S_TRACES_QUEUED];
	int rc = 0;

	if (!st->ntrows)
		return 0;
	if (run_bound(st, s) < 0) {
		drop_batch(st);
		rc = -1;
	}
	st->ntrows = 0;
	return rc;
}

static int64_t source_of(void *arg, const struct hs_addr *a, const char *name)
{
	return source_id(arg, a, name);
}

int sq_trace(struct sq_store *st, int64_t session, const struct hs_trace *t,
	     const struct hs_topo *topo)
{
	if (begin(st) < 0)
		return -1;
	if (hs_store_row_fill(&st->trows[st->ntrows], session, t, topo, &st->src, source_of,
			      st) < 0)
		return -1;
	const struct hs_store_row *r = &st->trows[st->ntrows];
	if (r->have_ts && r->first > st->newest_batch)
		st->newest_batch = r->first;
	st->pending++;
	if (++st->ntrows == TRACE_BATCH)
		flush_traces(st);	/* a failure is the batch's, reported by its commit */
	return 0;
}

static sqlite3_stmt *flow_stmt(struct sq_store *st, unsigned n)
{
	return batch_stmt(st, st->flow_stmt,
			  "INSERT INTO flows(session, src, dst, proto, sport, dport,"
			  " first_ts, last_ts, packets, bytes, syn, fin, rst, dropped, looped)"
			  " VALUES ",
			  FLOW_COLS, false, n);
}

/* a flow's values, FLOW_COLS of them from parameter b + 1 on */
static void bind_flow(sqlite3_stmt *s, int b, int64_t session, const struct hs_flow *f,
		      char *src, char *dst)
{
	sqlite3_bind_int64(s, b + 1, session);
	bind_static(s, b + 2, hs_addr_str(&f->key.src, src, HS_ADDRSTRLEN));
	bind_static(s, b + 3, hs_addr_str(&f->key.dst, dst, HS_ADDRSTRLEN));
	sqlite3_bind_int(s, b + 4, f->key.proto);
	sqlite3_bind_int(s, b + 5, f->key.sport);
	sqlite3_bind_int(s, b + 6, f->key.dport);
	bind_u64(s, b + 7, f->first_ns);
	bind_u64(s, b + 8, f->last_ns);
	bind_u64(s, b + 9, f->packets);
	bind_u64(s, b + 10, f->bytes);
	sqlite3_bind_int64(s, b + 11, f->syn);
	sqlite3_bind_int64(s, b + 12, f->fin);
	sqlite3_bind_int64(s, b + 13, f->rst);
	sqlite3_bind_int64(s, b + 14, f->dropped);
	sqlite3_bind_int64(s, b + 15, f->looped);
}

/* Insert the queued flows, with the values they have now, and give each its
 * row. SQLite numbers the rows of one INSERT one after another (each gets
 * the largest rowid + 1), so the last row's rowid tells them all; a row
 * ever guessed wrong is never overwritten (the update checks the key). On
 * failure the flows get no row (their next write inserts them) and are lost
 * with the rest of the batch. */
static int flush_flows(struct sq_store *st)
{
	char src[BATCH_ROWS][HS_ADDRSTRLEN], dst[BATCH_ROWS][HS_ADDRSTRLEN];
	unsigned n = st->nfrows, k;

	for (unsigned done = 0; done < n; done += k) {
		const struct flow_row *fr = &st->frows[done];
		sqlite3_stmt *s = flow_stmt(st, k = batch_take(n - done));

		if (!s)
			goto lost;
		for (unsigned j = 0; j < k; j++)
			bind_flow(s, (int)j * FLOW_COLS, fr[j].session, fr[j].f, src[j], dst[j]);
		if (run_bound(st, s) < 0)
			goto lost;
		int64_t last = sqlite3_last_insert_rowid(st->db);
		for (unsigned j = 0; j < k; j++)
			fr[j].f->row = last - (int64_t)(k - 1 - j);
	}
	st->nfrows = 0;
	return 0;
lost:
	drop_batch(st);		/* the rollback takes the queued flows' rows back */
	return -1;
}

static int flush_rows(struct sq_store *st)
{
	int rc = flush_traces(st);

	return flush_flows(st) < 0 ? -1 : rc;
}

int sq_flow(struct sq_store *st, int64_t session, struct hs_flow *f)
{
	char src[HS_ADDRSTRLEN], dst[HS_ADDRSTRLEN];
	sqlite3_stmt *s;

	if (begin(st) < 0)
		return -1;
	if (f->row == HS_FLOW_ROW_QUEUED) {
		st->pending++;	/* its INSERT, still to run, takes these values */
		return 0;
	}
	if (f->row > 0) {
		s = st->stmt[S_FLOW_UPDATE];
		bind_flow(s, 0, session, f, src, dst);
		sqlite3_bind_int64(s, 16, f->row);
		if (run_bound(st, s) < 0)
			return -1;
		if (sqlite3_changes(st->db) == 1) {
			st->pending++;
			return 0;
		}
	}
	st->frows[st->nfrows].session = session;
	st->frows[st->nfrows].f = f;
	f->row = HS_FLOW_ROW_QUEUED;
	st->pending++;
	if (++st->nfrows == BATCH_ROWS)
		flush_flows(st);	/* a failure is the batch's, reported by its commit */
	return 0;
}

int sq_control(struct sq_store *st, int64_t session, uint64_t ts_ns, const char *sw,
		     const char *proto, const char *kind, const struct hs_flowkey *key,
		     const char *detail)
{
	sqlite3_stmt *s = st->stmt[S_CONTROL];
	char src[HS_ADDRSTRLEN], dst[HS_ADDRSTRLEN];
	bool ep = key && key->src.af;

	if (begin(st) < 0)
		return -1;
	sqlite3_bind_int64(s, 1, session);
	bind_u64(s, 2, ts_ns);
	bind_static(s, 3, sw);
	bind_static(s, 4, proto);
	bind_static(s, 5, kind);
	bind_static(s, 6, ep ? hs_addr_str(&key->src, src, sizeof(src)) : NULL);
	bind_static(s, 7, ep ? hs_addr_str(&key->dst, dst, sizeof(dst)) : NULL);
	if (ep) {
		sqlite3_bind_int(s, 8, key->sport);
		sqlite3_bind_int(s, 9, key->dport);
	} else {
		sqlite3_bind_null(s, 8);
		sqlite3_bind_null(s, 9);
	}
	bind_static(s, 10, detail);
	bind_static(s, 11, hs_store_an(&st->base));
	if (run_bound(st, s) < 0)
		return -1;
	st->pending++;
	return 0;
}

int sq_commit(struct sq_store *st)
{
	/* a batch SQLite rolled back is reported once, by the commit that lost it */
	bool lost = st->batch_lost;

	if (flush_rows(st) < 0)
		lost = true;
	st->batch_lost = false;
	if (!st->in_tx)
		return lost ? -1 : 0;
	if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		/* disk full, I/O error: the batch is dropped, the next one starts afresh */
		db_err(st, "cannot commit to");
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		st->in_tx = false;
		st->lost += st->pending;
		st->pending = 0;
		st->newest_batch = 0;
		return -1;
	}
	st->in_tx = false;
	if (st->newest_batch > st->newest)
		st->newest = st->newest_batch;
	st->newest_batch = 0;
	if (lost)
		return -1;
	size_t n = st->pending;
	st->written += n;
	st->pending = 0;
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

int sq_begin(struct sq_store *st, bool wait)
{
	if (wait || st->in_tx)
		return begin(st);
	sqlite3_busy_timeout(st->db, 0);
	int rc = begin(st);
	sqlite3_busy_timeout(st->db, BUSY_TIMEOUT_MS);
	return rc;
}

size_t sq_pending(const struct sq_store *st)
{
	return st->pending;
}

uint64_t sq_written(const struct sq_store *st)
{
	return st->written;
}

uint64_t sq_lost(const struct sq_store *st)
{
	return st->lost;
}

/* ---- read-only queries ------------------------------------------------- */

/* The writer's table of queued trace rows (QT_TABLE) is none of the
 * history's, and always empty to a query (the rows are inserted before
 * it runs): a query that reads it is refused as naming no such table
 * (arg, a bool, set), a pragma of it tells nothing, as of a table that is
 * not there. */
static bool queue_named(const char *name)
{
	return name && strcasecmp(name, QT_TABLE) == 0;
}

static int ro_authorizer(void *arg, int action, const char *a1, const char *a2,
			 const char *db, const char *trigger)
{
	static const char *const ro_pragmas[] = {
		"table_info", "table_xinfo", "table_list", "index_list", "index_info",
		"index_xinfo", "foreign_key_list", "user_version", "application_id",
		"schema_version", "database_list", "page_count", "page_size", "freelist_count",
		"collation_list", "function_list", "pragma_list", "compile_options",
	};

	switch (action) {
	case SQLITE_READ:
		if (queue_named(a1)) {
			*(bool *)arg = true;
			return SQLITE_DENY;
		}
		return SQLITE_OK;
	case SQLITE_SELECT:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_FUNCTION:
		if (a2 && strcasecmp(a2, "load_extension") == 0)
			return SQLITE_DENY;
		return SQLITE_OK;
	case SQLITE_PRAGMA:
		if (queue_named(a2))
			return SQLITE_IGNORE;
		if (a2)		/* PRAGMA x = y, or with an argument: may change things */
			if (strcasecmp(a1, "table_info") && strcasecmp(a1, "table_xinfo") &&
			    strcasecmp(a1, "index_list") && strcasecmp(a1, "index_info") &&
			    strcasecmp(a1, "index_xinfo") && strcasecmp(a1, "foreign_key_list"))
				return SQLITE_DENY;
		for (size_t i = 0; i < HS_ARRAY_SIZE(ro_pragmas); i++)
			if (strcasecmp(a1, ro_pragmas[i]) == 0)
				return SQLITE_OK;
		return SQLITE_DENY;
	default:
		return SQLITE_DENY;
	}
}

int sq_trace_names(struct sq_store *st, const char *pfx, int max,
			 void (*fn)(void *arg, const char *name), void *arg)
{
	sqlite3_stmt *s = NULL;
	int n = 0;

	if (sqlite3_prepare_v2(st->db, "SELECT session || ':' || trace_no AS name FROM traces"
			       " WHERE substr(name, 1, length(?1)) = ?1 ORDER BY id DESC LIMIT ?2",
			       -1, &s, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(s, 1, pfx, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, max);
	while (sqlite3_step(s) == SQLITE_ROW) {
		fn(arg, (const char *)sqlite3_column_text(s, 0));
		n++;
	}
	sqlite3_finalize(s);
	return n;
}

sqlite3_stmt *sq_prepare_ro(struct sq_store *st, const char *sql, char *err,
				  size_t errlen)
{
	sqlite3_stmt *s = NULL;
	const char *tail = NULL;
	bool queue = false;
	int rc;

	if (errlen)
		err[0] = '\0';
	flush_rows(st);
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
	sqlite3_set_authorizer(st->db, ro_authorizer, &queue);
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, &tail);
	sqlite3_set_authorizer(st->db, NULL, NULL);
	if (rc != SQLITE_OK) {
		if (rc == SQLITE_AUTH && queue)
			snprintf(err, errlen, "no such table: %s", QT_TABLE);
		else if (rc == SQLITE_AUTH)
			snprintf(err, errlen, "refused: the history is read-only here (%s)",
				 sqlite3_errmsg(st->db));
		else
			snprintf(err, errlen, "%s", sqlite3_errmsg(st->db));
		sqlite3_finalize(s);
		return NULL;
	}
	if (!s) {
		snprintf(err, errlen, "empty query");
		return NULL;
	}
	if (!sqlite3_stmt_readonly(s)) {
		snprintf(err, errlen, "refused: the history is read-only here");
		sqlite3_finalize(s);
		return NULL;
	}
	/* one statement only: anything but blanks and comments after it is refused */
	sqlite3_stmt *more = NULL;
	if (tail && *tail) {
		sqlite3_set_authorizer(st->db, ro_authorizer, &queue);
		rc = sqlite3_prepare_v2(st->db, tail, -1, &more, NULL);
		sqlite3_set_authorizer(st->db, NULL, NULL);
		if (rc != SQLITE_OK || more) {
			sqlite3_finalize(more);
			sqlite3_finalize(s);
			snprintf(err, errlen, "one statement at a time");
			return NULL;
		}
	}
	return s;
}

/* ---- retention ------------------------------------------------------------ */

static int setting_get(struct sq_store *st, const char *name, uint64_t *v)
{
	sqlite3_stmt *s;
	int rc;

	*v = 0;
	if (sqlite3_prepare_v2(st->db, "SELECT value FROM settings WHERE name = ?1", -1, &s,
			       NULL) != SQLITE_OK)
		return db_err(st, "cannot read");
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && sqlite3_column_int64(s, 0) > 0)
		*v = (uint64_t)sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_err(st, "cannot read");
}

int sq_retention(struct sq_store *st, struct hs_retention *r)
{
	memset(r, 0, sizeof(*r));
	return setting_get(st, "retention_age_ns", &r->age_ns) < 0 ||
	       setting_get(st, "retention_bytes", &r->max_bytes) < 0 ? -1 : 0;
}

int sq_set_retention(struct sq_store *st, const struct hs_retention *r)
{
	static const char sql[] = "INSERT INTO settings(name, value) VALUES (?1, ?2)"
				  " ON CONFLICT(name) DO UPDATE SET value = excluded.value";
	const char *names[] = { "retention_age_ns", "retention_bytes" };
	uint64_t vals[] = { r->age_ns, r->max_bytes };
	sqlite3_stmt *s;

	if (begin(st) < 0)
		return -1;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
		db_err(st, "cannot write to");
		check_rollback(st);
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		sqlite3_bind_text(s, 1, names[i], -1, SQLITE_STATIC);
		bind_u64(s, 2, vals[i]);
		if (run(st, s) < 0) {
			sqlite3_finalize(s);
			return -1;
		}
	}
	sqlite3_finalize(s);
	st->pending++;
	return sq_commit(st) < 0 ? -1 : 0;
}

uint64_t sq_used_bytes(struct sq_store *st)
{
	int64_t pages = 0, free_pages = 0, page = 0;

	if (query_int(st->db, "PRAGMA page_count", &pages) < 0 ||
	    query_int(st->db, "PRAGMA freelist_count", &free_pages) < 0 ||
	    query_int(st->db, "PRAGMA page_size", &page) < 0 || pages < free_pages)
		return 0;
	return (uint64_t)(pages - free_pages) * (uint64_t)page;
}

/* one statement with its parameters bound: rows changed, or -1 */
static int64_t prune_exec(struct sq_store *st, const char *sql, int64_t cut, int64_t wall_cut,
			  int64_t live, int64_t n, int64_t bound)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return db_err(st, "cannot prune");
	for (int i = 1; i <= sqlite3_bind_parameter_count(s); i++) {
		const char *name = sqlite3_bind_parameter_name(s, i);
		int64_t v = strcmp(name, ":cut") == 0 ? cut : strcmp(name, ":wall") == 0 ? wall_cut :
			    strcmp(name, ":live") == 0 ? live : strcmp(name, ":n") == 0 ? n : bound;
		sqlite3_bind_int64(s, i, v);
	}
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		db_err(st, "cannot prune");
		check_rollback(st);
		return -1;
	}
	return sqlite3_changes(st->db);
}

/* The sessions still captured, in temp table prune_open: the console's
 * (?1, ?2), and those an analyzer's heartbeat since ?3 names */
static const char prune_open[] =
	"INSERT OR IGNORE INTO temp.prune_open SELECT ?1 UNION SELECT ?2 UNION"
	" SELECT session FROM analyzers WHERE session IS NOT NULL AND seen >= ?3";

/* The sessions whose rows go, in temp table prune_s: every session not
 * still captured that ended (or, never ended, began) before the wall-clock
 * cut; over the size bound, the oldest session not still captured too. */
static const char *const prune_sessions[] = {
	"DELETE FROM temp.prune_s",
	"INSERT OR IGNORE INTO temp.prune_s SELECT id FROM sessions"
	" WHERE id NOT IN temp.prune_open AND :wall > 0 AND coalesce(ended, started) < :wall",
	"INSERT OR IGNORE INTO temp.prune_s SELECT min(id) FROM sessions"
	" WHERE id NOT IN temp.prune_open AND :bound > 0 HAVING min(id) IS NOT NULL",
};

int sq_prune(struct sq_store *st, uint64_t now_wall, int64_t current, int64_t live,
	     unsigned budget, struct hs_prune *res)
{
	struct hs_retention r;
	uint64_t used;
	int64_t wall_cut = 0, cut = 0, n = budget ? budget : 1, got, first_kept = INT64_MAX;
	bool over, more = false;
	sqlite3_stmt *s;

	struct hs_prune before = *res;

	if (sq_retention(st, &r) < 0)
		return -1;
	if (!r.age_ns && !r.max_bytes)
		return 0;
	if (r.age_ns && r.age_ns < now_wall)
		wall_cut = cut = (int64_t)(now_wall - r.age_ns);
	used = r.max_bytes ? sq_used_bytes(st) : 0;
	over = r.max_bytes && used > r.max_bytes;
	if (!wall_cut && !over)
		return 0;
	if (begin(st) < 0 || flush_rows(st) < 0)
		return -1;
	if (sqlite3_exec(st->db, "CREATE TEMP TABLE IF NOT EXISTS prune_s(id INTEGER PRIMARY KEY);"
			 "CREATE TEMP TABLE IF NOT EXISTS prune_open(id INTEGER PRIMARY KEY);"
			 "DELETE FROM temp.prune_open", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(st->db, prune_open, -1, &s, NULL) != SQLITE_OK)
		return db_err(st, "cannot prune");
	sqlite3_bind_int64(s, 1, current);
	sqlite3_bind_int64(s, 2, live);
	sqlite3_bind_int64(s, 3, now_wall > HS_STORE_RUNNING_NS ?
			   (int64_t)(now_wall - HS_STORE_RUNNING_NS) : 0);
	int open_rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (open_rc != SQLITE_DONE)
		return db_err(st, "cannot prune");
	for (size_t i = 0; i < HS_ARRAY_SIZE(prune_sessions); i++)
		if (prune_exec(st, prune_sessions[i], 0, wall_cut, live, 0, over) < 0)
			return -1;

	/* Traces, oldest first: a session's traces have consecutive ids and
	 * sessions follow one another, so what goes is a run of the lowest
	 * ids; the run ends at the first trace that stays. The live session's
	 * traces age by capture time, never by the size. */
	int64_t last = 0;
	unsigned seen = 0;
	if (sqlite3_prepare_v2(st->db, "SELECT id, session, coalesce(last_ts, 0) FROM traces"
			       " ORDER BY id LIMIT ?1", -1, &s, NULL) != SQLITE_OK)
		return db_err(st, "cannot prune");
	sqlite3_bind_int64(s, 1, n);
	sqlite3_stmt *in = NULL;
	if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM temp.prune_s WHERE id = ?1", -1, &in,
			       NULL) != SQLITE_OK) {
		sqlite3_finalize(s);
		return db_err(st, "cannot prune");
	}
	while (sqlite3_step(s) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0), sess = sqlite3_column_int64(s, 1);
		int64_t ts = sqlite3_column_int64(s, 2);
		bool gone;

		seen++;
		if (sess == live && live)
			gone = cut && ts < cut;
		else {
			sqlite3_bind_int64(in, 1, sess);
			gone = sqlite3_step(in) == SQLITE_ROW;
			sqlite3_reset(in);
		}
		if (!gone) {
			first_kept = id;
			break;
		}
		last = id;
	}
	sqlite3_finalize(in);
	sqlite3_finalize(s);
	if (last && (got = prune_exec(st, "DELETE FROM traces WHERE id <= :bound", 0, 0, 0, 0,
				      last)) < 0)
		return -1;
	if (last) {
		res->traces += (uint64_t)got;
		more |= first_kept == INT64_MAX && seen == (unsigned)n;
	}

	/* the rest by the same rule, each at most n rows a step */
	static const struct {
		const char *sql;
		int what;		/* HS_PRUNE_... */
	} del[] = {
		{ "DELETE FROM flows WHERE rowid IN (SELECT rowid FROM flows WHERE session IN"
		  " temp.prune_s OR (session = :live AND last_ts < :cut) LIMIT :n)", HS_PRUNE_FLOWS },
		{ "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE session IN"
		  " temp.prune_s OR (session = :live AND ts < :cut) LIMIT :n)", HS_PRUNE_OTHER },
		{ "DELETE FROM control WHERE id IN (SELECT id FROM control WHERE session IN"
		  " temp.prune_s OR (session = :live AND ts < :cut) LIMIT :n)", HS_PRUNE_OTHER },
		{ "DELETE FROM probe_hops WHERE (analyzer, probe_id, seq) IN (SELECT analyzer,"
		  " probe_id, seq FROM probes WHERE session IN temp.prune_s OR sent < :wall LIMIT :n)",
		  HS_PRUNE_UNCOUNTED },
		{ "DELETE FROM probes WHERE (analyzer, probe_id, seq) IN (SELECT analyzer, probe_id,"
		  " seq FROM probes WHERE session IN temp.prune_s OR sent < :wall LIMIT :n)",
		  HS_PRUNE_PROBES },
		{ "DELETE FROM snapshot_counters WHERE snapshot IN (SELECT id FROM snapshots"
		  " WHERE session IN temp.prune_s OR taken < :wall LIMIT :n)", HS_PRUNE_UNCOUNTED },
		{ "DELETE FROM snapshots WHERE id IN (SELECT id FROM snapshots"
		  " WHERE session IN temp.prune_s OR taken < :wall LIMIT :n)", HS_PRUNE_OTHER },
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(del); i++) {
		got = prune_exec(st, del[i].sql, cut ? cut : INT64_MIN, wall_cut ? wall_cut : INT64_MIN,
				 live, n, 0);
		if (got < 0)
			return -1;
		hs_prune_add(res, del[i].what, (uint64_t)got);
		more |= got == n;
	}
	/* 007's epochs that began before every trace kept, once traces went */
	if (last) {
		got = prune_exec(st, "DELETE FROM blame WHERE epoch_start < coalesce((SELECT first_ts"
				 " FROM traces ORDER BY id LIMIT 1), :bound)", 0, 0, 0, 0, INT64_MAX);
		if (got < 0)
			return -1;
		res->other += (uint64_t)got;
	}
	/* a session goes with the last of its rows; one with traces left stays */
	got = prune_exec(st, "DELETE FROM sessions WHERE id IN temp.prune_s"
			 " AND id < coalesce((SELECT session FROM traces ORDER BY id LIMIT 1), :bound)"
			 " AND NOT EXISTS (SELECT 1 FROM flows WHERE session = sessions.id)"
			 " AND NOT EXISTS (SELECT 1 FROM events WHERE session = sessions.id)"
			 " AND NOT EXISTS (SELECT 1 FROM control WHERE session = sessions.id)",
			 0, 0, 0, 0, INT64_MAX);
	if (got < 0)
		return -1;
	res->sessions += (uint64_t)got;
	st->pending++;
	if (sq_commit(st) < 0)
		return -1;
	/* a file made with incremental vacuum gives the freed pages back */
	sqlite3_exec(st->db, "PRAGMA incremental_vacuum(4096)", NULL, NULL, NULL);
	/* still over the size bound: another step, if this one removed anything */
	if (r.max_bytes && !more && sq_used_bytes(st) > r.max_bytes)
		more = res->traces + res->flows + res->sessions + res->probes + res->other >
		       before.traces + before.flows + before.sessions + before.probes + before.other;
	return more ? 1 : 0;
}

/* the heartbeat's newest: what it commits with is taken with it */
uint64_t sq_newest(const struct sq_store *st)
{
	return st->newest > st->newest_batch ? st->newest : st->newest_batch;
}
