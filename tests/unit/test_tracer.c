/* test_tracer.c - joining copies into traces, outcomes, flows */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tracer.h"
#include "flows.h"

#define US 1000ULL
#define MS 1000000ULL
#define T0 (1700000000ULL * HS_NS_PER_SEC)

static const char fabric[] =
	"switch spine1 role spine mirror 10.255.0.1\n"
	"switch spine2 role spine mirror 10.255.0.2\n"
	"switch leaf1 role leaf mirror 10.255.0.3\n"
	"switch leaf2 role leaf mirror 10.255.0.4\n"
	"link leaf1 s1 spine1 l1\n"
	"link leaf1 s2 spine2 l1\n"
	"link leaf2 s1 spine1 l2\n"
	"link leaf2 s2 spine2 l2\n"
	"subnet leaf1 10.1.1.0/24\n"
	"subnet leaf2 10.1.2.0/24\n";

enum { SPINE1, SPINE2, LEAF1, LEAF2 };
static const char *const mirror_of[] = { "10.255.0.1", "10.255.0.2", "10.255.0.3", "10.255.0.4" };

/* collects closed traces */
struct sink {
	struct hs_trace t[64];
	int n;
};

static void on_close(void *arg, const struct hs_trace *t)
{
	struct sink *s = arg;

	/* every closed trace carries its flow's hash for the analyses */
	assert_true(t->key_hash == hs_flowkey_hash(&t->key));
	if (s->n < (int)HS_ARRAY_SIZE(s->t))
		s->t[s->n] = *t;
	s->n++;
}

static struct hs_addr A(const char *s)
{
	struct hs_addr a;

	assert_int_equal(hs_addr_parse(s, &a), 0);
	return a;
}

/* a TCP copy of packet (src > dst, ip_id, seq) seen at mirror sw */
static struct hs_pkt tcp(const char *src, const char *dst, uint16_t ip_id, uint32_t seq, int sw,
			 uint8_t ttl, uint64_t ts)
{
	struct hs_pkt p;

	memset(&p, 0, sizeof(p));
	p.have = HS_HAVE_MIRROR | HS_HAVE_ERSPAN | HS_HAVE_SESSION | HS_HAVE_IP |
		 HS_HAVE_PORTS | HS_HAVE_TCP | HS_HAVE_IPID;
	p.ts_ns = ts;
	p.mirror_src = A(mirror_of[sw]);
	p.mirror_dst = A("10.255.0.254");
	p.session = 1;
	p.key.src = A(src);
	p.key.dst = A(dst);
	p.key.sport = 40000;
	p.key.dport = 80;
	p.key.proto = 6;
	p.ttl = ttl;
	p.ip_id = ip_id;
	p.seq = seq;
	p.tcp_flags = 0x02;
	p.len = 60;
	return p;
}

static struct hs_tracer *mk(struct sink *s, const struct hs_topo *topo, size_t max_open,
			    size_t ring)
{
	struct hs_tracer_cfg cfg = {
		.timeout_ns = 1 * MS, .max_open = max_open, .ring = ring,
		.topo = topo, .on_close = on_close, .arg = s,
	};

	memset(s, 0, sizeof(*s));
	return hs_tracer_new(&cfg);
}

static struct hs_topo *topo(void)
{
	char err[256];
	struct hs_topo *t = hs_topo_parse(fabric, "fabric", err, sizeof(err));

	if (!t)
		fail_msg("%s", err);
	return t;
}

static void add(struct hs_tracer *tr, struct hs_pkt p)
{
	hs_tracer_add(tr, &p, 0);
}

static void test_grouping_and_order(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 64, 64);
	struct hs_tracer_stats st;

	/* copies arrive out of path order; a second packet is interleaved */
	add(tr, tcp("10.1.1.10", "10.1.2.10", 7, 1000, LEAF2, 62, T0 + 30 * US));
	add(tr, tcp("10.1.1.10", "10.1.2.10", 7, 1000, LEAF1, 64, T0 + 10 * US));
	add(tr, tcp("10.1.1.10", "10.1.2.10", 8, 1000, LEAF1, 64, T0 + 11 * US));
	add(tr, tcp("10.1.1.10", "10.1.2.10", 7, 1000, SPINE1, 63, T0 + 20 * US));
	add(tr, tcp("10.1.1.10", "10.1.2.10", 7, 2000, LEAF1, 64, T0 + 12 * US));
	hs_tracer_get_stats(tr, &st);
	assert_int_equal(st.copies, 5);
	assert_int_equal(st.open, 3);
	assert_int_equal(s.n, 0);
	hs_tracer_close_all(tr);
	assert_int_equal(s.n, 3);
	hs_tracer_get_stats(tr, &st);
	assert_int_equal(st.open, 0);
	assert_int_equal(st.closed, 3);
	assert_int_equal(st.by_outcome[HS_OUT_UNKNOWN], 3);

	const struct hs_trace *t = NULL;
	for (int i = 0; i < s.n; i++)
		if (s.t[i].ip_id == 7 && s.t[i].seq == 1000)
			t = &s.t[i];
	assert_non_null(t);
	assert_int_equal(t->nhops, 3);
	assert_int_equal(t->hops[0].ttl, 64);
	assert_int_equal(t->hops[1].ttl, 63);
	assert_int_equal(t->hops[2].ttl, 62);
	assert_int_equal(t->hops[0].ts_ns, T0 + 10 * US);
	assert_int_equal(t->hops[2].ts_ns, T0 + 30 * US);
	assert_true(hs_addr_eq(&t->hops[1].addr, &(struct hs_addr){ 0 }) == false);
	char buf[64];
	assert_string_equal(hs_hop_name(NULL, &t->hops[1], buf, sizeof(buf)), "10.255.0.1");
	assert_int_equal(t->hops[1].sw, -1);
	assert_int_equal(t->outcome, HS_OUT_UNKNOWN);
	assert_int_equal(t->key.sport, 40000);
	assert_int_equal(t->tcp_flags, 0x02);
	assert_int_equal(t->len, 60);
	hs_tracer_free(tr);
}

static void test_same_ttl_by_time_and_duplicates(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 64, 64);
	struct hs_tracer_stats st;

	/* two switches see the same TTL (one does not decrement): time decides */
	add(tr, tcp("10.1.1.10", "10.1.2.10", 1, 5, SPINE2, 63, T0 + 50 * US));
	add(tr, tcp("10.1.1.10", "10.1.2.10", 1, 5, SPINE1, 63, T0 + 40 * US));
	add(tr, tcp("10.1.1.10", "10.1.2.10", 1, 5, SPINE1, 63, T0 + 45 * US));	/* duplicate */
	add(tr, tcp("10.1.1.10", "10.1.2.10", 1, 5, LEAF1, 64, T0 + 60 * US));
	hs_tracer_get_stats(tr, &st);
	assert_int_equal(st.duplicates, 1);
	hs_tracer_close_all(tr);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.t[0].nhops, 3);
	assert_true(hs_addr_eq(&s.t[0].hops[0].addr, &(struct hs_addr){ .af = 4, .a = { 10, 255, 0, 3 } }));
	assert_true(hs_addr_eq(&s.t[0].hops[1].addr, &(struct hs_addr){ .af = 4, .a = { 10, 255, 0, 1 } }));
	assert_true(hs_addr_eq(&s.t[0].hops[2].addr, &(struct hs_addr){ .af = 4, .a = { 10, 255, 0, 2 } }));
	/* the copy that came first in capture time keeps its own time */
	assert_int_equal(s.t[0].hops[1].ts_ns, T0 + 40 * US);
	hs_tracer_free(tr);
}

static void test_timeout_capture_time(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 64, 64);

	add(tr, tcp("10.1.1.10", "10.1.2.10", 1, 1, LEAF1, 64, T0));			/* A */
	add(tr, tcp("10.1.1.10", "10.1.2.10", 2, 1, LEAF1, 64, T0 + 200 * US));	/* B */
	hs_tracer_advance(tr, T0 + 500 * US);
	assert_int_equal(s.n, 0);
	add(tr, tcp("10.1.1.10", "10.1.2.10", 1, 1, SPINE1, 63, T0 + 600 * US));	/* A again */
	hs_tracer_advance(tr, T0 + 1 * MS);		/* nothing quiet for more than 1 ms */
	assert_int_equal(s.n, 0);
	hs_tracer_advance(tr, T0 + 1300 * US);		/* B quiet since 200us */
	assert_int_equal(s.n, 1);
	assert_int_equal(s.t[0].ip_id, 2);
	assert_int_equal(s.t[0].id, 1);
	hs_tracer_advance(tr, T0 + 1600 * US);		/* A: exactly 1 ms, still open */
	assert_int_equal(s.n, 1);
	hs_tracer_advance(tr, T0 + 1601 * US);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.t[1].ip_id, 1);
	assert_int_equal(s.t[1].nhops, 2);
	assert_int_equal(s.t[1].id, 2);

	/* a longer timeout set later applies to open traces */
	hs_tracer_set_timeout(tr, 10 * MS);
	add(tr, tcp("10.1.1.10", "10.1.2.10", 3, 1, LEAF1, 64, T0 + 2 * MS));
	hs_tracer_advance(tr, T0 + 5 * MS);
	assert_int_equal(s.n, 2);
	hs_tracer_advance(tr, T0 + 13 * MS);
	assert_int_equal(s.n, 3);
	hs_tracer_free(tr);
}

/* how many more traces the taker has room for (may_close) */
static int room;

static bool has_room(void *arg)
{
	(void)arg;
	return room > 0 && room--;
}

/* Quiet traces close only while may_close says the taker has room: the
 * rest stay open, in order, and close at a later advance once it has, or
 * a second past their timeout; an eviction for room, and close_all,
 * close whatever it says */
