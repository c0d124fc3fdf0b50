/* test_filter.c - analyzer filters: compile, match on inner packets, del/list */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "filter.h"

/* IPv4 + TCP header, no payload: 10.0.1.2:40000 > 10.0.2.3:80, flags given */
static void build_tcp4(uint8_t *b, const uint8_t src[4], const uint8_t dst[4],
		       uint16_t sport, uint16_t dport, uint8_t flags)
{
	memset(b, 0, 40);
	b[0] = 0x45;
	b[3] = 40;		/* total length */
	b[8] = 64;		/* ttl */
	b[9] = 6;		/* tcp */
	memcpy(b + 12, src, 4);
	memcpy(b + 16, dst, 4);
	b[20] = (uint8_t)(sport >> 8);
	b[21] = (uint8_t)sport;
	b[22] = (uint8_t)(dport >> 8);
	b[23] = (uint8_t)dport;
	b[32] = 0x50;		/* data offset 5 */
	b[33] = flags;
}

/* IPv6 + UDP header: 2001:db8::1 > 2001:db8::2, 4791 */
static void build_udp6(uint8_t *b)
{
	memset(b, 0, 48);
	b[0] = 0x60;
	b[5] = 8;		/* payload length */
	b[6] = 17;
	b[7] = 64;
	b[8] = 0x20; b[9] = 0x01; b[10] = 0x0d; b[11] = 0xb8; b[23] = 1;
	b[24] = 0x20; b[25] = 0x01; b[26] = 0x0d; b[27] = 0xb8; b[39] = 2;
	b[40] = 0x12; b[41] = 0x34;
	b[42] = 0x12; b[43] = 0xb7;	/* 4791 */
	b[45] = 8;
}

static void pkt_on(struct hs_pkt *p, const uint8_t *l3, uint32_t caplen, uint32_t len)
{
	memset(p, 0, sizeof(*p));
	p->have = HS_HAVE_IP;
	p->l3 = l3;
	p->l3_caplen = caplen;
	p->len = len;
}

static const uint8_t A[4] = { 10, 0, 1, 2 }, B[4] = { 10, 0, 2, 3 };

static void test_no_filter_keeps_all(void **state)
{
	struct hs_filterset *fs = hs_filterset_new();
	uint8_t b[40];
	struct hs_pkt p;
	bool matched = true;

	(void)state;
	build_tcp4(b, A, B, 40000, 80, 0x02);
	pkt_on(&p, b, sizeof(b), sizeof(b));
	assert_true(hs_filter_match(fs, &p, &matched));
	assert_false(matched);
	assert_int_equal(hs_filter_count(fs), 0);
	assert_string_equal(hs_filter_summary(fs), "");
	hs_filterset_free(fs);
}

static void test_match_inner(void **state)
{
	struct hs_filterset *fs = hs_filterset_new();
	char err[256];
	uint8_t b[40];
	struct hs_pkt p;
	bool matched;
	uint64_t m = 0;

	(void)state;
	int id = hs_filter_add(fs, "tcp port 80 and host 10.0.2.3", err, sizeof(err));
	assert_true(id > 0);

	build_tcp4(b, A, B, 40000, 80, 0x10);
	pkt_on(&p, b, sizeof(b), sizeof(b));
	assert_true(hs_filter_match(fs, &p, &matched));
	assert_true(matched);

	build_tcp4(b, A, B, 40000, 443, 0x10);
	assert_false(hs_filter_match(fs, &p, &matched));
	assert_false(matched);

	/* flag tests read the inner TCP header */
	int id2 = hs_filter_add(fs, "tcp[tcpflags] & tcp-syn != 0", err, sizeof(err));
	assert_true(id2 > id);
	build_tcp4(b, A, B, 40000, 443, 0x02);
	assert_true(hs_filter_match(fs, &p, &matched));
	assert_true(matched);

	assert_true(hs_filter_at(fs, 0, NULL, NULL, &m));
	assert_int_equal(m, 1);
	assert_true(hs_filter_at(fs, 1, NULL, NULL, &m));
	assert_int_equal(m, 1);
	assert_string_equal(hs_filter_summary(fs),
			    "(tcp port 80 and host 10.0.2.3) or (tcp[tcpflags] & tcp-syn != 0)");
	hs_filterset_free(fs);
}

static void test_ipv6_inner(void **state)
{
	struct hs_filterset *fs = hs_filterset_new();
	char err[256];
	uint8_t b[48];
	struct hs_pkt p;
	bool matched;

	(void)state;
	assert_true(hs_filter_add(fs, "udp dst port 4791", err, sizeof(err)) > 0);
	build_udp6(b);
	pkt_on(&p, b, sizeof(b), sizeof(b));
	assert_true(hs_filter_match(fs, &p, &matched));
	assert_true(matched);
	b[43] = 0xb8;
	assert_false(hs_filter_match(fs, &p, &matched));
	hs_filterset_free(fs);
}

