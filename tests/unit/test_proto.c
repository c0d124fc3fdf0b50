/* test_proto.c - the attach protocol's frames (src/proto.c) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <cmocka.h>

#include "hs.h"
#include "proto.h"
#include "tracer.h"

/* a frame as a writer sends it: header, then payload */
static size_t frame(uint8_t *buf, uint8_t type, const void *data, size_t len)
{
	assert_int_equal(hs_frame_header(buf, type, len), 0);
	memcpy(buf + HS_PROTO_HDR, data, len);
	return HS_PROTO_HDR + len;
}

static void test_frames_whole_and_split(void **state)
{
	uint8_t stream[256];
	size_t n = 0;
	struct hs_proto_rd r;
	struct hs_frame f;
	char err[128];

	(void)state;
	n += frame(stream + n, HS_FR_LINE, "traces", 6);
	n += frame(stream + n, HS_FR_INTR, "", 0);
	n += frame(stream + n, HS_FR_OUT, "a\nb\n", 4);
	/* fed whole, then a byte at a time: the same three frames */
	for (int bytewise = 0; bytewise < 2; bytewise++) {
		const char *want[] = { "traces", "", "a\nb\n" };
		const uint8_t types[] = { HS_FR_LINE, HS_FR_INTR, HS_FR_OUT };
		int got = 0;

		hs_proto_rd_init(&r);
		for (size_t i = 0; i < n; i += bytewise ? 1 : n) {
			hs_proto_rd_feed(&r, stream + i, bytewise ? 1 : n);
			int rc;
			while ((rc = hs_proto_rd_next(&r, &f, err, sizeof(err))) == 1) {
				assert_true(got < 3);
				assert_int_equal(f.type, types[got]);
				assert_int_equal(f.len, strlen(want[got]));
				assert_memory_equal(f.data, want[got], f.len);
				got++;
			}
			assert_int_equal(rc, 0);
		}
		assert_int_equal(got, 3);
		hs_proto_rd_free(&r);
	}
}

static void test_malformed(void **state)
{
	static const uint8_t zero[] = { 0, 0, 0, 0, HS_FR_LINE };
	static const uint8_t big[] = { 0, 0x10, 0, 1, HS_FR_LINE };	/* HS_PROTO_MAX + 1 */
	static const uint8_t huge[] = { 0xff, 0xff, 0xff, 0xff };
	static const uint8_t type0[] = { 0, 0, 0, 1, 0 };
	static const uint8_t type99[] = { 0, 0, 0, 2, 99, 'x' };
	const struct { const uint8_t *b; size_t n; const char *says; } bad[] = {
		{ zero, sizeof(zero), "a frame of 0 bytes" },
		{ big, sizeof(big), "a frame of 1048577 bytes" },
		{ huge, sizeof(huge), "a frame of 4294967295 bytes" },
		{ type0, sizeof(type0), "unknown type 0" },
		{ type99, sizeof(type99), "unknown type 99" },
	};
	struct hs_proto_rd r;
	struct hs_frame f;
	uint8_t good[16];
	char err[128];

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(bad); i++) {
		hs_proto_rd_init(&r);
		hs_proto_rd_feed(&r, bad[i].b, bad[i].n);
		err[0] = '\0';
		assert_int_equal(hs_proto_rd_next(&r, &f, err, sizeof(err)), -1);
		assert_non_null(strstr(err, bad[i].says));
		/* nothing is read after it, not even a good frame */
		hs_proto_rd_feed(&r, good, frame(good, HS_FR_INTR, "", 0));
		assert_int_equal(hs_proto_rd_next(&r, &f, err, sizeof(err)), -1);
		hs_proto_rd_free(&r);
	}
	/* the largest frame is taken, one byte more is refused by the writer */
	assert_int_equal(hs_frame_header(good, HS_FR_OUT, HS_PROTO_MAX - 1), 0);
	assert_int_equal(hs_frame_header(good, HS_FR_OUT, HS_PROTO_MAX), -1);
}

