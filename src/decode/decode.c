/* decode.c - the decoder's entry point, names, and the one-line renderings
 * of a decoded frame (JSON and text)
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rd.h"

static const char *const encap_names[HS_ENCAP__COUNT] = {
	[HS_ENCAP_NONE] = "none",
	[HS_ENCAP_ERSPAN1] = "erspan1",
	[HS_ENCAP_ERSPAN2] = "erspan2",
	[HS_ENCAP_ERSPAN3] = "erspan3",
	[HS_ENCAP_GRE_TEB] = "gre-teb",
	[HS_ENCAP_GRE_IP] = "gre-ip",
	[HS_ENCAP_IPIP] = "ipip",
	[HS_ENCAP_VXLAN] = "vxlan",
	[HS_ENCAP_VXLAN_GPE] = "vxlan-gpe",
	[HS_ENCAP_GENEVE] = "geneve",
	[HS_ENCAP_GRE_MPLS] = "gre-mpls",
};

static const char *const derr_names[HS_DERR__COUNT] = {
#define HS_DERR_NAME(id, name) [HS_DERR_##id] = name,
	HS_DERR_LIST(HS_DERR_NAME)
#undef HS_DERR_NAME
};

const char *hs_encap_name(int encap)
{
	if (encap < 0 || encap >= HS_ENCAP__COUNT)
		return "unknown";
	return encap_names[encap];
}

const char *hs_derr_name(int err)
{
	if (err < 0 || err >= HS_DERR__COUNT)
		return "unknown";
	return derr_names[err];
}

bool hs_decode_linktype_ok(int dlt)
{
	switch (dlt) {
	case DLT_EN10MB:
	case DLT_LINUX_SLL:
	case DLT_LINUX_SLL2:
	case DLT_RAW:
	case DLT_PPP:
	case 50:		/* LINKTYPE_PPP_HDLC */
	case 101:		/* LINKTYPE_RAW */
	case 228:		/* DLT_IPV4 */
	case 229:		/* DLT_IPV6 */
		return true;
	default:
		return false;
	}
}

bool dec_set_mirror(struct dctx *c, int encap)
{
	struct hs_pkt *k = c->pkt;

	if (k->encap != HS_ENCAP_NONE)
		return false;	/* only the outermost encapsulation is the mirror's */
	k->encap = (uint8_t)encap;
	/* the enclosing IP header is the current innermost one */
	k->mirror_src = k->key.src;
	k->mirror_dst = k->key.dst;
	k->have |= HS_HAVE_MIRROR;
	return true;
}

int dec_layers(int dlt, const uint8_t *data, uint32_t caplen, struct hs_pkt *pkt)
{
	struct dctx c = { .pkt = pkt, .depth = 0 };

	if (!data)
		caplen = 0;
	if (dec_link(&c, dlt, data, caplen) < 0) {
		if (pkt->error == HS_DERR_NONE)
			pkt->error = HS_DERR_NOT_IP;
		return -1;
	}
	pkt->error = HS_DERR_NONE;
	return 0;
}

/* hs_decode() is predict.c's: the common shape in one pass, any other
 * frame by dec_layers */
int hs_decode_general(int dlt, const uint8_t *data, uint32_t caplen, uint32_t wirelen,
		      uint64_t ts_ns, struct hs_pkt *pkt)
{
	dec_clear(pkt, ts_ns, caplen, wirelen);
	return dec_layers(dlt, data, caplen, pkt);
}

/* ---- rendering ---------------------------------------------------------- */

/* control traffic: its kind and the fields of its messages (the full
 * records are the control log's) */
