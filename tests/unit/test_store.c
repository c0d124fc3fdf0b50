/* test_store.c - the SQLite history: create, reopen, refuse, batch, read-only SQL,
 * the listings read back */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#define HS_XSTR(x) #x
#define HS_STR(x) HS_XSTR(x)

#include "interrupt.h"
#include "store.h"

#define T0 (1700000000ULL * HS_NS_PER_SEC)

struct fixture {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/hs-store-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/h.db", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char p[192];
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };

	for (size_t i = 0; i < HS_ARRAY_SIZE(sfx); i++) {
		snprintf(p, sizeof(p), "%s%s", f->path, sfx[i]);
		unlink(p);
	}
	rmdir(f->dir);
	free(f);
	return 0;
}

static struct hs_store *open_ok(const char *path)
{
	char err[512];
	struct hs_store *st = hs_store_open(path, err, sizeof(err));

	if (!st) {
		fail_msg("%s", err);
		abort();	/* not reached: says so to the compiler */
	}
	return st;
}

/* what hs_store_query_ro handed over: the names, the first rows' values */
#define GOT_MAX 8
struct got {
	int ncol, nrows;
	char names[GOT_MAX][32];
	struct hs_value v[GOT_MAX][GOT_MAX];
	char text[GOT_MAX][GOT_MAX][64];
};

static void got_cols(void *arg, const char *const *names, int ncol)
{
	struct got *g = arg;

	g->ncol = ncol;
	for (int i = 0; i < ncol && i < GOT_MAX; i++)
		snprintf(g->names[i], sizeof(g->names[i]), "%s", names[i]);
}

static void got_row(void *arg, const struct hs_value *v, int ncol)
{
	struct got *g = arg;

	assert_int_equal(ncol, g->ncol);
	for (int i = 0; g->nrows < GOT_MAX && i < ncol && i < GOT_MAX; i++) {
		g->v[g->nrows][i] = v[i];
		snprintf(g->text[g->nrows][i], sizeof(g->text[0][0]), "%s", v[i].s ? v[i].s : "");
		g->v[g->nrows][i].s = NULL;	/* lasts for the call only */
	}
	g->nrows++;
}

static int query_ro(struct hs_store *st, const char *sql, struct got *g, char *err, size_t len)
{
	struct hs_rows rows = { got_cols, got_row, g };

	memset(g, 0, sizeof(*g));
	err[0] = '\0';
	return hs_store_query_ro(st, sql, &rows, err, len);
}

