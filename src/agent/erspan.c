/* erspan.c - GRE/ERSPAN type II and III encapsulation, IP-in-IP checks
 *
 * Formats: draft-foschiano-erspan-03. GRE carries only the S bit and a
 * sequence number that counts per session. Type III: version 2, timestamp
 * granularity 2 with the low 32 bits of the switch's nanosecond clock, and
 * the O bit with a platform-specific subheader of platform id 3 whose last
 * word is the upper 32 bits of that clock.
 */
#include <string.h>
#include <stdlib.h>
#include <errno.h>
#include "agent.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void ag_erspan_init(struct ag_erspan *e, int type)
{
	memset(e, 0, sizeof(*e));
	e->type = type == 2 ? 2 : 3;
}

size_t ag_erspan_build(struct ag_erspan *e, uint8_t *out, size_t max,
		       const struct ag_copy *c, bool *truncated)
{
	size_t hdr, len = c->len;
	uint16_t ethertype;
	uint32_t w0;
	uint8_t *p = out;

	*truncated = false;
	if (c->session > AG_SESSION_MAX || len < 1)
		return 0;
	switch (c->pkt[0] >> 4) {
	case 4:
		ethertype = 0x0800;
		break;
	case 6:
		ethertype = 0x86DD;
		break;
	default:
		return 0;
	}
	hdr = AG_GRE_LEN + AG_ETH_LEN +
		(e->type == 3 ? AG_ERSPAN3_LEN + AG_PLATFORM_LEN : AG_ERSPAN2_LEN);
	if (max <= hdr)
		return 0;
	if (hdr + len > max) {
		len = max - hdr;
		*truncated = true;
	}

	/* GRE: S bit, protocol, sequence */
	put16(p, 0x1000);
	put16(p + 2, e->type == 3 ? AG_GRE_ERSPAN3 : AG_GRE_ERSPAN2);
	put32(p + 4, e->seq[c->session]++);
	p += AG_GRE_LEN;

	/* Ver | VLAN 0 | COS 0 | En/BSO 0 | T | Session ID */
	w0 = (uint32_t)(e->type == 3 ? 2 : 1) << 28;
	if (*truncated)
		w0 |= 1u << 10;
	w0 |= c->session;
	put32(p, w0);
	if (e->type == 2) {
		put32(p + 4, c->port & 0xFFFFF);	/* reserved | index */
		p += AG_ERSPAN2_LEN;
	} else {
		put32(p + 4, (uint32_t)c->now_ns);
		/* SGT 0 | P 1 (an Ethernet frame) | FT 0 | HwID 0 | D 0 (ingress) |
		 * Gra 2 | O 1 */
		put32(p + 8, (1u << 15) | (2u << 1) | 1u);
		p += AG_ERSPAN3_LEN;
		/* Platf ID 3 | reserved | port id | upper 32 bits of the time */
		put32(p, (3u << 26) | (c->port & 0x3FFF));
		put32(p + 4, (uint32_t)(c->now_ns >> 32));
		p += AG_PLATFORM_LEN;
	}

	/* Ethernet frame of the mirrored packet */
	if (c->macs)
		memcpy(p, c->macs, 12);
	else
		memset(p, 0, 12);
	put16(p + 12, ethertype);
	p += AG_ETH_LEN;
	memcpy(p, c->pkt, len);
	return hdr + len;
}

int ag_session_from_prefix(const char *prefix)
{
	const char *s;
	char *end;
	long v;

	if (!prefix || !*prefix)
		return 1;
	if (strncmp(prefix, "hs:", 3) != 0)
		return -1;
	s = prefix + 3;
	/* digits only: no sign, no blanks, no hex */
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end != '\0' || v < 0 || v > AG_SESSION_MAX)
		return -1;
	return (int)v;
}

static int ipv4_header_ok(const uint8_t *p, size_t len, size_t *hlen, size_t *tot)
{
	if (len < 20 || (p[0] >> 4) != 4)
		return -1;
	*hlen = (size_t)(p[0] & 0x0F) * 4;
	*tot = (size_t)p[2] << 8 | p[3];
	if (*hlen < 20 || *hlen > len || *tot < *hlen || *tot > len)
		return -1;
	return 0;
}

int ag_ipip_inner(const uint8_t *p, size_t len, uint32_t loopback,
		  size_t *inner_off, size_t *inner_len)
{
	size_t hlen, tot, ihlen, itot;
	uint32_t dst;

	if (ipv4_header_ok(p, len, &hlen, &tot) < 0)
		return -1;
	if (p[9] != 4)				/* protocol: IP in IP */
		return -1;
	if ((p[6] & 0x3F) || p[7])		/* MF or fragment offset */
		return -1;
	memcpy(&dst, p + 16, 4);
	if (dst != loopback)
		return -1;
	if (ipv4_header_ok(p + hlen, tot - hlen, &ihlen, &itot) < 0)
		return -1;
	*inner_off = hlen;
	*inner_len = itot;
	return 0;
}
