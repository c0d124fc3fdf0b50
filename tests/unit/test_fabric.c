/* test_fabric.c - where a history many analyzers write is whole: the
 * packets whose parts may still be on their way are left out, by the
 * fabric view and the store-answered verbs alike; what is read back of it */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "capture.h"
#include "fabric.h"

#define T0 (1700000000ULL * HS_NS_PER_SEC)
#define S HS_NS_PER_SEC
#define WINDOW S	/* the trace timeout */

/* one analyzer captures; its newest stored packet was first seen at newest */
static struct hs_store_others capturing(uint64_t newest)
{
	return (struct hs_store_others){ .have_newest = true, .newest = newest, .others = 1,
					 .running = 1 };
}

/* Nothing captures: every stored packet is whole, however recent */
static void test_settled(void **state)
{
	struct hs_store_others p = capturing(T0);

	(void)state;
	p.running = 0;
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, T0, T0), T0 + 1);
	assert_int_equal(hs_fabric_whole_until(&p, WINDOW, T0), 0);
}

/* While one captures, the packets first seen within a settle of the
 * newest may have parts to come, until the newest has not changed for a
 * settle and a heartbeat */
static void test_capturing(void **state)
{
	struct hs_store_others p = capturing(T0);
	uint64_t settle = hs_fabric_settle_ns(&p, WINDOW), quiet = settle + HS_HEARTBEAT_NS;

	(void)state;
	assert_true(settle >= 2 * WINDOW);
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, T0 + S, T0), T0 - settle);
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, T0 + quiet, T0), T0 - settle);
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, T0 + quiet + 1, T0), T0 + 1);
	assert_int_equal(hs_fabric_whole_until(&p, WINDOW, T0 + quiet), T0 - settle);
	assert_int_equal(hs_fabric_whole_until(&p, WINDOW, T0 + quiet + 1), 0);

	/* a writer's lag is waited for too */
	p.lag_ns = 30 * S;
	assert_int_equal(hs_fabric_settle_ns(&p, WINDOW), settle + 30 * S);
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, T0 + S, T0), T0 - settle - 30 * S);
}

/* Captures of old files: the newest packet was first seen long ago, and
 * the fabric view saw it change a moment ago: not whole yet for the view,
 * which knows when it changed; whole for a verb that looks once and has
 * only its time */
static void test_moved(void **state)
{
	struct hs_store_others p = capturing(T0);
	uint64_t settle = hs_fabric_settle_ns(&p, WINDOW), now = T0 + 3600 * S;

	(void)state;
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, now, now - S), T0 - settle);
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, now, T0), T0 + 1);
	assert_int_equal(hs_fabric_whole_until(&p, WINDOW, now), 0);
}

/* Packets first seen within a settle of the clock's start: none is whole
 * yet (0), which a read of the newest takes as its least end, 1 (0 there
 * is no end); a history with nothing stored has no end */
static void test_none_whole(void **state)
{
	struct hs_store_others p = capturing(S);
	struct hs_store_others empty = { .others = 1, .running = 1 };

	(void)state;
	assert_int_equal(hs_fabric_whole_end(&p, WINDOW, 2 * S, S), 0);
	assert_int_equal(hs_fabric_whole_until(&p, WINDOW, 2 * S), 1);
	assert_int_equal(hs_fabric_whole_until(&empty, WINDOW, T0), 0);
}

static struct hs_addr addr(const char *s)
{
	struct hs_addr a;

	assert_int_equal(hs_addr_parse(s, &a), 0);
	return a;
}

struct got {
	struct hs_trace t[4];
	unsigned n;
};

static void got(void *arg, const struct hs_trace *t, bool foreign)
{
	struct got *g = arg;

	(void)foreign;
	if (g->n < HS_ARRAY_SIZE(g->t))
		g->t[g->n] = *t;
	g->n++;
}

/* a history of the test's own, in a directory of its own */
struct hist {
	char dir[32], path[64];
	struct hs_store *st;
};

static void hist_open(struct hist *h)
{
	char err[512];

	snprintf(h->dir, sizeof(h->dir), "/tmp/hs-fabric-XXXXXX");
	assert_non_null(mkdtemp(h->dir));
	snprintf(h->path, sizeof(h->path), "%s/h.db", h->dir);
	h->st = hs_store_open(h->path, err, sizeof(err));
	if (!h->st)
		fail_msg("%s", err);
}

static void hist_close(struct hist *h)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
	char p[80];

	hs_store_close(h->st);
	for (size_t i = 0; i < HS_ARRAY_SIZE(sfx); i++) {
		snprintf(p, sizeof(p), "%s%s", h->path, sfx[i]);
		unlink(p);
	}
	rmdir(h->dir);
}

/* A copy from a source the analyzer does not know (a plain copy naming no
 * mirror source, the tracer's source 0) is stored with no address; read
 * back it is a hop of no switch, as it was, beside the packets of known
 * switches: the history is read whole, not refused */
