/* test_decode.c - the decoder against frames built by pktw: every
 * encapsulation and link type, every truncation length, malformed headers */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <pcap/pcap.h>
#include <cmocka.h>

#include "decode.h"
#include "../../src/decode/rd.h"	/* dec_predicted: is a frame of the common shape */
#include "../tools/pktw.h"

#define MAXF 4096

static struct hs_addr A(const char *s)
{
	struct hs_addr a;

	assert_int_equal(hs_addr_parse(s, &a), 0);
	return a;
}

static struct pktw_inner inner4(int proto)
{
	struct pktw_inner in;

	memset(&in, 0, sizeof(in));
	in.key.src = A("10.0.1.1");
	in.key.dst = A("10.0.2.2");
	in.key.proto = (uint8_t)proto;
	in.key.sport = 33000;
	in.key.dport = proto == 17 ? 4791 : 80;
	in.ttl = 60;
	in.ip_id = 4321;
	in.tcp_flags = 0x12;
	in.seq = 0xfeedf00d;
	in.ack = 5;
	in.icmp_type = 8;
	in.payload_len = 12;
	return in;
}

static struct pktw_inner inner6(int proto)
{
	struct pktw_inner in = inner4(proto);

	in.key.src = A("2001:db8::a");
	in.key.dst = A("2001:db8::b");
	in.icmp_type = 128;
	return in;
}

static struct pktw_mirror mir(int encap)
{
	struct pktw_mirror m;

	memset(&m, 0, sizeof(m));
	m.encap = encap;
	m.src = A("192.0.2.1");
	m.dst = A("192.0.2.99");
	m.session = 513;
	m.hw_ts = 0x01020304;
	m.gra = 1;
	if (encap == HS_ENCAP_GRE_MPLS) {
		m.mpls_n = 1;
		m.mpls[0] = 100;
	}
	return m;
}

/* build; returns the frame length */
static size_t build(uint8_t *buf, int dlt, const struct pktw_mirror *m,
		    const struct pktw_inner *in)
{
	uint8_t ib[MAXF];
	size_t n = pktw_inner(ib, sizeof(ib), in);

	assert_true(n > 0);
	size_t f = pktw_frame(buf, MAXF, dlt, m, ib, n);
	assert_true(f > 0);
	return f;
}

/* decode from an exact-size heap copy, so a read past the end is caught */
static int decode(int dlt, const uint8_t *frame, size_t len, struct hs_pkt *p)
{
	uint8_t *copy = malloc(len ? len : 1);

	assert_non_null(copy);
	memcpy(copy, frame, len);
	int r = hs_decode(dlt, copy, (uint32_t)len, (uint32_t)len, 42, p);
	if (p->l3) {
		assert_true(p->l3 >= copy && p->l3 + p->l3_caplen <= copy + len);
	}
	if (p->l4_payload) {
		assert_true(p->l4_payload >= copy &&
			    p->l4_payload + p->l4_payload_caplen <= copy + len);
	}
	if (p->mpls) {
		assert_true(p->mpls >= copy && p->mpls + p->mpls_n * 4u <= copy + len);
		p->mpls = frame + (p->mpls - copy);	/* the same bytes, still there */
	}
	free(copy);
	p->l3 = NULL;
	p->l4_payload = NULL;
	return r;
}

static void check_inner(const struct hs_pkt *p, const struct pktw_inner *in)
{
	assert_int_equal(p->error, HS_DERR_NONE);
	assert_true(p->have & HS_HAVE_IP);
	assert_true(hs_addr_eq(&p->key.src, &in->key.src));
	assert_true(hs_addr_eq(&p->key.dst, &in->key.dst));
	assert_int_equal(p->key.proto, in->key.proto);
	assert_int_equal(p->ttl, in->ttl);
	if (in->key.src.af == 4) {
		assert_int_equal(p->ip_id, in->ip_id);
		assert_true(p->have & HS_HAVE_IPID);
	} else {
		assert_false(p->have & HS_HAVE_IPID);
	}
	if (in->key.proto == 6 || in->key.proto == 17) {
		assert_true(p->have & HS_HAVE_PORTS);
		assert_int_equal(p->key.sport, in->key.sport);
		assert_int_equal(p->key.dport, in->key.dport);
		assert_int_equal(p->l4_len, in->payload_len);
	}
	if (in->key.proto == 6) {
		assert_true(p->have & HS_HAVE_TCP);
		assert_int_equal(p->tcp_flags, in->tcp_flags);
		assert_int_equal(p->seq, in->seq);
		assert_int_equal(p->ack, in->ack);
	}
	if (in->key.proto == 1 || in->key.proto == 58) {
		assert_true(p->have & HS_HAVE_ICMP);
		assert_int_equal(p->icmp_type, in->icmp_type);
		assert_false(p->have & HS_HAVE_PORTS);
	}
	size_t l4 = in->key.proto == 6 ? 20 : 8;
	size_t ip = in->key.src.af == 4 ? 20 + (in->ip_options ? 4 : 0) : 40 + (in->ip6_ext ? 16 : 0);
	assert_int_equal(p->len, ip + l4 + in->payload_len);
}

static const int encaps[] = {
	HS_ENCAP_NONE, HS_ENCAP_ERSPAN1, HS_ENCAP_ERSPAN2, HS_ENCAP_ERSPAN3,
	HS_ENCAP_GRE_TEB, HS_ENCAP_GRE_IP, HS_ENCAP_IPIP, HS_ENCAP_GRE_MPLS,
};

