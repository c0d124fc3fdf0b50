/* test_snapshot.c - the driver's snapshot answer, the history, and diffs with
 * their ECMP groups */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "answer.h"
#include "snapshot.h"
#include "store.h"

#define T 1700000000000000000ULL

/* a driver's snapshot answer, and one of its ports */
#define SNAP(t, nsw, ports) \
	"{\"snapshot_ns\":" t ",\"switches\":" nsw ",\"ports\":[" ports "]}"
#define PORT(sw, port, rest) "{\"switch\":\"" sw "\",\"port\":\"" port "\"," rest "}"
/* the counters of a port read at 5, without and with the backlog pair after */
#define CB(backlog) \
	"\"read_ns\":5,\"rx_packets\":1,\"rx_bytes\":2,\"rx_drops\":3,\"tx_packets\":4," \
	"\"tx_bytes\":5,\"tx_drops\":6" backlog
#define C0 CB(",\"backlog_bytes\":null,\"backlog_packets\":null")

static const char fabric[] =
	"switch spine1 role spine mirror 10.255.0.1\n"
	"switch spine2 role spine mirror 10.255.0.2\n"
	"switch leaf1 role leaf mirror 10.255.0.3\n"
	"switch leaf2 role leaf mirror 10.255.0.4\n"
	"switch leaf3 role leaf mirror 10.255.0.5\n"
	"link leaf1 s1 spine1 l1\n"
	"link leaf1 s2 spine2 l1\n"
	"link leaf2 s1 spine1 l2\n"
	"link leaf2 s2 spine2 l2\n"
	"link leaf3 s1 spine1 l3\n"
	"link leaf3 s2 spine2 l3\n"
	"subnet leaf1 10.1.1.0/24\n"
	"subnet leaf2 10.1.2.0/24\n"
	"subnet leaf3 10.1.3.0/24\n";

/* a snapshot of the fabric at T + dt: every port's counters are base, but
 * leaf1 sent s1 and s2 on its uplinks */
static char *text_at(uint64_t dt, uint64_t base, uint64_t s1, uint64_t s2)
{
	static const char *const ports[][2] = {
		{ "spine1", "l1" }, { "spine1", "l2" }, { "spine1", "l3" },
		{ "spine2", "l1" }, { "spine2", "l2" }, { "spine2", "l3" },
		{ "leaf1", "s1" }, { "leaf1", "s2" }, { "leaf1", "h1" },
		{ "leaf2", "s1" }, { "leaf2", "s2" },
		{ "leaf3", "s1" }, { "leaf3", "s2" },
	};
	size_t cap = 8192, off = 0;
	char *buf = malloc(cap);

	off += (size_t)snprintf(buf + off, cap - off, "{\"snapshot_ns\":%llu,\"ports\":[",
				(unsigned long long)(T + dt));
	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
		uint64_t tx = base;
		/* each switch reads 10 us after the previous one */
		uint64_t rd = T + dt + 10000ULL * (uint64_t)(ports[i][0][0] == 'l' ?
							      ports[i][0][4] - '0' + 2 :
							      ports[i][0][5] - '1');

		if (strcmp(ports[i][0], "leaf1") == 0 && strcmp(ports[i][1], "s1") == 0)
			tx = s1;
		if (strcmp(ports[i][0], "leaf1") == 0 && strcmp(ports[i][1], "s2") == 0)
			tx = s2;
		off += (size_t)snprintf(buf + off, cap - off,
					"%s{\"switch\":\"%s\",\"port\":\"%s\",\"read_ns\":%llu,"
					"\"rx_packets\":10,\"rx_bytes\":%llu,\"rx_drops\":0,"
					"\"tx_packets\":20,\"tx_bytes\":%llu,\"tx_drops\":1,%s}\n",
					i ? "," : "", ports[i][0], ports[i][1], (unsigned long long)rd,
					(unsigned long long)base, (unsigned long long)tx,
					strcmp(ports[i][1], "h1") == 0 ?
					"\"backlog_bytes\":1500,\"backlog_packets\":1" :
					"\"backlog_bytes\":null,\"backlog_packets\":null");
	}
	snprintf(buf + off, cap - off, "],\"switches\":5}\n");
	return buf;
}

