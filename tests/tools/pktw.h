/* pktw.h - build test frames: an inner IP packet, optionally wrapped in a
 * mirror encapsulation, as the bytes of one captured frame. Used by the
 * golden-capture and sample generators and by the unit tests. */
#ifndef HS_PKTW_H
#define HS_PKTW_H

#include <stdio.h>
#include <pcap/pcap.h>
#include "hs.h"
#include "decode.h"

struct pktw_inner {
	struct hs_flowkey key;	/* key.src.af chooses IPv4 or IPv6; proto 6, 17, 1 or 58 */
	uint8_t ttl, tos;
	uint16_t ip_id;
	uint8_t tcp_flags;
	uint32_t seq, ack;
	uint16_t window;
	uint8_t icmp_type, icmp_code;
	uint16_t payload_len;	/* filled with payload[] or a pattern */
	const uint8_t *payload;
	bool ip_options;	/* IPv4: add a 4-byte NOP/EOL option */
	bool ip6_ext;		/* IPv6: add a hop-by-hop and a destination-options header */
};

/* inner IPv4/IPv6 + TCP/UDP/ICMP with correct lengths and checksums; length or 0 */
size_t pktw_inner(uint8_t *buf, size_t cap, const struct pktw_inner *in);

struct pktw_mirror {
	int encap;		/* enum hs_encap; HS_ENCAP_NONE = plain Ethernet frame */
	struct hs_addr src, dst;	/* outer addresses */
	uint16_t session;
	uint32_t hw_ts;		/* ERSPAN III timestamp field */
	uint8_t gra;		/* ERSPAN III granularity */
	bool platform3;		/* ERSPAN III: add platform-id 3 subheader with ts_hi */
	uint32_t ts_hi;
	uint16_t vlan;		/* outer 802.1Q tag when nonzero */
	uint16_t vlan2;		/* second (802.1ad QinQ: vlan is the S-tag) when nonzero */
	bool gre_csum, gre_key;	/* GRE options (sequence follows the encapsulation) */
	uint32_t gre_keyval, gre_seq;
	int overlay;		/* 0, 4789 (VXLAN) or 6081 (Geneve) around the inner frame */
	uint32_t vni;
	bool gre_seqf;		/* GRE/TEB and GRE/IP: add a sequence number too */
	uint16_t ethertype;	/* nonzero: the inner bytes are no IP packet but the
				 * payload of an Ethernet frame of this type (MAC
				 * control 0x8808 goes to 01:80:c2:00:00:01) */
	uint8_t mpls_n;		/* MPLS labels around the inner packet, top first:
				 * the frame's (EtherType 0x8847), or in GRE with
				 * encap HS_ENCAP_GRE_MPLS */
	uint32_t mpls[4];
	bool mpls_mcast;	/* EtherType / GRE protocol 0x8848 */
	bool pptp;		/* GRE: PPTP's version 1, carrying PPP */
	int pw;			/* 0: IP at the bottom of the stack; 1: an Ethernet
				 * pseudowire; 2: one with a control word */
};

/* whole frame for link type dlt (DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2,
 * DLT_RAW): link header + outer IP + encapsulation + inner; length or 0 */
size_t pktw_frame(uint8_t *buf, size_t cap, int dlt, const struct pktw_mirror *m,
		  const uint8_t *inner, size_t inner_len);

/* pcap file writer */
struct pktw_file {
	pcap_t *dead;
	pcap_dumper_t *dump;
};
int pktw_open(struct pktw_file *f, const char *path, int dlt);
void pktw_write(struct pktw_file *f, uint64_t ts_ns, const uint8_t *frame, size_t len);
void pktw_close(struct pktw_file *f);
/* a frame captured short: caplen bytes of a wirelen-byte frame */
void pktw_write_cut(struct pktw_file *f, uint64_t ts_ns, const uint8_t *frame,
		    size_t caplen, size_t wirelen);

#endif
