/* predict.c - the common shape of a mirrored frame, decoded in one pass
 *
 * Nearly every frame of a fabric's mirror stream has one shape: Ethernet,
 * IPv4 without options, GRE with a sequence number (and perhaps a key),
 * ERSPAN III (perhaps with its platform subheader) or ERSPAN II, Ethernet,
 * IPv4 without options, TCP. Taken layer by layer that is five calls deep, each layer
 * checking, storing and then overwriting what the one before stored (the
 * outer IP header is the innermost packet until the inner one replaces
 * it). dec_predicted() checks the whole shape first and then stores each
 * field of the result once; a frame of any other shape, or one the general
 * decoder would refuse or cut short, is declined with nothing written, and
 * the general decoder takes it. The result is the general decoder's to the
 * byte: the unit tests decode every frame of the test captures both ways,
 * and every cut and many corruptions of frames of this shape.
 *
 * A worker of several (hs_decode_share) needs only the identity of a frame
 * that is another's: once the shape holds, its inner addresses and IP ID
 * say whose it is, and the fields are stored only for its own.
 */
#include "fanout.h"
#include "rd.h"

#define ETHERTYPE_IP 0x0800
#define GRE_ERSPAN2 0x88be	/* with a sequence number; without, type I */
#define GRE_ERSPAN3 0x22eb
#define PROTO_GRE 47
#define PROTO_TCP 6

/* an IPv4 header without options, not a fragment, total length at least
 * its own, of protocol proto */
static bool plain_ip4(const uint8_t *p, uint8_t proto)
{
	return p[0] == 0x45 && be16(p + 2) >= HS_IPV4_HLEN && !(be16(p + 6) & 0x1fff) &&
	       p[9] == proto;
}

/* k was cleared by the caller; its addresses stay zero past 4 bytes */
static void put_ip4(struct hs_addr *a, const uint8_t *p)
{
	a->af = 4;
	memcpy(a->a, p, 4);
}

/* where the layers of a frame of the common shape are */
struct shape {
	const uint8_t *oip, *ers, *ip, *tcp;
	uint32_t elen, ilen, tlen, doff, tot;
	uint16_t bits;		/* ERSPAN III's last 16 bits; 0 for type II */
	bool v3;		/* ERSPAN III, else II */
	uint64_t hi;		/* the upper timestamp bits of platform 3 */
};

/* the layers from ERSPAN on, of version III (v3) or II, after an outer IP
 * header oip whose view is len bytes and a GRE header of glen bytes: each
 * version is a copy of its own (v3 is a constant where this is inlined),
 * so that it pays for its own checks only */
static inline __attribute__((always_inline)) bool ers_shape(const uint8_t *oip, uint32_t len,
							   uint32_t glen, bool v3,
							   struct shape *sh)
{
	/* ERSPAN III version 2 or ERSPAN II version 1 with Ethernet inside,
	 * then an IPv4 header, all captured; platform 3's subheader holds the
	 * upper timestamp bits */
	if (len < HS_IPV4_HLEN + glen + (v3 ? ERSPAN3_HLEN : ERSPAN2_HLEN))
		return false;
	const uint8_t *ers = oip + HS_IPV4_HLEN + glen;
	uint16_t bits = 0;
	uint32_t elen = ERSPAN2_HLEN;
	uint64_t hi = 0;
	if (v3) {
		bits = be16(ers + 10);
		elen = bits & 1 ? ERSPAN3_HLEN + ERSPAN3_PLAT_HLEN : ERSPAN3_HLEN;
		if (ers[0] >> 4 != 2 || (bits >> 10 & 0x1f) != 0)
			return false;
	} else if (ers[0] >> 4 != 1) {
		return false;
	}
	uint32_t hdrs = HS_IPV4_HLEN + glen + elen + ETH_HLEN;
	if (len < hdrs + HS_IPV4_HLEN)
		return false;
	if (v3 && elen > ERSPAN3_HLEN && ers[ERSPAN3_HLEN] >> 2 == 3)
		hi = be32(ers + ERSPAN3_HLEN + 4);
	const uint8_t *eth = ers + elen;
	const uint8_t *ip = eth + ETH_HLEN;
	if (be16(eth + 12) != ETHERTYPE_IP || !plain_ip4(ip, PROTO_TCP))
		return false;

	/* the inner header's view ends with its total length too; a whole
	 * TCP header with a sane data offset in it */
	uint32_t tot = be16(ip + 2);
	uint32_t ilen = len - hdrs;
	if (ilen > tot)
		ilen = tot;
	if (ilen < HS_IPV4_HLEN + TCP_MIN)
		return false;
	const uint8_t *tcp = ip + HS_IPV4_HLEN;
	uint32_t tlen = ilen - HS_IPV4_HLEN, doff = (uint32_t)(tcp[12] >> 4) * 4;
	if (doff < TCP_MIN || doff > tlen)
		return false;
	*sh = (struct shape){ oip, ers, ip, tcp, elen, ilen, tlen, doff, tot, bits, v3, hi };
	return true;
}

/* the frame's layers when it has the common shape, as the general decoder
 * would take it; false otherwise */
static inline __attribute__((always_inline)) bool shape_of(const uint8_t *d, uint32_t caplen,
							  struct shape *sh)
{
	/* the outer IP header's view ends with its total length */
	if (caplen < ETH_HLEN + HS_IPV4_HLEN || be16(d + 12) != ETHERTYPE_IP)
		return false;
	const uint8_t *oip = d + ETH_HLEN;
	if (!plain_ip4(oip, PROTO_GRE))
		return false;
	uint32_t len = caplen - ETH_HLEN;
	if (len > be16(oip + 2))
		len = be16(oip + 2);

