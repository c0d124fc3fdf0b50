/* rd.h - bounds-checked readers over captured bytes, and the decoder's
 * internal context shared by the per-layer files
 *
 * Every header field is read by byte offset through these helpers; nothing
 * is cast to a struct and nothing is read past the view's length. A reader
 * returns false when the field does not fit, and the layer turns that into
 * its truncation reason.
 */
#ifndef HS_DECODE_RD_H
#define HS_DECODE_RD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "decode.h"

/* Linux cooked capture v2, which libpcap before 1.10 does not name */
#include <pcap/dlt.h>
#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

/* n bytes at off fit in a view of len bytes (no overflow for any inputs) */
static inline bool rd_have(uint32_t len, uint32_t off, uint32_t n)
{
	return off <= len && n <= len - off;
}

static inline bool rd_u8(const uint8_t *p, uint32_t len, uint32_t off, uint8_t *v)
{
	if (!rd_have(len, off, 1))
		return false;
	*v = p[off];
	return true;
}

static inline bool rd_be16(const uint8_t *p, uint32_t len, uint32_t off, uint16_t *v)
{
	if (!rd_have(len, off, 2))
		return false;
	*v = (uint16_t)(p[off] << 8 | p[off + 1]);
	return true;
}

static inline bool rd_be32(const uint8_t *p, uint32_t len, uint32_t off, uint32_t *v)
{
	if (!rd_have(len, off, 4))
		return false;
	*v = (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 |
	     (uint32_t)p[off + 2] << 8 | p[off + 3];
	return true;
}

static inline bool rd_bytes(const uint8_t *p, uint32_t len, uint32_t off, void *dst,
			    uint32_t n)
{
	if (!rd_have(len, off, n))
		return false;
	memcpy(dst, p + off, n);
	return true;
}

/* The unchecked forms, for fields inside a span already checked with
 * rd_have(). */
static inline uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Layers a frame may nest (link, tags, IP, tunnels) before it is refused. */
#define DEC_MAX_DEPTH 24
#define DEC_MAX_TAGS 8
#define DEC_MAX_IP6_EXT 16
#define DEC_MAX_LABELS 16

struct dctx {
	struct hs_pkt *pkt;
	int depth;
};

static inline int dec_fail(struct dctx *c, int err)
{
	c->pkt->error = (uint8_t)err;
	return -1;
}

/* enter one more layer; false (and too-deep) past the limit */
static inline bool dec_enter(struct dctx *c)
{
	if (++c->depth > DEC_MAX_DEPTH) {
		c->pkt->error = HS_DERR_TOO_DEEP;
		return false;
	}
	return true;
}

/* the outermost mirror encapsulation: taken from the IP header around it;
 * false when an enclosing one has already been taken */
bool dec_set_mirror(struct dctx *c, int encap);

/* lengths and flags more than one layer's file reads (the ERSPAN shape
 * that predict.c checks is gre.c's) */
#define ETH_HLEN 14
#define TCP_MIN 20		/* a TCP header without options */
#define GRE_K 0x2000		/* GRE flags: a key, a sequence number */
#define GRE_S 0x1000
#define ERSPAN2_HLEN 8
#define ERSPAN3_HLEN 12
#define ERSPAN3_PLAT_HLEN 8	/* ERSPAN III's platform subheader, when the O bit is set */

/* control traffic: marked while decoding, its fields read by hs_ctl_decode() */
#define HS_PORT_BGP 179
#define HS_PORT_ROCE 4791
#define HS_ETHERTYPE_MACC 0x8808

/* link.c */
int dec_ether(struct dctx *c, const uint8_t *p, uint32_t len, bool link);
int dec_ethertype(struct dctx *c, uint16_t type, const uint8_t *p, uint32_t len,
		  bool link);
int dec_link(struct dctx *c, int dlt, const uint8_t *p, uint32_t len);

/* ip.c */
int dec_ipv4(struct dctx *c, const uint8_t *p, uint32_t len);
int dec_ipv6(struct dctx *c, const uint8_t *p, uint32_t len);
int dec_ip_any(struct dctx *c, const uint8_t *p, uint32_t len);

/* mpls.c: a label stack and what its bottom carries */
int dec_mpls(struct dctx *c, const uint8_t *p, uint32_t len);

/* gre.c */
int dec_gre(struct dctx *c, const uint8_t *p, uint32_t len);

/* predict.c: the common shape (Ethernet, IPv4, GRE, ERSPAN III or II, Ethernet,
 * IPv4, TCP) in one pass into a cleared k; false, nothing written, for
 * any other frame */
bool dec_predicted(const uint8_t *d, uint32_t caplen, struct hs_pkt *k);

/* decode.c: a frame layer by layer, into pkt cleared by dec_clear: 0, or
 * -1 with pkt->error */
int dec_layers(int dlt, const uint8_t *data, uint32_t caplen, struct hs_pkt *pkt);

/* pkt cleared, and what is known before a byte is read */
static inline void dec_clear(struct hs_pkt *pkt, uint64_t ts_ns, uint32_t caplen,
			     uint32_t wirelen)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->ts_ns = ts_ns;
	pkt->caplen = caplen;
	pkt->wirelen = wirelen;
}

/* overlay.c: UDP payload to a tunnel port; 1 when dport is no tunnel */
int dec_overlay(struct dctx *c, uint16_t dport, const uint8_t *p, uint32_t len);

#endif