static void ctl_json(FILE *fp, const struct hs_pkt *p)
{
	struct hs_ctl_msg m;
	uint32_t off = 0;
	int err, rc, n = 0;

	fprintf(fp, ",\"ctl\":\"%s\"", hs_ctl_proto_name(p->ctl));
	while ((rc = hs_ctl_decode(p, &off, &m, &err)) == 1) {
		if (m.proto == HS_CTL_BGP) {
			const char *t = hs_bgp_type_name(m.u.bgp.type);
			fprintf(fp, "%s", n++ ? "," : ",\"bgp_types\":[");
			if (t)
				fprintf(fp, "\"%s\"", t);
			else
				fprintf(fp, "\"type-%u\"", m.u.bgp.type);
		} else if (m.proto == HS_CTL_ROCE) {
			const struct hs_roce_pkt *r = &m.u.roce;
			fprintf(fp, ",\"roce_opcode\":%u,\"qp\":%" PRIu32 ",\"psn\":%" PRIu32,
				r->opcode, r->qp, r->psn);
			if (r->aeth)
				fprintf(fp, ",\"syndrome\":%u,\"ack\":\"%s\"", r->syndrome,
					hs_roce_ack_name(r->ack));
			if (r->ack == HS_ROCE_NAK && hs_roce_nak_name(r->nak_code))
				fprintf(fp, ",\"nak\":\"%s\"", hs_roce_nak_name(r->nak_code));
		} else if (m.proto == HS_CTL_PFC) {
			const struct hs_pfc_frame *f = &m.u.pfc;
			bool pfc = f->opcode == HS_MACC_PFC;
			fprintf(fp, ",\"pfc_opcode\":%u", f->opcode);
			if (pfc)
				fprintf(fp, ",\"pfc_class_enable\":%u", f->class_enable);
			for (int i = 0; i < (pfc ? 8 : 1); i++)
				fprintf(fp, "%s%u", i ? "," : ",\"quanta\":[", f->quanta[i]);
			fputc(']', fp);
		}
	}
	if (n)
		fputc(']', fp);
	if (rc < 0)
		fprintf(fp, ",\"ctl_error\":\"%s\"", hs_cerr_name(err));
}

void hs_pkt_json(FILE *fp, const struct hs_pkt *p)
{
	char a[HS_ADDRSTRLEN], b[HS_ADDRSTRLEN];

	fprintf(fp, "{\"frame\":%" PRIu32 ",\"ts_ns\":%" PRIu64 ",\"encap\":\"%s\"", p->frame,
		p->ts_ns, hs_encap_name(p->encap));
	if (p->have & HS_HAVE_MIRROR)
		fprintf(fp, ",\"mirror_src\":\"%s\",\"mirror_dst\":\"%s\"",
			hs_addr_str(&p->mirror_src, a, sizeof(a)),
			hs_addr_str(&p->mirror_dst, b, sizeof(b)));
	if (p->have & HS_HAVE_ERSPAN)
		fprintf(fp, ",\"erspan_ver\":%u", p->erspan_ver);
	if (p->have & HS_HAVE_SESSION)
		fprintf(fp, ",\"session\":%" PRIu32, p->session);
	if (p->have & HS_HAVE_HWTS)
		fprintf(fp, ",\"hw_ts\":%" PRIu32, p->hw_ts);
	for (unsigned i = 0; i < p->mpls_n; i++) {
		struct hs_mpls_lse l;
		hs_mpls_label(p, i, &l);
		fprintf(fp, "%s{\"label\":%" PRIu32 ",\"tc\":%u,\"ttl\":%u}%s",
			i ? "," : ",\"mpls\":[", l.label, l.tc, l.ttl,
			i + 1 == p->mpls_n ? "]" : "");
	}
	if (p->have & HS_HAVE_IP) {
		fprintf(fp, ",\"src\":\"%s\",\"dst\":\"%s\",\"proto\":%u,\"ttl\":%u",
			hs_addr_str(&p->key.src, a, sizeof(a)),
			hs_addr_str(&p->key.dst, b, sizeof(b)), p->key.proto, p->ttl);
		if (p->have & HS_HAVE_IPID)
			fprintf(fp, ",\"ip_id\":%u", p->ip_id);
	}
	if (p->have & HS_HAVE_PORTS)
		fprintf(fp, ",\"sport\":%u,\"dport\":%u", p->key.sport, p->key.dport);
	if (p->have & HS_HAVE_TCP)
		fprintf(fp, ",\"tcp_flags\":%u,\"seq\":%" PRIu32, p->tcp_flags, p->seq);
	if (p->have & HS_HAVE_IP)
		fprintf(fp, ",\"len\":%" PRIu32, p->len);
	if (p->ctl)
		ctl_json(fp, p);
	if (p->error != HS_DERR_NONE)
		fprintf(fp, ",\"error\":\"%s\"", hs_derr_name(p->error));
	fputs("}\n", fp);
}