static void test_largest_frame(void **state)
{
	size_t len = HS_PROTO_MAX - 1;
	uint8_t *buf = calloc(1, HS_PROTO_HDR + len);
	struct hs_proto_rd r;
	struct hs_frame f;
	char err[128];

	(void)state;
	assert_non_null(buf);
	frame(buf, HS_FR_OUT, buf + HS_PROTO_HDR, len);
	hs_proto_rd_init(&r);
	hs_proto_rd_feed(&r, buf, HS_PROTO_HDR + len - 1);
	assert_int_equal(hs_proto_rd_next(&r, &f, err, sizeof(err)), 0);
	hs_proto_rd_feed(&r, buf + HS_PROTO_HDR + len - 1, 1);
	assert_int_equal(hs_proto_rd_next(&r, &f, err, sizeof(err)), 1);
	assert_int_equal(f.len, len);
	hs_proto_rd_free(&r);
	free(buf);
}

static void test_hello(void **state)
{
	uint8_t p[64], proto, flags;
	char v[16];
	struct hs_frame f = { .type = HS_FR_HELLO, .data = p };

	(void)state;
	f.len = (uint32_t)hs_hello_make(p, sizeof(p), HS_HELLO_JSON, "1.2.3");
	assert_int_equal(f.len, 7);
	assert_int_equal(hs_hello_parse(&f, &proto, &flags, v, sizeof(v)), 0);
	assert_int_equal(proto, HS_PROTO_VERSION);
	assert_int_equal(flags, HS_HELLO_JSON);
	assert_string_equal(v, "1.2.3");
	/* a version longer than the room is cut, still NUL-ended */
	assert_int_equal(hs_hello_parse(&f, &proto, &flags, v, 3), 0);
	assert_string_equal(v, "1.");
	/* too short, a version that is not text, another frame type */
	f.len = 1;
	assert_int_equal(hs_hello_parse(&f, &proto, &flags, v, sizeof(v)), -1);
	f.len = 7;
	p[3] = '\n';
	assert_int_equal(hs_hello_parse(&f, &proto, &flags, v, sizeof(v)), -1);
	p[3] = '.';
	f.type = HS_FR_LINE;
	assert_int_equal(hs_hello_parse(&f, &proto, &flags, v, sizeof(v)), -1);
	assert_string_equal(hs_frame_name(HS_FR_DONE), "done");
	assert_string_equal(hs_frame_name(200), "?");
}

/* the feed's frames: what is packed unpacks the same; a cut or a value out
 * of range is refused; a switch beyond the console's topology is unknown */
static void test_feed_trace(void **state)
{
	struct hs_trace t, u;
	uint8_t buf[HS_FEED_TRACE_MAX];
	size_t n;

	(void)state;
	memset(&t, 0, sizeof(t));
	t.id = 77;
	t.key.src.af = t.key.dst.af = 4;
	t.key.src.a[0] = 10;
	t.key.dst.a[3] = 12;
	t.key.sport = 40000;
	t.key.dport = 5001;
	t.key.proto = 6;
	t.outcome = HS_OUT_DROPPED;
	t.flags = HS_TF_PROBE;
	t.probe_id = 0xdeadbeef;
	t.last_sw = 3;
	t.n_next = 2;
	t.expected_next[0] = 1;
	t.expected_next[1] = 9;
	t.nhops = HS_TRACE_MAX_HOPS;
	for (int i = 0; i < HS_TRACE_MAX_HOPS; i++) {
		t.hops[i].sw = i % 5 - 1;
		t.hops[i].addr.af = 6;
		t.hops[i].addr.a[15] = (uint8_t)i;
		t.hops[i].ts_ns = 1700000000000000000ULL + (uint64_t)i;
		t.hops[i].ttl = (uint8_t)(64 - i);
		t.hops[i].session = 1000u + (unsigned)i;
	}
	t.extra_hops = 3;
	t.key_hash = hs_flowkey_hash(&t.key);
	n = hs_feed_trace_pack(buf, &t, NULL);
	assert_true(n <= HS_FEED_TRACE_MAX);
	assert_int_equal(hs_feed_trace_unpack(buf, n, 10, &u, NULL, 0), 0);
	assert_memory_equal(&u.key, &t.key, sizeof(t.key));
	assert_int_equal(u.id, 77);
	assert_int_equal(u.key_hash, t.key_hash);
	assert_int_equal(u.probe_id, 0xdeadbeef);
	assert_int_equal(u.n_next, 2);
	assert_int_equal(u.expected_next[1], 9);
	assert_int_equal(u.nhops, HS_TRACE_MAX_HOPS);
	assert_int_equal(u.extra_hops, 3);
	for (int i = 0; i < HS_TRACE_MAX_HOPS; i++) {
		assert_int_equal(u.hops[i].sw, t.hops[i].sw);
		assert_memory_equal(&u.hops[i].addr, &t.hops[i].addr, sizeof(t.hops[i].addr));
		assert_int_equal(u.hops[i].ts_ns, t.hops[i].ts_ns);
		assert_int_equal(u.hops[i].session, t.hops[i].session);
	}
	/* a console that knows 4 switches: 9 is not one of them */
	assert_int_equal(hs_feed_trace_unpack(buf, n, 4, &u, NULL, 0), 0);
	assert_int_equal(u.expected_next[1], -1);
	assert_int_equal(u.last_sw, 3);
	/* cut anywhere, or longer: refused */
	for (size_t k = 0; k < n; k++)
		assert_int_equal(hs_feed_trace_unpack(buf, k, 10, &u, NULL, 0), -1);
	buf[n] = 0;
	assert_int_equal(hs_feed_trace_unpack(buf, n + 1, 10, &u, NULL, 0), -1);
	/* an outcome, a hop count or an address family out of range */
	t.outcome = HS_OUT__COUNT;
	n = hs_feed_trace_pack(buf, &t, NULL);
	assert_int_equal(hs_feed_trace_unpack(buf, n, 10, &u, NULL, 0), -1);
	t.outcome = HS_OUT_DELIVERED;
	n = hs_feed_trace_pack(buf, &t, NULL);
	buf[8] = 99;		/* the source's family */
	assert_int_equal(hs_feed_trace_unpack(buf, n, 10, &u, NULL, 0), -1);
}