static int64_t q1(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	int64_t v = -1;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

static char *qtext(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	char *v = NULL;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		v = strdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

static void exec(const char *path, const char *sql)
{
	sqlite3 *db;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(db);
}

static void *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf;

	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	*len = (size_t)ftell(fp);
	rewind(fp);
	buf = malloc(*len + 1);
	assert_int_equal(fread(buf, 1, *len, fp), *len);
	fclose(fp);
	return buf;
}

static struct hs_addr A(const char *s)
{
	struct hs_addr a;

	assert_int_equal(hs_addr_parse(s, &a), 0);
	return a;
}

static struct hs_topo *topo(void)
{
	char err[256];
	struct hs_topo *t = hs_topo_parse("switch leaf1 role leaf mirror 10.255.0.3\n"
					  "switch spine1 role spine mirror 10.255.0.1\n"
					  "switch spine2 role spine mirror 10.255.0.2\n"
					  "switch leaf2 role leaf mirror 10.255.0.4\n"
					  "link leaf1 a spine1 b\nlink leaf1 c spine2 d\n"
					  "link leaf2 a spine1 e\nlink leaf2 c spine2 f\n"
					  "subnet leaf2 10.1.2.0/24\n", "t", err, sizeof(err));
	assert_non_null(t);
	return t;
}

/* a trace dropped after leaf1 (expected next: both spines) */
static void mktrace(struct hs_trace *t, uint64_t id, const struct hs_topo *tp)
{
	memset(t, 0, sizeof(*t));
	t->id = id;
	t->key.src = A("10.1.1.10");
	t->key.dst = A("10.1.2.10");
	t->key.proto = 6;
	t->key.sport = 40000;
	t->key.dport = 80;
	t->ip_id = 77;
	t->seq = 4000000000u;
	t->tcp_flags = 0x02;
	t->len = 60;
	t->nhops = 1;
	t->hops[0].sw = -1;
	t->hops[0].addr = A("10.255.0.3");
	t->hops[0].ts_ns = T0 + 123456789;
	t->hops[0].hw_ns = 999;
	t->hops[0].ttl = 64;
	t->hops[0].session = 1;
	hs_trace_classify(t, tp);
}

static void test_create_and_reopen(void **state)
{
	struct fixture *f = *state;
	char err[512];
	struct hs_topo *tp = topo();
	struct hs_trace t;
	struct hs_flow fl;

	struct hs_store *st = hs_store_open(f->path, err, sizeof(err));
	if (!st)
		fail_msg("%s", err);
	assert_string_equal(hs_store_path(st), f->path);
	int64_t sess = hs_store_session_begin(st, "sample.pcap", "tcp port 80", T0);
	assert_true(sess > 0);
	mktrace(&t, 1, tp);
	assert_int_equal(t.outcome, HS_OUT_DROPPED);
	assert_int_equal(hs_store_trace(st, sess, &t, tp), 0);
	assert_int_equal(hs_store_pending(st), 1);	/* the trace, its hops in its row */

	memset(&fl, 0, sizeof(fl));
	fl.key = t.key;
	fl.first_ns = T0;
	fl.last_ns = T0 + 5;
	fl.packets = 1;
	fl.bytes = 60;
	fl.syn = 1;
	fl.dropped = 1;
	assert_int_equal(hs_store_flow(st, sess, &fl), 0);
	assert_int_equal(hs_store_commit(st), 2);
	assert_int_equal(hs_store_pending(st), 0);
	/* upsert: the same flow again replaces its counters */
	fl.packets = 5;
	fl.bytes = 300;
	fl.fin = 1;
	assert_int_equal(hs_store_flow(st, sess, &fl), 0);
	struct hs_session_stats ss = { .packets = 10, .bytes = 1000, .decode_errors = 2,
				       .kernel_drops = 0, .traces = 1 };
	assert_int_equal(hs_store_session_end(st, sess, &ss, T0 + HS_NS_PER_SEC), 0);
	assert_true(hs_store_written(st) >= 4);
	hs_store_close(st);

	assert_int_equal(q1(f->path, "PRAGMA application_id"), HS_STORE_APP_ID);
	assert_int_equal(q1(f->path, "PRAGMA user_version"), HS_STORE_SCHEMA);
	char *jm = qtext(f->path, "PRAGMA journal_mode");
	assert_string_equal(jm, "wal");
	free(jm);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM flows"), 1);
	assert_int_equal(q1(f->path, "SELECT packets FROM flows"), 5);
	assert_int_equal(q1(f->path, "SELECT fin FROM flows"), 1);
	assert_int_equal(q1(f->path, "SELECT seq FROM traces"), 4000000000LL);
	assert_int_equal(q1(f->path, "SELECT ts FROM hops"), (int64_t)(T0 + 123456789));
	assert_int_equal(q1(f->path, "SELECT hw_ts FROM hops"), 999);
	assert_int_equal(q1(f->path, "SELECT decode_errors FROM sessions"), 2);
	assert_int_equal(q1(f->path, "SELECT ended FROM sessions"), (int64_t)(T0 + HS_NS_PER_SEC));
	char *s = qtext(f->path, "SELECT outcome || ' ' || last_switch || ' ' || expected_next FROM traces");
	assert_string_equal(s, "dropped leaf1 spine1|spine2");
	free(s);
	s = qtext(f->path, "SELECT switch || ' ' || addr FROM hops");
	assert_string_equal(s, "leaf1 10.255.0.3");
	free(s);
	s = qtext(f->path, "SELECT src || '>' || dst || ' ' || source || ' ' || filter FROM traces, sessions");
	assert_string_equal(s, "10.1.1.10>10.1.2.10 sample.pcap tcp port 80");
	free(s);

	/* reopen: same schema, new session, old rows kept */
	st = hs_store_open(f->path, err, sizeof(err));
	if (!st)
		fail_msg("%s", err);
	int64_t sess2 = hs_store_session_begin(st, "eth0", NULL, T0 + 10);
	assert_true(sess2 > sess);
	mktrace(&t, 1, NULL);	/* no topology: unknown, names are addresses */
	assert_int_equal(hs_store_trace(st, sess2, &t, NULL), 0);
	hs_store_close(st);	/* commits what is queued */
	assert_int_equal(q1(f->path, "SELECT count(*) FROM traces"), 2);
	s = qtext(f->path, "SELECT outcome || ' ' || last_switch FROM traces WHERE session = 2");
	assert_string_equal(s, "unknown 10.255.0.3");
	free(s);
	hs_topo_free(tp);
}

static void test_batches(void **state)
{
	struct fixture *f = *state;
	char err[512];
	struct hs_trace t;
	struct hs_store *st = hs_store_open(f->path, err, sizeof(err));

	assert_non_null(st);
	int64_t sess = hs_store_session_begin(st, "x", NULL, T0);
	for (int i = 0; i < 100; i++) {
		mktrace(&t, (uint64_t)i + 1, NULL);
		assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	}
	/* another reader sees nothing until the batch commits */
	assert_int_equal(q1(f->path, "SELECT count(*) FROM traces"), 0);
	assert_int_equal(hs_store_pending(st), 100);
	assert_int_equal(hs_store_commit(st), 100);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM traces"), 100);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM hops"), 100);
	assert_int_equal(hs_store_commit(st), 0);	/* nothing queued */
	/* the next write opens a new batch */
	mktrace(&t, 101, NULL);
	assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	assert_int_equal(hs_store_pending(st), 1);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM traces"), 100);
	assert_int_equal(hs_store_commit(st), 1);
	assert_int_equal(q1(f->path, "SELECT max(trace_no) FROM traces"), 101);

	/* trace rows are inserted several at a time, but the console's own
	 * queries see every one stored so far, committed or not */
	for (int i = 0; i < 3; i++) {
		mktrace(&t, (uint64_t)i + 102, NULL);
		assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	}
	struct got g;
	if (query_ro(st, "SELECT count(*), max(trace_no) FROM traces", &g, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(g.nrows, 1);
	assert_int_equal(g.v[0][0].i, 104);
	assert_int_equal(g.v[0][1].i, 104);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM traces"), 101);
	hs_store_close(st);		/* commits them */
	assert_int_equal(q1(f->path, "SELECT count(*) FROM traces"), 104);
}

/* what a version 14 history looked like: a flow's row named its analyzer,
 * a probe was keyed by its number alone */
static const char undo_v15[] =
	"ALTER TABLE flows ADD COLUMN analyzer TEXT;"
	"DROP TABLE probes;"
	"DROP TABLE probe_hops;"
	"CREATE TABLE probes (probe_id INTEGER NOT NULL, seq INTEGER NOT NULL, session INTEGER,"
	" kind TEXT NOT NULL, spec TEXT, src TEXT, dst TEXT, proto INTEGER, sport INTEGER,"
	" dport INTEGER, ttl INTEGER, sent INTEGER NOT NULL, outcome TEXT NOT NULL,"
	" lost_after TEXT, rtt INTEGER, analyzer TEXT, PRIMARY KEY (probe_id, seq));"
	"CREATE TABLE probe_hops (probe_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" idx INTEGER NOT NULL, switch TEXT, addr TEXT, ts INTEGER, hw_ts INTEGER, ttl INTEGER,"
	" PRIMARY KEY (probe_id, seq, idx));";

/* what a version 11 history looked like: no analyzer names, no heartbeats */
static const char undo_v12[] =
	"DROP VIEW hops;"
	"DROP TABLE analyzers;"
	"ALTER TABLE sessions DROP COLUMN analyzer;"
	"ALTER TABLE traces DROP COLUMN analyzer;"
	"ALTER TABLE flows DROP COLUMN analyzer;"
	"ALTER TABLE probes DROP COLUMN analyzer;"
	"ALTER TABLE events DROP COLUMN analyzer;"
	"ALTER TABLE control DROP COLUMN analyzer;"
	"CREATE VIEW hops(trace, idx, switch, addr, ts, hw_ts, ttl, tos, session) AS"
	" SELECT t.id, h.key, m.switch, m.addr,"
	" coalesce(t.first_ts, 0) + json_extract(h.value, '$[1]'),"
	" t.first_hw_ts + json_extract(h.value, '$[2]'),"
	" json_extract(h.value, '$[3]'), json_extract(h.value, '$[4]'),"
	" json_extract(h.value, '$[5]') FROM traces t, json_each(t.hop_list) h"
	" LEFT JOIN mirror_sources m ON m.id = json_extract(h.value, '$[0]');";

/* what a version 8 history looked like: a hop's switch name and address
 * in its trace's hop list, no mirror sources, hw_ts in full */
static const char undo_v9[] =
	"DROP TABLE settings;"			/* version 11 first */
	"DROP INDEX events_by_session;"
	"DROP INDEX control_by_session;"
	"DROP INDEX sessions_by_input;"		/* then version 10 */
	"ALTER TABLE sessions DROP COLUMN input;"
	"DROP VIEW hops;"
	"DROP TABLE mirror_sources;"
	"CREATE INDEX traces_by_session ON traces(session, trace_no);"
	"ALTER TABLE traces DROP COLUMN first_hw_ts;"
	"CREATE VIEW hops(trace, idx, switch, addr, ts, hw_ts, ttl, tos, session) AS"
	" SELECT t.id, h.key, json_extract(h.value, '$[0]'), json_extract(h.value, '$[1]'),"
	" coalesce(t.first_ts, 0) + json_extract(h.value, '$[2]'), json_extract(h.value, '$[3]'),"
	" json_extract(h.value, '$[4]'), json_extract(h.value, '$[5]'),"
	" json_extract(h.value, '$[6]') FROM traces t, json_each(t.hop_list) h;";

/* what a version 7 history looked like: hops one row each, outcome indexed */
static const char undo_v8[] =
	"DROP VIEW hops;"
	"ALTER TABLE traces DROP COLUMN hop_list;"
	"CREATE TABLE hops (trace INTEGER NOT NULL REFERENCES traces(id),"
	" idx INTEGER NOT NULL, switch TEXT, addr TEXT NOT NULL, ts INTEGER NOT NULL,"
	" hw_ts INTEGER, ttl INTEGER, tos INTEGER, session INTEGER,"
	" PRIMARY KEY (trace, idx));"
	"CREATE INDEX traces_by_outcome ON traces(outcome);";

/* what a version 16 history looked like: heartbeats told of no trace
 * and no history setting */
static const char undo_v17[] =
	"ALTER TABLE analyzers DROP COLUMN newest;"
	"ALTER TABLE analyzers DROP COLUMN history;";

/* an empty history as version 16 left it */
static void make_v16(const char *path)
{
	char err[512];
	struct hs_store *st = hs_store_open(path, err, sizeof(err));

	if (!st)
		fail_msg("%s", err);
	hs_store_close(st);
	exec(path, undo_v17);
	exec(path, "PRAGMA user_version = 16");
}

/* an empty history as version 14 left it */
static void make_v14(const char *path)
{
	make_v16(path);
	exec(path, undo_v15);
	exec(path, "PRAGMA user_version = 14");
}

/* an empty history as version 11 left it */
static void make_v11(const char *path)
{
	make_v14(path);
	exec(path, undo_v12);
	exec(path, "PRAGMA user_version = 11");
}

/* an empty history as version 8 left it */
static void make_v8(const char *path)
{
	make_v11(path);
	exec(path, undo_v9);
	exec(path, "PRAGMA user_version = 8");
}

/* an empty history as version 7 left it */
static void make_v7(const char *path)
{
	make_v8(path);
	exec(path, undo_v8);
}

/* open must fail with msg and leave the file exactly as it was */
static void refused(const char *path, const char *msg)
{
	char err[512];
	size_t n1, n2;
	void *before = slurp(path, &n1);
	struct hs_store *st = hs_store_open(path, err, sizeof(err));

	if (st)
		fail_msg("'%s' was opened, expected: %s", path, msg);
	if (!strstr(err, msg))
		fail_msg("got '%s', expected '%s'", err, msg);
	void *after = slurp(path, &n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(before, after, n1);
	free(before);
	free(after);
}

static void test_refuse_not_db(void **state)
{
	struct fixture *f = *state;
	FILE *fp = fopen(f->path, "w");
	char want[256];

	fputs("these are my notes, not a database\n", fp);
	fclose(fp);
	snprintf(want, sizeof(want), "'%s' is not a hopscope history (file is not a database)", f->path);
	refused(f->path, want);

	/* a long text file is refused the same way */
	fp = fopen(f->path, "w");
	for (int i = 0; i < 1000; i++)
		fputs("0123456789abcdef", fp);
	fclose(fp);
	refused(f->path, want);
}

static void test_refuse_foreign(void **state)
{
	struct fixture *f = *state;

	exec(f->path, "CREATE TABLE accounts(id INTEGER PRIMARY KEY, owner TEXT);"
		      "INSERT INTO accounts(owner) VALUES ('alice')");
	refused(f->path, "is not a hopscope history (application_id 0x00000000, 1 tables)");
	exec(f->path, "PRAGMA application_id = 1234");
	refused(f->path, "is not a hopscope history (application_id 0x000004d2");
}

static void test_refuse_newer(void **state)
{
	struct fixture *f = *state;
	char err[512];
	struct hs_store *st = hs_store_open(f->path, err, sizeof(err));

	assert_non_null(st);
	hs_store_close(st);
	exec(f->path, "PRAGMA user_version = 99");
	refused(f->path, "is from a newer hopscope (schema version 99, this one knows " HS_STR(HS_STORE_SCHEMA) ")");
}

/* a version that names no migration is refused before it is used as one */
static void test_refuse_bad_version(void **state)
{
	struct fixture *f = *state;
	char err[512];
	struct hs_store *st = hs_store_open(f->path, err, sizeof(err));

	assert_non_null(st);
	hs_store_close(st);
	exec(f->path, "PRAGMA user_version = -1");
	refused(f->path, "has a bad schema version -1 (a hopscope history has 1 to "
		HS_STR(HS_STORE_SCHEMA) ")");
	exec(f->path, "PRAGMA user_version = -1000");
	refused(f->path, "has a bad schema version -1000");
	exec(f->path, "PRAGMA user_version = -2147483648");
	refused(f->path, "has a bad schema version -2147483648");
	/* tables without a version: not a history this hopscope wrote */
	exec(f->path, "PRAGMA user_version = 0");
	refused(f->path, "has a bad schema version 0");
}

static void test_refuse_locked(void **state)
{
	struct fixture *f = *state;
	char err[512];
	struct hs_store *st = hs_store_open(f->path, err, sizeof(err));
	sqlite3 *other;

	assert_non_null(st);
	hs_store_close(st);
	assert_int_equal(sqlite3_open(f->path, &other), SQLITE_OK);
	assert_int_equal(sqlite3_exec(other, "BEGIN IMMEDIATE; INSERT INTO sessions(started) VALUES (1)",
				      NULL, NULL, NULL), SQLITE_OK);
	uint64_t t0 = hs_mono_ns();
	refused(f->path, "is locked by another writer (database is locked)");
	assert_true(hs_mono_ns() - t0 < 3 * HS_NS_PER_SEC);	/* an error, not a hang */
	sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(other);
	st = hs_store_open(f->path, err, sizeof(err));
	assert_non_null(st);
	hs_store_close(st);
}

static void test_missing_dir(void **state)
{
	char err[512];

	assert_null(hs_store_open("/nonexistent-dir/h.db", err, sizeof(err)));
	assert_string_equal(err, "cannot open '/nonexistent-dir/h.db': unable to open database "
			    "file (No such file or directory)");
}

/* a FIFO or a directory is no history: refused before SQLite opens it (the
 * FIFO's open would wait for a writer), and nothing is made beside it */
static void test_not_a_file(void **state)
{
	struct fixture *f = *state;
	char err[512], side[192];

	assert_int_equal(mkfifo(f->path, 0600), 0);
	assert_null(hs_store_open(f->path, err, sizeof(err)));
	assert_non_null(strstr(err, "is a FIFO, not a history"));
	unlink(f->path);
	assert_int_equal(mkdir(f->path, 0700), 0);
	assert_null(hs_store_open(f->path, err, sizeof(err)));
	assert_non_null(strstr(err, "is a directory, not a history"));
	rmdir(f->path);
	snprintf(side, sizeof(side), "%s-journal", f->path);
	assert_int_equal(access(side, F_OK), -1);
}

static void test_sql_readonly(void **state)
{
	struct fixture *f = *state;
	char err[512];
	struct hs_store *st = hs_store_open(f->path, err, sizeof(err));
	struct got g;
	static const char *const bad[] = {
		"INSERT INTO sessions(started) VALUES (1)",
		"DELETE FROM flows",
		"UPDATE sessions SET ended = 0",
		"DROP TABLE hops",
		"CREATE TABLE x(y)",
		"ATTACH DATABASE '/tmp/hs-evil.db' AS evil",
		"DETACH DATABASE main",
		"PRAGMA user_version = 5",
		"PRAGMA journal_mode = DELETE",
		"PRAGMA writable_schema = ON",
		"SELECT load_extension('/tmp/evil.so')",
		"BEGIN",
		"VACUUM",
		"SELECT 1; DELETE FROM flows",
		"WITH x AS (SELECT 1) INSERT INTO sessions(started) SELECT * FROM x",
		"",
		"SELEC 1",
	};

	assert_non_null(st);
	int64_t sess = hs_store_session_begin(st, "x", NULL, T0);
	assert_true(sess > 0);
	for (size_t i = 0; i < HS_ARRAY_SIZE(bad); i++) {
		if (query_ro(st, bad[i], &g, err, sizeof(err)) != HS_STORE_REFUSED)
			fail_msg("accepted '%s'", bad[i]);
		assert_int_equal(g.nrows, 0);
		assert_true(err[0] != '\0');
	}
	assert_int_equal(query_ro(st, "INSERT INTO sessions(started) VALUES (1)", &g, err,
				  sizeof(err)), HS_STORE_REFUSED);
	assert_non_null(strstr(err, "read-only"));
	/* the writer's queue of trace rows is no table of the history's */
	static const char *const queue[] = {
		"SELECT * FROM hs_queued_traces",
		"SELECT count(*) FROM main.HS_QUEUED_TRACES",
		"SELECT id, (SELECT count(*) FROM hs_queued_traces) FROM sessions",
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(queue); i++) {
		if (query_ro(st, queue[i], &g, err, sizeof(err)) != HS_STORE_REFUSED)
			fail_msg("accepted '%s'", queue[i]);
		assert_string_equal(err, "no such table: hs_queued_traces");
	}
	if (query_ro(st, "PRAGMA table_info(hs_queued_traces)", &g, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(g.nrows, 0);

	char sql[128];
	snprintf(sql, sizeof(sql), "SELECT id, source, NULL AS n, 1.5 AS r, x'00ff' AS b"
		 " FROM sessions WHERE id = %lld -- trailing", (long long)sess);
	if (query_ro(st, sql, &g, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(g.ncol, 5);
	assert_string_equal(g.names[1], "source");
	assert_int_equal(g.nrows, 1);
	assert_int_equal(g.v[0][0].type, HS_VAL_INT);
	assert_int_equal(g.v[0][0].i, sess);
	assert_int_equal(g.v[0][1].type, HS_VAL_TEXT);
	assert_string_equal(g.text[0][1], "x");
	assert_int_equal(g.v[0][2].type, HS_VAL_NULL);
	assert_int_equal(g.v[0][3].type, HS_VAL_REAL);
	assert_true(g.v[0][3].d == 1.5);
	assert_int_equal(g.v[0][4].type, HS_VAL_BLOB);
	assert_int_equal(g.v[0][4].len, 2);
	if (query_ro(st, "PRAGMA table_info(flows)", &g, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_true(g.nrows > 0);
	if (query_ro(st, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
		     "WHERE i < 3) SELECT count(*) FROM n", &g, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(g.nrows, 1);
	assert_int_equal(g.v[0][0].i, 3);
	/* a failure on the way is told apart from a refusal */
	assert_int_equal(query_ro(st, "SELECT abs(-9223372036854775807 - 1)", &g, err,
				  sizeof(err)), HS_STORE_FAILED);
	assert_non_null(strstr(err, "integer overflow"));

	/* writes through the store still work after the read-only checks */
	struct hs_trace t;
	memset(&t, 0, sizeof(t));
	t.key.src = A("10.0.0.1");
	t.key.dst = A("10.0.0.2");
	t.outcome = HS_OUT_UNKNOWN;
	assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	assert_int_equal(hs_store_commit(st), 1);
	hs_store_close(st);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM sessions"), 1);
	assert_int_equal(q1(f->path, "PRAGMA user_version"), HS_STORE_SCHEMA);
	assert_int_equal(access("/tmp/hs-evil.db", F_OK), -1);
}

/* the listings and a stored trace come back as typed rows, newest first */
static void test_listings(void **state)
{
	struct fixture *f = *state;
	struct hs_store *st = open_ok(f->path);
	struct hs_rows rows;
	struct got g, hops;
	struct hs_trace t;
	char err[512];

	int64_t sess = hs_store_session_begin(st, "x.pcap", NULL, T0);
	assert_true(sess > 0);
	for (uint64_t i = 1; i <= 3; i++) {
		mktrace(&t, i, NULL);
		assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	}
	assert_true(hs_store_commit(st) > 0);

	memset(&g, 0, sizeof(g));
	rows = (struct hs_rows){ got_cols, got_row, &g };
	assert_int_equal(hs_store_list(st, HS_LIST_TRACES, 2, &rows, err, sizeof(err)), 0);
	assert_int_equal(g.nrows, 2);
	assert_string_equal(g.names[0], "trace");
	assert_string_equal(g.text[0][0], "1:3");
	assert_string_equal(g.text[1][0], "1:2");
	assert_string_equal(g.names[1], "ts");
	assert_int_equal(g.v[0][1].type, HS_VAL_INT);
	assert_int_equal(g.v[0][1].i, (int64_t)(T0 + 123456789));

	memset(&g, 0, sizeof(g));
	assert_int_equal(hs_store_list(st, HS_LIST_SESSIONS, 50, &rows, err, sizeof(err)), 0);
	assert_int_equal(g.nrows, 1);
	assert_string_equal(g.text[0][3], "x.pcap");

	memset(&g, 0, sizeof(g));
	memset(&hops, 0, sizeof(hops));
	struct hs_rows rhops = { got_cols, got_row, &hops };
	assert_int_equal(hs_store_trace_show(st, 0, 2, 0, &rows, &rhops, err, sizeof(err)), 1);
	assert_int_equal(g.nrows, 1);
	assert_string_equal(g.text[0][0], "1:2");
	assert_int_equal(hops.nrows, 1);
	assert_string_equal(hops.names[2], "addr");
	assert_string_equal(hops.text[0][2], "10.255.0.3");
	memset(&g, 0, sizeof(g));
	assert_int_equal(hs_store_trace_show(st, sess + 1, 2, 0, &rows, &rhops, err, sizeof(err)),
			 0);
	assert_int_equal(g.nrows, 0);
	hs_store_close(st);
}

/* a version 5 history (before the control table) is migrated in place and
 * keeps its rows; control rows round-trip, NULL where a field is absent */
static void test_migrate_v5_control(void **state)
{
	struct fixture *f = *state;
	char err[512];
	struct hs_store *st = hs_store_open(f->path, err, sizeof(err));
	struct hs_trace t;

	assert_non_null(st);
	int64_t sess = hs_store_session_begin(st, "old.pcap", NULL, T0);
	assert_true(sess > 0);
	memset(&t, 0, sizeof(t));
	t.key.src = A("10.0.0.1");
	t.key.dst = A("10.0.0.2");
	t.outcome = HS_OUT_DROPPED;
	assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	assert_int_equal(hs_store_commit(st), 1);
	hs_store_close(st);
	/* what version 5 wrote: everything but the control table */
	exec(f->path, undo_v15);
	exec(f->path, undo_v12);
	exec(f->path, undo_v9);
	exec(f->path, undo_v8);
	exec(f->path, "DROP TABLE control; PRAGMA user_version = 5");
	assert_int_equal(q1(f->path, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'control%'"),
			 0);

	st = hs_store_open(f->path, err, sizeof(err));
	if (!st)
		fail_msg("%s", err);
	assert_int_equal(q1(f->path, "PRAGMA user_version"), HS_STORE_SCHEMA);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM traces WHERE outcome = 'dropped'"), 1);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM sessions WHERE source = 'old.pcap'"), 1);

	struct hs_flowkey k;
	memset(&k, 0, sizeof(k));
	k.src = A("10.0.0.1");
	k.dst = A("10.0.0.2");
	k.proto = 6;
	k.sport = 179;
	k.dport = 51000;
	assert_int_equal(hs_store_control(st, sess, T0 + 5, NULL, "bgp", "keepalive", &k,
					  "keepalive len 19"), 0);
	assert_int_equal(hs_store_control(st, sess, T0 + 7, "leaf1", "pfc", "pfc", NULL,
					  "pfc enable 0x08 quanta 0,0,0,65535,0,0,0,0"), 0);
	assert_int_equal(hs_store_pending(st), 2);
	assert_int_equal(hs_store_commit(st), 2);
	hs_store_close(st);

	assert_int_equal(q1(f->path, "SELECT count(*) FROM control"), 2);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM control WHERE session = (SELECT id "
				     "FROM sessions WHERE source = 'old.pcap')"), 2);
	char *v = qtext(f->path, "SELECT ts || ' ' || proto || ' ' || kind || ' ' || src || ':' || "
			"sport || ' ' || dst || ':' || dport || ' ' || detail || ' ' || "
			"(switch IS NULL) FROM control WHERE proto = 'bgp'");
	assert_non_null(v);
	assert_string_equal(v, "1700000000000000005 bgp keepalive 10.0.0.1:179 10.0.0.2:51000 "
			       "keepalive len 19 1");
	free(v);
	v = qtext(f->path, "SELECT ts || ' ' || switch || ' ' || kind || ' ' || detail || ' ' || "
		  "(src IS NULL AND dst IS NULL AND sport IS NULL AND dport IS NULL) "
		  "FROM control WHERE proto = 'pfc'");
	assert_non_null(v);
	assert_string_equal(v, "1700000000000000007 leaf1 pfc "
			       "pfc enable 0x08 quanta 0,0,0,65535,0,0,0,0 1");
	free(v);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
				     "name = 'control_by_ts'"), 1);
}

static struct hs_flow flow(const char *src, uint16_t sport, uint64_t packets)
{
	struct hs_flow fl;

	memset(&fl, 0, sizeof(fl));
	fl.key.src = A(src);
	fl.key.dst = A("10.0.0.2");
	fl.key.proto = 6;
	fl.key.sport = sport;
	fl.key.dport = 80;
	fl.first_ns = T0;
	fl.last_ns = T0 + 1;
	fl.packets = packets;
	fl.bytes = packets * 100;
	return fl;
}

/* a flow is inserted once and then updated in its row; a row that is not
 * its own (gone with a rolled-back batch, or another flow's) is never
 * written over: the flow gets a row again */
static void test_flow_rows(void **state)
{
	struct fixture *f = *state;
	struct hs_store *st = open_ok(f->path);

	int64_t sess = hs_store_session_begin(st, "x", NULL, T0);
	struct hs_flow a = flow("10.0.0.1", 1000, 1), b = flow("10.0.0.3", 2000, 7);

	/* first writes wait in the batch; written again meanwhile, a flow
	 * is still one row, with its newest values */
	assert_int_equal(hs_store_flow(st, sess, &a), 0);
	assert_int_equal(hs_store_flow(st, sess, &b), 0);
	assert_int_equal(a.row, HS_FLOW_ROW_QUEUED);
	a.packets = 3;
	assert_int_equal(hs_store_flow(st, sess, &a), 0);
	hs_store_commit(st);
	assert_true(a.row > 0 && b.row > 0 && a.row != b.row);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM flows"), 2);
	assert_int_equal(q1(f->path, "SELECT packets FROM flows WHERE sport = 1000"), 3);
	assert_int_equal(q1(f->path, "SELECT rowid FROM flows WHERE sport = 1000"), a.row);
	assert_int_equal(q1(f->path, "SELECT rowid FROM flows WHERE sport = 2000"), b.row);
	int64_t row_a = a.row;
	a.packets = 4;
	assert_int_equal(hs_store_flow(st, sess, &a), 0);
	assert_int_equal(a.row, row_a);
	hs_store_commit(st);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM flows"), 2);
	assert_int_equal(q1(f->path, "SELECT packets FROM flows WHERE sport = 1000"), 4);

	/* more flows than one INSERT takes: each learns its own row */
	struct hs_flow many[40];
	for (int i = 0; i < 40; i++) {
		many[i] = flow("10.0.1.1", (uint16_t)(5000 + i), (uint64_t)i + 1);
		assert_int_equal(hs_store_flow(st, sess, &many[i]), 0);
	}
	hs_store_commit(st);
	for (int i = 0; i < 40; i++) {
		char sql[128];
		snprintf(sql, sizeof(sql), "SELECT sport FROM flows WHERE rowid = %lld",
			 (long long)many[i].row);
		assert_int_equal(q1(f->path, sql), 5000 + i);
	}

	/* a's row number now names b's row: b keeps its counters */
	a.row = b.row;
	a.packets = 9;
	assert_int_equal(hs_store_flow(st, sess, &a), 0);
	/* a row number that was never written (its batch rolled back) */
	b.row = 1000000;
	b.packets = 8;
	assert_int_equal(hs_store_flow(st, sess, &b), 0);
	hs_store_commit(st);
	assert_true(a.row > 0 && a.row != b.row);
	assert_true(b.row > 0 && b.row != 1000000);
	assert_int_equal(q1(f->path, "SELECT packets FROM flows WHERE sport = 2000 ORDER BY rowid"
			     " DESC LIMIT 1"), 8);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM flows WHERE sport = 2000 AND packets = 7"),
			 1);
	assert_int_equal(q1(f->path, "SELECT packets FROM flows WHERE sport = 1000 ORDER BY rowid"
			     " DESC LIMIT 1"), 9);
	hs_store_close(st);
}

static void exec_other(const char *path, const char *sql)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 2000);
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	sqlite3_close(db);
}

/* a batch SQLite rolls back loses the rows it held and those still queued
 * with it: the commit says so, the flows get no row, and their next write
 * inserts them */
static void test_lost_batch(void **state)
{
	struct fixture *f = *state;
	struct hs_store *st = open_ok(f->path);

	int64_t sess = hs_store_session_begin(st, "x", NULL, T0);
	exec_other(f->path, "CREATE TRIGGER boom BEFORE INSERT ON flows WHEN NEW.sport = 666"
		   " BEGIN SELECT RAISE(ROLLBACK, 'refused'); END");
	struct hs_flow a = flow("10.0.0.1", 1000, 1), bad = flow("10.0.0.2", 666, 2);

	assert_int_equal(hs_store_flow(st, sess, &a), 0);
	assert_int_equal(hs_store_flow(st, sess, &bad), 0);
	assert_int_equal(hs_store_commit(st), -1);
	assert_int_equal(a.row, 0);
	assert_int_equal(bad.row, 0);
	assert_int_equal(hs_store_lost(st), 2);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM flows"), 0);

	exec_other(f->path, "DROP TRIGGER boom");
	assert_int_equal(hs_store_flow(st, sess, &a), 0);
	assert_int_equal(hs_store_commit(st), 1);
	assert_true(a.row > 0);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM flows"), 1);

	/* a trace's new mirror source goes with its lost batch; the source's
	 * next hop adds it again rather than naming a row that is gone */
	struct hs_trace t;
	exec_other(f->path, "CREATE TRIGGER boom BEFORE INSERT ON flows WHEN NEW.sport = 666"
		   " BEGIN SELECT RAISE(ROLLBACK, 'refused'); END");
	mktrace(&t, 1, NULL);
	t.hops[0].addr = A("10.255.7.7");
	assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	assert_int_equal(hs_store_flow(st, sess, &bad), 0);
	assert_int_equal(hs_store_commit(st), -1);
	exec_other(f->path, "DROP TRIGGER boom");
	assert_int_equal(q1(f->path, "SELECT count(*) FROM mirror_sources"), 0);
	mktrace(&t, 2, NULL);
	t.hops[0].addr = A("10.255.7.7");
	assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	assert_int_equal(hs_store_commit(st), 1);
	hs_store_close(st);
	char *v = qtext(f->path, "SELECT t.trace_no || ' ' || ifnull(h.addr, 'none') FROM hops h"
			" JOIN traces t ON t.id = h.trace");
	assert_string_equal(v, "2 10.255.7.7");
	free(v);
}

/* a version 6 history (flows unique on their 5-tuple) is rebuilt in place,
 * its flows kept in order; the unique index is gone, the session's is there */
static void test_migrate_v6_flows(void **state)
{
	struct fixture *f = *state;
	char err[512];
	struct hs_store *st;

	make_v7(f->path);
	exec(f->path,
	     "DROP TABLE flows;"
	     "CREATE TABLE flows (session INTEGER NOT NULL REFERENCES sessions(id),"
	     " src TEXT NOT NULL, dst TEXT NOT NULL, proto INTEGER NOT NULL,"
	     " sport INTEGER NOT NULL, dport INTEGER NOT NULL, first_ts INTEGER, last_ts INTEGER,"
	     " packets INTEGER NOT NULL, bytes INTEGER NOT NULL, syn INTEGER NOT NULL,"
	     " fin INTEGER NOT NULL, rst INTEGER NOT NULL, dropped INTEGER NOT NULL,"
	     " looped INTEGER NOT NULL, UNIQUE (session, src, dst, proto, sport, dport));"
	     "INSERT INTO sessions(id, started, source) VALUES (1, 1, 'old.pcap');"
	     "INSERT INTO flows VALUES (1, '10.0.0.1', '10.0.0.2', 6, 1, 80, 1, 2, 3, 300, 1, 0, 0,"
	     " 0, 0);"
	     "INSERT INTO flows VALUES (1, '10.0.0.5', '10.0.0.2', 17, 53, 53, 1, 2, 1, 60, 0, 0, 0,"
	     " 1, 0);"
	     "PRAGMA user_version = 6");
	st = hs_store_open(f->path, err, sizeof(err));
	if (!st)
		fail_msg("%s", err);
	hs_store_close(st);
	assert_int_equal(q1(f->path, "PRAGMA user_version"), HS_STORE_SCHEMA);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM flows"), 2);
	assert_int_equal(q1(f->path, "SELECT sport FROM flows ORDER BY rowid LIMIT 1"), 1);
	assert_int_equal(q1(f->path, "SELECT dropped FROM flows WHERE proto = 17"), 1);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
			     " AND tbl_name = 'flows' AND name LIKE 'sqlite_autoindex%'"), 0);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
			     " AND name = 'flows_by_session'"), 1);
}

