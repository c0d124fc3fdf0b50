/* history.c - history [sessions|flows|traces|probes|events|control|prune|load|show ID]
 *                [limit N]
 *
 * Reads the history through the store's listings (hs_store_list).
 * Text output is a table aligned over the (limited) rows; JSON is one
 * document, its rows objects keyed by column name: a time column as integer
 * nanoseconds under NAME_ns, a duration likewise, a path and the expected
 * next hops as arrays of switch names.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "closed.h"
#include "cmd.h"
#include "console.h"
#include "fabric.h"
#include "follow.h"
#include "interrupt.h"
#include "retention.h"

#define HISTORY_DEFAULT_LIMIT 50

/* a table read back: the column names, and the rows as text (a table); in
 * JSON the array key of the open document (its one row the object key, one),
 * the first table of a document opening it (doc) */
struct table {
	struct hs_out *o;
	const char *key;
	bool one, doc, opened, doc_opened;
	/* the sessions: which are running, which were never ended */
	bool sessions;
	int64_t live;		/* this console's running capture's session, 0 none */
	int64_t *running;	/* the sessions analyzers heard from lately run */
	size_t nrunning;
	char **names;
	int ncol;
	char **cells;
	size_t nrows, cap;
};

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

/* a column of switch names joined by a separator (NULL when there are
 * none): its separator, or NULL */
static const char *list_sep(const char *name)
{
	if (strcmp(name, "path") == 0)
		return " > ";
	if (strcmp(name, "expected_next") == 0)
		return "|";
	return NULL;
}

/* one cell: in JSON a member of the row, in text its value alone (the
 * table aligns it); NULL is null, or "-" */
static void put_cell(struct hs_out *o, const char *name, const struct hs_value *v)
{
	const char *sep = list_sep(name);
	char key[64], fmt[16];

	if (time_name(name) || dur_name(name)) {
		/* "last_ts" is a time as "ts" is: last_ns */
		size_t n = strlen(name);
		if (n > 3 && strcmp(name + n - 3, "_ts") == 0)
			n -= 3;
		snprintf(key, sizeof(key), "%.*s_ns", (int)n, name);
		if (v->type != HS_VAL_INT) {
			out_null(o, key);
			out_text(o, "-");
		} else if (time_name(name)) {
			out_time(o, key, "%s", (uint64_t)v->i);
		} else {
			out_dur(o, key, "%s", v->i);
		}
		return;
	}
	if (sep) {
		/* switch names joined by sep: an array of them */
		const char *p = v->type == HS_VAL_NULL ? NULL : v->s, *end;
		out_arr_open(o, name);
		snprintf(fmt, sizeof(fmt), "%s%%s", sep);
		for (bool first = true; p && *p; first = false) {
			char sw[HS_NAME_MAX + HS_ADDRSTRLEN];
			end = strstr(p, sep);
			size_t n = end ? (size_t)(end - p) : strlen(p);
			snprintf(sw, sizeof(sw), "%.*s", (int)n, p);
			out_str(o, NULL, first ? "%s" : fmt, sw);
			p = end ? end + strlen(sep) : NULL;
		}
		out_arr_close(o);
		if (v->type == HS_VAL_NULL)
			out_text(o, "-");
		return;
	}
	switch (v->type) {
	case HS_VAL_INT:
		out_int(o, name, "%" PRId64, v->i);
		break;
	case HS_VAL_REAL:
		/* the database's own rendering in text */
		out_double(o, name, NULL, v->d);
		out_text(o, "%s", v->s);
		break;
	case HS_VAL_NULL:
		out_null(o, name);
		out_text(o, "-");
		break;
	default:
		out_str(o, name, "%s", v->s ? v->s : "");
	}
}

/* a cell as text, to align */
static char *cell_text(const char *name, const struct hs_value *v)
{
	struct hs_out o;
	char *buf = NULL;
	size_t len = 0;
	FILE *ms = open_memstream(&buf, &len);

	if (!ms)
		abort();
	out_init(&o, ms, NULL, false);
	put_cell(&o, name, v);
	if (fclose(ms) != 0)
		abort();
	return buf;
}

