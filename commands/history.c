/* history.c - history [sessions|flows|traces|probes|events|control|show ID|prune] [limit N]
 *
 * Reads the SQLite history; the id and the limit are bound, never spliced.
 * Text output is a table aligned over the (limited) rows; JSON is one
 * document, its rows objects keyed by column name: a time column as integer
 * nanoseconds under NAME_ns, a duration likewise, a path and the expected
 * next hops as arrays of switch names.
 */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "console.h"
#include "retention.h"

#define HISTORY_DEFAULT_LIMIT 50

#define PROTO(col) "CASE " col " WHEN 6 THEN 'tcp' WHEN 17 THEN 'udp' WHEN 1 THEN 'icmp' " \
	"WHEN 58 THEN 'icmp6' ELSE " col " END"

static const char q_sessions[] =
	"SELECT id, started, ended, source, "
	"filter, packets, bytes, decode_errors, kernel_drops, traces "
	"FROM sessions ORDER BY id DESC LIMIT ?1";

static const char q_flows[] =
	"SELECT session, src, sport, dst, dport, " PROTO("proto") " AS proto, packets, bytes, "
	"syn, fin, rst, dropped, looped, last_ts "
	"FROM flows ORDER BY session DESC, last_ts DESC, bytes DESC LIMIT ?1";

/* a trace is named as everywhere else: SESSION:N, N its tracer's number */
#define TRACE_REF "t.session || ':' || t.trace_no AS trace"

static const char q_traces[] =
	"SELECT " TRACE_REF ", t.first_ts AS ts, t.src, t.sport, t.dst, t.dport, "
	PROTO("t.proto") " AS proto, t.outcome, "
	"(SELECT group_concat(name, ' > ') FROM (SELECT coalesce(h.switch, h.addr) AS name "
	"FROM hops h WHERE h.trace = t.id ORDER BY h.idx)) AS path, t.expected_next "
	"FROM traces t ORDER BY t.id DESC LIMIT ?1";

static const char q_probes[] =
	"SELECT probe_id, kind, spec, min(sent) AS sent, count(*) AS packets, "
	"sum(outcome = 'delivered') AS delivered, sum(outcome IN ('lost', 'looped')) AS lost, "
	"CAST(round(avg(rtt)) AS INTEGER) AS rtt "
	"FROM probes GROUP BY probe_id ORDER BY probe_id DESC LIMIT ?1";

static const char q_events[] =
	"SELECT id, session, ts, alert, cond, value "
	"FROM events ORDER BY ts DESC, id DESC LIMIT ?1";

static const char q_control[] =
	"SELECT id, session, ts, switch, proto, kind, src, sport, dst, dport, "
	"detail FROM control ORDER BY session DESC, ts DESC, id DESC LIMIT ?1";

static const char q_show[] =
	"SELECT " TRACE_REF ", t.first_ts AS ts, t.src, t.sport, "
	"t.dst, t.dport, " PROTO("t.proto") " AS proto, t.ip_id, t.len, t.outcome, "
	"t.last_switch, t.expected_next, t.nhops, t.probe_id FROM traces t WHERE t.id = ?1";

static const char q_hops[] =
	"SELECT idx + 1 AS idx, coalesce(switch, '-') AS switch, addr, ts, "
	"ts - lag(ts) OVER (ORDER BY idx) AS latency, ttl, tos, session "
	"FROM hops WHERE trace = ?1 ORDER BY idx";

/* a column of nanoseconds since the epoch, or elapsed (a duration) */
static bool time_name(const char *name)
{
	static const char *const names[] = { "ts", "last_ts", "started", "ended", "sent" };

	for (size_t k = 0; k < HS_ARRAY_SIZE(names); k++)
		if (strcmp(name, names[k]) == 0)
			return true;
	return false;
}

static bool dur_name(const char *name)
{
	return strcmp(name, "rtt") == 0 || strcmp(name, "latency") == 0;
}

static bool time_col(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_INTEGER && time_name(sqlite3_column_name(s, i));
}

static bool dur_col(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_INTEGER && dur_name(sqlite3_column_name(s, i));
}

/* a column of switch names joined by a separator (NULL when there are
 * none): its separator, or NULL */
static const char *list_col(sqlite3_stmt *s, int i)
{
	const char *name = sqlite3_column_name(s, i);

	if (strcmp(name, "path") == 0)
		return " > ";
	if (strcmp(name, "expected_next") == 0)
		return "|";
	return NULL;
}

