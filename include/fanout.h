/* fanout.h - which worker takes a frame: the inner packet's identity hash,
 * in C for a file and in classic BPF for the kernel's PACKET_FANOUT group
 *
 * Every copy of one original packet carries the same inner packet, whatever
 * switch mirrored it and however it was encapsulated. The identity of that
 * packet is a few words of it: IPv4, its source, its destination and
 * (protocol << 16 | IP ID); IPv6, its two addresses. hs_ident_hash() folds
 * them into 32 bits; a frame goes to worker hash % n, from a file
 * (workers.h, hs_shard) and live, where the kernel runs hs_fanout_prog()'s
 * program on every frame and hands it to the socket of that worker.
 *
 * The program finds the inner packet as hs_decode() does, through Ethernet
 * with up to HS_FANOUT_TAGS 802.1Q/802.1ad tags, IPv4 (its header length)
 * and IPv6 (past up to HS_FANOUT_IP6_EXT extension headers), GRE (its flags
 * give its length, and up to HS_FANOUT_ROUTES source route entries follow
 * its routing bit), ERSPAN I, II and III (with or without the platform
 * subheader; an Ethernet or IP frame), transparent Ethernet bridging, GRE
 * carrying IP, WCCP, IP-in-IP, VXLAN, VXLAN-GPE (its next protocol), Geneve
 * (past its options) and MPLS (up to HS_FANOUT_LABELS labels after
 * Ethernet, in GRE, in UDP or in Geneve; IP at the bottom of the stack, or
 * an Ethernet pseudowire whose control word is told as the decoder tells
 * it), HS_FANOUT_LEVELS headers deep at most; a plain SPAN copy is its own
 * inner packet. What the decoder refuses (MPLS's associated channel, a
 * later fragment, a header cut short) goes to worker 0, as hs_shard()
 * sends it, and so does what the program does not read though the decoder
 * does (deeper nesting, more extension headers or route entries), every
 * copy of it.
 */
#ifndef HS_FANOUT_H
#define HS_FANOUT_H

#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdint.h>

#include "decode.h"

#define HS_FANOUT_LEVELS 6	/* IP headers, the mirror's own included */
#define HS_FANOUT_TAGS 8	/* VLAN tags per Ethernet header, as the decoder takes */
#define HS_FANOUT_LABELS 16	/* MPLS labels per stack, as the decoder takes */
/* IPv6 extension headers before what a header carries, and GRE source
 * route entries, read: fewer than the decoder takes (16 each), within the
 * kernel's limit of instructions */
#define HS_FANOUT_IP6_EXT 8
#define HS_FANOUT_ROUTES 4
#define HS_FANOUT_MAX_INSNS 4096	/* the kernel's limit for a classic program */

#define HS_IDENT_SEED 0x811c9dc5u
#define HS_IDENT_PRIME 0x01000193u
#define HS_IDENT_MIX1 0x7feb352du
#define HS_IDENT_MIX2 0x846ca68bu

static inline uint32_t hs_ident_fold(uint32_t h, uint32_t w)
{
	return (h ^ w) * HS_IDENT_PRIME;
}

static inline uint32_t hs_ident_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint32_t hs_ident_mix(uint32_t h)
{
	h ^= h >> 16;
	h *= HS_IDENT_MIX1;
	h ^= h >> 15;
	h *= HS_IDENT_MIX2;
	h ^= h >> 16;
	return h;
}

/* the identity hash of an IPv4 packet: its addresses (4 bytes each, as
 * on the wire), protocol and IP ID */
static inline uint32_t hs_ident_hash4(const uint8_t *src, const uint8_t *dst, uint8_t proto,
				      uint16_t ip_id)
{
	uint32_t h = HS_IDENT_SEED;

	h = hs_ident_fold(h, hs_ident_be32(src));
	h = hs_ident_fold(h, hs_ident_be32(dst));
	h = hs_ident_fold(h, (uint32_t)proto << 16 | ip_id);
	return hs_ident_mix(h);
}

/* the identity hash of a decoded frame with an inner IP packet */
static inline uint32_t hs_ident_hash(const struct hs_pkt *p)
{
	uint32_t h = HS_IDENT_SEED;

	if (p->key.src.af != 6)
		return hs_ident_hash4(p->key.src.a, p->key.dst.a, p->key.proto, p->ip_id);
	for (int i = 0; i < 16; i += 4)
		h = hs_ident_fold(h, hs_ident_be32(p->key.src.a + i));
	for (int i = 0; i < 16; i += 4)
		h = hs_ident_fold(h, hs_ident_be32(p->key.dst.a + i));
	return hs_ident_mix(h);
}


/* The program for frames of link type dlt (Ethernet, or raw IP), its loads
 * at base + offset: 0 reads the frame as libpcap's bpf_filter() gets it,
 * SKF_LL_OFF as the kernel's fanout gets it (from the link header, whether
 * the frame came in or went out). Its result is the identity hash, or 0 for
 * a frame it does not read. The number of instructions, or -1 for another
 * link type. */
int hs_fanout_prog(int dlt, int32_t base, struct bpf_insn *out, size_t max);

/* whether the kernel's fanout program can share out frames of link type
 * dlt; false with why ("link type NAME (N) is read by one worker") */
bool hs_fanout_link_ok(int dlt, char *why, size_t len);

/* Put the live handles pcs[0..n-1], open on one interface of link type
 * dlt, in one fanout group of their own whose program is hs_fanout_prog():
 * the kernel gives each frame to one of them, pcs[hash % n]. 0, or -1 with
 * err ("what: why"). */
int hs_fanout_join(pcap_t *const *pcs, unsigned n, int dlt, char *err, size_t errlen);

#endif
