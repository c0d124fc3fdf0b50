/* pktw.c - build test frames and write them to pcap files
 *
 * The inner IP packet and every IP/UDP header around it are made with libnet
 * (context in LIBNET_NONE mode, pblocks coalesced into one packet), so
 * lengths and checksums come from the library. The link headers, GRE, ERSPAN,
 * VXLAN and Geneve headers are written here byte by byte.
 */
#include <libnet.h>
#include <stdlib.h>
#include <string.h>

/* libnet's GRE header macros would rename our own fields */
#undef gre_sum
#undef gre_key
#undef gre_seq

#include "pktw.h"

#define SCRATCH 16384

static libnet_t *lnet;

static libnet_t *ctx(void)
{
	char errbuf[LIBNET_ERRBUF_SIZE];

	if (!lnet) {
		lnet = libnet_init(LIBNET_NONE, NULL, errbuf);
		if (!lnet) {
			fprintf(stderr, "pktw: libnet_init: %s\n", errbuf);
			abort();
		}
	}
	libnet_clear_packet(lnet);
	return lnet;
}

/* take the packet built in l into buf; length or 0 */
static size_t cull(libnet_t *l, uint8_t *buf, size_t cap)
{
	uint8_t *pkt = NULL;
	uint32_t n = 0;

	/* libnet 1.1.6 only culls in LIBNET_LINK_ADV mode, which needs an
	 * interface; coalescing the pblocks is what culling does */
	if (libnet_pblock_coalesce(l, &pkt, &n) < 0) {
		fprintf(stderr, "pktw: %s\n", libnet_geterror(l));
		libnet_clear_packet(l);
		return 0;
	}
	size_t len = n <= cap ? n : 0;
	if (len)
		memcpy(buf, pkt, len);
	libnet_adv_free_packet(l, pkt);
	libnet_clear_packet(l);
	return len;
}

static uint32_t v4(const struct hs_addr *a)
{
	uint32_t x;

	memcpy(&x, a->a, 4);	/* network byte order, as libnet wants */
	return x;
}

static struct libnet_in6_addr v6(const struct hs_addr *a)
{
	struct libnet_in6_addr x;