static void test_truncated_and_undecoded(void **state)
{
	struct hs_filterset *fs = hs_filterset_new();
	char err[256];
	uint8_t b[40];
	struct hs_pkt p;
	bool matched;

	(void)state;
	assert_true(hs_filter_add(fs, "tcp dst port 80", err, sizeof(err)) > 0);
	build_tcp4(b, A, B, 40000, 80, 0);
	/* only the IP header was captured: the port is past caplen, no match */
	pkt_on(&p, b, 20, 40);
	assert_false(hs_filter_match(fs, &p, &matched));
	/* a frame the decoder could not take apart never matches */
	pkt_on(&p, b, sizeof(b), sizeof(b));
	p.have = 0;
	assert_false(hs_filter_match(fs, &p, &matched));
	p.have = HS_HAVE_IP;
	p.l3 = NULL;
	assert_false(hs_filter_match(fs, &p, &matched));
	hs_filterset_free(fs);
}

static void test_bad_expr_changes_nothing(void **state)
{
	struct hs_filterset *fs = hs_filterset_new();
	char err[256] = "";

	(void)state;
	int id = hs_filter_add(fs, "icmp", err, sizeof(err));
	assert_true(id > 0);
	assert_int_equal(hs_filter_add(fs, "tcp port eighty-ish ((", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "bad filter 'tcp port eighty-ish (('"));
	assert_true(strlen(err) > strlen("bad filter 'tcp port eighty-ish ((': "));
	assert_int_equal(hs_filter_add(fs, "", err, sizeof(err)), -1);
	assert_int_equal(hs_filter_count(fs), 1);
	assert_string_equal(hs_filter_summary(fs), "icmp");
	hs_filterset_free(fs);
}

static void test_del_and_list(void **state)
{
	struct hs_filterset *fs = hs_filterset_new();
	char err[256];
	int id = 0;
	const char *expr = NULL;

	(void)state;
	int a = hs_filter_add(fs, "tcp", err, sizeof(err));
	int b = hs_filter_add(fs, "udp", err, sizeof(err));
	int c = hs_filter_add(fs, "icmp", err, sizeof(err));
	assert_true(a > 0 && b > a && c > b);
	assert_int_equal(hs_filter_del(fs, b), 0);
	assert_int_equal(hs_filter_del(fs, b), -1);
	assert_int_equal(hs_filter_del(fs, 9999), -1);
	assert_int_equal(hs_filter_count(fs), 2);
	assert_true(hs_filter_at(fs, 0, &id, &expr, NULL));
	assert_int_equal(id, a);
	assert_string_equal(expr, "tcp");
	assert_true(hs_filter_at(fs, 1, &id, &expr, NULL));
	assert_int_equal(id, c);
	assert_string_equal(expr, "icmp");
	assert_false(hs_filter_at(fs, 2, &id, &expr, NULL));
	assert_string_equal(hs_filter_summary(fs), "(tcp) or (icmp)");

	/* ids are never reused */
	int d = hs_filter_add(fs, "udp", err, sizeof(err));
	assert_true(d > c);

	/* a udp packet now matches through the new filter only */
	uint8_t pkt6[48];
	struct hs_pkt p;
	bool matched;
	uint64_t m = 0;
	build_udp6(pkt6);
	pkt_on(&p, pkt6, sizeof(pkt6), sizeof(pkt6));
	assert_true(hs_filter_match(fs, &p, &matched));
	assert_true(hs_filter_at(fs, 2, &id, NULL, &m));
	assert_int_equal(id, d);
	assert_int_equal(m, 1);
	assert_true(hs_filter_at(fs, 0, NULL, NULL, &m));
	assert_int_equal(m, 0);
	hs_filterset_free(fs);
}

static void test_limit(void **state)
{
	struct hs_filterset *fs = hs_filterset_new();
	char err[256];

	(void)state;
	for (int i = 0; i < HS_FILTER_MAX; i++)
		assert_true(hs_filter_add(fs, "ip", err, sizeof(err)) > 0);
	assert_int_equal(hs_filter_add(fs, "ip", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "too many filters"));
	hs_filterset_free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_filter_keeps_all),
		cmocka_unit_test(test_match_inner),
		cmocka_unit_test(test_ipv6_inner),
		cmocka_unit_test(test_truncated_and_undecoded),
		cmocka_unit_test(test_bad_expr_changes_nothing),
		cmocka_unit_test(test_del_and_list),
		cmocka_unit_test(test_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
