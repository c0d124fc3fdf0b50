/* test_probe.c - probe specs, crafted bytes, the signature, judging traces */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <pcap/pcap.h>
#include <libnet.h>

#include "probe.h"
#include "probecmd.h"

static const char topo_text[] =
	"switch spine1 role spine mirror 10.255.0.1 loopback 10.254.0.1\n"
	"switch spine2 role spine mirror 10.255.0.2 loopback 10.254.0.2\n"
	"switch leaf1 role leaf mirror 10.255.0.3 loopback 10.254.0.3\n"
	"switch leaf2 role leaf mirror 10.255.0.4 loopback 10.254.0.4\n"
	"switch leaf3 role leaf mirror 10.255.0.5 loopback 10.254.0.5\n"
	"switch leaf4 role leaf mirror 10.255.0.6 loopback 10.254.0.6\n"
	"link leaf1 spine1 spine1 leaf1\n"
	"link leaf1 spine2 spine2 leaf1\n"
	"link leaf2 spine1 spine1 leaf2\n"
	"link leaf2 spine2 spine2 leaf2\n"
	"link leaf3 spine1 spine1 leaf3\n"
	"link leaf3 spine2 spine2 leaf3\n"
	"link leaf4 spine1 spine1 leaf4\n"
	"link leaf4 spine2 spine2 leaf4\n"
	"subnet leaf1 10.1.1.0/24\n"
	"host h1 addr 10.1.1.10 leaf leaf1\n"
	"subnet leaf3 10.1.3.0/24\n"
	"host h5 addr 10.1.3.10 leaf leaf3\n"
	"subnet leaf4 10.1.4.0/24\n"
	"host h7 addr 10.1.4.10 leaf leaf4\n"
	"analyzer 10.255.0.254 iface hs-mirror\n";

static struct hs_topo *topo;

static int setup(void **state)
{
	char err[256];

	topo = hs_topo_parse(topo_text, "test.topo", err, sizeof(err));
	if (!topo)
		fprintf(stderr, "%s\n", err);
	return topo ? 0 : -1;
}

static int teardown(void **state)
{
	hs_topo_free(topo);
	return 0;
}

/* split a line into words in a static buffer */
static int words(const char *line, char **argv, int max)
{
	static char buf[512];
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *w = strtok(buf, " "); w && n < max; w = strtok(NULL, " "))
		argv[n++] = w;
	return n;
}

static int parse(const char *line, struct hs_probe_spec *s, char *err, size_t errlen)
{
	char *argv[64];
	int argc = words(line, argv, 64);

	err[0] = '\0';
	return hs_probe_parse(argc, argv, topo, s, err, errlen);
}

static struct hs_addr A(const char *s)
{
	struct hs_addr a;

	assert_int_equal(hs_addr_parse(s, &a), 0);
	return a;
}

static void test_parse_full(void **state)
{
	struct hs_probe_spec s;
	char err[256];

	assert_int_equal(parse("tcp 10.1.1.10:4000 > 10.1.3.10:443 flags SA ttl 9 dscp 10 "
			       "id 77 len 100 via leaf1,spine2,leaf3 count 5 interval 20ms "
			       "timeout 3s --badsum --expect lost", &s, err, sizeof(err)), 0);
	assert_int_equal(s.kind, HS_PROBE_PLAIN);
	assert_int_equal(s.proto, 6);
	assert_true(hs_addr_eq(&s.src, &(struct hs_addr){ 0 }) == false);
	struct hs_addr a = A("10.1.1.10"), b = A("10.1.3.10"), an = A("10.255.0.254");
	assert_true(hs_addr_eq(&s.src, &a));
	assert_true(hs_addr_eq(&s.dst, &b));
	assert_true(hs_addr_eq(&s.outer_src, &an));
	assert_int_equal(s.sport, 4000);
	assert_int_equal(s.dport, 443);
	assert_int_equal(s.tcp_flags, 0x12);
	assert_int_equal(s.ttl, 9);
	assert_int_equal(s.tos, 10 << 2);
	assert_true(s.have_ip_id);
	assert_int_equal(s.ip_id, 77);
	assert_int_equal(s.len, 100);
	assert_int_equal(s.nvia, 3);
	assert_int_equal(s.via[0], hs_topo_switch_by_name(topo, "leaf1"));
	assert_int_equal(s.via[1], hs_topo_switch_by_name(topo, "spine2"));
	assert_int_equal(s.via[2], hs_topo_switch_by_name(topo, "leaf3"));
	struct hs_addr lo = A("10.254.0.2");
	assert_true(hs_addr_eq(&s.via_addr[1], &lo));
	assert_int_equal(s.count, 5);
	assert_int_equal(s.interval_ns, 20000000ULL);
	assert_int_equal(s.timeout_ns, 3000000000ULL);
	assert_true(s.badsum);
	assert_int_equal(s.expect, HS_EXPECT_LOST);
}