static void table_cols(void *arg, const char *const *names, int ncol)
{
	struct table *t = arg;

	if (t->doc) {
		out_obj_open(t->o, NULL);
		t->doc_opened = true;
	}
	if (!t->one) {
		out_arr_open(t->o, t->key);
		t->opened = true;
	}
	/* the sessions have one more: their state */
	t->ncol = ncol + (t->sessions ? 1 : 0);
	t->names = hs_xcalloc(t->ncol > 0 ? (size_t)t->ncol : 1, sizeof(*t->names));
	for (int i = 0; i < ncol; i++)
		t->names[i] = hs_xstrdup(names[i]);
	if (t->sessions)
		t->names[ncol] = hs_xstrdup("state");
}

/* A session with no end is running when it is this console's capture, or
 * an analyzer's heartbeat in the history names it (another console's or
 * daemon's, on this history or on a shared one); else it was never ended:
 * its console was killed, or could not write its end. */
static const char *session_state(const struct table *t, const struct hs_value *v, int ncol)
{
	const struct hs_value *id = NULL, *ended = NULL;

	for (int i = 0; i < ncol; i++) {
		if (strcmp(t->names[i], "id") == 0)
			id = &v[i];
		else if (strcmp(t->names[i], "ended") == 0)
			ended = &v[i];
	}
	if (!ended || ended->type != HS_VAL_NULL)
		return "ended";
	if (id && id->type == HS_VAL_INT) {
		if (t->live && id->i == t->live)
			return "running";
		for (size_t i = 0; i < t->nrunning; i++)
			if (t->running[i] == id->i)
				return "running";
	}
	return "unended";
}

static void running_row(void *arg, const struct hs_value *v, int ncol)
{
	struct table *t = arg;
	uint64_t now = hs_wall_ns();

	if (ncol != 2 || v[0].type != HS_VAL_INT || v[1].type != HS_VAL_INT ||
	    v[1].i < 0 || (uint64_t)v[1].i + HS_STORE_RUNNING_NS < now)
		return;
	t->running = realloc(t->running, (t->nrunning + 1) * sizeof(*t->running));
	if (!t->running)
		abort();
	t->running[t->nrunning++] = v[0].i;
}

/* JSON rows go out as they come; text rows are kept, each cell rendered
 * alone, to align the table */
static void table_row(void *arg, const struct hs_value *v, int ncol)
{
	struct table *t = arg;
	struct hs_out *o = t->o;
	/* the sessions' last column, of hopscope's own making */
	const char *state = t->sessions ? session_state(t, v, ncol) : NULL;
	struct hs_value sv = { .type = state ? HS_VAL_TEXT : HS_VAL_NULL, .s = state };

	if (o->json) {
		out_obj_open(o, t->one ? t->key : NULL);
		for (int i = 0; i < ncol; i++)
			put_cell(o, t->names[i], &v[i]);
		if (t->sessions)
			put_cell(o, "state", &sv);
		out_obj_close(o);
		t->nrows++;
		return;
	}
	if (t->nrows == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		char **grown = realloc(t->cells, t->cap * (size_t)t->ncol * sizeof(*t->cells));
		if (!grown)
			abort();
		t->cells = grown;
	}
	for (int i = 0; i < ncol; i++)
		t->cells[t->nrows * (size_t)t->ncol + (size_t)i] = cell_text(t->names[i], &v[i]);
	if (t->sessions)
		t->cells[t->nrows * (size_t)t->ncol + (size_t)ncol] = cell_text("state", &sv);
	t->nrows++;
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < (t->o->json ? 0 : t->nrows * (size_t)t->ncol); i++)
		free(t->cells[i]);
	free(t->cells);
	for (int i = 0; i < t->ncol; i++)
		free(t->names[i]);
	free(t->names);
	free(t->running);
}

/* print what was read: a table aligned over its rows, or empty */
static void table_print(struct table *t, const char *empty)
{
	struct hs_out *o = t->o;
	int ncol = t->ncol;

	if (t->opened)
		out_arr_close(o);
	if (o->json)
		return;
	if (t->nrows == 0) {
		if (empty)
			out_text(o, "%s\n", empty);
		return;
	}
	int *w = hs_xcalloc((size_t)ncol, sizeof(*w));
	for (int i = 0; i < ncol; i++) {
		w[i] = (int)strlen(t->names[i]);
		for (size_t r = 0; r < t->nrows; r++) {
			int l = (int)strlen(t->cells[r * (size_t)ncol + (size_t)i]);
			if (l > w[i])
				w[i] = l;
		}
	}
	for (int i = 0; i < ncol; i++)
		out_text(o, "%s%-*s", i ? "  " : "", i == ncol - 1 ? 0 : w[i], t->names[i]);
	out_text(o, "\n");
	for (size_t r = 0; r < t->nrows; r++) {
		for (int i = 0; i < ncol; i++)
			out_text(o, "%s%-*s", i ? "  " : "", i == ncol - 1 ? 0 : w[i],
				 t->cells[r * (size_t)ncol + (size_t)i]);
		out_text(o, "\n");
	}
	free(w);
}

