/* gre.c - GRE (RFC 2784, RFC 2890, and the RFC 1701 routing field), the
 * IP and MPLS (RFC 4023) it carries, and the ERSPAN headers (draft-foschiano-erspan-03): type I (0x88be, no
 * sequence number, no header), type II (0x88be, 8-byte header, version 1),
 * type III (0x22eb, 12-byte header, version 2, optional 8-byte platform
 * specific subheader)
 */
#include "rd.h"

#define GRE_C 0x8000
#define GRE_R 0x4000
#define GRE_VER 0x0007

#define MAX_SRE 16

/* ERSPAN III frame types */
#define FT_ETHERNET 0
#define FT_IP 2

/* ERSPAN II: ver(4) vlan(12) | cos(3) en(2) t(1) session(10) | rsvd(12) index(20) */
static int dec_erspan2(struct dctx *c, const uint8_t *p, uint32_t len)
{
	struct hs_pkt *k = c->pkt;

	/* version and session are kept even when the rest is cut */
	if (!rd_have(len, 0, 4))
		return dec_fail(c, HS_DERR_TRUNC_ERSPAN);
	if (p[0] >> 4 != 1)
		return dec_fail(c, HS_DERR_BAD_ERSPAN);
	if (!(k->have & HS_HAVE_SESSION)) {
		k->erspan_ver = 1;
		k->session = be16(p + 2) & 0x03ff;
		k->have |= HS_HAVE_ERSPAN | HS_HAVE_SESSION;
	}
	if (!rd_have(len, 0, ERSPAN2_HLEN))
		return dec_fail(c, HS_DERR_TRUNC_ERSPAN);
	return dec_ether(c, p + ERSPAN2_HLEN, len - ERSPAN2_HLEN, false);
}

/* ERSPAN III: ver(4) vlan(12) | cos(3) bso(2) t(1) session(10) | timestamp(32) |
 * sgt(16) | p(1) ft(5) hw(6) d(1) gra(2) o(1); with o set, a platform
 * subheader: platform id(6) ... ; platform 3 carries reserved(12)
 * port index(14) and the upper 32 timestamp bits */
static int dec_erspan3(struct dctx *c, const uint8_t *p, uint32_t len)
{
	struct hs_pkt *k = c->pkt;
	bool first = !(k->have & HS_HAVE_SESSION);

	/* version, session and timestamp are kept even when the rest is cut */
	if (!rd_have(len, 0, 4))
		return dec_fail(c, HS_DERR_TRUNC_ERSPAN);
	if (p[0] >> 4 != 2)
		return dec_fail(c, HS_DERR_BAD_ERSPAN);
	if (first) {
		k->erspan_ver = 2;
		k->session = be16(p + 2) & 0x03ff;
		k->have |= HS_HAVE_ERSPAN | HS_HAVE_SESSION;
		if (rd_have(len, 0, 8)) {
			k->hw_ts = be32(p + 4);
			k->have |= HS_HAVE_HWTS;
		}
	}
	if (!rd_have(len, 0, ERSPAN3_HLEN))
		return dec_fail(c, HS_DERR_TRUNC_ERSPAN);

	uint16_t bits = be16(p + 10);
	uint8_t gra = (bits >> 1) & 3;
	uint8_t ft = (bits >> 10) & 0x1f;
	uint32_t ts = be32(p + 4);
	if (first)
		k->hw_gra = gra;

	uint32_t off = ERSPAN3_HLEN;
	uint64_t hi = 0;
	if (bits & 1) {
		if (!rd_have(len, off, ERSPAN3_PLAT_HLEN))
			return dec_fail(c, HS_DERR_TRUNC_ERSPAN);
		if (p[off] >> 2 == 3)
			hi = be32(p + off + 4);
		off += ERSPAN3_PLAT_HLEN;
	}
	if (first) {
		switch (gra) {
		case 0:		/* 100 microseconds */
			k->hw_ns = (uint64_t)ts * 100000;
			k->have |= HS_HAVE_HWNS;
			break;
		case 1:		/* 100 nanoseconds */
			k->hw_ns = (uint64_t)ts * 100;
			k->have |= HS_HAVE_HWNS;
			break;
		case 2:		/* IEEE 1588: nanoseconds */
			k->hw_ns = hi << 32 | ts;
			k->have |= HS_HAVE_HWNS;
			break;
		default:	/* platform specific: no known unit */
			break;
		}
	}
	switch (ft) {
	case FT_ETHERNET:
		return dec_ether(c, p + off, len - off, false);
	case FT_IP:
		return dec_ip_any(c, p + off, len - off);
	default:
		return dec_fail(c, HS_DERR_NOT_IP);
	}
}