static void test_parse(void **state)
{
	struct hs_snap s;
	char err[256] = "";
	char *text = text_at(0, 1000, 5000, 7000);

	(void)state;
	assert_int_equal(hs_snap_parse(text, &s, err, sizeof(err)), 0);
	assert_int_equal(s.target_ns, T);
	assert_int_equal(s.nports, 13);
	assert_int_equal(s.nswitches, 5);
	/* spine1 reads at +0, leaf3 at +50 us */
	assert_int_equal(s.spread_ns, 50000);
	assert_string_equal(s.ports[7].sw, "leaf1");
	assert_string_equal(s.ports[7].port, "s2");
	assert_int_equal(s.ports[7].c[HS_SNAP_TX_BYTES], 7000);
	assert_int_equal(s.ports[7].c[HS_SNAP_RX_PACKETS], 10);
	assert_int_equal(s.ports[7].c[HS_SNAP_TX_DROPS], 1);
	assert_false(s.ports[7].has_backlog);
	assert_true(s.ports[8].has_backlog);
	assert_int_equal(s.ports[8].backlog_bytes, 1500);
	assert_int_equal(s.ports[8].backlog_packets, 1);
	hs_snap_free(&s);
	free(text);

	/* blanks between the tokens are fine, the members in any order */
	assert_int_equal(hs_snap_parse("\n{ \"switches\": 1, \"ports\": [ " PORT("a", "e0", C0)
				       " ],\n\"snapshot_ns\": 5 }\n", &s, err, sizeof(err)), 0);
	assert_int_equal(s.nports, 1);
	assert_int_equal(s.spread_ns, 0);
	hs_snap_free(&s);
}

static void test_parse_malformed(void **state)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "", "an empty answer" },
		{ "snapshot 5\nend 0 0\n", "line 1 column 8: '[' or '{' expected near 'snapshot'" },
		{ "[" PORT("a", "e0", C0) "]", "not a JSON object" },
		{ SNAP("5", "1", PORT("a", "e0", C0)) "x", "line 1 column " },
		/* cut short */
		{ "{\"snapshot_ns\":5,\"switches\":1,\"ports\":[" PORT("a", "e0", C0),
		  "line 1 column " },
		{ SNAP("\"x\"", "1", PORT("a", "e0", C0)), "snapshot_ns: not an integer" },
		{ "{\"snapshot_ns\":5,\"switches\":1}", "ports: missing" },
		{ "{\"snapshot_ns\":5,\"switches\":1,\"ports\":{}}", "ports: not an array" },
		{ "{\"snapshot_ns\":5,\"switches\":1,\"ports\":[],\"extra\":1}",
		  "unknown member 'extra'" },
		{ "{\"snapshot_ns\":5,\"snapshot_ns\":6,\"switches\":1,\"ports\":[]}",
		  "duplicate object key" },
		{ SNAP("5", "1", "1"), "ports[0]: not an object" },
		/* never a newline in the error, whatever the answer holds */
		{ "{\"snap\\nshot\":5}", "an unknown member, its name with a control character" },
		{ "{\"snap\nshot\":5}", "line 1 column " },
		{ SNAP("5", "1", PORT("a", "e0", "\"read_ns\":5")),
		  "ports[0]: switch 'a' port 'e0': rx_packets: missing" },
		{ SNAP("5", "1", PORT("a", "e0", C0 ",\"color\":1")),
		  "switch 'a' port 'e0': unknown member 'color'" },
		{ SNAP("5", "1", PORT("A", "e0", C0)), "ports[0]: switch: 'A' is not a switch name" },
		{ SNAP("5", "1", PORT("a", "e;0", C0)), "switch 'a' port 'e;0': port: 'e;0' is not" },
		{ SNAP("5", "1", PORT("a", "averyveryverylongname", C0)), "port: too long" },
		{ SNAP("5", "1", PORT("a", "e\\u00010", C0)), "port: a control character" },
		{ SNAP("5", "1", PORT("a", "e0", "\"read_ns\":5,\"rx_packets\":1,\"rx_bytes\":-2")),
		  "switch 'a' port 'e0': rx_bytes: -2 is out of range" },
		{ SNAP("5", "1", PORT("a", "e0", "\"read_ns\":5,\"rx_packets\":1.5")),
		  "rx_packets: not an integer" },
		{ SNAP("5", "1", PORT("a", "e0", "\"read_ns\":5,\"rx_packets\":\"1\"")),
		  "rx_packets: not an integer" },
		{ SNAP("5", "1", PORT("a", "e0", "\"read_ns\":5,\"rx_packets\":9223372036854775808")),
		  "too big integer" },
		{ SNAP("5", "1", PORT("a", "e0", CB(",\"backlog_bytes\":7,\"backlog_packets\":null"))),
		  "both numbers or both null" },
		{ SNAP("5", "1", PORT("a", "e0", CB(",\"backlog_bytes\":7,\"backlog_packets\":\"x\""))),
		  "backlog_packets: not an integer" },
		{ SNAP("100000000000", "1", PORT("a", "e0", C0)),
		  "read_ns: 5 is more than a minute from the instant" },
		{ SNAP("5", "1", PORT("a", "e0", C0) "," PORT("a", "e0", C0)),
		  "port 'e0' of switch 'a' appears twice" },
		{ SNAP("5", "2", PORT("a", "e0", C0)), "switches: 2, but the ports are of 1" },
		{ SNAP("5", "0", ""), "no ports" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct hs_snap s;
		char err[256] = "";

		if (hs_snap_parse(bad[i].text, &s, err, sizeof(err)) != -1 ||
		    !strstr(err, bad[i].err) || strchr(err, '\n')) {
			fprintf(stderr, "case %zu: got '%s', want '%s'\n", i, err, bad[i].err);
			fail();
		}
		assert_null(s.ports);
		assert_int_equal(s.nports, 0);
	}
}