	/* GRE version 0 with a sequence number, perhaps a key, nothing else */
	if (len < HS_IPV4_HLEN + 4)
		return false;
	const uint8_t *gre = oip + HS_IPV4_HLEN;
	uint16_t flags = be16(gre), gproto = be16(gre + 2);
	uint32_t glen = flags == GRE_S ? 8 : flags == (GRE_S | GRE_K) ? 12 : 0;
	if (!glen)
		return false;
	if (gproto == GRE_ERSPAN3)
		return ers_shape(oip, len, glen, true, sh);
	return gproto == GRE_ERSPAN2 && ers_shape(oip, len, glen, false, sh);
}

/* the result, each field stored once into a cleared k */
static inline __attribute__((always_inline)) void store(const struct shape *s, struct hs_pkt *k)
{
	const struct shape sh = *s;
	const uint8_t *oip = sh.oip, *ers = sh.ers, *ip = sh.ip, *tcp = sh.tcp;
	uint32_t ilen = sh.ilen, tlen = sh.tlen, doff = sh.doff, tot = sh.tot;
	uint16_t bits = sh.bits;
	uint64_t hi = sh.hi;

	/* the shape holds: store the result */
	put_ip4(&k->mirror_src, oip + 12);
	put_ip4(&k->mirror_dst, oip + 16);
	k->session = be16(ers + 2) & 0x03ff;
	k->have = HS_HAVE_MIRROR | HS_HAVE_ERSPAN | HS_HAVE_SESSION | HS_HAVE_IP |
		  HS_HAVE_IPID | HS_HAVE_PORTS | HS_HAVE_TCP;
	if (!sh.v3) {		/* type II: no switch time */
		k->encap = HS_ENCAP_ERSPAN2;
		k->erspan_ver = 1;
	} else {
		k->encap = HS_ENCAP_ERSPAN3;
		k->erspan_ver = 2;
		k->hw_ts = be32(ers + 4);
		k->hw_gra = bits >> 1 & 3;
		k->have |= HS_HAVE_HWTS;
		switch (k->hw_gra) {
		case 0:
			k->hw_ns = (uint64_t)k->hw_ts * 100000;
			k->have |= HS_HAVE_HWNS;
			break;
		case 1:
			k->hw_ns = (uint64_t)k->hw_ts * 100;
			k->have |= HS_HAVE_HWNS;
			break;
		case 2:
			k->hw_ns = hi << 32 | k->hw_ts;
			k->have |= HS_HAVE_HWNS;
			break;
		default:
			break;
		}
	}
	put_ip4(&k->key.src, ip + 12);
	put_ip4(&k->key.dst, ip + 16);
	k->key.proto = PROTO_TCP;
	k->key.sport = be16(tcp);
	k->key.dport = be16(tcp + 2);
	k->tos = ip[1];
	k->ttl = ip[8];
	k->ip_id = be16(ip + 4);
	k->len = tot;
	k->l3 = ip;
	k->l3_caplen = ilen;
	k->seq = be32(tcp + 4);
	k->ack = be32(tcp + 8);
	k->tcp_flags = tcp[13];
	k->tcp_hlen = (uint8_t)doff;
	k->l4_len = (uint16_t)(tot - HS_IPV4_HLEN > doff ? tot - HS_IPV4_HLEN - doff : 0);
	k->l4_payload = tcp + doff;
	k->l4_payload_caplen = tlen - doff;
	if (k->key.sport == HS_PORT_BGP || k->key.dport == HS_PORT_BGP)
		k->ctl = HS_CTL_BGP;
}

bool dec_predicted(const uint8_t *d, uint32_t caplen, struct hs_pkt *k)
{
	struct shape sh;

	if (!shape_of(d, caplen, &sh))
		return false;
	store(&sh, k);
	return true;
}

int hs_decode(int dlt, const uint8_t *data, uint32_t caplen, uint32_t wirelen,
	      uint64_t ts_ns, struct hs_pkt *pkt)
{
	struct shape sh;

	/* the shape inlined here, where nearly every frame is decoded: as a
	 * call of its own it cost a tenth more */
	dec_clear(pkt, ts_ns, caplen, wirelen);
	if (dlt != DLT_EN10MB || !data || !shape_of(data, caplen, &sh))
		return dec_layers(dlt, data, caplen, pkt);
	store(&sh, pkt);
	return 0;
}

bool hs_decode_ident(int dlt, const uint8_t *data, uint32_t caplen, uint32_t *hash)
{
	struct shape sh;

	if (dlt != DLT_EN10MB || !data || !shape_of(data, caplen, &sh))
		return false;
	*hash = hs_ident_hash4(sh.ip + 12, sh.ip + 16, PROTO_TCP, be16(sh.ip + 4));
	return true;
}

int hs_decode_share(int dlt, const uint8_t *data, uint32_t caplen, uint32_t wirelen,
		    uint64_t ts_ns, struct hs_pkt *pkt, unsigned shard, unsigned n)
{
	struct shape sh;

	if (n <= 1 || dlt != DLT_EN10MB || !data || !shape_of(data, caplen, &sh))
		return hs_decode(dlt, data, caplen, wirelen, ts_ns, pkt);
	/* hs_ident_hash() of what storing it makes (fanout.h) */
	if (hs_ident_hash4(sh.ip + 12, sh.ip + 16, PROTO_TCP, be16(sh.ip + 4)) % n != shard)
		return 1;
	dec_clear(pkt, ts_ns, caplen, wirelen);
	store(&sh, pkt);
	return 0;
}
