/* control.c - control traffic: BGP-4 messages (RFC 4271 section 4, RFC 2918
 * ROUTE-REFRESH, RFC 6793 four-octet AS), RoCEv2 (InfiniBand Architecture
 * vol. 1: base transport header 9.2, ACK extended transport header 9.3.5 and
 * its syndrome 9.7.5.2; RoCEv2 annex A17 for UDP port 4791 and the CNP),
 * and MAC control frames (IEEE 802.3 annex 31B PAUSE, IEEE 802.1Qbb PFC)
 *
 * hs_decode() only marks the frame and points at the payload; the fields
 * are read here, on demand, one message at a time, through the same
 * bounds-checked readers as every other layer.
 */
#include <stdio.h>

#include "rd.h"

#define BGP_HLEN 19		/* marker 16, length 2, type 1 */
#define BGP_OPEN_MIN 10		/* version, AS, hold time, BGP id, opt len */
#define BGP_CAP_PARAM 2		/* optional parameter: capabilities (RFC 5492) */
#define BGP_CAP_AS4 65
#define BTH_LEN 12
#define AETH_LEN 4
#define MACC_PFC_LEN 20		/* opcode, class-enable vector, 8 times quanta */

static const char *const proto_names[HS_CTL__COUNT] = {
	[HS_CTL_NONE] = "none",
	[HS_CTL_BGP] = "bgp",
	[HS_CTL_ROCE] = "roce",
	[HS_CTL_PFC] = "pfc",
};

static const char *const cerr_names[HS_CERR__COUNT] = {
#define HS_CERR_NAME(id, name) [HS_CERR_##id] = name,
	HS_CERR_LIST(HS_CERR_NAME)
#undef HS_CERR_NAME
};

const char *hs_ctl_proto_name(int proto)
{
	return proto >= 0 && proto < HS_CTL__COUNT ? proto_names[proto] : "unknown";
}

const char *hs_cerr_name(int err)
{
	return err >= 0 && err < HS_CERR__COUNT ? cerr_names[err] : "unknown";
}

const char *hs_bgp_type_name(int type)
{
	static const char *const n[] = { NULL, "open", "update", "notification",
					 "keepalive", "route-refresh" };

	return type > 0 && type < (int)HS_ARRAY_SIZE(n) ? n[type] : NULL;
}

const char *hs_roce_opcode_name(int opcode)
{
	/* the low five bits, per transport (IBTA table 38) */
	static const char *const op[] = {
		"send-first", "send-middle", "send-last", "send-last-imm", "send-only",
		"send-only-imm", "write-first", "write-middle", "write-last",
		"write-last-imm", "write-only", "write-only-imm", "read-request",
		"read-response-first", "read-response-middle", "read-response-last",
		"read-response-only", "acknowledge", "atomic-acknowledge",
		"compare-swap", "fetch-add", "resync", "send-last-inv", "send-only-inv",
	};
	static const char *const tr[8] = { "rc", "uc", "rd", "ud", NULL, "xrc", NULL, NULL };
	static char names[8][HS_ARRAY_SIZE(op)][28];
	static bool made;

	if (opcode == HS_ROCE_CNP)
		return "cnp";
	if (opcode < 0 || opcode > 0xff)
		return NULL;
	int t = opcode >> 5, o = opcode & 0x1f;
	if (!tr[t] || o >= (int)HS_ARRAY_SIZE(op))
		return NULL;
	if (!made) {
		for (int i = 0; i < 8; i++)
			for (size_t j = 0; tr[i] && j < HS_ARRAY_SIZE(op); j++)
				snprintf(names[i][j], sizeof(names[i][j]), "%s-%s", tr[i], op[j]);
		made = true;
	}
	return names[t][o];
}

const char *hs_roce_ack_name(int ack)
{
	static const char *const n[] = { "none", "ack", "rnr-nak", "nak", "reserved" };

	return ack >= 0 && ack < (int)HS_ARRAY_SIZE(n) ? n[ack] : "unknown";
}

const char *hs_roce_nak_name(int code)
{
	static const char *const n[] = { "psn-sequence-error", "invalid-request",
					 "remote-access-error", "remote-operational-error",
					 "invalid-rd-request" };

	return code >= 0 && code < (int)HS_ARRAY_SIZE(n) ? n[code] : NULL;
}

static uint32_t be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* ---- BGP ------------------------------------------------------------------ */

/* prefixes of a withdrawn-routes or NLRI section: length in bits, then the
 * significant octets; false when they do not fill it exactly */