static char *cell_text(sqlite3_stmt *s, int i)
{
	const unsigned char *v = sqlite3_column_text(s, i);
	char b[HS_TIMESTRLEN];

	if (time_col(s, i))
		return hs_xstrdup(hs_fmt_time((uint64_t)sqlite3_column_int64(s, i), b, sizeof(b)));
	if (dur_col(s, i))
		return hs_xstrdup(hs_fmt_duration((uint64_t)sqlite3_column_int64(s, i), b,
						  sizeof(b)));
	return hs_xstrdup(v ? (const char *)v : "-");
}

static void json_cell(struct hs_out *o, sqlite3_stmt *s, int i)
{
	const char *name = sqlite3_column_name(s, i), *sep = list_col(s, i);
	char key[64];

	if (time_name(name) || dur_name(name)) {
		/* "last_ts" is a time as "ts" is: last_ns */
		size_t n = strlen(name);
		if (n > 3 && strcmp(name + n - 3, "_ts") == 0)
			n -= 3;
		snprintf(key, sizeof(key), "%.*s_ns", (int)n, name);
		if (sqlite3_column_type(s, i) == SQLITE_NULL)
			out_null(o, key);
		else
			out_uint(o, key, NULL, (uint64_t)sqlite3_column_int64(s, i));
		return;
	}
	if (sep) {
		const char *v = (const char *)sqlite3_column_text(s, i), *end;
		out_arr_open(o, name);
		while (v && *v) {
			char sw[HS_NAME_MAX + HS_ADDRSTRLEN];
			end = strstr(v, sep);
			size_t n = end ? (size_t)(end - v) : strlen(v);
			snprintf(sw, sizeof(sw), "%.*s", (int)n, v);
			out_str(o, NULL, NULL, sw);
			v = end ? end + strlen(sep) : NULL;
		}
		out_arr_close(o);
		return;
	}
	switch (sqlite3_column_type(s, i)) {
	case SQLITE_INTEGER:
		out_int(o, name, NULL, sqlite3_column_int64(s, i));
		break;
	case SQLITE_FLOAT:
		out_double(o, name, NULL, sqlite3_column_double(s, i));
		break;
	case SQLITE_NULL:
		out_null(o, name);
		break;
	default: {
		const unsigned char *v = sqlite3_column_text(s, i);
		out_str(o, name, NULL, v ? (const char *)v : "");
	}
	}
}

/* run a prepared statement and print its rows; -1 on a database error */
static int print_rows(struct hs_ctx *ctx, sqlite3_stmt *s, const char *key, bool one,
		      const char *empty)
{
	struct hs_out *o = &ctx->out;
	int ncol = sqlite3_column_count(s), rc;
	size_t nrows = 0, cap = 0;
	char **cells = NULL;

	if (!one)
		out_arr_open(o, key);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (o->json) {
			out_obj_open(o, one ? key : NULL);
			for (int i = 0; i < ncol; i++)
				json_cell(o, s, i);
			out_obj_close(o);
			nrows++;
			continue;
		}
		if (nrows == cap) {
			cap = cap ? cap * 2 : 64;
			char **grown = realloc(cells, cap * (size_t)ncol * sizeof(*cells));
			if (!grown)
				break;
			cells = grown;
		}
		for (int i = 0; i < ncol; i++)
			cells[nrows * (size_t)ncol + (size_t)i] = cell_text(s, i);
		nrows++;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		for (size_t i = 0; i < (o->json ? 0 : nrows * (size_t)ncol); i++)
			free(cells[i]);
		free(cells);
		return out_err(o, "cannot read history: %s", sqlite3_errmsg(sqlite3_db_handle(s)));
	}
	if (!one)
		out_arr_close(o);
	if (o->json)
		return 0;
	if (nrows == 0) {
		if (empty)
			out_text(o, "%s\n", empty);
		free(cells);
		return 0;
	}
	int *w = hs_xcalloc((size_t)ncol, sizeof(*w));
	for (int i = 0; i < ncol; i++) {
		w[i] = (int)strlen(sqlite3_column_name(s, i));
		for (size_t r = 0; r < nrows; r++) {
			int l = (int)strlen(cells[r * (size_t)ncol + (size_t)i]);
			if (l > w[i])
				w[i] = l;
		}
	}
	for (int i = 0; i < ncol; i++)
		out_text(o, "%s%-*s", i ? "  " : "", i == ncol - 1 ? 0 : w[i],
			 sqlite3_column_name(s, i));
	out_text(o, "\n");
	for (size_t r = 0; r < nrows; r++) {
		for (int i = 0; i < ncol; i++) {
			char *c = cells[r * (size_t)ncol + (size_t)i];
			out_text(o, "%s%-*s", i ? "  " : "", i == ncol - 1 ? 0 : w[i], c);
			free(c);
		}
		out_text(o, "\n");
	}
	free(w);
	free(cells);
	return 0;
}

