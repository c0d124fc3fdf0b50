/* store_int.h - what the history's own files share: the handle every
 * engine's store begins with, and each engine's side of store.h.
 *
 * store_api.c gives store.h's functions to callers and hands each call to
 * the engine the history was opened on: SQLite (store.c, history.c) or
 * PostgreSQL (store_pg.c). An engine's functions take its own store; the
 * handle is its first member. Nothing outside these files sees an engine.
 */
#ifndef HS_STORE_INT_H
#define HS_STORE_INT_H

#include <sqlite3.h>
#include "store.h"

enum hs_store_engine { HS_ENGINE_SQLITE, HS_ENGINE_PG };

struct hs_store {
	enum hs_store_engine engine;
	char analyzer[HS_ANALYZER_MAX];	/* "" none: hs_store_set_analyzer */
};

/* the analyzer name a row is written with, NULL for none */
static inline const char *hs_store_an(const struct hs_store *st)
{
	return st->analyzer[0] ? st->analyzer : NULL;
}

/* the analyzer a probe's rows are keyed by: '' when none is named (a key
 * is never NULL) */
static inline const char *hs_store_probe_an(const struct hs_store *st)
{
	return st->analyzer;
}

/* an analyzer's heartbeat, the same on both engines but for how its
 * parameters are written (?N or $N) */
#define HS_HEARTBEAT_SQL(P) \
	"INSERT INTO analyzers(name, session, seen, packets, kernel_drops, rate, queued, lag," \
	" lost, newest, history) VALUES (" P "1, " P "2, " P "3, " P "4, " P "5, " P "6, " \
	P "7, " P "8, " P "9, " P "10, " P "11)" \
	" ON CONFLICT (name) DO UPDATE SET session = excluded.session, seen = excluded.seen," \
	" packets = excluded.packets, kernel_drops = excluded.kernel_drops," \
	" rate = excluded.rate, queued = excluded.queued, lag = excluded.lag," \
	" lost = excluded.lost, newest = CASE WHEN analyzers.newest > excluded.newest" \
	" THEN analyzers.newest ELSE coalesce(excluded.newest, analyzers.newest) END," \
	" history = excluded.history"

/* the store's own reads of the traces' times and the analyzers (store_api.c),
 * the same on both engines but for how their parameters are written (?N
 * or $N), each given as P "N" */
/* the first copy's time of the (P1 + 1)-th newest trace */
#define HS_NTH_NEWEST_SQL(P) "SELECT first_ts FROM traces WHERE first_ts IS NOT NULL" \
	" ORDER BY first_ts DESC LIMIT 1 OFFSET " P "1"
/* a trace first seen from P1 up to P2, the first found */
#define HS_ANY_SQL(P) "SELECT first_ts FROM traces WHERE first_ts >= " P "1" \
	" AND first_ts < " P "2 LIMIT 1"
/* of the traces first seen from P1 up to P2: the newest's first copy,
 * and how many (counted, or 0: the newest alone is found by the traces'
 * time, without reading every trace) */
#define HS_SPAN_SQL(P, n) "SELECT max(first_ts), " n " FROM traces" \
	" WHERE first_ts >= " P "1 AND first_ts < " P "2"
/* the traces first seen from P1 on, numbered in time order and cut into
 * groups of P2: each group's first time and size, oldest first */
#define HS_RANGES_SQL(P) "SELECT min(first_ts), count(*) FROM (SELECT first_ts," \
	" (row_number() OVER (ORDER BY first_ts) - 1) / " P "2 AS k FROM traces" \
	" WHERE first_ts >= " P "1) AS r GROUP BY k ORDER BY k"
/* what a fabric view asks of the others: the newest trace (the
 * heartbeats', the traces' own only where no heartbeat tells of any),
 * the analyzers but P1, those of them storing all, those running (seen
 * from P2 on), the longest lag */
#define HS_ANALYZERS_SQL(P) \
	"SELECT coalesce((SELECT max(newest) FROM analyzers)," \
	" (SELECT max(first_ts) FROM traces))," \
	" (SELECT count(*) FROM analyzers WHERE name <> " P "1)," \
	" (SELECT count(*) FROM analyzers WHERE name <> " P "1 AND history = 'all')," \
	" (SELECT count(*) FROM analyzers WHERE session IS NOT NULL AND seen >= " P "2)," \
	" (SELECT max(lag) FROM analyzers WHERE session IS NOT NULL)"