/* the rows of a listing as the array KEY of the open document */
static int list(struct hs_ctx *ctx, struct hs_store *st, enum hs_listing what, uint64_t limit,
		const char *key, const char *empty)
{
	struct table t = { .o = ctx->out, .key = key, .sessions = what == HS_LIST_SESSIONS,
			   .live = ctx->session };
	struct hs_rows rows = { table_cols, table_row, &t }, running = { NULL, running_row, &t };
	char err[512];
	int rc = 0;

	if (t.sessions)
		rc = hs_store_list(st, HS_LIST_RUNNING, UINT32_MAX, &running, err, sizeof(err));
	if (rc == 0)
		rc = hs_store_list(st, what, limit, &rows, err, sizeof(err));
	if (rc == 0)
		table_print(&t, empty);
	table_free(&t);
	if (rc < 0)
		return out_err(ctx->out, "cannot read history '%s': %s", hs_store_name(st), err);
	return HS_CMD_OK;
}

/* the row of trace REF: SESSION:N, or N of the traces in memory's session
 * when it has one, else of the newest session that has it */
static int show_trace(struct hs_ctx *ctx, struct hs_store *st, const char *ref)
{
	struct table tr = { .o = ctx->out, .key = "trace", .one = true, .doc = true },
		     hops = { .o = ctx->out, .key = "hops" };
	struct hs_rows rtr = { table_cols, table_row, &tr }, rhops = { table_cols, table_row, &hops };
	uint64_t session, no;
	char err[512];

	if (hs_parse_trace_ref(ref, &session, &no) < 0)
		return out_err(ctx->out, "history show needs a stored trace id (N, or SESSION:N)");
	int rc = hs_store_trace_show(st, session, no, ctx->ring_session, &rtr, &rhops, err,
				     sizeof(err));
	if (rc > 0) {
		table_print(&tr, NULL);
		out_nl(ctx->out);
		table_print(&hops, "no hops");
	}
	if (tr.doc_opened)
		out_obj_close(ctx->out);
	table_free(&tr);
	table_free(&hops);
	if (rc < 0)
		return out_err(ctx->out, "cannot read history '%s': %s", hs_store_name(st), err);
	if (rc == 0)
		return out_err(ctx->out, "no stored trace %s", ref);
	return HS_CMD_OK;
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
	struct hs_out *o = ctx->out;
	struct hs_retention r;
	struct hs_prune p;
	uint64_t when;
	char age[32], size[32];

	if (hs_store_retention(st, &r) < 0 || (!r.age_ns && !r.max_bytes))
		return;
	out_obj_open(o, "retention");
	out_text(o, "retention:");
	/* the age and the size as the 'set retention' that gave them */
	if (r.age_ns)
		out_text(o, " %s", hs_fmt_age(r.age_ns, age, sizeof(age)));
	if (r.max_bytes)
		out_text(o, " %s", hs_fmt_size(r.max_bytes, size, sizeof(size)));
	out_uint(o, "age_ns", NULL, r.age_ns);
	out_uint(o, "max_bytes", NULL, r.max_bytes);
	uint64_t used = hs_store_used_bytes(st);
	out_uint(o, "used_bytes", NULL, used);
	out_text(o, " (%s in use)", hs_fmt_size(used, size, sizeof(size)));
	if (hs_retention_last(ctx, &p, &when)) {
		out_obj_open(o, "last_pass");
		out_time(o, "at_ns", "; at %s removed ", when);
		prune_counts(o, &p);
		out_obj_close(o);
	}
	out_nl(o);
	out_obj_close(o);
}

/* history prune: enforce the retention now, and say what went */
static int prune(struct hs_ctx *ctx, struct hs_store *st)
{
	struct hs_out *o = ctx->out;
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
	out_bool(o, "interrupted", " (interrupted)", rc == 1);
	out_obj_close(o);
	out_nl(o);
	return rc == 1 ? HS_CMD_FAIL : HS_CMD_OK;
}

static void load_one(void *arg, const struct hs_trace *t, bool foreign)
{
	struct hs_ctx *ctx = arg;

	(void)foreign;
	hs_tracer_adopt(ctx->tracer, t);
}