static void test_may_close(void **state)
{
	struct sink s;
	struct hs_tracer_cfg cfg = {
		.timeout_ns = 1 * MS, .max_open = 4, .ring = 64,
		.on_close = on_close, .may_close = has_room, .arg = &s,
	};
	struct hs_tracer_stats st;

	(void)state;
	memset(&s, 0, sizeof(s));
	struct hs_tracer *tr = hs_tracer_new(&cfg);
	assert_non_null(tr);
	for (int i = 0; i < 3; i++)
		add(tr, tcp("10.1.1.10", "10.1.2.10", (uint16_t)i, 1, LEAF1, 64,
			    T0 + (uint64_t)i * US));
	room = 1;
	hs_tracer_advance(tr, T0 + 5 * MS);	/* all quiet: room for one */
	assert_int_equal(s.n, 1);
	assert_int_equal(s.t[0].ip_id, 0);
	hs_tracer_get_stats(tr, &st);
	assert_int_equal(st.open, 2);
	hs_tracer_advance(tr, T0 + 6 * MS);	/* no room: they wait */
	assert_int_equal(s.n, 1);

	/* a copy of a waiting one's packet still joins it */
	add(tr, tcp("10.1.1.10", "10.1.2.10", 1, 1, SPINE1, 63, T0 + 6 * MS));
	/* the pool full: the least recent (ip_id 2) is evicted without asking */
	add(tr, tcp("10.1.1.10", "10.1.2.10", 7, 1, LEAF1, 64, T0 + 6 * MS + US));
	add(tr, tcp("10.1.1.10", "10.1.2.10", 8, 1, LEAF1, 64, T0 + 6 * MS + 2 * US));
	add(tr, tcp("10.1.1.10", "10.1.2.10", 9, 1, LEAF1, 64, T0 + 6 * MS + 3 * US));
	assert_int_equal(s.n, 2);
	assert_int_equal(s.t[1].ip_id, 2);
	assert_true(s.t[1].flags & HS_TF_EVICTED);

	room = 100;	/* room again: the quiet close, oldest first */
	hs_tracer_advance(tr, T0 + 20 * MS);
	assert_int_equal(s.n, 6);
	assert_int_equal(s.t[2].ip_id, 1);
	assert_int_equal(s.t[2].nhops, 2);
	for (int i = 3; i < 6; i++)
		assert_int_equal(s.t[i].ip_id, 4 + i);

	/* no room for long: a second past its timeout it closes anyway */
	room = 0;
	add(tr, tcp("10.1.1.10", "10.1.2.10", 10, 1, LEAF1, 64, T0 + 21 * MS));
	add(tr, tcp("10.1.1.10", "10.1.2.10", 11, 1, LEAF1, 64, T0 + 500 * MS));
	hs_tracer_advance(tr, T0 + 21 * MS + 1001 * MS);
	assert_int_equal(s.n, 6);
	hs_tracer_advance(tr, T0 + 21 * MS + 1001 * MS + 1);
	assert_int_equal(s.n, 7);
	assert_int_equal(s.t[6].ip_id, 10);
	hs_tracer_close_all(tr);		/* does not ask */
	assert_int_equal(s.n, 8);
	hs_tracer_free(tr);
}

/* copy p of frame number frame, added in two steps as a lane adds it */
static void add_frame(struct hs_tracer *tr, struct hs_pkt p, uint64_t frame)
{
	struct hs_tracer_prep prep;

	hs_tracer_prepare(tr, &p, &prep);
	prep.frame = frame;
	hs_tracer_add_prepared(tr, &p, 0, 0, &prep);
}

/* A trace carries the number of the frame that last added a copy to it
 * (a duplicate adds none), and the tracer closes its traces in that
 * order: hs_tracer_oldest says the least any trace closed later carries */
static void test_last_frame(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 64, 64);

	assert_true(hs_tracer_oldest(tr) == UINT64_MAX);
	add_frame(tr, tcp("10.1.1.10", "10.1.2.10", 1, 1, LEAF1, 64, T0), 3);		/* A */
	add_frame(tr, tcp("10.1.1.10", "10.1.2.10", 2, 1, LEAF1, 64, T0 + 10 * US), 5);	/* B */
	add_frame(tr, tcp("10.1.1.10", "10.1.2.10", 3, 1, LEAF1, 64, T0 + 20 * US), 8);	/* C */
	assert_int_equal(hs_tracer_oldest(tr), 3);
	add_frame(tr, tcp("10.1.1.10", "10.1.2.10", 1, 1, SPINE1, 63, T0 + 30 * US), 13);	/* A */
	assert_int_equal(hs_tracer_oldest(tr), 5);
	add_frame(tr, tcp("10.1.1.10", "10.1.2.10", 2, 1, LEAF1, 64, T0 + 40 * US), 21);	/* B's dup */
	assert_int_equal(hs_tracer_oldest(tr), 5);
	hs_tracer_advance(tr, T0 + 1025 * US);	/* B and C quiet, A not */
	assert_int_equal(s.n, 2);
	assert_int_equal(s.t[0].ip_id, 2);
	assert_int_equal(s.t[0].last_frame, 5);
	assert_int_equal(s.t[1].ip_id, 3);
	assert_int_equal(s.t[1].last_frame, 8);
	assert_int_equal(hs_tracer_oldest(tr), 13);
	hs_tracer_close_all(tr);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.t[2].ip_id, 1);
	assert_int_equal(s.t[2].last_frame, 13);
	assert_true(hs_tracer_oldest(tr) == UINT64_MAX);
	hs_tracer_free(tr);
}

static void test_outcomes(void **state)
{
	struct hs_topo *tp = topo();
	struct sink s;
	struct hs_tracer *tr = mk(&s, tp, 64, 64);
	const char *a = "10.1.1.10", *b = "10.1.2.10";

	/* delivered: leaf1 > spine2 > leaf2 */
	add(tr, tcp(a, b, 1, 1, LEAF1, 64, T0));
	add(tr, tcp(a, b, 1, 1, SPINE2, 63, T0 + 5 * US));
	add(tr, tcp(a, b, 1, 1, LEAF2, 62, T0 + 9 * US));
	hs_tracer_advance(tr, T0 + 2 * MS);
	/* dropped after leaf1: expected either spine */
	add(tr, tcp(a, b, 2, 1, LEAF1, 64, T0 + 3 * MS));
	hs_tracer_advance(tr, T0 + 5 * MS);
	/* dropped after spine1: expected leaf2 */
	add(tr, tcp(a, b, 3, 1, LEAF1, 64, T0 + 6 * MS));
	add(tr, tcp(a, b, 3, 1, SPINE1, 63, T0 + 6 * MS + 4 * US));
	hs_tracer_advance(tr, T0 + 8 * MS);
	/* looped: leaf1 > spine1 > leaf2 > spine1 */
	add(tr, tcp(a, b, 4, 1, LEAF1, 64, T0 + 9 * MS));
	add(tr, tcp(a, b, 4, 1, SPINE1, 63, T0 + 9 * MS + 1 * US));
	add(tr, tcp(a, b, 4, 1, LEAF2, 62, T0 + 9 * MS + 2 * US));
	add(tr, tcp(a, b, 4, 1, SPINE1, 61, T0 + 9 * MS + 3 * US));
	hs_tracer_advance(tr, T0 + 11 * MS);
	/* destination nobody serves: cannot judge */
	add(tr, tcp(a, "192.0.2.1", 5, 1, LEAF1, 64, T0 + 12 * MS));
	hs_tracer_close_all(tr);

	assert_int_equal(s.n, 5);
	assert_int_equal(s.t[0].outcome, HS_OUT_DELIVERED);
	assert_int_equal(s.t[0].last_sw, LEAF2);
	assert_int_equal(s.t[0].hops[1].sw, SPINE2);
	assert_int_equal(s.t[0].n_next, 0);

	assert_int_equal(s.t[1].outcome, HS_OUT_DROPPED);
	assert_int_equal(s.t[1].last_sw, LEAF1);
	assert_int_equal(s.t[1].n_next, 2);
	assert_true((s.t[1].expected_next[0] == SPINE1 && s.t[1].expected_next[1] == SPINE2) ||
		    (s.t[1].expected_next[0] == SPINE2 && s.t[1].expected_next[1] == SPINE1));

	assert_int_equal(s.t[2].outcome, HS_OUT_DROPPED);
	assert_int_equal(s.t[2].last_sw, SPINE1);
	assert_int_equal(s.t[2].n_next, 1);
	assert_int_equal(s.t[2].expected_next[0], LEAF2);

	assert_int_equal(s.t[3].outcome, HS_OUT_LOOPED);
	assert_int_equal(s.t[3].nhops, 4);
	assert_int_equal(s.t[4].outcome, HS_OUT_UNKNOWN);

	struct hs_tracer_stats st;
	hs_tracer_get_stats(tr, &st);
	assert_int_equal(st.by_outcome[HS_OUT_DELIVERED], 1);
	assert_int_equal(st.by_outcome[HS_OUT_DROPPED], 2);
	assert_int_equal(st.by_outcome[HS_OUT_LOOPED], 1);

	char buf[64];
	assert_string_equal(hs_hop_name(tp, &s.t[0].hops[1], buf, sizeof(buf)), "spine2");
	assert_string_equal(hs_outcome_name(HS_OUT_DROPPED), "dropped");
	assert_string_equal(hs_outcome_name(HS_OUT_LOOPED), "looped");
	assert_string_equal(hs_outcome_name(HS_OUT_DELIVERED), "delivered");
	assert_string_equal(hs_outcome_name(99), "?");
	hs_tracer_free(tr);
	hs_topo_free(tp);
}

/* a part of a trace, judged only when asked: its first copy not from its
 * source's ToR, or a hop missing between two (TTLs more than one apart) */
