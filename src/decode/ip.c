/* ip.c - IPv4 (RFC 791), IPv6 and its extension headers (RFC 8200, RFC 4302),
 * TCP (RFC 9293), UDP (RFC 768), ICMP (RFC 792), ICMPv6 (RFC 4443), and the
 * IP protocol demux into IP-in-IP (RFC 2003, RFC 4213), GRE and UDP tunnels
 *
 * Each IP header decoded becomes the "innermost" packet of hs_pkt until a
 * deeper one replaces it. A header is checked whole before any field of it
 * is stored, so a truncated inner header leaves the enclosing one in place.
 * An ICMP error quotes an IP header: that quote is payload, not a deeper
 * packet.
 */
#include "rd.h"

enum {
	P_HOPOPTS = 0, P_ICMP = 1, P_IPIP = 4, P_TCP = 6, P_UDP = 17, P_IPV6 = 41,
	P_ROUTING = 43, P_FRAGMENT = 44, P_GRE = 47, P_AH = 51, P_ICMPV6 = 58,
	P_NONE = 59, P_DSTOPTS = 60,
};

#define IP6_HLEN 40
#define UDP_HLEN 8

static const uint8_t *l4_payload(const uint8_t *p, uint32_t len, uint32_t off,
				 uint32_t *caplen)
{
	if (off > len) {
		*caplen = 0;
		return NULL;
	}
	*caplen = len - off;
	return p + off;
}

static int dec_tcp(struct dctx *c, const uint8_t *p, uint32_t len, uint32_t decl)
{
	struct hs_pkt *k = c->pkt;

	if (!rd_have(len, 0, TCP_MIN))
		return dec_fail(c, HS_DERR_TRUNC_L4);
	uint32_t doff = (uint32_t)(p[12] >> 4) * 4;
	k->key.sport = be16(p);
	k->key.dport = be16(p + 2);
	k->seq = be32(p + 4);
	k->ack = be32(p + 8);
	k->tcp_flags = p[13];
	k->have |= HS_HAVE_PORTS | HS_HAVE_TCP;
	if (doff < TCP_MIN || doff > len)
		return dec_fail(c, HS_DERR_TRUNC_L4);	/* bad offset or options cut */
	k->l4_len = (uint16_t)(decl > doff ? decl - doff : 0);
	k->tcp_hlen = (uint8_t)doff;
	k->l4_payload = l4_payload(p, len, doff, &k->l4_payload_caplen);
	if (k->key.sport == HS_PORT_BGP || k->key.dport == HS_PORT_BGP)
		k->ctl = HS_CTL_BGP;
	return 0;
}

static int dec_udp(struct dctx *c, const uint8_t *p, uint32_t len, uint32_t decl)
{
	struct hs_pkt *k = c->pkt;

	if (!rd_have(len, 0, UDP_HLEN))
		return dec_fail(c, HS_DERR_TRUNC_L4);
	uint16_t ulen = be16(p + 4);
	k->key.sport = be16(p);
	k->key.dport = be16(p + 2);
	k->have |= HS_HAVE_PORTS;
	/* the UDP length bounds the datagram when it is sane */
	uint32_t end = ulen >= UDP_HLEN && ulen <= decl ? ulen : decl;
	if (end < UDP_HLEN)
		end = UDP_HLEN;
	k->l4_len = (uint16_t)(end - UDP_HLEN);
	if (len > end)
		len = end;
	k->l4_payload = l4_payload(p, len, UDP_HLEN, &k->l4_payload_caplen);
	if (k->key.dport == HS_PORT_ROCE)
		k->ctl = HS_CTL_ROCE;

	int r = dec_overlay(c, k->key.dport, p + UDP_HLEN, len - UDP_HLEN);
	return r > 0 ? 0 : r;
}

static int dec_icmp(struct dctx *c, const uint8_t *p, uint32_t len)
{
	if (!rd_have(len, 0, 4))
		return dec_fail(c, HS_DERR_TRUNC_L4);
	c->pkt->icmp_type = p[0];
	c->pkt->icmp_code = p[1];
	c->pkt->have |= HS_HAVE_ICMP;
	return 0;
}

/* the payload of an IP header: len captured bytes, decl by the header */
static int dec_ipproto(struct dctx *c, uint8_t proto, const uint8_t *p, uint32_t len,
		       uint32_t decl)
{
	switch (proto) {
	case P_TCP:
		return dec_tcp(c, p, len, decl);
	case P_UDP:
		return dec_udp(c, p, len, decl);
	case P_ICMP:
	case P_ICMPV6:
		return dec_icmp(c, p, len);
	case P_IPIP:
		dec_set_mirror(c, HS_ENCAP_IPIP);
		return dec_ipv4(c, p, len);
	case P_IPV6:
		dec_set_mirror(c, HS_ENCAP_IPIP);
		return dec_ipv6(c, p, len);
	case P_GRE:
		return dec_gre(c, p, len);
	default:
		return 0;	/* an IP packet of another protocol: innermost */
	}
}