static void test_every_encap(void **state)
{
	static const int protos[] = { 6, 17, 1 };
	uint8_t f[MAXF];
	struct hs_pkt p;

	(void)state;
	for (size_t e = 0; e < HS_ARRAY_SIZE(encaps); e++)
		for (int six = 0; six < 2; six++)
			for (size_t i = 0; i < HS_ARRAY_SIZE(protos); i++) {
				int proto = six && protos[i] == 1 ? 58 : protos[i];
				struct pktw_inner in = six ? inner6(proto) : inner4(proto);
				struct pktw_mirror m = mir(encaps[e]);

				in.ip_options = !six && i == 1;
				in.ip6_ext = six && i != 1;
				size_t n = build(f, DLT_EN10MB, &m, &in);
				assert_int_equal(decode(DLT_EN10MB, f, n, &p), 0);
				check_inner(&p, &in);
				assert_int_equal(p.encap, encaps[e]);
				if (encaps[e] == HS_ENCAP_NONE) {
					assert_false(p.have & HS_HAVE_MIRROR);
					continue;
				}
				assert_true(p.have & HS_HAVE_MIRROR);
				assert_true(hs_addr_eq(&p.mirror_src, &m.src));
				assert_true(hs_addr_eq(&p.mirror_dst, &m.dst));
				if (encaps[e] == HS_ENCAP_ERSPAN2 || encaps[e] == HS_ENCAP_ERSPAN3) {
					assert_true(p.have & HS_HAVE_ERSPAN);
					assert_int_equal(p.erspan_ver,
							 encaps[e] == HS_ENCAP_ERSPAN2 ? 1 : 2);
					assert_int_equal(p.session, m.session);
				} else {
					assert_false(p.have & HS_HAVE_ERSPAN);
				}
				if (encaps[e] == HS_ENCAP_ERSPAN3) {
					assert_int_equal(p.hw_ts, m.hw_ts);
					assert_int_equal(p.hw_ns, (uint64_t)m.hw_ts * 100);
				} else {
					assert_false(p.have & HS_HAVE_HWTS);
				}
			}
}

static void test_outer_ipv6(void **state)
{
	uint8_t f[MAXF];
	struct hs_pkt p;
	int list[] = { HS_ENCAP_IPIP, HS_ENCAP_ERSPAN3, HS_ENCAP_GRE_IP };

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(list); i++) {
		struct pktw_mirror m = mir(list[i]);
		struct pktw_inner in = i == 2 ? inner6(6) : inner4(6);

		m.src = A("2001:db8:ff::1");
		m.dst = A("2001:db8:ff::2");
		size_t n = build(f, DLT_EN10MB, &m, &in);
		assert_int_equal(decode(DLT_EN10MB, f, n, &p), 0);
		check_inner(&p, &in);
		assert_int_equal(p.encap, list[i]);
		assert_true(hs_addr_eq(&p.mirror_src, &m.src));
	}
}

static void test_gre_options(void **state)
{
	uint8_t f[MAXF];
	struct hs_pkt p;

	(void)state;
	for (int bits = 0; bits < 8; bits++) {
		struct pktw_mirror m = mir(HS_ENCAP_GRE_TEB);
		struct pktw_inner in = inner4(6);

		m.gre_csum = bits & 1;
		m.gre_key = bits & 2;
		m.gre_seqf = bits & 4;
		m.gre_keyval = 99;
		size_t n = build(f, DLT_EN10MB, &m, &in);
		assert_int_equal(decode(DLT_EN10MB, f, n, &p), 0);
		check_inner(&p, &in);
		assert_int_equal(p.encap, HS_ENCAP_GRE_TEB);
	}
}

static void test_overlays(void **state)
{
	uint8_t f[MAXF];
	struct hs_pkt p;
	int ports[] = { 4789, 6081 };

	(void)state;
	for (size_t i = 0; i < 2; i++)
		for (int e = 0; e < 2; e++) {
			struct pktw_mirror m = mir(e ? HS_ENCAP_ERSPAN2 : HS_ENCAP_NONE);
			struct pktw_inner in = inner4(6);

			m.overlay = ports[i];
			m.vni = 0xabcde;
			size_t n = build(f, DLT_EN10MB, &m, &in);
			assert_int_equal(decode(DLT_EN10MB, f, n, &p), 0);
			check_inner(&p, &in);
			assert_true(p.have & HS_HAVE_VNI);
			assert_int_equal(p.vni, 0xabcde);
			assert_true(p.have & HS_HAVE_MIRROR);
			assert_true(p.have & HS_HAVE_SESSION);
			if (e) {
				/* inside ERSPAN the overlay is the tenant's */
				assert_int_equal(p.encap, HS_ENCAP_ERSPAN2);
				assert_int_equal(p.session, m.session);
				assert_true(hs_addr_eq(&p.mirror_src, &m.src));
				continue;
			}
			/* outermost: the mirror's, from the outer IP header, the
			 * session its VNI (all 24 bits) */
			assert_int_equal(p.encap, i ? HS_ENCAP_GENEVE : HS_ENCAP_VXLAN);
			assert_string_equal(hs_encap_name(p.encap), i ? "geneve" : "vxlan");
			assert_true(hs_addr_eq(&p.mirror_src, &m.src));
			assert_true(hs_addr_eq(&p.mirror_dst, &m.dst));
			assert_int_equal(p.session, 0xabcde);
			assert_false(p.have & HS_HAVE_ERSPAN);
		}
}

static char *render(void (*fn)(FILE *, const struct hs_pkt *), const struct hs_pkt *p);