/* an upgrade notice, kept in a 1024-byte buffer */
static void keep_notice(void *arg, const char *msg)
{
	char *buf = arg;

	assert_string_equal(buf, "");	/* once */
	snprintf(buf, 1024, "%s", msg);
}

#define HOP_ROWS "SELECT group_concat(trace || ',' || idx || ',' || ifnull(switch, '-') || ',' ||" \
	" addr || ',' || ts || ',' || ifnull(hw_ts, '-') || ',' || ttl || ',' || tos || ',' ||" \
	" session, ';') FROM (SELECT * FROM hops ORDER BY trace, idx)"

/* the history at path is at the current schema, and its hops view reads
 * back the rows before (freed) did before the upgrade */
static void upgraded_same_hops(const char *path, char *before)
{
	assert_int_equal(q1(path, "PRAGMA user_version"), HS_STORE_SCHEMA);
	char *after = qtext(path, HOP_ROWS);
	assert_non_null(after);
	assert_string_equal(after, before);
	free(before);
	free(after);
}

/* a trace's hops are one JSON column of its row; the hops view gives them
 * back one row each, in path order, with absolute times and NULL where a
 * hop has no switch name or no switch timestamp */
static void test_hop_list(void **state)
{
	struct fixture *f = *state;
	char err[512];
	struct hs_topo *tp = topo();
	struct hs_trace t;
	char notice[1024] = "";
	struct hs_store *st = hs_store_open_notice(f->path, err, sizeof(err), keep_notice, notice);

	if (!st)
		fail_msg("%s", err);
	assert_string_equal(notice, "");	/* a new history is no upgrade */
	int64_t sess = hs_store_session_begin(st, "x", NULL, T0);
	mktrace(&t, 1, tp);
	t.nhops = 3;
	t.hops[0].sw = 0;	/* leaf1, hw 999 */
	t.hops[1] = t.hops[0];
	t.hops[1].sw = 1;
	t.hops[1].addr = A("10.255.0.1");
	t.hops[1].ts_ns = T0 + 123457000;
	t.hops[1].hw_ns = 0;
	t.hops[1].ttl = 63;
	t.hops[1].tos = 4;
	t.hops[2] = t.hops[1];
	t.hops[2].sw = -1;
	t.hops[2].addr = A("fd00::9");
	t.hops[2].ts_ns = T0 + 123458000;
	t.hops[2].hw_ns = 1ULL << 40;
	t.hops[2].ttl = 62;
	t.hops[2].session = 7;
	assert_int_equal(hs_store_trace(st, sess, &t, tp), 0);
	t.nhops = 0;		/* a trace without hops has an empty list */
	assert_int_equal(hs_store_trace(st, sess, &t, tp), 0);
	hs_store_close(st);

	/* each hop names its mirror source's row; switch time from the earliest */
	char *v = qtext(f->path, "SELECT hop_list FROM traces WHERE id = 1");
	assert_string_equal(v, "[[1,0,0,64,0,1],[2,211,null,63,4,1],[3,1211,1099511626777,62,4,7]]");
	free(v);
	assert_int_equal(q1(f->path, "SELECT first_hw_ts FROM traces WHERE id = 1"), 999);
	v = qtext(f->path, "SELECT group_concat(id || ',' || ifnull(switch, '-') || ',' || addr, ';')"
		  " FROM (SELECT * FROM mirror_sources ORDER BY id)");
	assert_string_equal(v, "1,leaf1,10.255.0.3;2,spine1,10.255.0.1;3,-,fd00::9");
	free(v);
	v = qtext(f->path, HOP_ROWS);
	assert_string_equal(v, "1,0,leaf1,10.255.0.3,1700000000123456789,999,64,0,1;"
			       "1,1,spine1,10.255.0.1,1700000000123457000,-,63,4,1;"
			       "1,2,-,fd00::9,1700000000123458000,1099511627776,62,4,7");
	free(v);
	v = qtext(f->path, "SELECT hop_list FROM traces WHERE id = 2");
	assert_string_equal(v, "[]");
	free(v);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM hops WHERE trace = 2"), 0);
	assert_int_equal(q1(f->path, "SELECT first_hw_ts IS NULL FROM traces WHERE id = 2"), 1);

	/* reopened: the rows are found again, not added; without a topology
	 * the same addresses are other sources (no switch name); no switch
	 * time at all leaves first_hw_ts and every hw_ts NULL */
	st = open_ok(f->path);
	sess = hs_store_session_begin(st, "y", NULL, T0);
	t.nhops = 3;
	assert_int_equal(hs_store_trace(st, sess, &t, tp), 0);
	for (unsigned i = 0; i < 3; i++)
		t.hops[i].hw_ns = 0;
	assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	hs_store_close(st);
	v = qtext(f->path, "SELECT group_concat(hop_list, ' ') FROM traces WHERE id > 2");
	assert_string_equal(v, "[[1,0,0,64,0,1],[2,211,null,63,4,1],[3,1211,1099511626777,62,4,7]] "
			       "[[4,0,null,64,0,1],[5,211,null,63,4,1],[3,1211,null,62,4,7]] "
			       "[[4,0,null,64,0,1],[5,211,null,63,4,1],[3,1211,null,62,4,7]]");
	free(v);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM traces WHERE id > 3 AND"
			     " first_hw_ts IS NULL"), 2);
	v = qtext(f->path, "SELECT group_concat(ifnull(switch, '-') || ',' || addr || ',' ||"
		  " ifnull(hw_ts, '-'), ';') FROM (SELECT * FROM hops WHERE trace = 4 ORDER BY idx)");
	assert_string_equal(v, "-,10.255.0.3,-;-,10.255.0.1,-;-,fd00::9,-");
	free(v);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM mirror_sources"), 5);
	hs_topo_free(tp);
}