/* the rows of sql as the array KEY of the open document, or its one row as
 * the object KEY (one) */
static int run(struct hs_ctx *ctx, struct hs_store *st, const char *sql, int64_t param,
	       const char *key, bool one, const char *empty)
{
	sqlite3_stmt *s = NULL;
	sqlite3 *db = hs_store_db(st);

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return out_err(&ctx->out, "cannot read history '%s': %s", hs_store_path(st),
			       sqlite3_errmsg(db));
	sqlite3_bind_int64(s, 1, param);
	int rc = print_rows(ctx, s, key, one, empty);
	sqlite3_finalize(s);
	return rc < 0 ? HS_CMD_FAIL : HS_CMD_OK;
}

/* the row of trace REF: SESSION:N, or N of the traces in memory's session
 * when it has one, else of the newest session that has it */
static int show_trace(struct hs_ctx *ctx, struct hs_store *st, const char *ref)
{
	sqlite3_stmt *s = NULL;
	sqlite3 *db = hs_store_db(st);
	uint64_t session, no;
	int64_t id = 0;

	if (hs_parse_trace_ref(ref, &session, &no) < 0)
		return out_err(&ctx->out, "history show needs a stored trace id (N, or SESSION:N)");
	if (sqlite3_prepare_v2(db, "SELECT id FROM traces WHERE trace_no = ?2"
			       " AND (?1 = 0 OR session = ?1)"
			       " ORDER BY session = ?3 DESC, session DESC LIMIT 1", -1, &s,
			       NULL) != SQLITE_OK)
		return out_err(&ctx->out, "cannot read history '%s': %s", hs_store_path(st),
			       sqlite3_errmsg(db));
	sqlite3_bind_int64(s, 1, (sqlite3_int64)session);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)no);
	sqlite3_bind_int64(s, 3, ctx->ring_session);
	if (sqlite3_step(s) == SQLITE_ROW)
		id = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (!id)
		return out_err(&ctx->out, "no stored trace %s", ref);
	out_obj_open(&ctx->out, NULL);
	if (run(ctx, st, q_show, id, "trace", true, NULL) != HS_CMD_OK)
		return HS_CMD_FAIL;
	out_nl(&ctx->out);
	int rc = run(ctx, st, q_hops, id, "hops", false, "no hops");
	out_obj_close(&ctx->out);
	return rc;
}

static void prune_counts(struct hs_out *o, const struct hs_prune *p)
{
	out_uint(o, "traces", "%" PRIu64 " traces, ", p->traces);
	out_uint(o, "flows", "%" PRIu64 " flows, ", p->flows);
	out_uint(o, "probes", "%" PRIu64 " probe packets, ", p->probes);
	out_uint(o, "other", "%" PRIu64 " other rows, ", p->other);
	out_uint(o, "sessions", "%" PRIu64 " sessions", p->sessions);
}

/* the retention in force, and what its last pass removed (after 'sessions') */
static void retention_footer(struct hs_ctx *ctx, struct hs_store *st)
{
	struct hs_out *o = &ctx->out;
	struct hs_retention r;
	struct hs_prune p;
	uint64_t when;
	char age[32], size[32], t[HS_TIMESTRLEN];

	if (o->json || hs_store_retention(st, &r) < 0 || (!r.age_ns && !r.max_bytes))
		return;
	out_text(o, "retention:");
	if (r.age_ns)
		out_text(o, " %s", hs_fmt_age(r.age_ns, age, sizeof(age)));
	if (r.max_bytes)
		out_text(o, " %s", hs_fmt_size(r.max_bytes, size, sizeof(size)));
	out_text(o, " (%s in use)", hs_fmt_size(hs_store_used_bytes(st), size, sizeof(size)));
	if (hs_retention_last(ctx, &p, &when)) {
		out_text(o, "; at %s removed ", hs_fmt_time(when, t, sizeof(t)));
		prune_counts(o, &p);
	}
	out_text(o, "\n");
}