int dec_gre(struct dctx *c, const uint8_t *p, uint32_t len)
{
	if (!dec_enter(c))
		return -1;
	if (!rd_have(len, 0, 4))
		return dec_fail(c, HS_DERR_TRUNC_GRE);

	uint16_t flags = be16(p), proto = be16(p + 2);
	uint32_t off = 4;
	if ((flags & GRE_VER) == 1)	/* PPTP's (RFC 2637): sound, but no mirror format */
		return dec_fail(c, HS_DERR_UNSUP_GRE);
	if (flags & GRE_VER)
		return dec_fail(c, HS_DERR_BAD_GRE);
	if (flags & (GRE_C | GRE_R))
		off += 4;	/* checksum and offset */
	if (flags & GRE_K)
		off += 4;
	if (flags & GRE_S)
		off += 4;
	if (!rd_have(len, 0, off))
		return dec_fail(c, HS_DERR_TRUNC_GRE);
	if (flags & GRE_R) {
		/* RFC 1701 source route entries, ended by a null entry */
		for (int n = 0;; n++) {
			uint16_t af;
			uint8_t sre_len;

			if (n >= MAX_SRE)
				return dec_fail(c, HS_DERR_BAD_GRE);
			if (!rd_be16(p, len, off, &af) || !rd_u8(p, len, off + 3, &sre_len))
				return dec_fail(c, HS_DERR_TRUNC_GRE);
			off += 4 + sre_len;
			if (af == 0 && sre_len == 0)
				break;
		}
		if (!rd_have(len, 0, off))
			return dec_fail(c, HS_DERR_TRUNC_GRE);
	}

	const uint8_t *q = p + off;
	uint32_t n = len - off;
	switch (proto) {
	case 0x88be:
		if (flags & GRE_S) {
			dec_set_mirror(c, HS_ENCAP_ERSPAN2);
			return dec_erspan2(c, q, n);
		}
		dec_set_mirror(c, HS_ENCAP_ERSPAN1);
		return dec_ether(c, q, n, false);
	case 0x22eb:
		dec_set_mirror(c, HS_ENCAP_ERSPAN3);
		return dec_erspan3(c, q, n);
	case 0x6558:
		dec_set_mirror(c, HS_ENCAP_GRE_TEB);
		return dec_ether(c, q, n, false);
	case 0x0800:
		dec_set_mirror(c, HS_ENCAP_GRE_IP);
		return dec_ipv4(c, q, n);
	case 0x86dd:
		dec_set_mirror(c, HS_ENCAP_GRE_IP);
		return dec_ipv6(c, q, n);
	case 0x8847:
	case 0x8848:
		dec_set_mirror(c, HS_ENCAP_GRE_MPLS);
		return dec_mpls(c, q, n);
	case 0x883e:
		/* WCCP redirection: a 4-byte redirect header unless IPv4 follows
		 * at once (WCCPv1) */
		dec_set_mirror(c, HS_ENCAP_GRE_IP);
		if (n && q[0] >> 4 == 4)
			return dec_ipv4(c, q, n);
		if (!rd_have(n, 0, 4))
			return dec_fail(c, HS_DERR_TRUNC_GRE);
		return dec_ipv4(c, q + 4, n - 4);
	default:
		return dec_fail(c, HS_DERR_NOT_IP);
	}
}