/* a version 11 history takes analyzer names: its rows stay, named by
 * none, and the hops view names a hop's analyzer as its trace does */
static void test_migrate_v11_analyzers(void **state)
{
	struct fixture *f = *state;
	struct hs_store *st;

	make_v11(f->path);
	exec(f->path,
	     "INSERT INTO sessions(id, started, source) VALUES (1, 1, 'old.pcap');"
	     "INSERT INTO mirror_sources(id, switch, addr) VALUES (1, 'leaf1', '10.255.0.3');"
	     "INSERT INTO traces(id, session, trace_no, src, dst, proto, first_ts, last_ts, outcome,"
	     " nhops, flags, hop_list, first_hw_ts) VALUES"
	     " (1, 1, 1, '10.0.0.1', '10.0.0.2', 6, 1000, 1000, 'dropped', 1, 0,"
	     "  '[[1,0,0,64,0,1]]', 5);"
	     "INSERT INTO flows(session, src, dst, proto, sport, dport, packets, bytes, syn, fin,"
	     " rst, dropped, looped) VALUES (1, '10.0.0.1', '10.0.0.2', 6, 1, 2, 1, 60, 1, 0, 0,"
	     " 1, 0);");
	st = open_ok(f->path);
	hs_store_close(st);
	assert_int_equal(q1(f->path, "PRAGMA user_version"), HS_STORE_SCHEMA);
	char *v = qtext(f->path, "SELECT group_concat(trace || ',' || idx || ',' || switch || ','"
			" || ts || ',' || ifnull(analyzer, '-'), ';') FROM hops");
	assert_string_equal(v, "1,0,leaf1,1000,-");
	free(v);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM sessions s, traces t, flows w"
			     " WHERE s.analyzer IS NULL AND t.analyzer IS NULL"
			     " AND w.session = s.id"), 1);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM analyzers"), 0);
	exec(f->path, "INSERT INTO events(session, ts, alert, cond, value, analyzer)"
		      " VALUES (1, 1, 1, 'x', 1, 'a1');"
		      "INSERT INTO control(session, ts, proto, kind, detail, analyzer)"
		      " VALUES (1, 1, 'bgp', 'open', '', 'a1');"
		      "INSERT INTO probes(probe_id, seq, kind, sent, outcome, analyzer)"
		      " VALUES (1, 1, 'probe', 1, 'lost', 'a1');");
	assert_int_equal(q1(f->path, "SELECT (SELECT count(*) FROM events WHERE analyzer = 'a1')"
			     " + (SELECT count(*) FROM control WHERE analyzer = 'a1')"
			     " + (SELECT count(*) FROM probes WHERE analyzer = 'a1')"), 3);
}

