/* store_api.c - the history's interface (store.h), whatever engine keeps it
 *
 * A history named by a postgresql:// (or postgres://) URI is kept by a
 * PostgreSQL server (store_pg.c); any other name is a SQLite file
 * (store.c). Each call goes to the engine the history was opened on: no
 * caller knows which it is.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "store_int.h"

#define SQ(st) ((struct sq_store *)(st))
#define PG(st) ((struct pg_store *)(st))
#define IS_PG(st) ((st)->engine == HS_ENGINE_PG)

bool hs_store_is_pg(const char *path)
{
	return path && (strncmp(path, "postgresql://", 13) == 0 ||
			strncmp(path, "postgres://", 11) == 0);
}

struct hs_store *hs_store_open(const char *path, char *err, size_t errlen)
{
	return hs_store_open_notice(path, err, errlen, NULL, NULL);
}

struct hs_store *hs_store_open_notice(const char *path, char *err, size_t errlen,
				      void (*notice)(void *arg, const char *msg), void *arg)
{
	if (hs_store_is_pg(path))
		return (struct hs_store *)pg_open_notice(path, err, errlen, notice, arg);
	return (struct hs_store *)sq_open_notice(path, err, errlen, notice, arg);
}

bool hs_analyzer_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n >= HS_ANALYZER_MAX)
		return false;
	for (const char *c = name; *c; c++)
		if (!(*c >= 'a' && *c <= 'z') && !(*c >= 'A' && *c <= 'Z') &&
		    !(*c >= '0' && *c <= '9') && *c != '.' && *c != '-' && *c != '_')
			return false;
	return true;
}

void hs_store_set_analyzer(struct hs_store *st, const char *name)
{
	snprintf(st->analyzer, sizeof(st->analyzer), "%s",
		 name && hs_analyzer_name_ok(name) ? name : "");
}

const char *hs_store_analyzer(const struct hs_store *st)
{
	return hs_store_an(st);
}

void hs_store_close(struct hs_store *st)
{
	if (!st)
		return;
	if (IS_PG(st))
		pg_close(PG(st));
	else
		sq_close(SQ(st));
}

const char *hs_store_path(const struct hs_store *st)
{
	return IS_PG(st) ? pg_path((const struct pg_store *)st) : sq_path((const struct sq_store *)st);
}

const char *hs_store_name(const struct hs_store *st)
{
	return IS_PG(st) ? pg_name((const struct pg_store *)st) : sq_path((const struct sq_store *)st);
}

const char *hs_store_errmsg(struct hs_store *st)
{
	return IS_PG(st) ? pg_errmsg(PG(st)) : sq_errmsg(SQ(st));
}

const char *hs_store_errwhy(struct hs_store *st)
{
	return hs_store_reason(hs_store_errmsg(st), hs_store_name(st));
}

int64_t hs_store_session_begin(struct hs_store *st, const char *source, const char *filter,
			       uint64_t wall_ns)
{
	return IS_PG(st) ? pg_session_begin(PG(st), source, filter, wall_ns)
			 : sq_session_begin(SQ(st), source, filter, wall_ns);
}

int hs_store_session_end(struct hs_store *st, int64_t session,
			 const struct hs_session_stats *stats, uint64_t wall_ns)
{
	return IS_PG(st) ? pg_session_end(PG(st), session, stats, wall_ns)
			 : sq_session_end(SQ(st), session, stats, wall_ns);
}

int64_t hs_store_input_session(struct hs_store *st, const char *input)
{
	return IS_PG(st) ? pg_input_session(PG(st), input) : sq_input_session(SQ(st), input);
}

int hs_store_trace(struct hs_store *st, int64_t session, const struct hs_trace *t,
		   const struct hs_topo *topo)
{
	return IS_PG(st) ? pg_trace(PG(st), session, t, topo) : sq_trace(SQ(st), session, t, topo);
}

int hs_store_flow(struct hs_store *st, int64_t session, struct hs_flow *f)
{
	return IS_PG(st) ? pg_flow(PG(st), session, f) : sq_flow(SQ(st), session, f);
}

int hs_store_control(struct hs_store *st, int64_t session, uint64_t ts_ns, const char *sw,
		     const char *proto, const char *kind, const struct hs_flowkey *key,
		     const char *detail)
{
	return IS_PG(st) ? pg_control(PG(st), session, ts_ns, sw, proto, kind, key, detail)
			 : sq_control(SQ(st), session, ts_ns, sw, proto, kind, key, detail);
}

int hs_store_commit(struct hs_store *st)
{
	return IS_PG(st) ? pg_commit(PG(st)) : sq_commit(SQ(st));
}

size_t hs_store_pending(const struct hs_store *st)
{
	return IS_PG(st) ? pg_pending((const struct pg_store *)st)
			 : sq_pending((const struct sq_store *)st);
}

size_t hs_store_in_flight(struct hs_store *st)
{
	return IS_PG(st) ? pg_in_flight(PG(st)) : 0;
}

int hs_store_begin(struct hs_store *st, bool wait)
{
	return IS_PG(st) ? pg_begin(PG(st), wait) : sq_begin(SQ(st), wait);
}

void hs_store_checkpoint_apart(struct hs_store *st, bool apart)
{
	if (!IS_PG(st))
		sq_checkpoint_apart(SQ(st), apart);
}

struct hs_store_ckpt *hs_store_checkpoint_due(struct hs_store *st)
{
	return IS_PG(st) ? NULL : sq_checkpoint_due(SQ(st));
}

uint64_t hs_store_written(const struct hs_store *st)
{
	return IS_PG(st) ? pg_written((const struct pg_store *)st)
			 : sq_written((const struct sq_store *)st);
}

uint64_t hs_store_lost(const struct hs_store *st)
{
	return IS_PG(st) ? pg_lost((const struct pg_store *)st)
			 : sq_lost((const struct sq_store *)st);
}

int hs_store_trace_names(struct hs_store *st, const char *pfx, int max,
			 void (*fn)(void *arg, const char *name), void *arg)
{
	return IS_PG(st) ? pg_trace_names(PG(st), pfx, max, fn, arg)
			 : sq_trace_names(SQ(st), pfx, max, fn, arg);
}

int hs_store_query_ro(struct hs_store *st, const char *sql, const struct hs_rows *out,
		      char *err, size_t errlen)
{
	return IS_PG(st) ? pg_query_ro(PG(st), sql, out, err, errlen)
			 : sq_query_ro(SQ(st), sql, out, err, errlen);
}

int hs_store_parts(struct hs_store *st, uint64_t since_ns, uint64_t window_ns,
		   const struct hs_rows *out, char *err, size_t errlen)
{
	uint64_t lim = INT64_MAX, since = since_ns < lim ? since_ns : lim;
	uint64_t from = since > window_ns ? since - window_ns : 0;
	uint64_t to = window_ns < lim - since ? since + window_ns : lim;

	return IS_PG(st) ? pg_parts(PG(st), false, from, since, to, out, err, errlen)
			 : sq_parts(SQ(st), false, from, since, to, out, err, errlen);
}

int hs_store_parts_range(struct hs_store *st, uint64_t from_ns, uint64_t to_ns,
			 const struct hs_rows *out, char *err, size_t errlen)
{
	uint64_t lim = INT64_MAX, from = from_ns < lim ? from_ns : lim, to = to_ns < lim ? to_ns : lim;

	return IS_PG(st) ? pg_parts(PG(st), true, from, from, to, out, err, errlen)
			 : sq_parts(SQ(st), true, from, from, to, out, err, errlen);
}

/* the store's own read: sql (written for st's engine) with its n
 * parameters, its rows to row(arg, ...) */