static void test_partial(void **state)
{
	struct hs_topo *tp = topo();
	const char *a = "10.1.1.10", *b = "10.1.2.10";

	for (int ask = 0; ask < 2; ask++) {
		struct sink s;
		struct hs_tracer *tr = mk(&s, tp, 64, 64);

		hs_tracer_set_partial(tr, ask);
		/* whole: leaf1 > spine2 > leaf2 */
		add(tr, tcp(a, b, 1, 1, LEAF1, 64, T0));
		add(tr, tcp(a, b, 1, 1, SPINE2, 63, T0 + 5 * US));
		add(tr, tcp(a, b, 1, 1, LEAF2, 62, T0 + 9 * US));
		/* the source's ToR (leaf1) not seen: spine2 > leaf2 */
		add(tr, tcp(a, b, 2, 1, SPINE2, 63, T0 + 10 * US));
		add(tr, tcp(a, b, 2, 1, LEAF2, 62, T0 + 14 * US));
		/* spine2 not seen: leaf1 > leaf2 */
		add(tr, tcp(a, b, 3, 1, LEAF1, 64, T0 + 20 * US));
		add(tr, tcp(a, b, 3, 1, LEAF2, 62, T0 + 29 * US));
		/* from the source's ToR, a destination nobody serves: whole */
		add(tr, tcp(a, "192.0.2.1", 4, 1, LEAF1, 64, T0 + 30 * US));
		hs_tracer_close_all(tr);

		assert_int_equal(s.n, 4);
		assert_false(s.t[0].flags & HS_TF_PARTIAL);
		assert_int_equal(!!(s.t[1].flags & HS_TF_PARTIAL), ask);
		assert_int_equal(s.t[1].outcome, HS_OUT_DELIVERED);
		assert_int_equal(!!(s.t[2].flags & HS_TF_PARTIAL), ask);
		assert_false(s.t[3].flags & HS_TF_PARTIAL);
		hs_tracer_free(tr);
	}
	hs_topo_free(tp);
}

static void test_classify_unknown_switch(void **state)
{
	struct hs_topo *tp = topo();
	struct hs_trace t;

	/* a hop from a mirror the topology does not know: no expected next hop */
	memset(&t, 0, sizeof(t));
	t.key.dst = A("10.1.2.10");
	t.nhops = 2;
	t.hops[0].sw = -1;
	t.hops[0].addr = A("10.255.0.3");
	t.hops[0].ttl = 64;
	t.hops[1].sw = -1;
	t.hops[1].addr = A("10.255.0.77");
	t.hops[1].ttl = 63;
	hs_trace_classify(&t, tp);
	assert_int_equal(t.hops[0].sw, LEAF1);
	assert_int_equal(t.outcome, HS_OUT_DROPPED);
	assert_int_equal(t.last_sw, -1);
	assert_int_equal(t.n_next, 0);

	/* the same unknown mirror twice at one TTL (two sessions) is no loop;
	 * at a lower TTL it is */
	t.nhops = 3;
	t.hops[2] = t.hops[1];
	t.hops[2].session = 2;
	hs_trace_classify(&t, tp);
	assert_int_equal(t.outcome, HS_OUT_DROPPED);
	t.hops[2].ttl = 1;
	hs_trace_classify(&t, tp);
	assert_int_equal(t.outcome, HS_OUT_LOOPED);

	/* a loop needs no topology: the mirror address repeats */
	hs_trace_classify(&t, NULL);
	assert_int_equal(t.outcome, HS_OUT_LOOPED);
	t.nhops = 2;
	hs_trace_classify(&t, NULL);
	assert_int_equal(t.outcome, HS_OUT_UNKNOWN);
	hs_topo_free(tp);
}

static void test_topo_set_later(void **state)
{
	struct hs_topo *tp = topo();
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 64, 64);

	add(tr, tcp("10.1.1.10", "10.1.2.10", 1, 1, LEAF1, 64, T0));
	hs_tracer_advance(tr, T0 + 5 * MS);
	assert_int_equal(s.t[0].outcome, HS_OUT_UNKNOWN);
	hs_tracer_set_topo(tr, tp);
	add(tr, tcp("10.1.1.10", "10.1.2.10", 2, 1, LEAF1, 64, T0 + 6 * MS));
	hs_tracer_close_all(tr);
	assert_int_equal(s.t[1].outcome, HS_OUT_DROPPED);
	assert_int_equal(s.t[1].hops[0].sw, LEAF1);
	hs_tracer_free(tr);
	hs_topo_free(tp);
}

static void test_eviction(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 4, 64);
	struct hs_tracer_stats st;

	for (int i = 0; i < 4; i++)
		add(tr, tcp("10.1.1.10", "10.1.2.10", (uint16_t)i, 1, LEAF1, 64, T0 + (uint64_t)i * US));
	add(tr, tcp("10.1.1.10", "10.1.2.10", 0, 1, SPINE1, 63, T0 + 5 * US));	/* touch #0 */
	assert_int_equal(s.n, 0);
	add(tr, tcp("10.1.1.10", "10.1.2.10", 9, 1, LEAF1, 64, T0 + 6 * US));	/* pool full */
	assert_int_equal(s.n, 1);
	assert_int_equal(s.t[0].ip_id, 1);	/* the least recently active */
	assert_true(s.t[0].flags & HS_TF_EVICTED);
	hs_tracer_get_stats(tr, &st);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.open, 4);
	/* the touched one still collects copies */
	add(tr, tcp("10.1.1.10", "10.1.2.10", 0, 1, LEAF2, 62, T0 + 7 * US));
	hs_tracer_close_all(tr);
	assert_int_equal(s.n, 5);
	for (int i = 1; i < 5; i++) {
		assert_false(s.t[i].flags & HS_TF_EVICTED);
		if (s.t[i].ip_id == 0)
			assert_int_equal(s.t[i].nhops, 3);
	}
	hs_tracer_free(tr);
}

static void test_ring(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 64, 4);
	const struct hs_trace *out[8];

	for (int i = 0; i < 6; i++) {
		add(tr, tcp("10.1.1.10", "10.1.2.10", (uint16_t)(100 + i), 1, LEAF1, 64,
			    T0 + (uint64_t)i * 10 * MS));
		hs_tracer_advance(tr, T0 + (uint64_t)i * 10 * MS + 5 * MS);
	}
	assert_int_equal(s.n, 6);
	assert_null(hs_tracer_find(tr, 0));
	assert_null(hs_tracer_find(tr, 1));
	assert_null(hs_tracer_find(tr, 2));
	assert_null(hs_tracer_find(tr, 7));
	for (uint64_t id = 3; id <= 6; id++) {
		const struct hs_trace *t = hs_tracer_find(tr, id);
		assert_non_null(t);
		assert_int_equal(t->id, id);
		assert_int_equal(t->ip_id, 100 + id - 1);
	}
	assert_int_equal(hs_tracer_recent(tr, out, 8), 4);
	assert_int_equal(out[0]->id, 6);
	assert_int_equal(out[3]->id, 3);
	assert_int_equal(hs_tracer_recent(tr, out, 2), 2);
	assert_int_equal(out[1]->id, 5);

	hs_tracer_clear(tr);
	assert_int_equal(hs_tracer_recent(tr, out, 8), 0);
	assert_null(hs_tracer_find(tr, 6));
	add(tr, tcp("10.1.1.10", "10.1.2.10", 1, 1, LEAF1, 64, T0 + 100 * MS));
	hs_tracer_close_all(tr);
	assert_int_equal(hs_tracer_recent(tr, out, 8), 1);
	assert_int_equal(out[0]->id, 7);
	hs_tracer_free(tr);
}

/* a hidden trace is neither found, listed nor counted; its id stays
 * taken; the others around it are kept */
static bool odd_ip_id(void *arg, const struct hs_trace *t)
{
	(void)arg;
	return t->ip_id % 2 == 1;
}

static void test_hide(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 64, 8);
	const struct hs_trace *out[8];
	struct hs_tracer_stats st;

	for (int i = 0; i < 4; i++)
		add(tr, tcp("10.1.1.10", "10.1.2.10", (uint16_t)(100 + i), 1, LEAF1, 64,
			    T0 + (uint64_t)i * 10 * MS));
	hs_tracer_close_all(tr);
	hs_tracer_hide(tr, hs_tracer_find(tr, 2));
	assert_null(hs_tracer_find(tr, 2));
	hs_tracer_hide(tr, &s.t[0]);	/* not the ring's: nothing happens */
	assert_non_null(hs_tracer_find(tr, 1));
	assert_int_equal(hs_tracer_recent(tr, out, 8), 3);
	assert_int_equal(out[0]->id, 4);
	assert_int_equal(out[1]->id, 3);
	assert_int_equal(out[2]->id, 1);
	hs_tracer_get_stats(tr, &st);
	assert_int_equal(st.closed, 3);
	assert_int_equal(st.by_outcome[HS_OUT_UNKNOWN], 3);
	hs_tracer_hide_if(tr, odd_ip_id, NULL);	/* 101 (hidden already), 103 */
	assert_int_equal(hs_tracer_recent(tr, out, 8), 2);
	assert_int_equal(out[0]->id, 3);
	assert_int_equal(out[1]->id, 1);
	hs_tracer_get_stats(tr, &st);
	assert_int_equal(st.closed, 2);
	add(tr, tcp("10.1.1.10", "10.1.2.10", 7, 1, LEAF1, 64, T0 + 100 * MS));
	hs_tracer_close_all(tr);
	assert_int_equal(hs_tracer_recent(tr, out, 8), 3);
	assert_int_equal(out[0]->id, 5);
	hs_tracer_free(tr);
}