/* a signal during an upgrade rolls it back whole: the history stays at its
 * old version, and the next open upgrades it */
static void test_migrate_interrupted(void **state)
{
	struct fixture *f = *state;
	char err[512];
	struct hs_store *st;

	make_v7(f->path);
	exec(f->path, "INSERT INTO sessions(id, started, source) VALUES (1, 1, 'old.pcap');"
		      "PRAGMA user_version = 7");
	hs_interrupt_init(NULL);
	raise(SIGINT);
	st = hs_store_open(f->path, err, sizeof(err));
	assert_null(st);
	assert_non_null(strstr(err, "interrupted: the history is left as it was"));
	assert_int_equal(q1(f->path, "PRAGMA user_version"), 7);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM sqlite_master WHERE name = 'hops'"
			     " AND type = 'table'"), 1);
	assert_int_equal(hs_interrupt_take(), SIGINT);
	st = hs_store_open(f->path, err, sizeof(err));
	if (!st)
		fail_msg("%s", err);
	hs_store_close(st);
	assert_int_equal(q1(f->path, "PRAGMA user_version"), HS_STORE_SCHEMA);
}

/* a version 7 history (a row per hop) is folded into hop lists in place:
 * the hops view reads back exactly the rows it had (trace ids on both sides
 * of the 65536 ids folded at a time, and far past them) */