	memcpy(&x, a->a, 16);
	return x;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint16_t cksum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* IPv6 upper-layer checksum with the pseudo header (RFC 8200 8.1) */
static uint16_t cksum6(const uint8_t *src, const uint8_t *dst, uint8_t nh,
		       const uint8_t *l4, size_t n)
{
	uint32_t s = 0;

	for (int i = 0; i < 16; i += 2) {
		s += (uint32_t)src[i] << 8 | src[i + 1];
		s += (uint32_t)dst[i] << 8 | dst[i + 1];
	}
	s += (uint32_t)(n >> 16) + (uint32_t)(n & 0xffff) + nh;
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)l4[i] << 8 | l4[i + 1];
	if (n & 1)
		s += (uint32_t)l4[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	uint16_t r = (uint16_t)~s;
	return r ? r : (nh == 17 ? 0xffff : 0);
}

size_t pktw_inner(uint8_t *buf, size_t cap, const struct pktw_inner *in)
{
	uint8_t pay[SCRATCH];
	uint16_t plen = in->payload_len;
	bool six = in->key.src.af == 6;
	libnet_t *l = ctx();
	uint32_t l4len;
	libnet_ptag_t t;

	if (plen > sizeof(pay) - 100)
		return 0;
	if (in->payload)
		memcpy(pay, in->payload, plen);
	else
		for (uint16_t i = 0; i < plen; i++)
			pay[i] = (uint8_t)('a' + i % 26);

	switch (in->key.proto) {
	case IPPROTO_TCP:
		l4len = LIBNET_TCP_H + plen;
		t = libnet_build_tcp(in->key.sport, in->key.dport, in->seq, in->ack,
				     in->tcp_flags, in->window ? in->window : 64240, 0, 0,
				     (uint16_t)l4len, plen ? pay : NULL, plen, l, 0);
		break;
	case IPPROTO_UDP:
		l4len = LIBNET_UDP_H + plen;
		t = libnet_build_udp(in->key.sport, in->key.dport, (uint16_t)l4len, 0,
				     plen ? pay : NULL, plen, l, 0);
		break;
	case IPPROTO_ICMP:
		l4len = LIBNET_ICMPV4_ECHO_H + plen;
		t = libnet_build_icmpv4_echo(in->icmp_type, in->icmp_code, 0,
					     in->key.sport, in->key.dport,
					     plen ? pay : NULL, plen, l, 0);
		break;
	case IPPROTO_ICMPV6:
		l4len = LIBNET_ICMPV6_ECHO_H + plen;
		t = libnet_build_icmpv6_echo(in->icmp_type, in->icmp_code, 0,
					     in->key.sport, in->key.dport,
					     plen ? pay : NULL, plen, l, 0);
		break;
	default:
		l4len = plen;
		t = plen ? libnet_build_data(pay, plen, l, 0) : 0;
		break;
	}
	if (t < 0)
		goto fail;

	if (!six) {
		static const uint8_t opts[4] = { 1, 1, 1, 0 };	/* NOP NOP NOP EOL */
		uint32_t hl = LIBNET_IPV4_H + (in->ip_options ? 4 : 0);

		if (in->ip_options &&
		    libnet_build_ipv4_options(opts, sizeof(opts), l, 0) < 0)
			goto fail;
		if (libnet_build_ipv4((uint16_t)(hl + l4len), in->tos, in->ip_id, 0,
				      in->ttl, in->key.proto, 0, v4(&in->key.src),
				      v4(&in->key.dst), NULL, 0, l, 0) < 0)
			goto fail;
		return cull(l, buf, cap);
	}

	/* IPv6: libnet 1.1.6 writes the upper-layer checksum at a fixed
	 * offset after the IPv6 header, ignoring extension headers, so that
	 * checksum is computed here instead */
	if (t > 0 && libnet_toggle_checksum(l, t, LIBNET_OFF) < 0)
		goto fail;
	static const uint8_t padn[6] = { 1, 4, 0, 0, 0, 0 };
	uint32_t ext = in->ip6_ext ? 16 : 0;
	uint8_t nh = in->key.proto;
	if (in->ip6_ext) {
		if (libnet_build_ipv6_destopts(in->key.proto, 0, padn, sizeof(padn), l, 0) < 0 ||
		    libnet_build_ipv6_hbhopts(60, 0, padn, sizeof(padn), l, 0) < 0)
			goto fail;
		nh = 0;
	}
	if (libnet_build_ipv6(in->tos, 0, (uint16_t)(ext + l4len), nh, in->ttl,
			      v6(&in->key.src), v6(&in->key.dst), NULL, 0, l, 0) < 0)
		goto fail;
	size_t n = cull(l, buf, cap);
	if (!n || n < 40 + ext + l4len)
		return 0;
	uint8_t *l4 = buf + 40 + ext;
	int off = in->key.proto == IPPROTO_TCP ? 16 : in->key.proto == IPPROTO_UDP ? 6 :
		  in->key.proto == IPPROTO_ICMPV6 ? 2 : -1;
	if (off >= 0 && l4len >= (uint32_t)off + 2) {
		put16(l4 + off, 0);
		put16(l4 + off, cksum6(buf + 8, buf + 24, in->key.proto, l4, l4len));
	}
	return n;
fail:
	fprintf(stderr, "pktw: %s\n", libnet_geterror(l));
	libnet_clear_packet(l);
	return 0;
}

/* outer IPv4/IPv6 header around payload, from libnet */
static size_t wrap_ip(uint8_t *out, size_t cap, const struct hs_addr *src,
		      const struct hs_addr *dst, uint8_t proto, const uint8_t *p, size_t n)
{
	libnet_t *l = ctx();
	libnet_ptag_t t;

	if (src->af == 6)
		t = libnet_build_ipv6(0, 0, (uint16_t)n, proto, 64, v6(src), v6(dst),
				      p, (uint32_t)n, l, 0);
	else
		t = libnet_build_ipv4((uint16_t)(LIBNET_IPV4_H + n), 0, 0, 0x4000, 64, proto,
				      0, v4(src), v4(dst), p, (uint32_t)n, l, 0);
	if (t < 0) {
		fprintf(stderr, "pktw: %s\n", libnet_geterror(l));
		libnet_clear_packet(l);
		return 0;
	}
	return cull(l, out, cap);
}

/* outer IP + UDP around payload */
static size_t wrap_udp(uint8_t *out, size_t cap, const struct hs_addr *src,
		       const struct hs_addr *dst, uint16_t sport, uint16_t dport,
		       const uint8_t *p, size_t n)
{
	libnet_t *l = ctx();
	libnet_ptag_t t;

	t = libnet_build_udp(sport, dport, (uint16_t)(LIBNET_UDP_H + n), 0, p,
			     (uint32_t)n, l, 0);
	if (t >= 0) {
		if (src->af == 6)
			t = libnet_build_ipv6(0, 0, (uint16_t)(LIBNET_UDP_H + n), IPPROTO_UDP,
					      64, v6(src), v6(dst), NULL, 0, l, 0);
		else
			t = libnet_build_ipv4((uint16_t)(LIBNET_IPV4_H + LIBNET_UDP_H + n), 0,
					      0, 0x4000, 64, IPPROTO_UDP, 0, v4(src),
					      v4(dst), NULL, 0, l, 0);
	}
	if (t < 0) {
		fprintf(stderr, "pktw: %s\n", libnet_geterror(l));
		libnet_clear_packet(l);
		return 0;
	}
	size_t len = cull(l, out, cap);
	if (len && src->af == 6) {
		uint8_t *u = out + 40;
		put16(u + 6, 0);
		put16(u + 6, cksum6(out + 8, out + 24, IPPROTO_UDP, u, LIBNET_UDP_H + n));
	}
	return len;
}

static const uint8_t mac_in_dst[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const uint8_t mac_in_src[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t mac_out_dst[6] = { 0x02, 0, 0, 0, 0x01, 0x02 };
static const uint8_t mac_out_src[6] = { 0x02, 0, 0, 0, 0x01, 0x01 };
static const uint8_t mac_macc_dst[6] = { 0x01, 0x80, 0xc2, 0, 0, 0x01 };
/* a pseudowire's frame: behind a control word, locally administered
 * addresses; without one, addresses of vendors' blocks (00:1b:21, 00:50:56),
 * as most are, which start with the zero nibble of a control word */
static const uint8_t mac_pw_dst[6] = { 0xa2, 0, 0xa2, 0, 0x02, 0x02 };
static const uint8_t mac_pw_src[6] = { 0xa2, 0, 0xa2, 0, 0x02, 0x01 };
static const uint8_t mac_pw_dst_vendor[6] = { 0x00, 0x1b, 0x21, 0, 0x02, 0x02 };
static const uint8_t mac_pw_src_vendor[6] = { 0x00, 0x50, 0x56, 0, 0x02, 0x01 };

static uint16_t ethertype_of(const uint8_t *ip, size_t n)
{
	return n && (ip[0] >> 4) == 6 ? 0x86dd : 0x0800;
}

/* Ethernet header (no tag) + IP packet, or the payload of m->ethertype */
static size_t wrap_eth(uint8_t *out, size_t cap, const struct pktw_mirror *m,
		       const uint8_t *ip, size_t n)
{
	if (n + 14 > cap)
		return 0;
	memcpy(out, m->ethertype == 0x8808 ? mac_macc_dst : mac_in_dst, 6);
	memcpy(out + 6, mac_in_src, 6);
	put16(out + 12, m->ethertype ? m->ethertype : ethertype_of(ip, n));
	memcpy(out + 14, ip, n);
	return n + 14;
}

/* MPLS label stack (TTL 64 at the top, one less below) + control word +
 * Ethernet header as m->pw asks + IP packet */
static size_t wrap_mpls(uint8_t *out, size_t cap, const struct pktw_mirror *m,
			const uint8_t *ip, size_t n)
{
	size_t h = 0;

	if (m->mpls_n > HS_ARRAY_SIZE(m->mpls) || m->mpls_n * 4u + 4 + 14 + n > cap)
		return 0;
	for (unsigned i = 0; i < m->mpls_n; i++, h += 4)
		put32(out + h, m->mpls[i] << 12 | (i + 1 == m->mpls_n ? 0x100u : 0) | (64 - i));
	if (m->pw == 2) {
		put32(out + h, 0);	/* control word: flags 0, sequence 0 */
		h += 4;
	}
	if (m->pw) {
		memcpy(out + h, m->pw == 2 ? mac_pw_dst : mac_pw_dst_vendor, 6);
		memcpy(out + h + 6, m->pw == 2 ? mac_pw_src : mac_pw_src_vendor, 6);
		put16(out + h + 12, ethertype_of(ip, n));
		h += 14;
	}
	memcpy(out + h, ip, n);
	return h + n;
}

/* VXLAN or Geneve header + Ethernet frame, inside UDP/IP */
static size_t wrap_overlay(uint8_t *out, size_t cap, const struct pktw_mirror *m,
			   const uint8_t *ip, size_t n)
{
	uint8_t t[SCRATCH];
	size_t h = 8;
	struct hs_addr s, d;

	if (n + 14 + h > sizeof(t))
		return 0;
	memset(t, 0, h);
	if (m->overlay == 6081) {
		/* Geneve: ver 0, opt len 0, protocol TEB, VNI, reserved */
		put16(t + 2, 0x6558);
		put32(t + 4, m->vni << 8);
	} else {
		/* VXLAN: I flag, VNI */
		t[0] = 0x08;
		put32(t + 4, m->vni << 8);
	}
	size_t e = wrap_eth(t + h, sizeof(t) - h, m, ip, n);
	if (!e)
		return 0;
	if (m->encap == HS_ENCAP_NONE && m->src.af) {
		s = m->src;
		d = m->dst;
	} else {
		hs_addr_parse("172.16.0.1", &s);
		hs_addr_parse("172.16.0.2", &d);
	}
	return wrap_udp(out, cap, &s, &d, 49152, (uint16_t)m->overlay, t, h + e);
}

/* GRE header (+ ERSPAN) + payload, inside the outer IP header */
static size_t wrap_gre(uint8_t *out, size_t cap, const struct pktw_mirror *m,
		       const uint8_t *ip, size_t n)
{
	uint8_t t[SCRATCH];
	size_t h = 4;
	uint16_t proto;
	bool seq = m->gre_seqf;
	bool eth = true;

	switch (m->encap) {
	case HS_ENCAP_ERSPAN1: proto = 0x88be; seq = false; break;
	case HS_ENCAP_ERSPAN2: proto = 0x88be; seq = true; break;
	case HS_ENCAP_ERSPAN3: proto = 0x22eb; seq = true; break;
	case HS_ENCAP_GRE_TEB: proto = 0x6558; break;
	case HS_ENCAP_GRE_MPLS: proto = m->mpls_mcast ? 0x8848 : 0x8847; eth = false; break;
	default: proto = ethertype_of(ip, n); eth = false; break;
	}
	memset(t, 0, 64);
	if (m->pptp) {
		/* PPTP's enhanced GRE (RFC 2637): key and sequence bits, version 1,
		 * PPP; the key is the payload length and the call id; PPP: address,
		 * control, protocol IPv4 */
		static const uint8_t ppp[4] = { 0xff, 0x03, 0x00, 0x21 };
		if (n + 16 > sizeof(t))
			return 0;
		put16(t, 0x3001);
		put16(t + 2, 0x880b);
		put16(t + 4, (uint16_t)(n + sizeof(ppp)));
		put16(t + 6, 7);
		put32(t + 8, m->gre_seq);
		memcpy(t + 12, ppp, sizeof(ppp));
		memcpy(t + 16, ip, n);
		return wrap_ip(out, cap, &m->src, &m->dst, IPPROTO_GRE, t, 16 + n);
	}
	t[0] = (uint8_t)((m->gre_csum ? 0x80 : 0) | (m->gre_key ? 0x20 : 0) | (seq ? 0x10 : 0));
	put16(t + 2, proto);
	if (m->gre_csum)
		h += 4;
	if (m->gre_key) {
		put32(t + h, m->gre_keyval);
		h += 4;
	}
	if (seq) {
		put32(t + h, m->gre_seq);
		h += 4;
	}
	if (m->encap == HS_ENCAP_ERSPAN2) {
		/* ver 1 | vlan; cos en t session; reserved | index */
		put16(t + h, (uint16_t)(1 << 12 | (m->vlan & 0xfff)));
		put16(t + h + 2, (uint16_t)(m->session & 0x3ff));
		put32(t + h + 4, 7);
		h += 8;
	} else if (m->encap == HS_ENCAP_ERSPAN3) {
		/* ver 2 | vlan; cos bso t session; timestamp; sgt; p ft hw d gra o */
		put16(t + h, (uint16_t)(2 << 12 | (m->vlan & 0xfff)));
		put16(t + h + 2, (uint16_t)(m->session & 0x3ff));
		put32(t + h + 4, m->hw_ts);
		put16(t + h + 8, 0);
		put16(t + h + 10, (uint16_t)((m->gra & 3) << 1 | (m->platform3 ? 1 : 0)));
		h += 12;
		if (m->platform3) {
			/* platform id 3 (6 bits), reserved (12), port index (14); ts_hi */
			put32(t + h, 3u << 26 | 3);
			put32(t + h + 4, m->ts_hi);
			h += 8;
		}
	}
	size_t e;
	if (eth) {
		e = wrap_eth(t + h, sizeof(t) - h, m, ip, n);
	} else {
		e = n + h <= sizeof(t) ? n : 0;
		if (e)
			memcpy(t + h, ip, n);
	}
	if (!e)
		return 0;
	if (m->gre_csum)
		put16(t + 4, cksum(t, h + e));
	return wrap_ip(out, cap, &m->src, &m->dst, IPPROTO_GRE, t, h + e);
}

size_t pktw_frame(uint8_t *buf, size_t cap, int dlt, const struct pktw_mirror *m,
		  const uint8_t *inner, size_t inner_len)
{
	uint8_t a[SCRATCH], b[SCRATCH], l[SCRATCH];
	struct pktw_mirror x = *m;
	const uint8_t *cur = inner;
	size_t n = inner_len;

	if (m->mpls_n) {
		/* the labelled packet goes on as the payload of an MPLS frame */
		n = wrap_mpls(l, sizeof(l), m, cur, n);
		if (!n)
			return 0;
		cur = l;
		x.ethertype = m->mpls_mcast ? 0x8848 : 0x8847;
	}
	m = &x;
	if (m->overlay) {
		n = wrap_overlay(a, sizeof(a), m, cur, n);
		if (!n)
			return 0;
		cur = a;
	}
	switch (m->encap) {
	case HS_ENCAP_NONE:
		break;
	case HS_ENCAP_IPIP:
		n = wrap_ip(b, sizeof(b), &m->src, &m->dst,
			    ethertype_of(cur, n) == 0x86dd ? IPPROTO_IPV6 : IPPROTO_IPIP, cur, n);
		cur = b;
		break;
	default:
		n = wrap_gre(b, sizeof(b), m, cur, n);
		cur = b;
		break;
	}
	if (!n)
		return 0;

	/* a bare non-IP frame: its own type, and MAC control's address */
	bool bare = (cur == inner || cur == l) && m->ethertype;
	uint16_t et = bare ? m->ethertype : ethertype_of(cur, n);
	size_t h = 0;
	uint8_t hdr[32];

	switch (dlt) {
	case DLT_EN10MB:
		memcpy(hdr, bare && et == 0x8808 ? mac_macc_dst : mac_out_dst, 6);
		memcpy(hdr + 6, mac_out_src, 6);
		h = 12;
		if (m->vlan && m->vlan2) {
			put16(hdr + h, 0x88a8);
			put16(hdr + h + 2, m->vlan & 0xfff);
			put16(hdr + h + 4, 0x8100);
			put16(hdr + h + 6, m->vlan2 & 0xfff);
			h += 8;
		} else if (m->vlan) {
			put16(hdr + h, 0x8100);
			put16(hdr + h + 2, m->vlan & 0xfff);
			h += 4;
		}
		put16(hdr + h, et);
		h += 2;
		break;
	case DLT_LINUX_SLL:
		put16(hdr, 0);		/* packet to us */
		put16(hdr + 2, 1);	/* ARPHRD_ETHER */
		put16(hdr + 4, 6);
		memcpy(hdr + 6, mac_out_src, 6);
		put16(hdr + 12, 0);
		put16(hdr + 14, et);
		h = 16;
		break;
	case DLT_LINUX_SLL2:
		put16(hdr, et);
		put16(hdr + 2, 0);
		put32(hdr + 4, 2);	/* interface index */
		put16(hdr + 8, 1);	/* ARPHRD_ETHER */
		hdr[10] = 0;		/* packet to us */
		hdr[11] = 6;
		memcpy(hdr + 12, mac_out_src, 6);
		put16(hdr + 18, 0);
		h = 20;
		break;
	case DLT_PPP:
		/* address, control, protocol: IPv4, IPv6, or MPLS */
		hdr[0] = 0xff;
		hdr[1] = 0x03;
		put16(hdr + 2, et == 0x8847 ? 0x0281 : et == 0x8848 ? 0x0283 :
			       et == 0x86dd ? 0x0057 : 0x0021);
		h = 4;
		break;
	case DLT_RAW:
	case 101:
	case 228:
	case 229:
		break;
	default:
		return 0;
	}
	if (h + n > cap)
		return 0;
	memcpy(buf, hdr, h);
	memmove(buf + h, cur, n);
	return h + n;
}

int pktw_open(struct pktw_file *f, const char *path, int dlt)
{
	f->dump = NULL;
	f->dead = pcap_open_dead_with_tstamp_precision(dlt, 262144,
						       PCAP_TSTAMP_PRECISION_NANO);
	if (!f->dead) {
		fprintf(stderr, "cannot open '%s': pcap_open_dead failed\n", path);
		return -1;
	}
	f->dump = pcap_dump_open(f->dead, path);
	if (!f->dump) {
		fprintf(stderr, "cannot open '%s': %s\n", path, pcap_geterr(f->dead));
		pcap_close(f->dead);
		f->dead = NULL;
		return -1;
	}
	return 0;
}

void pktw_write(struct pktw_file *f, uint64_t ts_ns, const uint8_t *frame, size_t len)
{
	pktw_write_cut(f, ts_ns, frame, len, len);
}

void pktw_write_cut(struct pktw_file *f, uint64_t ts_ns, const uint8_t *frame,
		    size_t caplen, size_t wirelen)
{
	struct pcap_pkthdr h;

	memset(&h, 0, sizeof(h));
	h.ts.tv_sec = (time_t)(ts_ns / HS_NS_PER_SEC);
	h.ts.tv_usec = (suseconds_t)(ts_ns % HS_NS_PER_SEC);	/* nanoseconds: nano file */
	h.caplen = (bpf_u_int32)caplen;
	h.len = (bpf_u_int32)wirelen;
	pcap_dump((u_char *)f->dump, &h, frame);
}

void pktw_close(struct pktw_file *f)
{
	if (f->dump)
		pcap_dump_close(f->dump);
	if (f->dead)
		pcap_close(f->dead);
	f->dump = NULL;
	f->dead = NULL;
}