/* a traceroute path reader (hs_store_paths_open) begins the same way */
struct hs_store_paths {
	enum hs_store_engine engine;
};

/* ---- what both engines write (store_row.c) ------------------------------ */

/* The mirror sources (rows of mirror_sources) hops were written with,
 * found by address and switch name: a hop finds its row here, not by
 * asking the database. Open addressing, at most half full. */
struct hs_sources {
	struct hs_source {
		int64_t id;		/* 0: an empty slot */
		struct hs_addr addr;
		bool named;
		char name[HS_NAME_MAX];
	} *slot;
	uint32_t mask, n;
};
/* the row of source (a, name), name NULL when unknown; 0 when not known */
int64_t hs_sources_get(const struct hs_sources *c, const struct hs_addr *a, const char *name);
void hs_sources_put(struct hs_sources *c, const struct hs_addr *a, const char *name, int64_t id);
void hs_sources_clear(struct hs_sources *c);
void hs_sources_free(struct hs_sources *c);

#define HS_HOP_JSON_MAX (6 * 21 + 2)	/* one hop: six numbers, commas, brackets */
#define HS_HOPLIST_MAX (HS_TRACE_MAX_HOPS * HS_HOP_JSON_MAX + 4)

/* a trace's row as it is stored: its values, its hop list (the JSON of
 * schema 9: [[source, ts - first, hw_ts - first_hw, ttl, tos, session],
 * ...], hw_ts null when the hop has none) */
struct hs_store_row {
	int64_t session;
	uint64_t id, seq, len, first, last, first_hw, probe_id;
	int proto, sport, dport, ip_id, tcp_flags, nhops, flags;
	bool have_ts, have_hw, have_probe;
	const char *outcome;		/* a constant string */
	char src[HS_ADDRSTRLEN], dst[HS_ADDRSTRLEN];
	char last_sw[HS_ADDRSTRLEN + HS_NAME_MAX];	/* "" when no hops */
	char next[HS_TRACE_MAX_NEXT * HS_NAME_MAX + 8];	/* "" when none */
	int hops_len;
	char hops[HS_HOPLIST_MAX];
};

/* rows of a kind that retention removed, added to res */
enum { HS_PRUNE_FLOWS, HS_PRUNE_PROBES, HS_PRUNE_OTHER, HS_PRUNE_UNCOUNTED, HS_PRUNE_SESSIONS };
void hs_prune_add(struct hs_prune *res, int kind, uint64_t n);

/* an error message "WHAT 'NAME': REASON" of history NAME: its reason (the
 * whole message when it is not of that form), for callers that name the
 * history themselves */
const char *hs_store_reason(const char *msg, const char *name);

/* v in decimal at q; returns the end */
char *hs_put_u64(char *q, uint64_t v);

/* fill r with trace t of session; a hop's mirror source is looked up in
 * known, and only when it is not there source(arg, addr, name) gives its
 * row, -1 on error. 0, or -1 when a source had none. */
int hs_store_row_fill(struct hs_store_row *r, int64_t session, const struct hs_trace *t,
		      const struct hs_topo *topo, const struct hs_sources *known,
		      int64_t (*source)(void *arg, const struct hs_addr *a, const char *name),
		      void *arg);

/* ---- SQLite: store.c, history.c ---------------------------------------- */
struct sq_store;
struct sq_paths;

struct sq_store *sq_open_notice(const char *path, char *err, size_t errlen,
				void (*notice)(void *arg, const char *msg), void *arg);
void sq_close(struct sq_store *st);
const char *sq_path(const struct sq_store *st);
const char *sq_errmsg(struct sq_store *st);
int64_t sq_session_begin(struct sq_store *st, const char *source, const char *filter,
			 uint64_t wall_ns);
int sq_session_end(struct sq_store *st, int64_t session, const struct hs_session_stats *stats,
		   uint64_t wall_ns);