static void test_migrate_v7_hops(void **state)
{
	struct fixture *f = *state;
	char err[512];
	struct hs_store *st;

	make_v7(f->path);
	exec(f->path,
	     "INSERT INTO sessions(id, started, source) VALUES (1, 1, 'old.pcap');"
	     "INSERT INTO traces(id, session, trace_no, src, dst, proto, first_ts, last_ts, outcome,"
	     " nhops, flags) VALUES (1, 1, 1, '10.0.0.1', '10.0.0.2', 6, 1000, 3000, 'delivered',"
	     " 2, 0), (65536, 1, 2, '10.0.0.1', '10.0.0.3', 17, 5000, 5000, 'dropped', 1, 0),"
	     " (65537, 1, 3, '10.0.0.1', '10.0.0.3', 17, 6000, 6000, 'dropped', 1, 0),"
	     " (200000, 1, 4, '10.0.0.1', '10.0.0.4', 1, NULL, NULL, 'unknown', 0, 0),"
	     " (200001, 1, 5, '10.0.0.1', '10.0.0.5', 6, 7000, 7000, 'delivered', 1, 0);"
	     "INSERT INTO hops VALUES (1, 1, 'spine1', '10.255.0.1', 3000, NULL, 63, 0, 1),"
	     " (1, 0, 'leaf1', '10.255.0.3', 1000, 77, 64, 0, 1),"
	     " (65536, 0, NULL, '10.255.9.9', 5000, 88, 64, 4, 2),"
	     " (65537, 0, 'leaf2', '10.255.0.4', 6000, NULL, 64, 0, 1),"
	     " (200001, 0, 'leaf3', '10.255.0.5', 7000, NULL, 64, 0, 1);"
	     "PRAGMA user_version = 7");
	char *before = qtext(f->path, HOP_ROWS);
	assert_non_null(before);
	assert_string_equal(before, "1,0,leaf1,10.255.0.3,1000,77,64,0,1;"
				    "1,1,spine1,10.255.0.1,3000,-,63,0,1;"
				    "65536,0,-,10.255.9.9,5000,88,64,4,2;"
				    "65537,0,leaf2,10.255.0.4,6000,-,64,0,1;"
				    "200001,0,leaf3,10.255.0.5,7000,-,64,0,1");
	char notice[1024] = "";
	st = hs_store_open_notice(f->path, err, sizeof(err), keep_notice, notice);
	if (!st)
		fail_msg("%s", err);
	hs_store_close(st);
	/* the user is told before the upgrade, once */
	assert_non_null(strstr(notice, "upgrading history"));
	assert_non_null(strstr(notice, "from schema 7 to " HS_STR(HS_STORE_SCHEMA)));
	notice[0] = '\0';
	st = hs_store_open_notice(f->path, err, sizeof(err), keep_notice, notice);
	assert_non_null(st);
	hs_store_close(st);
	assert_string_equal(notice, "");
	upgraded_same_hops(f->path, before);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM sqlite_master WHERE name = 'hops'"
			     " AND type = 'view'"), 1);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM sqlite_master WHERE"
			     " name = 'traces_by_outcome'"), 0);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM traces"), 5);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM traces WHERE hop_list IS NULL"), 0);
}

/* the numbers of a hop list, written by hand, read back exactly: each side
 * of every power of ten a time offset can reach */
static void test_hop_numbers(void **state)
{
	struct fixture *f = *state;
	struct hs_store *st = open_ok(f->path);
	int64_t sess = hs_store_session_begin(st, "x", NULL, T0);
	struct hs_trace t;
	char want[2048] = "", num[64];
	uint64_t p = 1;
	unsigned k = 0;

	mktrace(&t, 1, NULL);
	for (int e = 0; e <= 18; e++, p *= 10)
		for (uint64_t v = p - 1; v <= p; v++) {
			if (t.nhops == HS_TRACE_MAX_HOPS) {
				assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
				t.nhops = 1;
			}
			t.hops[t.nhops] = t.hops[0];
			t.hops[t.nhops].ts_ns = T0 + 123456789 + v;
			t.hops[t.nhops].hw_ns = 999 + v;
			t.hops[t.nhops].ttl = (uint8_t)k;
			t.nhops++;
			snprintf(num, sizeof(num), "%s%llu,%llu,%u", k ? ";" : "",
				 (unsigned long long)v, (unsigned long long)v, k % 256);
			strcat(want, num);
			k++;
		}
	assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	hs_store_close(st);
	char *got = qtext(f->path, "SELECT group_concat((h.ts - t.first_ts) || ',' ||"
			  " (h.hw_ts - t.first_hw_ts) || ',' || h.ttl, ';') FROM (SELECT * FROM hops"
			  " ORDER BY trace, idx) h JOIN traces t ON t.id = h.trace WHERE h.idx > 0");
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

/* many mirror sources: each written once however often it is seen, the
 * table that finds them grown past its first size */
static void test_many_sources(void **state)
{
	struct fixture *f = *state;
	struct hs_store *st = open_ok(f->path);
	int64_t sess = hs_store_session_begin(st, "x", NULL, T0);
	struct hs_trace t;
	char a[32];

	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 300; i++) {
			mktrace(&t, (uint64_t)(round * 300 + i + 1), NULL);
			snprintf(a, sizeof(a), "10.254.%d.%d", i / 100, i % 100);
			t.hops[0].addr = A(a);
			assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
		}
	hs_store_close(st);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM mirror_sources"), 300);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM hops WHERE addr IS NULL"), 0);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM hops h JOIN traces t ON t.id = h.trace"
			     " WHERE h.addr = '10.254.' || ((t.trace_no - 1) % 300 / 100) || '.' ||"
			     " ((t.trace_no - 1) % 100)"), 600);
}

/* a version 8 history (each hop's switch name and address in its list) is
 * rewritten in place: the hops view reads back exactly what it did, each
 * (switch, address) pair is one mirror source, and writing on after the
 * upgrade uses those rows */
static void test_migrate_v8_sources(void **state)
{
	struct fixture *f = *state;
	struct hs_topo *tp = topo();
	struct hs_trace t;
	struct hs_store *st;

	make_v8(f->path);
	exec(f->path,
	     "INSERT INTO sessions(id, started, source) VALUES (1, 1, 'old.pcap');"
	     "INSERT INTO traces(id, session, trace_no, src, dst, proto, first_ts, last_ts, outcome,"
	     " nhops, flags, hop_list) VALUES"
	     " (1, 1, 1, '10.0.0.1', '10.0.0.2', 6, 1000, 3000, 'delivered', 2, 0,"
	     "  '[[\"leaf1\",\"10.255.0.3\",0,77,64,0,1],[\"spine1\",\"10.255.0.1\",2000,50,63,0,1]]'),"
	     " (65536, 1, 2, '10.0.0.1', '10.0.0.3', 17, 5000, 5000, 'dropped', 1, 0,"
	     "  '[[null,\"10.255.0.3\",0,88,64,4,2]]'),"
	     " (65537, 1, 3, '10.0.0.1', '10.0.0.3', 17, 6000, 6100, 'dropped', 2, 0,"
	     "  '[[\"leaf1\",\"10.255.0.3\",0,null,64,0,1],[\"leaf1\",\"10.255.0.3\",100,null,63,0,1]]'),"
	     " (200000, 1, 4, '10.0.0.1', '10.0.0.4', 1, NULL, NULL, 'unknown', 0, 0, '[]'),"
	     " (200001, 1, 5, '10.0.0.1', '10.0.0.5', 6, 7000, 7000, 'delivered', 1, 0,"
	     "  '[[\"spine1\",\"10.255.0.1\",0,null,64,0,1]]');");
	char *before = qtext(f->path, HOP_ROWS);
	assert_non_null(before);
	assert_string_equal(before, "1,0,leaf1,10.255.0.3,1000,77,64,0,1;"
				    "1,1,spine1,10.255.0.1,3000,50,63,0,1;"
				    "65536,0,-,10.255.0.3,5000,88,64,4,2;"
				    "65537,0,leaf1,10.255.0.3,6000,-,64,0,1;"
				    "65537,1,leaf1,10.255.0.3,6100,-,63,0,1;"
				    "200001,0,spine1,10.255.0.1,7000,-,64,0,1");
	st = open_ok(f->path);
	hs_store_close(st);
	upgraded_same_hops(f->path, before);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM mirror_sources"), 3);
	assert_int_equal(q1(f->path, "SELECT first_hw_ts FROM traces WHERE id = 1"), 50);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
			     " AND tbl_name = 'traces'"), 0);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM traces WHERE first_hw_ts IS NULL"), 3);

	st = open_ok(f->path);
	int64_t sess = hs_store_session_begin(st, "new", NULL, T0);
	mktrace(&t, 6, tp);
	t.hops[0].sw = 0;	/* leaf1 at 10.255.0.3, as before */
	assert_int_equal(hs_store_trace(st, sess, &t, tp), 0);
	hs_store_close(st);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM mirror_sources"), 3);
	char *v = qtext(f->path, "SELECT switch || ',' || addr FROM hops WHERE trace = 200002");
	assert_string_equal(v, "leaf1,10.255.0.3");
	free(v);
	hs_topo_free(tp);
}

static void probe_pkt(void *arg, unsigned i, struct hs_store_probe_pkt *p)
{
	(void)arg;
	p->seq = i + 1;
	p->outcome = "lost";
}

/* a probe packet seen at one hop */
static void probe_hop_pkt(void *arg, unsigned i, struct hs_store_probe_pkt *p)
{
	(void)arg;
	p->seq = i + 1;
	p->outcome = "delivered";
	p->nhops = 1;
	snprintf(p->hops[0].sw, sizeof(p->hops[0].sw), "leaf%u", i + 1);
	p->hops[0].addr = A("10.255.0.3");
	p->hops[0].ts_ns = T0 + i;
	p->hops[0].ttl = 64;
}

/* every row an analyzer writes names it; a name it has not, or none,
 * leaves the column null; a bad name is no name */
static void test_analyzer_rows(void **state)
{
	struct fixture *f = *state;
	struct hs_store *st = open_ok(f->path);
	struct hs_trace t;
	struct hs_flow fl;
	struct hs_store_probe run = { .probe_id = 7, .kind = "probe", .spec = "x" };
	char err[256];

	assert_true(hs_analyzer_name_ok("an-1.pod_2"));
	assert_false(hs_analyzer_name_ok(""));
	assert_false(hs_analyzer_name_ok("a b"));
	assert_false(hs_analyzer_name_ok("a'b"));
	char longname[HS_ANALYZER_MAX + 1];
	memset(longname, 'a', HS_ANALYZER_MAX);
	longname[HS_ANALYZER_MAX] = '\0';
	assert_false(hs_analyzer_name_ok(longname));
	longname[HS_ANALYZER_MAX - 1] = '\0';
	assert_true(hs_analyzer_name_ok(longname));

	assert_null(hs_store_analyzer(st));
	hs_store_set_analyzer(st, "an1");
	assert_string_equal(hs_store_analyzer(st), "an1");
	int64_t sess = hs_store_session_begin(st, "a.pcap", NULL, T0);
	for (uint64_t i = 1; i <= 20; i++) {	/* more than one batch of rows */
		mktrace(&t, i, NULL);
		assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	}
	memset(&fl, 0, sizeof(fl));
	fl.key = t.key;
	fl.packets = 1;
	assert_int_equal(hs_store_flow(st, sess, &fl), 0);
	assert_int_equal(hs_store_control(st, sess, T0, "leaf1", "pfc", "pfc", NULL, "pfc"), 0);
	assert_int_equal(hs_store_event(st, sess, T0, 1, "cond", 1.0, T0), 0);
	assert_int_equal(hs_store_commit(st), 22);
	fl.packets = 2;		/* its row again, updated in place */
	assert_int_equal(hs_store_flow(st, sess, &fl), 0);
	assert_int_equal(hs_store_probe(st, &run, 2, probe_pkt, NULL, err, sizeof(err)), 0);
	hs_store_set_analyzer(st, "bad name");	/* none */
	assert_null(hs_store_analyzer(st));
	hs_store_session_begin(st, "b.pcap", NULL, T0);
	hs_store_close(st);

	assert_int_equal(q1(f->path, "SELECT count(*) FROM sessions WHERE analyzer = 'an1'"), 1);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM sessions WHERE analyzer IS NULL"), 1);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM traces WHERE analyzer = 'an1'"), 20);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM hops WHERE analyzer = 'an1'"),
			 q1(f->path, "SELECT count(*) FROM hops"));
	assert_int_equal(q1(f->path, "SELECT w.packets FROM flows w JOIN sessions s"
			     " ON s.id = w.session WHERE s.analyzer = 'an1'"), 2);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM control WHERE analyzer = 'an1'"), 1);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM events WHERE analyzer = 'an1'"), 1);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM probes WHERE analyzer = 'an1'"), 2);
}

