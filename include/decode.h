/* decode.h - mirrored frame -> mirror metadata + innermost packet
 *
 * Every read is bounds checked against the captured length; a frame that
 * cannot be decoded has pkt->error set to a reason and is counted, never
 * read past its end. hs_decode() allocates nothing.
 */
#ifndef HS_DECODE_H
#define HS_DECODE_H

#include <stdio.h>

#include "hs.h"

enum hs_encap {
	HS_ENCAP_NONE = 0,	/* plain SPAN copy, or no mirror header */
	HS_ENCAP_ERSPAN1,	/* GRE 0x88BE without sequence bit */
	HS_ENCAP_ERSPAN2,	/* GRE 0x88BE, ERSPAN version 1 */
	HS_ENCAP_ERSPAN3,	/* GRE 0x22EB, ERSPAN version 2 */
	HS_ENCAP_GRE_TEB,	/* GRE 0x6558 */
	HS_ENCAP_GRE_IP,	/* GRE 0x0800 / 0x86DD */
	HS_ENCAP_IPIP,		/* IPv4/IPv6 in IPv4 (4, 41), IPv4 in IPv6 */
	HS_ENCAP_VXLAN,		/* UDP 4789 (cloud traffic mirroring): session = VNI */
	HS_ENCAP_VXLAN_GPE,	/* UDP 4790: session = VNI */
	HS_ENCAP_GENEVE,	/* UDP 6081: session = VNI */
	HS_ENCAP_GRE_MPLS,	/* GRE 0x8847 / 0x8848 */
	HS_ENCAP__COUNT
};

/* Why a frame could not be decoded. Names are stable (JSON, history). */
#define HS_DERR_LIST(X) \
	X(NONE, "none") \
	X(TRUNC_LINK, "truncated-link") \
	X(TRUNC_VLAN, "truncated-vlan") \
	X(TRUNC_IP, "truncated-ip") \
	X(BAD_IP, "bad-ip-header") \
	X(TRUNC_IP6, "truncated-ipv6") \
	X(TRUNC_IP6_EXT, "truncated-ipv6-ext") \
	X(TRUNC_GRE, "truncated-gre") \
	X(BAD_GRE, "bad-gre") \
	X(UNSUP_GRE, "unsupported-gre") \
	X(TRUNC_ERSPAN, "truncated-erspan") \
	X(BAD_ERSPAN, "bad-erspan") \
	X(TRUNC_L4, "truncated-l4") \
	X(TRUNC_TUNNEL, "truncated-tunnel") \
	X(TRUNC_MPLS, "truncated-mpls") \
	X(FRAGMENT, "fragment") \
	X(NOT_IP, "not-ip") \
	X(TOO_DEEP, "too-deep") \
	X(LINKTYPE, "unsupported-linktype")

enum hs_derr {
#define HS_DERR_ENUM(id, name) HS_DERR_##id,
	HS_DERR_LIST(HS_DERR_ENUM)
#undef HS_DERR_ENUM
	HS_DERR__COUNT
};

/* flags in hs_pkt.have */
#define HS_HAVE_MIRROR	0x0001	/* mirror_src/dst valid */
#define HS_HAVE_ERSPAN	0x0002	/* erspan_ver valid (and session) */
#define HS_HAVE_HWTS	0x0004	/* hw_ts valid (ERSPAN III) */
#define HS_HAVE_IP	0x0008	/* innermost IP header decoded */
#define HS_HAVE_PORTS	0x0010	/* sport/dport valid (TCP/UDP) */
#define HS_HAVE_TCP	0x0020	/* tcp_flags, seq, ack valid */
#define HS_HAVE_ICMP	0x0040	/* icmp_type/code valid */
#define HS_HAVE_IPID	0x0080	/* ip_id valid (IPv4) */
#define HS_HAVE_VNI	0x0100	/* passed a VXLAN or Geneve overlay */
#define HS_HAVE_VLAN	0x0200	/* outermost 802.1Q/802.1ad tag seen */
#define HS_HAVE_HWNS	0x0400	/* hw_ns valid */
#define HS_HAVE_SESSION	0x0800	/* session valid: ERSPAN's, or a VXLAN/Geneve
				 * mirror's VNI */

#define HS_IPV4_HLEN	20	/* an IPv4 header without options, the shortest */

/* control traffic found by the decoder (hs_pkt.ctl); its fields are decoded
 * only when asked, by hs_ctl_decode() */
enum hs_ctl_proto {
	HS_CTL_NONE = 0,
	HS_CTL_BGP,		/* TCP port 179: l4_payload holds its messages */
	HS_CTL_ROCE,		/* UDP port 4791 (RoCEv2): l4_payload starts with the BTH */
	HS_CTL_PFC,		/* ethertype 0x8808 (MAC control): l4_payload is the frame
				 * after the type, though it is no TCP/UDP payload */
	HS_CTL__COUNT
};