/* label stacks of 1 to 4 entries, over IPv4, IPv6 and Ethernet
 * pseudowires, in Ethernet (0x8847, 0x8848), GRE and VXLAN */
static void test_mpls(void **state)
{
	static const uint32_t labels[4] = { 16, 1048575, 3000, 299776 };
	uint8_t f[MAXF];
	struct hs_pkt p;
	struct hs_mpls_lse l;

	(void)state;
	for (int how = 0; how < 4; how++)
		for (unsigned nl = 1; nl <= 4; nl++)
			for (int pw = 0; pw < 3; pw++) {
				struct pktw_mirror m = mir(how == 1 ? HS_ENCAP_GRE_MPLS : HS_ENCAP_NONE);
				struct pktw_inner in = pw == 1 ? inner6(6) : inner4(17);

				m.mpls_n = (uint8_t)nl;
				memcpy(m.mpls, labels, sizeof(labels));
				m.mpls_mcast = how == 2;
				m.overlay = how == 3 ? 4789 : 0;
				m.pw = pw;
				size_t n = build(f, DLT_EN10MB, &m, &in);
				assert_int_equal(decode(DLT_EN10MB, f, n, &p), 0);
				check_inner(&p, &in);
				assert_int_equal(p.mpls_n, nl);
				for (unsigned i = 0; i < nl; i++) {
					hs_mpls_label(&p, i, &l);
					assert_int_equal(l.label, labels[i]);
					assert_int_equal(l.ttl, 64 - i);
					assert_int_equal(l.tc, 0);
				}
				assert_int_equal(p.encap, how == 1 ? HS_ENCAP_GRE_MPLS :
							  how == 3 ? HS_ENCAP_VXLAN : HS_ENCAP_NONE);
			}

	/* over PPP, as MPLS core links run it; in UDP (RFC 7510) */
	for (int udp = 0; udp < 2; udp++) {
		struct pktw_mirror m = mir(HS_ENCAP_NONE);
		struct pktw_inner in = inner6(6);
		uint8_t u[MAXF];

		m.mpls_n = 2;
		memcpy(m.mpls, labels, sizeof(labels));
		if (!udp) {
			size_t n = build(f, DLT_PPP, &m, &in);
			assert_int_equal(decode(DLT_PPP, f, n, &p), 0);
		} else {
			size_t k = build(f, DLT_RAW, &m, &in);	/* the labelled packet */
			size_t n = 28 + k;
			memset(u, 0, 28);
			u[0] = 0x45;
			u[2] = (uint8_t)(n >> 8);
			u[3] = (uint8_t)n;
			u[8] = 64;
			u[9] = 17;
			u[22] = 6635 >> 8;
			u[23] = 6635 & 0xff;
			u[24] = (uint8_t)((8 + k) >> 8);
			u[25] = (uint8_t)(8 + k);
			memcpy(u + 28, f, k);
			assert_int_equal(decode(DLT_RAW, u, n, &p), 0);
		}
		check_inner(&p, &in);
		assert_int_equal(p.mpls_n, 2);
		assert_int_equal(p.encap, HS_ENCAP_NONE);
	}

	/* a pseudowire without control word whose MAC address starts with
	 * no zero nibble */
	struct pktw_mirror m = mir(HS_ENCAP_NONE);
	struct pktw_inner in = inner4(6);
	m.mpls_n = 1;
	m.pw = 1;
	size_t n = build(f, DLT_EN10MB, &m, &in);
	size_t eth = 14 + 4;	/* the pseudowire's frame */
	f[eth] = 0x5e;
	assert_int_equal(decode(DLT_EN10MB, f, n, &p), 0);
	check_inner(&p, &in);
	/* the associated channel (first nibble 1) carries no IP */
	f[eth] = 0x10;
	assert_int_equal(decode(DLT_EN10MB, f, n, &p), -1);
	assert_int_equal(p.error, HS_DERR_NOT_IP);
	assert_int_equal(p.mpls_n, 1);
	/* a stack cut before its bottom, and one with nothing below it */
	assert_int_equal(decode(DLT_EN10MB, f, 14 + 3, &p), -1);
	assert_int_equal(p.error, HS_DERR_TRUNC_MPLS);
	assert_int_equal(decode(DLT_EN10MB, f, 14 + 4, &p), -1);
	assert_int_equal(p.error, HS_DERR_TRUNC_MPLS);
	assert_string_equal(hs_derr_name(p.error), "truncated-mpls");
	/* no bottom of stack within 16 entries */
	uint8_t deep[14 + 17 * 4 + 20];
	memset(deep, 0, sizeof(deep));
	deep[12] = 0x88;
	deep[13] = 0x47;
	assert_int_equal(decode(DLT_EN10MB, deep, sizeof(deep), &p), -1);
	assert_int_equal(p.error, HS_DERR_TOO_DEEP);

	/* rendered: every entry in JSON, the labels in the text line */
	m = mir(HS_ENCAP_NONE);
	m.mpls_n = 2;
	m.mpls[0] = 16000;
	m.mpls[1] = 24001;
	n = build(f, DLT_EN10MB, &m, &in);
	assert_int_equal(hs_decode(DLT_EN10MB, f, (uint32_t)n, (uint32_t)n, 0, &p), 0);
	char *j = render(hs_pkt_json, &p);
	assert_non_null(strstr(j, ",\"encap\":\"none\",\"mpls\":[{\"label\":16000,\"tc\":0,"
				 "\"ttl\":64},{\"label\":24001,\"tc\":0,\"ttl\":63}],\"src\""));
	free(j);
	char *t = render(hs_pkt_text, &p);
	assert_non_null(strstr(t, " none mpls 16000,24001 | 10.0.1.1:33000 > "));
	free(t);
}