static bool bgp_prefixes(const uint8_t *p, uint32_t len, uint16_t *count)
{
	uint32_t off = 0;
	uint16_t n = 0;

	while (off < len) {
		uint8_t bits = p[off];
		if (bits > 32)
			return false;	/* IPv4 unicast; other families ride in attributes */
		off += 1 + (uint32_t)(bits + 7) / 8;
		n++;
	}
	*count = n;
	return off == len;
}

/* optional parameters of an OPEN: the four-octet AS capability */
static void bgp_open_params(const uint8_t *p, uint32_t len, struct hs_bgp_msg *b)
{
	uint32_t off = 0;

	while (rd_have(len, off, 2)) {
		uint8_t type = p[off], plen = p[off + 1];
		if (type == 255 || !rd_have(len, off + 2, plen))
			return;	/* RFC 9072 extended parameters, or cut: not read */
		if (type == BGP_CAP_PARAM) {
			const uint8_t *c = p + off + 2;
			uint32_t coff = 0;
			while (rd_have(plen, coff, 2)) {
				uint8_t code = c[coff], clen = c[coff + 1];
				if (!rd_have(plen, coff + 2, clen))
					break;
				if (code == BGP_CAP_AS4 && clen == 4)
					b->as4 = be32(c + coff + 2);
				coff += 2u + clen;
			}
		}
		off += 2u + plen;
	}
}

static int bgp_body(const uint8_t *p, uint32_t len, struct hs_bgp_msg *b)
{
	switch (b->type) {
	case HS_BGP_OPEN:
		if (!rd_have(len, 0, BGP_OPEN_MIN))
			return HS_CERR_BAD_BGP;
		b->version = p[0];
		b->as = be16(p + 1);
		b->hold = be16(p + 3);
		b->bgp_id = be32(p + 5);
		if (rd_have(len, BGP_OPEN_MIN, p[9]))
			bgp_open_params(p + BGP_OPEN_MIN, p[9], b);
		return HS_CERR_NONE;
	case HS_BGP_UPDATE: {
		if (!rd_have(len, 0, 2))
			return HS_CERR_BAD_BGP;
		b->withdrawn_len = be16(p);
		if (!rd_have(len, 2, (uint32_t)b->withdrawn_len + 2))
			return HS_CERR_BAD_BGP;
		b->attr_len = be16(p + 2 + b->withdrawn_len);
		uint32_t nl = 4u + b->withdrawn_len;
		if (!rd_have(len, nl, b->attr_len))
			return HS_CERR_BAD_BGP;
		nl += b->attr_len;
		b->nlri_len = (uint16_t)(len - nl);
		b->counts_ok = bgp_prefixes(p + 2, b->withdrawn_len, &b->withdrawn) &&
			       bgp_prefixes(p + nl, b->nlri_len, &b->nlri);
		if (!b->counts_ok)
			b->withdrawn = b->nlri = 0;
		return HS_CERR_NONE;
	}
	case HS_BGP_NOTIFICATION:
		if (!rd_have(len, 0, 2))
			return HS_CERR_BAD_BGP;
		b->err_code = p[0];
		b->err_subcode = p[1];
		return HS_CERR_NONE;
	default:
		return HS_CERR_NONE;	/* KEEPALIVE, ROUTE-REFRESH, others: the header */
	}
}

/* the control payload's length on the wire: the TCP/UDP header says it;
 * a MAC control frame is what was captured */
static uint32_t wire_len(const struct hs_pkt *k)
{
	return k->ctl == HS_CTL_PFC ? k->l4_payload_caplen : k->l4_len;
}

static int dec_bgp(const struct hs_pkt *k, uint32_t *off, struct hs_bgp_msg *b)
{
	const uint8_t *p = k->l4_payload;
	uint32_t cap = k->l4_payload_caplen, len = wire_len(k), at = *off;
	static const uint8_t marker[16] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};

	if (at >= cap)
		return at < len ? HS_CERR_TRUNC_BGP : -1;
	if (!rd_have(cap, at, BGP_HLEN))
		return rd_have(len, at, BGP_HLEN) ? HS_CERR_TRUNC_BGP : HS_CERR_BGP_SPLIT;
	if (memcmp(p + at, marker, sizeof(marker)) != 0)
		return HS_CERR_BAD_BGP;	/* the middle of a message split over segments */
	memset(b, 0, sizeof(*b));
	b->len = be16(p + at + 16);
	b->type = p[at + 18];
	if (b->len < BGP_HLEN)
		return HS_CERR_BAD_BGP;
	if (!rd_have(cap, at, b->len))
		return rd_have(len, at, b->len) ? HS_CERR_TRUNC_BGP : HS_CERR_BGP_SPLIT;
	int err = bgp_body(p + at + BGP_HLEN, b->len - BGP_HLEN, b);
	if (err == HS_CERR_NONE)
		*off = at + b->len;
	return err;
}

