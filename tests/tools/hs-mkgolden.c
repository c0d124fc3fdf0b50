/* hs-mkgolden - write the golden decoder captures into a directory
 *
 * usage: hs-mkgolden DIR
 *
 * Each capture holds a few frames of one encapsulation or link type. The
 * output is deterministic (fixed addresses, payloads and timestamps), so
 * tests/e2e/golden.sh can check the committed copies under tests/golden/
 * are exactly what this program writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pktw.h"

#define T0 1700000000000000000ULL	/* 2023-11-14T22:13:20Z */
#define MAXF 16384

struct cap {
	struct pktw_file f;
	uint64_t ts;
	int dlt;
};

static const char *outdir;
static int failed;

static void addr(struct hs_addr *a, const char *s)
{
	if (hs_addr_parse(s, a) < 0) {
		fprintf(stderr, "hs-mkgolden: bad address '%s'\n", s);
		exit(1);
	}
}

static int cap_open(struct cap *c, const char *name, int dlt)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s.pcap", outdir, name);
	c->ts = T0;
	c->dlt = dlt;
	if (pktw_open(&c->f, path, dlt) < 0) {
		failed = 1;
		return -1;
	}
	return 0;
}

/* the default inner packet: a TCP SYN from a tenant host */
static struct pktw_inner tcp4(void)
{
	struct pktw_inner in;

	memset(&in, 0, sizeof(in));
	addr(&in.key.src, "10.1.1.10");
	addr(&in.key.dst, "10.2.2.20");
	in.key.proto = 6;
	in.key.sport = 40000;
	in.key.dport = 443;
	in.ttl = 62;
	in.ip_id = 0x1234;
	in.tcp_flags = 0x02;
	in.seq = 1000000;
	return in;
}

static struct pktw_inner udp4(void)
{
	struct pktw_inner in = tcp4();

	in.key.proto = 17;
	in.key.sport = 5353;
	in.key.dport = 4791;	/* RoCEv2 */
	in.tcp_flags = 0;
	in.seq = 0;
	in.payload_len = 24;
	return in;
}

static struct pktw_inner six(int proto)
{
	struct pktw_inner in = tcp4();

	addr(&in.key.src, "2001:db8:1::10");
	addr(&in.key.dst, "2001:db8:2::20");
	in.key.proto = (uint8_t)proto;
	in.ip_id = 0;
	if (proto == 17) {
		in.tcp_flags = 0;
		in.payload_len = 16;
	}
	if (proto == 58) {
		in.icmp_type = 128;	/* echo request */
		in.key.sport = 7;	/* identifier */
		in.key.dport = 1;	/* sequence */
		in.payload_len = 8;
	}
	return in;
}

static struct pktw_mirror mirror(int encap)
{
	struct pktw_mirror m;

	memset(&m, 0, sizeof(m));
	m.encap = encap;
	addr(&m.src, "192.0.2.11");
	addr(&m.dst, "192.0.2.250");
	m.session = 17;
	m.gre_seq = 100;
	return m;
}

/* one frame; ttl_step > 0 adds copies as seen at later hops */
static void put(struct cap *c, const struct pktw_mirror *m, const struct pktw_inner *in,
		int hops)
{
	uint8_t inner[MAXF], frame[MAXF];

	for (int h = 0; h < (hops ? hops : 1); h++) {
		struct pktw_inner x = *in;
		struct pktw_mirror y = *m;

		x.ttl = (uint8_t)(in->ttl - h);
		y.src.a[3] = (uint8_t)(m->src.a[3] + h);
		y.gre_seq = m->gre_seq + (uint32_t)h;
		y.hw_ts = m->hw_ts + (uint32_t)h * 1000;
		size_t n = pktw_inner(inner, sizeof(inner), &x);
		size_t f = n ? pktw_frame(frame, sizeof(frame), c->dlt, &y, inner, n) : 0;
		if (!f) {
			fprintf(stderr, "hs-mkgolden: cannot build a frame\n");
			failed = 1;
			return;
		}
		pktw_write(&c->f, c->ts, frame, f);
		c->ts += 1000 + 17;
	}
}

static void one(const char *name, int dlt, const struct pktw_mirror *m,
		const struct pktw_inner *in, int hops)
{
	struct cap c;

	if (cap_open(&c, name, dlt) < 0)
		return;
	put(&c, m, in, hops);
	pktw_close(&c.f);
}