struct hs_pkt {
	uint32_t frame;		/* 1-based frame number in the source */
	uint64_t ts_ns;		/* capture time */
	uint32_t caplen, wirelen;
	uint32_t have;		/* HS_HAVE_* */
	uint8_t encap;		/* enum hs_encap: the outermost mirror encapsulation */
	uint8_t error;		/* enum hs_derr */
	uint8_t ctl;		/* enum hs_ctl_proto: control traffic, or HS_CTL_NONE */

	/* mirror metadata (in an order that leaves no holes: the whole
	 * struct is three cache lines, which a frame's pipeline entry fills) */
	struct hs_addr mirror_src, mirror_dst;
	uint8_t erspan_ver;	/* header version field: 1 = type II, 2 = type III */
	uint8_t hw_gra;		/* ERSPAN III granularity (0=100us 1=100ns 2=IEEE1588 3=platform) */
	uint8_t mpls_n;		/* entries of the label stack at mpls */
	uint32_t session;	/* ERSPAN session (span) id; the VNI of a
				 * VXLAN or Geneve mirror */
	uint32_t hw_ts;		/* ERSPAN III timestamp field, raw */
	uint32_t vni;		/* VXLAN/Geneve VNI */
	uint64_t hw_ns;		/* switch time in ns when derivable (HS_HAVE_HWNS):
				 * gra 1: ts*100; gra 2: ns, upper 32 bits from a
				 * platform-id 3 subheader when present */
	const uint8_t *mpls;	/* the outermost MPLS label stack in the frame
				 * buffer (hs_mpls_label), or NULL */
	uint16_t vlan;		/* outermost VLAN id */

	/* innermost packet */
	struct hs_flowkey key;	/* src, dst, proto, sport, dport */
	uint8_t ttl;		/* IPv4 TTL or IPv6 hop limit */
	uint8_t tos;		/* IPv4 TOS / IPv6 traffic class (DSCP<<2 | ECN) */
	uint16_t ip_id;
	uint8_t tcp_flags;	/* low 8 flag bits: FIN=1 SYN=2 RST=4 PSH=8 ACK=16 URG=32 ECE=64 CWR=128 */
	uint8_t tcp_hlen;	/* TCP header length, options included: they end
				 * at l4_payload */
	uint32_t seq, ack;
	uint16_t l4_len;	/* L4 payload length (TCP/UDP data bytes) */
	uint8_t icmp_type, icmp_code;
	uint32_t len;		/* inner IP total length (IPv6: 40 + payload length) */
	const uint8_t *l3;	/* innermost IP header inside the frame buffer */
	uint32_t l3_caplen;	/* captured bytes from l3 to the end (clamped to len) */
	const uint8_t *l4_payload; /* start of the TCP/UDP payload (see ctl), or NULL */
	uint32_t l4_payload_caplen;
};

/* link types: pcap DLT values accepted by hs_decode */
bool hs_decode_linktype_ok(int dlt);

/* Decode one frame. Returns 0 when an innermost IP packet was found, -1 with
 * pkt->error set otherwise. pkt is fully overwritten. */
int hs_decode(int dlt, const uint8_t *data, uint32_t caplen, uint32_t wirelen,
	      uint64_t ts_ns, struct hs_pkt *pkt);
/* The same, always layer by layer: hs_decode takes the common shape of a
 * mirrored frame (ERSPAN III or II of IPv4 TCP) in one pass, to the same result */
int hs_decode_general(int dlt, const uint8_t *data, uint32_t caplen, uint32_t wirelen,
		      uint64_t ts_ns, struct hs_pkt *pkt);
/* hs_decode for worker shard of n (workers.h, hs_shard): 1, pkt not
 * written, for a frame of the common shape whose identity hash (fanout.h),
 * read from its bytes, gives it to another worker; else hs_decode's answer */
int hs_decode_share(int dlt, const uint8_t *data, uint32_t caplen, uint32_t wirelen,
		    uint64_t ts_ns, struct hs_pkt *pkt, unsigned shard, unsigned n);
/* the identity hash (fanout.h) of a frame of the common shape, read from
 * its bytes: false for any other frame, which only decoding tells */
bool hs_decode_ident(int dlt, const uint8_t *data, uint32_t caplen, uint32_t *hash);

const char *hs_encap_name(int encap);	/* "erspan3", "none", ... */

/* label stack entry i (0 the top) of p's MPLS label stack */
struct hs_mpls_lse {
	uint32_t label;		/* 20 bits */
	uint8_t tc, ttl;
};
void hs_mpls_label(const struct hs_pkt *p, unsigned i, struct hs_mpls_lse *l);
const char *hs_derr_name(int err);	/* "truncated-ip", ... */

/* one line per frame: the `decode --json` object, and a tcpdump-like summary */
void hs_pkt_json(FILE *fp, const struct hs_pkt *p);
void hs_pkt_text(FILE *fp, const struct hs_pkt *p);