static void test_link_types(void **state)
{
	static const int dlts[] = { DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW, DLT_PPP };
	uint8_t f[MAXF];
	struct hs_pkt p;

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(dlts); i++) {
		struct pktw_mirror m = mir(HS_ENCAP_ERSPAN3);
		struct pktw_inner in = inner6(17);

		assert_true(hs_decode_linktype_ok(dlts[i]));
		size_t n = build(f, dlts[i], &m, &in);
		assert_int_equal(decode(dlts[i], f, n, &p), 0);
		check_inner(&p, &in);
		assert_int_equal(p.encap, HS_ENCAP_ERSPAN3);
	}
	assert_true(hs_decode_linktype_ok(101));
	assert_false(hs_decode_linktype_ok(DLT_IEEE802_11));
	struct pktw_mirror m = mir(HS_ENCAP_NONE);
	struct pktw_inner in = inner4(6);
	size_t n = build(f, DLT_EN10MB, &m, &in);
	assert_int_equal(decode(DLT_IEEE802_11, f, n, &p), -1);
	assert_int_equal(p.error, HS_DERR_LINKTYPE);
	/* DLT_IPV4 / DLT_IPV6 take the IP packet as it is */
	n = build(f, DLT_RAW, &m, &in);
	assert_int_equal(decode(228, f, n, &p), 0);
	check_inner(&p, &in);
	assert_int_equal(decode(229, f, n, &p), -1);
	assert_int_equal(p.error, HS_DERR_BAD_IP);
}

static void test_vlan_tags(void **state)
{
	uint8_t f[MAXF];
	struct hs_pkt p;

	(void)state;
	struct pktw_mirror m = mir(HS_ENCAP_ERSPAN2);
	struct pktw_inner in = inner4(6);
	m.vlan = 100;
	size_t n = build(f, DLT_EN10MB, &m, &in);
	assert_int_equal(decode(DLT_EN10MB, f, n, &p), 0);
	check_inner(&p, &in);
	assert_true(p.have & HS_HAVE_VLAN);
	assert_int_equal(p.vlan, 100);
	assert_int_equal(f[12] << 8 | f[13], 0x8100);

	m.vlan = 200;
	m.vlan2 = 300;
	n = build(f, DLT_EN10MB, &m, &in);
	assert_int_equal(f[12] << 8 | f[13], 0x88a8);
	assert_int_equal(decode(DLT_EN10MB, f, n, &p), 0);
	check_inner(&p, &in);
	assert_int_equal(p.vlan, 200);	/* the outermost tag */

	/* 0x9100 is a tag too */
	f[12] = 0x91;
	f[13] = 0x00;
	assert_int_equal(decode(DLT_EN10MB, f, n, &p), 0);
	assert_int_equal(p.vlan, 200);
}

static void test_hw_time(void **state)
{
	uint8_t f[MAXF];
	struct hs_pkt p;
	struct pktw_inner in = inner4(6);

	(void)state;
	struct {
		uint8_t gra;
		bool plat;
		bool have;
		uint64_t ns;
	} cases[] = {
		{ 0, false, true, 0x01020304ULL * 100000 },
		{ 1, false, true, 0x01020304ULL * 100 },
		{ 2, false, true, 0x01020304ULL },
		{ 2, true, true, 0x7ULL << 32 | 0x01020304ULL },
		{ 1, true, true, 0x01020304ULL * 100 },
		{ 3, false, false, 0 },
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(cases); i++) {
		struct pktw_mirror m = mir(HS_ENCAP_ERSPAN3);

		m.gra = cases[i].gra;
		m.platform3 = cases[i].plat;
		m.ts_hi = 7;
		size_t n = build(f, DLT_EN10MB, &m, &in);
		assert_int_equal(decode(DLT_EN10MB, f, n, &p), 0);
		check_inner(&p, &in);
		assert_int_equal(p.hw_gra, cases[i].gra);
		assert_int_equal(p.hw_ts, 0x01020304);
		assert_int_equal(!!(p.have & HS_HAVE_HWNS), cases[i].have);
		if (cases[i].have) {
			assert_int_equal(p.hw_ns, cases[i].ns);
		}
	}
}

/* an ICMP error quotes an IP header: the ICMP packet stays innermost */
static void test_icmp_quote(void **state)
{
	uint8_t f[MAXF], q[MAXF];
	struct hs_pkt p;

	(void)state;
	struct pktw_inner quoted = inner4(17);
	quoted.key.src = A("172.31.0.1");
	quoted.payload_len = 0;
	size_t qn = pktw_inner(q, sizeof(q), &quoted);
	struct pktw_inner in = inner4(1);
	in.icmp_type = 11;
	in.payload = q;
	in.payload_len = (uint16_t)qn;
	struct pktw_mirror m = mir(HS_ENCAP_ERSPAN2);
	size_t n = build(f, DLT_EN10MB, &m, &in);
	assert_int_equal(decode(DLT_EN10MB, f, n, &p), 0);
	check_inner(&p, &in);
	assert_int_equal(p.icmp_type, 11);
}

struct sample {
	int dlt;
	struct pktw_mirror m;
	struct pktw_inner in;
};