/* the ranges of time a load reads, one a read (hs_store_ranges) */
struct cuts {
	uint64_t *start;
	size_t n, cap;
};

static void cut(void *arg, uint64_t start, uint64_t count)
{
	struct cuts *c = arg;

	(void)count;
	if (c->n && c->start[c->n - 1] == start)
		return;		/* one time shared by more: one range */
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		uint64_t *grown = realloc(c->start, c->cap * sizeof(*c->start));
		if (!grown)
			abort();
		c->start = grown;
	}
	c->start[c->n++] = start;
}

/* history load [since DURATION]: the stored traces of every analyzer (of
 * the last DURATION of capture time, counted back from the newest),
 * joined by packet, become the console's traces, in place of its last
 * capture's; read a range of time at a time, each of at most a batch of
 * stored traces (hs_fabric_batch), however they spread over time */
static int load(struct hs_ctx *ctx, struct hs_store *st, bool by_since, uint64_t dur)
{
	struct hs_out *o = ctx->out;
	struct hs_fabric_stats all = { 0 };
	struct hs_store_span e;
	struct cuts c = { 0 };
	char err[512];
	uint64_t window = ctx->set.trace_timeout_ns ? ctx->set.trace_timeout_ns : HS_NS_PER_SEC;
	uint64_t since = 0, largest = 0;
	const struct hs_event replaced = { .kind = HS_EV_TRACES_REPLACED };

	if (hs_capture_running(ctx) && ctx->following)
		return out_err(o, "history load: a capture runs, and its view already joins "
			       "every analyzer's stored traces into its own as they come "
			       "(capture status says how far behind it is)");
	if (hs_capture_running(ctx))
		return out_err(o, "history load: a capture runs, whose traces are the "
			       "console's (capture stop first; or set view fabric before the "
			       "capture, and its view joins every analyzer's stored traces into "
			       "its own as they come)");
	if (by_since) {
		if (hs_store_span(st, 0, INT64_MAX, false, &e, err, sizeof(err)) < 0)
			return out_err(o, "cannot read history '%s': %s", hs_store_name(st), err);
		since = e.any && e.newest > dur ? e.newest - dur : 0;
	}
	if (hs_store_ranges(st, since, hs_fabric_batch(), cut, &c, err, sizeof(err)) < 0) {
		free(c.start);
		return out_err(o, "cannot read history '%s': %s", hs_store_name(st), err);
	}
	hs_tracer_clear(ctx->tracer);
	hs_flowtab_clear(ctx->flows);
	hs_follow_reset(ctx);
	ctx->ring_session = 0;
	/* what the analyses say of them: whether every trace is there */
	hs_closed_kept(st, &ctx->loaded_kept, &ctx->loaded_traced);
	/* and whoever kept them as they were published forgets them too */
	hs_publish_event(&ctx->subs, &replaced);
	for (size_t i = 0; i < c.n; i++) {
		/* the last range is open: what was stored since is read too */
		struct hs_fabric_range r = {
			.since_ns = c.start[i], .until_ns = i + 1 < c.n ? c.start[i + 1] : 0,
			.window_ns = window,
		};
		struct hs_fabric_stats fs;
		if (hs_interrupted()) {
			free(c.start);
			return out_err(o, "history load: interrupted, %" PRIu64 " traces loaded",
				       all.traces);
		}
		if (hs_fabric_load(st, ctx->topo, &r, load_one, ctx, &fs, err, sizeof(err)) < 0) {
			free(c.start);
			return out_err(o, "cannot read history '%s': %s", hs_store_name(st), err);
		}
		all.stored += fs.stored;
		all.traces += fs.traces;
		all.joined += fs.joined;
		if (fs.stored > largest)
			largest = fs.stored;
	}
	free(c.start);
	/* whoever kept the traces as they were published has the newest again */
	hs_publish_event(&ctx->subs, &replaced);
	out_obj_open(o, NULL);
	out_uint(o, "traces", "%" PRIu64 " traces loaded", all.traces);
	out_uint(o, "stored", " from %" PRIu64 " stored", all.stored);
	out_uint(o, "joined", " (%" PRIu64 " joined from parts that analyzers stored apart)",
		 all.joined);
	if (by_since) {
		char d[32];
		out_uint(o, "since_ns", NULL, since);
		out_text(o, ", the last %s", hs_fmt_duration(dur, d, sizeof(d)));
	}
	out_uint(o, "ranges", ", read in %" PRIu64 " ranges of time", (uint64_t)c.n);
	out_uint(o, "range_stored", " of at most %" PRIu64 " stored traces", largest);
	out_nl(o);
	out_obj_close(o);
	if (!ctx->topo)
		out_warn(o, "no topology: the traces' outcomes are unknown (topo load FILE, "
			 "then history load again)");
	return HS_CMD_OK;
}