/* the analyzers that stored a trace follow it, to a console that takes
 * them; one that does not (an older one) is never sent them */
static void test_feed_trace_analyzer(void **state)
{
	uint8_t buf[HS_FEED_TRACE_MAX + 8];
	struct hs_trace t, u;
	char names[HS_FEED_ANALYZER_MAX], longer[300];
	size_t n, bare;

	(void)state;
	memset(&t, 0, sizeof(t));
	t.id = 5;
	t.key.src.af = t.key.dst.af = 4;
	t.nhops = 1;
	t.hops[0].addr.af = 4;
	bare = hs_feed_trace_pack(buf, &t, NULL);
	n = hs_feed_trace_pack(buf, &t, "an1+an2");
	assert_int_equal(n, bare + 1 + 7);
	assert_int_equal(hs_feed_trace_unpack(buf, n, 4, &u, names, sizeof(names)), 0);
	assert_string_equal(names, "an1+an2");
	assert_int_equal(u.id, 5);
	/* a console that did not ask for them takes none */
	assert_int_equal(hs_feed_trace_unpack(buf, n, 4, &u, NULL, 0), -1);
	/* none follow: none there */
	assert_int_equal(hs_feed_trace_unpack(buf, bare, 4, &u, names, sizeof(names)), 0);
	assert_string_equal(names, "");
	/* cut, longer, or not text: refused */
	for (size_t k = bare + 1; k < n; k++)
		assert_int_equal(hs_feed_trace_unpack(buf, k, 4, &u, names, sizeof(names)), -1);
	buf[n] = 'x';
	assert_int_equal(hs_feed_trace_unpack(buf, n + 1, 4, &u, names, sizeof(names)), -1);
	buf[bare + 2] = '\n';
	assert_int_equal(hs_feed_trace_unpack(buf, n, 4, &u, names, sizeof(names)), -1);
	/* too long to send whole: cut, and still a trace */
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	n = hs_feed_trace_pack(buf, &t, longer);
	assert_true(n <= HS_FEED_TRACE_MAX);
	assert_int_equal(hs_feed_trace_unpack(buf, n, 4, &u, names, sizeof(names)), 0);
	assert_int_equal(strlen(names), HS_FEED_ANALYZER_MAX - 1);
}

static void test_feed_status(void **state)
{
	struct hs_feed_status s = { 0 }, u;
	uint8_t buf[sizeof(s) + 16];
	size_t n;

	(void)state;
	s.flags = HS_FS_CAPTURE | HS_FS_FILE;
	s.packets = 12345;
	s.not_shown = 7;
	s.session = 4;
	snprintf(s.source, sizeof(s.source), "/tmp/sample.pcap");
	n = hs_feed_status_pack(buf, &s);
	assert_int_equal(hs_feed_status_unpack(buf, n, &u), 0);
	assert_int_equal(u.packets, 12345);
	assert_int_equal(u.not_shown, 7);
	assert_int_equal(u.session, 4);
	assert_string_equal(u.source, "/tmp/sample.pcap");
	assert_int_equal(hs_feed_status_unpack(buf, 20, &u), -1);
	buf[n - 1] = '\n';
	assert_int_equal(hs_feed_status_unpack(buf, n, &u), -1);
}