static struct hs_heartbeat beat(const char *history)
{
	struct hs_heartbeat hb = { .session = 1, .seen_ns = T0, .packets = 5, .history = history };

	return hb;
}

/* A heartbeat tells of the newest trace its analyzer stored (what a
 * fabric view reads instead of every trace's time): of those its
 * transaction commits, none of a batch lost; a later start of the same
 * analyzer with older traces does not take it back. It says the history
 * kept too. */
static void test_heartbeat_newest(void **state)
{
	struct fixture *f = *state;
	struct hs_store *st = open_ok(f->path);
	struct hs_trace t;
	struct hs_heartbeat hb = beat("all");
	static const char q[] = "SELECT newest FROM analyzers WHERE name = 'an1'";

	hs_store_set_analyzer(st, "an1");
	int64_t sess = hs_store_session_begin(st, "a.pcap", NULL, T0);
	assert_int_equal(hs_store_begin(st, true), 0);
	assert_int_equal(hs_store_heartbeat(st, &hb), 0);
	assert_int_equal(hs_store_commit(st), 0);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM analyzers WHERE name = 'an1'"
			     " AND newest IS NULL AND history = 'all'"), 1);
	for (uint64_t i = 1; i <= 3; i++) {
		mktrace(&t, i, NULL);
		t.hops[0].ts_ns = T0 + (i == 2 ? 9 : i) * HS_NS_PER_SEC;
		assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	}
	hb = beat("default");
	assert_int_equal(hs_store_heartbeat(st, &hb), 0);	/* in the batch, with them */
	assert_int_equal(hs_store_commit(st), 3);
	assert_int_equal(q1(f->path, q), (int64_t)(T0 + 9 * HS_NS_PER_SEC));
	assert_int_equal(q1(f->path, "SELECT count(*) FROM analyzers WHERE history = 'default'"), 1);
	hs_store_close(st);

	st = open_ok(f->path);		/* the analyzer again, reading older packets */
	hs_store_set_analyzer(st, "an1");
	sess = hs_store_session_begin(st, "b.pcap", NULL, T0);
	mktrace(&t, 1, NULL);
	assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	assert_int_equal(hs_store_commit(st), 1);
	hb = beat(NULL);
	assert_int_equal(hs_store_heartbeat(st, &hb), 0);
	hs_store_close(st);
	assert_int_equal(q1(f->path, q), (int64_t)(T0 + 9 * HS_NS_PER_SEC));
	assert_int_equal(q1(f->path, "SELECT count(*) FROM analyzers WHERE history IS NULL"), 1);
}

/* A version 16 history: each analyzer's heartbeat takes the newest of
 * the traces it stored, and says no history setting */
static void test_migrate_v16_newest(void **state)
{
	struct fixture *f = *state;

	make_v16(f->path);
	exec(f->path,
	     "INSERT INTO sessions(id, started, source) VALUES (1, 1, 'old.pcap');"
	     "INSERT INTO traces(id, session, trace_no, src, dst, proto, first_ts, last_ts, outcome,"
	     " nhops, flags, analyzer) VALUES"
	     " (1, 1, 1, 'a', 'b', 6, 1000, 1000, 'dropped', 0, 0, 'an1'),"
	     " (2, 1, 2, 'a', 'b', 6, 3000, 3000, 'dropped', 0, 0, 'an1'),"
	     " (3, 1, 3, 'a', 'b', 6, 5000, 5000, 'dropped', 0, 0, 'an2');"
	     "INSERT INTO analyzers(name, seen, packets, kernel_drops, rate, queued, lost) VALUES"
	     " ('an1', 1, 0, 0, 0, 0, 0), ('an3', 1, 0, 0, 0, 0, 0);");
	hs_store_close(open_ok(f->path));
	assert_int_equal(q1(f->path, "PRAGMA user_version"), HS_STORE_SCHEMA);
	assert_int_equal(q1(f->path, "SELECT newest FROM analyzers WHERE name = 'an1'"), 3000);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM analyzers WHERE name = 'an3'"
			     " AND newest IS NULL AND history IS NULL"), 1);
}

/* A version 14 history: flows lose their analyzer (their session's row
 * names it) and keep the rest; probes and their hops are keyed by analyzer
 * too, '' for a probe written without a name. */
static void test_migrate_v14_analyzer_keys(void **state)
{
	struct fixture *f = *state;
	struct hs_store *st;

	make_v14(f->path);
	exec(f->path,
	     "INSERT INTO sessions(id, started, source, analyzer) VALUES (1, 1, 'old.pcap', 'a1');"
	     "INSERT INTO flows(session, src, dst, proto, sport, dport, packets, bytes, syn, fin,"
	     " rst, dropped, looped, analyzer) VALUES (1, '10.0.0.1', '10.0.0.2', 6, 1, 2, 3, 60,"
	     " 1, 0, 0, 1, 0, 'a1');"
	     "INSERT INTO probes(probe_id, seq, kind, sent, outcome, analyzer) VALUES"
	     " (7, 1, 'probe', 1, 'delivered', 'a1'), (8, 1, 'probe', 2, 'lost', NULL);"
	     "INSERT INTO probe_hops(probe_id, seq, idx, switch) VALUES (7, 1, 0, 'leaf1'),"
	     " (7, 1, 1, 'spine1'), (8, 1, 0, 'leaf2');");
	st = open_ok(f->path);
	hs_store_close(st);
	assert_int_equal(q1(f->path, "PRAGMA user_version"), HS_STORE_SCHEMA);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM pragma_table_info('flows')"
			     " WHERE name = 'analyzer'"), 0);
	char *v = qtext(f->path, "SELECT group_concat(s.analyzer || ',' || w.src || ',' || w.packets"
			" || ',' || w.dropped) FROM flows w JOIN sessions s ON s.id = w.session");
	assert_string_equal(v, "a1,10.0.0.1,3,1");
	free(v);
	v = qtext(f->path, "SELECT group_concat(quote(analyzer) || ':' || probe_id || '/' || outcome,"
		  " ';') FROM (SELECT * FROM probes ORDER BY probe_id)");
	assert_string_equal(v, "'a1':7/delivered;'':8/lost");
	free(v);
	v = qtext(f->path, "SELECT group_concat(quote(analyzer) || ':' || probe_id || '/' || switch,"
		  " ';') FROM (SELECT * FROM probe_hops ORDER BY probe_id, idx)");
	assert_string_equal(v, "'a1':7/leaf1;'a1':7/spine1;'':8/leaf2");
	free(v);
}

/* Analyzers number their probes each on its own: two that wrote one
 * history with the same probe number each keep their own rows and hops,
 * one's run written again replaces its own rows only, and the listing
 * shows each probe once, under its analyzer. */
static void test_probe_ids_per_analyzer(void **state)
{
	struct fixture *f = *state;
	struct hs_store_probe run = { .probe_id = 7, .kind = "probe", .spec = "x" };
	const char *const names[] = { "an1", "an2", "an1" };
	const unsigned npkts[] = { 2, 3, 2 };
	struct got g;
	struct hs_rows rows = { got_cols, got_row, &g };
	char err[512];

	for (int i = 0; i < 3; i++) {
		struct hs_store *st = open_ok(f->path);

		hs_store_set_analyzer(st, names[i]);
		run.spec = names[i];
		assert_int_equal(hs_store_probe(st, &run, npkts[i], probe_hop_pkt, NULL, err,
						sizeof(err)), 0);
		hs_store_close(st);
	}
	assert_int_equal(q1(f->path, "SELECT count(*) FROM probes WHERE analyzer = 'an1'"), 2);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM probes WHERE analyzer = 'an2'"), 3);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM probe_hops WHERE analyzer = 'an1'"), 2);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM probe_hops WHERE analyzer = 'an2'"), 3);

	struct hs_store *st = open_ok(f->path);
	memset(&g, 0, sizeof(g));
	assert_int_equal(hs_store_list(st, HS_LIST_PROBES, 10, &rows, err, sizeof(err)), 0);
	assert_int_equal(g.nrows, 2);
	int an = -1, pk = -1, spec = -1;
	for (int c = 0; c < g.ncol; c++) {
		if (strcmp(g.names[c], "analyzer") == 0)
			an = c;
		else if (strcmp(g.names[c], "packets") == 0)
			pk = c;
		else if (strcmp(g.names[c], "spec") == 0)
			spec = c;
	}
	assert_true(an >= 0 && pk >= 0 && spec >= 0);
	for (int r = 0; r < 2; r++) {
		bool one = strcmp(g.text[r][an], "an1") == 0;
		assert_string_equal(g.text[r][an], one ? "an1" : "an2");
		assert_string_equal(g.text[r][spec], g.text[r][an]);
		assert_int_equal(g.v[r][pk].i, one ? 2 : 3);
	}
	assert_string_not_equal(g.text[0][an], g.text[1][an]);
	hs_store_close(st);
}