static size_t samples(struct sample *s)
{
	size_t n = 0;

	for (size_t e = 0; e < HS_ARRAY_SIZE(encaps); e++) {
		s[n].dlt = DLT_EN10MB;
		s[n].m = mir(encaps[e]);
		s[n].m.vlan = e == 2 ? 5 : 0;
		s[n].m.vlan2 = e == 2 ? 6 : 0;
		s[n].m.gre_csum = s[n].m.gre_key = e == 4;
		s[n].m.platform3 = e == 3;
		s[n].in = inner4(6);
		s[n].in.ip_options = true;
		n++;
		s[n].dlt = DLT_EN10MB;
		s[n].m = mir(encaps[e]);
		s[n].in = inner6((int)(e % 2 ? 17 : 58));
		s[n].in.ip6_ext = true;
		n++;
	}
	static const int dlts[] = { DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW };
	for (size_t i = 0; i < HS_ARRAY_SIZE(dlts); i++) {
		s[n].dlt = dlts[i];
		s[n].m = mir(HS_ENCAP_IPIP);
		s[n].in = inner4(1);
		n++;
	}
	s[n].dlt = DLT_EN10MB;
	s[n].m = mir(HS_ENCAP_GRE_TEB);
	s[n].m.overlay = 4789;
	s[n].in = inner4(17);
	n++;
	s[n].dlt = DLT_EN10MB;
	s[n].m = mir(HS_ENCAP_NONE);
	s[n].m.overlay = 6081;
	s[n].in = inner6(6);
	n++;
	/* MPLS: a stack over IP, pseudowires with and without control word */
	for (int pw = 0; pw < 3; pw++) {
		s[n].dlt = DLT_EN10MB;
		s[n].m = mir(HS_ENCAP_NONE);
		s[n].m.mpls_n = 3;
		s[n].m.mpls[0] = 30;
		s[n].m.mpls[1] = 31;
		s[n].m.mpls[2] = 32;
		s[n].m.pw = pw;
		s[n].in = pw == 1 ? inner6(17) : inner4(6);
		n++;
	}
	return n;
}

/* every prefix of every sample: an error, or a decode of the same packet
 * (only payload bytes were cut); never a read out of bounds */
static void test_every_truncation(void **state)
{
	struct sample s[32];
	uint8_t f[MAXF];
	struct hs_pkt full, p;

	(void)state;
	size_t ns = samples(s);
	for (size_t i = 0; i < ns; i++) {
		size_t n = build(f, s[i].dlt, &s[i].m, &s[i].in);
		assert_int_equal(decode(s[i].dlt, f, n, &full), 0);
		size_t ok = 0;
		for (size_t cut = 0; cut < n; cut++) {
			int r = decode(s[i].dlt, f, cut, &p);
			if (r < 0) {
				assert_int_not_equal(p.error, HS_DERR_NONE);
				assert_int_equal(ok, 0);	/* no error after a longer prefix */
				continue;
			}
			ok++;
			assert_int_equal(p.error, HS_DERR_NONE);
			assert_true(hs_flowkey_eq(&p.key, &full.key));
			assert_int_equal(p.ttl, full.ttl);
			assert_int_equal(p.len, full.len);
			assert_int_equal(p.encap, full.encap);
			assert_int_equal(p.session, full.session);
		}
		/* at most the payload (and ICMP's identifier and sequence,
		 * which are not read) may be missing */
		int icmp = s[i].in.key.proto == 1 || s[i].in.key.proto == 58;
		assert_true(ok <= s[i].in.payload_len + (icmp ? 4u : 0u));
		assert_true(ok > 0);
	}
}

/* the truncation reason names the layer that was cut */
static void test_truncation_reasons(void **state)
{
	uint8_t f[MAXF];
	struct hs_pkt p;

	(void)state;
	struct pktw_mirror m = mir(HS_ENCAP_ERSPAN3);
	m.vlan = 9;
	struct pktw_inner in = inner4(6);
	size_t n = build(f, DLT_EN10MB, &m, &in);
	struct {
		size_t cut;
		int err;
	} c[] = {
		{ 10, HS_DERR_TRUNC_LINK },
		{ 16, HS_DERR_TRUNC_VLAN },
		{ 18 + 19, HS_DERR_TRUNC_IP },
		{ 18 + 20 + 3, HS_DERR_TRUNC_GRE },
		{ 18 + 20 + 8 + 11, HS_DERR_TRUNC_ERSPAN },
		{ 18 + 20 + 8 + 12 + 13, HS_DERR_TRUNC_LINK },
		{ 18 + 20 + 8 + 12 + 14 + 5, HS_DERR_TRUNC_IP },
		{ 18 + 20 + 8 + 12 + 14 + 20 + 19, HS_DERR_TRUNC_L4 },
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(c); i++) {
		assert_true(c[i].cut < n);
		assert_int_equal(decode(DLT_EN10MB, f, c[i].cut, &p), -1);
		assert_string_equal(hs_derr_name(p.error), hs_derr_name(c[i].err));
	}
	/* a cut ERSPAN III header keeps its version and session */
	assert_int_equal(decode(DLT_EN10MB, f, 18 + 20 + 8 + 6, &p), -1);
	assert_true(p.have & HS_HAVE_ERSPAN);
	assert_int_equal(p.session, m.session);
	assert_false(p.have & HS_HAVE_HWTS);

	struct pktw_inner in6 = inner6(6);
	in6.ip6_ext = true;
	m = mir(HS_ENCAP_NONE);
	n = build(f, DLT_EN10MB, &m, &in6);
	assert_int_equal(decode(DLT_EN10MB, f, 14 + 39, &p), -1);
	assert_int_equal(p.error, HS_DERR_TRUNC_IP6);
	assert_int_equal(decode(DLT_EN10MB, f, 14 + 40 + 9, &p), -1);
	assert_int_equal(p.error, HS_DERR_TRUNC_IP6_EXT);

	m = mir(HS_ENCAP_NONE);
	m.overlay = 4789;
	in = inner4(6);
	n = build(f, DLT_EN10MB, &m, &in);
	assert_int_equal(decode(DLT_EN10MB, f, 14 + 20 + 8 + 7, &p), -1);
	assert_int_equal(p.error, HS_DERR_TRUNC_TUNNEL);
	/* the outer UDP header stays the innermost decoded packet */
	assert_int_equal(p.key.dport, 4789);
}

