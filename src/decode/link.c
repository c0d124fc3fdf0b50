/* link.c - link layers: Ethernet with stacked 802.1Q/802.1ad tags, Linux
 * cooked capture v1 and v2, raw IP, PPP
 *
 * Ethernet II per IEEE 802.3 clause 3; tags per IEEE 802.1Q (0x8100 C-tag,
 * 0x88a8 S-tag, and the pre-standard 0x9100); SLL and SLL2 as documented at
 * tcpdump.org/linktypes; PPP (RFC 1661, with or without the HDLC address
 * and control bytes of RFC 1662 and a compressed protocol field), carrying
 * IPv4, IPv6 (RFC 5072) or MPLS (RFC 3032), as MPLS core links do.
 */
#include "rd.h"

#define SLL_HLEN 16
#define SLL2_HLEN 20
#define LINKTYPE_RAW 101	/* the file value; libpcap maps it to DLT_RAW */
#define LINKTYPE_PPP_HDLC 50	/* PPP in HDLC-like framing */
#ifndef DLT_IPV4
#define DLT_IPV4 228
#define DLT_IPV6 229
#endif

static bool is_tag(uint16_t type)
{
	return type == 0x8100 || type == 0x88a8 || type == 0x9100;
}

int dec_ethertype(struct dctx *c, uint16_t type, const uint8_t *p, uint32_t len,
		  bool link)
{
	uint32_t off = 0;
	int tags = 0;

	while (is_tag(type)) {
		uint16_t tci;

		if (++tags > DEC_MAX_TAGS)
			return dec_fail(c, HS_DERR_TOO_DEEP);
		if (!rd_be16(p, len, off, &tci) || !rd_be16(p, len, off + 2, &type))
			return dec_fail(c, HS_DERR_TRUNC_VLAN);
		if (link && tags == 1) {
			c->pkt->vlan = tci & 0x0fff;
			c->pkt->have |= HS_HAVE_VLAN;
		}
		off += 4;
	}
	switch (type) {
	case 0x0800:
		return dec_ipv4(c, p + off, len - off);
	case 0x86dd:
		return dec_ipv6(c, p + off, len - off);
	case 0x8847:		/* MPLS unicast */
	case 0x8848:		/* MPLS multicast */
		return dec_mpls(c, p + off, len - off);
	case HS_ETHERTYPE_MACC:
		/* PAUSE / PFC: not IP, but control traffic the control log keeps */
		c->pkt->ctl = HS_CTL_PFC;
		c->pkt->l4_payload = p + off;
		c->pkt->l4_payload_caplen = len - off;
		return dec_fail(c, HS_DERR_NOT_IP);
	default:
		return dec_fail(c, HS_DERR_NOT_IP);	/* ARP, LLDP, 802.3/LLC, ... */
	}
}

int dec_ether(struct dctx *c, const uint8_t *p, uint32_t len, bool link)
{
	uint16_t type;

	if (!dec_enter(c))
		return -1;
	if (!rd_have(len, 0, ETH_HLEN))
		return dec_fail(c, HS_DERR_TRUNC_LINK);
	type = be16(p + 12);
	return dec_ethertype(c, type, p + ETH_HLEN, len - ETH_HLEN, link);
}

static int dec_ppp(struct dctx *c, const uint8_t *p, uint32_t len)
{
	uint32_t off = 0;
	uint16_t proto;

	if (rd_have(len, 0, 2) && p[0] == 0xff && p[1] == 0x03)
		off = 2;	/* address and control */
	if (!rd_have(len, off, 1))
		return dec_fail(c, HS_DERR_TRUNC_LINK);
	if (p[off] & 1) {	/* a compressed one-byte protocol */
		proto = p[off];
		off += 1;
	} else {
		if (!rd_be16(p, len, off, &proto))
			return dec_fail(c, HS_DERR_TRUNC_LINK);
		off += 2;
	}
	switch (proto) {
	case 0x0021:
		return dec_ipv4(c, p + off, len - off);
	case 0x0057:
		return dec_ipv6(c, p + off, len - off);
	case 0x0281:
	case 0x0283:
		return dec_mpls(c, p + off, len - off);
	default:
		return dec_fail(c, HS_DERR_NOT_IP);	/* LCP, IPCP, ... */
	}
}

int dec_link(struct dctx *c, int dlt, const uint8_t *p, uint32_t len)
{
	switch (dlt) {
	case DLT_EN10MB:
		return dec_ether(c, p, len, true);
	case DLT_LINUX_SLL:
		if (!rd_have(len, 0, SLL_HLEN))
			return dec_fail(c, HS_DERR_TRUNC_LINK);
		return dec_ethertype(c, be16(p + 14), p + SLL_HLEN, len - SLL_HLEN, true);
	case DLT_LINUX_SLL2:
		if (!rd_have(len, 0, SLL2_HLEN))
			return dec_fail(c, HS_DERR_TRUNC_LINK);
		return dec_ethertype(c, be16(p), p + SLL2_HLEN, len - SLL2_HLEN, true);
	case DLT_RAW:
	case LINKTYPE_RAW:
		return dec_ip_any(c, p, len);
	case DLT_PPP:
	case LINKTYPE_PPP_HDLC:
		return dec_ppp(c, p, len);
	case DLT_IPV4:
		return dec_ipv4(c, p, len);
	case DLT_IPV6:
		return dec_ipv6(c, p, len);
	default:
		return dec_fail(c, HS_DERR_LINKTYPE);
	}
}