/* a new innermost IP header replaces what the enclosing one said */
static void new_inner(struct hs_pkt *k)
{
	k->have &= ~(uint32_t)(HS_HAVE_PORTS | HS_HAVE_TCP | HS_HAVE_ICMP | HS_HAVE_IPID);
	k->have |= HS_HAVE_IP;
	k->key.sport = k->key.dport = 0;
	k->tcp_flags = 0;
	k->tcp_hlen = 0;
	k->seq = k->ack = 0;
	k->l4_len = 0;
	k->icmp_type = k->icmp_code = 0;
	k->ip_id = 0;
	k->l4_payload = NULL;
	k->l4_payload_caplen = 0;
	k->ctl = HS_CTL_NONE;
}

int dec_ipv4(struct dctx *c, const uint8_t *p, uint32_t len)
{
	struct hs_pkt *k = c->pkt;

	if (!dec_enter(c))
		return -1;
	if (!rd_have(len, 0, HS_IPV4_HLEN))
		return dec_fail(c, HS_DERR_TRUNC_IP);
	uint32_t hl = (uint32_t)(p[0] & 0x0f) * 4;
	uint32_t tot = be16(p + 2);
	if (p[0] >> 4 != 4 || hl < HS_IPV4_HLEN || (tot != 0 && tot < hl))
		return dec_fail(c, HS_DERR_BAD_IP);
	if (!rd_have(len, 0, hl))
		return dec_fail(c, HS_DERR_TRUNC_IP);

	new_inner(k);
	k->key.src.af = k->key.dst.af = 4;
	memset(k->key.src.a, 0, sizeof(k->key.src.a));
	memset(k->key.dst.a, 0, sizeof(k->key.dst.a));
	memcpy(k->key.src.a, p + 12, 4);
	memcpy(k->key.dst.a, p + 16, 4);
	k->key.proto = p[9];
	k->tos = p[1];
	k->ttl = p[8];
	k->ip_id = be16(p + 4);
	k->have |= HS_HAVE_IPID;
	k->len = tot;

	/* total length 0 is what segmentation offload leaves: use the capture */
	uint32_t end = tot ? tot : len;
	if (len > end)
		len = end;
	k->l3 = p;
	k->l3_caplen = len;
	if (be16(p + 6) & 0x1fff)
		return dec_fail(c, HS_DERR_FRAGMENT);
	return dec_ipproto(c, k->key.proto, p + hl, len - hl, end - hl);
}

int dec_ipv6(struct dctx *c, const uint8_t *p, uint32_t len)
{
	struct hs_pkt *k = c->pkt;

	if (!dec_enter(c))
		return -1;
	if (!rd_have(len, 0, IP6_HLEN))
		return dec_fail(c, HS_DERR_TRUNC_IP6);
	if (p[0] >> 4 != 6)
		return dec_fail(c, HS_DERR_BAD_IP);

	uint32_t plen = be16(p + 4);
	uint8_t nh = p[6];
	new_inner(k);
	k->key.src.af = k->key.dst.af = 6;
	memcpy(k->key.src.a, p + 8, 16);
	memcpy(k->key.dst.a, p + 24, 16);
	k->key.proto = nh;
	k->tos = (uint8_t)((be16(p) >> 4) & 0xff);
	k->ttl = p[7];
	k->len = IP6_HLEN + plen;

	/* payload length 0 is a jumbogram or offload: use the capture */
	uint32_t end = plen ? IP6_HLEN + plen : len;
	if (len > end)
		len = end;
	k->l3 = p;
	k->l3_caplen = len;

	uint32_t off = IP6_HLEN;
	for (int n = 0;; n++) {
		uint32_t hlen;
		uint8_t b1;

		if (nh != P_HOPOPTS && nh != P_ROUTING && nh != P_DSTOPTS &&
		    nh != P_FRAGMENT && nh != P_AH)
			break;
		if (n >= DEC_MAX_IP6_EXT)
			return dec_fail(c, HS_DERR_TOO_DEEP);
		if (!rd_u8(p, len, off + 1, &b1))
			return dec_fail(c, HS_DERR_TRUNC_IP6_EXT);
		if (nh == P_FRAGMENT)
			hlen = 8;
		else if (nh == P_AH)
			hlen = ((uint32_t)b1 + 2) * 4;
		else
			hlen = ((uint32_t)b1 + 1) * 8;
		if (!rd_have(len, off, hlen))
			return dec_fail(c, HS_DERR_TRUNC_IP6_EXT);
		uint8_t next = p[off];
		if (nh == P_FRAGMENT && (be16(p + off + 2) & 0xfff8)) {
			k->key.proto = next;
			return dec_fail(c, HS_DERR_FRAGMENT);
		}
		nh = next;
		off += hlen;
	}
	k->key.proto = nh;
	if (nh == P_NONE)
		return 0;
	return dec_ipproto(c, nh, p + off, len - off, end - off);
}

int dec_ip_any(struct dctx *c, const uint8_t *p, uint32_t len)
{
	uint8_t v;

	if (!rd_u8(p, len, 0, &v))
		return dec_fail(c, HS_DERR_TRUNC_IP);
	switch (v >> 4) {
	case 4:
		return dec_ipv4(c, p, len);
	case 6:
		return dec_ipv6(c, p, len);
	default:
		return dec_fail(c, HS_DERR_BAD_IP);
	}
}