/* a loop whose far copies arrive first (one switch's agent reads a burst
 * before another's): the trace still keeps the 16 hops nearest the source */
static void test_loop_keeps_nearest_hops(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 64, 64);
	struct hs_pkt p;

	for (int i = 0; i < 24; i++) {
		int ttl = 64 - 23 + i;		/* 41, 42, ... 64: the far end first */
		p = tcp("10.1.1.10", "10.1.2.10", 9, 1, ttl % 2 ? SPINE1 : LEAF2, (uint8_t)ttl,
			T0 + (uint64_t)i * US);
		hs_tracer_add(tr, &p, 0);
	}
	hs_tracer_close_all(tr);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.t[0].nhops, HS_TRACE_MAX_HOPS);
	assert_int_equal(s.t[0].extra_hops, 8);
	for (int i = 0; i < HS_TRACE_MAX_HOPS; i++)
		assert_int_equal(s.t[0].hops[i].ttl, 64 - i);
	/* no topology, and yet looped: two mirrors alternate, TTL falling */
	assert_int_equal(s.t[0].outcome, HS_OUT_LOOPED);
	(void)state;
	hs_tracer_free(tr);
}

static void test_flags_hw_and_long_paths(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 64, 64);
	struct hs_pkt p;

	/* a packet bouncing 20 times: 16 hops kept, 4 counted */
	for (int i = 0; i < 20; i++) {
		p = tcp("10.1.1.10", "10.1.2.10", 1, 1, i % 2 ? SPINE1 : LEAF2, (uint8_t)(64 - i),
			T0 + (uint64_t)i * US);
		p.have |= HS_HAVE_HWTS | HS_HAVE_HWNS;
		/* switch clocks near a 32-bit wrap of nanoseconds */
		p.hw_ns = 0x2fffffff0ULL + (uint64_t)i * 100;
		hs_tracer_add(tr, &p, 0);
	}
	/* a debug-marked copy and one kept by a filter */
	p = tcp("10.1.1.10", "10.1.2.10", 2, 1, LEAF1, 64, T0 + 30 * US);
	p.tos = 0x04;
	hs_tracer_add(tr, &p, HS_TF_MATCHED);
	hs_tracer_add_probe(tr, &(struct hs_pkt){ 0 }, 0, 3);	/* not IP: ignored */
	p = tcp("10.1.1.10", "10.1.2.10", 3, 1, LEAF1, 64, T0 + 31 * US);
	hs_tracer_add_probe(tr, &p, 0, 0xabcdef);
	hs_tracer_close_all(tr);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.t[0].nhops, HS_TRACE_MAX_HOPS);
	assert_int_equal(s.t[0].extra_hops, 4);
	for (int i = 0; i < HS_TRACE_MAX_HOPS; i++) {
		assert_int_equal(s.t[0].hops[i].ttl, 64 - i);
		assert_int_equal(s.t[0].hops[i].hw_ns, 0x2fffffff0ULL + (uint64_t)i * 100);
		assert_int_equal(s.t[0].hops[i].session, 1);
	}
	assert_int_equal(s.t[0].flags, 0);
	assert_int_equal(s.t[1].flags, HS_TF_DEBUG | HS_TF_MATCHED);
	assert_int_equal(s.t[1].hops[0].hw_ns, 0);
	assert_int_equal(s.t[1].hops[0].tos, 0x04);
	assert_int_equal(s.t[2].flags, HS_TF_PROBE);
	assert_int_equal(s.t[2].probe_id, 0xabcdef);
	hs_tracer_free(tr);
}

static void test_non_tcp_identity(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 64, 64);
	uint8_t pay1[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, pay2[8] = { 1, 2, 3, 4, 5, 6, 7, 9 };
	struct hs_pkt p;

	/* IPv6 UDP: no IP ID, the payload tells packets apart */
	for (int sw = 0; sw < 2; sw++) {
		for (int k = 0; k < 2; k++) {
			memset(&p, 0, sizeof(p));
			p.have = HS_HAVE_MIRROR | HS_HAVE_IP | HS_HAVE_PORTS;
			p.ts_ns = T0 + (uint64_t)(sw * 2 + k) * US;
			p.mirror_src = A(mirror_of[sw]);
			p.key.src = A("2001:db8::1");
			p.key.dst = A("2001:db8::2");
			p.key.proto = 17;
			p.key.sport = 5000;
			p.key.dport = 4791;
			p.ttl = (uint8_t)(64 - sw);
			p.l4_payload = k ? pay2 : pay1;
			p.l4_payload_caplen = 8;
			p.l4_len = 8;
			hs_tracer_add(tr, &p, 0);
		}
	}
	/* ICMP echo over IPv4 with the same IP ID: identified by its header bytes */
	uint8_t icmp[2][28];
	for (int k = 0; k < 2; k++) {
		memset(icmp[k], 0, sizeof(icmp[k]));
		icmp[k][0] = 0x45;
		icmp[k][20] = 8;		/* echo request */
		icmp[k][27] = (uint8_t)k;	/* sequence */
		for (int sw = 0; sw < 2; sw++) {
			memset(&p, 0, sizeof(p));
			p.have = HS_HAVE_MIRROR | HS_HAVE_IP | HS_HAVE_ICMP | HS_HAVE_IPID;
			p.ts_ns = T0 + 10 * US;
			p.mirror_src = A(mirror_of[sw]);
			p.key.src = A("10.1.1.10");
			p.key.dst = A("10.1.2.10");
			p.key.proto = 1;
			p.ttl = (uint8_t)(64 - sw);
			p.ip_id = 0;
			p.icmp_type = 8;
			p.l3 = icmp[k];
			p.l3_caplen = sizeof(icmp[k]);
			hs_tracer_add(tr, &p, 0);
		}
	}
	hs_tracer_close_all(tr);
	assert_int_equal(s.n, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(s.t[i].nhops, 2);
		assert_int_equal(s.t[i].seq, 0);
	}
	char buf[HS_ADDRSTRLEN];
	assert_string_equal(hs_addr_str(&s.t[0].key.dst, buf, sizeof(buf)), "2001:db8::2");
	hs_tracer_free(tr);
}

/* TCP segments that share a sequence number (a pure ACK and the data after
 * it, an ACK and a FIN) are distinct packets with IP ID 0 and over IPv6;
 * so are two segments alike but for their payload where no IP ID tells
 * them apart. The copies of each at two switches, with what a switch may
 * rewrite rewritten (TTL, DSCP, ECN), still make one trace of two hops. */
static void test_tcp_identity(void **state)
{
	static const struct {
		uint8_t flags;
		uint32_t seq, ack;
		uint16_t len;
		uint8_t pay;
	} seg[] = {
		{ 0x10, 1001, 5001, 0, 0 },	/* ACK */
		{ 0x18, 1001, 5001, 100, 'a' },	/* data, the same seq and ack */
		{ 0x18, 1001, 5001, 100, 'b' },	/* the same but its payload */
		{ 0x10, 1101, 5101, 0, 0 },	/* ACK */
		{ 0x11, 1101, 5101, 0, 0 },	/* FIN, the same seq and ack */
		{ 0x10, 1101, 5102, 0, 0 },	/* ACK of the peer's FIN */
	};
	const int nseg = (int)HS_ARRAY_SIZE(seg);
	static const char *const src[] = { "10.1.1.10", "2001:db8::1" };
	static const char *const dst[] = { "10.1.2.10", "2001:db8::2" };
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 64, 64);
	struct hs_tracer_stats st;
	uint8_t pay[HS_ARRAY_SIZE(seg)][100];

	for (int i = 0; i < nseg; i++)
		memset(pay[i], seg[i].pay, sizeof(pay[i]));
	for (int v = 0; v < 2; v++) {
		for (int i = 0; i < nseg; i++) {
			for (int sw = 0; sw < 2; sw++) {
				struct hs_pkt p = tcp(src[v], dst[v], 0, seg[i].seq, sw ? SPINE1 : LEAF1,
						      (uint8_t)(64 - sw), T0 + (uint64_t)(i * 4 + sw) * US);
				if (v)
					p.have &= ~(uint32_t)HS_HAVE_IPID;
				p.ack = seg[i].ack;
				p.tcp_flags = seg[i].flags;
				p.tos = sw ? 0x2b : 0x28;	/* DSCP 10, ECN set on the way */
				p.l4_len = seg[i].len;
				p.len = (v ? 60u : 40u) + seg[i].len;
				p.l4_payload = pay[i];
				p.l4_payload_caplen = seg[i].len;
				add(tr, p);
			}
		}
	}
	hs_tracer_get_stats(tr, &st);
	assert_int_equal(st.duplicates, 0);
	hs_tracer_close_all(tr);
	assert_int_equal(s.n, 2 * nseg);
	for (int i = 0; i < s.n; i++) {
		assert_int_equal(s.t[i].nhops, 2);
		assert_int_equal(s.t[i].seq, seg[i % nseg].seq);
		assert_int_equal(s.t[i].tcp_flags, seg[i % nseg].flags);
	}

	/* IPv6 duplicate ACKs, alike but for their options (SACK blocks,
	 * timestamps): two packets */
	uint8_t hdr[2][32];
	for (int k = 0; k < 2; k++) {
		memset(hdr[k], 0, sizeof(hdr[k]));
		hdr[k][20] = 1;				/* NOP */
		hdr[k][21] = 1;
		hdr[k][22] = 5;				/* SACK, one block */
		hdr[k][23] = 10;
		hdr[k][27] = (uint8_t)(k + 1);		/* left edge */
		struct hs_pkt a = tcp(src[1], dst[1], 0, 2001, LEAF1, 64, T0 + (50 + k) * MS);
		a.have &= ~(uint32_t)HS_HAVE_IPID;
		a.ack = 7001;
		a.tcp_flags = 0x10;
		a.tcp_hlen = 32;
		a.l4_payload = hdr[k] + 32;
		a.l4_payload_caplen = 0;
		add(tr, a);
	}
	hs_tracer_close_all(tr);
	assert_int_equal(s.n, 2 * nseg + 2);

	/* the same packet twice from one switch at one TTL is a duplicate */
	struct hs_pkt p = tcp(src[1], dst[1], 0, 1001, LEAF1, 64, T0 + 100 * MS);
	p.ack = 5001;
	p.tcp_flags = 0x10;
	add(tr, p);
	p.ts_ns += 5 * US;
	add(tr, p);
	hs_tracer_get_stats(tr, &st);
	assert_int_equal(st.duplicates, 1);
	hs_tracer_close_all(tr);
	assert_int_equal(s.n, 2 * nseg + 3);
	hs_tracer_free(tr);
}