static void test_unknown_source(void **state)
{
	char err[512];
	struct hs_trace t;
	struct hist h;

	(void)state;
	hist_open(&h);
	struct hs_store *st = h.st;
	hs_store_set_analyzer(st, "an1");
	int64_t sess = hs_store_session_begin(st, "x", NULL, T0);
	memset(&t, 0, sizeof(t));
	t.key.src = addr("fe80::1");
	t.key.dst = addr("ff02::16");
	t.key.proto = 58;
	t.nhops = 2;
	for (unsigned i = 0; i < 2; i++) {
		t.hops[i].sw = -1;	/* addr: af 0, none */
		t.hops[i].ts_ns = T0 + i * 1000;
		t.hops[i].ttl = 1;
	}
	hs_trace_classify(&t, NULL);
	assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	t.key.src = addr("10.1.1.10");
	t.key.dst = addr("10.1.2.10");
	t.key.proto = 6;
	t.nhops = 1;
	t.hops[0].addr = addr("10.255.0.3");
	t.hops[0].ts_ns = T0 + 5000;
	t.hops[0].ttl = 64;
	assert_int_equal(hs_store_trace(st, sess, &t, NULL), 0);
	assert_true(hs_store_commit(st) >= 2);

	struct hs_fabric_range r = { .since_ns = T0, .window_ns = WINDOW };
	struct hs_fabric_stats fs;
	struct got g = { .n = 0 };
	if (hs_fabric_load(st, NULL, &r, got, &g, &fs, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(g.n, 2);
	assert_int_equal(fs.traces, 2);
	assert_int_equal(g.t[0].key.proto, 58);
	assert_int_equal(g.t[0].nhops, 2);	/* two copies, neither the other's duplicate */
	assert_int_equal(g.t[0].hops[0].addr.af, 0);
	assert_int_equal(g.t[0].hops[0].sw, -1);
	assert_int_equal(g.t[0].hops[1].ts_ns, T0 + 1000);
	assert_int_equal(g.t[1].nhops, 1);
	assert_int_equal(g.t[1].hops[0].addr.af, 4);
	hist_close(&h);
}

/* one analyzer's part of a packet: the copies of switches sw (by name in
 * tp), from TTL 64 - first down, at ts and a microsecond apart */
static void part(struct hs_store *st, const char *analyzer, const struct hs_topo *tp,
		 const char *const *sw, unsigned n, uint8_t first, uint64_t ts)
{
	struct hs_trace t;

	hs_store_set_analyzer(st, analyzer);
	int64_t sess = hs_store_session_begin(st, analyzer, NULL, T0);
	memset(&t, 0, sizeof(t));
	t.key.src = addr("10.1.3.12");
	t.key.dst = addr("10.1.4.11");
	t.key.proto = 6;
	t.key.sport = 5001;
	t.key.dport = 43414;
	t.seq = 1275681819;	/* a SYN-ACK: IP ID 0 */
	t.tcp_flags = 0x12;
	t.len = 60;
	t.nhops = n;
	for (unsigned i = 0; i < n; i++) {
		int k = hs_topo_switch_by_name(tp, sw[i]);
		t.hops[i].sw = k;
		t.hops[i].addr = tp->sw[k].mirror;
		t.hops[i].ts_ns = ts + i * 1000;
		t.hops[i].ttl = (uint8_t)(64 - first - i);
	}
	hs_trace_classify(&t, tp);
	assert_int_equal(hs_store_trace(st, sess, &t, tp), 0);
	assert_true(hs_store_commit(st) >= 1);
}

/* Two packets alike to the byte (a SYN-ACK sent twice at once, IP ID 0),
 * each seen at leaf3 by an1 and at spine2 and leaf4 by an2, each analyzer
 * storing a trace of each: read back, two packets of three hops, as one
 * analyzer seeing every copy has them, not one of six (leaf3 twice, the
 * link to leaf4 crossed once) */
static void test_alike_packets(void **state)
{
	char err[512];
	struct hist h;
	static const char *const an1[] = { "leaf3" }, *const an2[] = { "spine2", "leaf4" };
	struct hs_topo *tp = hs_topo_parse("switch leaf3 role leaf mirror 10.255.0.5\n"
					   "switch spine2 role spine mirror 10.255.0.2\n"
					   "switch leaf4 role leaf mirror 10.255.0.6\n"
					   "link leaf3 a spine2 b\nlink leaf4 c spine2 d\n"
					   "subnet leaf3 10.1.3.0/24\nsubnet leaf4 10.1.4.0/24\n",
					   "t", err, sizeof(err));

	(void)state;
	assert_non_null(tp);
	hist_open(&h);
	part(h.st, "an2", tp, an2, 2, 1, T0 + 1000);
	part(h.st, "an2", tp, an2, 2, 1, T0 + 23000);
	part(h.st, "an1", tp, an1, 1, 0, T0 + 64000);
	part(h.st, "an1", tp, an1, 1, 0, T0 + 121000);

	struct hs_fabric_range r = { .since_ns = T0, .window_ns = WINDOW };
	struct hs_fabric_stats fs;
	struct got g = { .n = 0 };
	if (hs_fabric_load(h.st, tp, &r, got, &g, &fs, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(g.n, 2);
	assert_int_equal(fs.stored, 4);
	assert_int_equal(fs.joined, 2);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(g.t[i].nhops, 3);
		assert_int_equal(g.t[i].outcome, HS_OUT_DELIVERED);
		assert_string_equal(tp->sw[g.t[i].hops[0].sw].name, "leaf3");
		assert_string_equal(tp->sw[g.t[i].hops[1].sw].name, "spine2");
		assert_string_equal(tp->sw[g.t[i].hops[2].sw].name, "leaf4");
		assert_string_equal(hs_fabric_analyzers(g.t[i].analyzer), "an1+an2");
	}
	hist_close(&h);
	hs_topo_free(tp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settled),
		cmocka_unit_test(test_capturing),
		cmocka_unit_test(test_moved),
		cmocka_unit_test(test_none_whole),
		cmocka_unit_test(test_unknown_source),
		cmocka_unit_test(test_alike_packets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
