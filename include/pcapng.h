/* pcapng.h - a small pcapng writer: one section, its interfaces, enhanced
 * packet blocks with a comment each (the reader is pfile.h's)
 *
 * libpcap reads pcapng but writes only pcap, which has no per-packet
 * comments; these three block kinds (SHB, IDB, EPB with opt_comment) are
 * what Wireshark and tshark need to show one. Blocks are written in host
 * byte order (the section's byte-order magic says which), every block and
 * option padded to 32 bits, timestamps in nanoseconds (if_tsresol 9).
 */
#ifndef HS_PCAPNG_H
#define HS_PCAPNG_H

#include <stdio.h>
#include "hs.h"

#define HS_PCAPNG_SHB	0x0A0D0D0AU
#define HS_PCAPNG_IDB	0x00000001U
#define HS_PCAPNG_EPB	0x00000006U
#define HS_PCAPNG_MAGIC	0x1A2B3C4DU
#define HS_LINKTYPE_RAW	101	/* raw IPv4/IPv6, no link header */

/* section header (with shb_userappl = app when not NULL) and the one
 * interface (link type, snap length, nanosecond timestamps); 0 or -1 */
int hs_pcapng_begin(FILE *fp, const char *app, uint16_t linktype, uint32_t snaplen);
/* one more interface, numbered from 1 in order; 0 or -1 */
int hs_pcapng_interface(FILE *fp, uint16_t linktype, uint32_t snaplen);
/* one enhanced packet block on interface 0, comment may be NULL; 0 or -1 */
int hs_pcapng_packet(FILE *fp, uint64_t ts_ns, const uint8_t *data, uint32_t caplen,
		     uint32_t origlen, const char *comment);
/* the same on interface iface */
int hs_pcapng_packet_on(FILE *fp, uint32_t iface, uint64_t ts_ns, const uint8_t *data,
			uint32_t caplen, uint32_t origlen, const char *comment);

#endif