static int read_rows(struct hs_store *st, const char *sql, const struct hs_value *param, int n,
		     void (*row)(void *arg, const struct hs_value *v, int ncol), void *arg,
		     char *err, size_t errlen)
{
	const struct hs_rows out = { .row = row, .arg = arg };

	return (IS_PG(st) ? pg_read(PG(st), sql, param, n, &out, err, errlen)
			  : sq_read(SQ(st), sql, param, n, &out, err, errlen)) == 0 ? 0 : -1;
}

static struct hs_value int_value(uint64_t v)
{
	return (struct hs_value){ .type = HS_VAL_INT, .i = v > INT64_MAX ? INT64_MAX : (int64_t)v };
}

/* a count or a time as read: a negative one or none is 0 */
static uint64_t uint_of(const struct hs_value *v)
{
	return v->type == HS_VAL_INT && v->i > 0 ? (uint64_t)v->i : 0;
}

struct nth {
	bool have;
	uint64_t ts;
};

static void nth_row(void *arg, const struct hs_value *v, int ncol)
{
	struct nth *n = arg;

	if (ncol == 1 && v[0].type == HS_VAL_INT) {
		n->have = true;
		n->ts = uint_of(&v[0]);
	}
}

int hs_store_nth_newest(struct hs_store *st, uint64_t nth, uint64_t *ts, char *err,
			size_t errlen)
{
	const struct hs_value p = int_value(nth);
	struct nth n = { 0 };

	*ts = 0;
	if (read_rows(st, IS_PG(st) ? HS_NTH_NEWEST_SQL("$") : HS_NTH_NEWEST_SQL("?"), &p, 1,
		      nth_row, &n, err, errlen) < 0)
		return -1;
	*ts = n.ts;
	return n.have ? 1 : 0;
}