/* an answer longer than any driver's is refused before it is read */
static void test_parse_oversized(void **state)
{
	size_t n = HS_ANSWER_MAX + 2;
	char *text = malloc(n + 1), err[256] = "";
	struct hs_snap s;

	(void)state;
	memset(text, ' ', n);
	text[0] = '{';
	text[n - 1] = '}';
	text[n] = '\0';
	assert_int_equal(hs_snap_parse(text, &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "longer than 8388608 bytes"));
	assert_null(s.ports);
	free(text);
}

struct dbfix {
	char dir[64], path[96];
	struct hs_store *st;
};

static int db_setup(void **state)
{
	struct dbfix *f = calloc(1, sizeof(*f));
	char err[256];

	snprintf(f->dir, sizeof(f->dir), "/tmp/hs-snapshot-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/h.db", f->dir);
	f->st = hs_store_open(f->path, err, sizeof(err));
	if (!f->st)
		return -1;
	*state = f;
	return 0;
}

static int db_teardown(void **state)
{
	struct dbfix *f = *state;
	char p[128];

	hs_store_close(f->st);
	unlink(f->path);
	snprintf(p, sizeof(p), "%s-wal", f->path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", f->path);
	unlink(p);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* a query on the history file, from a connection of the test's own */
static int64_t count(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	int64_t v = -1;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

static void test_store_load(void **state)
{
	struct dbfix *f = *state;
	struct hs_snap s, l;
	char err[256] = "";
	char *text = text_at(0, 1000, 5000, 7000);

	hs_store_commit(f->st);
	assert_int_equal(hs_snap_parse(text, &s, err, sizeof(err)), 0);
	s.taken_ns = T - 5;
	s.session = 3;
	assert_int_equal(hs_store_snapshot(f->st, &s, err, sizeof(err)), 0);
	assert_int_equal(s.id, 1);
	assert_int_equal(count(f->path, "SELECT count(*) FROM snapshot_counters WHERE snapshot = 1"), 13);
	assert_int_equal(count(f->path,
			       "SELECT count(*) FROM snapshot_counters WHERE backlog_bytes IS NULL"),
			 12);

	assert_int_equal(hs_store_snapshot_load(f->st, 1, true, &l, err, sizeof(err)), 0);
	assert_int_equal(l.id, 1);
	assert_int_equal(l.taken_ns, T - 5);
	assert_int_equal(l.target_ns, T);
	assert_int_equal(l.spread_ns, 50000);
	assert_int_equal(l.nswitches, 5);
	assert_int_equal(l.session, 3);
	assert_int_equal(l.nports, 13);
	for (size_t i = 0; i < l.nports; i++) {
		assert_string_equal(l.ports[i].sw, s.ports[i].sw);
		assert_string_equal(l.ports[i].port, s.ports[i].port);
		assert_int_equal(l.ports[i].read_ns, s.ports[i].read_ns);
		assert_memory_equal(l.ports[i].c, s.ports[i].c, sizeof(s.ports[i].c));
		assert_int_equal(l.ports[i].has_backlog, s.ports[i].has_backlog);
		assert_int_equal(l.ports[i].backlog_bytes, s.ports[i].backlog_bytes);
	}
	hs_snap_free(&l);
	/* without ports: the summary only */
	assert_int_equal(hs_store_snapshot_load(f->st, 1, false, &l, err, sizeof(err)), 0);
	assert_int_equal(l.nswitches, 5);
	assert_null(l.ports);
	assert_int_equal(hs_store_snapshot_load(f->st, 2, true, &l, err, sizeof(err)), 1);

	/* a failed store leaves nothing: a second insert of snapshot id 1's
	 * ports under a taken row that cannot be written */
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TRIGGER no_more BEFORE INSERT ON snapshot_counters"
				      " WHEN NEW.snapshot > 1 BEGIN SELECT RAISE(ABORT, 'full'); END",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(hs_store_snapshot(f->st, &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot store the snapshot: full"));
	assert_int_equal(count(f->path, "SELECT count(*) FROM snapshots"), 1);
	assert_int_equal(count(f->path, "SELECT count(*) FROM snapshot_counters"), 13);
	hs_snap_free(&s);
	free(text);
}

static const struct hs_snap_group *group_of(const struct hs_snap_diff *d,
					    const struct hs_topo *t, const char *sw)
{
	for (size_t i = 0; i < d->ngroups; i++)
		if (strcmp(t->sw[d->groups[i].sw].name, sw) == 0)
			return &d->groups[i];
	return NULL;
}

static void test_diff(void **state)
{
	struct hs_snap a, b;
	struct hs_snap_diff d;
	char err[256] = "";
	char *ta = text_at(0, 1000, 1000, 1000);
	/* two seconds later: every port sent 200 kB more, leaf1 300 kB on s1
	 * and 100 kB on s2 */
	char *tb = text_at(2 * HS_NS_PER_SEC, 201000, 301000, 101000);
	struct hs_topo *t = hs_topo_parse(fabric, "fabric", err, sizeof(err));

	(void)state;
	assert_non_null(t);
	assert_int_equal(hs_snap_parse(ta, &a, err, sizeof(err)), 0);
	assert_int_equal(hs_snap_parse(tb, &b, err, sizeof(err)), 0);
	a.id = 1;
	b.id = 2;

	assert_int_equal(hs_snap_diff(&a, &b, t, 0.25, &d, err, sizeof(err)), 0);
	assert_int_equal(d.interval_ns, 2 * HS_NS_PER_SEC);
	assert_int_equal(d.nports, 13);
	assert_int_equal(d.only_a + d.only_b, 0);
	const struct hs_snap_delta *p = &d.ports[7];	/* leaf1 s2 */
	assert_string_equal(p->b->port, "s2");
	assert_int_equal(p->interval_ns, 2 * HS_NS_PER_SEC);
	assert_int_equal(p->d[HS_SNAP_TX_BYTES], 100000);
	assert_int_equal(p->d[HS_SNAP_RX_BYTES], 200000);
	assert_int_equal(p->d[HS_SNAP_RX_PACKETS], 0);
	assert_true(fabs(p->rate[HS_SNAP_TX_BYTES] - 50000.0) < 1e-6);
	assert_false(p->reset);

	/* groups: one per leaf (its uplinks toward the two other leaves), none
	 * at the spines (one next hop toward each leaf) */
	assert_int_equal(d.ngroups, 3);
	assert_null(group_of(&d, t, "spine1"));
	const struct hs_snap_group *g = group_of(&d, t, "leaf1");
	assert_non_null(g);
	assert_string_equal(g->toward, "leaf2,leaf3");
	assert_int_equal(g->n, 2);
	assert_string_equal(g->m[0].port, "s1");
	assert_string_equal(t->sw[g->m[0].neighbour].name, "spine1");
	assert_string_equal(g->m[1].port, "s2");
	assert_int_equal(g->tx_bytes, 400000);
	assert_true(fabs(g->m[0].share - 0.75) < 1e-9);
	assert_true(fabs(g->m[1].share - 0.25) < 1e-9);
	assert_true(fabs(g->imbalance - 0.5) < 1e-9);
	assert_true(g->complete);
	assert_true(g->flagged);
	g = group_of(&d, t, "leaf2");
	assert_non_null(g);
	assert_string_equal(g->toward, "leaf1,leaf3");
	assert_true(fabs(g->imbalance) < 1e-9);
	assert_false(g->flagged);
	hs_snap_diff_free(&d);

	/* above the threshold only */
	assert_int_equal(hs_snap_diff(&a, &b, t, 0.6, &d, err, sizeof(err)), 0);
	assert_false(group_of(&d, t, "leaf1")->flagged);
	hs_snap_diff_free(&d);

	/* no topology: deltas, no groups */
	assert_int_equal(hs_snap_diff(&a, &b, NULL, 0.25, &d, err, sizeof(err)), 0);
	assert_int_equal(d.nports, 13);
	assert_int_equal(d.ngroups, 0);
	hs_snap_diff_free(&d);

	/* the other way round is refused */
	assert_int_equal(hs_snap_diff(&b, &a, t, 0.25, &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "snapshot 2 was not taken before snapshot 1"));
	hs_snap_free(&a);
	hs_snap_free(&b);
	free(ta);
	free(tb);
	hs_topo_free(t);
}

static void test_diff_idle_reset_missing(void **state)
{
	struct hs_snap a, b;
	struct hs_snap_diff d;
	char err[256] = "";
	/* an idle fabric: leaf1 sent 3 packets' worth, all on s1 */
	char *ta = text_at(0, 5000, 5000, 5000);
	char *tb = text_at(HS_NS_PER_SEC, 5000, 5180, 5000);
	struct hs_topo *t = hs_topo_parse(fabric, "fabric", err, sizeof(err));

	(void)state;
	assert_int_equal(hs_snap_parse(ta, &a, err, sizeof(err)), 0);
	assert_int_equal(hs_snap_parse(tb, &b, err, sizeof(err)), 0);
	assert_int_equal(hs_snap_diff(&a, &b, t, 0.25, &d, err, sizeof(err)), 0);
	const struct hs_snap_group *g = group_of(&d, t, "leaf1");
	assert_true(fabs(g->imbalance - 1.0) < 1e-9);
	assert_false(g->flagged);	/* 180 bytes: too little to judge */
	g = group_of(&d, t, "leaf2");
	assert_int_equal(g->tx_bytes, 0);
	assert_true(fabs(g->imbalance) < 1e-9);
	assert_false(g->flagged);
	hs_snap_diff_free(&d);

	/* a counter that went back counts from zero and says so */
	b.ports[0].c[HS_SNAP_RX_BYTES] = 40;
	/* leaf1's s2 is in the second snapshot only, under another name */
	snprintf(b.ports[7].port, sizeof(b.ports[7].port), "s2new");
	assert_int_equal(hs_snap_diff(&a, &b, t, 0.25, &d, err, sizeof(err)), 0);
	assert_int_equal(d.nports, 12);
	assert_int_equal(d.only_a, 1);
	assert_int_equal(d.only_b, 1);
	assert_true(d.ports[0].reset);
	assert_int_equal(d.ports[0].d[HS_SNAP_RX_BYTES], 40);
	g = group_of(&d, t, "leaf1");
	assert_false(g->complete);
	assert_null(g->m[1].delta);
	assert_false(g->flagged);
	hs_snap_diff_free(&d);

	hs_snap_free(&a);
	hs_snap_free(&b);
	free(ta);
	free(tb);
	hs_topo_free(t);
}

/* a K=4 fat tree: in pod p edges eP0 eP1 and aggregations aP0 aP1 fully
 * joined; aPj up to cores cj0 and cj1; ports named after the peer */
static void test_groups_fattree(void **state)
{
	char topo[8192], snap[32768], err[256] = "";
	size_t off = 0, so = 0;
	unsigned nports = 0;

	(void)state;
	for (int p = 0; p < 4; p++)
		for (int i = 0; i < 2; i++) {
			off += (size_t)snprintf(topo + off, sizeof(topo) - off,
						"switch e%d%d role tor mirror 10.255.0.%d\n"
						"switch a%d%d role agg mirror 10.255.1.%d\n"
						"subnet e%d%d 10.%d.%d.0/24\n",
						p, i, 10 * p + i + 1, p, i, 10 * p + i + 1, p, i, p + 1, i);
		}
	for (int j = 0; j < 2; j++)
		for (int k = 0; k < 2; k++)
			off += (size_t)snprintf(topo + off, sizeof(topo) - off,
						"switch c%d%d role core mirror 10.255.2.%d\n", j, k,
						2 * j + k + 1);
	so += (size_t)snprintf(snap + so, sizeof(snap) - so, "{\"snapshot_ns\":%llu,\"ports\":[",
			       (unsigned long long)T);
	for (int p = 0; p < 4; p++)
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++) {
				off += (size_t)snprintf(topo + off, sizeof(topo) - off,
							"link e%d%d a%d%d a%d%d e%d%d\n", p, i, p, j, p, j,
							p, i);
				off += (size_t)snprintf(topo + off, sizeof(topo) - off,
							"link a%d%d c%d%d c%d%d a%d%d\n", p, i, i, j, i, j,
							p, i);
#define ZERO "\"read_ns\":%llu,\"rx_packets\":0,\"rx_bytes\":0,\"rx_drops\":0," \
	"\"tx_packets\":0,\"tx_bytes\":0,\"tx_drops\":0,\"backlog_bytes\":null," \
	"\"backlog_packets\":null}"
				so += (size_t)snprintf(snap + so, sizeof(snap) - so,
						       "%s{\"switch\":\"e%d%d\",\"port\":\"a%d%d\"," ZERO
						       ",{\"switch\":\"a%d%d\",\"port\":\"c%d%d\"," ZERO,
						       nports ? "," : "", p, i, p, j, (unsigned long long)T,
						       p, i, i, j, (unsigned long long)T);
#undef ZERO
				nports += 2;
			}
	snprintf(snap + so, sizeof(snap) - so, "],\"switches\":16}");

	struct hs_topo *t = hs_topo_parse(topo, "fattree", err, sizeof(err));
	struct hs_snap a, b;
	struct hs_snap_diff d;

	if (!t)
		fprintf(stderr, "%s\n", err);
	assert_non_null(t);
	assert_int_equal(hs_snap_parse(snap, &a, err, sizeof(err)), 0);
	assert_int_equal(hs_snap_parse(snap, &b, err, sizeof(err)), 0);
	b.target_ns += HS_NS_PER_SEC;
	assert_int_equal(hs_snap_diff(&a, &b, t, 0.25, &d, err, sizeof(err)), 0);
	/* one group per edge (its two aggregations, toward the 7 other edges)
	 * and one per aggregation (its two cores, toward the 6 edges of the
	 * other pods); none at the cores */
	assert_int_equal(d.ngroups, 16);
	for (size_t i = 0; i < d.ngroups; i++) {
		const struct hs_snap_group *g = &d.groups[i];
		const char *sw = t->sw[g->sw].name;
		size_t commas = 0;

		for (const char *c = g->toward; *c; c++)
			commas += *c == ',';
		assert_int_equal(g->n, 2);
		assert_true(g->complete);
		assert_false(g->flagged);
		if (sw[0] == 'e') {
			assert_int_equal(commas + 1, 7);
			assert_int_equal(g->m[0].port[0], 'a');
			assert_int_equal(g->m[1].port[0], 'a');
		} else {
			assert_int_equal(sw[0], 'a');
			assert_int_equal(commas + 1, 6);
			assert_null(strstr(g->toward, (char[]){ 'e', sw[1], 0 }));
			assert_int_equal(g->m[0].port[0], 'c');
			assert_int_equal(g->m[0].port[1], sw[2]);
		}
	}
	hs_snap_diff_free(&d);
	hs_snap_free(&a);
	hs_snap_free(&b);
	hs_topo_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_parse_oversized),
		cmocka_unit_test_setup_teardown(test_store_load, db_setup, db_teardown),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_diff_idle_reset_missing),
		cmocka_unit_test(test_groups_fattree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