int cmd_history(struct hs_ctx *ctx, int argc, char **argv)
{
	const char *what = "sessions";
	uint64_t limit = HISTORY_DEFAULT_LIMIT;
	const char *ref = NULL;
	bool by_since = false;
	uint64_t load_since = 0;
	int i = 1;

	if (i < argc && strcmp(argv[i], "limit") != 0) {
		what = argv[i++];
		if (strcmp(what, "show") == 0) {
			if (i >= argc)
				return out_err(ctx->out, "history show needs a stored trace id "
					       "(N, or SESSION:N)");
			ref = argv[i++];
		} else if (strcmp(what, "load") == 0) {
			if (i < argc && strcmp(argv[i], "since") == 0) {
				if (i + 1 >= argc)
					return out_err(ctx->out, "history load since needs a "
						       "duration (e.g. 10m, 1h, 7d)");
				if (hs_parse_duration(argv[i + 1], &load_since) < 0 ||
				    !load_since)
					return out_err(ctx->out, "history load: bad duration '%s' "
						       "(e.g. 10m, 1h, 7d)", argv[i + 1]);
				by_since = true;
				i += 2;
			}
			if (i < argc)
				return out_err(ctx->out, "history load: unexpected '%s'", argv[i]);
		} else if (strcmp(what, "prune") == 0) {
			if (i < argc)
				return out_err(ctx->out, "history %s: unexpected '%s'", what, argv[i]);
		} else if (strcmp(what, "sessions") && strcmp(what, "flows") &&
			   strcmp(what, "traces") && strcmp(what, "probes") &&
			   strcmp(what, "events") && strcmp(what, "control")) {
			return out_err(ctx->out, "unknown history table '%s' (sessions, flows, "
				       "traces, probes, events, control, show ID, prune, load)", what);
		}
	}
	if (i < argc) {
		if (strcmp(argv[i], "limit") != 0 || i + 2 != argc)
			return out_err(ctx->out, "history: unexpected '%s'", argv[i]);
		if (hs_parse_uint(argv[i + 1], INT64_MAX, &limit) < 0 || limit == 0)
			return out_err(ctx->out, "history: bad limit '%s' (a number from 1)", argv[i + 1]);
	}

	/* a list of nothing where there is no history; 'show ID' has nothing */
	struct hs_store *st;
	int have = hs_ctx_store_read(ctx, !ref && strcmp(what, "prune") != 0 &&
				     strcmp(what, "load") != 0, &st);
	if (have < 0)
		return HS_CMD_FAIL;
	/* what the running capture queued is part of the answer */
	if (have && hs_store_pending(st))
		hs_store_commit(st);
	static const struct {
		const char *what;
		enum hs_listing list;
		const char *empty;
	} tables[] = {
		{ "sessions", HS_LIST_SESSIONS, "no sessions" },
		{ "flows", HS_LIST_FLOWS, "no stored flows" },
		{ "traces", HS_LIST_TRACES, "no stored traces" },
		{ "probes", HS_LIST_PROBES, "no stored probes" },
		{ "events", HS_LIST_EVENTS, "no stored events" },
		{ "control", HS_LIST_CONTROL, "no stored control messages" },
	};
	int rc = HS_CMD_OK;
	if (strcmp(what, "show") == 0)
		return show_trace(ctx, st, ref);
	if (strcmp(what, "prune") == 0)
		return prune(ctx, st);
	if (strcmp(what, "load") == 0)
		return load(ctx, st, by_since, load_since);
	out_obj_open(ctx->out, NULL);
	for (size_t k = 0; k < HS_ARRAY_SIZE(tables); k++) {
		if (strcmp(what, tables[k].what) != 0)
			continue;
		if (have) {
			rc = list(ctx, st, tables[k].list, limit, tables[k].what, tables[k].empty);
		} else {	/* no history: an empty list */
			out_arr_open(ctx->out, tables[k].what);
			out_arr_close(ctx->out);
		}
	}
	if (have && rc == HS_CMD_OK && strcmp(what, "sessions") == 0)
		retention_footer(ctx, st);
	out_obj_close(ctx->out);
	return rc;
}