static void test_parse_defaults_and_order(void **state)
{
	struct hs_probe_spec s1, s2, s3;
	char err[256];

	/* no source: the analyzer; no protocol: a TCP SYN to port 80 */
	assert_int_equal(parse("> h5", &s1, err, sizeof(err)), 0);
	struct hs_addr an = A("10.255.0.254"), h5 = A("10.1.3.10");
	assert_true(hs_addr_eq(&s1.src, &an));
	assert_true(hs_addr_eq(&s1.dst, &h5));
	assert_int_equal(s1.proto, 6);
	assert_int_equal(s1.tcp_flags, 0x02);
	assert_int_equal(s1.dport, 80);
	assert_int_equal(s1.sport, 0);
	assert_int_equal(s1.ttl, 64);
	assert_int_equal(s1.count, 1);
	assert_int_equal(s1.nvia, 0);

	/* the same probe with its words in two orders, '>' glued or not */
	assert_int_equal(parse("udp 10.1.1.10:5000 > 10.1.4.10:53 from spine1 ttl 7 count 3",
			       &s2, err, sizeof(err)), 0);
	assert_int_equal(parse("count 3 from spine1 10.1.1.10:5000>10.1.4.10:53 ttl 7 udp",
			       &s3, err, sizeof(err)), 0);
	assert_memory_equal(&s2, &s3, sizeof(s2));
	assert_int_equal(s2.proto, 17);
	assert_int_equal(s2.nvia, 1);
	assert_true(s2.from);
	assert_int_equal(s2.via[0], hs_topo_switch_by_name(topo, "spine1"));

	/* icmp has no ports, and no flags */
	assert_int_equal(parse("icmp > 10.1.3.10", &s1, err, sizeof(err)), 0);
	assert_int_equal(s1.proto, 1);
	assert_int_equal(s1.tcp_flags, 0);

	/* link A B: out to B by two layers, back to A's loopback */
	assert_int_equal(parse("link leaf1 spine1 count 4", &s1, err, sizeof(err)), 0);
	assert_int_equal(s1.kind, HS_PROBE_LINK);
	assert_int_equal(s1.count, 4);
	assert_int_equal(s1.nvia, 2);
	assert_int_equal(s1.via[0], hs_topo_switch_by_name(topo, "leaf1"));
	assert_int_equal(s1.via[1], hs_topo_switch_by_name(topo, "spine1"));
	struct hs_addr lo = A("10.254.0.3");
	assert_true(hs_addr_eq(&s1.dst, &lo));
}

