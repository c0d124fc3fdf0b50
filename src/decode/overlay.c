/* overlay.c - UDP overlays down to the tenant frame: VXLAN (RFC 7348,
 * udp/4789), VXLAN-GPE (draft-ietf-nvo3-vxlan-gpe, udp/4790) and Geneve
 * (RFC 8926, udp/6081); and MPLS in UDP (RFC 7510, udp/6635), which has no
 * header of its own
 *
 * The outermost overlay of a frame is its mirror encapsulation: cloud
 * traffic mirroring (AWS VPC Traffic Mirroring, Azure virtual network TAP)
 * delivers each copy in VXLAN from the mirror point, with the session's VNI.
 * Inside another mirror encapsulation an overlay is the tenant's.
 */
#include "rd.h"

#define VXLAN_PORT 4789
#define VXLAN_GPE_PORT 4790
#define GENEVE_PORT 6081
#define MPLS_UDP_PORT 6635
#define OVL_HLEN 8

static int encap_of(uint16_t dport)
{
	return dport == VXLAN_PORT ? HS_ENCAP_VXLAN :
	       dport == VXLAN_GPE_PORT ? HS_ENCAP_VXLAN_GPE : HS_ENCAP_GENEVE;
}

static void set_vni(struct dctx *c, uint16_t dport, const uint8_t *p)
{
	struct hs_pkt *k = c->pkt;

	if (k->have & HS_HAVE_VNI)
		return;		/* the outermost overlay names the network */
	k->vni = be32(p + 4) >> 8;
	k->have |= HS_HAVE_VNI;
	if (dec_set_mirror(c, encap_of(dport)) && !(k->have & HS_HAVE_SESSION)) {
		k->session = k->vni;
		k->have |= HS_HAVE_SESSION;
	}
}

/* a tunnel payload by its EtherType-style protocol */
static int dec_proto(struct dctx *c, uint16_t proto, const uint8_t *p, uint32_t len)
{
	switch (proto) {
	case 0x6558:
		return dec_ether(c, p, len, false);
	case 0x0800:
		return dec_ipv4(c, p, len);
	case 0x86dd:
		return dec_ipv6(c, p, len);
	case 0x8847:
	case 0x8848:
		return dec_mpls(c, p, len);
	default:
		return dec_fail(c, HS_DERR_NOT_IP);
	}
}

int dec_overlay(struct dctx *c, uint16_t dport, const uint8_t *p, uint32_t len)
{
	if (dport == MPLS_UDP_PORT)
		return dec_mpls(c, p, len);
	if (dport != VXLAN_PORT && dport != VXLAN_GPE_PORT && dport != GENEVE_PORT)
		return 1;
	if (!dec_enter(c))
		return -1;
	if (!rd_have(len, 0, OVL_HLEN))
		return dec_fail(c, HS_DERR_TRUNC_TUNNEL);
	set_vni(c, dport, p);

	if (dport == VXLAN_PORT)
		return dec_ether(c, p + OVL_HLEN, len - OVL_HLEN, false);

	if (dport == VXLAN_GPE_PORT) {
		/* without the P bit the payload is Ethernet, as in VXLAN */
		static const uint16_t next[] = { 0, 0x0800, 0x86dd, 0x6558, 0, 0x8847 };
		uint16_t proto = 0x6558;

		if (p[0] & 0x04)
			proto = p[3] < HS_ARRAY_SIZE(next) ? next[p[3]] : 0;
		return dec_proto(c, proto, p + OVL_HLEN, len - OVL_HLEN);
	}

	/* Geneve: ver(2) optlen(6) | flags(8) | protocol(16) | vni(24) rsvd(8) */
	uint32_t off = OVL_HLEN + (uint32_t)(p[0] & 0x3f) * 4;
	if (p[0] >> 6 != 0)
		return dec_fail(c, HS_DERR_NOT_IP);	/* unknown version */
	if (!rd_have(len, 0, off))
		return dec_fail(c, HS_DERR_TRUNC_TUNNEL);
	return dec_proto(c, be16(p + 2), p + off, len - off);
}