/* history prune: enforce the retention now, and say what went */
static int prune(struct hs_ctx *ctx, struct hs_store *st)
{
	struct hs_out *o = &ctx->out;
	struct hs_retention r;
	struct hs_prune p;
	int rc;

	if (hs_store_retention(st, &r) < 0)
		return out_err(o, "history prune: %s", hs_store_errmsg(st));
	if (!r.age_ns && !r.max_bytes)
		return out_err(o, "history prune: the history has no retention "
			       "(set retention AGE|SIZE first)");
	rc = hs_retention_pass(ctx, &p);
	if (rc < 0)
		return HS_CMD_FAIL;
	out_obj_open(o, NULL);
	out_text(o, "removed ");
	prune_counts(o, &p);
	out_bool(o, "interrupted", NULL, rc == 1);
	out_text(o, "%s\n", rc == 1 ? " (interrupted)" : "");
	out_obj_close(o);
	return rc == 1 ? HS_CMD_FAIL : HS_CMD_OK;
}

int cmd_history(struct hs_ctx *ctx, int argc, char **argv)
{
	const char *what = "sessions";
	uint64_t limit = HISTORY_DEFAULT_LIMIT;
	const char *ref = NULL;
	int i = 1;

	if (i < argc && strcmp(argv[i], "limit") != 0) {
		what = argv[i++];
		if (strcmp(what, "show") == 0) {
			if (i >= argc)
				return out_err(&ctx->out, "history show needs a stored trace id "
					       "(N, or SESSION:N)");
			ref = argv[i++];
		} else if (strcmp(what, "prune") == 0) {
			if (i < argc)
				return out_err(&ctx->out, "history prune: unexpected '%s'", argv[i]);
		} else if (strcmp(what, "sessions") && strcmp(what, "flows") &&
			   strcmp(what, "traces") && strcmp(what, "probes") &&
			   strcmp(what, "events") && strcmp(what, "control")) {
			return out_err(&ctx->out, "unknown history table '%s' (sessions, flows, "
				       "traces, probes, events, control, show ID, prune)", what);
		}
	}
	if (i < argc) {
		if (strcmp(argv[i], "limit") != 0 || i + 2 != argc)
			return out_err(&ctx->out, "history: unexpected '%s'", argv[i]);
		if (hs_parse_uint(argv[i + 1], INT64_MAX, &limit) < 0 || limit == 0)
			return out_err(&ctx->out, "bad limit '%s'", argv[i + 1]);
	}

	/* a list of nothing where there is no history; 'show ID' has nothing */
	struct hs_store *st;
	int have = hs_ctx_store_read(ctx, !ref && strcmp(what, "prune") != 0, &st);
	if (have < 0)
		return HS_CMD_FAIL;
	/* what the running capture queued is part of the answer */
	if (have && hs_store_pending(st))
		hs_store_commit(st);
	static const struct {
		const char *what, *sql, *empty;
	} tables[] = {
		{ "sessions", q_sessions, "no sessions" },
		{ "flows", q_flows, "no stored flows" },
		{ "traces", q_traces, "no stored traces" },
		{ "probes", q_probes, "no stored probes" },
		{ "events", q_events, "no stored events" },
		{ "control", q_control, "no stored control messages" },
	};
	int rc = HS_CMD_OK;
	if (strcmp(what, "show") == 0)
		return show_trace(ctx, st, ref);
	if (strcmp(what, "prune") == 0)
		return prune(ctx, st);
	out_obj_open(&ctx->out, NULL);
	for (size_t k = 0; k < HS_ARRAY_SIZE(tables); k++) {
		if (strcmp(what, tables[k].what) != 0)
			continue;
		if (have) {
			rc = run(ctx, st, tables[k].sql, (int64_t)limit, tables[k].what, false,
				 tables[k].empty);
		} else {	/* no history: an empty list */
			out_arr_open(&ctx->out, tables[k].what);
			out_arr_close(&ctx->out);
		}
	}
	if (have && rc == HS_CMD_OK && strcmp(what, "sessions") == 0)
		retention_footer(ctx, st);
	out_obj_close(&ctx->out);
	return rc;
}