static void test_parse_errors(void **state)
{
	static const struct {
		const char *line, *err;
	} cases[] = {
		{ "> 10.1.3.10 from leaf9", "probe: unknown switch 'leaf9'" },
		{ "> 10.1.3.10 via leaf1,leaf9", "probe: unknown switch 'leaf9'" },
		{ "> 10.1.3.10 ttl 300", "probe: 'ttl 300' out of range (1-255)" },
		{ "> 10.1.3.10 ttl 0", "probe: 'ttl 0' out of range (1-255)" },
		{ "> 10.1.3.10 ttl x", "probe: 'ttl x' is not a number" },
		{ "> 10.1.3.10 dscp 64", "probe: 'dscp 64' out of range (0-63)" },
		{ "> 10.1.3.10 id 65536", "probe: 'id 65536' out of range (0-65535)" },
		{ "> 10.1.3.10 count 0", "probe: 'count 0' out of range (1-10000)" },
		{ "> 10.1.3.10 len 20", "probe: 'len 20' out of range (60-1500)" },
		{ "udp > 10.1.3.10 len 1500 via leaf1,spine1",
		  "probe: 'len 1500' out of range (48-1460)" },
		{ "> 10.1.3.10 tll 5", "probe: unknown field 'tll'" },
		{ "tll 5 > 10.1.3.10", "probe: unknown field 'tll'" },
		{ "10.1.1.10 10.1.1.11 > 10.1.3.10",
		  "probe: unexpected '10.1.1.11' (the destination follows '>')" },
		{ "> 10.1.3.10 ttl", "probe: 'ttl' needs a value" },
		{ "> 10.1.3.10 ttl 5 ttl 6", "probe: 'ttl' given twice" },
		{ "ttl 5", "probe: missing destination ('> DST[:PORT]')" },
		{ ">", "probe: '>' needs a destination (> DST[:PORT])" },
		{ "> 10.1.3.10 > 10.1.4.10", "probe: '>' given twice" },
		{ "> 10.1.3.300", "probe: '10.1.3.300' is not an address or a known host" },
		{ "> h99", "probe: 'h99' is not an address or a known host" },
		{ "> ::1", "probe: '::1' is not an IPv4 address (probes are IPv4)" },
		{ "> 10.1.3.10:70000", "probe: '10.1.3.10:70000': port out of range (0-65535)" },
		{ "> 10.1.3.10:http", "probe: '10.1.3.10:http': bad port 'http'" },
		{ "udp > 10.1.3.10 flags S", "probe: 'flags S' needs tcp" },
		{ "> 10.1.3.10 flags SX", "probe: bad TCP flags 'flags SX' (letters F S R P A U E C)" },
		{ "icmp > 10.1.3.10:80", "probe: icmp has no ports ('10.1.3.10:80')" },
		{ "> 10.1.3.10 from leaf1 via spine1", "probe: 'via spine1' and 'from' cannot be combined" },
		{ "> 10.1.3.10 via leaf1,,leaf3", "probe: bad switch list 'via leaf1,,leaf3' (e.g. via leaf1,spine2,leaf3)" },
		{ "> 10.1.3.10 interval 5x", "probe: bad duration 'interval 5x' (e.g. 100ms, 2s)" },
		{ "> 10.1.3.10 timeout 0", "probe: 'timeout 0' must be more than 0" },
		{ "> 10.1.3.10 --expect maybe", "probe: bad value '--expect maybe' (delivered or lost)" },
		{ "tcp udp > 10.1.3.10", "probe: protocol given twice ('udp')" },
		{ "link leaf1 leaf3", "probe: no link between 'leaf1' and 'leaf3'" },
		{ "link leaf1 leaf1", "probe: 'link leaf1 leaf1' needs two different switches" },
		{ "link leaf1", "probe: 'link' needs two switches (link A B)" },
		{ "link leaf1 spine9", "probe: unknown switch 'spine9'" },
		{ "link leaf1 spine1 > 10.1.3.10", "probe: '>' cannot be used with 'link' (it goes A -> B -> A)" },
		{ "link leaf1 spine1 via leaf2", "probe: 'via leaf2' cannot be used with 'link'" },
	};
	struct hs_probe_spec s;
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = parse(cases[i].line, &s, err, sizeof(err));
		if (rc != -1 || strcmp(err, cases[i].err) != 0)
			fail_msg("'%s': got %d '%s', want '%s'", cases[i].line, rc, err, cases[i].err);
	}

	/* without a topology: switches and the analyzer are unknown */
	char *argv[8];
	int argc = words("> 10.1.3.10 from leaf1", argv, 8);
	assert_int_equal(hs_probe_parse(argc, argv, NULL, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "probe: 'from leaf1' needs a topology (topo load FILE)");
	argc = words("> 10.1.3.10", argv, 8);
	assert_int_equal(hs_probe_parse(argc, argv, NULL, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "probe: no source given and no analyzer address in the "
			    "topology ('SRC > DST')");
	argc = words("10.9.9.9 > 10.1.3.10", argv, 8);
	assert_int_equal(hs_probe_parse(argc, argv, NULL, &s, err, sizeof(err)), 0);
}

static void test_traceroute_parse(void **state)
{
	struct hs_probe_spec s;
	char err[256], *argv[16];
	int argc = words("10.1.1.10:40000 > 10.1.3.10:80", argv, 16);

	assert_int_equal(hs_traceroute_parse(argc, argv, topo, &s, err, sizeof(err)), 0);
	assert_int_equal(s.kind, HS_PROBE_TRACEROUTE);
	assert_int_equal(s.proto, 6);
	assert_int_equal(s.tcp_flags, 0x02);
	assert_int_equal(s.sport, 40000);
	assert_int_equal(s.dport, 80);
	assert_int_equal(s.count, HS_TRACEROUTE_MAX_TTL);
	/* injected at the source's leaf */
	assert_int_equal(s.nvia, 1);
	assert_int_equal(s.via[0], hs_topo_switch_by_name(topo, "leaf1"));

	struct hs_probe_pkt pk;
	hs_probe_pkt_init(&s, 9, 0, 0, &pk);
	assert_int_equal(pk.ttl, 1);
	hs_probe_pkt_init(&s, 9, 4, 0, &pk);
	assert_int_equal(pk.ttl, 5);
	assert_int_equal(pk.sport, 40000);

	argc = words("10.1.1.10 > 10.1.3.10:80", argv, 16);
	assert_int_equal(hs_traceroute_parse(argc, argv, topo, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "traceroute: '10.1.1.10' needs a port (SRC:SPORT)");
	argc = words("10.1.1.10:1 > 10.1.3.10:80 proto icmp", argv, 16);
	assert_int_equal(hs_traceroute_parse(argc, argv, topo, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "traceroute: 'proto icmp' not supported (tcp or udp)");
	argc = words("", argv, 16);
	assert_int_equal(hs_traceroute_parse(argc, argv, topo, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "traceroute: needs a destination (HOST[:PORT], or "
			    "SRC:SPORT > DST:DPORT)");
	argc = words("10.1.1.10:1 >", argv, 16);
	assert_int_equal(hs_traceroute_parse(argc, argv, topo, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "traceroute: '>' needs a destination (> DST:DPORT)");
}

/* traceroute HOST, the mtr way: a source and ports of its own, rounds */
static void test_traceroute_host(void **state)
{
	struct hs_probe_spec s;
	struct hs_probe_pkt pk;
	char err[256], a[HS_ADDRSTRLEN], *argv[16];
	int argc = words("10.1.3.10", argv, 16);

	(void)state;
	assert_int_equal(hs_traceroute_parse(argc, argv, topo, &s, err, sizeof(err)), 0);
	assert_true(s.table);
	assert_false(s.report);
	assert_int_equal(s.rounds, 0);		/* until stopped */
	assert_int_equal(s.dport, 80);
	assert_int_equal(s.sport, 0);		/* from the probe id */
	/* from a host behind another leaf, in through that leaf */
	assert_string_equal(hs_addr_str(&s.src, a, sizeof(a)), "10.1.1.10");
	assert_int_equal(s.via[0], hs_topo_switch_by_name(topo, "leaf1"));

	argc = words("h1 count 3 --report max-ttl 4 proto udp", argv, 16);
	assert_int_equal(hs_traceroute_parse(argc, argv, topo, &s, err, sizeof(err)), 0);
	assert_string_equal(hs_addr_str(&s.dst, a, sizeof(a)), "10.1.1.10");
	assert_string_equal(hs_addr_str(&s.src, a, sizeof(a)), "10.1.3.10");
	assert_int_equal(s.dport, 33434);
	assert_true(s.report);
	assert_int_equal(s.rounds, 3);
	assert_int_equal(s.count, 12);
	/* each round TTL 1..max-ttl again */
	hs_probe_pkt_init(&s, 9, 3, 0, &pk);
	assert_int_equal(pk.ttl, 4);
	hs_probe_pkt_init(&s, 9, 4, 0, &pk);
	assert_int_equal(pk.ttl, 1);

	/* a flow's traceroute takes rounds too when asked */
	argc = words("10.1.1.10:40000 > 10.1.3.10:80 count 2", argv, 16);
	assert_int_equal(hs_traceroute_parse(argc, argv, topo, &s, err, sizeof(err)), 0);
	assert_true(s.table);
	assert_int_equal(s.count, 2 * HS_TRACEROUTE_MAX_TTL);

	/* without a topology: this machine's own address toward the host */
	argc = words("127.0.0.1:5001", argv, 16);
	assert_int_equal(hs_traceroute_parse(argc, argv, NULL, &s, err, sizeof(err)), 0);
	assert_string_equal(hs_addr_str(&s.src, a, sizeof(a)), "127.0.0.1");
	assert_int_equal(s.dport, 5001);

	argc = words("10.1.3.10 count 0", argv, 16);
	assert_int_equal(hs_traceroute_parse(argc, argv, topo, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "traceroute: 'count 0' out of range (1-10000)");
	argc = words("10.1.3.10 interval 10ms", argv, 16);
	assert_int_equal(hs_traceroute_parse(argc, argv, topo, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "traceroute: 'interval 10ms' out of range (at least 100ms)");
	argc = words("10.1.3.10 10.1.4.10", argv, 16);
	assert_int_equal(hs_traceroute_parse(argc, argv, topo, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "traceroute: unexpected '10.1.4.10' (the destination follows '>')");
}

/* ---- crafted bytes ------------------------------------------------------------ */

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* one's complement sum; 0xffff over data that includes a correct checksum */
static uint32_t sum16(uint32_t s, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += be16(p + i);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static bool l4_sum_ok(const uint8_t *ip, size_t len)
{
	size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
	uint8_t proto = ip[9];
	uint32_t s = 0;

	if (proto != 1) {
		s = sum16(s, ip + 12, 8);
		s += proto;
		s += (uint32_t)(len - ihl);
	}
	s = sum16(s, ip + ihl, len - ihl);
	return fold(s) == 0xffff;
}

static libnet_t *build_ctx(void)
{
	char errbuf[LIBNET_ERRBUF_SIZE];
	libnet_t *l = libnet_init(LIBNET_NONE, NULL, errbuf);

	if (!l)
		fail_msg("libnet_init: %s", errbuf);
	return l;
}

static size_t craft(const char *line, uint32_t id, uint32_t seq, uint64_t ns, uint8_t *buf,
		    size_t cap, struct hs_probe_spec *s, struct hs_probe_pkt *pk)
{
	char err[256];

	if (parse(line, s, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	libnet_t *l = build_ctx();
	hs_probe_pkt_init(s, id, seq, ns, pk);
	size_t n = hs_probe_craft(l, s, pk, buf, cap, err, sizeof(err));
	libnet_destroy(l);
	if (n == 0)
		fail_msg("craft '%s': %s", line, err);
	return n;
}

static void test_craft_tcp_fields(void **state)
{
	struct hs_probe_spec s;
	struct hs_probe_pkt pk;
	uint8_t b[HS_PROBE_MTU];
	uint64_t ns = 0x0123456789abcdefULL;
	size_t n = craft("tcp 10.1.1.10:4000 > 10.1.3.10:443 flags PA ttl 9 dscp 10 ecn 1 id 77 len 100",
			 0xdeadbeef, 3, ns, b, sizeof(b), &s, &pk);

	assert_int_equal(n, 100);
	/* IPv4 header */
	assert_int_equal(b[0], 0x45);
	assert_int_equal(b[1], (10 << 2 | 1) | HS_DEBUG_TOS_BIT);
	assert_int_equal(be16(b + 2), 100);
	assert_int_equal(be16(b + 4), 77);
	assert_int_equal(b[8], 9);
	assert_int_equal(b[9], 6);
	assert_int_equal(fold(sum16(0, b, 20)), 0xffff);
	assert_int_equal(be32(b + 12), 0x0a01010a);
	assert_int_equal(be32(b + 16), 0x0a01030a);
	/* TCP header */
	assert_int_equal(be16(b + 20), 4000);
	assert_int_equal(be16(b + 22), 443);
	assert_int_equal(be32(b + 24), pk.tcp_seq);
	assert_int_equal(b[32] >> 4, 5);
	assert_int_equal(b[33], 0x18);
	assert_true(be32(b + 28) != 0);		/* ACK set: an acknowledgment number */
	assert_int_equal(be16(b + 34), 65535);
	assert_true(l4_sum_ok(b, n));
	/* signature, then the pattern */
	assert_int_equal(be32(b + 40), HS_PROBE_MAGIC);
	assert_int_equal(be32(b + 44), 0xdeadbeef);
	assert_int_equal(be32(b + 48), 3);
	assert_int_equal(be32(b + 52), 0x01234567);
	assert_int_equal(be32(b + 56), 0x89abcdef);
	for (size_t i = 60; i < n; i++)
		assert_int_equal(b[i], (uint8_t)(i - 40));
}

static void test_craft_udp_icmp(void **state)
{
	struct hs_probe_spec s;
	struct hs_probe_pkt pk;
	uint8_t b[HS_PROBE_MTU];

	size_t n = craft("udp 10.1.1.10:5000 > 10.1.4.10:53", 42, 0, 1000, b, sizeof(b), &s, &pk);
	assert_int_equal(n, 20 + 8 + HS_PROBE_SIG_LEN);
	assert_int_equal(b[9], 17);
	assert_int_equal(b[1] & HS_DEBUG_TOS_BIT, HS_DEBUG_TOS_BIT);
	assert_int_equal(b[8], 64);
	assert_int_equal(be16(b + 4), pk.ip_id);
	assert_int_equal(be16(b + 20), 5000);
	assert_int_equal(be16(b + 22), 53);
	assert_int_equal(be16(b + 24), 8 + HS_PROBE_SIG_LEN);
	assert_true(l4_sum_ok(b, n));
	assert_int_equal(fold(sum16(0, b, 20)), 0xffff);

	n = craft("icmp > 10.1.4.10 len 200", 0x10002, 7, 1000, b, sizeof(b), &s, &pk);
	assert_int_equal(n, 200);
	assert_int_equal(b[9], 1);
	assert_int_equal(b[20], 8);		/* echo request */
	assert_int_equal(b[21], 0);
	assert_int_equal(be16(b + 24), 0x0002);	/* identifier: low bits of the probe id */
	assert_int_equal(be16(b + 26), 7);	/* sequence */
	assert_int_equal(be32(b + 28), HS_PROBE_MAGIC);
	assert_true(l4_sum_ok(b, n));
	/* source defaults to the analyzer */
	assert_int_equal(be32(b + 12), 0x0aff00fe);
}

static void test_craft_badsum(void **state)
{
	static const char *const lines[] = {
		"tcp > 10.1.3.10 --badsum", "udp > 10.1.3.10 --badsum", "icmp > 10.1.3.10 --badsum",
		"udp > 10.1.3.10 --badsum via leaf1,spine1",
	};
	struct hs_probe_spec s;
	struct hs_probe_pkt pk;
	uint8_t b[HS_PROBE_MTU];

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		size_t n = craft(lines[i], 5, 1, 1000, b, sizeof(b), &s, &pk);
		size_t off = (size_t)20 * s.nvia;
		assert_false(l4_sum_ok(b + off, n - off));
		/* the IP header stays right, so the packet is forwarded */
		assert_int_equal(fold(sum16(0, b + off, 20)), 0xffff);
		if (s.proto == 17)
			assert_true(be16(b + off + 26) != 0);
	}
}

static void test_craft_nested(void **state)
{
	struct hs_probe_spec s;
	struct hs_probe_pkt pk;
	uint8_t b[HS_PROBE_MTU];
	size_t n = craft("tcp 10.1.1.10:4000 > 10.1.3.10:80 via leaf1,spine2,leaf3 len 80", 77, 2,
			 1000, b, sizeof(b), &s, &pk);
	static const uint32_t hop[] = { 0x0afe0003, 0x0afe0002, 0x0afe0005 };

	assert_int_equal(n, 80 + 3 * 20);
	for (int k = 0; k < 3; k++) {
		const uint8_t *ip = b + 20 * k;
		assert_int_equal(ip[0], 0x45);
		assert_int_equal(ip[9], 4);			/* IP-in-IP */
		assert_int_equal(be16(ip + 2), n - 20 * (size_t)k);	/* total length */
		assert_int_equal(fold(sum16(0, ip, 20)), 0xffff);
		assert_int_equal(ip[1] & HS_DEBUG_TOS_BIT, HS_DEBUG_TOS_BIT);
		assert_int_equal(be32(ip + 12), 0x0aff00fe);	/* the analyzer */
		assert_int_equal(be32(ip + 16), hop[k]);	/* outermost to the first switch */
	}
	const uint8_t *in = b + 60;
	assert_int_equal(in[9], 6);
	assert_int_equal(be16(in + 2), 80);
	assert_int_equal(be32(in + 16), 0x0a01030a);
	assert_int_equal(fold(sum16(0, in, 20)), 0xffff);
	assert_true(l4_sum_ok(in, 80));

	/* the project's decoder finds the probe inside the layers */
	struct hs_pkt p;
	assert_int_equal(hs_decode(DLT_RAW, b, (uint32_t)n, (uint32_t)n, 1, &p), 0);
	assert_true(p.have & HS_HAVE_IP);
	struct hs_addr d = A("10.1.3.10"), sa = A("10.1.1.10");
	assert_true(hs_addr_eq(&p.key.dst, &d));
	assert_true(hs_addr_eq(&p.key.src, &sa));
	assert_int_equal(p.key.proto, 6);
	assert_int_equal(p.key.sport, 4000);
	assert_int_equal(p.key.dport, 80);
	assert_int_equal(p.ttl, 64);
	assert_int_equal(p.ip_id, pk.ip_id);
	assert_int_equal(p.seq, pk.tcp_seq);
	assert_int_equal(p.len, 80);
	assert_true(HS_TOS_IS_DEBUG(p.tos));

	uint32_t id, seq;
	uint64_t ns;
	assert_true(hs_probe_sig_parse_seq(&p, &id, &seq, &ns));
	assert_int_equal(id, 77);
	assert_int_equal(seq, 2);
	assert_int_equal(ns, 1000);
}

static void test_sig_roundtrip_decoded(void **state)
{
	static const char *const lines[] = {
		"tcp 10.1.1.10:1 > 10.1.3.10:2", "udp > 10.1.3.10", "icmp > 10.1.3.10 len 300",
		"udp > 10.1.3.10 from spine1",
	};
	struct hs_probe_spec s;
	struct hs_probe_pkt pk;
	uint8_t b[HS_PROBE_MTU];

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		uint64_t sent = 1700000000123456789ULL + i;
		size_t n = craft(lines[i], 1000 + (uint32_t)i, 40 + (uint32_t)i, sent, b, sizeof(b),
				 &s, &pk);
		struct hs_pkt p;
		uint32_t id = 0, seq = 0;
		uint64_t ns = 0;
		assert_int_equal(hs_decode(DLT_RAW, b, (uint32_t)n, (uint32_t)n, 1, &p), 0);
		assert_true(hs_probe_sig_parse(&p, &id, &ns));
		assert_int_equal(id, 1000 + i);
		assert_int_equal(ns, sent);
		assert_true(hs_probe_sig_parse_seq(&p, &id, &seq, &ns));
		assert_int_equal(seq, 40 + i);

		/* cut inside the signature: not recognised, nothing read past the end */
		size_t sig_end = (size_t)20 * s.nvia + 20 + (s.proto == 6 ? 20 : 8) +
				 HS_PROBE_SIG_LEN;
		size_t cut = sig_end - 1;
		uint8_t *copy = malloc(cut);
		assert_non_null(copy);
		memcpy(copy, b, cut);
		if (hs_decode(DLT_RAW, copy, (uint32_t)cut, (uint32_t)n, 1, &p) == 0)
			assert_false(hs_probe_sig_parse(&p, &id, &ns));
		free(copy);
	}
}

static void test_sig_parse_bounds(void **state)
{
	uint8_t payload[HS_PROBE_SIG_LEN + 4];
	uint8_t ip[20 + 8 + HS_PROBE_SIG_LEN];
	struct hs_pkt p;
	uint32_t id, seq;
	uint64_t ns;

	hs_probe_sig_write(payload, 12, 34, 56);
	memset(&p, 0, sizeof(p));
	p.have = HS_HAVE_IP | HS_HAVE_PORTS;
	p.key.src.af = p.key.dst.af = 4;
	p.key.proto = 17;
	p.l4_payload = payload;
	p.l4_payload_caplen = HS_PROBE_SIG_LEN;
	assert_true(hs_probe_sig_parse_seq(&p, &id, &seq, &ns));
	assert_int_equal(id, 12);
	assert_int_equal(seq, 34);
	assert_int_equal(ns, 56);
	p.l4_payload_caplen = HS_PROBE_SIG_LEN - 1;
	assert_false(hs_probe_sig_parse(&p, &id, &ns));
	p.l4_payload = NULL;
	p.l4_payload_caplen = 0;
	assert_false(hs_probe_sig_parse(&p, &id, &ns));
	/* wrong magic, and probe id 0 */
	p.l4_payload = payload;
	p.l4_payload_caplen = HS_PROBE_SIG_LEN;
	payload[0] ^= 1;
	assert_false(hs_probe_sig_parse(&p, &id, &ns));
	hs_probe_sig_write(payload, 0, 34, 56);
	assert_false(hs_probe_sig_parse(&p, &id, &ns));

	/* ICMP echo: the signature after the echo header, from l3 */
	memset(ip, 0, sizeof(ip));
	ip[0] = 0x45;
	ip[20] = 8;
	hs_probe_sig_write(ip + 28, 99, 1, 2);
	memset(&p, 0, sizeof(p));
	p.have = HS_HAVE_IP | HS_HAVE_ICMP;
	p.key.src.af = p.key.dst.af = 4;
	p.key.proto = 1;
	p.icmp_type = 8;
	p.l3 = ip;
	p.l3_caplen = sizeof(ip);
	assert_true(hs_probe_sig_parse(&p, &id, &ns));
	assert_int_equal(id, 99);
	p.l3_caplen = sizeof(ip) - 1;
	assert_false(hs_probe_sig_parse(&p, &id, &ns));
	p.l3_caplen = 10;
	assert_false(hs_probe_sig_parse(&p, &id, &ns));
	ip[0] = 0x4f;		/* header length 60 > captured bytes */
	p.l3_caplen = sizeof(ip);
	assert_false(hs_probe_sig_parse(&p, &id, &ns));
	ip[0] = 0x45;
	p.icmp_type = 11;	/* not an echo */
	assert_false(hs_probe_sig_parse(&p, &id, &ns));
}

/* ---- judging traces ----------------------------------------------------------- */

static void add_hop_ttl(struct hs_trace *t, const char *sw, uint64_t ts, uint64_t hw,
			uint8_t ttl)
{
	struct hs_hop *h = &t->hops[t->nhops++];

	h->sw = hs_topo_switch_by_name(topo, sw);
	assert_true(h->sw >= 0);
	h->addr = topo->sw[h->sw].mirror;
	h->ts_ns = ts;
	h->hw_ns = hw;
	h->ttl = ttl;
}

static void add_hop(struct hs_trace *t, const char *sw, uint64_t ts, uint64_t hw)
{
	add_hop_ttl(t, sw, ts, hw, 64);
}

static void test_judge(void **state)
{
	struct hs_probe_spec s;
	struct hs_probe_result r;
	struct hs_trace t;
	char err[256];

	assert_int_equal(parse("> 10.1.3.10 via leaf1,spine2,leaf3", &s, err, sizeof(err)), 0);
	memset(&t, 0, sizeof(t));
	t.outcome = HS_OUT_DELIVERED;
	t.flags = HS_TF_PROBE;
	add_hop(&t, "leaf1", 1100, 0);
	add_hop(&t, "spine2", 1200, 0);
	add_hop(&t, "leaf3", 1350, 0);
	hs_probe_judge(&s, topo, &t, 1000, &r);
	assert_int_equal(r.outcome, HS_PROBE_DELIVERED);
	assert_int_equal(r.nhops, 3);
	assert_int_equal(r.lost_after, -1);
	assert_true(r.have_rtt);
	assert_int_equal(r.rtt_ns, 350);
	assert_int_equal(r.hops[1].sw, hs_topo_switch_by_name(topo, "spine2"));

	/* ends at spine2: lost after it, whatever the tracer thought */
	t.nhops = 2;
	t.outcome = HS_OUT_DROPPED;
	hs_probe_judge(&s, topo, &t, 1000, &r);
	assert_int_equal(r.outcome, HS_PROBE_LOST);
	assert_int_equal(r.lost_after, 1);
	assert_false(r.have_rtt);

	/* the tracer saw a switch twice on a path that did not ask for it */
	t.nhops = 0;
	add_hop(&t, "leaf1", 1100, 0);
	add_hop(&t, "spine1", 1200, 0);
	add_hop(&t, "leaf3", 1300, 0);
	add_hop(&t, "spine1", 1400, 0);
	t.outcome = HS_OUT_LOOPED;
	hs_probe_judge(&s, topo, &t, 1000, &r);
	assert_int_equal(r.outcome, HS_PROBE_LOOPED);
	assert_int_equal(r.lost_after, 3);

	/* leaf1 reported its copy after spine2's: inside the tunnel the via
	 * list gives the order; the times stay as measured */
	t.nhops = 0;
	add_hop(&t, "spine2", 1200, 0);
	add_hop(&t, "leaf1", 1250, 0);
	add_hop(&t, "leaf3", 1350, 0);
	t.outcome = HS_OUT_DROPPED;
	hs_probe_judge(&s, topo, &t, 1000, &r);
	assert_int_equal(r.outcome, HS_PROBE_DELIVERED);
	assert_int_equal(r.hops[0].sw, hs_topo_switch_by_name(topo, "leaf1"));
	assert_int_equal(r.hops[0].ts_ns, 1250);
	assert_int_equal(r.hops[1].sw, hs_topo_switch_by_name(topo, "spine2"));
	assert_int_equal(r.hops[2].sw, hs_topo_switch_by_name(topo, "leaf3"));
	/* a switch outside the via list: the capture order is kept */
	t.nhops = 0;
	add_hop(&t, "spine1", 1200, 0);
	add_hop(&t, "leaf1", 1250, 0);
	hs_probe_judge(&s, topo, &t, 1000, &r);
	assert_int_equal(r.hops[0].sw, hs_topo_switch_by_name(topo, "spine1"));
	assert_int_equal(r.outcome, HS_PROBE_LOST);
	/* different TTLs are never reordered */
	t.nhops = 0;
	add_hop_ttl(&t, "leaf3", 1200, 0, 64);
	add_hop_ttl(&t, "leaf1", 1250, 0, 63);
	hs_probe_judge(&s, topo, &t, 1000, &r);
	assert_int_equal(r.hops[0].sw, hs_topo_switch_by_name(topo, "leaf3"));
	assert_int_equal(r.outcome, HS_PROBE_LOST);

	/* no copy at all */
	t.nhops = 0;
	hs_probe_judge(&s, topo, &t, 1000, &r);
	assert_int_equal(r.outcome, HS_PROBE_LOST);
	assert_int_equal(r.lost_after, -1);
	assert_string_equal(hs_probe_outcome_name(r.outcome), "lost");
}

/* Per-hop times come from the switches' stamps of the probe's arrival, on
 * the send's clock; a copy that reached the analyzer late changes nothing,
 * and a stamp out of path order or off the send's clock is shown as such */
static void test_hop_times(void **state)
{
	struct hs_probe_spec s;
	struct hs_probe_result r;
	struct hs_trace t;
	int64_t at[HS_TRACE_MAX_HOPS];
	char err[256];

	(void)state;
	assert_int_equal(parse("> 10.1.3.10 via leaf1,spine2,leaf3", &s, err, sizeof(err)), 0);
	memset(&t, 0, sizeof(t));
	t.outcome = HS_OUT_DELIVERED;
	t.flags = HS_TF_PROBE;
	/* leaf1's copy reached the analyzer after spine2's */
	add_hop(&t, "leaf1", 1350, 1100);
	add_hop(&t, "spine2", 1237, 1200);
	add_hop_ttl(&t, "leaf3", 1350, 1300, 63);
	hs_probe_judge(&s, topo, &t, 1000, &r);
	hs_probe_hop_times(&r, at);
	assert_int_equal(at[0], 100);
	assert_int_equal(at[1], 200);
	assert_int_equal(at[2], 300);

	/* spine2's stamp before leaf1's: not in path order; leaf3's after its
	 * capture: not on the send's clock */
	t.hops[1].hw_ns = 1050;
	t.hops[2].hw_ns = 1400;
	hs_probe_judge(&s, topo, &t, 1000, &r);
	hs_probe_hop_times(&r, at);
	assert_int_equal(at[0], 100);
	assert_int_equal(at[1], -1);
	assert_int_equal(at[2], -1);

	/* no stamps (ERSPAN II): the capture times, in order */
	for (int i = 0; i < 3; i++)
		t.hops[i].hw_ns = 0;
	t.hops[0].ts_ns = 1100;
	hs_probe_judge(&s, topo, &t, 1000, &r);
	hs_probe_hop_times(&r, at);
	assert_int_equal(at[0], 100);
	assert_int_equal(at[1], 237);
	assert_int_equal(at[2], 350);
}

static void test_judge_link(void **state)
{
	struct hs_probe_spec s;
	struct hs_probe_result r;
	struct hs_trace t;
	char err[256];

	assert_int_equal(parse("link leaf1 spine1", &s, err, sizeof(err)), 0);
	memset(&t, 0, sizeof(t));
	t.outcome = HS_OUT_LOOPED;	/* leaf1 twice: expected for a link probe */
	add_hop_ttl(&t, "leaf1", 5000, 900000, 64);
	add_hop_ttl(&t, "spine1", 5100, 0, 64);
	add_hop_ttl(&t, "leaf1", 5300, 900250, 63);
	hs_probe_judge(&s, topo, &t, 4000, &r);
	assert_int_equal(r.outcome, HS_PROBE_DELIVERED);
	assert_true(r.have_rtt);
	assert_int_equal(r.rtt_ns, 250);	/* on leaf1's own clock */

	/* no switch clock: the analyzer's capture times */
	t.hops[0].hw_ns = 0;
	hs_probe_judge(&s, topo, &t, 4000, &r);
	assert_int_equal(r.rtt_ns, 300);

	/* leaf1 reported its first copy after spine1's: the TTLs still tell */
	memset(&t, 0, sizeof(t));
	add_hop_ttl(&t, "spine1", 5100, 0, 64);
	add_hop_ttl(&t, "leaf1", 5150, 0, 64);
	add_hop_ttl(&t, "leaf1", 5400, 0, 63);
	hs_probe_judge(&s, topo, &t, 4000, &r);
	assert_int_equal(r.outcome, HS_PROBE_DELIVERED);
	assert_int_equal(r.rtt_ns, 250);

	/* never came back to leaf1 */
	t.nhops = 2;
	hs_probe_judge(&s, topo, &t, 4000, &r);
	assert_int_equal(r.outcome, HS_PROBE_LOST);
	assert_int_equal(r.lost_after, 1);

	/* the capture saw the probe leave the analyzer: not a hop */
	memset(&t, 0, sizeof(t));
	t.hops[0].sw = -1;
	t.hops[0].addr = A("10.255.0.254");
	t.hops[0].ts_ns = 4001;
	t.hops[0].ttl = 64;
	t.nhops = 1;
	add_hop_ttl(&t, "leaf1", 5000, 0, 64);
	hs_probe_judge(&s, topo, &t, 4000, &r);
	assert_int_equal(r.nhops, 1);
	assert_int_equal(r.hops[0].sw, hs_topo_switch_by_name(topo, "leaf1"));
	assert_int_equal(r.outcome, HS_PROBE_LOST);
	assert_int_equal(r.lost_after, 0);
}

static void test_percentile(void **state)
{
	uint64_t v[100];

	for (int i = 0; i < 100; i++)
		v[i] = (uint64_t)(100 - i) * 10;	/* 1000 .. 10, unsorted */
	assert_int_equal(hs_probe_percentile(v, 100, 50), 500);
	assert_int_equal(hs_probe_percentile(v, 100, 99), 990);
	assert_int_equal(hs_probe_percentile(v, 100, 100), 1000);
	uint64_t one = 7;
	assert_int_equal(hs_probe_percentile(&one, 1, 99), 7);
	assert_int_equal(hs_probe_percentile(NULL, 0, 50), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_full),
		cmocka_unit_test(test_parse_defaults_and_order),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_traceroute_parse),
		cmocka_unit_test(test_traceroute_host),
		cmocka_unit_test(test_craft_tcp_fields),
		cmocka_unit_test(test_craft_udp_icmp),
		cmocka_unit_test(test_craft_badsum),
		cmocka_unit_test(test_craft_nested),
		cmocka_unit_test(test_sig_roundtrip_decoded),
		cmocka_unit_test(test_sig_parse_bounds),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_judge_link),
		cmocka_unit_test(test_hop_times),
		cmocka_unit_test(test_percentile),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