/* Hop times from the switches' stamps of the packet's arrival: at one TTL
 * (an IP-in-IP probe's hops) hops go by stamp, not by when their copies
 * reached the analyzer; a switch that stamps one packet twice (before and
 * after decapsulating it) keeps the earlier stamp; a trace whose stamps are
 * all on the capture's clock shows them, and a hop out of order is not
 * trusted. */
/* a copy of one packet seen at sw, captured at T0 + ts_us, stamped by the
 * switch at T0 + hw_us */
static struct hs_pkt stamped(int sw, uint8_t ttl, uint64_t ts_us, uint64_t hw_us)
{
	struct hs_pkt p = tcp("10.1.1.10", "10.1.2.10", 3, 77, sw, ttl, T0 + ts_us * US);

	p.have |= HS_HAVE_HWNS;
	p.hw_ns = T0 + hw_us * US;
	return p;
}

static void test_switch_times(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 64, 64);

	(void)state;
	/* leaf1's copies reach the analyzer last: stamped after decapsulation
	 * first, then the arrival's */
	add(tr, stamped(SPINE2, 64, 237, 200));
	add(tr, stamped(LEAF1, 64, 350, 150));
	add(tr, stamped(LEAF1, 64, 351, 100));
	add(tr, stamped(LEAF2, 63, 350, 300));
	hs_tracer_close_all(tr);
	assert_int_equal(s.n, 1);
	const struct hs_trace *t = &s.t[0];
	assert_int_equal(t->nhops, 3);
	assert_true(hs_addr_eq(&t->hops[0].addr, &(struct hs_addr){ .af = 4, .a = { 10, 255, 0, 3 } }));
	assert_int_equal(t->hops[0].hw_ns, T0 + 100 * US);
	assert_true(hs_addr_eq(&t->hops[1].addr, &(struct hs_addr){ .af = 4, .a = { 10, 255, 0, 2 } }));
	assert_true(hs_trace_switch_clock(t));
	for (unsigned i = 0; i < 3; i++) {
		assert_true(hs_hop_trusted(t, i));
		assert_int_equal(hs_hop_time(t, i), t->hops[i].hw_ns);
	}
	assert_int_equal(hs_hop_delta(&t->hops[0], &t->hops[1]), 100 * US);

	/* a stamp before the hop before it is not trusted; a stamp off the
	 * capture's clock puts the whole trace on capture times */
	struct hs_trace u = *t;
	u.hops[2].hw_ns = T0 + 50 * US;
	assert_false(hs_hop_trusted(&u, 2));
	u.hops[2].hw_ns = 12345;
	assert_false(hs_trace_switch_clock(&u));
	assert_int_equal(hs_hop_time(&u, 1), u.hops[1].ts_ns);
	hs_tracer_free(tr);
}

/* every closed trace, in order, as its packet and hops (src, ip_id, TTLs) */
struct sig_log {
	char sig[4096][24];
	int n;
};

static void log_sig(void *arg, const struct hs_trace *t)
{
	struct sig_log *l = arg;
	int k;

	if (l->n >= (int)HS_ARRAY_SIZE(l->sig))
		return;
	k = snprintf(l->sig[l->n], sizeof(l->sig[0]), "%u.%u:", t->key.src.a[3], t->ip_id);
	for (unsigned h = 0; h < t->nhops && k < (int)sizeof(l->sig[0]) - 1; h++)
		l->sig[l->n][k++] = (char)('a' + t->hops[h].ttl % 26);
	l->sig[l->n][k] = '\0';
	l->n++;
}

/* The pipeline's way (prepare, prefetch some frames later, add later still)
 * against adding at once, with the same adds and timeouts in the same
 * order: a small pool, packets of few identities that come back after
 * their traces closed, copies interleaved and late. The traces must be
 * the same, one for one. */
static void test_prepared_random(void **state)
{
	static struct sig_log now, later;
	struct hs_tracer_cfg ca = { .timeout_ns = 50 * US, .max_open = 6, .ring = 8,
				    .on_close = log_sig, .arg = &now };
	struct hs_tracer_cfg cb = ca;
	enum { NPKT = 1500, DEPTH = 8, SLOT = 5, ACTIVE = 5 };
	struct {
		struct hs_pkt p;
		struct hs_tracer_prep prep;
	} q[DEPTH];
	struct { int src, ip_id, sent; } act[ACTIVE];
	int nq = 0, head = 0, started = 0;
	uint64_t ts = T0;
	unsigned seed = 11;

	cb.arg = &later;
	memset(&now, 0, sizeof(now));
	memset(&later, 0, sizeof(later));
	struct hs_tracer *a = hs_tracer_new(&ca), *b = hs_tracer_new(&cb);
	memset(act, 0, sizeof(act));
	while (started < NPKT) {
		seed = seed * 1103515245u + 12345u;
		int w = (int)(seed >> 16) % ACTIVE;
		if (act[w].sent == 0 || act[w].sent == 3) {	/* a new packet in slot w */
			act[w].src = 1 + (int)(seed >> 8) % 3;
			act[w].ip_id = (int)(seed >> 12) % 4;
			act[w].sent = 0;
			started++;
		}
		char src[32];
		snprintf(src, sizeof(src), "10.1.1.%d", act[w].src);
		int sw = act[w].sent++;
		ts += (seed >> 20) % 8 == 0 ? 80 * US : 3 * US;	/* now and then, past the timeout */
		struct hs_pkt p = tcp(src, "10.1.2.10", (uint16_t)act[w].ip_id, 7, sw,
				      (uint8_t)(64 - sw), ts);

		hs_tracer_add(a, &p, 0);
		hs_tracer_advance(a, ts);
		if (nq == DEPTH) {
			hs_tracer_add_prepared(b, &q[head].p, 0, 0, &q[head].prep);
			hs_tracer_advance(b, q[head].p.ts_ns);
			head = (head + 1) % DEPTH;
			nq--;
		}
		int e = (head + nq++) % DEPTH;
		q[e].p = p;
		hs_tracer_prepare(b, &q[e].p, &q[e].prep);
		if (nq > SLOT)
			hs_tracer_prefetch(b, &q[(head + nq - 1 - SLOT) % DEPTH].prep);
	}
	while (nq) {
		hs_tracer_add_prepared(b, &q[head].p, 0, 0, &q[head].prep);
		hs_tracer_advance(b, q[head].p.ts_ns);
		head = (head + 1) % DEPTH;
		nq--;
	}
	hs_tracer_close_all(a);
	hs_tracer_close_all(b);
	assert_true(now.n > NPKT / 2);
	assert_int_equal(later.n, now.n);
	for (int i = 0; i < now.n; i++)
		assert_string_equal(later.sig[i], now.sig[i]);
	hs_tracer_free(a);
	hs_tracer_free(b);
}

/* copies added a few frames after they were prepared, their payload gone by
 * then, make the same traces as copies added at once */
static void test_prepared(void **state)
{
	struct sink now, later;
	struct hs_tracer *a = mk(&now, NULL, 4, 64), *b = mk(&later, NULL, 4, 64);
	enum { NPKT = 12, DEPTH = 4 };
	struct {
		struct hs_pkt p;
		uint8_t pay[8];
		struct hs_tracer_prep prep;
	} q[DEPTH];
	int nq = 0, head = 0;

	/* 12 UDP packets told apart only by their payload, 3 copies each,
	 * interleaved two packets at a time through a pool of 4 (evictions) */
	for (int i = 0; i < NPKT; i += 2) {
		for (int sw = 0; sw < 3; sw++) {
			for (int k = 0; k < 2; k++) {
				uint8_t pay[8] = { 9, 9, 9, 9, 9, 9, 0, (uint8_t)(i + k) };
				struct hs_pkt p;
				memset(&p, 0, sizeof(p));
				p.have = HS_HAVE_MIRROR | HS_HAVE_IP | HS_HAVE_PORTS;
				p.ts_ns = T0 + (uint64_t)(i * 6 + sw * 2 + k) * US;
				p.mirror_src = A(mirror_of[sw]);
				p.key.src = A("10.1.1.10");
				p.key.dst = A("10.1.2.10");
				p.key.proto = 17;
				p.key.sport = 5000;
				p.key.dport = 4791;
				p.ttl = (uint8_t)(64 - sw);
				p.l4_payload = pay;
				p.l4_payload_caplen = sizeof(pay);
				p.l4_len = sizeof(pay);
				hs_tracer_add(a, &p, 0);

				if (nq == DEPTH) {
					hs_tracer_add_prepared(b, &q[head].p, 0, 0, &q[head].prep);
					head = (head + 1) % DEPTH;
					nq--;
				}
				int e = (head + nq++) % DEPTH;
				q[e].p = p;
				memcpy(q[e].pay, pay, sizeof(pay));
				q[e].p.l4_payload = q[e].pay;
				hs_tracer_prepare(b, &q[e].p, &q[e].prep);
				/* the frame is gone: its bytes are not read again */
				memset(q[e].pay, 0xee, sizeof(q[e].pay));
				hs_tracer_prefetch(b, &q[e].prep);
			}
		}
	}
	while (nq) {
		hs_tracer_add_prepared(b, &q[head].p, 0, 0, &q[head].prep);
		head = (head + 1) % DEPTH;
		nq--;
	}
	hs_tracer_close_all(a);
	hs_tracer_close_all(b);
	assert_int_equal(now.n, NPKT);
	assert_int_equal(later.n, NPKT);
	for (int i = 0; i < NPKT; i++) {
		assert_int_equal(now.t[i].nhops, 3);
		assert_int_equal(later.t[i].nhops, 3);
		assert_int_equal(later.t[i].flags, now.t[i].flags);
		for (int h = 0; h < 3; h++) {
			assert_true(hs_addr_eq(&later.t[i].hops[h].addr, &now.t[i].hops[h].addr));
			assert_int_equal(later.t[i].hops[h].ts_ns, now.t[i].hops[h].ts_ns);
		}
	}
	hs_tracer_free(a);
	hs_tracer_free(b);
}