/* ---- control traffic: BGP, RoCEv2, MAC control (PAUSE and PFC) ------------
 * src/decode/control.c. hs_decode() only marks a frame (hs_pkt.ctl), its
 * control payload in l4_payload; hs_ctl_decode() reads the fields, message
 * by message, into caller storage: it allocates nothing and reads nothing
 * past l4_payload_caplen. */

/* Why a control message could not be decoded. Names are stable (JSON). */
#define HS_CERR_LIST(X) \
	X(NONE, "none") \
	X(TRUNC_BGP, "truncated-bgp") \
	X(BGP_SPLIT, "bgp-split") \
	X(BAD_BGP, "bad-bgp") \
	X(TRUNC_BTH, "truncated-bth") \
	X(TRUNC_AETH, "truncated-aeth") \
	X(TRUNC_MACC, "truncated-mac-control") \
	X(OTHER_MACC, "other-mac-control")

enum hs_cerr {
#define HS_CERR_ENUM(id, name) HS_CERR_##id,
	HS_CERR_LIST(HS_CERR_ENUM)
#undef HS_CERR_ENUM
	HS_CERR__COUNT
};

/* BGP message types (RFC 4271 4.1, RFC 2918) */
enum { HS_BGP_OPEN = 1, HS_BGP_UPDATE = 2, HS_BGP_NOTIFICATION = 3,
       HS_BGP_KEEPALIVE = 4, HS_BGP_ROUTE_REFRESH = 5 };

struct hs_bgp_msg {
	uint8_t type;
	uint16_t len;		/* message length, header included */
	/* OPEN */
	uint8_t version;
	uint16_t as;		/* My Autonomous System (AS_TRANS 23456 with as4) */
	uint32_t as4;		/* the four-octet AS capability (RFC 6793), 0 none */
	uint16_t hold;
	uint32_t bgp_id;	/* host order */
	/* NOTIFICATION */
	uint8_t err_code, err_subcode;
	/* UPDATE: section lengths and the prefixes they hold */
	uint16_t withdrawn_len, attr_len, nlri_len;
	uint16_t withdrawn, nlri;	/* prefix counts */
	bool counts_ok;		/* the prefix lists parsed cleanly */
};

/* RoCEv2: InfiniBand BTH (IBTA vol. 1, 9.2) and AETH (9.3.5) */
#define HS_ROCE_CNP 0x81	/* congestion notification packet */
enum hs_roce_ack { HS_ROCE_NOAETH = 0, HS_ROCE_ACK, HS_ROCE_RNR_NAK, HS_ROCE_NAK,
		   HS_ROCE_RESERVED };

struct hs_roce_pkt {
	uint8_t opcode;
	bool se, migreq, ackreq;
	uint8_t padcnt, tver;
	uint16_t pkey;
	uint32_t qp;		/* destination QP, 24 bits */
	uint32_t psn;		/* 24 bits */
	bool aeth;		/* an AETH follows (acknowledge, read response) */
	uint8_t syndrome;
	uint32_t msn;
	uint8_t ack;		/* enum hs_roce_ack, from the syndrome */
	uint8_t nak_code;	/* NAK: 0 PSN sequence error, 1 invalid request,
				 * 2 remote access error, 3 remote operational error,
				 * 4 invalid RD request; RNR NAK: the timer */
};

/* MAC control (IEEE 802.3 annex 31B PAUSE, 802.1Qbb PFC) */
#define HS_MACC_PAUSE 0x0001
#define HS_MACC_PFC 0x0101
struct hs_pfc_frame {
	uint16_t opcode;
	uint16_t class_enable;	/* PFC: priority-enable vector (low 8 bits) */
	uint16_t quanta[8];	/* PAUSE: quanta[0]; PFC: per priority */
};

struct hs_ctl_msg {
	uint8_t proto;		/* enum hs_ctl_proto */
	union {
		struct hs_bgp_msg bgp;
		struct hs_roce_pkt roce;
		struct hs_pfc_frame pfc;
	} u;
};

/* Decode the next control message of p from *off (start at 0). Returns 1
 * with *m filled and *off advanced, 0 when there is nothing more, -1 with
 * *err (enum hs_cerr) when the rest cannot be decoded. BGP segments may hold
 * several messages; RoCEv2 and MAC control hold one. */
int hs_ctl_decode(const struct hs_pkt *p, uint32_t *off, struct hs_ctl_msg *m, int *err);

const char *hs_ctl_proto_name(int proto);	/* "bgp", "roce", "pfc" */
const char *hs_cerr_name(int err);
const char *hs_bgp_type_name(int type);		/* "open", ..., "type-9" -> NULL */
const char *hs_roce_opcode_name(int opcode);	/* "rc-send-only", ...; NULL unknown */
const char *hs_roce_ack_name(int ack);		/* "ack", "rnr-nak", "nak", ... */
const char *hs_roce_nak_name(int code);		/* "psn-sequence-error", ... */


#endif