int hs_store_any(struct hs_store *st, uint64_t from_ns, uint64_t to_ns, char *err,
		 size_t errlen)
{
	const struct hs_value p[] = { int_value(from_ns), int_value(to_ns) };
	struct nth n = { 0 };

	if (read_rows(st, IS_PG(st) ? HS_ANY_SQL("$") : HS_ANY_SQL("?"), p, 2, nth_row, &n, err,
		      errlen) < 0)
		return -1;
	return n.have ? 1 : 0;
}

static void span_row(void *arg, const struct hs_value *v, int ncol)
{
	struct hs_store_span *sp = arg;

	if (ncol != 2 || v[0].type != HS_VAL_INT)
		return;
	sp->any = true;
	sp->newest = uint_of(&v[0]);
	sp->n = uint_of(&v[1]);
}

int hs_store_span(struct hs_store *st, uint64_t from_ns, uint64_t to_ns, bool count,
		  struct hs_store_span *sp, char *err, size_t errlen)
{
	const struct hs_value p[] = { int_value(from_ns), int_value(to_ns) };
	const char *sql = IS_PG(st) ? (count ? HS_SPAN_SQL("$", "count(*)") : HS_SPAN_SQL("$", "0"))
				    : (count ? HS_SPAN_SQL("?", "count(*)") : HS_SPAN_SQL("?", "0"));

	memset(sp, 0, sizeof(*sp));
	return read_rows(st, sql, p, 2, span_row, sp, err, errlen);
}

static void kept_row(void *arg, const struct hs_value *v, int ncol)
{
	uint64_t *k = arg;

	if (ncol == 2) {
		k[0] = uint_of(&v[0]);
		k[1] = uint_of(&v[1]);
	}
}

int hs_store_kept(struct hs_store *st, uint64_t *kept, uint64_t *traced, char *err,
		  size_t errlen)
{
	static const char sql[] =
		"SELECT (SELECT count(*) FROM traces WHERE session IN"
		" (SELECT id FROM sessions WHERE ended IS NOT NULL)),"
		" (SELECT coalesce(sum(traces), 0) FROM sessions WHERE ended IS NOT NULL)";
	uint64_t k[2] = { 0, 0 };

	*kept = *traced = 0;
	if (IS_PG(st))
		return 0;
	if (read_rows(st, sql, NULL, 0, kept_row, k, err, errlen) < 0)
		return -1;
	*kept = k[0];
	*traced = k[1];
	return 0;
}

struct ranges {
	void (*fn)(void *arg, uint64_t start, uint64_t count);
	void *arg;
};

static void range_row(void *arg, const struct hs_value *v, int ncol)
{
	const struct ranges *r = arg;

	if (ncol == 2 && v[0].type == HS_VAL_INT)
		r->fn(r->arg, uint_of(&v[0]), uint_of(&v[1]));
}

int hs_store_ranges(struct hs_store *st, uint64_t from_ns, uint64_t n,
		    void (*fn)(void *arg, uint64_t start, uint64_t count), void *arg, char *err,
		    size_t errlen)
{
	const struct hs_value p[] = { int_value(from_ns), int_value(n ? n : 1) };
	struct ranges r = { .fn = fn, .arg = arg };

	return read_rows(st, IS_PG(st) ? HS_RANGES_SQL("$") : HS_RANGES_SQL("?"), p, 2, range_row,
			 &r, err, errlen);
}

static void others_row(void *arg, const struct hs_value *v, int ncol)
{
	struct hs_store_others *o = arg;

	if (ncol != 5)
		return;
	o->have_newest = v[0].type == HS_VAL_INT;
	o->newest = uint_of(&v[0]);
	o->others = uint_of(&v[1]);
	o->others_all = uint_of(&v[2]);
	o->running = uint_of(&v[3]);
	o->lag_ns = uint_of(&v[4]);
}

int hs_store_others(struct hs_store *st, const char *own, uint64_t since_ns,
		    struct hs_store_others *o, char *err, size_t errlen)
{
	const struct hs_value p[] = { { .type = HS_VAL_TEXT, .s = own ? own : "" },
				      int_value(since_ns) };

	memset(o, 0, sizeof(*o));
	return read_rows(st, IS_PG(st) ? HS_ANALYZERS_SQL("$") : HS_ANALYZERS_SQL("?"), p, 2,
			 others_row, o, err, errlen);
}