/* The open trace hs_tracer_prefetch found may close before its copy is
 * added, its slot then free or another packet's: the copy starts a trace
 * of its own either way */
static void test_prepared_trace_gone(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 4, 64);
	struct hs_tracer_prep prep;
	struct hs_pkt p1 = tcp("10.1.1.10", "10.1.2.10", 7, 1, LEAF1, 64, T0);
	struct hs_pkt p2 = tcp("10.1.1.10", "10.1.2.10", 7, 1, SPINE1, 63, T0 + 10 * US);
	struct hs_pkt q = tcp("10.1.1.11", "10.1.2.10", 8, 1, LEAF1, 64, T0 + 3 * MS);

	/* freed: closed by its timeout */
	add(tr, p1);
	hs_tracer_prepare(tr, &p2, &prep);
	hs_tracer_prefetch(tr, &prep);
	assert_int_not_equal(prep.cand, 0);
	hs_tracer_advance(tr, T0 + 2 * MS);
	assert_int_equal(s.n, 1);
	hs_tracer_add_prepared(tr, &p2, 0, 0, &prep);
	hs_tracer_close_all(tr);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.t[1].nhops, 1);
	assert_int_equal(s.t[1].hops[0].ttl, 63);

	/* reused: another packet's trace in the slot */
	p1.ts_ns = p2.ts_ns = T0 + 2 * MS;
	add(tr, p1);
	hs_tracer_prepare(tr, &p2, &prep);
	hs_tracer_prefetch(tr, &prep);
	hs_tracer_advance(tr, T0 + 4 * MS);	/* p1's closes, q's takes its slot */
	add(tr, q);
	hs_tracer_add_prepared(tr, &p2, 0, 0, &prep);
	hs_tracer_close_all(tr);
	assert_int_equal(s.n, 5);
	for (int i = 2; i < 5; i++)
		assert_int_equal(s.t[i].nhops, 1);
	assert_int_equal(s.t[3].key.src.a[3] + s.t[4].key.src.a[3], 10 + 11);
	hs_tracer_free(tr);
}

/* many interleaved packets through a small pool: the index stays consistent */
/* thousands of mirror sources: each hop keeps its own through the growth
 * of the interning index, and two sessions of one address stay apart, all
 * 24 bits of a VXLAN/Geneve mirror's VNI */
static void test_many_mirror_sources(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 8192, 4096);
	const int nsrc = 3000;
	uint64_t ts = T0;

	for (int i = 0; i < nsrc; i++) {
		char m[32];
		struct hs_pkt p = tcp("10.1.1.10", "10.1.2.10", (uint16_t)i, (uint32_t)i, 0, 64, ts);
		snprintf(m, sizeof(m), "10.200.%d.%d", i / 250, 1 + i % 250);
		p.mirror_src = A(m);
		p.session = 5001 + (uint32_t)(i % 2) * 0x10000;
		hs_tracer_add(tr, &p, 0);
		p.session ^= 0x10000;	/* the same address, the other session */
		p.ttl = 63;
		p.ts_ns = ts + 10;
		hs_tracer_add(tr, &p, 0);
		ts += 1000;
	}
	hs_tracer_close_all(tr);
	assert_int_equal(s.n, nsrc);
	for (uint64_t id = 1; id <= (uint64_t)nsrc; id++) {
		const struct hs_trace *t = hs_tracer_find(tr, id);
		char want[32], got[HS_ADDRSTRLEN];
		int i = (int)id - 1;
		assert_non_null(t);
		assert_int_equal(t->nhops, 2);
		snprintf(want, sizeof(want), "10.200.%d.%d", i / 250, 1 + i % 250);
		assert_string_equal(hs_addr_str(&t->hops[0].addr, got, sizeof(got)), want);
		assert_string_equal(hs_addr_str(&t->hops[1].addr, got, sizeof(got)), want);
		assert_int_equal(t->hops[0].session, 5001 + (i % 2) * 0x10000);
		assert_int_equal(t->hops[1].session, 5001 + (1 - i % 2) * 0x10000);
	}
	hs_tracer_free(tr);
}

/* Mirror sources beyond the table (max_sources) are not told apart: their
 * copies are hops with no switch and no address. Such a hop says nothing of
 * where the packet was: never a loop with another, never the last switch of
 * a delivered or dropped packet, never a switch timestamp widened from
 * another source's clock, never a duplicate of another untracked copy */
static void test_full_source_table(void **state)
{
	struct hs_topo *tp = topo();
	struct sink s;
	struct hs_tracer_cfg cfg = {
		.timeout_ns = 1 * MS, .max_open = 64, .ring = 64, .max_sources = 2,
		.topo = tp, .on_close = on_close, .arg = &s,
	};
	struct hs_tracer *tr;
	const char *a = "10.1.1.10", *b = "10.1.2.10";
	uint64_t ts = T0;

	memset(&s, 0, sizeof(s));
	tr = hs_tracer_new(&cfg);
	/* 0: leaf1 and spine1 fill the table; spine2 and leaf2 are beyond it */
	add(tr, tcp(a, b, 9, 1, LEAF1, 64, ts));
	add(tr, tcp(a, b, 9, 1, SPINE1, 63, ts + 1 * US));
	ts += 2 * MS;
	/* 1: leaf1 > spine2 > leaf2, the last two untracked, with switch times */
	for (int i = 0, sw[] = { LEAF1, SPINE2, LEAF2 }; i < 3; i++) {
		struct hs_pkt p = tcp(a, b, 1, 1, sw[i], (uint8_t)(64 - i), ts + (uint64_t)i * US);
		p.have |= HS_HAVE_HWTS | HS_HAVE_HWNS;
		p.hw_ns = 5000000000ULL + (uint64_t)i * 1000;
		add(tr, p);
	}
	/* 2: a true loop among the kept sources: leaf1 > spine1 > leaf2 > spine1 */
	ts += 2 * MS;
	add(tr, tcp(a, b, 2, 1, LEAF1, 64, ts));
	add(tr, tcp(a, b, 2, 1, SPINE1, 63, ts + 1 * US));
	add(tr, tcp(a, b, 2, 1, LEAF2, 62, ts + 2 * US));
	add(tr, tcp(a, b, 2, 1, SPINE1, 61, ts + 3 * US));
	/* 3: delivered, an untracked hop on the way: leaf2 > spine1 > leaf1 */
	ts += 2 * MS;
	add(tr, tcp(b, a, 3, 1, LEAF2, 64, ts));
	add(tr, tcp(b, a, 3, 1, SPINE1, 63, ts + 1 * US));
	add(tr, tcp(b, a, 3, 1, LEAF1, 62, ts + 2 * US));
	/* 4: two untracked switches at one TTL are two hops, not a duplicate */
	ts += 2 * MS;
	add(tr, tcp(a, b, 4, 1, LEAF1, 64, ts));
	add(tr, tcp(a, b, 4, 1, SPINE2, 63, ts + 1 * US));
	add(tr, tcp(a, b, 4, 1, LEAF2, 63, ts + 2 * US));
	hs_tracer_close_all(tr);

	struct hs_tracer_stats st;
	hs_tracer_get_stats(tr, &st);
	assert_int_equal(st.sources, 2);
	assert_int_equal(st.sources_full, 6);
	assert_int_equal(st.duplicates, 0);
	assert_int_equal(st.by_outcome[HS_OUT_LOOPED], 1);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.t[0].outcome, HS_OUT_DROPPED);

	assert_int_equal(s.t[1].nhops, 3);
	assert_int_equal(s.t[1].outcome, HS_OUT_UNKNOWN);
	assert_int_equal(s.t[1].last_sw, -1);
	assert_int_equal(s.t[1].hops[0].sw, LEAF1);
	assert_int_equal(s.t[1].hops[0].hw_ns, 5000000000ULL);
	for (int i = 1; i < 3; i++) {
		assert_int_equal(s.t[1].hops[i].sw, -1);
		assert_int_equal(s.t[1].hops[i].addr.af, 0);
		assert_int_equal(s.t[1].hops[i].hw_ns, 0);
	}
	assert_int_equal(s.t[2].outcome, HS_OUT_LOOPED);
	assert_int_equal(s.t[3].outcome, HS_OUT_DELIVERED);
	assert_int_equal(s.t[3].last_sw, LEAF1);
	assert_int_equal(s.t[4].nhops, 3);
	assert_int_equal(s.t[4].outcome, HS_OUT_UNKNOWN);

	/* the same, judged again (a trace read back, a topology loaded later) */
	hs_trace_classify(&s.t[1], tp);
	assert_int_equal(s.t[1].outcome, HS_OUT_UNKNOWN);
	hs_trace_classify(&s.t[1], NULL);
	assert_int_equal(s.t[1].outcome, HS_OUT_UNKNOWN);
	hs_tracer_free(tr);
	hs_topo_free(tp);
}

