/* probesig.c - the signature a probe carries: written into the probe's
 * payload when it is crafted (probe.c), read from each decoded copy (the
 * capture), so that a probe's mirrored copies are known for its own
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe.h"


static void put32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

void hs_probe_sig_write(uint8_t *b, uint32_t probe_id, uint32_t seq, uint64_t sent_ns)
{
	put32(b, HS_PROBE_MAGIC);
	put32(b + 4, probe_id);
	put32(b + 8, seq);
	put32(b + 12, (uint32_t)(sent_ns >> 32));
	put32(b + 16, (uint32_t)sent_ns);
}

bool hs_probe_sig_read(const uint8_t *b, size_t n, uint32_t *probe_id, uint32_t *seq,
		       uint64_t *sent_ns)
{
	if (!b || n < HS_PROBE_SIG_LEN || get32(b) != HS_PROBE_MAGIC)
		return false;
	uint32_t id = get32(b + 4);
	if (id == 0)
		return false;
	*probe_id = id;
	*seq = get32(b + 8);
	*sent_ns = (uint64_t)get32(b + 12) << 32 | get32(b + 16);
	return true;
}

bool hs_probe_sig_parse_seq(const struct hs_pkt *p, uint32_t *probe_id, uint32_t *seq,
			    uint64_t *sent_ns)
{
	const uint8_t *b = NULL;
	uint32_t n = 0;

	if (!(p->have & HS_HAVE_IP) || p->key.src.af != 4)
		return false;
	if (p->key.proto == 6 || p->key.proto == 17) {
		b = p->l4_payload;
		n = p->l4_payload_caplen;
	} else if (p->key.proto == 1 && (p->have & HS_HAVE_ICMP) &&
		   (p->icmp_type == 8 || p->icmp_type == 0)) {
		/* echo data follows the 8-byte echo header */
		if (!p->l3 || p->l3_caplen < HS_IPV4_HLEN)
			return false;
		uint32_t ihl = (uint32_t)(p->l3[0] & 0x0f) * 4;
		if (ihl < HS_IPV4_HLEN || p->l3_caplen < ihl + 8)
			return false;
		b = p->l3 + ihl + 8;
		n = p->l3_caplen - ihl - 8;
	}
	return hs_probe_sig_read(b, n, probe_id, seq, sent_ns);
}

bool hs_probe_sig_parse(const struct hs_pkt *p, uint32_t *probe_id, uint64_t *sent_ns)
{
	uint32_t seq;

	return hs_probe_sig_parse_seq(p, probe_id, &seq, sent_ns);
}