int64_t sq_input_session(struct sq_store *st, const char *input);
int sq_trace(struct sq_store *st, int64_t session, const struct hs_trace *t,
	     const struct hs_topo *topo);
int sq_flow(struct sq_store *st, int64_t session, struct hs_flow *f);
int sq_control(struct sq_store *st, int64_t session, uint64_t ts_ns, const char *sw,
	       const char *proto, const char *kind, const struct hs_flowkey *key,
	       const char *detail);
int sq_commit(struct sq_store *st);
size_t sq_pending(const struct sq_store *st);
int sq_begin(struct sq_store *st, bool wait);
void sq_checkpoint_apart(struct sq_store *st, bool apart);
struct hs_store_ckpt *sq_checkpoint_due(struct sq_store *st);
uint64_t sq_written(const struct sq_store *st);
/* the first copy's time of the newest trace stored (or in the open
 * transaction, which a heartbeat joins), 0 none */
uint64_t sq_newest(const struct sq_store *st);
uint64_t sq_lost(const struct sq_store *st);
int sq_trace_names(struct sq_store *st, const char *pfx, int max,
		   void (*fn)(void *arg, const char *name), void *arg);
int sq_query_ro(struct sq_store *st, const char *sql, const struct hs_rows *out, char *err,
		size_t errlen);
/* the store's own read sql, its n parameters bound in order (INT, TEXT or
 * NULL), its rows to out; a signal stops it. 0, or -1 with err set */
int sq_read(struct sq_store *st, const char *sql, const struct hs_value *param, int n,
	    const struct hs_rows *out, char *err, size_t errlen);
int sq_list(struct sq_store *st, enum hs_listing what, uint64_t limit,
	    const struct hs_rows *out, char *err, size_t errlen);
/* range: the traces first seen from 'from' up to 'to' (SQL_PARTS_RANGE) */
int sq_parts(struct sq_store *st, bool range, uint64_t from, uint64_t since, uint64_t to,
	     const struct hs_rows *out, char *err, size_t errlen);
int sq_trace_show(struct sq_store *st, uint64_t session, uint64_t no, int64_t prefer,
		  const struct hs_rows *trace, const struct hs_rows *hops, char *err,
		  size_t errlen);
int sq_event(struct sq_store *st, int64_t session, uint64_t ts_ns, int64_t alert,
	     const char *cond, double value, uint64_t wall_ns);
int sq_heartbeat(struct sq_store *st, const struct hs_heartbeat *hb);
int sq_probe(struct sq_store *st, const struct hs_store_probe *run, unsigned n,
	     void (*pkt)(void *arg, unsigned i, struct hs_store_probe_pkt *p), void *arg,
	     char *err, size_t errlen);
int sq_blame(struct sq_store *st, const struct hs_blame *b, const struct hs_topo *topo,
	     char *err, size_t errlen);
struct sq_paths *sq_paths_open(struct sq_store *st, const struct hs_topo *topo);
int sq_traceroute_path(struct sq_paths *p, const struct hs_flowkey *k, int *sw, int max);
void sq_paths_close(struct sq_paths *p);
int sq_snapshot(struct sq_store *st, struct hs_snap *s, char *err, size_t errlen);
int sq_snapshot_load(struct sq_store *st, int64_t id, bool ports, struct hs_snap *s,
		     char *err, size_t errlen);
int sq_snapshots(struct sq_store *st, void (*each)(void *arg, const struct hs_snap *s),
		 void *arg, char *err, size_t errlen);
int sq_retention(struct sq_store *st, struct hs_retention *r);
int sq_set_retention(struct sq_store *st, const struct hs_retention *r);
uint64_t sq_used_bytes(struct sq_store *st);
int sq_prune(struct sq_store *st, uint64_t now_wall_ns, int64_t current, int64_t live,
	     unsigned budget, struct hs_prune *res);

/* the SQLite handle, for history.c; a reader sees every row written so far */
sqlite3 *sq_db(struct sq_store *st);
/* a read-only statement of the user's: refuses writes, ATTACH, PRAGMA
 * changes and load_extension (authorizer). NULL with err set. */
sqlite3_stmt *sq_prepare_ro(struct sq_store *st, const char *sql, char *err, size_t errlen);

