/* mpls.c - MPLS label stacks (RFC 3032; EtherTypes 0x8847 and 0x8848, and
 * in GRE per RFC 4023) down to what the bottom of the stack carries
 *
 * MPLS names no payload type: as routers and TShark do, the first nibble
 * after the stack tells (RFC 4928, RFC 4385): 4 is IPv4, 6 is IPv6, 1 is
 * the associated channel (RFC 5586: OAM, no IP), 0 is an Ethernet
 * pseudowire (RFC 4448) with its control word or one without it whose
 * destination MAC address starts with a zero nibble, as most vendors' do
 * (whichever puts an EtherType we decode where Ethernet's is, the control
 * word first); anything else is an Ethernet pseudowire without a control
 * word.
 */
#include "rd.h"

#define LSE_LEN 4
#define LSE_BOS 0x100		/* bottom of stack */
#define PW_CW_LEN 4
#define ETH_TYPE_OFF 12

/* an Ethernet frame at off would carry something decoded here */
static bool eth_at(const uint8_t *p, uint32_t len, uint32_t off)
{
	uint16_t t;

	if (!rd_be16(p, len, off + ETH_TYPE_OFF, &t))
		return false;
	return t == 0x0800 || t == 0x86dd || t == 0x8100 || t == 0x88a8 || t == 0x9100 ||
	       t == 0x8847 || t == 0x8848;
}

int dec_mpls(struct dctx *c, const uint8_t *p, uint32_t len)
{
	struct hs_pkt *k = c->pkt;
	uint32_t off = 0, lse;
	uint8_t n = 0, nib;

	if (!dec_enter(c))
		return -1;
	do {
		if (++n > DEC_MAX_LABELS)
			return dec_fail(c, HS_DERR_TOO_DEEP);
		if (!rd_be32(p, len, off, &lse))
			return dec_fail(c, HS_DERR_TRUNC_MPLS);
		off += LSE_LEN;
	} while (!(lse & LSE_BOS));
	if (!k->mpls_n) {	/* the outermost stack is the one shown */
		k->mpls = p;
		k->mpls_n = n;
	}
	if (!rd_u8(p, len, off, &nib))
		return dec_fail(c, HS_DERR_TRUNC_MPLS);
	switch (nib >> 4) {
	case 4:
		return dec_ipv4(c, p + off, len - off);
	case 6:
		return dec_ipv6(c, p + off, len - off);
	case 0:
		if (!rd_have(len, off, PW_CW_LEN))
			return dec_fail(c, HS_DERR_TRUNC_MPLS);
		if (eth_at(p, len, off + PW_CW_LEN) || !eth_at(p, len, off))
			off += PW_CW_LEN;
		return dec_ether(c, p + off, len - off, false);
	case 1:
		return dec_fail(c, HS_DERR_NOT_IP);
	default:
		return dec_ether(c, p + off, len - off, false);
	}
}

void hs_mpls_label(const struct hs_pkt *p, unsigned i, struct hs_mpls_lse *l)
{
	uint32_t v = i < p->mpls_n ? be32(p->mpls + i * LSE_LEN) : 0;

	l->label = v >> 12;
	l->tc = (uint8_t)(v >> 9 & 7);
	l->ttl = (uint8_t)v;
}