/* offset of the outer IP header in an untagged Ethernet frame */
#define OIP 14

static void test_malformed(void **state)
{
	uint8_t f[MAXF], g[MAXF];
	struct hs_pkt p;

	(void)state;
	struct pktw_mirror m = mir(HS_ENCAP_GRE_TEB);
	struct pktw_inner in = inner4(6);
	size_t n = build(f, DLT_EN10MB, &m, &in);

	/* GRE version 1 (PPTP): not broken, only no mirror format */
	memcpy(g, f, n);
	g[OIP + 20 + 1] |= 1;
	assert_int_equal(decode(DLT_EN10MB, g, n, &p), -1);
	assert_int_equal(p.error, HS_DERR_UNSUP_GRE);
	assert_string_equal(hs_derr_name(p.error), "unsupported-gre");
	/* versions 2 to 7 are no GRE at all */
	g[OIP + 20 + 1] = (uint8_t)((g[OIP + 20 + 1] & ~7) | 2);
	assert_int_equal(decode(DLT_EN10MB, g, n, &p), -1);
	assert_int_equal(p.error, HS_DERR_BAD_GRE);
	/* GRE to an unknown protocol */
	memcpy(g, f, n);
	g[OIP + 20 + 2] = 0x12;
	assert_int_equal(decode(DLT_EN10MB, g, n, &p), -1);
	assert_int_equal(p.error, HS_DERR_NOT_IP);
	/* IPv4 header length 16 */
	memcpy(g, f, n);
	g[OIP] = 0x44;
	assert_int_equal(decode(DLT_EN10MB, g, n, &p), -1);
	assert_int_equal(p.error, HS_DERR_BAD_IP);
	/* IPv4 header length past the capture */
	memcpy(g, f, n);
	g[OIP] = 0x4f;
	assert_int_equal(decode(DLT_EN10MB, g, OIP + 40, &p), -1);
	assert_int_equal(p.error, HS_DERR_TRUNC_IP);
	/* version 5 behind the IPv4 EtherType */
	memcpy(g, f, n);
	g[OIP] = 0x55;
	assert_int_equal(decode(DLT_EN10MB, g, n, &p), -1);
	assert_int_equal(p.error, HS_DERR_BAD_IP);
	/* total length shorter than the header */
	memcpy(g, f, n);
	g[OIP + 2] = 0;
	g[OIP + 3] = 19;
	assert_int_equal(decode(DLT_EN10MB, g, n, &p), -1);
	assert_int_equal(p.error, HS_DERR_BAD_IP);
	/* a non-first fragment of the outer packet */
	memcpy(g, f, n);
	g[OIP + 7] = 0x10;
	assert_int_equal(decode(DLT_EN10MB, g, n, &p), -1);
	assert_int_equal(p.error, HS_DERR_FRAGMENT);
	assert_true(hs_addr_eq(&p.key.src, &m.src));	/* what could be read is kept */
	/* ARP is not IP */
	memcpy(g, f, n);
	g[12] = 0x08;
	g[13] = 0x06;
	assert_int_equal(decode(DLT_EN10MB, g, n, &p), -1);
	assert_int_equal(p.error, HS_DERR_NOT_IP);
	/* a short outer total length clamps what the tunnel may read */
	memcpy(g, f, n);
	g[OIP + 2] = 0;
	g[OIP + 3] = 20 + 4 + 10;
	assert_int_equal(decode(DLT_EN10MB, g, n, &p), -1);
	assert_int_equal(p.error, HS_DERR_TRUNC_LINK);

	/* ERSPAN II with version 2 in its header */
	m = mir(HS_ENCAP_ERSPAN2);
	n = build(f, DLT_EN10MB, &m, &in);
	f[OIP + 20 + 8] = (uint8_t)(0x20 | (f[OIP + 20 + 8] & 0x0f));
	assert_int_equal(decode(DLT_EN10MB, f, n, &p), -1);
	assert_int_equal(p.error, HS_DERR_BAD_ERSPAN);

	/* ERSPAN III frame type 7 carries no Ethernet frame */
	m = mir(HS_ENCAP_ERSPAN3);
	n = build(f, DLT_EN10MB, &m, &in);
	f[OIP + 20 + 8 + 10] |= 7 << 2;
	assert_int_equal(decode(DLT_EN10MB, f, n, &p), -1);
	assert_int_equal(p.error, HS_DERR_NOT_IP);
	assert_int_equal(p.encap, HS_ENCAP_ERSPAN3);

	/* an IPv6 fragment header with a non-zero offset */
	struct pktw_inner in6 = inner6(6);
	in6.ip6_ext = true;
	m = mir(HS_ENCAP_NONE);
	n = build(f, DLT_EN10MB, &m, &in6);
	f[14 + 40 + 8] = 44;		/* destination options -> fragment */
	f[14 + 40 + 8 + 1] = 0;
	f[14 + 40 + 8 + 2] = 0;
	f[14 + 40 + 8 + 3] = 0x08;	/* offset 1 */
	assert_int_equal(decode(DLT_EN10MB, f, n, &p), -1);
	assert_int_equal(p.error, HS_DERR_FRAGMENT);
	f[14 + 40 + 8 + 3] = 0x01;	/* offset 0, more fragments: a first fragment */
	f[14 + 40 + 8] = 6;
	assert_int_equal(decode(DLT_EN10MB, f, n, &p), 0);
	assert_int_equal(p.key.proto, 6);
	assert_int_equal(p.key.sport, in6.key.sport);
}

