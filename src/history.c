/* history.c - the history read back, and the rows the analyses keep
 *
 * The listings of 'history', a stored trace with its hops and the user's
 * read-only query hand their rows over as typed values (store.h), so no
 * caller sees SQL or the database's types. Every value from the user is
 * bound, never spliced into SQL.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "interrupt.h"
#include "snapshot.h"
#include "store_int.h"

/* a column's value; the type first: SQLite's conversions change it */
static void value(sqlite3_stmt *s, int i, struct hs_value *v)
{
	switch (sqlite3_column_type(s, i)) {
	case SQLITE_INTEGER:
		v->type = HS_VAL_INT;
		v->i = sqlite3_column_int64(s, i);
		break;
	case SQLITE_FLOAT:
		v->type = HS_VAL_REAL;
		v->d = sqlite3_column_double(s, i);
		break;
	case SQLITE_NULL:
		v->type = HS_VAL_NULL;
		v->s = NULL;
		v->len = 0;
		return;
	case SQLITE_BLOB:
		v->type = HS_VAL_BLOB;
		v->s = sqlite3_column_blob(s, i);
		v->len = (size_t)sqlite3_column_bytes(s, i);
		return;
	default:
		v->type = HS_VAL_TEXT;
		break;
	}
	v->s = (const char *)sqlite3_column_text(s, i);
	v->len = (size_t)sqlite3_column_bytes(s, i);
}

/* hand a statement's rows over: SQLITE_DONE, or the code it stopped on */
static int rows_out(sqlite3_stmt *s, const struct hs_rows *out)
{
	int ncol = sqlite3_column_count(s), rc;
	size_t n = ncol > 0 ? (size_t)ncol : 1;
	const char **names = hs_xcalloc(n, sizeof(*names));
	struct hs_value *v = hs_xcalloc(n, sizeof(*v));

	for (int i = 0; i < ncol; i++)
		names[i] = sqlite3_column_name(s, i);
	if (out->cols)
		out->cols(out->arg, names, ncol);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		for (int i = 0; i < ncol; i++)
			value(s, i, &v[i]);
		out->row(out->arg, v, ncol);
	}
	free(v);
	free(names);
	return rc;
}