/* " | bgp open update", " | roce rc-acknowledge psn 7 nak", " | pfc 0x0101" */
static void ctl_text(FILE *fp, const struct hs_pkt *p)
{
	struct hs_ctl_msg m;
	uint32_t off = 0;
	int err, rc;

	fprintf(fp, " | %s", hs_ctl_proto_name(p->ctl));
	while ((rc = hs_ctl_decode(p, &off, &m, &err)) == 1) {
		if (m.proto == HS_CTL_BGP) {
			const char *t = hs_bgp_type_name(m.u.bgp.type);
			if (t)
				fprintf(fp, " %s", t);
			else
				fprintf(fp, " type-%u", m.u.bgp.type);
		} else if (m.proto == HS_CTL_ROCE) {
			const char *op = hs_roce_opcode_name(m.u.roce.opcode);
			if (op)
				fprintf(fp, " %s", op);
			else
				fprintf(fp, " opcode-0x%02x", m.u.roce.opcode);
			fprintf(fp, " psn %" PRIu32, m.u.roce.psn);
			if (m.u.roce.aeth)
				fprintf(fp, " %s", hs_roce_ack_name(m.u.roce.ack));
		} else if (m.proto == HS_CTL_PFC) {
			fprintf(fp, " %s", m.u.pfc.opcode == HS_MACC_PFC ? "pfc" : "pause");
		}
	}
	if (rc < 0)
		fprintf(fp, " [%s]", hs_cerr_name(err));
}

/* tcpdump's flag letters, "." for ACK */
static const char *tcp_flag_str(uint8_t f, char *buf)
{
	static const struct { uint8_t bit; char c; } fl[] = {
		{ 0x02, 'S' }, { 0x01, 'F' }, { 0x08, 'P' }, { 0x04, 'R' },
		{ 0x20, 'U' }, { 0x40, 'E' }, { 0x80, 'W' }, { 0x10, '.' },
	};
	char *q = buf;

	*q++ = '[';
	for (size_t i = 0; i < HS_ARRAY_SIZE(fl); i++)
		if (f & fl[i].bit)
			*q++ = fl[i].c;
	if (q == buf + 1)
		*q++ = 'n';	/* none */
	*q++ = ']';
	*q = '\0';
	return buf;
}

void hs_pkt_text(FILE *fp, const struct hs_pkt *p)
{
	char ts[HS_TIMESTRLEN], a[HS_ADDRSTRLEN], b[HS_ADDRSTRLEN], pn[16], fl[12];
	char fk[2 * HS_ADDRSTRLEN + 24];

	fprintf(fp, "%" PRIu32 " %s %s", p->frame, hs_fmt_time(p->ts_ns, ts, sizeof(ts)),
		hs_encap_name(p->encap));
	if (p->have & HS_HAVE_MIRROR)
		fprintf(fp, " %s>%s", hs_addr_str(&p->mirror_src, a, sizeof(a)),
			hs_addr_str(&p->mirror_dst, b, sizeof(b)));
	if (p->have & HS_HAVE_SESSION)
		fprintf(fp, " session %" PRIu32, p->session);
	for (unsigned i = 0; i < p->mpls_n; i++) {
		struct hs_mpls_lse l;
		hs_mpls_label(p, i, &l);
		fprintf(fp, "%s%" PRIu32, i ? "," : " mpls ", l.label);
	}
	if (p->have & HS_HAVE_IP) {
		hs_addr_str(&p->key.src, a, sizeof(a));
		hs_addr_str(&p->key.dst, b, sizeof(b));
		if (p->have & HS_HAVE_PORTS)
			fprintf(fp, " | %s", hs_flowkey_str(&p->key, fk, sizeof(fk)));
		else
			fprintf(fp, " | %s > %s", a, b);
		fprintf(fp, " %s", hs_proto_name(p->key.proto, pn, sizeof(pn)));
		if (p->have & HS_HAVE_TCP)
			fprintf(fp, " %s seq %" PRIu32, tcp_flag_str(p->tcp_flags, fl), p->seq);
		if (p->have & HS_HAVE_ICMP)
			fprintf(fp, " type %u code %u", p->icmp_type, p->icmp_code);
		fprintf(fp, " ttl %u len %" PRIu32, p->ttl, p->len);
	}
	if (p->ctl)
		ctl_text(fp, p);
	if (p->error != HS_DERR_NONE)
		fprintf(fp, " [%s]", hs_derr_name(p->error));
	fputc('\n', fp);
}