int main(int argc, char **argv)
{
	struct pktw_mirror m;
	struct pktw_inner in;
	struct cap c;

	if (argc != 2) {
		fprintf(stderr, "usage: hs-mkgolden DIR\n");
		return 2;
	}
	outdir = argv[1];

	/* ERSPAN II: a SYN seen at three switches */
	m = mirror(HS_ENCAP_ERSPAN2);
	in = tcp4();
	one("erspan2", DLT_EN10MB, &m, &in, 3);

	/* ERSPAN I: no ERSPAN header */
	m = mirror(HS_ENCAP_ERSPAN1);
	one("erspan1", DLT_EN10MB, &m, &in, 1);

	/* ERSPAN III, 100 ns granularity, no platform subheader; UDP inner */
	m = mirror(HS_ENCAP_ERSPAN3);
	m.gra = 1;
	m.hw_ts = 123456789;
	in = udp4();
	one("erspan3", DLT_EN10MB, &m, &in, 2);

	/* ERSPAN III, IEEE 1588 with a platform-id 3 subheader */
	m = mirror(HS_ENCAP_ERSPAN3);
	m.gra = 2;
	m.hw_ts = 0x89abcdef;
	m.platform3 = true;
	m.ts_hi = 0x65;
	in = tcp4();
	in.tcp_flags = 0x11;	/* FIN ACK */
	in.ack = 777;
	one("erspan3-platform", DLT_EN10MB, &m, &in, 2);

	/* ERSPAN II over an 802.1Q tag and over QinQ */
	m = mirror(HS_ENCAP_ERSPAN2);
	m.vlan = 100;
	in = tcp4();
	one("erspan2-vlan", DLT_EN10MB, &m, &in, 1);
	m.vlan = 200;
	m.vlan2 = 300;
	one("erspan2-qinq", DLT_EN10MB, &m, &in, 1);

	/* GRE transparent Ethernet bridging */
	m = mirror(HS_ENCAP_GRE_TEB);
	one("gre-teb", DLT_EN10MB, &m, &in, 1);

	/* GRE carrying IP with checksum, key and sequence number */
	m = mirror(HS_ENCAP_GRE_IP);
	m.gre_csum = m.gre_key = m.gre_seqf = true;
	m.gre_keyval = 0xdeadbeef;
	one("gre-ip-options", DLT_EN10MB, &m, &in, 1);

	/* IP in IP: 4in4, 6in4, 4in6 */
	m = mirror(HS_ENCAP_IPIP);
	one("ipip", DLT_EN10MB, &m, &in, 1);
	in = six(6);
	one("ip6in4", DLT_EN10MB, &m, &in, 1);
	addr(&m.src, "2001:db8:ff::1");
	addr(&m.dst, "2001:db8:ff::2");
	in = tcp4();
	one("ip4in6", DLT_EN10MB, &m, &in, 1);

	/* overlays: VXLAN and Geneve, bare and inside ERSPAN II */
	m = mirror(HS_ENCAP_NONE);
	m.overlay = 4789;
	m.vni = 5001;
	in = tcp4();
	one("vxlan", DLT_EN10MB, &m, &in, 1);
	m.overlay = 6081;
	m.vni = 6001;
	one("geneve", DLT_EN10MB, &m, &in, 1);
	m.encap = HS_ENCAP_ERSPAN2;
	one("erspan2-geneve", DLT_EN10MB, &m, &in, 1);

	/* link types */
	m = mirror(HS_ENCAP_ERSPAN3);
	m.gra = 1;
	m.hw_ts = 42;
	one("sll", DLT_LINUX_SLL, &m, &in, 1);
	one("sll2", DLT_LINUX_SLL2, &m, &in, 1);
	one("raw", DLT_RAW, &m, &in, 1);

	/* IPv4 options; IPv6 extension headers with TCP, UDP, ICMPv6 */
	m = mirror(HS_ENCAP_ERSPAN2);
	in = tcp4();
	in.ip_options = true;
	one("ipv4-options", DLT_EN10MB, &m, &in, 1);
	if (cap_open(&c, "ipv6-ext", DLT_EN10MB) == 0) {
		int protos[] = { 6, 17, 58 };
		for (size_t i = 0; i < HS_ARRAY_SIZE(protos); i++) {
			in = six(protos[i]);
			in.ip6_ext = true;
			put(&c, &m, &in, 1);
		}
		pktw_close(&c.f);
	}

	/* ICMP: echo, and a time-exceeded quoting a UDP header; ICMPv6 echo */
	if (cap_open(&c, "icmp", DLT_EN10MB) == 0) {
		uint8_t quote[MAXF];
		struct pktw_inner q = udp4();

		in = tcp4();
		in.key.proto = 1;
		in.icmp_type = 8;
		in.key.sport = 99;
		in.key.dport = 1;
		in.payload_len = 16;
		put(&c, &m, &in, 1);

		q.payload_len = 0;
		size_t qn = pktw_inner(quote, sizeof(quote), &q);
		in.icmp_type = 11;
		in.key.sport = in.key.dport = 0;
		addr(&in.key.src, "10.9.9.1");
		in.payload = quote;
		in.payload_len = (uint16_t)qn;
		put(&c, &m, &in, 1);

		in = six(58);
		put(&c, &m, &in, 1);
		pktw_close(&c.f);
	}

	/* truncated frames: the ERSPAN III header cut, the inner TCP header cut */
	if (cap_open(&c, "truncated", DLT_EN10MB) == 0) {
		uint8_t inner[MAXF], frame[MAXF];

		m = mirror(HS_ENCAP_ERSPAN3);
		m.gra = 1;
		in = tcp4();
		size_t n = pktw_inner(inner, sizeof(inner), &in);
		size_t f = pktw_frame(frame, sizeof(frame), DLT_EN10MB, &m, inner, n);
		/* eth 14 + ip 20 + gre 8 = 42; cut inside the 12-byte ERSPAN header */
		pktw_write_cut(&c.f, c.ts, frame, 48, f);
		c.ts += 1000;
		/* keep the inner IP header but only 10 bytes of TCP */
		pktw_write_cut(&c.f, c.ts, frame, f - n + 20 + 10, f);
		pktw_close(&c.f);
	}
	return failed;
}