int sq_query_ro(struct sq_store *st, const char *sql, const struct hs_rows *out,
		      char *err, size_t errlen)
{
	sqlite3 *db = sq_db(st);
	sqlite3_stmt *s = sq_prepare_ro(st, sql, err, errlen);

	if (!s)
		return HS_STORE_REFUSED;
	/* a signal stops the query (a recursive one may have no end) */
	sqlite3_progress_handler(db, 1000, hs_interrupt_sqlite, NULL);
	int rc = rows_out(s, out);
	if (rc != SQLITE_DONE)
		hs_errf(err, errlen, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(s);
	sqlite3_progress_handler(db, 0, NULL, NULL);
	return rc == SQLITE_DONE ? 0 : HS_STORE_FAILED;
}

/* ---- the listings ------------------------------------------------------------ */

#define SQL_P1 "?1"
#define SQL_JOIN(x, sep) "group_concat(" x ", " sep ")"
/* as the hops view (store.c) reads a trace's hop_list */
#define SQL_HOPS_OF(list) "json_each(" list ") h" \
	" LEFT JOIN mirror_sources m ON m.id = json_extract(h.value, '$[0]')"
#define SQL_HOP_ROWS ", " SQL_HOPS_OF("t.hop_list")
#define SQL_HOP_IDX "h.key"
#define SQL_HOP(n) "json_extract(h.value, '$[" #n "]')"
#define SQL_HOP0(n) "json_extract(t.hop_list, '$[0][" #n "]')"
#include "history_sql.h"

int sq_read(struct sq_store *st, const char *sql, const struct hs_value *param, int n,
	    const struct hs_rows *out, char *err, size_t errlen)
{
	sqlite3 *db = sq_db(st);
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return hs_errf(err, errlen, "%s", sqlite3_errmsg(db));
	for (int i = 0; i < n; i++)
		if (param[i].type == HS_VAL_INT)
			sqlite3_bind_int64(s, i + 1, param[i].i);
		else if (param[i].type == HS_VAL_TEXT)
			sqlite3_bind_text(s, i + 1, param[i].s, -1, SQLITE_TRANSIENT);
	/* a signal stops it, as it stops the user's queries */
	sqlite3_progress_handler(db, 1000, hs_interrupt_sqlite, NULL);
	int rc = rows_out(s, out);
	if (rc != SQLITE_DONE)
		hs_errf(err, errlen, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(s);
	sqlite3_progress_handler(db, 0, NULL, NULL);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* run sql with ?1 bound to param, its rows to out; 0 or -1 with err set */
static int run(struct sq_store *st, const char *sql, int64_t param, const struct hs_rows *out,
	       char *err, size_t errlen)
{
	const struct hs_value v = { .type = HS_VAL_INT, .i = param };

	return sq_read(st, sql, &v, 1, out, err, errlen);
}

int sq_parts(struct sq_store *st, bool range, uint64_t from, uint64_t since, uint64_t to,
	     const struct hs_rows *out, char *err, size_t errlen)
{
	char sql[2048];

	if (range)
		snprintf(sql, sizeof(sql), SQL_PARTS_RANGE, from, to);
	else
		snprintf(sql, sizeof(sql), SQL_PARTS, from, since, since, to);
	return run(st, sql, 0, out, err, errlen);
}

int sq_list(struct sq_store *st, enum hs_listing what, uint64_t limit,
		  const struct hs_rows *out, char *err, size_t errlen)
{
	if ((size_t)what >= HS_ARRAY_SIZE(listing_sql))
		return hs_errf(err, errlen, "no such listing");
	return run(st, listing_sql[what], limit > INT64_MAX ? INT64_MAX : (int64_t)limit, out,
		   err, errlen);
}

int sq_trace_show(struct sq_store *st, uint64_t session, uint64_t no, int64_t prefer,
			const struct hs_rows *trace, const struct hs_rows *hops,
			char *err, size_t errlen)
{
	sqlite3 *db = sq_db(st);
	sqlite3_stmt *s = NULL;
	int64_t id = 0;

	if (sqlite3_prepare_v2(db, SQL_TRACE_FIND("?1", "?2", "?3"), -1, &s, NULL) != SQLITE_OK)
		return hs_errf(err, errlen, "%s", sqlite3_errmsg(db));
	sqlite3_bind_int64(s, 1, (sqlite3_int64)session);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)no);
	sqlite3_bind_int64(s, 3, prefer);
	if (sqlite3_step(s) == SQLITE_ROW)
		id = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (!id)
		return 0;
	if (run(st, q_show, id, trace, err, errlen) < 0 ||
	    run(st, q_hops, id, hops, err, errlen) < 0)
		return -1;
	return 1;
}

/* ---- the analyses' rows ---------------------------------------------------------- */

int sq_event(struct sq_store *st, int64_t session, uint64_t ts_ns, int64_t alert,
		   const char *cond, double value, uint64_t wall_ns)
{
	sqlite3 *db = sq_db(st);
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(db,
		"INSERT INTO events(session, ts, alert, cond, value, wall, analyzer)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", -1, &s, NULL) != SQLITE_OK)
		return -1;
	if (session > 0)
		sqlite3_bind_int64(s, 1, session);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)ts_ns);
	sqlite3_bind_int64(s, 3, alert);
	sqlite3_bind_text(s, 4, cond, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(s, 5, value);
	sqlite3_bind_int64(s, 6, (sqlite3_int64)wall_ns);
	if (hs_store_an((const struct hs_store *)st))
		sqlite3_bind_text(s, 7, hs_store_an((const struct hs_store *)st), -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

int sq_heartbeat(struct sq_store *st, const struct hs_heartbeat *hb)
{
	sqlite3 *db = sq_db(st);
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(db, HS_HEARTBEAT_SQL("?"), -1, &s, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(s, 1, hs_store_an((const struct hs_store *)st), -1, SQLITE_STATIC);
	if (hb->session > 0)
		sqlite3_bind_int64(s, 2, hb->session);
	sqlite3_bind_int64(s, 3, (sqlite3_int64)hb->seen_ns);
	sqlite3_bind_int64(s, 4, (sqlite3_int64)hb->packets);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)hb->kernel_drops);
	sqlite3_bind_double(s, 6, hb->rate);
	sqlite3_bind_int64(s, 7, (sqlite3_int64)hb->queued);
	if (hb->lag_ns)
		sqlite3_bind_int64(s, 8, (sqlite3_int64)hb->lag_ns);
	sqlite3_bind_int64(s, 9, (sqlite3_int64)hb->lost);
	uint64_t newest = sq_newest(st);
	if (newest)
		sqlite3_bind_int64(s, 10, (sqlite3_int64)newest);
	if (hb->history)
		sqlite3_bind_text(s, 11, hb->history, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

int sq_probe(struct sq_store *st, const struct hs_store_probe *run, unsigned n,
		   void (*pkt)(void *arg, unsigned i, struct hs_store_probe_pkt *p), void *arg,
		   char *err, size_t errlen)
{
	sqlite3 *db = sq_db(st);
	sqlite3_stmt *sp = NULL, *sh = NULL;
	char a1[HS_ADDRSTRLEN], a2[HS_ADDRSTRLEN], ab[HS_ADDRSTRLEN];
	struct hs_store_probe_pkt *p = hs_xcalloc(1, sizeof(*p));
	const char *an = hs_store_probe_an((const struct hs_store *)st);
	int rc;

	bool own_tx = sqlite3_get_autocommit(db) != 0;
	if (own_tx && sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	if (sqlite3_prepare_v2(db,
		"INSERT OR REPLACE INTO probes(probe_id, seq, session, kind, spec, src, dst, proto,"
		" sport, dport, ttl, sent, outcome, lost_after, rtt, analyzer)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
		-1, &sp, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
		"INSERT OR REPLACE INTO probe_hops(probe_id, seq, idx, switch, addr, ts, hw_ts, ttl,"
		" analyzer) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", -1, &sh, NULL) != SQLITE_OK)
		goto fail;
	hs_addr_str(&run->src, a1, sizeof(a1));
	hs_addr_str(&run->dst, a2, sizeof(a2));
	for (unsigned i = 0; i < n; i++) {
		memset(p, 0, sizeof(*p));
		pkt(arg, i, p);
		sqlite3_bind_int64(sp, 1, run->probe_id);
		sqlite3_bind_int64(sp, 2, p->seq);
		if (run->session > 0)
			sqlite3_bind_int64(sp, 3, run->session);
		sqlite3_bind_text(sp, 4, run->kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(sp, 5, run->spec, -1, SQLITE_STATIC);
		sqlite3_bind_text(sp, 6, a1, -1, SQLITE_STATIC);
		sqlite3_bind_text(sp, 7, a2, -1, SQLITE_STATIC);
		sqlite3_bind_int(sp, 8, run->proto);
		sqlite3_bind_int(sp, 9, p->sport);
		sqlite3_bind_int(sp, 10, run->dport);
		sqlite3_bind_int(sp, 11, p->ttl);
		sqlite3_bind_int64(sp, 12, (sqlite3_int64)p->sent_ns);
		sqlite3_bind_text(sp, 13, p->outcome, -1, SQLITE_STATIC);
		if (p->lost_after[0])
			sqlite3_bind_text(sp, 14, p->lost_after, -1, SQLITE_STATIC);
		if (p->have_rtt)
			sqlite3_bind_int64(sp, 15, (sqlite3_int64)p->rtt_ns);
		sqlite3_bind_text(sp, 16, an, -1, SQLITE_STATIC);
		rc = sqlite3_step(sp);
		sqlite3_reset(sp);
		sqlite3_clear_bindings(sp);
		if (rc != SQLITE_DONE)
			goto fail;
		for (int k = 0; k < p->nhops && k < HS_TRACE_MAX_HOPS; k++) {
			const struct hs_store_probe_hop *h = &p->hops[k];
			sqlite3_bind_int64(sh, 1, run->probe_id);
			sqlite3_bind_int64(sh, 2, p->seq);
			sqlite3_bind_int(sh, 3, k);
			sqlite3_bind_text(sh, 4, h->sw, -1, SQLITE_STATIC);
			sqlite3_bind_text(sh, 5, hs_addr_str(&h->addr, ab, sizeof(ab)), -1,
					  SQLITE_TRANSIENT);
			sqlite3_bind_int64(sh, 6, (sqlite3_int64)h->ts_ns);
			if (h->hw_ns)
				sqlite3_bind_int64(sh, 7, (sqlite3_int64)h->hw_ns);
			sqlite3_bind_int(sh, 8, h->ttl);
			sqlite3_bind_text(sh, 9, an, -1, SQLITE_STATIC);
			rc = sqlite3_step(sh);
			sqlite3_reset(sh);
			sqlite3_clear_bindings(sh);
			if (rc != SQLITE_DONE)
				goto fail;
		}
	}
	sqlite3_finalize(sp);
	sqlite3_finalize(sh);
	sp = sh = NULL;
	if (own_tx && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	free(p);
	return 0;
fail:
	hs_errf(err, errlen, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(sp);
	sqlite3_finalize(sh);
	if (own_tx && !sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	free(p);
	return -1;
}

static const char *swname(const struct hs_topo *topo, int sw)
{
	return sw >= 0 && sw < topo->nsw ? topo->sw[sw].name : "?";
}

int sq_blame(struct sq_store *st, const struct hs_blame *b, const struct hs_topo *topo,
		   char *err, size_t errlen)
{
	sqlite3 *db = sq_db(st);
	sqlite3_stmt *del = NULL, *ins = NULL;

	sq_commit(st);
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	if (sqlite3_prepare_v2(db, "DELETE FROM blame WHERE epoch_start = ?1", -1, &del,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO blame(epoch_start, a, b, votes, flows)"
			       " VALUES (?1, ?2, ?3, ?4, ?5)", -1, &ins, NULL) != SQLITE_OK)
		goto fail;
	for (size_t e = 0; e < b->nepochs; e++) {
		const struct hs_blame_epoch *ep = &b->epochs[e];
		sqlite3_bind_int64(del, 1, (sqlite3_int64)ep->start);
		if (sqlite3_step(del) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(del);
		for (size_t i = 0; i < ep->nlinks; i++) {
			const struct hs_blame_link *l = &b->links[ep->link_off + i];
			if (!l->reported)
				continue;
			sqlite3_bind_int64(ins, 1, (sqlite3_int64)ep->start);
			sqlite3_bind_text(ins, 2, swname(topo, l->a), -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 3, swname(topo, l->b), -1, SQLITE_TRANSIENT);
			sqlite3_bind_double(ins, 4, l->votes);
			sqlite3_bind_int64(ins, 5, l->flows);
			if (sqlite3_step(ins) != SQLITE_DONE)
				goto fail;
			sqlite3_reset(ins);
		}
	}
	sqlite3_finalize(del);
	sqlite3_finalize(ins);
	del = ins = NULL;
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	return 0;
fail:
	hs_errf(err, errlen, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(del);
	sqlite3_finalize(ins);
	if (!sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

struct sq_paths {
	struct hs_store_paths base;	/* first: the handle callers hold */
	const struct hs_topo *topo;
	sqlite3_stmt *q;
};

struct sq_paths *sq_paths_open(struct sq_store *st, const struct hs_topo *topo)
{
	struct sq_paths *p = hs_xcalloc(1, sizeof(*p));

	p->base.engine = HS_ENGINE_SQLITE;
	p->topo = topo;
	if (sqlite3_prepare_v2(sq_db(st), SQL_TRACEROUTE_PATH("?1", "?2", "?3", "?4", "?5"), -1,
			       &p->q, NULL) != SQLITE_OK) {
		sqlite3_finalize(p->q);
		free(p);
		return NULL;
	}
	return p;
}

int sq_traceroute_path(struct sq_paths *p, const struct hs_flowkey *k, int *sw,
			     int max)
{
	char s[HS_ADDRSTRLEN], d[HS_ADDRSTRLEN];
	int n = 0;

	if (!p)
		return 0;
	sqlite3_bind_text(p->q, 1, hs_addr_str(&k->src, s, sizeof(s)), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(p->q, 2, hs_addr_str(&k->dst, d, sizeof(d)), -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(p->q, 3, k->proto);
	sqlite3_bind_int(p->q, 4, k->sport);
	sqlite3_bind_int(p->q, 5, k->dport);
	while (n < max && sqlite3_step(p->q) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(p->q, 0);
		int x = name ? hs_topo_switch_by_name(p->topo, name) : -1;
		if (x >= 0 && (n == 0 || sw[n - 1] != x))
			sw[n++] = x;
	}
	sqlite3_reset(p->q);
	return n;
}

void sq_paths_close(struct sq_paths *p)
{
	if (!p)
		return;
	sqlite3_finalize(p->q);
	free(p);
}

/* ---- snapshots --------------------------------------------------------------- */

static int db_fail(sqlite3 *db, char *err, size_t errlen, const char *what)
{
	return hs_errf(err, errlen, "%s: %s", what, sqlite3_errmsg(db));
}

int sq_snapshot(struct sq_store *store, struct hs_snap *s, char *err, size_t errlen)
{
	sqlite3 *db = sq_db(store);
	sqlite3_stmt *hd = NULL, *pc = NULL;

	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(db, err, errlen, "cannot store the snapshot");
	if (sqlite3_prepare_v2(db, "INSERT INTO snapshots(taken, target, spread, switches, ports,"
			       " session) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &hd, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO snapshot_counters(snapshot, switch, port, read_ts,"
			       " rx_packets, rx_bytes, rx_drops, tx_packets, tx_bytes, tx_drops,"
			       " backlog_bytes, backlog_packets)"
			       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
			       -1, &pc, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(hd, 1, (sqlite3_int64)s->taken_ns);
	sqlite3_bind_int64(hd, 2, (sqlite3_int64)s->target_ns);
	sqlite3_bind_int64(hd, 3, (sqlite3_int64)s->spread_ns);
	sqlite3_bind_int64(hd, 4, s->nswitches);
	sqlite3_bind_int64(hd, 5, (sqlite3_int64)s->nports);
	if (s->session > 0)
		sqlite3_bind_int64(hd, 6, s->session);
	else
		sqlite3_bind_null(hd, 6);
	if (sqlite3_step(hd) != SQLITE_DONE)
		goto fail;
	int64_t id = sqlite3_last_insert_rowid(db);
	for (size_t i = 0; i < s->nports; i++) {
		const struct hs_snap_port *p = &s->ports[i];

		sqlite3_bind_int64(pc, 1, id);
		sqlite3_bind_text(pc, 2, p->sw, -1, SQLITE_STATIC);
		sqlite3_bind_text(pc, 3, p->port, -1, SQLITE_STATIC);
		sqlite3_bind_int64(pc, 4, (sqlite3_int64)p->read_ns);
		for (int k = 0; k < HS_SNAP__NCOUNTERS; k++)
			sqlite3_bind_int64(pc, 5 + k, (sqlite3_int64)p->c[k]);
		if (p->has_backlog) {
			sqlite3_bind_int64(pc, 11, (sqlite3_int64)p->backlog_bytes);
			sqlite3_bind_int64(pc, 12, (sqlite3_int64)p->backlog_packets);
		} else {
			sqlite3_bind_null(pc, 11);
			sqlite3_bind_null(pc, 12);
		}
		if (sqlite3_step(pc) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(pc);
	}
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_finalize(hd);
	sqlite3_finalize(pc);
	s->id = id;
	return 0;
fail:
	db_fail(db, err, errlen, "cannot store the snapshot");
	sqlite3_finalize(hd);
	sqlite3_finalize(pc);
	if (!sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

int sq_snapshot_load(struct sq_store *store, int64_t id, bool ports, struct hs_snap *s,
			   char *err, size_t errlen)
{
	sqlite3 *db = sq_db(store);
	sqlite3_stmt *st = NULL;
	int rc;
	size_t cap = 0;

	memset(s, 0, sizeof(*s));
	if (sqlite3_prepare_v2(db, "SELECT taken, target, spread, switches, ports, session"
			       " FROM snapshots WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, err, errlen, "cannot read snapshots");
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		if (rc == SQLITE_DONE)
			return 1;
		return db_fail(db, err, errlen, "cannot read snapshots");
	}
	s->id = id;
	s->taken_ns = (uint64_t)sqlite3_column_int64(st, 0);
	s->target_ns = (uint64_t)sqlite3_column_int64(st, 1);
	s->spread_ns = (uint64_t)sqlite3_column_int64(st, 2);
	s->nswitches = (uint32_t)sqlite3_column_int64(st, 3);
	s->session = sqlite3_column_int64(st, 5);
	sqlite3_finalize(st);
	if (!ports)
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT switch, port, read_ts, rx_packets, rx_bytes, rx_drops,"
			       " tx_packets, tx_bytes, tx_drops, backlog_bytes, backlog_packets"
			       " FROM snapshot_counters WHERE snapshot = ?1 ORDER BY rowid",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, err, errlen, "cannot read snapshot counters");
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct hs_snap_port *p;
		const unsigned char *sw = sqlite3_column_text(st, 0), *port = sqlite3_column_text(st, 1);

		if (s->nports == cap) {
			cap = cap ? 2 * cap : 64;
			s->ports = realloc(s->ports, cap * sizeof(*s->ports));
			if (!s->ports)
				abort();
		}
		p = &s->ports[s->nports++];
		memset(p, 0, sizeof(*p));
		snprintf(p->sw, sizeof(p->sw), "%s", sw ? (const char *)sw : "?");
		snprintf(p->port, sizeof(p->port), "%s", port ? (const char *)port : "?");
		p->read_ns = (uint64_t)sqlite3_column_int64(st, 2);
		for (int k = 0; k < HS_SNAP__NCOUNTERS; k++)
			p->c[k] = (uint64_t)sqlite3_column_int64(st, 3 + k);
		p->has_backlog = sqlite3_column_type(st, 9) != SQLITE_NULL;
		p->backlog_bytes = (uint64_t)sqlite3_column_int64(st, 9);
		p->backlog_packets = (uint64_t)sqlite3_column_int64(st, 10);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		hs_snap_free(s);
		return db_fail(db, err, errlen, "cannot read snapshot counters");
	}
	return 0;
}

int sq_snapshots(struct sq_store *store, void (*each)(void *arg, const struct hs_snap *s),
		       void *arg, char *err, size_t errlen)
{
	sqlite3 *db = sq_db(store);
	sqlite3_stmt *q = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT id, taken, target, spread, switches, ports,"
			       " session FROM snapshots ORDER BY id", -1, &q, NULL) != SQLITE_OK)
		return hs_errf(err, errlen, "%s", sqlite3_errmsg(db));
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		struct hs_snap s = {
			.id = sqlite3_column_int64(q, 0),
			.taken_ns = (uint64_t)sqlite3_column_int64(q, 1),
			.target_ns = (uint64_t)sqlite3_column_int64(q, 2),
			.spread_ns = (uint64_t)sqlite3_column_int64(q, 3),
			.nswitches = (uint32_t)sqlite3_column_int64(q, 4),
			.nports = (size_t)sqlite3_column_int64(q, 5),
			.session = sqlite3_column_int64(q, 6),
		};
		each(arg, &s);
	}
	if (rc != SQLITE_DONE)
		hs_errf(err, errlen, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(q);
	return rc == SQLITE_DONE ? 0 : -1;
}

uint64_t hs_store_memory(void)
{
	return (uint64_t)sqlite3_memory_used();
}