static void collect(void *arg, const char *name)
{
	char *all = arg;

	strcat(all, name);
	strcat(all, ",");
}

static void test_names(void **state)
{
	uint8_t buf[5 + HS_NAMES_WORD_MAX], ans[256];
	char word[HS_NAMES_WORD_MAX + 1], all[256] = "", *list[] = { "1:589", "1:58", "", "x\ty" };
	uint32_t seq = 0;
	bool stored = false;
	size_t n;

	(void)state;
	n = hs_names_ask_pack(buf, 7, true, "1:58");
	assert_int_equal(hs_names_ask_unpack(buf, n, &seq, &stored, word, sizeof(word)), 0);
	assert_int_equal(seq, 7);
	assert_true(stored);
	assert_string_equal(word, "1:58");
	assert_int_equal(hs_names_ask_unpack(buf, 4, &seq, &stored, word, sizeof(word)), -1);
	buf[4] = 2;	/* neither in memory nor the history's */
	assert_int_equal(hs_names_ask_unpack(buf, n, &seq, &stored, word, sizeof(word)), -1);

	/* an empty name and one that is not text are left out */
	n = hs_names_pack(ans, sizeof(ans), 9, list, 4);
	assert_int_equal(n, 4 + strlen("1:589\n1:58\n"));
	assert_int_equal(hs_names_unpack(ans, n, &seq, collect, all), 0);
	assert_int_equal(seq, 9);
	assert_string_equal(all, "1:589,1:58,");
	assert_int_equal(hs_names_unpack(ans, 4, &seq, NULL, NULL), 0);	/* none */
	/* a name without its newline, an empty one, one that is not text:
	 * nothing is given */
	all[0] = '\0';
	assert_int_equal(hs_names_unpack(ans, n - 1, &seq, collect, all), -1);
	assert_string_equal(all, "");
	ans[4 + 5] = 'x';
	ans[4 + 6] = '\n';
	ans[4 + 7] = '\n';
	assert_int_equal(hs_names_unpack(ans, n, &seq, collect, all), -1);
	ans[4 + 7] = 0x01;
	assert_int_equal(hs_names_unpack(ans, n, &seq, collect, all), -1);
	assert_string_equal(all, "");
	assert_int_equal(hs_names_unpack(ans, 3, &seq, NULL, NULL), -1);
}

static void test_feed_load(void **state)
{
	char text[6][HS_LOAD_TEXT] = { "45%", "", "", "~9.8M", "", "" }, got[6][HS_LOAD_TEXT];
	uint8_t buf[4 + 6 * (5 + HS_LOAD_TEXT)];
	size_t n;

	(void)state;
	memset(got, 'z', sizeof(got));
	n = hs_feed_load_pack(buf, 3, (const char (*)[HS_LOAD_TEXT])text);
	assert_int_equal(hs_feed_load_unpack(buf, n, 3, got), 0);
	for (int d = 0; d < 6; d++)
		assert_string_equal(got[d], text[d]);
	/* of a topology of another number of links: nothing taken */
	memset(got, 'z', sizeof(got));
	assert_int_equal(hs_feed_load_unpack(buf, n, 2, got), 1);
	assert_int_equal(got[0][0], 'z');
	/* cut short, a link beyond the topology, a text that is not one */
	assert_int_equal(hs_feed_load_unpack(buf, n - 1, 3, got), -1);
	assert_int_equal(hs_feed_load_unpack(buf, 3, 3, got), -1);
	buf[7] = 6;	/* the first entry's direction: 2 * 3 is beyond */
	assert_int_equal(hs_feed_load_unpack(buf, n, 3, got), -1);
	buf[7] = 0;
	buf[9] = '\n';
	assert_int_equal(hs_feed_load_unpack(buf, n, 3, got), -1);
	assert_int_equal(got[0][0], 'z');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_whole_and_split),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_largest_frame),
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_feed_trace),
		cmocka_unit_test(test_feed_trace_analyzer),
		cmocka_unit_test(test_feed_status),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_feed_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