/* As a trace closes, on_soon names the flows of the next two to close in
 * one call: the next (soon true), then the second in line (soon false),
 * before on_close sees the one closing */
struct soon_log {
	struct sink sink;
	char ev[64][16];
	int n;
};

/* "1" for the flow of the traces soon_three makes from 10.1.1.1, and so on */
static const char *soon_name(uint64_t h)
{
	static char name[8];

	for (int i = 1; i < 10; i++) {
		char src[16];
		snprintf(src, sizeof(src), "10.1.1.%d", i);
		struct hs_pkt p = tcp(src, "10.1.2.10", 0, 0, LEAF1, 64, T0);
		if (h == hs_flowkey_hash(&p.key)) {
			snprintf(name, sizeof(name), "%d", i);
			return name;
		}
	}
	return "?";
}

/* one event a call: "S2n3" for the flows of 10.1.1.2 (soon) and .3 */
static void log_soon(void *arg, const struct hs_soon *s, unsigned n)
{
	struct soon_log *l = arg;
	size_t at = 0;

	assert_in_range(n, 1, 2);
	if (l->n >= 64)
		return;
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(s[i].proto, 6);
		at += (size_t)snprintf(l->ev[l->n] + at, sizeof(l->ev[0]) - at, "%c%s",
				       s[i].soon ? 'S' : 'n', soon_name(s[i].key_hash));
	}
	l->n++;
}

static void log_close(void *arg, const struct hs_trace *t)
{
	struct soon_log *l = arg;
	char a[HS_ADDRSTRLEN];

	assert_true(t->key_hash == hs_flowkey_hash(&t->key));
	if (l->n < 64)
		snprintf(l->ev[l->n++], sizeof(l->ev[0]), "c%s",
			 hs_addr_str(&t->key.src, a, sizeof(a)) + 7);
}

/* a tracer logging to l, with traces open from 10.1.1.1, .2 and .3 */
static struct hs_tracer *soon_three(struct soon_log *l)
{
	struct hs_tracer_cfg cfg = { .timeout_ns = 1 * MS, .max_open = 16, .ring = 16,
				     .on_close = log_close, .on_soon = log_soon, .arg = l };
	struct hs_tracer *tr = hs_tracer_new(&cfg);

	memset(l, 0, sizeof(*l));
	add(tr, tcp("10.1.1.1", "10.1.2.10", 1, 1, LEAF1, 64, T0));
	add(tr, tcp("10.1.1.2", "10.1.2.10", 2, 2, LEAF1, 64, T0 + 1));
	add(tr, tcp("10.1.1.3", "10.1.2.10", 3, 3, LEAF1, 64, T0 + 2));
	return tr;
}

static void soon_expect(const struct soon_log *l, const char *const *want, int n)
{
	assert_int_equal(l->n, n);
	for (int i = 0; i < l->n; i++)
		assert_string_equal(l->ev[i], want[i]);
}

static void test_on_soon(void **state)
{
	struct soon_log l;
	struct hs_tracer *tr = soon_three(&l);

	hs_tracer_close_all(tr);
	const char *want[] = { "S2n3", "c1", "S3", "c2", "c3" };
	soon_expect(&l, want, (int)HS_ARRAY_SIZE(want));
	hs_tracer_free(tr);
}

/* on_soon follows the activity list: a trace another copy moved back from
 * the head is named again when it comes to the head; the trace that takes
 * a freed slot has its own flow's hash (log_close checks every hash) */
static void test_soon_hash_follows_slot(void **state)
{
	struct soon_log l;
	struct hs_tracer *tr = soon_three(&l);

	hs_tracer_advance(tr, T0 + MS + 1);	/* the first only */
	add(tr, tcp("10.1.1.2", "10.1.2.10", 2, 2, SPINE1, 63, T0 + 3));
	hs_tracer_close_all(tr);
	add(tr, tcp("10.1.1.4", "10.1.2.10", 4, 4, LEAF1, 64, T0 + 4));
	hs_tracer_close_all(tr);
	const char *want[] = { "S2n3", "c1", "S2", "c3", "c2", "c4" };
	soon_expect(&l, want, (int)HS_ARRAY_SIZE(want));
	hs_tracer_free(tr);
}

static void test_stress(void **state)
{
	struct hs_tracer_cfg cfg = { .timeout_ns = 50 * US, .max_open = 512, .ring = 16 };
	struct hs_tracer *tr = hs_tracer_new(&cfg);
	struct hs_tracer_stats st;
	uint64_t ts = T0;
	unsigned seed = 7;
	const int npkt = 50000;

	for (int i = 0; i < npkt; i += 4) {
		/* four packets, their three copies interleaved */
		for (int sw = 0; sw < 3; sw++) {
			for (int k = 0; k < 4; k++) {
				seed = seed * 1103515245u + 12345u;
				char src[32];
				snprintf(src, sizeof(src), "10.1.%d.%d", (i + k) % 200, 1 + (i + k) / 200 % 250);
				struct hs_pkt p = tcp(src, "10.1.2.10", (uint16_t)(i + k), (uint32_t)i, sw,
						      (uint8_t)(64 - sw), ts);
				hs_tracer_add(tr, &p, 0);
				ts += 100;
			}
		}
		hs_tracer_advance(tr, ts);
	}
	hs_tracer_close_all(tr);
	hs_tracer_get_stats(tr, &st);
	assert_int_equal(st.copies, (uint64_t)npkt * 3);
	assert_int_equal(st.closed, npkt);
	assert_int_equal(st.evicted, 0);
	assert_int_equal(st.duplicates, 0);
	const struct hs_trace *out[16];
	size_t n = hs_tracer_recent(tr, out, 16);
	assert_int_equal(n, 16);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(out[i]->nhops, 3);
	hs_tracer_free(tr);
}

/* resident memory of this process, in bytes */
static size_t resident(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, pages = 0;

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu %lu", &size, &pages), 2);
	fclose(f);
	return (size_t)pages * 4096;
}

/* populated, a tracer's tables are resident at once (a new one's are not,
 * nor its pool touched), and what it holds is as it was */
static void test_populate(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 65536, 0);	/* a pool of 12 MB */

	add(tr, tcp("10.1.1.10", "10.1.2.10", 1, 7, LEAF1, 64, T0));
	size_t before = resident();
	hs_tracer_populate(tr);
	assert_true(resident() >= before + 12 * 1048576);
	add(tr, tcp("10.1.1.10", "10.1.2.10", 1, 7, SPINE1, 63, T0 + 10 * US));
	hs_tracer_populate(tr);		/* again: the same */
	add(tr, tcp("10.1.1.10", "10.1.2.10", 1, 7, LEAF2, 62, T0 + 20 * US));
	hs_tracer_advance(tr, T0 + 5 * MS);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.t[0].nhops, 3);
	assert_int_equal(s.t[0].hops[0].ttl, 64);
	assert_int_equal(s.t[0].hops[2].ttl, 62);
	hs_tracer_free(tr);
	(void)state;
}

/* A pool of 262,144 open traces, as a capture's, is 48 MiB of 192-byte
 * traces; with their index and a small ring, populated, the tracer takes
 * less than 53 MiB: an index of 8 bytes per open trace, not 32. Under
 * AddressSanitizer the pages touched bring an eighth more of its shadow. */
#if defined(__SANITIZE_ADDRESS__)
#define SHADOW(n) ((n) / 8)
#else
#define SHADOW(n) 0
#endif
static void test_index_memory(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 262144, 16);
	size_t before = resident();

	hs_tracer_populate(tr);
	size_t took = resident() - before;
	assert_true(took >= (size_t)48 * 1048576);
	assert_true(took < (size_t)53 * 1048576 + SHADOW((size_t)53 * 1048576));
	hs_tracer_free(tr);
	(void)state;
}

/* the next packet from *n on (IP ID its low 16 bits, sequence number the
 * rest) whose identity's hash has its low bits under mask 0: in the first
 * bucket of an index of up to mask + 1 */
static struct hs_pkt homed_first(struct hs_tracer *tr, uint32_t *n, uint32_t mask, int sw,
				 uint8_t ttl, uint64_t ts)
{
	struct hs_pkt p = tcp("10.1.1.10", "10.1.2.10", 0, 0, sw, ttl, ts);
	struct hs_tracer_prep prep;

	for (;; ++*n) {
		p.ip_id = (uint16_t)*n;
		p.seq = *n >> 16;
		hs_tracer_prepare(tr, &p, &prep);
		if ((prep.hash & mask) == 0) {
			++*n;
			return p;
		}
	}
}

/* the copy of packet p seen at sw with this TTL and time */
static struct hs_pkt copy_at(struct hs_pkt p, int sw, uint8_t ttl, uint64_t ts)
{
	p.mirror_src = A(mirror_of[sw]);
	p.ttl = ttl;
	p.ts_ns = ts;
	return p;
}

/* Forty traces homed in one bucket of a pool of 64 (a bucket per eight):
 * the first fifteen fill it and the rest spill into the next two. Their
 * copies find them there, also once the first ones closed and left room
 * at home; new traces take that room and are found in turn. */