/* ---- RoCEv2 --------------------------------------------------------------- */

/* RC and XRC acknowledge, atomic acknowledge and RDMA read responses (all
 * but the middle ones) carry an AETH right after the BTH */
static bool has_aeth(uint8_t op)
{
	uint8_t t = op >> 5, o = op & 0x1f;

	return (t == 0 || t == 5) &&
	       (o == 0x0d || o == 0x0f || o == 0x10 || o == 0x11 || o == 0x12);
}

static int dec_roce(const uint8_t *p, uint32_t len, struct hs_roce_pkt *r)
{
	if (!rd_have(len, 0, BTH_LEN))
		return HS_CERR_TRUNC_BTH;
	memset(r, 0, sizeof(*r));
	r->opcode = p[0];
	r->se = p[1] & 0x80;
	r->migreq = p[1] & 0x40;
	r->padcnt = (p[1] >> 4) & 3;
	r->tver = p[1] & 0x0f;
	r->pkey = be16(p + 2);
	r->qp = be24(p + 5);
	r->ackreq = p[8] & 0x80;
	r->psn = be24(p + 9);
	if (!has_aeth(r->opcode))
		return HS_CERR_NONE;
	if (!rd_have(len, BTH_LEN, AETH_LEN))
		return HS_CERR_TRUNC_AETH;
	r->aeth = true;
	r->syndrome = p[BTH_LEN];
	r->msn = be24(p + BTH_LEN + 1);
	switch ((r->syndrome >> 5) & 3) {
	case 0:
		r->ack = HS_ROCE_ACK;
		break;
	case 1:
		r->ack = HS_ROCE_RNR_NAK;
		r->nak_code = r->syndrome & 0x1f;	/* the RNR timer */
		break;
	case 3:
		r->ack = HS_ROCE_NAK;
		r->nak_code = r->syndrome & 0x1f;
		break;
	default:
		r->ack = HS_ROCE_RESERVED;
	}
	return HS_CERR_NONE;
}

/* ---- MAC control ---------------------------------------------------------- */

static int dec_macc(const uint8_t *p, uint32_t len, struct hs_pfc_frame *f)
{
	uint16_t op;

	if (!rd_be16(p, len, 0, &op))
		return HS_CERR_TRUNC_MACC;
	memset(f, 0, sizeof(*f));
	f->opcode = op;
	switch (op) {
	case HS_MACC_PAUSE:
		if (!rd_be16(p, len, 2, &f->quanta[0]))
			return HS_CERR_TRUNC_MACC;
		return HS_CERR_NONE;
	case HS_MACC_PFC:
		if (!rd_have(len, 0, MACC_PFC_LEN))
			return HS_CERR_TRUNC_MACC;
		f->class_enable = be16(p + 2);
		for (int i = 0; i < 8; i++)
			f->quanta[i] = be16(p + 4 + 2 * i);
		return HS_CERR_NONE;
	default:
		return HS_CERR_OTHER_MACC;	/* EPON MPCP, ... */
	}
}

/* ---- the entry point -------------------------------------------------------- */

int hs_ctl_decode(const struct hs_pkt *p, uint32_t *off, struct hs_ctl_msg *m, int *err)
{
	int e;

	*err = HS_CERR_NONE;
	const uint8_t *d = p->l4_payload;
	uint32_t cap = p->l4_payload_caplen;

	if (!p->ctl || !d)
		return 0;
	m->proto = p->ctl;
	switch (p->ctl) {
	case HS_CTL_BGP:
		e = dec_bgp(p, off, &m->u.bgp);
		if (e < 0)
			return 0;	/* the segment is done */
		break;
	case HS_CTL_ROCE:
		if (*off)
			return 0;
		e = dec_roce(d, cap, &m->u.roce);
		*off = cap;
		break;
	case HS_CTL_PFC:
		if (*off)
			return 0;
		e = dec_macc(d, cap, &m->u.pfc);
		*off = cap;
		break;
	default:
		return 0;
	}
	if (e != HS_CERR_NONE) {
		*err = e;
		*off = cap > wire_len(p) ? cap : wire_len(p);
		return -1;
	}
	return 1;
}