/* ---- PostgreSQL: store_pg.c -------------------------------------------- */
struct pg_store;

struct pg_store *pg_open_notice(const char *uri, char *err, size_t errlen,
				void (*notice)(void *arg, const char *msg), void *arg);
void pg_close(struct pg_store *st);
const char *pg_path(const struct pg_store *st);
const char *pg_name(const struct pg_store *st);
const char *pg_errmsg(struct pg_store *st);
int64_t pg_session_begin(struct pg_store *st, const char *source, const char *filter,
			 uint64_t wall_ns);
int pg_session_end(struct pg_store *st, int64_t session, const struct hs_session_stats *stats,
		   uint64_t wall_ns);
int64_t pg_input_session(struct pg_store *st, const char *input);
int pg_trace(struct pg_store *st, int64_t session, const struct hs_trace *t,
	     const struct hs_topo *topo);
int pg_flow(struct pg_store *st, int64_t session, struct hs_flow *f);
int pg_control(struct pg_store *st, int64_t session, uint64_t ts_ns, const char *sw,
	       const char *proto, const char *kind, const struct hs_flowkey *key,
	       const char *detail);
int pg_commit(struct pg_store *st);
size_t pg_pending(const struct pg_store *st);
size_t pg_in_flight(struct pg_store *st);
int pg_begin(struct pg_store *st, bool wait);
uint64_t pg_written(const struct pg_store *st);
uint64_t pg_lost(const struct pg_store *st);
int pg_trace_names(struct pg_store *st, const char *pfx, int max,
		   void (*fn)(void *arg, const char *name), void *arg);
int pg_query_ro(struct pg_store *st, const char *sql, const struct hs_rows *out, char *err,
		size_t errlen);
int pg_read(struct pg_store *st, const char *sql, const struct hs_value *param, int n,
	    const struct hs_rows *out, char *err, size_t errlen);
int pg_list(struct pg_store *st, enum hs_listing what, uint64_t limit,
	    const struct hs_rows *out, char *err, size_t errlen);
/* range: the traces first seen from 'from' up to 'to' (SQL_PARTS_RANGE) */
int pg_parts(struct pg_store *st, bool range, uint64_t from, uint64_t since, uint64_t to,
	     const struct hs_rows *out, char *err, size_t errlen);
int pg_trace_show(struct pg_store *st, uint64_t session, uint64_t no, int64_t prefer,
		  const struct hs_rows *trace, const struct hs_rows *hops, char *err,
		  size_t errlen);
int pg_event(struct pg_store *st, int64_t session, uint64_t ts_ns, int64_t alert,
	     const char *cond, double value, uint64_t wall_ns);
int pg_heartbeat(struct pg_store *st, const struct hs_heartbeat *hb);
int pg_probe(struct pg_store *st, const struct hs_store_probe *run, unsigned n,
	     void (*pkt)(void *arg, unsigned i, struct hs_store_probe_pkt *p), void *arg,
	     char *err, size_t errlen);
int pg_blame(struct pg_store *st, const struct hs_blame *b, const struct hs_topo *topo,
	     char *err, size_t errlen);
struct hs_store_paths *pg_paths_open(struct pg_store *st, const struct hs_topo *topo);
int pg_traceroute_path(struct hs_store_paths *p, const struct hs_flowkey *k, int *sw, int max);
void pg_paths_close(struct hs_store_paths *p);
int pg_snapshot(struct pg_store *st, struct hs_snap *s, char *err, size_t errlen);
int pg_snapshot_load(struct pg_store *st, int64_t id, bool ports, struct hs_snap *s,
		     char *err, size_t errlen);
int pg_snapshots(struct pg_store *st, void (*each)(void *arg, const struct hs_snap *s),
		 void *arg, char *err, size_t errlen);
int pg_retention(struct pg_store *st, struct hs_retention *r);
int pg_set_retention(struct pg_store *st, const struct hs_retention *r);
uint64_t pg_used_bytes(struct pg_store *st);
int pg_prune(struct pg_store *st, uint64_t now_wall_ns, int64_t live, unsigned budget,
	     struct hs_prune *res);

#endif