int hs_store_list(struct hs_store *st, enum hs_listing what, uint64_t limit,
		  const struct hs_rows *out, char *err, size_t errlen)
{
	return IS_PG(st) ? pg_list(PG(st), what, limit, out, err, errlen)
			 : sq_list(SQ(st), what, limit, out, err, errlen);
}

int hs_store_trace_show(struct hs_store *st, uint64_t session, uint64_t no, int64_t prefer,
			const struct hs_rows *trace, const struct hs_rows *hops,
			char *err, size_t errlen)
{
	return IS_PG(st) ? pg_trace_show(PG(st), session, no, prefer, trace, hops, err, errlen)
			 : sq_trace_show(SQ(st), session, no, prefer, trace, hops, err, errlen);
}

int hs_store_heartbeat(struct hs_store *st, const struct hs_heartbeat *hb)
{
	if (!hs_store_an(st))
		return -1;
	return IS_PG(st) ? pg_heartbeat(PG(st), hb) : sq_heartbeat(SQ(st), hb);
}

int hs_store_event(struct hs_store *st, int64_t session, uint64_t ts_ns, int64_t alert,
		   const char *cond, double value, uint64_t wall_ns)
{
	return IS_PG(st) ? pg_event(PG(st), session, ts_ns, alert, cond, value, wall_ns)
			 : sq_event(SQ(st), session, ts_ns, alert, cond, value, wall_ns);
}

int hs_store_probe(struct hs_store *st, const struct hs_store_probe *run, unsigned n,
		   void (*pkt)(void *arg, unsigned i, struct hs_store_probe_pkt *p), void *arg,
		   char *err, size_t errlen)
{
	return IS_PG(st) ? pg_probe(PG(st), run, n, pkt, arg, err, errlen)
			 : sq_probe(SQ(st), run, n, pkt, arg, err, errlen);
}

int hs_store_blame(struct hs_store *st, const struct hs_blame *b, const struct hs_topo *topo,
		   char *err, size_t errlen)
{
	return IS_PG(st) ? pg_blame(PG(st), b, topo, err, errlen)
			 : sq_blame(SQ(st), b, topo, err, errlen);
}

struct hs_store_paths *hs_store_paths_open(struct hs_store *st, const struct hs_topo *topo)
{
	return IS_PG(st) ? pg_paths_open(PG(st), topo)
			 : (struct hs_store_paths *)sq_paths_open(SQ(st), topo);
}

int hs_store_traceroute_path(struct hs_store_paths *p, const struct hs_flowkey *k, int *sw,
			     int max)
{
	if (!p)
		return 0;
	return IS_PG(p) ? pg_traceroute_path(p, k, sw, max)
			: sq_traceroute_path((struct sq_paths *)p, k, sw, max);
}

void hs_store_paths_close(struct hs_store_paths *p)
{
	if (p && IS_PG(p))
		pg_paths_close(p);
	else if (p)
		sq_paths_close((struct sq_paths *)p);
}

int hs_store_snapshot(struct hs_store *st, struct hs_snap *s, char *err, size_t errlen)
{
	return IS_PG(st) ? pg_snapshot(PG(st), s, err, errlen) : sq_snapshot(SQ(st), s, err, errlen);
}

int hs_store_snapshot_load(struct hs_store *st, int64_t id, bool ports, struct hs_snap *s,
			   char *err, size_t errlen)
{
	return IS_PG(st) ? pg_snapshot_load(PG(st), id, ports, s, err, errlen)
			 : sq_snapshot_load(SQ(st), id, ports, s, err, errlen);
}

int hs_store_snapshots(struct hs_store *st, void (*each)(void *arg, const struct hs_snap *s),
		       void *arg, char *err, size_t errlen)
{
	return IS_PG(st) ? pg_snapshots(PG(st), each, arg, err, errlen)
			 : sq_snapshots(SQ(st), each, arg, err, errlen);
}

int hs_store_retention(struct hs_store *st, struct hs_retention *r)
{
	return IS_PG(st) ? pg_retention(PG(st), r) : sq_retention(SQ(st), r);
}

int hs_store_set_retention(struct hs_store *st, const struct hs_retention *r)
{
	return IS_PG(st) ? pg_set_retention(PG(st), r) : sq_set_retention(SQ(st), r);
}

uint64_t hs_store_used_bytes(struct hs_store *st)
{
	return IS_PG(st) ? pg_used_bytes(PG(st)) : sq_used_bytes(SQ(st));
}

int hs_store_prune(struct hs_store *st, uint64_t now_wall_ns, int64_t current, int64_t live,
		   unsigned budget, struct hs_prune *res)
{
	return IS_PG(st) ? pg_prune(PG(st), now_wall_ns, live, budget, res)
			 : sq_prune(SQ(st), now_wall_ns, current, live, budget, res);
}