/* 40 IPv4-in-IPv4 headers: refused, not recursed without bound */
static void test_too_deep(void **state)
{
	uint8_t f[40 * 20 + 20];
	struct hs_pkt p;

	(void)state;
	memset(f, 0, sizeof(f));
	for (int i = 0; i < 40; i++) {
		uint8_t *h = f + i * 20;
		uint16_t tot = (uint16_t)(sizeof(f) - (size_t)i * 20);
		h[0] = 0x45;
		h[2] = (uint8_t)(tot >> 8);
		h[3] = (uint8_t)tot;
		h[8] = 64;
		h[9] = i == 39 ? 17 : 4;
	}
	assert_int_equal(decode(DLT_RAW, f, sizeof(f), &p), -1);
	assert_int_equal(p.error, HS_DERR_TOO_DEEP);
	assert_int_equal(p.encap, HS_ENCAP_IPIP);
	/* a handful of layers is fine */
	assert_int_equal(decode(DLT_RAW, f + 36 * 20, 4 * 20 + 20, &p), 0);
	assert_int_equal(p.key.proto, 17);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(hs_encap_name(HS_ENCAP_ERSPAN3), "erspan3");
	assert_string_equal(hs_encap_name(HS_ENCAP_GRE_TEB), "gre-teb");
	assert_string_equal(hs_encap_name(HS_ENCAP_NONE), "none");
	assert_string_equal(hs_encap_name(99), "unknown");
	assert_string_equal(hs_derr_name(HS_DERR_TRUNC_IP), "truncated-ip");
	assert_string_equal(hs_derr_name(HS_DERR_TOO_DEEP), "too-deep");
	assert_string_equal(hs_derr_name(-1), "unknown");
	for (int i = 0; i < HS_DERR__COUNT; i++)
		assert_non_null(hs_derr_name(i));
}

static char *render(void (*fn)(FILE *, const struct hs_pkt *), const struct hs_pkt *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	assert_non_null(fp);
	fn(fp, p);
	fclose(fp);
	return buf;
}

static void test_render(void **state)
{
	uint8_t f[MAXF];
	struct hs_pkt p;

	(void)state;
	struct pktw_mirror m = mir(HS_ENCAP_ERSPAN3);
	struct pktw_inner in = inner4(6);
	size_t n = build(f, DLT_EN10MB, &m, &in);
	assert_int_equal(hs_decode(DLT_EN10MB, f, (uint32_t)n, (uint32_t)n,
				   1569743906661437000ULL, &p), 0);
	p.frame = 3;
	char *j = render(hs_pkt_json, &p);
	assert_string_equal(j,
		"{\"frame\":3,\"ts_ns\":1569743906661437000,\"encap\":\"erspan3\","
		"\"mirror_src\":\"192.0.2.1\",\"mirror_dst\":\"192.0.2.99\","
		"\"erspan_ver\":2,\"session\":513,\"hw_ts\":16909060,"
		"\"src\":\"10.0.1.1\",\"dst\":\"10.0.2.2\",\"proto\":6,\"ttl\":60,"
		"\"ip_id\":4321,\"sport\":33000,\"dport\":80,\"tcp_flags\":18,"
		"\"seq\":4277006349,\"len\":52}\n");
	free(j);
	char *t = render(hs_pkt_text, &p);
	assert_non_null(strstr(t, "3 2019-09-29 07:58:26.661437 erspan3 192.0.2.1>192.0.2.99"));
	assert_non_null(strstr(t, "10.0.1.1:33000 > 10.0.2.2:80 tcp [S.]"));
	assert_non_null(strstr(t, "ttl 60 len 52"));
	free(t);

	/* an error frame: the reason, and no inner keys before the IP layer */
	assert_int_equal(hs_decode(DLT_EN10MB, f, 20, 20, 0, &p), -1);
	j = render(hs_pkt_json, &p);
	assert_string_equal(j, "{\"frame\":0,\"ts_ns\":0,\"encap\":\"none\","
			       "\"error\":\"truncated-ip\"}\n");
	free(j);
	t = render(hs_pkt_text, &p);
	assert_non_null(strstr(t, "[truncated-ip]"));
	free(t);
}


/* ---- the common shape, predicted ------------------------------------------ */

/* hs_decode and the layer-by-layer decoder agree to the byte; true when the
 * frame was of the predicted shape */
static bool same_both_ways(const uint8_t *frame, uint32_t caplen, uint32_t wirelen)
{
	struct hs_pkt a, b, k;
	uint8_t *copy = malloc(caplen ? caplen : 1);	/* exact size: reads past it are caught */

	assert_non_null(copy);
	memcpy(copy, frame, caplen);
	int ra = hs_decode(DLT_EN10MB, copy, caplen, wirelen, 7, &a);
	int rb = hs_decode_general(DLT_EN10MB, copy, caplen, wirelen, 7, &b);
	assert_int_equal(ra, rb);
	if (memcmp(&a, &b, sizeof(a)) != 0)
		fail_msg("frame of %u bytes: the predicted decode differs (error %s / %s)",
			 caplen, hs_derr_name(a.error), hs_derr_name(b.error));
	memset(&k, 0, sizeof(k));
	bool predicted = dec_predicted(copy, caplen, &k);
	free(copy);
	return predicted;
}