/* the tables (their columns: name, type, not null, default, key), views
 * (their columns) and indexes (their SQL) of a history, in one text */
static char *schema_of(const char *path)
{
	return qtext(path, "SELECT group_concat(d, char(10)) FROM (SELECT m.type || ' ' || m.name"
		     " || ' ' || CASE WHEN m.type = 'index' THEN ifnull(m.sql, '-') ELSE"
		     " (SELECT group_concat(c.name || ' ' || c.type || ' ' || c.\"notnull\" || ' '"
		     "  || ifnull(c.dflt_value, '-') || ' ' || c.pk, ', ')"
		     "  FROM pragma_table_xinfo(m.name) c) END AS d"
		     " FROM sqlite_master m ORDER BY m.type, m.name)");
}

/* a new file is made at the latest version at once: what the migrations
 * make of an old one, to the order of the columns */
static void test_new_file_schema(void **state)
{
	struct fixture *f = *state;
	char old[600];

	hs_store_close(open_ok(f->path));
	char *made = schema_of(f->path);
	snprintf(old, sizeof(old), "%s.old", f->path);
	make_v7(old);
	exec(old, "PRAGMA user_version = 7");
	hs_store_close(open_ok(old));
	assert_int_equal(q1(old, "PRAGMA user_version"), HS_STORE_SCHEMA);
	char *migrated = schema_of(old);
	assert_string_equal(made, migrated);
	assert_non_null(strstr(made, "table flows session INTEGER 1 - 0, src TEXT"));
	assert_non_null(strstr(made, "view hops trace"));
	free(made);
	free(migrated);
	unlink(old);
	static const char *const sfx[] = { "-wal", "-shm" };
	for (size_t i = 0; i < HS_ARRAY_SIZE(sfx); i++) {
		char side[640];
		snprintf(side, sizeof(side), "%s%s", old, sfx[i]);
		unlink(side);
	}
}

/* a session that read a file to its end names it; another file, or a session
 * that ended without one, does not */
static void test_input_session(void **state)
{
	struct fixture *f = *state;
	char err[512];
	struct hs_store *st = hs_store_open(f->path, err, sizeof(err));
	struct hs_session_stats ss = { .packets = 1, .input = "100:aa:bb" };

	assert_non_null(st);
	int64_t a = hs_store_session_begin(st, "a.pcap", NULL, T0);
	int64_t b = hs_store_session_begin(st, "b.pcap", NULL, T0);
	assert_int_equal(hs_store_input_session(st, "100:aa:bb"), 0);
	assert_int_equal(hs_store_session_end(st, a, &ss, T0 + 1), 0);
	ss.input = NULL;
	assert_int_equal(hs_store_session_end(st, b, &ss, T0 + 2), 0);
	assert_int_equal(hs_store_input_session(st, "100:aa:bb"), a);
	assert_int_equal(hs_store_input_session(st, "100:aa:bc"), 0);
	hs_store_close(st);
}

/* retention: an ended session goes whole once it ended before the cut; the
 * live session's rows go by capture time; a session read lately stays */
static void test_retention(void **state)
{
	struct fixture *f = *state;
	struct hs_store *st = open_ok(f->path);
	struct hs_session_stats ss = { .packets = 1 };
	struct hs_retention r = { 60 * HS_NS_PER_SEC, 0 }, got;
	struct hs_prune res;
	struct hs_trace t;
	const uint64_t S = HS_NS_PER_SEC;

	assert_int_equal(hs_store_retention(st, &got), 0);
	assert_int_equal(got.age_ns, 0);	/* none until set */
	memset(&res, 0, sizeof(res));
	assert_int_equal(hs_store_prune(st, T0 + 1000 * S, 0, 0, 100, &res), 0);

	int64_t old = hs_store_session_begin(st, "old.pcap", NULL, T0);
	for (int i = 0; i < 3; i++) {
		mktrace(&t, (uint64_t)i + 1, NULL);
		assert_int_equal(hs_store_trace(st, old, &t, NULL), 0);
	}
	struct hs_flow fo = flow("10.0.0.1", 1000, 1);
	assert_int_equal(hs_store_flow(st, old, &fo), 0);
	assert_int_equal(hs_store_session_end(st, old, &ss, T0 + S), 0);

	/* the live capture: traces 10 s, 100 s and 200 s into it */
	int64_t live = hs_store_session_begin(st, "eth0", NULL, T0 + 2 * S);
	const uint64_t at[] = { 10, 100, 200 };
	for (int i = 0; i < 3; i++) {
		mktrace(&t, (uint64_t)i + 1, NULL);
		t.hops[0].ts_ns = T0 + at[i] * S;
		hs_trace_classify(&t, NULL);
		assert_int_equal(hs_store_trace(st, live, &t, NULL), 0);
	}
	struct hs_flow f1 = flow("10.0.0.5", 1001, 1), f2 = flow("10.0.0.6", 1002, 1);
	f1.last_ns = T0 + 100 * S;
	f2.last_ns = T0 + 200 * S;
	assert_int_equal(hs_store_flow(st, live, &f1), 0);
	assert_int_equal(hs_store_flow(st, live, &f2), 0);
	assert_true(hs_store_commit(st) > 0);

	assert_int_equal(hs_store_set_retention(st, &r), 0);
	assert_int_equal(hs_store_retention(st, &got), 0);
	assert_int_equal(got.age_ns, 60 * S);
	assert_int_equal(got.max_bytes, 0);

	/* now T0 + 230 s: the cut is T0 + 170 s */
	memset(&res, 0, sizeof(res));
	int rc;
	while ((rc = hs_store_prune(st, T0 + 230 * S, live, live, 2, &res)) == 1)
		;
	assert_int_equal(rc, 0);
	assert_int_equal(res.traces, 5);
	assert_int_equal(res.flows, 2);
	assert_int_equal(res.sessions, 1);
	hs_store_close(st);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM sessions WHERE id = 1"), 0);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM traces"), 1);
	assert_int_equal(q1(f->path, "SELECT first_ts FROM traces"), (int64_t)(T0 + 200 * S));
	assert_int_equal(q1(f->path, "SELECT sport FROM flows"), 1002);
	/* a new history gives freed pages back */
	assert_int_equal(q1(f->path, "PRAGMA auto_vacuum"), 2);

	/* the bounds are the history's: a console opening it later sees them */
	st = open_ok(f->path);
	assert_int_equal(hs_store_retention(st, &got), 0);
	assert_int_equal(got.age_ns, 60 * S);
	/* with the live capture over, its session ages by when it ended */
	assert_int_equal(hs_store_session_end(st, live, &ss, T0 + 300 * S), 0);
	memset(&res, 0, sizeof(res));
	assert_int_equal(hs_store_prune(st, T0 + 330 * S, 0, 0, 100, &res), 0);
	assert_int_equal(res.traces, 0);
	while (hs_store_prune(st, T0 + 361 * S, 0, 0, 100, &res) == 1)
		;
	assert_int_equal(res.traces, 1);
	assert_int_equal(res.sessions, 1);
	hs_store_close(st);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM sessions"), 0);
}

static off_t file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? sb.st_size : -1;
}

/* with the checkpoint apart (a live capture's writer), the commit that
 * fills the log past its mark copies nothing into the file: the
 * checkpoint is handed out, and taken by whoever runs it, on a connection
 * of its own; without, the commit takes it as before */
static void test_checkpoint_apart(void **state)
{
	struct fixture *f = *state;
	struct hs_trace t;
	struct hs_store_ckpt *k = NULL;
	char wal[192];
	uint64_t id = 0;

	setenv("HOPSCOPE_TEST_CKPT_PAGES", "64", 1);
	snprintf(wal, sizeof(wal), "%s-wal", f->path);
	struct hs_store *st = open_ok(f->path);
	unsetenv("HOPSCOPE_TEST_CKPT_PAGES");
	int64_t sess = hs_store_session_begin(st, "x", NULL, T0);
	assert_true(sess > 0);
	assert_true(hs_store_commit(st) >= 0);
	off_t before = file_size(f->path);

	hs_store_checkpoint_apart(st, true);
	assert_null(hs_store_checkpoint_due(st));
	for (int b = 0; b < 200 && !k; b++) {
		for (int i = 0; i < 100; i++) {
			mktrace(&t, ++id, NULL);
			assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
		}
		assert_int_equal(hs_store_commit(st), 100);
		k = hs_store_checkpoint_due(st);
	}
	assert_non_null(k);
	assert_null(hs_store_checkpoint_due(st));	/* handed out once */
	assert_int_equal(file_size(f->path), before);	/* all still in the log */
	assert_true(file_size(wal) >= 64 * 4096);
	hs_store_checkpoint_run(k);
	assert_true(file_size(f->path) > before + 32 * 4096);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM traces"), (int64_t)id);

	/* apart no more: the next commit past the mark copies it itself */
	hs_store_checkpoint_apart(st, false);
	before = file_size(f->path);
	for (int b = 0; b < 200 && file_size(f->path) == before; b++) {
		for (int i = 0; i < 100; i++) {
			mktrace(&t, ++id, NULL);
			assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
		}
		assert_int_equal(hs_store_commit(st), 100);
		assert_null(hs_store_checkpoint_due(st));
	}
	assert_true(file_size(f->path) > before);
	hs_store_close(st);
	assert_int_equal(q1(f->path, "SELECT count(*) FROM traces"), (int64_t)id);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_and_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_listings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_not_db, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_foreign, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_newer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_bad_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_locked, setup, teardown),
		cmocka_unit_test(test_missing_dir),
		cmocka_unit_test_setup_teardown(test_not_a_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sql_readonly, setup, teardown),
		cmocka_unit_test_setup_teardown(test_input_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_v5_control, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flow_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_v6_flows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hop_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_interrupted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_v7_hops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hop_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_sources, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_v8_sources, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_v11_analyzers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heartbeat_newest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_v16_newest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_analyzer_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_v14_analyzer_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_probe_ids_per_analyzer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_file_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checkpoint_apart, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