static void test_index_spill(void **state)
{
	struct sink s;
	struct hs_tracer *tr = mk(&s, NULL, 64, 0);
	struct hs_tracer_stats st;
	uint32_t next = 1;
	struct hs_pkt first[60];

	for (int i = 0; i < 40; i++) {
		first[i] = homed_first(tr, &next, 63, LEAF1, 64, T0 + (uint64_t)i * 10 * US);
		add(tr, first[i]);
	}
	hs_tracer_advance(tr, T0 + 19 * 10 * US + MS + 1);	/* the first 20 close */
	assert_int_equal(s.n, 20);
	for (int i = 20; i < 40; i++)
		add(tr, copy_at(first[i], SPINE1, 63, T0 + MS + (uint64_t)i));
	for (int i = 40; i < 60; i++) {
		first[i] = homed_first(tr, &next, 63, LEAF1, 64, T0 + MS + 100 + (uint64_t)i);
		add(tr, first[i]);
	}
	for (int i = 59; i >= 40; i--)
		add(tr, copy_at(first[i], SPINE1, 63, T0 + MS + 200 + (uint64_t)i));
	hs_tracer_close_all(tr);
	hs_tracer_get_stats(tr, &st);
	assert_int_equal(st.copies, 100);
	assert_int_equal(st.closed, 60);
	assert_int_equal(st.evicted, 0);
	assert_int_equal(st.duplicates, 0);
	for (int i = 0; i < 60; i++) {
		int found = 0;
		for (int k = 0; k < s.n; k++) {
			if (s.t[k].ip_id != first[i].ip_id || s.t[k].seq != first[i].seq)
				continue;
			found++;
			assert_int_equal(s.t[k].nhops, i < 20 ? 1 : 2);
		}
		assert_int_equal(found, 1);
	}
	hs_tracer_free(tr);
	(void)state;
}

static void count_by_hops(void *arg, const struct hs_trace *t)
{
	int *n = arg;

	n[t->nhops < 4 ? t->nhops : 0]++;
}

/* 4,000 traces homed in one bucket of a pool of 4,096 (512 buckets) spill
 * over 266 of them, past the distance a trace keeps. The last 200 close
 * while the others stay open, their entries removed however far they
 * went, and every other trace is still found; new ones take their room. */
static void test_index_spill_far(void **state)
{
	int by_hops[4] = { 0 };
	struct hs_tracer_cfg cfg = { .timeout_ns = MS, .max_open = 4096, .on_close = count_by_hops,
				     .arg = by_hops };
	struct hs_tracer *tr = hs_tracer_new(&cfg);
	struct hs_tracer_stats st;
	enum { N = 4000, KEEP = 3800 };
	static struct hs_pkt first[N];
	uint32_t next = 1;

	for (int i = 0; i < N; i++) {
		first[i] = homed_first(tr, &next, 511, LEAF1, 64, T0 + (uint64_t)i);
		add(tr, first[i]);
	}
	for (int i = 0; i < KEEP; i++)
		add(tr, copy_at(first[i], SPINE1, 63, T0 + N + (uint64_t)i));
	hs_tracer_advance(tr, T0 + N - 1 + MS + 1);	/* the last 200 close */
	assert_int_equal(by_hops[1], N - KEEP);
	for (int i = 0; i < 100; i++)
		add(tr, homed_first(tr, &next, 511, LEAF1, 64, T0 + 2 * N));
	for (int i = KEEP - 1; i >= 0; i--)
		add(tr, copy_at(first[i], LEAF2, 62, T0 + 2 * N + (uint64_t)i));
	hs_tracer_close_all(tr);
	hs_tracer_get_stats(tr, &st);
	assert_int_equal(st.copies, N + 2 * KEEP + 100);
	assert_int_equal(st.closed, N + 100);
	assert_int_equal(st.evicted, 0);
	assert_int_equal(st.duplicates, 0);
	assert_int_equal(by_hops[1], N - KEEP + 100);
	assert_int_equal(by_hops[3], KEEP);
	hs_tracer_free(tr);
	(void)state;
}

/* a closed trace of the flow 10.1.1.10:1234 > 10.1.2.10:80/tcp, of no hop */
static struct hs_trace flow_trace(void)
{
	struct hs_trace t;

	memset(&t, 0, sizeof(t));
	t.key.src = A("10.1.1.10");
	t.key.dst = A("10.1.2.10");
	t.key.proto = 6;
	t.key.sport = 1234;
	t.key.dport = 80;
	t.key_hash = hs_flowkey_hash(&t.key);
	return t;
}

/* clearing a table that holds no flow touches none of its index (4 MB
 * here), populating it does, and one that holds flows is empty after */
static void test_flows_clear(void **state)
{
	struct hs_flowtab *ft = hs_flowtab_new(262144);
	struct hs_trace t = flow_trace();

	size_t before = resident();
	hs_flowtab_clear(ft);
	assert_true(resident() < before + 1048576);
	hs_flowtab_populate(ft);	/* a live capture's */
	assert_true(resident() >= before + 4 * 1048576);
	assert_non_null(hs_flowtab_add_trace(ft, &t));
	hs_flowtab_clear(ft);
	assert_int_equal(hs_flowtab_count(ft), 0);
	assert_int_equal(hs_flowtab_overflow(ft), 0);
	struct hs_flow *f = hs_flowtab_add_trace(ft, &t);
	assert_non_null(f);
	assert_int_equal(f->packets, 1);	/* a new flow, not the one before */
	assert_int_equal(hs_flowtab_count(ft), 1);
	hs_flowtab_free(ft);
	(void)state;
}

static void test_flows(void **state)
{
	struct hs_flowtab *ft = hs_flowtab_new(2);
	struct hs_trace t = flow_trace();

	t.nhops = 2;
	t.hops[0].ts_ns = T0 + 5;
	t.hops[1].ts_ns = T0 + 9;
	t.len = 60;
	t.tcp_flags = 0x02;
	t.outcome = HS_OUT_DELIVERED;
	struct hs_flow *f = hs_flowtab_add_trace(ft, &t);
	assert_non_null(f);
	assert_int_equal(f->id, 1);
	t.tcp_flags = 0x10;
	t.len = 1500;
	t.hops[0].ts_ns = T0 + 100;
	t.hops[1].ts_ns = T0 + 200;
	t.outcome = HS_OUT_DROPPED;
	assert_ptr_equal(hs_flowtab_add_trace(ft, &t), f);
	t.tcp_flags = 0x11;
	t.outcome = HS_OUT_LOOPED;
	hs_flowtab_add_trace(ft, &t);
	t.tcp_flags = 0x04;
	t.outcome = HS_OUT_DELIVERED;
	hs_flowtab_add_trace(ft, &t);
	assert_int_equal(f->packets, 4);
	assert_int_equal(f->bytes, 60 + 3 * 1500);
	assert_int_equal(f->syn, 1);
	assert_int_equal(f->fin, 1);
	assert_int_equal(f->rst, 1);
	assert_int_equal(f->dropped, 1);
	assert_int_equal(f->looped, 1);
	assert_int_equal(f->first_ns, T0 + 5);
	assert_int_equal(f->last_ns, T0 + 200);
	assert_true(f->dirty);

	/* the reverse direction is another flow; a third one overflows */
	struct hs_trace r = t;
	r.key.src = t.key.dst;
	r.key.dst = t.key.src;
	r.key.sport = 80;
	r.key.dport = 1234;
	r.key_hash = hs_flowkey_hash(&r.key);
	struct hs_flow *g = hs_flowtab_add_trace(ft, &r);
	assert_non_null(g);
	assert_int_equal(g->id, 2);
	r.key.dport = 1235;
	r.key_hash = hs_flowkey_hash(&r.key);
	assert_null(hs_flowtab_add_trace(ft, &r));
	assert_int_equal(hs_flowtab_overflow(ft), 1);
	assert_int_equal(hs_flowtab_count(ft), 2);
	assert_ptr_equal(hs_flowtab_at(ft, 0), f);
	assert_ptr_equal(hs_flowtab_at(ft, 1), g);
	assert_null(hs_flowtab_at(ft, 2));

	/* UDP flags are not TCP flags */
	hs_flowtab_clear(ft);
	assert_int_equal(hs_flowtab_count(ft), 0);
	r.key.proto = 17;
	r.key_hash = hs_flowkey_hash(&r.key);
	r.tcp_flags = 0x02;
	g = hs_flowtab_add_trace(ft, &r);
	assert_int_equal(g->syn, 0);
	assert_int_equal(g->packets, 1);
	assert_int_equal(g->id, 3);
	hs_flowtab_free(ft);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grouping_and_order),
		cmocka_unit_test(test_same_ttl_by_time_and_duplicates),
		cmocka_unit_test(test_timeout_capture_time),
		cmocka_unit_test(test_outcomes),
		cmocka_unit_test(test_partial),
		cmocka_unit_test(test_classify_unknown_switch),
		cmocka_unit_test(test_topo_set_later),
		cmocka_unit_test(test_eviction),
		cmocka_unit_test(test_may_close),
		cmocka_unit_test(test_ring),
		cmocka_unit_test(test_hide),
		cmocka_unit_test(test_flags_hw_and_long_paths),
		cmocka_unit_test(test_loop_keeps_nearest_hops),
		cmocka_unit_test(test_non_tcp_identity),
		cmocka_unit_test(test_tcp_identity),
		cmocka_unit_test(test_switch_times),
		cmocka_unit_test(test_stress),
		cmocka_unit_test(test_many_mirror_sources),
		cmocka_unit_test(test_full_source_table),
		cmocka_unit_test(test_on_soon),
		cmocka_unit_test(test_soon_hash_follows_slot),
		cmocka_unit_test(test_prepared_trace_gone),
		cmocka_unit_test(test_prepared),
		cmocka_unit_test(test_last_frame),
		cmocka_unit_test(test_prepared_random),
		cmocka_unit_test(test_populate),
		cmocka_unit_test(test_index_memory),
		cmocka_unit_test(test_index_spill),
		cmocka_unit_test(test_index_spill_far),
		cmocka_unit_test(test_flows_clear),
		cmocka_unit_test(test_flows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