/* frames of the shape and near it: every cut, and each of the first bytes
 * (all the headers) set to values that break one check or another */
static void test_predicted_built(void **state)
{
	static const int kinds[] = { HS_ENCAP_ERSPAN3, HS_ENCAP_ERSPAN2 };
	static const uint8_t gras[] = { 0, 1, 2, 3 };
	static const uint16_t ports[] = { 80, 179 };
	static const uint8_t flags[] = { 0x02, 0x12, 0x18 };
	unsigned predicted = 0, total = 0, predicted2 = 0;

	(void)state;
	for (size_t e = 0; e < HS_ARRAY_SIZE(kinds); e++)
	for (int key = 0; key < 2; key++)
	for (size_t g = 0; g < HS_ARRAY_SIZE(gras); g++)
	for (size_t pt = 0; pt < HS_ARRAY_SIZE(ports); pt++)
	for (int plat = 0; plat < 2; plat++) {
		/* type II has no time nor platform subheader: one of each */
		if (kinds[e] == HS_ENCAP_ERSPAN2 && (g > 1 || plat))
			continue;
		struct pktw_mirror m = mir(kinds[e]);
		struct pktw_inner in = inner4(6);
		uint8_t f[MAXF];

		m.gre_key = key;
		m.gre_keyval = 77;
		m.gra = gras[g];
		m.platform3 = plat;
		m.ts_hi = 3;
		in.key.dport = ports[pt];
		in.tcp_flags = flags[(g + pt) % HS_ARRAY_SIZE(flags)];
		in.payload_len = (uint16_t)(g * 40);
		size_t n = build(f, DLT_EN10MB, &m, &in);
		unsigned before = predicted;
		assert_true(same_both_ways(f, (uint32_t)n, (uint32_t)n));

		for (size_t cut = 0; cut <= n; cut++) {
			predicted += same_both_ways(f, (uint32_t)cut, (uint32_t)n);
			total++;
		}
		for (size_t off = 0; off < n && off < 120; off++) {
			const uint8_t orig = f[off];
			/* every single bit flipped, near values, extremes */
			const uint8_t vals[] = { orig ^ 0x01, orig ^ 0x02, orig ^ 0x04, orig ^ 0x08,
						 orig ^ 0x10, orig ^ 0x20, orig ^ 0x40, orig ^ 0x80,
						 (uint8_t)(orig + 1), (uint8_t)(orig - 1),
						 (uint8_t)(orig - 2), (uint8_t)(orig + 0x10),
						 (uint8_t)(orig - 0x10), 0x00, 0xff, 0x45 };
			for (size_t v = 0; v < sizeof(vals); v++) {
				f[off] = vals[v];
				predicted += same_both_ways(f, (uint32_t)n, (uint32_t)n);
				total++;
			}
			f[off] = orig;
		}
		if (kinds[e] == HS_ENCAP_ERSPAN2)
			predicted2 += predicted - before;
	}
	/* both sides of the prediction were tried, many times, of both types */
	assert_true(predicted > 1000);
	assert_true(total - predicted > 1000);
	assert_true(predicted2 > 1000);
}

/* every frame of the bundled capture and of the conformance corpus */
static unsigned same_in_file(const char *path, unsigned *frames)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, err);
	struct pcap_pkthdr *h;
	const u_char *d;
	unsigned predicted = 0;

	if (!pc)
		return 0;	/* not a capture libpcap reads: nothing to compare */
	if (pcap_datalink(pc) == DLT_EN10MB) {
		while (pcap_next_ex(pc, &h, &d) == 1) {
			predicted += same_both_ways(d, h->caplen, h->len);
			(*frames)++;
		}
	}
	pcap_close(pc);
	return predicted;
}

static void test_predicted_files(void **state)
{
	char path[1024];
	unsigned frames = 0, predicted;
	DIR *dir;
	struct dirent *e;

	(void)state;
	snprintf(path, sizeof(path), "%s/share/sample/sample.pcap", HS_SRCDIR);
	predicted = same_in_file(path, &frames);
	assert_true(frames > 0 && predicted > frames / 2);
	snprintf(path, sizeof(path), "%s/../shared/corpus", HS_SRCDIR);
	if (!(dir = opendir(path))) {
		print_message("no corpus at %s: only the sample compared\n", path);
		return;
	}
	while ((e = readdir(dir)) != NULL) {
		size_t n = strlen(e->d_name);
		if (n < 6 || strcmp(e->d_name + n - 5, ".pcap") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/../shared/corpus/%s", HS_SRCDIR, e->d_name);
		predicted += same_in_file(path, &frames);
	}
	closedir(dir);
	print_message("%u frames compared, %u of the predicted shape\n", frames, predicted);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_encap),
		cmocka_unit_test(test_outer_ipv6),
		cmocka_unit_test(test_gre_options),
		cmocka_unit_test(test_overlays),
		cmocka_unit_test(test_mpls),
		cmocka_unit_test(test_link_types),
		cmocka_unit_test(test_vlan_tags),
		cmocka_unit_test(test_hw_time),
		cmocka_unit_test(test_icmp_quote),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test(test_truncation_reasons),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_too_deep),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_predicted_built),
		cmocka_unit_test(test_predicted_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
